/* The direct depthwise convolution of the level-2 kernels (group == C == M, where an implicit GEMM would
 * have one row per group), one output row at a time on the AVX-512, AVX2+FMA or portable path:
 * - stride 1: the columns whose taps all lie inside the input row are computed a vector at a time with
 *   every tap accumulated in a register (one store per vector); the few border columns point by point;
 * - other strides (and kernels taller than MAX_TAP_ROWS): every tap adds weight * input row into the output
 *   row (a vector axpy; AVX-512 handles stride 2 with an even-lane permute);
 * then the residual and activation (tb_conv_epilogue_row, conv_act_row.c). */
#include <math.h>
#include "backend/cpu/kernels/fast/conv/conv_fast.h"
#if defined(__x86_64__)
#include <immintrin.h>
#endif

enum { MAX_TAP_ROWS = 16 };

/* The input row under each kernel row ky for output row oy (NULL where it falls in the padding). */
static inline void tap_rows(const tb_conv_geom *g, const float *x, int64_t oy, const float **rows) {
  for (int64_t ky = 0; ky < g->kh; ky++) {
    int64_t iy = oy * g->sh - g->ph + ky * g->dh;
    rows[ky] = iy < 0 || iy >= g->ih ? NULL : x + iy * g->iw;
  }
}

/* One output at column ox (stride 1), every tap bounds-checked. */
static inline float point_s1(const tb_conv_geom *g, const float *const *rows, const float *w, float bias, int64_t ox) {
  float s = bias;
  for (int64_t ky = 0; ky < g->kh; ky++)
    for (int64_t kx = 0; rows[ky] && kx < g->kw; kx++) {
      int64_t ix = ox - g->pw + kx * g->dw;
      if (ix >= 0 && ix < g->iw) s += w[ky * g->kw + kx] * rows[ky][ix];
    }
  return s;
}

/* Stride 1: the border columns point by point, [lo, hi) (every tap inside the row) by INTERIOR. */
#define ROW_S1(name, attr, INTERIOR)                                                                             \
  attr static void name(const tb_conv_geom *g, const float *x, const float *w, float bias, int64_t oy, float *row) { \
    const float *rows[MAX_TAP_ROWS];                                                                             \
    tap_rows(g, x, oy, rows);                                                                                    \
    int64_t lo = g->pw < g->ow ? g->pw : g->ow, hi = g->iw + g->pw - (g->kw - 1) * g->dw;                        \
    if (hi > g->ow) hi = g->ow;                                                                                  \
    if (hi < lo) hi = lo;                                                                                        \
    for (int64_t ox = 0; ox < lo; ox++) row[ox] = point_s1(g, rows, w, bias, ox);                                \
    int64_t done = INTERIOR(g, rows, w, bias, lo, hi, row);                                                      \
    for (int64_t ox = done; ox < g->ow; ox++) row[ox] = point_s1(g, rows, w, bias, ox);                          \
  }

/* One output plane: stride 1 by ROW_S1_FN; otherwise every row starts at the bias and each tap adds weight
 * * input row over the output columns whose input column lies inside the row (AXPY: y[i] += w * x[i *
 * stride], i < n, every x read inside the row); then the residual and activation. Defined once per path
 * so that the vector helpers inline. */
#define DEPTHWISE_PLANE(name, attr, AXPY, ROW_S1_FN)                                                            \
  attr static void name(const tb_conv_geom *g, const float *x, const float *w, float bias, const float *residual, \
                        const tb_gemm_epilogue *ep, float *y) {                                                 \
    bool s1 = g->sw == 1 && g->kh <= MAX_TAP_ROWS;                                                              \
    for (int64_t oy = 0; oy < g->oh; oy++) {                                                                    \
      float *row = y + oy * g->ow;                                                                              \
      if (s1) {                                                                                                 \
        ROW_S1_FN(g, x, w, bias, oy, row);                                                                      \
        tb_conv_epilogue_row(ep, residual ? residual + oy * g->ow : NULL, row, g->ow);                          \
        continue;                                                                                               \
      }                                                                                                         \
      for (int64_t ox = 0; ox < g->ow; ox++) row[ox] = bias;                                                    \
      for (int64_t ky = 0; ky < g->kh; ky++) {                                                                  \
        int64_t iy = oy * g->sh - g->ph + ky * g->dh;                                                           \
        if (iy < 0 || iy >= g->ih) continue;                                                                    \
        const float *xr = x + iy * g->iw;                                                                       \
        for (int64_t kx = 0; kx < g->kw; kx++) {                                                                \
          int64_t off = kx * g->dw - g->pw;                                                                     \
          int64_t lo = off >= 0 ? 0 : (-off + g->sw - 1) / g->sw;                                               \
          int64_t hi = g->iw - 1 - off < 0 ? 0 : (g->iw - 1 - off) / g->sw + 1;                                 \
          if (hi > g->ow) hi = g->ow;                                                                           \
          if (hi > lo) AXPY(row + lo, xr + lo * g->sw + off, g->sw, hi - lo, w[ky * g->kw + kx]);               \
        }                                                                                                       \
      }                                                                                                         \
      tb_conv_epilogue_row(ep, residual ? residual + oy * g->ow : NULL, row, g->ow);                            \
    }                                                                                                           \
  }

/* The interior columns [lo, hi) of a stride-1 row; returns where the caller's point-by-point tail starts. */
static inline int64_t interior_portable(const tb_conv_geom *g, const float *const *rows, const float *w, float bias,
                                        int64_t lo, int64_t hi, float *row) {
  for (int64_t ox = lo; ox < hi; ox++) {
    float s = bias;
    for (int64_t ky = 0; ky < g->kh; ky++)
      for (int64_t kx = 0; rows[ky] && kx < g->kw; kx++) s += w[ky * g->kw + kx] * rows[ky][ox - g->pw + kx * g->dw];
    row[ox] = s;
  }
  return hi;
}

static inline void axpy_portable(float *y, const float *x, int64_t stride, int64_t n, float w) {
  if (stride == 1)
    for (int64_t i = 0; i < n; i++) y[i] += w * x[i];
  else
    for (int64_t i = 0; i < n; i++) y[i] += w * x[i * stride];
}
ROW_S1(row_s1_portable, , interior_portable)
DEPTHWISE_PLANE(plane_portable, , axpy_portable, row_s1_portable)

#if defined(__x86_64__)
#define AVX2_ATTR __attribute__((target("avx2,fma")))
#define AVX512_ATTR __attribute__((target("avx512f,fma")))

AVX2_ATTR static inline void axpy_avx2(float *y, const float *x, int64_t stride, int64_t n, float w) {
  int64_t i = 0;
  if (stride == 1) {
    __m256 wv = _mm256_set1_ps(w);
    for (; i + 8 <= n; i += 8) _mm256_storeu_ps(y + i, _mm256_fmadd_ps(wv, _mm256_loadu_ps(x + i), _mm256_loadu_ps(y + i)));
  }
  for (; i < n; i++) y[i] += w * x[i * stride];
}
/* Four vectors (32 columns) per pass while they fit, then one: independent FMA chains. */
AVX2_ATTR static inline int64_t interior_avx2(const tb_conv_geom *g, const float *const *rows, const float *w,
                                              float bias, int64_t lo, int64_t hi, float *row) {
  int64_t ox = lo;
  for (int width = 4; width >= 1; width -= 3)
    for (; ox + 8 * width <= hi; ox += 8 * width) {
      __m256 acc[4];
      for (int v = 0; v < width; v++) acc[v] = _mm256_set1_ps(bias);
      for (int64_t ky = 0; ky < g->kh; ky++) {
        if (!rows[ky]) continue;
        const float *b = rows[ky] + ox - g->pw;
        for (int64_t kx = 0; kx < g->kw; kx++, b += g->dw) {
          __m256 wv = _mm256_set1_ps(w[ky * g->kw + kx]);
          for (int v = 0; v < width; v++) acc[v] = _mm256_fmadd_ps(wv, _mm256_loadu_ps(b + 8 * v), acc[v]);
        }
      }
      for (int v = 0; v < width; v++) _mm256_storeu_ps(row + ox + 8 * v, acc[v]);
    }
  return ox;
}
ROW_S1(row_s1_avx2, AVX2_ATTR, interior_avx2)
DEPTHWISE_PLANE(plane_avx2, AVX2_ATTR, axpy_avx2, row_s1_avx2)

AVX512_ATTR static inline void axpy_avx512(float *y, const float *x, int64_t stride, int64_t n, float w) {
  __m512 wv = _mm512_set1_ps(w);
  int64_t i = 0;
  if (stride == 1) {
    for (; i + 16 <= n; i += 16) _mm512_storeu_ps(y + i, _mm512_fmadd_ps(wv, _mm512_loadu_ps(x + i), _mm512_loadu_ps(y + i)));
    if (i < n) {
      __mmask16 m = (__mmask16)((1u << (n - i)) - 1u);
      _mm512_mask_storeu_ps(y + i, m, _mm512_fmadd_ps(wv, _mm512_maskz_loadu_ps(m, x + i), _mm512_maskz_loadu_ps(m, y + i)));
    }
    return;
  }
  if (stride == 2) {
    const __m512i even = _mm512_set_epi32(30, 28, 26, 24, 22, 20, 18, 16, 14, 12, 10, 8, 6, 4, 2, 0);
    for (; i + 16 < n; i += 16) { /* reads x[2i .. 2i + 31], all below 2(n - 1) */
      __m512 v = _mm512_permutex2var_ps(_mm512_loadu_ps(x + 2 * i), even, _mm512_loadu_ps(x + 2 * i + 16));
      _mm512_storeu_ps(y + i, _mm512_fmadd_ps(wv, v, _mm512_loadu_ps(y + i)));
    }
  }
  for (; i < n; i++) y[i] += w * x[i * stride];
}
/* Four vectors (64 columns) per pass: four independent FMA chains instead of one. */
AVX512_ATTR static inline int64_t interior_avx512(const tb_conv_geom *g, const float *const *rows, const float *w,
                                                  float bias, int64_t lo, int64_t hi, float *row) {
  for (int64_t ox = lo; ox < hi; ox += 64) {
    __mmask16 m[4];
    __m512 acc[4];
#pragma GCC unroll 4
    for (int v = 0; v < 4; v++) {
      int64_t left = hi - ox - 16 * v;
      m[v] = left >= 16 ? (__mmask16)0xFFFF : left <= 0 ? (__mmask16)0 : (__mmask16)((1u << left) - 1u);
      acc[v] = _mm512_set1_ps(bias);
    }
    for (int64_t ky = 0; ky < g->kh; ky++) {
      if (!rows[ky]) continue;
      const float *b = rows[ky] + ox - g->pw;
      for (int64_t kx = 0; kx < g->kw; kx++, b += g->dw) {
        __m512 wv = _mm512_set1_ps(w[ky * g->kw + kx]);
#pragma GCC unroll 4
        for (int v = 0; v < 4; v++)
          if (m[v]) acc[v] = _mm512_fmadd_ps(wv, _mm512_maskz_loadu_ps(m[v], b + 16 * v), acc[v]);
      }
    }
#pragma GCC unroll 4
    for (int v = 0; v < 4; v++)
      if (m[v]) _mm512_mask_storeu_ps(row + ox + 16 * v, m[v], acc[v]);
  }
  return hi;
}
ROW_S1(row_s1_avx512, AVX512_ATTR, interior_avx512)
DEPTHWISE_PLANE(plane_avx512, AVX512_ATTR, axpy_avx512, row_s1_avx512)
#endif

void tb_conv_depthwise_plane(tb_gemm_path path, const tb_conv_geom *g, const float *x, const float *w, float bias,
                             const float *residual, const tb_gemm_epilogue *ep, float *y) {
#if defined(__x86_64__)
  if (path == TB_GEMM_AVX512) plane_avx512(g, x, w, bias, residual, ep, y);
  else if (path == TB_GEMM_AVX2) plane_avx2(g, x, w, bias, residual, ep, y);
  else plane_portable(g, x, w, bias, residual, ep, y);
#else
  (void)path;
  plane_portable(g, x, w, bias, residual, ep, y);
#endif
}
