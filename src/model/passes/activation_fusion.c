/* O1 pass: fuse an activation (Relu, LeakyRelu, Clip with constant bounds, Sigmoid, Tanh, HardSigmoid,
 * HardSwish, and tb::Gelu after Gemm or MatMul) that is the only consumer of a Conv, Gemm or MatMul, or the
 * gated forms that read the value twice, SiLU x * Sigmoid(x) (how torch exports SiLU / Swish) and Mish
 * x * Tanh(Softplus(x)) (the Mul's operands in either order, the value read by nothing else), into
 * tb::FusedConv / tb::FusedGemm / tb::FusedMatMul (attributes activation, activation_alpha/beta/min/max,
 * activation_approximate for Gelu). For Conv, an Add of a residual of the same static shape (the ResNet
 * block's skip connection), with or without an activation after it, becomes FusedConv's input 3. For
 * MatMul (B of rank 2 or more), an Add of a constant bias of N values (N the output's last dim; shape [N] or
 * [1, .., N]) becomes FusedMatMul's input 2 and a following Add of a residual of the same static shape its
 * input 3 (the transformer's MatMul -> Add(bias) [-> Add(residual)] [-> Gelu]): each of the chain's
 * intermediate values must be read only by the next node of the chain. The fused kernels run the same
 * Conv/Gemm/MatMul reference kernel and round after each add as the Add kernel does, so Relu, LeakyRelu,
 * Clip, the bias, the residual and Gelu are exact (SiLU and Mish become activation "Silu" / "Mish"; a SiLU or
 * Mish with no such producer becomes one tb::Silu / tb::Mish node); the other transcendental activations are computed in
 * double and rounded once (last-bit differences, well within 1e-5 relative). Only float32 and float64
 * outputs are fused. */
#include <float.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include "model/passes/pass_util.h"

typedef struct act_info {
  const char *name;
  const char *approximate; /* Gelu's: "none" or "tanh" */
  bool has_alpha, has_beta, has_min, has_max;
  float alpha, beta, min, max;
} act_info;

/* Node n is tb::Gelu with an approximate this pass fuses ("none" or "tanh"): fill info. */
static bool read_gelu(const tb_graph *g, const tb_node *n, act_info *info) {
  const char *approx = "none";
  if (strcmp(n->op_type, "Gelu") != 0 || n->n_inputs != 1 ||
      tb_attr_string(g, n, "approximate", "none", &approx) != TB_OK)
    return false;
  if (strcmp(approx, "none") != 0 && strcmp(approx, "tanh") != 0) return false;
  info->name = "Gelu";
  info->approximate = strcmp(approx, "tanh") == 0 ? "tanh" : "none";
  return true;
}

/* Node i is a live single-output node of the default domain of this op type reading exactly n inputs. */
static bool is_plain(const tb_graph *g, int i, const char *op_type, size_t n) {
  return i >= 0 && tb_tbp_is_op(g, i, op_type) && g->nodes[i].n_inputs == n && g->nodes[i].n_outputs == 1 &&
         g->nodes[i].outputs[0] >= 0;
}

/* The live node of this op type (one input) reading x, or -1. */
static int unary_reader(const tb_graph *g, int x, const char *op_type) {
  for (size_t i = 0; i < g->n_nodes; i++)
    if (is_plain(g, (int)i, op_type, 1) && g->nodes[i].inputs[0] == x) return (int)i;
  return -1;
}

/* x is read by exactly two input slots and is neither a graph output nor captured by a subgraph. */
static bool read_twice(const tb_graph *g, int x) {
  return tb_tbp_use_count(g, x) == 2 && !tb_tbp_is_graph_output(g, x) && !tb_tbp_captured(g, x);
}

/* The gated activations over value x: SiLU, x * Sigmoid(x), and Mish, x * Tanh(Softplus(x)), where the
 * gate's values are read only by the next node of the pattern and x only by the gate and the Mul. Fills
 * info and gate[0..1] (the gate's nodes, -1 for none) and returns the Mul node, or -1. */
static int read_gated(const tb_graph *g, int x, act_info *info, int gate[2]) {
  if (!read_twice(g, x)) return -1;
  memset(info, 0, sizeof *info);
  gate[0] = gate[1] = -1;
  int sig = unary_reader(g, x, "Sigmoid"), sp = unary_reader(g, x, "Softplus"), last;
  if (sig >= 0) {
    info->name = "Silu";
    gate[0] = last = sig;
  } else if (sp >= 0) {
    int th = tb_tbp_sole_consumer(g, g->nodes[sp].outputs[0]);
    if (!is_plain(g, th, "Tanh", 1)) return -1;
    info->name = "Mish";
    gate[0] = sp;
    gate[1] = last = th;
  } else {
    return -1;
  }
  int s = g->nodes[last].outputs[0], mul = tb_tbp_sole_consumer(g, s);
  if (!is_plain(g, mul, "Mul", 2) || tb_tbp_other_input(g, mul, s) != x) return -1;
  return mul;
}

/* Node a (consuming value x as its input 0) is an activation this pass fuses (tb::Gelu only when
 * gelu_ok): fill info. */
static bool read_activation(const tb_graph *g, int a, int x, bool gelu_ok, act_info *info) {
  static const char *const simple[] = {"Relu", "Sigmoid", "Tanh", "HardSwish"};
  const tb_node *n = &g->nodes[a];
  if (n->dead || n->n_inputs < 1 || n->inputs[0] != x || n->n_outputs != 1) return false;
  memset(info, 0, sizeof *info);
  if (n->domain && strcmp(n->domain, "tb") == 0) return gelu_ok && read_gelu(g, n, info);
  if (n->domain && n->domain[0]) return false;
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
    if (!tb_tbp_const_scalar(g, n->inputs[k], &v)) return false;
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

/* Value v is a constant bias for MatMul node mm's output y: y's dtype, N values along the last axis (N
 * y's known last dim, every other dim 1, rank at most y's), and mm's B of rank 2 or more (so N is B's
 * columns, the GEMM's n). */
static bool is_bias(const tb_graph *g, int v, int mm, int y) {
  const tb_ir_tensor *c = tb_tbp_const(g, v);
  const tb_value_type *t = &g->values[y].type;
  int b = g->nodes[mm].inputs[1];
  const tb_value_type *bt = b >= 0 ? &g->values[b].type : NULL;
  if (!c || !t->has_dtype || c->dtype != t->dtype || !t->has_shape || t->ndim == 0 || c->ndim == 0 || c->ndim > t->ndim)
    return false;
  if (!bt || !bt->has_shape || bt->ndim < 2) return false;
  int64_t n = t->dims[t->ndim - 1].value;
  for (size_t d = 0; d + 1 < c->ndim; d++)
    if (c->dims[d] != 1) return false;
  return n >= 0 && c->dims[c->ndim - 1] == n;
}

typedef struct fusion_counts {
  size_t fused, bias, residual, gelu, gated, standalone, absorbed;
} fusion_counts;

/* The chain found after a base node: the Add nodes absorbed (-1: none), the bias and residual values, the
 * activation node, and the value the fused node produces. */
typedef struct chain {
  int add_bias, add_residual, act; /* act: the activation node, or the gated activation's Mul */
  int gate[2];                     /* the gated activation's other nodes (Sigmoid; Softplus, Tanh), -1 none */
  int bias, residual;
  int out;
  act_info info;
} chain;

static tb_status fuse(tb_graph *g, int base, const chain *ch, fusion_counts *c) {
  const tb_node *b = &g->nodes[base];
  const char *op = strcmp(b->op_type, "Conv") == 0 ? "FusedConv" : strcmp(b->op_type, "Gemm") == 0 ? "FusedGemm" : "FusedMatMul";
  const act_info *info = ch->act >= 0 ? &ch->info : NULL;
  tb_attr *attrs = malloc((b->n_attrs + 6) * sizeof *attrs);
  if (!attrs)
    return tb_tbp_out_of_memory(g, "activation_fusion", "the fused node's attributes",
                             (b->n_attrs + 6) * sizeof *attrs);
  size_t n_attrs = b->n_attrs;
  if (n_attrs) memcpy(attrs, b->attrs, n_attrs * sizeof *attrs);
  if (info) {
    attrs[n_attrs++] = tb_tbp_attr_string("activation", info->name);
    if (info->has_alpha) attrs[n_attrs++] = float_attr("activation_alpha", info->alpha);
    if (info->has_beta) attrs[n_attrs++] = float_attr("activation_beta", info->beta);
    if (info->has_min) attrs[n_attrs++] = float_attr("activation_min", info->min);
    if (info->has_max) attrs[n_attrs++] = float_attr("activation_max", info->max);
    if (info->approximate) attrs[n_attrs++] = tb_tbp_attr_string("activation_approximate", info->approximate);
  }
  int inputs[4] = {-1, -1, -1, -1};
  size_t n_inputs = b->n_inputs < 3 ? b->n_inputs : 3;
  memcpy(inputs, b->inputs, n_inputs * sizeof(int));
  if (ch->bias >= 0) {
    inputs[2] = ch->bias;
    n_inputs = 3;
  }
  if (ch->residual >= 0) {
    inputs[3] = ch->residual;
    n_inputs = 4;
  }
  int node = tb_tbp_add_node(g, b->name, op, "tb", b->opset, inputs, n_inputs, &ch->out, 1, attrs, n_attrs);
  free(attrs);
  const int replaced[6] = {base, ch->add_bias, ch->add_residual, ch->act, ch->gate[0], ch->gate[1]};
  tb_status st = tb_tbp_replace(g, "activation_fusion", node, replaced, 6, ch->out);
  if (st != TB_OK) return st;
  c->fused++;
  c->bias += ch->add_bias >= 0;
  c->residual += ch->add_residual >= 0;
  c->gelu += info && strcmp(info->name, "Gelu") == 0;
  c->gated += ch->gate[0] >= 0;
  c->absorbed += (ch->add_bias >= 0) + (ch->add_residual >= 0) + (ch->act >= 0) + (ch->gate[0] >= 0) + (ch->gate[1] >= 0);
  return TB_OK;
}

/* Node `add` is a one-output Add reading x: its other operand, or -1. */
static int add_operand(const tb_graph *g, int add, int x) {
  if (add < 0 || !tb_tbp_is_op(g, add, "Add") || g->nodes[add].n_outputs != 1 || g->nodes[add].outputs[0] < 0) return -1;
  int other = tb_tbp_other_input(g, add, x);
  return other != x ? other : -1;
}

static tb_status try_node(tb_graph *g, int i, fusion_counts *c) {
  const tb_node *n = &g->nodes[i];
  bool conv = tb_tbp_is_op(g, i, "Conv"), matmul = tb_tbp_is_op(g, i, "MatMul");
  if (!conv && !matmul && !tb_tbp_is_op(g, i, "Gemm")) return TB_OK;
  if (n->n_outputs != 1 || n->outputs[0] < 0 || !float_value(g, n->outputs[0])) return TB_OK;
  int y = n->outputs[0];
  chain ch = {.add_bias = -1, .add_residual = -1, .act = -1, .gate = {-1, -1}, .bias = -1, .residual = -1, .out = y};
  int next = tb_tbp_sole_consumer(g, y); /* -1 also when y is read twice (a gated activation) */
  int other = matmul ? add_operand(g, next, y) : -1;
  if (other >= 0 && is_bias(g, other, i, y)) {
    ch.add_bias = next;
    ch.bias = other;
    ch.out = g->nodes[next].outputs[0];
    next = tb_tbp_sole_consumer(g, ch.out);
  }
  other = conv || matmul ? add_operand(g, next, ch.out) : -1;
  if (other >= 0) {
    int z = g->nodes[next].outputs[0];
    /* MatMul's residual is a computed value (a constant of the output's whole shape is not a skip connection) */
    if (same_static_shape(g, other, ch.out) && same_static_shape(g, z, ch.out) && !(matmul && tb_tbp_const(g, other))) {
      ch.add_residual = next;
      ch.residual = other;
      ch.out = z;
      next = tb_tbp_sole_consumer(g, z);
    }
  }
  if (next >= 0 && read_activation(g, next, ch.out, !conv, &ch.info)) {
    ch.act = next;
    ch.out = g->nodes[next].outputs[0];
  } else if (next < 0 && (ch.act = read_gated(g, ch.out, &ch.info, ch.gate)) >= 0) {
    ch.out = g->nodes[ch.act].outputs[0];
  }
  if (ch.add_bias < 0 && ch.add_residual < 0 && ch.act < 0) return TB_OK;
  return fuse(g, i, &ch, c);
}

/* Node i is the gate (Sigmoid, or Softplus) of a gated activation left after the base fusions (its input
 * comes from another op, a graph input, or a base that could not take it): its nodes become one
 * tb::Silu / tb::Mish reading x. */
static tb_status try_gated(tb_graph *g, int i, fusion_counts *c) {
  if (!is_plain(g, i, "Sigmoid", 1) && !is_plain(g, i, "Softplus", 1)) return TB_OK;
  int x = g->nodes[i].inputs[0], gate[2];
  act_info info;
  if (x < 0 || !float_value(g, x)) return TB_OK;
  int mul = read_gated(g, x, &info, gate);
  if (mul < 0 || gate[0] != i) return TB_OK;
  int out = g->nodes[mul].outputs[0];
  int node = tb_tbp_add_node(g, g->nodes[mul].name, info.name, "tb", tb_tbp_opset(g), &x, 1, &out, 1, NULL, 0);
  const int replaced[3] = {gate[0], gate[1], mul};
  tb_status st = tb_tbp_replace(g, "activation_fusion", node, replaced, 3, out);
  if (st != TB_OK) return st;
  c->standalone++;
  c->absorbed += 1 + (gate[1] >= 0);
  return TB_OK;
}

static tb_status run_graph(tb_graph *g, void *ctx) {
  size_t n_nodes = g->n_nodes;
  for (size_t i = 0; i < n_nodes; i++) {
    tb_status s = try_node(g, (int)i, ctx);
    if (s != TB_OK) return s;
  }
  n_nodes = g->n_nodes;
  for (size_t i = 0; i < n_nodes; i++) {
    tb_status s = try_gated(g, (int)i, ctx);
    if (s != TB_OK) return s;
  }
  return tb_tbp_recurse_fn(g, run_graph, ctx);
}

static tb_status activation_fusion(tb_graph *g, tb_pass_stats *stats) {
  fusion_counts c = {0, 0, 0, 0, 0, 0, 0};
  tb_status s = run_graph(g, &c);
  stats->changed = c.fused + c.standalone;
  stats->nodes_fused = stats->nodes_removed = c.absorbed;
  tb_tbp_summary(stats,
              "fused %zu activation/residual epilogue%s into Conv/Gemm/MatMul (%zu with a residual Add, %zu with a "
              "bias Add, %zu GELU, %zu SiLU/Mish), %zu SiLU/Mish as tb::Silu/tb::Mish",
              c.fused, c.fused == 1 ? "" : "s", c.residual, c.bias, c.gelu, c.gated, c.standalone);
  return s;
}

const tb_pass tb_pass_activation_fusion = {"activation_fusion", TB_LEVEL_O1, activation_fusion};
