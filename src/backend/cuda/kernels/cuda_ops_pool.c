/* CUDA kernels of the pools and normalizations of CNNs on float32 NCHW (kernels/61_pool_norm.cu):
 * MaxPool (without the Indices output) and AveragePool over 1 to 3 spatial axes with pads, auto_pad,
 * strides, dilations, ceil_mode and count_include_pad (the window from ops/nn/window.h, as the CPU's);
 * GlobalMaxPool (the pool kernel over the whole plane) and GlobalAveragePool (the mean of each plane with
 * 30_reduce.cu's row kernel); LpPool and GlobalLpPool on the same geometry (62_lp_lrn.cu's kernel); inference BatchNormalization (spatial) and InstanceNormalization. */
#include <string.h>
#include "backend/cuda/kernels/cuda_cnn.h"
#include "backend/cuda/kernels/cuda_ops.h"
#include "backend/kernel_params.h"
#include "backend/tensor/tensor_impl.h"
#include "ops/nn/window.h"

enum { SPATIAL_MAX = 3 };

/* The channel planes of x (rank 3 to 5): N * C, and the elements of each. */
static tb_status planes_of(tb_kernel_ctx *ctx, const tb_tensor *x, int64_t *planes, int64_t *plane) {
  if (x->ndim < 3 || x->ndim > 2 + SPATIAL_MAX)
    return tb_kernel_error(ctx, TB_ERR_UNSUPPORTED, "X has rank %zu; the CUDA kernel takes 1 to 3 spatial axes (rank 3 to 5)",
                           x->ndim);
  *planes = x->shape[0] * x->shape[1];
  *plane = 1;
  for (size_t d = 2; d < x->ndim; d++) *plane *= x->shape[d];
  return TB_OK;
}

static tb_status pool_run(tb_kernel_ctx *ctx) {
  tb_status st;
  const tb_pool_params *p = tb_kernel_params(ctx, &st);
  if (!p) return st;
  const tb_tensor *x = ctx->inputs[0];
  int64_t planes = 0, plane = 0;
  if ((st = planes_of(ctx, x, &planes, &plane)) != TB_OK) return st;
  size_t n = x->ndim - 2;
  nn_window win;
  if (p->global) {
    memset(&win, 0, sizeof win);
    for (size_t i = 0; i < n; i++) win.kernel[i] = x->shape[2 + i], win.stride[i] = win.dilation[i] = 1;
  } else if ((st = tb_nn_window_init(&p->win, n, NULL, &win)) != TB_OK) {
    return tb_kernel_name_error(ctx, st);
  }
  tb_cuda_cnn_desc d;
  tb_cuda_cnn_desc_init(&d);
  int64_t shape[TB_MAX_DIMS] = {x->shape[0], x->shape[1]};
  for (size_t i = 0; i < n; i++) {
    size_t a = SPATIAL_MAX - n + i;
    if (p->global) shape[2 + i] = 1;
    else if ((st = tb_nn_window_out(&win, i, x->shape[2 + i], &shape[2 + i])) != TB_OK) return tb_kernel_name_error(ctx, st);
    d.in[a] = x->shape[2 + i];
    d.out[a] = shape[2 + i];
    d.kernel[a] = win.kernel[i];
    d.stride[a] = win.stride[i];
    d.dilation[a] = win.dilation[i];
    d.pad[a] = win.pad_begin[i];
    d.pad_end[a] = win.pad_end[i];
  }
  d.n = x->shape[0];
  d.c = x->shape[1];
  d.rank = SPATIAL_MAX;
  d.kind = p->kind == TB_POOL_MAX ? 0 : p->kind == TB_POOL_LP ? (int32_t)p->p : 1; /* LpPool: the order p */
  d.flag = p->count_include_pad;
  tb_tensor *y = NULL;
  if ((st = tb_kernel_output(ctx, 0, TB_DTYPE_F32, x->ndim, shape, &y)) != TB_OK) return st;
  int64_t count = tb_tensor_numel(y);
  if (count == 0) return TB_OK;
  if (p->global && p->kind == TB_POOL_AVERAGE && plane > 0) { /* the mean of each plane: one block per plane */
    tb_cuda_launch l;
    tb_cuda_begin(&l, ctx, "tb_cu_reduce_mean_f32_rows");
    tb_cuda_arg_tensor(&l, x);
    tb_cuda_arg_tensor(&l, y);
    tb_cuda_arg_i64(&l, planes);
    tb_cuda_arg_i64(&l, plane);
    return tb_cuda_go_rows(&l, planes, plane);
  }
  const tb_tensor *tensors[TB_CUDA_CNN_POINTERS] = {x, NULL, NULL, NULL, y, NULL};
  const char *kernel = p->kind == TB_POOL_LP ? "tb_cu_cnn_lp_pool_f32" : "tb_cu_cnn_pool_f32"; /* 62_lp_lrn.cu */
  return tb_cuda_cnn_launch(ctx, kernel, tensors, &d, count, 0, 0);
}

/* Input i: one value per channel. */
static tb_status check_channels(tb_kernel_ctx *ctx, size_t i, const char *what, int64_t c) {
  const tb_tensor *t = ctx->inputs[i];
  if (t->ndim == 1 && t->shape[0] == c) return TB_OK;
  return tb_kernel_error(ctx, TB_ERR_MODEL, "%s (input %zu) must be 1-D with one value per channel (%lld); it has rank %zu and %lld values",
                         what, i, (long long)c, t->ndim, (long long)tb_tensor_numel(t));
}

static tb_status norm_run(tb_kernel_ctx *ctx) {
  tb_status st;
  const tb_norm_params *p = tb_kernel_params(ctx, &st);
  if (!p) return st;
  const tb_tensor *x = ctx->inputs[0];
  int64_t planes = 0, plane = 0;
  if ((st = planes_of(ctx, x, &planes, &plane)) != TB_OK) return st;
  bool batch = p->kind == TB_NORM_BATCH;
  static const char *const names[] = {"X", "scale", "B", "mean", "var"};
  for (size_t i = 1; i < (batch ? 5u : 3u); i++)
    if ((st = check_channels(ctx, i, names[i], x->shape[1])) != TB_OK) return st;
  tb_tensor *y = NULL;
  if ((st = tb_kernel_output(ctx, 0, TB_DTYPE_F32, x->ndim, x->shape, &y)) != TB_OK) return st;
  if (tb_tensor_numel(y) == 0) return TB_OK;
  tb_cuda_cnn_desc d;
  tb_cuda_cnn_desc_init(&d);
  d.n = x->shape[0];
  d.c = x->shape[1];
  d.in[2] = plane;
  d.eps = p->epsilon;
  if (batch) {
    const tb_tensor *tensors[TB_CUDA_CNN_POINTERS] = {x, ctx->inputs[1], ctx->inputs[2], ctx->inputs[3], ctx->inputs[4], y};
    return tb_cuda_cnn_launch(ctx, "tb_cu_cnn_batch_norm_f32", tensors, &d, tb_tensor_numel(y), 0, 0);
  }
  const tb_tensor *tensors[TB_CUDA_CNN_POINTERS] = {x, ctx->inputs[1], ctx->inputs[2], NULL, y, NULL};
  return tb_cuda_cnn_launch(ctx, "tb_cu_cnn_instance_norm_f32", tensors, &d, 0, planes, plane);
}

static bool rank_fits(const tb_value_type *x) { return !x->has_shape || (x->ndim >= 3 && x->ndim <= 2 + SPATIAL_MAX); }

/* MaxPool without Indices, AveragePool and LpPool (p from 1), float32, rank 3 to 5. */
static bool pool_accepts(const tb_kernel_query *q) {
  const tb_pool_params *p = q->params;
  return p && (p->kind == TB_POOL_MAX || p->kind == TB_POOL_AVERAGE || (p->kind == TB_POOL_LP && p->p >= 1 && p->p <= 1 << 20)) && !p->indices && q->n_inputs == 1 && q->in[0] &&
         tb_cuda_all_f32(q) && rank_fits(q->in[0]);
}

/* Inference BatchNormalization (one output, spatial) and InstanceNormalization, every input float32. */
static bool norm_accepts(const tb_kernel_query *q) {
  const tb_norm_params *p = q->params;
  size_t want = p && p->kind == TB_NORM_BATCH ? 5 : 3;
  if (!p || (p->kind == TB_NORM_BATCH && !p->spatial) || p->kind == TB_NORM_LAYER || q->n_inputs != want) return false;
  for (size_t i = 0; i < want; i++)
    if (!q->in[i]) return false;
  return tb_cuda_all_f32(q) && rank_fits(q->in[0]);
}

static const tb_kernel kernels[] = {
    TB_CUDA_KERNEL("", "MaxPool", pool_accepts, pool_run),
    TB_CUDA_KERNEL("", "AveragePool", pool_accepts, pool_run),
    TB_CUDA_KERNEL("", "GlobalMaxPool", pool_accepts, pool_run),
    TB_CUDA_KERNEL("", "GlobalAveragePool", pool_accepts, pool_run),
    TB_CUDA_KERNEL("", "LpPool", pool_accepts, pool_run),
    TB_CUDA_KERNEL("", "GlobalLpPool", pool_accepts, pool_run),
    TB_CUDA_KERNEL("", "BatchNormalization", norm_accepts, norm_run),
    TB_CUDA_KERNEL("", "InstanceNormalization", norm_accepts, norm_run),
};
const tb_cuda_family tb_cuda_family_pool = {kernels, sizeof kernels / sizeof kernels[0]};
