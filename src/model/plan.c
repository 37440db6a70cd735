/* The memory plan: each activation's lifetime in execution order (widened over the spans of steps that may
 * run at the same time), and a byte offset in one arena for each, so that values alive at the same time
 * never share bytes (greedy: largest first, first fit
 * against the values whose lifetimes overlap; offsets aligned to 64 bytes). Graph inputs and outputs,
 * constants and values a subgraph reads are not placed: they live in their own tensors. */
#include <stdlib.h>
#include <string.h>
#include "core/error.h"
#include "model/engine.h"

enum { PLAN_ALIGN = 64 };

void tb_plan_free(tb_plan *plan) {
  if (!plan) return;
  free(plan->offset);
  free(plan->first);
  free(plan->last);
  memset(plan, 0, sizeof *plan);
}

uint64_t tb_plan_value_bytes(const tb_value_type *t) {
  if (!tb_value_type_complete(t)) return 0;
  uint64_t n = tb_dtype_size(t->dtype);
  for (size_t d = 0; d < t->ndim; d++) {
    uint64_t dim = (uint64_t)t->dims[d].value;
    if (dim && n > UINT64_MAX / dim) return 0;
    n *= dim;
  }
  return n;
}

typedef struct mark_ctx {
  const tb_graph *g;
  tb_plan *plan;
  int step;
  bool *captured;
} mark_ctx;

static void mark_implicit(void *ctx, const char *name) {
  mark_ctx *c = ctx;
  int v = tb_graph_find(c->g, name);
  if (v < 0) return;
  if (c->plan->last[v] < c->step) c->plan->last[v] = c->step;
  if (c->captured) c->captured[v] = true;
}

static tb_status lifetimes(const tb_graph *g, tb_plan *plan, bool *captured) {
  tb_plan_free(plan);
  size_t nv = g->n_values ? g->n_values : 1;
  plan->n_values = g->n_values;
  plan->offset = malloc(nv * sizeof *plan->offset);
  plan->first = malloc(nv * sizeof *plan->first);
  plan->last = malloc(nv * sizeof *plan->last);
  if (!plan->offset || !plan->first || !plan->last) {
    tb_plan_free(plan);
    return tb_error(TB_ERR_OUT_OF_MEMORY, "graph '%s': out of memory for the memory plan", g->name);
  }
  for (size_t v = 0; v < g->n_values; v++) {
    plan->offset[v] = -1;
    plan->first[v] = -1;
    plan->last[v] = -1;
  }
  for (size_t i = 0; i < g->n_nodes; i++) {
    const tb_node *n = &g->nodes[i];
    int step = (int)i;
    for (size_t k = 0; k < n->n_inputs; k++)
      if (n->inputs[k] >= 0) plan->last[n->inputs[k]] = step;
    for (size_t k = 0; k < n->n_outputs; k++)
      if (n->outputs[k] >= 0 && plan->first[n->outputs[k]] < 0) plan->first[n->outputs[k]] = step;
    mark_ctx c = {g, plan, step, captured};
    tb_node_free_names(n, mark_implicit, &c);
  }
  for (size_t k = 0; k < g->n_outputs; k++)
    if (g->outputs[k] >= 0) plan->last[g->outputs[k]] = (int)g->n_nodes;
  for (size_t v = 0; v < g->n_values; v++)
    if (plan->first[v] >= 0 && plan->last[v] < plan->first[v]) plan->last[v] = plan->first[v];
  return TB_OK;
}

tb_status tb_plan_lifetimes(const tb_graph *g, tb_plan *plan) { return lifetimes(g, plan, NULL); }

typedef struct placed {
  int64_t offset;
  uint64_t size;
  int first, last;
} placed;

typedef struct candidate {
  uint64_t bytes;
  int first, value;
} candidate;

static int by_size_desc(const void *a, const void *b) {
  const candidate *x = a, *y = b;
  if (x->bytes != y->bytes) return x->bytes > y->bytes ? -1 : 1;
  if (x->first != y->first) return x->first < y->first ? -1 : 1;
  return x->value < y->value ? -1 : (x->value > y->value);
}

static int by_offset(const void *a, const void *b) {
  const placed *x = a, *y = b;
  return x->offset < y->offset ? -1 : (x->offset > y->offset);
}

static uint64_t align_up(uint64_t n) { return (n + PLAN_ALIGN - 1) / PLAN_ALIGN * PLAN_ALIGN; }

/* Every value alive at some step of a span is kept alive over the whole span: nodes of a span may run in
 * any order or at the same time (inter-op regions), so their values must not share bytes. */
static void widen(tb_plan *plan, const tb_plan_span *spans, size_t n_spans) {
  for (size_t i = 0; i < n_spans; i++)
    for (size_t v = 0; v < plan->n_values; v++) {
      int first = plan->first[v], last = plan->last[v];
      if (last < 0 || last < spans[i].first || (first >= 0 && first > spans[i].last)) continue;
      if (first >= 0 && first > spans[i].first) plan->first[v] = spans[i].first;
      if (last < spans[i].last) plan->last[v] = spans[i].last;
    }
}

tb_status tb_plan_build(const tb_graph *g, const uint64_t *bytes, tb_plan *plan) {
  return tb_plan_build_spans(g, bytes, NULL, 0, plan);
}

tb_status tb_plan_build_spans(const tb_graph *g, const uint64_t *bytes, const tb_plan_span *spans, size_t n_spans,
                              tb_plan *plan) {
  size_t nv = g->n_values;
  bool *captured = calloc(nv ? nv : 1, sizeof *captured);
  if (!captured) return tb_error(TB_ERR_OUT_OF_MEMORY, "graph '%s': out of memory for the memory plan", g->name);
  tb_status st = lifetimes(g, plan, captured);
  if (st == TB_OK) widen(plan, spans, n_spans);
  candidate *order = malloc((nv ? nv : 1) * sizeof *order);
  placed *done = malloc((nv ? nv : 1) * sizeof *done);
  placed *conflicts = malloc((nv ? nv : 1) * sizeof *conflicts);
  if (st == TB_OK && (!order || !done || !conflicts))
    st = tb_error(TB_ERR_OUT_OF_MEMORY, "graph '%s': out of memory for the memory plan", g->name);
  if (st != TB_OK) {
    free(captured);
    free(order);
    free(done);
    free(conflicts);
    tb_plan_free(plan);
    return st;
  }
  size_t n = 0;
  for (size_t v = 0; v < nv; v++) {
    const tb_value *val = &g->values[v];
    if (!bytes[v] || plan->first[v] < 0 || val->is_input || val->is_output || val->constant || captured[v] ||
        plan->last[v] >= (int)g->n_nodes)
      continue;
    order[n++] = (candidate){bytes[v], plan->first[v], (int)v};
  }
  qsort(order, n, sizeof *order, by_size_desc);
  uint64_t peak = 0;
  size_t n_done = 0;
  for (size_t i = 0; i < n; i++) {
    int v = order[i].value;
    uint64_t size = align_up(bytes[v]);
    size_t nc = 0;
    for (size_t j = 0; j < n_done; j++)
      if (done[j].first <= plan->last[v] && plan->first[v] <= done[j].last) conflicts[nc++] = done[j];
    qsort(conflicts, nc, sizeof *conflicts, by_offset);
    uint64_t offset = 0;
    for (size_t j = 0; j < nc; j++) {
      if (offset + size <= (uint64_t)conflicts[j].offset) break;
      uint64_t end = (uint64_t)conflicts[j].offset + conflicts[j].size;
      if (end > offset) offset = end;
    }
    plan->offset[v] = (int64_t)offset;
    done[n_done++] = (placed){(int64_t)offset, size, plan->first[v], plan->last[v]};
    if (offset + size > peak) peak = offset + size;
  }
  plan->arena_bytes = peak;
  free(captured);
  free(order);
  free(done);
  free(conflicts);
  return TB_OK;
}
