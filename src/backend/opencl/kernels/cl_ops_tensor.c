/* OpenCL kernels of the data-movement ops on float32 / float16 tensors: Reshape, Flatten, Squeeze,
 * Unsqueeze and inference Dropout (a device copy), Constant of float values (written from the host), Transpose, Concat, Split, Slice, Expand, Tile,
 * DepthToSpace and SpaceToDepth (strided copies), Pad (constant, reflect, edge), Gather (indices read back once to check their range, as
 * the CPU kernel rejects out-of-range indices). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "backend/opencl/kernels/cl_ops.h"
#include "ops/tensor/tensor_params.h"
#include "backend/tensor/tensor_impl.h"

/* y = x byte for byte, enqueued on the queue (no wait). */
static tb_status copy_run(tb_kernel_ctx *ctx) {
  tb_status s = tb_kernel_outputs(ctx);
  if (s != TB_OK) return s;
  const tb_tensor *x = ctx->inputs[0];
  tb_tensor *y = ctx->outputs[0];
  size_t bytes = tb_tensor_nbytes(y);
  if (bytes != tb_tensor_nbytes(x))
    return tb_kernel_error(ctx, TB_ERR_INVALID_ARGUMENT, "input of %zu bytes, output of %zu", tb_tensor_nbytes(x), bytes);
  if (bytes == 0) return TB_OK;
  tb_cl_mem src = NULL, dst = NULL;
  int64_t so = 0, dso = 0;
  if ((s = tb_cl_buffer(ctx, x, &src, &so)) != TB_OK || (s = tb_cl_buffer(ctx, y, &dst, &dso)) != TB_OK) return s;
  size_t elem = tb_dtype_size(x->dtype);
  if (src == dst && so == dso) return TB_OK;
  tb_cl_device *dev = tb_cl_dev(ctx);
  tb_cl_int err = dev->rt.cl.clEnqueueCopyBuffer(dev->queue, src, dst, (size_t)so * elem, (size_t)dso * elem, bytes, 0, NULL, NULL);
  if (err == TB_CL_SUCCESS) return TB_OK;
  char detail[200];
  snprintf(detail, sizeof detail, "%zu bytes for %s", bytes, ctx->op_type);
  return tb_cl_fail(dev, "clEnqueueCopyBuffer", detail, err);
}

static tb_status transpose_run(tb_kernel_ctx *ctx) {
  tb_status s = tb_kernel_outputs(ctx);
  if (s != TB_OK) return s;
  const tb_tensor *x = ctx->inputs[0];
  tb_tensor *y = ctx->outputs[0];
  const tb_transpose_params *tp = ctx->params;
  const int64_t *perm = tp->has_perm ? tp->perm : NULL;
  size_t np = tp->n_perm, nd = x->ndim;
  if (perm && np != nd) return tb_kernel_error(ctx, TB_ERR_MODEL, "perm has %zu entries for a rank-%zu input", np, nd);
  int64_t xs[TB_MAX_DIMS], src[TB_MAX_DIMS], dst[TB_MAX_DIMS];
  tb_shape_strides(nd, x->shape, xs);
  tb_shape_strides(nd, y->shape, dst);
  for (size_t d = 0; d < nd; d++) {
    int64_t p = perm ? perm[d] : (int64_t)(nd - 1 - d);
    if (p < 0 || p >= (int64_t)nd) return tb_kernel_error(ctx, TB_ERR_MODEL, "perm[%zu] = %lld is outside rank %zu", d, (long long)p, nd);
    src[d] = xs[p];
  }
  return tb_cl_copy_strided(ctx, 0, x, 0, src, y, 0, dst, nd, y->shape);
}

/* A parsed axis made non-negative for rank. */
static tb_status axis_of(tb_kernel_ctx *ctx, int64_t a, size_t rank, size_t *axis) {
  if (a < 0) a += (int64_t)rank;
  if (a < 0 || a >= (int64_t)(rank ? rank : 1))
    return tb_kernel_error(ctx, TB_ERR_MODEL, "axis is outside the rank %zu", rank);
  *axis = (size_t)a;
  return TB_OK;
}

static tb_status concat_run(tb_kernel_ctx *ctx) {
  tb_status s = tb_kernel_outputs(ctx);
  if (s != TB_OK) return s;
  tb_tensor *y = ctx->outputs[0];
  size_t axis = 0, nd = y->ndim;
  const tb_axis_params *p = ctx->params;
  if ((s = axis_of(ctx, p->axis, nd, &axis)) != TB_OK) return s;
  int64_t ys[TB_MAX_DIMS], xs[TB_MAX_DIMS];
  tb_shape_strides(nd, y->shape, ys);
  int64_t at = 0;
  for (size_t i = 0; i < ctx->n_inputs && s == TB_OK; i++) {
    const tb_tensor *x = ctx->inputs[i];
    if (!x) continue;
    if (x->ndim != nd) return tb_kernel_error(ctx, TB_ERR_INVALID_ARGUMENT, "input %zu has rank %zu, the output %zu", i, x->ndim, nd);
    tb_shape_strides(nd, x->shape, xs);
    if (tb_tensor_numel(x) > 0) s = tb_cl_copy_strided(ctx, 0, x, 0, xs, y, at * ys[axis], ys, nd, x->shape);
    at += x->shape[axis];
  }
  return s;
}

static tb_status split_run(tb_kernel_ctx *ctx) {
  tb_status s = tb_kernel_outputs(ctx);
  if (s != TB_OK) return s;
  const tb_tensor *x = ctx->inputs[0];
  size_t axis = 0, nd = x->ndim;
  if ((s = axis_of(ctx, ((const tb_split_params *)ctx->params)->axis, nd, &axis)) != TB_OK) return s;
  int64_t xs[TB_MAX_DIMS], ys[TB_MAX_DIMS];
  tb_shape_strides(nd, x->shape, xs);
  int64_t at = 0;
  for (size_t o = 0; o < ctx->n_outputs && s == TB_OK; o++) {
    tb_tensor *y = ctx->outputs[o];
    if (!y) continue;
    tb_shape_strides(nd, y->shape, ys);
    s = tb_cl_copy_strided(ctx, 0, x, at * xs[axis], xs, y, 0, ys, nd, y->shape);
    at += y->shape[axis];
  }
  return s;
}

static tb_status slice_run(tb_kernel_ctx *ctx) {
  tb_status s = tb_kernel_outputs(ctx);
  if (s != TB_OK) return s;
  const tb_tensor *x = ctx->inputs[0];
  tb_tensor *y = ctx->outputs[0];
  tb_kernel_infer *ci = malloc(sizeof *ci);
  if (!ci) return tb_kernel_error(ctx, TB_ERR_OUT_OF_MEMORY, "out of host memory");
  tb_slice_plan plan;
  const tb_slice_params *p = ctx->params;
  s = tb_kernel_infer_begin(ctx, ci);
  if (s == TB_OK) s = tb_slice_infer_plan(&ci->ic, p, &plan);
  free(ci);
  if (s != TB_OK) return s;
  size_t nd = x->ndim;
  int64_t xs[TB_MAX_DIMS], src[TB_MAX_DIMS], ys[TB_MAX_DIMS], base = 0;
  tb_shape_strides(nd, x->shape, xs);
  tb_shape_strides(nd, y->shape, ys);
  for (size_t d = 0; d < nd; d++) {
    if (plan.count[d] != y->shape[d])
      return tb_kernel_error(ctx, TB_ERR_INTERNAL, "slice plan gives %lld elements on axis %zu, the output has %lld",
                             (long long)plan.count[d], d, (long long)y->shape[d]);
    base += plan.first[d] * xs[d];
    src[d] = plan.step[d] * xs[d];
  }
  return tb_cl_copy_strided(ctx, 0, x, base, src, y, 0, ys, nd, y->shape);
}

static tb_status expand_run(tb_kernel_ctx *ctx) {
  tb_status s = tb_kernel_outputs(ctx);
  if (s != TB_OK) return s;
  const tb_tensor *x = ctx->inputs[0];
  tb_tensor *y = ctx->outputs[0];
  if (x->ndim > y->ndim) return tb_kernel_error(ctx, TB_ERR_INVALID_ARGUMENT, "input rank %zu over the output's %zu", x->ndim, y->ndim);
  int64_t src[TB_MAX_DIMS], ys[TB_MAX_DIMS];
  tb_shape_bcast_strides(y->ndim, y->shape, x->ndim, x->shape, src);
  tb_shape_strides(y->ndim, y->shape, ys);
  return tb_cl_copy_strided(ctx, 0, x, 0, src, y, 0, ys, y->ndim, y->shape);
}

/* Tile: the output viewed as [r0, d0, r1, d1, ...] (repeat, input position per axis) is the input expanded
 * along the repeat axes, so one strided copy of rank 2 x rank (the kernel's 8 dims: inputs up to rank 4). */
static tb_status tile_run(tb_kernel_ctx *ctx) {
  tb_status s = tb_kernel_outputs(ctx);
  if (s != TB_OK) return s;
  const tb_tensor *x = ctx->inputs[0];
  tb_tensor *y = ctx->outputs[0];
  size_t nd = x->ndim;
  if (nd > TB_MAX_DIMS / 2 || y->ndim != nd)
    return tb_kernel_error(ctx, TB_ERR_UNSUPPORTED, "the OpenCL Tile takes inputs up to rank %d (got rank %zu)", TB_MAX_DIMS / 2, nd);
  int64_t xs[TB_MAX_DIMS], shape[TB_MAX_DIMS], src[TB_MAX_DIMS], dst[TB_MAX_DIMS];
  tb_shape_strides(nd, x->shape, xs);
  for (size_t d = 0; d < nd; d++) {
    if (x->shape[d] == 0 || y->shape[d] % x->shape[d])
      return tb_kernel_error(ctx, TB_ERR_INTERNAL, "output dim %lld is not a multiple of the input's %lld", (long long)y->shape[d],
                             (long long)x->shape[d]);
    shape[2 * d] = y->shape[d] / x->shape[d], src[2 * d] = 0;
    shape[2 * d + 1] = x->shape[d], src[2 * d + 1] = xs[d];
  }
  tb_shape_strides(2 * nd, shape, dst);
  return tb_cl_copy_strided(ctx, 0, x, 0, src, y, 0, dst, 2 * nd, shape);
}

/* DepthToSpace (DCR or CRD) and SpaceToDepth on NCHW: the output as a 6-D view whose source strides are
 * those of the ONNX reshape + transpose the ops are defined by. */
static tb_status depth_space_run(tb_kernel_ctx *ctx) {
  tb_status s = tb_kernel_outputs(ctx);
  if (s != TB_OK) return s;
  const tb_depth_space_params *p = ctx->params;
  int64_t b = p->blocksize;
  const tb_tensor *x = ctx->inputs[0];
  tb_tensor *y = ctx->outputs[0];
  if (x->ndim != 4 || y->ndim != 4 || b < 1) return tb_kernel_error(ctx, TB_ERR_INVALID_ARGUMENT, "takes 4-D NCHW input and blocksize >= 1");
  int64_t n = x->shape[0], c = x->shape[1], h = x->shape[2], w = x->shape[3];
  int64_t shape[6], src[6], dst[6];
  if (p->to_space) {
    int64_t co = c / (b * b);
    bool crd = p->crd;
    int64_t sh[6] = {n, co, h, b, w, b};
    int64_t st[6] = {c * h * w, crd ? b * b * h * w : h * w, w, crd ? b * h * w : b * co * h * w, 1, crd ? h * w : co * h * w};
    memcpy(shape, sh, sizeof sh);
    memcpy(src, st, sizeof st);
  } else {
    int64_t sh[6] = {n, b, b, c, h / b, w / b};
    int64_t st[6] = {c * h * w, w, 1, h * w, b * w, b};
    memcpy(shape, sh, sizeof sh);
    memcpy(src, st, sizeof st);
  }
  if (shape[0] * shape[1] * shape[2] * shape[3] * shape[4] * shape[5] != tb_tensor_numel(y))
    return tb_kernel_error(ctx, TB_ERR_INTERNAL, "blocksize %lld does not fit the input and output shapes", (long long)b);
  tb_shape_strides(6, shape, dst);
  return tb_cl_copy_strided(ctx, 0, x, 0, src, y, 0, dst, 6, shape);
}

/* Dropout for inference: a copy. With training_mode true (a CPU value input) and a nonzero ratio the CPU
 * kernel refuses the node; so does this one, with the same words. */
static tb_status dropout_run(tb_kernel_ctx *ctx) {
  tb_status st = tb_kernel_dropout_check(ctx);
  return st == TB_OK ? copy_run(ctx) : st;
}

/* Pad: amounts from the op's own parameter function (attribute, or the pads / axes inputs); the constant
 * from the attribute (before opset 11) or the constant_value input (a device tensor, read back once). */
static tb_status pad_run(tb_kernel_ctx *ctx) {
  tb_status s = tb_kernel_outputs(ctx);
  if (s != TB_OK) return s;
  const tb_tensor *x = ctx->inputs[0];
  tb_tensor *y = ctx->outputs[0];
  size_t nd = x->ndim;
  int64_t begin[TB_MAX_DIMS] = {0}, end[TB_MAX_DIMS] = {0};
  bool known = false;
  tb_kernel_infer *ci = malloc(sizeof *ci);
  if (!ci) return tb_kernel_error(ctx, TB_ERR_OUT_OF_MEMORY, "out of host memory");
  const tb_pad_params *p = ctx->params;
  s = tb_kernel_infer_begin(ctx, ci);
  if (s == TB_OK) s = tb_pad_amounts(&ci->ic, p, nd, begin, end, &known);
  free(ci);
  if (s == TB_OK && !known) s = tb_kernel_error(ctx, TB_ERR_INVALID_ARGUMENT, "the pads are not known at run time");
  if (s != TB_OK) return s;
  int mode = (int)p->mode;
  float value = 0.0f;
  unsigned char raw[4] = {0};
  const tb_tensor *cv = ctx->n_inputs > 2 ? ctx->inputs[2] : NULL;
  if (p->pads_attr) {
    value = p->value;
    if ((s = tb_convert(TB_DTYPE_F32, &value, x->dtype, raw, 1, true)) != TB_OK) return s;
  } else if (cv && tb_tensor_numel(cv) > 0) {
    if (tb_tensor_numel(cv) != 1 || cv->dtype != x->dtype)
      return tb_kernel_error(ctx, TB_ERR_INVALID_ARGUMENT, "constant_value must be one %s", tb_dtype_name(x->dtype));
    if ((s = tb_tensor_copy_to_host(cv, raw, tb_dtype_size(cv->dtype))) != TB_OK) return s;
  }
  uint32_t bits = 0;
  if (x->dtype == TB_DTYPE_F32) memcpy(&bits, raw, 4);
  else bits = (uint32_t)raw[0] | (uint32_t)raw[1] << 8;
  int64_t n = tb_tensor_numel(y);
  if (n == 0) return TB_OK;
  for (size_t d = 0; d < nd; d++)
    if (y->shape[d] != x->shape[d] + begin[d] + end[d])
      return tb_kernel_error(ctx, TB_ERR_INTERNAL, "pads give %lld on axis %zu, the output has %lld",
                             (long long)(x->shape[d] + begin[d] + end[d]), d, (long long)y->shape[d]);
  cl_launch l;
  tb_cl_begin(&l, ctx, 0, x->dtype == TB_DTYPE_F32 ? "tb_pad_u32" : "tb_pad_u16");
  tb_cl_arg_tensor(&l, x);
  tb_cl_arg_tensor(&l, y);
  tb_cl_arg_int(&l, n);
  tb_cl_arg_int(&l, (int64_t)nd);
  tb_cl_arg_int8(&l, y->shape, nd);
  tb_cl_arg_int8(&l, x->shape, nd);
  tb_cl_arg_int8(&l, begin, nd);
  tb_cl_arg_int(&l, mode);
  int32_t as_int; /* the kernel's uint argument: the same four bytes */
  memcpy(&as_int, &bits, sizeof as_int);
  tb_cl_arg_int(&l, as_int);
  return tb_cl_go(&l, (size_t)n);
}

/* Constant with a float32 / float16 value: the attribute's bytes written to the device. */
static tb_status constant_run(tb_kernel_ctx *ctx) {
  tb_status s = tb_kernel_outputs(ctx);
  if (s != TB_OK) return s;
  tb_tensor *y = ctx->outputs[0];
  size_t nbytes = tb_tensor_nbytes(y);
  const void *data = NULL;
  size_t have = 0;
  const tb_constant_params *p = ctx->params;
  if (p->kind == TB_CONSTANT_FLOAT) {
    data = &p->f, have = sizeof(float);
  } else if (p->kind == TB_CONSTANT_FLOATS) {
    data = p->floats, have = p->count * sizeof(float);
  } else {
    data = p->tensor->data, have = p->tensor->nbytes;
  }
  if (have != nbytes || (nbytes && !data))
    return tb_kernel_error(ctx, TB_ERR_MODEL, "the value holds %zu bytes where its shape needs %zu", have, nbytes);
  return nbytes ? tb_tensor_copy_from_host(y, data, nbytes) : TB_OK;
}

/* The indices as int64 on the host, each checked against the axis length. */
static tb_status check_indices(tb_kernel_ctx *ctx, const tb_tensor *idx, int64_t axis_len) {
  size_t n = (size_t)tb_tensor_numel(idx), elem = tb_dtype_size(idx->dtype);
  if (n == 0) return TB_OK;
  void *raw = malloc(n * elem);
  if (!raw) return tb_kernel_error(ctx, TB_ERR_OUT_OF_MEMORY, "out of host memory for %zu indices", n);
  tb_status s = tb_tensor_copy_to_host(idx, raw, n * elem);
  for (size_t i = 0; s == TB_OK && i < n; i++) {
    int64_t k = idx->dtype == TB_DTYPE_I64 ? ((const int64_t *)raw)[i] : ((const int32_t *)raw)[i];
    if (k < -axis_len || k >= axis_len)
      s = tb_kernel_error(ctx, TB_ERR_INVALID_ARGUMENT, "index %lld at position %zu is outside [-%lld, %lld)", (long long)k, i,
                          (long long)axis_len, (long long)axis_len);
  }
  free(raw);
  return s;
}

static tb_status gather_run(tb_kernel_ctx *ctx) {
  tb_status s = tb_kernel_outputs(ctx);
  if (s != TB_OK) return s;
  const tb_tensor *x = ctx->inputs[0], *idx = ctx->inputs[1];
  tb_tensor *y = ctx->outputs[0];
  size_t axis = 0;
  if ((s = axis_of(ctx, ((const tb_axis_params *)ctx->params)->axis, x->ndim, &axis)) != TB_OK) return s;
  if (x->ndim == 0) return tb_kernel_error(ctx, TB_ERR_INVALID_ARGUMENT, "Gather of a scalar");
  int64_t outer = 1, inner = 1, axis_len = x->shape[axis];
  for (size_t d = 0; d < axis; d++) outer *= x->shape[d];
  for (size_t d = axis + 1; d < x->ndim; d++) inner *= x->shape[d];
  if ((s = check_indices(ctx, idx, axis_len)) != TB_OK || tb_tensor_numel(y) == 0) return s;
  bool i64 = idx->dtype == TB_DTYPE_I64, f32 = x->dtype == TB_DTYPE_F32;
  cl_launch l;
  tb_cl_begin(&l, ctx, 0, f32 ? (i64 ? "tb_gather_u32_i64" : "tb_gather_u32_i32") : (i64 ? "tb_gather_u16_i64" : "tb_gather_u16_i32"));
  tb_cl_arg_tensor(&l, x);
  tb_cl_arg_tensor(&l, idx);
  tb_cl_arg_tensor(&l, y);
  tb_cl_arg_int(&l, tb_tensor_numel(y));
  tb_cl_arg_int(&l, axis_len);
  tb_cl_arg_int(&l, tb_tensor_numel(idx));
  tb_cl_arg_int(&l, inner);
  (void)outer;
  return tb_cl_go(&l, (size_t)tb_tensor_numel(y));
}

/* Input 0 is float32 or float16 (the others are shapes, axes or indices). */
static bool data_accepts(const tb_kernel_query *q) {
  const tb_value_type *const *in = q->in;
  return q->n_inputs >= 1 && in[0] && in[0]->has_dtype && tb_cl_float_type(in[0]->dtype);
}

static bool all_accepts(const tb_kernel_query *q) {
  const tb_value_type *const *in = q->in;
  tb_dtype first = TB_DTYPE_COUNT;
  for (size_t i = 0; i < q->n_inputs; i++) {
    if (!in[i]) continue;
    if (!in[i]->has_dtype || !tb_cl_float_type(in[i]->dtype) || (first != TB_DTYPE_COUNT && in[i]->dtype != first)) return false;
    first = in[i]->dtype;
  }
  return first != TB_DTYPE_COUNT;
}

static bool gather_accepts(const tb_kernel_query *q) {
  const tb_value_type *const *in = q->in;
  return data_accepts(q) && q->n_inputs == 2 && in[1] && in[1]->has_dtype &&
         (in[1]->dtype == TB_DTYPE_I64 || in[1]->dtype == TB_DTYPE_I32);
}

/* Constant whose value is float32 / float16 (value, value_float, value_floats); integer constants (shapes,
 * axes) stay on the CPU, where the ops that read them want them. */
static bool constant_accepts(const tb_kernel_query *q) {
  const tb_constant_params *p = q->params;
  if (!p || q->n_outputs != 1) return false;
  if (p->kind == TB_CONSTANT_FLOAT || p->kind == TB_CONSTANT_FLOATS) return true;
  return p->kind == TB_CONSTANT_TENSOR && tb_cl_float_type(p->tensor->dtype);
}

/* Pad of float data in the modes constant, reflect and edge, with a constant_value of the data's type. */
static bool pad_accepts(const tb_kernel_query *q) {
  const tb_value_type *const *in = q->in;
  if (!data_accepts(q)) return false;
  return q->n_inputs < 3 || !in[2] || (in[2]->has_dtype && in[2]->dtype == in[0]->dtype);
}

/* Tile with data inputs up to rank 4 (the copy kernel's 8 dims hold two per axis). */
static bool tile_accepts(const tb_kernel_query *q) {
  const tb_value_type *const *in = q->in;
  return data_accepts(q) && (!in[0]->has_shape || in[0]->ndim <= TB_MAX_DIMS / 2);
}

/* Dropout from opset 7 (older ones have is_test), without the mask output (none listed: the contract does not
 * mark an omitted one in the list). */
static bool dropout_accepts(const tb_kernel_query *q) {
  return q->opset >= 7 && data_accepts(q) && q->n_outputs < 2;
}

static const tb_kernel kernels[] = {
    CL_KERNEL("", "Reshape", data_accepts, copy_run),     CL_KERNEL("", "Flatten", data_accepts, copy_run),
    CL_KERNEL("", "Squeeze", data_accepts, copy_run),     CL_KERNEL("", "Unsqueeze", data_accepts, copy_run),
    CL_KERNEL("", "Transpose", data_accepts, transpose_run), CL_KERNEL("", "Concat", all_accepts, concat_run),
    CL_KERNEL("", "Split", data_accepts, split_run),      CL_KERNEL("", "Slice", data_accepts, slice_run),
    CL_KERNEL("", "Expand", data_accepts, expand_run),    CL_KERNEL("", "Gather", gather_accepts, gather_run),
    CL_KERNEL("", "Tile", tile_accepts, tile_run),        CL_KERNEL("", "Dropout", dropout_accepts, dropout_run),
    CL_KERNEL("", "Constant", constant_accepts, constant_run),
    CL_KERNEL("", "Pad", pad_accepts, pad_run),
    CL_KERNEL("", "DepthToSpace", data_accepts, depth_space_run), CL_KERNEL("", "SpaceToDepth", data_accepts, depth_space_run),
};
const cl_family tb_cl_family_tensor = {kernels, sizeof kernels / sizeof kernels[0]};
