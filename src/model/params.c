/* Typed operator parameters: each node's attributes parsed once, after the passes, by its operator's
 * definition into a zeroed block of the graph's arena (so they live and die with the prepared graph),
 * recursively through the subgraphs that control-flow nodes hold. */
#include "model/params.h"
#include <string.h>
#include "core/error.h"
#include "ops/op.h"

tb_status tb_node_parse_params(tb_graph *g, tb_node *n) {
  const tb_op_def *def = n->def;
  if (n->params || !def || !def->parse || def->params_size == 0) return TB_OK;
  void *block = tb_arena_alloc(&g->arena, def->params_size);
  if (!block) {
    char label[160];
    return tb_error(TB_ERR_OUT_OF_MEMORY, "%s: out of host memory for its %zu bytes of parameters",
                    tb_node_label(g, n, label, sizeof label), def->params_size);
  }
  memset(block, 0, def->params_size);
  tb_status st = def->parse(g, n, block);
  if (st == TB_OK) n->params = block;
  return st;
}

static tb_status parse_subgraphs(const tb_node *n) {
  tb_status st = TB_OK;
  for (size_t a = 0; a < n->n_attrs && st == TB_OK; a++) {
    const tb_attr *at = &n->attrs[a];
    if (at->type == TB_ATTR_GRAPH && at->g) st = tb_graph_parse_params(at->g);
    for (size_t i = 0; at->type == TB_ATTR_GRAPHS && i < at->count && st == TB_OK; i++)
      if (at->graphs[i]) st = tb_graph_parse_params(at->graphs[i]);
  }
  return st;
}

tb_status tb_graph_parse_params(tb_graph *g) {
  tb_status st = TB_OK;
  for (size_t i = 0; i < g->n_nodes && st == TB_OK; i++) {
    tb_node *n = &g->nodes[i];
    if (n->dead) continue;
    n->params = NULL; /* parsed again: a pass may have changed the attributes since constant folding read them */
    st = tb_node_parse_params(g, n);
    if (st == TB_OK) st = parse_subgraphs(n);
  }
  return st;
}
