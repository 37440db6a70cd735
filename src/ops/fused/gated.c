/* tb::Silu, Y = X * Sigmoid(X), and tb::Mish, Y = X * Tanh(Softplus(X)): the gated activations the
 * activation fusion pass makes from Sigmoid + Mul (Softplus + Tanh + Mul) when no Conv, Gemm or MatMul
 * produces their input. No attributes; float types, the output as the input. */
#include "ops/fused/fused_ops.h"

static tb_status gated_infer(tb_infer_ctx *ctx) {
  tb_status st = tb_infer_require(ctx, 0, TB_DTYPE_BIT(TB_DTYPE_F32) | TB_DTYPE_BIT(TB_DTYPE_F64) |
                                              TB_DTYPE_BIT(TB_DTYPE_F16) | TB_DTYPE_BIT(TB_DTYPE_BF16));
  if (st != TB_OK) return st;
  tb_infer_same(ctx->in[0], &ctx->out[0]);
  return TB_OK;
}

const tb_op_def tb_op_fused_silu = {"tb", "Silu", 1, 1, 1, 1, 1, 0, gated_infer, 0, NULL};
const tb_op_def tb_op_fused_mish = {"tb", "Mish", 1, 1, 1, 1, 1, 0, gated_infer, 0, NULL};
