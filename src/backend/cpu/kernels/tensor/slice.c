/* Slice: a strided copy (steps may be negative) from the plan the operator's definition computes; the copy
 * (tb_tk_slice_copy) is also the level-2 Slice's, which makes its plan without the inference context. */
#include "backend/cpu/kernels/tensor/tensor_kernel.h"
#include "ops/tensor/tensor_params.h"
#include "ops/tensor/shape_rules.h"


static tb_status run_slice(tb_kernel_ctx *ctx) {
  const tb_tensor *x;
  const unsigned char *src;
  tb_status st = tb_tk_input(ctx, 0, &x, &src);
  if (st != TB_OK) return st;
  const tb_slice_params *p = ctx->params;
  tk_infer *inf;
  if ((st = tb_tk_infer_begin(ctx, &inf)) != TB_OK) return st;
  tb_slice_plan plan;
  st = tb_slice_infer_plan(tb_tk_infer_ctx(inf), p, &plan);
  tb_tk_infer_end(inf);
  if (st != TB_OK) return st;
  return tb_tk_slice_copy(ctx, x, src, &plan);
}

tb_status tb_tk_slice_copy(tb_kernel_ctx *ctx, const tb_tensor *x, const unsigned char *src, const tb_slice_plan *plan) {
  size_t ndim = tb_tensor_ndim(x), elem = tb_dtype_size(tb_tensor_dtype(x));
  unsigned char *dst;
  tb_status st = tb_tk_output(ctx, 0, tb_tensor_dtype(x), ndim, plan->count, NULL, &dst);
  if (st != TB_OK) return st;
  int64_t in_strides[TB_MAX_DIMS], strides[TB_MAX_DIMS], offset = 0;
  tb_shape_strides(ndim, tb_tensor_shape(x), in_strides);
  for (size_t d = 0; d < ndim; d++) {
    strides[d] = plan->count[d] > 1 ? plan->step[d] * in_strides[d] * (int64_t)elem : 0;
    if (plan->count[d] > 0) offset += plan->first[d] * in_strides[d] * (int64_t)elem;
  }
  tb_tk_strided_copy_pool(ctx->pool, dst, src, elem, ndim, plan->count, strides, offset);
  return TB_OK;
}

const tb_kernel tb_kernel_slice = {.domain = "", .name = "Slice", .level = TB_KERNEL_REFERENCE, .cpu_features = 0, .accepts = NULL, .run = run_slice};
