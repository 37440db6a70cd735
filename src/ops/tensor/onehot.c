/* OneHot (opsets 9, 11): indices expanded along a new axis of size depth, with values [off, on]. */
#include "ops/op_params.h"
#include "ops/tensor/tensor_infer.h"
#include "ops/tensor/tensor_params.h"

static tb_status onehot_infer(tb_infer_ctx *ctx) {
  tb_status st = tb_infer_require(ctx, 0, TT_NUMBERS);
  if (st != TB_OK) return st;
  if ((st = tb_infer_require(ctx, 1, TT_NUMBERS)) != TB_OK) return st;
  if ((st = tb_infer_require(ctx, 2, 0)) != TB_OK) return st;
  tb_dtype dt = ctx->in[2]->dtype;
  const tb_value_type *vals = tb_tt_ranked(ctx, 2), *depth = tb_tt_ranked(ctx, 1);
  if (vals && (vals->ndim != 1 || (vals->dims[0].value >= 0 && vals->dims[0].value != 2)))
    return tb_infer_error(ctx, TB_ERR_MODEL, "values must be a 1-D tensor of 2 elements [off, on]");
  if (depth && !(depth->ndim == 0 || (depth->ndim == 1 && depth->dims[0].value == 1)))
    return tb_infer_error(ctx, TB_ERR_MODEL, "depth must be a scalar or a one-element tensor");
  tb_axis_params ap = {0};
  if ((st = tb_infer_params(ctx, &ap, sizeof ap)) != TB_OK) return st;
  int64_t axis = ap.axis;
  const tb_value_type *in = tb_tt_ranked(ctx, 0);
  if (!in) {
    tb_tt_out_unranked(ctx, 0, dt);
    return TB_OK;
  }
  size_t rank = in->ndim + 1, a;
  if (rank > TB_MAX_DIMS) return tb_infer_error(ctx, TB_ERR_UNSUPPORTED, "the output would have rank %zu", rank);
  if ((st = tb_infer_axis(ctx, "axis", axis, rank, &a)) != TB_OK) return st;
  int64_t d = -1;
  const tb_ir_tensor *v = ctx->value ? ctx->value[1] : NULL;
  if (v && tb_ir_tensor_numel(v) == 1) {
    double dv = tb_ir_tensor_double(v, 0);
    if (!(dv >= 1) || dv > 1e12) return tb_infer_error(ctx, TB_ERR_MODEL, "depth %g must be at least 1", dv);
    d = (int64_t)dv;
  }
  tb_dim out[TB_MAX_DIMS];
  size_t k = 0;
  for (size_t i = 0; i < rank; i++) out[i] = i == a ? tb_tt_dim(d) : in->dims[k++];
  tb_tt_out_tdims(ctx, 0, dt, rank, out);
  return TB_OK;
}

const tb_op_def tb_op_onehot = {"", "OneHot", 9, 3, 3, 1, 1, 1u << 1, onehot_infer, sizeof(tb_axis_params), tb_onehot_parse};
