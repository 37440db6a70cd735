/* Helpers for operators' infer functions: broadcasting, copying a type, checking an input's dtype, errors
 * naming the node, axis normalisation. */
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include "core/error.h"
#include "ops/op.h"
#include "ops/op_probe.h"

static void dims_str(const tb_value_type *t, char *buf, size_t cap) {
  size_t len = (size_t)snprintf(buf, cap, "[");
  for (size_t i = 0; i < t->ndim && len < cap; i++) {
    if (t->dims[i].value >= 0)
      len += (size_t)snprintf(buf + len, cap - len, "%s%lld", i ? ", " : "", (long long)t->dims[i].value);
    else
      len += (size_t)snprintf(buf + len, cap - len, "%s?", i ? ", " : "");
  }
  if (len < cap) snprintf(buf + len, cap - len, "]");
}

tb_status tb_infer_error(const tb_infer_ctx *ctx, tb_status status, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  tb_status st = tb_node_verror(ctx->graph, ctx->node, status, fmt, ap);
  va_end(ap);
  return st;
}

tb_status tb_infer_broadcast(const tb_infer_ctx *ctx, const tb_value_type *a, const tb_value_type *b, tb_value_type *out) {
  tb_value_type r;
  memset(&r, 0, sizeof r);
  r.kind = TB_VALUE_TENSOR;
  if (a->has_dtype) {
    r.has_dtype = true;
    r.dtype = a->dtype;
  } else if (b->has_dtype) {
    r.has_dtype = true;
    r.dtype = b->dtype;
  }
  if (a->has_shape && b->has_shape) {
    size_t rank = a->ndim > b->ndim ? a->ndim : b->ndim;
    r.has_shape = true;
    r.ndim = rank;
    for (size_t i = 0; i < rank; i++) {
      tb_dim one = {1, -1};
      tb_dim da = i < rank - a->ndim ? one : a->dims[i - (rank - a->ndim)];
      tb_dim db = i < rank - b->ndim ? one : b->dims[i - (rank - b->ndim)];
      tb_dim d = {-1, -1};
      if (da.value == 1) d = db;
      else if (db.value == 1) d = da;
      else if (da.value >= 0 && db.value >= 0) {
        if (da.value != db.value) {
          char sa[160], sb[160];
          dims_str(a, sa, sizeof sa);
          dims_str(b, sb, sizeof sb);
          return tb_infer_error(ctx, TB_ERR_MODEL, "shapes %s and %s cannot broadcast (dimension %zu: %lld vs %lld)", sa,
                                sb, i, (long long)da.value, (long long)db.value);
        }
        d = da;
      } else if (da.value >= 0) d = da; /* a known size other than 1: the other must match it */
      else if (db.value >= 0) d = db;
      else if (da.symbol >= 0 && da.symbol == db.symbol) d = da;
      r.dims[i] = d;
    }
  }
  *out = r;
  return TB_OK;
}

void tb_infer_same(const tb_value_type *in, tb_value_type *out) { *out = *in; }

tb_status tb_infer_require(const tb_infer_ctx *ctx, size_t input, tb_dtype_set allowed) {
  if (input >= ctx->n_inputs || !ctx->in[input])
    return tb_infer_error(ctx, TB_ERR_MODEL, "input %zu is required but not given", input);
  const tb_value_type *t = ctx->in[input];
  if (t->kind != TB_VALUE_TENSOR)
    return tb_infer_error(ctx, TB_ERR_UNSUPPORTED, "input %zu is not a tensor (sequences, maps and optionals are not supported)",
                          input);
  if (!t->has_dtype) return tb_infer_error(ctx, TB_ERR_MODEL, "input %zu has no known element type", input);
  if (allowed && !(allowed & TB_DTYPE_BIT(t->dtype))) {
    tb_op_probe_refused(input, allowed);
    char list[256] = "";
    size_t len = 0;
    for (int d = 0; d < TB_DTYPE_COUNT && len < sizeof list; d++)
      if (allowed & TB_DTYPE_BIT(d)) len += (size_t)snprintf(list + len, sizeof list - len, "%s%s", len ? ", " : "", tb_dtype_name((tb_dtype)d));
    return tb_infer_error(ctx, TB_ERR_UNSUPPORTED, "input %zu has element type %s; supported: %s", input,
                          tb_dtype_name(t->dtype), list);
  }
  return TB_OK;
}

tb_status tb_infer_axis(const tb_infer_ctx *ctx, const char *what, int64_t axis, size_t rank, size_t *out) {
  int64_t r = (int64_t)rank;
  if (axis < -r || axis >= r)
    return tb_infer_error(ctx, TB_ERR_MODEL, "%s %lld is out of range for rank %zu (valid: %lld to %lld)", what, (long long)axis,
                          rank, (long long)-r, (long long)(r - 1));
  *out = (size_t)(axis < 0 ? axis + r : axis);
  return TB_OK;
}
