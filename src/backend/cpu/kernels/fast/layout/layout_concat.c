/* Level-2 Concat: the output shape from the inputs' shapes (every input of the first one's rank and dtype,
 * equal off the axis; the axis sizes summed), checked and made without the reference kernel's per-run shape
 * inference, then the reference kernel's pooled copy (tb_tk_concat_copy). */
#include "backend/cpu/kernels/fast/layout/layout_kernels.h"
#include "backend/cpu/kernels/tensor/tensor_kernel.h"
#include "ops/tensor/tensor_params.h"

static tb_status concat_run(tb_kernel_ctx *ctx) {
  const tb_tensor *x0;
  const unsigned char *data;
  tb_status st = tb_tk_input(ctx, 0, &x0, &data);
  if (st != TB_OK) return st;
  const tb_axis_params *p = ctx->params;
  size_t rank = tb_tensor_ndim(x0);
  int64_t axis = p->axis < 0 ? p->axis + (int64_t)rank : p->axis;
  if (axis < 0 || axis >= (int64_t)rank)
    return tb_kernel_error(ctx, TB_ERR_MODEL, "axis %lld is outside [-%zu, %zu) for inputs of rank %zu; give an axis in range",
                           (long long)p->axis, rank, rank, rank);
  int64_t shape[TB_MAX_DIMS];
  for (size_t d = 0; d < rank; d++) shape[d] = tb_tensor_shape(x0)[d];
  shape[axis] = 0;
  for (size_t i = 0; i < ctx->n_inputs; i++) {
    const tb_tensor *x;
    if ((st = tb_tk_input(ctx, i, &x, &data)) != TB_OK) return st;
    if (tb_tensor_dtype(x) != tb_tensor_dtype(x0))
      return tb_kernel_error(ctx, TB_ERR_MODEL, "input %zu is %s but input 0 is %s; give every input one dtype", i,
                             tb_dtype_name(tb_tensor_dtype(x)), tb_dtype_name(tb_tensor_dtype(x0)));
    if (tb_tensor_ndim(x) != rank)
      return tb_kernel_error(ctx, TB_ERR_MODEL, "input %zu has rank %zu but input 0 has rank %zu; give every input one rank",
                             i, tb_tensor_ndim(x), rank);
    for (size_t d = 0; d < rank; d++)
      if ((int64_t)d != axis && tb_tensor_shape(x)[d] != tb_tensor_shape(x0)[d])
        return tb_kernel_error(ctx, TB_ERR_MODEL,
                               "input %zu has size %lld on dim %zu but input 0 has %lld; only axis %lld may differ", i,
                               (long long)tb_tensor_shape(x)[d], d, (long long)tb_tensor_shape(x0)[d], (long long)axis);
    shape[axis] += tb_tensor_shape(x)[axis];
  }
  tb_tensor *out;
  if ((st = tb_tk_output(ctx, 0, tb_tensor_dtype(x0), rank, shape, &out, NULL)) != TB_OK) return st;
  return tb_tk_concat_copy(ctx, out, axis);
}

const tb_kernel tb_kernel_concat_fast = {.domain = "", .name = "Concat", .level = TB_KERNEL_FAST, .cpu_features = 0,
                                         .accepts = NULL, .run = concat_run};
