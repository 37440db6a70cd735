/* The AVX-512 transforms of the Winograd F(2x2, 3x3) convolution (conv_winograd.h): the input transform
 * V = B^T d B of the 14 tiles of a sliver, one channel per pass, the tiles as the vector's lanes, written
 * straight into the GEMM micro-kernel's A layout (fp32, or bf16 channel pairs rounded by vcvtne2ps2bf16);
 * and the output transform Y = A^T M A of 7 tiles x 16 channels (channels as the lanes), transposed in
 * registers into output row segments with bias, residual and activation. Only these functions are built
 * for AVX-512 (target attributes); the driver calls them only when cpuid has the features. */
#include "backend/cpu/kernels/fast/conv/conv_winograd.h"
#include <math.h>
#if defined(__x86_64__)
#include <immintrin.h>
#include "backend/cpu/kernels/fast/vec/transpose_avx512.h"
#include <string.h>
#include "backend/cpu/kernels/fast/vec/bf16_round_avx512.h"
#include "core/convert_features.h"
#include <tensorbridge/device.h>

#define WG_TARGET __attribute__((target("avx512f,avx512bw,avx512vl")))

/* How one input row of one half is loaded, the same for every channel: 16 lanes = plane[off + l] under
 * mask (zeros elsewhere; mask 0: a row outside the input), or with a left pad, plane[off ..] expanded into
 * the lanes of mask (the first lanes are the pad). */
typedef struct row_load {
  int64_t off;
  __mmask16 mask;
  bool expand;
} row_load;

static row_load plan_row(const tb_conv_geom *g, const tb_wg_half *h, int r) {
  int64_t y = 2 * h->ty - g->ph + r, col0 = 2 * h->tx0 - g->pw;
  if (!h->valid || y < 0 || y >= g->ih || col0 >= g->iw) return (row_load){0, 0, false};
  if (col0 >= 0) {
    int64_t n = g->iw - col0;
    return (row_load){y * g->iw + col0, n >= 16 ? (__mmask16)0xFFFF : (__mmask16)((1u << n) - 1u), false};
  }
  int64_t skip = -col0, n = g->iw < 16 - skip ? g->iw : 16 - skip; /* lanes skip .. skip + n from the row's start */
  return (row_load){y * g->iw, (__mmask16)(((1u << n) - 1u) << skip), true};
}

static inline __attribute__((always_inline)) WG_TARGET __m512 load_row(const float *plane, const row_load *l) {
  return l->expand ? _mm512_maskz_expandloadu_ps(l->mask, plane + l->off) : _mm512_maskz_loadu_ps(l->mask, plane + l->off);
}

/* V[xi] of one channel plane for the sliver's 14 tiles (lanes 0..13; 14 and 15 unspecified): B^T on the
 * loaded rows of each half, the tiles' columns gathered from both halves (idx), then B on the columns. */
static inline __attribute__((always_inline)) WG_TARGET void transform_in(const float *plane, const row_load plan[2][4],
                                                                          const __m512i idx[4], __m512 v[16],
                                                                          __m512 seen[2]) {
  __m512 a[4], b[4], ta[4], tb[4];
  const __m512 zero = _mm512_setzero_ps();
#pragma GCC unroll 4
  for (int r = 0; r < 4; r++) {
    a[r] = load_row(plane, &plan[0][r]), b[r] = load_row(plane, &plan[1][r]);
    seen[0] = _mm512_fmadd_ps(a[r], zero, seen[0]); /* NaN from here on once a value is NaN or infinite */
    seen[1] = _mm512_fmadd_ps(b[r], zero, seen[1]);
  }
  ta[0] = _mm512_sub_ps(a[0], a[2]), tb[0] = _mm512_sub_ps(b[0], b[2]);
  ta[1] = _mm512_add_ps(a[1], a[2]), tb[1] = _mm512_add_ps(b[1], b[2]);
  ta[2] = _mm512_sub_ps(a[2], a[1]), tb[2] = _mm512_sub_ps(b[2], b[1]);
  ta[3] = _mm512_sub_ps(a[1], a[3]), tb[3] = _mm512_sub_ps(b[1], b[3]);
#pragma GCC unroll 4
  for (int r = 0; r < 4; r++) {
    __m512 t0 = _mm512_permutex2var_ps(ta[r], idx[0], tb[r]), t1 = _mm512_permutex2var_ps(ta[r], idx[1], tb[r]);
    __m512 t2 = _mm512_permutex2var_ps(ta[r], idx[2], tb[r]), t3 = _mm512_permutex2var_ps(ta[r], idx[3], tb[r]);
    v[r * 4 + 0] = _mm512_sub_ps(t0, t2);
    v[r * 4 + 1] = _mm512_add_ps(t1, t2);
    v[r * 4 + 2] = _mm512_sub_ps(t2, t1);
    v[r * 4 + 3] = _mm512_sub_ps(t1, t3);
  }
}

enum { PREFETCH_CHANNELS = 4 };

/* Fetch the lines transform_in will load from this plane. The previous layer wrote X from every thread, so
 * on 2 threads half of a channel's rows sit in the other core's cache; fetched one plane at a time at the
 * load, those transfers stalled the transform (9x its 1-thread time when the two vCPUs were far apart on
 * the host), fetched PREFETCH_CHANNELS planes ahead they overlap the arithmetic. */
static inline __attribute__((always_inline)) WG_TARGET void prefetch_plane(const float *plane, const row_load plan[2][4]) {
#pragma GCC unroll 8
  for (int i = 0; i < 8; i++) {
    const row_load *l = &plan[i & 1][i >> 1];
    if (!l->mask) continue;
    const char *p = (const char *)(plane + l->off);
    _mm_prefetch(p, _MM_HINT_T0);
    _mm_prefetch(p + 15 * sizeof(float), _MM_HINT_T0);
  }
}

/* Lane i of column c of the 4x4 tiles: element 2i + c of the half's 16 loaded columns (half 0 in the first
 * operand, half 1 in the second). */
static WG_TARGET void make_indices(__m512i idx[4]) {
  for (int c = 0; c < 4; c++) {
    int32_t lanes[16];
    for (int i = 0; i < 16; i++) lanes[i] = i < TB_WG_HALF ? 2 * i + c : i < TB_WG_SLIVER ? 16 + 2 * (i - TB_WG_HALF) + c : 0;
    idx[c] = _mm512_loadu_si512(lanes);
  }
}

TB_TARGET_BF16 bool tb_conv_winograd_input_avx512(const tb_conv_geom *g, const float *x, const tb_wg_half h[2], bool bf16,
                                                  void *dst, int64_t xi_stride) {
  __m512i idx[4];
  make_indices(idx);
  row_load plan[2][4];
  for (int hh = 0; hh < 2; hh++)
    for (int r = 0; r < 4; r++) plan[hh][r] = plan_row(g, &h[hh], r);
  const __mmask16 tiles = (__mmask16)((1u << TB_WG_SLIVER) - 1u);
  int64_t plane = g->ih * g->iw, cn = g->in_c;
  __m512 v[16], seen[2] = {_mm512_setzero_ps(), _mm512_setzero_ps()};
  if (!bf16) {
    float *d = dst;
    for (int64_t c = 0; c < cn; c++) {
      if (c + PREFETCH_CHANNELS < cn) prefetch_plane(x + (c + PREFETCH_CHANNELS) * plane, plan);
      transform_in(x + c * plane, plan, idx, v, seen);
#pragma GCC unroll 16
      for (int xi = 0; xi < 16; xi++) _mm512_mask_storeu_ps(d + xi * xi_stride + c * TB_WG_SLIVER, tiles, v[xi]);
    }
    return _mm512_cmp_ps_mask(seen[0], seen[1], _CMP_UNORD_Q) == 0;
  }
  /* vcvtne2ps2bf16 rounds to nearest even and keeps NaN a NaN; unlike tb_convert it flushes subnormal
   * values (below 1.2e-38) to zero, which changes no sum here by more than that. The integer rounding of
   * bf16_round_avx512.h cost two thirds of this transform. The two channels' values are then interleaved
   * into pairs: word i = channel c's lane i | channel c + 1's lane i << 16. */
  const __m512i pairs = _mm512_set_epi16(31, 15, 30, 14, 29, 13, 28, 12, 27, 11, 26, 10, 25, 9, 24, 8, 23, 7, 22, 6, 21,
                                         5, 20, 4, 19, 3, 18, 2, 17, 1, 16, 0);
  uint16_t *d = dst;
  for (int64_t c = 0; c < cn; c += 2) {
    __m512 v1[16];
    for (int64_t p = c + PREFETCH_CHANNELS; p < c + PREFETCH_CHANNELS + 2 && p < cn; p++) prefetch_plane(x + p * plane, plan);
    transform_in(x + c * plane, plan, idx, v, seen);
    if (c + 1 < cn) transform_in(x + (c + 1) * plane, plan, idx, v1, seen);
    else
      for (int xi = 0; xi < 16; xi++) v1[xi] = _mm512_setzero_ps();
#pragma GCC unroll 16
    for (int xi = 0; xi < 16; xi++) {
      __m512i both = (__m512i)_mm512_cvtne2ps_pbh(v1[xi], v[xi]); /* v in bf16 lanes 0..15, v1 in 16..31 */
      _mm512_mask_storeu_epi32(d + xi * xi_stride + c * TB_WG_SLIVER, tiles, _mm512_permutexvar_epi16(pairs, both));
    }
  }
  return _mm512_cmp_ps_mask(seen[0], seen[1], _CMP_UNORD_Q) == 0;
}

static WG_TARGET bool no_inf_avx512(const float *x, int64_t n) {
  const __m512i magnitude = _mm512_set1_epi32(0x7FFFFFFF), inf = _mm512_set1_epi32(0x7F800000);
  for (int64_t i0 = 0; i0 < n; i0 += 4096) { /* stop at the first block with one */
    int64_t end = n - i0 < 4096 ? n : i0 + 4096;
    __mmask16 found = 0;
    for (int64_t i = i0; i < end; i += 16) {
      __mmask16 m = end - i >= 16 ? (__mmask16)0xFFFF : (__mmask16)((1u << (end - i)) - 1u);
      __m512i v = _mm512_and_si512(_mm512_maskz_loadu_epi32(m, x + i), magnitude);
      found |= _mm512_mask_cmpeq_epi32_mask(m, v, inf);
    }
    if (found) return false;
  }
  return true;
}

/* Plain C for CPUs without AVX512F (the AVX2 path's Winograd asks too): blocks of 4096 values without an
 * exit per value, which the compiler vectorises, stopping at the first block with an infinity. */
static bool no_inf_portable(const float *x, int64_t n) {
  for (int64_t i0 = 0; i0 < n; i0 += 4096) {
    int64_t end = n - i0 < 4096 ? n : i0 + 4096;
    uint32_t found = 0;
    for (int64_t i = i0; i < end; i++) {
      uint32_t bits;
      memcpy(&bits, x + i, sizeof bits);
      found |= (bits & 0x7FFFFFFFu) == 0x7F800000u;
    }
    if (found) return false;
  }
  return true;
}

bool tb_conv_winograd_no_inf(const float *x, int64_t n) {
  return tb_convert_features() & TB_FEATURE_BIT(TB_FEATURE_AVX512F) ? no_inf_avx512(x, n)
                                                                     : no_inf_portable(x, n);
}


/* buf[p][j] (p < 14 pixels of one output row segment, j < 16 channels, bias already added) to
 * y[j * plane + p] for p < n and j < jn: + residual, then Relu / LeakyRelu / Clip in registers with the
 * scalar rules (vmaxps returns v when v is NaN; -0 stays -0), the other activations per row afterwards. */
static WG_TARGET void store_segment(const __m512 buf[16], int64_t n, int64_t jn, float *y, int64_t plane,
                                    const float *res, const tb_gemm_epilogue *ep) {
  __m512 r[16];
  memcpy(r, buf, sizeof r);
  tb_transpose16_ps(r);
  const __mmask16 m = (__mmask16)((1u << n) - 1u);
  const __m512 zero = _mm512_setzero_ps(), alpha = _mm512_set1_ps(ep->act_alpha);
  const __m512 lo = _mm512_set1_ps(ep->act_min), hi = _mm512_set1_ps(ep->act_max);
  for (int64_t j = 0; j < jn; j++) {
    __m512 v = r[j];
    if (res) v = _mm512_add_ps(v, _mm512_maskz_loadu_ps(m, res + j * plane));
    if (ep->act == 1) {
      v = _mm512_max_ps(zero, v);
    } else if (ep->act == 2) {
      v = _mm512_mask_mul_ps(v, _mm512_cmp_ps_mask(v, zero, _CMP_LT_OQ), v, alpha);
    } else if (ep->act == 3) {
      v = _mm512_mask_mov_ps(v, _mm512_cmp_ps_mask(v, lo, _CMP_LT_OQ), lo);
      v = _mm512_mask_mov_ps(v, _mm512_cmp_ps_mask(v, hi, _CMP_GT_OQ), hi);
    }
    _mm512_mask_storeu_ps(y + j * plane, m, v);
  }
  if (ep->act > 3)
    for (int64_t j = 0; j < jn; j++) tb_conv_epilogue_row(ep, NULL, y + j * plane, n);
}

WG_TARGET void tb_conv_winograd_output_avx512(const tb_conv_geom *g, const tb_wg_half *h, const float *m, int64_t xi_stride,
                                              int64_t ldm, int64_t k0, int64_t nk, const float *bias,
                                              const float *residual, const tb_gemm_epilogue *ep, float *y) {
  if (!h->valid) return;
  int64_t plane = g->oh * g->ow, oy = 2 * h->ty, ox = 2 * h->tx0;
  int64_t n = g->ow - ox < 2 * TB_WG_HALF ? g->ow - ox : 2 * TB_WG_HALF; /* pixels of the segment */
  if (n <= 0 || oy >= g->oh) return;
  bool second_row = oy + 1 < g->oh;
  for (int64_t k = k0; k < k0 + nk; k += 16) {
    int64_t jn = k0 + nk - k < 16 ? k0 + nk - k : 16;
    const __m512 b = bias ? _mm512_maskz_loadu_ps((__mmask16)((1u << jn) - 1u), bias + k) : _mm512_setzero_ps();
    __m512 row0[16], row1[16];
    row0[14] = row0[15] = row1[14] = row1[15] = _mm512_setzero_ps();
    for (int t = 0; t < TB_WG_HALF; t++) {
      const float *mt = m + t * ldm + (k - k0);
      __m512 s[2][4];
#pragma GCC unroll 4
      for (int c = 0; c < 4; c++) { /* A^T M: rows 0..3 of column c */
        __m512 m0 = _mm512_loadu_ps(mt + (0 * 4 + c) * xi_stride), m1 = _mm512_loadu_ps(mt + (1 * 4 + c) * xi_stride);
        __m512 m2 = _mm512_loadu_ps(mt + (2 * 4 + c) * xi_stride), m3 = _mm512_loadu_ps(mt + (3 * 4 + c) * xi_stride);
        s[0][c] = _mm512_add_ps(_mm512_add_ps(m0, m1), m2);
        s[1][c] = _mm512_sub_ps(_mm512_sub_ps(m1, m2), m3);
      }
      /* (A^T M) A, plus the bias */
      row0[2 * t] = _mm512_add_ps(_mm512_add_ps(_mm512_add_ps(s[0][0], s[0][1]), s[0][2]), b);
      row0[2 * t + 1] = _mm512_add_ps(_mm512_sub_ps(_mm512_sub_ps(s[0][1], s[0][2]), s[0][3]), b);
      row1[2 * t] = _mm512_add_ps(_mm512_add_ps(_mm512_add_ps(s[1][0], s[1][1]), s[1][2]), b);
      row1[2 * t + 1] = _mm512_add_ps(_mm512_sub_ps(_mm512_sub_ps(s[1][1], s[1][2]), s[1][3]), b);
    }
    int64_t at = k * plane + oy * g->ow + ox;
    store_segment(row0, n, jn, y + at, plane, residual ? residual + at : NULL, ep);
    if (second_row) store_segment(row1, n, jn, y + at + g->ow, plane, residual ? residual + at + g->ow : NULL, ep);
  }
}
#else
bool tb_conv_winograd_no_inf(const float *x, int64_t n) {
  for (int64_t i = 0; i < n; i++)
    if (isinf(x[i])) return false;
  return true;
}
bool tb_conv_winograd_input_avx512(const tb_conv_geom *g, const float *x, const tb_wg_half h[2], bool bf16, void *dst,
                                   int64_t xi_stride) {
  (void)g, (void)x, (void)h, (void)bf16, (void)dst, (void)xi_stride;
  return false;
}
void tb_conv_winograd_output_avx512(const tb_conv_geom *g, const tb_wg_half *h, const float *m, int64_t xi_stride,
                                    int64_t ldm, int64_t k0, int64_t nk, const float *bias, const float *residual,
                                    const tb_gemm_epilogue *ep, float *y) {
  (void)g, (void)h, (void)m, (void)xi_stride, (void)ldm, (void)k0, (void)nk, (void)bias, (void)residual, (void)ep, (void)y;
}
#endif
