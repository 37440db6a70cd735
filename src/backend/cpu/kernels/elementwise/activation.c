/* Reference kernels for the activations: Relu, LeakyRelu, PRelu, Sigmoid, HardSigmoid, HardSwish, Elu,
 * Selu, Celu, Softplus, ThresholdedRelu, Shrink. Their parameters (tb_act_params, float as ONNX stores
 * them) are used in the compute type. NaN inputs give NaN. */
#include <math.h>
#include "backend/cpu/kernels/elementwise/ew_kernel.h"
#include "ops/elementwise/ew_params.h"

typedef struct act_params {
  double alpha, beta, gamma;
} act_params;
#define P ((const act_params *)params)

/* f32 computes with the float functions, f64 with the double ones: F(expf) / F(exp) by suffix. */
#define MATH_f32(fn) fn##f
#define MATH_f64(fn) fn
#define M(sfx, fn) MATH_##sfx(fn)

static float logistic_f32(float x) {
  if (x >= 0) return 1.0f / (1.0f + expf(-x));
  float e = expf(x);
  return e / (1.0f + e);
}
static double logistic_f64(double x) {
  if (x >= 0) return 1.0 / (1.0 + exp(-x));
  double e = exp(x);
  return e / (1.0 + e);
}

/* v limited to [0, 1], NaN kept. */
#define CLAMP01(T, v) ((v) < 0 ? (T)0 : (v) > 1 ? (T)1 : (v))

#define FLOAT_LOOPS(sfx, T, DT)                                                                                 \
  TB_EW_LOOP1(relu_##sfx, T, T, x < 0 ? (T)0 : x)                                                               \
  TB_EW_LOOP1(leakyrelu_##sfx, T, T, x < 0 ? (T)P->alpha * x : x)                                               \
  TB_EW_LOOP1(sigmoid_##sfx, T, T, logistic_##sfx(x))                                                            \
  TB_EW_LOOP1(hardsigmoid_##sfx, T, T, CLAMP01(T, (T)P->alpha * x + (T)P->beta))          \
  TB_EW_LOOP1(hardswish_##sfx, T, T, x * CLAMP01(T, (T)(1.0 / 6.0) * x + (T)0.5))         \
  TB_EW_LOOP1(elu_##sfx, T, T, x < 0 ? (T)P->alpha * M(sfx, expm1)(x) : x)                                      \
  TB_EW_LOOP1(selu_##sfx, T, T, x > 0 ? (T)P->gamma * x : (T)P->gamma * ((T)P->alpha * M(sfx, exp)(x) - (T)P->alpha)) \
  TB_EW_LOOP1(celu_##sfx, T, T, x > 0 ? x : (T)P->alpha * M(sfx, expm1)(x / (T)P->alpha))                       \
  TB_EW_LOOP1(softplus_##sfx, T, T,                                                                             \
              x > 0 ? x + M(sfx, log1p)(M(sfx, exp)(-x)) : M(sfx, log1p)(M(sfx, exp)(x)))                       \
  TB_EW_LOOP1(thresholdedrelu_##sfx, T, T, x > (T)P->alpha ? x : (T)0)                                          \
  TB_EW_LOOP1(shrink_##sfx, T, T, x < -(T)P->beta ? x + (T)P->alpha : x > (T)P->beta ? x - (T)P->alpha : (T)0) \
  TB_EW_LOOP2(prelu_##sfx, T, T, T, a < 0 ? b * a : a)

#define SINT_LOOPS(sfx, T, DT) TB_EW_LOOP1(relu_##sfx, T, T, x < 0 ? (T)0 : x)
#define PRELU_INT_LOOP(sfx, T, DT) TB_EW_LOOP2(prelu_##sfx, T, T, T, a < 0 ? TB_EW_WRAP(T, (uint64_t)a * (uint64_t)b) : a)

TB_EW_FLOATS(FLOAT_LOOPS)
TB_EW_SINTS(SINT_LOOPS)
PRELU_INT_LOOP(i32, int32_t, TB_DTYPE_I32)
PRELU_INT_LOOP(i64, int64_t, TB_DTYPE_I64)

#define ENTRY(name) {TB_DTYPE_F32, name##_f32}, {TB_DTYPE_F64, name##_f64}
#define RELU_ENTRY(sfx, T, DT) {DT, relu_##sfx},
static const tb_ew_loop_entry relu_loops[] = {TB_EW_FLOATS(RELU_ENTRY) TB_EW_SINTS(RELU_ENTRY)};
static const tb_ew_loop_entry leakyrelu_loops[] = {ENTRY(leakyrelu)};
static const tb_ew_loop_entry sigmoid_loops[] = {ENTRY(sigmoid)};
static const tb_ew_loop_entry hardsigmoid_loops[] = {ENTRY(hardsigmoid)};
static const tb_ew_loop_entry hardswish_loops[] = {ENTRY(hardswish)};
static const tb_ew_loop_entry elu_loops[] = {ENTRY(elu)};
static const tb_ew_loop_entry selu_loops[] = {ENTRY(selu)};
static const tb_ew_loop_entry celu_loops[] = {ENTRY(celu)};
static const tb_ew_loop_entry softplus_loops[] = {ENTRY(softplus)};
static const tb_ew_loop_entry thresholdedrelu_loops[] = {ENTRY(thresholdedrelu)};
static const tb_ew_loop_entry shrink_loops[] = {ENTRY(shrink)};
static const tb_ew_loop_entry prelu_loops[] = {ENTRY(prelu), {TB_DTYPE_I32, prelu_i32}, {TB_DTYPE_I64, prelu_i64}};

static tb_status run_unary(tb_kernel_ctx *ctx, const tb_ew_loop_entry *table, size_t count, const act_params *p) {
  tb_dtype dt = tb_tensor_dtype(ctx->inputs[0]);
  return tb_ew_simple(ctx, table, count, 0, dt, tb_ew_compute_dtype(dt), p);
}

/* The node's parsed tb_act_params (NULL for an activation without attributes) widened to the compute type. */
static tb_status act_run(tb_kernel_ctx *ctx, const tb_ew_loop_entry *table, size_t count, const tb_act_params *ap) {
  act_params p = {0, 0, 0};
  if (ap) {
    p.alpha = ap->alpha;
    p.beta = ap->beta;
    p.gamma = ap->gamma;
  }
  return run_unary(ctx, table, count, &p);
}

#define RUN(name)                                                                                       \
  static tb_status run_##name(tb_kernel_ctx *ctx) {                                                     \
    return act_run(ctx, name##_loops, TB_EW_COUNT(name##_loops), ctx->params);                          \
  }

RUN(relu) RUN(leakyrelu) RUN(sigmoid) RUN(hardsigmoid) RUN(hardswish) RUN(elu) RUN(selu) RUN(celu) RUN(softplus)
RUN(thresholdedrelu) RUN(shrink)

/* PRelu: the output has X's shape; slope broadcasts to it (before opset 7 a 1-D slope of X's channel
 * count runs along dim 1: it is viewed as [C, 1, ..., 1]). */
static tb_status run_prelu(tb_kernel_ctx *ctx) {
  const tb_tensor *x = ctx->inputs[0], *slope = ctx->inputs[1];
  tb_dtype dt = tb_tensor_dtype(x);
  tb_ew_call call;
  memset(&call, 0, sizeof call);
  call.loop = tb_ew_find_loop(prelu_loops, TB_EW_COUNT(prelu_loops), tb_ew_compute_dtype(dt));
  if (!call.loop) return tb_kernel_error(ctx, TB_ERR_UNSUPPORTED, "no kernel for %s inputs", tb_dtype_name(dt));
  call.n_in = 2;
  call.in[0] = x;
  call.in[1] = slope;
  call.in_compute[0] = call.in_compute[1] = tb_ew_compute_dtype(dt);
  int64_t per_channel[TB_MAX_DIMS];
  size_t x_ndim = tb_tensor_ndim(x);
  if (ctx->opset < 7 && tb_tensor_ndim(slope) == 1 && x_ndim >= 2 &&
      tb_tensor_shape(slope)[0] == tb_tensor_shape(x)[1] && tb_tensor_shape(slope)[0] != 1) {
    per_channel[0] = tb_tensor_shape(slope)[0];
    for (size_t d = 1; d + 1 < x_ndim; d++) per_channel[d] = 1;
    call.in_ndim[1] = x_ndim - 1;
    call.in_shape[1] = per_channel;
  }
  call.out_dtype = dt;
  call.out_compute = tb_ew_compute_dtype(dt);
  call.out_ndim = tb_tensor_ndim(x);
  call.out_shape = tb_tensor_shape(x);
  return tb_ew_map(ctx, &call);
}

const tb_kernel tb_kernel_relu = {.domain = "", .name = "Relu", .level = TB_KERNEL_REFERENCE, .cpu_features = 0, .accepts = NULL, .run = run_relu};
const tb_kernel tb_kernel_leakyrelu = {.domain = "", .name = "LeakyRelu", .level = TB_KERNEL_REFERENCE, .cpu_features = 0, .accepts = NULL, .run = run_leakyrelu};
const tb_kernel tb_kernel_sigmoid = {.domain = "", .name = "Sigmoid", .level = TB_KERNEL_REFERENCE, .cpu_features = 0, .accepts = NULL, .run = run_sigmoid};
const tb_kernel tb_kernel_hardsigmoid = {.domain = "", .name = "HardSigmoid", .level = TB_KERNEL_REFERENCE, .cpu_features = 0, .accepts = NULL, .run = run_hardsigmoid};
const tb_kernel tb_kernel_hardswish = {.domain = "", .name = "HardSwish", .level = TB_KERNEL_REFERENCE, .cpu_features = 0, .accepts = NULL, .run = run_hardswish};
const tb_kernel tb_kernel_elu = {.domain = "", .name = "Elu", .level = TB_KERNEL_REFERENCE, .cpu_features = 0, .accepts = NULL, .run = run_elu};
const tb_kernel tb_kernel_selu = {.domain = "", .name = "Selu", .level = TB_KERNEL_REFERENCE, .cpu_features = 0, .accepts = NULL, .run = run_selu};
const tb_kernel tb_kernel_celu = {.domain = "", .name = "Celu", .level = TB_KERNEL_REFERENCE, .cpu_features = 0, .accepts = NULL, .run = run_celu};
const tb_kernel tb_kernel_softplus = {.domain = "", .name = "Softplus", .level = TB_KERNEL_REFERENCE, .cpu_features = 0, .accepts = NULL, .run = run_softplus};
const tb_kernel tb_kernel_thresholdedrelu = {.domain = "", .name = "ThresholdedRelu", .level = TB_KERNEL_REFERENCE, .cpu_features = 0, .accepts = NULL, .run = run_thresholdedrelu};
const tb_kernel tb_kernel_shrink = {.domain = "", .name = "Shrink", .level = TB_KERNEL_REFERENCE, .cpu_features = 0, .accepts = NULL, .run = run_shrink};
const tb_kernel tb_kernel_prelu = {.domain = "", .name = "PRelu", .level = TB_KERNEL_REFERENCE, .cpu_features = 0, .accepts = NULL, .run = run_prelu};
