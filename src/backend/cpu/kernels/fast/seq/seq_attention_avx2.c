/* The row step of tb::Attention (seq_attention.c) with AVX2 + FMA: the twin of seq_attention_avx512.c on
 * 8 lanes. Three passes over the row: scale it (multiplied or divided, as the model wrote it), add the mask
 * row and find the maximum; then exp(x - max) with the sequence kernels' AVX2 exp (seq_vec_x86.h) stored
 * back while the sum accumulates (fp32 lanes over chunks of 256 elements, the chunks in double lanes);
 * then one multiply by the sum's inverse. The same steps, each rounded to fp32, as the portable and the
 * AVX-512 rows; only the summation order differs. Full vectors use plain loads and stores, the last
 * partial one masked loads and stores. Built for AVX2 by target attribute; called only on the AVX2 path. */
#include "backend/cpu/kernels/fast/seq/seq_attention.h"
#if defined(__x86_64__)
#include <immintrin.h>
#include "backend/cpu/kernels/fast/seq/seq_vec_x86.h"

#define AVX2_TARGET __attribute__((target("avx2,fma")))

/* Elements summed in fp32 lanes before they join the double lanes: at most 32 terms per lane, so the
 * fp32 part adds below 32 x 2^-24 relative. */
enum { CHUNK = 256 };

/* Lanes 0..left-1 on (all bits set), 0 < left < 8. */
static inline AVX2_TARGET __m256i low_lanes(int64_t left) {
  return _mm256_cmpgt_epi32(_mm256_set1_epi32((int)left), _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7));
}

/* The scaled and masked x of elements c..c+8 (lanes past the row are whatever x holds; the caller masks). */
static inline AVX2_TARGET __m256 scale_and_mask(__m256 x, int64_t c, int64_t n, const seq_attention_row *how,
                                                __m256 scale, __m256i lanes) {
  if (how->has_scale) x = how->divide ? _mm256_div_ps(x, scale) : _mm256_mul_ps(x, scale);
  if (how->mask && how->mask_step == 1) {
    x = _mm256_add_ps(x, n - c >= 8 ? _mm256_loadu_ps(how->mask + c) : _mm256_maskload_ps(how->mask + c, lanes));
  } else if (how->mask) {
    _Alignas(32) float mk[8] = {0};
    for (int64_t i = 0; i < 8 && c + i < n; i++) mk[i] = how->mask[(c + i) * how->mask_step];
    x = _mm256_add_ps(x, _mm256_load_ps(mk));
  }
  return x;
}

static inline AVX2_TARGET float max_of(__m256 v) {
  __m128 m = _mm_max_ps(_mm256_castps256_ps128(v), _mm256_extractf128_ps(v, 1));
  m = _mm_max_ps(m, _mm_movehl_ps(m, m));
  return _mm_cvtss_f32(_mm_max_ss(m, _mm_movehdup_ps(m)));
}

static inline AVX2_TARGET double sum_of(__m256d v) {
  __m128d s = _mm_add_pd(_mm256_castpd256_pd128(v), _mm256_extractf128_pd(v, 1));
  return _mm_cvtsd_f64(_mm_add_sd(s, _mm_unpackhi_pd(s, s)));
}

AVX2_TARGET void tb_seq_attention_row_avx2(float *row, int64_t n, const seq_attention_row *how) {
  const __m256 scale = _mm256_set1_ps(how->scale), ninf = _mm256_set1_ps(-__builtin_inff());
  const int64_t full = n & ~(int64_t)7;
  const __m256i tail = low_lanes(n - full > 0 ? n - full : 1);
  __m256 mx = ninf;
  int64_t c = 0;
  for (; c < full; c += 8) {
    __m256 x = scale_and_mask(_mm256_loadu_ps(row + c), c, n, how, scale, tail);
    _mm256_storeu_ps(row + c, x);
    mx = _mm256_max_ps(x, mx); /* x > mx ? x : mx, as the portable row */
  }
  if (c < n) {
    __m256 x = scale_and_mask(_mm256_maskload_ps(row + c, tail), c, n, how, scale, tail);
    _mm256_maskstore_ps(row + c, tail, x);
    mx = _mm256_max_ps(_mm256_blendv_ps(ninf, x, _mm256_castsi256_ps(tail)), mx);
  }
  const __m256 top = _mm256_set1_ps(max_of(mx));
  __m256d lo = _mm256_setzero_pd(), hi = _mm256_setzero_pd();
  for (int64_t chunk = 0; chunk < n; chunk += CHUNK) {
    __m256 part = _mm256_setzero_ps();
    const int64_t end = chunk + CHUNK < full ? chunk + CHUNK : full;
    for (c = chunk; c < end; c += 8) {
      __m256 x = seq_exp256(_mm256_sub_ps(_mm256_loadu_ps(row + c), top));
      _mm256_storeu_ps(row + c, x);
      part = _mm256_add_ps(part, x);
    }
    if (chunk + CHUNK >= n && full < n) { /* the partial vector closes the last chunk */
      __m256 x = seq_exp256(_mm256_sub_ps(_mm256_maskload_ps(row + full, tail), top));
      _mm256_maskstore_ps(row + full, tail, x);
      part = _mm256_add_ps(part, _mm256_and_ps(x, _mm256_castsi256_ps(tail))); /* lanes past n add nothing */
    }
    lo = _mm256_add_pd(lo, _mm256_cvtps_pd(_mm256_castps256_ps128(part)));
    hi = _mm256_add_pd(hi, _mm256_cvtps_pd(_mm256_extractf128_ps(part, 1)));
  }
  const __m256 inv = _mm256_set1_ps((float)(1.0 / sum_of(_mm256_add_pd(lo, hi))));
  for (c = 0; c < full; c += 8) _mm256_storeu_ps(row + c, _mm256_mul_ps(_mm256_loadu_ps(row + c), inv));
  if (c < n) _mm256_maskstore_ps(row + c, tail, _mm256_mul_ps(_mm256_maskload_ps(row + c, tail), inv));
}
#endif
