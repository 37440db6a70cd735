/* Concat: inputs joined along one axis (required from opset 4; 1 by default before). */
#include <stdint.h>
#include "ops/op_params.h"
#include "ops/tensor/shape_rules.h"
#include "ops/tensor/tensor_infer.h"
#include "ops/tensor/tensor_params.h"

static bool input_dims(void *arg, size_t i, size_t *rank, int64_t *dims) {
  const tb_value_type *t = ((tb_infer_ctx *)arg)->in[i];
  if (!t->has_shape) return false;
  *rank = t->ndim;
  tb_tt_dims(t, dims);
  return true;
}

static tb_status concat_infer(tb_infer_ctx *ctx) {
  tb_status st = tb_infer_require(ctx, 0, 0);
  if (st != TB_OK) return st;
  tb_dtype dt = ctx->in[0]->dtype;
  tb_axis_params ap = {0};
  if ((st = tb_infer_params(ctx, &ap, sizeof ap)) != TB_OK) return st;
  for (size_t i = 0; i < ctx->n_inputs; i++)
    if ((st = tb_infer_require(ctx, i, TB_DTYPE_BIT(dt))) != TB_OK) return st;
  size_t rank, a;
  int64_t shape[TB_MAX_DIMS];
  char why[300];
  if (!tb_rule_concat(ctx->n_inputs, input_dims, ctx, ap.axis, &rank, &a, shape, why, sizeof why))
    return tb_infer_error(ctx, TB_ERR_MODEL, "%s", why);
  if (rank == SIZE_MAX) {
    tb_tt_out_unranked(ctx, 0, dt);
    return TB_OK;
  }
  tb_dim out[TB_MAX_DIMS];
  for (size_t d = 0; d < rank; d++) {
    out[d] = tb_tt_dim(shape[d]);
    if (d == a || shape[d] >= 0) continue;
    for (size_t i = 0; i < ctx->n_inputs; i++) /* unknown: the first input's symbol there, if any */
      if (ctx->in[i]->has_shape && ctx->in[i]->dims[d].symbol >= 0) {
        out[d] = ctx->in[i]->dims[d];
        break;
      }
  }
  tb_tt_out_tdims(ctx, 0, dt, rank, out);
  return TB_OK;
}

const tb_op_def tb_op_concat = {"", "Concat", 1, 1, -1, 1, 1, 0, concat_infer, sizeof(tb_axis_params), tb_concat_parse};
