/* O1 pass: recognise layer normalization as PyTorch exports it before opset 17,
 *   m = ReduceMean(x, trailing axes); d = x - m; v = ReduceMean(Pow(d, 2) or d * d); s = Sqrt(v + eps);
 *   y = d / s * gamma [+ beta]
 * and replace it with LayerNormalization (the ONNX op when the model's opset is 17 or newer, else
 * tb::LayerNormalization, which is the same operator). gamma and beta must be constants of the normalized
 * shape (leading 1s allowed), keepdims 1. The LayerNormalization kernel computes in double, so results
 * differ from the float chain in the last bits (within 1e-5 relative). */
#include <string.h>
#include "model/passes/pass_util.h"

/* The normalized axes of a ReduceMean as a count k of trailing axes of a rank-`rank` input; 0 if not. */
static size_t trailing_axes(const tb_graph *g, int r, size_t rank) {
  const tb_node *n = &g->nodes[r];
  int64_t keep = 1;
  if (tb_attr_int(g, n, "keepdims", 1, &keep) != TB_OK || keep != 1) return 0;
  int64_t axes[TB_MAX_DIMS];
  size_t count = 0;
  const int64_t *list = NULL;
  if (tb_attr_ints(g, n, "axes", &list, &count) != TB_OK) return 0;
  if (list) {
    if (count > rank || count == 0) return 0;
    memcpy(axes, list, count * sizeof *axes);
  } else {
    const tb_ir_tensor *t = n->n_inputs > 1 ? tb_tbp_const(g, n->inputs[1]) : NULL;
    if (!t || tb_ir_tensor_numel(t) == 0 || (size_t)tb_ir_tensor_numel(t) > rank) return 0;
    count = (size_t)tb_ir_tensor_numel(t);
    for (size_t i = 0; i < count; i++) axes[i] = tb_ir_tensor_int(t, (int64_t)i);
  }
  bool seen[TB_MAX_DIMS] = {false};
  for (size_t i = 0; i < count; i++) {
    int64_t a = axes[i] < 0 ? axes[i] + (int64_t)rank : axes[i];
    if (a < (int64_t)(rank - count) || a >= (int64_t)rank || seen[a]) return 0;
    seen[a] = true;
  }
  return count;
}

static int next_op(const tb_graph *g, int v, const char *op) {
  int n = tb_tbp_sole_consumer(g, v);
  return n >= 0 && tb_tbp_is_op(g, n, op) && g->nodes[n].n_outputs == 1 ? n : -1;
}

/* gamma/beta value p: a constant whose shape, without leading 1s, is the trailing k dims of x. Returns the
 * value to use (a reshaped copy when it had leading 1s), or -1. */
static int affine_param(tb_graph *g, int p, const tb_value_type *x, size_t k) {
  const tb_ir_tensor *t = tb_tbp_const(g, p);
  if (!t || !x->has_dtype || t->dtype != x->dtype) return -1;
  size_t skip = 0;
  while (skip < t->ndim && t->ndim - skip > k && t->dims[skip] == 1) skip++;
  if (t->ndim - skip != k) return -1;
  int64_t dims[TB_MAX_DIMS];
  for (size_t i = 0; i < k; i++) {
    dims[i] = x->dims[x->ndim - k + i].value;
    if (t->dims[skip + i] != dims[i]) return -1;
  }
  if (skip == 0) return p;
  void *data = NULL;
  size_t nbytes = t->nbytes;
  const void *src = t->data;
  int v = tb_tbp_new_const(g, "ln_param", t->dtype, k, dims, &data);
  if (v >= 0 && nbytes) memcpy(data, src, nbytes);
  return v;
}

typedef struct ln_match {
  int nodes[9];
  size_t n;
  int x, gamma, beta, out;
  size_t k;
  float eps;
} ln_match;

static bool match(tb_graph *g, int r1, ln_match *m) {
  const tb_node *n = &g->nodes[r1];
  if (n->n_outputs != 1 || n->n_inputs < 1) return false;
  m->x = n->inputs[0];
  const tb_value_type *xt = &g->values[m->x].type;
  if (!xt->has_shape || !xt->has_dtype || (xt->dtype != TB_DTYPE_F32 && xt->dtype != TB_DTYPE_F64)) return false;
  m->k = trailing_axes(g, r1, xt->ndim);
  if (m->k == 0) return false;
  for (size_t i = xt->ndim - m->k; i < xt->ndim; i++)
    if (xt->dims[i].value < 0) return false;
  int mean = n->outputs[0];
  int sub = next_op(g, mean, "Sub");
  if (sub < 0 || g->nodes[sub].inputs[0] != m->x || g->nodes[sub].inputs[1] != mean) return false;
  int d = g->nodes[sub].outputs[0];
  /* d feeds the square and the Div, nothing else. */
  int sq = -1, div = -1;
  size_t uses = 0;
  for (size_t i = 0; i < g->n_nodes; i++) {
    const tb_node *c = &g->nodes[i];
    if (c->dead) continue;
    bool uses_d = false;
    for (size_t j = 0; j < c->n_inputs; j++)
      if (c->inputs[j] == d) {
        uses++;
        uses_d = true;
      }
    if (!uses_d) continue;
    if (tb_tbp_is_op(g, (int)i, "Div") && c->inputs[0] == d && c->inputs[1] != d) div = (int)i;
    else if (tb_tbp_is_op(g, (int)i, "Pow") && c->inputs[0] == d && tb_tbp_const_near(g, c->inputs[1], 2.0, 0)) sq = (int)i;
    else if (tb_tbp_is_op(g, (int)i, "Mul") && c->inputs[0] == d && c->inputs[1] == d) sq = (int)i;
    else return false;
  }
  if (sq < 0 || div < 0 || uses != (tb_tbp_is_op(g, sq, "Pow") ? 2u : 3u) || g->values[d].is_output || tb_tbp_captured(g, d))
    return false;
  int r2 = next_op(g, g->nodes[sq].outputs[0], "ReduceMean");
  if (r2 < 0 || trailing_axes(g, r2, xt->ndim) != m->k) return false;
  int var = g->nodes[r2].outputs[0];
  int add_eps = next_op(g, var, "Add");
  double eps;
  if (add_eps < 0 || !tb_tbp_const_scalar(g, tb_tbp_other_input(g, add_eps, var), &eps)) return false;
  int sqrt_node = next_op(g, g->nodes[add_eps].outputs[0], "Sqrt");
  if (sqrt_node < 0 || next_op(g, g->nodes[sqrt_node].outputs[0], "Div") != div) return false;
  int normed = g->nodes[div].outputs[0];
  int mul = next_op(g, normed, "Mul");
  if (mul < 0) return false;
  m->gamma = affine_param(g, tb_tbp_other_input(g, mul, normed), xt, m->k);
  if (m->gamma < 0) return false;
  int scaled = g->nodes[mul].outputs[0];
  int add_beta = next_op(g, scaled, "Add");
  m->beta = add_beta >= 0 ? affine_param(g, tb_tbp_other_input(g, add_beta, scaled), &g->values[m->x].type, m->k) : -1;
  if (m->beta < 0) add_beta = -1;
  m->out = add_beta >= 0 ? g->nodes[add_beta].outputs[0] : scaled;
  m->eps = (float)eps;
  int list[9] = {r1, sub, sq, r2, add_eps, sqrt_node, div, mul, add_beta};
  m->n = add_beta >= 0 ? 9 : 8;
  memcpy(m->nodes, list, sizeof list);
  return true;
}

static tb_status run_graph(tb_graph *g, void *ctx) {
  size_t *found = ctx; /* [0] patterns, [1] nodes absorbed */
  size_t n_nodes = g->n_nodes;
  int opset = tb_tbp_opset(g);
  for (size_t i = 0; i < n_nodes; i++) {
    if (!tb_tbp_is_op(g, (int)i, "ReduceMean")) continue;
    ln_match m;
    memset(&m, 0, sizeof m);
    if (!match(g, (int)i, &m)) continue;
    tb_attr attrs[2] = {tb_tbp_attr_int("axis", -(int64_t)m.k), tb_tbp_attr_float("epsilon", m.eps)};
    int inputs[3] = {m.x, m.gamma, m.beta};
    bool onnx = opset >= 17;
    const char *name = g->nodes[m.nodes[m.n - 1]].name;
    int node = tb_tbp_add_node(g, name, "LayerNormalization", onnx ? "" : "tb", opset, inputs, m.beta >= 0 ? 3 : 2, &m.out,
                            1, attrs, 2);
    tb_status st = tb_tbp_replace(g, "pattern_layernorm", node, m.nodes, m.n, m.out);
    if (st != TB_OK) return st;
    found[0]++;
    found[1] += m.n - 1;
  }
  return tb_tbp_recurse_fn(g, run_graph, ctx);
}

static tb_status pattern_layernorm(tb_graph *g, tb_pass_stats *stats) {
  size_t counts[2] = {0, 0};
  tb_status s = run_graph(g, counts);
  size_t found = counts[0];
  stats->changed = found;
  stats->nodes_fused = stats->nodes_removed = counts[1];
  tb_tbp_summary(stats, "recognised %zu LayerNormalization pattern%s", found, found == 1 ? "" : "s");
  return s;
}

const tb_pass tb_pass_pattern_layernorm = {"pattern_layernorm", TB_LEVEL_O1, pattern_layernorm};
