/* The staging, output and mapping helpers every elementwise CPU kernel shares (see ew_kernel.h). */
#include "backend/cpu/kernels/elementwise/ew_kernel.h"
#include "ops/elementwise/ew_params.h"
#include <stdlib.h>
#include "backend/tensor/tensor_impl.h"

tb_dtype tb_ew_compute_dtype(tb_dtype d) {
  return (d == TB_DTYPE_F16 || d == TB_DTYPE_BF16) ? TB_DTYPE_F32 : d;
}

static tb_status alloc_bytes(tb_kernel_ctx *ctx, size_t count, size_t elem, void **out) {
  size_t bytes = count * elem;
  *out = malloc(bytes ? bytes : 1);
  if (!*out) return tb_kernel_error(ctx, TB_ERR_OUT_OF_MEMORY, "could not allocate %zu bytes of scratch memory", bytes);
  return TB_OK;
}

tb_status tb_ew_packed(tb_kernel_ctx *ctx, const tb_tensor *t, const void **data, void **owned) {
  *owned = NULL;
  size_t bytes = tb_tensor_nbytes(t);
  if (bytes == 0) {
    *data = NULL;
    return TB_OK;
  }
  if (tb_tensor_is_contiguous(t) && tb_tensor_host_data(t)) {
    *data = tb_tensor_host_data(t);
    return TB_OK;
  }
  tb_status st = alloc_bytes(ctx, bytes, 1, owned);
  if (st != TB_OK) return st;
  st = tb_tensor_copy_to_host(t, *owned, bytes);
  if (st != TB_OK) {
    free(*owned);
    *owned = NULL;
    return st;
  }
  *data = *owned;
  return TB_OK;
}

tb_status tb_ew_stage(tb_kernel_ctx *ctx, const tb_tensor *t, tb_dtype compute, size_t ndim,
                      const int64_t *shape_override, tb_ew_staged *s) {
  memset(s, 0, sizeof *s);
  size_t t_ndim = tb_tensor_ndim(t);
  const int64_t *t_shape = tb_tensor_shape(t);
  if (!shape_override) {
    ndim = t_ndim;
    shape_override = t_shape;
  }
  if (ndim > TB_MAX_DIMS) return tb_kernel_error(ctx, TB_ERR_INTERNAL, "input of rank %zu", ndim);
  for (size_t d = 0; d < ndim; d++) s->shape[d] = shape_override[d];
  s->op.ndim = ndim;
  s->op.shape = s->shape;
  s->op.elem_size = tb_dtype_size(compute);
  int64_t numel = tb_tensor_numel(t);
  tb_dtype dtype = tb_tensor_dtype(t);

  if (dtype == compute && tb_tensor_host_data(t)) {
    /* Use the tensor in place: its strides, then 0 for the 1-dims an override appended. */
    const int64_t *ts = tb_tensor_strides(t);
    for (size_t d = 0; d < ndim; d++) s->strides[d] = d < t_ndim ? ts[d] : 0;
    s->op.strides = s->strides;
    s->op.data = tb_tensor_host_data(t);
    return TB_OK;
  }
  if (numel > 0 && !tb_tensor_host_data(t))
    return tb_kernel_error(ctx, TB_ERR_INTERNAL, "an input is not in host memory");
  const void *src;
  void *tmp;
  tb_status st = tb_ew_packed(ctx, t, &src, &tmp);
  if (st != TB_OK) return st;
  st = alloc_bytes(ctx, (size_t)numel, s->op.elem_size, &s->owned);
  if (st == TB_OK) st = tb_convert(dtype, src, compute, s->owned, (size_t)numel, true);
  free(tmp);
  if (st != TB_OK) {
    tb_ew_staged_free(s);
    return st;
  }
  s->op.data = s->owned;
  s->op.strides = NULL;
  return TB_OK;
}

void tb_ew_staged_free(tb_ew_staged *s) {
  free(s->owned);
  s->owned = NULL;
}

tb_status tb_ew_out_begin(tb_kernel_ctx *ctx, size_t i, tb_dtype dtype, tb_dtype compute, size_t ndim,
                          const int64_t *shape, tb_ew_out *o) {
  memset(o, 0, sizeof *o);
  tb_status st = tb_kernel_output(ctx, i, dtype, ndim, shape, &o->tensor);
  if (st != TB_OK) return st;
  o->compute = compute;
  for (size_t d = 0; d < ndim; d++) o->shape[d] = shape[d];
  o->op.ndim = ndim;
  o->op.shape = o->shape;
  o->op.elem_size = tb_dtype_size(compute);
  int64_t numel = tb_tensor_numel(o->tensor);
  void *host = tb_tensor_host_data(o->tensor);
  if (numel > 0 && !host) return tb_kernel_error(ctx, TB_ERR_INTERNAL, "output %zu is not in host memory", i);
  if (dtype == compute) {
    o->op.data = host;
    o->op.strides = tb_tensor_strides(o->tensor);
    return TB_OK;
  }
  st = alloc_bytes(ctx, (size_t)numel, o->op.elem_size, &o->owned);
  if (st != TB_OK) return st;
  o->op.data = o->owned;
  o->op.strides = NULL;
  return TB_OK;
}

tb_status tb_ew_out_finish(tb_kernel_ctx *ctx, tb_ew_out *o, bool ok) {
  tb_status st = TB_OK;
  if (ok && o->owned) {
    tb_dtype dtype = tb_tensor_dtype(o->tensor);
    size_t numel = (size_t)tb_tensor_numel(o->tensor);
    if (tb_tensor_is_contiguous(o->tensor)) {
      st = tb_convert(o->compute, o->owned, dtype, tb_tensor_host_data(o->tensor), numel, true);
    } else {
      void *tmp;
      st = alloc_bytes(ctx, numel, tb_dtype_size(dtype), &tmp);
      if (st == TB_OK) st = tb_convert(o->compute, o->owned, dtype, tmp, numel, true);
      if (st == TB_OK) st = tb_tensor_copy_from_host(o->tensor, tmp, tb_tensor_nbytes(o->tensor));
      free(tmp);
    }
  }
  free(o->owned);
  o->owned = NULL;
  return st;
}

tb_bcast_loop tb_ew_find_loop(const tb_ew_loop_entry *table, size_t count, tb_dtype dtype) {
  for (size_t i = 0; i < count; i++)
    if (table[i].dtype == dtype) return table[i].loop;
  return NULL;
}

static const char *shape_text(char *buf, size_t cap, const tb_tensor *t) {
  return tb_dims_str(buf, cap, tb_tensor_ndim(t), tb_tensor_shape(t));
}

tb_status tb_ew_map(tb_kernel_ctx *ctx, const tb_ew_call *call) {
  if (call->n_in == 0 || call->n_in > TB_EW_MAX_INPUTS || !call->loop)
    return tb_kernel_error(ctx, TB_ERR_INTERNAL, "elementwise call with %zu inputs", call->n_in);
  size_t ndims[TB_EW_MAX_INPUTS];
  const int64_t *shapes[TB_EW_MAX_INPUTS];
  for (size_t k = 0; k < call->n_in; k++) {
    if (!call->in[k]) return tb_kernel_error(ctx, TB_ERR_INTERNAL, "input %zu is missing", k);
    ndims[k] = call->in_shape[k] ? call->in_ndim[k] : tb_tensor_ndim(call->in[k]);
    shapes[k] = call->in_shape[k] ? call->in_shape[k] : tb_tensor_shape(call->in[k]);
  }
  size_t out_ndim;
  int64_t out_shape[TB_MAX_DIMS];
  if (call->out_shape) {
    out_ndim = call->out_ndim;
    if (out_ndim > TB_MAX_DIMS) return tb_kernel_error(ctx, TB_ERR_INTERNAL, "output of rank %zu", out_ndim);
    memcpy(out_shape, call->out_shape, out_ndim * sizeof *out_shape);
  } else if (!tb_bcast_shape(call->n_in, ndims, shapes, &out_ndim, out_shape)) {
    char a[96], b[96];
    return tb_kernel_error(ctx, TB_ERR_INVALID_ARGUMENT, "input shapes %s and %s do not broadcast",
                           shape_text(a, sizeof a, call->in[0]),
                           shape_text(b, sizeof b, call->in[call->n_in > 1 ? 1 : 0]));
  }

  tb_ew_staged staged[TB_EW_MAX_INPUTS];
  size_t n_staged = 0;
  tb_ew_out out;
  tb_status st = TB_OK;
  for (; n_staged < call->n_in && st == TB_OK; n_staged++) {
    st = tb_ew_stage(ctx, call->in[n_staged], call->in_compute[n_staged], call->in_ndim[n_staged],
                     call->in_shape[n_staged], &staged[n_staged]);
    if (st != TB_OK) break;
  }
  bool have_out = false;
  if (st == TB_OK) {
    st = tb_ew_out_begin(ctx, call->out_index, call->out_dtype, call->out_compute, out_ndim, out_shape, &out);
    have_out = true;
  }
  if (st == TB_OK) {
    tb_bcast_operand ops[TB_BCAST_MAX_OPERANDS];
    ops[0] = out.op;
    for (size_t k = 0; k < call->n_in; k++) ops[k + 1] = staged[k].op;
    if (!tb_bcast_walk(ops, call->n_in + 1, call->loop, call->params)) {
      char a[96];
      st = tb_kernel_error(ctx, TB_ERR_INVALID_ARGUMENT, "an input of shape %s does not broadcast to the output",
                           shape_text(a, sizeof a, call->in[call->n_in - 1]));
    }
  }
  if (have_out) {
    tb_status fin = tb_ew_out_finish(ctx, &out, st == TB_OK);
    if (st == TB_OK) st = fin;
  }
  for (size_t k = 0; k < n_staged; k++) tb_ew_staged_free(&staged[k]);
  return st;
}

tb_status tb_ew_use_legacy_shape(tb_kernel_ctx *ctx, tb_ew_call *call, int64_t *shape) {
  size_t ndim;
  tb_status st = tb_ew_legacy_shape(ctx, &ndim, shape);
  if (st == TB_OK && ndim > 0) {
    call->in_ndim[1] = ndim;
    call->in_shape[1] = shape;
  }
  return st;
}

tb_status tb_ew_legacy_shape(tb_kernel_ctx *ctx, size_t *ndim, int64_t *shape) {
  *ndim = 0;
  if (ctx->opset >= 7 || ctx->n_inputs < 2 || !ctx->inputs[0] || !ctx->inputs[1]) return TB_OK;
  const tb_binary_params *p = ctx->params;
  if (!p->broadcast) return TB_OK;
  size_t a_ndim = tb_tensor_ndim(ctx->inputs[0]), b_ndim = tb_tensor_ndim(ctx->inputs[1]);
  if (b_ndim > a_ndim)
    return tb_kernel_error(ctx, TB_ERR_INVALID_ARGUMENT, "with broadcast=1, B has rank %zu, above A's %zu", b_ndim,
                           a_ndim);
  int64_t axis = p->has_axis ? p->axis : (int64_t)(a_ndim - b_ndim);
  if (axis < 0) axis += (int64_t)a_ndim;
  if (axis < 0 || (size_t)axis + b_ndim > a_ndim)
    return tb_kernel_error(ctx, TB_ERR_INVALID_ARGUMENT, "axis %lld does not place B (rank %zu) inside A (rank %zu)",
                           (long long)axis, b_ndim, a_ndim);
  size_t n = (size_t)axis + b_ndim == 0 ? 0 : a_ndim - (size_t)axis;
  const int64_t *b_shape = tb_tensor_shape(ctx->inputs[1]);
  for (size_t d = 0; d < n; d++) shape[d] = d < b_ndim ? b_shape[d] : 1;
  *ndim = n;
  return TB_OK;
}

tb_status tb_ew_simple(tb_kernel_ctx *ctx, const tb_ew_loop_entry *table, size_t count, size_t key, tb_dtype out_dtype,
                       tb_dtype out_compute, const void *params) {
  tb_ew_call call;
  memset(&call, 0, sizeof call);
  if (ctx->n_inputs == 0 || ctx->n_inputs > TB_EW_MAX_INPUTS || key >= ctx->n_inputs || !ctx->inputs[key])
    return tb_kernel_error(ctx, TB_ERR_INTERNAL, "unexpected inputs (%zu)", ctx->n_inputs);
  tb_dtype in_dtype = tb_tensor_dtype(ctx->inputs[key]);
  call.loop = tb_ew_find_loop(table, count, tb_ew_compute_dtype(in_dtype));
  if (!call.loop)
    return tb_kernel_error(ctx, TB_ERR_UNSUPPORTED, "no kernel for %s inputs", tb_dtype_name(in_dtype));
  call.n_in = ctx->n_inputs;
  for (size_t k = 0; k < call.n_in; k++) {
    call.in[k] = ctx->inputs[k];
    if (call.in[k]) call.in_compute[k] = tb_ew_compute_dtype(tb_tensor_dtype(call.in[k]));
  }
  int64_t legacy[TB_MAX_DIMS];
  tb_status st = tb_ew_use_legacy_shape(ctx, &call, legacy);
  if (st != TB_OK) return st;
  call.out_dtype = out_dtype;
  call.out_compute = out_compute;
  call.params = params;
  return tb_ew_map(ctx, &call);
}

tb_status tb_ew_scalar(tb_kernel_ctx *ctx, size_t i, tb_dtype dtype, void *out) {
  const tb_tensor *t = ctx->inputs[i];
  if (tb_tensor_numel(t) != 1)
    return tb_kernel_error(ctx, TB_ERR_MODEL, "input %zu must hold one value; it has %lld", i,
                           (long long)tb_tensor_numel(t));
  unsigned char raw[16];
  tb_status st = tb_tensor_copy_to_host(t, raw, tb_tensor_nbytes(t));
  if (st != TB_OK) return st;
  return tb_convert(tb_tensor_dtype(t), raw, dtype, out, 1, true);
}

bool tb_ew_has_output(const tb_kernel_ctx *ctx, size_t i) {
  return tb_kernel_has_output(ctx, i);
}
