/* tb_model_prepare: a copy of the model's graph (the loaded model never changes), symbolic dims bound,
 * the passes of the level run in order (each followed by sort, compact, check and inference), kernels
 * chosen for the level and their state made (weights packed, device kernels built), each node placed on
 * the backend's device when it has a kernel for it, else on another route to the same hardware that has one
 * (routes.h), else on the CPU, with the reason; the copies between them listed, device_only checked, the
 * memory plan, and the result that says it all. */
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include "backend/backend_impl.h"
#include "backend/backend_refs.h"
#include "core/convert_features.h"
#include "core/env.h"
#include "core/error.h"
#include "model/conv_algo.h"
#include "model/exec_interop.h"
#include "model/levels.h"
#include "model/params.h"
#include "model/passes/pass.h"
#include "model/prepared.h"
#include "model/replay.h"
#include "model/routes.h"
#include "ops/op.h"

typedef struct strlist {
  const char **items;
  size_t count, cap;
} strlist;

static bool push(tb_prepared *p, strlist *l, const char *s) {
  if (l->count == l->cap) {
    size_t cap = l->cap ? l->cap * 2 : 8;
    const char **items = tb_arena_alloc(&p->arena, cap * sizeof *items);
    if (!items) return false;
    if (l->count) memcpy(items, l->items, l->count * sizeof *items);
    l->items = items;
    l->cap = cap;
  }
  l->items[l->count++] = s;
  return !p->arena.failed;
}

static double now_ms(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec / 1e6;
}

void tb_prepared_destroy(tb_prepared *p) {
  if (!p) return;
  void *before = tb_prepared_bind_stream(p); /* what the executor frees is ordered on the model's stream */
  /* nothing queued at prepare or by the last run may still read the blocks that go back to the shared cache */
  if (p->stream) (void)p->backend->ops->stream_synchronize(p->backend->state, p->stream);
  tb_replay_destroy(p->replay);
  tb_exec_destroy(p->exec);
  for (int i = 0; i < 2; i++) tb_event_destroy(p->timer[i]);
  tb_prepared_unbind_stream(p, before);
  if (p->stream) p->backend->ops->stream_destroy(p->backend->state, p->stream);
  tb_routes_destroy(p->routes); /* after the executor: its kernels' state and tensors on the routes go first */
  tb_graph_destroy(p->graph);
  if (p->cpu && p->cpu != p->backend) tb_backend_destroy(p->cpu);
  if (p->backend) tb_backend_storage_release(p->backend, NULL);
  tb_model_destroy(p->model);
  tb_arena_free(&p->arena);
  free(p->profile);
  free(p->profile_text);
  free(p);
}

const tb_prepare_result *tb_prepared_result(const tb_prepared *p) { return p ? &p->result : NULL; }

static tb_status check_options(const tb_prepare_options *o, const tb_ir_model *m) {
  static const char fn[] = "tb_model_prepare";
  if (o->size < offsetof(tb_prepare_options, cpu_fallback))
    return tb_error(TB_ERR_INVALID_ARGUMENT, "%s: options->size is %zu; set it to sizeof(tb_prepare_options) (%zu)", fn, o->size,
                    sizeof *o);
  if ((unsigned)o->level > TB_LEVEL_O3)
    return tb_error(TB_ERR_INVALID_ARGUMENT,
                    "%s: unknown optimization level %d; valid levels are O0 (none), O1 (conservative), O2 (balanced), "
                    "O3 (aggressive)",
                    fn, (int)o->level);
  if ((unsigned)o->precision > TB_PRECISION_TF32)
    return tb_error(TB_ERR_INVALID_ARGUMENT, "%s: unknown precision %d; valid precisions are auto, fp32, bf16, fp16, fp8, tf32", fn,
                    (int)o->precision);
  if (o->threads < 0) return tb_error(TB_ERR_INVALID_ARGUMENT, "%s: threads is %d; use 0 for the default or a positive count", fn, o->threads);
  if (o->dim_count && (!o->dim_names || !o->dim_values))
    return tb_error(TB_ERR_INVALID_ARGUMENT, "%s: dim_count is %zu but dim_names or dim_values is NULL", fn, o->dim_count);
  for (size_t i = 0; i < o->dim_count; i++) {
    if (!o->dim_names[i]) return tb_error(TB_ERR_INVALID_ARGUMENT, "%s: dim_names[%zu] is NULL", fn, i);
    if (o->dim_values[i] < 0)
      return tb_error(TB_ERR_INVALID_ARGUMENT, "%s: dimension '%s' = %lld; sizes must be 0 or more", fn, o->dim_names[i],
                      (long long)o->dim_values[i]);
    bool known = false;
    for (size_t s = 0; s < m->n_symbols && !known; s++) known = strcmp(m->symbols[s], o->dim_names[i]) == 0;
    if (!known) {
      char list[512] = "";
      size_t len = 0;
      for (size_t s = 0; s < m->n_symbols && len < sizeof list; s++)
        len += (size_t)snprintf(list + len, sizeof list - len, "%s%s", s ? ", " : "", m->symbols[s]);
      return tb_error(TB_ERR_INVALID_ARGUMENT, "%s: dimension '%s' is not a symbolic dimension of the model (it has: %s)", fn,
                      o->dim_names[i], m->n_symbols ? list : "none");
    }
  }
  return TB_OK;
}

static size_t live_nodes(const tb_graph *g) {
  size_t n = 0;
  for (size_t i = 0; i < g->n_nodes; i++) n += !g->nodes[i].dead;
  return n;
}

/* Sort, check and infer: what every pass is followed by. */
static tb_status settle(tb_graph *g) {
  tb_status st = tb_graph_sort(g);
  if (st == TB_OK) st = tb_graph_check(g);
  if (st == TB_OK) st = tb_graph_infer(g);
  return st;
}

static tb_status run_passes(tb_prepared *p, tb_opt_level level, strlist *applied) {
  for (size_t i = 0; i < tb_pass_count(); i++) {
    const tb_pass *pass = tb_pass_at(i);
    if (!pass || pass->min_level > level) continue;
    tb_pass_stats stats;
    memset(&stats, 0, sizeof stats);
    tb_status st = pass->run(p->graph, &stats);
    if (st != TB_OK) return st;
    tb_graph_compact(p->graph);
    st = settle(p->graph);
    if (st != TB_OK) {
      char why[512];
      snprintf(why, sizeof why, "%s", tb_last_error());
      return tb_error(st, "after pass %s: %s", pass->name, why);
    }
    stats.summary[sizeof stats.summary - 1] = '\0';
    const char *line = tb_arena_printf(&p->arena, "%s: %s", pass->name, stats.summary[0] ? stats.summary : stats.changed ? "applied" : "nothing to change");
    if (!push(p, applied, line)) return tb_error(TB_ERR_OUT_OF_MEMORY, "tb_model_prepare: out of host memory");
    p->result.fused_nodes += stats.nodes_fused;
  }
  return TB_OK;
}

static const char *node_name(tb_prepared *p, const tb_node *n, size_t i) {
  return n->name[0] ? tb_arena_printf(&p->arena, "%s (%s)", n->op_type, n->name) : tb_arena_printf(&p->arena, "%s (#%zu)", n->op_type, i);
}

/* Which side value v lives on when produced: its node's, the device for graph inputs on a device backend;
 * -1 for constants (copied to the device sides once, at prepare). */
static int home_side(const tb_graph *g, const tb_exec *e, int v, bool device_backend) {
  const tb_value *val = &g->values[v];
  if (val->producer >= 0) return tb_exec_placement_of(e, (size_t)val->producer)->side;
  if (val->constant && !val->is_input) return -1;
  return device_backend ? TB_EXEC_DEVICE : TB_EXEC_CPU;
}

static const char *side_name(const tb_prepared *p, int side) {
  return tb_backend_name(tb_backend_kind_of(tb_exec_side_backend(p->exec, side)));
}

static const char *copy_line(tb_prepared *p, int v, int from, int to, const char *why) {
  bool via_host = from != TB_EXEC_CPU && to != TB_EXEC_CPU; /* between two device backends */
  return tb_arena_printf(&p->arena, "value '%s': %s -> %s%s (%s)", p->graph->values[v].name, side_name(p, from), side_name(p, to),
                         via_host ? " through the host" : "", why);
}

/* The copies a run makes between the CPU, the device and the routes: one per value and side it is needed on. */
static tb_status list_copies(tb_prepared *p, strlist *copies) {
  const tb_graph *g = p->graph;
  bool device_backend = tb_backend_kind_of(p->backend) != TB_BACKEND_CPU;
  for (size_t v = 0; v < g->n_values && device_backend; v++) {
    int home = home_side(g, p->exec, (int)v, device_backend);
    if (home < 0) continue;
    uint64_t listed = UINT64_C(1) << home; /* sides it is on or copied to */
    for (size_t i = 0; i < g->n_nodes; i++) {
      const tb_node *n = &g->nodes[i];
      const tb_exec_placement *pl = tb_exec_placement_of(p->exec, i);
      for (size_t k = 0; k < n->n_inputs; k++) {
        int want = tb_node_reads_value(n, k) ? TB_EXEC_CPU : pl->side;
        if (n->inputs[k] != (int)v || want >= 64 || (listed >> want & 1u)) continue;
        listed |= UINT64_C(1) << want;
        const char *line = copy_line(p, (int)v, home, want, tb_arena_printf(&p->arena, "for %s", node_name(p, n, i)));
        if (!push(p, copies, line)) return tb_error(TB_ERR_OUT_OF_MEMORY, "tb_model_prepare: out of host memory");
      }
    }
    bool output = false;
    for (size_t k = 0; k < g->n_outputs; k++) output |= g->outputs[k] == (int)v;
    if (output && home != TB_EXEC_DEVICE && !(listed >> TB_EXEC_DEVICE & 1u) &&
        !push(p, copies, copy_line(p, (int)v, home, TB_EXEC_DEVICE, "a graph output")))
      return tb_error(TB_ERR_OUT_OF_MEMORY, "tb_model_prepare: out of host memory");
  }
  p->result.copies_inserted = copies->count;
  return TB_OK;
}

/* The lists of a placement: CPU fallbacks, routed nodes, reduced precision, and where each node runs. */
typedef struct placement_lists {
  strlist fallback, routed, precisions, choices, labels, devices, reasons;
} placement_lists;

/* Kernels chosen and their state made, nodes placed on the device, a route or the CPU; the lists. */
static tb_status place(tb_prepared *p, bool cpu_fallback, placement_lists *l, strlist *copies) {
  bool device_backend = tb_backend_kind_of(p->backend) != TB_BACKEND_CPU;
  if (device_backend && !(p->routes = tb_routes_create(p->backend)))
    return tb_error(TB_ERR_OUT_OF_MEMORY, "tb_model_prepare: out of host memory");
  tb_status st = tb_exec_place(p->exec, p->backend, p->routes, cpu_fallback);
  if (st != TB_OK) return st;
  const tb_graph *g = p->graph;
  for (size_t i = 0; i < g->n_nodes; i++) {
    const tb_node *n = &g->nodes[i];
    const tb_exec_placement *pl = tb_exec_placement_of(p->exec, i);
    const char *label = node_name(p, n, i), *why = pl->why ? tb_arena_strdup(&p->arena, pl->why) : "";
    const tb_device_info *where = tb_backend_device(tb_exec_side_backend(p->exec, pl->side));
    bool ok = push(p, &l->labels, label) && push(p, &l->devices, where->device) && push(p, &l->reasons, why);
    strlist *reason_list = !device_backend ? NULL : pl->side == TB_EXEC_CPU ? &l->fallback : pl->side != TB_EXEC_DEVICE ? &l->routed : NULL;
    if (ok && reason_list) ok = push(p, reason_list, tb_arena_printf(&p->arena, "%s: %s", label, why));
    if (ok && pl->precision) ok = push(p, &l->precisions, tb_arena_printf(&p->arena, "%s: %s", label, pl->precision));
    if (ok && pl->precision_why && (pl->side == TB_EXEC_CPU || pl->side == TB_EXEC_DEVICE))
      ok = push(p, &l->choices, tb_arena_printf(&p->arena, "%s: %s", label, pl->precision_why));
    p->bf16_rejected += pl->bf16_rejected;
    if (!ok) return tb_error(TB_ERR_OUT_OF_MEMORY, "tb_model_prepare: out of host memory");
    p->result.device_nodes += device_backend && pl->side == TB_EXEC_DEVICE;
  }
  p->result.cpu_fallback_nodes = l->fallback.count;
  p->result.route_nodes = l->routed.count;
  p->result.reduced_precision_nodes = l->precisions.count;
  p->result.precision_choice_count = l->choices.count;
  p->result.node_count = g->n_nodes;
  return list_copies(p, copies);
}

/* device_only: the nodes that would run on the CPU, each with its op and why, as one error. */
static tb_status check_device_only(const tb_prepared *p, const placement_lists *l) {
  const tb_prepare_result *r = &p->result;
  if (!r->cpu_fallback_nodes) return TB_OK;
  enum { SHOWN = 3 };
  char list[900] = "";
  size_t len = 0;
  for (size_t i = 0; i < r->cpu_fallback_nodes && i < SHOWN && len < sizeof list; i++)
    len += (size_t)snprintf(list + len, sizeof list - len, "%s%.260s", i ? "; " : "", l->fallback.items[i]);
  char more[120] = "";
  if (r->cpu_fallback_nodes > SHOWN)
    snprintf(more, sizeof more, "; and %zu more (prepare without device_only to list them in fallback_ops)",
             r->cpu_fallback_nodes - SHOWN);
  return tb_error(TB_ERR_UNSUPPORTED,
                  "device_only: %zu of %zu nodes would fall back to the CPU from %s: %s%s; turn device_only off "
                  "(tb run without --device-only) to let them run there",
                  r->cpu_fallback_nodes, p->graph->n_nodes, tb_backend_device(p->backend)->device, list, more);
}

static tb_status warn(tb_prepared *p, strlist *warnings, const char *text) {
  const char *copy = tb_arena_strdup(&p->arena, text);
  return push(p, warnings, copy) ? TB_OK : tb_error(TB_ERR_OUT_OF_MEMORY, "tb_model_prepare: out of host memory");
}

static tb_status finish(tb_prepared *p, const tb_prepare_options *o, strlist *warnings) {
  tb_prepare_result *r = &p->result;
  const tb_graph *g = p->graph;
  tb_status st = TB_OK;
  /* the reduced precision asked for (bf16 for auto at O3) when some node computes in it */
  r->precision = !r->reduced_precision_nodes ? TB_PRECISION_FP32 : o->precision == TB_PRECISION_AUTO ? TB_PRECISION_BF16 : o->precision;
  bool cpu_nodes = r->device_nodes + r->route_nodes < g->n_nodes;
  if (o->level >= TB_LEVEL_O2 && cpu_nodes && !tb_exec_uses_fast_kernels(p->exec)) {
    char text[200];
    snprintf(text, sizeof text, "%s: no faster CPU kernel exists for this model's operators; the reference kernels run",
             tb_opt_level_name(o->level));
    st = warn(p, warnings, text);
  }
  bool asked_other = o->precision == TB_PRECISION_FP16 || o->precision == TB_PRECISION_FP8 || o->precision == TB_PRECISION_TF32;
  if (st == TB_OK && asked_other && !r->reduced_precision_nodes) {
    char text[240];
    snprintf(text, sizeof text, "precision %s: no kernel for this model's nodes on %s computes in %s%s; fp32 is used",
             tb_precision_name(o->precision), tb_backend_device(p->backend)->device, tb_precision_name(o->precision),
             o->level <= TB_LEVEL_O1 ? " at O0 and O1 (reduced precision starts at O2)" : "");
    st = warn(p, warnings, text);
  } else if (st == TB_OK && tb_opt_wants_bf16(o) && !r->reduced_precision_nodes) {
    char text[240];
    const char *why = o->level <= TB_LEVEL_O1 ? "bf16 kernels run at O2 and O3"
                      : !tb_cpu_has_bf16(tb_convert_features()) ? "this CPU has no bf16 instructions (AVX512-BF16; AMX-BF16 alone is not used)"
                      : p->bf16_rejected ? "fp32 was as fast or faster in every node's bf16 trial (precision_choices says each)"
                      : cpu_nodes ? "no node of this model has a bf16 kernel" : "the device's kernels compute in fp32";
    snprintf(text, sizeof text, "precision %s: fp32 is used: %s", o->precision == TB_PRECISION_AUTO ? "auto at O3" : "bf16", why);
    st = warn(p, warnings, text);
  }
  if (st == TB_OK && r->cpu_fallback_nodes) {
    char text[200];
    snprintf(text, sizeof text, "%zu of %zu nodes run on the CPU instead of %s; fallback_ops says why for each", r->cpu_fallback_nodes,
             g->n_nodes, tb_backend_name(tb_backend_kind_of(p->backend)));
    st = warn(p, warnings, text);
  }
  if (st == TB_OK && r->route_nodes) {
    char text[200];
    snprintf(text, sizeof text, "%zu of %zu nodes run on another route to %s's hardware; routed_ops says where and why",
             r->route_nodes, g->n_nodes, tb_backend_device(p->backend)->device);
    st = warn(p, warnings, text);
  }
  r->nodes_after = live_nodes(g);
  for (size_t v = 0; v < g->n_values; v++)
    if (g->values[v].constant && (g->values[v].is_initializer || g->values[v].producer < 0)) r->weight_bytes += g->values[v].constant->nbytes;
  r->planned_peak_activation_bytes = tb_exec_planned_bytes(p->exec);
  return st;
}

/* The model's own stream on a backend that makes them, bound to this thread (what was bound in *before). */
static tb_status make_stream(tb_prepared *p, void **before) {
  *before = NULL;
  if (!p->backend->ops->stream_create) return TB_OK;
  tb_status st = p->backend->ops->stream_create(p->backend->state, &p->stream);
  if (st == TB_OK) *before = tb_prepared_bind_stream(p);
  return st;
}

/* Whether runs are captured as a device graph, and why not (docs/cuda.md "Graph replay"). */
static tb_status decide_replay(tb_prepared *p, const tb_prepare_options *o) {
  const char *env = p->backend->ops->capture_begin ? tb_env("TB_GRAPH_CAPTURE") : NULL, *off = NULL;
  if (env && (strcmp(env, "off") == 0 || strcmp(env, "0") == 0)) off = "TB_GRAPH_CAPTURE=off";
  else if (env && strcmp(env, "on") != 0 && strcmp(env, "1") != 0) /* read only where a backend can capture */
    return tb_error(TB_ERR_INVALID_ARGUMENT,
                    "tb_model_prepare: TB_GRAPH_CAPTURE='%.100s' is not one of on, 1, off, 0; unset it (on: a device that "
                    "can capture replays each run as one graph) or set off", env);
  if (o->no_graph_capture) off = "the no_graph_capture option";
  char why[600] = "";
  bool ruled_out = tb_replay_ruled_out(p->graph, p->exec, p->backend, off, why, sizeof why);
  tb_status st = ruled_out ? TB_OK : tb_replay_create(p->backend, &p->replay);
  p->result.graph_capture = st == TB_OK && !ruled_out;
  p->result.graph_capture_why = tb_arena_strdup(&p->arena, why);
  if (st == TB_OK && !p->result.graph_capture_why) st = tb_error(TB_ERR_OUT_OF_MEMORY, "tb_model_prepare: out of host memory");
  return st;
}

/* How the executor treats nodes with a bf16 kernel: a trial at O3 with precision auto (unless TB_BF16_TRIAL=off),
 * bf16 wherever a kernel exists with precision bf16, nothing asked otherwise. */
static tb_status set_bf16_mode(tb_exec *e, const tb_prepare_options *o) {
  tb_bf16_mode mode = TB_BF16_NOT_ASKED;
  if (o->level >= TB_LEVEL_O2 && o->precision == TB_PRECISION_BF16) mode = TB_BF16_FORCED;
  if (o->level == TB_LEVEL_O3 && o->precision == TB_PRECISION_AUTO) {
    const char *v = tb_env("TB_BF16_TRIAL");
    if (!v || strcmp(v, "on") == 0 || strcmp(v, "1") == 0) mode = TB_BF16_TRIAL;
    else if (strcmp(v, "off") == 0 || strcmp(v, "0") == 0) mode = TB_BF16_FORCED;
    else
      return tb_error(TB_ERR_INVALID_ARGUMENT,
                      "tb_model_prepare: TB_BF16_TRIAL='%.100s' is not one of on, 1, off, 0; unset it (on: O3 runs bf16 only "
                      "where a trial shows it faster) or set off (bf16 wherever a kernel exists)", v);
  }
  tb_exec_set_bf16_mode(e, mode, tb_cpu_has_bf16(tb_convert_features()));
  return TB_OK;
}

static tb_status prepare(tb_prepared *p, const tb_prepare_options *o) {
  strlist applied = {0}, warnings = {0}, copies = {0};
  placement_lists lists = {0};
  tb_prepare_result *r = &p->result;
  r->size = sizeof *r;
  r->level = o->level;
  r->precision = o->precision;
  const tb_graph *src = p->model->ir->graph;
  if (!src) return tb_error(TB_ERR_MODEL, "tb_model_prepare: the model has no graph");
  r->nodes_before = live_nodes(src);
  p->graph = tb_graph_clone(src, NULL);
  if (!p->graph) return tb_error(TB_ERR_OUT_OF_MEMORY, "tb_model_prepare: out of host memory copying the graph");
  const char **names = tb_arena_alloc(&p->arena, (o->dim_count + 1) * sizeof *names);
  int64_t *values = tb_arena_alloc(&p->arena, (o->dim_count + 1) * sizeof *values);
  if (!names || !values) return tb_error(TB_ERR_OUT_OF_MEMORY, "tb_model_prepare: out of host memory");
  for (size_t i = 0; i < o->dim_count; i++) {
    names[i] = tb_arena_strdup(&p->arena, o->dim_names[i]);
    values[i] = o->dim_values[i];
  }
  p->dims = (tb_dim_bindings){o->dim_count, names, values};
  tb_graph_bind_dims(p->graph, &p->dims);
  tb_status st = settle(p->graph);
  if (st == TB_OK && o->level >= TB_LEVEL_O1) st = run_passes(p, o->level, &applied);
  if (st == TB_OK) st = tb_graph_parse_params(p->graph);
  if (st == TB_OK) st = tb_exec_create(p->graph, p->cpu, tb_opt_kernel_level(o, tb_convert_features()), tb_convert_features(), o->threads, &p->exec);
  if (st == TB_OK) tb_exec_set_conv_algo(p->exec, o->conv_algo == TB_CONV_ALGO_DEFAULT ? tb_conv_algo_from_env() : o->conv_algo);
  if (st == TB_OK) tb_exec_set_device_precision(p->exec, tb_opt_device_precision(o));
  if (st == TB_OK) tb_exec_set_inter_op(p->exec, o->inter_op == TB_INTER_OP_DEFAULT ? tb_inter_op_from_env() : o->inter_op);
  if (st == TB_OK) st = set_bf16_mode(p->exec, o);
  void *before = NULL;
  if (st == TB_OK) st = make_stream(p, &before); /* the weights go to the device on the model's stream */
  if (st == TB_OK) st = place(p, o->cpu_fallback, &lists, &copies);
  tb_prepared_unbind_stream(p, before);
  if (st == TB_OK && o->device_only) st = check_device_only(p, &lists);
  if (st == TB_OK) tb_exec_set_device_only(p->exec, o->device_only); /* for the bodies, placed at their first run */
  if (st == TB_OK) {
    char first[200] = "";
    size_t missing = tb_exec_missing_kernels(p->exec, first, sizeof first);
    if (missing)
      st = tb_error(TB_ERR_UNSUPPORTED, "%s: no CPU kernel for its input types (%zu node%s without a kernel)", first, missing,
                    missing == 1 ? "" : "s");
  }
  if (st == TB_OK) tb_exec_plan_static(p->exec);
  if (st == TB_OK) st = finish(p, o, &warnings);
  if (st == TB_OK) st = decide_replay(p, o);
  r->passes = applied.items;
  r->pass_count = applied.count;
  r->warnings = warnings.items;
  r->warning_count = warnings.count;
  r->fallback_ops = lists.fallback.items;
  r->copies = copies.items;
  r->node_precisions = lists.precisions.items;
  r->routed_ops = lists.routed.items;
  r->node_labels = lists.labels.items;
  r->node_devices = lists.devices.items;
  r->node_reasons = lists.reasons.items;
  r->precision_choices = lists.choices.items;
  return st;
}

tb_status tb_model_prepare(tb_model *model, tb_backend *backend, const tb_prepare_options *options, tb_prepared **out_prepared,
                           const tb_prepare_result **out_result) {
  static const char fn[] = "tb_model_prepare";
  if (out_prepared) *out_prepared = NULL;
  if (out_result) *out_result = NULL;
  if (!model || !backend || !out_prepared)
    return tb_error(TB_ERR_INVALID_ARGUMENT, "%s: model, backend and out_prepared must not be NULL", fn);
  tb_prepare_options defaults = {.size = sizeof defaults, .level = TB_LEVEL_O2, .precision = TB_PRECISION_AUTO};
  tb_prepare_options given;
  if (options && options->size >= offsetof(tb_prepare_options, cpu_fallback)) {
    memset(&given, 0, sizeof given); /* an older, shorter struct: the fields it lacks stay zero */
    memcpy(&given, options, options->size < sizeof given ? options->size : sizeof given);
    given.size = sizeof given;
  }
  tb_status st = check_options(options ? options : &defaults, model->ir);
  if (st != TB_OK) return st;
  const tb_prepare_options *o = options ? &given : &defaults;
  if ((unsigned)o->conv_algo > TB_CONV_ALGO_GEMM) /* a field past 0.2's end: checked on the copy */
    return tb_error(TB_ERR_INVALID_ARGUMENT,
                    "%s: unknown convolution algorithm %d in conv_algo; valid ones are TB_CONV_ALGO_DEFAULT, _AUTO, "
                    "_WINOGRAD, _DIRECT, _GEMM (tb_conv_algo_parse reads their names)", fn, (int)o->conv_algo);
  if ((unsigned)o->inter_op > TB_INTER_OP_ON)
    return tb_error(TB_ERR_INVALID_ARGUMENT,
                    "%s: unknown inter-op mode %d in inter_op; valid ones are TB_INTER_OP_DEFAULT, _AUTO, _OFF, _ON "
                    "(tb_inter_op_parse reads their names)", fn, (int)o->inter_op);
  double t0 = now_ms();
  tb_prepared *p = calloc(1, sizeof *p);
  if (!p) return tb_error(TB_ERR_OUT_OF_MEMORY, "%s: out of host memory", fn);
  p->model = tb_model_retain(model);
  tb_block *none = NULL;
  st = tb_backend_storage_acquire(backend, 0, &none);
  if (st != TB_OK) {
    tb_prepared_destroy(p);
    return st;
  }
  p->backend = backend;
  if (tb_backend_kind_of(backend) == TB_BACKEND_CPU) p->cpu = backend;
  else st = tb_backend_create_kind(TB_BACKEND_CPU, 0, &p->cpu);
  if (st == TB_OK) st = prepare(p, o);
  if (st != TB_OK) {
    tb_prepared_destroy(p);
    return st;
  }
  p->result.success = true;
  p->result.prepare_ms = now_ms() - t0;
  *out_prepared = p;
  if (out_result) *out_result = &p->result;
  return TB_OK;
}
