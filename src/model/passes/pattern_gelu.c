/* O1 pass: recognise GELU as PyTorch exports it and replace the chain with tb::Gelu.
 *   exact:  x * 0.5 * (1 + Erf(x / sqrt(2)))      (Div by 1.41421 or Mul by 0.70711)
 *   tanh:   x * 0.5 * (1 + Tanh(sqrt(2/pi) * (x + 0.044715 * x^3)))   (x^3 as Pow(x, 3) or x * x * x)
 * The tail (Add 1, then Mul by x and by 0.5 in any of the orders exporters use) is shared. Every
 * intermediate value must be used only inside the chain. tb::Gelu computes in double and rounds once, so
 * it differs from the chain of float kernels in the last bits only (within 1e-5 relative). */
#include <string.h>
#include "model/passes/pass_util.h"

#define REL 1e-5

typedef struct chain {
  int nodes[12];
  size_t n;
} chain;

static void add(chain *c, int node) {
  if (c->n < 12) c->nodes[c->n++] = node;
}

/* The sole consumer of v when it is a `op` node (binary ops: v is one of its inputs). */
static int next_op(const tb_graph *g, int v, const char *op) {
  int n = tb_tbp_sole_consumer(g, v);
  return n >= 0 && tb_tbp_is_op(g, n, op) && g->nodes[n].n_outputs == 1 ? n : -1;
}

/* Node n is a binary Mul of x and a constant near c. */
static bool mul_by(const tb_graph *g, int n, int x, double c) {
  return tb_tbp_is_op(g, n, "Mul") && tb_tbp_const_near(g, tb_tbp_other_input(g, n, x), c, REL);
}

/* From the Erf/Tanh output t: Add 1, then x * . * 0.5 in any order; *out the result. */
static bool match_tail(const tb_graph *g, int t, int x, chain *c, int *out) {
  int a1 = next_op(g, t, "Add");
  if (a1 < 0 || !tb_tbp_const_near(g, tb_tbp_other_input(g, a1, t), 1.0, REL)) return false;
  int s = g->nodes[a1].outputs[0];
  int m1 = next_op(g, s, "Mul");
  if (m1 < 0) return false;
  int other = tb_tbp_other_input(g, m1, s);
  int m1_out = g->nodes[m1].outputs[0];
  add(c, a1);
  add(c, m1);
  if (other == x || tb_tbp_const_near(g, other, 0.5, REL)) {
    int m2 = next_op(g, m1_out, "Mul");
    if (m2 < 0 || !(other == x ? mul_by(g, m2, m1_out, 0.5) : tb_tbp_other_input(g, m2, m1_out) == x)) return false;
    add(c, m2);
    *out = g->nodes[m2].outputs[0];
    return true;
  }
  /* (x * 0.5) * (1 + ...): the half may be shared with nothing else to be removed. */
  int h = tb_tbp_producer(g, other);
  if (h < 0 || !mul_by(g, h, x, 0.5)) return false;
  if (tb_tbp_private_to(g, other, m1)) add(c, h);
  *out = m1_out;
  return true;
}

/* Erf node e: its input is x / sqrt(2) or x * (1 / sqrt(2)). */
static bool match_erf(const tb_graph *g, int e, chain *c, int *x, int *out) {
  const tb_node *n = &g->nodes[e];
  if (n->n_inputs != 1 || n->n_outputs != 1) return false;
  int u = n->inputs[0];
  int d = tb_tbp_producer(g, u);
  if (d < 0 || tb_tbp_sole_consumer(g, u) != e) return false;
  const tb_node *dn = &g->nodes[d];
  if (dn->n_inputs != 2) return false;
  if (tb_tbp_is_op(g, d, "Div") && tb_tbp_const_near(g, dn->inputs[1], 1.4142135623730951, REL)) *x = dn->inputs[0];
  else if (tb_tbp_is_op(g, d, "Mul") && tb_tbp_const_near(g, dn->inputs[1], 0.7071067811865476, REL)) *x = dn->inputs[0];
  else if (tb_tbp_is_op(g, d, "Mul") && tb_tbp_const_near(g, dn->inputs[0], 0.7071067811865476, REL)) *x = dn->inputs[1];
  else return false;
  add(c, d);
  add(c, e);
  return match_tail(g, n->outputs[0], *x, c, out);
}

/* v is x^3 of some x (Pow(x, 3), Mul(Mul(x, x), x) or Mul(x, Mul(x, x))) used only by `user`; sets *x. */
static bool match_cube(const tb_graph *g, int v, int user, chain *c, int *x) {
  int p = tb_tbp_producer(g, v);
  if (p < 0 || !tb_tbp_private_to(g, v, user)) return false;
  const tb_node *n = &g->nodes[p];
  if (n->n_inputs != 2) return false;
  if (tb_tbp_is_op(g, p, "Pow") && tb_tbp_const_near(g, n->inputs[1], 3.0, 0)) {
    *x = n->inputs[0];
    add(c, p);
    return true;
  }
  if (!tb_tbp_is_op(g, p, "Mul")) return false;
  for (int k = 0; k < 2; k++) {
    int sq = n->inputs[k], other = n->inputs[1 - k];
    int q = tb_tbp_producer(g, sq);
    if (q >= 0 && tb_tbp_is_op(g, q, "Mul") && g->nodes[q].n_inputs == 2 && g->nodes[q].inputs[0] == other &&
        g->nodes[q].inputs[1] == other && tb_tbp_private_to(g, sq, p)) {
      *x = other;
      add(c, q);
      add(c, p);
      return true;
    }
  }
  return false;
}

/* Tanh node t: input sqrt(2/pi) * (x + 0.044715 * x^3). */
static bool match_tanh(const tb_graph *g, int t, chain *c, int *x, int *out) {
  const tb_node *n = &g->nodes[t];
  if (n->n_inputs != 1 || n->n_outputs != 1) return false;
  int u = n->inputs[0], k = tb_tbp_producer(g, u);
  if (k < 0 || tb_tbp_sole_consumer(g, u) != t || !tb_tbp_is_op(g, k, "Mul") || g->nodes[k].n_inputs != 2) return false;
  int w = -1;
  for (int i = 0; i < 2; i++)
    if (tb_tbp_const_near(g, g->nodes[k].inputs[i], 0.7978845608028654, REL)) w = g->nodes[k].inputs[1 - i];
  int a = tb_tbp_producer(g, w);
  if (w < 0 || a < 0 || !tb_tbp_is_op(g, a, "Add") || !tb_tbp_private_to(g, w, k) || g->nodes[a].n_inputs != 2) return false;
  for (int i = 0; i < 2; i++) {
    int p = g->nodes[a].inputs[i], cand = g->nodes[a].inputs[1 - i];
    int m = tb_tbp_producer(g, p);
    if (m < 0 || !tb_tbp_is_op(g, m, "Mul") || g->nodes[m].n_inputs != 2 || !tb_tbp_private_to(g, p, a)) continue;
    for (int j = 0; j < 2; j++) {
      if (!tb_tbp_const_near(g, g->nodes[m].inputs[j], 0.044715, REL)) continue;
      chain trial = *c;
      int cx = -1;
      if (!match_cube(g, g->nodes[m].inputs[1 - j], m, &trial, &cx) || cx != cand) continue;
      add(&trial, m);
      add(&trial, a);
      add(&trial, k);
      add(&trial, t);
      *c = trial;
      *x = cand;
      return match_tail(g, n->outputs[0], cand, c, out);
    }
  }
  return false;
}

static bool float_value(const tb_graph *g, int v) {
  const tb_value_type *t = &g->values[v].type;
  return v >= 0 && t->has_dtype && (t->dtype == TB_DTYPE_F32 || t->dtype == TB_DTYPE_F64);
}

typedef struct gelu_counts {
  size_t exact, approx, absorbed;
} gelu_counts;

static tb_status run_graph(tb_graph *g, void *ctx) {
  gelu_counts *counts = ctx;
  size_t n_nodes = g->n_nodes;
  for (size_t i = 0; i < n_nodes; i++) {
    bool is_erf = tb_tbp_is_op(g, (int)i, "Erf");
    if (!is_erf && !tb_tbp_is_op(g, (int)i, "Tanh")) continue;
    chain c = {{0}, 0};
    int x = -1, out = -1;
    bool ok = is_erf ? match_erf(g, (int)i, &c, &x, &out) : match_tanh(g, (int)i, &c, &x, &out);
    if (!ok || c.n >= 12 || !float_value(g, x)) continue;
    tb_attr approx = tb_tbp_attr_string("approximate", is_erf ? "none" : "tanh");
    const char *name = g->nodes[c.nodes[c.n - 1]].name;
    int node = tb_tbp_add_node(g, name, "Gelu", "tb", tb_tbp_opset(g), &x, 1, &out, 1, &approx, 1);
    tb_status st = tb_tbp_replace(g, "pattern_gelu", node, c.nodes, c.n, out);
    if (st != TB_OK) return st;
    if (is_erf) counts->exact++;
    else counts->approx++;
    counts->absorbed += c.n - 1;
  }
  return tb_tbp_recurse_fn(g, run_graph, ctx);
}

static tb_status pattern_gelu(tb_graph *g, tb_pass_stats *stats) {
  gelu_counts c = {0, 0, 0};
  tb_status s = run_graph(g, &c);
  stats->changed = c.exact + c.approx;
  stats->nodes_fused = c.absorbed;
  stats->nodes_removed = c.absorbed;
  tb_tbp_summary(stats, "recognised %zu GELU (erf) and %zu GELU (tanh) as tb::Gelu", c.exact, c.approx);
  return s;
}

const tb_pass tb_pass_pattern_gelu = {"pattern_gelu", TB_LEVEL_O1, pattern_gelu};
