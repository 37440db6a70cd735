/* Precision names and the JSON form of a prepare result (where each node runs included). */
#include <strings.h>
#include "core/error.h"
#include "json/json_util.h"
#include "model/prepared.h"

static const char *const precision_names[] = {"auto", "fp32", "bf16", "fp16", "fp8", "tf32"};

const char *tb_precision_name(tb_precision precision) {
  return (unsigned)precision < sizeof precision_names / sizeof precision_names[0] ? precision_names[precision] : "?";
}

tb_status tb_precision_parse(const char *name, tb_precision *out) {
  if (!name || !out) return tb_error(TB_ERR_INVALID_ARGUMENT, "tb_precision_parse: name and out must not be NULL");
  for (size_t i = 0; i < sizeof precision_names / sizeof precision_names[0]; i++)
    if (strcasecmp(name, precision_names[i]) == 0) {
      *out = (tb_precision)i;
      return TB_OK;
    }
  return tb_error(TB_ERR_NOT_FOUND, "unknown precision '%.100s'; valid precisions are auto, fp32, bf16, fp16, fp8, tf32", name);
}

static bool add_strings(cJSON *o, const char *key, const char *const *list, size_t count) {
  cJSON *a = cJSON_AddArrayToObject(o, key);
  if (!a) return false;
  for (size_t i = 0; i < count; i++) {
    cJSON *s = cJSON_CreateString(list[i]);
    if (!s || !cJSON_AddItemToArray(a, s)) {
      cJSON_Delete(s);
      return false;
    }
  }
  return true;
}

/* "placements": [{"node": "Relu (r1)", "device": "cuda:0", "reason": ""}, ...], one per node. */
static bool add_placements(cJSON *o, const tb_prepare_result *r) {
  cJSON *a = cJSON_AddArrayToObject(o, "placements");
  for (size_t i = 0; a && i < r->node_count; i++) {
    cJSON *e = cJSON_CreateObject();
    if (!e || !cJSON_AddItemToArray(a, e)) {
      cJSON_Delete(e);
      return false;
    }
    if (!cJSON_AddStringToObject(e, "node", r->node_labels[i]) || !cJSON_AddStringToObject(e, "device", r->node_devices[i]) ||
        !cJSON_AddStringToObject(e, "reason", r->node_reasons[i]))
      return false;
  }
  return a != NULL;
}

tb_status tb_prepare_result_to_json(const tb_prepare_result *r, char **out_json) {
  if (!r || !out_json)
    return tb_error(TB_ERR_INVALID_ARGUMENT, "tb_prepare_result_to_json: result and out_json must not be NULL");
  *out_json = NULL;
  if (r->size < sizeof *r)
    return tb_error(TB_ERR_INVALID_ARGUMENT,
                    "tb_prepare_result_to_json: result->size is %zu; set it to sizeof(tb_prepare_result) (%zu)", r->size,
                    sizeof *r);
  cJSON *o = cJSON_CreateObject();
  cJSON *m = o ? cJSON_CreateObject() : NULL;
  bool ok = o && m && cJSON_AddBoolToObject(o, "success", r->success) &&
            cJSON_AddStringToObject(o, "level", tb_opt_level_name(r->level)) &&
            cJSON_AddStringToObject(o, "precision", tb_precision_name(r->precision)) &&
            add_strings(o, "optimizations_applied", r->passes, r->pass_count) && add_strings(o, "warnings", r->warnings, r->warning_count) &&
            cJSON_AddItemToObject(o, "metrics", m);
  if (!ok) cJSON_Delete(m);
  ok = ok && cJSON_AddNumberToObject(m, "nodes_before", (double)r->nodes_before) &&
       cJSON_AddNumberToObject(m, "nodes_after", (double)r->nodes_after) &&
       cJSON_AddNumberToObject(m, "fused_nodes", (double)r->fused_nodes) &&
       cJSON_AddNumberToObject(m, "cpu_fallback_nodes", (double)r->cpu_fallback_nodes) &&
       cJSON_AddNumberToObject(m, "copies_inserted", (double)r->copies_inserted) &&
       add_strings(m, "fallback_ops", r->fallback_ops, r->cpu_fallback_nodes) &&
       cJSON_AddNumberToObject(m, "weight_bytes", (double)r->weight_bytes) &&
       cJSON_AddNumberToObject(m, "planned_peak_activation_bytes", (double)r->planned_peak_activation_bytes) &&
       cJSON_AddNumberToObject(m, "prepare_ms", r->prepare_ms) &&
       cJSON_AddNumberToObject(m, "device_nodes", (double)r->device_nodes) &&
       add_strings(m, "copies", r->copies, r->copies_inserted) &&
       cJSON_AddNumberToObject(m, "reduced_precision_nodes", (double)r->reduced_precision_nodes) &&
       add_strings(m, "node_precisions", r->node_precisions, r->reduced_precision_nodes) &&
       cJSON_AddNumberToObject(m, "route_nodes", (double)r->route_nodes) &&
       add_strings(m, "routed_ops", r->routed_ops, r->route_nodes) && add_placements(m, r) &&
       add_strings(m, "precision_choices", r->precision_choices, r->precision_choice_count) &&
       cJSON_AddBoolToObject(m, "graph_capture", r->graph_capture) &&
       cJSON_AddStringToObject(m, "graph_capture_why", r->graph_capture_why ? r->graph_capture_why : "");
  return tb_json_finish(o, ok, out_json, "tb_prepare_result_to_json");
}
