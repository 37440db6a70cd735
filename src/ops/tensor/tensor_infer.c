/* Helpers the tensor family's infer functions share: outputs and integer input values. */
#include "ops/tensor/tensor_infer.h"
#include <string.h>

bool tb_tt_has(const tb_infer_ctx *ctx, size_t i) { return i < ctx->n_inputs && ctx->in[i] != NULL; }

const tb_value_type *tb_tt_ranked(const tb_infer_ctx *ctx, size_t i) {
  return tb_tt_has(ctx, i) && ctx->in[i]->has_shape ? ctx->in[i] : NULL;
}

tb_dim tb_tt_dim(int64_t v) {
  tb_dim d = {v < 0 ? -1 : v, -1};
  return d;
}

void tb_tt_dims(const tb_value_type *t, int64_t *dims) {
  for (size_t d = 0; d < t->ndim; d++) dims[d] = t->dims[d].value;
}

void tb_tt_out_unranked(tb_infer_ctx *ctx, size_t i, tb_dtype dtype) {
  if (i >= ctx->n_outputs) return;
  tb_value_type *o = &ctx->out[i];
  memset(o, 0, sizeof *o);
  o->kind = TB_VALUE_TENSOR;
  o->has_dtype = true;
  o->dtype = dtype;
}

void tb_tt_out_rank(tb_infer_ctx *ctx, size_t i, tb_dtype dtype, size_t ndim) {
  if (i >= ctx->n_outputs) return;
  tb_tt_out_unranked(ctx, i, dtype);
  ctx->out[i].has_shape = true;
  ctx->out[i].ndim = ndim;
  for (size_t d = 0; d < ndim && d < TB_MAX_DIMS; d++) ctx->out[i].dims[d] = tb_tt_dim(-1);
}

void tb_tt_out_dims(tb_infer_ctx *ctx, size_t i, tb_dtype dtype, size_t ndim, const int64_t *dims) {
  if (i >= ctx->n_outputs) return;
  tb_tt_out_rank(ctx, i, dtype, ndim);
  for (size_t d = 0; d < ndim && d < TB_MAX_DIMS; d++) ctx->out[i].dims[d] = tb_tt_dim(dims[d]);
}

void tb_tt_out_tdims(tb_infer_ctx *ctx, size_t i, tb_dtype dtype, size_t ndim, const tb_dim *dims) {
  if (i >= ctx->n_outputs) return;
  tb_tt_out_rank(ctx, i, dtype, ndim);
  for (size_t d = 0; d < ndim && d < TB_MAX_DIMS; d++) ctx->out[i].dims[d] = dims[d];
}

tb_status tb_tt_input_ints(const tb_infer_ctx *ctx, size_t i, int64_t *out, size_t cap, int64_t *n, bool *known) {
  *known = false;
  *n = -1;
  if (!tb_tt_has(ctx, i)) return TB_OK;
  const tb_value_type *t = ctx->in[i];
  if (t->has_shape && t->ndim > 1)
    return tb_infer_error(ctx, TB_ERR_MODEL, "input %zu must be a scalar or 1-D tensor, not rank %zu", i, t->ndim);
  if (t->has_shape) *n = t->ndim == 0 ? 1 : t->dims[0].value;
  const tb_ir_tensor *v = ctx->value ? ctx->value[i] : NULL;
  if (!v) return TB_OK;
  if (v->ndim > 1)
    return tb_infer_error(ctx, TB_ERR_MODEL, "input %zu must be a scalar or 1-D tensor, not rank %zu", i, v->ndim);
  if (v->dtype != TB_DTYPE_I64 && v->dtype != TB_DTYPE_I32)
    return tb_infer_error(ctx, TB_ERR_MODEL, "input %zu must be int64 or int32, not %s", i, tb_dtype_name(v->dtype));
  int64_t count = tb_ir_tensor_numel(v);
  if (count < 0 || (uint64_t)count > cap)
    return tb_infer_error(ctx, TB_ERR_UNSUPPORTED, "input %zu has %lld values; at most %zu are supported", i,
                          (long long)count, cap);
  for (int64_t k = 0; k < count; k++) out[k] = tb_ir_tensor_int(v, k);
  *n = count;
  *known = true;
  return TB_OK;
}
