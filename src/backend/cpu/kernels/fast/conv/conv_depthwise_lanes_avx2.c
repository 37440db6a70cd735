/* The AVX2+FMA kernels of the depthwise convolution with channels in lanes (conv_depthwise_lanes.h), 8
 * channels per vector: 8 x 8 transposes between the channels' planes and the pixel vectors (maskload and
 * maskstore for the last tile), and the convolution of a block: nb (7 or 8) output pixels of a row keep
 * their accumulators in registers; a square 3x3, 5x5 or 7x7 kernel at stride 1 or 2 without dilation keeps
 * one kernel row's weights in registers (where the 16 registers allow; the compiler reads the others from
 * memory) and loads each input pixel of the row once for every output pixel it is under (compile-time
 * sizes, every loop unrolled); any other geometry takes one aligned load per tap and pixel. Built for
 * AVX2+FMA with target attributes; the driver calls it only when cpuid has both. */
#include "backend/cpu/kernels/fast/conv/conv_depthwise_lanes.h"
#if defined(__x86_64__)
#include <immintrin.h>

#define AVX2 __attribute__((target("avx2,fma")))
#define INLINE_AVX2 AVX2 static inline __attribute__((always_inline))

enum { L = 8 };

/* Lanes below n set (all-ones words), the others clear. */
INLINE_AVX2 __m256i lanes_below(int64_t n) {
  int32_t k = n > 8 ? 8 : n < 0 ? 0 : (int32_t)n;
  return _mm256_cmpgt_epi32(_mm256_set1_epi32(k), _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7));
}

/* r[i][j] -> r[j][i] for 8 vectors of 8. */
INLINE_AVX2 void transpose8(__m256 r[8]) {
  __m256 t[8], u[8];
#pragma GCC unroll 4
  for (int i = 0; i < 4; i++) {
    t[2 * i] = _mm256_unpacklo_ps(r[2 * i], r[2 * i + 1]);
    t[2 * i + 1] = _mm256_unpackhi_ps(r[2 * i], r[2 * i + 1]);
  }
  /* u[4 h + c], 128-bit lane k: rows 4 h .. 4 h + 3 of column 4 k + c */
#pragma GCC unroll 2
  for (int h = 0; h < 2; h++) {
    u[4 * h] = _mm256_shuffle_ps(t[4 * h], t[4 * h + 2], 0x44);
    u[4 * h + 1] = _mm256_shuffle_ps(t[4 * h], t[4 * h + 2], 0xEE);
    u[4 * h + 2] = _mm256_shuffle_ps(t[4 * h + 1], t[4 * h + 3], 0x44);
    u[4 * h + 3] = _mm256_shuffle_ps(t[4 * h + 1], t[4 * h + 3], 0xEE);
  }
#pragma GCC unroll 4
  for (int c = 0; c < 4; c++) {
    r[c] = _mm256_permute2f128_ps(u[c], u[4 + c], 0x20);
    r[4 + c] = _mm256_permute2f128_ps(u[c], u[4 + c], 0x31);
  }
}

/* Pairs of 128-bit rows: lo from a, hi from b. */
INLINE_AVX2 __m256 halves(const float *a, const float *b) {
  return _mm256_insertf128_ps(_mm256_castps128_ps256(_mm_loadu_ps(a)), _mm_loadu_ps(b), 1);
}

/* The 4 x 4 transposes inside each 128-bit lane of r[0..4): lane k of r[i] holds row i of block k. */
INLINE_AVX2 void transpose4_lanes(__m256 r[4]) {
  __m256 t0 = _mm256_unpacklo_ps(r[0], r[1]), t1 = _mm256_unpacklo_ps(r[2], r[3]);
  __m256 t2 = _mm256_unpackhi_ps(r[0], r[1]), t3 = _mm256_unpackhi_ps(r[2], r[3]);
  r[0] = _mm256_shuffle_ps(t0, t1, 0x44);
  r[1] = _mm256_shuffle_ps(t0, t1, 0xEE);
  r[2] = _mm256_shuffle_ps(t2, t3, 0x44);
  r[3] = _mm256_shuffle_ps(t2, t3, 0xEE);
}

/* Whole tiles of 8 pixels load each channel's 4-pixel halves into the 128-bit lanes (channel l in the low
 * lane, l + 4 in the high one), so that two in-lane 4 x 4 transposes make the pixel vectors: no
 * cross-lane permute (transpose8's four vperm2f128 per 8 vectors); the last, partial tile takes
 * maskload and transpose8. */
AVX2 static void to_lanes(const float *const *src, int64_t n, float *dst, int64_t w, int64_t ldd) {
  int64_t row = 0, col = 0, p = 0;
  for (; p + L <= n; p += L) {
    __m256 lo[4], hi[4];
#pragma GCC unroll 4
    for (int l = 0; l < 4; l++) {
      lo[l] = halves(src[l] + p, src[l + 4] + p);
      hi[l] = halves(src[l] + p + 4, src[l + 4] + p + 4);
    }
    transpose4_lanes(lo);
    transpose4_lanes(hi);
    if (w - col >= L) { /* the tile inside one row of the planes */
      float *d = dst + (row * ldd + col) * L;
#pragma GCC unroll 4
      for (int q = 0; q < 4; q++) {
        _mm256_store_ps(d + q * L, lo[q]);
        _mm256_store_ps(d + (q + 4) * L, hi[q]);
      }
      if ((col += L) == w) col = 0, row++;
      continue;
    }
#pragma GCC unroll 8
    for (int q = 0; q < L; q++) {
      _mm256_store_ps(dst + (row * ldd + col) * L, q < 4 ? lo[q] : hi[q - 4]);
      if (++col == w) col = 0, row++;
    }
  }
  if (p < n) {
    __m256 v[8];
    __m256i m = lanes_below(n - p);
#pragma GCC unroll 8
    for (int l = 0; l < L; l++) v[l] = _mm256_maskload_ps(src[l] + p, m);
    transpose8(v);
    for (int q = 0; q < n - p; q++) {
      _mm256_store_ps(dst + (row * ldd + col) * L, v[q]);
      if (++col == w) col = 0, row++;
    }
  }
}

/* The pixel vectors back: pixel q's low half (channels 0..3) in the low lane with pixel q + 4's in the high
 * one, then in-lane 4 x 4 transposes give channels 0..3 (and from the high halves 4..7) as 8 pixels each. */
AVX2 static void from_lanes(const float *src, int64_t n, float *dst, int64_t ld, const float *res, int nc) {
  for (int64_t p = 0; p < n; p += L) {
    __m256 v[8];
#pragma GCC unroll 4
    for (int q = 0; q < 4; q++) {
      const float *a = src + (p + q) * L, *b = src + (p + q + 4) * L;
      v[q] = halves(a, b);
      v[q + 4] = halves(a + 4, b + 4);
    }
    transpose4_lanes(v);
    transpose4_lanes(v + 4);
    if (n - p >= L) {
      for (int l = 0; l < nc; l++) {
        __m256 out = v[l];
        if (res) out = _mm256_add_ps(out, _mm256_loadu_ps(res + l * ld + p));
        _mm256_storeu_ps(dst + l * ld + p, out);
      }
    } else {
      __m256i m = lanes_below(n - p);
      for (int l = 0; l < nc; l++) {
        __m256 out = v[l];
        if (res) out = _mm256_add_ps(out, _mm256_maskload_ps(res + l * ld + p, m));
        _mm256_maskstore_ps(dst + l * ld + p, m, out);
      }
    }
  }
}

/* Output pixels ox0 .. ox0 + NB of row oy (stored up to ow) for a K x K kernel at stride S, no dilation. */
INLINE_AVX2 void block_fixed(const tb_dwl_block *b, int64_t oy, int64_t ox0, int NB, int K, int S) {
  const int64_t tw = b->tw, ow = b->g->ow;
  __m256 acc[8];
  const __m256 bias = _mm256_load_ps(b->w + K * K * L);
#pragma GCC unroll 8
  for (int px = 0; px < NB; px++) acc[px] = bias;
#pragma GCC unroll 7
  for (int ky = 0; ky < K; ky++) {
    const float *r = b->t + ((oy * S + ky) * tw + ox0 * S) * L;
    __m256 wk[7];
#pragma GCC unroll 7
    for (int kx = 0; kx < K; kx++) wk[kx] = _mm256_load_ps(b->w + (ky * K + kx) * L);
#pragma GCC unroll 24
    for (int i = 0; i < (NB - 1) * S + K; i++) {
      const __m256 x = _mm256_load_ps(r + i * L);
#pragma GCC unroll 7
      for (int kx = 0; kx < K; kx++) {
        int d = i - kx;
        if (d >= 0 && d % S == 0 && d / S < NB) acc[d / S] = _mm256_fmadd_ps(wk[kx], x, acc[d / S]);
      }
    }
  }
  float *o = b->o + (oy * ow + ox0) * L;
  int64_t n = ow - ox0;
#pragma GCC unroll 8
  for (int px = 0; px < NB; px++)
    if (px < n) _mm256_store_ps(o + px * L, acc[px]);
}

/* Output rows oy and oy + 1 (oy + 1 < oh), pixels ox0 .. ox0 + 7, for a K x K kernel at stride 1, no
 * dilation: each of the K + 1 input rows under the two output rows is loaded once per pixel and added into
 * both (14 independent accumulator chains where one row has 7, fewer than the two FMA pipes' 8 in flight;
 * the weights are FMA memory operands: 14 accumulators and the input leave no registers for them). Each
 * accumulator takes its taps in block_fixed's order, so the bits are the same. */
INLINE_AVX2 void block2_fixed(const tb_dwl_block *b, int64_t oy, int64_t ox0, int K) {
  enum { NB = 7 };
  const int64_t tw = b->tw, ow = b->g->ow;
  const float *w = b->w;
  __m256 acc0[NB], acc1[NB];
  const __m256 bias = _mm256_load_ps(w + K * K * L);
#pragma GCC unroll 7
  for (int px = 0; px < NB; px++) acc0[px] = acc1[px] = bias;
#pragma GCC unroll 8
  for (int t = 0; t < K + 1; t++) {
    const float *r = b->t + ((oy + t) * tw + ox0) * L;
#pragma GCC unroll 13
    for (int i = 0; i < NB - 1 + K; i++) {
      const __m256 x = _mm256_load_ps(r + i * L);
#pragma GCC unroll 7
      for (int kx = 0; kx < K; kx++) {
        int d = i - kx;
        if (d < 0 || d >= NB) continue;
        if (t < K) acc0[d] = _mm256_fmadd_ps(_mm256_load_ps(w + (t * K + kx) * L), x, acc0[d]);
        if (t >= 1) acc1[d] = _mm256_fmadd_ps(_mm256_load_ps(w + ((t - 1) * K + kx) * L), x, acc1[d]);
      }
    }
  }
  float *o = b->o + (oy * ow + ox0) * L;
  int64_t n = ow - ox0;
#pragma GCC unroll 7
  for (int px = 0; px < NB; px++)
    if (px < n) {
      _mm256_store_ps(o + px * L, acc0[px]);
      _mm256_store_ps(o + (ow + px) * L, acc1[px]);
    }
}

/* The same for any kernel, strides and dilations: one weight load per tap, one input load per FMA. */
INLINE_AVX2 void block_any(const tb_dwl_block *b, int64_t oy, int64_t ox0, int NB) {
  const tb_conv_geom *g = b->g;
  const int64_t tw = b->tw, ow = g->ow, step = g->sw * L;
  __m256 acc[8];
  const float *w = b->w;
  const __m256 bias = _mm256_load_ps(w + g->kh * g->kw * L);
#pragma GCC unroll 8
  for (int px = 0; px < NB; px++) acc[px] = bias;
  for (int64_t ky = 0; ky < g->kh; ky++) {
    const float *r = b->t + ((oy * g->sh + ky * g->dh) * tw + ox0 * g->sw) * L;
    for (int64_t kx = 0; kx < g->kw; kx++, w += L, r += g->dw * L) {
      const __m256 wv = _mm256_load_ps(w);
#pragma GCC unroll 8
      for (int px = 0; px < NB; px++) acc[px] = _mm256_fmadd_ps(wv, _mm256_load_ps(r + px * step), acc[px]);
    }
  }
  float *o = b->o + (oy * ow + ox0) * L;
  int64_t n = ow - ox0;
#pragma GCC unroll 8
  for (int px = 0; px < NB; px++)
    if (px < n) _mm256_store_ps(o + px * L, acc[px]);
}

/* Blocks of 7 pixels at stride 1 take two output rows at a time (block2_fixed), the others one (8 pixels
 * in two rows would need 16 accumulators). */
#define FIXED(NB, K, S)                                                                    \
  AVX2 static void conv_##NB##_##K##_##S(const tb_dwl_block *b) {                          \
    int64_t oy = 0;                                                                        \
    if (S == 1 && NB == 7)                                                                 \
      for (; oy + 1 < b->g->oh; oy += 2)                                                   \
        for (int64_t ox0 = 0; ox0 < b->g->ow; ox0 += NB) block2_fixed(b, oy, ox0, K);      \
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

AVX2 static void conv_any_7(const tb_dwl_block *b) {
  for (int64_t oy = 0; oy < b->g->oh; oy++)
    for (int64_t ox0 = 0; ox0 < b->g->ow; ox0 += 7) block_any(b, oy, ox0, 7);
}
AVX2 static void conv_any_8(const tb_dwl_block *b) {
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

const tb_dwl_impl tb_dwl_avx2 = {L, to_lanes, from_lanes, conv};
#else
const tb_dwl_impl tb_dwl_avx2 = {0, NULL, NULL, NULL};
#endif
