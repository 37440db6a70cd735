/* Internal: the 8 x 8 fp32 register transpose used by the AVX2 kernels that turn rows into depth steps (the
 * GEMM's row packing), the lane mask of a partial step and the masked 8-float load and store. Include only
 * where <immintrin.h> is available (x86-64); the function carries its own
 * target attribute and is always inlined into callers built for AVX2 or more. */
#ifndef TB_CPU_KERNELS_FAST_TRANSPOSE_AVX2_H
#define TB_CPU_KERNELS_FAST_TRANSPOSE_AVX2_H
#include <immintrin.h>

/* In place: r[i] lane j becomes r[j] lane i. */
static inline __attribute__((always_inline, target("avx2"))) void tb_transpose8_ps(__m256 r[8]) {
  __m256 t[8];
#pragma GCC unroll 4
  for (int i = 0; i < 8; i += 2) {
    t[i] = _mm256_unpacklo_ps(r[i], r[i + 1]);     /* r_i0 r_i+1,0 r_i1 r_i+1,1 | lanes 4, 5 */
    t[i + 1] = _mm256_unpackhi_ps(r[i], r[i + 1]); /* lanes 2, 3 | 6, 7 */
  }
#pragma GCC unroll 2
  for (int i = 0; i < 8; i += 4) {
    r[i] = _mm256_shuffle_ps(t[i], t[i + 2], _MM_SHUFFLE(1, 0, 1, 0));
    r[i + 1] = _mm256_shuffle_ps(t[i], t[i + 2], _MM_SHUFFLE(3, 2, 3, 2));
    r[i + 2] = _mm256_shuffle_ps(t[i + 1], t[i + 3], _MM_SHUFFLE(1, 0, 1, 0));
    r[i + 3] = _mm256_shuffle_ps(t[i + 1], t[i + 3], _MM_SHUFFLE(3, 2, 3, 2));
  }
#pragma GCC unroll 4
  for (int i = 0; i < 4; i++) {
    t[i] = _mm256_permute2f128_ps(r[i], r[i + 4], 0x20);
    t[i + 4] = _mm256_permute2f128_ps(r[i], r[i + 4], 0x31);
  }
#pragma GCC unroll 8
  for (int i = 0; i < 8; i++) r[i] = t[i];
}

/* All-ones in the lanes below n (n <= 0: none, n >= 8: all): a mask for _mm256_maskload_ps / maskstore_ps. */
static inline __attribute__((always_inline, target("avx2"))) __m256i tb_lanes_below_avx2(int64_t n) {
  int k = n < 0 ? 0 : n > 8 ? 8 : (int)n;
  return _mm256_cmpgt_epi32(_mm256_set1_epi32(k), _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7));
}

/* 8 floats from p, or the first `left` of them (m = tb_lanes_below_avx2(left)) when fewer than 8 are left. */
static inline __attribute__((always_inline, target("avx2"))) __m256 tb_load8_avx2(const float *p, int64_t left, __m256i m) {
  return left >= 8 ? _mm256_loadu_ps(p) : _mm256_maskload_ps(p, m);
}

/* The store twin of tb_load8_avx2. */
static inline __attribute__((always_inline, target("avx2"))) void tb_store8_avx2(float *p, int64_t left, __m256i m, __m256 v) {
  if (left >= 8) _mm256_storeu_ps(p, v);
  else _mm256_maskstore_ps(p, m, v);
}

#endif
