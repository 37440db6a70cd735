/* The validation report: its configurations and per-output metrics, the accessors, and the JSON rendering
 * (keys in docs/validation.md). */
#include <stdlib.h>
#include <string.h>
#include "core/error.h"
#include "json/json_util.h"
#include "tools/validate_impl.h"

tb_validation_report *tb_tbv_report_new(void) {
  tb_validation_report *r = calloc(1, sizeof *r);
  if (r) {
    r->sha256 = "";
    r->record = "";
  }
  return r;
}

tbv_config *tb_tbv_report_add(tb_validation_report *r, const char *backend, tb_opt_level level, tb_precision precision) {
  if (r->count == r->cap) {
    size_t cap = r->cap ? 2 * r->cap : 8;
    tbv_config *c = realloc(r->configs, cap * sizeof *c);
    if (!c) return NULL;
    r->configs = c;
    r->cap = cap;
  }
  tbv_config *cfg = &r->configs[r->count++];
  memset(cfg, 0, sizeof *cfg);
  cfg->info.size = sizeof cfg->info;
  cfg->info.backend = tb_arena_strdup(&r->arena, backend);
  cfg->info.device = "";
  cfg->info.level = level;
  cfg->info.precision = precision;
  cfg->info.tolerance.size = sizeof cfg->info.tolerance;
  cfg->info.tolerance.source = "";
  cfg->info.tolerance.note = "";
  return r->arena.failed ? NULL : cfg;
}

void tb_validation_report_destroy(tb_validation_report *r) {
  if (!r) return;
  free(r->configs);
  tb_arena_free(&r->arena);
  free(r);
}

size_t tb_validation_report_config_count(const tb_validation_report *r) { return r ? r->count : 0; }

size_t tb_validation_report_total(const tb_validation_report *r) { return r ? r->count : 0; }

size_t tb_validation_report_passed(const tb_validation_report *r) {
  size_t n = 0;
  for (size_t i = 0; r && i < r->count; i++) n += r->configs[i].info.passed;
  return n;
}

uint64_t tb_validation_report_seed(const tb_validation_report *r) { return r ? r->seed : 0; }

const char *tb_validation_report_model_sha256(const tb_validation_report *r) { return r ? r->sha256 : ""; }

tb_status tb_validation_report_config(const tb_validation_report *r, size_t i, tb_validation_config *out) {
  if (!r || !out || out->size < sizeof *out)
    return tb_error(TB_ERR_INVALID_ARGUMENT,
                    "tb_validation_report_config: report and out must not be NULL and out->size must be sizeof(tb_validation_config)");
  if (i >= r->count)
    return tb_error(TB_ERR_INVALID_ARGUMENT, "tb_validation_report_config: index %zu out of range (the report has %zu)", i, r->count);
  *out = r->configs[i].info;
  return TB_OK;
}

tb_status tb_validation_report_output(const tb_validation_report *r, size_t c, size_t j, tb_output_metrics *out) {
  if (!r || !out || out->size < sizeof *out)
    return tb_error(TB_ERR_INVALID_ARGUMENT,
                    "tb_validation_report_output: report and out must not be NULL and out->size must be sizeof(tb_output_metrics)");
  if (c >= r->count || j >= r->configs[c].info.output_count)
    return tb_error(TB_ERR_INVALID_ARGUMENT, "tb_validation_report_output: configuration %zu output %zu out of range", c, j);
  *out = r->configs[c].outputs[j];
  return TB_OK;
}

static bool add_num(cJSON *o, const char *key, double v) { return cJSON_AddNumberToObject(o, key, v) != NULL; }

static cJSON *output_json(const tb_output_metrics *m) {
  cJSON *o = cJSON_CreateObject();
  bool ok = o && cJSON_AddStringToObject(o, "name", m->name ? m->name : "") &&
            cJSON_AddStringToObject(o, "dtype", tb_dtype_name(m->dtype)) && add_num(o, "numel", (double)m->numel) &&
            cJSON_AddBoolToObject(o, "shape_matches", m->shape_matches) && add_num(o, "max_abs_error", m->max_abs_error) &&
            add_num(o, "max_rel_error", m->max_rel_error) && add_num(o, "cosine", m->cosine) &&
            add_num(o, "max_ulp", (double)m->max_ulp) && add_num(o, "mismatches", (double)m->mismatches) &&
            add_num(o, "nan_got", (double)m->nan_got) && add_num(o, "inf_got", (double)m->inf_got) &&
            add_num(o, "nan_ref", (double)m->nan_ref) && add_num(o, "inf_ref", (double)m->inf_ref) &&
            cJSON_AddBoolToObject(o, "passed", m->passed);
  if (!ok) {
    cJSON_Delete(o);
    return NULL;
  }
  return o;
}

static cJSON *localized_json(const tb_validation_config *c) {
  cJSON *o = cJSON_CreateObject();
  bool ok = o && cJSON_AddBoolToObject(o, "found", c->localized) &&
            cJSON_AddStringToObject(o, "note", c->localize_note ? c->localize_note : "");
  if (ok && c->localized)
    ok = cJSON_AddStringToObject(o, "node", c->node_name) && cJSON_AddStringToObject(o, "op_type", c->node_op) &&
         add_num(o, "index", (double)c->node_index) && cJSON_AddStringToObject(o, "output", c->node_output) &&
         add_num(o, "max_abs_error", c->node_max_abs_error) && add_num(o, "max_rel_error", c->node_max_rel_error) &&
         add_num(o, "cosine", c->node_cosine) && add_num(o, "mismatches", (double)c->node_mismatches) &&
         add_num(o, "numel", (double)c->node_numel);
  if (!ok) {
    cJSON_Delete(o);
    return NULL;
  }
  return o;
}

static cJSON *config_json(const tbv_config *cfg) {
  const tb_validation_config *c = &cfg->info;
  cJSON *o = cJSON_CreateObject(), *tol = cJSON_CreateObject(), *outs = cJSON_CreateArray();
  bool ok = o && tol && outs && cJSON_AddStringToObject(o, "backend", c->backend) &&
            cJSON_AddStringToObject(o, "device", c->device) && cJSON_AddStringToObject(o, "level", tb_opt_level_name(c->level)) &&
            cJSON_AddStringToObject(o, "precision", tb_precision_name(c->precision)) &&
            cJSON_AddBoolToObject(o, "passed", c->passed) &&
            (c->error ? cJSON_AddStringToObject(o, "error", c->error) : cJSON_AddNullToObject(o, "error")) &&
            add_num(tol, "rtol", c->tolerance.rtol) && add_num(tol, "atol", c->tolerance.atol) &&
            cJSON_AddStringToObject(tol, "source", c->tolerance.source) && cJSON_AddStringToObject(tol, "note", c->tolerance.note);
  if (ok) {
    cJSON_AddItemToObject(o, "tolerance", tol);
    tol = NULL;
    cJSON_AddItemToObject(o, "outputs", outs);
  } else {
    cJSON_Delete(tol);
    cJSON_Delete(outs);
  }
  for (size_t j = 0; ok && j < c->output_count; j++) {
    cJSON *m = output_json(&cfg->outputs[j]);
    ok = m && cJSON_AddItemToArray(outs, m);
  }
  if (ok && c->localize_note) {
    cJSON *l = localized_json(c);
    ok = l && cJSON_AddItemToObject(o, "localized", l);
  }
  if (!ok) {
    cJSON_Delete(o);
    return NULL;
  }
  return o;
}

tb_status tb_validation_report_to_json(const tb_validation_report *r, char **out_json) {
  if (!r || !out_json)
    return tb_error(TB_ERR_INVALID_ARGUMENT, "tb_validation_report_to_json: report and out_json must not be NULL");
  *out_json = NULL;
  cJSON *o = cJSON_CreateObject(), *configs = cJSON_CreateArray();
  bool ok = o && configs && cJSON_AddStringToObject(o, "model_sha256", r->sha256) &&
            add_num(o, "seed", (double)r->seed) && cJSON_AddStringToObject(o, "record", r->record) &&
            add_num(o, "passed", (double)tb_validation_report_passed(r)) && add_num(o, "total", (double)r->count);
  if (ok) cJSON_AddItemToObject(o, "configurations", configs);
  else cJSON_Delete(configs);
  for (size_t i = 0; ok && i < r->count; i++) {
    cJSON *c = config_json(&r->configs[i]);
    ok = c && cJSON_AddItemToArray(configs, c);
  }
  return tb_json_finish(o, ok, out_json, "tb_validation_report_to_json");
}
