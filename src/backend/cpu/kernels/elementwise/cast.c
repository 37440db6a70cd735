/* Reference kernels for Cast and CastLike: tb_convert from the input's dtype to the target, with the
 * node's saturate attribute (opset 19; true by default). */
#include <stdlib.h>
#include "backend/cpu/kernels/elementwise/ew_kernel.h"
#include "ops/elementwise/ew_params.h"

static tb_status cast_to(tb_kernel_ctx *ctx, tb_dtype to, bool saturate) {
  tb_status st;
  const tb_tensor *in = ctx->inputs[0];
  tb_dtype from = tb_tensor_dtype(in);
  size_t count = (size_t)tb_tensor_numel(in);
  const void *src;
  void *packed;
  st = tb_ew_packed(ctx, in, &src, &packed);
  tb_tensor *out = NULL;
  if (st == TB_OK) st = tb_kernel_output(ctx, 0, to, tb_tensor_ndim(in), tb_tensor_shape(in), &out);
  if (st == TB_OK && count > 0) {
    if (tb_tensor_is_contiguous(out) && tb_tensor_host_data(out)) {
      st = tb_convert(from, src, to, tb_tensor_host_data(out), count, saturate);
    } else {
      void *tmp = malloc(count * tb_dtype_size(to));
      st = tmp ? tb_convert(from, src, to, tmp, count, saturate != 0)
               : tb_kernel_error(ctx, TB_ERR_OUT_OF_MEMORY, "could not allocate the cast's output copy");
      if (st == TB_OK) st = tb_tensor_copy_from_host(out, tmp, tb_tensor_nbytes(out));
      free(tmp);
    }
  }
  free(packed);
  return st;
}

static tb_status run_cast(tb_kernel_ctx *ctx) {
  const tb_cast_params *p = ctx->params;
  return cast_to(ctx, p->to, p->saturate);
}

static tb_status run_castlike(tb_kernel_ctx *ctx) {
  if (ctx->n_inputs < 2 || !ctx->inputs[1]) return tb_kernel_error(ctx, TB_ERR_INTERNAL, "CastLike needs input 1");
  const tb_cast_params *p = ctx->params;
  return cast_to(ctx, tb_tensor_dtype(ctx->inputs[1]), p->saturate);
}

const tb_kernel tb_kernel_cast = {.domain = "", .name = "Cast", .level = TB_KERNEL_REFERENCE, .cpu_features = 0, .accepts = NULL, .run = run_cast};
const tb_kernel tb_kernel_castlike = {.domain = "", .name = "CastLike", .level = TB_KERNEL_REFERENCE, .cpu_features = 0, .accepts = NULL, .run = run_castlike};
