/* Range: [start, start + delta, ...) up to limit, from three scalars of one numeric type. */
#include <math.h>
#include "ops/tensor/tensor_infer.h"

#define RANGE_TYPES                                                                                            \
  (TB_DTYPE_BIT(TB_DTYPE_F32) | TB_DTYPE_BIT(TB_DTYPE_F64) | TB_DTYPE_BIT(TB_DTYPE_I16) |                      \
   TB_DTYPE_BIT(TB_DTYPE_I32) | TB_DTYPE_BIT(TB_DTYPE_I64))

/* The element count of a range (the spec's max(ceil((limit - start) / delta), 0)); false for delta 0 or
 * a count beyond int64. */
static bool range_count(bool is_int, double start, double limit, double delta, int64_t istart, int64_t ilimit,
                    int64_t idelta, int64_t *count) {
  if (is_int) {
    if (idelta == 0) return false;
    __int128 span = (__int128)ilimit - istart, step = idelta, n = 0;
    if (span != 0 && (span > 0) == (step > 0)) {
      if (span < 0) span = -span;
      if (step < 0) step = -step;
      n = (span + step - 1) / step;
    }
    if (n > INT64_MAX) return false;
    *count = (int64_t)n;
    return true;
  }
  if (delta == 0 || isnan(delta) || isnan(start) || isnan(limit)) return false;
  double n = ceil((limit - start) / delta);
  if (!(n < 9.2e18)) return false;
  *count = n > 0 ? (int64_t)n : 0;
  return true;
}

static tb_status range_infer(tb_infer_ctx *ctx) {
  tb_status st;
  for (size_t i = 0; i < 3; i++) {
    if ((st = tb_infer_require(ctx, i, RANGE_TYPES)) != TB_OK) return st;
    if (ctx->in[i]->dtype != ctx->in[0]->dtype)
      return tb_infer_error(ctx, TB_ERR_MODEL, "input %zu is %s but start is %s (they must match)", i,
                            tb_dtype_name(ctx->in[i]->dtype), tb_dtype_name(ctx->in[0]->dtype));
    if (ctx->in[i]->has_shape && ctx->in[i]->ndim != 0 &&
        !(ctx->in[i]->ndim == 1 && ctx->in[i]->dims[0].value == 1))
      return tb_infer_error(ctx, TB_ERR_MODEL, "input %zu must be a scalar, not rank %zu", i, ctx->in[i]->ndim);
  }
  tb_dtype dt = ctx->in[0]->dtype;
  const tb_ir_tensor *v[3];
  for (size_t i = 0; i < 3; i++) {
    v[i] = ctx->value ? ctx->value[i] : NULL;
    if (!v[i] || tb_ir_tensor_numel(v[i]) != 1) {
      tb_tt_out_rank(ctx, 0, dt, 1);
      return TB_OK;
    }
  }
  bool is_int = dt == TB_DTYPE_I16 || dt == TB_DTYPE_I32 || dt == TB_DTYPE_I64;
  int64_t count;
  if (!range_count(is_int, tb_ir_tensor_double(v[0], 0), tb_ir_tensor_double(v[1], 0), tb_ir_tensor_double(v[2], 0),
                      tb_ir_tensor_int(v[0], 0), tb_ir_tensor_int(v[1], 0), tb_ir_tensor_int(v[2], 0), &count))
    return tb_infer_error(ctx, TB_ERR_MODEL, "delta is 0 (or a value is NaN, or the range is too long): start %g, limit %g, delta %g",
                          tb_ir_tensor_double(v[0], 0), tb_ir_tensor_double(v[1], 0), tb_ir_tensor_double(v[2], 0));
  tb_tt_out_dims(ctx, 0, dt, 1, &count);
  return TB_OK;
}

const tb_op_def tb_op_range = {"", "Range", 11, 3, 3, 1, 1, 0x7u, range_infer, 0, NULL};
