/* Helpers shared by the nn family's infer functions. */
#include "ops/nn/nn_infer.h"

tb_dim tb_nn_dim(int64_t v) {
  tb_dim d = {v < 0 ? -1 : v, -1};
  return d;
}

void tb_nn_out_unranked(tb_value_type *out, tb_dtype dtype) {
  out->kind = TB_VALUE_TENSOR;
  out->has_dtype = true;
  out->dtype = dtype;
  out->has_shape = false;
  out->ndim = 0;
}

void tb_nn_out_rank(tb_value_type *out, tb_dtype dtype, size_t ndim) {
  tb_nn_out_unranked(out, dtype);
  out->has_shape = true;
  out->ndim = ndim;
  for (size_t i = 0; i < ndim && i < TB_MAX_DIMS; i++) out->dims[i] = tb_nn_dim(-1);
}

const tb_value_type *tb_nn_ranked(const tb_infer_ctx *ctx, size_t input) {
  if (input >= ctx->n_inputs || !ctx->in[input] || !ctx->in[input]->has_shape) return NULL;
  return ctx->in[input];
}
