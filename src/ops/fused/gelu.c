/* tb::Gelu: Y = X * 0.5 * (1 + erf(X / sqrt(2))), or with approximate = "tanh"
 * Y = 0.5 * X * (1 + tanh(sqrt(2 / pi) * (X + 0.044715 * X^3))). Made by the GELU pattern pass. */
#include <string.h>
#include "ops/fused/fused_ops.h"

static tb_status gelu_infer(tb_infer_ctx *ctx) {
  tb_status st = tb_infer_require(ctx, 0, TB_DTYPE_BIT(TB_DTYPE_F32) | TB_DTYPE_BIT(TB_DTYPE_F64) |
                                              TB_DTYPE_BIT(TB_DTYPE_F16) | TB_DTYPE_BIT(TB_DTYPE_BF16));
  const char *approx = "none";
  if (st == TB_OK) st = tb_attr_string(ctx->graph, ctx->node, "approximate", "none", &approx);
  if (st != TB_OK) return st;
  if (strcmp(approx, "none") != 0 && strcmp(approx, "tanh") != 0)
    return tb_infer_error(ctx, TB_ERR_MODEL, "attribute approximate is '%s'; expected 'none' or 'tanh'", approx);
  tb_infer_same(ctx->in[0], &ctx->out[0]);
  return TB_OK;
}

const tb_op_def tb_op_fused_gelu = {"tb", "Gelu", 1, 1, 1, 1, 1, 0, gelu_infer, 0, NULL};
