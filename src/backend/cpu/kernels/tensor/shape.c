/* Shape and Size: the input's dims (a range of them from opset 15) and element count as int64. */
#include <string.h>
#include "backend/cpu/kernels/tensor/tensor_kernel.h"
#include "ops/tensor/tensor_params.h"


static tb_status run_shape(tb_kernel_ctx *ctx) {
  if (!tb_tk_has(ctx, 0)) return tb_kernel_error(ctx, TB_ERR_MODEL, "input 0 is missing");
  const tb_tensor *x = ctx->inputs[0];
  const tb_shape_params *p = ctx->params;
  tb_status st;
  int64_t first, count;
  tb_shape_range((int64_t)tb_tensor_ndim(x), p->start, p->end, &first, &count);
  unsigned char *dst;
  if ((st = tb_tk_output(ctx, 0, TB_DTYPE_I64, 1, &count, NULL, &dst)) != TB_OK) return st;
  if (count) memcpy(dst, tb_tensor_shape(x) + first, (size_t)count * sizeof(int64_t));
  return TB_OK;
}

const tb_kernel tb_kernel_shape = {.domain = "", .name = "Shape", .level = TB_KERNEL_REFERENCE, .cpu_features = 0, .accepts = NULL, .run = run_shape};

static tb_status run_size(tb_kernel_ctx *ctx) {
  if (!tb_tk_has(ctx, 0)) return tb_kernel_error(ctx, TB_ERR_MODEL, "input 0 is missing");
  int64_t n = tb_tensor_numel(ctx->inputs[0]);
  unsigned char *dst;
  tb_status st = tb_tk_output(ctx, 0, TB_DTYPE_I64, 0, NULL, NULL, &dst);
  if (st != TB_OK) return st;
  memcpy(dst, &n, sizeof n);
  return TB_OK;
}

const tb_kernel tb_kernel_size = {.domain = "", .name = "Size", .level = TB_KERNEL_REFERENCE, .cpu_features = 0, .accepts = NULL, .run = run_size};
