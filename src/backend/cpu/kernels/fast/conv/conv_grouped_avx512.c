/* The grouped direct convolution's AVX-512 micro-kernel (conv_grouped.h): 4 output channels by 1 to 4
 * vectors of up to 16 output pixels (up to 16 zmm accumulators); per input channel and tap, one load per
 * vector and one broadcast per channel feed 4 x vectors fused multiply-adds. The store adds bias and
 * residual, applies Relu / LeakyRelu / Clip with the epilogue's rules (a NaN passes through) and masks each
 * vector to its pixels. Only this file's functions are built for AVX-512 (target attribute); the driver calls them only
 * when cpuid has AVX512F. */
#include "backend/cpu/kernels/fast/conv/conv_grouped.h"
#if defined(__x86_64__)
#include <immintrin.h>

#define AVX512_TARGET __attribute__((target("avx512f,fma")))
enum { OC = TB_CONV_GROUPED_OC, LANES = 16, MAX_V = 4 };

static inline __attribute__((always_inline)) AVX512_TARGET void tile_nv(const tb_conv_grouped_tile *t, int nv) {
  __m512 acc[OC][MAX_V];
#pragma GCC unroll 4
  for (int o = 0; o < OC; o++)
#pragma GCC unroll 4
    for (int v = 0; v < MAX_V; v++)
      if (v < nv) acc[o][v] = _mm512_setzero_ps();
  const float *w = t->w;
  for (int64_t c = 0; c < t->cg; c++) {
    const float *s = t->src + c * t->plane;
    for (int k = 0; k < t->n_taps; k++, w += OC) {
      const float *sp = s + t->tap_off[k];
      __m512 x[MAX_V];
#pragma GCC unroll 4
      for (int v = 0; v < MAX_V; v++)
        if (v < nv) x[v] = _mm512_loadu_ps(sp + t->src_off[v]);
#pragma GCC unroll 4
      for (int o = 0; o < OC; o++) {
        __m512 wv = _mm512_set1_ps(w[o]);
#pragma GCC unroll 4
        for (int v = 0; v < MAX_V; v++)
          if (v < nv) acc[o][v] = _mm512_fmadd_ps(wv, x[v], acc[o][v]);
      }
    }
  }
  const __m512 zero = _mm512_setzero_ps(), alpha = _mm512_set1_ps(t->act_alpha);
  const __m512 lo = _mm512_set1_ps(t->act_min), hi = _mm512_set1_ps(t->act_max);
#pragma GCC unroll 4
  for (int o = 0; o < OC; o++) {
    float *y = t->y + o * t->ldy;
    const float *r = t->res ? t->res + o * t->ldy : NULL;
    __m512 b = _mm512_set1_ps(t->bias ? t->bias[o] : 0.0f);
#pragma GCC unroll 4
    for (int v = 0; v < MAX_V; v++) {
      if (v >= nv) break;
      __mmask16 m = t->len[v] >= LANES ? (__mmask16)0xFFFF : (__mmask16)((1u << t->len[v]) - 1);
      __m512 a = _mm512_add_ps(acc[o][v], b);
      if (r) a = _mm512_add_ps(a, _mm512_maskz_loadu_ps(m, r + t->y_off[v]));
      if (t->act == 1) {
        a = _mm512_mask_mov_ps(a, _mm512_cmp_ps_mask(a, zero, _CMP_LT_OQ), zero);
      } else if (t->act == 2) {
        a = _mm512_mask_mul_ps(a, _mm512_cmp_ps_mask(a, zero, _CMP_LT_OQ), a, alpha);
      } else if (t->act == 3) {
        a = _mm512_mask_mov_ps(a, _mm512_cmp_ps_mask(a, lo, _CMP_LT_OQ), lo);
        a = _mm512_mask_mov_ps(a, _mm512_cmp_ps_mask(a, hi, _CMP_GT_OQ), hi);
      }
      _mm512_mask_storeu_ps(y + t->y_off[v], m, a);
    }
  }
}

AVX512_TARGET static void tile_avx512(const tb_conv_grouped_tile *t) {
  switch (t->vectors) {
    case 1: tile_nv(t, 1); break;
    case 2: tile_nv(t, 2); break;
    case 3: tile_nv(t, 3); break;
    default: tile_nv(t, 4); break;
  }
}

const tb_conv_grouped_impl tb_conv_grouped_avx512 = {.lanes = LANES, .max_vectors = MAX_V, .tile = tile_avx512};
#endif
