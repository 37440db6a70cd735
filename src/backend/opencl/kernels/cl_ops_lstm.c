/* OpenCL kernel of the ONNX LSTM on float32: layout 0, directions forward, reverse and bidirectional,
 * optional B, initial_h and initial_c, default activations (sigmoid, tanh, tanh). Declined (the CPU runs
 * them): sequence_lens, peepholes P, clip, input_forget, other activations or any alpha/beta, layout 1.
 * Everything is enqueued on the device's in-order queue, with no host round trip: per direction one GEMM
 * for the input projection of every time step (G[d] = X W[d]^T as [seq * batch, 4H]); then per time step
 * and direction one GEMM G[d][t] += h R[d]^T and the gate kernel of lstm.cl, which updates c and h in place
 * and writes Y[t, d]. h and c live in Y_h and Y_c when those outputs are wanted, else in scratch tensors.
 * W, R and B are the executor's device copies of the model's constants, kept for the prepared model's life. */
#include <string.h>
#include "backend/opencl/kernels/cl_ops.h"
#include "ops/rnn/rnn_params.h"

enum { SLOT_GEMM = 0, SLOT_GATES = 1, SLOT_ZERO = 2, SLOT_COPY = 3 };

static bool f32_input(const tb_kernel_query *q, size_t i, bool required) {
  if (i >= q->n_inputs || !q->in[i]) return !required;
  return q->in[i]->has_dtype && q->in[i]->dtype == TB_DTYPE_F32;
}

static bool absent(const tb_kernel_query *q, size_t i) { return i >= q->n_inputs || !q->in[i]; }

/* Exactly sigmoid, tanh, tanh for each direction (the defaults; they take no alpha or beta). */
static bool default_activations(const tb_rnn_params *p) {
  static const tb_rnn_act_kind defaults[3] = {TB_RNN_ACT_SIGMOID, TB_RNN_ACT_TANH, TB_RNN_ACT_TANH};
  for (size_t k = 0; k < 3 * (size_t)p->num_directions; k++)
    if (p->acts[k].kind != defaults[k % 3]) return false;
  return true;
}

static bool lstm_accepts(const tb_kernel_query *q) {
  const tb_rnn_params *p = q->params;
  if (!p || !f32_input(q, 0, true) || !f32_input(q, 1, true) || !f32_input(q, 2, true) || !f32_input(q, 3, false) ||
      !f32_input(q, 5, false) || !f32_input(q, 6, false) || !absent(q, 4) || !absent(q, 7))
    return false;
  return !p->has_clip && !p->input_forget && p->layout == 0 && !p->n_alpha && !p->n_beta && default_activations(p);
}

static const tb_tensor *input_at(const tb_kernel_ctx *ctx, size_t i) { return i < ctx->n_inputs ? ctx->inputs[i] : NULL; }
static tb_tensor *output_at(const tb_kernel_ctx *ctx, size_t i) { return i < ctx->n_outputs ? ctx->outputs[i] : NULL; }

static bool has_shape(const tb_tensor *t, size_t ndim, int64_t d0, int64_t d1, int64_t d2) {
  const int64_t want[3] = {d0, d1, d2};
  if (t->ndim != ndim) return false;
  for (size_t d = 0; d < ndim; d++)
    if (t->shape[d] != want[d]) return false;
  return true;
}

/* state = initial (a flat copy) or zeros. */
static tb_status init_state(tb_kernel_ctx *ctx, const tb_tensor *initial, tb_tensor *state) {
  int64_t n = tb_tensor_numel(state), one = 1;
  if (initial) return tb_cl_copy_strided(ctx, SLOT_COPY, initial, 0, &one, state, 0, &one, 1, &n);
  cl_launch l;
  tb_cl_begin(&l, ctx, SLOT_ZERO, "tb_lstm_zero");
  tb_cl_arg_tensor(&l, state);
  tb_cl_arg_int(&l, n);
  return tb_cl_go(&l, (size_t)n);
}

typedef struct lstm_dims {
  int64_t seq, batch, input, hidden;
  int dirs;
  bool reverse;
} lstm_dims;

static tb_status check_inputs(tb_kernel_ctx *ctx, lstm_dims *dm) {
  const tb_rnn_params *p = ctx->params;
  int64_t hidden_attr = p->hidden_size; /* -1 when absent */
  const tb_tensor *x = input_at(ctx, 0), *w = input_at(ctx, 1), *r = input_at(ctx, 2), *b = input_at(ctx, 3);
  const tb_tensor *h0 = input_at(ctx, 5), *c0 = input_at(ctx, 6);
  if (!x || !w || !r || x->ndim != 3 || w->ndim != 3 || r->ndim != 3)
    return tb_kernel_error(ctx, TB_ERR_INVALID_ARGUMENT, "LSTM takes X, W and R of rank 3");
  dm->dirs = p->num_directions;
  dm->reverse = p->reverse;
  dm->seq = x->shape[0], dm->batch = x->shape[1], dm->input = x->shape[2], dm->hidden = r->shape[2];
  int64_t H = dm->hidden, D = dm->dirs;
  if (hidden_attr > 0 && hidden_attr != H)
    return tb_kernel_error(ctx, TB_ERR_MODEL, "hidden_size is %lld but R has %lld columns", (long long)hidden_attr, (long long)H);
  if (!has_shape(w, 3, D, 4 * H, dm->input) || !has_shape(r, 3, D, 4 * H, H))
    return tb_kernel_error(ctx, TB_ERR_MODEL, "W or R does not have the shape [%lld, %lld, %lld / %lld] of %lld direction(s)",
                           (long long)D, (long long)(4 * H), (long long)dm->input, (long long)H, (long long)D);
  if (b && !has_shape(b, 2, D, 8 * H, 0))
    return tb_kernel_error(ctx, TB_ERR_MODEL, "B does not have the shape [%lld, %lld]", (long long)D, (long long)(8 * H));
  if ((h0 && !has_shape(h0, 3, D, dm->batch, H)) || (c0 && !has_shape(c0, 3, D, dm->batch, H)))
    return tb_kernel_error(ctx, TB_ERR_MODEL, "initial_h or initial_c does not have the shape [%lld, %lld, %lld]", (long long)D,
                           (long long)dm->batch, (long long)H);
  return TB_OK;
}

/* One time step t of direction d: G[d][t] += h R[d]^T, then the gates. */
static tb_status step(tb_kernel_ctx *ctx, const lstm_dims *dm, int d, int64_t t, tb_tensor *g, tb_tensor *h, tb_tensor *c) {
  int64_t H = dm->hidden, B = dm->batch, gate_off = ((int64_t)d * dm->seq + t) * B * 4 * H;
  const tb_tensor *r = input_at(ctx, 2), *bias = input_at(ctx, 3);
  tb_tensor *y = output_at(ctx, 0);
  cl_mat mh = {h, d * B * H, H, false}, mr = {r, d * 4 * H * H, H, true}, mg = {g, gate_off, 4 * H, false};
  tb_status s = tb_cl_gemm(ctx, B, 4 * H, H, 1.0f, mh, mr, 1.0f, mg);
  if (s != TB_OK) return s;
  cl_launch l;
  tb_cl_begin(&l, ctx, SLOT_GATES, "tb_lstm_gates");
  tb_cl_arg_tensor_at(&l, g, gate_off);
  tb_cl_arg_tensor_at(&l, bias ? bias : g, bias ? d * 8 * H : 0);
  tb_cl_arg_int(&l, bias != NULL);
  tb_cl_arg_tensor_at(&l, h, d * B * H);
  tb_cl_arg_tensor_at(&l, c, d * B * H);
  tb_cl_arg_tensor_at(&l, y ? y : h, y ? (t * dm->dirs + d) * B * H : 0);
  tb_cl_arg_int(&l, y != NULL);
  tb_cl_arg_int(&l, B);
  tb_cl_arg_int(&l, H);
  return tb_cl_go(&l, (size_t)(B * H));
}

static tb_status lstm_run(tb_kernel_ctx *ctx) {
  lstm_dims dm = {0};
  tb_status s = check_inputs(ctx, &dm);
  if (s == TB_OK) s = tb_kernel_outputs(ctx);
  if (s != TB_OK) return s;
  int64_t H = dm.hidden, B = dm.batch, D = dm.dirs;
  if (B == 0 || H == 0) return TB_OK;
  const tb_tensor *x = input_at(ctx, 0), *w = input_at(ctx, 1);
  tb_tensor *h = output_at(ctx, 1), *c = output_at(ctx, 2), *own_h = NULL, *own_c = NULL, *g = NULL;
  const int64_t state_shape[3] = {D, B, H}, gate_shape[3] = {D, dm.seq * B, 4 * H};
  if (!h && (s = tb_tensor_create(ctx->backend, TB_DTYPE_F32, 3, state_shape, &own_h)) == TB_OK) h = own_h;
  if (s == TB_OK && !c && (s = tb_tensor_create(ctx->backend, TB_DTYPE_F32, 3, state_shape, &own_c)) == TB_OK) c = own_c;
  if (s == TB_OK && dm.seq > 0) s = tb_tensor_create(ctx->backend, TB_DTYPE_F32, 3, gate_shape, &g);
  if (s == TB_OK) s = init_state(ctx, input_at(ctx, 5), h);
  if (s == TB_OK) s = init_state(ctx, input_at(ctx, 6), c);
  for (int d = 0; s == TB_OK && g && d < dm.dirs; d++) {
    cl_mat mx = {x, 0, dm.input, false}, mw = {w, d * 4 * H * dm.input, dm.input, true}, mg = {g, d * dm.seq * B * 4 * H, 4 * H, false};
    s = tb_cl_gemm(ctx, dm.seq * B, 4 * H, dm.input, 1.0f, mx, mw, 0.0f, mg);
  }
  for (int64_t i = 0; s == TB_OK && g && i < dm.seq; i++)
    for (int d = 0; s == TB_OK && d < dm.dirs; d++) s = step(ctx, &dm, d, dm.reverse || d == 1 ? dm.seq - 1 - i : i, g, h, c);
  /* Scratch blocks are reused only by work queued after this on the in-order queue. */
  tb_tensor_destroy(g);
  tb_tensor_destroy(own_h);
  tb_tensor_destroy(own_c);
  return s;
}

static const tb_kernel kernels[] = {
    CL_KERNEL("", "LSTM", lstm_accepts, lstm_run),
};
const cl_family tb_cl_family_lstm = {kernels, sizeof kernels / sizeof kernels[0]};
