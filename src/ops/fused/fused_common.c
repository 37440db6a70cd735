/* Shared parts of the fused operators' definitions (see fused_ops.h). */
#include <limits.h>
#include <string.h>
#include "ops/fused/fused_ops.h"

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

tb_status tb_fused_check_activation(tb_infer_ctx *ctx) {
  static const char *const known[] = {"Relu", "LeakyRelu", "Clip", "Sigmoid", "Tanh", "HardSigmoid", "HardSwish"};
  const char *act = NULL;
  tb_status st = tb_attr_string(ctx->graph, ctx->node, "activation", NULL, &act);
  if (st != TB_OK || !act) return st;
  for (size_t i = 0; i < sizeof known / sizeof known[0]; i++)
    if (strcmp(act, known[i]) == 0) {
      float f;
      const char *names[] = {"activation_alpha", "activation_beta", "activation_min", "activation_max"};
      for (size_t k = 0; k < 4 && st == TB_OK; k++) st = tb_attr_float(ctx->graph, ctx->node, names[k], 0.0f, &f);
      return st;
    }
  return tb_infer_error(ctx, TB_ERR_MODEL, "attribute activation is '%s'; expected Relu, LeakyRelu, Clip, Sigmoid, Tanh, HardSigmoid or HardSwish", act);
}
