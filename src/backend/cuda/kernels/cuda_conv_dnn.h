/* Internal: Conv and tb::FusedConv through cuDNN on the device's handle (cuda_conv_dnn.c), for the
 * convolution kernels of cuda_ops_conv.c. */
#ifndef TB_BACKEND_CUDA_KERNELS_CUDA_CONV_DNN_H
#define TB_BACKEND_CUDA_KERNELS_CUDA_CONV_DNN_H
#include <stdbool.h>
#include "backend/cuda/kernels/cuda_cnn.h"

/* The convolution d (spatial axes in the descriptor's first three, fewer aligned to the last; activation in
 * d->act) of tensors x, w, bias (NULL: none), residual (NULL: none), y through cuDNN, then what cuDNN did
 * not fuse. x and w float32, or both bfloat16 or both float16 (y float32); tf32: float32 data may run on
 * TF32 engines (precision tf32), else engines that would are passed over. *ran false (TB_OK): cuDNN is
 * absent or has no engine for it, or it has 3 spatial axes; the
 * caller runs its own kernel. */
tb_status tb_cuda_conv_dnn_run(tb_kernel_ctx *ctx, const tb_cuda_cnn_desc *d, const tb_tensor *const *tensors, bool tf32, bool *ran);
/* The same with x and w fp8 e4m3 (their stored values; y float32) and their per-tensor scales (one float32 each on the
 * device): cuDNN multiplies the sums by both before the bias and the ReLU. *ran false: no engine (or cuDNN absent, 3
 * spatial axes); nothing was launched and the caller runs it another way (the own kernels take no fp8). */
tb_status tb_cuda_conv_dnn_run_fp8(tb_kernel_ctx *ctx, const tb_cuda_cnn_desc *d, const tb_tensor *const *tensors, const tb_tensor *x_scale,
                                   const tb_tensor *w_scale, bool *ran);

/* Whether cuDNN is in use on the node's device (opened now when it was not yet; absent or failing to start: false,
 * said once at info level). */
bool tb_cuda_conv_dnn_usable(tb_kernel_ctx *ctx);

#endif
