/* OpenCL kernels of the data-movement ops on float32 / float16 tensors: Reshape, Flatten, Squeeze,
 * Unsqueeze (a device copy), Transpose, Concat, Split, Slice and Expand (strided copies), Gather (indices
 * read back once to check their range, as the CPU kernel rejects out-of-range indices). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "backend/opencl/kernels/cl_ops.h"
#include "ops/tensor/tensor_params.h"
#include "tensor/tensor_impl.h"

/* y = x byte for byte, enqueued on the queue (no wait). */
static tb_status copy_run(tb_kernel_ctx *ctx) {
  tb_status s = cl_outputs(ctx);
  if (s != TB_OK) return s;
  const tb_tensor *x = ctx->inputs[0];
  tb_tensor *y = ctx->outputs[0];
  size_t bytes = tb_tensor_nbytes(y);
  if (bytes != tb_tensor_nbytes(x))
    return tb_kernel_error(ctx, TB_ERR_INVALID_ARGUMENT, "input of %zu bytes, output of %zu", tb_tensor_nbytes(x), bytes);
  if (bytes == 0) return TB_OK;
  tb_cl_mem src = NULL, dst = NULL;
  int64_t so = 0, dso = 0;
  if ((s = cl_buffer(ctx, x, &src, &so)) != TB_OK || (s = cl_buffer(ctx, y, &dst, &dso)) != TB_OK) return s;
  size_t elem = tb_dtype_size(x->dtype);
  if (src == dst && so == dso) return TB_OK;
  tb_cl_device *dev = cl_dev(ctx);
  tb_cl_int err = dev->rt.cl.clEnqueueCopyBuffer(dev->queue, src, dst, (size_t)so * elem, (size_t)dso * elem, bytes, 0, NULL, NULL);
  if (err == TB_CL_SUCCESS) return TB_OK;
  char label[128], detail[200];
  snprintf(detail, sizeof detail, "%zu bytes for %s (%s)", bytes, tb_node_label(ctx->graph, ctx->node, label, sizeof label),
           ctx->node->op_type);
  return tb_cl_fail(dev, "clEnqueueCopyBuffer", detail, err);
}

static tb_status transpose_run(tb_kernel_ctx *ctx) {
  tb_status s = cl_outputs(ctx);
  if (s != TB_OK) return s;
  const tb_tensor *x = ctx->inputs[0];
  tb_tensor *y = ctx->outputs[0];
  const int64_t *perm = NULL;
  size_t np = 0, nd = x->ndim;
  if ((s = tb_attr_ints(ctx->graph, ctx->node, "perm", &perm, &np)) != TB_OK) return s;
  if (perm && np != nd) return tb_kernel_error(ctx, TB_ERR_MODEL, "perm has %zu entries for a rank-%zu input", np, nd);
  int64_t xs[TB_MAX_DIMS], src[TB_MAX_DIMS], dst[TB_MAX_DIMS];
  cl_strides(nd, x->shape, xs);
  cl_strides(nd, y->shape, dst);
  for (size_t d = 0; d < nd; d++) {
    int64_t p = perm ? perm[d] : (int64_t)(nd - 1 - d);
    if (p < 0 || p >= (int64_t)nd) return tb_kernel_error(ctx, TB_ERR_MODEL, "perm[%zu] = %lld is outside rank %zu", d, (long long)p, nd);
    src[d] = xs[p];
  }
  return cl_copy_strided(ctx, 0, x, 0, src, y, 0, dst, nd, y->shape);
}

static tb_status axis_of(tb_kernel_ctx *ctx, int64_t dflt, size_t rank, size_t *axis) {
  int64_t a = dflt;
  tb_status s = tb_attr_int(ctx->graph, ctx->node, "axis", dflt, &a);
  if (s != TB_OK) return s;
  if (a < 0) a += (int64_t)rank;
  if (a < 0 || a >= (int64_t)(rank ? rank : 1))
    return tb_kernel_error(ctx, TB_ERR_MODEL, "axis is outside the rank %zu", rank);
  *axis = (size_t)a;
  return TB_OK;
}

static tb_status concat_run(tb_kernel_ctx *ctx) {
  tb_status s = cl_outputs(ctx);
  if (s != TB_OK) return s;
  tb_tensor *y = ctx->outputs[0];
  size_t axis = 0, nd = y->ndim;
  if ((s = axis_of(ctx, 0, nd, &axis)) != TB_OK) return s;
  int64_t ys[TB_MAX_DIMS], xs[TB_MAX_DIMS];
  cl_strides(nd, y->shape, ys);
  int64_t at = 0;
  for (size_t i = 0; i < ctx->n_inputs && s == TB_OK; i++) {
    const tb_tensor *x = ctx->inputs[i];
    if (!x) continue;
    if (x->ndim != nd) return tb_kernel_error(ctx, TB_ERR_INVALID_ARGUMENT, "input %zu has rank %zu, the output %zu", i, x->ndim, nd);
    cl_strides(nd, x->shape, xs);
    if (tb_tensor_numel(x) > 0) s = cl_copy_strided(ctx, 0, x, 0, xs, y, at * ys[axis], ys, nd, x->shape);
    at += x->shape[axis];
  }
  return s;
}

static tb_status split_run(tb_kernel_ctx *ctx) {
  tb_status s = cl_outputs(ctx);
  if (s != TB_OK) return s;
  const tb_tensor *x = ctx->inputs[0];
  size_t axis = 0, nd = x->ndim;
  if ((s = axis_of(ctx, 0, nd, &axis)) != TB_OK) return s;
  int64_t xs[TB_MAX_DIMS], ys[TB_MAX_DIMS];
  cl_strides(nd, x->shape, xs);
  int64_t at = 0;
  for (size_t o = 0; o < ctx->n_outputs && s == TB_OK; o++) {
    tb_tensor *y = ctx->outputs[o];
    if (!y) continue;
    cl_strides(nd, y->shape, ys);
    s = cl_copy_strided(ctx, 0, x, at * xs[axis], xs, y, 0, ys, nd, y->shape);
    at += y->shape[axis];
  }
  return s;
}

static tb_status slice_run(tb_kernel_ctx *ctx) {
  tb_status s = cl_outputs(ctx);
  if (s != TB_OK) return s;
  const tb_tensor *x = ctx->inputs[0];
  tb_tensor *y = ctx->outputs[0];
  cl_infer *ci = malloc(sizeof *ci);
  if (!ci) return tb_kernel_error(ctx, TB_ERR_OUT_OF_MEMORY, "out of host memory");
  tb_slice_plan plan;
  s = cl_infer_begin(ctx, ci);
  if (s == TB_OK) s = tb_slice_infer_plan(&ci->ic, &plan);
  free(ci);
  if (s != TB_OK) return s;
  size_t nd = x->ndim;
  int64_t xs[TB_MAX_DIMS], src[TB_MAX_DIMS], ys[TB_MAX_DIMS], base = 0;
  cl_strides(nd, x->shape, xs);
  cl_strides(nd, y->shape, ys);
  for (size_t d = 0; d < nd; d++) {
    if (plan.count[d] != y->shape[d])
      return tb_kernel_error(ctx, TB_ERR_INTERNAL, "slice plan gives %lld elements on axis %zu, the output has %lld",
                             (long long)plan.count[d], d, (long long)y->shape[d]);
    base += plan.first[d] * xs[d];
    src[d] = plan.step[d] * xs[d];
  }
  return cl_copy_strided(ctx, 0, x, base, src, y, 0, ys, nd, y->shape);
}

static tb_status expand_run(tb_kernel_ctx *ctx) {
  tb_status s = cl_outputs(ctx);
  if (s != TB_OK) return s;
  const tb_tensor *x = ctx->inputs[0];
  tb_tensor *y = ctx->outputs[0];
  if (x->ndim > y->ndim) return tb_kernel_error(ctx, TB_ERR_INVALID_ARGUMENT, "input rank %zu over the output's %zu", x->ndim, y->ndim);
  int64_t src[TB_MAX_DIMS], ys[TB_MAX_DIMS];
  cl_bcast_strides(y->ndim, y->shape, x->ndim, x->shape, src);
  cl_strides(y->ndim, y->shape, ys);
  return cl_copy_strided(ctx, 0, x, 0, src, y, 0, ys, y->ndim, y->shape);
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
  tb_status s = cl_outputs(ctx);
  if (s != TB_OK) return s;
  const tb_tensor *x = ctx->inputs[0], *idx = ctx->inputs[1];
  tb_tensor *y = ctx->outputs[0];
  size_t axis = 0;
  if ((s = axis_of(ctx, 0, x->ndim, &axis)) != TB_OK) return s;
  if (x->ndim == 0) return tb_kernel_error(ctx, TB_ERR_INVALID_ARGUMENT, "Gather of a scalar");
  int64_t outer = 1, inner = 1, axis_len = x->shape[axis];
  for (size_t d = 0; d < axis; d++) outer *= x->shape[d];
  for (size_t d = axis + 1; d < x->ndim; d++) inner *= x->shape[d];
  if ((s = check_indices(ctx, idx, axis_len)) != TB_OK || tb_tensor_numel(y) == 0) return s;
  bool i64 = idx->dtype == TB_DTYPE_I64, f32 = x->dtype == TB_DTYPE_F32;
  cl_launch l;
  cl_begin(&l, ctx, 0, f32 ? (i64 ? "tb_gather_u32_i64" : "tb_gather_u32_i32") : (i64 ? "tb_gather_u16_i64" : "tb_gather_u16_i32"));
  cl_arg_tensor(&l, x);
  cl_arg_tensor(&l, idx);
  cl_arg_tensor(&l, y);
  cl_arg_int(&l, tb_tensor_numel(y));
  cl_arg_int(&l, axis_len);
  cl_arg_int(&l, tb_tensor_numel(idx));
  cl_arg_int(&l, inner);
  (void)outer;
  return cl_go(&l, (size_t)tb_tensor_numel(y));
}

/* Input 0 is float32 or float16 (the others are shapes, axes or indices). */
static bool data_accepts(const tb_graph *g, const tb_node *n, const tb_value_type *const *in) {
  (void)g;
  return n->n_inputs >= 1 && in[0] && in[0]->has_dtype && cl_float_type(in[0]->dtype);
}

static bool all_accepts(const tb_graph *g, const tb_node *n, const tb_value_type *const *in) {
  (void)g;
  tb_dtype first = TB_DTYPE_COUNT;
  for (size_t i = 0; i < n->n_inputs; i++) {
    if (!in[i]) continue;
    if (!in[i]->has_dtype || !cl_float_type(in[i]->dtype) || (first != TB_DTYPE_COUNT && in[i]->dtype != first)) return false;
    first = in[i]->dtype;
  }
  return first != TB_DTYPE_COUNT;
}

static bool gather_accepts(const tb_graph *g, const tb_node *n, const tb_value_type *const *in) {
  return data_accepts(g, n, in) && n->n_inputs == 2 && in[1] && in[1]->has_dtype &&
         (in[1]->dtype == TB_DTYPE_I64 || in[1]->dtype == TB_DTYPE_I32);
}

static const tb_cpu_kernel kernels[] = {
    CL_KERNEL("", "Reshape", data_accepts, copy_run),     CL_KERNEL("", "Flatten", data_accepts, copy_run),
    CL_KERNEL("", "Squeeze", data_accepts, copy_run),     CL_KERNEL("", "Unsqueeze", data_accepts, copy_run),
    CL_KERNEL("", "Transpose", data_accepts, transpose_run), CL_KERNEL("", "Concat", all_accepts, concat_run),
    CL_KERNEL("", "Split", data_accepts, split_run),      CL_KERNEL("", "Slice", data_accepts, slice_run),
    CL_KERNEL("", "Expand", data_accepts, expand_run),    CL_KERNEL("", "Gather", gather_accepts, gather_run),
};
const cl_family cl_family_tensor = {kernels, sizeof kernels / sizeof kernels[0]};
