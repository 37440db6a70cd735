/* RNN: a simple (Elman) recurrent layer, H = f(X W^T + H R^T + Wb + Rb) (ONNX RNN-1, -7, -14; layout from
 * 14). Inputs X, W, R, [B, sequence_lens, initial_h]; outputs [Y, Y_h], each optional. */
#include "ops/rnn/rnn_params.h"
#include "ops/rnn/rnn_infer.h"

static tb_status infer_rnn(tb_infer_ctx *ctx) { return tb_rnn_infer(ctx, TB_RNN_CELL_RNN); }

const tb_op_def tb_op_rnn = {"", "RNN", 1, 3, 6, 0, 2, 0, infer_rnn, sizeof(tb_rnn_params), tb_rnn_parse};
