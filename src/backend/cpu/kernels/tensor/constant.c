/* Constant and ConstantOfShape: outputs filled from attributes. */
#include <string.h>
#include "backend/cpu/kernels/tensor/tensor_kernel.h"
#include "ops/tensor/tensor_params.h"

static tb_status run_constant(tb_kernel_ctx *ctx) {
  tb_tensor *outs[1] = {NULL};
  tb_status st = tb_tk_infer_outputs(ctx, outs);
  if (st != TB_OK) return st;
  unsigned char *dst = tb_tk_data(outs[0]);
  size_t nbytes = tb_tensor_nbytes(outs[0]);
  const tb_constant_params *p = ctx->params;
  switch (p->kind) {
    case TB_CONSTANT_TENSOR:
      if (p->tensor->nbytes != nbytes || (nbytes && !p->tensor->data))
        return tb_kernel_error(ctx, TB_ERR_MODEL, "the value tensor holds %zu bytes where its shape needs %zu",
                               p->tensor->nbytes, nbytes);
      if (nbytes) memcpy(dst, p->tensor->data, nbytes);
      break;
    case TB_CONSTANT_FLOAT: memcpy(dst, &p->f, sizeof(float)); break;
    case TB_CONSTANT_INT: memcpy(dst, &p->i, sizeof(int64_t)); break;
    case TB_CONSTANT_FLOATS:
      if (p->count) memcpy(dst, p->floats, p->count * sizeof(float));
      break;
    case TB_CONSTANT_INTS:
      if (p->count) memcpy(dst, p->ints, p->count * sizeof(int64_t));
      break;
  }

  return TB_OK;
}

const tb_kernel tb_kernel_constant = {.domain = "", .name = "Constant", .level = TB_KERNEL_REFERENCE, .cpu_features = 0, .accepts = NULL, .run = run_constant};

static tb_status run_constant_of_shape(tb_kernel_ctx *ctx) {
  tb_tensor *outs[1] = {NULL};
  tb_status st = tb_tk_infer_outputs(ctx, outs);
  if (st != TB_OK) return st;
  const tb_constant_of_shape_params *p = ctx->params;
  const tb_ir_tensor *value = p->value;
  unsigned char zero[8] = {0};
  const void *fill = zero;
  size_t elem = tb_dtype_size(tb_tensor_dtype(outs[0]));
  if (value) {
    if (value->nbytes != elem || !value->data)
      return tb_kernel_error(ctx, TB_ERR_MODEL, "attribute 'value' holds %zu bytes, not one %s", value->nbytes,
                             tb_dtype_name(value->dtype));
    fill = value->data;
  }
  unsigned char *dst = tb_tk_data(outs[0]);
  int64_t n = tb_tensor_numel(outs[0]);
  for (int64_t k = 0; k < n; k++) memcpy(dst + (size_t)k * elem, fill, elem);
  return TB_OK;
}

const tb_kernel tb_kernel_constant_of_shape = {.domain = "", .name = "ConstantOfShape", .level = TB_KERNEL_REFERENCE, .cpu_features = 0, .accepts = NULL, .run = run_constant_of_shape};
