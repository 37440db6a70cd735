/* LSTM: a long short-term memory layer (ONNX LSTM-1, -7, -14; layout from 14). Weights in gate order
 * i, o, f, c; peepholes P in order i, o, f. Inputs X, W, R, [B, sequence_lens, initial_h, initial_c, P];
 * outputs [Y, Y_h, Y_c], each optional. */
#include "ops/rnn/rnn_params.h"
#include "ops/rnn/rnn_infer.h"

static tb_status infer_lstm(tb_infer_ctx *ctx) { return tb_rnn_infer(ctx, TB_RNN_CELL_LSTM); }

const tb_op_def tb_op_lstm = {"", "LSTM", 1, 3, 8, 0, 3, 0, infer_lstm, sizeof(tb_rnn_params), tb_lstm_parse};
