/* Internal: forward convolutions on an NVIDIA GPU through cuDNN 9's graph API (runtime/cudnn_api.h), for
 * the CUDA backend's Conv kernel. NCHW, X and W float32, bfloat16, float16 or fp8 e4m3 with per-tensor scales (the
 * bias, Y and the computation
 * float32 always: the reduced precisions of docs/cuda.md "Reduced precision"), groups, asymmetric pads, strides, dilations, and a bias
 * (one value per output channel) and ReLU fused where cuDNN has an engine for the fused graph:
 *
 *   Y = relu(conv(X, W) + bias)   X [n, c, h, w], W [k, c / groups, kh, kw], Y [n, k, oh, ow], all packed
 *
 * cuDNN is optional: without it tb_cuda_dnn_create is TB_ERR_UNAVAILABLE with a sentence, and the kernel
 * uses its own convolution. A plan (the operation graph, the engine cuDNN's heuristics rank first that
 * finalizes, its workspace size) is made once per shape and kept until tb_cuda_dnn_destroy. When no engine
 * takes the fused graph, the plan is the convolution alone and `fused` says so: the caller then adds the
 * bias and applies the ReLU itself. Calls on one tb_cuda_dnn are serialised; they enqueue work on the
 * caller's stream and wait for nothing. The caller makes its CUDA context current. */
#ifndef TB_BACKEND_CUDA_DNN_H
#define TB_BACKEND_CUDA_DNN_H
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <tensorbridge/status.h>
#include "runtime/nvidia_cuda_api.h"

/* The element type of a convolution's X and W. */
typedef enum tb_cuda_dnn_data { TB_CUDA_DNN_F32 = 0, TB_CUDA_DNN_BF16, TB_CUDA_DNN_F16, TB_CUDA_DNN_E4M3 } tb_cuda_dnn_data;

typedef struct tb_cuda_conv {
  int64_t n, c, h, w;            /* X */
  int64_t k;                     /* output channels */
  int64_t groups;                /* 0 or 1: none; c and k are multiples of it */
  int64_t kernel_h, kernel_w;
  int64_t pad_top, pad_left, pad_bottom, pad_right;
  int64_t stride_h, stride_w;     /* 0: 1 */
  int64_t dilation_h, dilation_w; /* 0: 1 */
  tb_cu_deviceptr x, weight, y;   /* device pointers: X, W, Y */
  tb_cu_deviceptr bias;           /* 0: none; else k floats */
  bool relu;
  tb_cuda_dnn_data data;          /* X's and W's elements (Y and the bias are float32) */
  /* fp8 e4m3 X and W only: one float32 each on the device, the factor that turns the stored values back into the
   * operand's (max |x| / 448, docs/cuda.md "Reduced precision"); the graph multiplies the convolution's fp32 sums
   * by both before the bias and the ReLU. */
  tb_cu_deviceptr x_scale, w_scale;
  /* float32 data: whether cuDNN's engines may compute on TF32 tensor cores (precision tf32); without it
   * engines whose numerical notes say tensor cores or down-converted inputs are passed over, so fp32 stays
   * fp32. For 16-bit data, engines that reduce in reduced precision are passed over (fp32 accumulation). */
  bool tf32;
} tb_cuda_conv;

typedef struct tb_cuda_dnn tb_cuda_dnn;

typedef struct tb_cuda_dnn_stats {
  size_t plans;    /* plans cached now */
  size_t engines;  /* execution plans tried (finalize calls) */
  size_t executes; /* cudnnBackendExecute calls that succeeded */
  size_t passed_over; /* engine configurations skipped for their numerical notes (tf32, reduced reduction) */
} tb_cuda_dnn_stats;

#define TB_CUDA_DNN_MAX_PLANS 128

/* Open cuDNN and create its handle. TB_ERR_UNAVAILABLE when cuDNN is absent (the sentence says what was
 * tried and that convolutions run on the backend's own kernels). `who` ("cuda:0") leads every sentence. */
tb_status tb_cuda_dnn_create(const char *who, tb_cuda_dnn **out);

/* The output's height and width for a convolution; TB_ERR_INVALID_ARGUMENT naming the field that is not
 * valid (also used by tb_cuda_dnn_conv). */
tb_status tb_cuda_dnn_conv_output(const char *who, const tb_cuda_conv *conv, int64_t *out_h, int64_t *out_w);

/* Make (or find) the plan for this convolution's shape, at prepare time: the workspace it needs and
 * whether the bias and ReLU are fused. TB_ERR_UNSUPPORTED when no cuDNN engine runs it (the caller's own
 * kernel then does). The pointers only count for their alignment. */
tb_status tb_cuda_dnn_conv_prepare(tb_cuda_dnn *dnn, const tb_cuda_conv *conv, size_t *workspace_bytes, bool *fused);

/* Enqueue the convolution on `stream` (making the plan when it is new) with `workspace_bytes` at
 * `workspace`; TB_ERR_INVALID_ARGUMENT when that is less than the plan needs. *fused (may be NULL) says
 * whether the bias and ReLU were applied. */
tb_status tb_cuda_dnn_conv(tb_cuda_dnn *dnn, const tb_cuda_conv *conv, tb_cu_stream stream, tb_cu_deviceptr workspace,
                           size_t workspace_bytes, bool *fused);

void tb_cuda_dnn_stats_get(tb_cuda_dnn *dnn, tb_cuda_dnn_stats *out);

/* Destroy every plan and the handle. NULL is fine. */
void tb_cuda_dnn_destroy(tb_cuda_dnn *dnn);

/* Test hook: open cuDNN and build and finalize this convolution's tensors, convolution descriptor and
 * operations (fused or not), stopping before the operation graph, which needs a GPU (a handle). With the
 * real cuDNN it checks every attribute name, type and value used. *descriptors: how many were made. */
tb_status tb_cuda_dnn_test_operations(const char *who, const tb_cuda_conv *conv, bool fused, size_t *descriptors);

#endif
