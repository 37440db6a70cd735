/* The row step of tb::Attention (seq_attention.c, seq_attention_bf16.c) with AVX-512, in three passes
 * over the row: scale it (multiplied or divided, as the model wrote it), add the mask row and find the
 * maximum; then exp(x - max) with the sequence kernels' vector exp (seq_vec_x86.h) stored back while the
 * sum accumulates (fp32 lanes over chunks of 256 elements, the chunks in double lanes); then one multiply
 * by the sum's inverse. The same steps, each rounded
 * to fp32, as the portable row; only the summation order differs. Built for AVX-512 by target attribute;
 * called only on the AVX-512 path. */
#include "backend/cpu/kernels/fast/seq/seq_attention.h"
#if defined(__x86_64__)
#include <immintrin.h>
#include "backend/cpu/kernels/fast/seq/seq_vec_x86.h"

#define AVX512_TARGET __attribute__((target("avx512f,avx512bw,avx512vl,avx512dq,fma")))

/* Elements summed in fp32 lanes before they join the double lanes: at most 16 terms per lane, so the
 * fp32 part adds below 16 x 2^-24 relative. */
enum { CHUNK = 256 };

static inline AVX512_TARGET __mmask16 low_lanes(int64_t n) {
  return n >= 16 ? (__mmask16)0xFFFF : (__mmask16)((1u << n) - 1);
}

AVX512_TARGET void tb_seq_attention_row_avx512(float *row, int64_t n, const seq_attention_row *how) {
  const __m512 scale = _mm512_set1_ps(how->scale), ninf = _mm512_set1_ps(-__builtin_inff());
  __m512 mx = ninf;
  for (int64_t c = 0; c < n; c += 16) {
    __mmask16 m = low_lanes(n - c);
    __m512 x = _mm512_maskz_loadu_ps(m, row + c);
    if (how->has_scale) x = how->divide ? _mm512_div_ps(x, scale) : _mm512_mul_ps(x, scale);
    if (how->mask && how->mask_step == 1) {
      x = _mm512_add_ps(x, _mm512_maskz_loadu_ps(m, how->mask + c));
    } else if (how->mask) {
      _Alignas(64) float mk[16] = {0};
      for (int64_t i = 0; i < 16 && c + i < n; i++) mk[i] = how->mask[(c + i) * how->mask_step];
      x = _mm512_add_ps(x, _mm512_load_ps(mk));
    }
    _mm512_mask_storeu_ps(row + c, m, x);
    mx = _mm512_mask_max_ps(mx, m, x, mx); /* x > mx ? x : mx, as the portable row */
  }
  const __m512 top = _mm512_set1_ps(_mm512_reduce_max_ps(mx));
  __m512d lo = _mm512_setzero_pd(), hi = _mm512_setzero_pd();
  for (int64_t chunk = 0; chunk < n; chunk += CHUNK) {
    __m512 part = _mm512_setzero_ps();
    for (int64_t c = chunk; c < n && c < chunk + CHUNK; c += 16) {
      __mmask16 m = low_lanes(n - c);
      __m512 x = seq_exp512(_mm512_sub_ps(_mm512_maskz_loadu_ps(m, row + c), top));
      _mm512_mask_storeu_ps(row + c, m, x);
      part = _mm512_add_ps(part, _mm512_maskz_mov_ps(m, x)); /* lanes past n add nothing */
    }
    lo = _mm512_add_pd(lo, _mm512_cvtps_pd(_mm512_castps512_ps256(part)));
    hi = _mm512_add_pd(hi, _mm512_cvtps_pd(_mm256_castpd_ps(_mm512_extractf64x4_pd(_mm512_castps_pd(part), 1))));
  }
  const __m512 inv = _mm512_set1_ps((float)(1.0 / _mm512_reduce_add_pd(_mm512_add_pd(lo, hi))));
  for (int64_t c = 0; c < n; c += 16) {
    __mmask16 m = low_lanes(n - c);
    _mm512_mask_storeu_ps(row + c, m, _mm512_mul_ps(_mm512_maskz_loadu_ps(m, row + c), inv));
  }
}
#endif
