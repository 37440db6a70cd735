/* The narrow edge kernels of the fp32 GEMM (tb_gemm_kernel.narrow) for AVX-512 and AVX2+FMA: the last
 * column sliver of C when it holds only a few columns, over a whole packed block of A at once. The register
 * tile kernels spend NR columns of work on every sliver, so a 1x1 convolution over 196 pixels (6 x 32 + 4)
 * paid 224 columns, and over 49 pixels 64. Here the vectors run along A's rows instead: the packed A
 * sliver holds its MR rows contiguously per depth step (14 of 16 lanes on AVX-512, 6 of 8 on AVX2, one
 * masked load), each column of B is a broadcast, and a column costs one FMA per sliver and depth step.
 * Every element gets the register tile's operations in the same order (an FMA chain from zero over the
 * depth, then c = alpha * acc + c, or + 0 without reading c), so results are bit-identical to the edge
 * tiles'. The finished accumulators go to C through a small buffer, row by row. Only these functions are
 * built for the vector ISAs (target attributes); the driver calls them through the path's kernel table. */
#include <math.h>
#include "backend/cpu/kernels/fast/gemm/gemm_f32_internal.h"
#if defined(__x86_64__)
#include <immintrin.h>

/* Columns per pass (accumulators: COLS per sliver, two slivers of rows per pass). */
enum { AVX512_MR = 14, AVX512_NR = 32, AVX512_COLS = 8, AVX2_MR = 6, AVX2_NR = 16, AVX2_COLS = 6 };

#define AVX512_TARGET __attribute__((target("avx512f,fma"))) /* what the AVX-512 GEMM path checks */
#define AVX2_TARGET __attribute__((target("avx2,fma")))
#define INLINE static inline __attribute__((always_inline))

/* c[r][j] = alpha * t[j][r] + (load_c ? c[r][j] : 0) for r < rows, j < cols: t holds one accumulator
 * (lanes = rows) per column, `lanes` floats apart. */
INLINE AVX2_TARGET void store_columns(const float *t, int lanes, int rows, int cols, float *c, int64_t ldc, float alpha,
                                      bool load_c) {
  for (int r = 0; r < rows; r++) {
    float *cr = c + r * ldc;
    for (int j = 0; j < cols; j++) cr[j] = __builtin_fmaf(alpha, t[j * lanes + r], load_c ? cr[j] : 0.0f);
  }
}

/* One pass of AVX-512: cols (<= 8, a constant after inlining) columns of B over one or two slivers of A. */
INLINE AVX512_TARGET void pass_avx512(int cols, bool two, int64_t kc, const float *a0, const float *b, int rows0,
                                      int rows1, float *c, int64_t ldc, float alpha, bool load_c) {
  const __mmask16 lanes = (__mmask16)((1u << AVX512_MR) - 1);
  const float *a1 = a0 + kc * AVX512_MR;
  __m512 acc0[AVX512_COLS], acc1[AVX512_COLS];
#pragma GCC unroll 8
  for (int j = 0; j < AVX512_COLS; j++)
    if (j < cols) acc0[j] = acc1[j] = _mm512_setzero_ps();
  for (int64_t p = 0; p < kc; p++) {
    __m512 x0 = _mm512_maskz_loadu_ps(lanes, a0 + p * AVX512_MR);
    __m512 x1 = two ? _mm512_maskz_loadu_ps(lanes, a1 + p * AVX512_MR) : _mm512_setzero_ps();
#pragma GCC unroll 8
    for (int j = 0; j < AVX512_COLS; j++) {
      if (j >= cols) break;
      __m512 bv = _mm512_set1_ps(b[p * AVX512_NR + j]);
      acc0[j] = _mm512_fmadd_ps(x0, bv, acc0[j]);
      if (two) acc1[j] = _mm512_fmadd_ps(x1, bv, acc1[j]);
    }
  }
  _Alignas(64) float t[AVX512_COLS * 16];
#pragma GCC unroll 8
  for (int j = 0; j < AVX512_COLS; j++)
    if (j < cols) _mm512_store_ps(t + j * 16, acc0[j]);
  store_columns(t, 16, rows0, cols, c, ldc, alpha, load_c);
  if (!two) return;
#pragma GCC unroll 8
  for (int j = 0; j < AVX512_COLS; j++)
    if (j < cols) _mm512_store_ps(t + j * 16, acc1[j]);
  store_columns(t, 16, rows1, cols, c + AVX512_MR * ldc, ldc, alpha, load_c);
}

AVX512_TARGET void tb_gemm_narrow_avx512(int64_t kc, const float *a, int64_t rows, const float *b, int cols, float *c,
                                         int64_t ldc, float alpha, bool load_c) {
  for (int64_t r0 = 0; r0 < rows; r0 += 2 * AVX512_MR) {
    const float *as = a + r0 * kc; /* slivers of kc * MR floats, r0 a multiple of MR */
    int64_t left = rows - r0;
    bool two = left > AVX512_MR;
    int rows0 = two ? AVX512_MR : (int)left, rows1 = two ? (int)(left - AVX512_MR < AVX512_MR ? left - AVX512_MR : AVX512_MR) : 0;
    float *cr = c + r0 * ldc;
    for (int j0 = 0; j0 < cols; j0 += AVX512_COLS) {
      int w = cols - j0 < AVX512_COLS ? cols - j0 : AVX512_COLS;
      switch (w) {
#define W(n)                                                                                        \
  case n:                                                                                           \
    if (two) pass_avx512(n, true, kc, as, b + j0, rows0, rows1, cr + j0, ldc, alpha, load_c);       \
    else pass_avx512(n, false, kc, as, b + j0, rows0, rows1, cr + j0, ldc, alpha, load_c);          \
    break;
        W(1) W(2) W(3) W(4) W(5) W(6) W(7)
        default: W(8)
#undef W
      }
    }
  }
}

/* One pass of AVX2: cols (<= 6) columns of B over one or two slivers of A (6 rows in 8 lanes). */
INLINE AVX2_TARGET void pass_avx2(int cols, bool two, int64_t kc, const float *a0, const float *b, int rows0, int rows1,
                                  float *c, int64_t ldc, float alpha, bool load_c) {
  const __m256i lanes = _mm256_setr_epi32(-1, -1, -1, -1, -1, -1, 0, 0);
  const float *a1 = a0 + kc * AVX2_MR;
  __m256 acc0[AVX2_COLS], acc1[AVX2_COLS];
#pragma GCC unroll 6
  for (int j = 0; j < AVX2_COLS; j++)
    if (j < cols) acc0[j] = acc1[j] = _mm256_setzero_ps();
  for (int64_t p = 0; p < kc; p++) {
    __m256 x0 = _mm256_maskload_ps(a0 + p * AVX2_MR, lanes);
    __m256 x1 = two ? _mm256_maskload_ps(a1 + p * AVX2_MR, lanes) : _mm256_setzero_ps();
#pragma GCC unroll 6
    for (int j = 0; j < AVX2_COLS; j++) {
      if (j >= cols) break;
      __m256 bv = _mm256_broadcast_ss(b + p * AVX2_NR + j);
      acc0[j] = _mm256_fmadd_ps(x0, bv, acc0[j]);
      if (two) acc1[j] = _mm256_fmadd_ps(x1, bv, acc1[j]);
    }
  }
  _Alignas(32) float t[AVX2_COLS * 8];
#pragma GCC unroll 6
  for (int j = 0; j < AVX2_COLS; j++)
    if (j < cols) _mm256_store_ps(t + j * 8, acc0[j]);
  store_columns(t, 8, rows0, cols, c, ldc, alpha, load_c);
  if (!two) return;
#pragma GCC unroll 6
  for (int j = 0; j < AVX2_COLS; j++)
    if (j < cols) _mm256_store_ps(t + j * 8, acc1[j]);
  store_columns(t, 8, rows1, cols, c + AVX2_MR * ldc, ldc, alpha, load_c);
}

AVX2_TARGET void tb_gemm_narrow_avx2(int64_t kc, const float *a, int64_t rows, const float *b, int cols, float *c,
                                     int64_t ldc, float alpha, bool load_c) {
  for (int64_t r0 = 0; r0 < rows; r0 += 2 * AVX2_MR) {
    const float *as = a + r0 * kc;
    int64_t left = rows - r0;
    bool two = left > AVX2_MR;
    int rows0 = two ? AVX2_MR : (int)left, rows1 = two ? (int)(left - AVX2_MR < AVX2_MR ? left - AVX2_MR : AVX2_MR) : 0;
    float *cr = c + r0 * ldc;
    for (int j0 = 0; j0 < cols; j0 += AVX2_COLS) {
      int w = cols - j0 < AVX2_COLS ? cols - j0 : AVX2_COLS;
      switch (w) {
#define W(n)                                                                                        \
  case n:                                                                                           \
    if (two) pass_avx2(n, true, kc, as, b + j0, rows0, rows1, cr + j0, ldc, alpha, load_c);         \
    else pass_avx2(n, false, kc, as, b + j0, rows0, rows1, cr + j0, ldc, alpha, load_c);            \
    break;
        W(1) W(2) W(3) W(4) W(5)
        default: W(6)
#undef W
      }
    }
  }
}
#endif
