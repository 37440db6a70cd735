/* Helpers for the rnn_control family's reference kernels (see rc_util.h). */
#include "backend/control/rc_util.h"
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

tb_tensor *tb_rc_input(const tb_kernel_ctx *ctx, size_t i) {
  return i < ctx->n_inputs ? ctx->inputs[i] : NULL; /* NULL for an omitted input */
}

bool tb_rc_has_output(const tb_kernel_ctx *ctx, size_t i) {
  return tb_kernel_has_output(ctx, i);
}

static tb_status packed(const tb_kernel_ctx *ctx, const tb_tensor *t, void **out) {
  size_t bytes = tb_tensor_nbytes(t);
  void *buf = malloc(bytes ? bytes : 1);
  if (!buf) return tb_kernel_error(ctx, TB_ERR_OUT_OF_MEMORY, "cannot allocate %zu bytes for an input copy", bytes);
  tb_status st = tb_tensor_copy_to_host(t, buf, bytes);
  if (st != TB_OK) {
    free(buf);
    return st;
  }
  *out = buf;
  return TB_OK;
}

static tb_status load_as(const tb_kernel_ctx *ctx, const tb_tensor *t, tb_dtype dtype, size_t elem, void **out) {
  size_t count = (size_t)tb_tensor_numel(t);
  void *raw = NULL, *conv = malloc(count ? count * elem : 1);
  tb_status st = conv ? packed(ctx, t, &raw)
                      : tb_kernel_error(ctx, TB_ERR_OUT_OF_MEMORY, "cannot allocate %zu elements for an input", count);
  if (st == TB_OK) st = tb_convert(tb_tensor_dtype(t), raw, dtype, conv, count, true);
  free(raw);
  if (st != TB_OK) {
    free(conv);
    return st;
  }
  *out = conv;
  return TB_OK;
}

tb_status tb_rc_load(const tb_kernel_ctx *ctx, const tb_tensor *t, double **out) {
  return load_as(ctx, t, TB_DTYPE_F64, sizeof(double), (void **)out);
}

tb_status tb_rc_load_i64(const tb_kernel_ctx *ctx, const tb_tensor *t, int64_t **out) {
  return load_as(ctx, t, TB_DTYPE_I64, sizeof(int64_t), (void **)out);
}

tb_status tb_rc_alloc(const tb_kernel_ctx *ctx, size_t count, double **out) {
  *out = calloc(count ? count : 1, sizeof(double));
  if (!*out) return tb_kernel_error(ctx, TB_ERR_OUT_OF_MEMORY, "cannot allocate %zu doubles of scratch", count);
  return TB_OK;
}

tb_status tb_rc_store(tb_kernel_ctx *ctx, size_t i, tb_dtype dtype, size_t ndim, const int64_t *shape, const double *data) {
  if (!tb_rc_has_output(ctx, i)) return TB_OK;
  tb_tensor *t = NULL;
  tb_status st = tb_kernel_output(ctx, i, dtype, ndim, shape, &t);
  if (st != TB_OK) return st;
  size_t count = (size_t)tb_tensor_numel(t), bytes = tb_tensor_nbytes(t);
  void *buf = malloc(bytes ? bytes : 1);
  if (!buf) return tb_kernel_error(ctx, TB_ERR_OUT_OF_MEMORY, "cannot allocate %zu bytes for output %zu", bytes, i);
  st = tb_convert(TB_DTYPE_F64, data, dtype, buf, count, true);
  if (st == TB_OK) st = tb_tensor_copy_from_host(t, buf, bytes);
  free(buf);
  return st;
}

bool tb_rc_shape_is(const tb_tensor *t, size_t ndim, const int64_t *shape) {
  if (tb_tensor_ndim(t) != ndim) return false;
  const int64_t *have = tb_tensor_shape(t);
  for (size_t d = 0; d < ndim; d++)
    if (have[d] != shape[d]) return false;
  return true;
}

const char *tb_rc_shape_str(const tb_tensor *t, char *buf, size_t cap) {
  size_t used = (size_t)snprintf(buf, cap, "[");
  const int64_t *shape = tb_tensor_shape(t);
  for (size_t d = 0; d < tb_tensor_ndim(t) && used < cap; d++)
    used += (size_t)snprintf(buf + used, cap - used, "%s%lld", d ? ", " : "", (long long)shape[d]);
  if (used < cap) snprintf(buf + used, cap - used, "]");
  return buf;
}

static tb_status scalar(const tb_kernel_ctx *ctx, const tb_tensor *t, const char *what, double *out) {
  if (tb_tensor_numel(t) != 1)
    return tb_kernel_error(ctx, TB_ERR_MODEL, "%s must have one element, it has %lld", what, (long long)tb_tensor_numel(t));
  double *v = NULL;
  tb_status st = tb_rc_load(ctx, t, &v);
  if (st != TB_OK) return st;
  *out = v[0];
  free(v);
  return TB_OK;
}

tb_status tb_rc_scalar_bool(const tb_kernel_ctx *ctx, const tb_tensor *t, const char *what, bool *out) {
  double v = 0;
  tb_status st = scalar(ctx, t, what, &v);
  if (st == TB_OK) *out = v != 0.0;
  return st;
}

tb_status tb_rc_scalar_i64(const tb_kernel_ctx *ctx, const tb_tensor *t, const char *what, int64_t *out) {
  if (tb_tensor_numel(t) != 1)
    return tb_kernel_error(ctx, TB_ERR_MODEL, "%s must have one element, it has %lld", what, (long long)tb_tensor_numel(t));
  int64_t *v = NULL;
  tb_status st = tb_rc_load_i64(ctx, t, &v);
  if (st != TB_OK) return st;
  *out = v[0];
  free(v);
  return TB_OK;
}

tb_status tb_rc_clone(const tb_kernel_ctx *ctx, const tb_tensor *src, tb_tensor **out) {
  tb_tensor *t = NULL;
  tb_status st = tb_tensor_create(ctx->backend, tb_tensor_dtype(src), tb_tensor_ndim(src), tb_tensor_shape(src), &t);
  if (st != TB_OK) return st;
  st = tb_rc_copy(t, src);
  if (st != TB_OK) {
    tb_tensor_destroy(t);
    return st;
  }
  *out = t;
  return TB_OK;
}

tb_status tb_rc_slice_view(tb_tensor *t, size_t axis, int64_t index, tb_tensor **out) {
  size_t ndim = tb_tensor_ndim(t);
  const int64_t *shape = tb_tensor_shape(t), *strides = tb_tensor_strides(t);
  int64_t sub_shape[TB_MAX_DIMS], sub_strides[TB_MAX_DIMS];
  for (size_t d = 0, s = 0; d < ndim; d++) {
    if (d == axis) continue;
    sub_shape[s] = shape[d];
    sub_strides[s++] = strides[d];
  }
  return tb_tensor_view(t, ndim - 1, sub_shape, sub_strides, tb_tensor_offset(t) + index * strides[axis], out);
}

tb_status tb_rc_output(tb_kernel_ctx *ctx, size_t i, tb_dtype dtype, size_t ndim, const int64_t *shape, tb_tensor **out) {
  const tb_tensor *pre = i < ctx->n_outputs ? ctx->outputs[i] : NULL;
  if (pre && (tb_tensor_dtype(pre) != dtype || !tb_rc_shape_is(pre, ndim, shape))) {
    char got[96] = "[", declared[96];
    size_t used = 1;
    for (size_t d = 0; d < ndim && used < sizeof got; d++)
      used += (size_t)snprintf(got + used, sizeof got - used, "%s%lld", d ? ", " : "", (long long)shape[d]);
    if (used < sizeof got) snprintf(got + used, sizeof got - used, "]");
    return tb_kernel_error(ctx, TB_ERR_MODEL, "the body gave output %zu as %s %s but the model declares it %s %s", i,
                           tb_dtype_name(dtype), got, tb_dtype_name(tb_tensor_dtype(pre)),
                           tb_rc_shape_str(pre, declared, sizeof declared));
  }
  return tb_kernel_output(ctx, i, dtype, ndim, shape, out);
}

tb_status tb_rc_output_copy(tb_kernel_ctx *ctx, size_t i, const tb_tensor *src) {
  if (!tb_rc_has_output(ctx, i)) return TB_OK;
  tb_tensor *t = NULL;
  tb_status st = tb_rc_output(ctx, i, tb_tensor_dtype(src), tb_tensor_ndim(src), tb_tensor_shape(src), &t);
  return st == TB_OK ? tb_rc_copy(t, src) : st;
}

void tb_rc_destroy_all(tb_tensor **ts, size_t count) {
  for (size_t i = 0; ts && i < count; i++) {
    tb_tensor_destroy(ts[i]);
    ts[i] = NULL;
  }
}

tb_status tb_rc_run_body(tb_kernel_ctx *ctx, const tb_graph *body, size_t n_inputs, tb_tensor *const *inputs,
                      size_t n_outputs, tb_tensor **outs) {
  for (size_t i = 0; i < n_outputs; i++) outs[i] = NULL;
  if (!ctx->run_subgraph)
    return tb_kernel_error(ctx, TB_ERR_INTERNAL, "no subgraph runner in the kernel context to run '%s'",
                           body->name ? body->name : "body");
  tb_status st = ctx->run_subgraph(ctx, body, n_inputs, inputs, n_outputs, outs);
  for (size_t i = 0; st == TB_OK && i < n_outputs; i++)
    if (!outs[i]) st = tb_kernel_error(ctx, TB_ERR_INTERNAL, "the subgraph runner gave no tensor for body output %zu", i);
  if (st != TB_OK) tb_rc_destroy_all(outs, n_outputs);
  return st;
}
