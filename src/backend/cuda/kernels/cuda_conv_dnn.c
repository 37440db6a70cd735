/* Conv and tb::FusedConv through cuDNN (backend/cuda/cuda_dnn.h) on the device's handle, opened on the
 * first convolution and kept in the backend's state until the device closes. X and W float32, or bfloat16 /
 * float16, or fp8 e4m3 with per-tensor scales (the reduced precisions: cuda_conv_precision.c converts them) with a
 * float32 Y; TF32 engines only
 * when the node computes in tf32. A convolution with at most 2
 * spatial axes (1-D as a height of 1) goes to cuDNN with its bias, and ReLU when that is the whole
 * epilogue; what cuDNN did not fuse (the bias or ReLU when no engine takes the fused graph, a residual,
 * any other activation) runs after it in tb_cu_cnn_epilogue_f32. cuDNN absent or unusable (cudnnCreate
 * fails), or no engine for the shape: *ran is false and the caller runs its own kernel; a failure while
 * cuDNN runs the convolution is the node's error. */
#include "backend/cuda/kernels/cuda_conv_dnn.h"
#include <stdio.h>
#include <string.h>
#include "backend/backend_impl.h"
#include "backend/cuda/cuda_dnn.h"
#include "backend/tensor/tensor_impl.h"
#include "core/env.h"
#include "core/error.h"

/* The device's cuDNN handle: made on the first call (with the context current), NULL for good when
 * cuDNN is absent or refuses to start (said once, at info level). */
static tb_cuda_dnn *device_dnn(cuda_state *s) {
  pthread_mutex_lock(&s->dnn_lock);
  if (!s->dnn_tried) {
    s->dnn_tried = true;
    tb_status st = TB_OK;
    tb_cu_result r = s->api.cuCtxPushCurrent_v2(s->ctx);
    if (r == TB_CUDA_SUCCESS) {
      st = tb_cuda_dnn_create(s->base.label, &s->dnn);
      tb_cu_context popped = NULL;
      s->api.cuCtxPopCurrent_v2(&popped);
    }
    if (r != TB_CUDA_SUCCESS || st != TB_OK)
      tb_log(TB_LOG_INFO, "%s: convolutions run on the backend's own kernels: %s", s->base.label,
             r != TB_CUDA_SUCCESS ? "the CUDA context could not be made current" : tb_last_error());
  }
  tb_cuda_dnn *dnn = s->dnn;
  pthread_mutex_unlock(&s->dnn_lock);
  return dnn;
}

bool tb_cuda_conv_dnn_usable(tb_kernel_ctx *ctx) {
  cuda_state *s = tb_cuda_state_of(ctx);
  return s && device_dnn(s);
}

static tb_status dnn_run(tb_kernel_ctx *ctx, const tb_cuda_cnn_desc *d, const tb_tensor *const *tensors, bool tf32, const tb_tensor *x_scale,
                        const tb_tensor *w_scale, bool *ran);

tb_status tb_cuda_conv_dnn_run(tb_kernel_ctx *ctx, const tb_cuda_cnn_desc *d, const tb_tensor *const *tensors, bool tf32, bool *ran) {
  return dnn_run(ctx, d, tensors, tf32, NULL, NULL, ran);
}

tb_status tb_cuda_conv_dnn_run_fp8(tb_kernel_ctx *ctx, const tb_cuda_cnn_desc *d, const tb_tensor *const *tensors, const tb_tensor *x_scale,
                                   const tb_tensor *w_scale, bool *ran) {
  return dnn_run(ctx, d, tensors, false, x_scale, w_scale, ran);
}

static tb_status dnn_run(tb_kernel_ctx *ctx, const tb_cuda_cnn_desc *d, const tb_tensor *const *tensors, bool tf32, const tb_tensor *x_scale,
                        const tb_tensor *w_scale, bool *ran) {
  *ran = false;
  cuda_state *s = tb_cuda_state_of(ctx);
  const tb_tensor *x = tensors[0], *w = tensors[1], *bias = tensors[2], *residual = tensors[3], *y = tensors[4];
  /* cuDNN's 2-D convolution: the outermost of the three spatial axes must be a point */
  if (!s || d->in[0] != 1 || d->kernel[0] != 1 || d->out[0] != 1) return TB_OK;
  const tb_tensor *plain[4] = {x, w, bias, y};
  if (!tb_cuda_tensors_plain(ctx, plain, 4)) return TB_OK; /* the own kernels' launch says what is wrong */
  tb_cuda_dnn *dnn = device_dnn(s);
  if (!dnn) return TB_OK;
  tb_cuda_conv conv = {
      .n = d->n, .c = d->c, .h = d->in[1], .w = d->in[2], .k = d->k, .groups = d->groups,
      .kernel_h = d->kernel[1], .kernel_w = d->kernel[2],
      .pad_top = d->pad[1], .pad_left = d->pad[2], .pad_bottom = d->pad_end[1], .pad_right = d->pad_end[2],
      .stride_h = d->stride[1], .stride_w = d->stride[2], .dilation_h = d->dilation[1], .dilation_w = d->dilation[2],
      .x = tb_cuda_address_of(x), .weight = tb_cuda_address_of(w), .y = tb_cuda_address_of(y), .bias = tb_cuda_address_of(bias),
      .relu = d->act == TB_FUSED_ACT_RELU && !residual,
      .data = x->dtype == TB_DTYPE_BF16 ? TB_CUDA_DNN_BF16 : x->dtype == TB_DTYPE_F16 ? TB_CUDA_DNN_F16
            : x->dtype == TB_DTYPE_FP8_E4M3FN ? TB_CUDA_DNN_E4M3 : TB_CUDA_DNN_F32,
      .tf32 = tf32,
      .x_scale = x_scale ? tb_cuda_address_of(x_scale) : 0,
      .w_scale = w_scale ? tb_cuda_address_of(w_scale) : 0,
  };
  size_t workspace_bytes = 0;
  bool fused = false;
  tb_cu_result r = s->api.cuCtxPushCurrent_v2(s->ctx);
  if (r != TB_CUDA_SUCCESS) return tb_devmem_call_failed(&s->base, "cuCtxPushCurrent_v2", "for cuDNN", r, "");
  tb_status st = tb_cuda_dnn_conv_prepare(dnn, &conv, &workspace_bytes, &fused);
  tb_cu_context popped = NULL;
  if (st == TB_ERR_UNSUPPORTED || st == TB_ERR_UNAVAILABLE) {
    s->api.cuCtxPopCurrent_v2(&popped);
    char label[128];
    tb_log(TB_LOG_INFO, "%s: %s runs on the backend's own convolution kernel: %s", s->base.label,
           tb_kernel_label(ctx->name, ctx->op_type, label, sizeof label), tb_last_error());
    return TB_OK;
  }
  tb_tensor *workspace = NULL;
  if (st == TB_OK && workspace_bytes > 0) {
    int64_t bytes = (int64_t)workspace_bytes;
    s->api.cuCtxPopCurrent_v2(&popped); /* the allocator makes the context current itself */
    st = tb_tensor_create(ctx->backend, TB_DTYPE_U8, 1, &bytes, &workspace);
    if (st == TB_OK && (r = s->api.cuCtxPushCurrent_v2(s->ctx)) != TB_CUDA_SUCCESS) {
      tb_tensor_destroy(workspace);
      return tb_devmem_call_failed(&s->base, "cuCtxPushCurrent_v2", "for cuDNN", r, "");
    }
    if (st != TB_OK) return st;
  }
  if (st == TB_OK) st = tb_cuda_dnn_conv(dnn, &conv, tb_cuda_stream_of(s), tb_cuda_address_of(workspace), workspace_bytes, &fused);
  s->api.cuCtxPopCurrent_v2(&popped);
  tb_tensor_destroy(workspace); /* the caching allocator keeps the block in stream order for the next node */
  if (st != TB_OK) {
    char label[128], why[1024];
    snprintf(why, sizeof why, "%s", tb_last_error());
    return tb_error(st, "%s: %s", tb_kernel_label(ctx->name, ctx->op_type, label, sizeof label), why);
  }
  *ran = true;
  bool rest = residual || (d->act != TB_FUSED_ACT_NONE && !(fused && conv.relu)) || (bias && !fused);
  const tb_tensor *y16 = tensors[5]; /* Y in 16 bits too (cuda_conv_precision.h): the epilogue writes it, or only it */
  if (!rest && !y16) return TB_OK;
  const tb_tensor *epilogue[TB_CUDA_CNN_POINTERS] = {y, fused ? NULL : bias, residual, NULL, NULL, y16};
  tb_cuda_cnn_desc e = *d;
  if (fused && conv.relu) e.act = TB_FUSED_ACT_NONE;
  if (!rest) { /* cuDNN did the whole epilogue: only the copy (y rewritten as it is) */
    epilogue[1] = epilogue[2] = NULL;
    e.act = TB_FUSED_ACT_NONE;
  }
  return tb_cuda_cnn_launch(ctx, "tb_cu_cnn_epilogue_f32", epilogue, &e, tb_tensor_numel(y), 0, 0);
}
