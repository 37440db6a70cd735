/* OpenCL kernels of the elementwise ops (float32, and float16 computed in float32): unary math and
 * activations, the broadcasting binary ops (and PRelu, Mod, Clip), the variadic Max / Min / Sum / Mean,
 * tb::Gelu and Cast between float32 and float16. */
#include <float.h>
#include <string.h>
#include "backend/opencl/kernels/cl_ops.h"

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

/* The float attributes (name, default) a unary op passes as the kernel's a and b. */
typedef struct unary_params {
  const char *op, *a_name, *b_name;
  float a, b;
} unary_params;
static const unary_params unary_attrs[] = {
    {"LeakyRelu", "alpha", NULL, 0.01f, 0.0f},
    {"Elu", "alpha", NULL, 1.0f, 0.0f},
    {"HardSigmoid", "alpha", "beta", 0.2f, 0.5f},
    {"Selu", "alpha", "gamma", 1.67326319217681884765625f, 1.05070102214813232421875f},
    {"ThresholdedRelu", "alpha", NULL, 1.0f, 0.0f},
    {"Celu", "alpha", NULL, 1.0f, 0.0f},
    {"Shrink", "bias", "lambd", 0.0f, 0.5f},
};
enum { ONNX_FLOAT = 1, ONNX_FLOAT16 = 10 }; /* TensorProto.DataType codes of Cast's `to` */

static const named_code binary_ops[] = {{"Add", 0}, {"Sub", 1}, {"Mul", 2}, {"Div", 3}, {"Pow", 4}, {"Max", 5}, {"Min", 6}};

static int code_of(const named_code *table, size_t n, const char *name) {
  for (size_t i = 0; i < n; i++)
    if (strcmp(table[i].name, name) == 0) return table[i].code;
  return -1;
}


static tb_status unary_run(tb_kernel_ctx *ctx) {
  const char *op = ctx->node->op_type;
  int code = code_of(unary_ops, sizeof unary_ops / sizeof unary_ops[0], op);
  float a = 0.0f, b = 0.0f;
  tb_status s = TB_OK;
  for (size_t i = 0; i < sizeof unary_attrs / sizeof unary_attrs[0]; i++) {
    const unary_params *p = &unary_attrs[i];
    if (strcmp(p->op, op) != 0) continue;
    a = p->a, b = p->b;
    s = tb_attr_float(ctx->graph, ctx->node, p->a_name, p->a, &a);
    if (s == TB_OK && p->b_name) s = tb_attr_float(ctx->graph, ctx->node, p->b_name, p->b, &b);
  }
  if (s == TB_OK) s = tb_cl_outputs(ctx);
  if (s != TB_OK) return s;
  return tb_cl_unary(ctx, 0, ctx->inputs[0], ctx->outputs[0], code, a, b);
}

static tb_status gelu_run(tb_kernel_ctx *ctx) {
  const char *approx = "none";
  tb_status s = tb_attr_string(ctx->graph, ctx->node, "approximate", "none", &approx);
  if (s == TB_OK) s = tb_cl_outputs(ctx);
  if (s != TB_OK) return s;
  return tb_cl_unary(ctx, 0, ctx->inputs[0], ctx->outputs[0], strcmp(approx, "tanh") == 0 ? 14 : 13, 0.0f, 0.0f);
}

static tb_status binary_run(tb_kernel_ctx *ctx) {
  const char *op = ctx->node->op_type;
  int code = code_of(binary_ops, sizeof binary_ops / sizeof binary_ops[0], op);
  if (strcmp(op, "Mod") == 0) code = OP_FMOD; /* mod_accepts took fmod = 1 only */
  tb_status s = tb_cl_outputs(ctx);
  if (s != TB_OK) return s;
  return tb_cl_binary(ctx, 0, ctx->inputs[0], ctx->inputs[1], ctx->outputs[0], code);
}

/* PRelu: the slope broadcasts numpy-style to X; before opset 7 a 1-D slope of X's channel count runs along
 * dim 1 instead (viewed as [C, 1, ..., 1]), as the CPU kernel does. */
static tb_status prelu_run(tb_kernel_ctx *ctx) {
  tb_status s = tb_cl_outputs(ctx);
  if (s != TB_OK) return s;
  tb_tensor *x = ctx->inputs[0], *slope = ctx->inputs[1];
  if (ctx->node->opset >= 7 || slope->ndim != 1 || x->ndim < 2 || slope->shape[0] != x->shape[1] || slope->shape[0] == 1)
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
  const char *op = ctx->node->op_type;
  bool mean = strcmp(op, "Mean") == 0;
  int code = mean || strcmp(op, "Sum") == 0 ? OP_ADD : code_of(binary_ops, sizeof binary_ops / sizeof binary_ops[0], op);
  tb_status s = tb_cl_outputs(ctx);
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
  tb_status s = tb_cl_outputs(ctx);
  if (s != TB_OK) return s;
  const tb_tensor *x = ctx->inputs[0];
  tb_tensor *y = ctx->outputs[0];
  if (ctx->node->opset < 11) {
    float lo = -FLT_MAX, hi = FLT_MAX;
    s = tb_attr_float(ctx->graph, ctx->node, "min", lo, &lo);
    if (s == TB_OK) s = tb_attr_float(ctx->graph, ctx->node, "max", hi, &hi);
    return s == TB_OK ? tb_cl_unary(ctx, 1, x, y, OP_CLIP, lo, hi) : s;
  }
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
  tb_status s = tb_cl_outputs(ctx);
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
static bool same_float(const tb_node *n, const tb_value_type *const *in) {
  tb_dtype first = TB_DTYPE_COUNT;
  for (size_t i = 0; i < n->n_inputs; i++) {
    if (!in[i]) continue;
    if (!in[i]->has_dtype || !tb_cl_float_type(in[i]->dtype)) return false;
    if (first == TB_DTYPE_COUNT) first = in[i]->dtype;
    if (in[i]->dtype != first) return false;
  }
  return first != TB_DTYPE_COUNT;
}

static bool ew_accepts(const tb_kernel_query *q) {
  const tb_graph *g = q->graph;
  const tb_node *n = q->node;
  const tb_value_type *const *in = q->in;
  (void)g;
  return n->n_inputs == 1 && n->n_outputs == 1 && in[0] && same_float(n, in);
}

static bool bin_accepts(const tb_kernel_query *q) {
  const tb_graph *g = q->graph;
  const tb_node *n = q->node;
  const tb_value_type *const *in = q->in;
  (void)g;
  return n->n_inputs == 2 && in[0] && in[1] && same_float(n, in);
}

/* One or more inputs, all float32 or all float16. */
static bool variadic_accepts(const tb_kernel_query *q) {
  const tb_graph *g = q->graph;
  const tb_node *n = q->node;
  const tb_value_type *const *in = q->in;
  (void)g;
  for (size_t i = 0; i < n->n_inputs; i++)
    if (!in[i]) return false;
  return n->n_inputs >= 1 && n->n_outputs == 1 && same_float(n, in);
}

/* Mod of floats with fmod = 1 (C's fmod); fmod = 0 is an error on floats, which the CPU kernel reports. */
static bool mod_accepts(const tb_kernel_query *q) {
  const tb_graph *g = q->graph;
  const tb_node *n = q->node;
  int64_t fmod_attr = 0;
  return bin_accepts(q) && tb_attr_int(g, n, "fmod", 0, &fmod_attr) == TB_OK && fmod_attr == 1;
}

static bool clip_accepts(const tb_kernel_query *q) {
  const tb_graph *g = q->graph;
  const tb_node *n = q->node;
  const tb_value_type *const *in = q->in;
  (void)g;
  return n->n_inputs >= 1 && in[0] && n->n_outputs == 1 && same_float(n, in);
}

static bool cast_accepts(const tb_kernel_query *q) {
  const tb_graph *g = q->graph;
  const tb_node *n = q->node;
  const tb_value_type *const *in = q->in;
  const tb_attr *to = tb_node_attr(n, "to");
  (void)g;
  if (n->n_inputs != 1 || !in[0] || !in[0]->has_dtype || !tb_cl_float_type(in[0]->dtype)) return false;
  return to && to->type == TB_ATTR_INT && (to->i == ONNX_FLOAT || to->i == ONNX_FLOAT16);
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
