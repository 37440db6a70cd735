/* The AVX2+FMA side of the Winograd F(2x2, 3x3) convolution (conv_winograd.h), for CPUs without AVX-512:
 * the input transform V = B^T d B of a sliver's 14 tiles (each half's 16 input columns as two ymm per row,
 * B^T down the rows, then the columns split into even and odd lanes so that lane i of a half holds tile i),
 * written into the same A layout as the AVX-512 transform with the same operations per value; the 16
 * products M_xi = V_xi U_xi of a sliver on ymm register tiles (up to 5 tiles x 16 channels, B rows 32
 * apart in U's packed layout); and the output transform Y = A^T M A of 7 tiles x 8 channels, transposed in
 * registers (8 x 8) into output row segments with bias, residual and activation. Only these functions are
 * built for AVX2 and FMA (target attribute); the driver calls them only on the AVX2 path. */
#include "backend/cpu/kernels/fast/conv/conv_winograd.h"
#if defined(__x86_64__)
#include <immintrin.h>
#include <string.h>
#include "backend/cpu/kernels/fast/vec/transpose_avx2.h"

#define WG_TARGET __attribute__((target("avx2,fma")))

/* How one input row of one half is loaded, the same for every channel: lanes l (0..15, two ymm) =
 * plane[off + l] where the masks are set (0 <= column < iw), zeros elsewhere; none: a row outside the
 * input. With a left pad the first lane's address is one before the row (masked off: never read). */
typedef struct row_load {
  int64_t off;
  __m256i m0, m1;
  bool any;
} row_load;

static WG_TARGET __m256i lanes_in(int64_t lo, int64_t hi, int first) {
  const __m256i idx = _mm256_add_epi32(_mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7), _mm256_set1_epi32(first));
  int32_t l = (int32_t)(lo < -1 ? -1 : lo > 17 ? 17 : lo), h = (int32_t)(hi < -1 ? -1 : hi > 17 ? 17 : hi);
  return _mm256_and_si256(_mm256_cmpgt_epi32(idx, _mm256_set1_epi32(l - 1)), _mm256_cmpgt_epi32(_mm256_set1_epi32(h), idx));
}

static WG_TARGET row_load plan_row(const tb_conv_geom *g, const tb_wg_half *h, int r) {
  int64_t y = 2 * h->ty - g->ph + r, col0 = 2 * h->tx0 - g->pw;
  row_load l = {0, _mm256_setzero_si256(), _mm256_setzero_si256(), false};
  if (!h->valid || y < 0 || y >= g->ih || col0 >= g->iw) return l;
  /* lane t reads column col0 + t: inside for -col0 <= t < iw - col0 */
  l.off = y * g->iw + col0;
  l.m0 = lanes_in(-col0, g->iw - col0, 0);
  l.m1 = lanes_in(-col0, g->iw - col0, 8);
  l.any = true;
  return l;
}

/* Columns 0..15 (lo: 0..7, hi: 8..15) split into even (0, 2, .., 14) and odd (1, 3, .., 15) lanes. */
static inline __attribute__((always_inline)) WG_TARGET void split(__m256 lo, __m256 hi, __m256 *even, __m256 *odd) {
  __m256 e = _mm256_shuffle_ps(lo, hi, _MM_SHUFFLE(2, 0, 2, 0)), o = _mm256_shuffle_ps(lo, hi, _MM_SHUFFLE(3, 1, 3, 1));
  *even = _mm256_castpd_ps(_mm256_permute4x64_pd(_mm256_castps_pd(e), _MM_SHUFFLE(3, 1, 2, 0)));
  *odd = _mm256_castpd_ps(_mm256_permute4x64_pd(_mm256_castps_pd(o), _MM_SHUFFLE(3, 1, 2, 0)));
}

/* How far ahead along an input row (floats) the input transform prefetches: two slivers (28 columns each). */
enum { IN_PREFETCH = 64 };

/* V[xi] of one channel plane for one half's 7 tiles (lanes 0..6; lane 7 unspecified), as the AVX-512
 * transform computes each value: B^T on the loaded rows, then B on the tiles' columns 2i .. 2i + 3. */
static inline __attribute__((always_inline)) WG_TARGET void transform_in(const float *plane, const row_load plan[4],
                                                                          __m256 v[16], __m256 seen[8]) {
  __m256 lo[4], hi[4];
  const __m256 zero = _mm256_setzero_ps();
  const __m256i next = _mm256_setr_epi32(1, 2, 3, 4, 5, 6, 7, 7);
#pragma GCC unroll 4
  for (int r = 0; r < 4; r++) {
    /* the row's next slivers (the hardware prefetcher does not follow 4 rows x C channels of streams) */
    if (plan[r].any) _mm_prefetch((const char *)(plane + plan[r].off + IN_PREFETCH), _MM_HINT_T0);
    lo[r] = plan[r].any ? _mm256_maskload_ps(plane + plan[r].off, plan[r].m0) : zero;
    hi[r] = plan[r].any ? _mm256_maskload_ps(plane + plan[r].off + 8, plan[r].m1) : zero;
    /* NaN from here on once a value is NaN or infinite; eight chains, not one: a single accumulator made
     * every channel wait on 8 FMA latencies (a third of U-Net's 64-channel layers' input transform) */
    seen[2 * r] = _mm256_fmadd_ps(lo[r], zero, seen[2 * r]);
    seen[2 * r + 1] = _mm256_fmadd_ps(hi[r], zero, seen[2 * r + 1]);
  }
  __m256 tl[4], th[4];
  tl[0] = _mm256_sub_ps(lo[0], lo[2]), th[0] = _mm256_sub_ps(hi[0], hi[2]);
  tl[1] = _mm256_add_ps(lo[1], lo[2]), th[1] = _mm256_add_ps(hi[1], hi[2]);
  tl[2] = _mm256_sub_ps(lo[2], lo[1]), th[2] = _mm256_sub_ps(hi[2], hi[1]);
  tl[3] = _mm256_sub_ps(lo[1], lo[3]), th[3] = _mm256_sub_ps(hi[1], hi[3]);
#pragma GCC unroll 4
  for (int r = 0; r < 4; r++) {
    __m256 e, o;
    split(tl[r], th[r], &e, &o);
    __m256 e1 = _mm256_permutevar8x32_ps(e, next), o1 = _mm256_permutevar8x32_ps(o, next); /* columns 2i + 2, 2i + 3 */
    v[r * 4 + 0] = _mm256_sub_ps(e, e1);
    v[r * 4 + 1] = _mm256_add_ps(o, e1);
    v[r * 4 + 2] = _mm256_sub_ps(e1, o);
    v[r * 4 + 3] = _mm256_sub_ps(o, o1);
  }
}

WG_TARGET bool tb_conv_winograd_input_avx2(const tb_conv_geom *g, const float *x, const tb_wg_half h[2], void *dst,
                                           int64_t xi_stride) {
  row_load plan[2][4];
  for (int hh = 0; hh < 2; hh++)
    for (int r = 0; r < 4; r++) plan[hh][r] = plan_row(g, &h[hh], r);
  const __m256i seven = tb_lanes_below_avx2(TB_WG_HALF);
  int64_t plane = g->ih * g->iw;
  __m256 v[16], seen[8];
#pragma GCC unroll 8
  for (int i = 0; i < 8; i++) seen[i] = _mm256_setzero_ps();
  float *d = dst;
  for (int64_t c = 0; c < g->in_c; c++) {
    const float *xc = x + c * plane;
    /* half 0 into tiles 0..6 (its lane 7 lands on tile 7, which half 1 then writes), half 1 into 7..13 */
    transform_in(xc, plan[0], v, seen);
#pragma GCC unroll 16
    for (int xi = 0; xi < 16; xi++) _mm256_storeu_ps(d + xi * xi_stride + c * TB_WG_SLIVER, v[xi]);
    transform_in(xc, plan[1], v, seen);
#pragma GCC unroll 16
    for (int xi = 0; xi < 16; xi++) _mm256_maskstore_ps(d + xi * xi_stride + c * TB_WG_SLIVER + TB_WG_HALF, seven, v[xi]);
  }
  __m256 all = _mm256_add_ps(_mm256_add_ps(_mm256_add_ps(seen[0], seen[1]), _mm256_add_ps(seen[2], seen[3])),
                             _mm256_add_ps(_mm256_add_ps(seen[4], seen[5]), _mm256_add_ps(seen[6], seen[7])));
  return _mm256_movemask_ps(_mm256_cmp_ps(all, all, _CMP_UNORD_Q)) == 0;
}

/* m[i * 32 + j] (i < rows, j < 16) = sum over p < depth of a[p * 14 + i] b[p * 32 + j], in p order. With
 * FETCH (the sliver's first pass over this U block) each step also prefetches U's row PREFETCH_ROWS ahead
 * (both 64-byte lines of its 32 channels) into L1: the first pass reads U (16 x C x 32 floats per column
 * block: 1 MiB for C = 512, beyond L2 beside V) from L3 or DRAM at 10 FMAs per row, too fast for the
 * hardware prefetcher (CRNN's 512-channel layers spent 60% of their time on that load). */
enum { PREFETCH_ROWS = 48 };
static inline __attribute__((always_inline)) WG_TARGET void product_rows(int rows, int64_t depth, const float *a,
                                                                          const float *b, float *m, const bool FETCH) {
  __m256 acc[5][2];
#pragma GCC unroll 5
  for (int i = 0; i < 5; i++)
    if (i < rows) acc[i][0] = acc[i][1] = _mm256_setzero_ps();
  for (int64_t p = 0; p < depth; p++) {
    if (FETCH) { /* past the block's end: a prefetch never faults */
      _mm_prefetch((const char *)(b + (p + PREFETCH_ROWS) * TB_WG_NR), _MM_HINT_T0);
      _mm_prefetch((const char *)(b + (p + PREFETCH_ROWS) * TB_WG_NR + 16), _MM_HINT_T0);
    }
    __m256 b0 = _mm256_loadu_ps(b + p * TB_WG_NR), b1 = _mm256_loadu_ps(b + p * TB_WG_NR + 8);
#pragma GCC unroll 5
    for (int i = 0; i < 5; i++) {
      if (i >= rows) break;
      __m256 av = _mm256_broadcast_ss(a + p * TB_WG_SLIVER + i);
      acc[i][0] = _mm256_fmadd_ps(av, b0, acc[i][0]);
      acc[i][1] = _mm256_fmadd_ps(av, b1, acc[i][1]);
    }
  }
#pragma GCC unroll 5
  for (int i = 0; i < 5; i++) {
    if (i >= rows) break;
    _mm256_storeu_ps(m + i * TB_WG_NR, acc[i][0]);
    _mm256_storeu_ps(m + i * TB_WG_NR + 8, acc[i][1]);
  }
}

WG_TARGET void tb_conv_winograd_product_avx2(int64_t depth, const float *a, const float *b, float *m, int rows) {
  for (int j = 0; j < TB_WG_NR; j += 16) {
    if (rows == TB_WG_SLIVER) { /* 5 + 5 + 4 tiles */
      if (j == 0) product_rows(5, depth, a, b + j, m + j, true);
      else product_rows(5, depth, a, b + j, m + j, false);
      product_rows(5, depth, a + 5, b + j, m + 5 * TB_WG_NR + j, false);
      product_rows(4, depth, a + 10, b + j, m + 10 * TB_WG_NR + j, false);
    } else { /* one half: 4 + 3 */
      if (j == 0) product_rows(4, depth, a, b + j, m + j, true);
      else product_rows(4, depth, a, b + j, m + j, false);
      product_rows(3, depth, a + 4, b + j, m + 4 * TB_WG_NR + j, false);
    }
  }
}

/* buf[p] (pixel p < 16 of one output row segment, 8 channels in the lanes, bias already added) to
 * y[j * plane + p] for p < n and j < jn: + residual, then Relu / LeakyRelu / Clip in registers with the
 * scalar rules (vmaxps returns v when v is NaN; -0 stays -0), the other activations per row afterwards. */
static WG_TARGET void store_segment(const __m256 buf[16], int64_t n, int64_t jn, float *y, int64_t plane,
                                    const float *res, const tb_gemm_epilogue *ep) {
  __m256 p0[8], p1[8];
  memcpy(p0, buf, sizeof p0);
  memcpy(p1, buf + 8, sizeof p1);
  tb_transpose8_ps(p0); /* p0[j]: channel j, pixels 0..7; p1[j]: pixels 8..15 */
  tb_transpose8_ps(p1);
  const __m256i m0 = tb_lanes_below_avx2(n), m1 = tb_lanes_below_avx2(n - 8);
  const __m256 zero = _mm256_setzero_ps(), alpha = _mm256_set1_ps(ep->act_alpha);
  const __m256 lo = _mm256_set1_ps(ep->act_min), hi = _mm256_set1_ps(ep->act_max);
  for (int64_t j = 0; j < jn; j++) {
    for (int part = 0; part < 2; part++) {
      __m256 v = part ? p1[j] : p0[j];
      __m256i m = part ? m1 : m0;
      float *at = y + j * plane + part * 8;
      if (part && n <= 8) break;
      if (res) v = _mm256_add_ps(v, _mm256_maskload_ps(res + j * plane + part * 8, m));
      if (ep->act == 1) {
        v = _mm256_max_ps(zero, v);
      } else if (ep->act == 2) {
        v = _mm256_blendv_ps(v, _mm256_mul_ps(v, alpha), _mm256_cmp_ps(v, zero, _CMP_LT_OQ));
      } else if (ep->act == 3) {
        v = _mm256_blendv_ps(v, lo, _mm256_cmp_ps(v, lo, _CMP_LT_OQ));
        v = _mm256_blendv_ps(v, hi, _mm256_cmp_ps(v, hi, _CMP_GT_OQ));
      }
      _mm256_maskstore_ps(at, m, v);
    }
  }
  if (ep->act > 3)
    for (int64_t j = 0; j < jn; j++) tb_conv_epilogue_row(ep, NULL, y + j * plane, n);
}

WG_TARGET void tb_conv_winograd_output_avx2(const tb_conv_geom *g, const tb_wg_half *h, const float *m, int64_t xi_stride,
                                            int64_t ldm, int64_t k0, int64_t nk, const float *bias, const float *residual,
                                            const tb_gemm_epilogue *ep, float *y) {
  if (!h->valid) return;
  int64_t plane = g->oh * g->ow, oy = 2 * h->ty, ox = 2 * h->tx0;
  int64_t n = g->ow - ox < 2 * TB_WG_HALF ? g->ow - ox : 2 * TB_WG_HALF; /* pixels of the segment */
  if (n <= 0 || oy >= g->oh) return;
  bool second_row = oy + 1 < g->oh;
  for (int64_t k = k0; k < k0 + nk; k += 8) {
    int64_t jn = k0 + nk - k < 8 ? k0 + nk - k : 8;
    const __m256 b = bias ? _mm256_maskload_ps(bias + k, tb_lanes_below_avx2(jn)) : _mm256_setzero_ps();
    __m256 row0[16], row1[16];
    row0[14] = row0[15] = row1[14] = row1[15] = _mm256_setzero_ps();
    for (int t = 0; t < TB_WG_HALF; t++) {
      const float *mt = m + t * ldm + (k - k0);
      __m256 s[2][4];
#pragma GCC unroll 4
      for (int c = 0; c < 4; c++) { /* A^T M: rows 0..3 of column c */
        __m256 m0 = _mm256_loadu_ps(mt + (0 * 4 + c) * xi_stride), m1 = _mm256_loadu_ps(mt + (1 * 4 + c) * xi_stride);
        __m256 m2 = _mm256_loadu_ps(mt + (2 * 4 + c) * xi_stride), m3 = _mm256_loadu_ps(mt + (3 * 4 + c) * xi_stride);
        s[0][c] = _mm256_add_ps(_mm256_add_ps(m0, m1), m2);
        s[1][c] = _mm256_sub_ps(_mm256_sub_ps(m1, m2), m3);
      }
      /* (A^T M) A, plus the bias */
      row0[2 * t] = _mm256_add_ps(_mm256_add_ps(_mm256_add_ps(s[0][0], s[0][1]), s[0][2]), b);
      row0[2 * t + 1] = _mm256_add_ps(_mm256_sub_ps(_mm256_sub_ps(s[0][1], s[0][2]), s[0][3]), b);
      row1[2 * t] = _mm256_add_ps(_mm256_add_ps(_mm256_add_ps(s[1][0], s[1][1]), s[1][2]), b);
      row1[2 * t + 1] = _mm256_add_ps(_mm256_sub_ps(_mm256_sub_ps(s[1][1], s[1][2]), s[1][3]), b);
    }
    int64_t at = k * plane + oy * g->ow + ox;
    store_segment(row0, n, jn, y + at, plane, residual ? residual + at : NULL, ep);
    if (second_row) store_segment(row1, n, jn, y + at + g->ow, plane, residual ? residual + at + g->ow : NULL, ep);
  }
}
#else
bool tb_conv_winograd_input_avx2(const tb_conv_geom *g, const float *x, const tb_wg_half h[2], void *dst,
                                 int64_t xi_stride) {
  (void)g, (void)x, (void)h, (void)dst, (void)xi_stride;
  return false;
}
void tb_conv_winograd_product_avx2(int64_t depth, const float *a, const float *b, float *m, int rows) {
  (void)depth, (void)a, (void)b, (void)m, (void)rows;
}
void tb_conv_winograd_output_avx2(const tb_conv_geom *g, const tb_wg_half *h, const float *m, int64_t xi_stride,
                                  int64_t ldm, int64_t k0, int64_t nk, const float *bias, const float *residual,
                                  const tb_gemm_epilogue *ep, float *y) {
  (void)g, (void)h, (void)m, (void)xi_stride, (void)ldm, (void)k0, (void)nk, (void)bias, (void)residual, (void)ep, (void)y;
}
#endif
