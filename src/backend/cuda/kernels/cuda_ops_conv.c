/* CUDA kernels of Conv, tb::FusedConv (Conv + bias + residual + activation, as the O1 passes make it) and
 * ConvTranspose on float32 NCHW with 1 to 3 spatial axes, any strides, pads (explicit or auto_pad),
 * dilations and groups (depthwise included). Conv and FusedConv go to cuDNN where it is present and has an
 * engine (cuda_conv_dnn.c), else to the own kernels: the implicit GEMM tb_cu_cnn_conv_igemm_f32 where a group
 * has 8 or more output channels and a reduction of 8 or more (uses_igemm), the direct
 * tb_cu_cnn_conv_f32 for the rest (depthwise, tiny reductions); ConvTranspose runs
 * tb_cu_cnn_conv_transpose_f32. The geometry comes from ops/nn/window.h, as the CPU's. */
#include <string.h>
#include "backend/cuda/kernels/cuda_cnn.h"
#include "backend/cuda/kernels/cuda_conv_dnn.h"
#include "backend/cuda/kernels/cuda_ops.h"
#include "backend/kernel_params.h"
#include "backend/tensor/tensor_impl.h"
#include "ops/nn/window.h"

enum { SPATIAL_MAX = 3 };

/* The descriptor and output shape of a convolution (transpose: ConvTranspose) of x with w. */
static tb_status conv_geometry(tb_kernel_ctx *ctx, const tb_conv_params *p, const tb_tensor *x, const tb_tensor *w,
                               const tb_tensor *bias, bool transpose, tb_cuda_cnn_desc *d, int64_t *out_shape) {
  tb_cuda_cnn_desc_init(d);
  if (x->ndim < 3 || x->ndim > 2 + SPATIAL_MAX || w->ndim != x->ndim)
    return tb_kernel_error(ctx, TB_ERR_UNSUPPORTED,
                           "X (rank %zu) and W (rank %zu) must have the same rank, 3 to 5 (1 to 3 spatial axes) on CUDA",
                           x->ndim, w->ndim);
  size_t n = x->ndim - 2;
  d->n = x->shape[0];
  d->c = x->shape[1];
  d->groups = p->group;
  if (d->groups < 1 || d->c % d->groups != 0)
    return tb_kernel_error(ctx, TB_ERR_MODEL, "attribute group (%lld) must be >= 1 and divide the %lld input channels",
                           (long long)d->groups, (long long)d->c);
  if (transpose) {
    if (w->shape[0] != d->c)
      return tb_kernel_error(ctx, TB_ERR_MODEL, "W's first dim (%lld) differs from X's %lld channels", (long long)w->shape[0],
                             (long long)d->c);
    d->k = w->shape[1] * d->groups;
  } else {
    d->k = w->shape[0];
    if (d->k % d->groups != 0 || w->shape[1] * d->groups != d->c)
      return tb_kernel_error(ctx, TB_ERR_MODEL, "W [%lld, %lld, ...] does not fit %lld input channels in %lld groups",
                             (long long)w->shape[0], (long long)w->shape[1], (long long)d->c, (long long)d->groups);
  }
  if (bias && (bias->ndim != 1 || bias->shape[0] != d->k))
    return tb_kernel_error(ctx, TB_ERR_MODEL, "bias B must be 1-D with %lld values", (long long)d->k);
  nn_window win;
  const int64_t *output_shape = NULL;
  size_t n_output_shape = 0;
  int64_t out_sp[TB_MAX_DIMS];
  tb_status st = tb_nn_window_init(&p->win, n, w->shape + 2, &win);
  if (st == TB_OK && transpose) st = tb_nn_window_init_transpose(p, &win);
  if (st == TB_OK && transpose) st = tb_nn_conv_output_shape(p, x->ndim, &output_shape, &n_output_shape);
  for (size_t i = 0; st == TB_OK && i < n; i++)
    st = transpose ? tb_nn_window_out_transpose(&win, i, x->shape[2 + i], n_output_shape ? output_shape[i] : -1, &out_sp[i])
                   : tb_nn_window_out(&win, i, x->shape[2 + i], &out_sp[i]);
  if (st != TB_OK) return tb_kernel_name_error(ctx, st);
  out_shape[0] = d->n;
  out_shape[1] = d->k;
  for (size_t i = 0; i < n; i++) {
    size_t a = SPATIAL_MAX - n + i; /* fewer axes take the last ones */
    d->in[a] = x->shape[2 + i];
    d->out[a] = out_shape[2 + i] = out_sp[i];
    d->kernel[a] = w->shape[2 + i];
    d->stride[a] = win.stride[i];
    d->dilation[a] = win.dilation[i];
    d->pad[a] = win.pad_begin[i];
    d->pad_end[a] = win.pad_end[i];
  }
  d->rank = SPATIAL_MAX;
  return TB_OK;
}

/* Whether the own convolution d runs as the implicit GEMM: 8 or more output channels per group and 8 or
 * more (input channel, tap) products to sum; else the direct kernel. */
static bool uses_igemm(const tb_cuda_cnn_desc *d) {
  int64_t per_group = d->k / d->groups, depth = d->c / d->groups * d->kernel[0] * d->kernel[1] * d->kernel[2];
  return per_group >= 8 && depth >= 8;
}

static const tb_tensor *optional_input(const tb_kernel_ctx *ctx, size_t i) { return ctx->n_inputs > i ? ctx->inputs[i] : NULL; }

static tb_status conv_run(tb_kernel_ctx *ctx) {
  tb_status st;
  const tb_conv_params *p = tb_kernel_params(ctx, &st); /* a FusedConv's parameters start with Conv's */
  if (!p) return st;
  const tb_activation_params *act = tb_fused_activation(ctx->domain, ctx->op_type, ctx->params);
  const tb_tensor *x = ctx->inputs[0], *w = ctx->inputs[1], *bias = optional_input(ctx, 2), *residual = optional_input(ctx, 3);
  tb_cuda_cnn_desc d;
  int64_t shape[TB_MAX_DIMS];
  if ((st = conv_geometry(ctx, p, x, w, bias, false, &d, shape)) != TB_OK) return st;
  tb_cuda_cnn_desc_act(&d, act);
  tb_tensor *y = NULL;
  if ((st = tb_kernel_output(ctx, 0, TB_DTYPE_F32, x->ndim, shape, &y)) != TB_OK) return st;
  if (residual && (residual->ndim != y->ndim || memcmp(residual->shape, y->shape, y->ndim * sizeof *y->shape) != 0))
    return tb_kernel_error(ctx, TB_ERR_MODEL, "the residual (input 3) must have the output's shape");
  int64_t n = tb_tensor_numel(y);
  if (n == 0) return TB_OK;
  const tb_tensor *tensors[TB_CUDA_CNN_POINTERS] = {x, w, bias, residual, y, NULL};
  if (tb_tensor_numel(x) > 0) {
    bool ran = false;
    if ((st = tb_cuda_conv_dnn_run(ctx, &d, tensors, &ran)) != TB_OK || ran) return st;
  }
  if (!uses_igemm(&d)) return tb_cuda_cnn_launch(ctx, "tb_cu_cnn_conv_f32", tensors, &d, n, 0, 0);
  int64_t m_tiles = (d.k / d.groups + 63) / 64, n_tiles = (n / (d.n * d.k) + 63) / 64;
  return tb_cuda_cnn_launch(ctx, "tb_cu_cnn_conv_igemm_f32", tensors, &d, 0, d.n * d.groups * m_tiles * n_tiles, 256);
}

static tb_status conv_transpose_run(tb_kernel_ctx *ctx) {
  tb_status st;
  const tb_conv_params *p = tb_kernel_params(ctx, &st);
  if (!p) return st;
  const tb_tensor *x = ctx->inputs[0], *w = ctx->inputs[1], *bias = optional_input(ctx, 2);
  tb_cuda_cnn_desc d;
  int64_t shape[TB_MAX_DIMS];
  if ((st = conv_geometry(ctx, p, x, w, bias, true, &d, shape)) != TB_OK) return st;
  tb_tensor *y = NULL;
  if ((st = tb_kernel_output(ctx, 0, TB_DTYPE_F32, x->ndim, shape, &y)) != TB_OK) return st;
  int64_t n = tb_tensor_numel(y);
  const tb_tensor *tensors[TB_CUDA_CNN_POINTERS] = {x, w, bias, NULL, y, NULL};
  return n == 0 ? TB_OK : tb_cuda_cnn_launch(ctx, "tb_cu_cnn_conv_transpose_f32", tensors, &d, n, 0, 0);
}

/* float32 X and W (and B, and FusedConv's residual), one output, X of rank 3 to 5 where it is known. */
static bool conv_accepts(const tb_kernel_query *q) {
  if (!q->params || q->n_inputs < 2 || !q->in[0] || !q->in[1] || !tb_cuda_all_f32(q)) return false;
  return !q->in[0]->has_shape || (q->in[0]->ndim >= 3 && q->in[0]->ndim <= 2 + SPATIAL_MAX);
}

static const tb_kernel kernels[] = {
    TB_CUDA_KERNEL("", "Conv", conv_accepts, conv_run),
    TB_CUDA_KERNEL("tb", "FusedConv", conv_accepts, conv_run),
    TB_CUDA_KERNEL("", "ConvTranspose", conv_accepts, conv_transpose_run),
};
const tb_cuda_family tb_cuda_family_conv = {kernels, sizeof kernels / sizeof kernels[0]};

tb_status tb_cuda_conv_geometry(tb_kernel_ctx *ctx, const tb_conv_params *p, const tb_tensor *x, const tb_tensor *w, const tb_tensor *bias,
                                tb_cuda_cnn_desc *d, int64_t *out_shape) {
  return conv_geometry(ctx, p, x, w, bias, false, d, out_shape);
}
