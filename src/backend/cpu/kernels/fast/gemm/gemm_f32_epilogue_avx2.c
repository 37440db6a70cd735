/* The GEMM epilogue on one C tile with AVX2 (8 columns per step, a masked last step): the start
 * C = beta * C + bias + residual, the late bias and residual, and the piecewise-linear activations (Relu,
 * LeakyRelu, Clip), branch-free and with the same operations per element as the portable epilogue
 * (gemm_epilogue.c), which still runs the others row by row through the epilogue's vec_ops table (the AVX2
 * one on this path). The AVX-512 twin is gemm_f32_epilogue_avx512.c. Only these functions are built for
 * AVX2 (target attribute); the driver calls them only on the AVX2 path. */
#include "backend/cpu/kernels/fast/gemm/gemm_f32_internal.h"
#if defined(__x86_64__)
#include <immintrin.h>
#include "backend/cpu/kernels/fast/vec/transpose_avx2.h"

#define AVX2_TARGET __attribute__((target("avx2,fma")))

AVX2_TARGET void tb_gemm_tile_init_avx2(float *c, int64_t ldc, int64_t i0, int64_t j0, int64_t rows, int64_t cols,
                                        float beta, const tb_gemm_epilogue *ep) {
  const float *bias = ep ? ep->bias : NULL, *res = ep ? ep->residual : NULL;
  int64_t ldr = ep ? ep->ld_residual : 0;
  bool row_bias = bias && ep->bias_axis == 0;
  if (!bias && !res && beta == 1.0f) return;
  const __m256 zero = _mm256_setzero_ps(), vbeta = _mm256_set1_ps(beta);
  const __m256i tail = tb_lanes_below_avx2(cols % 8);
  for (int64_t i = 0; i < rows; i++) {
    float *ci = c + i * ldc;
    const float *ri = res ? res + (i0 + i) * ldr + j0 : NULL;
    const float *bj = bias && !row_bias ? bias + j0 : NULL;
    const __m256 bi = row_bias ? _mm256_set1_ps(bias[i0 + i]) : zero;
    for (int64_t j = 0; j < cols; j += 8) {
      int64_t left = cols - j;
      __m256 v = beta == 0.0f ? zero : tb_load8_avx2(ci + j, left, tail);
      if (beta != 0.0f && beta != 1.0f) v = _mm256_mul_ps(vbeta, v);
      if (bias || res) { /* (v + bias) + residual, the residual read before C is written */
        __m256 r = ri ? tb_load8_avx2(ri + j, left, tail) : zero;
        v = _mm256_add_ps(_mm256_add_ps(v, bj ? tb_load8_avx2(bj + j, left, tail) : bi), r);
      }
      tb_store8_avx2(ci + j, left, tail, v);
    }
  }
}

/* C += late bias, then += late residual (each add rounded, as the Add kernel's). */
static AVX2_TARGET void late_adds(float *c, int64_t ldc, int64_t i0, int64_t j0, int64_t rows, int64_t cols,
                                  const tb_gemm_epilogue *ep) {
  const float *bias = ep->late_bias ? ep->late_bias + j0 : NULL;
  const __m256i tail = tb_lanes_below_avx2(cols % 8);
  for (int64_t i = 0; i < rows; i++) {
    float *ci = c + i * ldc;
    const float *ri = ep->late_residual ? ep->late_residual + (i0 + i) * ep->ld_late_residual + j0 : NULL;
    for (int64_t j = 0; j < cols; j += 8) {
      int64_t left = cols - j;
      __m256 v = tb_load8_avx2(ci + j, left, tail);
      if (bias) v = _mm256_add_ps(v, tb_load8_avx2(bias + j, left, tail));
      if (ri) v = _mm256_add_ps(v, tb_load8_avx2(ri + j, left, tail));
      tb_store8_avx2(ci + j, left, tail, v);
    }
  }
}

AVX2_TARGET void tb_gemm_tile_act_avx2(float *c, int64_t ldc, int64_t i0, int64_t j0, int64_t rows, int64_t cols,
                                       const tb_gemm_epilogue *ep) {
  if (!ep) return;
  if (ep->late_bias || ep->late_residual) late_adds(c, ldc, i0, j0, rows, cols, ep);
  if (ep->act == 0) return;
  if (ep->act < 1 || ep->act > 3) {
    for (int64_t i = 0; i < rows; i++) tb_gemm_act_row(ep, c + i * ldc, cols);
    return;
  }
  const __m256 zero = _mm256_setzero_ps(), alpha = _mm256_set1_ps(ep->act_alpha);
  const __m256 lo = _mm256_set1_ps(ep->act_min), hi = _mm256_set1_ps(ep->act_max);
  const __m256i tail = tb_lanes_below_avx2(cols % 8);
  for (int64_t i = 0; i < rows; i++) {
    float *ci = c + i * ldc;
    for (int64_t j = 0; j < cols; j += 8) {
      int64_t left = cols - j;
      __m256 x = tb_load8_avx2(ci + j, left, tail), y;
      if (ep->act == 1) {
        y = _mm256_max_ps(zero, x); /* x when x is NaN or -0, like x < 0 ? 0 : x */
      } else if (ep->act == 2) {
        y = _mm256_blendv_ps(x, _mm256_mul_ps(x, alpha), _mm256_cmp_ps(x, zero, _CMP_LT_OQ));
      } else {
        y = _mm256_blendv_ps(x, hi, _mm256_cmp_ps(x, hi, _CMP_GT_OQ));
        y = _mm256_blendv_ps(y, lo, _mm256_cmp_ps(x, lo, _CMP_LT_OQ));
      }
      tb_store8_avx2(ci + j, left, tail, y);
    }
  }
}
#endif
