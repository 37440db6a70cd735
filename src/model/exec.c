/* The executor: runs a checked, sorted graph node by node. Per node it gathers the input tensors, infers
 * the outputs from the actual input shapes (cached while they do not change), picks the kernel (the device
 * backend's, or a route's to the same hardware, for a node placed there, else the best CPU kernel for the
 * level and the CPU's features: see exec_place.c; values move between the sides in exec_sides.c), places
 * each CPU output in the memory plan's arena when the plan's shape matches (else a tensor of its own;
 * device outputs are allocated on the node's device side), runs the kernel, and frees values after their
 * last use.
 * Subgraphs (If/Loop/Scan bodies) run through run_subgraph with outer-scope values taken from the caller.
 * The plan is made at prepare when every shape is known, else after the first run for a set of input
 * shapes, and made again when the input shapes change. With the plan come the inter-op regions
 * (exec_interop.h): the lanes of a region run at the same time over the pool, each node on one thread with
 * a scratch of its lane, once every node of the region is settled (its kernel and state made by an earlier
 * run); values last used in a region are freed after it, and the plan keeps a region's values apart. */
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include "backend/backend_refs.h"
#include "backend/kernel.h"
#include "core/env.h"
#include "core/error.h"
#include "core/threadpool.h"
#include "model/engine.h"
#include "model/exec_impl.h"
#include "model/exec_release.h"
#include "model/weights.h"
#include "ops/op.h"
#include "backend/tensor/tensor_impl.h"

static double now_ms(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec / 1e6;
}

tb_status tb_exec_set_profiling(tb_exec *e, bool on) {
  free(e->node_ms);
  free(e->node_runs);
  e->node_ms = NULL;
  e->node_runs = NULL;
  e->subgraph_ms = 0;
  /* the subgraphs' executors made so far; those made later follow in run_subgraph */
  for (size_t i = 0; i < e->n_children; i++) {
    tb_status st = tb_exec_set_profiling(e->children[i].exec, on);
    if (st != TB_OK) {
      tb_exec_set_profiling(e, false);
      return st;
    }
  }
  if (!on) return TB_OK;
  size_t n = e->g->n_nodes ? e->g->n_nodes : 1;
  e->node_ms = calloc(n, sizeof *e->node_ms);
  e->node_runs = calloc(n, sizeof *e->node_runs);
  if (e->node_ms && e->node_runs) return TB_OK;
  tb_exec_set_profiling(e, false);
  return tb_error(TB_ERR_OUT_OF_MEMORY, "graph '%s': out of memory for profiling", e->g->name);
}

const double *tb_exec_node_ms(const tb_exec *e) { return e->node_ms; }
bool tb_exec_observed(const tb_exec *e) { return e->node_ms || e->node_hook; }
const uint64_t *tb_exec_node_runs(const tb_exec *e) { return e->node_runs; }

const tb_kernel *tb_exec_node_kernel(const tb_exec *e, size_t i, int *side) {
  *side = i < e->g->n_nodes ? e->cache[i].side : TB_EXEC_CPU;
  return i < e->g->n_nodes && e->cache[i].valid ? e->cache[i].kernel : NULL;
}

const tb_exec *tb_exec_child(const tb_exec *e, const tb_graph *body) {
  for (size_t i = 0; i < e->n_children; i++)
    if (e->children[i].body == body) return e->children[i].exec;
  return NULL;
}

const char *tb_exec_node_method(const tb_exec *e, size_t i) {
  return i < e->g->n_nodes && e->cache[i].valid ? e->cache[i].method : NULL;
}

void tb_kernel_set_method(tb_kernel_ctx *ctx, const char *method) {
  if (!ctx || !ctx->exec || ctx->outputs || !ctx->node) return; /* only inside the executor's prepare */
  tb_exec *e = ctx->exec;
  if (ctx->graph != e->g || ctx->node < e->g->nodes || ctx->node >= e->g->nodes + e->g->n_nodes) return;
  e->cache[ctx->node - e->g->nodes].method = method;
}

void tb_kernel_set_precision(tb_kernel_ctx *ctx, const char *precision, const char *why) {
  if (!ctx || !ctx->exec || ctx->outputs || !ctx->node) return; /* only inside the executor's prepare */
  tb_exec *e = ctx->exec;
  if (!e->placement || ctx->graph != e->g || ctx->node < e->g->nodes || ctx->node >= e->g->nodes + e->g->n_nodes) return;
  tb_exec_placement *pl = &e->placement[ctx->node - e->g->nodes];
  char *copy = why ? strdup(why) : NULL; /* NULL when memory is short: the result then lacks the sentence */
  free((char *)pl->precision_why);
  pl->precision_why = copy;
  pl->precision = precision;
  pl->precision_by_kernel = true;
}

/* tb_exec_test_break_op: the op type whose float outputs are perturbed, and from which kernel level. */
static char broken_op[64];
static tb_kernel_level broken_min_level;

void tb_exec_test_break_op(const char *op_type, int min_level) {
  snprintf(broken_op, sizeof broken_op, "%s", op_type ? op_type : "");
  broken_min_level = (tb_kernel_level)min_level;
}

void tb_exec_set_node_hook(tb_exec *e, tb_exec_node_fn fn, void *ctx) {
  e->node_hook = fn;
  e->node_hook_ctx = ctx;
}

static void break_outputs(const tb_exec *e, const tb_node *n, tb_tensor *const *out) {
  if (!broken_op[0] || e->level < broken_min_level || strcmp(n->op_type, broken_op) != 0) return;
  for (size_t o = 0; o < n->n_outputs; o++) {
    if (!out[o] || tb_tensor_dtype(out[o]) != TB_DTYPE_F32 || !tb_tensor_is_contiguous(out[o])) continue;
    size_t count = (size_t)tb_tensor_numel(out[o]);
    float *p = malloc(count * sizeof *p + 1); /* through the host, so device outputs break too */
    if (p && tb_tensor_copy_to_host(out[o], p, count * sizeof *p) == TB_OK) {
      for (size_t i = 0; i < count; i++) p[i] += 0.25f;
      (void)tb_tensor_copy_from_host(out[o], p, count * sizeof *p);
    }
    free(p);
  }
}

/* Whether t has type `type` (what same_type(tb_value_type_of(t), type) says, without building the type). */
static bool tensor_has_type(const tb_tensor *t, const tb_value_type *type) {
  if (type->kind != TB_VALUE_TENSOR || !type->has_dtype || !type->has_shape || type->dtype != t->dtype ||
      type->ndim != t->ndim)
    return false;
  for (size_t d = 0; d < t->ndim; d++)
    if (type->dims[d].value != t->shape[d]) return false;
  return true;
}

static bool same_type(const tb_value_type *a, const tb_value_type *b) {
  if (a->kind != b->kind || a->has_dtype != b->has_dtype || a->has_shape != b->has_shape) return false;
  if (a->has_dtype && a->dtype != b->dtype) return false;
  if (!a->has_shape) return true;
  if (a->ndim != b->ndim) return false;
  for (size_t d = 0; d < a->ndim; d++)
    if (a->dims[d].value != b->dims[d].value) return false;
  return true;
}

/* Constants up to this size are copied out of the model file. Kernels read small constants (biases,
 * normalisation scales, shapes) at every run; reading them from the file's mapping faults in the page-cache
 * folio around them (up to 2 MiB on kernels with large folios), which maps the neighbouring weights' pages
 * back into the process after prepare dropped them: BERT-base kept 46 MiB of packed-away weights that way. */
enum { CONST_COPY_MAX_BYTES = 64 * 1024 };

/* A read-only CPU tensor over a constant's bytes (no copy when they are aligned for the dtype and larger
 * than CONST_COPY_MAX_BYTES). */
static tb_status const_tensor(tb_backend *cpu, const tb_ir_tensor *c, tb_tensor **out) {
  size_t es = tb_dtype_size(c->dtype);
  int64_t numel, strides[TB_MAX_DIMS];
  tb_status st = tb_shape_check("constant", c->ndim, c->dims, es ? es : 1, &numel, strides);
  if (st != TB_OK) return st;
  if ((uint64_t)numel * es != c->nbytes)
    return tb_error(TB_ERR_MODEL, "constant '%s': %zu bytes of data for %lld %s elements", c->name, c->nbytes,
                    (long long)numel, tb_dtype_name(c->dtype));
  if (numel == 0 || !c->data || ((uintptr_t)c->data % es) != 0 || c->nbytes <= CONST_COPY_MAX_BYTES) {
    st = tb_tensor_create(cpu, c->dtype, c->ndim, c->dims, out);
    if (st == TB_OK && numel > 0) st = tb_tensor_copy_from_host(*out, c->data, c->nbytes);
    if (st == TB_OK && numel > 0) tb_weights_drop_file(c->data, c->nbytes); /* the copy is used: not the file's pages */
    if (st != TB_OK) {
      tb_tensor_destroy(*out);
      *out = NULL;
    }
    return st;
  }
  tb_storage *s = calloc(1, sizeof *s);
  if (!s) return tb_error(TB_ERR_OUT_OF_MEMORY, "constant '%s': out of host memory", c->name);
  tb_block *none = NULL;
  st = tb_backend_storage_acquire(cpu, 0, &none);
  if (st != TB_OK) {
    free(s);
    return st;
  }
  s->backend = cpu;
  s->host = (void *)c->data;
  s->nbytes = c->nbytes;
  s->read_only = true;
  atomic_init(&s->refs, 0);
  st = tb_tensor_wrap(s, c->dtype, c->ndim, c->dims, strides, 0, out);
  if (st != TB_OK) {
    atomic_init(&s->refs, 1);
    tb_storage_release(s);
  }
  return st;
}

void tb_exec_set_conv_algo(tb_exec *e, tb_conv_algo conv_algo) {
  e->conv_algo = conv_algo;
  for (size_t i = 0; i < e->n_children; i++) tb_exec_set_conv_algo(e->children[i].exec, conv_algo);
}

void tb_exec_set_device_precision(tb_exec *e, tb_device_precision precision) {
  e->device_precision = precision;
  for (size_t i = 0; i < e->n_children; i++) tb_exec_set_device_precision(e->children[i].exec, precision);
}

void tb_exec_set_inter_op(tb_exec *e, tb_inter_op mode) {
  e->inter_op = mode == TB_INTER_OP_DEFAULT ? TB_INTER_OP_AUTO : mode;
  e->planned = false; /* planned again, with the regions of this mode, at the next run */
}

const tb_interop_plan *tb_exec_interop(const tb_exec *e) { return e->planned ? &e->interop : NULL; }

void tb_exec_interop_counts(const tb_exec *e, uint64_t *regions_run, uint64_t *lanes_on_workers) {
  *regions_run = e->regions_run;
  *lanes_on_workers = e->lanes_on_workers;
}

const tb_plan *tb_exec_plan(const tb_exec *e) { return e->planned ? &e->plan : NULL; }

void tb_exec_set_bf16_mode(tb_exec *e, tb_bf16_mode mode, bool cpu_has_bf16) {
  e->bf16_mode = mode;
  e->cpu_has_bf16 = cpu_has_bf16;
}

static void free_scratch(node_scratch *s) {
  free(s->in);
  free(s->tmp);
  free(s->out);
  free(s->in_types);
  free(s->in_ptrs);
  free(s->views);
  free(s->known);
}

static void free_lane_scratch(tb_exec *e) {
  for (size_t i = 0; i < e->n_lane_scratch; i++) free_scratch(&e->lane_scratch[i]);
  free(e->lane_scratch);
  e->lane_scratch = NULL;
  e->n_lane_scratch = 0;
}

/* A scratch for nodes of up to max_in inputs and max_out outputs; false when out of memory. */
static bool alloc_scratch(node_scratch *s, size_t max_in, size_t max_out, bool lane) {
  *s = (node_scratch){.lane = lane};
  s->in = calloc(max_in, sizeof *s->in);
  s->tmp = calloc(max_in, sizeof *s->tmp);
  s->in_types = calloc(max_in, sizeof *s->in_types);
  s->in_ptrs = calloc(max_in, sizeof *s->in_ptrs);
  s->views = calloc(max_in, sizeof *s->views);
  s->known = calloc(max_in, sizeof *s->known);
  s->out = calloc(max_out, sizeof *s->out);
  return s->in && s->tmp && s->in_types && s->in_ptrs && s->views && s->known && s->out;
}

/* A scratch per lane of the widest region. */
static tb_status lane_scratch_for(tb_exec *e, size_t lanes) {
  if (lanes <= e->n_lane_scratch) return TB_OK;
  free_lane_scratch(e);
  e->lane_scratch = calloc(lanes, sizeof *e->lane_scratch);
  if (!e->lane_scratch) return tb_error(TB_ERR_OUT_OF_MEMORY, "graph '%s': out of memory for the executor", e->g->name);
  e->n_lane_scratch = lanes;
  for (size_t i = 0; i < lanes; i++)
    if (!alloc_scratch(&e->lane_scratch[i], e->max_in, e->max_out, true)) {
      free_lane_scratch(e);
      return tb_error(TB_ERR_OUT_OF_MEMORY, "graph '%s': out of memory for the executor", e->g->name);
    }
  return TB_OK;
}

/* Destroy t, value v's tensor, unless it is v's arena view (kept for the next run). */
static void drop_tensor(const tb_exec *e, int v, tb_tensor *t) {
  if (t && (v < 0 || !e->arena_views || t != e->arena_views[v]) && !tb_exec_is_device_view(e, v, t)) tb_tensor_destroy(t);
}

static void drop_arena_views(tb_exec *e) {
  for (size_t v = 0; e->arena_views && v < e->g->n_values; v++) {
    tb_tensor_destroy(e->arena_views[v]);
    e->arena_views[v] = NULL;
  }
}

void tb_exec_destroy(tb_exec *e) {
  if (!e) return;
  for (size_t i = 0; i < e->n_children; i++) tb_exec_destroy(e->children[i].exec);
  free(e->children);
  tb_exec_release_states(e);
  tb_exec_release_free(e);
  for (size_t v = 0; v < e->g->n_values; v++) {
    if (e->vals && e->owned[v]) drop_tensor(e, v, e->vals[v]);
    if (e->mirror) tb_tensor_destroy(e->mirror[v]);
    if (e->consts) tb_tensor_destroy(e->consts[v]);
  }
  if (e->cache)
    for (size_t i = 0; i < e->g->n_nodes; i++) {
      free(e->cache[i].in);
      free(e->cache[i].out);
    }
  free(e->cache);
  free(e->in);
  free(e->tmp);
  free(e->out);
  free(e->in_types);
  free(e->in_ptrs);
  free(e->views);
  free(e->known);
  free(e->consts);
  free(e->vals);
  free(e->mirror);
  free(e->owned);
  free(e->plan_types);
  free(e->sig);
  free(e->seen);
  drop_arena_views(e);
  free(e->arena_views);
  tb_tensor_destroy(e->arena);
  tb_exec_device_plan_drop(e);
  free(e->free_at);
  free(e->free_list);
  free(e->node_ms);
  free(e->node_runs);
  tb_exec_timer_free(e);
  tb_plan_free(&e->life);
  tb_plan_free(&e->plan);
  tb_interop_free(&e->interop);
  free_lane_scratch(e);
  pthread_mutex_destroy(&e->lane_lock);
  free(e);
}

/* For each step, the values whose last use it is. */
static tb_status free_lists(tb_exec *e) {
  const tb_graph *g = e->g;
  e->free_at = calloc(g->n_nodes + 2, sizeof *e->free_at);
  e->free_list = malloc((g->n_values ? g->n_values : 1) * sizeof *e->free_list);
  if (!e->free_at || !e->free_list) return tb_error(TB_ERR_OUT_OF_MEMORY, "graph '%s': out of memory for the executor", g->name);
  for (size_t v = 0; v < g->n_values; v++)
    if (e->life.last[v] >= 0 && (size_t)e->life.last[v] < g->n_nodes) e->free_at[e->life.last[v] + 1]++;
  for (size_t i = 0; i < g->n_nodes; i++) e->free_at[i + 1] += e->free_at[i];
  size_t *fill = calloc(g->n_nodes + 1, sizeof *fill);
  if (!fill) return tb_error(TB_ERR_OUT_OF_MEMORY, "graph '%s': out of memory for the executor", g->name);
  for (size_t v = 0; v < g->n_values; v++) {
    int last = e->life.last[v];
    if (last >= 0 && (size_t)last < g->n_nodes) e->free_list[e->free_at[last] + fill[last]++] = (int)v;
  }
  free(fill);
  return TB_OK;
}

tb_status tb_exec_create(const tb_graph *g, tb_backend *cpu, tb_kernel_level level, uint64_t features, int threads, tb_exec **out) {
  *out = NULL;
  tb_exec *e = calloc(1, sizeof *e);
  if (!e) return tb_error(TB_ERR_OUT_OF_MEMORY, "graph '%s': out of memory for the executor", g->name);
  e->g = g;
  e->cpu = cpu;
  e->level = level;
  e->features = features;
  e->threads = threads > 0 ? threads : tb_pool_default_threads();
  e->pool = tb_pool_shared(e->threads);
  e->conv_algo = TB_CONV_ALGO_AUTO;
  e->inter_op = TB_INTER_OP_OFF;
  pthread_mutex_init(&e->lane_lock, NULL);
  size_t nv = g->n_values ? g->n_values : 1, nn = g->n_nodes ? g->n_nodes : 1;
  e->consts = calloc(nv, sizeof *e->consts);
  e->vals = calloc(nv, sizeof *e->vals);
  e->mirror = calloc(nv, sizeof *e->mirror);
  e->owned = calloc(nv, sizeof *e->owned);
  e->seen = calloc(nv, sizeof *e->seen);
  e->plan_types = calloc(nv, sizeof *e->plan_types);
  e->arena_views = calloc(nv, sizeof *e->arena_views);
  e->sig = calloc(g->n_inputs ? g->n_inputs : 1, sizeof *e->sig);
  e->cache = calloc(nn, sizeof *e->cache);
  tb_status st = TB_OK;
  if (!e->consts || !e->vals || !e->mirror || !e->owned || !e->seen || !e->plan_types || !e->arena_views || !e->sig || !e->cache)
    st = tb_error(TB_ERR_OUT_OF_MEMORY, "graph '%s': out of memory for the executor", g->name);
  for (size_t i = 0; i < g->n_nodes && st == TB_OK; i++) {
    const tb_node *n = &g->nodes[i];
    e->cache[i].in = calloc(n->n_inputs ? n->n_inputs : 1, sizeof(tb_value_type));
    e->cache[i].out = calloc(n->n_outputs ? n->n_outputs : 1, sizeof(tb_value_type));
    e->cache[i].constant_inputs = tb_kernel_constant_inputs(g, n);
    e->cache[i].omitted_outputs = tb_kernel_omitted_outputs(n);
    if (!e->cache[i].in || !e->cache[i].out)
      st = tb_error(TB_ERR_OUT_OF_MEMORY, "graph '%s': out of memory for the executor", g->name);
  }
  size_t max_in = 1, max_out = 1;
  for (size_t i = 0; i < g->n_nodes; i++) {
    if (g->nodes[i].n_inputs > max_in) max_in = g->nodes[i].n_inputs;
    if (g->nodes[i].n_outputs > max_out) max_out = g->nodes[i].n_outputs;
  }
  e->max_in = max_in;
  e->max_out = max_out;
  e->in = calloc(max_in, sizeof *e->in);
  e->tmp = calloc(max_in, sizeof *e->tmp);
  e->in_types = calloc(max_in, sizeof *e->in_types);
  e->in_ptrs = calloc(max_in, sizeof *e->in_ptrs);
  e->views = calloc(max_in, sizeof *e->views);
  e->known = calloc(max_in, sizeof *e->known);
  e->out = calloc(max_out, sizeof *e->out);
  if (st == TB_OK && (!e->in || !e->tmp || !e->in_types || !e->in_ptrs || !e->views || !e->known || !e->out))
    st = tb_error(TB_ERR_OUT_OF_MEMORY, "graph '%s': out of memory for the executor", g->name);
  for (size_t v = 0; v < g->n_values && st == TB_OK; v++)
    if (g->values[v].constant) st = const_tensor(cpu, g->values[v].constant, &e->consts[v]);
  if (st == TB_OK) st = tb_plan_lifetimes(g, &e->life);
  if (st == TB_OK) st = free_lists(e);
  if (st != TB_OK) {
    tb_exec_destroy(e);
    return st;
  }
  *out = e;
  return TB_OK;
}

static tb_status make_arena(tb_exec *e) {
  drop_arena_views(e);
  tb_tensor_destroy(e->arena);
  e->arena = NULL;
  if (!e->plan.arena_bytes) return TB_OK;
  int64_t bytes = (int64_t)e->plan.arena_bytes;
  return tb_tensor_create(e->cpu, TB_DTYPE_U8, 1, &bytes, &e->arena);
}

/* Plan from the types in types[v]; sig from the graph inputs' types. */
static tb_status plan_from(tb_exec *e, const tb_value_type *types) {
  const tb_graph *g = e->g;
  uint64_t *bytes = calloc(g->n_values ? g->n_values : 1, sizeof *bytes);
  if (!bytes) return tb_error(TB_ERR_OUT_OF_MEMORY, "graph '%s': out of memory for the memory plan", g->name);
  for (size_t v = 0; v < g->n_values; v++) {
    int producer = g->values[v].producer;
    bool on_device = producer >= 0 && e->placement && e->placement[producer].side != TB_EXEC_CPU;
    bytes[v] = on_device ? 0 : tb_plan_value_bytes(&types[v]);
  }
  e->planned = false;
  tb_interop_free(&e->interop);
  bool cpu_only = !e->device && !e->parent && e->pool;
  tb_status st = tb_interop_find(g, types, cpu_only ? e->threads : 1, e->inter_op, &e->interop);
  tb_plan_span *spans = st == TB_OK ? calloc(e->interop.n_regions + 1, sizeof *spans) : NULL;
  if (st == TB_OK && !spans) st = tb_error(TB_ERR_OUT_OF_MEMORY, "graph '%s': out of memory for the memory plan", g->name);
  for (size_t r = 0; spans && r < e->interop.n_regions; r++)
    spans[r] = (tb_plan_span){e->interop.regions[r].begin, e->interop.regions[r].end - 1};
  if (st == TB_OK && e->interop.n_regions)
    tb_log(TB_LOG_DEBUG, "graph '%s': %zu inter-op regions, %zu lanes (at most %zu in one)", g->name, e->interop.n_regions,
           e->interop.n_lanes, e->interop.max_lanes);
  if (st == TB_OK) st = lane_scratch_for(e, e->interop.max_lanes);
  if (st == TB_OK) st = tb_plan_build_spans(g, bytes, spans, e->interop.n_regions, &e->plan);
  free(spans);
  free(bytes);
  if (st != TB_OK) tb_interop_free(&e->interop);
  if (st == TB_OK) st = make_arena(e);
  if (st != TB_OK) {
    tb_plan_free(&e->plan);
    return st;
  }
  memcpy(e->plan_types, types, g->n_values * sizeof *types);
  for (size_t k = 0; k < g->n_inputs; k++) e->sig[k] = types[g->inputs[k]];
  e->planned = true;
  e->plans_made++;
  tb_exec_device_plan(e, types); /* the device's values in one arena of its own (best effort) */
  return TB_OK;
}

bool tb_exec_plan_static(tb_exec *e) {
  const tb_graph *g = e->g;
  tb_value_type *types = calloc(g->n_values ? g->n_values : 1, sizeof *types);
  if (!types) return false;
  bool complete = true;
  for (size_t v = 0; v < g->n_values && complete; v++) {
    types[v] = g->values[v].type;
    const tb_value *val = &g->values[v];
    bool needed = val->is_input || (e->life.first[v] >= 0 && !val->constant);
    if (needed && !tb_value_type_complete(&val->type)) complete = false;
  }
  bool ok = complete && plan_from(e, types) == TB_OK;
  free(types);
  return ok;
}

uint64_t tb_exec_planned_bytes(const tb_exec *e) {
  return e && e->planned ? e->plan.arena_bytes + tb_exec_device_planned_bytes(e) : 0;
}
size_t tb_exec_plan_count(const tb_exec *e) { return e ? e->plans_made : 0; }

static void static_in_types(const tb_graph *g, const tb_node *n, const tb_value_type **in) { /* in: e->in_ptrs */
  for (size_t k = 0; k < n->n_inputs; k++) in[k] = n->inputs[k] >= 0 ? &g->values[n->inputs[k]].type : NULL;
}

size_t tb_exec_missing_kernels(const tb_exec *e, char *buf, size_t cap) {
  const tb_graph *g = e->g;
  size_t missing = 0;
  for (size_t i = 0; i < g->n_nodes; i++) {
    const tb_node *n = &g->nodes[i];
    const tb_value_type **in = e->in_ptrs;
    static_in_types(g, n, in);
    bool typed = true;
    for (size_t k = 0; k < n->n_inputs; k++) typed &= !in[k] || in[k]->has_dtype;
    bool on_device = e->placement && e->placement[i].side != TB_EXEC_CPU;
    if (!typed || on_device || tb_exec_cpu_kernel(e, n, in)) continue;
    if (!missing++ && buf && cap) tb_node_label(g, n, buf, cap);
  }
  return missing;
}

static bool graph_uses_fast_kernels(const tb_exec *e, const tb_graph *g, const tb_value_type *types);

static bool body_uses_fast_kernels(const tb_exec *e, const tb_graph *body, const tb_value_type *outer_types) {
  tb_value_type *types = tb_exec_body_types(body, outer_types, 0, NULL);
  bool fast = types && graph_uses_fast_kernels(e, body, types);
  free(types);
  return fast;
}

/* Whether a node of g, or of its If/Loop/Scan bodies, gets a CPU kernel of level > 0 for the types known
 * before running (types: per value of g). */
static bool graph_uses_fast_kernels(const tb_exec *e, const tb_graph *g, const tb_value_type *types) {
  bool fast = false;
  for (size_t i = 0; i < g->n_nodes && !fast; i++) {
    const tb_node *n = &g->nodes[i];
    if (n->dead) continue;
    const tb_value_type **in = calloc(n->n_inputs ? n->n_inputs : 1, sizeof *in);
    if (!in) return false;
    for (size_t k = 0; k < n->n_inputs; k++) in[k] = n->inputs[k] >= 0 ? &types[n->inputs[k]] : NULL;
    const tb_kernel *k = tb_exec_cpu_kernel(e, n, in);
    free(in);
    fast = k && k->level > TB_KERNEL_REFERENCE;
    for (size_t a = 0; a < n->n_attrs && !fast; a++) {
      const tb_attr *at = &n->attrs[a];
      if (at->type == TB_ATTR_GRAPH && at->g) fast = body_uses_fast_kernels(e, at->g, types);
      for (size_t b = 0; at->type == TB_ATTR_GRAPHS && at->graphs && b < at->count && !fast; b++)
        fast = at->graphs[b] && body_uses_fast_kernels(e, at->graphs[b], types);
    }
  }
  return fast;
}

bool tb_exec_uses_fast_kernels(const tb_exec *e) {
  const tb_graph *g = e->g;
  tb_value_type *types = calloc(g->n_values ? g->n_values : 1, sizeof *types);
  if (!types) return false;
  for (size_t v = 0; v < g->n_values; v++) types[v] = g->values[v].type;
  bool fast = graph_uses_fast_kernels(e, g, types);
  free(types);
  return fast;
}

/* ---- Running -------------------------------------------------------------------------------------- */

static tb_status run_graph(tb_exec *e, tb_tensor *const *inputs, tb_tensor **outputs);

tb_status tb_exec_run_subgraph(tb_kernel_ctx *ctx, const tb_graph *body, size_t n_inputs, tb_tensor *const *inputs,
                              size_t n_outputs, tb_tensor **outputs) {
  tb_exec *e = ctx->exec;
  if (n_inputs != body->n_inputs || n_outputs != body->n_outputs)
    return tb_kernel_error(ctx, TB_ERR_MODEL, "subgraph '%s' takes %zu inputs and gives %zu outputs; called with %zu and %zu",
                           body->name, body->n_inputs, body->n_outputs, n_inputs, n_outputs);
  tb_exec *child = NULL;
  for (size_t i = 0; i < e->n_children; i++)
    if (e->children[i].body == body) child = e->children[i].exec;
  if (!child) {
    child_exec *grown = realloc(e->children, (e->n_children + 1) * sizeof *grown);
    if (!grown) return tb_kernel_error(ctx, TB_ERR_OUT_OF_MEMORY, "out of memory for subgraph '%s'", body->name);
    e->children = grown;
    /* a body's nodes get no bf16 trial (they are placed at their first run): under a trial they keep fp32 */
    tb_kernel_level level = e->bf16_mode == TB_BF16_TRIAL && e->level > TB_KERNEL_FAST ? TB_KERNEL_FAST : e->level;
    tb_status st = tb_exec_create(body, e->cpu, level, e->features, e->threads, &child);
    if (st != TB_OK) return st;
    child->conv_algo = e->conv_algo;
    child->device_precision = e->device_precision;
    e->children[e->n_children++] = (child_exec){body, child};
    child->parent = e;
    /* a node on a device runs its body there: the body's nodes placed on the same device (tb_exec_place_body) */
    if (ctx->backend && ctx->backend != e->cpu && e->device && (st = tb_exec_place_body(e, child, inputs)) != TB_OK) {
      tb_exec_destroy(child);
      e->n_children--; /* placed again at the next call */
      return st;
    }
  }
  child->parent = e;
  if (!e->node_ms != !child->node_ms) {
    tb_status st = tb_exec_set_profiling(child, e->node_ms != NULL);
    if (st != TB_OK) return st;
  }
  double t0 = e->node_ms ? now_ms() : 0;
  tb_status st = run_graph(child, inputs, outputs);
  if (e->node_ms) e->subgraph_ms += now_ms() - t0; /* the calling node's time leaves it out */
  return st;
}

/* Free the values whose last use was `step`. */
static void release_after(tb_exec *e, size_t step) {
  for (size_t i = e->free_at[step]; i < e->free_at[step + 1]; i++) {
    int v = e->free_list[i];
    tb_exec_drop_mirror(e, v); /* also the copies on the other sides */
    if (e->vals[v] && e->owned[v]) {
      drop_tensor(e, v, e->vals[v]);
      e->vals[v] = NULL;
      e->owned[v] = false;
    }
  }
}

/* A contiguous CPU tensor's bytes as a constant, for inference that needs the value. */
static void value_view(const tb_value *val, const tb_tensor *t, tb_ir_tensor *out) {
  memset(out, 0, sizeof *out);
  out->name = val->name;
  out->dtype = tb_tensor_dtype(t);
  out->ndim = tb_tensor_ndim(t);
  memcpy(out->dims, tb_tensor_shape(t), out->ndim * sizeof(int64_t));
  out->data = tb_tensor_host_data(t);
  out->nbytes = tb_tensor_nbytes(t);
}

/* An output tensor for a node: on the kernel's device side for a device or route kernel; else in the arena
 * when the plan placed it with this type, else its own. */
static tb_status alloc_output(tb_exec *e, int side, int v, const tb_value_type *t, tb_tensor **out) {
  *out = NULL;
  if (v < 0 || !tb_value_type_complete(t)) return TB_OK;
  int64_t shape[TB_MAX_DIMS];
  for (size_t d = 0; d < t->ndim; d++) shape[d] = t->dims[d].value;
  if (side == TB_EXEC_DEVICE) {
    tb_status st = tb_exec_device_view(e, v, t, shape, out); /* in the device's arena when the plan placed it */
    if (st != TB_OK || *out) return st;
  }
  if (side != TB_EXEC_CPU) return tb_tensor_create(tb_exec_side_backend(e, side), t->dtype, t->ndim, shape, out);
  if (e->planned && e->arena && e->plan.offset[v] >= 0 && same_type(t, &e->plan_types[v])) {
    if (!e->arena_views[v]) {
      size_t es = tb_dtype_size(t->dtype);
      int64_t numel, strides[TB_MAX_DIMS];
      tb_status st = tb_shape_check("plan", t->ndim, shape, es, &numel, strides);
      if (st == TB_OK)
        st = tb_tensor_wrap(e->arena->storage, t->dtype, t->ndim, shape, strides, e->plan.offset[v] / (int64_t)es,
                            &e->arena_views[v]);
      if (st != TB_OK) return st;
    }
    *out = e->arena_views[v];
    return TB_OK;
  }
  return tb_tensor_create(e->cpu, t->dtype, t->ndim, shape, out);
}

/* Infer the node's outputs from its inputs' types (and the values it reads), and choose its kernel when the
 * types changed. */
static tb_status infer_and_choose(tb_exec *e, size_t step, bool changed, node_scratch *s) {
  const tb_graph *g = e->g;
  const tb_node *n = &g->nodes[step];
  node_cache *c = &e->cache[step];
  tb_status st = TB_OK;
  for (size_t k = 0; k < n->n_inputs && st == TB_OK; k++) {
    int v = n->inputs[k];
    s->known[k] = NULL;
    if (!s->in[k]) continue;
    if (g->values[v].constant && !g->values[v].is_input) s->known[k] = g->values[v].constant;
    else if (tb_node_reads_value(n, k)) {
      tb_tensor *src = NULL;
      st = tb_exec_value_on(e, v, TB_EXEC_CPU, &src);
      if (st == TB_OK && !tb_tensor_is_contiguous(src)) {
        st = tb_tensor_create(e->cpu, tb_tensor_dtype(src), tb_tensor_ndim(src), tb_tensor_shape(src), &s->tmp[k]);
        if (st == TB_OK) st = tb_tensor_copy(s->tmp[k], src);
        src = s->tmp[k];
      }
      if (st == TB_OK) {
        value_view(&g->values[v], src, &s->views[k]);
        s->known[k] = &s->views[k];
      }
    }
  }
  if (st == TB_OK) st = tb_infer_node(g, n, s->in_ptrs, s->known, c->out);
  if (st == TB_OK && changed) {
    for (size_t k = 0; k < n->n_inputs; k++) {
      if (s->in[k]) c->in[k] = s->in_types[k];
      else memset(&c->in[k], 0, sizeof c->in[k]);
    }
    c->kernel = tb_exec_choose_kernel(e, step, s->in_ptrs, &c->side);
    c->valid = true;
  }
  return st;
}

static tb_status no_kernel_error(const tb_exec *e, const tb_node *n, tb_tensor *const *in) {
  char types[256] = "", label[200];
  size_t len = 0;
  for (size_t k = 0; k < n->n_inputs && len < sizeof types; k++)
    len += (size_t)snprintf(types + len, sizeof types - len, "%s%s", k ? ", " : "", in[k] ? tb_dtype_name(tb_tensor_dtype(in[k])) : "-");
  return tb_error(TB_ERR_UNSUPPORTED, "%s: no CPU kernel for inputs (%s) at the %s kernel level", tb_node_label(e->g, n, label, sizeof label),
                  types, tb_kernel_level_name(e->level));
}

/* Keep the node's outputs as their values (the values' old tensors and copies go). */
static tb_status keep_outputs(tb_exec *e, const tb_node *n, tb_status st, tb_tensor **out) {
  char label[200];
  for (size_t o = 0; o < n->n_outputs && st == TB_OK; o++) {
    if (n->outputs[o] >= 0 && !out[o])
      st = tb_error(TB_ERR_INTERNAL, "%s: the kernel left output %zu ('%s') unset", tb_node_label(e->g, n, label, sizeof label), o,
                    e->g->values[n->outputs[o]].name);
  }
  for (size_t o = 0; o < n->n_outputs; o++) {
    int v = n->outputs[o];
    if (st != TB_OK || v < 0) {
      drop_tensor(e, v, out[o]);
      continue;
    }
    tb_exec_drop_mirror(e, v);
    if (e->vals[v] && e->owned[v] && e->vals[v] != out[o]) drop_tensor(e, v, e->vals[v]);
    e->vals[v] = out[o];
    e->owned[v] = true;
    if (!e->planned) tb_value_type_of(out[o], &e->seen[v]); /* for the plan made after this run */
  }
  return st;
}

/* Every input whose value the node's inference reads (tb_op_def.value_inputs: Slice's starts/ends, Squeeze's
 * axes, Reshape's shape, ...) is absent or a model constant that no run can change (tb_kernel_constant_inputs,
 * the rule the kernels' prepared plans use), so the output types inferred when the input types last changed
 * still hold: the run skips the inference. */
static bool value_inputs_fixed(const tb_graph *g, const tb_node *n) {
  uint64_t read = 0;
  for (size_t k = 0; k < n->n_inputs && k < 32; k++)
    if ((n->def->value_inputs & (1u << k)) && n->inputs[k] >= 0) read |= (uint64_t)1 << k;
  return (tb_kernel_constant_inputs(g, n) & read) == read;
}

/* Whether node `step` runs on the CPU with its cached kernel and state as they are (nothing to choose or make
 * again for inputs of its cached types; inference from the values it reads only writes its own cache). */
static bool node_settled(const tb_exec *e, size_t step) {
  const node_cache *c = &e->cache[step];
  return c->valid && c->kernel && c->state_kernel == c->kernel && c->side == TB_EXEC_CPU;
}

/* Run node `step` with scratch s. In an inter-op lane (s->lane) the kernel gets no pool, and what changes the
 * executor's shared state (inference, the kernel choice, making a kernel state) is done under lane_lock. */
static tb_status run_node_with(tb_exec *e, size_t step, node_scratch *s) {
  const tb_graph *g = e->g;
  const tb_node *n = &g->nodes[step];
  node_cache *c = &e->cache[step];
  tb_tensor **in = s->in, **out = s->out;
  bool changed = !c->valid;
  tb_status st = TB_OK;
  for (size_t k = 0; k < n->n_inputs; k++) {
    int v = n->inputs[k];
    s->tmp[k] = NULL;
    in[k] = v >= 0 ? e->vals[v] : NULL;
    if (!changed) changed = in[k] ? !tensor_has_type(in[k], &c->in[k]) : c->in[k].has_dtype;
  }
  /* the kernel sees its input types: the cached ones while they hold, else those of the tensors */
  for (size_t k = 0; k < n->n_inputs; k++) {
    s->in_ptrs[k] = NULL;
    if (!in[k]) continue;
    if (!changed) {
      s->in_ptrs[k] = &c->in[k];
      continue;
    }
    tb_value_type_of(in[k], &s->in_types[k]);
    s->in_ptrs[k] = &s->in_types[k];
  }
  bool locked = s->lane && (changed || !node_settled(e, step));
  if (locked) pthread_mutex_lock(&e->lane_lock);
  if (changed || (n->def && n->def->value_inputs && !value_inputs_fixed(g, n))) st = infer_and_choose(e, step, changed, s);
  if (st == TB_OK && !c->kernel) st = no_kernel_error(e, n, in);
  for (size_t k = 0; k < n->n_inputs && st == TB_OK; k++)
    if (in[k]) st = tb_exec_value_on(e, n->inputs[k], tb_node_reads_value(n, k) ? TB_EXEC_CPU : c->side, &in[k]);
  if (st == TB_OK) st = tb_exec_kernel_state(e, step, in, s->in_ptrs);
  if (locked) pthread_mutex_unlock(&e->lane_lock);
  for (size_t o = 0; o < n->n_outputs; o++) out[o] = NULL;
  for (size_t o = 0; o < n->n_outputs && st == TB_OK; o++) st = alloc_output(e, c->side, n->outputs[o], &c->out[o], &out[o]);
  if (st == TB_OK) {
    tb_kernel_ctx kc = tb_exec_kernel_ctx(e, step, c->side, in, s->in_ptrs, out, c->state);
    if (s->lane) { /* its share of the threads: one */
      kc.pool = NULL;
      kc.threads = 1;
    }
    bool device_timed = e->node_ms && c->side != TB_EXEC_CPU && tb_exec_timer_start(e, c->side);
    double t0 = e->node_ms ? now_ms() : 0, sub0 = e->subgraph_ms;
    st = c->kernel->run(&kc);
    if (st == TB_OK && e->node_ms) {
      double ms = 0;
      if (device_timed) st = tb_exec_timer_stop(e, &ms); /* the device's own time for the node's launches */
      else if (c->side != TB_EXEC_CPU) st = tb_backend_synchronize(tb_exec_side_backend(e, c->side)); /* its own time, not its enqueue */
      if (!device_timed) ms = now_ms() - t0 - (e->subgraph_ms - sub0); /* its subgraphs' nodes have theirs */
      e->node_ms[step] += ms;
      e->node_runs[step]++;
    }
    if (st == TB_OK) break_outputs(e, n, out);
  }
  for (size_t k = 0; k < n->n_inputs; k++) tb_tensor_destroy(s->tmp[k]);
  return tb_node_name_error(g, n, keep_outputs(e, n, st, out));
}

static tb_status run_node(tb_exec *e, size_t step) {
  node_scratch s = {e->in, e->tmp, e->out, e->in_types, e->in_ptrs, e->views, e->known, false};
  return run_node_with(e, step, &s);
}

/* ---- Inter-op regions ---------------------------------------------------------------------------------------------- */

typedef struct region_job {
  tb_exec *e;
  const tb_interop_region *r;
  pthread_t caller;
  atomic_int failed;       /* set by the first lane that fails: the others stop before their next node */
  atomic_uint_fast64_t on_workers;
  tb_status st;            /* the first failure, and its sentence (the failing thread's tb_last_error) */
  char message[1024];
} region_job;

static void run_lanes(void *p, size_t begin, size_t end) {
  region_job *j = p;
  tb_exec *e = j->e;
  for (size_t l = begin; l < end; l++) {
    const tb_interop_lane *lane = &e->interop.lanes[j->r->first_lane + l];
    if (!pthread_equal(pthread_self(), j->caller)) atomic_fetch_add_explicit(&j->on_workers, 1, memory_order_relaxed);
    for (size_t i = 0; i < lane->count; i++) {
      if (atomic_load_explicit(&j->failed, memory_order_acquire)) return;
      tb_status st = run_node_with(e, (size_t)e->interop.steps[lane->first + i], &e->lane_scratch[l]);
      if (st != TB_OK) {
        if (!atomic_exchange_explicit(&j->failed, 1, memory_order_acq_rel)) {
          j->st = st;
          snprintf(j->message, sizeof j->message, "%s", tb_last_error());
        }
        return;
      }
    }
  }
}

/* The region's lanes at the same time, one per pool thread (each node on one thread), when every node of it
 * is settled (after the first run); else its steps in turn. Values whose last use is in the region are
 * released after it. */
static tb_status run_region(tb_exec *e, const tb_interop_region *r) {
  bool settled = true;
  for (int i = r->begin; i < r->end && settled; i++) settled = node_settled(e, (size_t)i);
  tb_status st = TB_OK;
  if (!settled) {
    for (int i = r->begin; i < r->end && st == TB_OK; i++) st = run_node(e, (size_t)i);
  } else {
    region_job j = {.e = e, .r = r, .caller = pthread_self(), .st = TB_OK};
    atomic_init(&j.failed, 0);
    atomic_init(&j.on_workers, 0);
    tb_pool_parallel_for(e->pool, r->n_lanes, run_lanes, &j);
    e->regions_run++;
    e->lanes_on_workers += atomic_load(&j.on_workers);
    if (atomic_load(&j.failed)) st = tb_error(j.st, "%s", j.message); /* the sentence on the caller's thread */
  }
  for (int i = r->begin; i < r->end && st == TB_OK; i++) release_after(e, (size_t)i);
  return st;
}

/* The node hook sees CPU tensors: device outputs are copied (the copies live until the values go). */
static tb_status call_hook(tb_exec *e, const tb_node *n) {
  for (size_t o = 0; o < n->n_outputs; o++) {
    e->out[o] = NULL;
    if (n->outputs[o] < 0) continue;
    tb_status st = tb_exec_value_on(e, n->outputs[o], TB_EXEC_CPU, &e->out[o]);
    if (st != TB_OK) return st;
  }
  e->node_hook(e->node_hook_ctx, e->g, n, e->out);
  return TB_OK;
}

/* Bind graph inputs (borrowed), constants (borrowed) and outer-scope values (borrowed from the parent). */
static tb_status bind(tb_exec *e, tb_tensor *const *inputs) {
  const tb_graph *g = e->g;
  for (size_t v = 0; v < g->n_values; v++) {
    e->vals[v] = NULL;
    e->owned[v] = false;
    if (e->consts[v]) e->vals[v] = e->consts[v];
    if (g->values[v].outer >= 0 && e->parent) e->vals[v] = e->parent->vals[g->values[v].outer];
  }
  for (size_t k = 0; k < g->n_inputs; k++) {
    int v = g->inputs[k];
    if (inputs[k]) e->vals[v] = inputs[k];
    if (!e->vals[v])
      return tb_error(TB_ERR_INVALID_ARGUMENT, "graph '%s': input '%s' was not given and has no default", g->name,
                      g->values[v].name);
    tb_value_type_of(e->vals[v], &e->seen[v]);
  }
  return TB_OK;
}

static void unbind(tb_exec *e) {
  for (size_t v = 0; v < e->g->n_values; v++) {
    tb_exec_drop_mirror(e, v); /* also the copies on the other sides */
    if (e->vals[v] && e->owned[v]) drop_tensor(e, v, e->vals[v]);
    e->vals[v] = NULL;
    e->owned[v] = false;
  }
}

/* Hand the graph outputs to the caller: owned tensors move, borrowed ones are copied. */
static tb_status take_outputs(tb_exec *e, tb_tensor **outputs) {
  const tb_graph *g = e->g;
  tb_status st = TB_OK;
  for (size_t k = 0; k < g->n_outputs; k++) outputs[k] = NULL;
  for (size_t k = 0; k < g->n_outputs && st == TB_OK; k++) {
    int v = g->outputs[k];
    tb_tensor *t = e->vals[v];
    if (!t) {
      st = tb_error(TB_ERR_INTERNAL, "graph '%s': output '%s' was not computed", g->name, g->values[v].name);
      break;
    }
    bool again = false;
    for (size_t j = 0; j < k; j++) again |= g->outputs[j] == v;
    bool in_arena = e->arena && t->storage == e->arena->storage;
    if (e->owned[v] && !again && !in_arena) {
      outputs[k] = t; /* moved; a later duplicate of this output copies from it */
      e->owned[v] = false;
      continue;
    }
    /* a body's output stays on the side that holds it (a loop-carried value on the device stays there) */
    tb_backend *where = e->parent ? tb_tensor_backend(t) : e->cpu;
    st = tb_tensor_create(where, tb_tensor_dtype(t), tb_tensor_ndim(t), tb_tensor_shape(t), &outputs[k]);
    if (st == TB_OK) st = tb_tensor_copy(outputs[k], t);
  }
  for (size_t k = 0; k < g->n_outputs; k++) {
    int v = g->outputs[k];
    if (!e->owned[v]) e->vals[v] = NULL;
  }
  if (st != TB_OK)
    for (size_t k = 0; k < g->n_outputs; k++) {
      tb_tensor_destroy(outputs[k]);
      outputs[k] = NULL;
    }
  return st;
}

static tb_status run_graph(tb_exec *e, tb_tensor *const *inputs, tb_tensor **outputs) {
  static atomic_uint_fast64_t runs;
  const tb_graph *g = e->g;
  e->run_id = (uint64_t)atomic_fetch_add(&runs, 1) + 1;
  tb_status st = bind(e, inputs);
  if (st == TB_OK && e->planned) {
    for (size_t k = 0; k < g->n_inputs; k++)
      if (!same_type(&e->seen[g->inputs[k]], &e->sig[k])) {
        e->planned = false; /* other input shapes: run without the plan, plan again after */
        break;
      }
  }
  if (st == TB_OK && !e->planned) /* the types this run sees, for the plan made after it */
    for (size_t v = 0; v < g->n_values; v++)
      if (!g->values[v].is_input) memset(&e->seen[v], 0, sizeof e->seen[v]);
  bool regions = e->planned && e->interop.n_regions && e->pool && !(e->node_hook && !e->parent);
  for (size_t i = 0; i < g->n_nodes && st == TB_OK;) {
    int r = regions ? e->interop.region_at[i] : -1;
    if (r >= 0) {
      st = run_region(e, &e->interop.regions[r]);
      i = (size_t)e->interop.regions[r].end;
      continue;
    }
    st = run_node(e, i);
    if (st == TB_OK && e->node_hook && !e->parent) st = call_hook(e, &g->nodes[i]);
    if (st == TB_OK) release_after(e, i);
    i++;
  }
  if (st == TB_OK) st = take_outputs(e, outputs);
  unbind(e);
  if (st == TB_OK && !e->planned) {
    tb_status plan_st = plan_from(e, e->seen);
    (void)plan_st; /* without a plan the next run allocates each value: slower, still correct */
  }
  return st;
}

tb_status tb_exec_run(tb_exec *e, tb_tensor *const *inputs, tb_tensor **outputs) {
  e->parent = NULL;
  return run_graph(e, inputs, outputs);
}
