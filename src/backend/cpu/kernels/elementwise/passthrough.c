/* Reference kernels for Identity and Dropout at inference: a copy of the input, and Dropout's mask all
 * true. Dropout with training_mode true runs only with ratio 0 (no element dropped). */
#include "backend/cpu/kernels/elementwise/ew_kernel.h"

static tb_status copy_input(tb_kernel_ctx *ctx) {
  const tb_tensor *in = ctx->inputs[0];
  tb_tensor *out;
  tb_status st = tb_kernel_output(ctx, 0, tb_tensor_dtype(in), tb_tensor_ndim(in), tb_tensor_shape(in), &out);
  if (st != TB_OK || out == in) return st;
  return tb_tensor_copy(out, in);
}

static tb_status run_identity(tb_kernel_ctx *ctx) { return copy_input(ctx); }

static tb_status run_dropout(tb_kernel_ctx *ctx) {
  if (ctx->opset >= 12 && ctx->n_inputs > 2 && ctx->inputs[2]) {
    unsigned char training = 0;
    double ratio = 0.5;
    tb_status st = tb_ew_scalar(ctx, 2, TB_DTYPE_BOOL, &training);
    if (st == TB_OK && ctx->n_inputs > 1 && ctx->inputs[1]) st = tb_ew_scalar(ctx, 1, TB_DTYPE_F64, &ratio);
    if (st != TB_OK) return st;
    if (training && ratio != 0.0)
      return tb_kernel_error(ctx, TB_ERR_UNSUPPORTED,
                             "training_mode is true with ratio %g: Dropout runs for inference only", ratio);
  }
  tb_status st = copy_input(ctx);
  if (st != TB_OK || !tb_ew_has_output(ctx, 1)) return st;
  const tb_tensor *in = ctx->inputs[0];
  tb_dtype mask_dtype = ctx->opset >= 10 ? TB_DTYPE_BOOL : tb_tensor_dtype(in);
  tb_tensor *mask;
  st = tb_kernel_output(ctx, 1, mask_dtype, tb_tensor_ndim(in), tb_tensor_shape(in), &mask);
  if (st != TB_OK) return st;
  unsigned char one[8];
  double one_f64 = 1.0;
  st = tb_convert(TB_DTYPE_F64, &one_f64, mask_dtype, one, 1, true);
  if (st != TB_OK) return st;
  return tb_tensor_numel(mask) ? tb_tensor_fill(mask, one) : TB_OK;
}

const tb_kernel tb_kernel_identity = {.domain = "", .name = "Identity", .level = TB_KERNEL_REFERENCE, .cpu_features = 0, .accepts = NULL, .run = run_identity};
const tb_kernel tb_kernel_dropout = {.domain = "", .name = "Dropout", .level = TB_KERNEL_REFERENCE, .cpu_features = 0, .accepts = NULL, .run = run_dropout};
