/* Helpers shared by the level-2 vectorised kernels: reference fallback, input/output checks, pool split. */
#include "backend/cpu/kernels/fast/vec/vec_kernel.h"

bool tb_fast_accepts_f32(const tb_value_type *const *in, size_t n) {
  if (!in) return false;
  for (size_t i = 0; i < n; i++)
    if (in[i] && (!in[i]->has_dtype || in[i]->dtype != TB_DTYPE_F32)) return false;
  return in[0] != NULL;
}

tb_status tb_vec_fallback(tb_kernel_ctx *ctx) {
  enum { MAX_IN = 16 };
  tb_value_type types[MAX_IN];
  const tb_value_type *in[MAX_IN] = {NULL};
  size_t n = ctx->n_inputs < MAX_IN ? ctx->n_inputs : MAX_IN;
  for (size_t i = 0; i < n; i++) {
    const tb_tensor *t = ctx->inputs[i];
    if (!t) continue;
    tb_value_type v = {.kind = TB_VALUE_TENSOR,
                       .has_dtype = true,
                       .dtype = tb_tensor_dtype(t),
                       .has_shape = true,
                       .ndim = tb_tensor_ndim(t)};
    for (size_t d = 0; d < v.ndim; d++) v.dims[d] = (tb_dim){tb_tensor_shape(t)[d], -1};
    types[i] = v;
    in[i] = &types[i];
  }
  tb_kernel_query q = tb_kernel_ctx_query(ctx, in, TB_KERNEL_REFERENCE, 0);
  const tb_kernel *k = tb_cpu_kernel_find(&q);
  if (!k) return tb_kernel_error(ctx, TB_ERR_UNSUPPORTED, "no reference kernel to fall back to");
  tb_kernel_ctx sub = *ctx;
  sub.state = NULL;
  return k->run(&sub);
}

bool tb_vec_inputs_ok(const tb_kernel_ctx *ctx, size_t n) {
  if (ctx->n_inputs < 1 || !ctx->inputs[0]) return false;
  for (size_t i = 0; i < n && i < ctx->n_inputs; i++) {
    const tb_tensor *t = ctx->inputs[i];
    if (t && (tb_tensor_dtype(t) != TB_DTYPE_F32 || !tb_tensor_is_contiguous(t) ||
              (tb_tensor_numel(t) > 0 && !tb_tensor_host_data(t))))
      return false;
  }
  return true;
}

bool tb_vec_output(tb_kernel_ctx *ctx, size_t i, size_t ndim, const int64_t *shape, float **data, tb_status *st) {
  *st = TB_OK;
  if (ctx->outputs[i] && !tb_tensor_is_contiguous(ctx->outputs[i])) return false;
  tb_tensor *y = NULL;
  *st = tb_kernel_output(ctx, i, TB_DTYPE_F32, ndim, shape, &y);
  if (*st != TB_OK) return false;
  *data = tb_tensor_host_data(y);
  if (!*data && tb_tensor_numel(y) > 0) {
    *st = tb_kernel_error(ctx, TB_ERR_INTERNAL, "output %zu is not in host memory", i);
    return false;
  }
  return true;
}

void tb_vec_parallel(const tb_kernel_ctx *ctx, size_t n_tasks, int64_t total_work, tb_pool_fn fn, void *arg) {
  if (n_tasks == 0) return;
  if (ctx->pool && n_tasks > 1 && total_work >= VEC_PARALLEL_MIN)
    tb_pool_parallel_for(ctx->pool, n_tasks, fn, arg);
  else
    fn(arg, 0, n_tasks);
}


bool tb_vec_rank_is(const tb_value_type *const *in, size_t i, size_t r) {
  return in && in[i] && in[i]->has_shape && in[i]->ndim == r;
}
