/* The precision of the convolutions on cuda:0 (cuda_conv_precision.h), as cuda_gemm_precision.c for the products:
 * Conv and tb::FusedConv have an entry per precision the prepare options may ask for (cuda_ops_conv.c). tf32 keeps
 * fp32 data and lets cuDNN's TF32 engines run it (the own kernels stay fp32, and the prepare result says so when
 * cuDNN is not in use or the convolution has 3 spatial axes). fp8 (precision fp8, compute capability 8.9, cuDNN, 1 or 2
 * spatial axes): W quantized to e4m3 once at prepare with its per-tensor scale, X per run, cuDNN with both scales;
 * bf16 where that cannot run. bf16 (O3 with precision auto, or precision bf16) and fp16: W, a constant, converted once at
 * prepare on the device (tb_cu_dm_cast), X per run into a temporary; cuDNN with 16-bit X and W, fp32 compute and an
 * fp32 Y, or the own tb_cu_cnn_conv[_igemm]_bf16 / _f16 (63_conv_lowp.cu): fp32 accumulation and epilogue, fp32
 * outputs, so the node's neighbours stay fp32. */
#include "backend/cuda/kernels/cuda_conv_precision.h"
#include <stdio.h>
#include <stdlib.h>
#include "backend/cuda/cuda_module.h"
#include "backend/cuda/kernels/cuda_conv_dnn.h"
#include "backend/cuda/kernels/cuda_gemm.h"
#include "backend/tensor/tensor_impl.h"
#include "core/error.h"
#include "core/env.h"

static tb_dtype dtype_of(tb_device_precision p) { return p == TB_DEVICE_FP16 ? TB_DTYPE_F16 : TB_DTYPE_BF16; }

static bool sixteen(tb_device_precision p) { return p == TB_DEVICE_BF16 || p == TB_DEVICE_FP16; }

static tb_status prepare_in(tb_kernel_ctx *ctx, void **state, tb_device_precision precision) {
  *state = NULL;
  cuda_state *s = tb_cuda_state_of(ctx);
  if (!s) return tb_kernel_error(ctx, TB_ERR_INTERNAL, "a CUDA convolution was prepared for a backend that is not an open CUDA device");
  tb_cu_module module = NULL;
  tb_status st = tb_cuda_module_get(s, &module); /* a compile failure names the node here */
  if (st != TB_OK) return st;
  tb_cuda_conv_node *node = calloc(1, sizeof *node);
  if (!node) return tb_kernel_error(ctx, TB_ERR_OUT_OF_MEMORY, "out of host memory for the CUDA convolution's state");
  node->precision = precision;
  const tb_tensor *w = ctx->n_inputs > 1 ? ctx->inputs[1] : NULL;
  const tb_tensor *one[1] = {w};
  if (sixteen(precision) && w && tb_kernel_input_constant(ctx, 1) && w->dtype == TB_DTYPE_F32 && tb_tensor_numel(w) > 0 &&
      tb_cuda_tensors_plain(ctx, one, 1)) {
    void *saved = ctx->state;
    ctx->state = node; /* the conversion's launch keeps its function in the node */
    st = tb_cuda_lowp_convert(ctx, w, dtype_of(precision), &node->weight);
    ctx->state = saved;
    if (st != TB_OK) {
      free(node);
      return st;
    }
    node->from = tb_cuda_address_of(w);
  }
  if (precision == TB_DEVICE_FP8 && w && tb_kernel_input_constant(ctx, 1) && w->dtype == TB_DTYPE_F32 && tb_tensor_numel(w) > 0 &&
      tb_cuda_tensors_plain(ctx, one, 1)) {
    void *saved = ctx->state;
    ctx->state = node;
    st = tb_cuda_lowp_quantize8(ctx, w, tb_tensor_numel(w), 1, false, &node->weight8, &node->w_scale);
    ctx->state = saved;
    if (st != TB_OK) {
      free(node);
      return st;
    }
    node->from = tb_cuda_address_of(w);
  }
  if (precision != TB_DEVICE_TF32 && tb_cuda_fuse_casts_wanted()) { /* the conversions fused into producers (cuda_handoff.h) */
    tb_kernel_writes_reduced(ctx, 0);
    const tb_value_type *x = ctx->in_types && ctx->n_inputs > 0 ? ctx->in_types[0] : NULL;
    if (sixteen(precision) && !tb_kernel_input_constant(ctx, 0) && x && x->has_dtype && x->dtype == TB_DTYPE_F32)
      tb_kernel_reads_reduced(ctx, 0, dtype_of(precision));
  }
  *state = node;
  return TB_OK;
}

/* Why a tf32 convolution computes fp32: TF32 is cuDNN's (its TF32 engines); the own kernels compute fp32. NULL: cuDNN
 * may run it in TF32. */
static const char *tf32_refused(tb_kernel_ctx *ctx, char *why, size_t cap) {
  const tb_value_type *x = ctx->in_types && ctx->n_inputs > 0 ? ctx->in_types[0] : NULL;
  cuda_state *s = tb_cuda_state_of(ctx);
  if (x && x->has_shape && x->ndim > 4)
    snprintf(why, cap, "fp32: cuDNN runs the convolutions of 1 or 2 spatial axes here (this one has %zu) and TF32 is cuDNN's; the "
                       "own kernel computes fp32", x->ndim - 2);
  else if (!tb_cuda_conv_dnn_usable(ctx))
    snprintf(why, cap, "fp32: TF32 convolutions run only through cuDNN's TF32 engines and cuDNN is not in use on %s (not found, "
                       "or it did not start: tb doctor says which); the own kernel computes fp32", s ? s->base.label : "the device");
  else
    return NULL;
  return why;
}

tb_status tb_cuda_conv_prepare_tf32(tb_kernel_ctx *ctx, void **state) {
  tb_status st = prepare_in(ctx, state, TB_DEVICE_TF32);
  char why[400];
  if (st == TB_OK && tf32_refused(ctx, why, sizeof why)) tb_kernel_set_precision(ctx, NULL, why);
  return st;
}

/* Why this convolution cannot compute in fp8 (NULL: cuDNN may run it so): fp8 tensor cores need compute capability
 * 8.9, fp8 convolutions are cuDNN's (the own kernels have no fp8 form), and cuDNN runs 1 or 2 spatial axes here. */
static const char *fp8_refused(tb_kernel_ctx *ctx, char *why, size_t cap) {
  cuda_state *s = tb_cuda_state_of(ctx);
  const tb_value_type *x = ctx->in_types && ctx->n_inputs > 0 ? ctx->in_types[0] : NULL;
  int major = 0, minor = 0;
  if (s && s->api.cuDeviceGetAttribute) {
    s->api.cuDeviceGetAttribute(&major, 75, s->device);
    s->api.cuDeviceGetAttribute(&minor, 76, s->device);
  }
  if (major * 10 + minor < 89)
    snprintf(why, cap, "precision fp8 needs a GPU of compute capability 8.9 or newer (fp8 tensor cores: Ada, Hopper, Blackwell); %s is %d.%d",
             s ? s->base.label : "the device", major, minor);
  else if (x && x->has_shape && x->ndim > 4)
    snprintf(why, cap, "fp8 convolutions run through cuDNN, which runs 1 or 2 spatial axes here (this one has %zu)", x->ndim - 2);
  else if (!tb_cuda_conv_dnn_usable(ctx))
    snprintf(why, cap, "fp8 convolutions run only through cuDNN, which is not in use on %s (not found, or it did not start: tb doctor "
                       "says which); the own kernels have no fp8 form", s ? s->base.label : "the device");
  else
    return NULL;
  return why;
}

tb_status tb_cuda_conv_prepare_fp8(tb_kernel_ctx *ctx, void **state) {
  char why[400], text[600];
  const char *refused = fp8_refused(ctx, why, sizeof why);
  tb_status st = prepare_in(ctx, state, refused ? TB_DEVICE_BF16 : TB_DEVICE_FP8);
  if (st != TB_OK) return st;
  if (refused) {
    snprintf(text, sizeof text, "bf16: %s; this convolution runs in bf16 on the device (fp32 accumulation and outputs)", refused);
    tb_kernel_set_precision(ctx, "bf16", text);
  } else {
    tb_kernel_set_precision(ctx, "fp8 e4m3",
                            "fp8 e4m3: the precision asked for, through cuDNN with X and W scaled per tensor, accumulated in fp32 "
                            "with fp32 outputs (bf16 when cuDNN has no engine for it, said at info level)");
  }
  return TB_OK;
}
tb_status tb_cuda_conv_prepare_bf16(tb_kernel_ctx *ctx, void **state) { return prepare_in(ctx, state, TB_DEVICE_BF16); }
tb_status tb_cuda_conv_prepare_fp16(tb_kernel_ctx *ctx, void **state) { return prepare_in(ctx, state, TB_DEVICE_FP16); }

void tb_cuda_conv_release(void *state) {
  tb_cuda_conv_node *node = state;
  if (!node) return;
  tb_tensor_destroy(node->weight);
  tb_tensor_destroy(node->weight8);
  tb_tensor_destroy(node->w_scale);
  tb_cuda_handoff_release(&node->handoff);
  free(node);
}

tb_status tb_cuda_conv_out16(tb_kernel_ctx *ctx, const tb_tensor *y, const tb_tensor **tensors, tb_cuda_cnn_desc *d, tb_tensor **y16) {
  *y16 = NULL;
  tb_dtype dtype;
  tb_cuda_conv_node *node = tb_kernel_reduced_outputs(ctx, &dtype) ? ctx->state : NULL;
  if (!node || !ctx->outputs || ctx->n_outputs < 1 || ctx->outputs[0] != y) return TB_OK;
  int f16 = 0;
  tb_status st = tb_cuda_handoff_out(ctx, &node->handoff, 0, y, y16, &f16);
  if (st != TB_OK || !*y16) return st;
  tensors[5] = *y16;
  d->flag = f16 ? 2 : 1;
  return TB_OK;
}

tb_status tb_cuda_conv_run_fp8(tb_kernel_ctx *ctx, const tb_cuda_cnn_desc *d, const tb_tensor *const *tensors, bool *ran) {
  *ran = false;
  tb_cuda_conv_node *node = ctx->state;
  if (!node || node->precision != TB_DEVICE_FP8 || node->fp8_refused) return TB_OK;
  const tb_tensor *x = tensors[0], *w = tensors[1];
  bool prepared = node->weight8 && ctx->n_inputs > 1 && ctx->inputs[1] == w && tb_cuda_address_of(w) == node->from;
  tb_tensor *x8 = NULL, *x_scale = NULL, *w8 = NULL, *w_scale = NULL;
  tb_status st = tb_cuda_lowp_quantize8(ctx, x, tb_tensor_numel(x), 1, false, &x8, &x_scale);
  if (st == TB_OK && !prepared) st = tb_cuda_lowp_quantize8(ctx, w, tb_tensor_numel(w), 1, false, &w8, &w_scale);
  if (st == TB_OK) {
    const tb_tensor *t[TB_CUDA_CNN_POINTERS] = {x8, prepared ? node->weight8 : w8, tensors[2], tensors[3], tensors[4], tensors[5]};
    st = tb_cuda_conv_dnn_run_fp8(ctx, d, t, x_scale, prepared ? node->w_scale : w_scale, ran);
  }
  tb_tensor_destroy(x8); /* after the launches are queued: the run holds device blocks until its stream is done */
  tb_tensor_destroy(x_scale);
  tb_tensor_destroy(w8);
  tb_tensor_destroy(w_scale);
  if (st == TB_OK && !*ran) {
    char label[128];
    node->fp8_refused = true;
    tb_log(TB_LOG_INFO, "%s: cuDNN has no engine for this fp8 convolution (the message before says why); it runs in bf16",
           tb_kernel_label(ctx->name, ctx->op_type, label, sizeof label));
  }
  return st;
}

tb_status tb_cuda_conv_operands16(tb_kernel_ctx *ctx, const tb_tensor *x, const tb_tensor *w, const tb_tensor **x16,
                                  const tb_tensor **w16, tb_tensor **tmp) {
  const tb_cuda_conv_node *node = ctx->state;
  tb_dtype dtype = dtype_of(node->precision);
  tmp[0] = tmp[1] = NULL;
  *x16 = *w16 = NULL;
  bool prepared = node->weight && ctx->n_inputs > 1 && ctx->inputs[1] == w && tb_cuda_address_of(w) == node->from;
  const tb_tensor *handed = ctx->n_inputs > 0 && ctx->inputs[0] == x ? tb_cuda_handoff_find(ctx, 0, x, dtype) : NULL;
  tb_status st = handed ? TB_OK : tb_cuda_lowp_convert(ctx, x, dtype, &tmp[0]);
  if (st == TB_OK && !prepared) st = tb_cuda_lowp_convert(ctx, w, dtype, &tmp[1]);
  if (st != TB_OK) {
    tb_tensor_destroy(tmp[0]);
    tmp[0] = NULL;
    return st;
  }
  *x16 = handed ? handed : tmp[0];
  *w16 = prepared ? node->weight : tmp[1];
  return TB_OK;
}
