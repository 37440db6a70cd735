/* Softmax, LogSoftmax and Hardmax. Before opset 13 the input is seen as 2-D [prod(dims[:axis]),
 * prod(dims[axis:])] (axis default 1) and each row is normalised; from opset 13 only the one axis is
 * (axis default -1). The output has the input's type and shape either way. */
#include <string.h>
#include "ops/op_params.h"
#include "ops/nn/nn_infer.h"
#include "ops/nn/nn_params.h"

tb_status tb_softmax_parse(const tb_graph *g, const tb_node *n, void *params) {
  tb_softmax_params *p = params;
  p->kind = strcmp(n->op_type, "LogSoftmax") == 0 ? TB_LOG_SOFTMAX : strcmp(n->op_type, "Hardmax") == 0 ? TB_HARDMAX : TB_SOFTMAX;
  p->flatten = n->opset < 13;
  return tb_attr_int(g, n, "axis", p->flatten ? 1 : -1, &p->axis);
}

static tb_status softmax_infer(tb_infer_ctx *ctx) {
  tb_softmax_params p;
  memset(&p, 0, sizeof p);
  tb_status st = tb_infer_params(ctx, &p, sizeof p);
  if (st == TB_OK) st = tb_infer_require(ctx, 0, NN_FLOATS);
  if (st != TB_OK) return st;
  int64_t axis = p.axis;
  bool v13 = !p.flatten;
  tb_infer_same(ctx->in[0], &ctx->out[0]);
  const tb_value_type *x = tb_nn_ranked(ctx, 0);
  if (!x) return TB_OK;
  size_t a;
  /* Before 13, axis == rank is allowed (every row has one element). */
  if (!v13 && axis == (int64_t)x->ndim) return TB_OK;
  return tb_infer_axis(ctx, "axis", axis, x->ndim, &a);
}

const tb_op_def tb_op_softmax_1 = {"", "Softmax", 1, 1, 1, 1, 1, 0, softmax_infer, sizeof(tb_softmax_params), tb_softmax_parse};
const tb_op_def tb_op_softmax_13 = {"", "Softmax", 13, 1, 1, 1, 1, 0, softmax_infer, sizeof(tb_softmax_params), tb_softmax_parse};
const tb_op_def tb_op_logsoftmax_1 = {"", "LogSoftmax", 1, 1, 1, 1, 1, 0, softmax_infer, sizeof(tb_softmax_params), tb_softmax_parse};
const tb_op_def tb_op_logsoftmax_13 = {"", "LogSoftmax", 13, 1, 1, 1, 1, 0, softmax_infer, sizeof(tb_softmax_params), tb_softmax_parse};
const tb_op_def tb_op_hardmax_1 = {"", "Hardmax", 1, 1, 1, 1, 1, 0, softmax_infer, sizeof(tb_softmax_params), tb_softmax_parse};
const tb_op_def tb_op_hardmax_13 = {"", "Hardmax", 13, 1, 1, 1, 1, 0, softmax_infer, sizeof(tb_softmax_params), tb_softmax_parse};
