/* Concat: inputs joined along one axis (required from opset 4; 1 by default before). */
#include "ops/op_params.h"
#include "ops/tensor/tensor_infer.h"
#include "ops/tensor/tensor_params.h"

static tb_status concat_infer(tb_infer_ctx *ctx) {
  tb_status st = tb_infer_require(ctx, 0, 0);
  if (st != TB_OK) return st;
  tb_dtype dt = ctx->in[0]->dtype;
  tb_axis_params ap = {0};
  if ((st = tb_infer_params(ctx, &ap, sizeof ap)) != TB_OK) return st;
  int64_t axis = ap.axis;
  const tb_value_type *ranked = NULL;
  for (size_t i = 0; i < ctx->n_inputs; i++) {
    if ((st = tb_infer_require(ctx, i, TB_DTYPE_BIT(dt))) != TB_OK) return st;
    if (ctx->in[i]->has_shape) {
      if (ranked && ranked->ndim != ctx->in[i]->ndim)
        return tb_infer_error(ctx, TB_ERR_MODEL, "input %zu has rank %zu but an earlier input has rank %zu", i,
                              ctx->in[i]->ndim, ranked->ndim);
      if (!ranked) ranked = ctx->in[i];
    }
  }
  if (!ranked) {
    tb_tt_out_unranked(ctx, 0, dt);
    return TB_OK;
  }
  size_t rank = ranked->ndim, a;
  if (rank == 0) return tb_infer_error(ctx, TB_ERR_MODEL, "cannot concatenate scalars (rank 0)");
  if ((st = tb_infer_axis(ctx, "axis", axis, rank, &a)) != TB_OK) return st;
  tb_dim out[TB_MAX_DIMS];
  for (size_t d = 0; d < rank; d++) out[d] = tb_tt_dim(-1);
  int64_t sum = 0;
  for (size_t i = 0; i < ctx->n_inputs; i++) {
    const tb_value_type *t = ctx->in[i];
    if (!t->has_shape) {
      sum = -1;
      continue;
    }
    for (size_t d = 0; d < rank; d++) {
      int64_t v = t->dims[d].value;
      if (d == a) {
        sum = sum < 0 || v < 0 ? -1 : sum + v;
        continue;
      }
      if (v >= 0 && out[d].value >= 0 && v != out[d].value)
        return tb_infer_error(ctx, TB_ERR_MODEL, "input %zu has size %lld on dim %zu where another input has %lld", i,
                              (long long)v, d, (long long)out[d].value);
      if (out[d].value < 0 && (v >= 0 || out[d].symbol < 0)) out[d] = t->dims[d];
    }
  }
  out[a] = tb_tt_dim(sum);
  tb_tt_out_tdims(ctx, 0, dt, rank, out);
  return TB_OK;
}

const tb_op_def tb_op_concat = {"", "Concat", 1, 1, -1, 1, 1, 0, concat_infer, sizeof(tb_axis_params), tb_concat_parse};
