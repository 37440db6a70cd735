/* The executor's kernel choice and placement: per node, the device backend's kernel when the node is placed
 * on the device and the device has one, else the best CPU kernel; the per-node state a kernel's prepare()
 * makes (packed weights, built device programs), made at prepare time when the node's types are known; and
 * the copies of values between the CPU and the device: constants copied to the device once and kept, other
 * values copied when a node on the other side needs them and freed with the value. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "backend/backend_impl.h"
#include "core/error.h"
#include "model/exec_impl.h"
#include "model/exec_release.h"
#include "model/precision_trial.h"
#include "ops/op.h"
#include "backend/tensor/tensor_impl.h"

bool tb_exec_on_device(const tb_exec *e, const tb_tensor *t) {
  (void)e;
  return tb_backend_kind_of(tb_tensor_backend(t)) != TB_BACKEND_CPU;
}

static tb_status copy_to(tb_backend *to, const tb_tensor *t, tb_tensor **out) {
  tb_status st = tb_tensor_create(to, tb_tensor_dtype(t), tb_tensor_ndim(t), tb_tensor_shape(t), out);
  if (st == TB_OK) st = tb_tensor_copy(*out, t);
  if (st != TB_OK) {
    tb_tensor_destroy(*out);
    *out = NULL;
  }
  return st;
}

/* The device copy of constant v, made on first use. */
static tb_status const_on_device(tb_exec *e, int v, tb_tensor **out) {
  if (!e->const_dev[v]) {
    tb_status st = copy_to(e->device, e->consts[v], &e->const_dev[v]);
    if (st != TB_OK) return st;
  }
  *out = e->const_dev[v];
  return TB_OK;
}

tb_status tb_exec_value_on(tb_exec *e, int v, bool device, tb_tensor **out) {
  tb_tensor *t = e->vals[v];
  *out = t;
  if (!t || tb_exec_on_device(e, t) == device) return TB_OK;
  if (device && e->const_dev && e->consts[v] && t == e->consts[v]) return const_on_device(e, v, out);
  if (device && !e->device)
    return tb_error(TB_ERR_INTERNAL, "graph '%s': value '%s' is wanted on a device the executor does not have", e->g->name,
                    e->g->values[v].name);
  if (!e->mirror[v]) {
    tb_status st = copy_to(device ? e->device : e->cpu, t, &e->mirror[v]);
    if (st != TB_OK) return st;
  }
  *out = e->mirror[v];
  return TB_OK;
}

void tb_exec_drop_mirror(tb_exec *e, int v) {
  tb_tensor_destroy(e->mirror[v]);
  e->mirror[v] = NULL;
}

tb_kernel_query tb_exec_query(const tb_exec *e, const tb_node *n, const tb_value_type *const *in) {
  return tb_kernel_query_for(n, in, e->level, e->features);
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

/* The device's kernel for node n, NULL when the device runs none or has none for it. */
static const tb_kernel *device_kernel(const tb_exec *e, const tb_node *n, const tb_value_type *const *in) {
  if (!e->device->ops->find_kernel) return NULL;
  tb_kernel_query q = tb_exec_query(e, n, in);
  return e->device->ops->find_kernel(e->device->state, &q);
}

tb_kernel_ctx tb_exec_kernel_ctx(tb_exec *e, size_t step, bool on_device, tb_tensor *const *in,
                                 const tb_value_type *const *in_types, tb_tensor **out, void *state) {
  const tb_node *n = &e->g->nodes[step];
  tb_kernel_ctx kc = {
      .graph = e->g,
      .node = n,
      .n_inputs = n->n_inputs,
      .inputs = in,
      .n_outputs = n->n_outputs,
      .outputs = out,
      .backend = on_device ? e->device : e->cpu,
      .run_subgraph = tb_exec_run_subgraph,
      .exec = e,
      .threads = e->threads,
      .pool = on_device ? NULL : e->pool,
      .conv_algo = (int)e->conv_algo,
      .state = state,
      .params = n->params,
      .domain = n->domain ? n->domain : "",
      .op_type = n->op_type,
      .opset = n->opset,
      .in_types = in_types,
      .omitted_outputs = tb_kernel_omitted_outputs(n),
      .constant_inputs = tb_kernel_constant_inputs(e->g, n),
      .name = n->name ? n->name : "",
  };
  return kc;
}

const tb_kernel *tb_exec_choose_kernel(tb_exec *e, size_t step, const tb_value_type *const *in, bool *on_device) {
  const tb_node *n = &e->g->nodes[step];
  *on_device = false;
  if (e->placement && e->placement[step].on_device) {
    const tb_kernel *k = device_kernel(e, n, in);
    if (k) {
      *on_device = true;
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
}

tb_status tb_exec_kernel_state(tb_exec *e, size_t step, tb_tensor *const *in, const tb_value_type *const *in_types) {
  node_cache *c = &e->cache[step];
  if (c->kernel && c->state_kernel == c->kernel) return TB_OK;
  release_state(c);
  tb_exec_restore_consumed(e, step); /* the old state's packed copies are gone: its constants are needed again */
  if (!c->kernel) return TB_OK;
  if (c->kernel->prepare) {
    const tb_node *n = &e->g->nodes[step];
    tb_kernel_ctx kc = tb_exec_kernel_ctx(e, step, c->on_device, in, in_types, NULL, NULL);
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
  for (size_t v = 0; e->const_dev && v < e->g->n_values; v++) tb_tensor_destroy(e->const_dev[v]);
  free(e->const_dev);
  e->const_dev = NULL;
  if (e->placement)
    for (size_t i = 0; i < e->g->n_nodes; i++) {
      free((char *)e->placement[i].why_cpu);
      free((char *)e->placement[i].precision_why);
    }
  free(e->placement);
  e->placement = NULL;
}

/* "no opencl kernel for Resize with inputs (float32, int64)" */
static char *no_kernel_reason(const tb_exec *e, const tb_node *n, const tb_value_type *const *in) {
  char types[256] = "";
  size_t len = 0;
  for (size_t k = 0; k < n->n_inputs && len < sizeof types; k++)
    len += (size_t)snprintf(types + len, sizeof types - len, "%s%s", k ? ", " : "", in[k] ? tb_dtype_name(in[k]->dtype) : "-");
  const char *backend = tb_backend_name(tb_backend_kind_of(e->device));
  char buf[400];
  if (!e->device->ops->find_kernel) snprintf(buf, sizeof buf, "the %s backend runs no kernels in this build", backend);
  else snprintf(buf, sizeof buf, "no %s kernel for %s with inputs (%s)", backend, n->op_type, types);
  return strdup(buf);
}

/* The node's constant inputs on the kernel's side (value inputs and CPU kernels: CPU), NULL for the rest. */
static tb_status constant_inputs(tb_exec *e, const tb_node *n, bool device, tb_tensor **in) {
  for (size_t k = 0; k < n->n_inputs; k++) {
    int v = n->inputs[k];
    in[k] = NULL;
    if (v < 0 || !e->consts[v] || e->g->values[v].is_input) continue;
    if (!device || tb_node_reads_value(n, k)) in[k] = e->consts[v];
    else {
      tb_status st = const_on_device(e, v, &in[k]);
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

/* Choose node i's kernel from the static types and make its state; on the device when it can. */
static tb_status place_node(tb_exec *e, size_t i, bool cpu_fallback) {
  const tb_graph *g = e->g;
  const tb_node *n = &g->nodes[i];
  tb_exec_placement *pl = &e->placement[i];
  node_cache *c = &e->cache[i];
  const tb_value_type **in = e->in_ptrs;
  pl->typed = true;
  for (size_t k = 0; k < n->n_inputs; k++) {
    in[k] = n->inputs[k] >= 0 ? &g->values[n->inputs[k]].type : NULL;
    if (in[k] && !in[k]->has_dtype) pl->typed = false;
  }
  if (!pl->typed) {
    if (e->device) pl->why_cpu = strdup("its input types are known only at run time");
    if (e->bf16_mode == TB_BF16_TRIAL) pl->fp32_only = true; /* no trial can run for it */
    return TB_OK;
  }
  const tb_kernel *k = NULL;
  if (e->device) {
    k = device_kernel(e, n, in);
    if (!k) pl->why_cpu = no_kernel_reason(e, n, in);
  }
  if (k) {
    c->kernel = k;
    c->on_device = true;
    tb_status st = constant_inputs(e, n, true, e->in);
    if (st == TB_OK) st = tb_exec_kernel_state(e, i, e->in, in);
    if (st == TB_OK) {
      pl->on_device = true;
      return TB_OK;
    }
    if (!cpu_fallback) return st;
    char why[600];
    snprintf(why, sizeof why, "the %s kernel could not be prepared: %s", tb_backend_name(tb_backend_kind_of(e->device)),
             tb_last_error());
    pl->why_cpu = strdup(why);
  }
  c->on_device = false;
  c->kernel = tb_exec_cpu_kernel(e, n, in);
  if (!c->kernel) return TB_OK; /* prepare reports nodes without a CPU kernel */
  choose_precision(e, i, in);
  pl->precision = c->kernel->precision;
  tb_status st = constant_inputs(e, n, false, e->in);
  return st == TB_OK ? tb_exec_kernel_state(e, i, e->in, in) : st;
}

tb_status tb_exec_place(tb_exec *e, tb_backend *device, bool cpu_fallback) {
  const tb_graph *g = e->g;
  if (device && tb_backend_kind_of(device) == TB_BACKEND_CPU) device = NULL;
  e->device = device;
  e->placement = calloc(g->n_nodes ? g->n_nodes : 1, sizeof *e->placement);
  if (device) e->const_dev = calloc(g->n_values ? g->n_values : 1, sizeof *e->const_dev);
  if (!e->placement || (device && !e->const_dev)) return tb_error(TB_ERR_OUT_OF_MEMORY, "graph '%s': out of memory placing nodes", g->name);
  tb_status st = TB_OK;
  e->trial_ms_left = TB_BF16_TRIAL_BUDGET_MS;
  tb_exec_drop_file_pages(e); /* what the passes and the executor's copies read; read again when needed */
  for (size_t i = 0; i < g->n_nodes && st == TB_OK; i++) {
    st = place_node(e, i, cpu_fallback);
    if (st == TB_OK && e->device && !e->placement[i].on_device && !e->placement[i].why_cpu)
      st = tb_error(TB_ERR_OUT_OF_MEMORY, "graph '%s': out of memory placing nodes", g->name);
  }
  tb_exec_drop_file_pages(e); /* what the kernels' prepare() read around their weights */
  return st;
}

const tb_exec_placement *tb_exec_placement_of(const tb_exec *e, size_t node) {
  return e && e->placement && node < e->g->n_nodes ? &e->placement[node] : NULL;
}
