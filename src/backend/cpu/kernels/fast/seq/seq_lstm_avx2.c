/* A work item of the fused fp32 LSTM step on AVX2 + FMA (see seq_rnn.h; the step that runs the items is in
 * seq_lstm.c). The same item as the AVX-512 one (seq_lstm_avx512.c) in 8-lane registers: with 16 of them,
 * the gates come from tiles of 4 rows x 16 columns (8 accumulators, h broadcast from memory), four per
 * gate pair and row group, on the same packed R (one or two rows left: 8 accumulators across 64 or 32
 * columns, so a batch of 1 is not bound by the FMA latency); then each row's cell update, its two 8-unit halves side by
 * side, with the AVX2 sigmoid and tanh of the vector math (seq_vec_x86.h). Built for AVX2 by target
 * attribute; called only on that path. */
#include <string.h>
#include "backend/cpu/kernels/fast/seq/seq_rnn.h"
#if defined(__x86_64__)
#include "backend/cpu/kernels/fast/seq/seq_vec_x86.h"
#include "backend/cpu/kernels/rnn_control/rnn_cell.h"

#define T256 SEQ_T256

enum {
  TILE = 2 * SEQ_LSTM_UNITS, /* columns of a gate pair in the packed R */
  TILE_ROWS = 4,             /* rows of one register tile */
  HALF = 16,                 /* columns of one register tile */
};

/* out[r * 2 TILE + 0 .. 16) = sum over k of h[r * ldh + k] * rp[k * TILE + 0 .. 16), r < rows. */
T256 static inline __attribute__((always_inline)) void tile(int rows, int64_t depth, const float *h, int64_t ldh,
                                                             const float *rp, float *out) {
  __m256 a0[TILE_ROWS], a1[TILE_ROWS];
#pragma GCC unroll 4
  for (int r = 0; r < rows; r++) a0[r] = a1[r] = _mm256_setzero_ps();
  for (int64_t k = 0; k < depth; k++) {
    __m256 b0 = _mm256_load_ps(rp + k * TILE), b1 = _mm256_load_ps(rp + k * TILE + 8);
#pragma GCC unroll 4
    for (int r = 0; r < rows; r++) {
      __m256 x = _mm256_broadcast_ss(h + r * ldh + k);
      a0[r] = _mm256_fmadd_ps(x, b0, a0[r]);
      a1[r] = _mm256_fmadd_ps(x, b1, a1[r]);
    }
  }
#pragma GCC unroll 4
  for (int r = 0; r < rows; r++) {
    _mm256_store_ps(out + r * 2 * TILE, a0[r]);
    _mm256_store_ps(out + r * 2 * TILE + 8, a1[r]);
  }
}

#define TILE_N(n)                                                                                      \
  T256 static void tile_##n(int64_t depth, const float *h, int64_t ldh, const float *rp, float *out) { \
    tile(n, depth, h, ldh, rp, out);                                                                   \
  }
TILE_N(1)
TILE_N(2)
TILE_N(3)
TILE_N(4)

typedef void (*tile_fn)(int64_t depth, const float *h, int64_t ldh, const float *rp, float *out);
static const tile_fn tiles[TILE_ROWS + 1] = {NULL, tile_1, tile_2, tile_3, tile_4};

/* out[r * 2 TILE + p * TILE + 0 .. width) = sum over k of h[r * ldh + k] * rp_p[k * TILE + 0 .. width) for
 * the gate pairs p < pairs, rows r < rows: one or two rows, whose 16-column tiles above keep only 2 or 4
 * sums in flight (each waits on its FMA's latency); here 8 accumulators (1 row x 2 pairs x 32 columns, or
 * 2 rows x 1 pair x 32 columns) share one pass over k. Each sum is the same FMA chain over k as the tile's,
 * so the bits are the same. */
T256 static inline __attribute__((always_inline)) void tile_wide(int rows, int pairs, int64_t depth, const float *h,
                                                                  int64_t ldh, const float *rp0, const float *rp1,
                                                                  float *out) {
  __m256 a[8];
#pragma GCC unroll 8
  for (int v = 0; v < 8; v++) a[v] = _mm256_setzero_ps();
  for (int64_t k = 0; k < depth; k++) {
#pragma GCC unroll 2
    for (int r = 0; r < rows; r++) {
      __m256 x = _mm256_broadcast_ss(h + r * ldh + k);
#pragma GCC unroll 2
      for (int p = 0; p < pairs; p++) {
        const float *b = (p ? rp1 : rp0) + k * TILE;
#pragma GCC unroll 4
        for (int v = 0; v < 4; v++) {
          int i = (r * pairs + p) * 4 + v;
          a[i] = _mm256_fmadd_ps(x, _mm256_load_ps(b + 8 * v), a[i]);
        }
      }
    }
  }
#pragma GCC unroll 2
  for (int r = 0; r < rows; r++)
#pragma GCC unroll 2
    for (int p = 0; p < pairs; p++)
#pragma GCC unroll 4
      for (int v = 0; v < 4; v++) _mm256_store_ps(out + r * 2 * TILE + p * TILE + 8 * v, a[(r * pairs + p) * 4 + v]);
}

/* One row, both gate pairs. */
T256 static void tile_row(int64_t depth, const float *h, const float *rp0, const float *rp1, float *out) {
  tile_wide(1, 2, depth, h, 0, rp0, rp1, out);
}

/* Two rows, one gate pair. */
T256 static void tile_two_rows(int64_t depth, const float *h, int64_t ldh, const float *rp, float *out) {
  tile_wide(2, 1, depth, h, ldh, rp, rp, out);
}

/* The ONNX activations other than sigmoid and tanh, lane by lane. */
T256 static __attribute__((noinline)) __m256 activate_lanes(const tb_rnn_act *act, __m256 x) {
  float v[8];
  _mm256_storeu_ps(v, x);
  for (int i = 0; i < 8; i++) v[i] = (float)tb_rnn_activate(act, (double)v[i]);
  return _mm256_loadu_ps(v);
}

/* x[i] = act(clip(x[i])) for both halves. */
T256 static inline __attribute__((always_inline)) void activate(const tb_rnn_act *act, const tb_rnn_params *a,
                                                                __m256 *x) {
  for (int i = 0; i < 2; i++) {
    if (a->has_clip) /* the constant first keeps a NaN */
      x[i] = _mm256_min_ps(_mm256_set1_ps(a->clip), _mm256_max_ps(_mm256_set1_ps(-a->clip), x[i]));
    x[i] = act->kind == TB_RNN_ACT_SIGMOID ? seq_sigmoid256(x[i])
           : act->kind == TB_RNN_ACT_TANH  ? seq_tanh256(x[i])
                                           : activate_lanes(act, x[i]);
  }
}

/* Lanes 0 .. n-1 of 8 (n clamped to 0..8) for maskload / maskstore. */
T256 static inline __m256i lanes(int64_t n) {
  static const int32_t bits[16] = {-1, -1, -1, -1, -1, -1, -1, -1, 0, 0, 0, 0, 0, 0, 0, 0};
  n = n < 0 ? 0 : n > 8 ? 8 : n;
  return _mm256_loadu_si256((const __m256i *)(bits + 8 - n));
}

/* The cell update of row b for units u0 .. u0+n from its gate tile g (i, o, f, c at 0, 16, 32, 48). */
T256 static void cell(seq_dir *s, int64_t k, int64_t b, int64_t u0, int64_t n, const float *g) {
  const seq_dims *dims = s->m;
  const tb_rnn_params *a = s->a;
  int64_t hid = dims->hidden;
  float *h_next = s->h_next + b * hid + u0;
  if (!seq_row_active(s, b, k)) {
    memcpy(h_next, s->h + b * hid + u0, (size_t)n * sizeof(float));
    return;
  }
  int64_t t = seq_row_time(s, b, k);
  const float *xw = s->xw + seq_x_row(dims, t, b) * 4 * hid + u0, *p = s->peep, *bias = s->cell_bias;
  float *c_at = s->c + b * hid + u0;
  __m256i mk[2] = {lanes(n), lanes(n - 8)};
  __m256 gi[2], go[2], gf[2], gc[2], c[2], tc[2];
  for (int i = 0; i < 2; i++) {
    int64_t o = 8 * i;
    gi[i] = _mm256_add_ps(_mm256_load_ps(g + o), _mm256_maskload_ps(xw + o, mk[i]));
    go[i] = _mm256_add_ps(_mm256_load_ps(g + 16 + o), _mm256_maskload_ps(xw + hid + o, mk[i]));
    gf[i] = _mm256_add_ps(_mm256_load_ps(g + 32 + o), _mm256_maskload_ps(xw + 2 * hid + o, mk[i]));
    gc[i] = _mm256_add_ps(_mm256_load_ps(g + 48 + o), _mm256_maskload_ps(xw + 3 * hid + o, mk[i]));
    if (bias) {
      gi[i] = _mm256_add_ps(gi[i], _mm256_maskload_ps(bias + u0 + o, mk[i]));
      go[i] = _mm256_add_ps(go[i], _mm256_maskload_ps(bias + hid + u0 + o, mk[i]));
      gf[i] = _mm256_add_ps(gf[i], _mm256_maskload_ps(bias + 2 * hid + u0 + o, mk[i]));
      gc[i] = _mm256_add_ps(gc[i], _mm256_maskload_ps(bias + 3 * hid + u0 + o, mk[i]));
    }
    c[i] = _mm256_maskload_ps(c_at + o, mk[i]);
    if (p) {
      gi[i] = _mm256_fmadd_ps(_mm256_maskload_ps(p + u0 + o, mk[i]), c[i], gi[i]);
      gf[i] = _mm256_fmadd_ps(_mm256_maskload_ps(p + 2 * hid + u0 + o, mk[i]), c[i], gf[i]);
    }
  }
  activate(&s->acts[0], a, gi);
  if (a->input_forget)
    for (int i = 0; i < 2; i++) gf[i] = _mm256_sub_ps(_mm256_set1_ps(1.0f), gi[i]);
  else
    activate(&s->acts[0], a, gf);
  activate(&s->acts[1], a, gc);
  for (int i = 0; i < 2; i++) {
    tc[i] = c[i] = _mm256_fmadd_ps(gf[i], c[i], _mm256_mul_ps(gi[i], gc[i]));
    if (p) go[i] = _mm256_fmadd_ps(_mm256_maskload_ps(p + hid + u0 + 8 * i, mk[i]), c[i], go[i]);
  }
  activate(&s->acts[0], a, go);
  activate(&s->acts[2], a, tc);
  float *y = s->y ? s->y + seq_y_at(dims, t, s->d, b) + u0 : NULL;
  for (int i = 0; i < 2; i++) {
    __m256 h = _mm256_mul_ps(go[i], tc[i]);
    _mm256_maskstore_ps(c_at + 8 * i, mk[i], c[i]);
    _mm256_maskstore_ps(h_next + 8 * i, mk[i], h);
    if (y) _mm256_maskstore_ps(y + 8 * i, mk[i], h);
  }
}

T256 void tb_seq_lstm_item_avx2(seq_dir *s, int64_t k, int64_t j, int64_t b0, int rows) {
  int64_t hid = s->m->hidden, u0 = j * SEQ_LSTM_UNITS, n = hid - u0 < SEQ_LSTM_UNITS ? hid - u0 : SEQ_LSTM_UNITS;
  bool any = false;
  for (int r = 0; r < rows; r++) any = any || seq_row_active(s, b0 + r, k);
  _Alignas(32) float g[SEQ_LSTM_ROWS * 2 * TILE];
  if (any) {
    const float *rp = (const float *)s->r[0] + j * 2 * hid * TILE;
    for (int r = 0; r < rows; r += TILE_ROWS) {
      int tr = rows - r < TILE_ROWS ? rows - r : TILE_ROWS;
      const float *h = s->h + (b0 + r) * hid;
      float *out = g + r * 2 * TILE;
      if (tr == 1) {
        tile_row(hid, h, rp, rp + hid * TILE, out);
        continue;
      }
      for (int pair = 0; pair < 2; pair++) {
        if (tr == 2) {
          tile_two_rows(hid, h, hid, rp + pair * hid * TILE, out + pair * TILE);
          continue;
        }
        for (int half = 0; half < 2; half++)
          tiles[tr](hid, h, hid, rp + pair * hid * TILE + half * HALF, out + pair * TILE + half * HALF);
      }
    }
  }
  for (int r = 0; r < rows; r++) cell(s, k, b0 + r, u0, n, g + r * 2 * TILE);
}

#else
void tb_seq_lstm_item_avx2(seq_dir *s, int64_t k, int64_t j, int64_t b0, int rows) {
  (void)s, (void)k, (void)j, (void)b0, (void)rows;
}
#endif
