/* The AVX-512 kernels of the depthwise convolution with channels in lanes (conv_depthwise_lanes.h), 16
 * channels per vector: 16 x 16 transposes between the channels' planes and the pixel vectors (masked loads
 * and stores for the last tile), and the convolution of a block: nb (7 or 8) output pixels of a row keep
 * their accumulators in registers; a square 3x3, 5x5 or 7x7 kernel at stride 1 or 2 without dilation keeps
 * one kernel row's weights in registers and loads each input pixel of the row once for every output pixel
 * it is under (compile-time sizes, every loop unrolled); any other geometry takes one aligned load per tap
 * and pixel. Built for AVX-512F with target attributes; the driver calls it only when cpuid has AVX512F. */
#include "backend/cpu/kernels/fast/conv/conv_depthwise_lanes.h"
#if defined(__x86_64__)
#include <immintrin.h>

#define AVX512 __attribute__((target("avx512f,fma")))
#define INLINE_AVX512 AVX512 static inline __attribute__((always_inline))

enum { L = 16 };

INLINE_AVX512 __mmask16 lanes_below(int64_t n) {
  return n >= 16 ? (__mmask16)0xFFFF : n <= 0 ? (__mmask16)0 : (__mmask16)((1u << n) - 1u);
}

/* r[i][j] -> r[j][i] for 16 vectors of 16. */
INLINE_AVX512 void transpose16(__m512 r[16]) {
  __m512 a[16], b[16];
#pragma GCC unroll 8
  for (int i = 0; i < 8; i++) {
    a[2 * i] = _mm512_unpacklo_ps(r[2 * i], r[2 * i + 1]);
    a[2 * i + 1] = _mm512_unpackhi_ps(r[2 * i], r[2 * i + 1]);
  }
  /* b[4 j + c], 128-bit lane k: rows 4 j .. 4 j + 3 of column 4 k + c */
#pragma GCC unroll 4
  for (int j = 0; j < 4; j++) {
    __m512d a0 = _mm512_castps_pd(a[4 * j]), a1 = _mm512_castps_pd(a[4 * j + 1]);
    __m512d a2 = _mm512_castps_pd(a[4 * j + 2]), a3 = _mm512_castps_pd(a[4 * j + 3]);
    b[4 * j] = _mm512_castpd_ps(_mm512_unpacklo_pd(a0, a2));
    b[4 * j + 1] = _mm512_castpd_ps(_mm512_unpackhi_pd(a0, a2));
    b[4 * j + 2] = _mm512_castpd_ps(_mm512_unpacklo_pd(a1, a3));
    b[4 * j + 3] = _mm512_castpd_ps(_mm512_unpackhi_pd(a1, a3));
  }
#pragma GCC unroll 4
  for (int c = 0; c < 4; c++) {
    __m512 e0 = _mm512_shuffle_f32x4(b[c], b[4 + c], 0x88), e1 = _mm512_shuffle_f32x4(b[c], b[4 + c], 0xdd);
    __m512 f0 = _mm512_shuffle_f32x4(b[8 + c], b[12 + c], 0x88), f1 = _mm512_shuffle_f32x4(b[8 + c], b[12 + c], 0xdd);
    r[c] = _mm512_shuffle_f32x4(e0, f0, 0x88);
    r[4 + c] = _mm512_shuffle_f32x4(e1, f1, 0x88);
    r[8 + c] = _mm512_shuffle_f32x4(e0, f0, 0xdd);
    r[12 + c] = _mm512_shuffle_f32x4(e1, f1, 0xdd);
  }
}

AVX512 static void to_lanes(const float *const *src, int64_t n, float *dst, int64_t w, int64_t ldd) {
  int64_t row = 0, col = 0;
  for (int64_t p = 0; p < n; p += L) {
    __mmask16 m = lanes_below(n - p);
    __m512 v[16];
#pragma GCC unroll 16
    for (int l = 0; l < L; l++) v[l] = _mm512_maskz_loadu_ps(m, src[l] + p);
    transpose16(v);
    int q_end = n - p < L ? (int)(n - p) : L;
    for (int q = 0; q < q_end; q++) {
      _mm512_store_ps(dst + (row * ldd + col) * L, v[q]);
      if (++col == w) col = 0, row++;
    }
  }
}

AVX512 static void from_lanes(const float *src, int64_t n, float *dst, int64_t ld, const float *res, int nc) {
  for (int64_t p = 0; p < n; p += L) {
    __mmask16 m = lanes_below(n - p);
    __m512 v[16];
#pragma GCC unroll 16
    for (int q = 0; q < L; q++) v[q] = _mm512_load_ps(src + (p + q) * L);
    transpose16(v);
    for (int l = 0; l < nc; l++) {
      __m512 out = v[l];
      if (res) out = _mm512_add_ps(out, _mm512_maskz_loadu_ps(m, res + l * ld + p));
      _mm512_mask_storeu_ps(dst + l * ld + p, m, out);
    }
  }
}

/* Output pixels ox0 .. ox0 + NB of row oy (stored up to ow) for a K x K kernel at stride S, no dilation. */
INLINE_AVX512 void block_fixed(const tb_dwl_block *b, int64_t oy, int64_t ox0, int NB, int K, int S) {
  const int64_t tw = b->tw, ow = b->g->ow;
  __m512 acc[8];
  const __m512 bias = _mm512_load_ps(b->w + K * K * L);
#pragma GCC unroll 8
  for (int px = 0; px < NB; px++) acc[px] = bias;
#pragma GCC unroll 7
  for (int ky = 0; ky < K; ky++) {
    const float *r = b->t + ((oy * S + ky) * tw + ox0 * S) * L;
    __m512 wk[7];
#pragma GCC unroll 7
    for (int kx = 0; kx < K; kx++) wk[kx] = _mm512_load_ps(b->w + (ky * K + kx) * L);
#pragma GCC unroll 24
    for (int i = 0; i < (NB - 1) * S + K; i++) {
      const __m512 x = _mm512_load_ps(r + i * L);
#pragma GCC unroll 7
      for (int kx = 0; kx < K; kx++) {
        int d = i - kx;
        if (d >= 0 && d % S == 0 && d / S < NB) acc[d / S] = _mm512_fmadd_ps(wk[kx], x, acc[d / S]);
      }
    }
  }
  float *o = b->o + (oy * ow + ox0) * L;
  int64_t n = ow - ox0;
#pragma GCC unroll 8
  for (int px = 0; px < NB; px++)
    if (px < n) _mm512_store_ps(o + px * L, acc[px]);
}

/* Output rows oy and oy + 1 (oy + 1 < oh), pixels ox0 .. ox0 + NB, for a K x K kernel at stride 1, no
 * dilation: each of the K + 1 input rows under the two output rows is loaded once per pixel and added into
 * both (2 NB independent accumulator chains; the weights are FMA memory operands). */
INLINE_AVX512 void block2_fixed(const tb_dwl_block *b, int64_t oy, int64_t ox0, int NB, int K) {
  const int64_t tw = b->tw, ow = b->g->ow;
  const float *w = b->w;
  __m512 acc0[8], acc1[8];
  const __m512 bias = _mm512_load_ps(w + K * K * L);
#pragma GCC unroll 8
  for (int px = 0; px < NB; px++) acc0[px] = acc1[px] = bias;
#pragma GCC unroll 8
  for (int t = 0; t < K + 1; t++) {
    const float *r = b->t + ((oy + t) * tw + ox0) * L;
#pragma GCC unroll 16
    for (int i = 0; i < NB - 1 + K; i++) {
      const __m512 x = _mm512_load_ps(r + i * L);
#pragma GCC unroll 7
      for (int kx = 0; kx < K; kx++) {
        int d = i - kx;
        if (d < 0 || d >= NB) continue;
        if (t < K) acc0[d] = _mm512_fmadd_ps(_mm512_load_ps(w + (t * K + kx) * L), x, acc0[d]);
        if (t >= 1) acc1[d] = _mm512_fmadd_ps(_mm512_load_ps(w + ((t - 1) * K + kx) * L), x, acc1[d]);
      }
    }
  }
  float *o = b->o + (oy * ow + ox0) * L;
  int64_t n = ow - ox0;
#pragma GCC unroll 8
  for (int px = 0; px < NB; px++)
    if (px < n) {
      _mm512_store_ps(o + px * L, acc0[px]);
      _mm512_store_ps(o + (ow + px) * L, acc1[px]);
    }
}

/* The same for any kernel, strides and dilations: one weight load per tap, one input load per FMA. */
INLINE_AVX512 void block_any(const tb_dwl_block *b, int64_t oy, int64_t ox0, int NB) {
  const tb_conv_geom *g = b->g;
  const int64_t tw = b->tw, ow = g->ow, step = g->sw * L;
  __m512 acc[8];
  const float *w = b->w;
  const __m512 bias = _mm512_load_ps(w + g->kh * g->kw * L);
#pragma GCC unroll 8
  for (int px = 0; px < NB; px++) acc[px] = bias;
  for (int64_t ky = 0; ky < g->kh; ky++) {
    const float *r = b->t + ((oy * g->sh + ky * g->dh) * tw + ox0 * g->sw) * L;
    for (int64_t kx = 0; kx < g->kw; kx++, w += L, r += g->dw * L) {
      const __m512 wv = _mm512_load_ps(w);
#pragma GCC unroll 8
      for (int px = 0; px < NB; px++) acc[px] = _mm512_fmadd_ps(wv, _mm512_load_ps(r + px * step), acc[px]);
    }
  }
  float *o = b->o + (oy * ow + ox0) * L;
  int64_t n = ow - ox0;
#pragma GCC unroll 8
  for (int px = 0; px < NB; px++)
    if (px < n) _mm512_store_ps(o + px * L, acc[px]);
}

/* Stride 1 takes two output rows at a time (block2_fixed), stride 2 one. */
#define FIXED(NB, K, S)                                                                    \
  AVX512 static void conv_##NB##_##K##_##S(const tb_dwl_block *b) {                        \
    int64_t oy = 0;                                                                        \
    if (S == 1)                                                                            \
      for (; oy + 1 < b->g->oh; oy += 2)                                                   \
        for (int64_t ox0 = 0; ox0 < b->g->ow; ox0 += NB) block2_fixed(b, oy, ox0, NB, K); \
    for (; oy < b->g->oh; oy++)                                                            \
      for (int64_t ox0 = 0; ox0 < b->g->ow; ox0 += NB) block_fixed(b, oy, ox0, NB, K, S);  \
  }
FIXED(7, 3, 1)
FIXED(7, 3, 2)
FIXED(7, 5, 1)
FIXED(7, 5, 2)
FIXED(7, 7, 1)
FIXED(7, 7, 2)
FIXED(8, 3, 1)
FIXED(8, 3, 2)
FIXED(8, 5, 1)
FIXED(8, 5, 2)
FIXED(8, 7, 1)
FIXED(8, 7, 2)

AVX512 static void conv_any_7(const tb_dwl_block *b) {
  for (int64_t oy = 0; oy < b->g->oh; oy++)
    for (int64_t ox0 = 0; ox0 < b->g->ow; ox0 += 7) block_any(b, oy, ox0, 7);
}
AVX512 static void conv_any_8(const tb_dwl_block *b) {
  for (int64_t oy = 0; oy < b->g->oh; oy++)
    for (int64_t ox0 = 0; ox0 < b->g->ow; ox0 += 8) block_any(b, oy, ox0, 8);
}

/* [nb == 8][K / 2 - 1][S - 1] */
static void (*const fixed[2][3][2])(const tb_dwl_block *) = {
    {{conv_7_3_1, conv_7_3_2}, {conv_7_5_1, conv_7_5_2}, {conv_7_7_1, conv_7_7_2}},
    {{conv_8_3_1, conv_8_3_2}, {conv_8_5_1, conv_8_5_2}, {conv_8_7_1, conv_8_7_2}},
};

static void conv(const tb_dwl_block *b) {
  const tb_conv_geom *g = b->g;
  bool square = g->kh == g->kw && (g->kh == 3 || g->kh == 5 || g->kh == 7) && g->sh == g->sw &&
                (g->sh == 1 || g->sh == 2) && g->dh == 1 && g->dw == 1;
  if (square) fixed[b->nb == 8][g->kh / 2 - 1][g->sh - 1](b);
  else if (b->nb == 8) conv_any_8(b);
  else conv_any_7(b);
}

const tb_dwl_impl tb_dwl_avx512 = {L, to_lanes, from_lanes, conv};
#else
const tb_dwl_impl tb_dwl_avx512 = {0, NULL, NULL, NULL};
#endif
