/* Clip: y = min(max(x, min), max). Opsets 1-10: float attributes min/max (defaults the lowest and
 * highest float); from 11: optional scalar inputs min and max of X's type (absent: no bound), every
 * numeric type from 12. When min > max every element becomes max (numpy's clip). */
#include "ops/elementwise/ew_params.h"
#include "ops/elementwise/ew_infer.h"

static tb_status infer_clip(tb_infer_ctx *ctx) {
  tb_dtype_set allowed = ctx->node->opset >= 12 ? EW_NUMERIC : EW_FLOATS;
  tb_status st = tb_ew_infer_unary(ctx, allowed, allowed);
  if (st != TB_OK) return st;
  if (ctx->node->opset < 11) return TB_OK;
  for (size_t i = 1; i < ctx->n_inputs && i < 3; i++) {
    if (!ctx->in[i]) continue;
    st = tb_ew_check(ctx, i, allowed, allowed);
    if (st == TB_OK) st = tb_ew_same_dtype(ctx, 0, i);
    if (st != TB_OK) return st;
    const tb_value_type *b = ctx->in[i];
    if (b->has_shape) {
      int64_t numel = 1;
      for (size_t d = 0; d < b->ndim; d++) numel = b->dims[d].value < 0 || numel < 0 ? -1 : numel * b->dims[d].value;
      if (numel >= 0 && numel != 1)
        return tb_infer_error(ctx, TB_ERR_MODEL, "input %zu (%s) must be a scalar; it has %lld elements", i,
                              i == 1 ? "min" : "max", (long long)numel);
    }
  }
  return TB_OK;
}
const tb_op_def tb_op_clip = {"", "Clip", 1, 1, 3, 1, 1, 0, infer_clip, sizeof(tb_clip_params), tb_clip_parse};
