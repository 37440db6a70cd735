/* Type and shape inference for the recurrent operators. With gates G (RNN 1, GRU 3, LSTM 4), directions
 * D and hidden size H:  W [D, G*H, input], R [D, G*H, H], B [D, 2*G*H], sequence_lens [batch] (int32),
 * initial_h and initial_c [D, batch, H] ([batch, D, H] with layout 1), P [D, 3*H]. Outputs: Y
 * [seq, D, batch, H] ([batch, seq, D, H] with layout 1), Y_h and Y_c [D, batch, H] ([batch, D, H]). */
#include "ops/op_params.h"
#include "ops/rnn/rnn_infer.h"

enum { IN_X, IN_W, IN_R, IN_B, IN_SEQ_LENS, IN_INITIAL_H, IN_INITIAL_C, IN_P };

static const tb_dtype_set FLOATS =
    TB_DTYPE_BIT(TB_DTYPE_F32) | TB_DTYPE_BIT(TB_DTYPE_F64) | TB_DTYPE_BIT(TB_DTYPE_F16) | TB_DTYPE_BIT(TB_DTYPE_BF16);

static const tb_value_type *input(const tb_infer_ctx *ctx, size_t i) {
  return i < ctx->n_inputs ? ctx->in[i] : NULL;
}

/* Check a present input's rank and known dims against `want` (-1: any); the input's name for messages. */
static tb_status check_shape(const tb_infer_ctx *ctx, size_t i, const char *name, size_t rank, const int64_t *want) {
  const tb_value_type *t = input(ctx, i);
  if (!t) return TB_OK;
  if (t->kind != TB_VALUE_TENSOR) return tb_infer_error(ctx, TB_ERR_MODEL, "input %s must be a tensor", name);
  if (i != IN_SEQ_LENS && t->has_dtype && t->dtype != ctx->in[IN_X]->dtype)
    return tb_infer_error(ctx, TB_ERR_MODEL, "input %s has dtype %s but X has %s", name, tb_dtype_name(t->dtype),
                          tb_dtype_name(ctx->in[IN_X]->dtype));
  if (!t->has_shape) return TB_OK;
  if (t->ndim != rank) return tb_infer_error(ctx, TB_ERR_MODEL, "input %s has rank %zu, expected %zu", name, t->ndim, rank);
  for (size_t d = 0; d < rank; d++) {
    int64_t got = t->dims[d].value;
    if (want[d] >= 0 && got >= 0 && got != want[d])
      return tb_infer_error(ctx, TB_ERR_MODEL, "input %s has dimension %zu of size %lld, expected %lld", name, d,
                            (long long)got, (long long)want[d]);
  }
  return TB_OK;
}

static int64_t dim_of(const tb_value_type *t, size_t d) {
  return t && t->has_shape && d < t->ndim ? t->dims[d].value : -1;
}

/* The hidden size: the attribute, else from W's or R's shape; -1 when nothing says. A disagreement
 * between them is an error naming both values. */
static tb_status hidden_size(const tb_infer_ctx *ctx, const tb_rnn_params *a, int64_t *out) {
  int64_t gates = (int64_t)a->cell;
  int64_t h = a->hidden_size;
  const char *from = "the hidden_size attribute";
  int64_t w_rows = dim_of(input(ctx, IN_W), 1), r_cols = dim_of(input(ctx, IN_R), 2);
  if (w_rows >= 0 && w_rows % gates != 0)
    return tb_infer_error(ctx, TB_ERR_MODEL, "W's dimension 1 (%lld) is not a multiple of the %lld gates",
                          (long long)w_rows, (long long)gates);
  if (w_rows >= 0) {
    if (h >= 0 && w_rows / gates != h)
      return tb_infer_error(ctx, TB_ERR_MODEL, "hidden_size %lld does not match W's dimension 1 (%lld = %lld gates x %lld)",
                            (long long)h, (long long)w_rows, (long long)gates, (long long)(w_rows / gates));
    if (h < 0) from = "W's shape";
    h = w_rows / gates;
  }
  if (r_cols >= 0 && h >= 0 && r_cols != h)
    return tb_infer_error(ctx, TB_ERR_MODEL, "R's dimension 2 (%lld) does not match the hidden size %lld from %s",
                          (long long)r_cols, (long long)h, from);
  if (h < 0) h = r_cols;
  *out = h;
  return TB_OK;
}

tb_status tb_rnn_infer(tb_infer_ctx *ctx, tb_rnn_cell cell) {
  tb_rnn_params a;
  tb_status st = tb_infer_params(ctx, &a, sizeof a);
  if (st != TB_OK) return st;
  if (cell != TB_RNN_CELL_LSTM && input(ctx, IN_INITIAL_C))
    return tb_infer_error(ctx, TB_ERR_MODEL, "takes at most 6 inputs");
  for (size_t i = IN_X; i <= IN_R; i++) {
    st = tb_infer_require(ctx, i, FLOATS);
    if (st != TB_OK) return st;
  }
  const tb_value_type *x = ctx->in[IN_X];
  if (x->kind != TB_VALUE_TENSOR) return tb_infer_error(ctx, TB_ERR_MODEL, "input X must be a tensor");
  if (x->has_shape && x->ndim != 3)
    return tb_infer_error(ctx, TB_ERR_MODEL, "input X has rank %zu, expected 3", x->ndim);
  const tb_value_type *seq_lens = input(ctx, IN_SEQ_LENS);
  if (seq_lens && seq_lens->has_dtype && seq_lens->dtype != TB_DTYPE_I32 && seq_lens->dtype != TB_DTYPE_I64)
    return tb_infer_error(ctx, TB_ERR_MODEL, "sequence_lens has dtype %s, expected int32", tb_dtype_name(seq_lens->dtype));

  for (size_t i = IN_W; i <= IN_R; i++)
    if (ctx->in[i]->has_shape && ctx->in[i]->ndim != 3)
      return tb_infer_error(ctx, TB_ERR_MODEL, "input %s has rank %zu, expected 3", i == IN_W ? "W" : "R", ctx->in[i]->ndim);
  int64_t h = -1;
  st = hidden_size(ctx, &a, &h);
  if (st != TB_OK) return st;
  int64_t dirs = a.num_directions, gates = (int64_t)cell;
  size_t seq_axis = a.layout == 0 ? 0 : 1, batch_axis = a.layout == 0 ? 1 : 0;
  int64_t seq = dim_of(x, seq_axis), batch = dim_of(x, batch_axis), in_size = dim_of(x, 2);
  int64_t gh = h >= 0 ? gates * h : -1;

  const int64_t w_shape[3] = {dirs, gh, in_size}, r_shape[3] = {dirs, gh, h};
  const int64_t b_shape[2] = {dirs, gh >= 0 ? 2 * gh : -1}, p_shape[2] = {dirs, h >= 0 ? 3 * h : -1};
  const int64_t state0[3] = {dirs, batch, h}, state1[3] = {batch, dirs, h}, lens_shape[1] = {batch};
  const int64_t *state = a.layout == 0 ? state0 : state1;
  if ((st = check_shape(ctx, IN_W, "W", 3, w_shape)) != TB_OK) return st;
  if ((st = check_shape(ctx, IN_R, "R", 3, r_shape)) != TB_OK) return st;
  if ((st = check_shape(ctx, IN_B, "B", 2, b_shape)) != TB_OK) return st;
  if ((st = check_shape(ctx, IN_SEQ_LENS, "sequence_lens", 1, lens_shape)) != TB_OK) return st;
  if ((st = check_shape(ctx, IN_INITIAL_H, "initial_h", 3, state)) != TB_OK) return st;
  if (cell == TB_RNN_CELL_LSTM) {
    if ((st = check_shape(ctx, IN_INITIAL_C, "initial_c", 3, state)) != TB_OK) return st;
    if ((st = check_shape(ctx, IN_P, "P", 2, p_shape)) != TB_OK) return st;
  }

  tb_dim seq_dim = {seq, x->has_shape ? x->dims[seq_axis].symbol : -1};
  tb_dim batch_dim = {batch, x->has_shape ? x->dims[batch_axis].symbol : -1};
  tb_dim dir_dim = {dirs, -1}, hid_dim = {h, -1};
  for (size_t o = 0; o < ctx->n_outputs; o++) {
    tb_value_type *out = &ctx->out[o];
    out->kind = TB_VALUE_TENSOR;
    out->has_dtype = true;
    out->dtype = x->dtype;
    out->has_shape = true;
    if (o == 0) {
      out->ndim = 4;
      tb_dim y0[4] = {seq_dim, dir_dim, batch_dim, hid_dim}, y1[4] = {batch_dim, seq_dim, dir_dim, hid_dim};
      for (size_t d = 0; d < 4; d++) out->dims[d] = a.layout == 0 ? y0[d] : y1[d];
    } else {
      out->ndim = 3;
      tb_dim s0[3] = {dir_dim, batch_dim, hid_dim}, s1[3] = {batch_dim, dir_dim, hid_dim};
      for (size_t d = 0; d < 3; d++) out->dims[d] = a.layout == 0 ? s0[d] : s1[d];
    }
  }
  return TB_OK;
}
