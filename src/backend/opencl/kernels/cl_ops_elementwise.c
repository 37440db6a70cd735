/* OpenCL kernels of the elementwise ops (float32, and float16 computed in float32): unary math and
 * activations, the broadcasting binary ops (and PRelu, Mod, Clip), the variadic Max / Min / Sum / Mean,
 * tb::Gelu and Cast between float32 and float16. */
#include <string.h>
#include "backend/opencl/kernels/cl_ops.h"
#include "backend/kernel_params.h"
#include "ops/elementwise/ew_params.h"
#include "ops/fused/fused_params.h"

typedef struct named_code {
  const char *name;
  int code;
} named_code;

static const named_code unary_ops[] = {
    {"Identity", 0}, {"Relu", 1},  {"LeakyRelu", 2}, {"Sigmoid", 4}, {"Tanh", 5},   {"HardSigmoid", 6}, {"HardSwish", 7},
    {"Sqrt", 8},     {"Erf", 9},   {"Exp", 10},      {"Neg", 11},    {"Abs", 12},   {"Reciprocal", 15}, {"Log", 16},
    {"Floor", 17},   {"Ceil", 18}, {"Elu", 19},      {"Softplus", 20}, {"Sin", 21}, {"Cos", 22},
    {"Acos", 23},    {"Asin", 24}, {"Atan", 25},     {"Acosh", 26},  {"Asinh", 27}, {"Atanh", 28},      {"Cosh", 29},
    {"Sinh", 30},    {"Tan", 31},  {"Selu", 32},     {"ThresholdedRelu", 33}, {"Celu", 34}, {"Softsign", 35},
    {"Round", 36},   {"Sign", 37}, {"Shrink", 38},
};
enum { OP_COPY = 0, OP_CLIP = 3, OP_SCALE = 39 };                     /* unary codes of 00_common.cl */
enum { OP_ADD = 0, OP_PRELU = 7, OP_CLIP_MIN = 8, OP_CLIP_MAX = 9, OP_FMOD = 10 }; /* binary codes */


static const named_code binary_ops[] = {{"Add", 0}, {"Sub", 1}, {"Mul", 2}, {"Div", 3}, {"Pow", 4}, {"Max", 5}, {"Min", 6}};

static int code_of(const named_code *table, size_t n, const char *name) {
  for (size_t i = 0; i < n; i++)
    if (strcmp(table[i].name, name) == 0) return table[i].code;
  return -1;
}


/* The kernel's a and b are an activation's parameters (tb_act_params: alpha and beta, Selu's alpha and gamma,
 * Shrink's bias and lambd); 0 for an op without. */
static tb_status unary_run(tb_kernel_ctx *ctx) {
  const char *op = ctx->op_type;
  int code = code_of(unary_ops, sizeof unary_ops / sizeof unary_ops[0], op);
  const tb_act_params *p = ctx->params;
  float a = p ? p->alpha : 0.0f, b = !p ? 0.0f : strcmp(op, "Selu") == 0 ? p->gamma : p->beta;
  tb_status s = tb_kernel_outputs(ctx);
  if (s != TB_OK) return s;
  return tb_cl_unary(ctx, 0, ctx->inputs[0], ctx->outputs[0], code, a, b);
}

static tb_status gelu_run(tb_kernel_ctx *ctx) {
  tb_status s;
  const tb_gelu_params *p = tb_kernel_params(ctx, &s); /* tb::Gelu */
  if (p) s = tb_kernel_outputs(ctx);
  if (s != TB_OK) return s;
  return tb_cl_unary(ctx, 0, ctx->inputs[0], ctx->outputs[0], p->tanh ? 14 : 13, 0.0f, 0.0f);
}

static tb_status binary_run(tb_kernel_ctx *ctx) {
  const char *op = ctx->op_type;
  int code = code_of(binary_ops, sizeof binary_ops / sizeof binary_ops[0], op);
  if (strcmp(op, "Mod") == 0) code = OP_FMOD; /* mod_accepts took fmod = 1 only */
  tb_status s = tb_kernel_outputs(ctx);
  if (s != TB_OK) return s;
  return tb_cl_binary(ctx, 0, ctx->inputs[0], ctx->inputs[1], ctx->outputs[0], code);
}

/* PRelu: the slope broadcasts numpy-style to X; before opset 7 a 1-D slope of X's channel count runs along
 * dim 1 instead (viewed as [C, 1, ..., 1]), as the CPU kernel does. */
static tb_status prelu_run(tb_kernel_ctx *ctx) {
  tb_status s = tb_kernel_outputs(ctx);
  if (s != TB_OK) return s;
  tb_tensor *x = ctx->inputs[0], *slope = ctx->inputs[1];
  if (ctx->opset >= 7 || slope->ndim != 1 || x->ndim < 2 || slope->shape[0] != x->shape[1] || slope->shape[0] == 1)
    return tb_cl_binary(ctx, 0, x, slope, ctx->outputs[0], OP_PRELU);
  int64_t shape[TB_MAX_DIMS];
  shape[0] = slope->shape[0];
  for (size_t d = 1; d + 1 < x->ndim; d++) shape[d] = 1;
  tb_tensor *per_channel = NULL;
  if ((s = tb_tensor_view(slope, x->ndim - 1, shape, NULL, slope->offset, &per_channel)) != TB_OK) return s;
  s = tb_cl_binary(ctx, 0, x, per_channel, ctx->outputs[0], OP_PRELU);
  tb_tensor_destroy(per_channel);
  return s;
}

/* Max, Min, Sum, Mean of one or more inputs broadcast together: folded pairwise into the output. */
static tb_status variadic_run(tb_kernel_ctx *ctx) {
  const char *op = ctx->op_type;
  bool mean = strcmp(op, "Mean") == 0;
  int code = mean || strcmp(op, "Sum") == 0 ? OP_ADD : code_of(binary_ops, sizeof binary_ops / sizeof binary_ops[0], op);
  tb_status s = tb_kernel_outputs(ctx);
  if (s != TB_OK) return s;
  tb_tensor *y = ctx->outputs[0];
  size_t n = ctx->n_inputs;
  for (size_t i = 0; i < n; i++)
    if (!ctx->inputs[i]) return tb_kernel_error(ctx, TB_ERR_INVALID_ARGUMENT, "input %zu of %s is missing", i, op);
  if (n == 1) s = tb_cl_unary(ctx, 1, ctx->inputs[0], y, OP_COPY, 0.0f, 0.0f);
  else s = tb_cl_binary(ctx, 0, ctx->inputs[0], ctx->inputs[1], y, code);
  for (size_t i = 2; s == TB_OK && i < n; i++) s = tb_cl_binary(ctx, 0, y, ctx->inputs[i], y, code);
  if (s == TB_OK && mean && n > 1) s = tb_cl_unary(ctx, 1, y, y, OP_SCALE, 1.0f / (float)n, 0.0f);
  return s;
}

/* Clip: bounds from attributes before opset 11, else from the optional min / max inputs (NaN stays NaN). */
static tb_status clip_run(tb_kernel_ctx *ctx) {
  tb_status s = tb_kernel_outputs(ctx);
  if (s != TB_OK) return s;
  const tb_tensor *x = ctx->inputs[0];
  tb_tensor *y = ctx->outputs[0];
  const tb_clip_params *p = ctx->params;
  if (p->attr_form) return tb_cl_unary(ctx, 1, x, y, OP_CLIP, p->min, p->max);
  const tb_tensor *lo = ctx->n_inputs > 1 ? ctx->inputs[1] : NULL, *hi = ctx->n_inputs > 2 ? ctx->inputs[2] : NULL;
  if ((lo && tb_tensor_numel(lo) != 1) || (hi && tb_tensor_numel(hi) != 1))
    return tb_kernel_error(ctx, TB_ERR_INVALID_ARGUMENT, "Clip's min and max must be single values");
  if (!lo && !hi) return tb_cl_unary(ctx, 1, x, y, OP_COPY, 0.0f, 0.0f);
  const tb_tensor *src = x;
  if (lo) s = tb_cl_binary(ctx, 0, src, lo, y, OP_CLIP_MIN), src = y;
  if (s == TB_OK && hi) s = tb_cl_binary(ctx, 0, src, hi, y, OP_CLIP_MAX);
  return s;
}

static tb_status cast_run(tb_kernel_ctx *ctx) {
  tb_status s = tb_kernel_outputs(ctx);
  if (s != TB_OK) return s;
  const tb_tensor *x = ctx->inputs[0];
  tb_tensor *y = ctx->outputs[0];
  if (x->dtype == y->dtype) return tb_cl_unary(ctx, 0, x, y, 0, 0.0f, 0.0f);
  if (tb_tensor_numel(y) == 0) return TB_OK;
  cl_launch l;
  tb_cl_begin(&l, ctx, 0, x->dtype == TB_DTYPE_F32 ? "tb_cast_f32_f16" : "tb_cast_f16_f32");
  tb_cl_arg_tensor(&l, x);
  tb_cl_arg_tensor(&l, y);
  tb_cl_arg_int(&l, tb_tensor_numel(y));
  return tb_cl_go(&l, (size_t)tb_tensor_numel(y));
}

/* Every input float32, or every input float16. */
static bool same_float(size_t n_inputs, const tb_value_type *const *in) {
  tb_dtype first = TB_DTYPE_COUNT;
  for (size_t i = 0; i < n_inputs; i++) {
    if (!in[i]) continue;
    if (!in[i]->has_dtype || !tb_cl_float_type(in[i]->dtype)) return false;
    if (first == TB_DTYPE_COUNT) first = in[i]->dtype;
    if (in[i]->dtype != first) return false;
  }
  return first != TB_DTYPE_COUNT;
}

static bool ew_accepts(const tb_kernel_query *q) {
  return q->n_inputs == 1 && q->n_outputs == 1 && q->in[0] && same_float(q->n_inputs, q->in);
}

static bool bin_accepts(const tb_kernel_query *q) {
  return q->n_inputs == 2 && q->in[0] && q->in[1] && same_float(q->n_inputs, q->in);
}

/* One or more inputs, all float32 or all float16. */
static bool variadic_accepts(const tb_kernel_query *q) {
  for (size_t i = 0; i < q->n_inputs; i++)
    if (!q->in[i]) return false;
  return q->n_inputs >= 1 && q->n_outputs == 1 && same_float(q->n_inputs, q->in);
}

/* Mod of floats with fmod = 1 (C's fmod); fmod = 0 is an error on floats, which the CPU kernel reports. */
static bool mod_accepts(const tb_kernel_query *q) {
  const tb_mod_params *p = q->params;
  return bin_accepts(q) && p && p->fmod;
}

static bool clip_accepts(const tb_kernel_query *q) {
  return q->n_inputs >= 1 && q->in[0] && q->n_outputs == 1 && same_float(q->n_inputs, q->in) && q->params;
}

/* Cast between float32 and float16. */
static bool cast_accepts(const tb_kernel_query *q) {
  const tb_cast_params *p = q->params;
  const tb_value_type *const *in = q->in;
  if (!p || q->n_inputs != 1 || !in[0] || !in[0]->has_dtype || !tb_cl_float_type(in[0]->dtype)) return false;
  return p->to == TB_DTYPE_F32 || p->to == TB_DTYPE_F16;
}

#define UNARY(op) CL_KERNEL("", op, ew_accepts, unary_run)
#define BINARY(op) CL_KERNEL("", op, bin_accepts, binary_run)
static const tb_kernel kernels[] = {
    UNARY("Identity"), UNARY("Relu"),  UNARY("LeakyRelu"), UNARY("Sigmoid"), UNARY("Tanh"),       UNARY("HardSigmoid"),
    UNARY("HardSwish"), UNARY("Sqrt"), UNARY("Erf"),       UNARY("Exp"),     UNARY("Neg"),        UNARY("Abs"),
    UNARY("Reciprocal"), UNARY("Log"), UNARY("Floor"),     UNARY("Ceil"),    UNARY("Elu"),        UNARY("Softplus"),
    UNARY("Sin"),       UNARY("Cos"),  BINARY("Add"),      BINARY("Sub"),    BINARY("Mul"),       BINARY("Div"),
    UNARY("Acos"),      UNARY("Asin"), UNARY("Atan"),      UNARY("Acosh"),   UNARY("Asinh"),      UNARY("Atanh"),
    UNARY("Cosh"),      UNARY("Sinh"), UNARY("Tan"),       UNARY("Selu"),    UNARY("ThresholdedRelu"),
    UNARY("Celu"),      UNARY("Softsign"), UNARY("Round"), UNARY("Sign"),    UNARY("Shrink"),
    BINARY("Pow"),      CL_KERNEL("", "Mod", mod_accepts, binary_run),
    CL_KERNEL("", "PRelu", bin_accepts, prelu_run),
    CL_KERNEL("", "Clip", clip_accepts, clip_run),
    CL_KERNEL("", "Max", variadic_accepts, variadic_run),
    CL_KERNEL("", "Min", variadic_accepts, variadic_run),
    CL_KERNEL("", "Sum", variadic_accepts, variadic_run),
    CL_KERNEL("", "Mean", variadic_accepts, variadic_run),
    CL_KERNEL("tb", "Gelu", ew_accepts, gelu_run),
    CL_KERNEL("", "Cast", cast_accepts, cast_run),
};
const cl_family tb_cl_family_elementwise = {kernels, sizeof kernels / sizeof kernels[0]};
