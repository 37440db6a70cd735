/* tb::Gelu: Y = X * 0.5 * (1 + erf(X / sqrt(2))), or with approximate = "tanh"
 * Y = 0.5 * X * (1 + tanh(sqrt(2 / pi) * (X + 0.044715 * X^3))). Made by the GELU pattern pass. */
#include <string.h>
#include "ops/op_params.h"
#include "ops/fused/fused_ops.h"
#include "ops/fused/fused_params.h"

tb_status tb_gelu_parse(const tb_graph *g, const tb_node *n, void *params) {
  tb_gelu_params *p = params;
  const char *approx = "none";
  tb_status st = tb_attr_string(g, n, "approximate", "none", &approx);
  if (st != TB_OK) return st;
  if (strcmp(approx, "none") != 0 && strcmp(approx, "tanh") != 0)
    return tb_node_error(g, n, TB_ERR_MODEL, "attribute approximate is '%s'; expected 'none' or 'tanh'", approx);
  p->tanh = strcmp(approx, "tanh") == 0;
  return TB_OK;
}

static tb_status gelu_infer(tb_infer_ctx *ctx) {
  tb_status st = tb_infer_require(ctx, 0, TB_DTYPE_BIT(TB_DTYPE_F32) | TB_DTYPE_BIT(TB_DTYPE_F64) |
                                              TB_DTYPE_BIT(TB_DTYPE_F16) | TB_DTYPE_BIT(TB_DTYPE_BF16));
  tb_gelu_params p;
  if (st == TB_OK) st = tb_infer_params(ctx, &p, sizeof p);
  if (st != TB_OK) return st;
  tb_infer_same(ctx->in[0], &ctx->out[0]);
  return TB_OK;
}

const tb_op_def tb_op_fused_gelu = {"tb", "Gelu", 1, 1, 1, 1, 1, 0, gelu_infer, sizeof(tb_gelu_params), tb_gelu_parse};
