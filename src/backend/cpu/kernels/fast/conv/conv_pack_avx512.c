/* The AVX-512 side of the convolution's patch packer (conv_pack.c). tb_conv_pack_runs_avx512: for stride
 * 1 or 2 and runs of up to 32 pixels, each run and tap column gets, once per call, the load masks of the
 * input lanes it reads (the lanes in the padding masked off, so they load as zeros and are never touched);
 * every depth row is then, per run, up to two (stride 1) or four (stride 2, even lanes picked by a
 * permute) masked loads and two masked stores, with no call, branch per pixel or separate zero fill; the
 * input row of each run is found once per channel and kernel row. tb_conv_gather_avx512:
 * one clipped row segment for the general loop (masked copy, permute, or masked hardware gather).
 * Only these functions are built for AVX-512 (target attribute); the convolution uses them only on the
 * paths that need AVX512F. Off x86-64 they are the portable fallbacks. tb_conv_gather_portable, the
 * fallback of both, lives here too, so the packer (conv_pack.c) uses this file and not the other way round. */
#include <string.h>
#include "backend/cpu/kernels/fast/conv/conv_fast.h"

void tb_conv_gather_portable(float *d, const float *x, int64_t stride, int64_t n) {
  if (stride == 1) {
    memcpy(d, x, (size_t)n * sizeof *d);
    return;
  }
  for (int64_t t = 0; t < n; t++) d[t] = x[t * stride];
}

#if defined(__x86_64__)
#include <immintrin.h>

enum { MAX_RUNS = 64, MAX_TAP_COLS = 16, MAX_RUN = 32 };

/* One run under one tap column: where its pixel 0 reads in the input row (possibly outside it; only
 * unmasked lanes are loaded), and the load masks of its input lanes (stride 1: two vectors, stride 2:
 * four). */
typedef struct lane_plan {
  int64_t ix;
  __mmask16 load[4];
} lane_plan;

/* Bits lo .. hi-1 of a 64-bit mask (0 <= lo <= hi <= 64). */
static inline uint64_t bit_range(int64_t lo, int64_t hi) {
  uint64_t upto_hi = hi >= 64 ? ~0ull : (1ull << hi) - 1, upto_lo = lo >= 64 ? ~0ull : (1ull << lo) - 1;
  return hi > lo ? upto_hi & ~upto_lo : 0;
}

static lane_plan plan_for(const tb_conv_geom *g, int64_t ox0, int64_t len, int64_t kx) {
  int64_t ix0 = ox0 * g->sw - g->pw + kx * g->dw, sw = g->sw;
  /* pixels t in [lo, hi) read inside the row: 0 <= ix0 + t * sw < iw */
  int64_t lo = ix0 >= 0 ? 0 : (-ix0 + sw - 1) / sw, hi = ix0 >= g->iw ? 0 : (g->iw - 1 - ix0) / sw + 1;
  if (hi > len) hi = len;
  /* input lanes (relative to ix0) read: t * sw for t in [lo, hi): a contiguous range at stride 1 or 2 */
  uint64_t bits = hi > lo ? bit_range(lo * sw, (hi - 1) * sw + 1) : 0;
  lane_plan lp = {ix0, {(__mmask16)bits, (__mmask16)(bits >> 16), (__mmask16)(bits >> 32), (__mmask16)(bits >> 48)}};
  return lp;
}

__attribute__((target("avx512f"))) bool tb_conv_pack_runs_avx512(const tb_conv_patches *pc, const tb_conv_pixel_run *runs,
                                                                int n_runs, int64_t p0, int64_t kc, int width,
                                                                float *dst) {
  const tb_conv_geom *g = pc->g;
  int64_t sw = g->sw;
  if ((sw != 1 && sw != 2) || g->kw > MAX_TAP_COLS || n_runs > MAX_RUNS) return false;
  for (int r = 0; r < n_runs; r++)
    if (runs[r].len > MAX_RUN) return false;
  lane_plan plans[MAX_RUNS][MAX_TAP_COLS];
  __mmask16 store[MAX_RUNS][2];
  int64_t row0[MAX_RUNS];
  for (int r = 0; r < n_runs; r++) {
    for (int64_t kx = 0; kx < g->kw; kx++) plans[r][kx] = plan_for(g, runs[r].ox, runs[r].len, kx);
    uint32_t out = (uint32_t)bit_range(0, runs[r].len);
    store[r][0] = (__mmask16)out;
    store[r][1] = (__mmask16)(out >> 16);
    row0[r] = runs[r].oy * g->sh - g->ph;
  }
  const __m512i even = _mm512_setr_epi32(0, 2, 4, 6, 8, 10, 12, 14, 16, 18, 20, 22, 24, 26, 28, 30);
  const __m512 zero = _mm512_setzero_ps();
  int64_t taps = g->kh * g->kw, plane = g->ih * g->iw;
  int64_t c = p0 / taps, ky = p0 % taps / g->kw, kx = p0 % g->kw;
  const float *rows[MAX_RUNS]; /* each run's input row under (c, ky); NULL in the padding */
  for (int64_t p = 0; p < kc; p++) {
    if (p == 0 || kx == 0)
      for (int r = 0; r < n_runs; r++) {
        int64_t iy = row0[r] + ky * g->dh;
        rows[r] = iy < 0 || iy >= g->ih ? NULL : pc->x + c * plane + iy * g->iw;
      }
    float *d = dst + p * width;
    for (int r = 0; r < n_runs; r++) {
      float *dr = d + runs[r].at;
      __m512 v0 = zero, v1 = zero;
      if (rows[r]) {
        const lane_plan *lp = &plans[r][kx];
        /* pixel 0's input address; lanes outside the row are masked off and never dereferenced */
        const float *base = (const float *)((uintptr_t)rows[r] + (uintptr_t)(lp->ix * (int64_t)sizeof(float)));
        if (sw == 1) {
          v0 = _mm512_maskz_loadu_ps(lp->load[0], base);
          if (store[r][1]) v1 = _mm512_maskz_loadu_ps(lp->load[1], base + 16);
        } else {
          v0 = _mm512_permutex2var_ps(_mm512_maskz_loadu_ps(lp->load[0], base), even,
                                      _mm512_maskz_loadu_ps(lp->load[1], base + 16));
          if (store[r][1])
            v1 = _mm512_permutex2var_ps(_mm512_maskz_loadu_ps(lp->load[2], base + 32), even,
                                        _mm512_maskz_loadu_ps(lp->load[3], base + 48));
        }
      }
      _mm512_mask_storeu_ps(dr, store[r][0], v0);
      if (store[r][1]) _mm512_mask_storeu_ps(dr + 16, store[r][1], v1);
    }
    if (++kx == g->kw) {
      kx = 0;
      if (++ky == g->kh) ky = 0, c++;
    }
  }
  return true;
}

static inline __mmask16 first_lanes(int64_t n) { return n >= 16 ? (__mmask16)0xFFFF : (__mmask16)((1u << n) - 1); }

__attribute__((target("avx512f"))) void tb_conv_gather_avx512(float *d, const float *x, int64_t stride, int64_t n) {
  int64_t i = 0;
  if (stride == 1) {
    for (; i + 16 <= n; i += 16) _mm512_storeu_ps(d + i, _mm512_loadu_ps(x + i));
    if (i < n) _mm512_mask_storeu_ps(d + i, first_lanes(n - i), _mm512_maskz_loadu_ps(first_lanes(n - i), x + i));
    return;
  }
  if (stride == 2) {
    const __m512i even = _mm512_setr_epi32(0, 2, 4, 6, 8, 10, 12, 14, 16, 18, 20, 22, 24, 26, 28, 30);
    for (; i < n; i += 16) {
      int64_t r = n - i, cnt = 2 * (r < 16 ? r : 16) - 1; /* elements read from x + 2i */
      __m512 lo = _mm512_maskz_loadu_ps(first_lanes(cnt), x + 2 * i);
      __m512 hi = _mm512_maskz_loadu_ps(first_lanes(cnt - 16 > 0 ? cnt - 16 : 0), x + 2 * i + 16);
      _mm512_mask_storeu_ps(d + i, first_lanes(r), _mm512_permutex2var_ps(lo, even, hi));
    }
    return;
  }
  if (stride * 16 > INT32_MAX / 2) { /* lane offsets would not fit the gather's 32-bit indices */
    tb_conv_gather_portable(d, x, stride, n);
    return;
  }
  const __m512i lanes = _mm512_mullo_epi32(_mm512_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15),
                                           _mm512_set1_epi32((int)stride));
  for (; i < n; i += 16) {
    __mmask16 m = first_lanes(n - i);
    __m512 v = _mm512_mask_i32gather_ps(_mm512_setzero_ps(), m, lanes, x + i * stride, 4);
    _mm512_mask_storeu_ps(d + i, m, v);
  }
}
#else
bool tb_conv_pack_runs_avx512(const tb_conv_patches *pc, const tb_conv_pixel_run *runs, int n_runs, int64_t p0, int64_t kc,
                              int width, float *dst) {
  (void)pc, (void)runs, (void)n_runs, (void)p0, (void)kc, (void)width, (void)dst;
  return false;
}
void tb_conv_gather_avx512(float *d, const float *x, int64_t stride, int64_t n) { tb_conv_gather_portable(d, x, stride, n); }
#endif
