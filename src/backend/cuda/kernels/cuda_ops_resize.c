/* The CUDA kernel of Resize and Upsample on float32 inputs of rank 1 to 4 (kernels/61_pool_norm.cu): every
 * mode (nearest with its rounding rules, linear, cubic) and coordinate transform, because the host builds
 * each axis's taps with the CPU's own rule (tb_resize_taps_of) and the kernel only sums them. The output
 * size, scales and roi come from ops/tensor/resize.h's tb_resize_sizes, run on the node's inputs (the roi,
 * scales and sizes inputs stay on the host: they are value inputs). */
#include <stdlib.h>
#include <string.h>
#include "backend/cuda/kernels/cuda_cnn.h"
#include "backend/cuda/kernels/cuda_ops.h"
#include "backend/kernel_params.h"
#include "backend/tensor/tensor_impl.h"
#include "ops/op_params.h"
#include "ops/tensor/resize.h"

enum { RESIZE_INPUTS = 4 };

/* The output dims, scales and roi of the node for x, through the op's own rule. */
static tb_status resize_sizes(tb_kernel_ctx *ctx, const tb_resize_params *p, const tb_tensor *x, int64_t *out, double *scales,
                              double *roi) {
  tb_node stand_in;
  size_t n_in = ctx->n_inputs < RESIZE_INPUTS ? ctx->n_inputs : RESIZE_INPUTS;
  tb_status st = tb_infer_stand_in(&stand_in, ctx->domain, ctx->op_type, ctx->opset, ctx->params, n_in, 1);
  if (st != TB_OK) return tb_kernel_name_error(ctx, st);
  tb_value_type types[RESIZE_INPUTS], out_type;
  const tb_value_type *in[RESIZE_INPUTS] = {NULL};
  tb_ir_tensor values[RESIZE_INPUTS];
  const tb_ir_tensor *value[RESIZE_INPUTS] = {NULL};
  memset(types, 0, sizeof types);
  memset(&out_type, 0, sizeof out_type);
  for (size_t i = 0; i < n_in; i++) {
    const tb_tensor *t = ctx->inputs[i];
    if (!t) continue;
    types[i] = (tb_value_type){.kind = TB_VALUE_TENSOR, .has_dtype = true, .dtype = t->dtype, .has_shape = true, .ndim = t->ndim};
    for (size_t d = 0; d < t->ndim; d++) types[i].dims[d] = (tb_dim){t->shape[d], -1};
    in[i] = &types[i];
    if (i == 0) continue;
    const void *data = tb_tensor_host_data(t);
    if (!data && tb_tensor_numel(t) > 0)
      return tb_kernel_error(ctx, TB_ERR_INTERNAL, "input %zu (roi, scales or sizes) is not readable on the host", i);
    values[i] = (tb_ir_tensor){.dtype = t->dtype, .ndim = t->ndim, .data = data, .nbytes = tb_tensor_nbytes(t)};
    memcpy(values[i].dims, t->shape, t->ndim * sizeof *t->shape);
    value[i] = &values[i];
  }
  tb_infer_ctx ic = {NULL, &stand_in, n_in, in, value, 1, &out_type};
  bool known = false;
  st = tb_resize_sizes(&ic, p, x->ndim, x->shape, out, scales, roi, &known);
  if (st != TB_OK) return tb_kernel_name_error(ctx, st);
  if (!known) return tb_kernel_error(ctx, TB_ERR_INTERNAL, "the output size is not known from the inputs");
  return TB_OK;
}

static tb_status resize_run(tb_kernel_ctx *ctx) {
  tb_status st;
  const tb_resize_params *p = tb_kernel_params(ctx, &st);
  if (!p) return st;
  const tb_tensor *x = ctx->inputs[0];
  size_t rank = x->ndim;
  if (rank < 1 || rank > TB_CUDA_CNN_AXES)
    return tb_kernel_error(ctx, TB_ERR_UNSUPPORTED, "X has rank %zu; the CUDA kernel takes rank 1 to 4", rank);
  int64_t out[TB_MAX_DIMS];
  double scales[TB_MAX_DIMS], roi[2 * TB_MAX_DIMS];
  if ((st = resize_sizes(ctx, p, x, out, scales, roi)) != TB_OK) return st;
  tb_tensor *y = NULL;
  if ((st = tb_kernel_output(ctx, 0, TB_DTYPE_F32, rank, out, &y)) != TB_OK) return st;
  int64_t count = tb_tensor_numel(y);
  if (count == 0) return TB_OK;
  if (tb_tensor_numel(x) == 0)
    return tb_kernel_error(ctx, TB_ERR_INVALID_ARGUMENT, "cannot resize an empty input to a non-empty output");
  /* The tap tables, axes padded to 4 with size-1 ones in front (one entry each: index 0, weight 1). */
  tb_cuda_cnn_desc d;
  tb_cuda_cnn_desc_init(&d);
  size_t pad = TB_CUDA_CNN_AXES - rank;
  int64_t entries = 0;
  for (size_t a = 0; a < TB_CUDA_CNN_AXES; a++) {
    d.in[a] = a < pad ? 1 : x->shape[a - pad];
    d.out[a] = a < pad ? 1 : out[a - pad];
    d.base[a] = entries;
    entries += d.out[a];
  }
  d.kind = p->mode == TB_RESIZE_NEAREST ? 1 : p->mode == TB_RESIZE_LINEAR ? 2 : 4;
  d.eps = (float)p->extrapolation;
  long long *idx = calloc((size_t)entries * 4, sizeof *idx);
  float *w = calloc((size_t)entries * 4, sizeof *w);
  if (!idx || !w) {
    free(idx);
    free(w);
    return tb_kernel_error(ctx, TB_ERR_OUT_OF_MEMORY, "no host memory for %lld interpolation entries", (long long)entries);
  }
  for (size_t a = 0; a < TB_CUDA_CNN_AXES; a++)
    for (int64_t k = 0; k < d.out[a]; k++) {
      int64_t e = d.base[a] + k;
      if (a < pad) {
        w[4 * e] = 1.0f;
        continue;
      }
      size_t ax = a - pad;
      tb_resize_taps t;
      tb_resize_taps_of(p, k, scales[ax], x->shape[ax], out[ax], roi[ax], roi[rank + ax], &t);
      for (int j = 0; j < t.n && j < 4; j++) {
        idx[4 * e + j] = (long long)t.idx[j];
        w[4 * e + j] = (float)t.w[j];
      }
    }
  const int64_t table = entries * 4;
  tb_tensor *taps = NULL, *weights = NULL;
  st = tb_tensor_create(ctx->backend, TB_DTYPE_I64, 1, &table, &taps);
  if (st == TB_OK) st = tb_tensor_create(ctx->backend, TB_DTYPE_F32, 1, &table, &weights);
  if (st == TB_OK) st = tb_tensor_copy_from_host(taps, idx, (size_t)table * sizeof *idx);
  if (st == TB_OK) st = tb_tensor_copy_from_host(weights, w, (size_t)table * sizeof *w);
  free(idx);
  free(w);
  if (st == TB_OK) {
    const tb_tensor *tensors[TB_CUDA_CNN_POINTERS] = {x, taps, weights, NULL, y, NULL};
    st = tb_cuda_cnn_launch(ctx, "tb_cu_cnn_resize_f32", tensors, &d, count, 0, 0);
  }
  tb_tensor_destroy(taps); /* freed into the caching allocator, in stream order */
  tb_tensor_destroy(weights);
  return st;
}

/* float32 X (the roi, scales and sizes inputs are read on the host), rank 1 to 4 where known. */
static bool resize_accepts(const tb_kernel_query *q) {
  const tb_value_type *x = q->n_inputs ? q->in[0] : NULL;
  return q->params && x && x->has_dtype && x->dtype == TB_DTYPE_F32 && q->n_outputs == 1 &&
         (!x->has_shape || (x->ndim >= 1 && x->ndim <= TB_CUDA_CNN_AXES));
}

static const tb_kernel kernels[] = {
    TB_CUDA_KERNEL("", "Resize", resize_accepts, resize_run),
    TB_CUDA_KERNEL("", "Upsample", resize_accepts, resize_run),
};
const tb_cuda_family tb_cuda_family_resize = {kernels, sizeof kernels / sizeof kernels[0]};
