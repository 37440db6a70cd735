/* Helpers the tensor family's CPU kernels share: inputs, outputs, inference on concrete inputs, and a
 * byte-wise strided copy. */
#include "backend/cpu/kernels/tensor/tensor_kernel.h"
#include <stdlib.h>
#include <string.h>
#include "ops/op.h"
#include "ops/op_params.h"

bool tb_tk_has(const tb_kernel_ctx *ctx, size_t i) { return i < ctx->n_inputs && ctx->inputs[i] != NULL; }

unsigned char *tb_tk_data(const tb_tensor *t) { return (unsigned char *)tb_tensor_host_data(t); }

tb_status tb_tk_input(const tb_kernel_ctx *ctx, size_t i, const tb_tensor **t, const unsigned char **data) {
  if (!tb_tk_has(ctx, i)) return tb_kernel_error(ctx, TB_ERR_MODEL, "input %zu is missing", i);
  const tb_tensor *x = ctx->inputs[i];
  if (!tb_tensor_is_contiguous(x))
    return tb_kernel_error(ctx, TB_ERR_INTERNAL, "input %zu is not a contiguous tensor", i);
  unsigned char *p = tb_tk_data(x);
  if (!p && tb_tensor_numel(x) > 0)
    return tb_kernel_error(ctx, TB_ERR_INTERNAL, "input %zu is not in host memory", i);
  *t = x;
  *data = p;
  return TB_OK;
}

int64_t tb_tk_int_at(const void *data, tb_dtype dtype, int64_t k) {
  if (dtype == TB_DTYPE_I32) {
    int32_t v;
    memcpy(&v, (const unsigned char *)data + k * 4, 4);
    return v;
  }
  int64_t v;
  memcpy(&v, (const unsigned char *)data + k * 8, 8);
  return v;
}

double tb_tk_double_at(const void *data, tb_dtype dtype, int64_t k) {
  const unsigned char *p = (const unsigned char *)data + (size_t)k * tb_dtype_size(dtype);
  switch (dtype) {
    case TB_DTYPE_I64: case TB_DTYPE_I32: return (double)tb_tk_int_at(data, dtype, k);
    case TB_DTYPE_I16: { int16_t v; memcpy(&v, p, 2); return v; }
    case TB_DTYPE_I8: return (int8_t)*p;
    case TB_DTYPE_U8: return *p;
    case TB_DTYPE_BOOL: return *p ? 1 : 0;
    case TB_DTYPE_F64: { double v; memcpy(&v, p, 8); return v; }
    default: {
      float f = 0;
      tb_convert(dtype, p, TB_DTYPE_F32, &f, 1, true);
      return f;
    }
  }
}

tb_status tb_tk_input_ints(const tb_kernel_ctx *ctx, size_t i, int64_t *out, size_t cap, size_t *n) {
  const tb_tensor *t;
  const unsigned char *p;
  tb_status st = tb_tk_input(ctx, i, &t, &p);
  if (st != TB_OK) return st;
  tb_dtype dt = tb_tensor_dtype(t);
  if (dt != TB_DTYPE_I64 && dt != TB_DTYPE_I32)
    return tb_kernel_error(ctx, TB_ERR_MODEL, "input %zu must be int64 or int32, not %s", i, tb_dtype_name(dt));
  if (tb_tensor_ndim(t) > 1)
    return tb_kernel_error(ctx, TB_ERR_MODEL, "input %zu must be a scalar or 1-D tensor, not rank %zu", i,
                           tb_tensor_ndim(t));
  int64_t count = tb_tensor_numel(t);
  if ((uint64_t)count > cap)
    return tb_kernel_error(ctx, TB_ERR_UNSUPPORTED, "input %zu has %lld values; at most %zu are supported", i,
                           (long long)count, cap);
  for (int64_t k = 0; k < count; k++) out[k] = tb_tk_int_at(p, dt, k);
  *n = (size_t)count;
  return TB_OK;
}

tb_status tb_tk_output(tb_kernel_ctx *ctx, size_t i, tb_dtype dtype, size_t ndim, const int64_t *shape, tb_tensor **t,
                    unsigned char **data) {
  tb_tensor *o = NULL;
  tb_status st = tb_kernel_output(ctx, i, dtype, ndim, shape, &o);
  if (st != TB_OK) return st;
  if (!tb_tensor_is_contiguous(o)) return tb_kernel_error(ctx, TB_ERR_INTERNAL, "output %zu is not contiguous", i);
  unsigned char *p = tb_tk_data(o);
  if (!p && tb_tensor_numel(o) > 0) return tb_kernel_error(ctx, TB_ERR_INTERNAL, "output %zu is not in host memory", i);
  if (t) *t = o;
  if (data) *data = p;
  return TB_OK;
}

struct tk_infer {
  tb_infer_ctx ic;
  tb_node op;  /* the op's stand-in: its identity and parsed parameters */
  tb_value_type *types, *out;
  const tb_value_type **in;
  tb_ir_tensor *values;
  const tb_ir_tensor **value;
};

void tb_tk_infer_end(tk_infer *s) {
  if (!s) return;
  free(s->types);
  free(s->out);
  free(s->in);
  free(s->values);
  free(s->value);
  free(s);
}

tb_status tb_tk_infer_begin(tb_kernel_ctx *ctx, tk_infer **out) {
  *out = NULL;
  tb_node op;
  tb_status st = tb_infer_stand_in(&op, ctx->domain, ctx->op_type, ctx->opset, ctx->params, ctx->n_inputs, ctx->n_outputs);
  if (st != TB_OK) return st;
  const tb_op_def *def = op.def;
  size_t ni = ctx->n_inputs ? ctx->n_inputs : 1, no = ctx->n_outputs ? ctx->n_outputs : 1;
  tk_infer *s = calloc(1, sizeof *s);
  if (s) {
    s->types = calloc(ni, sizeof *s->types);
    s->in = calloc(ni, sizeof *s->in);
    s->values = calloc(ni, sizeof *s->values);
    s->value = calloc(ni, sizeof *s->value);
    s->out = calloc(no, sizeof *s->out);
  }
  if (!s || !s->types || !s->in || !s->values || !s->value || !s->out) {
    tb_tk_infer_end(s);
    return tb_kernel_error(ctx, TB_ERR_OUT_OF_MEMORY, "no memory for shape inference");
  }
  for (size_t i = 0; i < ctx->n_inputs; i++) {
    const tb_tensor *t = ctx->inputs[i];
    if (!t) continue;
    tb_value_type *ty = &s->types[i];
    ty->kind = TB_VALUE_TENSOR;
    ty->has_dtype = true;
    ty->dtype = tb_tensor_dtype(t);
    ty->has_shape = true;
    ty->ndim = tb_tensor_ndim(t);
    for (size_t d = 0; d < ty->ndim; d++) ty->dims[d] = (tb_dim){tb_tensor_shape(t)[d], -1};
    s->in[i] = ty;
    if (i < 32 && (def->value_inputs & (1u << i))) {
      const unsigned char *p;
      st = tb_tk_input(ctx, i, &t, &p);
      if (st != TB_OK) {
        tb_tk_infer_end(s);
        return st;
      }
      tb_ir_tensor *v = &s->values[i];
      v->dtype = ty->dtype;
      v->ndim = ty->ndim;
      memcpy(v->dims, tb_tensor_shape(t), ty->ndim * sizeof(int64_t));
      v->data = p;
      v->nbytes = tb_tensor_nbytes(t);
      s->value[i] = v;
    }
  }
  s->op = op;
  s->ic = (tb_infer_ctx){NULL, &s->op, ctx->n_inputs, s->in, s->value, ctx->n_outputs, s->out};
  *out = s;
  return TB_OK;
}

tb_infer_ctx *tb_tk_infer_ctx(tk_infer *s) { return &s->ic; }

tb_status tb_tk_infer_outputs(tb_kernel_ctx *ctx, tb_tensor **outs) {
  tk_infer *s;
  tb_status st = tb_tk_infer_begin(ctx, &s);
  if (st != TB_OK) return st;
  st = s->op.def->infer(&s->ic);
  for (size_t o = 0; st == TB_OK && o < ctx->n_outputs; o++) {
    outs[o] = NULL;
    const tb_value_type *t = &s->out[o];
    if (!tb_kernel_has_output(ctx, o)) continue;
    int64_t dims[TB_MAX_DIMS];
    bool known = t->has_dtype && t->has_shape && t->ndim <= TB_MAX_DIMS;
    for (size_t d = 0; known && d < t->ndim; d++) {
      dims[d] = t->dims[d].value;
      if (dims[d] < 0) known = false;
    }
    if (!known) {
      st = tb_kernel_error(ctx, TB_ERR_INTERNAL, "the shape of output %zu is not known", o);
      break;
    }
    st = tb_tk_output(ctx, o, t->dtype, t->ndim, dims, &outs[o], NULL);
  }
  tb_tk_infer_end(s);
  return st;
}

/* dst[k] = src[k * stride] for k < n elements of elem bytes: typed loops for the usual sizes (a memcpy call
 * per element made a transposing copy, BERT's key transpose, ten times slower). */
static void gather_row(unsigned char *dst, const unsigned char *src, size_t elem, int64_t n, int64_t stride) {
#define GATHER(type)                                                                                              \
  for (int64_t k = 0; k < n; k++) {                                                                            \
    type v;                                                                                                     \
    memcpy(&v, src + k * stride, sizeof v);                                                                     \
    memcpy(dst + (size_t)k * sizeof v, &v, sizeof v);                                                           \
  }
  switch (elem) {
  case 1: GATHER(uint8_t) break;
  case 2: GATHER(uint16_t) break;
  case 4: GATHER(uint32_t) break;
  case 8: GATHER(uint64_t) break;
  default:
    for (int64_t k = 0; k < n; k++) memcpy(dst + (size_t)k * elem, src + k * stride, elem);
  }
#undef GATHER
}

enum { TILE = 16 };

/* dst (rows x cols, contiguous) from src where element (r, c) is at src + r * elem + c * col_stride, in
 * TILE x TILE blocks so the lines read along a column stay in cache for the next rows. elem 2, 4 or 8. */
static void transpose_tiles(unsigned char *dst, const unsigned char *src, size_t elem, int64_t rows, int64_t cols,
                            int64_t col_stride) {
#define TILES(type)                                                                                               \
  for (int64_t r0 = 0; r0 < rows; r0 += TILE)                                                                   \
    for (int64_t c0 = 0; c0 < cols; c0 += TILE) {                                                               \
      int64_t r1 = r0 + TILE < rows ? r0 + TILE : rows, c1 = c0 + TILE < cols ? c0 + TILE : cols;               \
      for (int64_t r = r0; r < r1; r++)                                                                         \
        for (int64_t c = c0; c < c1; c++) {                                                                     \
          type v;                                                                                               \
          memcpy(&v, src + r * (int64_t)sizeof v + c * col_stride, sizeof v);                                   \
          memcpy(dst + (size_t)(r * cols + c) * sizeof v, &v, sizeof v);                                        \
        }                                                                                                       \
    }
  switch (elem) {
  case 2: TILES(uint16_t) break;
  case 4: TILES(uint32_t) break;
  default: TILES(uint64_t) break;
  }
#undef TILES
}

void tb_tk_strided_copy(unsigned char *dst, const unsigned char *src, size_t elem, size_t ndim, const int64_t *shape,
                     const int64_t *strides, int64_t src_offset) {
  int64_t numel = 1;
  for (size_t d = 0; d < ndim; d++) numel *= shape[d];
  if (numel <= 0) return;
  if (ndim == 0) {
    memcpy(dst, src + src_offset, elem);
    return;
  }
  /* The innermost dim runs as a loop (or, when the dim before it is the contiguous one in the source, the
   * two run as a blocked transpose); the outer ones as a counter. */
  int64_t idx[TB_MAX_DIMS] = {0};
  size_t last = ndim - 1;
  int64_t inner = shape[last], inner_stride = strides[last];
  int64_t off = src_offset;
  if (ndim >= 2 && inner_stride != (int64_t)elem && strides[last - 1] == (int64_t)elem && inner >= TILE &&
      shape[last - 1] >= TILE && (elem == 4 || elem == 8 || elem == 2)) {
    int64_t rows = shape[last - 1], plane = rows * inner;
    for (int64_t done = 0; done < numel; done += plane) {
      transpose_tiles(dst, src + off, elem, rows, inner, inner_stride);
      dst += (size_t)plane * elem;
      for (size_t d = last - 1; d-- > 0;) {
        off += strides[d];
        if (++idx[d] < shape[d]) break;
        off -= strides[d] * shape[d];
        idx[d] = 0;
      }
    }
    return;
  }
  for (int64_t done = 0; done < numel; done += inner) {
    if (inner_stride == (int64_t)elem) {
      memcpy(dst, src + off, (size_t)inner * elem);
      dst += (size_t)inner * elem;
    } else {
      gather_row(dst, src + off, elem, inner, inner_stride);
      dst += (size_t)inner * elem;
    }
    for (size_t d = last; d-- > 0;) {
      off += strides[d];
      if (++idx[d] < shape[d]) break;
      off -= strides[d] * shape[d];
      idx[d] = 0;
    }
  }
}

tb_status tb_tk_begin(tb_kernel_ctx *ctx, size_t n, const tb_tensor **in, const unsigned char **data, tb_tensor **outs) {
  for (size_t i = 0; i < n; i++) {
    tb_status st = tb_tk_input(ctx, i, &in[i], &data[i]);
    if (st != TB_OK) return st;
  }
  return tb_tk_infer_outputs(ctx, outs);
}

int64_t tb_tk_axis(int64_t axis, size_t rank) { return axis < 0 ? axis + (int64_t)rank : axis; }

tb_status tb_tk_elements_begin(const tb_kernel_ctx *ctx, tk_elements *w, const tb_tensor *data, const tb_tensor *ind,
                            const unsigned char *ip, const tb_tensor *upd, size_t axis) {
  memset(w, 0, sizeof *w);
  w->ip = ip;
  w->it = tb_tensor_dtype(ind);
  w->rank = tb_tensor_ndim(data);
  w->axis = axis;
  w->shape = tb_tensor_shape(data);
  w->ishape = tb_tensor_shape(ind);
  for (size_t d = 0; d < w->rank; d++) {
    if (upd && tb_tensor_shape(upd)[d] != w->ishape[d])
      return tb_kernel_error(ctx, TB_ERR_INVALID_ARGUMENT, "updates has size %lld on dim %zu where indices has %lld",
                             (long long)tb_tensor_shape(upd)[d], d, (long long)w->ishape[d]);
    if (d != axis && w->ishape[d] > w->shape[d])
      return tb_kernel_error(ctx, TB_ERR_INVALID_ARGUMENT, "indices has size %lld on dim %zu where data has %lld",
                             (long long)w->ishape[d], d, (long long)w->shape[d]);
  }
  tb_shape_strides(w->rank, w->shape, w->strides);
  return TB_OK;
}

/* idx in [-dim, dim) normalised to [0, dim), else the error naming the index, its position and the dim. */
tb_status tb_tk_check_index(const tb_kernel_ctx *ctx, int64_t idx, int64_t dim, size_t axis, int64_t at, int64_t *out) {
  if (idx < -dim || idx >= dim)
    return tb_kernel_error(ctx, TB_ERR_INVALID_ARGUMENT,
                           "index %lld (indices element %lld) is out of range for axis %zu of size %lld", (long long)idx,
                           (long long)at, axis, (long long)dim);
  *out = idx < 0 ? idx + dim : idx;
  return TB_OK;
}

tb_status tb_tk_elements_next(const tb_kernel_ctx *ctx, tk_elements *w, int64_t j, int64_t *off) {
  int64_t v = 0;
  tb_status st = tb_tk_check_index(ctx, tb_tk_int_at(w->ip, w->it, j), w->shape[w->axis], w->axis, j, &v);
  if (st != TB_OK) return st;
  *off = 0;
  for (size_t d = 0; d < w->rank; d++) *off += (d == w->axis ? v : w->idx[d]) * w->strides[d];
  tb_kernel_next_index(w->rank, w->ishape, w->idx);
  return TB_OK;
}
