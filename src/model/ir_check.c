/* Ordering and checking a graph: stable topological sort (cycles named), operator resolution, arity,
 * undefined inputs and outer-scope captures, duplicate producers, compaction after passes, node labels. */
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "core/error.h"
#include "model/engine.h"
#include "ops/op.h"

const char *tb_node_label(const tb_graph *g, const tb_node *n, char *buf, size_t cap) {
  if (!buf || !cap) return "";
  const char *op = n && n->op_type ? n->op_type : "?";
  if (n && n->name && *n->name)
    snprintf(buf, cap, "node '%s' (%s)", n->name, op);
  else if (n && g && g->nodes && n >= g->nodes && n < g->nodes + g->n_nodes)
    snprintf(buf, cap, "node #%zu (%s)", (size_t)(n - g->nodes), op);
  else
    snprintf(buf, cap, "node (%s)", op);
  return buf;
}

tb_status tb_node_verror(const tb_graph *g, const tb_node *n, tb_status status, const char *fmt, va_list ap) {
  char label[200], msg[512];
  vsnprintf(msg, sizeof msg, fmt, ap);
  return tb_error(status, "%s: %s", tb_node_label(g, n, label, sizeof label), msg);
}

tb_status tb_node_error(const tb_graph *g, const tb_node *n, tb_status status, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  tb_status st = tb_node_verror(g, n, status, fmt, ap);
  va_end(ap);
  return st;
}

tb_status tb_node_name_error(const tb_graph *g, const tb_node *n, tb_status status) {
  if (status == TB_OK) return status;
  char label[200], msg[1024];
  tb_node_label(g, n, label, sizeof label);
  const char *last = tb_last_error();
  if (strstr(last, label)) return status;
  /* An error a kernel's node stand-in reported (ops/op_params.h) names the op only: the label replaces it. */
  char stand_in[160];
  snprintf(stand_in, sizeof stand_in, "node (%s): ", n && n->op_type ? n->op_type : "?");
  if (strncmp(last, stand_in, strlen(stand_in)) == 0) last += strlen(stand_in);
  snprintf(msg, sizeof msg, "%s", last); /* tb_error rewrites the buffer that `last` points into */
  return tb_error(status, "%s: %s", label, msg[0] ? msg : "failed without a message");
}

/* True when the value is defined without a node of g: graph input, initializer, constant. */
static bool defined_without_node(const tb_value *v) { return v->is_input || v->is_initializer || v->constant; }

/* ---- Values a subgraph uses from enclosing scopes ------------------------------------------------- */

static void each_subgraph(const tb_node *n, void (*fn)(const tb_graph *sub, void *ctx), void *ctx) {
  for (size_t a = 0; a < n->n_attrs; a++) {
    const tb_attr *at = &n->attrs[a];
    if (at->type == TB_ATTR_GRAPH && at->g) fn(at->g, ctx);
    if (at->type == TB_ATTR_GRAPHS && at->graphs)
      for (size_t i = 0; i < at->count; i++)
        if (at->graphs[i]) fn(at->graphs[i], ctx);
  }
}

typedef struct free_walk {
  tb_free_name_fn fn;
  void *ctx;
  const tb_graph *sub;
} free_walk;

static bool produced_in(const tb_graph *g, int v) {
  for (size_t i = 0; i < g->n_nodes; i++)
    for (size_t o = 0; o < g->nodes[i].n_outputs; o++)
      if (g->nodes[i].outputs[o] == v) return true;
  return false;
}

static void free_names_of(const tb_graph *sub, void *ctx);

static void nested_free(void *ctx, const char *name) {
  free_walk *w = ctx;
  int v = tb_graph_find(w->sub, name);
  if (v >= 0 && (defined_without_node(&w->sub->values[v]) || produced_in(w->sub, v))) return;
  w->fn(w->ctx, name);
}

/* Call fn for each name `sub` (or a graph nested in it) uses without defining it. */
static void free_names_of(const tb_graph *sub, void *ctx) {
  free_walk *outer = ctx;
  bool *local = calloc(sub->n_values ? sub->n_values : 1, sizeof *local);
  if (!local) return;
  for (size_t v = 0; v < sub->n_values; v++) local[v] = defined_without_node(&sub->values[v]);
  for (size_t i = 0; i < sub->n_nodes; i++)
    for (size_t o = 0; o < sub->nodes[i].n_outputs; o++)
      if (sub->nodes[i].outputs[o] >= 0) local[sub->nodes[i].outputs[o]] = true;
  for (size_t i = 0; i < sub->n_nodes; i++) {
    const tb_node *n = &sub->nodes[i];
    for (size_t k = 0; k < n->n_inputs; k++)
      if (n->inputs[k] >= 0 && !local[n->inputs[k]]) outer->fn(outer->ctx, sub->values[n->inputs[k]].name);
    free_walk inner = {outer->fn, outer->ctx, sub};
    free_walk w = {nested_free, &inner, NULL};
    each_subgraph(n, free_names_of, &w);
  }
  for (size_t k = 0; k < sub->n_outputs; k++)
    if (sub->outputs[k] >= 0 && !local[sub->outputs[k]]) outer->fn(outer->ctx, sub->values[sub->outputs[k]].name);
  free(local);
}

void tb_node_free_names(const tb_node *n, tb_free_name_fn fn, void *ctx) {
  free_walk w = {fn, ctx, NULL};
  each_subgraph(n, free_names_of, &w);
}

/* ---- Sorting ------------------------------------------------------------------------------------- */

typedef struct edges {
  int *count; /* per node: number of predecessors */
  int **pred; /* per node: predecessor nodes (with repeats) */
  size_t *cap;
  const tb_graph *g;
  const int *producer;
  size_t node;
  bool oom;
} edges;

static void add_pred(edges *e, int from) {
  size_t n = e->node;
  if ((size_t)e->count[n] == e->cap[n]) {
    size_t cap = e->cap[n] ? e->cap[n] * 2 : 4;
    int *p = realloc(e->pred[n], cap * sizeof *p);
    if (!p) {
      e->oom = true;
      return;
    }
    e->pred[n] = p;
    e->cap[n] = cap;
  }
  e->pred[n][e->count[n]++] = from;
}

static void implicit_pred(void *ctx, const char *name) {
  edges *e = ctx;
  int v = tb_graph_find(e->g, name);
  if (v >= 0 && e->producer[v] >= 0 && (size_t)e->producer[v] != e->node) add_pred(e, e->producer[v]);
}

/* Min-heap of node indices: the ready node that came first in the file runs first. */
static void heap_push(int *h, size_t *n, int x) {
  size_t i = (*n)++;
  while (i && h[(i - 1) / 2] > x) {
    h[i] = h[(i - 1) / 2];
    i = (i - 1) / 2;
  }
  h[i] = x;
}

static int heap_pop(int *h, size_t *n) {
  int top = h[0], x = h[--(*n)];
  size_t i = 0;
  for (;;) {
    size_t c = 2 * i + 1;
    if (c >= *n) break;
    if (c + 1 < *n && h[c + 1] < h[c]) c++;
    if (h[c] >= x) break;
    h[i] = h[c];
    i = c;
  }
  if (*n) h[i] = x;
  return top;
}

static tb_status cycle_error(const tb_graph *g, const edges *e, const bool *done) {
  size_t start = 0;
  while (start < g->n_nodes && done[start]) start++;
  /* walk back through unfinished predecessors: after n steps the walk is inside a cycle */
  size_t cur = start;
  for (size_t step = 0; step < g->n_nodes; step++) {
    size_t next = cur;
    for (int k = 0; k < e->count[cur]; k++)
      if (!done[e->pred[cur][k]]) {
        next = (size_t)e->pred[cur][k];
        break;
      }
    if (next == cur) break;
    cur = next;
  }
  char label[200];
  return tb_error(TB_ERR_MODEL, "graph '%s': %s is part of a cycle (its inputs depend on its own outputs)", g->name,
                  tb_node_label(g, &g->nodes[cur], label, sizeof label));
}

static void sort_sub(const tb_graph *sub, void *ctx) {
  tb_status *st = ctx;
  if (*st == TB_OK) *st = tb_graph_sort((tb_graph *)sub);
}

static tb_status sort_nodes(tb_graph *g);

tb_status tb_graph_sort(tb_graph *g) {
  tb_status st = sort_nodes(g);
  for (size_t i = 0; i < g->n_nodes && st == TB_OK; i++) each_subgraph(&g->nodes[i], sort_sub, &st);
  return st;
}

static tb_status sort_nodes(tb_graph *g) {
  size_t n = g->n_nodes;
  if (n == 0) return TB_OK;
  int *producer = malloc(g->n_values * sizeof *producer + 1);
  edges e = {calloc(n, sizeof(int)), calloc(n, sizeof(int *)), calloc(n, sizeof(size_t)), g, producer, 0, false};
  int *succ_count = calloc(n, sizeof(int)), *indeg = calloc(n, sizeof(int)), *heap = malloc(n * sizeof(int));
  int *order = malloc(n * sizeof(int));
  bool *done = calloc(n, sizeof(bool));
  tb_node *sorted = malloc(n * sizeof(tb_node));
  tb_status st = TB_OK;
  if (!producer || !e.count || !e.pred || !e.cap || !succ_count || !indeg || !heap || !order || !done || !sorted) {
    st = tb_error(TB_ERR_OUT_OF_MEMORY, "graph '%s': out of memory sorting %zu nodes", g->name, n);
    goto out;
  }
  for (size_t v = 0; v < g->n_values; v++) producer[v] = -1;
  for (size_t i = 0; i < n; i++)
    for (size_t o = 0; o < g->nodes[i].n_outputs; o++) {
      int v = g->nodes[i].outputs[o];
      if (v >= 0 && (size_t)v < g->n_values && producer[v] < 0) producer[v] = (int)i;
    }
  for (size_t i = 0; i < n; i++) {
    e.node = i;
    const tb_node *nd = &g->nodes[i];
    for (size_t k = 0; k < nd->n_inputs; k++) {
      int v = nd->inputs[k];
      if (v >= 0 && (size_t)v < g->n_values && producer[v] >= 0) add_pred(&e, producer[v]);
    }
    tb_node_free_names(nd, implicit_pred, &e);
  }
  if (e.oom) {
    st = tb_error(TB_ERR_OUT_OF_MEMORY, "graph '%s': out of memory sorting %zu nodes", g->name, n);
    goto out;
  }
  /* successors: reuse the predecessor lists by scanning (counts first) */
  for (size_t i = 0; i < n; i++) indeg[i] = e.count[i];
  size_t heap_n = 0, emitted = 0;
  for (size_t i = 0; i < n; i++)
    if (!indeg[i]) heap_push(heap, &heap_n, (int)i);
  /* successor lists built once */
  int **succ = calloc(n, sizeof(int *));
  if (!succ) {
    st = tb_error(TB_ERR_OUT_OF_MEMORY, "graph '%s': out of memory sorting", g->name);
    goto out;
  }
  for (size_t i = 0; i < n; i++)
    for (int k = 0; k < e.count[i]; k++) succ_count[e.pred[i][k]]++;
  bool oom = false;
  for (size_t i = 0; i < n && !oom; i++) {
    succ[i] = malloc(((size_t)succ_count[i] + 1) * sizeof(int));
    oom = !succ[i];
    succ_count[i] = 0;
  }
  if (!oom) {
    for (size_t i = 0; i < n; i++)
      for (int k = 0; k < e.count[i]; k++) {
        int p = e.pred[i][k];
        succ[p][succ_count[p]++] = (int)i;
      }
    while (heap_n) {
      int x = heap_pop(heap, &heap_n);
      order[emitted++] = x;
      done[x] = true;
      for (int k = 0; k < succ_count[x]; k++)
        if (--indeg[succ[x][k]] == 0) heap_push(heap, &heap_n, succ[x][k]);
    }
  }
  for (size_t i = 0; i < n; i++) free(succ[i]);
  free(succ);
  if (oom) {
    st = tb_error(TB_ERR_OUT_OF_MEMORY, "graph '%s': out of memory sorting", g->name);
    goto out;
  }
  if (emitted < n) {
    st = cycle_error(g, &e, done);
    goto out;
  }
  for (size_t i = 0; i < n; i++) sorted[i] = g->nodes[order[i]];
  memcpy(g->nodes, sorted, n * sizeof(tb_node));
  for (size_t v = 0; v < g->n_values; v++) g->values[v].producer = -1;
  for (size_t i = 0; i < n; i++)
    for (size_t o = 0; o < g->nodes[i].n_outputs; o++) {
      int v = g->nodes[i].outputs[o];
      if (v >= 0 && (size_t)v < g->n_values && g->values[v].producer < 0) g->values[v].producer = (int)i;
    }
out:
  if (e.pred)
    for (size_t i = 0; i < n; i++) free(e.pred[i]);
  free(e.pred);
  free(e.count);
  free(e.cap);
  free(producer);
  free(succ_count);
  free(indeg);
  free(heap);
  free(order);
  free(done);
  free(sorted);
  return st;
}

/* ---- Checking ------------------------------------------------------------------------------------ */

/* Resolve a name used in g but defined in an enclosing graph: g's value captures it (outer set), adding
 * capture values in the graphs between. False when no enclosing graph has it. */
static bool capture(tb_graph *g, int v) {
  tb_graph *p = g->parent;
  if (!p) return false;
  int pv = tb_graph_find(p, g->values[v].name);
  if (pv >= 0) {
    const tb_value *x = &p->values[pv];
    if (!defined_without_node(x) && x->producer < 0 && x->outer < 0 && !capture(p, pv)) return false;
    g->values[v].outer = pv;
    return true;
  }
  if (!p->parent || tb_graph_find(p->parent, g->values[v].name) < 0) {
    /* look further up before adding anything */
    const tb_graph *q = p->parent;
    while (q && tb_graph_find(q, g->values[v].name) < 0) q = q->parent;
    if (!q) return false;
  }
  pv = tb_graph_value(p, g->values[v].name);
  if (pv < 0 || !capture(p, pv)) return false;
  g->values[v].outer = pv;
  return true;
}

static int node_opset(const tb_graph *g, const tb_node *n) {
  if (n->opset > 0) return n->opset;
  int64_t v = tb_ir_model_opset(g->model, n->domain);
  if (v <= 0 && strcmp(n->domain, "tb") == 0) return INT_MAX;
  return v > INT_MAX ? INT_MAX : (int)v;
}

static tb_status check_arity(const tb_graph *g, const tb_node *n) {
  const tb_op_def *d = n->def;
  char label[200];
  if ((int64_t)n->n_inputs < d->min_inputs || (d->max_inputs >= 0 && (int64_t)n->n_inputs > d->max_inputs)) {
    char range[64];
    if (d->max_inputs < 0) snprintf(range, sizeof range, "at least %d", d->min_inputs);
    else if (d->max_inputs == d->min_inputs) snprintf(range, sizeof range, "%d", d->min_inputs);
    else snprintf(range, sizeof range, "%d to %d", d->min_inputs, d->max_inputs);
    return tb_error(TB_ERR_MODEL, "%s: %zu input%s given; %s expected", tb_node_label(g, n, label, sizeof label), n->n_inputs,
                    n->n_inputs == 1 ? "" : "s", range);
  }
  if ((int64_t)n->n_outputs < d->min_outputs || (d->max_outputs >= 0 && (int64_t)n->n_outputs > d->max_outputs)) {
    char range[64];
    if (d->max_outputs < 0) snprintf(range, sizeof range, "at least %d", d->min_outputs);
    else if (d->max_outputs == d->min_outputs) snprintf(range, sizeof range, "%d", d->min_outputs);
    else snprintf(range, sizeof range, "%d to %d", d->min_outputs, d->max_outputs);
    return tb_error(TB_ERR_MODEL, "%s: %zu output%s given; %s expected", tb_node_label(g, n, label, sizeof label), n->n_outputs,
                    n->n_outputs == 1 ? "" : "s", range);
  }
  return TB_OK;
}

typedef struct subgraph_check {
  tb_graph *parent;
  tb_status st;
} subgraph_check;

static void check_sub(const tb_graph *sub, void *ctx) {
  subgraph_check *c = ctx;
  if (c->st != TB_OK) return;
  tb_graph *s = (tb_graph *)sub;
  s->parent = c->parent;
  c->st = tb_graph_check(s);
}

tb_status tb_graph_check(tb_graph *g) {
  char label[200], other[200];
  size_t nv = g->n_values;
  bool *defined = calloc(nv ? nv : 1, sizeof *defined);
  if (!defined) return tb_error(TB_ERR_OUT_OF_MEMORY, "graph '%s': out of memory checking", g->name);
  tb_status st = TB_OK;
  for (size_t v = 0; v < nv; v++) {
    g->values[v].producer = -1;
    g->values[v].outer = -1;
    defined[v] = defined_without_node(&g->values[v]);
  }
  for (size_t i = 0; i < g->n_nodes && st == TB_OK; i++) {
    tb_node *n = &g->nodes[i];
    if (n->dead) continue;
    for (size_t o = 0; o < n->n_outputs && st == TB_OK; o++) {
      int v = n->outputs[o];
      if (v < 0) continue;
      if ((size_t)v >= nv) {
        st = tb_error(TB_ERR_INTERNAL, "%s: output %zu refers to value %d of %zu", tb_node_label(g, n, label, sizeof label), o, v, nv);
      } else if (g->values[v].producer >= 0) {
        st = tb_error(TB_ERR_MODEL, "%s: output '%s' is already produced by %s", tb_node_label(g, n, label, sizeof label),
                      g->values[v].name, tb_node_label(g, &g->nodes[g->values[v].producer], other, sizeof other));
      } else if (g->values[v].is_input || g->values[v].is_initializer) {
        st = tb_error(TB_ERR_MODEL, "%s: output '%s' is also a graph %s", tb_node_label(g, n, label, sizeof label),
                      g->values[v].name, g->values[v].is_input ? "input" : "initializer");
      } else {
        g->values[v].producer = (int)i;
      }
    }
  }
  for (size_t i = 0; i < g->n_nodes && st == TB_OK; i++) {
    tb_node *n = &g->nodes[i];
    if (n->dead) continue;
    for (size_t k = 0; k < n->n_inputs && st == TB_OK; k++) {
      int v = n->inputs[k];
      if (v < 0) continue;
      if ((size_t)v >= nv) {
        st = tb_error(TB_ERR_INTERNAL, "%s: input %zu refers to value %d of %zu", tb_node_label(g, n, label, sizeof label), k, v, nv);
      } else if (!defined[v] && !capture(g, v)) {
        if (g->values[v].producer > (int)i)
          st = tb_error(TB_ERR_MODEL, "%s: input '%s' is used before %s produces it", tb_node_label(g, n, label, sizeof label),
                        g->values[v].name, tb_node_label(g, &g->nodes[g->values[v].producer], other, sizeof other));
        else
          st = tb_error(TB_ERR_MODEL, "%s: input '%s' is not defined (not a graph input, an initializer or a node's output%s)",
                        tb_node_label(g, n, label, sizeof label), g->values[v].name, g->parent ? ", nor an outer-scope value" : "");
      } else if (g->values[v].outer >= 0) {
        defined[v] = true;
      }
    }
    if (st != TB_OK) break;
    int opset = node_opset(g, n);
    n->def = tb_op_find(n->domain, n->op_type, opset);
    if (!n->def) {
      const char *name = n->name && *n->name ? n->name : NULL;
      if (name)
        st = tb_error(TB_ERR_UNSUPPORTED, "node '%s' (%s, domain '%s', opset %d): operator not supported; supported operators: run `tb ops`",
                      name, n->op_type, n->domain, opset);
      else
        st = tb_error(TB_ERR_UNSUPPORTED, "node #%zu (%s, domain '%s', opset %d): operator not supported; supported operators: run `tb ops`",
                      i, n->op_type, n->domain, opset);
      break;
    }
    if ((st = check_arity(g, n)) != TB_OK) break;
    for (size_t o = 0; o < n->n_outputs; o++)
      if (n->outputs[o] >= 0) defined[n->outputs[o]] = true;
    if (st == TB_OK) {
      subgraph_check c = {g, TB_OK};
      each_subgraph(n, check_sub, &c);
      st = c.st;
    }
  }
  for (size_t k = 0; k < g->n_outputs && st == TB_OK; k++) {
    int v = g->outputs[k];
    if (v < 0 || (size_t)v >= nv)
      st = tb_error(TB_ERR_MODEL, "graph '%s': output %zu refers to no value", g->name, k);
    else if (!defined[v] && !capture(g, v))
      st = tb_error(TB_ERR_MODEL, "graph '%s': output '%s' is not produced by any node", g->name, g->values[v].name);
  }
  free(defined);
  return st;
}

/* ---- Compaction ---------------------------------------------------------------------------------- */

typedef struct keep_ctx {
  const tb_graph *g;
  bool *keep;
} keep_ctx;

static void keep_name(void *ctx, const char *name) {
  keep_ctx *k = ctx;
  int v = tb_graph_find(k->g, name);
  if (v >= 0) k->keep[v] = true;
}

typedef struct remap_ctx {
  const int *map;
} remap_ctx;

static void remap_outer(const tb_graph *sub, void *ctx) {
  const remap_ctx *r = ctx;
  tb_graph *s = (tb_graph *)sub;
  for (size_t v = 0; v < s->n_values; v++)
    if (s->values[v].outer >= 0) s->values[v].outer = r->map[s->values[v].outer];
}

static bool used_by_live(const tb_graph *g, const tb_graph *sub) {
  for (size_t i = 0; i < g->n_nodes; i++) {
    const tb_node *n = &g->nodes[i];
    if (n->dead) continue;
    for (size_t a = 0; a < n->n_attrs; a++) {
      if (n->attrs[a].type == TB_ATTR_GRAPH && n->attrs[a].g == sub) return true;
      if (n->attrs[a].type == TB_ATTR_GRAPHS && n->attrs[a].graphs)
        for (size_t j = 0; j < n->attrs[a].count; j++)
          if (n->attrs[a].graphs[j] == sub) return true;
    }
  }
  return false;
}

void tb_graph_compact(tb_graph *g) {
  size_t nv = g->n_values;
  bool *keep = calloc(nv ? nv : 1, sizeof *keep);
  int *map = malloc((nv ? nv : 1) * sizeof *map);
  if (!keep || !map) { /* compaction is an optimisation: without memory the graph stays as it is */
    free(keep);
    free(map);
    return;
  }
  size_t live = 0;
  for (size_t i = 0; i < g->n_nodes; i++) {
    tb_node *n = &g->nodes[i];
    if (n->dead) {
      for (size_t a = 0; a < n->n_attrs; a++) {
        tb_attr *at = &n->attrs[a];
        if (at->type == TB_ATTR_GRAPH && at->g && !used_by_live(g, at->g)) tb_graph_destroy(at->g);
        at->g = NULL;
        if (at->type == TB_ATTR_GRAPHS && at->graphs) {
          tb_graph **list = (tb_graph **)at->graphs;
          for (size_t j = 0; j < at->count; j++) {
            bool again = false;
            for (size_t k = 0; k < j; k++) again |= list[k] == list[j];
            if (list[j] && !again && !used_by_live(g, list[j])) tb_graph_destroy(list[j]);
          }
          for (size_t j = 0; j < at->count; j++) list[j] = NULL;
        }
      }
      continue;
    }
    g->nodes[live++] = *n;
  }
  g->n_nodes = live;
  for (size_t k = 0; k < g->n_inputs; k++) if (g->inputs[k] >= 0) keep[g->inputs[k]] = true;
  for (size_t k = 0; k < g->n_outputs; k++) if (g->outputs[k] >= 0) keep[g->outputs[k]] = true;
  for (size_t v = 0; v < nv; v++) if (g->values[v].is_input) keep[v] = true;
  keep_ctx kc = {g, keep};
  for (size_t i = 0; i < g->n_nodes; i++) {
    const tb_node *n = &g->nodes[i];
    for (size_t k = 0; k < n->n_inputs; k++) if (n->inputs[k] >= 0) keep[n->inputs[k]] = true;
    for (size_t k = 0; k < n->n_outputs; k++) if (n->outputs[k] >= 0) keep[n->outputs[k]] = true;
    tb_node_free_names(n, keep_name, &kc);
  }
  size_t nk = 0;
  for (size_t v = 0; v < nv; v++) {
    map[v] = keep[v] ? (int)nk : -1;
    if (keep[v]) g->values[nk++] = g->values[v];
  }
  g->n_values = nk;
  for (size_t i = 0; i < g->n_nodes; i++) {
    tb_node *n = &g->nodes[i];
    for (size_t k = 0; k < n->n_inputs; k++) if (n->inputs[k] >= 0) n->inputs[k] = map[n->inputs[k]];
    for (size_t k = 0; k < n->n_outputs; k++) if (n->outputs[k] >= 0) n->outputs[k] = map[n->outputs[k]];
    remap_ctx rc = {map};
    each_subgraph(n, remap_outer, &rc);
  }
  for (size_t k = 0; k < g->n_inputs; k++) if (g->inputs[k] >= 0) g->inputs[k] = map[g->inputs[k]];
  for (size_t k = 0; k < g->n_outputs; k++) if (g->outputs[k] >= 0) g->outputs[k] = map[g->outputs[k]];
  for (size_t v = 0; v < nk; v++) g->values[v].producer = -1;
  for (size_t i = 0; i < g->n_nodes; i++)
    for (size_t k = 0; k < g->nodes[i].n_outputs; k++)
      if (g->nodes[i].outputs[k] >= 0 && g->values[g->nodes[i].outputs[k]].producer < 0)
        g->values[g->nodes[i].outputs[k]].producer = (int)i;
  tb_graph_reindex(g);
  free(keep);
  free(map);
}
