/* The recurrent operators' driver (see rnn_cell.h): shape checks on the concrete inputs, the walk over
 * directions, batch rows and time steps, and the outputs. A row whose sequence length L is shorter
 * than the sequence runs L steps (from L-1 down to 0 in the reverse direction); its Y is zero past L
 * and its Y_h / Y_c are the state after its last step (the initial state when L is 0). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "backend/control/rc_util.h"
#include "backend/cpu/kernels/rnn_control/rnn_cell.h"

enum { IN_X, IN_W, IN_R, IN_B, IN_SEQ_LENS, IN_INITIAL_H, IN_INITIAL_C, IN_P, IN_COUNT };

bool tb_rnn_accepts(const tb_kernel_query *q) {
  const tb_value_type *const *in = q->in;
  if (!in || !in[0] || !in[0]->has_dtype) return true;
  tb_dtype d = in[0]->dtype;
  return d == TB_DTYPE_F32 || d == TB_DTYPE_F64 || d == TB_DTYPE_F16 || d == TB_DTYPE_BF16;
}

typedef struct rnn_dims {
  int64_t seq, batch, input, hidden, dirs, gates;
  int layout;
} rnn_dims;

/* Check a present input's dtype (TB_DTYPE_COUNT: any) and exact shape. */
static tb_status expect(const tb_kernel_ctx *ctx, const tb_tensor *t, const char *name, tb_dtype dtype, size_t ndim,
                        const int64_t *shape) {
  if (!t) return TB_OK;
  char have[96], want[96];
  if (dtype != TB_DTYPE_COUNT && tb_tensor_dtype(t) != dtype)
    return tb_kernel_error(ctx, TB_ERR_MODEL, "input %s has dtype %s but X has %s", name, tb_dtype_name(tb_tensor_dtype(t)),
                           tb_dtype_name(dtype));
  if (tb_rc_shape_is(t, ndim, shape)) return TB_OK;
  size_t used = 0;
  want[0] = '\0';
  for (size_t d = 0; d < ndim && used < sizeof want; d++)
    used += (size_t)snprintf(want + used, sizeof want - used, "%s%lld", d ? ", " : "[", (long long)shape[d]);
  return tb_kernel_error(ctx, TB_ERR_MODEL, "input %s has shape %s, expected %s]", name, tb_rc_shape_str(t, have, sizeof have), want);
}

static tb_status check_dims(const tb_kernel_ctx *ctx, const tb_rnn_params *a, tb_tensor *const *in, rnn_dims *dm) {
  const tb_tensor *x = in[IN_X], *w = in[IN_W], *r = in[IN_R];
  if (!x || !w || !r) return tb_kernel_error(ctx, TB_ERR_MODEL, "inputs X, W and R are required");
  tb_dtype dt = tb_tensor_dtype(x);
  if (dt != TB_DTYPE_F32 && dt != TB_DTYPE_F64 && dt != TB_DTYPE_F16 && dt != TB_DTYPE_BF16)
    return tb_kernel_error(ctx, TB_ERR_UNSUPPORTED, "X has dtype %s; the kernel takes float32, float64, float16, bfloat16",
                           tb_dtype_name(tb_tensor_dtype(x)));
  char have[96];
  if (tb_tensor_ndim(x) != 3)
    return tb_kernel_error(ctx, TB_ERR_MODEL, "input X has shape %s, expected rank 3", tb_rc_shape_str(x, have, sizeof have));
  if (tb_tensor_ndim(w) != 3)
    return tb_kernel_error(ctx, TB_ERR_MODEL, "input W has shape %s, expected rank 3", tb_rc_shape_str(w, have, sizeof have));
  const int64_t *xs = tb_tensor_shape(x), *ws = tb_tensor_shape(w);
  dm->layout = a->layout;
  dm->seq = xs[a->layout == 0 ? 0 : 1];
  dm->batch = xs[a->layout == 0 ? 1 : 0];
  dm->input = xs[2];
  dm->dirs = a->num_directions;
  dm->gates = (int64_t)a->cell;
  if (ws[1] % dm->gates != 0 || ws[1] == 0)
    return tb_kernel_error(ctx, TB_ERR_MODEL, "W's dimension 1 (%lld) is not a positive multiple of the %lld gates",
                           (long long)ws[1], (long long)dm->gates);
  dm->hidden = ws[1] / dm->gates;
  if (a->hidden_size >= 0 && a->hidden_size != dm->hidden)
    return tb_kernel_error(ctx, TB_ERR_MODEL, "hidden_size %lld does not match W's dimension 1 (%lld = %lld gates x %lld)",
                           (long long)a->hidden_size, (long long)ws[1], (long long)dm->gates, (long long)dm->hidden);
  int64_t gh = dm->gates * dm->hidden, h = dm->hidden, d = dm->dirs, b = dm->batch;
  const int64_t w_shape[3] = {d, gh, dm->input}, r_shape[3] = {d, gh, h}, b_shape[2] = {d, 2 * gh};
  const int64_t lens_shape[1] = {b}, p_shape[2] = {d, 3 * h}, s0[3] = {d, b, h}, s1[3] = {b, d, h};
  const int64_t *state = a->layout == 0 ? s0 : s1;
  tb_status st;
  if ((st = expect(ctx, w, "W", dt, 3, w_shape)) != TB_OK) return st;
  if ((st = expect(ctx, r, "R", dt, 3, r_shape)) != TB_OK) return st;
  if ((st = expect(ctx, in[IN_B], "B", dt, 2, b_shape)) != TB_OK) return st;
  if ((st = expect(ctx, in[IN_SEQ_LENS], "sequence_lens", TB_DTYPE_COUNT, 1, lens_shape)) != TB_OK) return st;
  if ((st = expect(ctx, in[IN_INITIAL_H], "initial_h", dt, 3, state)) != TB_OK) return st;
  if ((st = expect(ctx, in[IN_INITIAL_C], "initial_c", dt, 3, state)) != TB_OK) return st;
  return expect(ctx, in[IN_P], "P", dt, 2, p_shape);
}

/* Flat offsets of X[t, b], Y[t, d, b] and state[d, b] in either layout. */
static size_t x_at(const rnn_dims *m, int64_t t, int64_t b) {
  return (size_t)((m->layout == 0 ? t * m->batch + b : b * m->seq + t) * m->input);
}
static size_t y_at(const rnn_dims *m, int64_t t, int64_t d, int64_t b) {
  return (size_t)((m->layout == 0 ? (t * m->dirs + d) * m->batch + b : (b * m->seq + t) * m->dirs + d) * m->hidden);
}
static size_t state_at(const rnn_dims *m, int64_t d, int64_t b) {
  return (size_t)((m->layout == 0 ? d * m->batch + b : b * m->dirs + d) * m->hidden);
}

typedef struct rnn_data {
  double *v[IN_COUNT];
  int64_t *lens;
  double *zeros; /* 2*G*H zeros for an omitted B */
  double *y, *yh, *yc, *scratch;
} rnn_data;

static void data_free(rnn_data *dt) {
  for (size_t i = 0; i < IN_COUNT; i++) free(dt->v[i]);
  free(dt->lens);
  free(dt->zeros);
  free(dt->y);
  free(dt->yh);
  free(dt->yc);
  free(dt->scratch);
}

static tb_status load_all(const tb_kernel_ctx *ctx, tb_tensor *const *in, const rnn_dims *m, rnn_data *dt) {
  tb_status st = TB_OK;
  for (size_t i = 0; i < IN_COUNT && st == TB_OK; i++) {
    if (!in[i]) continue;
    st = i == IN_SEQ_LENS ? tb_rc_load_i64(ctx, in[i], &dt->lens) : tb_rc_load(ctx, in[i], &dt->v[i]);
  }
  size_t gh = (size_t)(m->gates * m->hidden), states = (size_t)(m->dirs * m->batch * m->hidden);
  if (st == TB_OK) st = tb_rc_alloc(ctx, 2 * gh, &dt->zeros);
  if (st == TB_OK) st = tb_rc_alloc(ctx, (size_t)m->seq * states, &dt->y);
  if (st == TB_OK) st = tb_rc_alloc(ctx, states, &dt->yh);
  if (st == TB_OK) st = tb_rc_alloc(ctx, states, &dt->yc);
  if (st == TB_OK) st = tb_rc_alloc(ctx, 2 * gh, &dt->scratch);
  for (int64_t b = 0; st == TB_OK && dt->lens && b < m->batch; b++) {
    if (dt->lens[b] < 0 || dt->lens[b] > m->seq)
      st = tb_kernel_error(ctx, TB_ERR_MODEL, "sequence_lens[%lld] is %lld, outside 0..%lld", (long long)b,
                           (long long)dt->lens[b], (long long)m->seq);
  }
  return st;
}

static void run_direction(const tb_rnn_params *a, const rnn_dims *m, rnn_data *dt, int64_t d, rnn_step_fn step) {
  size_t h = (size_t)m->hidden, gh = (size_t)m->gates * h;
  const double *bias = dt->v[IN_B] ? dt->v[IN_B] + (size_t)d * 2 * gh : dt->zeros;
  rnn_dir_params p = {
      .w = dt->v[IN_W] + (size_t)d * gh * (size_t)m->input,
      .r = dt->v[IN_R] + (size_t)d * gh * h,
      .wb = bias,
      .rb = bias + gh,
      .p = dt->v[IN_P] ? dt->v[IN_P] + (size_t)d * 3 * h : NULL,
      .acts = &a->acts[(size_t)d * a->acts_per_direction],
  };
  bool reverse = a->reverse || d == 1;
  for (int64_t b = 0; b < m->batch; b++) {
    double *hs = dt->yh + state_at(m, d, b), *cs = dt->yc + state_at(m, d, b);
    if (dt->v[IN_INITIAL_H]) memcpy(hs, dt->v[IN_INITIAL_H] + state_at(m, d, b), h * sizeof(double));
    if (dt->v[IN_INITIAL_C]) memcpy(cs, dt->v[IN_INITIAL_C] + state_at(m, d, b), h * sizeof(double));
    int64_t len = dt->lens ? dt->lens[b] : m->seq;
    for (int64_t k = 0; k < len; k++) {
      int64_t t = reverse ? len - 1 - k : k;
      step(a, &p, h, (size_t)m->input, dt->v[IN_X] + x_at(m, t, b), hs, cs, dt->scratch);
      memcpy(dt->y + y_at(m, t, d, b), hs, h * sizeof(double));
    }
  }
}

tb_status tb_rnn_run(tb_kernel_ctx *ctx, tb_rnn_cell cell, rnn_step_fn step) {
  const tb_rnn_params a = *(const tb_rnn_params *)ctx->params;
  tb_status st;
  size_t max_inputs = cell == TB_RNN_CELL_LSTM ? 8 : 6;
  if (ctx->n_inputs > max_inputs)
    return tb_kernel_error(ctx, TB_ERR_MODEL, "has %zu inputs, at most %zu", ctx->n_inputs, max_inputs);
  tb_tensor *in[IN_COUNT] = {0};
  for (size_t i = 0; i < IN_COUNT; i++) in[i] = tb_rc_input(ctx, i);
  rnn_dims m = {0};
  if ((st = check_dims(ctx, &a, in, &m)) != TB_OK) return st;
  rnn_data dt = {0};
  if ((st = load_all(ctx, in, &m, &dt)) == TB_OK) {
    for (int64_t d = 0; d < m.dirs; d++) run_direction(&a, &m, &dt, d, step);
    tb_dtype dtype = tb_tensor_dtype(in[IN_X]);
    int64_t y0[4] = {m.seq, m.dirs, m.batch, m.hidden}, y1[4] = {m.batch, m.seq, m.dirs, m.hidden};
    int64_t s0[3] = {m.dirs, m.batch, m.hidden}, s1[3] = {m.batch, m.dirs, m.hidden};
    st = tb_rc_store(ctx, 0, dtype, 4, m.layout == 0 ? y0 : y1, dt.y);
    if (st == TB_OK) st = tb_rc_store(ctx, 1, dtype, 3, m.layout == 0 ? s0 : s1, dt.yh);
    if (st == TB_OK && cell == TB_RNN_CELL_LSTM) st = tb_rc_store(ctx, 2, dtype, 3, m.layout == 0 ? s0 : s1, dt.yc);
  }
  data_free(&dt);
  return st;
}
