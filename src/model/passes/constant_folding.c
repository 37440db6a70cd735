/* O1 pass: constant folding. A deterministic node whose inputs are all constants (initializers, Constant
 * outputs, values folded before it) is run once now with the CPU reference kernel and replaced by its
 * result; Shape of a value whose shape is fully known becomes a constant too. Exact: the same reference
 * kernel computes the same bits at run time. Results over TBP_FOLD_MAX_BYTES (64 MiB) stay computed at
 * run time so preparation does not hold huge tensors. Nodes producing a graph output are kept (the
 * executor produces every graph output from a node). */
#include <string.h>
#include "model/passes/fold_eval.h"

typedef struct fold_ctx {
  tb_backend *cpu;
  size_t folded, shapes, constants;
} fold_ctx;

/* Operators whose output is not a function of their inputs, or that run subgraphs. */
static bool foldable_op(const tb_node *n) {
  static const char *const never[] = {"RandomNormal", "RandomUniform", "RandomNormalLike", "RandomUniformLike",
                                      "Multinomial",  "Bernoulli",     "Dropout",          "If",
                                      "Loop",         "Scan",          "SequenceConstruct", "SequenceEmpty"};
  for (size_t i = 0; i < sizeof never / sizeof never[0]; i++)
    if (strcmp(n->op_type, never[i]) == 0) return false;
  for (size_t a = 0; a < n->n_attrs; a++)
    if (n->attrs[a].type == TB_ATTR_GRAPH || n->attrs[a].type == TB_ATTR_GRAPHS) return false;
  return true;
}

static bool makes_graph_output(const tb_graph *g, const tb_node *n) {
  for (size_t o = 0; o < n->n_outputs; o++) {
    int v = n->outputs[o];
    if (v < 0) continue;
    if (g->values[v].is_output) return true;
    for (size_t i = 0; i < g->n_outputs; i++)
      if (g->outputs[i] == v) return true;
  }
  return false;
}

/* Shape of a value with every dim known (start/end of opset 15 applied). */
static tb_status fold_shape(tb_graph *g, int node, bool *done) {
  *done = false;
  const tb_node *n = &g->nodes[node];
  if (n->n_inputs != 1 || n->n_outputs != 1 || n->inputs[0] < 0 || n->outputs[0] < 0) return TB_OK;
  const tb_value_type *t = &g->values[n->inputs[0]].type;
  if (t->kind != TB_VALUE_TENSOR || !t->has_shape) return TB_OK;
  for (size_t d = 0; d < t->ndim; d++)
    if (t->dims[d].value < 0) return TB_OK;
  int64_t rank = (int64_t)t->ndim, start = 0, end = rank;
  if (tb_attr_int(g, n, "start", 0, &start) != TB_OK || tb_attr_int(g, n, "end", rank, &end) != TB_OK) return TB_OK;
  if (start < 0) start += rank;
  if (end < 0) end += rank;
  start = start < 0 ? 0 : start > rank ? rank : start;
  end = end < 0 ? 0 : end > rank ? rank : end;
  int64_t count = end > start ? end - start : 0;
  int64_t dims[1] = {count};
  void *data = NULL;
  int out = n->outputs[0];
  tb_ir_tensor *c = tb_graph_new_tensor(g, g->values[out].name, TB_DTYPE_I64, 1, dims, &data);
  if (!c) return tb_tbp_out_of_memory(g, "constant_folding", "the folded Shape constant", (size_t)count * sizeof(int64_t));
  int64_t *v = data;
  for (int64_t i = 0; i < count; i++) v[i] = t->dims[start + i].value;
  tb_tbp_kill(g, node);
  tb_tbp_set_const(g, out, c);
  *done = true;
  return TB_OK;
}

static bool all_inputs_constant(const tb_graph *g, const tb_node *n) {
  for (size_t i = 0; i < n->n_inputs; i++)
    if (n->inputs[i] >= 0 && !tb_tbp_const(g, n->inputs[i])) return false;
  return true;
}

/* A Constant node whose output the reader already holds as a constant: drop the node, keep the value. */
static bool absorb_constant_node(tb_graph *g, int node) {
  const tb_node *n = &g->nodes[node];
  if (n->n_outputs != 1 || n->outputs[0] < 0) return false;
  int v = n->outputs[0];
  tb_ir_tensor *c = (tb_ir_tensor *)g->values[v].constant;
  if (!c || !c->data) return false;
  tb_tbp_kill(g, node);
  tb_tbp_set_const(g, v, c);
  return true;
}

static tb_status fold_node(tb_graph *g, int i, fold_ctx *c, bool *done) {
  const tb_node *n = &g->nodes[i];
  *done = false;
  if (n->dead || !foldable_op(n) || makes_graph_output(g, n)) return TB_OK;
  bool onnx = !n->domain || n->domain[0] == '\0';
  if (onnx && strcmp(n->op_type, "Shape") == 0) {
    tb_status s = fold_shape(g, i, done);
    if (*done) c->shapes++;
    if (s != TB_OK || *done) return s;
  }
  if (n->n_inputs == 0) {
    if (!onnx || strcmp(n->op_type, "Constant") != 0) return TB_OK;
    if (absorb_constant_node(g, i)) {
      c->constants++;
      *done = true;
      return TB_OK;
    }
  }
  if (!all_inputs_constant(g, n)) return TB_OK;
  tb_status s = tb_tbp_fold_eval(g, i, &c->cpu, TBP_FOLD_MAX_BYTES, done);
  if (*done) c->folded++;
  return s;
}

static tb_status run_graph(tb_graph *g, void *ctx) {
  fold_ctx *c = ctx;
  /* Sweep until nothing changes: one sweep folds whole chains when the graph is in topological order. */
  for (bool changed = true; changed;) {
    changed = false;
    for (size_t i = 0; i < g->n_nodes; i++) {
      bool done = false;
      tb_status s = fold_node(g, (int)i, c, &done);
      if (s != TB_OK) return s;
      changed = changed || done;
    }
  }
  return tb_tbp_recurse_fn(g, run_graph, ctx);
}

static tb_status constant_folding(tb_graph *g, tb_pass_stats *stats) {
  fold_ctx c;
  memset(&c, 0, sizeof c);
  tb_status s = run_graph(g, &c);
  tb_backend_destroy(c.cpu);
  stats->changed = stats->nodes_removed = c.folded + c.shapes + c.constants;
  tb_tbp_summary(stats, "folded %zu node%s, %zu Shape of static shapes, %zu Constant into constants", c.folded,
              c.folded == 1 ? "" : "s", c.shapes, c.constants);
  return s;
}

const tb_pass tb_pass_constant_folding = {"constant_folding", TB_LEVEL_O1, constant_folding};
