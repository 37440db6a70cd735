/* The GEMM epilogue on one C tile with AVX-512 (16 columns per step, a masked last step): the start
 * C = beta * C + bias + residual, the late bias and residual, and the piecewise-linear activations (Relu,
 * LeakyRelu, Clip), branch-free and with the same operations per element as the portable epilogue
 * (gemm_epilogue.c), which still runs the others row by row: Sigmoid, Tanh and Gelu through the
 * epilogue's vec_ops table (the AVX-512 one on this path), HardSigmoid and HardSwish per element.
 * Only these functions are built for AVX-512 (target attribute); the driver calls them only on the
 * AVX-512 path. */
#include "backend/cpu/kernels/fast/gemm/gemm_f32_internal.h"
#if defined(__x86_64__)
#include <immintrin.h>

#define AVX512_TARGET __attribute__((target("avx512f,avx512bw,avx512vl,fma")))

static inline AVX512_TARGET __mmask16 tail_mask(int64_t left) {
  return left >= 16 ? (__mmask16)0xFFFF : (__mmask16)((1u << left) - 1);
}

AVX512_TARGET void tb_gemm_tile_init_avx512(float *c, int64_t ldc, int64_t i0, int64_t j0, int64_t rows, int64_t cols,
                                            float beta, const tb_gemm_epilogue *ep) {
  const float *bias = ep ? ep->bias : NULL, *res = ep ? ep->residual : NULL;
  int64_t ldr = ep ? ep->ld_residual : 0;
  bool row_bias = bias && ep->bias_axis == 0;
  if (!bias && !res && beta == 1.0f) return;
  const __m512 zero = _mm512_setzero_ps(), vbeta = _mm512_set1_ps(beta);
  for (int64_t i = 0; i < rows; i++) {
    float *ci = c + i * ldc;
    const float *ri = res ? res + (i0 + i) * ldr + j0 : NULL;
    const float *bj = bias && !row_bias ? bias + j0 : NULL;
    const __m512 bi = row_bias ? _mm512_set1_ps(bias[i0 + i]) : zero;
    for (int64_t j = 0; j < cols; j += 16) {
      __mmask16 m = tail_mask(cols - j);
      __m512 v = beta == 0.0f ? zero : _mm512_maskz_loadu_ps(m, ci + j);
      if (beta != 0.0f && beta != 1.0f) v = _mm512_mul_ps(vbeta, v);
      if (bias || res) { /* (v + bias) + residual, the residual read before C is written */
        __m512 r = ri ? _mm512_maskz_loadu_ps(m, ri + j) : zero;
        v = _mm512_add_ps(_mm512_add_ps(v, bj ? _mm512_maskz_loadu_ps(m, bj + j) : bi), r);
      }
      _mm512_mask_storeu_ps(ci + j, m, v);
    }
  }
}

/* C += late bias, then += late residual (each add rounded, as the Add kernel's). */
static AVX512_TARGET void late_adds(float *c, int64_t ldc, int64_t i0, int64_t j0, int64_t rows, int64_t cols,
                                    const tb_gemm_epilogue *ep) {
  const float *bias = ep->late_bias ? ep->late_bias + j0 : NULL;
  for (int64_t i = 0; i < rows; i++) {
    float *ci = c + i * ldc;
    const float *ri = ep->late_residual ? ep->late_residual + (i0 + i) * ep->ld_late_residual + j0 : NULL;
    for (int64_t j = 0; j < cols; j += 16) {
      __mmask16 m = tail_mask(cols - j);
      __m512 v = _mm512_maskz_loadu_ps(m, ci + j);
      if (bias) v = _mm512_add_ps(v, _mm512_maskz_loadu_ps(m, bias + j));
      if (ri) v = _mm512_add_ps(v, _mm512_maskz_loadu_ps(m, ri + j));
      _mm512_mask_storeu_ps(ci + j, m, v);
    }
  }
}

AVX512_TARGET void tb_gemm_tile_act_avx512(float *c, int64_t ldc, int64_t i0, int64_t j0, int64_t rows, int64_t cols,
                                           const tb_gemm_epilogue *ep) {
  if (!ep) return;
  if (ep->late_bias || ep->late_residual) late_adds(c, ldc, i0, j0, rows, cols, ep);
  if (ep->act == 0) return;
  if (ep->act < 1 || ep->act > 3) {
    for (int64_t i = 0; i < rows; i++) tb_gemm_act_row(ep, c + i * ldc, cols);
    return;
  }
  const __m512 zero = _mm512_setzero_ps(), alpha = _mm512_set1_ps(ep->act_alpha);
  const __m512 lo = _mm512_set1_ps(ep->act_min), hi = _mm512_set1_ps(ep->act_max);
  for (int64_t i = 0; i < rows; i++) {
    float *ci = c + i * ldc;
    for (int64_t j = 0; j < cols; j += 16) {
      __mmask16 m = tail_mask(cols - j);
      __m512 x = _mm512_maskz_loadu_ps(m, ci + j), y;
      if (ep->act == 1) {
        y = _mm512_max_ps(zero, x); /* x when x is NaN or -0, like x < 0 ? 0 : x */
      } else if (ep->act == 2) {
        y = _mm512_mask_mul_ps(x, _mm512_cmp_ps_mask(x, zero, _CMP_LT_OQ), x, alpha);
      } else {
        y = _mm512_mask_mov_ps(x, _mm512_cmp_ps_mask(x, hi, _CMP_GT_OQ), hi);
        y = _mm512_mask_mov_ps(y, _mm512_cmp_ps_mask(x, lo, _CMP_LT_OQ), lo);
      }
      _mm512_mask_storeu_ps(ci + j, m, y);
    }
  }
}
#endif
