/* Split: each output's block along the axis, for every outer index. */
#include <stdlib.h>
#include <string.h>
#include "backend/cpu/kernels/tensor/tensor_kernel.h"
#include "ops/tensor/tensor_params.h"

static tb_status run_split(tb_kernel_ctx *ctx) {
  const tb_tensor *x;
  const unsigned char *src;
  const tb_split_params *p = ctx->params;
  tb_status st = tb_tk_input(ctx, 0, &x, &src);
  if (st != TB_OK) return st;
  tb_tensor **outs = calloc(ctx->n_outputs ? ctx->n_outputs : 1, sizeof *outs);
  if (!outs) return tb_kernel_error(ctx, TB_ERR_OUT_OF_MEMORY, "no memory for %zu outputs", ctx->n_outputs);
  if ((st = tb_tk_infer_outputs(ctx, outs)) != TB_OK) {
    free(outs);
    return st;
  }
  size_t rank = tb_tensor_ndim(x), elem = tb_dtype_size(tb_tensor_dtype(x));
  int64_t axis = tb_tk_axis(p->axis, rank); /* checked by inference */
  const int64_t *shape = tb_tensor_shape(x);
  int64_t outer = 1, inner = 1;
  for (int64_t d = 0; d < axis; d++) outer *= shape[d];
  for (size_t d = (size_t)axis + 1; d < rank; d++) inner *= shape[d];
  size_t row = (size_t)(shape[axis] * inner) * elem, at = 0;
  for (size_t o = 0; o < ctx->n_outputs; o++) {
    if (!outs[o]) continue;
    size_t block = (size_t)(tb_tensor_shape(outs[o])[axis] * inner) * elem;
    unsigned char *dst = tb_tk_data(outs[o]);
    if (block)
      for (int64_t k = 0; k < outer; k++) memcpy(dst + (size_t)k * block, src + (size_t)k * row + at, block);
    at += block;
  }
  free(outs);
  return st;
}

const tb_kernel tb_kernel_split = {.domain = "", .name = "Split", .level = TB_KERNEL_REFERENCE, .cpu_features = 0, .accepts = NULL, .run = run_split};
