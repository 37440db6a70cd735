/* tb_prepared_run: inputs matched to the graph's inputs by name, their dtypes and shapes checked against
 * the model's declarations (symbolic dims bound per run, consistently across inputs), copied to the CPU
 * when they live on neither the CPU nor the prepared backend, the executor run (or its captured graph replayed,
 * replay.h) with the model's stream bound, and the outputs returned on the prepared backend, complete; the run's
 * device time from events at its start and end (tb_prepared_device_ms). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "core/error.h"
#include "backend/allocator.h"
#include "backend/backend_impl.h"
#include "backend/run_checks.h"
#include "model/prepared.h"
#include "model/replay.h"

enum { MAX_GRAPH_IO = 1024 };

static const char *shape_str(const int64_t *dims, size_t ndim, char *buf, size_t cap) {
  size_t len = (size_t)snprintf(buf, cap, "[");
  for (size_t d = 0; d < ndim && len < cap; d++)
    len += (size_t)snprintf(buf + len, cap - len, "%s%lld", d ? ", " : "", (long long)dims[d]);
  if (len < cap) snprintf(buf + len, cap - len, "]");
  return buf;
}

static const char *names_of(const tb_graph *g, const int *list, size_t count, char *buf, size_t cap) {
  size_t len = 0;
  buf[0] = '\0';
  for (size_t k = 0; k < count && len < cap; k++)
    len += (size_t)snprintf(buf + len, cap - len, "%s%s", k ? ", " : "", g->values[list[k]].name);
  return buf;
}

/* The given tensor against the declared type; symbolic sizes seen so far in bound[symbol] (-1 unset). */
static tb_status check_input(const tb_graph *g, int v, const tb_tensor *t, int64_t *bound, int *bound_by) {
  const tb_value *val = &g->values[v];
  const tb_value_type *want = &val->type;
  char a[256], b[256];
  if (want->has_dtype && tb_tensor_dtype(t) != want->dtype)
    return tb_error(TB_ERR_INVALID_ARGUMENT, "input '%s': dtype %s expected, got %s", val->name, tb_dtype_name(want->dtype),
                    tb_dtype_name(tb_tensor_dtype(t)));
  if (!want->has_shape) return TB_OK;
  size_t ndim = tb_tensor_ndim(t);
  const int64_t *shape = tb_tensor_shape(t);
  bool ok = ndim == want->ndim;
  for (size_t d = 0; ok && d < ndim; d++) ok = want->dims[d].value < 0 || want->dims[d].value == shape[d];
  if (!ok)
    return tb_error(TB_ERR_INVALID_ARGUMENT, "input '%s': shape %s expected, got %s", val->name,
                    tb_value_type_dims_str(g, want, a, sizeof a), shape_str(shape, ndim, b, sizeof b));
  for (size_t d = 0; d < ndim; d++) {
    int s = want->dims[d].symbol;
    if (want->dims[d].value >= 0 || s < 0 || !g->model || (size_t)s >= g->model->n_symbols) continue;
    if (bound[s] < 0) {
      bound[s] = shape[d];
      bound_by[s] = v;
    } else if (bound[s] != shape[d]) {
      return tb_error(TB_ERR_INVALID_ARGUMENT, "input '%s': dimension %zu ('%s') is %lld, but input '%s' gave '%s' = %lld",
                      val->name, d, g->model->symbols[s], (long long)shape[d], g->values[bound_by[s]].name,
                      g->model->symbols[s], (long long)bound[s]);
    }
  }
  return TB_OK;
}

/* Match the caller's inputs to the graph's (in g->inputs order, into cpu_in). Contiguous tensors on the CPU or
 * on the prepared backend are used as they are; others are copied to the CPU (copies in owned[k]). */
static tb_status gather_inputs(tb_prepared *p, size_t n_inputs, const char *const *names, tb_tensor *const *inputs,
                               tb_tensor **cpu_in, bool *owned) {
  const tb_graph *g = p->graph;
  size_t ns = g->model ? g->model->n_symbols : 0;
  int64_t *bound = malloc((ns + 1) * sizeof *bound);
  int *bound_by = malloc((ns + 1) * sizeof *bound_by);
  char list[512];
  tb_status st = TB_OK;
  if (!bound || !bound_by) st = tb_error(TB_ERR_OUT_OF_MEMORY, "tb_prepared_run: out of host memory");
  for (size_t s = 0; s < ns && st == TB_OK; s++) {
    bound[s] = tb_dim_binding_find(g, &p->dims, (int)s);
    bound_by[s] = -1;
  }
  for (size_t i = 0; i < n_inputs && st == TB_OK; i++) {
    if (!names[i] || !inputs[i]) {
      st = tb_error(TB_ERR_INVALID_ARGUMENT, "tb_prepared_run: input_names[%zu] and inputs[%zu] must not be NULL", i, i);
      break;
    }
    size_t k = 0;
    while (k < g->n_inputs && strcmp(g->values[g->inputs[k]].name, names[i]) != 0) k++;
    if (k == g->n_inputs) {
      st = tb_error(TB_ERR_INVALID_ARGUMENT, "input '%s' is not an input of the model (its inputs: %s)", names[i],
                    names_of(g, g->inputs, g->n_inputs, list, sizeof list));
      break;
    }
    if (cpu_in[k]) {
      st = tb_error(TB_ERR_INVALID_ARGUMENT, "input '%s' is given twice", names[i]);
      break;
    }
    st = check_input(g, g->inputs[k], inputs[i], bound, bound_by);
    if (st != TB_OK) break;
    tb_tensor *t = inputs[i];
    bool usable = tb_tensor_is_contiguous(t) &&
                  (tb_backend_kind_of(tb_tensor_backend(t)) == TB_BACKEND_CPU || tb_tensor_backend(t) == p->backend);
    if (!usable) {
      tb_tensor *copy = NULL;
      st = tb_tensor_create(p->cpu, tb_tensor_dtype(t), tb_tensor_ndim(t), tb_tensor_shape(t), &copy);
      if (st == TB_OK) st = tb_tensor_copy(copy, t);
      if (st != TB_OK) {
        tb_tensor_destroy(copy);
        break;
      }
      t = copy;
      owned[k] = true;
    }
    cpu_in[k] = t;
  }
  for (size_t k = 0; k < g->n_inputs && st == TB_OK; k++) {
    const tb_value *val = &g->values[g->inputs[k]];
    if (!cpu_in[k] && !val->constant)
      st = tb_error(TB_ERR_INVALID_ARGUMENT, "input '%s' was not given (the model's inputs: %s)", val->name,
                    names_of(g, g->inputs, g->n_inputs, list, sizeof list));
  }
  free(bound);
  free(bound_by);
  return st;
}

/* Which graph output each requested output is. */
static tb_status match_outputs(const tb_graph *g, size_t n_outputs, const char *const *names, size_t *which) {
  char list[512];
  if (!names) {
    if (n_outputs != g->n_outputs)
      return tb_error(TB_ERR_INVALID_ARGUMENT, "tb_prepared_run: %zu outputs requested without names; the model has %zu (%s)",
                      n_outputs, g->n_outputs, names_of(g, g->outputs, g->n_outputs, list, sizeof list));
    for (size_t i = 0; i < n_outputs; i++) which[i] = i;
    return TB_OK;
  }
  for (size_t i = 0; i < n_outputs; i++) {
    size_t k = 0;
    while (k < g->n_outputs && (!names[i] || strcmp(g->values[g->outputs[k]].name, names[i]) != 0)) k++;
    if (k == g->n_outputs)
      return tb_error(TB_ERR_INVALID_ARGUMENT, "output '%s' is not an output of the model (its outputs: %s)",
                      names[i] ? names[i] : "(null)", names_of(g, g->outputs, g->n_outputs, list, sizeof list));
    which[i] = k;
  }
  return TB_OK;
}

void *tb_prepared_bind_stream(tb_prepared *p) {
  return p->stream ? p->backend->ops->stream_bind(p->backend->state, p->stream) : NULL;
}

void tb_prepared_unbind_stream(tb_prepared *p, void *before) {
  if (p->stream) p->backend->ops->stream_bind(p->backend->state, before);
}

/* Record timer i (0: start, 1: end) on the model's stream, made on first use; false where the backend has no
 * device timer or it failed (the run then has no device time: never an error of the run). */
static bool record_timer(tb_prepared *p, int i) {
  const tb_backend_ops *ops = p->backend->ops;
  if (!p->stream || !ops->event_create || !ops->event_elapsed_ms) return false;
  if (!p->timer[i] && tb_event_create(p->backend, &p->timer[i]) != TB_OK) return false;
  return tb_event_record(p->timer[i]) == TB_OK;
}

/* After the run's stream was waited for: the time between the two timers. */
static void read_timers(tb_prepared *p) {
  p->device_ms_known = tb_event_elapsed_ms(p->timer[0], p->timer[1], &p->device_ms) == TB_OK;
}

tb_status tb_prepared_device_ms(const tb_prepared *p, double *out_ms) {
  if (!p || !out_ms) return tb_error(TB_ERR_INVALID_ARGUMENT, "tb_prepared_device_ms: prepared and out_ms must not be NULL");
  const tb_backend_ops *ops = p->backend->ops;
  if (!p->stream || !ops->event_create || !ops->event_elapsed_ms)
    return tb_error(TB_ERR_UNSUPPORTED, "tb_prepared_device_ms: the %s backend has no device timer; time the runs on the host",
                    tb_backend_name(tb_backend_kind_of(p->backend)));
  if (!p->device_ms_known)
    return tb_error(TB_ERR_INVALID_ARGUMENT, "tb_prepared_device_ms: no run of this prepared model has been timed yet; run it first");
  *out_ms = p->device_ms;
  return TB_OK;
}

bool tb_prepared_graph_capture(const tb_prepared *p, const char **out_why) {
  const char *why = !p ? "prepared is NULL" : p->replay ? tb_replay_why_not(p->replay) : p->result.graph_capture_why;
  if (out_why) *out_why = why ? why : "";
  return p && p->replay && !tb_replay_why_not(p->replay);
}

/* The executor's run, or its graph's replay when the model has one and nobody watches the nodes one by one. */
static tb_status execute(tb_prepared *p, tb_tensor *const *inputs, tb_tensor **outputs, bool *replayed) {
  bool ran = false;
  tb_status st = TB_OK;
  if (p->replay && !tb_exec_observed(p->exec)) st = tb_replay_run(p->replay, p->exec, p->graph, inputs, outputs, &ran);
  *replayed = ran;
  if (st == TB_OK && !ran) st = tb_exec_run(p->exec, inputs, outputs);
  return st;
}

/* The checks the device kernels left for the end of the run (backend/run_checks.h), the stream being idle: a
 * graph's, kept for its replays, or this run's own. They run after a failed run too: a bad index found by the device
 * is the cause of what failed after it (a zero written for it, a node fed that), so its sentence wins. */
static tb_status run_checks(tb_prepared *p, bool replayed, tb_status st) {
  if (replayed) return tb_run_checks_run(tb_replay_checks(p->replay), st);
  tb_run_check *list = tb_run_checks_take();
  st = tb_run_checks_run(list, st);
  tb_run_checks_free(list);
  return st;
}

tb_status tb_prepared_run(tb_prepared *p, size_t n_inputs, const char *const *input_names, tb_tensor *const *inputs,
                          size_t n_outputs, const char *const *output_names, tb_tensor **outputs) {
  static const char fn[] = "tb_prepared_run";
  if (!p) return tb_error(TB_ERR_INVALID_ARGUMENT, "%s: prepared must not be NULL", fn);
  if ((n_inputs && (!input_names || !inputs)) || (n_outputs && !outputs))
    return tb_error(TB_ERR_INVALID_ARGUMENT, "%s: input_names, inputs and outputs must not be NULL when their counts are not 0", fn);
  for (size_t i = 0; i < n_outputs; i++) outputs[i] = NULL;
  const tb_graph *g = p->graph;
  if (g->n_inputs > MAX_GRAPH_IO || g->n_outputs > MAX_GRAPH_IO || n_outputs > MAX_GRAPH_IO)
    return tb_error(TB_ERR_UNSUPPORTED, "%s: more than %d graph inputs or outputs", fn, MAX_GRAPH_IO);
  tb_tensor **cpu_in = calloc(g->n_inputs + 1, sizeof *cpu_in);
  bool *owned = calloc(g->n_inputs + 1, sizeof *owned);
  tb_tensor **all = calloc(g->n_outputs + 1, sizeof *all);
  size_t *which = calloc(n_outputs + 1, sizeof *which);
  tb_status st = TB_OK;
  if (!cpu_in || !owned || !all || !which) st = tb_error(TB_ERR_OUT_OF_MEMORY, "%s: out of host memory", fn);
  if (st == TB_OK) st = match_outputs(g, n_outputs, output_names, which);
  if (st == TB_OK) st = gather_inputs(p, n_inputs, input_names, inputs, cpu_in, owned);
  void *before = tb_prepared_bind_stream(p);
  /* The device blocks this run frees stay out of the allocator's cache until its stream has finished with them:
   * the cache is shared by every model on the backend, and another model's stream is not ordered with this one. */
  tb_block_hold run_hold = {0};
  tb_allocator *device_allocator = p->stream ? p->backend->allocator : NULL;
  if (device_allocator) tb_allocator_hold_begin(device_allocator, &run_hold);
  bool timed = st == TB_OK && record_timer(p, 0);
  p->device_ms_known = false;
  tb_run_checks_free(tb_run_checks_take()); /* none left from a run elsewhere on this thread */
  bool replayed = false;
  if (st == TB_OK) st = execute(p, cpu_in, all, &replayed);
  for (size_t i = 0; i < n_outputs && st == TB_OK; i++) {
    tb_tensor *t = all[which[i]];
    size_t prev = i;
    for (size_t j = 0; j < i && prev == i; j++)
      if (which[j] == which[i]) prev = j;
    if (prev < i) {
      t = outputs[prev]; /* the same output asked for twice: a copy of the first */
    } else if (tb_tensor_backend(t) == p->backend) {
      outputs[i] = t;
      all[which[i]] = NULL;
      continue;
    }
    st = tb_tensor_create(p->backend, tb_tensor_dtype(t), tb_tensor_ndim(t), tb_tensor_shape(t), &outputs[i]);
    if (st == TB_OK) st = tb_tensor_copy(outputs[i], t);
  }
  if (all)
    for (size_t k = 0; k < g->n_outputs; k++) tb_tensor_destroy(all[k]);
  timed = timed && st == TB_OK && record_timer(p, 1);
  if (p->stream) { /* the outputs are complete when the run returns */
    tb_status waited = p->backend->ops->stream_synchronize(p->backend->state, p->stream);
    if (st == TB_OK) st = waited;
  }
  st = run_checks(p, replayed, st);
  if (device_allocator) { /* the stream is idle (or failed): what the run freed may go back to the cache */
    tb_allocator_hold_end(device_allocator);
    tb_allocator_hold_release(device_allocator, &run_hold);
  }
  if (timed && st == TB_OK) read_timers(p);
  tb_prepared_unbind_stream(p, before);
  if (cpu_in)
    for (size_t k = 0; k < g->n_inputs; k++)
      if (owned[k]) tb_tensor_destroy(cpu_in[k]);
  if (st != TB_OK)
    for (size_t i = 0; i < n_outputs; i++) {
      tb_tensor_destroy(outputs[i]);
      outputs[i] = NULL;
    }
  free(cpu_in);
  free(owned);
  free(all);
  free(which);
  return st;
}
