/* The separable MaxPool plane on AVX2 (vec_pool_avx2.h), as the AVX-512 path has for ResNet's stem pool
 * (vec_pool.c), for any kernel and stride. Per input row, once: the row is copied between -inf pads into
 * P (checked for NaN on the way) and, at a column stride s > 1, split into s phases (stride 2: an 8 + 8
 * deinterleave per 16 columns; other strides element by element), so that tap t of outputs o .. o+7 is
 * one contiguous load (phase t mod s, index o + t / s); the row's horizontal maxima, taps in window order
 * with each later tap taken only when greater (vmaxps(later, acc)), go to a ring of kernel-height rows.
 * Per output row: the vertical max of its rows' maxima in row order, the last partial vector stored
 * through a mask. Without NaNs that is the reference's result bit for bit: the first tap in window order
 * holding the maximum wins (ties such as -0 and +0; pads are -inf, below or equal to every tap). An output
 * row that reads a row holding a NaN, or no row at all, is handed back to the caller's tap-by-tap loop. */
#include "backend/cpu/kernels/fast/vec/vec_pool_avx2.h"
#include <math.h>
#include <stdbool.h>
#if defined(__x86_64__)
#include <immintrin.h>

#define AVX2 __attribute__((target("avx2,fma")))

/* The ring's rows and the taps per row a plane may have (vec_pool.c checks before calling). */
enum { SEP_MAX_KERNEL = VEC_MAXPOOL_AVX2_MAX_KERNEL };

static int64_t up8(int64_t v) { return (v + 7) & ~(int64_t)7; }

/* owr: output columns rounded up to 8 (a ring row); lph: one phase's length, enough for every tap of
 * owr outputs and for the padded row; lp = sw * lph: P's length. */
typedef struct layout {
  int64_t owr, lph, lp;
} layout;

static layout layout_of(const vec_maxpool_geom *g) {
  layout l;
  l.owr = up8(g->ow);
  int64_t row = (g->pl + g->w + g->sw - 1) / g->sw, taps = l.owr + g->kw;
  l.lph = up8(row > taps ? row : taps);
  l.lp = g->sw * l.lph;
  return l;
}

size_t tb_vec_maxpool_avx2_scratch(const vec_maxpool_geom *g) {
  layout l = layout_of(g);
  return (size_t)(l.lp + (g->sw > 1 ? l.lp : 0) + g->kh * l.owr); /* P, its phases, the ring */
}

static inline AVX2 __m256i low_lanes(int64_t n) {
  return _mm256_cmpgt_epi32(_mm256_set1_epi32((int)n), _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7));
}

/* P = -inf pads, the row, -inf to lp; true when the row holds a NaN. */
AVX2 static bool pad_row(const vec_maxpool_geom *g, const layout *l, const float *xr, float *p) {
  for (int64_t i = 0; i < g->pl; i++) p[i] = -INFINITY;
  float *dst = p + g->pl;
  __m256 nan = _mm256_setzero_ps();
  int64_t c = 0;
  for (; c + 8 <= g->w; c += 8) {
    __m256 v = _mm256_loadu_ps(xr + c);
    nan = _mm256_or_ps(nan, _mm256_cmp_ps(v, v, _CMP_UNORD_Q));
    _mm256_storeu_ps(dst + c, v);
  }
  bool any = _mm256_movemask_ps(nan) != 0;
  for (; c < g->w; c++) {
    any |= isnan(xr[c]);
    dst[c] = xr[c];
  }
  for (int64_t i = g->pl + g->w; i < l->lp; i++) p[i] = -INFINITY;
  return any;
}

/* Phase q of P at ph + q * lph: ph[q * lph + i] = P[i * sw + q]. */
AVX2 static void split_phases(const vec_maxpool_geom *g, const layout *l, const float *p, float *ph) {
  if (g->sw == 2) {
    for (int64_t i = 0; i < l->lph; i += 8) {
      __m256 a = _mm256_loadu_ps(p + 2 * i), b = _mm256_loadu_ps(p + 2 * i + 8);
      /* per 128-bit half: (a0 a2 b0 b2 | a4 a6 b4 b6); the 64-bit pairs reordered 0, 2, 1, 3 */
      __m256d e = _mm256_castps_pd(_mm256_shuffle_ps(a, b, _MM_SHUFFLE(2, 0, 2, 0)));
      __m256d o = _mm256_castps_pd(_mm256_shuffle_ps(a, b, _MM_SHUFFLE(3, 1, 3, 1)));
      _mm256_storeu_ps(ph + i, _mm256_castpd_ps(_mm256_permute4x64_pd(e, _MM_SHUFFLE(3, 1, 2, 0))));
      _mm256_storeu_ps(ph + l->lph + i, _mm256_castpd_ps(_mm256_permute4x64_pd(o, _MM_SHUFFLE(3, 1, 2, 0))));
    }
    return;
  }
  for (int64_t q = 0; q < g->sw; q++)
    for (int64_t i = 0; i < l->lph; i++) ph[q * l->lph + i] = p[i * g->sw + q];
}

/* out[0 .. owr) = the horizontal maxima of input row xr; true (and out unwritten) when the row holds a NaN. */
AVX2 static bool hmax_row(const vec_maxpool_geom *g, const layout *l, const float *xr, float *p, float *ph,
                          float *out) {
  if (pad_row(g, l, xr, p)) return true;
  const float *base[SEP_MAX_KERNEL];
  if (g->sw > 1) split_phases(g, l, p, ph);
  for (int64_t t = 0; t < g->kw; t++) base[t] = g->sw == 1 ? p + t : ph + (t % g->sw) * l->lph + t / g->sw;
  for (int64_t o = 0; o < l->owr; o += 8) {
    __m256 acc = _mm256_loadu_ps(base[0] + o);
    for (int64_t t = 1; t < g->kw; t++) acc = _mm256_max_ps(_mm256_loadu_ps(base[t] + o), acc);
    _mm256_storeu_ps(out + o, acc);
  }
  return false;
}

AVX2 void tb_vec_maxpool_plane_avx2(const vec_maxpool_geom *g, const float *x, float *y, float *scratch,
                                    vec_maxpool_redo_fn redo, const void *ctx) {
  const layout l = layout_of(g);
  float *p = scratch, *ph = p + l.lp, *ring = ph + (g->sw > 1 ? l.lp : 0);
  bool ring_nan[SEP_MAX_KERNEL];
  const __m256i tail = low_lanes(g->ow & 7);
  int64_t next = 0; /* the next input row to take into the ring (row r in slot r mod kh) */
  for (int64_t oh = 0; oh < g->oh; oh++) {
    int64_t start = oh * g->sh - g->pt;
    int64_t r0 = start < 0 ? 0 : start, r1 = start + g->kh < g->h ? start + g->kh : g->h;
    float *yr = y + oh * g->ow;
    if (r0 >= r1) { /* no input row under this output row */
      redo(ctx, x, oh, yr);
      continue;
    }
    if (next < r0) next = r0;
    for (; next < r1; next++)
      ring_nan[next % g->kh] = hmax_row(g, &l, x + next * g->w, p, ph, ring + (next % g->kh) * l.owr);
    bool nan = false;
    for (int64_t r = r0; r < r1; r++) nan |= ring_nan[r % g->kh];
    if (nan) {
      redo(ctx, x, oh, yr);
      continue;
    }
    const float *first = ring + (r0 % g->kh) * l.owr;
    for (int64_t o = 0; o < g->ow; o += 8) {
      __m256 acc = _mm256_loadu_ps(first + o);
      for (int64_t r = r0 + 1; r < r1; r++) acc = _mm256_max_ps(_mm256_loadu_ps(ring + (r % g->kh) * l.owr + o), acc);
      if (o + 8 <= g->ow)
        _mm256_storeu_ps(yr + o, acc);
      else
        _mm256_maskstore_ps(yr + o, tail, acc);
    }
  }
}

#else
size_t tb_vec_maxpool_avx2_scratch(const vec_maxpool_geom *g) {
  (void)g;
  return 0;
}

void tb_vec_maxpool_plane_avx2(const vec_maxpool_geom *g, const float *x, float *y, float *scratch,
                               vec_maxpool_redo_fn redo, const void *ctx) {
  for (int64_t oh = 0; oh < g->oh; oh++) redo(ctx, x, oh, y + oh * g->ow);
  (void)scratch;
}
#endif
