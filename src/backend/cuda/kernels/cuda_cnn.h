/* Internal: the host side of the CNN kernels (kernels/60_conv.cu, 61_pool_norm.cu): the C mirror of their
 * descriptor, and their launch, six pointers then the descriptor by value. Used by the node kernels of
 * cuda_ops_conv.c (Conv, tb::FusedConv, ConvTranspose, through cuDNN first: cuda_conv_dnn.c),
 * cuda_ops_pool.c (the pools and normalizations) and cuda_ops_resize.c. */
#ifndef TB_BACKEND_CUDA_KERNELS_CUDA_CNN_H
#define TB_BACKEND_CUDA_KERNELS_CUDA_CNN_H
#include <stdint.h>
#include "backend/cuda/kernels/cuda_launch.h"
#include "ops/fused/fused_params.h"

enum { TB_CUDA_CNN_POINTERS = 6, TB_CUDA_CNN_AXES = 4 };

/* The kernels' tb_cnn_desc, field for field (384 bytes, 8-aligned). */
typedef struct tb_cuda_cnn_desc {
  int64_t counts[TB_CUDA_CNN_POINTERS]; /* the 4-byte words each pointer reaches (0 for none), for the fake's checks */
  int64_t n, c, k, groups;
  int64_t in[TB_CUDA_CNN_AXES], out[TB_CUDA_CNN_AXES], kernel[TB_CUDA_CNN_AXES], stride[TB_CUDA_CNN_AXES];
  int64_t dilation[TB_CUDA_CNN_AXES], pad[TB_CUDA_CNN_AXES], pad_end[TB_CUDA_CNN_AXES];
  int32_t rank, kind, flag, act; /* flag: pools' count_include_pad; the 16-bit convolutions' and their epilogue's y16
                                  * kind (0 no copy, 1 bf16, 2 fp16; cuda_conv_precision.c) */
  float alpha, beta, lo, hi;
  float eps;
  float unused_f[3];
  int64_t base[TB_CUDA_CNN_AXES];
} tb_cuda_cnn_desc;
_Static_assert(sizeof(tb_cuda_cnn_desc) == 384, "tb_cuda_cnn_desc mirrors the kernels' tb_cnn_desc (384 bytes)");

/* A descriptor whose spatial arrays describe a single point (size 1, stride and dilation 1, no pad) on
 * every axis: callers fill the axes they have, aligned to the last ones. */
void tb_cuda_cnn_desc_init(tb_cuda_cnn_desc *d);

/* The activation of a tb::FusedConv (NULL: none) into the descriptor. */
void tb_cuda_cnn_desc_act(tb_cuda_cnn_desc *d, const tb_activation_params *act);

/* A convolution's geometry (Conv's checks and the window of ops/nn/window.h, as the CPU's) into d (3 spatial axes,
 * fewer aligned to the last) and the output's shape (rank of x); for the quantized convolutions
 * (cuda_ops_quant.c). Defined in cuda_ops_conv.c. */
struct tb_conv_params;
tb_status tb_cuda_conv_geometry(tb_kernel_ctx *ctx, const struct tb_conv_params *p, const tb_tensor *x, const tb_tensor *w,
                                const tb_tensor *bias, tb_cuda_cnn_desc *d, int64_t *out_shape);

/* Launch `kernel` with these six tensors (NULL: a null pointer; counts are filled from their sizes) and the
 * descriptor: one thread per element over `elements` (rows 0), or one block per row over `rows` rows of
 * `cols` elements. */
tb_status tb_cuda_cnn_launch(tb_kernel_ctx *ctx, const char *kernel, const tb_tensor *const *tensors, tb_cuda_cnn_desc *d,
                             int64_t elements, int64_t rows, int64_t cols);

#endif
