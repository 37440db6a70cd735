/* Vulkan kernels of the elementwise ops: unary ops and activations (unary.comp, the op chosen by a
 * specialization constant), binary ops with broadcasting (binary.comp, through strides), both on fp32 and,
 * where the device has fp16 kernels (vk_state.fp16), on fp16 (the _F16 shaders); and Cast between fp32
 * and fp16 (cast.comp, on every device). */
#include <math.h>
#include <string.h>
#include "backend/vulkan/kernels/vk_kernel.h"
#include "ops/elementwise/cast.h"
#include "tensor/tensor_impl.h"

/* ---- unary ---- */

typedef struct unary_op {
  const char *domain, *name;
  uint32_t code; /* unary.comp's OP */
} unary_op;

static const unary_op unary_ops[] = {
    {"", "Identity", 0},  {"", "Relu", 1},       {"", "LeakyRelu", 2}, {"", "Sigmoid", 4},  {"", "Tanh", 5},
    {"", "HardSigmoid", 6}, {"", "HardSwish", 7}, {"", "Exp", 8},       {"", "Sqrt", 9},     {"", "Erf", 10},
    {"tb", "Gelu", 11},   {"", "Neg", 13},       {"", "Abs", 14},      {"", "Log", 15},     {"", "Reciprocal", 16},
    {"", "Floor", 17},    {"", "Ceil", 18},
};

static tb_status unary_code(const tb_kernel_ctx *ctx, uint32_t *code) {
  const tb_node *n = ctx->node;
  for (size_t i = 0; i < sizeof unary_ops / sizeof unary_ops[0]; i++)
    if (strcmp(unary_ops[i].name, n->op_type) == 0 && strcmp(unary_ops[i].domain, n->domain ? n->domain : "") == 0) {
      *code = unary_ops[i].code;
      if (*code == 11) {
        const char *approx = "none";
        tb_status st = tb_attr_string(ctx->graph, n, "approximate", "none", &approx);
        if (st != TB_OK) return st;
        if (strcmp(approx, "tanh") == 0) *code = 12;
      }
      return TB_OK;
    }
  return tb_kernel_error(ctx, TB_ERR_INTERNAL, "no Vulkan unary op for %s", n->op_type);
}

static bool unary_accepts(const tb_graph *g, const tb_node *n, const tb_value_type *const *in) {
  (void)g;
  return n->n_inputs >= 1 && n->n_outputs == 1 && vk_inputs_float(n, in, 1u);
}

/* fp16 when the graph says input 0 is fp16 (find_kernel offered the node only if the device can). */
static bool graph_f16(const tb_kernel_ctx *ctx) {
  int v = ctx->node->inputs[0];
  return v >= 0 && ctx->graph->values[v].type.has_dtype && ctx->graph->values[v].type.dtype == TB_DTYPE_F16;
}

/* The dtype the node was prepared for, checked against input 0's. */
static tb_status node_dtype(const tb_kernel_ctx *ctx, const vk_node *node, tb_dtype *out) {
  bool f16 = node->pipe->shader == TB_VK_SHADER_UNARY_F16 || node->pipe->shader == TB_VK_SHADER_BINARY_F16;
  *out = f16 ? TB_DTYPE_F16 : TB_DTYPE_F32;
  if (!ctx->inputs[0] || ctx->inputs[0]->dtype != *out)
    return tb_kernel_error(ctx, TB_ERR_INVALID_ARGUMENT, "input 0 is not %s, the type the node was prepared for", tb_dtype_name(*out));
  return TB_OK;
}

static tb_status unary_prepare(tb_kernel_ctx *ctx, void **state) {
  uint32_t code = 0;
  tb_status st = unary_code(ctx, &code);
  if (st != TB_OK) return st;
  return vk_prepare_node(ctx, graph_f16(ctx) ? TB_VK_SHADER_UNARY_F16 : TB_VK_SHADER_UNARY, &code, 1, 1, state);
}

static tb_status unary_run(tb_kernel_ctx *ctx) {
  vk_node *node;
  vk_arg x, y;
  tb_tensor *out;
  tb_dtype dt = TB_DTYPE_F32;
  tb_status st = vk_node_of(ctx, &node);
  if (st == TB_OK) st = node_dtype(ctx, node, &dt);
  if (st == TB_OK) st = vk_input(ctx, 0, dt, &x);
  if (st == TB_OK) st = vk_output(ctx, 0, dt, ctx->inputs[0]->ndim, ctx->inputs[0]->shape, &out, &y);
  float a = 0.0f, b = 0.0f;
  const char *op = ctx->node->op_type;
  if (st == TB_OK && strcmp(op, "LeakyRelu") == 0) st = tb_attr_float(ctx->graph, ctx->node, "alpha", 0.01f, &a);
  if (st == TB_OK && strcmp(op, "HardSigmoid") == 0) {
    st = tb_attr_float(ctx->graph, ctx->node, "alpha", 0.2f, &a);
    if (st == TB_OK) st = tb_attr_float(ctx->graph, ctx->node, "beta", 0.5f, &b);
  }
  if (st != TB_OK) return st;
  struct {
    uint32_t n, x_off, y_off;
    float a, b;
  } push = {(uint32_t)out->numel, x.offset, y.offset, a, b};
  uint32_t gx, gy;
  vk_groups((uint64_t)out->numel, 256, &gx, &gy);
  tb_vk_buffer buffers[2] = {x.buffer, y.buffer};
  return vk_node_dispatch(node, 0, buffers, 2, &push, sizeof push, gx, gy, 1);
}

#define UNARY(sym, dom, opname) \
  const tb_cpu_kernel sym = {dom, opname, 0, 0, unary_accepts, unary_run, unary_prepare, vk_release_node, NULL};
UNARY(tb_vk_kernel_identity, "", "Identity")
UNARY(tb_vk_kernel_relu, "", "Relu")
UNARY(tb_vk_kernel_leakyrelu, "", "LeakyRelu")
UNARY(tb_vk_kernel_sigmoid, "", "Sigmoid")
UNARY(tb_vk_kernel_tanh, "", "Tanh")
UNARY(tb_vk_kernel_hardsigmoid, "", "HardSigmoid")
UNARY(tb_vk_kernel_hardswish, "", "HardSwish")
UNARY(tb_vk_kernel_exp, "", "Exp")
UNARY(tb_vk_kernel_sqrt, "", "Sqrt")
UNARY(tb_vk_kernel_erf, "", "Erf")
UNARY(tb_vk_kernel_gelu, "tb", "Gelu")
UNARY(tb_vk_kernel_neg, "", "Neg")
UNARY(tb_vk_kernel_abs, "", "Abs")
UNARY(tb_vk_kernel_log, "", "Log")
UNARY(tb_vk_kernel_reciprocal, "", "Reciprocal")
UNARY(tb_vk_kernel_floor, "", "Floor")
UNARY(tb_vk_kernel_ceil, "", "Ceil")

/* ---- binary with broadcasting ---- */

static uint32_t binary_code(const char *op) {
  static const char *const names[] = {"Add", "Sub", "Mul", "Div", "Pow", "Max", "Min"};
  for (uint32_t i = 0; i < 7; i++)
    if (strcmp(op, names[i]) == 0) return i;
  return 0;
}

static bool binary_accepts(const tb_graph *g, const tb_node *n, const tb_value_type *const *in) {
  (void)g;
  return n->n_inputs == 2 && n->n_outputs == 1 && vk_inputs_float(n, in, 3u);
}

static tb_status binary_prepare(tb_kernel_ctx *ctx, void **state) {
  uint32_t code = binary_code(ctx->node->op_type);
  return vk_prepare_node(ctx, graph_f16(ctx) ? TB_VK_SHADER_BINARY_F16 : TB_VK_SHADER_BINARY, &code, 1, 1, state);
}

/* Strides of `t` seen with the output's rank (aligned right; 0 where broadcast). */
static void broadcast_strides(const tb_tensor *t, size_t rank, const int64_t *shape, uint32_t *strides) {
  for (size_t d = 0; d < rank; d++) {
    size_t lead = rank - t->ndim;
    if (d < lead) {
      strides[d] = 0;
      continue;
    }
    size_t k = d - lead;
    strides[d] = t->shape[k] == 1 && shape[d] != 1 ? 0 : (uint32_t)t->strides[k];
  }
}

static tb_status binary_run(tb_kernel_ctx *ctx) {
  vk_node *node;
  tb_status st = vk_node_of(ctx, &node);
  if (st != TB_OK) return st;
  const tb_tensor *a = ctx->inputs[0], *b = ctx->inputs[1];
  tb_dtype dt = TB_DTYPE_F32;
  if (!a || !b) return tb_kernel_error(ctx, TB_ERR_INVALID_ARGUMENT, "an input is missing");
  st = node_dtype(ctx, node, &dt);
  if (st != TB_OK) return st;
  if (b->dtype != dt) return tb_kernel_error(ctx, TB_ERR_INVALID_ARGUMENT, "the inputs are %s and %s", tb_dtype_name(a->dtype), tb_dtype_name(b->dtype));
  size_t rank = a->ndim > b->ndim ? a->ndim : b->ndim;
  if (rank > VK_MAX_RANK) return tb_kernel_error(ctx, TB_ERR_UNSUPPORTED, "rank %zu is over the Vulkan kernels' %d", rank, VK_MAX_RANK);
  int64_t shape[VK_MAX_RANK];
  for (size_t d = 0; d < rank; d++) {
    int64_t da = d + a->ndim >= rank ? a->shape[d + a->ndim - rank] : 1;
    int64_t db = d + b->ndim >= rank ? b->shape[d + b->ndim - rank] : 1;
    if (da != db && da != 1 && db != 1)
      return tb_kernel_error(ctx, TB_ERR_INVALID_ARGUMENT, "shapes do not broadcast: dimension %zu is %lld and %lld", d, (long long)da,
                             (long long)db);
    shape[d] = da == 1 ? db : da;
  }
  vk_arg xa, xb, y;
  tb_tensor *out;
  st = vk_arg_of(ctx, a, "input 0", tb_dtype_size(dt), &xa);
  if (st == TB_OK) st = vk_arg_of(ctx, b, "input 1", tb_dtype_size(dt), &xb);
  if (st == TB_OK) st = vk_output(ctx, 0, dt, rank, shape, &out, &y);
  if (st != TB_OK) return st;
  struct {
    uint32_t n, rank, a_off, b_off, y_off;
    uint32_t shape[6], as[6], bs[6];
  } push;
  memset(&push, 0, sizeof push);
  push.n = (uint32_t)out->numel;
  push.rank = (uint32_t)rank;
  push.a_off = xa.offset;
  push.b_off = xb.offset;
  push.y_off = y.offset;
  for (size_t d = 0; d < rank; d++) push.shape[d] = (uint32_t)shape[d];
  broadcast_strides(a, rank, shape, push.as);
  broadcast_strides(b, rank, shape, push.bs);
  uint32_t gx, gy;
  vk_groups((uint64_t)out->numel, 256, &gx, &gy);
  tb_vk_buffer buffers[3] = {xa.buffer, xb.buffer, y.buffer};
  return vk_node_dispatch(node, 0, buffers, 3, &push, sizeof push, gx, gy, 1);
}

#define BINARY(sym, opname) \
  const tb_cpu_kernel sym = {"", opname, 0, 0, binary_accepts, binary_run, binary_prepare, vk_release_node, NULL};
BINARY(tb_vk_kernel_add, "Add")
BINARY(tb_vk_kernel_sub, "Sub")
BINARY(tb_vk_kernel_mul, "Mul")
BINARY(tb_vk_kernel_div, "Div")
BINARY(tb_vk_kernel_pow, "Pow")
BINARY(tb_vk_kernel_max, "Max")
BINARY(tb_vk_kernel_min, "Min")

/* ---- Cast fp32 <-> fp16 ---- */

static bool cast_mode(const tb_graph *g, const tb_node *n, tb_dtype from, uint32_t *mode) {
  tb_dtype dst;
  if (tb_cast_target(g, n, &dst) != TB_OK) return false;
  if (from == TB_DTYPE_F32 && dst == TB_DTYPE_F16) *mode = 0;
  else if (from == TB_DTYPE_F16 && dst == TB_DTYPE_F32) *mode = 1;
  else return false;
  return true;
}

static bool cast_accepts(const tb_graph *g, const tb_node *n, const tb_value_type *const *in) {
  uint32_t mode;
  return n->n_inputs == 1 && in && in[0] && in[0]->has_dtype && cast_mode(g, n, in[0]->dtype, &mode);
}

static tb_status cast_prepare(tb_kernel_ctx *ctx, void **state) {
  const tb_value_type *t = &ctx->graph->values[ctx->node->inputs[0]].type;
  uint32_t mode = 0;
  if (!t->has_dtype || !cast_mode(ctx->graph, ctx->node, t->dtype, &mode))
    return tb_kernel_error(ctx, TB_ERR_UNSUPPORTED, "the Vulkan Cast converts float32 <-> float16 only");
  return vk_prepare_node(ctx, TB_VK_SHADER_CAST, &mode, 1, 1, state);
}

static tb_status cast_run(tb_kernel_ctx *ctx) {
  vk_node *node;
  tb_status st = vk_node_of(ctx, &node);
  const tb_tensor *x = ctx->inputs[0];
  uint32_t mode = 0;
  if (st == TB_OK && (!x || !cast_mode(ctx->graph, ctx->node, x->dtype, &mode)))
    st = tb_kernel_error(ctx, TB_ERR_UNSUPPORTED, "the Vulkan Cast converts float32 <-> float16 only");
  vk_arg xa, y;
  tb_tensor *out;
  if (st == TB_OK) st = vk_input(ctx, 0, x->dtype, &xa);
  if (st == TB_OK) st = vk_output(ctx, 0, mode == 0 ? TB_DTYPE_F16 : TB_DTYPE_F32, x->ndim, x->shape, &out, &y);
  if (st != TB_OK) return st;
  struct {
    uint32_t n, x_off, y_off;
  } push = {(uint32_t)out->numel, xa.offset, y.offset};
  uint64_t items = mode == 0 && out->numel ? (y.offset + (uint64_t)out->numel - 1) / 2 - y.offset / 2 + 1 : (uint64_t)out->numel;
  uint32_t gx, gy;
  vk_groups(items, 256, &gx, &gy);
  tb_vk_buffer buffers[2] = {xa.buffer, y.buffer};
  return vk_node_dispatch(node, 0, buffers, 2, &push, sizeof push, gx, gy, 1);
}

const tb_cpu_kernel tb_vk_kernel_cast = {"", "Cast", 0, 0, cast_accepts, cast_run, cast_prepare, vk_release_node, NULL};
