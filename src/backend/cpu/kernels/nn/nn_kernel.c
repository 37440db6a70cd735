/* Helpers for the nn family's reference kernels: inputs as packed doubles, outputs converted back. */
#include "backend/cpu/kernels/nn/nn_kernel.h"
#include <stdlib.h>
#include <string.h>

int64_t tb_nn_numel(size_t ndim, const int64_t *shape) {
  int64_t n = 1;
  for (size_t i = 0; i < ndim; i++) n *= shape[i];
  return n;
}

tb_status tb_nn_checked_numel(tb_kernel_ctx *ctx, size_t ndim, const int64_t *shape, int64_t *out) {
  int64_t n = 1;
  for (size_t i = 0; i < ndim; i++) {
    if (shape[i] < 0 || __builtin_mul_overflow(n, shape[i], &n))
      return tb_kernel_error(ctx, TB_ERR_MODEL, "output dim %zu (%lld) makes the element count overflow", i,
                             (long long)shape[i]);
  }
  *out = n;
  return TB_OK;
}

tb_status tb_nn_alloc(tb_kernel_ctx *ctx, int64_t count, double **out) {
  *out = NULL;
  if (count < 0 || (uint64_t)count > SIZE_MAX / sizeof(double))
    return tb_kernel_error(ctx, TB_ERR_OUT_OF_MEMORY, "a buffer of %lld doubles does not fit in memory", (long long)count);
  *out = calloc(count ? (size_t)count : 1, sizeof(double));
  if (!*out)
    return tb_kernel_error(ctx, TB_ERR_OUT_OF_MEMORY, "out of host memory allocating %lld doubles", (long long)count);
  return TB_OK;
}

tb_status tb_nn_load(tb_kernel_ctx *ctx, size_t i, bool optional, nn_buf *b) {
  memset(b, 0, sizeof *b);
  const tb_tensor *t = i < ctx->n_inputs ? ctx->inputs[i] : NULL;
  if (!t) {
    if (optional) return TB_OK;
    return tb_kernel_error(ctx, TB_ERR_MODEL, "required input %zu is missing", i);
  }
  b->dtype = tb_tensor_dtype(t);
  b->ndim = tb_tensor_ndim(t);
  memcpy(b->shape, tb_tensor_shape(t), b->ndim * sizeof(int64_t));
  b->numel = tb_tensor_numel(t);
  size_t bytes = tb_tensor_nbytes(t);
  void *raw = malloc(bytes ? bytes : 1);
  if (!raw) return tb_kernel_error(ctx, TB_ERR_OUT_OF_MEMORY, "out of host memory reading input %zu (%zu bytes)", i, bytes);
  tb_status st = tb_tensor_copy_to_host(t, raw, bytes);
  if (st == TB_OK) st = tb_nn_alloc(ctx, b->numel, &b->data);
  if (st == TB_OK) st = tb_convert(b->dtype, raw, TB_DTYPE_F64, b->data, (size_t)b->numel, false);
  free(raw);
  if (st != TB_OK) tb_nn_buf_free(b);
  return st;
}

tb_status tb_nn_load_i64(tb_kernel_ctx *ctx, size_t i, int64_t **out) {
  *out = NULL;
  const tb_tensor *t = i < ctx->n_inputs ? ctx->inputs[i] : NULL;
  if (!t) return tb_kernel_error(ctx, TB_ERR_MODEL, "required input %zu is missing", i);
  int64_t n = tb_tensor_numel(t);
  size_t bytes = tb_tensor_nbytes(t);
  void *raw = malloc(bytes ? bytes : 1);
  int64_t *v = malloc((size_t)(n ? n : 1) * sizeof(int64_t));
  tb_status st = raw && v ? tb_tensor_copy_to_host(t, raw, bytes) : TB_ERR_OUT_OF_MEMORY;
  if (st == TB_ERR_OUT_OF_MEMORY) st = tb_kernel_error(ctx, st, "out of host memory reading input %zu", i);
  if (st == TB_OK) st = tb_convert(tb_tensor_dtype(t), raw, TB_DTYPE_I64, v, (size_t)n, false);
  free(raw);
  if (st != TB_OK) {
    free(v);
    return st;
  }
  *out = v;
  return TB_OK;
}

void tb_nn_buf_free(nn_buf *b) {
  free(b->data);
  b->data = NULL;
}

tb_status tb_nn_store(tb_kernel_ctx *ctx, size_t i, tb_dtype dtype, size_t ndim, const int64_t *shape, const double *data) {
  if (i >= ctx->n_outputs) return TB_OK;
  tb_tensor *out = NULL;
  tb_status st = tb_kernel_output(ctx, i, dtype, ndim, shape, &out);
  if (st != TB_OK) return st;
  size_t bytes = tb_tensor_nbytes(out);
  int64_t n = tb_tensor_numel(out);
  void *raw = malloc(bytes ? bytes : 1);
  if (!raw) return tb_kernel_error(ctx, TB_ERR_OUT_OF_MEMORY, "out of host memory writing output %zu (%zu bytes)", i, bytes);
  st = tb_convert(TB_DTYPE_F64, data, dtype, raw, (size_t)n, true);
  if (st == TB_OK) st = tb_tensor_copy_from_host(out, raw, bytes);
  free(raw);
  return st;
}

int64_t tb_nn_bcast_offset(size_t ndim, const int64_t *idx, size_t in_ndim, const int64_t *in_shape) {
  int64_t off = 0;
  for (size_t k = 0; k < in_ndim; k++) {
    size_t o = ndim - in_ndim + k;
    off = off * in_shape[k] + (in_shape[k] == 1 ? 0 : idx[o]);
  }
  return off;
}
