/* CUDA kernels of the recurrent operators LSTM, GRU and RNN on float32 (kernels/50_rnn.cu), with every attribute
 * the CPU reference takes: directions forward, reverse and bidirectional, sequence_lens (int32 or int64),
 * initial_h, initial_c, LSTM's peepholes P and input_forget, GRU's linear_before_reset, every activation of the
 * list with its alpha / beta, clip, layout 0 and 1, and any of Y, Y_h, Y_c omitted. A run is three launches on
 * the model's stream and no host round trip, so a captured CUDA graph holds the whole sequence:
 *   1. the input projection of every time step and direction as one product on the GEMM path (cuBLASLt where
 *      present, else the own tiled kernel: cuda_gemm.h): xw[d] = X W[d]^T, [dirs, seq * batch, G * H];
 *   2. R transposed per direction (tb_cu_rnn_transpose_f32), so the recurrent product reads it coalesced;
 *   3. the sequence (tb_cu_rnn_seq_f32): one block per (direction, batch row) looping over the time steps, with
 *      the recurrent product h R^T and the gates fused per step, the lengths read on the device. A length outside
 *      0..seq sets the node's flag (cuda_index_flag.c), read at the run's next host synchronisation: the run then
 *      fails with the CPU's status and sentence, as the CPU refuses it.
 * One persistent block per sequence rather than two launches per step: a streaming model (batch 1, hidden
 * 64-256, tens of steps per call) is bound by the chain of steps, and a launch per step costs microseconds
 * even replayed from a graph, while a block's barrier costs nanoseconds; the price is that one multiprocessor
 * per (direction, row) does the whole recurrent product, so large hidden sizes with large batches would do
 * better with a product per step over the whole GPU (not written). Other dtypes run on the CPU. */
#include <string.h>
#include <stdlib.h>
#include "backend/cuda/kernels/cuda_dm.h"
#include "backend/cuda/kernels/cuda_gemm.h"
#include "backend/cuda/kernels/cuda_ops.h"
#include "backend/kernel_shape.h"
#include "backend/tensor/tensor_impl.h"
#include "ops/rnn/rnn_params.h"

enum { IN_X, IN_W, IN_R, IN_B, IN_LENS, IN_H0, IN_C0, IN_P, IN_COUNT };
enum { RNN_THREADS = 256 };

/* The kernels' tb_rnn_desc (50_rnn.cu), field for field. */
typedef struct rnn_desc {
  int32_t cell, layout, dirs, reverse, has_clip, input_forget, linear_before_reset, lens_kind;
  int32_t act[TB_RNN_MAX_ACTS];
  float alpha[TB_RNN_MAX_ACTS], beta[TB_RNN_MAX_ACTS];
  float clip;
  int32_t unused;
  int64_t seq, batch, input, hidden;
} rnn_desc;
_Static_assert(sizeof(rnn_desc) == 144, "rnn_desc mirrors 50_rnn.cu's tb_rnn_desc");
_Static_assert(TB_RNN_MAX_ACTS == 6, "tb_rnn_desc holds six activations");

static const tb_tensor *input_at(const tb_kernel_ctx *ctx, size_t i) { return i < ctx->n_inputs ? ctx->inputs[i] : NULL; }
static tb_tensor *wanted_output(const tb_kernel_ctx *ctx, size_t i) {
  return i < ctx->n_outputs && tb_kernel_has_output(ctx, i) ? ctx->outputs[i] : NULL;
}

/* An input present with another shape than want (ndim dims): TB_ERR_MODEL naming it and both shapes. */
static tb_status expect(tb_kernel_ctx *ctx, size_t i, const char *name, size_t ndim, const int64_t *want) {
  const tb_tensor *t = input_at(ctx, i);
  if (!t) return TB_OK;
  bool same = t->ndim == ndim;
  for (size_t d = 0; same && d < ndim; d++) same = t->shape[d] == want[d];
  if (same) return TB_OK;
  char have[160], need[160];
  return tb_kernel_error(ctx, TB_ERR_MODEL, "input %s has shape %s, expected %s; give it that shape", name,
                         tb_dims_str(have, sizeof have, t->ndim, t->shape), tb_dims_str(need, sizeof need, ndim, want));
}

/* The dims from X and W, every input's shape checked as the CPU reference checks it. */
static tb_status check_inputs(tb_kernel_ctx *ctx, const tb_rnn_params *a, rnn_desc *d) {
  const tb_tensor *x = input_at(ctx, IN_X), *w = input_at(ctx, IN_W), *r = input_at(ctx, IN_R);
  if (!x || !w || !r) return tb_kernel_error(ctx, TB_ERR_MODEL, "inputs X, W and R are required; give all three");
  char have[160];
  if (x->ndim != 3 || w->ndim != 3) {
    const tb_tensor *t = x->ndim != 3 ? x : w;
    return tb_kernel_error(ctx, TB_ERR_MODEL, "input %s has shape %s, expected rank 3", x->ndim != 3 ? "X" : "W",
                           tb_dims_str(have, sizeof have, t->ndim, t->shape));
  }
  int64_t gates = (int64_t)a->cell;
  if (w->shape[1] == 0 || w->shape[1] % gates != 0)
    return tb_kernel_error(ctx, TB_ERR_MODEL, "W's dimension 1 (%lld) is not a positive multiple of the %lld gates", (long long)w->shape[1],
                           (long long)gates);
  d->cell = (int32_t)a->cell;
  d->layout = a->layout;
  d->dirs = a->num_directions;
  d->reverse = a->reverse;
  d->seq = x->shape[a->layout == 0 ? 0 : 1];
  d->batch = x->shape[a->layout == 0 ? 1 : 0];
  d->input = x->shape[2];
  d->hidden = w->shape[1] / gates;
  if (a->hidden_size >= 0 && a->hidden_size != d->hidden)
    return tb_kernel_error(ctx, TB_ERR_MODEL, "hidden_size %lld does not match W's dimension 1 (%lld = %lld gates x %lld)",
                           (long long)a->hidden_size, (long long)w->shape[1], (long long)gates, (long long)d->hidden);
  int64_t D = d->dirs, GH = gates * d->hidden, H = d->hidden, B = d->batch;
  const int64_t ws[3] = {D, GH, d->input}, rs[3] = {D, GH, H}, bs[2] = {D, 2 * GH}, ls[1] = {B}, ps[2] = {D, 3 * H};
  const int64_t s0[3] = {D, B, H}, s1[3] = {B, D, H};
  tb_status st = expect(ctx, IN_W, "W", 3, ws);
  if (st == TB_OK) st = expect(ctx, IN_R, "R", 3, rs);
  if (st == TB_OK) st = expect(ctx, IN_B, "B", 2, bs);
  if (st == TB_OK) st = expect(ctx, IN_LENS, "sequence_lens", 1, ls);
  if (st == TB_OK) st = expect(ctx, IN_H0, "initial_h", 3, a->layout == 0 ? s0 : s1);
  if (st == TB_OK) st = expect(ctx, IN_C0, "initial_c", 3, a->layout == 0 ? s0 : s1);
  if (st == TB_OK) st = expect(ctx, IN_P, "P", 2, ps);
  return st;
}

static void set_attributes(const tb_rnn_params *a, const tb_tensor *lens, rnn_desc *d) {
  d->has_clip = a->has_clip;
  d->clip = a->clip;
  d->input_forget = a->input_forget;
  d->linear_before_reset = a->linear_before_reset;
  d->lens_kind = !lens ? 0 : tb_tensor_dtype(lens) == TB_DTYPE_I32 ? 1 : 2;
  for (size_t k = 0; k < a->acts_per_direction * (size_t)a->num_directions && k < TB_RNN_MAX_ACTS; k++) {
    d->act[k] = (int32_t)a->acts[k].kind;
    d->alpha[k] = a->acts[k].alpha;
    d->beta[k] = a->acts[k].beta;
  }
}

/* xw = X W^T for every direction: batch over the directions, X shared (batch stride 0). */
static tb_status project_inputs(tb_kernel_ctx *ctx, const rnn_desc *r, tb_tensor *xw) {
  tb_cuda_gemm_desc g;
  memset(&g, 0, sizeof g);
  int64_t dirs = r->dirs, gh = (int64_t)r->cell * r->hidden;
  tb_cuda_gemm_set_batch(&g, 1, &dirs);
  g.a_batch[0] = 0;
  g.b_batch[0] = gh * r->input;
  g.m = r->seq * r->batch;
  g.n = gh;
  g.k = r->input;
  g.a_rs = r->input;
  g.a_cs = 1;
  g.b_rs = 1;
  g.b_cs = r->input;
  g.alpha = 1.0f;
  tb_cuda_gemm_merge_batch(&g);
  return tb_cuda_gemm_run(ctx, &g, input_at(ctx, IN_X), input_at(ctx, IN_W), xw, NULL, NULL);
}

static tb_status transpose_r(tb_kernel_ctx *ctx, const rnn_desc *r, tb_tensor *rt) {
  tb_cuda_launch l;
  tb_cuda_begin(&l, ctx, "tb_cu_rnn_transpose_f32");
  tb_cuda_arg_tensor(&l, input_at(ctx, IN_R));
  tb_cuda_arg_tensor(&l, rt);
  tb_cuda_arg_i64(&l, r->dirs);
  tb_cuda_arg_i64(&l, (int64_t)r->cell * r->hidden);
  tb_cuda_arg_i64(&l, r->hidden);
  return tb_cuda_go_elements(&l, tb_tensor_numel(rt));
}

/* The node's state: the GEMM path's (the input projection's), and the flag its sequence_lens are checked into. */
typedef struct rnn_state {
  void *gemm;
  tb_cuda_flag *lens;
} rnn_state;

tb_status tb_cuda_rnn_prepare(tb_kernel_ctx *ctx, void **state) {
  *state = NULL;
  rnn_state *rs = calloc(1, sizeof *rs);
  if (!rs) return tb_kernel_error(ctx, TB_ERR_OUT_OF_MEMORY, "out of host memory for the recurrent node's state");
  tb_status st = tb_cuda_gemm_prepare(ctx, &rs->gemm);
  if (st == TB_OK) st = tb_cuda_flag_make(ctx, &rs->lens);
  if (st != TB_OK) {
    tb_cuda_rnn_release(rs);
    return st;
  }
  *state = rs;
  return TB_OK;
}

void tb_cuda_rnn_release(void *state) {
  rnn_state *rs = state;
  if (!rs) return;
  tb_cuda_gemm_release(rs->gemm);
  tb_cuda_flag_release(rs->lens);
  free(rs);
}

static tb_status run_sequence(tb_kernel_ctx *ctx, const rnn_desc *r, const tb_tensor *xw, const tb_tensor *rt, tb_tensor *work,
                              const tb_tensor *bad_lens) {
  tb_cuda_launch l;
  tb_cuda_begin(&l, ctx, "tb_cu_rnn_seq_f32");
  tb_cuda_arg_optional(&l, xw);
  tb_cuda_arg_tensor(&l, rt);
  static const size_t optional_inputs[] = {IN_B, IN_P, IN_LENS, IN_H0, IN_C0};
  for (size_t i = 0; i < sizeof optional_inputs / sizeof optional_inputs[0]; i++) tb_cuda_arg_optional(&l, input_at(ctx, optional_inputs[i]));
  for (size_t i = 0; i < 3; i++) tb_cuda_arg_optional(&l, wanted_output(ctx, i));
  tb_cuda_arg_tensor(&l, work);
  tb_cuda_arg_optional(&l, bad_lens);
  tb_cuda_arg_bytes(&l, r, sizeof *r, 8);
  int64_t units = (int64_t)r->dirs * r->batch, rows = (int64_t)r->cell * r->hidden;
  int64_t threads = (rows + TB_CUDA_WARP - 1) / TB_CUDA_WARP * TB_CUDA_WARP;
  if (threads > RNN_THREADS) threads = RNN_THREADS;
  tb_cuda_dims dims = {(unsigned)(units < TB_CUDA_MAX_GRID_ROWS ? units : TB_CUDA_MAX_GRID_ROWS), (unsigned)threads};
  return tb_cuda_go(&l, dims);
}

static tb_status rnn_run_in(tb_kernel_ctx *ctx, tb_cuda_flag *lens_flag);

/* The GEMM path reads its own state from ctx->state: the node's is swapped for it during the run. */
static tb_status rnn_run(tb_kernel_ctx *ctx) {
  rnn_state *rs = ctx->state;
  if (!rs) return tb_kernel_error(ctx, TB_ERR_INTERNAL, "the recurrent kernel runs without its prepared state");
  ctx->state = rs->gemm;
  tb_status st = rnn_run_in(ctx, rs->lens);
  ctx->state = rs;
  return st;
}

static tb_status rnn_run_in(tb_kernel_ctx *ctx, tb_cuda_flag *lens_flag) {
  const tb_rnn_params *a = ctx->params;
  size_t max_inputs = a->cell == TB_RNN_CELL_LSTM ? 8 : 6;
  if (ctx->n_inputs > max_inputs) return tb_kernel_error(ctx, TB_ERR_MODEL, "has %zu inputs, at most %zu", ctx->n_inputs, max_inputs);
  rnn_desc r;
  memset(&r, 0, sizeof r);
  tb_status st = check_inputs(ctx, a, &r);
  if (st == TB_OK) st = tb_kernel_outputs(ctx);
  if (st != TB_OK) return st;
  set_attributes(a, input_at(ctx, IN_LENS), &r);
  int64_t units = (int64_t)r.dirs * r.batch, gh = (int64_t)r.cell * r.hidden;
  if (units == 0) return TB_OK; /* no batch row: every output is empty */
  const int64_t xw_shape[3] = {r.dirs, r.seq * r.batch, gh}, rt_shape[3] = {r.dirs, r.hidden, gh};
  const int64_t work_shape[2] = {units, ((int64_t)r.cell + 4) * r.hidden};
  tb_tensor *xw = NULL, *rt = NULL, *work = NULL;
  st = tb_tensor_create(ctx->backend, TB_DTYPE_F32, 3, xw_shape, &xw);
  if (st == TB_OK) st = tb_tensor_create(ctx->backend, TB_DTYPE_F32, 3, rt_shape, &rt);
  if (st == TB_OK) st = tb_tensor_create(ctx->backend, TB_DTYPE_F32, 2, work_shape, &work);
  if (st == TB_OK) st = project_inputs(ctx, &r, xw);
  if (st == TB_OK && r.hidden > 0) st = transpose_r(ctx, &r, rt);
  tb_tensor *bad_lens = NULL; /* the device checks the lengths; the run's next host synchronisation reads the flag */
  if (st == TB_OK && r.hidden > 0 && input_at(ctx, IN_LENS))
    st = tb_cuda_lens_flag(ctx, lens_flag, ctx->inputs[IN_LENS], r.seq, &bad_lens);
  if (st == TB_OK && r.hidden > 0) st = run_sequence(ctx, &r, xw, rt, work, bad_lens);
  tb_tensor_destroy(xw);
  tb_tensor_destroy(rt);
  tb_tensor_destroy(work);
  return st;
}

static bool dtype_is(const tb_kernel_query *q, size_t i, tb_dtype a, tb_dtype b) {
  if (i >= q->n_inputs || !q->in[i]) return true;
  return q->in[i]->has_dtype && (q->in[i]->dtype == a || q->in[i]->dtype == b);
}

/* X, W, R float32 (B, initial_h, initial_c and P too when given), sequence_lens int32 or int64, at most the
 * operator's outputs; every attribute the parser takes. */
static bool rnn_accepts(const tb_kernel_query *q) {
  const tb_rnn_params *p = q->params;
  if (!p || q->n_inputs < 3 || !q->in[0] || !q->in[1] || !q->in[2] || q->n_outputs > (p->cell == TB_RNN_CELL_LSTM ? 3u : 2u)) return false;
  for (size_t i = 0; i < q->n_inputs; i++) {
    bool ok = i == IN_LENS ? dtype_is(q, i, TB_DTYPE_I32, TB_DTYPE_I64) : dtype_is(q, i, TB_DTYPE_F32, TB_DTYPE_F32);
    if (!ok) return false;
  }
  return p->acts_per_direction * (size_t)p->num_directions <= TB_RNN_MAX_ACTS;
}

#define TB_CUDA_RNN_KERNEL(name) {"", name, TB_KERNEL_REFERENCE, 0, rnn_accepts, rnn_run, tb_cuda_rnn_prepare, tb_cuda_rnn_release, NULL}
static const tb_kernel kernels[] = {
    TB_CUDA_RNN_KERNEL("LSTM"),
    TB_CUDA_RNN_KERNEL("GRU"),
    TB_CUDA_RNN_KERNEL("RNN"),
};
const tb_cuda_family tb_cuda_family_rnn = {kernels, sizeof kernels / sizeof kernels[0]};
