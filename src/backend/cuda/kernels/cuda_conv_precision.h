/* Internal: the precision of the convolutions on cuda:0 (cuda_conv_precision.c): the node state of the Conv and
 * tb::FusedConv entries for tf32, bf16 and fp16 (cuda_ops_conv.c), and their 16-bit operands per run. */
#ifndef TB_BACKEND_CUDA_KERNELS_CUDA_CONV_PRECISION_H
#define TB_BACKEND_CUDA_KERNELS_CUDA_CONV_PRECISION_H
#include "backend/cuda/kernels/cuda_cnn.h"
#include "backend/cuda/kernels/cuda_handoff.h"
#include "backend/cuda/kernels/cuda_launch.h"

/* A reduced-precision convolution's state: the launch functions first (tb_cuda_node), what it computes in, and a
 * constant W converted once at prepare (bf16 / fp16 only; NULL for a W computed at run time). */
typedef struct tb_cuda_conv_node {
  tb_cuda_node base;
  tb_device_precision precision;
  tb_tensor *weight;
  tb_cu_deviceptr from; /* the fp32 W it was converted from */
  tb_tensor *weight8, *w_scale; /* fp8: the constant W as e4m3 and its per-tensor scale (one fp32), made at prepare */
  bool fp8_refused;             /* fp8: cuDNN had no engine for it; every run since is bf16 */
  tb_cuda_handoff handoff;      /* Y in bf16 / fp16 too, for a consumer that reads it so (cuda_handoff.h) */
} tb_cuda_conv_node;

/* The entries' prepare (the module, as tb_cuda_prepare; for bf16 / fp16 a constant W converted on the device) and
 * release. */
tb_status tb_cuda_conv_prepare_tf32(tb_kernel_ctx *ctx, void **state);
tb_status tb_cuda_conv_prepare_bf16(tb_kernel_ctx *ctx, void **state);
tb_status tb_cuda_conv_prepare_fp16(tb_kernel_ctx *ctx, void **state);
/* fp8 e4m3 through cuDNN at compute capability 8.9 and newer, 1 or 2 spatial axes; else bf16, said why */
tb_status tb_cuda_conv_prepare_fp8(tb_kernel_ctx *ctx, void **state);
void tb_cuda_conv_release(void *state);

/* For a bf16 / fp16 node: X and W as its 16-bit dtype for this run, W the prepared copy when it is that constant,
 * else converted like X (tb_cu_dm_cast); tmp[0] and tmp[1] the conversions made, for the caller to destroy after
 * queueing its launches. */
tb_status tb_cuda_conv_operands16(tb_kernel_ctx *ctx, const tb_tensor *x, const tb_tensor *w, const tb_tensor **x16,
                                  const tb_tensor **w16, tb_tensor **tmp);

/* For an fp8 node: X (and W unless it is the prepared constant) quantized to e4m3 with their scales, and the
 * convolution of tensors (x, w, bias, residual, y) through cuDNN with them. *ran false (TB_OK): the node is not fp8, or
 * cuDNN has no engine for it (said once at info level; the node is bf16 from then on): the caller runs it in bf16. */
tb_status tb_cuda_conv_run_fp8(tb_kernel_ctx *ctx, const tb_cuda_cnn_desc *d, const tb_tensor *const *tensors, bool *ran);

/* With a consumer reading this convolution's Y in 16 bits (tb_kernel_reduced_outputs): tensors[5] set to the node's copy
 * and d->flag to its kind (1 bf16, 2 fp16), which the kernels (and cuDNN's epilogue) write beside Y; *y16 the copy, NULL
 * when none. Publish it with tb_cuda_handoff_publish once the launches are queued. */
tb_status tb_cuda_conv_out16(tb_kernel_ctx *ctx, const tb_tensor *y, const tb_tensor **tensors, tb_cuda_cnn_desc *d, tb_tensor **y16);

#endif
