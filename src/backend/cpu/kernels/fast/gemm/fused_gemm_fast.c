/* Level-2 tb::FusedGemm and tb::FusedMatMul for float32: the fast Gemm / MatMul with the node's activation
 * (activation, activation_alpha/beta/min/max, activation_approximate) and FusedMatMul's bias and residual
 * applied by the GEMM's epilogue while each tile is in cache, instead of more passes over the output. The
 * activation's row loops are the vec_ops table of the path's instruction set, the one the level-2
 * elementwise kernels use on the same CPU features. A FusedMatMul whose bias runs along A's rows (1-D B)
 * goes to the reference kernel. */
#include "backend/cpu/kernels/fast/gemm/fast_kernel.h"

extern const tb_kernel tb_kernel_fused_matmul;

static tb_status fused_run(tb_kernel_ctx *ctx, tb_gemm_path path, bool gemm) {
  if (!gemm && tb_fast_matmul_bias_by_rows(ctx)) return tb_kernel_fused_matmul.run(ctx);
  tb_gemm_epilogue act = {.vec = tb_fast_vec_ops(path)};
  tb_status st = tb_fast_read_act(ctx, &act);
  if (st != TB_OK) return st;
  return gemm ? tb_fast_gemm_run(ctx, path, &act) : tb_fast_matmul_run(ctx, path, &act);
}

static tb_status fused_prepare(tb_kernel_ctx *ctx, tb_gemm_path path, bool gemm, void **state) {
  const tb_gemm_params *p = ctx->params; /* FusedGemm's parameters start with Gemm's; FusedMatMul's B is never transposed */
  *state = NULL;
  return tb_fast_prepare_b(ctx, path, gemm && p && p->trans_b, state);
}

#define FUSED_ENTRY(op, OPNAME, is_gemm, accepts_fn, suffix, PATH, features)                                       \
  static tb_status run_##op##_##suffix(tb_kernel_ctx *ctx) { return fused_run(ctx, PATH, is_gemm); }               \
  static tb_status prepare_##op##_##suffix(tb_kernel_ctx *ctx, void **state) {                                    \
    return fused_prepare(ctx, PATH, is_gemm, state);                                                               \
  }                                                                                                                \
  const tb_kernel tb_kernel_##op##_f32_##suffix = {.domain = "tb", .name = OPNAME, .level = TB_KERNEL_FAST,                 \
                                                       .cpu_features = (features), .accepts = accepts_fn,           \
                                                       .run = run_##op##_##suffix,                                  \
                                                       .prepare = prepare_##op##_##suffix, .release = tb_fast_release};

FUSED_ENTRY(fused_gemm, "FusedGemm", true, tb_fast_gemm_accepts, avx512, TB_GEMM_AVX512, TB_FAST_FEATURES_AVX512)
FUSED_ENTRY(fused_gemm, "FusedGemm", true, tb_fast_gemm_accepts, avx2, TB_GEMM_AVX2, TB_FAST_FEATURES_AVX2)
FUSED_ENTRY(fused_gemm, "FusedGemm", true, tb_fast_gemm_accepts, portable, TB_GEMM_PORTABLE, 0)
FUSED_ENTRY(fused_matmul, "FusedMatMul", false, tb_fast_matmul_accepts, avx512, TB_GEMM_AVX512, TB_FAST_FEATURES_AVX512)
FUSED_ENTRY(fused_matmul, "FusedMatMul", false, tb_fast_matmul_accepts, avx2, TB_GEMM_AVX2, TB_FAST_FEATURES_AVX2)
FUSED_ENTRY(fused_matmul, "FusedMatMul", false, tb_fast_matmul_accepts, portable, TB_GEMM_PORTABLE, 0)
