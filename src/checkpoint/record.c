/* Run records: one safetensors file with tensors "input/<name>" and "output/<name>" and, in its metadata,
 * what a replay needs to check it is rerunning the same thing (model hash, device, level, precision,
 * tolerance, library version). */
#include <cjson/cJSON.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "checkpoint/safetensors_impl.h"
#include "core/error.h"

static const char *const required_keys[] = {"tb_record_version", "model_sha256", "model_file", "device", "device_name",
                                            "backend", "library_version", "level", "precision", "rtol", "atol"};
#define REQUIRED_COUNT (sizeof required_keys / sizeof required_keys[0])

struct tb_record {
  tb_safetensors *st;
  char **inputs, **outputs; /* graph names, in recorded order */
  size_t n_inputs, n_outputs;
  tb_record_info info;
};

/* ---- writing ------------------------------------------------------------------------------------ */

static char *names_json(size_t n, const char *const *names) {
  cJSON *arr = cJSON_CreateArray();
  for (size_t i = 0; arr && i < n; i++) {
    cJSON *s = cJSON_CreateString(names[i]);
    if (!s) {
      cJSON_Delete(arr);
      return NULL;
    }
    cJSON_AddItemToArray(arr, s);
  }
  char *text = arr ? cJSON_PrintUnformatted(arr) : NULL;
  cJSON_Delete(arr);
  return text;
}

/* The shortest text that reads back as exactly v ("1e-05", not "1.0000000000000001e-05"). */
static void shortest(double v, char *buf, size_t cap) {
  for (int digits = 6; digits <= 17; digits++) {
    snprintf(buf, cap, "%.*g", digits, v);
    if (strtod(buf, NULL) == v) return;
  }
}

static tb_status prefixed(const char *path, const char *prefix, size_t n, const char *const *names,
                          const tb_tensor *const *tensors, tb_st_item *items, char **owned) {
  for (size_t i = 0; i < n; i++) {
    if (!names[i] || !*names[i] || !tensors[i])
      return tb_error(TB_ERR_INVALID_ARGUMENT, "%s: %s %zu has no name or no tensor", path, prefix, i);
    size_t len = strlen(prefix) + strlen(names[i]) + 2;
    if (!(owned[i] = malloc(len))) return tb_error(TB_ERR_OUT_OF_MEMORY, "%s: out of host memory", path);
    snprintf(owned[i], len, "%s/%s", prefix, names[i]);
    items[i] = (tb_st_item){.name = owned[i],
                            .dtype = tb_tensor_dtype(tensors[i]),
                            .ndim = tb_tensor_ndim(tensors[i]),
                            .shape = tb_tensor_shape(tensors[i]),
                            .tensor = tensors[i],
                            .nbytes = tb_tensor_nbytes(tensors[i])};
  }
  return TB_OK;
}

tb_status tb_record_write(const char *path, const tb_model *model, const tb_backend *backend,
                          const tb_record_options *options, size_t n_inputs, const char *const *input_names,
                          const tb_tensor *const *inputs, size_t n_outputs, const char *const *output_names,
                          const tb_tensor *const *outputs) {
  if (!path || !model || !backend || !options || options->size == 0 || (n_inputs && (!input_names || !inputs)) ||
      (n_outputs && (!output_names || !outputs)))
    return tb_error(TB_ERR_INVALID_ARGUMENT,
                    "tb_record_write: path, model, backend, options (with size set) and the name and tensor arrays are required");
  const tb_device_info *dev = tb_backend_device(backend);
  size_t n = n_inputs + n_outputs;
  tb_st_item *items = calloc(n ? n : 1, sizeof *items);
  char **owned = calloc(n ? n : 1, sizeof *owned);
  char *in_json = names_json(n_inputs, input_names), *out_json = names_json(n_outputs, output_names);
  tb_status s = TB_OK;
  if (!items || !owned || !in_json || !out_json) s = tb_error(TB_ERR_OUT_OF_MEMORY, "%s: out of host memory", path);
  if (s == TB_OK) s = prefixed(path, "input", n_inputs, input_names, inputs, items, owned);
  if (s == TB_OK) s = prefixed(path, "output", n_outputs, output_names, outputs, items + n_inputs, owned + n_inputs);
  if (s == TB_OK) {
    char rtol[40], atol[40];
    shortest(options->rtol, rtol, sizeof rtol);
    shortest(options->atol, atol, sizeof atol);
    const char *keys[] = {"tb_record_version", "model_sha256", "model_file", "device", "device_name", "backend",
                          "library_version", "level", "precision", "rtol", "atol", "inputs", "outputs"};
    const char *values[] = {TB_RECORD_VERSION,
                            tb_model_sha256(model),
                            options->model_file ? options->model_file : "",
                            dev && dev->device ? dev->device : "",
                            dev && dev->name ? dev->name : "",
                            tb_backend_name(tb_backend_kind_of(backend)),
                            tb_version(),
                            tb_opt_level_name(options->level),
                            tb_precision_name(options->precision),
                            rtol,
                            atol,
                            in_json,
                            out_json};
    for (size_t i = 0; i < sizeof values / sizeof values[0]; i++)
      if (!values[i]) values[i] = "";
    s = tb_st_write_items(path, n, items, sizeof keys / sizeof keys[0], keys, values);
  }
  for (size_t i = 0; owned && i < n; i++) free(owned[i]);
  free(owned);
  free(items);
  cJSON_free(in_json);
  cJSON_free(out_json);
  return s;
}

/* ---- reading ------------------------------------------------------------------------------------ */

/* The recorded order from the "inputs"/"outputs" JSON array; every "<prefix>/" tensor must be listed once. */
static tb_status read_names(tb_record *r, const char *prefix, const char *key, char ***out, size_t *count) {
  const tb_safetensors *st = r->st;
  const char *f = st->label;
  size_t plen = strlen(prefix);
  size_t in_file = 0;
  for (size_t i = 0; i < st->n; i++) in_file += strncmp(st->entries[i].name, prefix, plen) == 0;
  const char *text = tb_safetensors_metadata(st, key);
  cJSON *arr = text ? cJSON_Parse(text) : NULL;
  if (!cJSON_IsArray(arr)) {
    cJSON_Delete(arr);
    return tb_error(TB_ERR_MODEL, "%s: record metadata '%s' is %s, not a JSON array of names", f, key,
                    text ? "malformed" : "missing");
  }
  size_t n = (size_t)cJSON_GetArraySize(arr);
  *out = calloc(n ? n : 1, sizeof **out);
  if (!*out) {
    cJSON_Delete(arr);
    return tb_error(TB_ERR_OUT_OF_MEMORY, "%s: out of host memory", f);
  }
  tb_status s = TB_OK;
  const cJSON *item;
  cJSON_ArrayForEach(item, arr) {
    if (!cJSON_IsString(item)) {
      s = tb_error(TB_ERR_MODEL, "%s: record metadata '%s' holds something other than names", f, key);
      break;
    }
    size_t len = plen + strlen(item->valuestring) + 1;
    char *full = malloc(len);
    if (!full) {
      s = tb_error(TB_ERR_OUT_OF_MEMORY, "%s: out of host memory", f);
      break;
    }
    snprintf(full, len, "%s%s", prefix, item->valuestring);
    bool present = tb_st_lookup(st, full) >= 0;
    free(full);
    for (size_t j = 0; j < *count && present; j++)
      if (strcmp((*out)[j], item->valuestring) == 0) present = false;
    if (!present) {
      s = tb_error(TB_ERR_MODEL, "%s: record lists %s '%.200s' but has no tensor '%s%.200s' for it (or lists it twice)", f,
                   key, item->valuestring, prefix, item->valuestring);
      break;
    }
    if (!((*out)[*count] = strdup(item->valuestring))) {
      s = tb_error(TB_ERR_OUT_OF_MEMORY, "%s: out of host memory", f);
      break;
    }
    (*count)++;
  }
  cJSON_Delete(arr);
  if (s == TB_OK && *count != in_file)
    s = tb_error(TB_ERR_MODEL, "%s: record has %zu '%s' tensors but its metadata '%s' lists %zu", f, in_file, prefix, key,
                 *count);
  return s;
}

static tb_status parse_info(tb_record *r) {
  const tb_safetensors *st = r->st;
  const char *f = st->label;
  for (size_t i = 0; i < REQUIRED_COUNT; i++)
    if (!tb_safetensors_metadata(st, required_keys[i]))
      return tb_error(TB_ERR_MODEL, "%s is %s: metadata key '%s' is missing", f,
                      i == 0 ? "a safetensors file but not a TensorBridge record" : "not a complete TensorBridge record",
                      required_keys[i]);
  tb_record_info *in = &r->info;
  in->size = sizeof *in;
  in->version = tb_safetensors_metadata(st, "tb_record_version");
  if (strcmp(in->version, TB_RECORD_VERSION) != 0)
    return tb_error(TB_ERR_UNSUPPORTED, "%s: record version '%.40s'; this library (%s) reads version %s", f, in->version,
                    tb_version(), TB_RECORD_VERSION);
  in->model_sha256 = tb_safetensors_metadata(st, "model_sha256");
  bool hex = strlen(in->model_sha256) == 64;
  for (const char *p = in->model_sha256; hex && *p; p++) hex = (*p >= '0' && *p <= '9') || (*p >= 'a' && *p <= 'f');
  if (!hex) return tb_error(TB_ERR_MODEL, "%s: record model_sha256 '%.80s' is not 64 lowercase hex digits", f, in->model_sha256);
  in->model_file = tb_safetensors_metadata(st, "model_file");
  in->device = tb_safetensors_metadata(st, "device");
  in->device_name = tb_safetensors_metadata(st, "device_name");
  in->backend = tb_safetensors_metadata(st, "backend");
  in->library_version = tb_safetensors_metadata(st, "library_version");
  if (tb_opt_level_parse(tb_safetensors_metadata(st, "level"), &in->level) != TB_OK)
    return tb_error(TB_ERR_MODEL, "%s: record level '%.40s' is not O0..O3", f, tb_safetensors_metadata(st, "level"));
  if (tb_precision_parse(tb_safetensors_metadata(st, "precision"), &in->precision) != TB_OK)
    return tb_error(TB_ERR_MODEL, "%s: record precision '%.40s' is not auto|fp32|bf16|fp16|fp8|tf32", f,
                    tb_safetensors_metadata(st, "precision"));
  const char *tols[2] = {"rtol", "atol"};
  double *dst[2] = {&in->rtol, &in->atol};
  for (int k = 0; k < 2; k++) {
    const char *text = tb_safetensors_metadata(st, tols[k]);
    char *end;
    double v = strtod(text, &end);
    if (end == text || *end || !(v >= 0) || v > 1e300)
      return tb_error(TB_ERR_MODEL, "%s: record %s '%.40s' is not a number >= 0", f, tols[k], text);
    *dst[k] = v;
  }
  for (size_t i = 0; i < st->n; i++)
    if (strncmp(st->entries[i].name, "input/", 6) != 0 && strncmp(st->entries[i].name, "output/", 7) != 0)
      return tb_error(TB_ERR_MODEL, "%s: record tensor '%.200s' is neither input/<name> nor output/<name>", f,
                      st->entries[i].name);
  tb_status s = read_names(r, "input/", "inputs", &r->inputs, &r->n_inputs);
  return s == TB_OK ? read_names(r, "output/", "outputs", &r->outputs, &r->n_outputs) : s;
}

tb_status tb_record_open(const char *path, tb_record **out_record) {
  if (out_record) *out_record = NULL;
  if (!path || !out_record) return tb_error(TB_ERR_INVALID_ARGUMENT, "tb_record_open: path and out_record are required");
  tb_record *r = calloc(1, sizeof *r);
  if (!r) return tb_error(TB_ERR_OUT_OF_MEMORY, "%s: out of host memory", path);
  tb_status s = tb_safetensors_open(path, &r->st);
  if (s == TB_OK) s = parse_info(r);
  if (s != TB_OK) {
    tb_record_close(r);
    return s;
  }
  *out_record = r;
  return TB_OK;
}

void tb_record_close(tb_record *record) {
  if (!record) return;
  for (size_t i = 0; i < record->n_inputs; i++) free(record->inputs[i]);
  for (size_t i = 0; i < record->n_outputs; i++) free(record->outputs[i]);
  free(record->inputs);
  free(record->outputs);
  tb_safetensors_close(record->st);
  free(record);
}

tb_status tb_record_info_get(const tb_record *record, tb_record_info *out) {
  if (!record || !out || out->size == 0)
    return tb_error(TB_ERR_INVALID_ARGUMENT, "tb_record_info_get: record and out (with out->size set) are required");
  size_t size = out->size;
  memcpy(out, &record->info, size < sizeof record->info ? size : sizeof record->info);
  out->size = size;
  return TB_OK;
}

const char *tb_record_metadata(const tb_record *record, const char *key) {
  return record ? tb_safetensors_metadata(record->st, key) : NULL;
}

size_t tb_record_input_count(const tb_record *record) { return record ? record->n_inputs : 0; }
size_t tb_record_output_count(const tb_record *record) { return record ? record->n_outputs : 0; }
const char *tb_record_input_name(const tb_record *record, size_t i) {
  return record && i < record->n_inputs ? record->inputs[i] : NULL;
}
const char *tb_record_output_name(const tb_record *record, size_t i) {
  return record && i < record->n_outputs ? record->outputs[i] : NULL;
}

static tb_status read_one(const tb_record *record, const char *prefix, const char *name, size_t i, size_t count,
                          tb_backend *backend, tb_tensor **out_tensor) {
  if (out_tensor) *out_tensor = NULL;
  if (!record || !out_tensor) return tb_error(TB_ERR_INVALID_ARGUMENT, "tb_record_read_%s: record and out_tensor are required", prefix);
  if (!name)
    return tb_error(TB_ERR_INVALID_ARGUMENT, "%s: %s index %zu is out of range (%zu recorded)", record->st->label, prefix, i,
                    count);
  char full[4096];
  snprintf(full, sizeof full, "%s/%s", prefix, name);
  return tb_safetensors_read(record->st, full, backend, out_tensor);
}

tb_status tb_record_read_input(const tb_record *record, size_t i, tb_backend *backend, tb_tensor **out_tensor) {
  return read_one(record, "input", tb_record_input_name(record, i), i, tb_record_input_count(record), backend, out_tensor);
}

tb_status tb_record_read_output(const tb_record *record, size_t i, tb_backend *backend, tb_tensor **out_tensor) {
  return read_one(record, "output", tb_record_output_name(record, i), i, tb_record_output_count(record), backend,
                  out_tensor);
}

tb_status tb_record_check_model(const tb_record *record, const tb_model *model) {
  if (!record || !model) return tb_error(TB_ERR_INVALID_ARGUMENT, "tb_record_check_model: record and model are required");
  const char *sha = tb_model_sha256(model);
  if (sha && strcmp(sha, record->info.model_sha256) == 0) return TB_OK;
  return tb_error(TB_ERR_INVALID_ARGUMENT,
                  "%s was recorded for a different model: the record's model (%s) has SHA-256 %s, this model has %s",
                  record->st->label, record->info.model_file[0] ? record->info.model_file : "file not named",
                  record->info.model_sha256, sha ? sha : "(unknown)");
}

const tb_safetensors *tb_record_safetensors(const tb_record *record) { return record ? record->st : NULL; }
