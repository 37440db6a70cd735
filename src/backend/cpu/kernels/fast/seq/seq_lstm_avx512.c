/* A work item of the fused LSTM step on AVX-512 (see seq_rnn.h; the step that runs the items over the pool
 * is in seq_lstm.c), fp32 (level 2) or bf16 (level 3, AVX512-BF16). Item: one block of 16 hidden units for
 * up to 8 batch rows. Its gates come from a register tile of 8 rows x 32 columns (two gates), run twice
 * (i and o, then f and c; with one or two rows: one pass over both pairs, 64 columns, so that a batch of
 * 1 keeps 4 sums in flight, not 2), each k adding h[row][k] times the packed R, broadcast from h in place (no
 * packing of h; bf16: a pair of k per vdpbf16ps, from the bf16 copy of h the previous step wrote); the
 * tile goes to a 2 KiB scratch and the cell update of the same units follows at once, vectorised in fp32
 * (4 rows interleaved so their latencies overlap), X W^T and the bias added first. So the thread that owns
 * a block finishes it, and each element is summed in the same order on any thread. Built for AVX-512 by
 * target attribute; called only on those paths. */
#include <stdlib.h>
#include <string.h>
#include "backend/cpu/kernels/fast/gemm/gemm_bf16_kernel.h"
#include "backend/cpu/kernels/fast/seq/seq_rnn.h"
#if defined(__x86_64__)
#include "backend/cpu/kernels/fast/seq/seq_vec_x86.h"
#include "backend/cpu/kernels/rnn_control/rnn_cell.h"

#define T512 __attribute__((target("avx512f,fma")))
#define T512BF16 __attribute__((target("avx512f,avx512bw,avx512vl,avx512bf16,fma")))

enum {
  ROWS = SEQ_LSTM_ROWS,      /* batch rows per work item */
  TILE = 2 * SEQ_LSTM_UNITS, /* columns of one tile: a gate pair */
  CELL_ROWS = 4,             /* rows whose cell updates are interleaved */
};

/* out[r * 2 TILE + 0 .. TILE) = sum over k of h[r * ldh + k] * rp[k * TILE ..], r < rows. */
T512 static inline __attribute__((always_inline)) void tile(int rows, int64_t depth, const float *h, int64_t ldh,
                                                             const float *rp, float *out) {
  __m512 a0[ROWS], a1[ROWS];
#pragma GCC unroll 8
  for (int r = 0; r < rows; r++) a0[r] = a1[r] = _mm512_setzero_ps();
  for (int64_t k = 0; k < depth; k++) {
    __m512 b0 = _mm512_load_ps(rp + k * TILE), b1 = _mm512_load_ps(rp + k * TILE + 16);
#pragma GCC unroll 8
    for (int r = 0; r < rows; r++) {
      __m512 x = _mm512_set1_ps(h[r * ldh + k]);
      a0[r] = _mm512_fmadd_ps(x, b0, a0[r]);
      a1[r] = _mm512_fmadd_ps(x, b1, a1[r]);
    }
  }
#pragma GCC unroll 8
  for (int r = 0; r < rows; r++) {
    _mm512_store_ps(out + r * 2 * TILE, a0[r]);
    _mm512_store_ps(out + r * 2 * TILE + 16, a1[r]);
  }
}

#define TILE_ROWS(n)                                                                                \
  T512 static void tile_##n(int64_t depth, const float *h, int64_t ldh, const float *rp, float *out) { \
    tile(n, depth, h, ldh, rp, out);                                                                \
  }
TILE_ROWS(1)
TILE_ROWS(2)
TILE_ROWS(3)
TILE_ROWS(4)
TILE_ROWS(5)
TILE_ROWS(6)
TILE_ROWS(7)
TILE_ROWS(8)

typedef void (*tile_fn)(int64_t depth, const float *h, int64_t ldh, const float *rp, float *out);
static const tile_fn tiles[ROWS + 1] = {NULL, tile_1, tile_2, tile_3, tile_4, tile_5, tile_6, tile_7, tile_8};

/* Both gate pairs of one or two rows in one pass over k: out[r * 2 TILE + p * TILE + 0 .. TILE) = sum over
 * k of h[r * ldh + k] * rp_p[k * TILE ..]. The tile above, run once per pair, keeps only 2 (one row) or 4
 * (two rows) sums in flight, each waiting on its FMA's latency; here 4 or 8. Each sum is the same FMA
 * chain over k as the tile's, so the bits are the same. */
T512 static inline __attribute__((always_inline)) void tile_wide(int rows, int64_t depth, const float *h, int64_t ldh,
                                                                  const float *rp0, const float *rp1, float *out) {
  __m512 a[8];
#pragma GCC unroll 8
  for (int v = 0; v < 4 * rows; v++) a[v] = _mm512_setzero_ps();
  for (int64_t k = 0; k < depth; k++) {
#pragma GCC unroll 2
    for (int r = 0; r < rows; r++) {
      __m512 x = _mm512_set1_ps(h[r * ldh + k]);
#pragma GCC unroll 2
      for (int p = 0; p < 2; p++) {
        const float *b = (p ? rp1 : rp0) + k * TILE;
        a[4 * r + 2 * p] = _mm512_fmadd_ps(x, _mm512_load_ps(b), a[4 * r + 2 * p]);
        a[4 * r + 2 * p + 1] = _mm512_fmadd_ps(x, _mm512_load_ps(b + 16), a[4 * r + 2 * p + 1]);
      }
    }
  }
#pragma GCC unroll 2
  for (int r = 0; r < rows; r++)
#pragma GCC unroll 2
    for (int p = 0; p < 2; p++) {
      _mm512_store_ps(out + r * 2 * TILE + p * TILE, a[4 * r + 2 * p]);
      _mm512_store_ps(out + r * 2 * TILE + p * TILE + 16, a[4 * r + 2 * p + 1]);
    }
}

T512 static void tile_wide_1(int64_t depth, const float *h, int64_t ldh, const float *rp0, const float *rp1,
                             float *out) {
  tile_wide(1, depth, h, ldh, rp0, rp1, out);
}
T512 static void tile_wide_2(int64_t depth, const float *h, int64_t ldh, const float *rp0, const float *rp1,
                             float *out) {
  tile_wide(2, depth, h, ldh, rp0, rp1, out);
}

/* The same tile on bf16 operands (level 3): `pairs` pairs of k, h's bf16 pair of row r broadcast as one
 * 32-bit word, vdpbf16ps adding both products of a pair to the fp32 sums. */
T512BF16 static inline __attribute__((always_inline)) void tile_bf16(int rows, int64_t pairs, const uint16_t *h,
                                                                     int64_t ldh, const uint16_t *rp, float *out) {
  __m512 a0[ROWS], a1[ROWS];
#pragma GCC unroll 8
  for (int r = 0; r < rows; r++) a0[r] = a1[r] = _mm512_setzero_ps();
  for (int64_t q = 0; q < pairs; q++) {
    __m512bh b0 = (__m512bh)_mm512_load_si512(rp + q * 2 * TILE);
    __m512bh b1 = (__m512bh)_mm512_load_si512(rp + q * 2 * TILE + 32);
#pragma GCC unroll 8
    for (int r = 0; r < rows; r++) {
      uint32_t pair;
      memcpy(&pair, h + r * ldh + 2 * q, sizeof pair);
      __m512bh x = (__m512bh)_mm512_set1_epi32((int)pair);
      a0[r] = _mm512_dpbf16_ps(a0[r], x, b0);
      a1[r] = _mm512_dpbf16_ps(a1[r], x, b1);
    }
  }
#pragma GCC unroll 8
  for (int r = 0; r < rows; r++) {
    _mm512_store_ps(out + r * 2 * TILE, a0[r]);
    _mm512_store_ps(out + r * 2 * TILE + 16, a1[r]);
  }
}

#define TILE_BF16_ROWS(n)                                                                          \
  T512BF16 static void tile_bf16_##n(int64_t pairs, const uint16_t *h, int64_t ldh, const uint16_t *rp, \
                                     float *out) {                                                   \
    tile_bf16(n, pairs, h, ldh, rp, out);                                                          \
  }
TILE_BF16_ROWS(1)
TILE_BF16_ROWS(2)
TILE_BF16_ROWS(3)
TILE_BF16_ROWS(4)
TILE_BF16_ROWS(5)
TILE_BF16_ROWS(6)
TILE_BF16_ROWS(7)
TILE_BF16_ROWS(8)

typedef void (*tile_bf16_fn)(int64_t pairs, const uint16_t *h, int64_t ldh, const uint16_t *rp, float *out);
static const tile_bf16_fn tiles_bf16[ROWS + 1] = {NULL,        tile_bf16_1, tile_bf16_2, tile_bf16_3, tile_bf16_4,
                                                  tile_bf16_5, tile_bf16_6, tile_bf16_7, tile_bf16_8};

/* tile_wide on bf16 operands: both gate pairs (rp0, rp1) of one or two rows in one pass over the pairs of k,
 * each sum the same vdpbf16ps chain as tile_bf16's. */
T512BF16 static inline __attribute__((always_inline)) void tile_wide_bf16(int rows, int64_t pairs, const uint16_t *h,
                                                                          int64_t ldh, const uint16_t *rp0,
                                                                          const uint16_t *rp1, float *out) {
  __m512 a[8];
#pragma GCC unroll 8
  for (int v = 0; v < 4 * rows; v++) a[v] = _mm512_setzero_ps();
  for (int64_t q = 0; q < pairs; q++) {
#pragma GCC unroll 2
    for (int r = 0; r < rows; r++) {
      uint32_t pair;
      memcpy(&pair, h + r * ldh + 2 * q, sizeof pair);
      __m512bh x = (__m512bh)_mm512_set1_epi32((int)pair);
#pragma GCC unroll 2
      for (int p = 0; p < 2; p++) {
        const uint16_t *b = (p ? rp1 : rp0) + q * 2 * TILE;
        a[4 * r + 2 * p] = _mm512_dpbf16_ps(a[4 * r + 2 * p], x, (__m512bh)_mm512_load_si512(b));
        a[4 * r + 2 * p + 1] = _mm512_dpbf16_ps(a[4 * r + 2 * p + 1], x, (__m512bh)_mm512_load_si512(b + 32));
      }
    }
  }
#pragma GCC unroll 2
  for (int r = 0; r < rows; r++)
#pragma GCC unroll 2
    for (int p = 0; p < 2; p++) {
      _mm512_store_ps(out + r * 2 * TILE + p * TILE, a[4 * r + 2 * p]);
      _mm512_store_ps(out + r * 2 * TILE + p * TILE + 16, a[4 * r + 2 * p + 1]);
    }
}

T512BF16 static void tile_wide_bf16_1(int64_t pairs, const uint16_t *h, int64_t ldh, const uint16_t *rp0,
                                      const uint16_t *rp1, float *out) {
  tile_wide_bf16(1, pairs, h, ldh, rp0, rp1, out);
}
T512BF16 static void tile_wide_bf16_2(int64_t pairs, const uint16_t *h, int64_t ldh, const uint16_t *rp0,
                                      const uint16_t *rp1, float *out) {
  tile_wide_bf16(2, pairs, h, ldh, rp0, rp1, out);
}

/* 16 floats to bf16 bits, round to nearest even, NaN quieted, subnormals kept (tb_bf16_round's bits). */
T512 static inline __m256i round_bf16(__m512 x) {
  __m512i bits = _mm512_castps_si512(x), high = _mm512_srli_epi32(bits, 16);
  __m512i bias = _mm512_add_epi32(_mm512_and_si512(high, _mm512_set1_epi32(1)), _mm512_set1_epi32(0x7FFF));
  __m512i rounded = _mm512_srli_epi32(_mm512_add_epi32(bits, bias), 16);
  __mmask16 nan = _mm512_cmpgt_epu32_mask(_mm512_and_si512(bits, _mm512_set1_epi32(0x7FFFFFFF)),
                                          _mm512_set1_epi32(0x7F800000));
  return _mm512_cvtepi32_epi16(_mm512_mask_blend_epi32(nan, rounded, _mm512_or_si512(high, _mm512_set1_epi32(0x40))));
}

/* The ONNX activations other than sigmoid and tanh, lane by lane. */
T512 static __attribute__((noinline)) __m512 activate_lanes(const tb_rnn_act *act, __m512 x) {
  _Alignas(64) float v[16];
  _mm512_store_ps(v, x);
  for (int i = 0; i < 16; i++) v[i] = (float)tb_rnn_activate(act, (double)v[i]);
  return _mm512_load_ps(v);
}

/* x[r] = act(clip(x[r])) for r < n: sigmoid and tanh in registers, n rows interleaved. */
T512 static inline __attribute__((always_inline)) void activate(const tb_rnn_act *act, const tb_rnn_params *a,
                                                                __m512 *x, int n) {
  if (a->has_clip) {
    __m512 lo = _mm512_set1_ps(-a->clip), hi = _mm512_set1_ps(a->clip);
#pragma GCC unroll 4
    for (int r = 0; r < n; r++) x[r] = _mm512_min_ps(hi, _mm512_max_ps(lo, x[r])); /* keeps NaN */
  }
  if (act->kind == TB_RNN_ACT_SIGMOID) {
#pragma GCC unroll 4
    for (int r = 0; r < n; r++) x[r] = seq_sigmoid512_rcp(x[r]);
  } else if (act->kind == TB_RNN_ACT_TANH) {
#pragma GCC unroll 4
    for (int r = 0; r < n; r++) x[r] = seq_tanh512_rcp(x[r]);
  } else {
#pragma GCC unroll 4
    for (int r = 0; r < n; r++) x[r] = activate_lanes(act, x[r]);
  }
}

/* The cell update of rows b0 .. b0+n (n <= CELL_ROWS, interleaved so their latencies overlap) for the
 * units u0 .. u0+16 (lanes m), from their gate tiles g (row r at g + r * 2 TILE: i, o, f, c). A row past
 * its length keeps its h and c and writes no Y. */
T512 static inline __attribute__((always_inline)) void cells(seq_dir *s, int64_t k, int64_t b0, int n, int64_t u0,
                                                             __mmask16 m, const float *g) {
  const seq_dims *dims = s->m;
  const tb_rnn_params *a = s->a;
  int64_t hid = dims->hidden;
  __m512 gi[CELL_ROWS], go[CELL_ROWS], gf[CELL_ROWS], gc[CELL_ROWS], c[CELL_ROWS], tc[CELL_ROWS];
  __mmask16 on[CELL_ROWS];
  int64_t t[CELL_ROWS];
#pragma GCC unroll 4
  for (int r = 0; r < n; r++) {
    int64_t b = b0 + r;
    bool active = seq_row_active(s, b, k);
    on[r] = active ? m : 0;
    t[r] = active ? seq_row_time(s, b, k) : 0; /* an inactive row reads no X W^T (mask 0) */
    const float *xw = s->xw + seq_x_row(dims, t[r], b) * 4 * hid + u0, *gr = g + r * 2 * TILE;
    gi[r] = _mm512_add_ps(_mm512_load_ps(gr), _mm512_maskz_loadu_ps(on[r], xw));
    go[r] = _mm512_add_ps(_mm512_load_ps(gr + 16), _mm512_maskz_loadu_ps(on[r], xw + hid));
    gf[r] = _mm512_add_ps(_mm512_load_ps(gr + 32), _mm512_maskz_loadu_ps(on[r], xw + 2 * hid));
    gc[r] = _mm512_add_ps(_mm512_load_ps(gr + 48), _mm512_maskz_loadu_ps(on[r], xw + 3 * hid));
    c[r] = _mm512_maskz_loadu_ps(m, s->c + b * hid + u0);
  }
  if (s->cell_bias) {
    const float *bias = s->cell_bias + u0;
    __m512 bi = _mm512_maskz_loadu_ps(m, bias), bo = _mm512_maskz_loadu_ps(m, bias + hid);
    __m512 bf = _mm512_maskz_loadu_ps(m, bias + 2 * hid), bc = _mm512_maskz_loadu_ps(m, bias + 3 * hid);
#pragma GCC unroll 4
    for (int r = 0; r < n; r++) {
      gi[r] = _mm512_add_ps(gi[r], bi);
      go[r] = _mm512_add_ps(go[r], bo);
      gf[r] = _mm512_add_ps(gf[r], bf);
      gc[r] = _mm512_add_ps(gc[r], bc);
    }
  }
  const float *p = s->peep;
  if (p) {
    __m512 pi = _mm512_maskz_loadu_ps(m, p + u0), pf = _mm512_maskz_loadu_ps(m, p + 2 * hid + u0);
#pragma GCC unroll 4
    for (int r = 0; r < n; r++) {
      gi[r] = _mm512_fmadd_ps(pi, c[r], gi[r]);
      gf[r] = _mm512_fmadd_ps(pf, c[r], gf[r]);
    }
  }
  activate(&s->acts[0], a, gi, n);
  if (a->input_forget) {
#pragma GCC unroll 4
    for (int r = 0; r < n; r++) gf[r] = _mm512_sub_ps(_mm512_set1_ps(1.0f), gi[r]);
  } else {
    activate(&s->acts[0], a, gf, n);
  }
  activate(&s->acts[1], a, gc, n);
#pragma GCC unroll 4
  for (int r = 0; r < n; r++) tc[r] = c[r] = _mm512_fmadd_ps(gf[r], c[r], _mm512_mul_ps(gi[r], gc[r]));
  if (p) {
    __m512 po = _mm512_maskz_loadu_ps(m, p + hid + u0);
#pragma GCC unroll 4
    for (int r = 0; r < n; r++) go[r] = _mm512_fmadd_ps(po, c[r], go[r]);
  }
  activate(&s->acts[0], a, go, n);
  activate(&s->acts[2], a, tc, n);
#pragma GCC unroll 4
  for (int r = 0; r < n; r++) {
    int64_t b = b0 + r;
    __m512 h = _mm512_mul_ps(go[r], tc[r]);
    _mm512_mask_storeu_ps(s->c + b * hid + u0, on[r], c[r]);
    __m512 keep = _mm512_maskz_loadu_ps(m, s->h + b * hid + u0), next = _mm512_mask_blend_ps(on[r], keep, h);
    _mm512_mask_storeu_ps(s->h_next + b * hid + u0, m, next);
    /* the bf16 copy for the next step's tiles: all 16 lanes (zeros past H, where `next` is 0) */
    if (s->hb_next) _mm256_storeu_si256((__m256i *)(s->hb_next + b * s->hb_ld + u0), round_bf16(next));
    if (s->y) _mm512_mask_storeu_ps(s->y + seq_y_at(dims, t[r], s->d, b) + u0, on[r], h);
  }
}

#define CELL_ROWS_N(n)                                                                                        \
  T512 static void cells_##n(seq_dir *s, int64_t k, int64_t b0, int64_t u0, __mmask16 m, const float *g) { \
    cells(s, k, b0, n, u0, m, g);                                                                             \
  }
CELL_ROWS_N(1)
CELL_ROWS_N(2)
CELL_ROWS_N(3)
CELL_ROWS_N(4)

typedef void (*cells_fn)(seq_dir *s, int64_t k, int64_t b0, int64_t u0, __mmask16 m, const float *g);
static const cells_fn cell_rows[CELL_ROWS + 1] = {NULL, cells_1, cells_2, cells_3, cells_4};

T512 void tb_seq_lstm_item_avx512(seq_dir *s, int64_t k, int64_t j, int64_t b0, int rows) {
  int64_t hid = s->m->hidden, u0 = j * SEQ_LSTM_UNITS, n = hid - u0 < SEQ_LSTM_UNITS ? hid - u0 : SEQ_LSTM_UNITS;
  __mmask16 m = (__mmask16)((1u << n) - 1u);
  bool any = false;
  for (int r = 0; r < rows; r++) any = any || seq_row_active(s, b0 + r, k);
  if (!any) { /* every row past its length: h carries over */
    for (int64_t b = b0; b < b0 + rows; b++) {
      _mm512_mask_storeu_ps(s->h_next + b * hid + u0, m, _mm512_maskz_loadu_ps(m, s->h + b * hid + u0));
      if (s->hb_next) memcpy(s->hb_next + b * s->hb_ld + u0, s->hb + b * s->hb_ld + u0, SEQ_LSTM_UNITS * 2);
    }
    return;
  }
  /* X W^T of these rows and units was written long before (the whole sequence's projection): fetch it
   * while the tiles run */
  for (int r = 0; r < rows; r++)
    if (seq_row_active(s, b0 + r, k)) {
      const float *xw = s->xw + seq_x_row(s->m, seq_row_time(s, b0 + r, k), b0 + r) * 4 * hid + u0;
      for (int gate = 0; gate < 4; gate++) _mm_prefetch((const char *)(xw + gate * hid), _MM_HINT_T0);
    }
  _Alignas(64) float g[ROWS * 2 * TILE];
  if (s->hb) {
    int64_t pairs = (hid + 1) / 2;
    const uint16_t *rp = (const uint16_t *)s->r[0] + j * 2 * pairs * 2 * TILE, *h = s->hb + b0 * s->hb_ld;
    if (rows <= 2) {
      (rows == 1 ? tile_wide_bf16_1 : tile_wide_bf16_2)(pairs, h, s->hb_ld, rp, rp + pairs * 2 * TILE, g);
    } else {
      tiles_bf16[rows](pairs, h, s->hb_ld, rp, g);
      tiles_bf16[rows](pairs, h, s->hb_ld, rp + pairs * 2 * TILE, g + TILE);
    }
  } else {
    const float *rp = (const float *)s->r[0] + j * 2 * hid * TILE, *h = s->h + b0 * hid;
    if (rows <= 2) {
      (rows == 1 ? tile_wide_1 : tile_wide_2)(hid, h, hid, rp, rp + hid * TILE, g);
    } else {
      tiles[rows](hid, h, hid, rp, g);
      tiles[rows](hid, h, hid, rp + hid * TILE, g + TILE);
    }
  }
  for (int r = 0; r < rows; r += CELL_ROWS)
    cell_rows[rows - r < CELL_ROWS ? rows - r : CELL_ROWS](s, k, b0 + r, u0, m, g + r * 2 * TILE);
}

#else
void tb_seq_lstm_item_avx512(seq_dir *s, int64_t k, int64_t j, int64_t b0, int rows) {
  (void)s, (void)k, (void)j, (void)b0, (void)rows;
}
#endif
