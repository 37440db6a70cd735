/* Level-2 Gemm for float32: Y = alpha * op(A) op(B) + beta * C on the AVX-512, AVX2 or portable path, split
 * over ctx->pool, with B packed once at prepare when it is a constant. C enters through the GEMM's
 * epilogue: a row or column vector (or scalar) as the bias (scaled by beta), a full C as the residual
 * (beta 1) or as the GEMM's own beta * C. tb::FusedGemm (fused_gemm_fast.c) adds its activation. */
#include <stdlib.h>
#include "backend/cpu/kernels/fast/gemm/fast_kernel.h"

/* C (rank cnd, shape cs) into the epilogue and beta of the GEMM writing y (m x n); *scaled is a
 * buffer to free afterwards. False when out of memory. */
static bool bind_c(const float *pc, size_t cnd, const int64_t *cs, int64_t m, int64_t n, float beta, float *y,
                   tb_gemm_epilogue *ep, float *gemm_beta, float **scaled) {
  int64_t rows = cnd == 2 ? cs[0] : 1, cols = cnd >= 1 ? cs[cnd - 1] : 1;
  *scaled = NULL;
  *gemm_beta = 0.0f;
  if (rows == m && cols == n && m > 1 && n > 1) {
    if (beta == 1.0f) {
      ep->residual = pc;
      ep->ld_residual = n;
    } else {
      for (int64_t i = 0; i < m * n; i++) y[i] = pc[i];
      *gemm_beta = beta;
    }
    return true;
  }
  bool per_row = rows == m && rows > 1; /* [m, 1] */
  int64_t len = per_row ? m : n;
  bool direct = beta == 1.0f && (per_row || cols == n);
  if (!direct) {
    *scaled = malloc((size_t)len * sizeof(float));
    if (!*scaled) return false;
    for (int64_t i = 0; i < len; i++) (*scaled)[i] = beta * (per_row ? pc[i] : pc[cols == 1 ? 0 : i]);
  }
  ep->bias = direct ? pc : *scaled;
  ep->bias_axis = per_row ? 0 : 1;
  return true;
}

tb_status tb_fast_gemm_run(tb_kernel_ctx *ctx, tb_gemm_path path, const tb_gemm_epilogue *act) {
  tb_fast_gemm g;
  tb_status st = tb_fast_check_f32(ctx, 3);
  if (st == TB_OK) st = tb_fast_gemm_begin(ctx, &g);
  if (st != TB_OK || g.m == 0 || g.n == 0) return st;
  const tb_tensor *a = g.a, *b = g.b, *c = g.c;
  const int64_t *as = tb_tensor_shape(a), *bs = tb_tensor_shape(b), *cs = g.cs;
  int64_t m = g.m, k = g.k, n = g.n;
  size_t cnd = g.cnd;
  tb_tensor *y = g.y;
  float *py = tb_tensor_host_data(y);
  tb_gemm_epilogue ep = {0};
  if (act) ep = *act;
  ep.bias = ep.residual = NULL;
  float gemm_beta = 0.0f, *scaled = NULL;
  if (c && !bind_c(tb_tensor_host_data(c), cnd, cs, m, n, g.beta, py, &ep, &gemm_beta, &scaled))
    return tb_kernel_error(ctx, TB_ERR_OUT_OF_MEMORY, "out of host memory for the scaled C");
  tb_gemm_operand oa = {.data = tb_tensor_host_data(a), .ld = as[1], .trans = g.trans_a != 0};
  tb_gemm_operand ob = tb_fast_operand_b(ctx, tb_tensor_host_data(b), bs[1], g.trans_b != 0, k, n);
  bool any = ep.bias || ep.residual || ep.act;
  bool ok = tb_gemm_f32_run(path, m, n, k, g.alpha, &oa, &ob, gemm_beta, py, n, any ? &ep : NULL, ctx->pool);
  free(scaled);
  if (!ok)
    return tb_kernel_error(ctx, TB_ERR_OUT_OF_MEMORY, "no memory for the GEMM packing buffers (%lld x %lld x %lld)",
                           (long long)m, (long long)n, (long long)k);
  return TB_OK;
}

bool tb_fast_gemm_accepts(const tb_kernel_query *q) {
  const tb_value_type *const *in = q->in;
  return q->n_inputs >= 2 && tb_fast_accepts_f32(in, q->n_inputs < 3 ? q->n_inputs : 3);
}

/* The prepare packs B as op(B) when transB says so; a bad transB attribute is left to run() to report. */
static tb_status prepare_path(tb_kernel_ctx *ctx, tb_gemm_path path, void **state) {
  tb_status st;
  const tb_gemm_params *p = tb_kernel_params(ctx, &st);
  *state = NULL;
  return p ? tb_fast_prepare_b(ctx, path, p->trans_b, state) : st;
}

#define GEMM_ENTRY(suffix, PATH, features)                                                                         \
  static tb_status run_##suffix(tb_kernel_ctx *ctx) { return tb_fast_gemm_run(ctx, PATH, NULL); }                   \
  static tb_status prepare_##suffix(tb_kernel_ctx *ctx, void **state) { return prepare_path(ctx, PATH, state); }     \
  const tb_kernel tb_kernel_gemm_f32_##suffix = {.domain = "", .name = "Gemm", .level = TB_KERNEL_FAST,                    \
                                                     .cpu_features = (features), .accepts = tb_fast_gemm_accepts,   \
                                                     .run = run_##suffix, .prepare = prepare_##suffix,              \
                                                     .release = tb_fast_release};

GEMM_ENTRY(avx512, TB_GEMM_AVX512, TB_FAST_FEATURES_AVX512)
GEMM_ENTRY(avx2, TB_GEMM_AVX2, TB_FAST_FEATURES_AVX2)
GEMM_ENTRY(portable, TB_GEMM_PORTABLE, 0)
