/* Softmax, LogSoftmax and Hardmax. Before opset 13 the input is seen as 2-D [prod(dims[:axis]),
 * prod(dims[axis:])] (axis default 1) and each row is normalised; from opset 13 only the one axis is
 * (axis default -1). The output has the input's type and shape either way. */
#include "ops/nn/nn_infer.h"

static tb_status softmax_infer(tb_infer_ctx *ctx) {
  tb_status st = tb_infer_require(ctx, 0, NN_FLOATS);
  if (st != TB_OK) return st;
  int64_t axis = 0;
  bool v13 = ctx->node->opset >= 13;
  st = tb_attr_int(ctx->graph, ctx->node, "axis", v13 ? -1 : 1, &axis);
  if (st != TB_OK) return st;
  tb_infer_same(ctx->in[0], &ctx->out[0]);
  const tb_value_type *x = tb_nn_ranked(ctx, 0);
  if (!x) return TB_OK;
  size_t a;
  /* Before 13, axis == rank is allowed (every row has one element). */
  if (!v13 && axis == (int64_t)x->ndim) return TB_OK;
  return tb_infer_axis(ctx, "axis", axis, x->ndim, &a);
}

const tb_op_def tb_op_softmax_1 = {"", "Softmax", 1, 1, 1, 1, 1, 0, softmax_infer, 0, NULL};
const tb_op_def tb_op_softmax_13 = {"", "Softmax", 13, 1, 1, 1, 1, 0, softmax_infer, 0, NULL};
const tb_op_def tb_op_logsoftmax_1 = {"", "LogSoftmax", 1, 1, 1, 1, 1, 0, softmax_infer, 0, NULL};
const tb_op_def tb_op_logsoftmax_13 = {"", "LogSoftmax", 13, 1, 1, 1, 1, 0, softmax_infer, 0, NULL};
const tb_op_def tb_op_hardmax_1 = {"", "Hardmax", 1, 1, 1, 1, 1, 0, softmax_infer, 0, NULL};
const tb_op_def tb_op_hardmax_13 = {"", "Hardmax", 13, 1, 1, 1, 1, 0, softmax_infer, 0, NULL};
