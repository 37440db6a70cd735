/* The grouped direct convolution's AVX2+FMA micro-kernel (conv_grouped.h): 4 output channels by 1 to 3
 * vectors of up to 8 output pixels (up to 12 ymm accumulators); per input channel and tap, one load per
 * vector and one broadcast per channel feed 4 x vectors fused multiply-adds. The store adds bias and
 * residual, applies Relu / LeakyRelu / Clip with the epilogue's rules (a NaN passes through) and writes
 * each vector's pixels through a masked store. Only this file's functions are built for AVX2 (target attribute); the
 * driver calls them only when cpuid has AVX2 and FMA. */
#include "backend/cpu/kernels/fast/conv/conv_grouped.h"
#if defined(__x86_64__)
#include <immintrin.h>

#define AVX2_TARGET __attribute__((target("avx2,fma")))
enum { OC = TB_CONV_GROUPED_OC, LANES = 8, MAX_V = 3 };

static inline __attribute__((always_inline)) AVX2_TARGET __m256 select_lt(__m256 a, __m256 bound, __m256 repl) {
  return _mm256_blendv_ps(a, repl, _mm256_cmp_ps(a, bound, _CMP_LT_OQ)); /* a < bound ? repl : a (NaN stays) */
}

static inline __attribute__((always_inline)) AVX2_TARGET void tile_nv(const tb_conv_grouped_tile *t, int nv) {
  __m256 acc[OC][MAX_V];
#pragma GCC unroll 4
  for (int o = 0; o < OC; o++)
#pragma GCC unroll 3
    for (int v = 0; v < MAX_V; v++)
      if (v < nv) acc[o][v] = _mm256_setzero_ps();
  const float *w = t->w;
  for (int64_t c = 0; c < t->cg; c++) {
    const float *s = t->src + c * t->plane;
    for (int k = 0; k < t->n_taps; k++, w += OC) {
      const float *sp = s + t->tap_off[k];
      __m256 x[MAX_V];
#pragma GCC unroll 3
      for (int v = 0; v < MAX_V; v++)
        if (v < nv) x[v] = _mm256_loadu_ps(sp + t->src_off[v]);
#pragma GCC unroll 4
      for (int o = 0; o < OC; o++) {
        __m256 wv = _mm256_broadcast_ss(w + o);
#pragma GCC unroll 3
        for (int v = 0; v < MAX_V; v++)
          if (v < nv) acc[o][v] = _mm256_fmadd_ps(wv, x[v], acc[o][v]);
      }
    }
  }
  const __m256 zero = _mm256_setzero_ps(), alpha = _mm256_set1_ps(t->act_alpha);
  const __m256 lo = _mm256_set1_ps(t->act_min), hi = _mm256_set1_ps(t->act_max);
  const __m256i lane = _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7);
#pragma GCC unroll 4
  for (int o = 0; o < OC; o++) {
    float *y = t->y + o * t->ldy;
    const float *r = t->res ? t->res + o * t->ldy : NULL;
    __m256 b = _mm256_set1_ps(t->bias ? t->bias[o] : 0.0f);
#pragma GCC unroll 3
    for (int v = 0; v < MAX_V; v++) {
      if (v >= nv) break;
      __m256i m = _mm256_cmpgt_epi32(_mm256_set1_epi32(t->len[v]), lane);
      __m256 a = _mm256_add_ps(acc[o][v], b);
      if (r) a = _mm256_add_ps(a, _mm256_maskload_ps(r + t->y_off[v], m));
      if (t->act == 1) {
        a = select_lt(a, zero, zero);
      } else if (t->act == 2) {
        a = select_lt(a, zero, _mm256_mul_ps(a, alpha));
      } else if (t->act == 3) {
        a = select_lt(a, lo, lo);
        a = _mm256_blendv_ps(a, hi, _mm256_cmp_ps(a, hi, _CMP_GT_OQ));
      }
      _mm256_maskstore_ps(y + t->y_off[v], m, a);
    }
  }
}

AVX2_TARGET static void tile_avx2(const tb_conv_grouped_tile *t) {
  switch (t->vectors) {
    case 1: tile_nv(t, 1); break;
    case 2: tile_nv(t, 2); break;
    default: tile_nv(t, 3); break;
  }
}

const tb_conv_grouped_impl tb_conv_grouped_avx2 = {.lanes = LANES, .max_vectors = MAX_V, .tile = tile_avx2};
#endif
