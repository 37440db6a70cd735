/* Concat: for each outer index, each input's block along the axis in turn. */
#include <string.h>
#include "backend/cpu/kernels/tensor/tensor_kernel.h"
#include "ops/tensor/tensor_params.h"

static tb_status run_concat(tb_kernel_ctx *ctx) {
  tb_tensor *outs[1] = {NULL};
  tb_status st = tb_tk_infer_outputs(ctx, outs);
  if (st != TB_OK) return st;
  const tb_axis_params *p = ctx->params;
  size_t rank = tb_tensor_ndim(outs[0]);
  int64_t axis = tb_tk_axis(p->axis, rank); /* range checked by inference */
  const int64_t *shape = tb_tensor_shape(outs[0]);
  size_t elem = tb_dtype_size(tb_tensor_dtype(outs[0]));
  int64_t outer = 1, inner = 1;
  for (int64_t d = 0; d < axis; d++) outer *= shape[d];
  for (size_t d = (size_t)axis + 1; d < rank; d++) inner *= shape[d];
  unsigned char *dst = tb_tk_data(outs[0]);
  size_t row = (size_t)(shape[axis] * inner) * elem, at = 0;
  for (size_t i = 0; i < ctx->n_inputs; i++) {
    const tb_tensor *x;
    const unsigned char *src;
    if ((st = tb_tk_input(ctx, i, &x, &src)) != TB_OK) return st;
    size_t block = (size_t)(tb_tensor_shape(x)[axis] * inner) * elem;
    if (block)
      for (int64_t o = 0; o < outer; o++) memcpy(dst + (size_t)o * row + at, src + (size_t)o * block, block);
    at += block;
  }
  return TB_OK;
}

const tb_kernel tb_kernel_concat = {.domain = "", .name = "Concat", .level = TB_KERNEL_REFERENCE, .cpu_features = 0, .accepts = NULL, .run = run_concat};
