/* Level-2 fp32 MaxPool and AveragePool over 2-D planes (NCHW), with the reference's pads, strides,
 * auto_pad, ceil_mode and count_include_pad (the geometry comes from ops/nn/window.h, as the reference's),
 * and GlobalAveragePool. Dilations other than 1 and MaxPool's Indices output stay with the reference.
 *
 * Per output row, the output row itself accumulates: for each valid kernel row and kernel column, the
 * range of output columns whose tap lands inside the input is one strided run (contiguous at stride 1:
 * the vec_ops table's loops; other strides: a branch-free scalar loop, as a max with a data-dependent
 * branch mispredicts on every other tap). On AVX-512, strides 1 and 2 instead keep 16 outputs in a
 * register over all their taps (row_avx512, with the lane masks of every chunk and kernel column worked
 * out once per job, as they are the same on every row): the earlier row-accumulating loop stored and reloaded the
 * output row once per tap through masked stores that the next load cannot forward from, and a scalar
 * first-tap pass per output; that made MaxPool 3x3/2 over 64x112x112 take about 4 ms.
 * MaxPool keeps the reference's NaN rule: an output starts from its first tap in window order (so a NaN
 * there stays) and later taps replace it only when greater (so later NaNs are skipped).
 * MaxPool with 2 or 3 kernel columns at column stride 2 and left pad <= 2 (ResNet's 3x3/2 stem pool) is
 * separable on AVX-512 (maxpool_plane_separable): each input row's horizontal maxima, 16 outputs from one
 * 32-column block loaded once and split into even and odd columns (a tap one column to either side is a
 * one-lane shift with the neighbouring block), are kept in a ring of kernel-height rows and shared by the
 * output rows that overlap there; then a vertical max over the ring. With a prefetch 4 rows ahead that
 * took the stem pool (64x112x112) from 0.21 to 0.07 ms on one thread as a lone node, and from 0.32 to
 * 0.08 ms inside ResNet-18 (row_avx512 reloads each input row for every output row that reads it and
 * pays two loads and a permute per tap). Without NaNs this is the reference's result bit for bit (a
 * horizontal max in tap order then a vertical one keeps the first tap, in window order, that holds the
 * maximum, as the reference does for ties such as -0 and +0); an output row that reads an input row
 * holding a NaN is redone by row_avx512, which follows the rule tap by tap. On AVX2 every MaxPool (kernel
 * up to 64 x 64) is separable the same way (vec_pool_avx2.c: any kernel and stride, the row split into
 * stride phases so that each tap is one load), its NaN rows redone by the row loop below; so is every
 * AVX-512 MaxPool the AVX-512 separable path does not take (YOLO's SPPF 5x5/1 and the rest: the AVX2
 * plane runs on any AVX-512 CPU; docs/performance.md "Pooling" has the measurements). */
#include <math.h>
#include <string.h>
#include <stdlib.h>
#include "backend/cpu/kernels/fast/vec/vec_kernel.h"
#include "backend/cpu/kernels/fast/vec/vec_pool_avx2.h"
#include "ops/nn/window.h"
#if defined(__x86_64__)
#include <immintrin.h>
#endif

typedef struct pool_job {
  const vec_ops *ops;
  const float *x;
  float *y;
  bool max, include_pad;
  int64_t h, w, oh, ow;
  nn_window win;
} pool_job;

static int64_t clamp64(int64_t v, int64_t lo, int64_t hi) { return v < lo ? lo : v > hi ? hi : v; }

/* Taps k in [0, K) of output o that land inside [0, in), as [*k0, *k1). */
static void valid_taps(int64_t o, int64_t s, int64_t pb, int64_t k, int64_t in, int64_t *k0, int64_t *k1) {
  int64_t start = o * s - pb;
  *k0 = clamp64(-start, 0, k);
  *k1 = clamp64(in - start, *k0, k);
}

/* What the AVX-512 row loop takes: kernel columns and 16-output chunks per row. */
enum { ROW_MAX_TAPS = 16, ROW_MAX_CHUNKS = 32 };

/* Outputs [*lo, *hi] (inclusive; empty when lo > hi) whose tap kw lands inside the row: 0 <= o*sw - pl + kw < W. */
static void tap_outputs(const pool_job *j, int64_t kw, int64_t *lo, int64_t *hi) {
  int64_t sw = j->win.stride[1], pl = j->win.pad_begin[1], last = j->w - 1 + pl - kw;
  *lo = pl - kw <= 0 ? 0 : (pl - kw + sw - 1) / sw;
  *hi = last < 0 ? -1 : last / sw < j->ow - 1 ? last / sw : j->ow - 1;
}

#if defined(__x86_64__)
/* One chunk of 16 outputs under one kernel column, the same on every row: the lanes whose tap is inside
 * the row, the input lanes to load (two vectors), and the tap's column offset for the chunk's output 0. */
typedef struct chunk_tap {
  __mmask16 valid, in_lo, in_hi;
  int64_t offset;
} chunk_tap;

/* Bits a .. b-1 of a 32-bit mask, 0 <= a <= b <= 32. */
static inline uint32_t bit_range32(int64_t a, int64_t b) {
  return (uint32_t)((b >= 32 ? 0xFFFFFFFFu : (1u << b) - 1u) & ~(a >= 32 ? 0xFFFFFFFFu : (1u << a) - 1u));
}

/* The column plan of a job (false when the row loop does not take it: other strides, too many columns). */
static bool plan_columns(const pool_job *j, chunk_tap plan[ROW_MAX_CHUNKS][ROW_MAX_TAPS]) {
  int64_t kw_n = j->win.kernel[1], sw = j->win.stride[1], pl = j->win.pad_begin[1];
  if ((sw != 1 && sw != 2) || kw_n > ROW_MAX_TAPS || j->ow > 16 * ROW_MAX_CHUNKS) return false;
  for (int64_t kw = 0; kw < kw_n; kw++) {
    int64_t lo, hi;
    tap_outputs(j, kw, &lo, &hi);
    for (int64_t o0 = 0; o0 < j->ow; o0 += 16) {
      int64_t cnt = j->ow - o0 < 16 ? j->ow - o0 : 16;
      int64_t a = lo > o0 ? lo - o0 : 0, b = hi - o0 + 1 < cnt ? hi - o0 + 1 : cnt;
      chunk_tap *ct = &plan[o0 / 16][kw];
      *ct = (chunk_tap){0, 0, 0, o0 * sw - pl + kw};
      if (a >= b) continue;
      ct->valid = (__mmask16)bit_range32(a, b);
      uint32_t in = sw == 1 ? bit_range32(a, b) : bit_range32(2 * a, 2 * b - 1); /* stride 2: lanes 2a .. 2(b-1) */
      ct->in_lo = (__mmask16)in;
      ct->in_hi = (__mmask16)(in >> 16);
    }
  }
  return true;
}

/* One output row at stride 1 or 2, 16 outputs at a time kept in a register over every tap (no store and
 * reload per tap): the taps inside the input are masked lanes, loaded directly (stride 1) or as the even
 * lanes of two loads (stride 2). MaxPool's rule per lane: the first tap in window order is taken whatever
 * it is, a later one only when greater. AveragePool: the sum (divided by the caller). */
__attribute__((target("avx512f"))) static void row_avx512(const pool_job *j, const chunk_tap plan[ROW_MAX_CHUNKS][ROW_MAX_TAPS],
                                                          const float *x, int64_t oh, float *y) {
  const nn_window *w = &j->win;
  const bool max = j->max, stride2 = w->stride[1] == 2;
  int64_t kw_n = w->kernel[1], kh0, kh1;
  valid_taps(oh, w->stride[0], w->pad_begin[0], w->kernel[0], j->h, &kh0, &kh1);
  int64_t h0 = oh * w->stride[0] - w->pad_begin[0];
  const __m512i even = _mm512_setr_epi32(0, 2, 4, 6, 8, 10, 12, 14, 16, 18, 20, 22, 24, 26, 28, 30);
  for (int64_t o0 = 0; o0 < j->ow; o0 += 16) {
    const chunk_tap *taps = plan[o0 / 16];
    __m512 acc = _mm512_set1_ps(max ? -INFINITY : 0.0f);
    __mmask16 started = 0;
    for (int64_t kh = kh0; kh < kh1; kh++) {
      const float *row = x + (h0 + kh) * j->w;
      for (int64_t kw = 0; kw < kw_n; kw++) {
        const chunk_tap *t = &taps[kw];
        if (!t->valid) continue;
        /* the chunk's tap address; lanes outside the row are masked off and never dereferenced */
        const float *base = (const float *)((uintptr_t)row + (uintptr_t)(t->offset * (int64_t)sizeof(float)));
        __m512 v = _mm512_maskz_loadu_ps(t->in_lo, base);
        if (stride2) v = _mm512_permutex2var_ps(v, even, _mm512_maskz_loadu_ps(t->in_hi, base + 16));
        if (max && kh == kh0) { /* every lane's first tap is in this row */
          __mmask16 take = t->valid & (__mmask16)(~started | _mm512_cmp_ps_mask(v, acc, _CMP_GT_OQ));
          acc = _mm512_mask_mov_ps(acc, take, v);
          started |= t->valid;
        } else if (max) { /* every valid lane has started: v > acc ? v : acc is vmaxps(v, acc), NaN rule included */
          acc = _mm512_mask_max_ps(acc, t->valid, v, acc);
        } else {
          acc = _mm512_mask_add_ps(acc, t->valid, acc, v);
        }
      }
    }
    int64_t cnt = j->ow - o0 < 16 ? j->ow - o0 : 16;
    _mm512_mask_storeu_ps(y + o0, (__mmask16)bit_range32(0, cnt), acc);
  }
}

/* The separable MaxPool path: kernel rows kept in the ring; per 32-column block k of a row (k = 0 ..
 * chunks, one past the last chunk for its look-ahead) the masks of its two loads, x[32k ..) and
 * x[32k + 16 ..), lanes inside [0, W) only. */
enum { SEP_MAX_ROWS = 4, SEP_ROW = 16 * ROW_MAX_CHUNKS };

typedef struct sep_plan {
  __mmask16 load[ROW_MAX_CHUNKS + 1][2];
  int64_t chunks, kw_n, w, delta0; /* tap kw is at column 2o + delta0 + kw; w: the row length */
} sep_plan;

/* &row[col] as an address only (it may be outside the row: loads from it are masked to the row). */
static inline const float *column_at(const float *row, int64_t col) {
  return (const float *)((uintptr_t)row + (uintptr_t)(col * (int64_t)sizeof(float)));
}

/* Lanes l < 16 with 0 <= start + l < w. */
static __mmask16 in_row_lanes(int64_t start, int64_t w) {
  int64_t a = clamp64(-start, 0, 16);
  return (__mmask16)bit_range32(a, clamp64(w - start, a, 16));
}

/* Whether the job takes the separable path, and its plan. */
static bool plan_separable(const pool_job *j, sep_plan *sp) {
  const nn_window *w = &j->win;
  if (!j->max || w->stride[1] != 2 || (w->kernel[1] != 2 && w->kernel[1] != 3) || w->pad_begin[1] > 2 ||
      w->kernel[0] > SEP_MAX_ROWS || j->ow > SEP_ROW)
    return false;
  sp->chunks = (j->ow + 15) / 16;
  sp->kw_n = w->kernel[1];
  sp->w = j->w;
  sp->delta0 = -w->pad_begin[1];
  for (int64_t k = 0; k <= sp->chunks; k++)
    for (int h = 0; h < 2; h++) sp->load[k][h] = in_row_lanes(32 * k + 16 * h, j->w);
  return true;
}

/* x[2o + delta], -2 <= delta <= 2, for the 16 outputs o of a chunk, from the even (e) and odd (o) columns
 * of its block, those of the block before (ep, op) and the even ones of the block after (en). */
__attribute__((target("avx512f"))) static inline __m512 tap_columns(int64_t delta, __m512 ep, __m512 op, __m512 e,
                                                                     __m512 o, __m512 en) {
  switch (delta) {
  case -2: return _mm512_castsi512_ps(_mm512_alignr_epi32(_mm512_castps_si512(e), _mm512_castps_si512(ep), 15));
  case -1: return _mm512_castsi512_ps(_mm512_alignr_epi32(_mm512_castps_si512(o), _mm512_castps_si512(op), 15));
  case 0: return e;
  case 1: return o;
  default: return _mm512_castsi512_ps(_mm512_alignr_epi32(_mm512_castps_si512(en), _mm512_castps_si512(e), 1));
  }
}

/* out[o] = the max of row's taps of output o in tap order (each later tap only when greater, so a NaN
 * there is skipped as the reference does), columns outside the row as -inf (never the max unless every
 * tap is -inf, the same value); all chunks * 16 entries are written. Each 32-column block is loaded once
 * (two loads) and split into even and odd columns (two permutes); a tap one column before or after is a
 * one-lane shift with the neighbouring block's. Returns whether a loaded column is NaN: a NaN that is an
 * output's first tap inside the row is the one the vertical max cannot take over exactly (it would drop
 * the row's other taps). */
__attribute__((target("avx512f"), always_inline)) static inline bool hmax_row_taps(const sep_plan *sp,
                                                                                  const float *row, float *out,
                                                                                  int64_t kw_n, int64_t delta0) {
  const __m512i even = _mm512_setr_epi32(0, 2, 4, 6, 8, 10, 12, 14, 16, 18, 20, 22, 24, 26, 28, 30);
  const __m512i odd = _mm512_setr_epi32(1, 3, 5, 7, 9, 11, 13, 15, 17, 19, 21, 23, 25, 27, 29, 31);
  const __m512 lowest = _mm512_set1_ps(-INFINITY);
  __m512 lo = _mm512_mask_loadu_ps(lowest, sp->load[0][0], row);
  __m512 hi = _mm512_mask_loadu_ps(lowest, sp->load[0][1], column_at(row, 16));
  __mmask16 nan = _mm512_cmp_ps_mask(lo, hi, _CMP_UNORD_Q);
  __m512 ep = lowest, op = lowest, e = _mm512_permutex2var_ps(lo, even, hi), o = _mm512_permutex2var_ps(lo, odd, hi);
  for (int64_t c = 0; c < sp->chunks; c++) {
    /* the next block; lanes outside the row are masked off and never dereferenced */
    const float *next = column_at(row, 32 * (c + 1));
    /* the block 4 rows below, a hint that never faults (past the plane's end too): from L3 on its own the
     * stem pool's input arrived late, 0.16 ms instead of 0.08 in ResNet-18 */
    _mm_prefetch((const char *)column_at(next, 4 * sp->w), _MM_HINT_T0);
    _mm_prefetch((const char *)column_at(next, 4 * sp->w + 16), _MM_HINT_T0);
    lo = _mm512_mask_loadu_ps(lowest, sp->load[c + 1][0], next);
    hi = _mm512_mask_loadu_ps(lowest, sp->load[c + 1][1], column_at(next, 16));
    nan |= _mm512_cmp_ps_mask(lo, hi, _CMP_UNORD_Q);
    __m512 en = _mm512_permutex2var_ps(lo, even, hi), on = _mm512_permutex2var_ps(lo, odd, hi);
    __m512 acc = tap_columns(delta0, ep, op, e, o, en);
    for (int64_t kw = 1; kw < kw_n; kw++) /* _mm512_max_ps(later, acc) is later > acc ? later : acc */
      acc = _mm512_max_ps(tap_columns(delta0 + kw, ep, op, e, o, en), acc);
    _mm512_storeu_ps(out + 16 * c, acc);
    ep = e;
    op = o;
    e = en;
    o = on;
  }
  return nan != 0;
}

/* hmax_row_taps with the taps' shifts known at compile time for 3 columns under pad 1 (ResNet's stem). */
__attribute__((target("avx512f"))) static bool hmax_row(const sep_plan *sp, const float *row, float *out) {
  if (sp->kw_n == 3 && sp->delta0 == -1) return hmax_row_taps(sp, row, out, 3, -1);
  return hmax_row_taps(sp, row, out, sp->kw_n, sp->delta0);
}

/* One plane by horizontal maxima per input row (each computed once, in the ring) and a vertical max per
 * output row; output rows that read a row holding a NaN, or no row at all, go to row_avx512. */
__attribute__((target("avx512f"))) static void maxpool_plane_separable(
    const pool_job *j, const sep_plan *sp, const chunk_tap plan[ROW_MAX_CHUNKS][ROW_MAX_TAPS], const float *x,
    float *y) {
  const nn_window *w = &j->win;
  float ring[SEP_MAX_ROWS][SEP_ROW]; /* input row r in slot r % SEP_MAX_ROWS (a power of two) */
  bool ring_nan[SEP_MAX_ROWS];
  const int64_t slot_mask = SEP_MAX_ROWS - 1;
  int64_t next = 0;
  for (int64_t oh = 0; oh < j->oh; oh++) {
    int64_t kh0, kh1, h0 = oh * w->stride[0] - w->pad_begin[0];
    float *yr = y + oh * j->ow;
    valid_taps(oh, w->stride[0], w->pad_begin[0], w->kernel[0], j->h, &kh0, &kh1);
    if (next < h0 + kh0) next = h0 + kh0;
    for (; next < h0 + kh1; next++) ring_nan[next & slot_mask] = hmax_row(sp, x + next * j->w, ring[next & slot_mask]);
    const float *rows[SEP_MAX_ROWS];
    int64_t n = kh1 - kh0;
    bool nan = n <= 0;
    for (int64_t i = 0; i < n; i++) {
      nan |= ring_nan[(h0 + kh0 + i) & slot_mask];
      rows[i] = ring[(h0 + kh0 + i) & slot_mask];
    }
    if (nan) {
      row_avx512(j, plan, x, oh, yr);
      continue;
    }
    for (int64_t c = 0; c < sp->chunks; c++) { /* the maxima in row order */
      __m512 acc = _mm512_loadu_ps(rows[0] + 16 * c);
      if (n == 3) {
        acc = _mm512_max_ps(_mm512_loadu_ps(rows[1] + 16 * c), acc);
        acc = _mm512_max_ps(_mm512_loadu_ps(rows[2] + 16 * c), acc);
      } else {
        for (int64_t i = 1; i < n; i++) acc = _mm512_max_ps(_mm512_loadu_ps(rows[i] + 16 * c), acc);
      }
      if (16 * c + 16 <= j->ow) _mm512_storeu_ps(yr + 16 * c, acc);
      else _mm512_mask_storeu_ps(yr + 16 * c, (__mmask16)bit_range32(0, j->ow - 16 * c), acc);
    }
  }
}
#endif

/* acc[i] = max(acc[i], x[i * stride]) or acc[i] + x[i * stride], i < n. */
static void acc_run(const pool_job *j, float *acc, const float *x, int64_t stride, int64_t n) {
  if (stride == 1) {
    if (j->max) j->ops->max_acc(acc, x, 1, n);
    else j->ops->add_acc(acc, x, 1, n);
    return;
  }
  if (j->max)
    for (int64_t i = 0; i < n; i++) {
      float v = x[i * stride];
      acc[i] = v > acc[i] ? v : acc[i];
    }
  else
    for (int64_t i = 0; i < n; i++) acc[i] += x[i * stride];
}

/* AveragePool: y[o] = sum / the count of taps (all, or those inside the input). */
static void average_row(const pool_job *j, int64_t oh, float *y) {
  const nn_window *w = &j->win;
  int64_t kh_n = w->kernel[0], kw_n = w->kernel[1], sh = w->stride[0], sw = w->stride[1];
  int64_t pt = w->pad_begin[0], pl = w->pad_begin[1], kh0, kh1;
  valid_taps(oh, sh, pt, kh_n, j->h, &kh0, &kh1);
  int64_t ch_in = kh1 - kh0, ch_pad = clamp64(j->h + w->pad_end[0] + pt - oh * sh, 0, kh_n);
  for (int64_t o = 0; o < j->ow; o++) {
    int64_t kw0, kw1;
    valid_taps(o, sw, pl, kw_n, j->w, &kw0, &kw1);
    int64_t cw_pad = clamp64(j->w + w->pad_end[1] + pl - o * sw, 0, kw_n);
    int64_t div = j->include_pad ? ch_pad * cw_pad : ch_in * (kw1 - kw0);
    y[o] = div > 0 ? y[o] / (float)div : NAN;
  }
}

static void pool_row(const pool_job *j, const float *x, int64_t oh, float *y) {
  const nn_window *w = &j->win;
  int64_t kh_n = w->kernel[0], kw_n = w->kernel[1], sh = w->stride[0], sw = w->stride[1];
  int64_t pt = w->pad_begin[0], pl = w->pad_begin[1];
  int64_t kh0, kh1;
  valid_taps(oh, sh, pt, kh_n, j->h, &kh0, &kh1);
  int64_t h0 = oh * sh - pt;
  for (int64_t o = 0; o < j->ow; o++) y[o] = j->max ? -INFINITY : 0.0f;
  if (j->max && kh0 < kh1)
    for (int64_t o = 0; o < j->ow; o++) {
      int64_t kw0, kw1;
      valid_taps(o, sw, pl, kw_n, j->w, &kw0, &kw1);
      if (kw0 < kw1) y[o] = x[(h0 + kh0) * j->w + o * sw - pl + kw0];
    }
  for (int64_t kh = kh0; kh < kh1; kh++) {
    const float *row = x + (h0 + kh) * j->w;
    for (int64_t kw = 0; kw < kw_n; kw++) {
      int64_t lo, hi;
      tap_outputs(j, kw, &lo, &hi);
      if (lo <= hi) acc_run(j, y + lo, row + lo * sw - pl + kw, sw, hi - lo + 1);
    }
  }
  if (!j->max) average_row(j, oh, y);
}

static void redo_row(const void *job, const float *x, int64_t oh, float *y_row) { pool_row(job, x, oh, y_row); }

/* The AVX2 separable MaxPool's scratch for this job (NULL when it does not take the job, or no memory:
 * then the row loop runs). It takes every AVX2 MaxPool, and the AVX-512 ones that the AVX-512 separable
 * path (avx512_separable) does not: an AVX-512 CPU has AVX2, and its 8-lane plane beats row_avx512 there
 * (YOLO's SPPF 5x5/1: row_avx512 loads all 25 taps for every 16 outputs, the plane 5 + 5). */
static float *separable_avx2(const pool_job *j, bool avx512_separable, vec_maxpool_geom *g) {
  const nn_window *w = &j->win;
  bool path = j->ops == &tb_vec_ops_avx2 || (j->ops == &tb_vec_ops_avx512 && !avx512_separable);
  if (!j->max || !path || w->kernel[0] > VEC_MAXPOOL_AVX2_MAX_KERNEL || w->kernel[1] > VEC_MAXPOOL_AVX2_MAX_KERNEL)
    return NULL;
  *g = (vec_maxpool_geom){j->h, j->w, j->oh, j->ow, w->kernel[0], w->kernel[1], w->stride[0], w->stride[1],
                          w->pad_begin[0], w->pad_begin[1]};
  return malloc(tb_vec_maxpool_avx2_scratch(g) * sizeof(float));
}

static void pool_planes(void *arg, size_t begin, size_t end) {
  const pool_job *j = arg;
  bool separable = false;
#if defined(__x86_64__)
  chunk_tap plan[ROW_MAX_CHUNKS][ROW_MAX_TAPS];
  sep_plan sp;
  bool rows_avx512 = j->ops == &tb_vec_ops_avx512 && plan_columns(j, plan);
  separable = rows_avx512 && plan_separable(j, &sp);
#endif
  vec_maxpool_geom g;
  float *scratch = separable_avx2(j, separable, &g);
  for (size_t p = begin; p < end; p++) {
    const float *x = j->x + (int64_t)p * j->h * j->w;
    float *y = j->y + (int64_t)p * j->oh * j->ow;
    if (scratch) {
      tb_vec_maxpool_plane_avx2(&g, x, y, scratch, redo_row, j);
      continue;
    }
#if defined(__x86_64__)
    if (separable) {
      maxpool_plane_separable(j, &sp, (const chunk_tap(*)[ROW_MAX_TAPS])plan, x, y);
      continue;
    }
#endif
    for (int64_t oh = 0; oh < j->oh; oh++) {
#if defined(__x86_64__)
      if (rows_avx512) {
        row_avx512(j, (const chunk_tap(*)[ROW_MAX_TAPS])plan, x, oh, y + oh * j->ow);
        if (!j->max) average_row(j, oh, y + oh * j->ow);
        continue;
      }
#endif
      pool_row(j, x, oh, y + oh * j->ow);
    }
  }
  free(scratch);
}

static tb_status pool_run(tb_kernel_ctx *ctx, const vec_ops *ops, bool max) {
  if (!tb_vec_inputs_ok(ctx, 1) || tb_tensor_ndim(ctx->inputs[0]) != 4) return tb_vec_fallback(ctx);
  const tb_tensor *x = ctx->inputs[0];
  const int64_t *shape = tb_tensor_shape(x);
  pool_job j = {.ops = ops, .x = tb_tensor_host_data(x), .max = max, .h = shape[2], .w = shape[3]};
  int64_t out_shape[4] = {shape[0], shape[1], 0, 0};
  tb_status st;
  const tb_pool_params *p = tb_kernel_params(ctx, &st);
  if (!p) return st;
  if (max && p->indices) return tb_vec_fallback(ctx);
  if (tb_nn_window_init(&p->win, 2, NULL, &j.win) != TB_OK) return tb_vec_fallback(ctx);
  for (size_t i = 0; i < 2; i++)
    if (j.win.dilation[i] != 1 || tb_nn_window_out(&j.win, i, shape[2 + i], &out_shape[2 + i]) != TB_OK)
      return tb_vec_fallback(ctx);
  j.include_pad = p->count_include_pad;
  j.oh = out_shape[2];
  j.ow = out_shape[3];
  if (!tb_vec_output(ctx, 0, 4, out_shape, &j.y, &st)) return st == TB_OK ? tb_vec_fallback(ctx) : st;
  int64_t planes = shape[0] * shape[1];
  if (planes * j.oh * j.ow == 0) return TB_OK;
  tb_vec_parallel(ctx, (size_t)planes, planes * j.oh * j.ow * j.win.kernel[0] * j.win.kernel[1], pool_planes, &j);
  return TB_OK;
}

static bool pool_accepts(const tb_kernel_query *q) {
  const tb_value_type *const *in = q->in;
  const tb_pool_params *p = q->params;
  if (q->n_inputs < 1 || !tb_fast_accepts_f32(in, 1) || !p || p->indices) return false;
  if (in[0]->has_shape && in[0]->ndim != 4) return false;
  if (p->win.n_kernel != 2) return false;
  for (size_t i = 0; i < p->win.n_dilations; i++)
    if (p->win.dilations[i] != 1) return false;
  return true;
}

typedef struct gap_job {
  const vec_ops *ops;
  const float *x;
  float *y;
  int64_t plane;
} gap_job;

static void gap_planes(void *arg, size_t begin, size_t end) {
  const gap_job *j = arg;
  for (size_t p = begin; p < end; p++)
    j->y[p] = (float)(j->ops->sum(j->x + (int64_t)p * j->plane, j->plane) / (double)j->plane);
}

static tb_status gap_run(tb_kernel_ctx *ctx, const vec_ops *ops) {
  if (!tb_vec_inputs_ok(ctx, 1) || tb_tensor_ndim(ctx->inputs[0]) < 2) return tb_vec_fallback(ctx);
  const tb_tensor *x = ctx->inputs[0];
  size_t r = tb_tensor_ndim(x);
  const int64_t *shape = tb_tensor_shape(x);
  int64_t out_shape[TB_MAX_DIMS];
  gap_job j = {.ops = ops, .x = tb_tensor_host_data(x), .plane = 1};
  for (size_t d = 0; d < r; d++) {
    out_shape[d] = d < 2 ? shape[d] : 1;
    if (d >= 2) j.plane *= shape[d];
  }
  tb_status st;
  if (!tb_vec_output(ctx, 0, r, out_shape, &j.y, &st)) return st == TB_OK ? tb_vec_fallback(ctx) : st;
  tb_vec_parallel(ctx, (size_t)(shape[0] * shape[1]), tb_tensor_numel(x), gap_planes, &j);
  return TB_OK;
}

static bool gap_accepts(const tb_kernel_query *q) {
  const tb_value_type *const *in = q->in;
  return q->n_inputs >= 1 && tb_fast_accepts_f32(in, 1);
}

static tb_status maxpool_run(tb_kernel_ctx *ctx, const vec_ops *ops) { return pool_run(ctx, ops, true); }
static tb_status avgpool_run(tb_kernel_ctx *ctx, const vec_ops *ops) { return pool_run(ctx, ops, false); }
VEC_KERNELS(maxpool, "", "MaxPool", pool_accepts, maxpool_run)
VEC_KERNELS(averagepool, "", "AveragePool", pool_accepts, avgpool_run)
VEC_KERNELS(global_averagepool, "", "GlobalAveragePool", gap_accepts, gap_run)
