/* Shared parts of the fused operators' definitions (see fused_ops.h). */
#include <limits.h>
#include <math.h>
#include <string.h>
#include "ops/fused/fused_ops.h"
#include "ops/fused/fused_params.h"

int tb_fused_onnx_opset(const tb_graph *g, const tb_node *n) {
  for (const tb_graph *s = g; s; s = s->parent)
    if (s->model) {
      int64_t v = tb_ir_model_opset(s->model, "");
      if (v > 0) return v > INT_MAX ? INT_MAX : (int)v;
      break;
    }
  return n->opset > 0 ? n->opset : INT_MAX;
}

tb_status tb_fused_base_infer(tb_infer_ctx *ctx, const char *base, int min_opset, size_t n_base) {
  int opset = tb_fused_onnx_opset(ctx->graph, ctx->node);
  if (opset < min_opset) opset = min_opset;
  const tb_op_def *def = tb_op_find("", base, opset);
  if (!def) return tb_infer_error(ctx, TB_ERR_UNSUPPORTED, "the operator %s it extends is not defined at opset %d", base, opset);
  tb_infer_ctx sub = *ctx;
  sub.n_inputs = ctx->n_inputs < n_base ? ctx->n_inputs : n_base;
  return def->infer(&sub);
}

const tb_activation_params *tb_fused_activation(const char *domain, const char *op_type, const void *params) {
  if (!params || !domain || strcmp(domain, "tb") != 0) return NULL;
  if (strcmp(op_type, "FusedConv") == 0) return &((const tb_fused_conv_params *)params)->act;
  if (strcmp(op_type, "FusedGemm") == 0) return &((const tb_fused_gemm_params *)params)->act;
  if (strcmp(op_type, "FusedMatMul") == 0) return &((const tb_fused_matmul_params *)params)->act;
  return NULL;
}

tb_status tb_activation_parse(const tb_graph *g, const tb_node *n, bool gelu_allowed, tb_activation_params *act) {
  static const char *const names[] = {"Relu", "LeakyRelu", "Clip", "Sigmoid", "Tanh", "HardSigmoid", "HardSwish", "Gelu"};
  const char *name = NULL, *approx = "none";
  tb_status st = tb_attr_string(g, n, "activation", NULL, &name);
  if (st == TB_OK) st = tb_attr_float(g, n, "activation_alpha", 0.01f, &act->alpha);
  if (st == TB_OK) st = tb_attr_float(g, n, "activation_beta", 0.5f, &act->beta);
  if (st == TB_OK) st = tb_attr_float(g, n, "activation_min", -INFINITY, &act->min);
  if (st == TB_OK) st = tb_attr_float(g, n, "activation_max", INFINITY, &act->max);
  if (st == TB_OK) st = tb_attr_string(g, n, "activation_approximate", "none", &approx);
  if (st != TB_OK || !name) return st;
  act->kind = TB_FUSED_ACT_NONE;
  for (size_t i = 0; i < sizeof names / sizeof names[0]; i++)
    if (strcmp(name, names[i]) == 0) act->kind = (tb_fused_act_kind)(i + 1);
  if (strcmp(name, "Silu") == 0) act->kind = TB_FUSED_ACT_SILU;
  if (strcmp(name, "Mish") == 0) act->kind = TB_FUSED_ACT_MISH;
  if (act->kind == TB_FUSED_ACT_NONE || (act->kind == TB_FUSED_ACT_GELU && !gelu_allowed))
    return tb_node_error(g, n, TB_ERR_MODEL,
                         "attribute activation is '%s'; expected Relu, LeakyRelu, Clip, Sigmoid, Tanh, HardSigmoid, "
                         "HardSwish, Silu, %s",
                         name, gelu_allowed ? "Mish or Gelu" : "or Mish (Gelu is fused only into MatMul and Gemm)");
  if (act->kind != TB_FUSED_ACT_GELU) return TB_OK;
  if (strcmp(approx, "tanh") == 0) act->kind = TB_FUSED_ACT_GELU_TANH;
  else if (strcmp(approx, "none") != 0)
    return tb_node_error(g, n, TB_ERR_MODEL, "attribute activation_approximate is '%s'; expected 'none' or 'tanh'", approx);
  return TB_OK;
}
