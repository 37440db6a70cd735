/* GRU: a gated recurrent unit layer (ONNX GRU-1, -3, -7, -14; layout from 14). Weights in gate order
 * z, r, h; linear_before_reset chooses where the reset gate applies. Inputs X, W, R, [B, sequence_lens,
 * initial_h]; outputs [Y, Y_h], each optional. */
#include "ops/rnn/rnn_params.h"
#include "ops/rnn/rnn_infer.h"

static tb_status infer_gru(tb_infer_ctx *ctx) { return tb_rnn_infer(ctx, TB_RNN_CELL_GRU); }

const tb_op_def tb_op_gru = {"", "GRU", 1, 3, 6, 0, 2, 0, infer_gru, sizeof(tb_rnn_params), tb_gru_parse};
