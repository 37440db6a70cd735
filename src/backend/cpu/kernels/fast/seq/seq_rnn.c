/* The level-2 fp32 (and level-3 bf16) LSTM/GRU driver (see seq_rnn.h): shape checks, weights packed at
 * prepare (W^T for the input projection, R^T per gate group for the recurrence) for the fp32 or the bf16
 * GEMM, the per-direction walk and the outputs. Degenerate sizes (a zero sequence, batch or input size)
 * run the reference kernel. */
#include "backend/cpu/kernels/fast/seq/seq_rnn.h"
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "backend/cpu/kernels/fast/gemm/fast_kernel.h"
#include "backend/control/rc_util.h"
#include "core/threadpool.h"

extern const tb_kernel tb_kernel_lstm, tb_kernel_gru;

enum { IN_X, IN_W, IN_R, IN_B, IN_LENS, IN_H0, IN_C0, IN_P, IN_COUNT };
enum { ROWS_PARALLEL_MIN = 8192 }; /* gate elements per step below which the rows run on one thread */

typedef struct seq_state {
  int bf16;   /* what the operands were packed for (seq_prec.bf16) */
  bool fused; /* r[d][0] is tb_seq_lstm_pack_r's layout */
  int64_t dirs, gh, input, hidden;
  void *w[2];
  void *r[2][SEQ_MAX_R];
} seq_state;

/* ---- the fp32 or bf16 GEMM ---- */

/* op(B) = data^T (data n x k, row stride ld) packed for the entry's GEMM; NULL when out of memory. */
static void *pack_bt(seq_prec prec, const float *data, int64_t ld, int64_t k, int64_t n) {
  if (prec.bf16 >= 0) {
    tb_gemm_bf16_operand op = {.data = data, .ld = ld, .trans = true};
    return tb_gemm_bf16_pack_b((tb_gemm_bf16_path)prec.bf16, &op, k, n);
  }
  tb_gemm_operand op = {.data = data, .ld = ld, .trans = true};
  return tb_gemm_pack_b(prec.path, &op, k, n);
}

static void packed_free(int bf16, void *packed) {
  if (bf16 >= 0)
    tb_gemm_bf16_packed_free(packed);
  else
    tb_gemm_packed_free(packed);
}

/* Whether the LSTM runs the fused step on this entry's path (R in tb_seq_lstm_pack_r's layout). */
static bool fused_cell(tb_rnn_cell cell, seq_prec prec) {
  return cell == TB_RNN_CELL_LSTM && tb_seq_lstm_fused(prec.path, prec.bf16);
}

static void r_free(int bf16, bool fused, void *r) {
  if (fused)
    free(r);
  else
    packed_free(bf16, r);
}

/* C[m x n] = epilogue(A[m x k] (row stride lda) times op(B)); op(B) packed, or b^T from plain data. */
static bool gemm(seq_prec prec, int64_t m, int64_t n, int64_t k, const float *a, int64_t lda, const void *packed,
                 const float *b, int64_t ldb, float *c, int64_t ldc, const tb_gemm_epilogue *ep, struct tb_pool *pool) {
  if (prec.bf16 >= 0) {
    tb_gemm_bf16_operand A = {.data = a, .ld = lda}, B = {.data = b, .ld = ldb, .trans = true};
    if (packed) B = (tb_gemm_bf16_operand){.packed = packed};
    return tb_gemm_bf16_run((tb_gemm_bf16_path)prec.bf16, m, n, k, 1.0f, &A, &B, 0.0f, c, ldc, ep, pool);
  }
  tb_gemm_operand A = {.data = a, .ld = lda}, B = {.data = b, .ld = ldb, .trans = true};
  if (packed) B = (tb_gemm_operand){.packed = packed};
  return tb_gemm_f32_run(prec.path, m, n, k, 1.0f, &A, &B, 0.0f, c, ldc, ep, pool);
}

/* ---- shapes ---- */

static tb_status expect(const tb_kernel_ctx *ctx, const tb_tensor *t, const char *name, bool f32, size_t ndim,
                        const int64_t *shape) {
  if (!t) return TB_OK;
  if (f32 && tb_tensor_dtype(t) != TB_DTYPE_F32)
    return tb_kernel_error(ctx, TB_ERR_MODEL, "input %s has dtype %s; the float32 kernel needs float32", name,
                           tb_dtype_name(tb_tensor_dtype(t)));
  if (tb_rc_shape_is(t, ndim, shape)) return TB_OK;
  char have[96], want[96];
  size_t used = 0;
  want[0] = '\0';
  for (size_t d = 0; d < ndim && used < sizeof want; d++)
    used += (size_t)snprintf(want + used, sizeof want - used, "%s%lld", d ? ", " : "[", (long long)shape[d]);
  return tb_kernel_error(ctx, TB_ERR_MODEL, "input %s has shape %s, expected %s]", name,
                         tb_rc_shape_str(t, have, sizeof have), want);
}

/* W's dims: directions, G*H and the input size; checks what W alone says. */
static tb_status weight_dims(const tb_kernel_ctx *ctx, const tb_rnn_params *a, const tb_tensor *w, seq_dims *m) {
  char have[96];
  if (tb_tensor_dtype(w) != TB_DTYPE_F32)
    return tb_kernel_error(ctx, TB_ERR_MODEL, "input W has dtype %s; the float32 kernel needs float32",
                           tb_dtype_name(tb_tensor_dtype(w)));
  if (tb_tensor_ndim(w) != 3)
    return tb_kernel_error(ctx, TB_ERR_MODEL, "input W has shape %s, expected rank 3",
                           tb_rc_shape_str(w, have, sizeof have));
  const int64_t *ws = tb_tensor_shape(w);
  m->dirs = a->num_directions;
  m->gates = (int64_t)a->cell;
  if (ws[1] <= 0 || ws[1] % m->gates != 0)
    return tb_kernel_error(ctx, TB_ERR_MODEL, "W's dimension 1 (%lld) is not a positive multiple of the %lld gates",
                           (long long)ws[1], (long long)m->gates);
  m->hidden = ws[1] / m->gates;
  m->input = ws[2];
  if (a->hidden_size >= 0 && a->hidden_size != m->hidden)
    return tb_kernel_error(ctx, TB_ERR_MODEL,
                           "hidden_size %lld does not match W's dimension 1 (%lld = %lld gates x %lld)",
                           (long long)a->hidden_size, (long long)ws[1], (long long)m->gates, (long long)m->hidden);
  const int64_t w_shape[3] = {m->dirs, m->gates * m->hidden, m->input};
  return expect(ctx, w, "W", true, 3, w_shape);
}

static tb_status check_dims(const tb_kernel_ctx *ctx, const tb_rnn_params *a, tb_tensor *const *in, seq_dims *m) {
  const tb_tensor *x = in[IN_X];
  if (!x || !in[IN_W] || !in[IN_R]) return tb_kernel_error(ctx, TB_ERR_MODEL, "inputs X, W and R are required");
  char have[96];
  if (tb_tensor_dtype(x) != TB_DTYPE_F32)
    return tb_kernel_error(ctx, TB_ERR_MODEL, "input X has dtype %s; the float32 kernel needs float32",
                           tb_dtype_name(tb_tensor_dtype(x)));
  if (tb_tensor_ndim(x) != 3)
    return tb_kernel_error(ctx, TB_ERR_MODEL, "input X has shape %s, expected rank 3",
                           tb_rc_shape_str(x, have, sizeof have));
  tb_status st = weight_dims(ctx, a, in[IN_W], m);
  if (st != TB_OK) return st;
  const int64_t *xs = tb_tensor_shape(x);
  m->layout = a->layout;
  m->seq = xs[a->layout == 0 ? 0 : 1];
  m->batch = xs[a->layout == 0 ? 1 : 0];
  if (xs[2] != m->input)
    return tb_kernel_error(ctx, TB_ERR_MODEL, "input X has %lld features per step but W expects %lld", (long long)xs[2],
                           (long long)m->input);
  int64_t gh = m->gates * m->hidden, h = m->hidden, d = m->dirs, b = m->batch;
  const int64_t r_shape[3] = {d, gh, h}, b_shape[2] = {d, 2 * gh}, lens_shape[1] = {b}, p_shape[2] = {d, 3 * h};
  const int64_t s0[3] = {d, b, h}, s1[3] = {b, d, h};
  const int64_t *state = a->layout == 0 ? s0 : s1;
  if ((st = expect(ctx, in[IN_R], "R", true, 3, r_shape)) != TB_OK) return st;
  if ((st = expect(ctx, in[IN_B], "B", true, 2, b_shape)) != TB_OK) return st;
  if ((st = expect(ctx, in[IN_LENS], "sequence_lens", false, 1, lens_shape)) != TB_OK) return st;
  if ((st = expect(ctx, in[IN_H0], "initial_h", true, 3, state)) != TB_OK) return st;
  if ((st = expect(ctx, in[IN_C0], "initial_c", true, 3, state)) != TB_OK) return st;
  if ((st = expect(ctx, in[IN_P], "P", true, 2, p_shape)) != TB_OK) return st;
  tb_dtype ld = in[IN_LENS] ? tb_tensor_dtype(in[IN_LENS]) : TB_DTYPE_I32;
  if (ld != TB_DTYPE_I32 && ld != TB_DTYPE_I64)
    return tb_kernel_error(ctx, TB_ERR_MODEL, "input sequence_lens has dtype %s, expected int32", tb_dtype_name(ld));
  return TB_OK;
}

/* ---- accepts, prepare, release ---- */

bool tb_seq_rnn_accepts(const tb_kernel_query *q, tb_rnn_cell cell) {
  const tb_value_type *const *in = q->in;
  size_t max_inputs = cell == TB_RNN_CELL_LSTM ? 8 : 6;
  if (!in || !in[0] || q->n_inputs > max_inputs || !q->params) return false;
  for (size_t i = 0; i < q->n_inputs; i++) {
    if (!in[i]) continue;
    if (!in[i]->has_dtype) return false;
    bool ok =
        i == IN_LENS ? in[i]->dtype == TB_DTYPE_I32 || in[i]->dtype == TB_DTYPE_I64 : in[i]->dtype == TB_DTYPE_F32;
    if (!ok) return false;
  }
  return true;
}

static void state_free(seq_state *s) {
  if (!s) return;
  for (int d = 0; d < 2; d++) {
    packed_free(s->bf16, s->w[d]);
    for (int i = 0; i < SEQ_MAX_R; i++) r_free(s->bf16, s->fused, s->r[d][i]);
  }
  free(s);
}

void tb_seq_rnn_release(void *state) { state_free(state); }

static void *pack_w(seq_prec prec, const float *w, const seq_dims *m, int64_t d) {
  int64_t gh = m->gates * m->hidden;
  return pack_bt(prec, w + d * gh * m->input, m->input, m->input, gh);
}

/* R^T of direction d: LSTM one operand (4H columns); GRU the z and r gates (2H) and the h gate (H). */
static bool pack_r(seq_prec prec, tb_rnn_cell cell, const float *r, const seq_dims *m, int64_t d, void **out) {
  int64_t h = m->hidden, gh = m->gates * h;
  const float *rd = r + d * gh * h;
  if (fused_cell(cell, prec)) return (out[0] = tb_seq_lstm_pack_r(rd, h, prec.bf16 >= 0)) != NULL;
  if (cell == TB_RNN_CELL_LSTM) return (out[0] = pack_bt(prec, rd, h, h, gh)) != NULL;
  out[0] = pack_bt(prec, rd, h, h, 2 * h);
  out[1] = pack_bt(prec, rd + 2 * h * h, h, h, h);
  return out[0] && out[1];
}

tb_status tb_seq_rnn_prepare(tb_kernel_ctx *ctx, tb_rnn_cell cell, seq_prec prec, void **state) {
  *state = NULL;
  const tb_rnn_params a = *(const tb_rnn_params *)ctx->params;
  tb_status st;
  /* R packed per run unless constant; W only with R (the projection is one GEMM anyway) */
  if (!tb_fast_input_constant(ctx, IN_W) || !tb_fast_input_constant(ctx, IN_R)) return TB_OK;
  const tb_tensor *w = ctx->inputs[IN_W], *r = ctx->inputs[IN_R];
  seq_dims m = {0};
  if ((st = weight_dims(ctx, &a, w, &m)) != TB_OK) return st;
  const int64_t r_shape[3] = {m.dirs, m.gates * m.hidden, m.hidden};
  if ((st = expect(ctx, r, "R", true, 3, r_shape)) != TB_OK) return st;
  if (m.input == 0) return TB_OK; /* degenerate: the reference runs it */
  seq_state *s = calloc(1, sizeof *s);
  bool ok = s != NULL;
  if (s) {
    s->bf16 = prec.bf16;
    s->fused = fused_cell(cell, prec);
  }
  for (int64_t d = 0; ok && d < m.dirs; d++) {
    ok = (s->w[d] = pack_w(prec, tb_tensor_host_data(w), &m, d)) != NULL;
    ok = ok && pack_r(prec, cell, tb_tensor_host_data(r), &m, d, s->r[d]);
  }
  if (!ok) {
    state_free(s);
    return tb_kernel_error(ctx, TB_ERR_OUT_OF_MEMORY, "no memory to pack W and R (%lld x %lld x %lld floats)",
                           (long long)m.dirs, (long long)(m.gates * m.hidden), (long long)(m.input + m.hidden));
  }
  s->dirs = m.dirs;
  s->gh = m.gates * m.hidden;
  s->input = m.input;
  s->hidden = m.hidden;
  *state = s;
  tb_kernel_constant_consumed(ctx, IN_W);
  tb_kernel_constant_consumed(ctx, IN_R);
  return TB_OK;
}

/* ---- the rows and the recurrent GEMM ---- */

typedef struct rows_job {
  seq_dir *s;
  int64_t k;
  seq_row_fn fn;
} rows_job;

static void rows_task(void *ctx, size_t begin, size_t end) {
  rows_job *j = ctx;
  for (size_t b = begin; b < end; b++)
    if (seq_row_active(j->s, (int64_t)b, j->k)) j->fn(j->s, j->k, (int64_t)b);
}

void tb_seq_for_rows(seq_dir *s, int64_t k, seq_row_fn fn) {
  rows_job j = {s, k, fn};
  if (s->pool && s->m->batch > 1 && s->m->batch * s->m->gates * s->m->hidden >= ROWS_PARALLEL_MIN)
    tb_pool_parallel_for(s->pool, (size_t)s->m->batch, rows_task, &j);
  else
    rows_task(&j, 0, (size_t)s->m->batch);
}

bool tb_seq_recurrent_gemm(const seq_dir *s, const float *a, const void *r, int64_t n, float *c, int64_t ldc) {
  seq_prec prec = {s->path, s->bf16};
  return gemm(prec, s->m->batch, n, s->m->hidden, a, s->m->hidden, r, NULL, 0, c, ldc, NULL, s->pool);
}

/* ---- the run ---- */

typedef struct seq_bufs {
  int64_t *lens;
  float *xw, *g, *tmp, *h, *h2, *c, *bias, *rb;
  uint16_t *hb, *hb2; /* the fused bf16 step's h in bf16 */
  int64_t hb_ld;
  void *r[SEQ_MAX_R]; /* packed this run when the state has none */
  int bf16;           /* what r was packed for */
  bool fused;         /* r is tb_seq_lstm_pack_r's layout */
} seq_bufs;

static void bufs_free(seq_bufs *bf) {
  free(bf->lens);
  free(bf->xw);
  free(bf->g);
  free(bf->tmp);
  free(bf->h);
  free(bf->h2);
  free(bf->hb);
  free(bf->hb2);
  free(bf->c);
  free(bf->bias);
  free(bf->rb);
  for (int i = 0; i < SEQ_MAX_R; i++) r_free(bf->bf16, bf->fused, bf->r[i]);
}

/* count zeroed floats on a cache-line boundary (the vector paths load and store whole lines) */
static float *zalloc(int64_t count) {
  size_t bytes = ((size_t)(count > 0 ? count : 1) * sizeof(float) + 63) / 64 * 64;
  float *p = aligned_alloc(64, bytes);
  if (p) memset(p, 0, bytes);
  return p;
}

static tb_status load_lens(const tb_kernel_ctx *ctx, const tb_tensor *t, const seq_dims *m, seq_bufs *bf) {
  if (!t) return TB_OK;
  bf->lens = malloc((size_t)m->batch * sizeof(int64_t));
  if (!bf->lens)
    return tb_kernel_error(ctx, TB_ERR_OUT_OF_MEMORY, "no memory for %lld sequence lengths", (long long)m->batch);
  const void *src = tb_tensor_host_data(t);
  for (int64_t b = 0; b < m->batch; b++) {
    int64_t v = tb_tensor_dtype(t) == TB_DTYPE_I64 ? ((const int64_t *)src)[b] : ((const int32_t *)src)[b];
    if (v < 0 || v > m->seq)
      return tb_kernel_error(ctx, TB_ERR_MODEL, "sequence_lens[%lld] is %lld, outside 0..%lld", (long long)b,
                             (long long)v, (long long)m->seq);
    bf->lens[b] = v;
  }
  return TB_OK;
}

static int64_t state_at(const seq_dims *m, int64_t d, int64_t b) {
  return (m->layout == 0 ? d * m->batch + b : b * m->dirs + d) * m->hidden;
}

/* Copy between a direction's [batch, H] buffer and a state tensor laid out [D, B, H] or [B, D, H]. */
static void state_copy(const seq_dims *m, int64_t d, float *buf, float *tensor, bool to_tensor) {
  size_t bytes = (size_t)m->hidden * sizeof(float);
  for (int64_t b = 0; b < m->batch; b++) {
    float *t = tensor + state_at(m, d, b), *r = buf + b * m->hidden;
    memcpy(to_tensor ? t : r, to_tensor ? r : t, bytes);
  }
}

typedef struct seq_io {
  tb_tensor *in[IN_COUNT];
  float *y, *yh, *yc; /* output data, NULL where the node omits the output */
} seq_io;

static tb_status run_direction(tb_kernel_ctx *ctx, const tb_rnn_params *a, seq_prec prec, const seq_dims *m, int64_t d,
                               const seq_state *state, seq_io *io, seq_bufs *bf, seq_step_fn step) {
  int64_t h = m->hidden, gh = m->gates * h;
  void *const *r = state ? state->r[d] : bf->r;
  if (!state && !pack_r(prec, a->cell, tb_tensor_host_data(io->in[IN_R]), m, d, bf->r))
    return tb_kernel_error(ctx, TB_ERR_OUT_OF_MEMORY, "no memory to pack R (%lld x %lld floats)", (long long)gh,
                           (long long)h);
  const float *bsrc = io->in[IN_B] ? (const float *)tb_tensor_host_data(io->in[IN_B]) + d * 2 * gh : NULL;
  for (int64_t j = 0; j < gh; j++) {
    bool add_rb = a->cell == TB_RNN_CELL_LSTM || j < 2 * h; /* GRU: Rbh stays inside the h gate */
    bf->bias[j] = bsrc ? bsrc[j] + (add_rb ? bsrc[gh + j] : 0.0f) : 0.0f;
  }
  for (int64_t j = 0; j < h; j++) bf->rb[j] = bsrc && a->cell == TB_RNN_CELL_GRU ? bsrc[gh + 2 * h + j] : 0.0f;
  const float *w = (const float *)tb_tensor_host_data(io->in[IN_W]) + d * gh * m->input;
  /* the bias in the GEMM's epilogue, except for the fused step, which adds it in its cell (cheaper than
   * the epilogue's pass over the whole projection: 4% of the fp32 run, 10% of the bf16 one) */
  bool bias_in_cell = bf->fused;
  tb_gemm_epilogue ep = {.bias = bf->bias, .bias_axis = 1};
  if (!gemm(prec, m->seq * m->batch, gh, m->input, tb_tensor_host_data(io->in[IN_X]), m->input,
            state ? state->w[d] : NULL, w, m->input, bf->xw, gh, bias_in_cell ? NULL : &ep, ctx->pool))
    return tb_kernel_error(ctx, TB_ERR_OUT_OF_MEMORY, "no memory for the input projection GEMM (%lld x %lld x %lld)",
                           (long long)(m->seq * m->batch), (long long)gh, (long long)m->input);
  memset(bf->h, 0, (size_t)(m->batch * h) * sizeof(float));
  memset(bf->c, 0, (size_t)(m->batch * h) * sizeof(float));
  if (io->in[IN_H0]) state_copy(m, d, bf->h, tb_tensor_host_data(io->in[IN_H0]), false);
  if (io->in[IN_C0]) state_copy(m, d, bf->c, tb_tensor_host_data(io->in[IN_C0]), false);
  seq_dir s = {
      .a = a,
      .path = prec.path,
      .bf16 = prec.bf16,
      .m = m,
      .d = d,
      .reverse = a->reverse || d == 1,
      .acts = &a->acts[(size_t)d * a->acts_per_direction],
      .peep = io->in[IN_P] ? (const float *)tb_tensor_host_data(io->in[IN_P]) + d * 3 * h : NULL,
      .rb = bf->rb,
      .xw = bf->xw,
      .cell_bias = bias_in_cell ? bf->bias : NULL,
      .g = bf->g,
      .tmp = bf->tmp,
      .h = bf->h,
      .h_next = bf->h2,
      .hb = bf->hb,
      .hb_next = bf->hb2,
      .hb_ld = bf->hb_ld,
      .fused = bf->fused,
      .c = bf->c,
      .lens = bf->lens,
      .y = io->y,
      .pool = ctx->pool,
  };
  for (int i = 0; i < SEQ_MAX_R; i++) s.r[i] = r[i];
  int64_t steps = 0;
  for (int64_t b = 0; b < m->batch; b++) {
    int64_t len = bf->lens ? bf->lens[b] : m->seq;
    steps = len > steps ? len : steps;
  }
  for (int64_t k = 0; k < steps; k++)
    if (!step(&s, k))
      return tb_kernel_error(ctx, TB_ERR_OUT_OF_MEMORY, "no memory for the recurrent GEMM (batch %lld, hidden %lld)",
                             (long long)m->batch, (long long)h);
  if (io->yh) state_copy(m, d, s.h, io->yh, true); /* the fused step swaps h and h_next */
  if (io->yc) state_copy(m, d, bf->c, io->yc, true);
  for (int i = 0; i < SEQ_MAX_R; i++) {
    r_free(bf->bf16, bf->fused, bf->r[i]);
    bf->r[i] = NULL;
  }
  return TB_OK;
}

static tb_status make_outputs(tb_kernel_ctx *ctx, tb_rnn_cell cell, const seq_dims *m, seq_io *io) {
  int64_t y0[4] = {m->seq, m->dirs, m->batch, m->hidden}, y1[4] = {m->batch, m->seq, m->dirs, m->hidden};
  int64_t s0[3] = {m->dirs, m->batch, m->hidden}, s1[3] = {m->batch, m->dirs, m->hidden};
  float **dst[3] = {&io->y, &io->yh, &io->yc};
  size_t n_out = cell == TB_RNN_CELL_LSTM ? 3 : 2;
  for (size_t i = 0; i < n_out; i++) {
    if (!tb_rc_has_output(ctx, i)) continue;
    tb_tensor *t = NULL;
    tb_status st = i == 0 ? tb_kernel_output(ctx, 0, TB_DTYPE_F32, 4, m->layout == 0 ? y0 : y1, &t)
                          : tb_kernel_output(ctx, i, TB_DTYPE_F32, 3, m->layout == 0 ? s0 : s1, &t);
    if (st != TB_OK) return st;
    *dst[i] = tb_tensor_host_data(t);
    memset(*dst[i], 0, tb_tensor_nbytes(t));
  }
  return TB_OK;
}

tb_status tb_seq_rnn_run(tb_kernel_ctx *ctx, tb_rnn_cell cell, seq_prec prec, seq_step_fn step) {
  const tb_rnn_params a = *(const tb_rnn_params *)ctx->params;
  tb_status st;
  size_t max_inputs = cell == TB_RNN_CELL_LSTM ? 8 : 6;
  if (ctx->n_inputs > max_inputs)
    return tb_kernel_error(ctx, TB_ERR_MODEL, "has %zu inputs, at most %zu", ctx->n_inputs, max_inputs);
  seq_io io = {0};
  for (size_t i = 0; i < IN_COUNT; i++) io.in[i] = tb_rc_input(ctx, i);
  seq_dims m = {0};
  if ((st = check_dims(ctx, &a, io.in, &m)) != TB_OK) return st;
  if (m.seq == 0 || m.batch == 0 || m.input == 0)
    return cell == TB_RNN_CELL_LSTM ? tb_kernel_lstm.run(ctx) : tb_kernel_gru.run(ctx);
  const seq_state *state = ctx->state;
  if (state && (state->bf16 != prec.bf16 || state->fused != fused_cell(cell, prec) || state->dirs != m.dirs ||
                state->gh != m.gates * m.hidden || state->input != m.input))
    return tb_kernel_error(ctx, TB_ERR_INTERNAL,
                           "W and R were packed at prepare as [%lld, %lld, %lld] but the run has [%lld, %lld, %lld]",
                           (long long)state->dirs, (long long)state->gh, (long long)state->input, (long long)m.dirs,
                           (long long)(m.gates * m.hidden), (long long)m.input);
  int64_t h = m.hidden, gh = m.gates * h;
  seq_bufs bf = {.bf16 = prec.bf16, .fused = fused_cell(cell, prec)};
  if ((st = load_lens(ctx, io.in[IN_LENS], &m, &bf)) == TB_OK) {
    size_t xw_bytes = (size_t)(m.seq * m.batch * gh) * sizeof(float);
    bf.xw = aligned_alloc(64, (xw_bytes + 63) / 64 * 64); /* whole cache lines for the vector loads */
    bf.g = zalloc(m.batch * gh);
    bf.tmp = zalloc(m.batch * h);
    bf.h = zalloc(m.batch * h);
    bf.h2 = zalloc(m.batch * h);
    bf.c = zalloc(m.batch * h);
    bf.bias = zalloc(gh);
    bf.rb = zalloc(h);
    if (bf.fused && prec.bf16 >= 0) {
      bf.hb_ld = (h + SEQ_LSTM_UNITS - 1) / SEQ_LSTM_UNITS * SEQ_LSTM_UNITS;
      bf.hb = (uint16_t *)zalloc((m.batch * bf.hb_ld + 1) / 2);
      bf.hb2 = (uint16_t *)zalloc((m.batch * bf.hb_ld + 1) / 2);
    }
    bool hb_ok = !(bf.fused && prec.bf16 >= 0) || (bf.hb && bf.hb2);
    if (!hb_ok || !bf.xw || !bf.g || !bf.tmp || !bf.h || !bf.h2 || !bf.c || !bf.bias || !bf.rb)
      st = tb_kernel_error(ctx, TB_ERR_OUT_OF_MEMORY, "no memory for the gates of %lld steps x %lld rows x %lld",
                           (long long)m.seq, (long long)m.batch, (long long)gh);
  }
  if (st == TB_OK) st = make_outputs(ctx, cell, &m, &io);
  for (int64_t d = 0; st == TB_OK && d < m.dirs; d++) st = run_direction(ctx, &a, prec, &m, d, state, &io, &bf, step);
  bufs_free(&bf);
  return st;
}
