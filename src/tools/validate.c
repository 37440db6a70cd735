/* tb_validate: the reference (CPU backend, O0, fp32) and each requested (backend, level, precision) run on
 * the same inputs, given or random from a seed; every output is compared with the reference under the
 * tolerance table's entry for the configuration, and a failing configuration can be localised to the first
 * diverging node (validate_localize.c). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "core/error.h"
#include "tools/validate_impl.h"

static const tb_opt_level all_levels[] = {TB_LEVEL_O0, TB_LEVEL_O1, TB_LEVEL_O2, TB_LEVEL_O3};
static const char *const cpu_only[] = {"cpu"};

/* The model's inputs: given ones borrowed, the others new random CPU tensors (owned[i] true). */
typedef struct inputs {
  size_t n;
  const char **names;
  tb_tensor **tensors;
  bool *owned;
} inputs;

static void inputs_free(inputs *in) {
  for (size_t i = 0; i < in->n; i++)
    if (in->owned && in->owned[i]) tb_tensor_destroy(in->tensors[i]);
  free(in->names);
  free(in->tensors);
  free(in->owned);
  memset(in, 0, sizeof *in);
}

static int64_t bound_dim(const tb_validate_options *o, const char *sym) {
  for (size_t k = 0; sym && sym[0] && k < o->dim_count; k++)
    if (strcmp(o->dim_names[k], sym) == 0) return o->dim_values[k];
  return 1;
}

static tb_status make_inputs(tb_model *model, tb_backend *cpu, const tb_validate_options *o, inputs *in) {
  size_t n = tb_model_input_count(model);
  in->names = calloc(n ? n : 1, sizeof *in->names);
  in->tensors = calloc(n ? n : 1, sizeof *in->tensors);
  in->owned = calloc(n ? n : 1, sizeof *in->owned);
  if (!in->names || !in->tensors || !in->owned) return tb_error(TB_ERR_OUT_OF_MEMORY, "tb_validate: out of memory");
  in->n = n;
  for (size_t k = 0; k < o->input_count; k++) {
    bool found = false;
    for (size_t i = 0; i < n && !found; i++) {
      tb_model_io io = {.size = sizeof io};
      if (tb_model_input(model, i, &io) == TB_OK && strcmp(io.name, o->input_names[k]) == 0) found = true;
    }
    if (!found) return tb_error(TB_ERR_INVALID_ARGUMENT, "tb_validate: the model has no input named '%s'", o->input_names[k]);
  }
  for (size_t i = 0; i < n; i++) {
    tb_model_io io = {.size = sizeof io};
    tb_status st = tb_model_input(model, i, &io);
    if (st != TB_OK) return st;
    in->names[i] = io.name;
    for (size_t k = 0; k < o->input_count; k++)
      if (strcmp(io.name, o->input_names[k]) == 0) in->tensors[i] = o->inputs[k];
    if (in->tensors[i]) continue;
    int64_t shape[TB_MAX_DIMS];
    size_t ndim = io.has_shape ? io.ndim : 0;
    for (size_t d = 0; d < ndim; d++) shape[d] = io.dims[d] >= 0 ? io.dims[d] : bound_dim(o, io.dim_names[d]);
    st = tb_tensor_create(cpu, io.dtype, ndim, shape, &in->tensors[i]);
    if (st != TB_OK) return st;
    in->owned[i] = true;
    st = tb_tensor_fill_random(in->tensors[i], o->seed, i);
    if (st != TB_OK) return st;
  }
  return TB_OK;
}

static tb_status prepare(tb_model *model, tb_backend *b, const tb_validate_options *o, tb_opt_level level,
                         tb_precision precision, tb_prepared **out) {
  tb_prepare_options po = {.size = sizeof po, .level = level, .precision = precision, .dim_count = o->dim_count,
                           .dim_names = o->dim_names, .dim_values = o->dim_values};
  return tb_model_prepare(model, b, &po, out, NULL);
}

static tb_status run(tb_prepared *p, const inputs *in, size_t n_out, tb_tensor **outs) {
  return tb_prepared_run(p, in->n, in->names, in->tensors, n_out, NULL, outs);
}

static void destroy_all(tb_tensor **t, size_t n) {
  for (size_t i = 0; t && i < n; i++) tb_tensor_destroy(t[i]);
}

/* Fail cfg with the current error text. */
static void fail(tb_validation_report *r, tbv_config *cfg, const char *what) {
  cfg->info.passed = false;
  cfg->info.error = tb_arena_printf(&r->arena, "%s: %s", what, tb_last_error());
}

/* Compare one configuration's outputs with the reference's (host copies in ref, tensors in ref_t). */
static tb_status compare_outputs(tb_validation_report *r, tbv_config *cfg, tb_model *model, tb_tensor **got,
                                 tb_tensor **ref_t, size_t n_out) {
  cfg->outputs = tb_arena_alloc(&r->arena, (n_out ? n_out : 1) * sizeof *cfg->outputs);
  if (!cfg->outputs) return tb_error(TB_ERR_OUT_OF_MEMORY, "tb_validate: out of memory");
  cfg->info.output_count = n_out;
  cfg->info.passed = true;
  for (size_t j = 0; j < n_out; j++) {
    tb_output_metrics *m = &cfg->outputs[j];
    m->size = sizeof *m;
    tb_status st = tb_compare_tensors(got[j], ref_t[j], cfg->info.tolerance.rtol, cfg->info.tolerance.atol, m);
    if (st != TB_OK) return st;
    tb_model_io io = {.size = sizeof io};
    m->name = tb_model_output(model, j, &io) == TB_OK ? tb_arena_strdup(&r->arena, io.name) : "";
    cfg->info.passed &= m->passed;
  }
  return TB_OK;
}

static tb_status lookup(const tb_validate_options *o, tb_backend_kind kind, tb_precision precision, tb_opt_level level,
                        tb_tolerance *tol) {
  tol->size = sizeof *tol;
  tb_status st = tb_tolerance_lookup(kind, precision == TB_PRECISION_AUTO ? TB_PRECISION_FP32 : precision, level, tol);
  if (st == TB_OK && o->override_tolerance) {
    tol->rtol = o->rtol;
    tol->atol = o->atol;
    tol->source = "given";
    tol->note = "given by the caller instead of the table";
  }
  return st;
}

/* One configuration. Errors of the configuration itself fail it; only OOM and internal errors return. */
static tb_status check_config(tb_validation_report *r, tb_model *model, const tb_validate_options *o, const char *request,
                              tb_opt_level level, const inputs *in, tb_prepared *ref_p, tb_tensor **ref_t, size_t n_out) {
  tbv_config *cfg = tb_tbv_report_add(r, request, level, o->precision);
  if (!cfg) return tb_error(TB_ERR_OUT_OF_MEMORY, "tb_validate: out of memory");
  tb_backend *b = NULL;
  tb_prepared *p = NULL;
  tb_tensor **got = calloc(n_out ? n_out : 1, sizeof *got);
  if (!got) return tb_error(TB_ERR_OUT_OF_MEMORY, "tb_validate: out of memory");
  tb_status st = TB_OK;
  if (tb_backend_create(request, &b) != TB_OK) {
    fail(r, cfg, "backend");
    goto done;
  }
  cfg->info.device = tb_arena_strdup(&r->arena, tb_backend_device(b)->name);
  if (prepare(model, b, o, level, o->precision, &p) != TB_OK) {
    fail(r, cfg, "prepare");
    goto done;
  }
  cfg->info.precision = tb_prepared_result(p)->precision;
  st = lookup(o, tb_backend_kind_of(b), cfg->info.precision, level, &cfg->info.tolerance);
  if (st != TB_OK) goto done;
  if (run(p, in, n_out, got) != TB_OK) {
    fail(r, cfg, "run");
    goto done;
  }
  st = compare_outputs(r, cfg, model, got, ref_t, n_out);
  if (st == TB_OK && !cfg->info.passed && o->localize)
    st = tb_tbv_localize(r, cfg, ref_p, p, in->n, in->names, in->tensors);
done:
  destroy_all(got, n_out);
  free(got);
  tb_prepared_destroy(p);
  tb_backend_destroy(b);
  return st;
}

static tb_status check_options(const tb_model *model, const tb_validate_options *o, tb_validation_report **out) {
  if (!model || !o || !out)
    return tb_error(TB_ERR_INVALID_ARGUMENT, "tb_validate: model, options and out_report must not be NULL");
  *out = NULL;
  if (o->size < sizeof *o)
    return tb_error(TB_ERR_INVALID_ARGUMENT, "tb_validate: options->size is %zu; set it to sizeof(tb_validate_options) (%zu)",
                    o->size, sizeof *o);
  if ((o->backend_count && !o->backends) || (o->level_count && !o->levels) || (o->input_count && (!o->input_names || !o->inputs)) ||
      (o->dim_count && (!o->dim_names || !o->dim_values)))
    return tb_error(TB_ERR_INVALID_ARGUMENT, "tb_validate: a count is non-zero but its array is NULL");
  for (size_t i = 0; i < o->level_count; i++)
    if ((unsigned)o->levels[i] > TB_LEVEL_O3)
      return tb_error(TB_ERR_INVALID_ARGUMENT, "tb_validate: level %d is not one of O0..O3", (int)o->levels[i]);
  if ((unsigned)o->precision > TB_PRECISION_TF32)
    return tb_error(TB_ERR_INVALID_ARGUMENT, "tb_validate: precision %d is not auto, fp32, bf16, fp16, fp8 or tf32", (int)o->precision);
  if (o->override_tolerance && (!(o->rtol >= 0) || !(o->atol >= 0)))
    return tb_error(TB_ERR_INVALID_ARGUMENT, "tb_validate: rtol %g and atol %g must be >= 0", o->rtol, o->atol);
  return TB_OK;
}

tb_status tb_validate(tb_model *model, const tb_validate_options *o, tb_validation_report **out) {
  tb_status st = check_options(model, o, out);
  if (st != TB_OK) return st;
  size_t n_back = o->backend_count ? o->backend_count : 1, n_lev = o->level_count ? o->level_count : 4;
  const char *const *backends = o->backend_count ? o->backends : cpu_only;
  const tb_opt_level *levels = o->level_count ? o->levels : all_levels;
  size_t n_out = tb_model_output_count(model);
  tb_backend *cpu = NULL;
  tb_prepared *ref_p = NULL;
  inputs in = {0};
  tb_tensor **ref_t = calloc(n_out ? n_out : 1, sizeof *ref_t);
  tb_validation_report *r = tb_tbv_report_new();
  if (!ref_t || !r) st = tb_error(TB_ERR_OUT_OF_MEMORY, "tb_validate: out of memory");
  if (st == TB_OK) st = tb_backend_create("cpu", &cpu);
  if (st == TB_OK) st = make_inputs(model, cpu, o, &in);
  if (st == TB_OK) st = prepare(model, cpu, o, TB_LEVEL_O0, TB_PRECISION_FP32, &ref_p);
  if (st == TB_OK) st = run(ref_p, &in, n_out, ref_t);
  if (st != TB_OK) {
    char why[768];
    snprintf(why, sizeof why, "%s", tb_last_error());
    st = tb_error(st, "tb_validate: the reference (cpu, O0, fp32) failed: %s", why);
  }
  if (st == TB_OK) {
    r->seed = o->seed;
    r->sha256 = tb_arena_strdup(&r->arena, tb_model_sha256(model));
  }
  for (size_t b = 0; b < n_back && st == TB_OK; b++)
    for (size_t l = 0; l < n_lev && st == TB_OK; l++)
      st = check_config(r, model, o, backends[b], levels[l], &in, ref_p, ref_t, n_out);
  if (st == TB_OK && r->arena.failed) st = tb_error(TB_ERR_OUT_OF_MEMORY, "tb_validate: out of memory for the report");
  destroy_all(ref_t, n_out);
  free(ref_t);
  tb_prepared_destroy(ref_p);
  inputs_free(&in);
  tb_backend_destroy(cpu);
  if (st != TB_OK) {
    tb_validation_report_destroy(r);
    return st;
  }
  *out = r;
  return TB_OK;
}
