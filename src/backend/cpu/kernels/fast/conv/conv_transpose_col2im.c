/* The col2im of the level-2 ConvTranspose (conv_transpose.h): each (channel, tap) row of the GEMM's column
 * matrix is added to the output row each input row lands on. Rows of stride 1 are contiguous adds; with
 * stride 2 and no dilation the taps kx and kx+1 land on the even and odd pixels of the same run, so they
 * are interleaved and added as one contiguous run (the 2x2 stride-2 upsampling of U-Nets and detection
 * heads is all pairs); anything else is a strided scalar add. The adds are vectorised for AVX2 and
 * AVX-512 (target attributes; the caller checked cpuid); each output element gets the same additions in
 * the same order on every path. */
#include <immintrin.h>
#include "backend/cpu/kernels/fast/conv/conv_transpose.h"

typedef struct col2im_ops {
  void (*add)(float *y, const float *c, int64_t n);                       /* y[i] += c[i] */
  void (*add_pair)(float *y, const float *c0, const float *c1, int64_t n); /* y[2i] += c0[i], y[2i+1] += c1[i] */
} col2im_ops;

static void add_portable(float *y, const float *c, int64_t n) {
  for (int64_t i = 0; i < n; i++) y[i] += c[i];
}

static void add_pair_portable(float *y, const float *c0, const float *c1, int64_t n) {
  for (int64_t i = 0; i < n; i++) {
    y[2 * i] += c0[i];
    y[2 * i + 1] += c1[i];
  }
}

#if defined(__x86_64__) || defined(__i386__)
#define AVX2 __attribute__((target("avx2,fma")))
#define AVX512 __attribute__((target("avx512f")))

AVX2 static void add_avx2(float *y, const float *c, int64_t n) {
  int64_t i = 0;
  for (; i + 8 <= n; i += 8) _mm256_storeu_ps(y + i, _mm256_add_ps(_mm256_loadu_ps(y + i), _mm256_loadu_ps(c + i)));
  for (; i < n; i++) y[i] += c[i];
}

AVX2 static void add_pair_avx2(float *y, const float *c0, const float *c1, int64_t n) {
  int64_t i = 0;
  for (; i + 8 <= n; i += 8) {
    __m256 a = _mm256_loadu_ps(c0 + i), b = _mm256_loadu_ps(c1 + i);
    __m256 lo = _mm256_unpacklo_ps(a, b), hi = _mm256_unpackhi_ps(a, b); /* a0 b0 a1 b1 | a4 b4 a5 b5, ... */
    __m256 first = _mm256_permute2f128_ps(lo, hi, 0x20), second = _mm256_permute2f128_ps(lo, hi, 0x31);
    _mm256_storeu_ps(y + 2 * i, _mm256_add_ps(_mm256_loadu_ps(y + 2 * i), first));
    _mm256_storeu_ps(y + 2 * i + 8, _mm256_add_ps(_mm256_loadu_ps(y + 2 * i + 8), second));
  }
  for (; i < n; i++) {
    y[2 * i] += c0[i];
    y[2 * i + 1] += c1[i];
  }
}

AVX512 static void add_avx512(float *y, const float *c, int64_t n) {
  int64_t i = 0;
  for (; i + 16 <= n; i += 16) _mm512_storeu_ps(y + i, _mm512_add_ps(_mm512_loadu_ps(y + i), _mm512_loadu_ps(c + i)));
  if (i < n) {
    __mmask16 m = (__mmask16)((1u << (n - i)) - 1);
    _mm512_mask_storeu_ps(y + i, m, _mm512_add_ps(_mm512_maskz_loadu_ps(m, y + i), _mm512_maskz_loadu_ps(m, c + i)));
  }
}

AVX512 static void add_pair_avx512(float *y, const float *c0, const float *c1, int64_t n) {
  const __m512i lo_idx = _mm512_setr_epi32(0, 16, 1, 17, 2, 18, 3, 19, 4, 20, 5, 21, 6, 22, 7, 23);
  const __m512i hi_idx = _mm512_setr_epi32(8, 24, 9, 25, 10, 26, 11, 27, 12, 28, 13, 29, 14, 30, 15, 31);
  int64_t i = 0;
  for (; i + 16 <= n; i += 16) {
    __m512 a = _mm512_loadu_ps(c0 + i), b = _mm512_loadu_ps(c1 + i);
    __m512 first = _mm512_permutex2var_ps(a, lo_idx, b), second = _mm512_permutex2var_ps(a, hi_idx, b);
    _mm512_storeu_ps(y + 2 * i, _mm512_add_ps(_mm512_loadu_ps(y + 2 * i), first));
    _mm512_storeu_ps(y + 2 * i + 16, _mm512_add_ps(_mm512_loadu_ps(y + 2 * i + 16), second));
  }
  for (; i < n; i++) {
    y[2 * i] += c0[i];
    y[2 * i + 1] += c1[i];
  }
}

static const col2im_ops ops_avx2 = {add_avx2, add_pair_avx2};
static const col2im_ops ops_avx512 = {add_avx512, add_pair_avx512};
#endif

static const col2im_ops ops_portable = {add_portable, add_pair_portable};

static const col2im_ops *ops_for(tb_gemm_path path) {
#if defined(__x86_64__) || defined(__i386__)
  if (path == TB_GEMM_AVX512) return &ops_avx512;
  if (path == TB_GEMM_AVX2) return &ops_avx2;
#endif
  (void)path;
  return &ops_portable;
}

/* The input pixels [*lo, *hi) of a row of iw whose output pixel ix * s + off lies in [0, ow). */
static void tap_range(int64_t iw, int64_t ow, int64_t s, int64_t off, int64_t *lo, int64_t *hi) {
  int64_t l = off >= 0 ? 0 : (-off + s - 1) / s;
  int64_t h = ow - 1 - off < 0 ? 0 : (ow - 1 - off) / s + 1;
  *lo = l;
  *hi = h < iw ? h : iw;
  if (*hi < *lo) *hi = *lo;
}

/* y[(ix * s + off)] += c[ix] for ix in [lo, hi). */
static void add_strided(float *y, const float *c, int64_t s, int64_t off, int64_t lo, int64_t hi) {
  for (int64_t ix = lo; ix < hi; ix++) y[ix * s + off] += c[ix];
}

/* One output row yrow (ow pixels) += the taps of one input row (tap kx: its iw products at c0 + kx * ldc). */
static void row_taps(const col2im_ops *ops, const tb_conv_geom *g, float *yrow, const float *c0, int64_t ldc) {
  int64_t s = g->sw, kx = 0;
  if (s == 1) {
    for (; kx < g->kw; kx++) {
      int64_t off = kx * g->dw - g->pw, lo, hi;
      tap_range(g->iw, g->ow, 1, off, &lo, &hi);
      if (hi > lo) ops->add(yrow + lo + off, c0 + kx * ldc + lo, hi - lo);
    }
    return;
  }
  if (s == 2 && g->dw == 1)
    for (; kx + 1 < g->kw; kx += 2) {
      int64_t off = kx - g->pw, lo0, hi0, lo1, hi1;
      tap_range(g->iw, g->ow, 2, off, &lo0, &hi0);
      tap_range(g->iw, g->ow, 2, off + 1, &lo1, &hi1);
      int64_t lo = lo0 > lo1 ? lo0 : lo1, hi = hi0 < hi1 ? hi0 : hi1;
      const float *a = c0 + kx * ldc, *b = a + ldc;
      if (hi <= lo) { /* no pixel of the pair in common: each tap alone */
        add_strided(yrow, a, 2, off, lo0, hi0);
        add_strided(yrow, b, 2, off + 1, lo1, hi1);
        continue;
      }
      add_strided(yrow, a, 2, off, lo0, lo);
      add_strided(yrow, b, 2, off + 1, lo1, lo);
      ops->add_pair(yrow + 2 * lo + off, a + lo, b + lo, hi - lo);
      add_strided(yrow, a, 2, off, hi, hi0);
      add_strided(yrow, b, 2, off + 1, hi, hi1);
    }
  for (; kx < g->kw; kx++) {
    int64_t off = kx * g->dw - g->pw, lo, hi;
    tap_range(g->iw, g->ow, s, off, &lo, &hi);
    add_strided(yrow, c0 + kx * ldc, s, off, lo, hi);
  }
}

void tb_convt_col2im(tb_gemm_path path, const tb_conv_geom *g, int64_t m0, int64_t m1, const float *cols, int64_t ldc,
                     int64_t iy0, int64_t rows, float *y) {
  const col2im_ops *ops = ops_for(path);
  int64_t plane = g->oh * g->ow;
  for (int64_t m = m0; m < m1; m++)
    for (int64_t ky = 0; ky < g->kh; ky++) {
      const float *c = cols + (m * g->kh + ky) * g->kw * ldc;
      for (int64_t r = 0; r < rows; r++) {
        int64_t oy = (iy0 + r) * g->sh + ky * g->dh - g->ph;
        if (oy < 0 || oy >= g->oh) continue;
        row_taps(ops, g, y + m * plane + oy * g->ow, c + r * g->iw, ldc);
      }
    }
}
