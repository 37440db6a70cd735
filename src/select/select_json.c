/* tb_selection_to_json: the selection as JSON. Keys are documented in docs/selection.md and stable:
 * new keys may be added, existing ones keep their name and meaning. */
#include "core/error.h"
#include "json/json_util.h"
#include "select/select.h"

static cJSON *candidate_json(const tb_candidate *c, tb_outcome outcome) {
  cJSON *o = cJSON_CreateObject();
  if (!o) return NULL;
  bool ok = cJSON_AddStringToObject(o, "device", c->device->device) && cJSON_AddStringToObject(o, "name", c->device->name) &&
            cJSON_AddNumberToObject(o, "rank", c->rank) && cJSON_AddBoolToObject(o, "chosen", c->chosen) &&
            cJSON_AddBoolToObject(o, "usable", c->device->usable) &&
            cJSON_AddStringToObject(o, "outcome", tb_outcome_name(outcome)) &&
            cJSON_AddStringToObject(o, "verdict", c->verdict);
  if (!ok) {
    cJSON_Delete(o);
    return NULL;
  }
  return o;
}

tb_status tb_selection_to_json(const tb_selection *selection, char **out_json) {
  if (!selection || !out_json)
    return tb_error(TB_ERR_INVALID_ARGUMENT, "tb_selection_to_json: selection and out_json must not be NULL");
  *out_json = NULL;
  cJSON *root = cJSON_CreateObject();
  bool ok = root && cJSON_AddStringToObject(root, "request", selection->request) &&
            cJSON_AddStringToObject(root, "source", selection->source);
  cJSON *selected = ok ? tb_json_device(selection->device) : NULL;
  ok = ok && selected && cJSON_AddItemToObject(root, "selected", selected);
  if (!ok) cJSON_Delete(selected);
  cJSON *candidates = ok ? cJSON_AddArrayToObject(root, "candidates") : NULL;
  for (size_t i = 0; candidates && ok && i < selection->count; i++) {
    cJSON *c = candidate_json(&selection->candidates[i], selection->outcomes[i]);
    ok = c && cJSON_AddItemToArray(candidates, c);
    if (!ok) cJSON_Delete(c);
  }
  ok = ok && cJSON_AddStringToObject(root, "explanation", selection->explanation);
  return tb_json_finish(root, ok && candidates, out_json, "tb_selection_to_json");
}
