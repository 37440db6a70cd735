/* Transpose: a strided copy of the input with its strides permuted. */
#include "backend/cpu/kernels/tensor/tensor_kernel.h"
#include "ops/tensor/tensor_params.h"

static tb_status run_transpose(tb_kernel_ctx *ctx) {
  const tb_tensor *x;
  const unsigned char *src;
  tb_tensor *outs[1] = {NULL};
  tb_status st = tb_tk_begin(ctx, 1, &x, &src, outs);
  if (st != TB_OK) return st;
  size_t ndim = tb_tensor_ndim(x), elem = tb_dtype_size(tb_tensor_dtype(x));
  const tb_transpose_params *tp = ctx->params;
  const int64_t *perm = tp->has_perm ? tp->perm : NULL;
  int64_t in_strides[TB_MAX_DIMS], strides[TB_MAX_DIMS];
  tb_shape_strides(ndim, tb_tensor_shape(x), in_strides);
  for (size_t d = 0; d < ndim; d++) {
    int64_t p = perm ? perm[d] : (int64_t)(ndim - 1 - d); /* checked by inference */
    strides[d] = in_strides[p] * (int64_t)elem;
  }
  tb_tk_strided_copy_pool(ctx->pool, tb_tk_data(outs[0]), src, elem, ndim, tb_tensor_shape(outs[0]), strides, 0);
  return TB_OK;
}

const tb_kernel tb_kernel_transpose = {.domain = "", .name = "Transpose", .level = TB_KERNEL_REFERENCE, .cpu_features = 0, .accepts = NULL, .run = run_transpose};
