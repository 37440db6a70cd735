/* The CPU reference kernels of the nn family. */
#include "backend/cpu/kernels/kernel.h"

extern const tb_kernel tb_kernel_matmul, tb_kernel_gemm, tb_kernel_conv, tb_kernel_conv_transpose;
extern const tb_kernel tb_kernel_maxpool, tb_kernel_averagepool, tb_kernel_lppool, tb_kernel_global_maxpool,
    tb_kernel_global_averagepool, tb_kernel_global_lppool;
extern const tb_kernel tb_kernel_softmax, tb_kernel_logsoftmax, tb_kernel_hardmax;
extern const tb_kernel tb_kernel_batchnorm, tb_kernel_instancenorm, tb_kernel_layernorm, tb_kernel_lrn;
extern const tb_kernel tb_kernel_reduce_sum, tb_kernel_reduce_mean, tb_kernel_reduce_max, tb_kernel_reduce_min,
    tb_kernel_reduce_prod, tb_kernel_reduce_l1, tb_kernel_reduce_l2, tb_kernel_reduce_logsumexp,
    tb_kernel_reduce_sumsquare, tb_kernel_argmax, tb_kernel_argmin;

extern const tb_kernel tb_kernel_einsum, tb_kernel_quantize_linear, tb_kernel_dequantize_linear, tb_kernel_matmul_integer, tb_kernel_qlinear_matmul;
extern const tb_kernel tb_kernel_conv_integer, tb_kernel_qlinear_conv;
static const tb_kernel *const kernels[] = {
    &tb_kernel_matmul, &tb_kernel_gemm, &tb_kernel_conv, &tb_kernel_conv_transpose,
    &tb_kernel_maxpool, &tb_kernel_averagepool, &tb_kernel_lppool, &tb_kernel_global_maxpool,
    &tb_kernel_global_averagepool, &tb_kernel_global_lppool,
    &tb_kernel_softmax, &tb_kernel_logsoftmax, &tb_kernel_hardmax,
    &tb_kernel_batchnorm, &tb_kernel_instancenorm, &tb_kernel_layernorm, &tb_kernel_lrn,
    &tb_kernel_reduce_sum, &tb_kernel_reduce_mean, &tb_kernel_reduce_max, &tb_kernel_reduce_min, &tb_kernel_reduce_prod,
    &tb_kernel_reduce_l1, &tb_kernel_reduce_l2, &tb_kernel_reduce_logsumexp, &tb_kernel_reduce_sumsquare,
    &tb_kernel_argmax, &tb_kernel_argmin,
    &tb_kernel_einsum, &tb_kernel_quantize_linear, &tb_kernel_dequantize_linear, &tb_kernel_matmul_integer, &tb_kernel_qlinear_matmul,
    &tb_kernel_conv_integer, &tb_kernel_qlinear_conv,
};
const tb_kernel_family tb_kernels_nn = {kernels, sizeof kernels / sizeof kernels[0]};
