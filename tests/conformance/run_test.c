/* One conformance test: load model.onnx, prepare it on the CPU at the requested level, and for each
 * test_data_set_N feed input_K.pb, run, and compare every output with output_K.pb (compare.h).
 * skipped = load or prepare said TB_ERR_UNSUPPORTED (or the test data has a type TensorBridge has no
 * dtype for); failed = wrong values or any other error. */
#include <dirent.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include "compare.h"
#include "conformance.h"
#include "pb_data.h"

#define MAX_IO PB_MAX_IO

static void outcome(conf_test *t, conf_outcome o, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static void outcome(conf_test *t, conf_outcome o, const char *fmt, ...) {
  t->outcome = o;
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(t->reason, sizeof t->reason, fmt, ap);
  va_end(ap);
}

/* A library failure: skipped when UNSUPPORTED at load/prepare, else failed. */
static void library_failure(conf_test *t, const char *step, tb_status status, bool may_skip) {
  outcome(t, may_skip && status == TB_ERR_UNSUPPORTED ? CONF_SKIPPED : CONF_FAILED, "%s: %s: %s", step,
          tb_status_str(status), tb_last_error());
}

static int cmp_str(const void *a, const void *b) { return strcmp(*(char *const *)a, *(char *const *)b); }

/* Names of the test_data_set_* folders, sorted. */
static size_t data_sets(const char *dir, char ***out) {
  *out = NULL;
  DIR *d = opendir(dir);
  if (!d) return 0;
  size_t n = 0, cap = 0;
  char **names = NULL;
  struct dirent *e;
  while ((e = readdir(d)) != NULL) {
    if (strncmp(e->d_name, "test_data_set_", 14) != 0) continue;
    if (n == cap) {
      cap = cap ? cap * 2 : 4;
      char **bigger = realloc(names, cap * sizeof *bigger);
      if (!bigger) break;
      names = bigger;
    }
    names[n] = strdup(e->d_name);
    if (names[n]) n++;
  }
  closedir(d);
  if (n) qsort(names, n, sizeof *names, cmp_str);
  *out = names;
  return n;
}

static size_t count_files(const char *dir, const char *prefix) {
  size_t n = 0;
  char path[PATH_MAX + 64];
  struct stat st;
  for (;; n++) {
    int len = snprintf(path, sizeof path, "%s/%s_%zu.pb", dir, prefix, n);
    if (len < 0 || (size_t)len >= sizeof path || stat(path, &st) != 0) return n;
  }
}

static void index_str(char *buf, size_t cap, const pb_tensor *ref, int64_t flat) {
  int64_t idx[TB_MAX_DIMS];
  for (size_t i = ref->ndim; i-- > 0;) {
    idx[i] = ref->dims[i] ? flat % ref->dims[i] : 0;
    flat = ref->dims[i] ? flat / ref->dims[i] : 0;
  }
  size_t used = 0;
  used += (size_t)snprintf(buf + used, cap - used, "[");
  for (size_t i = 0; i < ref->ndim && used < cap; i++)
    used += (size_t)snprintf(buf + used, cap - used, "%s%lld", i ? ", " : "", (long long)idx[i]);
  if (used < cap) snprintf(buf + used, cap - used, "]");
}

static void dims_str(char *buf, size_t cap, size_t ndim, const int64_t *dims) {
  size_t used = (size_t)snprintf(buf, cap, "[");
  for (size_t i = 0; i < ndim && used < cap; i++)
    used += (size_t)snprintf(buf + used, cap - used, "%s%lld", i ? ", " : "", (long long)dims[i]);
  if (used < cap) snprintf(buf + used, cap - used, "]");
}

/* Compare output k of a data set; false with the outcome set when it does not match. */
static bool check_output(conf_test *t, const char *set, size_t k, const char *name, const tb_tensor *out,
                         pb_tensor *ref) {
  if (tb_tensor_dtype(out) == TB_DTYPE_BF16) pb_tensor_as_bf16(ref);
  if (!ref->has_dtype) {
    outcome(t, CONF_SKIPPED, "%s: output_%zu.pb has ONNX type %s, which TensorBridge has no dtype for", set, k,
            pb_onnx_type_name(ref->onnx_type));
    return false;
  }
  tb_dtype dt = tb_tensor_dtype(out);
  if (dt != ref->dtype) {
    outcome(t, CONF_FAILED, "%s: output %zu '%s' has dtype %s, expected %s", set, k, name, tb_dtype_name(dt),
            tb_dtype_name(ref->dtype));
    return false;
  }
  size_t ndim = tb_tensor_ndim(out);
  const int64_t *shape = tb_tensor_shape(out);
  bool same = ndim == ref->ndim;
  for (size_t i = 0; same && i < ndim; i++) same = shape[i] == ref->dims[i];
  if (!same) {
    char got[160], want[160];
    dims_str(got, sizeof got, ndim, shape);
    dims_str(want, sizeof want, ref->ndim, ref->dims);
    outcome(t, CONF_FAILED, "%s: output %zu '%s' has shape %s, expected %s", set, k, name, got, want);
    return false;
  }
  size_t nbytes = tb_tensor_nbytes(out);
  void *host = malloc(nbytes ? nbytes : 1);
  if (!host) {
    outcome(t, CONF_FAILED, "out of memory for output %zu", k);
    return false;
  }
  tb_status st = tb_tensor_copy_to_host(out, host, nbytes);
  if (st != TB_OK) {
    free(host);
    library_failure(t, "tb_tensor_copy_to_host", st, false);
    return false;
  }
  conf_mismatch mm;
  bool ok = conf_compare(dt, host, ref->data, ref->numel, t->rtol, t->atol, &mm);
  free(host);
  if (!ok) {
    char idx[160];
    index_str(idx, sizeof idx, ref, mm.index);
    bool floating = dt == TB_DTYPE_F64 || dt == TB_DTYPE_F32 || dt == TB_DTYPE_F16 || dt == TB_DTYPE_BF16 ||
                    dt == TB_DTYPE_FP8_E4M3FN || dt == TB_DTYPE_FP8_E5M2;
    char rule[64];
    if (floating) snprintf(rule, sizeof rule, "out of tolerance (rtol %g, atol %g)", t->rtol, t->atol);
    else snprintf(rule, sizeof rule, "different (compared exactly)");
    outcome(t, CONF_FAILED, "%s: output %zu '%s' (%s): element %s is %.9g, expected %.9g; %lld of %lld elements %s, "
            "max abs error %.3g", set, k, name, tb_dtype_name(dt), idx, mm.actual, mm.expected, (long long)mm.count,
            (long long)ref->numel, rule, mm.max_abs_err);
  }
  return ok;
}

/* One data set; false with the outcome set when it fails or skips. */
static bool run_set(conf_test *t, tb_backend *backend, tb_model *model, tb_prepared *prepared,
                    const pb_model_info *info, const char *set) {
  char dir[PATH_MAX + 64], path[PATH_MAX + 128], err[600];
  snprintf(dir, sizeof dir, "%s/%s", t->dir, set);
  size_t n_in = count_files(dir, "input"), n_ref = count_files(dir, "output");
  size_t n_out = tb_model_output_count(model);
  if (n_in > MAX_IO || n_out > MAX_IO) {
    outcome(t, CONF_FAILED, "%s: %zu inputs / %zu outputs; the runner handles %d", set, n_in, n_out, MAX_IO);
    return false;
  }
  if (n_ref != n_out) {
    outcome(t, CONF_FAILED, "%s: the model declares %zu outputs but the test data has %zu", set, n_out, n_ref);
    return false;
  }
  tb_tensor *inputs[MAX_IO] = {0}, *outputs[MAX_IO] = {0};
  const char *names[MAX_IO];
  tb_model_io io[MAX_IO];
  bool ok = false;
  size_t model_inputs = tb_model_input_count(model);
  for (size_t k = 0; k < n_in; k++) {
    pb_tensor pt;
    snprintf(path, sizeof path, "%s/input_%zu.pb", dir, k);
    if (k < info->input_count && info->input_kinds[k] != PB_KIND_TENSOR) {
      outcome(t, CONF_SKIPPED, "%s: input %zu '%s' is a %s; the runner feeds tensors only", set, k,
              info->input_names[k], pb_kind_name(info->input_kinds[k]));
      goto done;
    }
    if (!pb_tensor_read(path, &pt, err, sizeof err)) {
      outcome(t, CONF_FAILED, "%s: reading input %zu: %s", set, k, err);
      goto done;
    }
    if (k < model_inputs) {
      tb_model_io decl;
      memset(&decl, 0, sizeof decl);
      decl.size = sizeof decl;
      if (tb_model_input(model, k, &decl) == TB_OK && decl.dtype == TB_DTYPE_BF16) pb_tensor_as_bf16(&pt);
    }
    if (!pt.has_dtype) {
      outcome(t, CONF_SKIPPED, "%s: input %zu has ONNX type %s, which TensorBridge has no dtype for", set, k,
              pb_onnx_type_name(pt.onnx_type));
      pb_tensor_free(&pt);
      goto done;
    }
    memset(&io[k], 0, sizeof io[k]);
    io[k].size = sizeof io[k];
    if (k < model_inputs && tb_model_input(model, k, &io[k]) == TB_OK) {
      names[k] = io[k].name;
    } else {
      outcome(t, CONF_FAILED, "%s: the test data has input_%zu.pb but the model declares %zu inputs", set, k,
              model_inputs);
      pb_tensor_free(&pt);
      goto done;
    }
    tb_status st = tb_tensor_create(backend, pt.dtype, pt.ndim, pt.dims, &inputs[k]);
    if (st == TB_OK && pt.nbytes) st = tb_tensor_copy_from_host(inputs[k], pt.data, pt.nbytes);
    pb_tensor_free(&pt);
    if (st != TB_OK) {
      library_failure(t, "creating an input tensor", st, false);
      goto done;
    }
  }
  tb_status st = tb_prepared_run(prepared, n_in, names, inputs, n_out, NULL, outputs);
  if (st != TB_OK) {
    library_failure(t, "tb_prepared_run", st, false);
    goto done;
  }
  for (size_t k = 0; k < n_out; k++) {
    tb_model_io oio;
    memset(&oio, 0, sizeof oio);
    oio.size = sizeof oio;
    const char *oname = tb_model_output(model, k, &oio) == TB_OK ? oio.name : "?";
    pb_tensor ref;
    if (k < info->output_count && info->output_kinds[k] != PB_KIND_TENSOR) {
      outcome(t, CONF_SKIPPED, "%s: output %zu '%s' is a %s; the runner compares tensors only", set, k, oname,
              pb_kind_name(info->output_kinds[k]));
      goto done;
    }
    snprintf(path, sizeof path, "%s/output_%zu.pb", dir, k);
    if (!pb_tensor_read(path, &ref, err, sizeof err)) {
      outcome(t, CONF_FAILED, "%s: reading output %zu: %s", set, k, err);
      goto done;
    }
    if (!outputs[k]) {
      outcome(t, CONF_FAILED, "%s: tb_prepared_run returned TB_OK without output %zu", set, k);
      pb_tensor_free(&ref);
      goto done;
    }
    bool same = check_output(t, set, k, oname, outputs[k], &ref);
    pb_tensor_free(&ref);
    if (!same) goto done;
  }
  ok = true;
done:
  for (size_t k = 0; k < MAX_IO; k++) {
    tb_tensor_destroy(inputs[k]);
    tb_tensor_destroy(outputs[k]);
  }
  return ok;
}

void conf_run_test(const conf_options *o, conf_test *t) {
  struct timespec t0, t1;
  clock_gettime(CLOCK_MONOTONIC, &t0);
  char path[PATH_MAX + 32], err[600];
  pb_model_info info;
  tb_backend *backend = NULL;
  tb_model *model = NULL;
  tb_prepared *prepared = NULL;
  char **sets = NULL;
  size_t n_sets = 0;
  t->outcome = CONF_PASSED;
  t->reason[0] = '\0';
  snprintf(path, sizeof path, "%s/model.onnx", t->dir);
  if (!pb_model_info_read(path, &info, err, sizeof err)) {
    outcome(t, CONF_FAILED, "the runner could not read the model: %s", err);
    goto done;
  }
  tb_status st = tb_backend_create(o->backend, &backend);
  if (st != TB_OK) {
    library_failure(t, "tb_backend_create", st, false);
    goto done;
  }
  st = tb_model_load(path, &model);
  if (st != TB_OK) {
    library_failure(t, "tb_model_load", st, true);
    goto done;
  }
  tb_prepare_options opts;
  memset(&opts, 0, sizeof opts);
  opts.size = sizeof opts;
  opts.level = o->level;
  opts.precision = TB_PRECISION_AUTO;
  const tb_prepare_result *result = NULL;
  st = tb_model_prepare(model, backend, &opts, &prepared, &result);
  if (st != TB_OK) {
    library_failure(t, "tb_model_prepare", st, true);
    goto done;
  }
  t->on_device = result->device_nodes > 0 && result->cpu_fallback_nodes == 0;
  t->rtol = CONF_RTOL;
  t->atol = CONF_ATOL;
  if (result->precision != TB_PRECISION_FP32) {
    tb_tolerance tol = {.size = sizeof tol};
    if (tb_tolerance_lookup(tb_backend_kind_of(backend), result->precision, result->level, &tol) == TB_OK) {
      if (tol.rtol > t->rtol) t->rtol = tol.rtol;
      if (tol.atol > t->atol) t->atol = tol.atol;
    }
  }
  n_sets = data_sets(t->dir, &sets);
  if (n_sets == 0) {
    outcome(t, CONF_FAILED, "no test_data_set_* folder in %s", t->dir);
    goto done;
  }
  for (size_t i = 0; i < n_sets; i++)
    if (!run_set(t, backend, model, prepared, &info, sets[i])) break;
done:
  for (size_t i = 0; i < n_sets; i++) free(sets[i]);
  free(sets);
  tb_prepared_destroy(prepared);
  tb_model_destroy(model);
  tb_backend_destroy(backend);
  clock_gettime(CLOCK_MONOTONIC, &t1);
  t->ms = (double)(t1.tv_sec - t0.tv_sec) * 1e3 + (double)(t1.tv_nsec - t0.tv_nsec) / 1e6;
}
