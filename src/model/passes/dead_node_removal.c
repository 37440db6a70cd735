/* O1 pass: drop nodes none of whose outputs reaches a graph output (directly, through other nodes, or
 * through a value a subgraph captures). Exact: ONNX operators have no side effects. Subgraph bodies are
 * pruned the same way against their own outputs. */
#include <stdlib.h>
#include <string.h>
#include "model/passes/pass_util.h"

static void need_captures(const tb_graph *g, const tb_graph *sub, bool direct, bool *needed) {
  for (size_t i = 0; i < sub->n_values; i++) {
    const tb_value *sv = &sub->values[i];
    if (sv->outer < 0) continue;
    int v = direct ? sv->outer : (sv->name ? tb_graph_find(g, sv->name) : -1);
    if (v >= 0 && (size_t)v < g->n_values) needed[v] = true;
  }
  for (size_t n = 0; n < sub->n_nodes; n++) {
    const tb_node *node = &sub->nodes[n];
    for (size_t a = 0; a < node->n_attrs; a++) {
      const tb_attr *at = &node->attrs[a];
      if (at->type == TB_ATTR_GRAPH && at->g) need_captures(g, at->g, false, needed);
      if (at->type == TB_ATTR_GRAPHS)
        for (size_t k = 0; k < at->count; k++)
          if (at->graphs[k]) need_captures(g, at->graphs[k], false, needed);
    }
  }
}

static void need_node(const tb_graph *g, const tb_node *node, bool *needed) {
  for (size_t i = 0; i < node->n_inputs; i++)
    if (node->inputs[i] >= 0) needed[node->inputs[i]] = true;
  for (size_t a = 0; a < node->n_attrs; a++) {
    const tb_attr *at = &node->attrs[a];
    if (at->type == TB_ATTR_GRAPH && at->g) need_captures(g, at->g, true, needed);
    if (at->type == TB_ATTR_GRAPHS)
      for (size_t k = 0; k < at->count; k++)
        if (at->graphs[k]) need_captures(g, at->graphs[k], true, needed);
  }
}

static tb_status run_graph(tb_graph *g, void *ctx) {
  size_t *removed = ctx;
  if (g->n_nodes == 0) return TB_OK;
  bool *needed = calloc(g->n_values ? g->n_values : 1, sizeof *needed);
  bool *live = calloc(g->n_nodes, sizeof *live);
  if (!needed || !live) {
    free(needed);
    free(live);
    return tb_tbp_out_of_memory(g, "dead_node_removal", "the liveness marks",
                             (g->n_values ? g->n_values : 1) * sizeof *needed + g->n_nodes * sizeof *live);
  }
  for (size_t i = 0; i < g->n_outputs; i++)
    if (g->outputs[i] >= 0) needed[g->outputs[i]] = true;
  for (size_t v = 0; v < g->n_values; v++)
    if (g->values[v].is_output) needed[v] = true;
  /* Reverse sweeps until nothing changes (one sweep when the graph is in topological order). */
  for (bool changed = true; changed;) {
    changed = false;
    for (size_t k = g->n_nodes; k-- > 0;) {
      const tb_node *node = &g->nodes[k];
      if (node->dead || live[k]) continue;
      for (size_t o = 0; o < node->n_outputs; o++) {
        if (node->outputs[o] >= 0 && needed[node->outputs[o]]) {
          live[k] = true;
          break;
        }
      }
      if (!live[k]) continue;
      need_node(g, node, needed);
      changed = true;
    }
  }
  for (size_t k = 0; k < g->n_nodes; k++) {
    if (g->nodes[k].dead || live[k]) continue;
    tb_tbp_kill(g, (int)k);
    (*removed)++;
  }
  free(needed);
  free(live);
  return tb_tbp_recurse_fn(g, run_graph, ctx);
}

static tb_status dead_node_removal(tb_graph *g, tb_pass_stats *stats) {
  size_t removed = 0;
  tb_status s = run_graph(g, &removed);
  stats->changed = stats->nodes_removed = removed;
  tb_tbp_summary(stats, "removed %zu node%s whose outputs reach no graph output", removed, removed == 1 ? "" : "s");
  return s;
}

const tb_pass tb_pass_dead_node_removal = {"dead_node_removal", TB_LEVEL_O1, dead_node_removal};
