/* JSON renderings of devices and the device list. The keys are documented in docs/json.md and are
 * stable: new keys may be added, existing ones keep their name and meaning. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "core/error.h"
#include "json/json_util.h"

static bool add_str(cJSON *o, const char *k, const char *v) { return cJSON_AddStringToObject(o, k, v ? v : "") != NULL; }
static bool add_num(cJSON *o, const char *k, double v) { return cJSON_AddNumberToObject(o, k, v) != NULL; }
static bool add_bool(cJSON *o, const char *k, bool v) { return cJSON_AddBoolToObject(o, k, v) != NULL; }

cJSON *tb_json_device(const tb_device_info *d) {
  cJSON *o = cJSON_CreateObject();
  if (!o) return NULL;
  bool ok = add_str(o, "device", d->device) && add_str(o, "backend", tb_backend_name(d->backend)) &&
            add_num(o, "index", d->index) && add_str(o, "name", d->name) && add_str(o, "vendor", d->vendor) &&
            add_str(o, "type", tb_device_type_name(d->type)) && add_str(o, "architecture", d->architecture) &&
            add_str(o, "arch_id", d->arch_id) && add_bool(o, "usable", d->usable) && add_str(o, "reason", d->reason) &&
            add_str(o, "fix", d->fix) && add_num(o, "compute_units", d->compute_units) &&
            add_str(o, "driver_version", d->driver_version) && add_str(o, "pci_bus_id", d->pci_bus_id) &&
            add_str(o, "uuid", d->uuid) && add_str(o, "memory_type", d->memory_type) &&
            add_str(o, "capability_source", d->capability_source) && add_num(o, "physical_id", d->physical_id);
  if (ok && (d->compute_major || d->compute_minor)) {
    char cc[32];
    snprintf(cc, sizeof cc, "%d.%d", d->compute_major, d->compute_minor);
    ok = add_str(o, "compute_capability", cc);
  }
  /* Memory: a number when known, null when not. 2^53 covers any real memory size exactly. */
  ok = ok && (d->memory_total_known ? add_num(o, "memory_total_bytes", (double)d->memory_total)
                                    : cJSON_AddNullToObject(o, "memory_total_bytes") != NULL);
  ok = ok && (d->memory_free_known ? add_num(o, "memory_free_bytes", (double)d->memory_free)
                                   : cJSON_AddNullToObject(o, "memory_free_bytes") != NULL);
  cJSON *dtypes = ok ? cJSON_AddArrayToObject(o, "dtypes") : NULL;
  for (int t = 0; dtypes && t < TB_DTYPE_COUNT; t++)
    if (d->dtypes & TB_DTYPE_BIT(t)) ok = ok && cJSON_AddItemToArray(dtypes, cJSON_CreateString(tb_dtype_name((tb_dtype)t)));
  cJSON *features = ok ? cJSON_AddArrayToObject(o, "features") : NULL;
  for (int f = 0; features && f < TB_FEATURE_COUNT; f++)
    if (d->features & TB_FEATURE_BIT(f))
      ok = ok && cJSON_AddItemToArray(features, cJSON_CreateString(tb_feature_name((tb_feature)f)));
  cJSON *routes = ok ? cJSON_AddArrayToObject(o, "routes") : NULL;
  if (routes && d->routes[0]) {
    char buf[512];
    snprintf(buf, sizeof buf, "%s", d->routes);
    for (char *save = NULL, *tok = strtok_r(buf, ",", &save); tok; tok = strtok_r(NULL, ",", &save))
      ok = ok && cJSON_AddItemToArray(routes, cJSON_CreateString(tok));
  }
  cJSON *props = ok ? cJSON_AddObjectToObject(o, "properties") : NULL;
  for (size_t i = 0; props && i < d->property_count; i++) ok = ok && add_str(props, d->properties[i].key, d->properties[i].value);
  if (!ok || !dtypes || !features || !routes || !props) {
    cJSON_Delete(o);
    return NULL;
  }
  return o;
}

cJSON *tb_json_report(const tb_backend_report *r) {
  cJSON *o = cJSON_CreateObject();
  if (!o) return NULL;
  bool ok = add_str(o, "backend", tb_backend_name(r->backend)) && add_bool(o, "available", r->available) &&
            add_num(o, "device_count", (double)r->device_count) && add_str(o, "summary", r->summary) &&
            add_str(o, "fix", r->fix);
  cJSON *checks = ok ? cJSON_AddArrayToObject(o, "checks") : NULL;
  for (size_t i = 0; checks && i < r->check_count; i++) {
    cJSON *c = cJSON_CreateObject();
    ok = ok && c && cJSON_AddItemToArray(checks, c) && add_str(c, "what", r->checks[i].what) &&
         add_bool(c, "ok", r->checks[i].ok) && add_str(c, "detail", r->checks[i].detail);
  }
  if (!ok || !checks) {
    cJSON_Delete(o);
    return NULL;
  }
  return o;
}

tb_status tb_json_finish(cJSON *root, bool ok, char **out_json, const char *what) {
  char *text = ok && root ? cJSON_Print(root) : NULL;
  cJSON_Delete(root);
  if (text) text = tb_json_repair_utf8(text);
  if (!text) return tb_error(TB_ERR_OUT_OF_MEMORY, "%s: out of host memory while writing JSON", what);
  /* cJSON allocates with malloc by default, so tb_free (free) releases it. */
  *out_json = text;
  return TB_OK;
}

tb_status tb_device_info_to_json(const tb_device_info *info, char **out_json) {
  if (!info || !out_json) return tb_error(TB_ERR_INVALID_ARGUMENT, "tb_device_info_to_json: info and out_json must not be NULL");
  *out_json = NULL;
  cJSON *o = tb_json_device(info);
  return tb_json_finish(o, o != NULL, out_json, "tb_device_info_to_json");
}

tb_status tb_device_list_to_json(const tb_device_list *list, char **out_json) {
  if (!list || !out_json) return tb_error(TB_ERR_INVALID_ARGUMENT, "tb_device_list_to_json: list and out_json must not be NULL");
  *out_json = NULL;
  cJSON *root = cJSON_CreateObject();
  bool ok = root && cJSON_AddStringToObject(root, "tensorbridge_version", tb_version());
  cJSON *devices = ok ? cJSON_AddArrayToObject(root, "devices") : NULL;
  for (size_t i = 0; devices && i < tb_device_list_count(list); i++) {
    cJSON *d = tb_json_device(tb_device_list_get(list, i));
    ok = ok && d && cJSON_AddItemToArray(devices, d);
  }
  cJSON *backends = ok ? cJSON_AddArrayToObject(root, "backends") : NULL;
  for (int k = 0; backends && k < TB_BACKEND_COUNT; k++) {
    cJSON *r = tb_json_report(tb_device_list_report(list, (tb_backend_kind)k));
    ok = ok && r && cJSON_AddItemToArray(backends, r);
  }
  return tb_json_finish(root, ok && devices && backends, out_json, "tb_device_list_to_json");
}
