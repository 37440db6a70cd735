/* The level-2 (fast) CPU kernels: fp32 MatMul, Gemm, convolutions, ConvTranspose, Resize, recurrences and
 * attention, the layout copies (Slice, Squeeze, Unsqueeze, Concat), and the level-3 bf16 ones; best
 * instruction set first (the executor keeps the first of equal level whose features the CPU has). */
#include "backend/cpu/kernels/kernel.h"
#include "backend/cpu/kernels/fast/layout/layout_kernels.h"
#include "backend/cpu/kernels/fast/vec/vec_registry.h"

extern const tb_kernel tb_kernel_matmul_f32_avx512, tb_kernel_matmul_f32_avx2, tb_kernel_matmul_f32_portable;
extern const tb_kernel tb_kernel_gemm_f32_avx512, tb_kernel_gemm_f32_avx2, tb_kernel_gemm_f32_portable;
extern const tb_kernel tb_kernel_fused_gemm_f32_avx512, tb_kernel_fused_gemm_f32_avx2, tb_kernel_fused_gemm_f32_portable;
extern const tb_kernel tb_kernel_fused_matmul_f32_avx512, tb_kernel_fused_matmul_f32_avx2,
    tb_kernel_fused_matmul_f32_portable;
extern const tb_kernel tb_kernel_lstm_f32_avx512, tb_kernel_lstm_f32_avx2, tb_kernel_lstm_f32_portable;
extern const tb_kernel tb_kernel_lstm_bf16_avx512bf16, tb_kernel_lstm_bf16_portable; /* level 3: bf16 */
extern const tb_kernel tb_kernel_gru_f32_avx512, tb_kernel_gru_f32_avx2, tb_kernel_gru_f32_portable;
extern const tb_kernel tb_kernel_attention_f32_avx512, tb_kernel_attention_f32_avx2, tb_kernel_attention_f32_portable;
extern const tb_kernel tb_kernel_attention_bf16_avx512bf16; /* level 3: bf16 (fp32 below it without AVX512-BF16) */
extern const tb_kernel tb_kernel_conv_f32_avx512, tb_kernel_conv_f32_avx2, tb_kernel_conv_f32_portable;
extern const tb_kernel tb_kernel_fused_conv_f32_avx512, tb_kernel_fused_conv_f32_avx2, tb_kernel_fused_conv_f32_portable;
extern const tb_kernel tb_kernel_conv_transpose_f32_avx512, tb_kernel_conv_transpose_f32_avx2,
    tb_kernel_conv_transpose_f32_portable;
extern const tb_kernel tb_kernel_resize_f32_avx512, tb_kernel_resize_f32_avx2, tb_kernel_resize_f32_portable;
extern const tb_kernel tb_kernel_upsample_f32_avx512, tb_kernel_upsample_f32_avx2, tb_kernel_upsample_f32_portable;
extern const tb_kernel tb_kernel_conv_bf16_amx, tb_kernel_fused_conv_bf16_amx; /* level 3: AMX tiles */
extern const tb_kernel tb_kernel_conv_bf16_avx512bf16, tb_kernel_conv_bf16_portable;
extern const tb_kernel tb_kernel_fused_conv_bf16_avx512bf16, tb_kernel_fused_conv_bf16_portable;
extern const tb_kernel tb_kernel_matmul_bf16_amx, tb_kernel_gemm_bf16_amx, tb_kernel_fused_matmul_bf16_amx,
    tb_kernel_fused_gemm_bf16_amx; /* level 3: bf16 on AMX tiles (AVX512-BF16 when the AMX self-check fails) */
extern const tb_kernel tb_kernel_matmul_bf16_avx512bf16, tb_kernel_matmul_bf16_portable, tb_kernel_gemm_bf16_avx512bf16,
    tb_kernel_gemm_bf16_portable, tb_kernel_fused_matmul_bf16_avx512bf16, tb_kernel_fused_matmul_bf16_portable,
    tb_kernel_fused_gemm_bf16_avx512bf16, tb_kernel_fused_gemm_bf16_portable; /* level 3: bf16 */
static const tb_kernel *const kernels[] = {
    &tb_kernel_matmul_f32_avx512, &tb_kernel_matmul_f32_avx2, &tb_kernel_matmul_f32_portable,
    &tb_kernel_gemm_f32_avx512,   &tb_kernel_gemm_f32_avx2,   &tb_kernel_gemm_f32_portable,
    &tb_kernel_fused_gemm_f32_avx512, &tb_kernel_fused_gemm_f32_avx2, &tb_kernel_fused_gemm_f32_portable,
    &tb_kernel_fused_matmul_f32_avx512, &tb_kernel_fused_matmul_f32_avx2, &tb_kernel_fused_matmul_f32_portable,
    &tb_kernel_lstm_f32_avx512, &tb_kernel_lstm_f32_avx2, &tb_kernel_lstm_f32_portable,
    &tb_kernel_gru_f32_avx512, &tb_kernel_gru_f32_avx2, &tb_kernel_gru_f32_portable,
    &tb_kernel_attention_f32_avx512, &tb_kernel_attention_f32_avx2, &tb_kernel_attention_f32_portable,
    &tb_kernel_conv_f32_avx512, &tb_kernel_conv_f32_avx2, &tb_kernel_conv_f32_portable,
    &tb_kernel_fused_conv_f32_avx512, &tb_kernel_fused_conv_f32_avx2, &tb_kernel_fused_conv_f32_portable,
    &tb_kernel_conv_transpose_f32_avx512, &tb_kernel_conv_transpose_f32_avx2, &tb_kernel_conv_transpose_f32_portable,
    &tb_kernel_resize_f32_avx512, &tb_kernel_resize_f32_avx2, &tb_kernel_resize_f32_portable,
    &tb_kernel_upsample_f32_avx512, &tb_kernel_upsample_f32_avx2, &tb_kernel_upsample_f32_portable,
    &tb_kernel_conv_bf16_amx, &tb_kernel_conv_bf16_avx512bf16, &tb_kernel_conv_bf16_portable,
    &tb_kernel_fused_conv_bf16_amx, &tb_kernel_fused_conv_bf16_avx512bf16, &tb_kernel_fused_conv_bf16_portable,
    &tb_kernel_matmul_bf16_amx, &tb_kernel_matmul_bf16_avx512bf16, &tb_kernel_matmul_bf16_portable,
    &tb_kernel_gemm_bf16_amx, &tb_kernel_gemm_bf16_avx512bf16, &tb_kernel_gemm_bf16_portable,
    &tb_kernel_fused_matmul_bf16_amx, &tb_kernel_fused_matmul_bf16_avx512bf16, &tb_kernel_fused_matmul_bf16_portable,
    &tb_kernel_fused_gemm_bf16_amx, &tb_kernel_fused_gemm_bf16_avx512bf16, &tb_kernel_fused_gemm_bf16_portable,
    &tb_kernel_lstm_bf16_avx512bf16, &tb_kernel_lstm_bf16_portable,
    &tb_kernel_attention_bf16_avx512bf16,
    TB_LAYOUT_KERNEL_ENTRIES /* Slice, Squeeze, Unsqueeze, Concat without per-run inference (layout/) */
    TB_VEC_KERNEL_ENTRIES /* vectorised elementwise, softmax, norms, reductions, pools (vec_*.c) */
};
const tb_kernel_family tb_kernels_fast = {kernels, sizeof kernels / sizeof kernels[0]};
