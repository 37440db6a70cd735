/* Level-2 Concat: the output shape from the inputs' shapes by the operator's own rule (tb_rule_concat in
 * shape_rules.h: every input of one rank, equal off the axis; the axis sizes summed) and one dtype, made
 * without the reference kernel's per-run shape inference, then the reference kernel's pooled copy
 * (tb_tk_concat_copy). */
#include "backend/cpu/kernels/fast/layout/layout_kernels.h"
#include "backend/cpu/kernels/tensor/tensor_kernel.h"
#include "ops/tensor/shape_rules.h"
#include "ops/tensor/tensor_params.h"

/* Input i's shape for tb_rule_concat: every input's rank is known here. */
static bool input_dims(void *arg, size_t i, size_t *rank, int64_t *dims) {
  const tb_tensor *x = ((tb_kernel_ctx *)arg)->inputs[i];
  *rank = tb_tensor_ndim(x);
  for (size_t d = 0; d < *rank; d++) dims[d] = tb_tensor_shape(x)[d];
  return true;
}

static tb_status concat_run(tb_kernel_ctx *ctx) {
  const tb_tensor *x0;
  const unsigned char *data;
  tb_status st = tb_tk_input(ctx, 0, &x0, &data);
  if (st != TB_OK) return st;
  for (size_t i = 1; i < ctx->n_inputs; i++) {
    const tb_tensor *x;
    if ((st = tb_tk_input(ctx, i, &x, &data)) != TB_OK) return st;
    if (tb_tensor_dtype(x) != tb_tensor_dtype(x0))
      return tb_kernel_error(ctx, TB_ERR_UNSUPPORTED, "input %zu has element type %s; supported: %s", i,
                             tb_dtype_name(tb_tensor_dtype(x)), tb_dtype_name(tb_tensor_dtype(x0)));
  }
  const tb_axis_params *p = ctx->params;
  size_t rank, axis;
  int64_t shape[TB_MAX_DIMS];
  char why[300];
  if (!tb_rule_concat(ctx->n_inputs, input_dims, ctx, p->axis, &rank, &axis, shape, why, sizeof why))
    return tb_kernel_error(ctx, TB_ERR_MODEL, "%s", why);
  tb_tensor *out;
  if ((st = tb_tk_output(ctx, 0, tb_tensor_dtype(x0), rank, shape, &out, NULL)) != TB_OK) return st;
  return tb_tk_concat_copy(ctx, out, (int64_t)axis);
}

const tb_kernel tb_kernel_concat_fast = {.domain = "", .name = "Concat", .level = TB_KERNEL_FAST, .cpu_features = 0,
                                         .accepts = NULL, .run = concat_run};
