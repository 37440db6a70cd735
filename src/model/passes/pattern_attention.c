/* O1 pass: recognise scaled dot-product attention,
 *   S = MatMul(Q, K_T); [S = S / c or S * c]; [S = S + mask]; P = Softmax(S, last axis); Y = MatMul(P, V)
 * and replace it with tb::Attention(Q, K_T, V, [mask]) (attributes scale, scale_divide). The K_T input is
 * whatever the first MatMul multiplies by (usually a Transpose of K, left as it is). Every intermediate
 * must be used only inside the chain; Q, K_T and V of rank >= 2 and float32/float64; the scale a constant
 * that float represents exactly. tb::Attention rounds after each step as the separate kernels do; its
 * softmax may differ in the last bits (within 1e-5 relative). */
#include <string.h>
#include "model/passes/pass_util.h"

static bool ranked_float(const tb_graph *g, int v, tb_dtype dtype, size_t min_rank) {
  if (v < 0) return false;
  const tb_value_type *t = &g->values[v].type;
  return t->has_dtype && t->dtype == dtype && t->has_shape && t->ndim >= min_rank;
}

typedef struct attn_match {
  int nodes[5];
  size_t n;
  int q, k, v, mask, out;
  bool has_scale, divide;
  float scale;
} attn_match;

/* s is the scaled (or plain) scores: walk back to the first MatMul. */
static bool match_scores(const tb_graph *g, int s, int user, attn_match *m) {
  int p = tb_tbp_producer(g, s);
  if (p < 0 || !tb_tbp_private_to(g, s, user)) return false;
  if ((tb_tbp_is_op(g, p, "Div") || tb_tbp_is_op(g, p, "Mul")) && g->nodes[p].n_inputs == 2 && !m->has_scale) {
    bool div = tb_tbp_is_op(g, p, "Div");
    for (int i = div ? 1 : 0; i < 2; i++) {
      double c;
      if (!tb_tbp_const_scalar(g, g->nodes[p].inputs[i], &c) || (double)(float)c != c) continue;
      m->has_scale = true;
      m->divide = div;
      m->scale = (float)c;
      m->nodes[m->n++] = p;
      return match_scores(g, g->nodes[p].inputs[1 - i], p, m);
    }
    return false;
  }
  if (!tb_tbp_is_op(g, p, "MatMul") || g->nodes[p].n_inputs != 2) return false;
  m->q = g->nodes[p].inputs[0];
  m->k = g->nodes[p].inputs[1];
  m->nodes[m->n++] = p;
  return true;
}

static bool match(const tb_graph *g, int sm, attn_match *m) {
  const tb_node *n = &g->nodes[sm];
  if (n->n_inputs != 1 || n->n_outputs != 1) return false;
  int s = n->inputs[0];
  const tb_value_type *st = &g->values[s].type;
  if (!st->has_shape || !st->has_dtype || st->ndim < 2) return false;
  int64_t axis;
  if (tb_attr_int(g, n, "axis", n->opset > 0 && n->opset < 13 ? 1 : -1, &axis) != TB_OK) return false;
  if (axis < 0) axis += (int64_t)st->ndim;
  if (axis != (int64_t)st->ndim - 1) return false;
  int mm2 = tb_tbp_sole_consumer(g, n->outputs[0]);
  if (mm2 < 0 || !tb_tbp_is_op(g, mm2, "MatMul") || g->nodes[mm2].inputs[0] != n->outputs[0] ||
      g->nodes[mm2].inputs[1] == n->outputs[0])
    return false;
  memset(m, 0, sizeof *m);
  m->mask = -1;
  m->v = g->nodes[mm2].inputs[1];
  m->out = g->nodes[mm2].outputs[0];
  m->nodes[m->n++] = mm2;
  m->nodes[m->n++] = sm;
  int p = tb_tbp_producer(g, s);
  if (p >= 0 && tb_tbp_is_op(g, p, "Add") && g->nodes[p].n_inputs == 2 && tb_tbp_private_to(g, s, sm)) {
    for (int i = 0; i < 2; i++) {
      attn_match trial = *m;
      trial.nodes[trial.n++] = p;
      trial.mask = g->nodes[p].inputs[1 - i];
      if (match_scores(g, g->nodes[p].inputs[i], p, &trial)) {
        *m = trial;
        break;
      }
    }
    if (m->mask < 0) return false;
  } else if (!match_scores(g, s, sm, m)) {
    return false;
  }
  tb_dtype dt = st->dtype;
  if (dt != TB_DTYPE_F32 && dt != TB_DTYPE_F64) return false;
  if (!ranked_float(g, m->q, dt, 2) || !ranked_float(g, m->k, dt, 2) || !ranked_float(g, m->v, dt, 2)) return false;
  if (m->mask >= 0 && (!ranked_float(g, m->mask, dt, 0) || g->values[m->mask].type.ndim > st->ndim)) return false;
  return true;
}

static tb_status run_graph(tb_graph *g, void *ctx) {
  size_t *found = ctx; /* [0] patterns, [1] nodes absorbed */
  size_t n_nodes = g->n_nodes;
  for (size_t i = 0; i < n_nodes; i++) {
    if (!tb_tbp_is_op(g, (int)i, "Softmax")) continue;
    attn_match m;
    if (!match(g, (int)i, &m)) continue;
    tb_attr attrs[2] = {tb_tbp_attr_float("scale", m.scale), tb_tbp_attr_int("scale_divide", m.divide)};
    int inputs[4] = {m.q, m.k, m.v, m.mask};
    const char *name = g->nodes[i].name;
    int node = tb_tbp_add_node(g, name, "Attention", "tb", tb_tbp_opset(g), inputs, m.mask >= 0 ? 4 : 3, &m.out, 1, attrs,
                            m.has_scale ? 2 : 0);
    tb_status st = tb_tbp_replace(g, "pattern_attention", node, m.nodes, m.n, m.out);
    if (st != TB_OK) return st;
    found[0]++;
    found[1] += m.n - 1;
  }
  return tb_tbp_recurse_fn(g, run_graph, ctx);
}

static tb_status pattern_attention(tb_graph *g, tb_pass_stats *stats) {
  size_t counts[2] = {0, 0};
  tb_status s = run_graph(g, counts);
  size_t found = counts[0];
  stats->changed = found;
  stats->nodes_fused = stats->nodes_removed = counts[1];
  tb_tbp_summary(stats, "recognised %zu scaled dot-product attention pattern%s as tb::Attention", found,
              found == 1 ? "" : "s");
  return s;
}

const tb_pass tb_pass_pattern_attention = {"pattern_attention", TB_LEVEL_O1, pattern_attention};
