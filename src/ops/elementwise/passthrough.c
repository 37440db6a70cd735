/* Identity and Dropout (inference): the output is the input.
 *
 * Dropout: opsets 1-11 have no training switch at inference (is_test / ratio attributes are accepted
 * and ignored: an inference engine never drops). From opset 12, training_mode (input 2) true is
 * TB_ERR_UNSUPPORTED, except with ratio 0, where training keeps every element and is the same as
 * inference. The optional mask output is all true (bool from opset 10; before it, 1 in the input's
 * type). */
#include "ops/elementwise/ew_infer.h"

static tb_status infer_identity(tb_infer_ctx *ctx) { return tb_ew_infer_unary(ctx, EW_ALL, EW_ALL); }
const tb_op_def tb_op_identity = {"", "Identity", 1, 1, 1, 1, 1, 0, infer_identity, 0, NULL};

static tb_status infer_dropout(tb_infer_ctx *ctx) {
  tb_status st = tb_ew_infer_unary(ctx, EW_FLOATS, EW_FLOATS);
  if (st != TB_OK) return st;
  if (ctx->node->opset >= 12) {
    const tb_ir_tensor *ratio = ctx->n_inputs > 1 ? ctx->value[1] : NULL;
    const tb_ir_tensor *training = ctx->n_inputs > 2 ? ctx->value[2] : NULL;
    if (ctx->n_inputs > 1 && ctx->in[1]) {
      st = tb_ew_check(ctx, 1, EW_FLOATS, EW_FLOATS);
      if (st != TB_OK) return st;
    }
    if (ctx->n_inputs > 2 && ctx->in[2]) {
      st = tb_ew_check(ctx, 2, EW_BOOL, EW_BOOL);
      if (st != TB_OK) return st;
    }
    if (training && tb_ir_tensor_numel(training) == 1 && tb_ir_tensor_int(training, 0) != 0) {
      bool zero_ratio = ratio && tb_ir_tensor_numel(ratio) == 1 && tb_ir_tensor_double(ratio, 0) == 0.0;
      if (!zero_ratio)
        return tb_infer_error(ctx, TB_ERR_UNSUPPORTED,
                              "training_mode is true: TensorBridge runs Dropout for inference only (random dropping "
                              "is not implemented); export the model in eval mode");
    }
  }
  if (ctx->n_outputs > 1) {
    tb_infer_same(ctx->in[0], &ctx->out[1]);
    if (ctx->node->opset >= 10) ctx->out[1].dtype = TB_DTYPE_BOOL;
  }
  return TB_OK;
}
/* Inputs 1 (ratio) and 2 (training_mode) are value inputs so run-time inference sees them. */
const tb_op_def tb_op_dropout = {"", "Dropout", 1, 1, 3, 1, 2, (1u << 1) | (1u << 2), infer_dropout, 0, NULL};
