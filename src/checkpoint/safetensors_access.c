/* What an open safetensors reader hands out: names, entries, the mapped bytes, new tensors holding a copy,
 * and the "__metadata__" strings. */
#include <stdlib.h>
#include <string.h>
#include "checkpoint/safetensors_impl.h"
#include "core/error.h"

long tb_st_lookup(const tb_safetensors *st, const char *name) {
  size_t lo = 0, hi = st->n;
  while (lo < hi) {
    size_t mid = lo + (hi - lo) / 2;
    int c = strcmp(st->entries[st->by_name[mid]].name, name);
    if (c == 0) return (long)st->by_name[mid];
    if (c < 0) lo = mid + 1;
    else hi = mid;
  }
  return -1;
}

size_t tb_safetensors_count(const tb_safetensors *st) { return st ? st->n : 0; }

const char *tb_safetensors_name(const tb_safetensors *st, size_t i) {
  return st && i < st->n ? st->entries[i].name : NULL;
}

static void fill_info(const tb_safetensors *st, const tb_st_entry *e, tb_safetensors_info *out) {
  size_t size = out->size;
  tb_safetensors_info info;
  memset(&info, 0, sizeof info);
  info.size = size;
  info.name = e->name;
  info.dtype = e->dtype;
  info.ndim = e->ndim;
  memcpy(info.shape, e->shape, sizeof info.shape);
  info.data_offset = st->data_start + e->begin;
  info.nbytes = e->end - e->begin;
  memcpy(out, &info, size < sizeof info ? size : sizeof info);
}

tb_status tb_safetensors_info_at(const tb_safetensors *st, size_t i, tb_safetensors_info *out) {
  if (!st || !out || out->size == 0)
    return tb_error(TB_ERR_INVALID_ARGUMENT, "tb_safetensors_info_at: st and out (with out->size set) are required");
  if (i >= st->n)
    return tb_error(TB_ERR_INVALID_ARGUMENT, "%s: tensor index %zu is out of range (the file has %zu tensors)", st->label,
                    i, st->n);
  fill_info(st, &st->entries[i], out);
  return TB_OK;
}

static tb_status find(const tb_safetensors *st, const char *name, const char *what, long *out) {
  if (!st || !name) return tb_error(TB_ERR_INVALID_ARGUMENT, "%s: st and name are required", what);
  *out = tb_st_lookup(st, name);
  if (*out < 0) return tb_error(TB_ERR_NOT_FOUND, "%s has no tensor '%.200s' (%zu tensors)", st->label, name, st->n);
  return TB_OK;
}

tb_status tb_safetensors_find(const tb_safetensors *st, const char *name, tb_safetensors_info *out) {
  long i = -1;
  tb_status s = find(st, name, "tb_safetensors_find", &i);
  if (s != TB_OK) return s;
  if (!out || out->size == 0) return tb_error(TB_ERR_INVALID_ARGUMENT, "tb_safetensors_find: out->size must be set");
  fill_info(st, &st->entries[i], out);
  return TB_OK;
}

tb_status tb_safetensors_data(const tb_safetensors *st, const char *name, const void **out_data, size_t *out_bytes) {
  long i = -1;
  tb_status s = find(st, name, "tb_safetensors_data", &i);
  if (s != TB_OK) return s;
  if (!out_data || !out_bytes) return tb_error(TB_ERR_INVALID_ARGUMENT, "tb_safetensors_data: outputs are required");
  const tb_st_entry *e = &st->entries[i];
  *out_data = st->bytes + st->data_start + e->begin;
  *out_bytes = (size_t)(e->end - e->begin);
  return TB_OK;
}

tb_status tb_safetensors_read(const tb_safetensors *st, const char *name, tb_backend *backend, tb_tensor **out_tensor) {
  if (out_tensor) *out_tensor = NULL;
  long i = -1;
  tb_status s = find(st, name, "tb_safetensors_read", &i);
  if (s != TB_OK) return s;
  if (!backend || !out_tensor)
    return tb_error(TB_ERR_INVALID_ARGUMENT, "tb_safetensors_read: backend and out_tensor are required");
  const tb_st_entry *e = &st->entries[i];
  tb_tensor *t = NULL;
  if ((s = tb_tensor_create(backend, e->dtype, e->ndim, e->shape, &t)) != TB_OK) return s;
  size_t bytes = (size_t)(e->end - e->begin);
  if (bytes && (s = tb_tensor_copy_from_host(t, st->bytes + st->data_start + e->begin, bytes)) != TB_OK) {
    tb_tensor_destroy(t);
    return s;
  }
  *out_tensor = t;
  return TB_OK;
}

const char *tb_safetensors_metadata(const tb_safetensors *st, const char *key) {
  if (!st || !key) return NULL;
  for (size_t i = 0; i < st->n_meta; i++)
    if (strcmp(st->meta_keys[i], key) == 0) return st->meta_values[i];
  return NULL;
}

size_t tb_safetensors_metadata_count(const tb_safetensors *st) { return st ? st->n_meta : 0; }

tb_status tb_safetensors_metadata_at(const tb_safetensors *st, size_t i, const char **out_key, const char **out_value) {
  if (!st || !out_key || !out_value)
    return tb_error(TB_ERR_INVALID_ARGUMENT, "tb_safetensors_metadata_at: st, out_key and out_value are required");
  if (i >= st->n_meta)
    return tb_error(TB_ERR_INVALID_ARGUMENT, "%s: metadata index %zu is out of range (%zu entries)", st->label, i,
                    st->n_meta);
  *out_key = st->meta_keys[i];
  *out_value = st->meta_values[i];
  return TB_OK;
}
