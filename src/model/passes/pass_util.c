/* Graph queries and edits shared by the O1 passes (see pass_util.h). */
#include "model/passes/pass_util.h"
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include "core/error.h"

int tb_tbp_producer(const tb_graph *g, int v) {
  if (v < 0 || (size_t)v >= g->n_values) return -1;
  int p = g->values[v].producer;
  if (p < 0 || (size_t)p >= g->n_nodes || g->nodes[p].dead) return -1;
  for (size_t o = 0; o < g->nodes[p].n_outputs; o++)
    if (g->nodes[p].outputs[o] == v) return p;
  return -1;
}

bool tb_tbp_is_op(const tb_graph *g, int i, const char *op_type) {
  if (i < 0 || (size_t)i >= g->n_nodes) return false;
  const tb_node *n = &g->nodes[i];
  return !n->dead && (!n->domain || n->domain[0] == '\0') && strcmp(n->op_type, op_type) == 0;
}

/* Does subgraph `sub` (or one nested in it) refer to `name` captured from outside? At the first level the
 * capture is by index (outer == v); deeper levels are matched by name. */
static bool sub_captures(const tb_graph *sub, int v, const char *name, bool direct) {
  for (size_t i = 0; i < sub->n_values; i++) {
    const tb_value *sv = &sub->values[i];
    if (sv->outer < 0) continue;
    if (direct ? sv->outer == v : (sv->name && name && strcmp(sv->name, name) == 0)) return true;
  }
  for (size_t n = 0; n < sub->n_nodes; n++) {
    const tb_node *node = &sub->nodes[n];
    if (node->dead) continue;
    for (size_t a = 0; a < node->n_attrs; a++) {
      const tb_attr *at = &node->attrs[a];
      if (at->type == TB_ATTR_GRAPH && at->g && sub_captures(at->g, v, name, false)) return true;
      if (at->type == TB_ATTR_GRAPHS)
        for (size_t k = 0; k < at->count; k++)
          if (at->graphs[k] && sub_captures(at->graphs[k], v, name, false)) return true;
    }
  }
  return false;
}

bool tb_tbp_captured(const tb_graph *g, int v) {
  if (v < 0 || (size_t)v >= g->n_values) return false;
  const char *name = g->values[v].name;
  for (size_t n = 0; n < g->n_nodes; n++) {
    const tb_node *node = &g->nodes[n];
    if (node->dead) continue;
    for (size_t a = 0; a < node->n_attrs; a++) {
      const tb_attr *at = &node->attrs[a];
      if (at->type == TB_ATTR_GRAPH && at->g && sub_captures(at->g, v, name, true)) return true;
      if (at->type == TB_ATTR_GRAPHS)
        for (size_t k = 0; k < at->count; k++)
          if (at->graphs[k] && sub_captures(at->graphs[k], v, name, true)) return true;
    }
  }
  return false;
}

size_t tb_tbp_use_count(const tb_graph *g, int v) {
  size_t uses = 0;
  for (size_t n = 0; n < g->n_nodes; n++) {
    if (g->nodes[n].dead) continue;
    for (size_t i = 0; i < g->nodes[n].n_inputs; i++)
      if (g->nodes[n].inputs[i] == v) uses++;
  }
  return uses;
}

static bool is_graph_output(const tb_graph *g, int v) {
  if (g->values[v].is_output) return true;
  for (size_t i = 0; i < g->n_outputs; i++)
    if (g->outputs[i] == v) return true;
  return false;
}

bool tb_tbp_is_graph_output(const tb_graph *g, int v) { return v >= 0 && (size_t)v < g->n_values && is_graph_output(g, v); }

int tb_tbp_sole_consumer(const tb_graph *g, int v) {
  if (v < 0 || (size_t)v >= g->n_values || is_graph_output(g, v)) return -1;
  int found = -1;
  for (size_t n = 0; n < g->n_nodes; n++) {
    if (g->nodes[n].dead) continue;
    for (size_t i = 0; i < g->nodes[n].n_inputs; i++) {
      if (g->nodes[n].inputs[i] != v) continue;
      if (found >= 0) return -1;
      found = (int)n;
    }
  }
  if (found >= 0 && tb_tbp_captured(g, v)) return -1;
  return found;
}

bool tb_tbp_private_to(const tb_graph *g, int v, int node) {
  if (v < 0 || (size_t)v >= g->n_values || is_graph_output(g, v) || tb_tbp_producer(g, v) < 0) return false;
  for (size_t n = 0; n < g->n_nodes; n++) {
    if (g->nodes[n].dead || (int)n == node) continue;
    for (size_t i = 0; i < g->nodes[n].n_inputs; i++)
      if (g->nodes[n].inputs[i] == v) return false;
  }
  return !tb_tbp_captured(g, v);
}

void tb_tbp_replace_uses(tb_graph *g, int from, int to) {
  for (size_t n = 0; n < g->n_nodes; n++) {
    if (g->nodes[n].dead) continue;
    for (size_t i = 0; i < g->nodes[n].n_inputs; i++)
      if (g->nodes[n].inputs[i] == from) g->nodes[n].inputs[i] = to;
  }
}

const tb_ir_tensor *tb_tbp_const(const tb_graph *g, int v) {
  /* A graph input with an initializer is only a default: the caller may pass another value. */
  if (v < 0 || (size_t)v >= g->n_values || g->values[v].is_input) return NULL;
  const tb_ir_tensor *t = g->values[v].constant;
  return t && t->data ? t : NULL;
}

bool tb_tbp_const_scalar(const tb_graph *g, int v, double *out) {
  const tb_ir_tensor *t = tb_tbp_const(g, v);
  if (!t || tb_ir_tensor_numel(t) != 1) return false;
  *out = tb_ir_tensor_double(t, 0);
  return true;
}

bool tb_tbp_const_near(const tb_graph *g, int v, double want, double rel) {
  double x;
  if (!tb_tbp_const_scalar(g, v, &x)) return false;
  return fabs(x - want) <= rel * fabs(want);
}

int tb_tbp_other_input(const tb_graph *g, int node, int x) {
  const tb_node *n = &g->nodes[node];
  if (n->n_inputs != 2) return -1;
  if (n->inputs[0] == x) return n->inputs[1];
  if (n->inputs[1] == x) return n->inputs[0];
  return -1;
}

void tb_tbp_set_const(tb_graph *g, int v, tb_ir_tensor *t) {
  tb_value *val = &g->values[v];
  val->constant = t;
  val->is_initializer = true;
  val->producer = -1;
  val->type.kind = TB_VALUE_TENSOR;
  val->type.has_dtype = true;
  val->type.dtype = t->dtype;
  val->type.has_shape = true;
  val->type.ndim = t->ndim;
  for (size_t d = 0; d < t->ndim; d++) {
    val->type.dims[d].value = t->dims[d];
    val->type.dims[d].symbol = -1;
  }
}

int tb_tbp_new_const(tb_graph *g, const char *hint, tb_dtype dtype, size_t ndim, const int64_t *dims, void **data) {
  int v = tb_graph_new_value(g, hint);
  if (v < 0) return -1;
  tb_ir_tensor *t = tb_graph_new_tensor(g, g->values[v].name, dtype, ndim, dims, data);
  if (!t) return -1;
  tb_tbp_set_const(g, v, t);
  return v;
}

int tb_tbp_add_node(tb_graph *g, const char *name, const char *op_type, const char *domain, int opset, const int *inputs,
                 size_t n_inputs, const int *outputs, size_t n_outputs, const tb_attr *attrs, size_t n_attrs) {
  int i = tb_graph_add_node(g, name, op_type, domain, inputs, n_inputs, outputs, n_outputs, attrs, n_attrs);
  if (i < 0) return -1;
  g->nodes[i].opset = opset;
  for (size_t o = 0; o < n_outputs; o++)
    if (outputs[o] >= 0) g->values[outputs[o]].producer = i;
  return i;
}

void tb_tbp_kill(tb_graph *g, int node) {
  tb_node *n = &g->nodes[node];
  n->dead = true;
  for (size_t o = 0; o < n->n_outputs; o++) {
    int v = n->outputs[o];
    if (v >= 0 && g->values[v].producer == node) g->values[v].producer = -1;
  }
}

int tb_tbp_opset(const tb_graph *g) {
  for (const tb_graph *s = g; s; s = s->parent)
    if (s->model) return (int)tb_ir_model_opset(s->model, "");
  return 0;
}

static tb_status recurse_graph(tb_graph *sub, tb_status (*fn)(tb_graph *, void *), void *ctx) {
  tb_status s = fn(sub, ctx);
  if (s != TB_OK) return s;
  s = tb_graph_sort(sub);
  if (s != TB_OK) return s;
  tb_graph_compact(sub);
  return TB_OK;
}

tb_status tb_tbp_recurse_fn(tb_graph *g, tb_status (*fn)(tb_graph *, void *), void *ctx) {
  for (size_t n = 0; n < g->n_nodes; n++) {
    if (g->nodes[n].dead) continue;
    for (size_t a = 0; a < g->nodes[n].n_attrs; a++) {
      tb_attr *at = &g->nodes[n].attrs[a];
      tb_status s = TB_OK;
      if (at->type == TB_ATTR_GRAPH && at->g) s = recurse_graph(at->g, fn, ctx);
      if (at->type == TB_ATTR_GRAPHS)
        for (size_t k = 0; k < at->count && s == TB_OK; k++)
          if (at->graphs[k]) s = recurse_graph(at->graphs[k], fn, ctx);
      if (s != TB_OK) return s;
    }
  }
  return TB_OK;
}

typedef struct recurse_stats {
  tb_status (*pass)(tb_graph *, tb_pass_stats *);
  tb_pass_stats *total;
} recurse_stats;

static tb_status run_with_stats(tb_graph *sub, void *ctx) {
  recurse_stats *r = ctx;
  tb_pass_stats st;
  memset(&st, 0, sizeof st);
  tb_status s = r->pass(sub, &st);
  r->total->changed += st.changed;
  r->total->nodes_removed += st.nodes_removed;
  r->total->nodes_fused += st.nodes_fused;
  return s;
}

tb_status tb_tbp_recurse(tb_graph *g, tb_status (*pass)(tb_graph *, tb_pass_stats *), tb_pass_stats *stats) {
  recurse_stats r = {pass, stats};
  return tb_tbp_recurse_fn(g, run_with_stats, &r);
}

void tb_tbp_summary(tb_pass_stats *stats, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(stats->summary, sizeof stats->summary, fmt, ap);
  va_end(ap);
}

void tb_tbp_append(char *buf, size_t cap, const char *fmt, ...) {
  size_t len = strlen(buf);
  if (len + 3 >= cap) return;
  if (len > 0) {
    memcpy(buf + len, ", ", 3);
    len += 2;
  }
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(buf + len, cap - len, fmt, ap);
  va_end(ap);
}

tb_status tb_tbp_out_of_memory(const tb_graph *g, const char *pass, const char *what, size_t bytes) {
  char size[48] = "";
  if (bytes) snprintf(size, sizeof size, " (%zu bytes)", bytes);
  return tb_error(TB_ERR_OUT_OF_MEMORY,
                  "graph pass %s: out of host memory for %s%s in a graph of %zu node%s; free host memory or prepare "
                  "at O0, which runs no graph passes",
                  pass, what, size, g->n_nodes, g->n_nodes == 1 ? "" : "s");
}

tb_status tb_tbp_replace(tb_graph *g, const char *pass, int node, const int *nodes, size_t n, int out) {
  if (node < 0) return tb_tbp_out_of_memory(g, pass, "the fused node", 0);
  for (size_t k = 0; k < n; k++)
    if (nodes[k] >= 0) tb_tbp_kill(g, nodes[k]);
  g->values[out].producer = node;
  return TB_OK;
}

tb_attr tb_tbp_attr_int(const char *name, int64_t v) {
  tb_attr a;
  memset(&a, 0, sizeof a);
  a.name = name;
  a.type = TB_ATTR_INT;
  a.i = v;
  return a;
}

tb_attr tb_tbp_attr_float(const char *name, float v) {
  tb_attr a = tb_tbp_attr_int(name, 0);
  a.type = TB_ATTR_FLOAT;
  a.f = v;
  return a;
}

tb_attr tb_tbp_attr_string(const char *name, const char *s) {
  tb_attr a = tb_tbp_attr_int(name, 0);
  a.type = TB_ATTR_STRING;
  a.s = s;
  a.s_len = strlen(s);
  return a;
}
