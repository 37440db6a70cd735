/* Vulkan kernels of the elementwise ops: unary ops and activations (unary.comp, the op chosen by a
 * specialization constant), binary ops with broadcasting (binary.comp, through strides), both on fp32 and,
 * where the device has fp16 kernels (vk_state.fp16), on fp16 (the _F16 shaders); and Cast between fp32
 * and fp16 (cast.comp, on every device). */
#include <math.h>
#include <string.h>
#include "backend/vulkan/kernels/vk_kernel.h"
#include "backend/kernel_params.h"
#include "ops/elementwise/ew_params.h"
#include "ops/fused/fused_params.h"
#include "backend/tensor/tensor_impl.h"

/* ---- unary ---- */

typedef struct unary_op {
  const char *domain, *name;
  uint32_t code; /* unary.comp's OP */
} unary_op;

static const unary_op unary_ops[] = {
    {"", "Identity", 0},  {"", "Relu", 1},       {"", "LeakyRelu", 2}, {"", "Sigmoid", 4},  {"", "Tanh", 5},
    {"", "HardSigmoid", 6}, {"", "HardSwish", 7}, {"", "Exp", 8},       {"", "Sqrt", 9},     {"", "Erf", 10},
    {"tb", "Gelu", 11},   {"", "Neg", 13},       {"", "Abs", 14},      {"", "Log", 15},     {"", "Reciprocal", 16},
    {"", "Floor", 17},    {"", "Ceil", 18},      {"", "Sin", 19},      {"", "Cos", 20},     {"", "Tan", 21},
    {"", "Asin", 22},     {"", "Acos", 23},      {"", "Atan", 24},     {"", "Sinh", 25},    {"", "Cosh", 26},
    {"", "Asinh", 27},    {"", "Acosh", 28},     {"", "Atanh", 29},    {"", "Elu", 30},     {"", "Selu", 31},
    {"", "Celu", 32},     {"", "Softplus", 33},  {"", "Softsign", 34}, {"", "ThresholdedRelu", 35},
    {"", "Sign", 36},     {"", "Round", 37},     {"", "Shrink", 38},   {"", "Clip", 3}, /* Clip-6: min, max attributes */
};

/* The push constants a and b of the ops with parameters: an activation's (tb_act_params: alpha and beta,
 * Selu's alpha and gamma, Shrink's lambd and bias) and Clip-6's min and max (tb_clip_params). */
static void unary_params(const tb_kernel_ctx *ctx, float *a, float *b) {
  const char *op = ctx->op_type;
  if (!ctx->params) return;
  if (strcmp(op, "Clip") == 0) {
    const tb_clip_params *c = ctx->params;
    *a = c->min, *b = c->max;
    return;
  }
  const tb_act_params *p = ctx->params;
  if (strcmp(op, "Shrink") == 0) *a = p->beta, *b = p->alpha;
  else if (strcmp(op, "Selu") == 0) *a = p->alpha, *b = p->gamma;
  else *a = p->alpha, *b = p->beta;
}

static tb_status unary_code(const tb_kernel_ctx *ctx, uint32_t *code) {
  for (size_t i = 0; i < sizeof unary_ops / sizeof unary_ops[0]; i++)
    if (strcmp(unary_ops[i].name, ctx->op_type) == 0 && strcmp(unary_ops[i].domain, ctx->domain ? ctx->domain : "") == 0) {
      *code = unary_ops[i].code;
      if (*code == 11) { /* tb::Gelu */
        tb_status st;
        const tb_gelu_params *p = tb_kernel_params(ctx, &st);
        if (!p) return st;
        if (p->tanh) *code = 12;
      }
      return TB_OK;
    }
  return tb_kernel_error(ctx, TB_ERR_INTERNAL, "no Vulkan unary op for %s", ctx->op_type);
}

static bool unary_accepts(const tb_kernel_query *q) {
  return q->n_inputs >= 1 && q->n_outputs == 1 && tb_vk_query_float(q, 1u);
}

/* fp16 when inference says input 0 is fp16 (find_kernel offered the node only if the device can). */
static bool graph_f16(const tb_kernel_ctx *ctx) {
  const tb_value_type *t = ctx->in_types && ctx->n_inputs ? ctx->in_types[0] : NULL;
  return t && t->has_dtype && t->dtype == TB_DTYPE_F16;
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
  return tb_vk_prepare_node(ctx, graph_f16(ctx) ? TB_VK_SHADER_UNARY_F16 : TB_VK_SHADER_UNARY, &code, 1, 1, state);
}

static tb_status unary_run(tb_kernel_ctx *ctx) {
  vk_node *node;
  vk_arg x, y;
  tb_tensor *out;
  tb_dtype dt = TB_DTYPE_F32;
  tb_status st = tb_vk_node_of(ctx, &node);
  if (st == TB_OK) st = node_dtype(ctx, node, &dt);
  if (st == TB_OK) st = tb_vk_input(ctx, 0, dt, &x);
  if (st == TB_OK) st = tb_vk_output(ctx, 0, dt, ctx->inputs[0]->ndim, ctx->inputs[0]->shape, &out, &y);
  float a = 0.0f, b = 0.0f;
  unary_params(ctx, &a, &b);
  if (st != TB_OK) return st;
  struct {
    uint32_t n, x_off, y_off;
    float a, b;
  } push = {(uint32_t)out->numel, x.offset, y.offset, a, b};
  uint32_t gx, gy;
  tb_vk_groups((uint64_t)out->numel, 256, &gx, &gy);
  tb_vk_buffer buffers[2] = {x.buffer, y.buffer};
  return tb_vk_node_dispatch(node, 0, buffers, 2, &push, sizeof push, gx, gy, 1);
}

/* Clip before opset 11 (min and max as attributes); from 11 on, the multi-input kernel below. */
static bool clip_attr_accepts(const tb_kernel_query *q) {
  const tb_clip_params *p = q->params;
  return p && p->attr_form && unary_accepts(q);
}
const tb_kernel tb_vk_kernel_clip_attr = {"", "Clip", TB_KERNEL_REFERENCE, 0, clip_attr_accepts, unary_run, unary_prepare, tb_vk_release_node, NULL};

#define UNARY(sym, dom, opname) \
  const tb_kernel sym = {dom, opname, TB_KERNEL_REFERENCE, 0, unary_accepts, unary_run, unary_prepare, tb_vk_release_node, NULL};
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
UNARY(tb_vk_kernel_sin, "", "Sin")
UNARY(tb_vk_kernel_cos, "", "Cos")
UNARY(tb_vk_kernel_tan, "", "Tan")
UNARY(tb_vk_kernel_asin, "", "Asin")
UNARY(tb_vk_kernel_acos, "", "Acos")
UNARY(tb_vk_kernel_atan, "", "Atan")
UNARY(tb_vk_kernel_sinh, "", "Sinh")
UNARY(tb_vk_kernel_cosh, "", "Cosh")
UNARY(tb_vk_kernel_asinh, "", "Asinh")
UNARY(tb_vk_kernel_acosh, "", "Acosh")
UNARY(tb_vk_kernel_atanh, "", "Atanh")
UNARY(tb_vk_kernel_elu, "", "Elu")
UNARY(tb_vk_kernel_selu, "", "Selu")
UNARY(tb_vk_kernel_celu, "", "Celu")
UNARY(tb_vk_kernel_softplus, "", "Softplus")
UNARY(tb_vk_kernel_softsign, "", "Softsign")
UNARY(tb_vk_kernel_thresholded_relu, "", "ThresholdedRelu")
UNARY(tb_vk_kernel_sign, "", "Sign")
UNARY(tb_vk_kernel_round, "", "Round")
UNARY(tb_vk_kernel_shrink, "", "Shrink")

/* ---- binary with broadcasting ---- */

enum { OP_ADD = 0, OP_MAX = 5, OP_MIN = 6, OP_PRELU = 7, OP_COPY = 8, OP_SCALE = 9, OP_DYNAMIC = 15 };

static uint32_t binary_code(const char *op) {
  static const char *const names[] = {"Add", "Sub", "Mul", "Div", "Pow", "Max", "Min", "PRelu"};
  for (uint32_t i = 0; i < 8; i++)
    if (strcmp(op, names[i]) == 0) return i;
  return 0;
}

static bool binary_accepts(const tb_kernel_query *q) {
  return q->n_inputs == 2 && q->n_outputs == 1 && tb_vk_query_float(q, 3u);
}

static tb_status binary_prepare(tb_kernel_ctx *ctx, void **state) {
  uint32_t code = binary_code(ctx->op_type);
  return tb_vk_prepare_node(ctx, graph_f16(ctx) ? TB_VK_SHADER_BINARY_F16 : TB_VK_SHADER_BINARY, &code, 1, 1, state);
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

/* Grow the broadcast shape (rank *rank, right-aligned) by input t. */
static tb_status broadcast_with(const tb_kernel_ctx *ctx, const tb_tensor *t, size_t *rank, int64_t *shape) {
  if (t->ndim > VK_MAX_RANK) return tb_kernel_error(ctx, TB_ERR_UNSUPPORTED, "rank %zu is over the Vulkan kernels' %d", t->ndim, VK_MAX_RANK);
  if (t->ndim > *rank) {
    size_t grow = t->ndim - *rank;
    memmove(shape + grow, shape, *rank * sizeof *shape);
    for (size_t d = 0; d < grow; d++) shape[d] = 1;
    *rank = t->ndim;
  }
  for (size_t d = 0; d < *rank; d++) {
    int64_t dt = d + t->ndim >= *rank ? t->shape[d + t->ndim - *rank] : 1;
    if (dt != shape[d] && dt != 1 && shape[d] != 1)
      return tb_kernel_error(ctx, TB_ERR_INVALID_ARGUMENT, "shapes do not broadcast: dimension %zu is %lld and %lld", d, (long long)shape[d],
                             (long long)dt);
    if (shape[d] == 1) shape[d] = dt;
  }
  return TB_OK;
}

/* One dispatch of descriptor set `set`: out = a `code` b, a and b broadcast to out's shape (rank, shape). */
static tb_status binary_dispatch(tb_kernel_ctx *ctx, vk_node *node, uint32_t set, uint32_t code, float scale, const tb_tensor *a,
                                 const tb_tensor *b, const tb_tensor *out, size_t rank, const int64_t *shape) {
  size_t unit = tb_dtype_size(out->dtype);
  vk_arg xa, xb, y;
  tb_status st = tb_vk_arg_of(ctx, a, "input", unit, &xa);
  if (st == TB_OK) st = tb_vk_arg_of(ctx, b, "input", unit, &xb);
  if (st == TB_OK) st = tb_vk_arg_of(ctx, out, "output 0", unit, &y);
  if (st != TB_OK) return st;
  struct {
    uint32_t n, rank, a_off, b_off, y_off;
    uint32_t shape[6], as[6], bs[6];
    uint32_t op;
    float s;
  } push;
  memset(&push, 0, sizeof push);
  push.n = (uint32_t)out->numel;
  push.rank = (uint32_t)rank;
  push.a_off = xa.offset;
  push.b_off = xb.offset;
  push.y_off = y.offset;
  push.op = code;
  push.s = scale;
  for (size_t d = 0; d < rank; d++) push.shape[d] = (uint32_t)shape[d];
  broadcast_strides(a, rank, shape, push.as);
  broadcast_strides(b, rank, shape, push.bs);
  uint32_t gx, gy;
  tb_vk_groups((uint64_t)out->numel, 256, &gx, &gy);
  tb_vk_buffer buffers[3] = {xa.buffer, xb.buffer, y.buffer};
  return tb_vk_node_dispatch(node, set, buffers, 3, &push, sizeof push, gx, gy, 1);
}

/* The operands ins[0..n) present, of the node's dtype, their broadcast shape and the output. */
static tb_status operands(tb_kernel_ctx *ctx, const vk_node *node, const tb_tensor *const *ins, size_t n, size_t *rank, int64_t *shape,
                          tb_tensor **out) {
  tb_dtype dt = TB_DTYPE_F32;
  tb_status st = node_dtype(ctx, node, &dt);
  *rank = 0;
  for (size_t i = 0; i < n && st == TB_OK; i++) {
    const tb_tensor *t = ins[i];
    if (!t) continue;
    if (t->dtype != dt) return tb_kernel_error(ctx, TB_ERR_INVALID_ARGUMENT, "input %zu is %s, input 0 %s", i, tb_dtype_name(t->dtype), tb_dtype_name(dt));
    st = broadcast_with(ctx, t, rank, shape);
  }
  vk_arg y;
  if (st == TB_OK) st = tb_vk_output(ctx, 0, dt, *rank, shape, out, &y);
  return st;
}

static tb_status binary_run(tb_kernel_ctx *ctx) {
  vk_node *node;
  tb_status st = tb_vk_node_of(ctx, &node);
  if (st != TB_OK) return st;
  const tb_tensor *a = ctx->inputs[0], *b = ctx->inputs[1];
  if (!a || !b) return tb_kernel_error(ctx, TB_ERR_INVALID_ARGUMENT, "an input is missing");
  /* PRelu before opset 7: a 1-D slope of X's channel count runs along dim 1, seen as [C, 1, ..., 1] */
  tb_tensor per_channel;
  if (strcmp(ctx->op_type, "PRelu") == 0 && ctx->opset < 7 && b->ndim == 1 && a->ndim >= 2 && b->shape[0] == a->shape[1] &&
      b->shape[0] != 1) {
    per_channel = *b;
    per_channel.ndim = a->ndim - 1;
    for (size_t d = 1; d < per_channel.ndim; d++) {
      per_channel.shape[d] = 1;
      per_channel.strides[d] = 1;
    }
    b = &per_channel;
  }
  const tb_tensor *ins[2] = {a, b};
  size_t rank;
  int64_t shape[VK_MAX_RANK];
  tb_tensor *out;
  st = operands(ctx, node, ins, 2, &rank, shape, &out);
  if (st != TB_OK || out->numel == 0) return st;
  return binary_dispatch(ctx, node, 0, binary_code(ctx->op_type), 0.0f, a, b, out, rank, shape);
}

#define BINARY(sym, opname) \
  const tb_kernel sym = {"", opname, TB_KERNEL_REFERENCE, 0, binary_accepts, binary_run, binary_prepare, tb_vk_release_node, NULL};
BINARY(tb_vk_kernel_add, "Add")
BINARY(tb_vk_kernel_sub, "Sub")
BINARY(tb_vk_kernel_mul, "Mul")
BINARY(tb_vk_kernel_div, "Div")
BINARY(tb_vk_kernel_pow, "Pow")
BINARY(tb_vk_kernel_max, "Max")
BINARY(tb_vk_kernel_min, "Min")
BINARY(tb_vk_kernel_prelu, "PRelu")

/* ---- Sum, Mean, Max, Min of any number of inputs; Clip with min / max inputs (opset >= 11) ----
 * One pipeline (binary.comp with the op pushed), one descriptor set per step: out = in0 op in1, then
 * out = out op in_k in place (each invocation reads and writes its own element; the dispatches are
 * separated by barriers); Mean scales by 1/n last; Clip is max(x, min) then min(., max). */

static bool nary_accepts(const tb_kernel_query *q) {
  if (q->n_inputs < 1 || q->n_inputs > 32 || q->n_outputs != 1 || !q->in[0]) return false;
  const tb_clip_params *clip = strcmp(q->op_type, "Clip") == 0 ? q->params : NULL;
  if (clip && clip->attr_form) return false; /* min / max attributes: the unary kernel */
  return tb_vk_query_float(q, q->n_inputs >= 32 ? UINT32_MAX : (1u << q->n_inputs) - 1u);
}

static tb_status nary_prepare(tb_kernel_ctx *ctx, void **state) {
  uint32_t code = OP_DYNAMIC;
  return tb_vk_prepare_node(ctx, graph_f16(ctx) ? TB_VK_SHADER_BINARY_F16 : TB_VK_SHADER_BINARY, &code, 1,
                         (uint32_t)ctx->n_inputs + 1u, state);
}

static tb_status nary_run(tb_kernel_ctx *ctx) {
  vk_node *node;
  tb_status st = tb_vk_node_of(ctx, &node);
  if (st != TB_OK) return st;
  if (!ctx->inputs[0]) return tb_kernel_error(ctx, TB_ERR_INVALID_ARGUMENT, "input 0 is missing");
  size_t rank;
  int64_t shape[VK_MAX_RANK];
  tb_tensor *out;
  st = operands(ctx, node, (const tb_tensor *const *)ctx->inputs, ctx->n_inputs, &rank, shape, &out);
  if (st != TB_OK || out->numel == 0) return st;
  const char *op = ctx->op_type;
  bool clip = strcmp(op, "Clip") == 0;
  uint32_t code = strcmp(op, "Max") == 0 ? OP_MAX : strcmp(op, "Min") == 0 ? OP_MIN : OP_ADD;
  uint32_t set = 0;
  const tb_tensor *acc = ctx->inputs[0];
  for (size_t i = 1; i < ctx->n_inputs && st == TB_OK; i++) {
    if (!ctx->inputs[i]) continue;
    if (clip) code = i == 1 ? OP_MAX : OP_MIN;
    st = binary_dispatch(ctx, node, set++, code, 0.0f, acc, ctx->inputs[i], out, rank, shape);
    acc = out;
  }
  if (st == TB_OK && set == 0) st = binary_dispatch(ctx, node, set++, OP_COPY, 0.0f, acc, acc, out, rank, shape);
  if (st == TB_OK && strcmp(op, "Mean") == 0)
    st = binary_dispatch(ctx, node, set, OP_SCALE, 1.0f / (float)ctx->n_inputs, out, out, out, rank, shape);
  return st;
}

#define NARY(sym, opname) const tb_kernel sym = {"", opname, TB_KERNEL_REFERENCE, 0, nary_accepts, nary_run, nary_prepare, tb_vk_release_node, NULL};
NARY(tb_vk_kernel_sum, "Sum")
NARY(tb_vk_kernel_mean, "Mean")
NARY(tb_vk_kernel_max_n, "Max")
NARY(tb_vk_kernel_min_n, "Min")
NARY(tb_vk_kernel_clip, "Clip")

/* ---- Cast fp32 <-> fp16 ---- */

/* The shader's mode for a cast of `from` to the node's destination: 0 fp32 -> fp16, 1 fp16 -> fp32. */
static bool cast_mode(const tb_cast_params *p, tb_dtype from, uint32_t *mode) {
  if (!p) return false;
  if (from == TB_DTYPE_F32 && p->to == TB_DTYPE_F16) *mode = 0;
  else if (from == TB_DTYPE_F16 && p->to == TB_DTYPE_F32) *mode = 1;
  else return false;
  return true;
}

static bool cast_accepts(const tb_kernel_query *q) {
  uint32_t mode;
  return q->n_inputs == 1 && q->in && q->in[0] && q->in[0]->has_dtype && cast_mode(q->params, q->in[0]->dtype, &mode);
}

static tb_status cast_prepare(tb_kernel_ctx *ctx, void **state) {
  const tb_value_type *t = ctx->in_types && ctx->n_inputs ? ctx->in_types[0] : NULL;
  uint32_t mode = 0;
  if (!t || !t->has_dtype || !cast_mode(ctx->params, t->dtype, &mode))
    return tb_kernel_error(ctx, TB_ERR_UNSUPPORTED, "the Vulkan Cast converts float32 <-> float16 only");
  return tb_vk_prepare_node(ctx, TB_VK_SHADER_CAST, &mode, 1, 1, state);
}

static tb_status cast_run(tb_kernel_ctx *ctx) {
  vk_node *node;
  tb_status st = tb_vk_node_of(ctx, &node);
  const tb_tensor *x = ctx->inputs[0];
  uint32_t mode = 0;
  if (st == TB_OK && (!x || !cast_mode(ctx->params, x->dtype, &mode)))
    st = tb_kernel_error(ctx, TB_ERR_UNSUPPORTED, "the Vulkan Cast converts float32 <-> float16 only");
  vk_arg xa, y;
  tb_tensor *out;
  if (st == TB_OK) st = tb_vk_input(ctx, 0, x->dtype, &xa);
  if (st == TB_OK) st = tb_vk_output(ctx, 0, mode == 0 ? TB_DTYPE_F16 : TB_DTYPE_F32, x->ndim, x->shape, &out, &y);
  if (st != TB_OK) return st;
  struct {
    uint32_t n, x_off, y_off;
  } push = {(uint32_t)out->numel, xa.offset, y.offset};
  uint64_t items = mode == 0 && out->numel ? (y.offset + (uint64_t)out->numel - 1) / 2 - y.offset / 2 + 1 : (uint64_t)out->numel;
  uint32_t gx, gy;
  tb_vk_groups(items, 256, &gx, &gy);
  tb_vk_buffer buffers[2] = {xa.buffer, y.buffer};
  return tb_vk_node_dispatch(node, 0, buffers, 2, &push, sizeof push, gx, gy, 1);
}

const tb_kernel tb_vk_kernel_cast = {"", "Cast", TB_KERNEL_REFERENCE, 0, cast_accepts, cast_run, cast_prepare, tb_vk_release_node, NULL};
