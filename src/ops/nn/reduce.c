/* The reductions (ReduceMean, ReduceSum, ReduceMax, ReduceMin, ReduceProd, ReduceL1, ReduceL2,
 * ReduceLogSumExp, ReduceSumSquare) and ArgMax / ArgMin (axis, keepdims, select_last_index; int64
 * output). */
#include "ops/op_params.h"
#include "ops/nn/reduce.h"
#include <string.h>
#include "core/error.h"
#include "ops/nn/nn_infer.h"

static const char *const reduce_names[] = {"ReduceSum", "ReduceMean", "ReduceMax", "ReduceMin", "ReduceProd",
                                           "ReduceL1", "ReduceL2", "ReduceLogSumExp", "ReduceSumSquare"};

tb_status tb_reduce_parse(const tb_graph *g, const tb_node *n, void *params) {
  tb_reduce_params *p = params;
  for (size_t i = 0; i < sizeof reduce_names / sizeof reduce_names[0]; i++)
    if (strcmp(n->op_type, reduce_names[i]) == 0) p->op = (tb_reduce_op)i;
  p->axes_from_input = n->opset >= (p->op == TB_REDUCE_SUM ? 13 : 18);
  int64_t keepdims = 1, noop = 0;
  tb_status st = tb_attr_int(g, n, "keepdims", 1, &keepdims);
  if (st == TB_OK) st = tb_attr_int(g, n, "noop_with_empty_axes", 0, &noop);
  if (st == TB_OK && !p->axes_from_input) st = tb_nn_parse_list(g, n, "axes", TB_MAX_DIMS, INT64_MIN, p->axes, &p->n_axes);
  if (st != TB_OK) return st;
  p->keepdims = keepdims != 0;
  p->noop_with_empty_axes = noop != 0;
  return TB_OK;
}

tb_status tb_argreduce_parse(const tb_graph *g, const tb_node *n, void *params) {
  tb_argreduce_params *p = params;
  int64_t keepdims = 1, last = 0;
  p->is_max = strcmp(n->op_type, "ArgMax") == 0;
  tb_status st = tb_attr_int(g, n, "axis", 0, &p->axis);
  if (st == TB_OK) st = tb_attr_int(g, n, "keepdims", 1, &keepdims);
  if (st == TB_OK) st = tb_attr_int(g, n, "select_last_index", 0, &last);
  p->keepdims = keepdims != 0;
  p->select_last_index = last != 0;
  return st;
}

tb_status tb_nn_reduce_axes_resolve(const tb_reduce_params *p, size_t rank, bool axes_input_present,
                                    const int64_t *axes_value, size_t n_axes_value, nn_reduce_axes *out) {
  memset(out, 0, sizeof *out);
  out->keepdims = p->keepdims;
  const int64_t *axes = p->axes;
  size_t n = p->n_axes;
  if (p->axes_from_input) {
    if (axes_input_present && !axes_value) return TB_OK; /* known stays false */
    axes = axes_value;
    n = axes_input_present ? n_axes_value : 0;
  }
  out->known = true;
  if (n == 0) {
    out->noop = p->noop_with_empty_axes;
    for (size_t i = 0; i < rank; i++) out->reduce[i] = !out->noop;
    return TB_OK;
  }
  for (size_t i = 0; i < n; i++) {
    int64_t a = axes[i];
    if (a < -(int64_t)rank || a >= (int64_t)rank)
      return tb_error(TB_ERR_MODEL, "axis %lld is out of range for rank %zu", (long long)a, rank);
    if (a < 0) a += (int64_t)rank;
    if (out->reduce[a]) return tb_error(TB_ERR_MODEL, "axis %lld is listed twice", (long long)axes[i]);
    out->reduce[a] = true;
  }
  return TB_OK;
}

static tb_status reduce_infer(tb_infer_ctx *ctx) {
  tb_reduce_params p;
  memset(&p, 0, sizeof p);
  tb_status st = tb_infer_params(ctx, &p, sizeof p);
  if (st == TB_OK) st = tb_infer_require(ctx, 0, NN_NUMBERS);
  if (st != TB_OK) return st;
  bool from_input = p.axes_from_input;
  bool present = from_input && ctx->n_inputs > 1 && ctx->in[1];
  if (present) {
    st = tb_infer_require(ctx, 1, TB_DTYPE_BIT(TB_DTYPE_I64));
    if (st != TB_OK) return st;
  } else if (!from_input && ctx->n_inputs > 1) {
    return tb_infer_error(ctx, TB_ERR_MODEL, "takes its axes as an attribute at opset %d, not as an input",
                          ctx->node->opset);
  }
  tb_dtype dt = ctx->in[0]->dtype;
  tb_nn_out_unranked(&ctx->out[0], dt);
  const tb_value_type *x = tb_nn_ranked(ctx, 0);
  if (!x) return TB_OK;
  const tb_ir_tensor *axes_t = present && ctx->value ? ctx->value[1] : NULL;
  int64_t axes_buf[TB_MAX_DIMS];
  size_t n_axes = 0;
  if (axes_t) {
    int64_t count = tb_ir_tensor_numel(axes_t);
    if (count < 0 || count > (int64_t)TB_MAX_DIMS)
      return tb_infer_error(ctx, TB_ERR_MODEL, "the axes input has %lld values; at most %d are allowed", (long long)count,
                            TB_MAX_DIMS);
    for (int64_t i = 0; i < count; i++) axes_buf[i] = tb_ir_tensor_int(axes_t, i);
    n_axes = (size_t)count;
  }
  nn_reduce_axes ax;
  st = tb_nn_reduce_axes_resolve(&p, x->ndim, present, axes_t ? axes_buf : NULL, n_axes, &ax);
  if (st != TB_OK) return tb_node_name_error(ctx->graph, ctx->node, st);
  if (!ax.known) {
    if (ax.keepdims) tb_nn_out_rank(&ctx->out[0], dt, x->ndim);
    return TB_OK;
  }
  size_t r = 0;
  ctx->out[0] = *x;
  for (size_t i = 0; i < x->ndim; i++) {
    if (!ax.reduce[i]) ctx->out[0].dims[r++] = x->dims[i];
    else if (ax.keepdims) ctx->out[0].dims[r++] = tb_nn_dim(1);
  }
  ctx->out[0].ndim = r;
  return TB_OK;
}

static tb_status argmax_infer(tb_infer_ctx *ctx) {
  tb_argreduce_params p;
  memset(&p, 0, sizeof p);
  tb_status st = tb_infer_params(ctx, &p, sizeof p);
  if (st == TB_OK) st = tb_infer_require(ctx, 0, NN_NUMBERS);
  if (st != TB_OK) return st;
  int64_t axis = p.axis;
  bool keepdims = p.keepdims;
  tb_nn_out_unranked(&ctx->out[0], TB_DTYPE_I64);
  const tb_value_type *x = tb_nn_ranked(ctx, 0);
  if (!x) return TB_OK;
  size_t a;
  st = tb_infer_axis(ctx, "axis", axis, x->ndim, &a);
  if (st != TB_OK) return st;
  ctx->out[0] = *x;
  ctx->out[0].dtype = TB_DTYPE_I64;
  if (keepdims) {
    ctx->out[0].dims[a] = tb_nn_dim(1);
  } else {
    for (size_t i = a; i + 1 < x->ndim; i++) ctx->out[0].dims[i] = x->dims[i + 1];
    ctx->out[0].ndim--;
  }
  return TB_OK;
}

#define REDUCE_DEFS(sym, name)                                                                        \
  const tb_op_def tb_op_##sym##_1 = {"", name, 1, 1, 1, 1, 1, 0, reduce_infer, sizeof(tb_reduce_params), tb_reduce_parse};                        \
  const tb_op_def tb_op_##sym##_18 = {"", name, 18, 1, 2, 1, 1, 2u, reduce_infer, sizeof(tb_reduce_params), tb_reduce_parse};
REDUCE_DEFS(reduce_mean, "ReduceMean")
REDUCE_DEFS(reduce_max, "ReduceMax")
REDUCE_DEFS(reduce_min, "ReduceMin")
REDUCE_DEFS(reduce_prod, "ReduceProd")
REDUCE_DEFS(reduce_l1, "ReduceL1")
REDUCE_DEFS(reduce_l2, "ReduceL2")
REDUCE_DEFS(reduce_logsumexp, "ReduceLogSumExp")
REDUCE_DEFS(reduce_sumsquare, "ReduceSumSquare")
const tb_op_def tb_op_reduce_sum_1 = {"", "ReduceSum", 1, 1, 1, 1, 1, 0, reduce_infer, sizeof(tb_reduce_params), tb_reduce_parse};
const tb_op_def tb_op_reduce_sum_13 = {"", "ReduceSum", 13, 1, 2, 1, 1, 2u, reduce_infer, sizeof(tb_reduce_params), tb_reduce_parse};
const tb_op_def tb_op_argmax = {"", "ArgMax", 1, 1, 1, 1, 1, 0, argmax_infer, sizeof(tb_argreduce_params), tb_argreduce_parse};
const tb_op_def tb_op_argmin = {"", "ArgMin", 1, 1, 1, 1, 1, 0, argmax_infer, sizeof(tb_argreduce_params), tb_argreduce_parse};
