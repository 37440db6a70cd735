/* CUDA kernels of Conv, tb::FusedConv (Conv + bias + residual + activation, as the O1 passes make it) and
 * ConvTranspose on float32 NCHW with 1 to 3 spatial axes, any strides, pads (explicit or auto_pad),
 * dilations and groups (depthwise included). Conv and FusedConv go to cuDNN where it is present and has an
 * engine (cuda_conv_dnn.c), else to the own kernels: the implicit GEMM tb_cu_cnn_conv_igemm_f32 where a group
 * has 8 or more output channels and a reduction of 8 or more (uses_igemm), the direct
 * tb_cu_cnn_conv_f32 for the rest (depthwise, tiny reductions); ConvTranspose runs
 * tb_cu_cnn_conv_transpose_f32. The geometry comes from ops/nn/window.h, as the CPU's. Conv and FusedConv have an
 * entry per precision the prepare options may ask for (cuda_conv_precision.c: tf32, bf16, fp16; bf16 for fp8), the
 * reduced ones with 16-bit X and W for cuDNN and for the own kernels' _bf16 / _f16 forms (63_conv_lowp.cu). */
#include <string.h>
#include "backend/cuda/kernels/cuda_cnn.h"
#include "backend/cuda/kernels/cuda_conv_dnn.h"
#include "backend/cuda/kernels/cuda_conv_precision.h"
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

/* The own kernels' names by X's and W's dtype: fp32, bf16, fp16. */
static const char *const direct_kernels[3] = {"tb_cu_cnn_conv_f32", "tb_cu_cnn_conv_bf16", "tb_cu_cnn_conv_f16"};
static const char *const igemm_kernels[3] = {"tb_cu_cnn_conv_igemm_f32", "tb_cu_cnn_conv_igemm_bf16", "tb_cu_cnn_conv_igemm_f16"};

/* The convolution of x and w (fp32, or both converted to 16 bits) into y: cuDNN, else the own kernel. */
static tb_status conv_launch(tb_kernel_ctx *ctx, tb_cuda_cnn_desc *d, const tb_tensor *const *tensors, bool tf32, int64_t n) {
  if (tb_tensor_numel(tensors[0]) > 0) {
    bool ran = false;
    tb_status st = tb_cuda_conv_dnn_run(ctx, d, tensors, tf32, &ran);
    if (st != TB_OK || ran) return st;
  }
  tb_dtype dtype = tensors[0]->dtype;
  int form = dtype == TB_DTYPE_BF16 ? 1 : dtype == TB_DTYPE_F16 ? 2 : 0;
  if (!uses_igemm(d)) return tb_cuda_cnn_launch(ctx, direct_kernels[form], tensors, d, n, 0, 0);
  int64_t m_tiles = (d->k / d->groups + 63) / 64, n_tiles = (n / (d->n * d->k) + 63) / 64;
  return tb_cuda_cnn_launch(ctx, igemm_kernels[form], tensors, d, 0, d->n * d->groups * m_tiles * n_tiles, 256);
}

/* The convolution in its node's precision: fp8 through cuDNN (else bf16), bf16 / fp16 with X and W converted (or handed
 * over), fp32 and tf32 as they are. */
static tb_status conv_run_precision(tb_kernel_ctx *ctx, tb_cuda_cnn_desc *d, const tb_tensor **tensors, tb_device_precision precision,
                                    int64_t n) {
  tb_status st;
  const tb_tensor *x = tensors[0], *w = tensors[1];
  if (precision == TB_DEVICE_FP8 && tb_tensor_numel(x) > 0) { /* through cuDNN, else bf16 */
    bool ran = false;
    if ((st = tb_cuda_conv_run_fp8(ctx, d, tensors, &ran)) != TB_OK || ran) return st;
    precision = TB_DEVICE_BF16;
  }
  if ((precision != TB_DEVICE_BF16 && precision != TB_DEVICE_FP16) || tb_tensor_numel(x) == 0)
    return conv_launch(ctx, d, tensors, precision == TB_DEVICE_TF32, n);
  tb_tensor *tmp[2] = {NULL, NULL};
  st = tb_cuda_conv_operands16(ctx, x, w, &tensors[0], &tensors[1], tmp);
  if (st == TB_OK) st = conv_launch(ctx, d, tensors, false, n);
  tb_tensor_destroy(tmp[0]); /* after the launches are queued: the run holds device blocks until its stream is done */
  tb_tensor_destroy(tmp[1]);
  return st;
}

static tb_status conv_run_in(tb_kernel_ctx *ctx, tb_device_precision precision) {
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
  tb_tensor *y16 = NULL; /* Y in 16 bits too, for a consumer that reads it so (cuda_conv_precision.h) */
  if (precision != TB_DEVICE_FP32 && (st = tb_cuda_conv_out16(ctx, y, tensors, &d, &y16)) != TB_OK) return st;
  st = conv_run_precision(ctx, &d, tensors, precision, n);
  if (st == TB_OK && y16) {
    tb_cuda_conv_node *node = ctx->state;
    tb_cuda_handoff_publish(&node->handoff, y);
  }
  return st;
}

static tb_status conv_run(tb_kernel_ctx *ctx) { return conv_run_in(ctx, TB_DEVICE_FP32); }
static tb_status conv_run_tf32(tb_kernel_ctx *ctx) { return conv_run_in(ctx, TB_DEVICE_TF32); }
static tb_status conv_run_bf16(tb_kernel_ctx *ctx) { return conv_run_in(ctx, TB_DEVICE_BF16); }
static tb_status conv_run_fp16(tb_kernel_ctx *ctx) { return conv_run_in(ctx, TB_DEVICE_FP16); }

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

/* The reduced-precision entries: conv_accepts and the precision the options ask for (fp8: through cuDNN where it can,
 * else bf16, cuda_conv_precision.c). */
static bool conv_accepts_tf32(const tb_kernel_query *q) { return q->device_precision == TB_DEVICE_TF32 && conv_accepts(q); }
static bool conv_accepts_bf16(const tb_kernel_query *q) { return q->device_precision == TB_DEVICE_BF16 && conv_accepts(q); }
static bool conv_accepts_fp8(const tb_kernel_query *q) { return q->device_precision == TB_DEVICE_FP8 && conv_accepts(q); }
static tb_status conv_run_fp8(tb_kernel_ctx *ctx) { return conv_run_in(ctx, TB_DEVICE_FP8); }
static bool conv_accepts_fp16(const tb_kernel_query *q) { return q->device_precision == TB_DEVICE_FP16 && conv_accepts(q); }

#define TB_CUDA_CONV_LOWP(domain, name, tag, precision)                                                               \
  {domain, name, TB_KERNEL_REFERENCE, 0, conv_accepts_##tag, conv_run_##tag, tb_cuda_conv_prepare_##tag, tb_cuda_conv_release, \
   precision}
/* Every precision of the convolution, the reduced ones first (find_kernel takes the first that accepts). */
#define TB_CUDA_CONV_OP(domain, name)                                                                         \
  TB_CUDA_CONV_LOWP(domain, name, tf32, "tf32"), TB_CUDA_CONV_LOWP(domain, name, bf16, "bf16"),                  \
      TB_CUDA_CONV_LOWP(domain, name, fp16, "fp16"), TB_CUDA_CONV_LOWP(domain, name, fp8, "fp8 e4m3"),               \
      TB_CUDA_KERNEL(domain, name, conv_accepts, conv_run)

static const tb_kernel kernels[] = {
    TB_CUDA_CONV_OP("", "Conv"),
    TB_CUDA_CONV_OP("tb", "FusedConv"),
    TB_CUDA_KERNEL("", "ConvTranspose", conv_accepts, conv_transpose_run),
};
const tb_cuda_family tb_cuda_family_conv = {kernels, sizeof kernels / sizeof kernels[0]};

tb_status tb_cuda_conv_geometry(tb_kernel_ctx *ctx, const tb_conv_params *p, const tb_tensor *x, const tb_tensor *w, const tb_tensor *bias,
                                tb_cuda_cnn_desc *d, int64_t *out_shape) {
  return conv_geometry(ctx, p, x, w, bias, false, d, out_shape);
}
