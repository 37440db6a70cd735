/* Internal: type and shape inference shared by RNN, GRU and LSTM (rnn_infer.c). */
#ifndef TB_OPS_RNN_INFER_H
#define TB_OPS_RNN_INFER_H
#include "ops/op.h"
#include "ops/rnn/rnn_params.h"

/* Inputs X, W, R, B, sequence_lens, initial_h (LSTM: initial_c, P); outputs Y, Y_h (LSTM: Y_c). Checks
 * every known dimension against hidden_size and the number of directions. */
tb_status tb_rnn_infer(tb_infer_ctx *ctx, tb_rnn_cell cell);

#endif
