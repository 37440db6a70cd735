/* OpenCL kernels of the elementwise ops (float32, and float16 computed in float32): unary math and
 * activations, the broadcasting binary ops, tb::Gelu and Cast between float32 and float16. */
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
  if (strcmp(op, "LeakyRelu") == 0) s = tb_attr_float(ctx->graph, ctx->node, "alpha", 0.01f, &a);
  if (strcmp(op, "Elu") == 0) s = tb_attr_float(ctx->graph, ctx->node, "alpha", 1.0f, &a);
  if (strcmp(op, "HardSigmoid") == 0) {
    s = tb_attr_float(ctx->graph, ctx->node, "alpha", 0.2f, &a);
    if (s == TB_OK) s = tb_attr_float(ctx->graph, ctx->node, "beta", 0.5f, &b);
  }
  if (s == TB_OK) s = cl_outputs(ctx);
  if (s != TB_OK) return s;
  return cl_unary(ctx, 0, ctx->inputs[0], ctx->outputs[0], code, a, b);
}

static tb_status gelu_run(tb_kernel_ctx *ctx) {
  const char *approx = "none";
  tb_status s = tb_attr_string(ctx->graph, ctx->node, "approximate", "none", &approx);
  if (s == TB_OK) s = cl_outputs(ctx);
  if (s != TB_OK) return s;
  return cl_unary(ctx, 0, ctx->inputs[0], ctx->outputs[0], strcmp(approx, "tanh") == 0 ? 14 : 13, 0.0f, 0.0f);
}

static tb_status binary_run(tb_kernel_ctx *ctx) {
  int code = code_of(binary_ops, sizeof binary_ops / sizeof binary_ops[0], ctx->node->op_type);
  tb_status s = cl_outputs(ctx);
  if (s != TB_OK) return s;
  return cl_binary(ctx, 0, ctx->inputs[0], ctx->inputs[1], ctx->outputs[0], code);
}

static tb_status cast_run(tb_kernel_ctx *ctx) {
  tb_status s = cl_outputs(ctx);
  if (s != TB_OK) return s;
  const tb_tensor *x = ctx->inputs[0];
  tb_tensor *y = ctx->outputs[0];
  if (x->dtype == y->dtype) return cl_unary(ctx, 0, x, y, 0, 0.0f, 0.0f);
  if (tb_tensor_numel(y) == 0) return TB_OK;
  cl_launch l;
  cl_begin(&l, ctx, 0, x->dtype == TB_DTYPE_F32 ? "tb_cast_f32_f16" : "tb_cast_f16_f32");
  cl_arg_tensor(&l, x);
  cl_arg_tensor(&l, y);
  cl_arg_int(&l, tb_tensor_numel(y));
  return cl_go(&l, (size_t)tb_tensor_numel(y));
}

/* Every input float32, or every input float16. */
static bool same_float(const tb_node *n, const tb_value_type *const *in) {
  tb_dtype first = TB_DTYPE_COUNT;
  for (size_t i = 0; i < n->n_inputs; i++) {
    if (!in[i]) continue;
    if (!in[i]->has_dtype || !cl_float_type(in[i]->dtype)) return false;
    if (first == TB_DTYPE_COUNT) first = in[i]->dtype;
    if (in[i]->dtype != first) return false;
  }
  return first != TB_DTYPE_COUNT;
}

static bool ew_accepts(const tb_graph *g, const tb_node *n, const tb_value_type *const *in) {
  (void)g;
  return n->n_inputs == 1 && n->n_outputs == 1 && in[0] && same_float(n, in);
}

static bool bin_accepts(const tb_graph *g, const tb_node *n, const tb_value_type *const *in) {
  (void)g;
  return n->n_inputs == 2 && in[0] && in[1] && same_float(n, in);
}

static bool cast_accepts(const tb_graph *g, const tb_node *n, const tb_value_type *const *in) {
  const tb_attr *to = tb_node_attr(n, "to");
  (void)g;
  if (n->n_inputs != 1 || !in[0] || !in[0]->has_dtype || !cl_float_type(in[0]->dtype)) return false;
  return to && to->type == TB_ATTR_INT && (to->i == ONNX_FLOAT || to->i == ONNX_FLOAT16);
}

#define UNARY(op) CL_KERNEL("", op, ew_accepts, unary_run)
#define BINARY(op) CL_KERNEL("", op, bin_accepts, binary_run)
static const tb_cpu_kernel kernels[] = {
    UNARY("Identity"), UNARY("Relu"),  UNARY("LeakyRelu"), UNARY("Sigmoid"), UNARY("Tanh"),       UNARY("HardSigmoid"),
    UNARY("HardSwish"), UNARY("Sqrt"), UNARY("Erf"),       UNARY("Exp"),     UNARY("Neg"),        UNARY("Abs"),
    UNARY("Reciprocal"), UNARY("Log"), UNARY("Floor"),     UNARY("Ceil"),    UNARY("Elu"),        UNARY("Softplus"),
    UNARY("Sin"),       UNARY("Cos"),  BINARY("Add"),      BINARY("Sub"),    BINARY("Mul"),       BINARY("Div"),
    BINARY("Pow"),      BINARY("Max"), BINARY("Min"),
    CL_KERNEL("tb", "Gelu", ew_accepts, gelu_run),
    CL_KERNEL("", "Cast", cast_accepts, cast_run),
};
const cl_family cl_family_elementwise = {kernels, sizeof kernels / sizeof kernels[0]};
