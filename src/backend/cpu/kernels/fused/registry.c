/* The CPU reference kernels of the fused family (the "tb" operators the O1 passes make). */
#include "backend/cpu/kernels/kernel.h"

extern const tb_kernel tb_kernel_fused_conv, tb_kernel_fused_gemm, tb_kernel_fused_matmul,
    tb_kernel_fused_layer_norm, tb_kernel_fused_gelu, tb_kernel_fused_attention, tb_kernel_fused_silu,
    tb_kernel_fused_mish;

static const tb_kernel *const kernels[] = {&tb_kernel_fused_conv,       &tb_kernel_fused_gemm,
                                               &tb_kernel_fused_matmul,     &tb_kernel_fused_layer_norm,
                                               &tb_kernel_fused_gelu,       &tb_kernel_fused_attention,
                                               &tb_kernel_fused_silu,       &tb_kernel_fused_mish};
const tb_kernel_family tb_kernels_fused = {kernels, sizeof kernels / sizeof kernels[0]};
