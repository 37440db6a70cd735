/* The AVX2+FMA row kernel of the depthwise convolution (conv_depthwise.h): a block of 4 output rows x 16
 * columns (8 rows x 8 columns when the rows are at most 8 wide) keeps its 8 accumulators in registers over
 * every tap; each tap broadcasts its weight once and adds weight * one contiguous load of the staged row
 * into each accumulator; 3x3, 5x5 and 7x7 kernels at row stride 1 load each input row once for all the
 * output rows under it (block_shared). The last column block is stored with maskstore, the residual added
 * on the way out. Also the stride-2 phase split of a staged row. Built for AVX2+FMA with a target attribute; the
 * driver calls it only when cpuid has both. */
#include "backend/cpu/kernels/fast/conv/conv_depthwise.h"
#if defined(__x86_64__)
#include <immintrin.h>

#define AVX2 __attribute__((target("avx2,fma")))
#define INLINE_AVX2 AVX2 static inline __attribute__((always_inline))

/* Lanes below n set (all-ones words), the others clear. */
INLINE_AVX2 __m256i lanes_below(int64_t n) {
  int32_t k = n > 8 ? 8 : n < 0 ? 0 : (int32_t)n;
  return _mm256_cmpgt_epi32(_mm256_set1_epi32(k), _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7));
}

/* Accumulators acc[r * V + v] to rows r0 .. r0 + R, columns ox + 8 v (maskstore for the last, partial
 * vector), with the residual added. */
INLINE_AVX2 void store_rows(const tb_dw_rows *a, const __m256 *acc, int64_t r0, int R, int V, int64_t ox) {
  const int64_t ow = a->ow;
#pragma GCC unroll 8
  for (int r = 0; r < R; r++)
#pragma GCC unroll 2
    for (int v = 0; v < V; v++) {
      int64_t col = ox + 8 * v, at = (r0 + r) * a->ldy + col;
      if (col >= ow) continue;
      __m256 out = acc[r * V + v];
      if (ow - col >= 8) {
        if (a->res) out = _mm256_add_ps(out, _mm256_loadu_ps(a->res + at));
        _mm256_storeu_ps(a->y + at, out);
      } else {
        __m256i m = lanes_below(ow - col);
        if (a->res) out = _mm256_add_ps(out, _mm256_maskload_ps(a->res + at, m));
        _mm256_maskstore_ps(a->y + at, m, out);
      }
    }
}

/* Rows r0 .. r0 + R of a, V vectors of 8 columns per block (R * V <= 8). */
INLINE_AVX2 void block(const tb_dw_rows *a, int64_t r0, int R, int V) {
  const int64_t kh = a->kh, kw = a->kw, ow = a->ow, plen = a->phase_len;
  const int64_t step_idx = a->dw / a->sw, step_phase = a->dw % a->sw, sw = a->sw;
  for (int64_t ox = 0; ox < ow; ox += 8 * V) {
    __m256 acc[8];
#pragma GCC unroll 8
    for (int i = 0; i < R * V; i++) acc[i] = _mm256_set1_ps(a->bias);
    const float *w = a->w;
    for (int64_t ky = 0; ky < kh; ky++) {
      const float *in[8];
#pragma GCC unroll 8
      for (int r = 0; r < R; r++) in[r] = a->in[(r0 + r) * kh + ky] + ox;
      int64_t phase = 0, idx = 0;
      for (int64_t kx = 0; kx < kw; kx++, w++) {
        const int64_t off = phase * plen + idx;
        const __m256 wb = _mm256_broadcast_ss(w);
#pragma GCC unroll 8
        for (int r = 0; r < R; r++)
#pragma GCC unroll 2
          for (int v = 0; v < V; v++)
            acc[r * V + v] = _mm256_fmadd_ps(wb, _mm256_loadu_ps(in[r] + off + 8 * v), acc[r * V + v]);
        idx += step_idx;
        phase += step_phase;
        if (phase >= sw) phase -= sw, idx++;
      }
    }
    store_rows(a, acc, r0, R, V, ox);
  }
}

/* K x K kernels (K = 3, 5, 7, compile-time) whose output rows share input rows (rows_shift): each input
 * row under R output rows loaded once per tap column and added into every output row it is under. */
INLINE_AVX2 void block_shared(const tb_dw_rows *a, int64_t r0, int R, int V, int K) {
  const int64_t ow = a->ow;
  const float *w = a->w;
  int64_t off[7];
#pragma GCC unroll 7
  for (int kx = 0; kx < K; kx++) off[kx] = kx * a->dw % a->sw * a->phase_len + kx * a->dw / a->sw;
  const float *rows[14];
#pragma GCC unroll 14
  for (int i = 0; i < R + K - 1; i++) rows[i] = i < K ? a->in[r0 * K + i] : a->in[(r0 + i - K + 1) * K + K - 1];
  for (int64_t ox = 0; ox < ow; ox += 8 * V) {
    __m256 acc[8];
#pragma GCC unroll 8
    for (int k = 0; k < R * V; k++) acc[k] = _mm256_set1_ps(a->bias);
#pragma GCC unroll 14
    for (int i = 0; i < R + K - 1; i++)
#pragma GCC unroll 7
      for (int kx = 0; kx < K; kx++)
#pragma GCC unroll 2
        for (int v = 0; v < V; v++) {
          const __m256 x = _mm256_loadu_ps(rows[i] + ox + off[kx] + 8 * v);
#pragma GCC unroll 8
          for (int r = 0; r < R; r++)
            if (i - r >= 0 && i - r < K)
              acc[r * V + v] = _mm256_fmadd_ps(_mm256_broadcast_ss(w + (i - r) * K + kx), x, acc[r * V + v]);
        }
    store_rows(a, acc, r0, R, V, ox);
  }
}

INLINE_AVX2 void rows_shared(const tb_dw_rows *a, int K) {
  int64_t r0 = 0, n = a->n_rows;
  if (a->ow <= 8) {
    for (; r0 + 8 <= n; r0 += 8) block_shared(a, r0, 8, 1, K);
    switch (n - r0) {
      case 7: block_shared(a, r0, 7, 1, K); break;
      case 6: block_shared(a, r0, 6, 1, K); break;
      case 5: block_shared(a, r0, 5, 1, K); break;
      case 4: block_shared(a, r0, 4, 1, K); break;
      case 3: block_shared(a, r0, 3, 1, K); break;
      case 2: block_shared(a, r0, 2, 1, K); break;
      case 1: block_shared(a, r0, 1, 1, K); break;
      default: break;
    }
    return;
  }
  for (; r0 + 4 <= n; r0 += 4) block_shared(a, r0, 4, 2, K);
  switch (n - r0) {
    case 3: block_shared(a, r0, 3, 2, K); break;
    case 2: block_shared(a, r0, 2, 2, K); break;
    case 1: block_shared(a, r0, 1, 2, K); break;
    default: break;
  }
}

AVX2 static void rows_3x3(const tb_dw_rows *a) { rows_shared(a, 3); }
AVX2 static void rows_5x5(const tb_dw_rows *a) { rows_shared(a, 5); }
AVX2 static void rows_7x7(const tb_dw_rows *a) { rows_shared(a, 7); }

AVX2 void tb_dw_rows_avx2(const tb_dw_rows *a) {
  if (a->rows_shift && a->kh == a->kw && (a->kh == 3 || a->kh == 5 || a->kh == 7)) {
    if (a->kh == 3) rows_3x3(a);
    else if (a->kh == 5) rows_5x5(a);
    else rows_7x7(a);
    return;
  }
  int64_t r0 = 0, n = a->n_rows;
  if (a->ow <= 8) {
    for (; r0 + 8 <= n; r0 += 8) block(a, r0, 8, 1);
    switch (n - r0) {
      case 7: block(a, r0, 7, 1); break;
      case 6: block(a, r0, 6, 1); break;
      case 5: block(a, r0, 5, 1); break;
      case 4: block(a, r0, 4, 1); break;
      case 3: block(a, r0, 3, 1); break;
      case 2: block(a, r0, 2, 1); break;
      case 1: block(a, r0, 1, 1); break;
      default: break;
    }
    return;
  }
  for (; r0 + 4 <= n; r0 += 4) block(a, r0, 4, 2);
  switch (n - r0) {
    case 3: block(a, r0, 3, 2); break;
    case 2: block(a, r0, 2, 2); break;
    case 1: block(a, r0, 1, 2); break;
    default: break;
  }
}

/* Two 8-float vectors of the line give 8 even and 8 odd elements: shuffle within the 128-bit lanes, then
 * put the lanes in order. */
AVX2 void tb_dw_split2_avx2(float *dst, const float *line, int64_t phase_len) {
  for (int64_t j = 0; j < phase_len; j += 8) {
    __m256 lo = _mm256_loadu_ps(line + 2 * j), hi = _mm256_loadu_ps(line + 2 * j + 8);
    __m256 even = _mm256_shuffle_ps(lo, hi, _MM_SHUFFLE(2, 0, 2, 0)), odd = _mm256_shuffle_ps(lo, hi, _MM_SHUFFLE(3, 1, 3, 1));
    _mm256_storeu_ps(dst + j, _mm256_castpd_ps(_mm256_permute4x64_pd(_mm256_castps_pd(even), 0xD8)));
    _mm256_storeu_ps(dst + phase_len + j, _mm256_castpd_ps(_mm256_permute4x64_pd(_mm256_castps_pd(odd), 0xD8)));
  }
}
#else
void tb_dw_rows_avx2(const tb_dw_rows *a) { tb_dw_rows_portable(a); }
void tb_dw_split2_avx2(float *dst, const float *line, int64_t phase_len) {
  for (int64_t j = 0; j < phase_len; j++) dst[j] = line[2 * j], dst[phase_len + j] = line[2 * j + 1];
}
#endif
