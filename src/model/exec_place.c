/* The executor's kernel choice and placement: per node, the device backend's kernel when the device has
 * one, else the kernel of the first other route to the same hardware that has one (routes.h: Vulkan or
 * OpenCL for a native GPU backend), else the best CPU kernel, each with the reason; and the per-node state a
 * kernel's prepare() makes (packed weights, built device programs), made at prepare time when the node's
 * types are known. The bodies of control-flow nodes on a device are placed on it the same way at their first run
 * (tb_exec_place_body). Where values live and how they move between sides: exec_sides.c. */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "backend/backend_impl.h"
#include "core/error.h"
#include "model/exec_impl.h"
#include "model/exec_release.h"
#include "model/precision_trial.h"
#include "model/routes.h"
#include "ops/op.h"
#include "backend/tensor/tensor_impl.h"

tb_kernel_query tb_exec_query(const tb_exec *e, const tb_node *n, const tb_value_type *const *in) {
  tb_kernel_query q = tb_kernel_query_for(n, in, e->level, e->features);
  q.device_precision = e->device_precision;
  return q;
}

/* The CPU's kernel for n at most at `level`, on a CPU with `features`. */
static const tb_kernel *cpu_kernel_at(const tb_exec *e, const tb_node *n, const tb_value_type *const *in, tb_kernel_level level,
                                      uint64_t features) {
  tb_kernel_query q = tb_kernel_query_for(n, in, level, features);
  return e->cpu->ops->find_kernel ? e->cpu->ops->find_kernel(e->cpu->state, &q) : NULL;
}

const tb_kernel *tb_exec_cpu_kernel(const tb_exec *e, const tb_node *n, const tb_value_type *const *in) {
  return cpu_kernel_at(e, n, in, e->level, e->features);
}

/* The kernel of `backend` (the device or a route) for node n, NULL when it runs none or has none for it. */
static const tb_kernel *side_kernel(const tb_exec *e, const tb_backend *backend, const tb_node *n, const tb_value_type *const *in) {
  if (!backend || !backend->ops->find_kernel) return NULL;
  tb_kernel_query q = tb_exec_query(e, n, in);
  return backend->ops->find_kernel(backend->state, &q);
}

tb_kernel_ctx tb_exec_kernel_ctx(tb_exec *e, size_t step, int side, tb_tensor *const *in,
                                 const tb_value_type *const *in_types, tb_tensor **out, void *state) {
  const tb_node *n = &e->g->nodes[step];
  tb_kernel_ctx kc = {
      .graph = e->g,
      .node = n,
      .n_inputs = n->n_inputs,
      .inputs = in,
      .n_outputs = n->n_outputs,
      .outputs = out,
      .backend = tb_exec_side_backend(e, side),
      .run_subgraph = tb_exec_run_subgraph,
      .exec = e,
      .threads = e->threads,
      .pool = side == TB_EXEC_CPU ? e->pool : NULL,
      .conv_algo = (int)e->conv_algo,
      .state = state,
      .params = n->params,
      .domain = n->domain ? n->domain : "",
      .op_type = n->op_type,
      .opset = n->opset,
      .in_types = in_types,
      .omitted_outputs = e->cache[step].omitted_outputs,
      .constant_inputs = e->cache[step].constant_inputs,
      .name = n->name ? n->name : "",
  };
  return kc;
}

const tb_kernel *tb_exec_choose_kernel(tb_exec *e, size_t step, const tb_value_type *const *in, int *side) {
  const tb_node *n = &e->g->nodes[step];
  *side = TB_EXEC_CPU;
  int placed = e->placement ? e->placement[step].side : TB_EXEC_CPU;
  if (placed != TB_EXEC_CPU) {
    const tb_kernel *k = side_kernel(e, tb_exec_side_backend(e, placed), n, in);
    if (k) {
      *side = placed;
      return k;
    }
  }
  if (e->placement && e->placement[step].fp32_only && e->level > TB_KERNEL_FAST)
    return cpu_kernel_at(e, n, in, TB_KERNEL_FAST, e->features);
  return tb_exec_cpu_kernel(e, n, in);
}

static void release_state(node_cache *c) {
  if (c->state && c->state_kernel && c->state_kernel->release) c->state_kernel->release(c->state);
  c->state = NULL;
  c->state_kernel = NULL;
  c->method = NULL;
  c->reads_reduced = c->writes_reduced = 0; /* said again by the next state's prepare */
  c->reduced_inputs = c->reduced_outputs = 0;
}

tb_status tb_exec_kernel_state(tb_exec *e, size_t step, tb_tensor *const *in, const tb_value_type *const *in_types) {
  node_cache *c = &e->cache[step];
  if (c->kernel && c->state_kernel == c->kernel) return TB_OK;
  release_state(c);
  tb_exec_restore_consumed(e, step); /* the old state's packed copies are gone: its constants are needed again */
  if (!c->kernel) return TB_OK;
  if (c->kernel->prepare) {
    const tb_node *n = &e->g->nodes[step];
    tb_kernel_ctx kc = tb_exec_kernel_ctx(e, step, c->side, in, in_types, NULL, NULL);
    kc.run_subgraph = NULL;
    void *state = NULL;
    tb_status st = c->kernel->prepare(&kc, &state);
    if (st != TB_OK) {
      tb_exec_restore_consumed(e, step);
      return tb_node_name_error(e->g, n, st);
    }
    c->state = state;
  }
  c->state_kernel = c->kernel;
  tb_exec_release_consumed(e, step);
  return TB_OK;
}

void tb_exec_release_states(tb_exec *e) {
  for (size_t i = 0; e->cache && i < e->g->n_nodes; i++) release_state(&e->cache[i]);
  tb_exec_free_sides(e);
  if (e->placement)
    for (size_t i = 0; i < e->g->n_nodes; i++) {
      free((char *)e->placement[i].why);
      free((char *)e->placement[i].precision_why);
    }
  free(e->placement);
  e->placement = NULL;
}


/* "no opencl kernel for Resize with inputs (float32, int64)" */
static void no_kernel_reason(const tb_exec *e, const tb_node *n, const tb_value_type *const *in, char *buf, size_t cap) {
  char types[256] = "";
  size_t len = 0;
  for (size_t k = 0; k < n->n_inputs && len < sizeof types; k++)
    len += (size_t)snprintf(types + len, sizeof types - len, "%s%s", k ? ", " : "", in[k] ? tb_dtype_name(in[k]->dtype) : "-");
  const char *backend = tb_backend_name(tb_backend_kind_of(e->device));
  if (!e->device->ops->find_kernel) snprintf(buf, cap, "the %s backend runs no kernels in this build", backend);
  else snprintf(buf, cap, "no %s kernel for %s with inputs (%s)", backend, n->op_type, types);
}

/* Append printf-style text to buf (cut at its end). */
static void append(char *buf, size_t cap, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static void append(char *buf, size_t cap, const char *fmt, ...) {
  size_t len = strlen(buf);
  if (len + 1 >= cap) return;
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(buf + len, cap - len, fmt, ap);
  va_end(ap);
}

/* The node's constant inputs on the kernel's side (value inputs and CPU kernels: CPU), NULL for the rest. */
static tb_status constant_inputs(tb_exec *e, const tb_node *n, int side, tb_tensor **in) {
  for (size_t k = 0; k < n->n_inputs; k++) {
    int v = n->inputs[k];
    in[k] = NULL;
    if (v < 0 || !e->consts[v] || e->g->values[v].is_input) continue;
    if (side == TB_EXEC_CPU || tb_node_reads_value(n, k)) in[k] = e->consts[v];
    else {
      tb_status st = tb_exec_const_on(e, v, side, &in[k]);
      if (st != TB_OK) return st;
    }
  }
  return TB_OK;
}

/* With a bf16 mode: node i's CPU kernel (c->kernel, the level's best) kept or replaced by its fp32 one, and the
 * sentence that says why (docs/engine.md "bf16 only where it wins"). */
static void choose_precision(tb_exec *e, size_t i, const tb_value_type *const *in) {
  tb_exec_placement *pl = &e->placement[i];
  node_cache *c = &e->cache[i];
  const tb_node *n = &e->g->nodes[i];
  char why[400] = "";
  if (e->bf16_mode == TB_BF16_NOT_ASKED) return;
  if (!c->kernel->precision) {
    /* would the node have a bf16 kernel on a CPU with every feature? */
    const tb_kernel *any = cpu_kernel_at(e, n, in, TB_KERNEL_REDUCED, ~UINT64_C(0));
    bool has = any && any->precision;
    snprintf(why, sizeof why, "fp32: %s", !has ? "no bf16 kernel"
                                           : !e->cpu_has_bf16 ? "the CPU has no bf16 instructions (AVX512-BF16)"
                                                              : "no bf16 kernel for this CPU's instruction sets");
  } else if (e->bf16_mode == TB_BF16_FORCED) {
    snprintf(why, sizeof why, "bf16: asked for (precision bf16 or TB_BF16_TRIAL=off), no trial");
  } else {
    const tb_kernel *fp32 = cpu_kernel_at(e, n, in, TB_KERNEL_FAST, e->features);
    bool use_bf16 = true;
    if (fp32 && !fp32->precision) tb_bf16_trial_choose(e, i, in, c->kernel, fp32, &use_bf16, why, sizeof why);
    else snprintf(why, sizeof why, "bf16: no fp32 kernel to compare with");
    if (!use_bf16) {
      c->kernel = fp32;
      pl->fp32_only = true;
      pl->bf16_rejected = true;
    }
  }
  pl->precision_why = strdup(why); /* NULL when memory is short: the result then lacks the sentence */
}

/* What the device's kernels were asked to compute in (tb_exec_set_device_precision). */
static const char *device_precision_name(tb_device_precision p) {
  switch (p) {
    case TB_DEVICE_TF32: return "tf32";
    case TB_DEVICE_BF16: return "bf16";
    case TB_DEVICE_FP16: return "fp16";
    case TB_DEVICE_FP8: return "fp8";
    default: return "fp32";
  }
}

/* Node i on the device with kernel k: the precision it computes in (its entry's unless its prepare said otherwise)
 * and, when a reduced precision was asked, why. */
static void device_precision(tb_exec *e, size_t i, const tb_kernel *k) {
  tb_exec_placement *pl = &e->placement[i];
  if (!pl->precision_by_kernel) pl->precision = k->precision;
  if (e->device_precision == TB_DEVICE_FP32 || pl->precision_why) return;
  char why[200];
  if (pl->precision)
    snprintf(why, sizeof why, "%s: the precision asked for, accumulated in fp32 with fp32 outputs", pl->precision);
  else
    snprintf(why, sizeof why, "fp32: no %s kernel on %s", device_precision_name(e->device_precision), tb_backend_device(e->device)->device);
  pl->precision_why = strdup(why); /* NULL when memory is short: the result then lacks the sentence */
}

/* Forget what a device kernel's prepare said of the node's precision (the node goes elsewhere). */
static void forget_precision(tb_exec_placement *pl) {
  free((char *)pl->precision_why);
  pl->precision_why = NULL;
  pl->precision = NULL;
  pl->precision_by_kernel = false;
}

/* Node i's kernel k on `side`: its constants copied there and its state made. */
static tb_status try_side(tb_exec *e, size_t i, int side, const tb_kernel *k, const tb_value_type **in) {
  node_cache *c = &e->cache[i];
  c->kernel = k;
  c->side = side;
  tb_status st = constant_inputs(e, &e->g->nodes[i], side, e->in);
  if (st == TB_OK) st = tb_exec_kernel_state(e, i, e->in, in);
  if (st != TB_OK) c->side = TB_EXEC_CPU;
  return st;
}

/* Node i, which the device cannot run (`why` says why), on the first route to the same hardware that has a
 * kernel for it; `why` then says where it ran, or, when none could, why and that it runs on the CPU. */
static tb_status place_on_route(tb_exec *e, size_t i, const tb_value_type **in, bool cpu_fallback, char *why, size_t cap) {
  const tb_node *n = &e->g->nodes[i];
  size_t count = e->routes ? tb_routes_count(e->routes) : 0;
  const char *noun = tb_routes_noun(e->routes);
  char tried[600] = "";
  for (size_t r = 0; r < count; r++) {
    const char *why_not = NULL, *device = tb_routes_device(e->routes, r);
    tb_backend *b = tb_routes_backend(e->routes, r, &why_not);
    const tb_kernel *k = b ? side_kernel(e, b, n, in) : NULL;
    if (k) {
      int side = tb_exec_add_side(e, b);
      if (side < 0) return tb_error(TB_ERR_OUT_OF_MEMORY, "graph '%s': out of memory placing nodes", e->g->name);
      tb_status st = try_side(e, i, side, k, in);
      if (st == TB_OK) {
        append(why, cap, "; ran on %s, %s", device, tb_routes_identity(e->routes, r));
        e->placement[i].side = side;
        return TB_OK;
      }
      if (!cpu_fallback) return st;
      append(tried, sizeof tried, "%s%s's kernel could not be prepared: %s", tried[0] ? "; " : "", device, tb_last_error());
    } else if (b) {
      append(tried, sizeof tried, "%s%s has none", tried[0] ? "; " : "", device);
    } else {
      append(tried, sizeof tried, "%s%s", tried[0] ? "; " : "", why_not);
    }
  }
  if (count) append(why, cap, "; no other route to this %s has one (%s)", noun, tried);
  else append(why, cap, "; no other route reaches this %s", noun);
  append(why, cap, "; ran on %s", tb_backend_device(e->cpu)->device);
  return TB_OK;
}

/* Choose node i's kernel from the static types and make its state: on the device when it can, else on a
 * route to the same hardware, else on the CPU. */
static tb_status place_node(tb_exec *e, size_t i, bool cpu_fallback) {
  const tb_graph *g = e->g;
  const tb_node *n = &g->nodes[i];
  tb_exec_placement *pl = &e->placement[i];
  node_cache *c = &e->cache[i];
  const tb_value_type **in = e->in_ptrs;
  pl->typed = true;
  for (size_t k = 0; k < n->n_inputs; k++) {
    int v = n->inputs[k];
    in[k] = v < 0 ? NULL : e->place_types ? &e->place_types[v] : &g->values[v].type;
    if (in[k] && !in[k]->has_dtype) pl->typed = false;
  }
  if (!pl->typed) {
    if (e->device) pl->why = strdup("its input types are known only at run time");
    if (e->bf16_mode == TB_BF16_TRIAL) pl->fp32_only = true; /* no trial can run for it */
    return TB_OK;
  }
  if (e->device) {
    char why[1600] = "";
    const tb_kernel *k = side_kernel(e, e->device, n, in);
    if (k) {
      tb_status st = try_side(e, i, TB_EXEC_DEVICE, k, in);
      if (st == TB_OK) {
        pl->side = TB_EXEC_DEVICE;
        device_precision(e, i, k); /* a device kernel's reduced precision (tb_kernel_query.device_precision) */
        return TB_OK;
      }
      forget_precision(pl);
      if (!cpu_fallback) return st;
      snprintf(why, sizeof why, "the %s kernel could not be prepared: %s", tb_backend_name(tb_backend_kind_of(e->device)),
               tb_last_error());
    } else {
      no_kernel_reason(e, n, in, why, sizeof why);
    }
    tb_status st = place_on_route(e, i, in, cpu_fallback, why, sizeof why);
    if (st == TB_OK) pl->why = strdup(why);
    if (st != TB_OK || pl->side != TB_EXEC_CPU) return st;
  }
  c->side = TB_EXEC_CPU;
  c->kernel = tb_exec_cpu_kernel(e, n, in);
  if (!c->kernel) return TB_OK; /* prepare reports nodes without a CPU kernel */
  choose_precision(e, i, in);
  pl->precision = c->kernel->precision;
  tb_status st = constant_inputs(e, n, TB_EXEC_CPU, e->in);
  return st == TB_OK ? tb_exec_kernel_state(e, i, e->in, in) : st;
}

tb_status tb_exec_place(tb_exec *e, tb_backend *device, struct tb_routes *routes, bool cpu_fallback) {
  const tb_graph *g = e->g;
  if (device && tb_backend_kind_of(device) == TB_BACKEND_CPU) device = NULL;
  e->device = device;
  e->routes = device ? routes : NULL;
  e->cpu_fallback = cpu_fallback;
  e->placement = calloc(g->n_nodes ? g->n_nodes : 1, sizeof *e->placement);
  if (!e->placement || (device && tb_exec_add_side(e, device) != TB_EXEC_DEVICE))
    return tb_error(TB_ERR_OUT_OF_MEMORY, "graph '%s': out of memory placing nodes", g->name);
  tb_status st = TB_OK;
  e->trial_ms_left = TB_BF16_TRIAL_BUDGET_MS;
  tb_exec_drop_file_pages(e); /* what the passes and the executor's copies read; read again when needed */
  for (size_t i = 0; i < g->n_nodes && st == TB_OK; i++) {
    st = place_node(e, i, cpu_fallback);
    if (st == TB_OK && e->device && e->placement[i].side != TB_EXEC_DEVICE && !e->placement[i].why)
      st = tb_error(TB_ERR_OUT_OF_MEMORY, "graph '%s': out of memory placing nodes", g->name);
  }
  tb_exec_drop_file_pages(e); /* what the kernels' prepare() read around their weights */
  if (st == TB_OK && e->device) tb_exec_fuse_casts(e);
  return st;
}

const tb_exec_placement *tb_exec_placement_of(const tb_exec *e, size_t node) {
  return e && e->placement && node < e->g->n_nodes ? &e->placement[node] : NULL;
}

/* ---- Bodies on the device (docs/cuda.md "Control flow") ---------------------------------------------------------- */

/* With device_only: the first body node left on the CPU, as the error prepare gives for the graph's own. */
static tb_status check_device_only(const tb_exec *parent, const tb_exec *child) {
  const tb_graph *body = child->g;
  for (size_t i = 0; i < body->n_nodes; i++) {
    const tb_exec_placement *pl = tb_exec_placement_of(child, i);
    if (body->nodes[i].dead || !pl || pl->side != TB_EXEC_CPU) continue;
    char label[200];
    return tb_error(TB_ERR_UNSUPPORTED,
                    "device_only: %s in the body '%s' would fall back to the CPU from %s: %s; turn device_only off "
                    "(tb run without --device-only) to let it run there",
                    tb_node_label(body, &body->nodes[i], label, sizeof label), body->name ? body->name : "",
                    tb_backend_device(parent->device)->device, pl->why ? pl->why : "no kernel");
  }
  return TB_OK;
}

tb_status tb_exec_place_body(tb_exec *parent, tb_exec *child, tb_tensor *const *inputs) {
  const tb_graph *g = parent->g, *body = child->g;
  tb_value_type *outer = calloc(g->n_values ? g->n_values : 1, sizeof *outer);
  if (!outer) return tb_error(TB_ERR_OUT_OF_MEMORY, "graph '%s': out of memory placing the body '%s'", g->name, body->name);
  for (size_t v = 0; v < g->n_values; v++) {
    if (parent->vals[v]) tb_value_type_of(parent->vals[v], &outer[v]); /* what the body reads now */
    else outer[v] = g->values[v].type;
  }
  tb_value_type *types = tb_exec_body_types(body, outer, body->n_inputs, inputs);
  free(outer);
  if (!types) return tb_error(TB_ERR_OUT_OF_MEMORY, "graph '%s': out of memory placing the body '%s'", g->name, body->name);
  child->place_types = types;
  tb_status st = tb_exec_place(child, parent->device, parent->routes, parent->cpu_fallback);
  child->place_types = NULL;
  free(types);
  child->device_only = parent->device_only;
  if (st == TB_OK && parent->device_only) st = check_device_only(parent, child);
  return st;
}

void tb_exec_set_device_only(tb_exec *e, bool on) { e->device_only = on; }
