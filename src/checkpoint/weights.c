/* A model's initializers to and from safetensors: export every initializer of the main graph as stored;
 * override initializers from a file (names and shapes must match; dtypes must match or widen losslessly,
 * narrowing only when asked), all checked before anything changes. The new data lives in the model's graph
 * arena; the old data stays until the model is destroyed, so prepared models made before keep theirs. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "checkpoint/safetensors_impl.h"
#include "core/error.h"
#include "model/model_impl.h"

tb_status tb_model_export_weights(const tb_model *model, const char *path) {
  if (!model || !path) return tb_error(TB_ERR_INVALID_ARGUMENT, "tb_model_export_weights: model and path are required");
  const tb_graph *g = model->ir->graph;
  size_t n = 0;
  for (size_t v = 0; v < g->n_values; v++) n += g->values[v].is_initializer && g->values[v].constant;
  tb_st_item *items = calloc(n ? n : 1, sizeof *items);
  if (!items) return tb_error(TB_ERR_OUT_OF_MEMORY, "%s: out of host memory", path);
  size_t k = 0;
  for (size_t v = 0; v < g->n_values; v++) {
    const tb_value *val = &g->values[v];
    if (!val->is_initializer || !val->constant) continue;
    const tb_ir_tensor *t = val->constant;
    items[k++] = (tb_st_item){.name = val->name, .dtype = t->dtype, .ndim = t->ndim, .shape = t->dims,
                              .data = t->data, .nbytes = t->nbytes};
  }
  const char *sha = tb_model_sha256(model);
  const char *keys[] = {"format", "model_sha256"};
  const char *values[] = {"tensorbridge-weights", sha ? sha : ""};
  tb_status s = tb_st_write_items(path, n, items, 2, keys, values);
  free(items);
  return s;
}

static bool is_float(tb_dtype d) {
  return d == TB_DTYPE_F64 || d == TB_DTYPE_F32 || d == TB_DTYPE_F16 || d == TB_DTYPE_BF16 || d == TB_DTYPE_FP8_E4M3FN ||
         d == TB_DTYPE_FP8_E5M2;
}

/* Every value of `from` is exactly a value of `to`. */
static bool widens(tb_dtype from, tb_dtype to) {
  switch (from) {
    case TB_DTYPE_FP8_E4M3FN:
    case TB_DTYPE_FP8_E5M2: return to == TB_DTYPE_F16 || to == TB_DTYPE_BF16 || to == TB_DTYPE_F32 || to == TB_DTYPE_F64;
    case TB_DTYPE_F16:
    case TB_DTYPE_BF16: return to == TB_DTYPE_F32 || to == TB_DTYPE_F64;
    case TB_DTYPE_F32: return to == TB_DTYPE_F64;
    case TB_DTYPE_I8: return to == TB_DTYPE_I16 || to == TB_DTYPE_I32 || to == TB_DTYPE_I64;
    case TB_DTYPE_U8: return to == TB_DTYPE_I16 || to == TB_DTYPE_I32 || to == TB_DTYPE_I64;
    case TB_DTYPE_I16: return to == TB_DTYPE_I32 || to == TB_DTYPE_I64;
    case TB_DTYPE_I32: return to == TB_DTYPE_I64;
    default: return false;
  }
}

static void dims_text(size_t ndim, const int64_t *dims, char *buf, size_t cap) {
  size_t used = (size_t)snprintf(buf, cap, "[");
  for (size_t i = 0; i < ndim && used < cap; i++)
    used += (size_t)snprintf(buf + used, cap - used, "%s%lld", i ? ", " : "", (long long)dims[i]);
  if (used < cap) snprintf(buf + used, cap - used, "]");
}

static tb_status check_entry(const tb_graph *g, const tb_safetensors *st, const tb_st_entry *e, bool allow_narrowing,
                             int *out_value) {
  const char *f = st->label;
  int v = tb_graph_find(g, e->name);
  if (v < 0 || !g->values[v].is_initializer || !g->values[v].constant) {
    char some[512] = "";
    size_t shown = 0;
    for (size_t i = 0; i < g->n_values && shown < 4; i++)
      if (g->values[i].is_initializer && g->values[i].constant)
        snprintf(some + strlen(some), sizeof some - strlen(some), "%s'%.80s'", shown++ ? ", " : "", g->values[i].name);
    return tb_error(TB_ERR_INVALID_ARGUMENT,
                    "%s: tensor '%.200s' names no initializer of the model (%s; the model's initializers include %s)", f,
                    e->name, v < 0 ? "no value has that name" : "that value is computed, not an initializer",
                    some[0] ? some : "none");
  }
  const tb_ir_tensor *t = g->values[v].constant;
  bool same_shape = t->ndim == e->ndim;
  for (size_t i = 0; same_shape && i < e->ndim; i++) same_shape = t->dims[i] == e->shape[i];
  if (!same_shape) {
    char a[256], b[256];
    dims_text(e->ndim, e->shape, a, sizeof a);
    dims_text(t->ndim, t->dims, b, sizeof b);
    return tb_error(TB_ERR_INVALID_ARGUMENT, "%s: tensor '%.200s' has shape %s but the model's initializer '%.200s' has shape %s",
                    f, e->name, a, e->name, b);
  }
  if (e->dtype != t->dtype && !widens(e->dtype, t->dtype)) {
    bool narrowing_ok = allow_narrowing && is_float(e->dtype) == is_float(t->dtype) && e->dtype != TB_DTYPE_BOOL &&
                        t->dtype != TB_DTYPE_BOOL;
    if (!narrowing_ok)
      return tb_error(TB_ERR_INVALID_ARGUMENT,
                      "%s: tensor '%.200s' is %s but the model's initializer '%.200s' is %s, and %s -> %s is not a lossless "
                      "widening%s",
                      f, e->name, tb_dtype_name(e->dtype), e->name, tb_dtype_name(t->dtype), tb_dtype_name(e->dtype),
                      tb_dtype_name(t->dtype),
                      is_float(e->dtype) == is_float(t->dtype) && e->dtype != TB_DTYPE_BOOL && t->dtype != TB_DTYPE_BOOL
                          ? " (allow narrowing to round it as tb_convert does)"
                          : " (float and integer weights do not mix)");
  }
  *out_value = v;
  return TB_OK;
}

tb_status tb_model_override_weights(tb_model *model, const char *path, bool allow_narrowing, size_t *out_replaced) {
  if (out_replaced) *out_replaced = 0;
  if (!model || !path) return tb_error(TB_ERR_INVALID_ARGUMENT, "tb_model_override_weights: model and path are required");
  tb_safetensors *st = NULL;
  tb_status s = tb_safetensors_open(path, &st);
  if (s != TB_OK) return s;
  tb_graph *g = model->ir->graph;
  int *targets = malloc((st->n ? st->n : 1) * sizeof *targets);
  tb_ir_tensor **fresh = calloc(st->n ? st->n : 1, sizeof *fresh);
  if (!targets || !fresh) s = tb_error(TB_ERR_OUT_OF_MEMORY, "%s: out of host memory", path);
  for (size_t i = 0; i < st->n && s == TB_OK; i++) s = check_entry(g, st, &st->entries[i], allow_narrowing, &targets[i]);
  /* Every entry checked: make the new tensors, then swap them in. */
  for (size_t i = 0; i < st->n && s == TB_OK; i++) {
    const tb_st_entry *e = &st->entries[i];
    const tb_ir_tensor *old = g->values[targets[i]].constant;
    void *data = NULL;
    fresh[i] = tb_graph_new_tensor(g, old->name, old->dtype, old->ndim, old->dims, &data);
    if (!fresh[i]) {
      s = tb_error(TB_ERR_OUT_OF_MEMORY, "%s: no host memory for initializer '%.200s'", path, e->name);
      break;
    }
    const void *src = st->bytes + st->data_start + e->begin;
    size_t count = (size_t)tb_ir_tensor_numel(old);
    if (e->dtype == old->dtype) memcpy(data, src, fresh[i]->nbytes);
    else s = tb_convert(e->dtype, src, old->dtype, data, count, true);
  }
  if (s == TB_OK) {
    for (size_t i = 0; i < st->n; i++) g->values[targets[i]].constant = fresh[i];
    if (out_replaced) *out_replaced = st->n;
  }
  free(targets);
  free(fresh);
  tb_safetensors_close(st);
  return s;
}
