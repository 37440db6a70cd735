/* Vulkan kernel of the ONNX LSTM on fp32 (layout 0, directions forward, reverse and bidirectional,
 * optional B, initial_h and initial_c; default activations, no peepholes, clip, input_forget or
 * sequence_lens: find_kernel declines those and the CPU runs them). Per run, all enqueued with no host
 * round trip: one matmul.comp dispatch for the input projection of every time step and direction
 * (XW[d] = X @ W[d]^T), then per direction and time step a matmul.comp dispatch G = h_prev @ R[d]^T
 * (skipped at the first step without initial_h) and an lstm_gates.comp dispatch that applies the gates,
 * updates c and writes h into Y[t] (the next step's h_prev), and Y_h at the last step. The running c
 * lives in Y_c (or a scratch tensor when Y_c is not wanted), as h lives in Y (or scratch). Scratch
 * tensors (XW, G, and those) stay in the node's state between runs and grow when the shapes do. */
#include <stdlib.h>
#include <string.h>
#include "backend/vulkan/kernels/vk_kernel.h"
#include "ops/rnn/rnn_params.h"
#include "backend/tensor/tensor_impl.h"

enum { IN_X, IN_W, IN_R, IN_B, IN_SEQ_LENS, IN_H0, IN_C0, IN_P };
enum { SCRATCH_XW, SCRATCH_G, SCRATCH_Y, SCRATCH_C, SCRATCH_COUNT };

/* matmul.comp's push constants (as in vk_nn.c). */
typedef struct lstm_mm_push {
  uint32_t M, N, K, nb2;
  uint32_t a_off, a_b1, a_b2, a_m, a_k;
  uint32_t b_off, b_b1, b_b2, b_k, b_n;
  uint32_t c_off, c_m, c_n, y_off;
  float alpha, beta, act_a, act_b;
} lstm_mm_push;

/* lstm_gates.comp's push constants and flags. */
typedef struct lstm_gate_push {
  uint32_t H, total, xw_off, g_off, b_off, c0_off, cs_off, y_off, yh_off, flags;
} lstm_gate_push;
enum { GATE_HAS_H = 1, GATE_HAS_B = 2, GATE_FROM_C0 = 4, GATE_C_ZERO = 8, GATE_WRITE_YH = 16 };

typedef struct lstm_state {
  vk_node *project;   /* XW = X @ W^T */
  vk_node *recurrent; /* G = h_prev @ R^T: set 0 reads initial_h, set 1 reads Y */
  vk_node *gates;
  tb_tensor *scratch[SCRATCH_COUNT];
} lstm_state;

static bool present(const tb_kernel_query *q, size_t i) { return i < q->n_inputs && q->in && q->in[i]; }

/* Exactly sigmoid, tanh, tanh for each direction (the defaults; they take no alpha or beta). */
static bool default_activations(const tb_rnn_params *p) {
  static const tb_rnn_act_kind defaults[3] = {TB_RNN_ACT_SIGMOID, TB_RNN_ACT_TANH, TB_RNN_ACT_TANH};
  for (size_t k = 0; k < 3 * (size_t)p->num_directions; k++)
    if (p->acts[k].kind != defaults[k % 3]) return false;
  return true;
}

static bool lstm_accepts(const tb_kernel_query *q) {
  const tb_rnn_params *p = q->params;
  if (!p || q->n_inputs < 3 || present(q, IN_SEQ_LENS) || present(q, IN_P)) return false;
  if (!tb_vk_query_f32(q, (1u << IN_X) | (1u << IN_W) | (1u << IN_R) | (1u << IN_B) | (1u << IN_H0) | (1u << IN_C0))) return false;
  return !p->has_clip && !p->input_forget && p->layout == 0 && !p->n_alpha && !p->n_beta && default_activations(p);
}

static void lstm_release(void *state) {
  lstm_state *ls = state;
  if (!ls) return;
  tb_vk_node_destroy(ls->project);
  tb_vk_node_destroy(ls->recurrent);
  tb_vk_node_destroy(ls->gates);
  for (int i = 0; i < SCRATCH_COUNT; i++) tb_tensor_destroy(ls->scratch[i]);
  free(ls);
}

static tb_status lstm_prepare(tb_kernel_ctx *ctx, void **state) {
  *state = NULL;
  lstm_state *ls = calloc(1, sizeof *ls);
  if (!ls) return tb_kernel_error(ctx, TB_ERR_OUT_OF_MEMORY, "out of host memory");
  const uint32_t spec[2] = {0, 0}; /* matmul.comp: no C, no activation */
  void *project = NULL, *recurrent = NULL, *gates = NULL;
  tb_status st = tb_vk_prepare_node(ctx, TB_VK_SHADER_MATMUL, spec, 2, 1, &project);
  if (st == TB_OK) st = tb_vk_prepare_node(ctx, TB_VK_SHADER_MATMUL, spec, 2, 2, &recurrent);
  if (st == TB_OK) st = tb_vk_prepare_node(ctx, TB_VK_SHADER_LSTM_GATES, NULL, 0, 1, &gates);
  ls->project = project;
  ls->recurrent = recurrent;
  ls->gates = gates;
  if (st != TB_OK) {
    lstm_release(ls);
    return st;
  }
  ls->project->reuse_sets = ls->recurrent->reuse_sets = ls->gates->reuse_sets = true; /* one batch for all steps */
  *state = ls;
  return TB_OK;
}

/* Scratch tensor `which` with at least `numel` floats, as an argument. */
static tb_status scratch(tb_kernel_ctx *ctx, lstm_state *ls, int which, int64_t numel, vk_arg *out) {
  tb_tensor **t = &ls->scratch[which];
  if (!*t || (*t)->numel < numel) {
    tb_tensor_destroy(*t);
    *t = NULL;
    tb_status st = tb_tensor_create(ctx->backend, TB_DTYPE_F32, 1, &numel, t);
    if (st != TB_OK) return st;
  }
  return tb_vk_arg_of(ctx, *t, "scratch", 4, out);
}

static bool shape_is(const tb_tensor *t, int64_t a, int64_t b, int64_t c) {
  return t->ndim == 3 && t->shape[0] == a && t->shape[1] == b && t->shape[2] == c;
}

typedef struct lstm_dims {
  int64_t seq, batch, input, hidden, dirs;
  bool reverse;
} lstm_dims;

static tb_status read_dims(tb_kernel_ctx *ctx, lstm_dims *d) {
  const tb_rnn_params *p = ctx->params;
  int64_t hidden_attr = p->hidden_size; /* -1 when absent */
  tb_status st;
  tb_tensor *const *in = ctx->inputs;
  const tb_tensor *x = in[IN_X], *w = in[IN_W], *r = in[IN_R];
  if (x->ndim != 3 || w->ndim != 3 || r->ndim != 3) return tb_kernel_error(ctx, TB_ERR_MODEL, "X, W and R must have rank 3");
  d->dirs = p->num_directions;
  d->reverse = p->reverse;
  d->seq = x->shape[0], d->batch = x->shape[1], d->input = x->shape[2], d->hidden = r->shape[2];
  int64_t H = d->hidden;
  if (hidden_attr > 0 && hidden_attr != H)
    return tb_kernel_error(ctx, TB_ERR_MODEL, "hidden_size is %lld but R has %lld columns", (long long)hidden_attr, (long long)H);
  if (!shape_is(w, d->dirs, 4 * H, d->input) || !shape_is(r, d->dirs, 4 * H, H))
    return tb_kernel_error(ctx, TB_ERR_MODEL, "W or R does not have the shape [%lld, %lld, %lld / %lld] of %lld direction(s)",
                           (long long)d->dirs, (long long)(4 * H), (long long)d->input, (long long)H, (long long)d->dirs);
  const tb_tensor *b = ctx->n_inputs > IN_B ? in[IN_B] : NULL;
  if (b && (b->ndim != 2 || b->shape[0] != d->dirs || b->shape[1] != 8 * H))
    return tb_kernel_error(ctx, TB_ERR_MODEL, "B does not have the shape [%lld, %lld]", (long long)d->dirs, (long long)(8 * H));
  for (size_t i = IN_H0; i <= IN_C0; i++) {
    const tb_tensor *s = ctx->n_inputs > i ? in[i] : NULL;
    if (s && !shape_is(s, d->dirs, d->batch, H))
      return tb_kernel_error(ctx, TB_ERR_MODEL, "initial_%c does not have the shape [%lld, %lld, %lld]", i == IN_H0 ? 'h' : 'c',
                             (long long)d->dirs, (long long)d->batch, (long long)H);
  }
  if (ctx->n_inputs > IN_SEQ_LENS && in[IN_SEQ_LENS])
    return tb_kernel_error(ctx, TB_ERR_UNSUPPORTED, "sequence_lens is not in the Vulkan LSTM");
  int64_t xw = d->dirs * d->seq * d->batch * 4 * H;
  st = tb_vk_check_u32(ctx, xw, "the input projection's size");
  if (st == TB_OK) st = tb_vk_check_u32(ctx, d->seq * d->dirs * d->batch * H, "Y's size");
  return st;
}

static bool wanted(const tb_kernel_ctx *ctx, size_t i) { return tb_kernel_has_output(ctx, i); }

/* Output i when the node has it (buffer 0 when not). */
static tb_status maybe_output(tb_kernel_ctx *ctx, size_t i, size_t ndim, const int64_t *shape, vk_arg *out) {
  *out = (vk_arg){0, 0};
  if (!wanted(ctx, i)) return TB_OK;
  tb_tensor *t;
  return tb_vk_output(ctx, i, TB_DTYPE_F32, ndim, shape, &t, out);
}

static tb_status lstm_run(tb_kernel_ctx *ctx) {
  lstm_state *ls = ctx->state;
  if (!ls) return tb_kernel_error(ctx, TB_ERR_INTERNAL, "the Vulkan kernel ran without its prepare()");
  lstm_dims d = {0};
  tb_status st = read_dims(ctx, &d);
  if (st != TB_OK) return st;
  const int64_t H = d.hidden, bh = d.batch * H;
  bool has_b = ctx->n_inputs > IN_B && ctx->inputs[IN_B], has_h0 = ctx->n_inputs > IN_H0 && ctx->inputs[IN_H0];
  bool has_c0 = ctx->n_inputs > IN_C0 && ctx->inputs[IN_C0];
  vk_arg x, w, r, b = {0, 0}, h0 = {0, 0}, c0 = {0, 0}, y, yh, yc, xw, g;
  st = tb_vk_input(ctx, IN_X, TB_DTYPE_F32, &x);
  if (st == TB_OK) st = tb_vk_input(ctx, IN_W, TB_DTYPE_F32, &w);
  if (st == TB_OK) st = tb_vk_input(ctx, IN_R, TB_DTYPE_F32, &r);
  if (st == TB_OK && has_b) st = tb_vk_input(ctx, IN_B, TB_DTYPE_F32, &b);
  if (st == TB_OK && has_h0) st = tb_vk_input(ctx, IN_H0, TB_DTYPE_F32, &h0);
  if (st == TB_OK && has_c0) st = tb_vk_input(ctx, IN_C0, TB_DTYPE_F32, &c0);
  int64_t y_shape[4] = {d.seq, d.dirs, d.batch, H}, state_shape[3] = {d.dirs, d.batch, H};
  if (st == TB_OK) st = maybe_output(ctx, 0, 4, y_shape, &y);
  if (st == TB_OK) st = maybe_output(ctx, 1, 3, state_shape, &yh);
  if (st == TB_OK) st = maybe_output(ctx, 2, 3, state_shape, &yc);
  if (st != TB_OK) return st;
  if (d.seq == 0 || bh == 0) {
    if (wanted(ctx, 1) || wanted(ctx, 2))
      return tb_kernel_error(ctx, TB_ERR_UNSUPPORTED, "an empty sequence or batch is not in the Vulkan LSTM");
    return TB_OK;
  }
  if (!wanted(ctx, 0)) st = scratch(ctx, ls, SCRATCH_Y, d.seq * d.dirs * bh, &y);
  if (st == TB_OK && !wanted(ctx, 2)) st = scratch(ctx, ls, SCRATCH_C, d.dirs * bh, &yc);
  if (st == TB_OK) st = scratch(ctx, ls, SCRATCH_XW, d.dirs * d.seq * d.batch * 4 * H, &xw);
  if (st == TB_OK) st = scratch(ctx, ls, SCRATCH_G, d.batch * 4 * H, &g);
  if (st != TB_OK) return st;

  /* XW[dir] = X @ W[dir]^T as [seq * batch, 4H] per direction. */
  lstm_mm_push p = {.M = (uint32_t)(d.seq * d.batch), .N = (uint32_t)(4 * H), .K = (uint32_t)d.input, .nb2 = (uint32_t)d.dirs,
                    .a_off = x.offset, .a_m = (uint32_t)d.input, .a_k = 1,
                    .b_off = w.offset, .b_b2 = (uint32_t)(4 * H * d.input), .b_k = 1, .b_n = (uint32_t)d.input,
                    .y_off = xw.offset, .alpha = d.input ? 1.0f : 0.0f, .beta = 1.0f};
  tb_vk_buffer mm_buffers[4] = {x.buffer, w.buffer, x.buffer, xw.buffer};
  st = tb_vk_node_dispatch(ls->project, 0, mm_buffers, 4, &p, sizeof p, (p.N + 15) / 16, (p.M + 15) / 16, (uint32_t)d.dirs);
  tb_vk_buffer gate_buffers[7] = {xw.buffer, g.buffer, b.buffer, c0.buffer, yc.buffer, y.buffer, yh.buffer};
  uint32_t gx, gy;
  tb_vk_groups((uint64_t)bh, 256, &gx, &gy);
  for (int64_t dir = 0; dir < d.dirs && st == TB_OK; dir++) {
    bool backward = d.reverse || dir == 1;
    for (int64_t step = 0; step < d.seq && st == TB_OK; step++) {
      int64_t t = backward ? d.seq - 1 - step : step, prev = backward ? t + 1 : t - 1;
      bool has_h = step > 0 || has_h0;
      if (has_h) {
        bool first = step == 0;
        lstm_mm_push q = {.M = (uint32_t)d.batch, .N = (uint32_t)(4 * H), .K = (uint32_t)H, .nb2 = 1,
                          .a_off = first ? h0.offset + (uint32_t)(dir * bh) : y.offset + (uint32_t)((prev * d.dirs + dir) * bh),
                          .a_m = (uint32_t)H, .a_k = 1, .b_off = r.offset + (uint32_t)(dir * 4 * H * H), .b_k = 1, .b_n = (uint32_t)H,
                          .y_off = g.offset, .alpha = 1.0f, .beta = 1.0f};
        tb_vk_buffer a_buffer = first ? h0.buffer : y.buffer;
        tb_vk_buffer rec_buffers[4] = {a_buffer, r.buffer, a_buffer, g.buffer};
        st = tb_vk_node_dispatch(ls->recurrent, first ? 0 : 1, rec_buffers, 4, &q, sizeof q, (q.N + 15) / 16, (q.M + 15) / 16, 1);
        if (st != TB_OK) break;
      }
      uint32_t flags = (has_h ? GATE_HAS_H : 0) | (has_b ? GATE_HAS_B : 0) | (step == d.seq - 1 && wanted(ctx, 1) ? GATE_WRITE_YH : 0);
      if (step == 0) flags |= has_c0 ? GATE_FROM_C0 : GATE_C_ZERO;
      lstm_gate_push gp = {(uint32_t)H, (uint32_t)bh, xw.offset + (uint32_t)((dir * d.seq + t) * d.batch * 4 * H), g.offset,
                           b.offset + (uint32_t)(dir * 8 * H), c0.offset + (uint32_t)(dir * bh), yc.offset + (uint32_t)(dir * bh),
                           y.offset + (uint32_t)((t * d.dirs + dir) * bh), yh.offset + (uint32_t)(dir * bh), flags};
      st = tb_vk_node_dispatch(ls->gates, 0, gate_buffers, 7, &gp, sizeof gp, gx, gy, 1);
    }
  }
  return st;
}

const tb_kernel tb_vk_kernel_lstm = {"", "LSTM", TB_KERNEL_REFERENCE, 0, lstm_accepts, lstm_run, lstm_prepare, lstm_release, NULL};
