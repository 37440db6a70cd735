/* The AVX2+FMA and AVX-512 row loops of the level-2 Resize (resize_fast.h): the taps of 8 or 16 columns
 * loaded, fused multiply-adds in tap order, the remainder masked (AVX-512) or scalar (AVX2). AVX-512 loads
 * the taps of 16 columns that lie within 32 inputs (upscaling, downscaling by up to 2: the axis's windows)
 * as two vectors and one permute, other taps with gathers; AVX2 with eight scalar loads: vgatherdps is microcoded on the AVX2-only AMD cores,
 * and qemu's Haswell model (scripts/test_isa.sh) gave every lane lane 0's element in the register
 * allocation GCC chose for the interpolation loop.
 * Compiled with target attributes; the kernel calls them only when cpuid has the instruction set. */
#include "backend/cpu/kernels/fast/resize/resize_fast.h"
#if defined(__x86_64__) || defined(__i386__)
#include <immintrin.h>

_Static_assert(TB_RESIZE_BLOCK == 16, "the AVX-512 loops take one window per 16-lane vector");

#define AVX2 __attribute__((target("avx2,fma")))
#define AVX512 __attribute__((target("avx512f,fma")))

/* row[idx[0..8)] */
AVX2 static inline __m256 taps8(const float *row, const int32_t *idx) {
  return _mm256_setr_ps(row[idx[0]], row[idx[1]], row[idx[2]], row[idx[3]], row[idx[4]], row[idx[5]], row[idx[6]],
                        row[idx[7]]);
}

AVX2 static void gather_avx2(const float *row, const tb_resize_axis *ax, float *out) {
  int64_t j = 0, n = ax->n;
  for (; j + 8 <= n; j += 8) _mm256_storeu_ps(out + j, taps8(row, ax->idx + j));
  for (; j < n; j++) out[j] = row[ax->idx[j]];
}

AVX2 static void interp_avx2(const float *row, const tb_resize_axis *ax, float *out) {
  int64_t j = 0, n = ax->n;
  const int32_t *idx = ax->idx;
  const float *w = ax->w;
  for (; j + 8 <= n; j += 8) {
    __m256 s = _mm256_setzero_ps();
    for (int t = 0; t < ax->taps; t++)
      s = _mm256_fmadd_ps(_mm256_loadu_ps(w + t * n + j), taps8(row, idx + t * n + j), s);
    _mm256_storeu_ps(out + j, s);
  }
  for (; j < n; j++) {
    float s = 0.0f;
    for (int t = 0; t < ax->taps; t++) s = __builtin_fmaf(w[t * n + j], row[idx[t * n + j]], s);
    out[j] = s;
  }
}

AVX2 static void blend_avx2(const float *const *rows, const float *wy, int taps, int64_t n, float *out) {
  int64_t j = 0;
  for (; j + 8 <= n; j += 8) {
    __m256 s = _mm256_setzero_ps();
    for (int t = 0; t < taps; t++) s = _mm256_fmadd_ps(_mm256_set1_ps(wy[t]), _mm256_loadu_ps(rows[t] + j), s);
    _mm256_storeu_ps(out + j, s);
  }
  for (; j < n; j++) {
    float s = 0.0f;
    for (int t = 0; t < taps; t++) s = __builtin_fmaf(wy[t], rows[t][j], s);
    out[j] = s;
  }
}

/* The first `count` of 16 lanes (count may be <= 0 or >= 16). */
AVX512 static inline __mmask16 lanes(int64_t count) {
  return count >= 16 ? (__mmask16)0xFFFF : count <= 0 ? (__mmask16)0 : (__mmask16)((1u << count) - 1);
}

/* row[idx[i]] for the lanes of m: from the 32-input window at base (base >= 0; the inputs past the row's
 * `in` values are not read) by a two-vector permute, else by a gather. */
AVX512 static inline __m512 taps16(const float *row, int64_t in, const int32_t *idx, int32_t base, __mmask16 m) {
  __m512i i = _mm512_maskz_loadu_epi32(m, idx);
  if (base < 0) return _mm512_mask_i32gather_ps(_mm512_setzero_ps(), m, i, row, 4);
  __m512 lo = _mm512_maskz_loadu_ps(lanes(in - base), row + base);
  __m512 hi = _mm512_maskz_loadu_ps(lanes(in - base - 16), row + base + 16);
  return _mm512_permutex2var_ps(lo, _mm512_sub_epi32(i, _mm512_set1_epi32(base)), hi);
}

AVX512 static void gather_avx512(const float *row, const tb_resize_axis *ax, float *out) {
  for (int64_t j = 0, b = 0; j < ax->n; j += 16, b++) {
    __mmask16 m = lanes(ax->n - j);
    _mm512_mask_storeu_ps(out + j, m, taps16(row, ax->in, ax->idx + j, ax->win[b], m));
  }
}

AVX512 static void interp_avx512(const float *row, const tb_resize_axis *ax, float *out) {
  int64_t n = ax->n, blocks = (n + 15) / 16;
  for (int64_t j = 0, b = 0; j < n; j += 16, b++) {
    __mmask16 m = lanes(n - j);
    __m512 s = _mm512_setzero_ps();
    for (int t = 0; t < ax->taps; t++) {
      __m512 x = taps16(row, ax->in, ax->idx + t * n + j, ax->win[t * blocks + b], m);
      s = _mm512_fmadd_ps(_mm512_maskz_loadu_ps(m, ax->w + t * n + j), x, s);
    }
    _mm512_mask_storeu_ps(out + j, m, s);
  }
}

AVX512 static void blend_avx512(const float *const *rows, const float *wy, int taps, int64_t n, float *out) {
  for (int64_t j = 0; j < n; j += 16) {
    __mmask16 m = lanes(n - j);
    __m512 s = _mm512_setzero_ps();
    for (int t = 0; t < taps; t++) s = _mm512_fmadd_ps(_mm512_set1_ps(wy[t]), _mm512_maskz_loadu_ps(m, rows[t] + j), s);
    _mm512_mask_storeu_ps(out + j, m, s);
  }
}

const tb_resize_rows tb_resize_rows_avx2 = {gather_avx2, interp_avx2, blend_avx2};
const tb_resize_rows tb_resize_rows_avx512 = {gather_avx512, interp_avx512, blend_avx512};
#endif
