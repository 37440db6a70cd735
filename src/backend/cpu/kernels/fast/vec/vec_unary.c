/* Level-2 fp32 unary kernels: Relu, LeakyRelu, Sigmoid, HardSigmoid, HardSwish, Tanh, Erf, Exp, Sqrt,
 * Neg, Reciprocal, tb::Gelu (both forms of its `approximate` attribute), tb::Silu and tb::Mish, each on the AVX-512, AVX2 and portable vec_ops table, split into
 * chunks over ctx->pool for large tensors. Accuracy of the transcendental ones: see vec_math.h. */
#include <string.h>
#include "backend/cpu/kernels/fast/vec/vec_kernel.h"
#include "ops/elementwise/ew_params.h"

typedef struct unary_job {
  const vec_ops *ops;
  vec_unop op;
  float p0, p1;
  const float *x;
  float *y;
  int64_t n;
} unary_job;

static void unary_chunks(void *arg, size_t begin, size_t end) {
  const unary_job *j = arg;
  int64_t lo = (int64_t)begin * VEC_CHUNK, hi = (int64_t)end * VEC_CHUNK;
  if (hi > j->n) hi = j->n;
  if (lo < hi) j->ops->unary_p(j->op, j->p0, j->p1, j->x + lo, j->y + lo, hi - lo);
}

static tb_status unary_run_p(tb_kernel_ctx *ctx, const vec_ops *ops, vec_unop op, float p0, float p1) {
  if (!tb_vec_inputs_ok(ctx, 1)) return tb_vec_fallback(ctx);
  const tb_tensor *x = ctx->inputs[0];
  float *y = NULL;
  tb_status st;
  if (!tb_vec_output(ctx, 0, tb_tensor_ndim(x), tb_tensor_shape(x), &y, &st)) return st == TB_OK ? tb_vec_fallback(ctx) : st;
  unary_job j = {ops, op, p0, p1, tb_tensor_host_data(x), y, tb_tensor_numel(x)};
  tb_vec_parallel(ctx, (size_t)((j.n + VEC_CHUNK - 1) / VEC_CHUNK), j.n, unary_chunks, &j);
  return TB_OK;
}

static tb_status unary_run(tb_kernel_ctx *ctx, const vec_ops *ops, vec_unop op) { return unary_run_p(ctx, ops, op, 0, 0); }


static bool unary_accepts(const tb_kernel_query *q) {
  return q->n_inputs >= 1 && tb_fast_accepts_f32(q->in, 1);
}

/* tb::Gelu: approximate "none" (erf) or "tanh"; anything else is left to the reference. */
static bool gelu_accepts(const tb_kernel_query *q) {
  return unary_accepts(q) && q->params; /* parse accepts only "none" and "tanh" */
}

static tb_status gelu_run(tb_kernel_ctx *ctx, const vec_ops *ops) {
  tb_status st;
  const tb_gelu_params *pb = tb_kernel_params(ctx, &st);
  if (st != TB_OK) return st;
  return unary_run(ctx, ops, pb->tanh ? VEC_GELU_TANH : VEC_GELU_ERF);
}

#define UNARY(sym, name, op)                                                                             \
  static tb_status sym##_run(tb_kernel_ctx *ctx, const vec_ops *ops) { return unary_run(ctx, ops, op); } \
  VEC_KERNELS(sym, "", name, unary_accepts, sym##_run)
UNARY(relu, "Relu", VEC_RELU)
UNARY(sigmoid, "Sigmoid", VEC_SIGMOID)
UNARY(tanh, "Tanh", VEC_TANH)
UNARY(erf, "Erf", VEC_ERF)
UNARY(exp, "Exp", VEC_EXP)
UNARY(sqrt, "Sqrt", VEC_SQRT)
UNARY(neg, "Neg", VEC_NEG)
UNARY(reciprocal, "Reciprocal", VEC_RECIPROCAL)
UNARY(hard_swish, "HardSwish", VEC_HARD_SWISH)
VEC_KERNELS(gelu, "tb", "Gelu", gelu_accepts, gelu_run)
static tb_status silu_run(tb_kernel_ctx *ctx, const vec_ops *ops) { return unary_run(ctx, ops, VEC_SILU); }
static tb_status mish_run(tb_kernel_ctx *ctx, const vec_ops *ops) { return unary_run(ctx, ops, VEC_MISH); }
VEC_KERNELS(silu, "tb", "Silu", unary_accepts, silu_run)
VEC_KERNELS(mish, "tb", "Mish", unary_accepts, mish_run)

/* LeakyRelu (alpha) and HardSigmoid (alpha, beta) from the node's tb_act_params. */
static tb_status act_p_run(tb_kernel_ctx *ctx, const vec_ops *ops, vec_unop op) {
  tb_status st;
  const tb_act_params *pb = tb_kernel_params(ctx, &st);
  if (st != TB_OK) return st;
  return unary_run_p(ctx, ops, op, pb->alpha, pb->beta);
}
static tb_status leaky_relu_run(tb_kernel_ctx *ctx, const vec_ops *ops) { return act_p_run(ctx, ops, VEC_LEAKY_RELU); }
static tb_status hard_sigmoid_run(tb_kernel_ctx *ctx, const vec_ops *ops) { return act_p_run(ctx, ops, VEC_HARD_SIGMOID); }
static bool act_p_accepts(const tb_kernel_query *q) { return unary_accepts(q) && q->params; }
VEC_KERNELS(leaky_relu, "", "LeakyRelu", act_p_accepts, leaky_relu_run)
VEC_KERNELS(hard_sigmoid, "", "HardSigmoid", act_p_accepts, hard_sigmoid_run)
