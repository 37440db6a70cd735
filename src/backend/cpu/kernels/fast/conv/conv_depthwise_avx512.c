/* The AVX-512 row kernel of the depthwise convolution (conv_depthwise.h): a block of 4 output rows x 32
 * columns (8 rows x 16 columns when the rows are at most 16 wide) keeps its 8 accumulators in registers
 * over every tap; each tap broadcasts its weight once and adds weight * one contiguous load of the staged
 * row into each accumulator (8 independent FMA chains, about one load per FMA). The last column block is
 * stored with a mask, the residual added on the way out. 3x3, 5x5 and 7x7 kernels whose output rows share
 * input rows (row stride 1) load each input row once for all the rows under it (block_shared). Also the stride-2 staging
 * of an input row straight into its two phases (masked loads for the pads).
 * Built for AVX-512F with a target attribute; the driver calls it only when cpuid has AVX512F. */
#include "backend/cpu/kernels/fast/conv/conv_depthwise.h"
#if defined(__x86_64__)
#include <immintrin.h>

#define AVX512 __attribute__((target("avx512f,fma")))
#define INLINE_AVX512 AVX512 static inline __attribute__((always_inline))

INLINE_AVX512 __mmask16 lanes_below(int64_t n) {
  return n >= 16 ? (__mmask16)0xFFFF : n <= 0 ? (__mmask16)0 : (__mmask16)((1u << n) - 1u);
}

/* Rows r0 .. r0 + R of a, V vectors of 16 columns per block (R * V <= 8). */
INLINE_AVX512 void block(const tb_dw_rows *a, int64_t r0, int R, int V) {
  const int64_t kh = a->kh, kw = a->kw, ow = a->ow, plen = a->phase_len;
  const int64_t step_idx = a->dw / a->sw, step_phase = a->dw % a->sw, sw = a->sw;
  for (int64_t ox = 0; ox < ow; ox += 16 * V) {
    __m512 acc[8];
#pragma GCC unroll 8
    for (int i = 0; i < R * V; i++) acc[i] = _mm512_set1_ps(a->bias);
    const float *w = a->w;
    for (int64_t ky = 0; ky < kh; ky++) {
      const float *in[8];
#pragma GCC unroll 8
      for (int r = 0; r < R; r++) in[r] = a->in[(r0 + r) * kh + ky] + ox;
      int64_t phase = 0, idx = 0;
      for (int64_t kx = 0; kx < kw; kx++, w++) {
        const int64_t off = phase * plen + idx;
        const __m512 wb = _mm512_set1_ps(*w);
#pragma GCC unroll 8
        for (int r = 0; r < R; r++)
#pragma GCC unroll 2
          for (int v = 0; v < V; v++)
            acc[r * V + v] = _mm512_fmadd_ps(wb, _mm512_loadu_ps(in[r] + off + 16 * v), acc[r * V + v]);
        idx += step_idx;
        phase += step_phase;
        if (phase >= sw) phase -= sw, idx++;
      }
    }
#pragma GCC unroll 8
    for (int r = 0; r < R; r++)
#pragma GCC unroll 2
      for (int v = 0; v < V; v++) {
        int64_t col = ox + 16 * v, at = (r0 + r) * a->ldy + col;
        __mmask16 m = lanes_below(ow - col);
        __m512 out = acc[r * V + v];
        if (a->res) out = _mm512_add_ps(out, _mm512_maskz_loadu_ps(m, a->res + at));
        _mm512_mask_storeu_ps(a->y + at, m, out);
      }
  }
}

/* K x K kernels (K = 3, 5, 7: compile-time, every loop unrolled) whose output rows share input rows
 * (rows_shift): each of the R + K - 1 input rows under R output rows is loaded once per tap column and
 * added into every output row it is under (the weight broadcast from memory into the FMA, or kept in a
 * register where the compiler has one): about K times fewer input loads than block(). */
INLINE_AVX512 void block_shared(const tb_dw_rows *a, int64_t r0, int R, int V, int K) {
  const int64_t ow = a->ow;
  const float *w = a->w;
  int64_t off[7];
#pragma GCC unroll 7
  for (int kx = 0; kx < K; kx++) off[kx] = kx * a->dw % a->sw * a->phase_len + kx * a->dw / a->sw;
  const float *rows[14];
#pragma GCC unroll 14
  for (int i = 0; i < R + K - 1; i++) rows[i] = i < K ? a->in[r0 * K + i] : a->in[(r0 + i - K + 1) * K + K - 1];
  for (int64_t ox = 0; ox < ow; ox += 16 * V) {
    __m512 acc[8];
#pragma GCC unroll 8
    for (int k = 0; k < R * V; k++) acc[k] = _mm512_set1_ps(a->bias);
#pragma GCC unroll 14
    for (int i = 0; i < R + K - 1; i++)
#pragma GCC unroll 7
      for (int kx = 0; kx < K; kx++)
#pragma GCC unroll 2
        for (int v = 0; v < V; v++) {
          const __m512 x = _mm512_loadu_ps(rows[i] + ox + off[kx] + 16 * v);
#pragma GCC unroll 8
          for (int r = 0; r < R; r++)
            if (i - r >= 0 && i - r < K)
              acc[r * V + v] = _mm512_fmadd_ps(_mm512_set1_ps(w[(i - r) * K + kx]), x, acc[r * V + v]);
        }
#pragma GCC unroll 8
    for (int r = 0; r < R; r++)
#pragma GCC unroll 2
      for (int v = 0; v < V; v++) {
        int64_t col = ox + 16 * v, at = (r0 + r) * a->ldy + col;
        __mmask16 m = lanes_below(ow - col);
        __m512 out = acc[r * V + v];
        if (a->res) out = _mm512_add_ps(out, _mm512_maskz_loadu_ps(m, a->res + at));
        _mm512_mask_storeu_ps(a->y + at, m, out);
      }
  }
}

/* Every row of a through block_shared with kernel size K: 4 rows x 2 vectors, or 8 rows x 1 vector for
 * rows of at most 16. */
INLINE_AVX512 void rows_shared(const tb_dw_rows *a, int K) {
  int64_t r0 = 0, n = a->n_rows;
  if (a->ow <= 16) {
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

AVX512 static void rows_3x3(const tb_dw_rows *a) { rows_shared(a, 3); }
AVX512 static void rows_5x5(const tb_dw_rows *a) { rows_shared(a, 5); }
AVX512 static void rows_7x7(const tb_dw_rows *a) { rows_shared(a, 7); }

AVX512 void tb_dw_rows_avx512(const tb_dw_rows *a) {
  if (a->rows_shift && a->kh == a->kw && (a->kh == 3 || a->kh == 5 || a->kh == 7)) {
    if (a->kh == 3) rows_3x3(a);
    else if (a->kh == 5) rows_5x5(a);
    else rows_7x7(a);
    return;
  }
  int64_t r0 = 0, n = a->n_rows;
  if (a->ow <= 16) {
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

/* Lanes i of the 16 at line position p (p + i - pad in [0, n)) read from the input, the others zero. */
INLINE_AVX512 __m512 line_at(const float *xr, int64_t pad, int64_t n, int64_t p) {
  int64_t first = pad - p, end = pad + n - p; /* lanes [first, end) are inside the row */
  if (first <= 0 && end >= 16) return _mm512_loadu_ps(xr + p - pad);
  if (end <= 0 || first >= 16) return _mm512_setzero_ps();
  __mmask16 m = (__mmask16)(lanes_below(end) & ~lanes_below(first));
  return _mm512_maskz_loadu_ps(m, xr + p - pad);
}

AVX512 void tb_dw_stage2_avx512(float *dst, const float *xr, int64_t pad, int64_t n, int64_t phase_len) {
  const __m512i even = _mm512_setr_epi32(0, 2, 4, 6, 8, 10, 12, 14, 16, 18, 20, 22, 24, 26, 28, 30);
  const __m512i odd = _mm512_setr_epi32(1, 3, 5, 7, 9, 11, 13, 15, 17, 19, 21, 23, 25, 27, 29, 31);
  for (int64_t j = 0; j < phase_len; j += 16) {
    __m512 lo = line_at(xr, pad, n, 2 * j), hi = line_at(xr, pad, n, 2 * j + 16);
    _mm512_storeu_ps(dst + j, _mm512_permutex2var_ps(lo, even, hi));
    _mm512_storeu_ps(dst + phase_len + j, _mm512_permutex2var_ps(lo, odd, hi));
  }
}
#else
void tb_dw_stage2_avx512(float *dst, const float *xr, int64_t pad, int64_t n, int64_t phase_len) {
  for (int64_t pc = 0; pc < 2 * phase_len; pc++)
    dst[pc % 2 * phase_len + pc / 2] = pc >= pad && pc < pad + n ? xr[pc - pad] : 0.0f;
}
void tb_dw_rows_avx512(const tb_dw_rows *a) { tb_dw_rows_portable(a); }
#endif
