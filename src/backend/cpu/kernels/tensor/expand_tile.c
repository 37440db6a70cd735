/* Expand (a strided copy with stride 0 on broadcast dims) and Tile (rows repeated). */
#include <string.h>
#include "backend/cpu/kernels/tensor/tensor_kernel.h"

static tb_status run_expand(tb_kernel_ctx *ctx) {
  const tb_tensor *x;
  const unsigned char *src;
  tb_tensor *outs[1] = {NULL};
  tb_status st = tb_tk_begin(ctx, 1, &x, &src, outs);
  if (st != TB_OK) return st;
  size_t n = tb_tensor_ndim(outs[0]), in_ndim = tb_tensor_ndim(x), elem = tb_dtype_size(tb_tensor_dtype(x));
  int64_t in_strides[TB_MAX_DIMS], strides[TB_MAX_DIMS];
  tb_shape_strides(in_ndim, tb_tensor_shape(x), in_strides);
  for (size_t k = 0; k < n; k++) {
    strides[k] = 0;
    if (k >= n - in_ndim) {
      size_t d = k - (n - in_ndim);
      if (tb_tensor_shape(x)[d] != 1) strides[k] = in_strides[d] * (int64_t)elem;
    }
  }
  tb_tk_strided_copy_pool(ctx->pool, tb_tk_data(outs[0]), src, elem, n, tb_tensor_shape(outs[0]), strides, 0);
  return TB_OK;
}

const tb_kernel tb_kernel_expand = {.domain = "", .name = "Expand", .level = TB_KERNEL_REFERENCE, .cpu_features = 0, .accepts = NULL, .run = run_expand};

static tb_status run_tile(tb_kernel_ctx *ctx) {
  const tb_tensor *x;
  const unsigned char *src;
  tb_tensor *outs[1] = {NULL};
  tb_status st = tb_tk_begin(ctx, 1, &x, &src, outs);
  if (st != TB_OK) return st;
  size_t n = tb_tensor_ndim(x), elem = tb_dtype_size(tb_tensor_dtype(x));
  const int64_t *in = tb_tensor_shape(x), *out = tb_tensor_shape(outs[0]);
  unsigned char *dst = tb_tk_data(outs[0]);
  if (tb_tensor_numel(outs[0]) == 0) return TB_OK;
  if (n == 0) {
    memcpy(dst, src, elem);
    return TB_OK;
  }
  int64_t in_strides[TB_MAX_DIMS], idx[TB_MAX_DIMS] = {0};
  tb_shape_strides(n, in, in_strides);
  size_t row = (size_t)in[n - 1] * elem;
  int64_t reps = out[n - 1] / in[n - 1], rows = tb_tensor_numel(outs[0]) / out[n - 1];
  for (int64_t r = 0; r < rows; r++) {
    int64_t off = 0;
    for (size_t d = 0; d + 1 < n; d++) off += (idx[d] % in[d]) * in_strides[d];
    for (int64_t k = 0; k < reps; k++, dst += row) memcpy(dst, src + (size_t)off * elem, row);
    tb_kernel_next_index(n - 1, out, idx);
  }
  return TB_OK;
}

const tb_kernel tb_kernel_tile = {.domain = "", .name = "Tile", .level = TB_KERNEL_REFERENCE, .cpu_features = 0, .accepts = NULL, .run = run_tile};
