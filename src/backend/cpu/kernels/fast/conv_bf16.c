/* Level-3 (precision bf16, fp32 accumulation) Conv and tb::FusedConv: the level-2 convolution driver
 * (conv_fast.c: implicit GEMM, 1x1 as plain GEMM, weights packed once at prepare, patches packed on demand,
 * epilogue in the GEMM) on the bf16 GEMM (gemm_bf16.h, AVX512-BF16 or portable), which rounds the weights
 * and the input patches to bf16 while packing them. Depthwise convolutions keep the direct fp32 path: they
 * are bound by memory, not by multiplies, so bf16 would only lose precision. */
#include "backend/cpu/kernels/fast/conv_fast.h"
#include "backend/cpu/kernels/fast/gemm_bf16.h"

static void *bf16_pack(int path, const float *w, int64_t mg, int64_t k) {
  tb_gemm_bf16_operand a = {.data = w, .ld = k};
  return tb_gemm_bf16_pack_a((tb_gemm_bf16_path)path, &a, mg, k);
}

static void bf16_free(void *packed) { tb_gemm_bf16_packed_free(packed); }

static bool bf16_run(int path, int64_t m, int64_t n, int64_t k, const void *a, const float *b, int64_t ldb,
                     tb_conv_patches *patches, float *c, int64_t ldc, const tb_gemm_epilogue *ep, struct tb_pool *pool) {
  tb_gemm_bf16_operand oa = {.packed = a}, ob = {.data = b, .ld = ldb};
  if (!b) ob = (tb_gemm_bf16_operand){.pack = tb_conv_pack_patches, .pack_ctx = patches};
  return tb_gemm_bf16_run((tb_gemm_bf16_path)path, m, n, k, 1.0f, &oa, &ob, 0.0f, c, ldc, ep, pool);
}

static const tb_conv_gemm bf16_gemm = {bf16_pack, bf16_free, bf16_run};

#define BF16_ENTRIES(suffix, path, dw_path)                                                                        \
  static tb_status conv_run_##suffix(tb_kernel_ctx *ctx) { return tb_conv_run(ctx, &bf16_gemm, path, dw_path, false); } \
  static tb_status fused_run_##suffix(tb_kernel_ctx *ctx) { return tb_conv_run(ctx, &bf16_gemm, path, dw_path, true); } \
  static tb_status prepare_##suffix(tb_kernel_ctx *ctx, void **state) {                                            \
    return tb_conv_prepare(ctx, state, &bf16_gemm, path);                                                          \
  }
BF16_ENTRIES(avx512bf16, TB_GEMM_BF16_AVX512BF16, TB_GEMM_AVX512)
BF16_ENTRIES(portable, TB_GEMM_BF16_PORTABLE, TB_GEMM_PORTABLE)

#define AVX512BF16_FEATURES \
  (TB_FEATURE_BIT(TB_FEATURE_AVX512F) | TB_FEATURE_BIT(TB_FEATURE_AVX512BW) | TB_FEATURE_BIT(TB_FEATURE_AVX512BF16))
#define BF16_KERNEL(dom, op, features, run_fn, prep)                                                               \
  {.domain = dom, .name = op, .level = 3, .cpu_features = features, .accepts = tb_conv_accepts, .run = run_fn,    \
   .prepare = prep, .release = tb_conv_release, .precision = "bf16"}

const tb_cpu_kernel tb_kernel_conv_bf16_avx512bf16 =
    BF16_KERNEL("", "Conv", AVX512BF16_FEATURES, conv_run_avx512bf16, prepare_avx512bf16);
const tb_cpu_kernel tb_kernel_conv_bf16_portable = BF16_KERNEL("", "Conv", 0, conv_run_portable, prepare_portable);
const tb_cpu_kernel tb_kernel_fused_conv_bf16_avx512bf16 =
    BF16_KERNEL("tb", "FusedConv", AVX512BF16_FEATURES, fused_run_avx512bf16, prepare_avx512bf16);
const tb_cpu_kernel tb_kernel_fused_conv_bf16_portable = BF16_KERNEL("tb", "FusedConv", 0, fused_run_portable, prepare_portable);
