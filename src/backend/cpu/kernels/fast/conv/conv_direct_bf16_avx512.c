/* The bf16 direct convolution's AVX512-BF16 parts (conv_direct.h, lanes 2): the source (pairs of input
 * channels rounded to bf16, one uint32 per pixel, low half the even channel, in zero-padded planes; or, for
 * few channels, tap pairs: each channel's pixel with its right neighbour), the weights packed per (channel
 * pair, tap) or (channel, tap pair) as cols x 2 bf16, and the micro-kernels: per (pair, tap) cols / 16
 * weight vectors and, per tile row, one 32-bit broadcast of the source pair feeding vdpbf16ps (fp32
 * accumulation; the 28 accumulators of a 14 x 32 or 7 x 64 tile stay in registers). Rounding is to nearest
 * even with subnormals kept and NaN quieted, the same bits as tb_convert (vcvtneps2bf16 would flush
 * subnormals).
 * Only these functions are built for AVX-512 (target attributes); the driver reaches them only through
 * conv_bf16.c's AVX512-BF16 path, which the executor picks when cpuid has AVX512_BF16. */
#include <string.h>
#include "backend/cpu/kernels/fast/conv/conv_direct.h"
#include "backend/cpu/kernels/fast/gemm/gemm_bf16_kernel.h"

/* The contract's pack_weights, lanes 2: unit u, tap t, column j, lane l at ((u * n_taps + t) * cols + j) * 2
 * + l, the bf16 of W[m0 + j][2u + l][t]; zeros past mg and past cg. Portable C; runs at prepare (or per run
 * when W is not constant): per unit and column the two channels' taps are read once, in W's order. */
static void pack_weights(const float *w, int64_t mg, int64_t cg, int n_taps, int64_t m0, int cols, void *dst) {
  uint16_t *d = dst;
  int64_t units = (cg + 1) / 2, per_unit = (int64_t)n_taps * cols * 2;
  for (int64_t u = 0; u < units; u++) {
    uint16_t *du = d + u * per_unit;
    for (int j = 0; j < cols; j++) {
      const float *wj = m0 + j < mg ? w + ((m0 + j) * cg + 2 * u) * n_taps : NULL;
      for (int l = 0; l < 2; l++) {
        const float *wl = wj && 2 * u + l < cg ? wj + l * n_taps : NULL;
        for (int t = 0; t < n_taps; t++) du[((int64_t)t * cols + j) * 2 + l] = wl ? tb_bf16_round(wl[t]) : 0;
      }
    }
  }
}

/* The contract's pack_weights_taps: unit u (one channel), pair tap t = i * pairs + p, column j, lane l at
 * ((u * n_taps + t) * cols + j) * 2 + l, the bf16 of W[m0 + j][u][i][2p + l]; zeros past kw and past mg. */
static void pack_weights_taps(const float *w, int64_t mg, int64_t cg, int kh, int kw, int64_t m0, int cols, void *dst) {
  uint16_t *d = dst;
  int pairs = (kw + 1) / 2, n_taps = kh * pairs;
  for (int64_t u = 0; u < cg; u++)
    for (int j = 0; j < cols; j++) {
      const float *wj = m0 + j < mg ? w + ((m0 + j) * cg + u) * kh * kw : NULL;
      for (int t = 0; t < n_taps; t++)
        for (int l = 0; l < 2; l++) {
          int i = t / pairs, k = t % pairs * 2 + l;
          d[((u * n_taps + t) * cols + j) * 2 + l] = wj && k < kw ? tb_bf16_round(wj[i * kw + k]) : 0;
        }
    }
}

#if defined(__x86_64__)
#include "backend/cpu/kernels/fast/vec/bf16_round_avx512.h"

#define TB_INLINE_BF16 TB_TARGET_BF16 static inline __attribute__((always_inline))

enum { MAX_ROWS = 14 };

static inline __mmask16 first_lanes(int64_t count) {
  return count >= 16 ? (__mmask16)0xFFFF : count <= 0 ? (__mmask16)0 : (__mmask16)((1u << count) - 1u);
}

/* Columns [0, src_w) of one source row from two input rows whose column 0 lands at column pl (r1 NULL: a
 * zero channel): 16 pixels per step, the pads folded into the load mask (masked-off lanes are not read,
 * so the loads may start before the row), no branch and no memset per row. (vcvtne2ps2bf16 with a
 * subnormal fix-up measured no faster: this loop is bound by memory, not by the rounding.) */
TB_INLINE_BF16 void pair_row(const float *r0, const float *r1, int64_t iw, int64_t pl, int64_t src_w, uint32_t *d) {
  for (int64_t col = 0; col < src_w; col += 16) {
    __mmask16 load = (__mmask16)(first_lanes(pl + iw - col) & ~first_lanes(pl - col));
    __m512i pair = tb_round_bf16_avx512(_mm512_maskz_loadu_ps(load, r0 + (col - pl)));
    if (r1) {
      __m512i second = tb_round_bf16_avx512(_mm512_maskz_loadu_ps(load, r1 + (col - pl)));
      pair = _mm512_or_si512(pair, _mm512_slli_epi32(second, 16));
    }
    _mm512_mask_storeu_epi32(d + col, first_lanes(src_w - col), pair);
  }
}

TB_INLINE_BF16 void zero_row(int64_t src_w, uint32_t *d) {
  for (int64_t col = 0; col < src_w; col += 16) _mm512_mask_storeu_epi32(d + col, first_lanes(src_w - col), _mm512_setzero_si512());
}

/* The contract's make_source: x is the image and group's first channel, src the group's first unit;
 * channels [c0, c0 + n_c) land in units c0 / 2 on, every element of their planes written. */
TB_TARGET_BF16 static void make_source(const float *x, int64_t ih, int64_t iw, int64_t c0, int64_t n_c, int64_t src_h,
                                       int64_t src_w, int64_t pt, int64_t pl, void *src) {
  if (n_c <= 0 || src_h <= 0 || src_w <= 0) return;
  int64_t plane = ih * iw, src_plane = src_h * src_w;
  /* the input rows and columns that land inside the plane */
  int64_t y0 = pt < 0 ? -pt : 0, y1 = src_h - pt < ih ? src_h - pt : ih;
  int64_t x_lo = pl < 0 ? -pl : 0, x_hi = src_w - pl < iw ? src_w - pl : iw;
  for (int64_t c = c0; c < c0 + n_c; c += 2) {
    const float *x0 = x + c * plane, *x1 = c + 1 < c0 + n_c ? x0 + plane : NULL;
    uint32_t *d = (uint32_t *)src + (c / 2) * src_plane;
    for (int64_t y = 0; y < src_h; y++) {
      int64_t iy = y - pt;
      if (iy < y0 || iy >= y1 || x_hi <= x_lo) {
        zero_row(src_w, d + y * src_w);
        continue;
      }
      const float *r0 = x0 + iy * iw + x_lo, *r1 = x1 ? x1 + iy * iw + x_lo : NULL;
      pair_row(r0, r1, x_hi - x_lo, pl + x_lo, src_w, d + y * src_w);
    }
  }
}

/* Columns [0, src_w) of one source row of tap pairs from the input row (column 0 landing at column pl):
 * the low half of element col the input at col - pl, the high half at col - pl + dw, zero outside the
 * input (masked-off lanes are not read). */
TB_INLINE_BF16 void tap_pair_row(const float *row, int64_t iw, int64_t pl, int64_t dw, int64_t src_w, uint32_t *d) {
  if (dw == 1) { /* each value rounded once: the neighbours are the next 16 columns' vector shifted by one */
    __mmask16 first = (__mmask16)(first_lanes(pl + iw) & ~first_lanes(pl));
    __m512i cur = tb_round_bf16_avx512(_mm512_maskz_loadu_ps(first, row - pl));
    for (int64_t col = 0; col < src_w; col += 16) {
      int64_t at = col + 16;
      __mmask16 load = (__mmask16)(first_lanes(pl + iw - at) & ~first_lanes(pl - at));
      __m512i next = tb_round_bf16_avx512(_mm512_maskz_loadu_ps(load, row + (at - pl)));
      __m512i pair = _mm512_or_si512(cur, _mm512_slli_epi32(_mm512_alignr_epi32(next, cur, 1), 16));
      _mm512_mask_storeu_epi32(d + col, first_lanes(src_w - col), pair);
      cur = next;
    }
    return;
  }
  for (int64_t col = 0; col < src_w; col += 16) {
    __mmask16 lo = (__mmask16)(first_lanes(pl + iw - col) & ~first_lanes(pl - col));
    __mmask16 hi = (__mmask16)(first_lanes(pl - dw + iw - col) & ~first_lanes(pl - dw - col));
    __m512i pair = tb_round_bf16_avx512(_mm512_maskz_loadu_ps(lo, row + (col - pl)));
    __m512i right = tb_round_bf16_avx512(_mm512_maskz_loadu_ps(hi, row + (col - pl + dw)));
    pair = _mm512_or_si512(pair, _mm512_slli_epi32(right, 16));
    _mm512_mask_storeu_epi32(d + col, first_lanes(src_w - col), pair);
  }
}

/* The contract's make_source_taps: channels [c0, c0 + n_c) into units c0 on, every element written. */
TB_TARGET_BF16 static void make_source_taps(const float *x, int64_t ih, int64_t iw, int64_t c0, int64_t n_c, int64_t src_h,
                                            int64_t src_w, int64_t pt, int64_t pl, int64_t dw, void *src) {
  if (n_c <= 0 || src_h <= 0 || src_w <= 0) return;
  int64_t plane = ih * iw, src_plane = src_h * src_w;
  for (int64_t c = c0; c < c0 + n_c; c++) {
    uint32_t *d = (uint32_t *)src + c * src_plane;
    for (int64_t y = 0; y < src_h; y++) {
      int64_t iy = y - pt;
      if (iy < 0 || iy >= ih || iw <= 0) zero_row(src_w, d + y * src_w);
      else tap_pair_row(x + c * plane + iy * iw, iw, pl, dw, src_w, d + y * src_w);
    }
  }
}

/* acc += the pair products of the weight vector at w (a memory operand) and the broadcast source pair. */
#define DP_MEMORY(acc, pair, w) __asm__("vdpbf16ps %2, %1, %0" : "+v"(acc) : "v"(pair), "m"(*(const __m512i *)(w)))

/* One tile: ROWS pixels (stride STRIDE in the source; 0: a->pixel_stride) x NV * 16 channels, summed over units and taps in the
 * contract's order. Per (unit, tap): the weight vectors in registers and, per row, the source pair
 * broadcast into a register and one vdpbf16ps per vector. 64 columns have 28 accumulators and would need
 * 33 registers: their fourth weight vector is read from L1 by each vdpbf16ps instead (GCC would spill an
 * accumulator; measured 1.74 vdpbf16ps per cycle against 1.45 with every broadcast from memory, peak 2). */
TB_INLINE_BF16 void tile(const tb_conv_direct_args *a, const int ROWS, const int NV, const int64_t STRIDE) {
  __m512 acc[MAX_ROWS][4];
  const int cols = NV * 16, in_regs = NV == 4 ? 3 : NV;
  float *out = a->acc;
#pragma GCC unroll 14
  for (int r = 0; r < ROWS; r++)
#pragma GCC unroll 4
    for (int v = 0; v < NV; v++) acc[r][v] = a->accumulate ? _mm512_loadu_ps(out + r * cols + v * 16) : _mm512_setzero_ps();
  const uint32_t *src = a->src;
  const uint16_t *w = a->w;
  const int64_t *tap_off = a->tap_off, unit_stride = a->unit_stride, n_units = a->n_units;
  const int n_taps = a->n_taps;
  const int64_t step = STRIDE ? STRIDE : a->pixel_stride; /* STRIDE 0: the generic kernel */
  /* what the driver needs next (a->prefetch), one line into L2 every pf_every (unit, tap) steps */
  const char *pf = a->prefetch;
  int64_t pf_left = pf ? a->prefetch_bytes : 0, steps = n_units * n_taps;
  int64_t pf_every = pf_left > 0 && steps * 64 > pf_left ? steps * 64 / pf_left : 1, pf_count = pf_every;
  for (int64_t u = 0; u < n_units; u++) {
    const uint32_t *su = src + u * unit_stride;
    for (int t = 0; t < n_taps; t++, w += NV * 32) {
      const uint32_t *s = su + tap_off[t];
      if (pf_left > 0 && --pf_count == 0) {
        _mm_prefetch(pf, _MM_HINT_T1);
        pf += 64;
        pf_left -= 64;
        pf_count = pf_every;
      }
      __m512bh wv[4];
#pragma GCC unroll 4
      for (int v = 0; v < in_regs; v++) wv[v] = (__m512bh)_mm512_loadu_si512(w + v * 32);
#pragma GCC unroll 14
      for (int r = 0; r < ROWS; r++) {
        __m512bh pair = (__m512bh)_mm512_set1_epi32((int)s[r * step]);
#pragma GCC unroll 4
        for (int v = 0; v < in_regs; v++) acc[r][v] = _mm512_dpbf16_ps(acc[r][v], wv[v], pair);
        if (NV == 4) DP_MEMORY(acc[r][3], pair, w + 3 * 32);
      }
    }
  }
#pragma GCC unroll 14
  for (int r = 0; r < ROWS; r++)
#pragma GCC unroll 4
    for (int v = 0; v < NV; v++) _mm512_storeu_ps(out + r * cols + v * 16, acc[r][v]);
}

#define TILE_FN(rows, nv, stride)                                                                                   \
  TB_TARGET_BF16 static void tile_##rows##x##nv##_s##stride(const tb_conv_direct_args *a) { tile(a, rows, nv, stride); }
#define TILE_ROWS_14(nv, stride)                                                                                    \
  TILE_FN(1, nv, stride) TILE_FN(2, nv, stride) TILE_FN(3, nv, stride) TILE_FN(4, nv, stride) TILE_FN(5, nv, stride) \
  TILE_FN(6, nv, stride) TILE_FN(7, nv, stride) TILE_FN(8, nv, stride) TILE_FN(9, nv, stride)                       \
  TILE_FN(10, nv, stride) TILE_FN(11, nv, stride) TILE_FN(12, nv, stride) TILE_FN(13, nv, stride) TILE_FN(14, nv, stride)
#define TILE_ROWS_7(nv, stride)                                                                                     \
  TILE_FN(1, nv, stride) TILE_FN(2, nv, stride) TILE_FN(3, nv, stride) TILE_FN(4, nv, stride) TILE_FN(5, nv, stride) \
  TILE_FN(6, nv, stride) TILE_FN(7, nv, stride)
TILE_ROWS_14(2, 1)
TILE_ROWS_14(2, 2)
TILE_ROWS_7(4, 1)
TILE_ROWS_7(4, 2)
TILE_ROWS_14(2, 0)
TILE_ROWS_7(4, 0)

#define ENTRY(rows, nv, stride) tile_##rows##x##nv##_s##stride
#define TABLE_14(nv, stride)                                                                                        \
  {ENTRY(1, nv, stride), ENTRY(2, nv, stride), ENTRY(3, nv, stride), ENTRY(4, nv, stride), ENTRY(5, nv, stride),     \
   ENTRY(6, nv, stride), ENTRY(7, nv, stride), ENTRY(8, nv, stride), ENTRY(9, nv, stride), ENTRY(10, nv, stride),    \
   ENTRY(11, nv, stride), ENTRY(12, nv, stride), ENTRY(13, nv, stride), ENTRY(14, nv, stride)}
#define TABLE_7(nv, stride)                                                                                         \
  {ENTRY(1, nv, stride), ENTRY(2, nv, stride), ENTRY(3, nv, stride), ENTRY(4, nv, stride), ENTRY(5, nv, stride),     \
   ENTRY(6, nv, stride), ENTRY(7, nv, stride)}

static const tb_conv_direct_ukr cols32[3][MAX_ROWS] = {TABLE_14(2, 1), TABLE_14(2, 2), TABLE_14(2, 0)};
static const tb_conv_direct_ukr cols64[3][7] = {TABLE_7(4, 1), TABLE_7(4, 2), TABLE_7(4, 0)};

/* Pixel strides 1 and 2 (every ResNet / VGG / MobileNet convolution) with the stride built in; any other
 * stride the generic kernels (the stride read from the args). */
static tb_conv_direct_ukr ukr_for(int rows, int cols, int64_t pixel_stride) {
  if (pixel_stride < 1 || rows < 1) return NULL;
  int which = pixel_stride <= 2 ? (int)pixel_stride - 1 : 2;
  if (cols == 32 && rows <= MAX_ROWS) return cols32[which][rows - 1];
  if (cols == 64 && rows <= 7) return cols64[which][rows - 1];
  return NULL;
}

const tb_conv_direct_impl tb_conv_direct_bf16_avx512bf16 = {
    .name = "bf16 avx512bf16", .lanes = 2, .src_elem = 4, .w_elem = 2, .max_rows = MAX_ROWS, .cols = 32,
    .ukr = ukr_for, .make_source = make_source, .pack_weights = pack_weights, .make_source_taps = make_source_taps,
    .pack_weights_taps = pack_weights_taps, .store = tb_conv_direct_store_avx512};
#else
static tb_conv_direct_ukr no_ukr(int rows, int cols, int64_t pixel_stride) {
  (void)rows, (void)cols, (void)pixel_stride;
  return NULL;
}
/* Off x86-64 there is no AVX512-BF16: no micro-kernel, so fits() never takes this implementation. */
const tb_conv_direct_impl tb_conv_direct_bf16_avx512bf16 = {
    .name = "bf16 avx512bf16", .lanes = 2, .src_elem = 4, .w_elem = 2, .max_rows = 14, .cols = 32, .ukr = no_ukr,
    .pack_weights = pack_weights, .pack_weights_taps = pack_weights_taps};
#endif
