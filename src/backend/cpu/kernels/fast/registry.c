/* The level-2 (fast) CPU kernels: fp32 MatMul and Gemm, best instruction set first (the executor keeps
 * the first of equal level whose features the CPU has). */
#include "backend/cpu/kernels/kernel.h"

extern const tb_cpu_kernel tb_kernel_matmul_f32_avx512, tb_kernel_matmul_f32_avx2, tb_kernel_matmul_f32_portable;
extern const tb_cpu_kernel tb_kernel_gemm_f32_avx512, tb_kernel_gemm_f32_avx2, tb_kernel_gemm_f32_portable;
static const tb_cpu_kernel *const kernels[] = {
    &tb_kernel_matmul_f32_avx512, &tb_kernel_matmul_f32_avx2, &tb_kernel_matmul_f32_portable,
    &tb_kernel_gemm_f32_avx512,   &tb_kernel_gemm_f32_avx2,   &tb_kernel_gemm_f32_portable,
};
const tb_kernel_family tb_kernels_fast = {kernels, sizeof kernels / sizeof kernels[0]};
