/* O1 pass: fuse an activation (Relu, LeakyRelu, Clip with constant bounds, Sigmoid, Tanh, HardSigmoid,
 * HardSwish) that is the only consumer of a Conv, Gemm or MatMul into tb::FusedConv / tb::FusedGemm /
 * tb::FusedMatMul (attributes activation, activation_alpha/beta/min/max). For Conv, an Add of a residual
 * of the same static shape (the ResNet block's skip connection), with or without an activation after it,
 * becomes FusedConv's input 3. The fused kernels run the same Conv/Gemm/MatMul reference kernel and round
 * after the residual add as the Add kernel does, so Relu, LeakyRelu, Clip and the residual are exact; the
 * transcendental activations are computed in double and rounded once (last-bit differences, well within
 * 1e-5 relative). Only float32 and float64 outputs are fused. */
#include <float.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include "model/passes/pass_util.h"

typedef struct act_info {
  const char *name;
  bool has_alpha, has_beta, has_min, has_max;
  float alpha, beta, min, max;
} act_info;

/* Node a (consuming value x as its input 0) is an activation this pass fuses: fill info. */
static bool read_activation(const tb_graph *g, int a, int x, act_info *info) {
  static const char *const simple[] = {"Relu", "Sigmoid", "Tanh", "HardSwish"};
  const tb_node *n = &g->nodes[a];
  if (n->dead || (n->domain && n->domain[0]) || n->n_inputs < 1 || n->inputs[0] != x || n->n_outputs != 1) return false;
  memset(info, 0, sizeof *info);
  for (size_t i = 0; i < 4; i++)
    if (strcmp(n->op_type, simple[i]) == 0 && n->n_inputs == 1) {
      info->name = simple[i];
      return true;
    }
  if (strcmp(n->op_type, "LeakyRelu") == 0) {
    info->name = "LeakyRelu";
    info->has_alpha = true;
    return tb_attr_float(g, n, "alpha", 0.01f, &info->alpha) == TB_OK;
  }
  if (strcmp(n->op_type, "HardSigmoid") == 0) {
    info->name = "HardSigmoid";
    info->has_alpha = info->has_beta = true;
    return tb_attr_float(g, n, "alpha", 0.2f, &info->alpha) == TB_OK &&
           tb_attr_float(g, n, "beta", 0.5f, &info->beta) == TB_OK;
  }
  if (strcmp(n->op_type, "Clip") != 0) return false;
  info->name = "Clip";
  info->has_min = info->has_max = true;
  if (n->opset > 0 && n->opset < 11) /* Clip-6's bounds default to the float range, not infinities */
    return tb_attr_float(g, n, "min", -FLT_MAX, &info->min) == TB_OK &&
           tb_attr_float(g, n, "max", FLT_MAX, &info->max) == TB_OK;
  info->min = -INFINITY;
  info->max = INFINITY;
  for (size_t k = 1; k < n->n_inputs && k < 3; k++) {
    if (n->inputs[k] < 0) continue;
    double v;
    if (!tbp_const_scalar(g, n->inputs[k], &v)) return false;
    if (k == 1) info->min = (float)v;
    else info->max = (float)v;
  }
  return true;
}

static bool float_value(const tb_graph *g, int v) {
  const tb_value_type *t = &g->values[v].type;
  return t->has_dtype && (t->dtype == TB_DTYPE_F32 || t->dtype == TB_DTYPE_F64);
}

/* Both values have the same fully known shape and dtype. */
static bool same_static_shape(const tb_graph *g, int a, int b) {
  const tb_value_type *x = &g->values[a].type, *y = &g->values[b].type;
  if (!x->has_shape || !y->has_shape || x->ndim != y->ndim || !x->has_dtype || !y->has_dtype || x->dtype != y->dtype)
    return false;
  for (size_t d = 0; d < x->ndim; d++)
    if (x->dims[d].value < 0 || x->dims[d].value != y->dims[d].value) return false;
  return true;
}

static tb_attr float_attr(const char *name, float f) {
  tb_attr a;
  memset(&a, 0, sizeof a);
  a.name = name;
  a.type = TB_ATTR_FLOAT;
  a.f = f;
  return a;
}

typedef struct fusion_counts {
  size_t fused, residual, absorbed;
} fusion_counts;

static tb_status fuse(tb_graph *g, int base, int add, int residual, int act, const act_info *info, int out,
                      fusion_counts *c) {
  const tb_node *b = &g->nodes[base];
  const char *op = strcmp(b->op_type, "Conv") == 0 ? "FusedConv" : strcmp(b->op_type, "Gemm") == 0 ? "FusedGemm" : "FusedMatMul";
  tb_attr *attrs = malloc((b->n_attrs + 5) * sizeof *attrs);
  if (!attrs) return TB_ERR_OUT_OF_MEMORY;
  size_t n_attrs = b->n_attrs;
  if (n_attrs) memcpy(attrs, b->attrs, n_attrs * sizeof *attrs);
  if (info) {
    memset(&attrs[n_attrs], 0, sizeof attrs[n_attrs]);
    attrs[n_attrs].name = "activation";
    attrs[n_attrs].type = TB_ATTR_STRING;
    attrs[n_attrs].s = info->name;
    attrs[n_attrs++].s_len = strlen(info->name);
    if (info->has_alpha) attrs[n_attrs++] = float_attr("activation_alpha", info->alpha);
    if (info->has_beta) attrs[n_attrs++] = float_attr("activation_beta", info->beta);
    if (info->has_min) attrs[n_attrs++] = float_attr("activation_min", info->min);
    if (info->has_max) attrs[n_attrs++] = float_attr("activation_max", info->max);
  }
  int inputs[4] = {-1, -1, -1, -1};
  size_t n_inputs = b->n_inputs < 3 ? b->n_inputs : 3;
  memcpy(inputs, b->inputs, n_inputs * sizeof(int));
  if (residual >= 0) {
    inputs[3] = residual;
    n_inputs = 4;
  }
  int node = tbp_add_node(g, b->name, op, "tb", b->opset, inputs, n_inputs, &out, 1, attrs, n_attrs);
  free(attrs);
  const int replaced[3] = {base, add, act};
  if (tbp_replace(g, node, replaced, 3, out) != TB_OK) return TB_ERR_OUT_OF_MEMORY;
  c->fused++;
  c->residual += add >= 0;
  c->absorbed += (add >= 0) + (act >= 0);
  return TB_OK;
}

static tb_status try_node(tb_graph *g, int i, fusion_counts *c) {
  const tb_node *n = &g->nodes[i];
  bool conv = tbp_is_op(g, i, "Conv");
  if (!conv && !tbp_is_op(g, i, "Gemm") && !tbp_is_op(g, i, "MatMul")) return TB_OK;
  if (n->n_outputs != 1 || n->outputs[0] < 0 || !float_value(g, n->outputs[0])) return TB_OK;
  int y = n->outputs[0], value = y, add = -1, residual = -1;
  int next = tbp_sole_consumer(g, y);
  if (next < 0) return TB_OK;
  if (conv && tbp_is_op(g, next, "Add") && g->nodes[next].n_outputs == 1) {
    int r = tbp_other_input(g, next, y);
    int z = g->nodes[next].outputs[0];
    if (r >= 0 && r != y && z >= 0 && same_static_shape(g, r, y) && same_static_shape(g, z, y)) {
      add = next;
      residual = r;
      value = z;
      next = tbp_sole_consumer(g, z);
    }
  }
  act_info info;
  if (next >= 0 && read_activation(g, next, value, &info))
    return fuse(g, i, add, residual, next, &info, g->nodes[next].outputs[0], c);
  if (add >= 0) return fuse(g, i, add, residual, -1, NULL, value, c);
  return TB_OK;
}

static tb_status run_graph(tb_graph *g, void *ctx) {
  size_t n_nodes = g->n_nodes;
  for (size_t i = 0; i < n_nodes; i++) {
    tb_status s = try_node(g, (int)i, ctx);
    if (s != TB_OK) return s;
  }
  return tbp_recurse_fn(g, run_graph, ctx);
}

static tb_status activation_fusion(tb_graph *g, tb_pass_stats *stats) {
  fusion_counts c = {0, 0, 0};
  tb_status s = run_graph(g, &c);
  stats->changed = c.fused;
  stats->nodes_fused = stats->nodes_removed = c.absorbed;
  tbp_summary(stats, "fused %zu activation/residual epilogue%s into Conv/Gemm/MatMul (%zu with a residual Add)", c.fused,
              c.fused == 1 ? "" : "s", c.residual);
  return s;
}

const tb_pass tb_pass_activation_fusion = {"activation_fusion", TB_LEVEL_O1, activation_fusion};
