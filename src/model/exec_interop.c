/* Finding the inter-op regions of a graph (exec_interop.h). A window of consecutive steps is grown from a
 * start while each new node reads, among the window's nodes, the outputs of at most one lane (a union-find
 * over the window's steps; values made before the window join nothing); it ends before a node that joins
 * two lanes, before a node that may not share (a subgraph; under auto, a node of unknown or large work) and
 * at the graph's end. A window of two or more lanes that the mode takes is a region, and the next window
 * starts where it ended; otherwise the next window starts one step later, so a fork's branches are found
 * from the step after the fork. The cost rule (auto): every node of the region below
 * TB_INTEROP_NODE_MAX_WORK, at least two lanes of TB_INTEROP_LANE_MIN_WORK (worth a thread), and the
 * region's estimated time as lanes (their longest-first schedule over the threads, each node on one
 * thread, plus one hand-over) under 0.9 of its time node after node (a node whose kernel splits it over the
 * threads takes its work / threads plus a hand-over; a smaller one its whole work): three equal
 * transposes on two threads stay intra-op (2 units against 1.5), many small nodes in two lanes go inter-op.
 * Lanes are listed heaviest first: the pool hands them out in that order, the longest-first rule. */
#include "model/exec_interop.h"
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include "core/env.h"
#include "core/error.h"
#include "model/engine.h"

static const char *const mode_names[] = {"default", "auto", "off", "on"};

tb_status tb_inter_op_parse(const char *name, tb_inter_op *out) {
  if (!name || !out) return tb_error(TB_ERR_INVALID_ARGUMENT, "tb_inter_op_parse: name and out must not be NULL");
  for (size_t i = 0; i < sizeof mode_names / sizeof mode_names[0]; i++)
    if (strcasecmp(name, mode_names[i]) == 0) {
      *out = (tb_inter_op)i;
      return TB_OK;
    }
  if (strcmp(name, "1") == 0 || strcmp(name, "0") == 0) {
    *out = name[0] == '1' ? TB_INTER_OP_ON : TB_INTER_OP_OFF;
    return TB_OK;
  }
  return tb_error(TB_ERR_NOT_FOUND, "unknown inter-op mode '%.100s'; valid ones are default, auto, off (or 0), on (or 1)",
                  name);
}

tb_inter_op tb_inter_op_from_env(void) {
  static _Atomic bool warned;
  const char *v = tb_env("TB_INTER_OP");
  tb_inter_op mode = TB_INTER_OP_AUTO;
  if (!v || !*v) return mode;
  if (tb_inter_op_parse(v, &mode) != TB_OK) {
    if (!atomic_exchange(&warned, true))
      tb_log(TB_LOG_WARN, "CPU: TB_INTER_OP='%.100s' is not one of auto, on, 1, off, 0; using auto", v);
    return TB_INTER_OP_AUTO;
  }
  return mode == TB_INTER_OP_DEFAULT ? TB_INTER_OP_AUTO : mode;
}

void tb_interop_free(tb_interop_plan *p) {
  if (!p) return;
  free(p->regions);
  free(p->lanes);
  free(p->steps);
  free(p->region_at);
  memset(p, 0, sizeof *p);
}

static double elements(const tb_value_type *t) {
  if (!tb_value_type_complete(t)) return -1;
  double n = 1;
  for (size_t d = 0; d < t->ndim; d++) n *= (double)t->dims[d].value;
  return n;
}

static bool op_is(const tb_node *n, const char *name) { return strcmp(n->op_type, name) == 0; }

/* A value's type for this plan: `types` (what the plan is for), else the graph's own for a constant, whose
 * shape no run changes (a run's `seen` types hold only what was computed). */
static const tb_value_type *type_of(const tb_graph *g, const tb_value_type *types, int v) {
  if (!tb_value_type_complete(&types[v]) && g->values[v].constant) return &g->values[v].type;
  return &types[v];
}

double tb_interop_node_work(const tb_graph *g, const tb_node *n, const tb_value_type *types) {
  static const char *const unbounded[] = {"LSTM", "GRU", "RNN", "Attention", "MultiHeadAttention", "Loop", "Scan", "If"};
  for (size_t i = 0; i < sizeof unbounded / sizeof unbounded[0]; i++)
    if (op_is(n, unbounded[i])) return -1;
  double in = 0, out = 0;
  for (size_t k = 0; k < n->n_inputs; k++) {
    int v = n->inputs[k];
    if (v < 0) continue;
    double e = elements(type_of(g, types, v));
    if (e < 0) return -1;
    in += e;
  }
  for (size_t k = 0; k < n->n_outputs; k++) {
    int v = n->outputs[k];
    if (v < 0) continue;
    double e = elements(&types[v]);
    if (e < 0) return -1;
    out += e;
  }
  const tb_value_type *a = n->n_inputs > 0 && n->inputs[0] >= 0 ? type_of(g, types, n->inputs[0]) : NULL;
  const tb_value_type *b = n->n_inputs > 1 && n->inputs[1] >= 0 ? type_of(g, types, n->inputs[1]) : NULL;
  const tb_value_type *y = n->n_outputs > 0 && n->outputs[0] >= 0 ? &types[n->outputs[0]] : NULL;
  double macs = 0;
  if ((op_is(n, "Conv") || op_is(n, "FusedConv")) && b && y && b->ndim >= 1 && b->dims[0].value > 0)
    macs = elements(y) * (elements(b) / (double)b->dims[0].value); /* per output: C/group x kernel taps */
  else if (op_is(n, "ConvTranspose") && a && b && b->ndim >= 1 && b->dims[0].value > 0)
    macs = elements(a) * (elements(b) / (double)b->dims[0].value);
  else if ((op_is(n, "MatMul") || op_is(n, "FusedMatMul")) && a && y && a->ndim >= 1)
    macs = elements(y) * (double)a->dims[a->ndim - 1].value;
  else if ((op_is(n, "Gemm") || op_is(n, "FusedGemm")) && a && y && y->ndim >= 1 && y->dims[0].value > 0)
    macs = elements(y) * (elements(a) / (double)y->dims[0].value);
  return in + out + macs;
}

static bool is_product(const tb_node *n) {
  return op_is(n, "Conv") || op_is(n, "FusedConv") || op_is(n, "ConvTranspose") || op_is(n, "MatMul") ||
         op_is(n, "FusedMatMul") || op_is(n, "Gemm") || op_is(n, "FusedGemm");
}

/* The time of a node run with the pool, in work units: split when its kernel would split it. */
static double shared_time(const tb_node *n, double work, int threads) {
  double split_from = is_product(n) ? TB_INTEROP_NODE_MAX_WORK : TB_INTEROP_SPLIT_WORK;
  return work >= split_from ? work / threads + TB_INTEROP_SYNC_WORK : work;
}

/* The longest-first schedule's length of lanes (heaviest first) over `threads`. */
static double lanes_time(const tb_interop_lane *lanes, size_t n, int threads) {
  double load[64] = {0}, most = 0;
  size_t bins = threads < 64 ? (size_t)threads : 64;
  for (size_t l = 0; l < n; l++) {
    size_t least = 0;
    for (size_t b = 1; b < bins; b++)
      if (load[b] < load[least]) least = b;
    load[least] += lanes[l].work;
    if (load[least] > most) most = load[least];
  }
  return most + TB_INTEROP_SYNC_WORK;
}

static bool has_subgraph(const tb_node *n) {
  for (size_t a = 0; a < n->n_attrs; a++)
    if (n->attrs[a].type == TB_ATTR_GRAPH || n->attrs[a].type == TB_ATTR_GRAPHS) return true;
  return false;
}

static int find(int *parent, int i) {
  while (parent[i] != i) {
    parent[i] = parent[parent[i]];
    i = parent[i];
  }
  return i;
}

typedef struct finder {
  const tb_graph *g;
  const double *work;  /* per step; negative: may not share */
  tb_inter_op mode;
  int *parent;         /* per step, in the current window */
  int *lane_of;        /* per step: its lane's root, for grouping */
  int threads;
  tb_interop_plan *out;
  size_t cap_regions, cap_lanes, cap_steps, n_steps;
} finder;

/* The window from `begin`: its end (exclusive). */
static int grow(finder *f, int begin) {
  const tb_graph *g = f->g;
  int end = begin;
  for (; end < (int)g->n_nodes; end++) {
    if (f->work[end] < 0 || (f->mode == TB_INTER_OP_AUTO && f->work[end] >= TB_INTEROP_NODE_MAX_WORK)) break;
    const tb_node *n = &g->nodes[end];
    int root = -1;
    bool join = false;
    for (size_t k = 0; k < n->n_inputs && !join; k++) {
      int v = n->inputs[k], p = v >= 0 ? g->values[v].producer : -1;
      if (p < begin || p >= end) continue;
      int r = find(f->parent, p);
      if (root < 0) root = r;
      else join = r != root;
    }
    if (join) break;
    f->parent[end] = root >= 0 ? root : end;
  }
  return end;
}

static bool grow_array(void **p, size_t *cap, size_t need, size_t size) {
  if (need <= *cap) return true;
  size_t c = *cap ? *cap * 2 : 16;
  while (c < need) c *= 2;
  void *q = realloc(*p, c * size);
  if (!q) return false;
  *p = q;
  *cap = c;
  return true;
}

static int by_work_desc(const void *x, const void *y) {
  const tb_interop_lane *a = x, *b = y;
  if (a->work != b->work) return a->work > b->work ? -1 : 1;
  return a->first < b->first ? -1 : (a->first > b->first);
}

/* Take [begin, end) as a region when it has two lanes or more and the mode's rule holds; false when it is
 * not taken. *oom on out of memory. */
static bool take(finder *f, int begin, int end, bool *oom) {
  tb_interop_plan *o = f->out;
  size_t lanes0 = o->n_lanes, roots = 0, worthy = 0;
  for (int s = begin; s < end; s++) {
    if (f->mode == TB_INTER_OP_AUTO && f->work[s] >= TB_INTEROP_NODE_MAX_WORK) return false;
    if (find(f->parent, s) == s) roots++;
  }
  if (roots < 2) return false;
  if (!grow_array((void **)&o->lanes, &f->cap_lanes, lanes0 + roots, sizeof *o->lanes) ||
      !grow_array((void **)&o->steps, &f->cap_steps, f->n_steps + (size_t)(end - begin), sizeof *o->steps) ||
      !grow_array((void **)&o->regions, &f->cap_regions, o->n_regions + 1, sizeof *o->regions)) {
    *oom = true;
    return false;
  }
  /* lanes in the order of their first step; each lane's steps in execution order */
  size_t n_lanes = 0;
  for (int s = begin; s < end; s++)
    if (find(f->parent, s) == s) {
      f->lane_of[s] = (int)n_lanes;
      o->lanes[lanes0 + n_lanes++] = (tb_interop_lane){0, 0, 0};
    }
  for (int s = begin; s < end; s++) {
    tb_interop_lane *l = &o->lanes[lanes0 + (size_t)f->lane_of[find(f->parent, s)]];
    l->count++;
    l->work += f->work[s];
  }
  size_t at = f->n_steps;
  for (size_t l = 0; l < n_lanes; l++) {
    o->lanes[lanes0 + l].first = at;
    at += o->lanes[lanes0 + l].count;
    o->lanes[lanes0 + l].count = 0;
    if (o->lanes[lanes0 + l].work >= TB_INTEROP_LANE_MIN_WORK) worthy++;
  }
  for (int s = begin; s < end; s++) {
    tb_interop_lane *l = &o->lanes[lanes0 + (size_t)f->lane_of[find(f->parent, s)]];
    o->steps[l->first + l->count++] = s;
  }
  qsort(o->lanes + lanes0, n_lanes, sizeof *o->lanes, by_work_desc); /* each keeps its steps */
  double in_turn = 0;
  for (int s = begin; s < end; s++) in_turn += shared_time(&f->g->nodes[s], f->work[s], f->threads);
  if (f->mode == TB_INTER_OP_AUTO && (worthy < 2 || lanes_time(o->lanes + lanes0, n_lanes, f->threads) >= 0.9 * in_turn)) {
    o->n_lanes = lanes0;
    return false;
  }
  f->n_steps = at;
  o->n_lanes = lanes0 + n_lanes;
  if (n_lanes > o->max_lanes) o->max_lanes = n_lanes;
  o->region_at[begin] = (int)o->n_regions;
  o->regions[o->n_regions++] = (tb_interop_region){begin, end, lanes0, n_lanes};
  return true;
}

tb_status tb_interop_find(const tb_graph *g, const tb_value_type *types, int threads, tb_inter_op mode,
                          tb_interop_plan *out) {
  memset(out, 0, sizeof *out);
  size_t nn = g->n_nodes;
  if (threads < 2 || mode == TB_INTER_OP_OFF || nn < 2) return TB_OK;
  finder f = {.g = g, .mode = mode, .out = out, .threads = threads};
  double *work = malloc(nn * sizeof *work);
  f.parent = malloc(nn * sizeof *f.parent);
  f.lane_of = malloc(nn * sizeof *f.lane_of);
  out->region_at = malloc(nn * sizeof *out->region_at);
  bool oom = !work || !f.parent || !f.lane_of || !out->region_at;
  for (size_t i = 0; i < nn && !oom; i++) {
    const tb_node *n = &g->nodes[i];
    double w = has_subgraph(n) ? -1 : tb_interop_node_work(g, n, types);
    if (w < 0 && mode == TB_INTER_OP_ON && !has_subgraph(n)) w = 0;
    work[i] = w;
    out->region_at[i] = -1;
  }
  f.work = work;
  for (int begin = 0; begin < (int)nn && !oom;) {
    int end = grow(&f, begin);
    if (end - begin >= 2 && take(&f, begin, end, &oom)) begin = end;
    else begin++;
  }
  free(work);
  free(f.parent);
  free(f.lane_of);
  if (oom) {
    tb_interop_free(out);
    return tb_error(TB_ERR_OUT_OF_MEMORY, "graph '%s': out of memory finding its independent branches", g->name);
  }
  return TB_OK;
}
