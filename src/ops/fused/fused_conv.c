/* tb::FusedConv, tb::FusedGemm, tb::FusedMatMul: Conv / Gemm / MatMul (their ONNX meaning, attributes and
 * inference) followed by an activation epilogue (attribute activation and activation_alpha/beta/min/max);
 * FusedConv may take a residual as input 3, added before the activation: Y = act(Conv(X, W, B) + R). */
#include "ops/fused/fused_ops.h"

static bool same_shape(const tb_value_type *a, const tb_value_type *b) {
  if (!a->has_shape || !b->has_shape) return true;
  if (a->ndim != b->ndim) return false;
  for (size_t d = 0; d < a->ndim; d++)
    if (a->dims[d].value >= 0 && b->dims[d].value >= 0 && a->dims[d].value != b->dims[d].value) return false;
  return true;
}

static tb_status fused_conv_infer(tb_infer_ctx *ctx) {
  tb_status st = tb_fused_base_infer(ctx, "Conv", 1, 3);
  if (st == TB_OK) st = tb_fused_check_activation(ctx);
  if (st != TB_OK || ctx->n_inputs < 4 || !ctx->in[3]) return st;
  const tb_value_type *r = ctx->in[3];
  if (r->has_dtype && ctx->out[0].has_dtype && r->dtype != ctx->out[0].dtype)
    return tb_infer_error(ctx, TB_ERR_MODEL, "the residual's dtype %s differs from the output's %s", tb_dtype_name(r->dtype),
                          tb_dtype_name(ctx->out[0].dtype));
  if (!same_shape(r, &ctx->out[0])) return tb_infer_error(ctx, TB_ERR_MODEL, "the residual's shape differs from the output's");
  return TB_OK;
}

static tb_status fused_gemm_infer(tb_infer_ctx *ctx) {
  tb_status st = tb_fused_base_infer(ctx, "Gemm", 1, 3);
  return st == TB_OK ? tb_fused_check_activation(ctx) : st;
}

static tb_status fused_matmul_infer(tb_infer_ctx *ctx) {
  tb_status st = tb_fused_base_infer(ctx, "MatMul", 1, 2);
  return st == TB_OK ? tb_fused_check_activation(ctx) : st;
}

const tb_op_def tb_op_fused_conv = {"tb", "FusedConv", 1, 2, 4, 1, 1, 0, fused_conv_infer};
const tb_op_def tb_op_fused_gemm = {"tb", "FusedGemm", 1, 2, 3, 1, 1, 0, fused_gemm_infer};
const tb_op_def tb_op_fused_matmul = {"tb", "FusedMatMul", 1, 2, 2, 1, 1, 0, fused_matmul_infer};
