/* O1 pass: bypass Identity and inference-time Dropout. Consumers read the input directly. When the
 * node's output is a graph output its name must survive: the input's producer is made to write the output
 * value instead (when nothing else reads the input), otherwise the node stays. Exact. */
#include <string.h>
#include "model/passes/pass_util.h"

typedef struct counts {
  size_t identity, dropout;
} counts;

/* Dropout is an identity when its mask is not used and training_mode is absent or a constant false. */
static bool dropout_is_identity(const tb_graph *g, const tb_node *n) {
  if (n->n_outputs > 1 && n->outputs[1] >= 0) {
    int mask = n->outputs[1];
    if (g->values[mask].is_output || tb_tbp_use_count(g, mask) > 0 || tb_tbp_captured(g, mask)) return false;
  }
  if (n->n_inputs > 2 && n->inputs[2] >= 0) {
    double training;
    if (!tb_tbp_const_scalar(g, n->inputs[2], &training) || training != 0.0) return false;
  }
  return true;
}

static bool is_graph_output(const tb_graph *g, int v) {
  if (g->values[v].is_output) return true;
  for (size_t i = 0; i < g->n_outputs; i++)
    if (g->outputs[i] == v) return true;
  return false;
}

/* Bypass node i; false when it has to stay. */
static bool bypass(tb_graph *g, int i) {
  const tb_node *n = &g->nodes[i];
  if (n->n_inputs < 1 || n->n_outputs < 1 || n->inputs[0] < 0 || n->outputs[0] < 0) return false;
  int x = n->inputs[0], y = n->outputs[0];
  if (tb_tbp_captured(g, y)) return false;
  if (!is_graph_output(g, y)) {
    tb_tbp_replace_uses(g, y, x);
    tb_tbp_kill(g, i);
    return true;
  }
  /* y is a graph output: hand y to x's producer when x is private to this node. */
  int p = tb_tbp_producer(g, x);
  if (p < 0 || is_graph_output(g, x) || tb_tbp_use_count(g, x) != 1 || tb_tbp_captured(g, x)) return false;
  tb_tbp_kill(g, i);
  tb_node *prod = &g->nodes[p];
  for (size_t o = 0; o < prod->n_outputs; o++)
    if (prod->outputs[o] == x) prod->outputs[o] = y;
  g->values[y].producer = p;
  g->values[x].producer = -1;
  return true;
}

static tb_status run_graph(tb_graph *g, void *ctx) {
  counts *c = ctx;
  for (size_t i = 0; i < g->n_nodes; i++) {
    if (tb_tbp_is_op(g, (int)i, "Identity")) {
      if (bypass(g, (int)i)) c->identity++;
    } else if (tb_tbp_is_op(g, (int)i, "Dropout") && dropout_is_identity(g, &g->nodes[i])) {
      if (bypass(g, (int)i)) c->dropout++;
    }
  }
  return tb_tbp_recurse_fn(g, run_graph, ctx);
}

static tb_status identity_removal(tb_graph *g, tb_pass_stats *stats) {
  counts c = {0, 0};
  tb_status s = run_graph(g, &c);
  stats->changed = stats->nodes_removed = c.identity + c.dropout;
  tb_tbp_summary(stats, "removed %zu Identity and %zu Dropout", c.identity, c.dropout);
  return s;
}

const tb_pass tb_pass_identity_removal = {"identity_removal", TB_LEVEL_O1, identity_removal};
