/* CUDA kernels of the elementwise ops (kernels/10_elementwise.cu on float32; 12_math.cu's tb_cu_ew_math_* and
 * tb_cu_ew_arith_* on float64, float16 and bfloat16, the halves computed in float32 and rounded once as the CPU's
 * staging): the unary math and activations with their parameters (tb_act_params, tb_clip_params,
 * tb_gelu_params), and the binary ops with ONNX broadcasting (Add, Sub, Mul, Div, Pow, two-input Max / Min,
 * PRelu). float32 with equal shapes uses the _flat kernels, other shapes the _broadcast ones with the descriptor
 * of cuda_broadcast.h. */
#include <stdio.h>
#include <string.h>
#include "backend/backend_impl.h"
#include "backend/cuda/cuda_broadcast.h"
#include "backend/cuda/kernels/cuda_ew.h"
#include "backend/cuda/kernels/cuda_ops.h"
#include "backend/tensor/tensor_impl.h"
#include "core/error.h"
#include "ops/elementwise/ew_params.h"
#include "ops/fused/fused_params.h"

#define TB_CUDA_INF __builtin_inff()

/* A unary op: its float32 kernel and its operation in tb_cu_ew_math_* for the other float dtypes (-1: those are
 * cuda_ops_math.c's). */
typedef struct named_kernel {
  const char *op, *kernel;
  int ew;
} named_kernel;

static const named_kernel unary_kernels[] = {
    {"Relu", "tb_cu_relu_f32", TB_CUDA_EW_RELU},
    {"LeakyRelu", "tb_cu_leaky_relu_f32", TB_CUDA_EW_LEAKY_RELU},
    {"Elu", "tb_cu_elu_f32", TB_CUDA_EW_ELU},
    {"Sigmoid", "tb_cu_sigmoid_f32", TB_CUDA_EW_SIGMOID},
    {"HardSigmoid", "tb_cu_hard_sigmoid_f32", TB_CUDA_EW_HARD_SIGMOID},
    {"Softplus", "tb_cu_softplus_f32", TB_CUDA_EW_SOFTPLUS},
    {"Tanh", "tb_cu_tanh_f32", TB_CUDA_EW_TANH},
    {"Exp", "tb_cu_exp_f32", TB_CUDA_EW_EXP},
    {"Log", "tb_cu_log_f32", TB_CUDA_EW_LOG},
    {"Sqrt", "tb_cu_sqrt_f32", TB_CUDA_EW_SQRT},
    {"Reciprocal", "tb_cu_reciprocal_f32", TB_CUDA_EW_RECIPROCAL},
    {"Neg", "tb_cu_neg_f32", -1},
    {"Abs", "tb_cu_abs_f32", -1},
    {"Erf", "tb_cu_erf_f32", TB_CUDA_EW_ERF},
    {"Floor", "tb_cu_floor_f32", TB_CUDA_EW_FLOOR},
    {"Ceil", "tb_cu_ceil_f32", TB_CUDA_EW_CEIL},
};

/* The binary kernels of float32: for equal shapes, and with a broadcast descriptor; the operation of
 * tb_cu_ew_arith_* for the other float dtypes. */
typedef struct binary_kernel {
  const char *op, *flat, *broadcast;
  int ew;
} binary_kernel;
#define BINARY_KERNEL(op, name, ew) {op, "tb_cu_" name "_f32_flat", "tb_cu_" name "_f32_broadcast", ew}
static const binary_kernel binary_kernels[] = {
    BINARY_KERNEL("Add", "add", TB_CUDA_EW_ADD), BINARY_KERNEL("Sub", "sub", TB_CUDA_EW_SUB), BINARY_KERNEL("Mul", "mul", TB_CUDA_EW_MUL),
    BINARY_KERNEL("Div", "div", TB_CUDA_EW_DIV), BINARY_KERNEL("Pow", "pow", TB_CUDA_EW_POW), BINARY_KERNEL("Max", "max", TB_CUDA_EW_MAX),
    BINARY_KERNEL("Min", "min", TB_CUDA_EW_MIN), BINARY_KERNEL("PRelu", "prelu", TB_CUDA_EW_PRELU),
};

static const binary_kernel *binary_of(const char *op) {
  for (size_t i = 0; i < sizeof binary_kernels / sizeof binary_kernels[0]; i++)
    if (strcmp(binary_kernels[i].op, op) == 0) return &binary_kernels[i];
  return NULL;
}

static const named_kernel *unary_of(const char *op) {
  for (size_t i = 0; i < sizeof unary_kernels / sizeof unary_kernels[0]; i++)
    if (strcmp(unary_kernels[i].op, op) == 0) return &unary_kernels[i];
  return NULL;
}

/* float64, float16 or bfloat16: the dtypes of 12_math.cu's kernels here. */
static bool is_wide_or_half(tb_dtype dt) { return dt == TB_DTYPE_F64 || tb_cuda_ew_is_half(dt); }

/* Every input present has dtype dt (at least one), and one output. */
static bool all_of(const tb_kernel_query *q, tb_dtype dt) {
  bool any = false;
  for (size_t i = 0; i < q->n_inputs; i++) {
    if (!q->in[i]) continue;
    if (!q->in[i]->has_dtype || q->in[i]->dtype != dt) return false;
    any = true;
  }
  return any && q->n_outputs == 1;
}

/* The dtype every present input shares when it is float64, float16 or bfloat16; TB_DTYPE_COUNT otherwise. */
static tb_dtype wide_or_half(const tb_kernel_query *q) {
  tb_dtype dt = q->n_inputs && q->in[0] && q->in[0]->has_dtype ? q->in[0]->dtype : TB_DTYPE_COUNT;
  return is_wide_or_half(dt) && all_of(q, dt) ? dt : TB_DTYPE_COUNT;
}

/* x through tb_cu_ew_math_* (float64 and the halves) with operation op and parameters alpha, beta. */
static tb_status unary_ew(tb_kernel_ctx *ctx, int op, const tb_tensor *x, tb_tensor *y, double alpha, double beta) {
  tb_cuda_ew d = {.op = op, .alpha = alpha, .beta = beta};
  return tb_cuda_ew_go(ctx, tb_cuda_ew_typed(tb_cuda_ew_math_kernels, x->dtype), x, NULL, y, NULL, tb_tensor_numel(y), &d,
                       TB_CUDA_EW_ELEMENTS);
}

tb_status tb_cuda_unary(tb_kernel_ctx *ctx, const char *kernel, const tb_tensor *x, tb_tensor *y, float alpha, float beta) {
  int64_t n = tb_tensor_numel(y);
  if (tb_tensor_numel(x) != n)
    return tb_kernel_error(ctx, TB_ERR_INTERNAL, "CUDA kernel %s: input of %lld elements, output of %lld", kernel,
                           (long long)tb_tensor_numel(x), (long long)n);
  if (n == 0) return TB_OK;
  tb_cuda_launch l;
  tb_cuda_begin(&l, ctx, kernel);
  tb_cuda_arg_tensor(&l, x);
  tb_cuda_arg_tensor(&l, y);
  tb_cuda_arg_i64(&l, n);
  tb_cuda_arg_f32(&l, alpha);
  tb_cuda_arg_f32(&l, beta);
  return tb_cuda_go_elements(&l, n);
}

/* a op b with a viewed as (a_ndim, a_shape) and b as (b_ndim, b_shape) (PRelu's per-channel slope). */
static tb_status binary_shaped(tb_kernel_ctx *ctx, const char *op, const tb_tensor *a, size_t a_ndim, const int64_t *a_shape,
                               const tb_tensor *b, size_t b_ndim, const int64_t *b_shape, tb_tensor *y) {
  tb_cuda_broadcast bc;
  int64_t shape[TB_MAX_DIMS];
  size_t ndim = 0;
  bool same = false;
  tb_status st = tb_cuda_broadcast_make(a_ndim, a_shape, b_ndim, b_shape, &bc, shape, &ndim, &same);
  if (st != TB_OK) {
    char why[512];
    snprintf(why, sizeof why, "%s", tb_last_error());
    return tb_kernel_error(ctx, st, "CUDA %s: %s", op, why);
  }
  if (!y) {
    if ((st = tb_kernel_output(ctx, 0, a->dtype, ndim, shape, &y)) != TB_OK) return st;
  } else if (tb_tensor_ndim(y) != ndim || (ndim && memcmp(tb_tensor_shape(y), shape, ndim * sizeof *shape) != 0)) {
    return tb_kernel_error(ctx, TB_ERR_INTERNAL, "the output of CUDA %s does not have the broadcast shape of its inputs", op);
  }
  int64_t n = tb_tensor_numel(y);
  if (n == 0) return TB_OK;
  const binary_kernel *k = binary_of(op);
  if (!k) return tb_kernel_error(ctx, TB_ERR_INTERNAL, "no CUDA binary kernel for %s", op);
  if (a->dtype != TB_DTYPE_F32) {
    tb_cuda_ew d = {.op = k->ew, .flags = same ? TB_CUDA_EW_F_SAME : 0, .bc = bc};
    return tb_cuda_ew_go(ctx, tb_cuda_ew_typed(tb_cuda_ew_arith_kernels, a->dtype), a, b, y, NULL, n, &d, TB_CUDA_EW_ELEMENTS);
  }
  tb_cuda_launch l;
  tb_cuda_begin(&l, ctx, same ? k->flat : k->broadcast);
  tb_cuda_arg_tensor(&l, a);
  tb_cuda_arg_tensor(&l, b);
  tb_cuda_arg_tensor(&l, y);
  tb_cuda_arg_i64(&l, n);
  if (!same) tb_cuda_arg_bytes(&l, &bc, sizeof bc, 8);
  return tb_cuda_go_elements(&l, n);
}

tb_status tb_cuda_binary(tb_kernel_ctx *ctx, const char *op, const tb_tensor *a, const tb_tensor *b, tb_tensor *y) {
  return binary_shaped(ctx, op, a, a->ndim, a->shape, b, b->ndim, b->shape, y);
}

static tb_status unary_run(tb_kernel_ctx *ctx) {
  const named_kernel *k = unary_of(ctx->op_type);
  const tb_act_params *p = ctx->params;
  const tb_tensor *x = ctx->inputs[0];
  tb_tensor *y = NULL;
  tb_status st = tb_kernel_output(ctx, 0, x->dtype, x->ndim, x->shape, &y);
  if (st != TB_OK) return st;
  float alpha = p ? p->alpha : 0.0f, beta = p ? p->beta : 0.0f;
  if (x->dtype != TB_DTYPE_F32) return unary_ew(ctx, k->ew, x, y, alpha, beta);
  return tb_cuda_unary(ctx, k->kernel, x, y, alpha, beta);
}

/* tb::Gelu: float32 in the erf form; float64 and the halves in both forms, computed in double and rounded once as
 * the CPU reference (gelu_accepts). */
static tb_status gelu_run(tb_kernel_ctx *ctx) {
  const tb_gelu_params *p = ctx->params;
  const tb_tensor *x = ctx->inputs[0];
  tb_tensor *y = NULL;
  tb_status st = tb_kernel_output(ctx, 0, x->dtype, x->ndim, x->shape, &y);
  if (st != TB_OK) return st;
  if (x->dtype != TB_DTYPE_F32) return unary_ew(ctx, p->tanh ? TB_CUDA_EW_GELU_TANH : TB_CUDA_EW_GELU, x, y, 0.0, 0.0);
  return tb_cuda_unary(ctx, "tb_cu_gelu_f32", x, y, 0.0f, 0.0f);
}

/* Clip: bounds from attributes before opset 11 (one kernel); from 11 from the optional scalar inputs min and
 * max, which live on the device: y = min(max(x, min), max) with the broadcasting Max and Min kernels (NaN
 * stays NaN; min > max gives max everywhere, as numpy's clip). */
static tb_status clip_run(tb_kernel_ctx *ctx) {
  const tb_clip_params *p = ctx->params;
  const tb_tensor *x = ctx->inputs[0];
  tb_tensor *y = NULL;
  tb_status st = tb_kernel_output(ctx, 0, x->dtype, x->ndim, x->shape, &y);
  if (st != TB_OK) return st;
  bool f32 = x->dtype == TB_DTYPE_F32;
  if (p->attr_form) return f32 ? tb_cuda_unary(ctx, "tb_cu_clip_f32", x, y, p->min, p->max) : unary_ew(ctx, TB_CUDA_EW_CLIP, x, y, p->min, p->max);
  const tb_tensor *lo = ctx->n_inputs > 1 ? ctx->inputs[1] : NULL, *hi = ctx->n_inputs > 2 ? ctx->inputs[2] : NULL;
  if ((lo && tb_tensor_numel(lo) != 1) || (hi && tb_tensor_numel(hi) != 1))
    return tb_kernel_error(ctx, TB_ERR_INVALID_ARGUMENT, "Clip's min and max must be single values");
  if (!lo && !hi)
    return f32 ? tb_cuda_unary(ctx, "tb_cu_clip_f32", x, y, -TB_CUDA_INF, TB_CUDA_INF) : unary_ew(ctx, TB_CUDA_EW_CLIP, x, y, -TB_CUDA_INF, TB_CUDA_INF);
  const tb_tensor *src = x;
  if (lo) {
    st = tb_cuda_binary(ctx, "Max", src, lo, y);
    src = y;
  }
  if (st == TB_OK && hi) st = tb_cuda_binary(ctx, "Min", src, hi, y);
  return st;
}

static tb_status binary_run(tb_kernel_ctx *ctx) { return tb_cuda_binary(ctx, ctx->op_type, ctx->inputs[0], ctx->inputs[1], NULL); }

/* PRelu: the slope broadcasts numpy-style to X; before opset 7 a 1-D slope of X's channel count runs along
 * dim 1 (viewed as [C, 1, ..., 1]), as the CPU kernel does. */
static tb_status prelu_run(tb_kernel_ctx *ctx) {
  const tb_tensor *x = ctx->inputs[0], *slope = ctx->inputs[1];
  if (ctx->opset >= 7 || slope->ndim != 1 || x->ndim < 2 || slope->shape[0] != x->shape[1] || slope->shape[0] == 1)
    return tb_cuda_binary(ctx, "PRelu", x, slope, NULL);
  int64_t shape[TB_MAX_DIMS];
  shape[0] = slope->shape[0];
  for (size_t d = 1; d + 1 < x->ndim; d++) shape[d] = 1;
  return binary_shaped(ctx, "PRelu", x, x->ndim, x->shape, slope, x->ndim - 1, shape, NULL);
}

/* float32; float64, float16 and bfloat16 for the ops with a tb_cu_ew_math_* operation. */
static bool unary_accepts(const tb_kernel_query *q) {
  if (q->n_inputs != 1 || !q->in[0]) return false;
  const named_kernel *k = unary_of(q->op_type);
  return tb_cuda_all_f32(q) || (k && k->ew >= 0 && wide_or_half(q) != TB_DTYPE_COUNT);
}

static bool gelu_accepts(const tb_kernel_query *q) {
  const tb_gelu_params *p = q->params;
  return q->n_inputs == 1 && q->in[0] && p && ((tb_cuda_all_f32(q) && !p->tanh) || wide_or_half(q) != TB_DTYPE_COUNT);
}

/* x, min and max of one float dtype. */
static bool clip_accepts(const tb_kernel_query *q) {
  return q->in[0] && q->params && (tb_cuda_all_f32(q) || wide_or_half(q) != TB_DTYPE_COUNT);
}

/* Two inputs of one float dtype (Max and Min are variadic; one or three and more are cuda_ops_math.c's folds),
 * numpy broadcasting (opset 7 and up: the legacy broadcast attributes before it are declined). */
static bool binary_accepts(const tb_kernel_query *q) {
  const tb_binary_params *p = q->params;
  return q->n_inputs == 2 && q->in[0] && q->in[1] && (tb_cuda_all_f32(q) || wide_or_half(q) != TB_DTYPE_COUNT) && !(p && p->legacy);
}

#define UNARY(op) TB_CUDA_KERNEL("", op, unary_accepts, unary_run)
#define BINARY(op) TB_CUDA_KERNEL("", op, binary_accepts, binary_run)
static const tb_kernel kernels[] = {
    UNARY("Relu"),  UNARY("LeakyRelu"),  UNARY("Elu"), UNARY("Sigmoid"), UNARY("HardSigmoid"), UNARY("Softplus"),
    UNARY("Tanh"),  UNARY("Exp"),        UNARY("Log"), UNARY("Sqrt"),    UNARY("Reciprocal"),  UNARY("Neg"),
    UNARY("Abs"),   UNARY("Erf"),        UNARY("Floor"), UNARY("Ceil"),
    TB_CUDA_KERNEL("tb", "Gelu", gelu_accepts, gelu_run),
    TB_CUDA_KERNEL("", "Clip", clip_accepts, clip_run),
    BINARY("Add"),  BINARY("Sub"),       BINARY("Mul"), BINARY("Div"),   BINARY("Pow"),       BINARY("Max"),
    BINARY("Min"),
    TB_CUDA_KERNEL("", "PRelu", binary_accepts, prelu_run),
};
const tb_cuda_family tb_cuda_family_elementwise = {kernels, sizeof kernels / sizeof kernels[0]};
