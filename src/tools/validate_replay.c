/* tb_validate_replay: rerun a record written by `tb run --record` (include/tensorbridge/checkpoint.h) on this
 * machine and compare with the recorded outputs under the record's tolerance. The model must be the recorded
 * one (SHA-256); the record's level and precision are used; the backend is the caller's, else the record's
 * kind when available here, else the CPU. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <tensorbridge/checkpoint.h>
#include "core/error.h"
#include "tools/validate_impl.h"

/* The model file: the caller's, else the recorded path as given, else that name next to the record. */
static tb_status load_model(const char *record_path, const char *model_path, const tb_record_info *info, tb_model **out) {
  if (model_path) return tb_model_load(model_path, out);
  if (!info->model_file[0])
    return tb_error(TB_ERR_INVALID_ARGUMENT, "record '%s' names no model file; give the model's path", record_path);
  if (info->model_file[0] == '/' || access(info->model_file, R_OK) == 0) return tb_model_load(info->model_file, out);
  const char *slash = strrchr(record_path, '/');
  char path[4096];
  snprintf(path, sizeof path, "%.*s%s", slash ? (int)(slash - record_path + 1) : 0, record_path, info->model_file);
  return tb_model_load(path, out);
}

static tb_status open_backend(const char *request, const tb_record_info *info, tb_backend **out, const char **used) {
  if (request) {
    *used = request;
    return tb_backend_create(request, out);
  }
  if (info->backend[0] && tb_backend_create(info->backend, out) == TB_OK) {
    *used = info->backend;
    return TB_OK;
  }
  *used = "cpu";
  return tb_backend_create("cpu", out);
}

typedef struct replay {
  tb_record *rec;
  tb_record_info info;
  tb_model *model;
  tb_backend *cpu, *target;
  tb_prepared *prepared;
  size_t n_in, n_out;
  const char **in_names, **out_names;
  tb_tensor **inputs, **got, **want;
} replay;

static void replay_free(replay *p) {
  for (size_t i = 0; p->inputs && i < p->n_in; i++) tb_tensor_destroy(p->inputs[i]);
  for (size_t i = 0; p->got && i < p->n_out; i++) tb_tensor_destroy(p->got[i]);
  for (size_t i = 0; p->want && i < p->n_out; i++) tb_tensor_destroy(p->want[i]);
  free(p->inputs);
  free(p->got);
  free(p->want);
  free(p->in_names);
  free(p->out_names);
  tb_prepared_destroy(p->prepared);
  tb_backend_destroy(p->target);
  tb_backend_destroy(p->cpu);
  tb_model_destroy(p->model);
  if (p->rec) tb_record_close(p->rec);
}

static tb_status read_tensors(replay *p) {
  p->n_in = tb_record_input_count(p->rec);
  p->n_out = tb_record_output_count(p->rec);
  p->in_names = calloc(p->n_in + 1, sizeof *p->in_names);
  p->out_names = calloc(p->n_out + 1, sizeof *p->out_names);
  p->inputs = calloc(p->n_in + 1, sizeof *p->inputs);
  p->got = calloc(p->n_out + 1, sizeof *p->got);
  p->want = calloc(p->n_out + 1, sizeof *p->want);
  if (!p->in_names || !p->out_names || !p->inputs || !p->got || !p->want)
    return tb_error(TB_ERR_OUT_OF_MEMORY, "tb_validate_replay: out of memory");
  tb_status st = TB_OK;
  for (size_t i = 0; i < p->n_in && st == TB_OK; i++) {
    p->in_names[i] = tb_record_input_name(p->rec, i);
    st = tb_record_read_input(p->rec, i, p->cpu, &p->inputs[i]);
  }
  for (size_t i = 0; i < p->n_out && st == TB_OK; i++) {
    p->out_names[i] = tb_record_output_name(p->rec, i);
    st = tb_record_read_output(p->rec, i, p->cpu, &p->want[i]);
  }
  return st;
}

static tb_status compare(tb_validation_report *r, tbv_config *cfg, const replay *p) {
  cfg->outputs = tb_arena_alloc(&r->arena, (p->n_out ? p->n_out : 1) * sizeof *cfg->outputs);
  if (!cfg->outputs) return tb_error(TB_ERR_OUT_OF_MEMORY, "tb_validate_replay: out of memory");
  cfg->info.output_count = p->n_out;
  cfg->info.passed = true;
  for (size_t j = 0; j < p->n_out; j++) {
    tb_output_metrics *m = &cfg->outputs[j];
    m->size = sizeof *m;
    tb_status st = tb_compare_tensors(p->got[j], p->want[j], p->info.rtol, p->info.atol, m);
    if (st != TB_OK) return st;
    m->name = tb_arena_strdup(&r->arena, p->out_names[j]);
    cfg->info.passed &= m->passed;
  }
  return TB_OK;
}

static tb_status run_replay(replay *p, const char *record_path, const char *model_path, const char *request,
                            tb_validation_report *r) {
  p->info.size = sizeof p->info;
  tb_status st = tb_record_open(record_path, &p->rec);
  if (st == TB_OK) st = tb_record_info_get(p->rec, &p->info);
  if (st == TB_OK) st = load_model(record_path, model_path, &p->info, &p->model);
  if (st == TB_OK) st = tb_record_check_model(p->rec, p->model);
  if (st == TB_OK) st = tb_backend_create("cpu", &p->cpu);
  if (st == TB_OK) st = read_tensors(p);
  if (st != TB_OK) return st;
  r->seed = 0;
  r->sha256 = tb_arena_strdup(&r->arena, p->info.model_sha256);
  r->record = tb_arena_strdup(&r->arena, record_path);
  const char *used = request ? request : "cpu";
  tb_status bst = open_backend(request, &p->info, &p->target, &used);
  tbv_config *cfg = tb_tbv_report_add(r, used, p->info.level, p->info.precision);
  if (!cfg) return tb_error(TB_ERR_OUT_OF_MEMORY, "tb_validate_replay: out of memory");
  cfg->info.tolerance.rtol = p->info.rtol;
  cfg->info.tolerance.atol = p->info.atol;
  cfg->info.tolerance.backend = TB_TOLERANCE_ANY;
  cfg->info.tolerance.precision = (int)p->info.precision;
  cfg->info.tolerance.level = (int)p->info.level;
  cfg->info.tolerance.source = "record";
  cfg->info.tolerance.note = tb_arena_printf(&r->arena, "the tolerance stored in the record (made on %s, %s)",
                                             p->info.device, p->info.device_name);
  const char *stage = "backend";
  if (bst == TB_OK) {
    cfg->info.device = tb_arena_strdup(&r->arena, tb_backend_device(p->target)->name);
    tb_prepare_options po = {.size = sizeof po, .level = p->info.level, .precision = p->info.precision};
    stage = "prepare";
    bst = tb_model_prepare(p->model, p->target, &po, &p->prepared, NULL);
  }
  if (bst == TB_OK) {
    stage = "run";
    bst = tb_prepared_run(p->prepared, p->n_in, p->in_names, p->inputs, p->n_out, p->out_names, p->got);
  }
  if (bst != TB_OK) {
    cfg->info.error = tb_arena_printf(&r->arena, "%s: %s", stage, tb_last_error());
    return TB_OK;
  }
  return compare(r, cfg, p);
}

tb_status tb_validate_replay(const char *record_path, const char *model_path, const char *backend_request,
                             tb_validation_report **out_report) {
  if (!record_path || !out_report)
    return tb_error(TB_ERR_INVALID_ARGUMENT, "tb_validate_replay: record_path and out_report must not be NULL");
  *out_report = NULL;
  tb_validation_report *r = tb_tbv_report_new();
  if (!r) return tb_error(TB_ERR_OUT_OF_MEMORY, "tb_validate_replay: out of memory");
  replay p = {0};
  tb_status st = run_replay(&p, record_path, model_path, backend_request, r);
  replay_free(&p);
  if (st == TB_OK && r->arena.failed) st = tb_error(TB_ERR_OUT_OF_MEMORY, "tb_validate_replay: out of memory for the report");
  if (st != TB_OK) {
    tb_validation_report_destroy(r);
    return st;
  }
  *out_report = r;
  return TB_OK;
}
