/* A soak worker: its own backend handles and one prepared model per (backend, model, level); it runs them in
 * turn, each time with the configuration's next shape, and checks every output against the CPU O0 reference
 * within the tolerance table's entry for the backend, the precision preparation chose and the level. */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "soak.h"

enum { FAILURE_PRINT_LIMIT = 10, LEAK_BYTES = 256 * 1024 };

static atomic_ullong failures_printed;

void soak_report_failure(const char *fmt, ...) {
  if (atomic_fetch_add(&failures_printed, 1) >= FAILURE_PRINT_LIMIT) return;
  char text[1024];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(text, sizeof text, fmt, ap);
  va_end(ap);
  fprintf(stderr, "tb_soak: FAILED: %s\n", text);
}

int soak_worker_setup(soak_worker *w) {
  const soak_options *o = w->options;
  for (size_t b = 0; b < o->backend_count; b++) {
    if (tb_backend_create(o->backends[b], &w->backends[b]) != TB_OK) {
      fprintf(stderr, "tb_soak: thread %d cannot create backend '%s': %s\n", w->index, o->backends[b],
              tb_last_error());
      return SOAK_EXIT_SETUP;
    }
    for (size_t m = 0; m < o->model_count; m++) {
      for (size_t l = 0; l < o->level_count; l++) {
        tb_prepare_options po = {.size = sizeof po, .level = o->levels[l], .precision = TB_PRECISION_AUTO};
        const tb_prepare_result *result = NULL;
        if (tb_model_prepare(w->models[m].model, w->backends[b], &po, &w->prepared[b][m][l], &result) != TB_OK) {
          fprintf(stderr, "tb_soak: thread %d cannot prepare %s on %s at %s: %s\n", w->index, w->models[m].path,
                  o->backends[b], tb_opt_level_name(o->levels[l]), tb_last_error());
          return SOAK_EXIT_SETUP;
        }
        w->precision[b][m][l] = result->precision;
      }
    }
  }
  return 0;
}

/* "batch=3" (every symbolic dim of the case and its value), or "fixed shape". */
static void describe_shape(const soak_model *model, const soak_case *c, char *buf, size_t size) {
  if (model->symbolic[0]) snprintf(buf, size, "%s=%lld", model->symbolic, (long long)c->dim_value);
  else snprintf(buf, size, "fixed shape");
}

/* The test-only faults, on thread 0 once the warm-up is over. */
static void inject_fault(soak_worker *w, tb_tensor **outputs) {
  switch (w->options->inject) {
    case SOAK_INJECT_LEAK:
      if (w->leaked_count < sizeof w->leaked / sizeof w->leaked[0]) {
        void *block = malloc(LEAK_BYTES);
        if (block) {
          memset(block, 0x5a, LEAK_BYTES);
          w->leaked[w->leaked_count++] = block;
        }
      }
      break;
    case SOAK_INJECT_RESERVED:
      if (w->kept_count < sizeof w->kept / sizeof w->kept[0]) {
        w->kept[w->kept_count++] = outputs[0];
        outputs[0] = NULL;
      }
      break;
    case SOAK_INJECT_CORRUPT:
      if (!w->corrupted && tb_tensor_dtype(outputs[0]) == TB_DTYPE_F32 && tb_tensor_numel(outputs[0]) > 0) {
        size_t bytes = tb_tensor_nbytes(outputs[0]);
        float *host = malloc(bytes);
        if (host && tb_tensor_copy_to_host(outputs[0], host, bytes) == TB_OK) {
          host[0] += 1000.0f;
          w->corrupted = tb_tensor_copy_from_host(outputs[0], host, bytes) == TB_OK;
        }
        free(host);
      }
      break;
    case SOAK_INJECT_NONE: break;
  }
}

/* Compares every output with the reference; returns the number that failed (each reported). */
static int check_outputs(soak_worker *w, size_t b, size_t m, size_t l, const soak_case *c, tb_tensor **outputs,
                         unsigned long long run) {
  const soak_options *o = w->options;
  const soak_model *model = &w->models[m];
  tb_tolerance tol = {.size = sizeof tol};
  tb_status st = tb_tolerance_lookup(tb_backend_kind_of(w->backends[b]), w->precision[b][m][l], o->levels[l], &tol);
  int failed = 0;
  char where[384];
  char shape[160];
  describe_shape(model, c, shape, sizeof shape);
  snprintf(where, sizeof where, "of %s on %s at %s (thread %d, run %llu, %s)", model->name, o->backends[b],
           tb_opt_level_name(o->levels[l]), w->index, run, shape);
  if (st != TB_OK) {
    soak_report_failure("no tolerance for the outputs %s: %s", where, tb_last_error());
    return (int)model->output_count;
  }
  for (size_t k = 0; k < model->output_count; k++) {
    tb_output_metrics met = {.size = sizeof met};
    st = tb_compare_tensors(outputs[k], c->reference[k], tol.rtol, tol.atol, &met);
    if (st != TB_OK) {
      soak_report_failure("output '%s' %s cannot be compared with the CPU O0 reference: %s", model->output_names[k],
                          where, tb_last_error());
      failed++;
    } else if (!met.passed) {
      soak_report_failure("output '%s' %s differs from the CPU O0 reference: %lld of %lld elements outside "
                          "atol %g * S + rtol %g * |ref| (max abs error %g, max rel error %g, shape %s)",
                          model->output_names[k], where, (long long)met.mismatches, (long long)met.numel, tol.atol,
                          tol.rtol, met.max_abs_error, met.max_rel_error, met.shape_matches ? "matches" : "differs");
      failed++;
    }
  }
  return failed;
}

static void run_once(soak_worker *w, size_t b, size_t m, size_t l, const soak_case *c) {
  const soak_model *model = &w->models[m];
  tb_tensor *outputs[SOAK_MAX_IO] = {0};
  unsigned long long run = atomic_load(&w->runs[b][m][l]) + 1;
  tb_status st = tb_prepared_run(w->prepared[b][m][l], model->input_count, model->input_names, c->inputs,
                                 model->output_count, NULL, outputs);
  int failed = 0;
  if (st != TB_OK) {
    char shape[160];
    describe_shape(model, c, shape, sizeof shape);
    soak_report_failure("%s on %s at %s (thread %d, run %llu, %s) failed: %s", model->name, w->options->backends[b],
                        tb_opt_level_name(w->options->levels[l]), w->index, run, shape, tb_last_error());
    failed = 1;
  } else {
    bool inject = w->index == 0 && atomic_load(w->warm) && model->output_count > 0;
    if (inject && w->options->inject == SOAK_INJECT_CORRUPT) inject_fault(w, outputs);
    failed = check_outputs(w, b, m, l, c, outputs, run);
    if (inject && w->options->inject != SOAK_INJECT_CORRUPT) inject_fault(w, outputs);
  }
  for (size_t k = 0; k < model->output_count; k++) tb_tensor_destroy(outputs[k]);
  atomic_fetch_add(&w->runs[b][m][l], 1);
  if (failed) atomic_fetch_add(&w->failures[b][m][l], 1);
}

void *soak_worker_run(void *arg) {
  soak_worker *w = arg;
  const soak_options *o = w->options;
  const size_t combos = o->backend_count * o->model_count * o->level_count;
  size_t *visits = calloc(combos, sizeof *visits);
  if (!visits) {
    soak_report_failure("thread %d: out of host memory for %zu counters", w->index, combos);
    return NULL;
  }
  size_t uncovered = combos;
  for (size_t i = 0; !atomic_load(w->stop); i++) {
    size_t combo = i % combos;
    size_t l = combo % o->level_count, m = combo / o->level_count % o->model_count;
    size_t b = combo / (o->level_count * o->model_count);
    const soak_model *model = &w->models[m];
    size_t k = visits[combo]++;
    run_once(w, b, m, l, &model->cases[(k + (size_t)w->index) % model->case_count]);
    if (visits[combo] == 2 * model->case_count && --uncovered == 0) atomic_store(&w->covered, true);
  }
  free(visits);
  return NULL;
}

void soak_worker_destroy(soak_worker *w) {
  for (size_t i = 0; i < w->kept_count; i++) tb_tensor_destroy(w->kept[i]);
  for (size_t i = 0; i < w->leaked_count; i++) free(w->leaked[i]);
  for (size_t b = 0; b < SOAK_MAX_BACKENDS; b++) {
    for (size_t m = 0; m < SOAK_MAX_MODELS; m++) {
      for (size_t l = 0; l < SOAK_MAX_LEVELS; l++) tb_prepared_destroy(w->prepared[b][m][l]);
    }
    tb_backend_destroy(w->backends[b]);
  }
}
