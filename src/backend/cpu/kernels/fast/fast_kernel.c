/* Helpers shared by the level-2 (fast) kernels. */
#include "backend/cpu/kernels/fast/fast_kernel.h"

bool tb_fast_accepts_f32(const tb_value_type *const *in, size_t n) {
  if (!in) return false;
  for (size_t i = 0; i < n; i++)
    if (in[i] && (!in[i]->has_dtype || in[i]->dtype != TB_DTYPE_F32)) return false;
  return in[0] != NULL;
}

tb_status tb_fast_check_f32(tb_kernel_ctx *ctx, size_t n) {
  for (size_t i = 0; i < n && i < ctx->n_inputs; i++)
    if (ctx->inputs[i] && tb_tensor_dtype(ctx->inputs[i]) != TB_DTYPE_F32)
      return tb_kernel_error(ctx, TB_ERR_INTERNAL, "the float32 kernel got input %zu of dtype %s", i,
                             tb_dtype_name(tb_tensor_dtype(ctx->inputs[i])));
  return TB_OK;
}
