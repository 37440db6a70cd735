/* Vulkan kernels of the row-wise reductions on fp32: Softmax and LogSoftmax (softmax.comp), layer
 * normalization (layernorm.comp; ONNX opset 17 and tb::LayerNormalization, with Mean and InvStdDev) and
 * InstanceNormalization (the same shader, scale and bias per row), ReduceMean / ReduceSum / ReduceMax /
 * ReduceMin / ReduceSumSquare / ReduceL1 / ReduceL2 / ReduceLogSumExp / ReduceProd over any set of axes
 * (reduce.comp), and tb::Attention without a mask (attention.comp). Each uses the _SG shader variant
 * (subgroup arithmetic) when the device reports it, chosen at prepare. */
#include <string.h>
#include "backend/vulkan/kernels/vk_kernel.h"
#include "backend/kernel_params.h"
#include "ops/fused/fused_params.h"
#include "backend/tensor/tensor_impl.h"
#include "ops/nn/reduce.h"

static tb_vk_shader_id variant(tb_kernel_ctx *ctx, tb_vk_shader_id plain, tb_vk_shader_id subgroup) {
  return tb_vk_use_subgroups(tb_vk_ctx_state(ctx)) ? subgroup : plain;
}

static int64_t prod(const int64_t *dims, size_t from, size_t to) {
  int64_t p = 1;
  for (size_t d = from; d < to; d++) p *= dims[d];
  return p;
}

static tb_status norm_axis(tb_kernel_ctx *ctx, int64_t axis, size_t ndim, size_t *out) {
  if (axis < -(int64_t)ndim || axis >= (int64_t)ndim || ndim == 0)
    return tb_kernel_error(ctx, TB_ERR_MODEL, "axis %lld is out of range for rank %zu", (long long)axis, ndim);
  *out = (size_t)(axis < 0 ? axis + (int64_t)ndim : axis);
  return TB_OK;
}

static bool f32_in0(const tb_kernel_query *q) {
  return q->n_inputs >= 1 && q->in[0] && tb_vk_query_f32(q, 1u);
}

/* ---- Softmax, LogSoftmax ---- */

static tb_status softmax_prepare(tb_kernel_ctx *ctx, void **state) {
  tb_vk_shader_id id = variant(ctx, TB_VK_SHADER_SOFTMAX, TB_VK_SHADER_SOFTMAX_SG);
  return tb_vk_prepare_node(ctx, id, NULL, 0, 1, state);
}

static tb_status softmax_run(tb_kernel_ctx *ctx) {
  vk_node *node;
  vk_arg x, y;
  tb_status st = tb_vk_node_of(ctx, &node);
  if (st == TB_OK) st = tb_vk_input(ctx, 0, TB_DTYPE_F32, &x);
  if (st != TB_OK) return st;
  const tb_tensor *t = ctx->inputs[0];
  const tb_softmax_params *pb = tb_kernel_params(ctx, &st);
  if (!pb) return st;
  bool old = pb->flatten;
  int64_t axis_attr = pb->axis;
  size_t axis = 0;
  if (st == TB_OK && t->ndim == 0) return tb_kernel_error(ctx, TB_ERR_INVALID_ARGUMENT, "Softmax of a scalar");
  if (st == TB_OK) st = norm_axis(ctx, axis_attr, t->ndim, &axis);
  tb_tensor *out;
  if (st == TB_OK) st = tb_vk_output(ctx, 0, TB_DTYPE_F32, t->ndim, t->shape, &out, &y);
  if (st != TB_OK || out->numel == 0) return st;
  int64_t outer = prod(t->shape, 0, axis);
  int64_t cols = old ? prod(t->shape, axis, t->ndim) : t->shape[axis];
  int64_t inner = old ? 1 : prod(t->shape, axis + 1, t->ndim);
  struct {
    uint32_t rows, cols, inner, x_off, y_off, log_softmax;
  } p = {(uint32_t)(outer * inner), (uint32_t)cols, (uint32_t)inner, x.offset, y.offset, pb->kind == TB_LOG_SOFTMAX};
  uint32_t gx, gy;
  tb_vk_groups((uint64_t)p.rows, 1, &gx, &gy);
  tb_vk_buffer buffers[2] = {x.buffer, y.buffer};
  return tb_vk_node_dispatch(node, 0, buffers, 2, &p, sizeof p, gx, gy, 1);
}

const tb_kernel tb_vk_kernel_softmax = {"", "Softmax", TB_KERNEL_REFERENCE, 0, f32_in0, softmax_run, softmax_prepare, tb_vk_release_node, NULL};
const tb_kernel tb_vk_kernel_logsoftmax = {"", "LogSoftmax", TB_KERNEL_REFERENCE, 0, f32_in0, softmax_run, softmax_prepare, tb_vk_release_node, NULL};

/* ---- LayerNormalization ---- */

static bool ln_accepts(const tb_kernel_query *q) {
  return q->n_inputs >= 2 && q->in[0] && q->in[1] && q->n_outputs <= 3 && tb_vk_query_f32(q, 7u);
}

/* Bit 0: the node uses its Mean output, bit 1: its InvStdDev output. */
static uint32_t ln_stats(const tb_norm_params *p) { return (p->mean_output ? 1u : 0u) | (p->inv_std_output ? 2u : 0u); }

static tb_status ln_prepare(tb_kernel_ctx *ctx, void **state) {
  tb_status st;
  const tb_norm_params *pb = tb_kernel_params(ctx, &st);
  if (st != TB_OK) return st;
  uint32_t spec[2] = {ctx->in_types && ctx->n_inputs > 2 && ctx->in_types[2], ln_stats(pb)};
  tb_vk_shader_id id = variant(ctx, TB_VK_SHADER_LAYERNORM, TB_VK_SHADER_LAYERNORM_SG);
  return tb_vk_prepare_node(ctx, id, spec, 2, 1, state);
}

static tb_status ln_run(tb_kernel_ctx *ctx) {
  vk_node *node;
  vk_arg x, s, b = {0, 0}, y;
  tb_status st = tb_vk_node_of(ctx, &node);
  bool has_b = ctx->n_inputs > 2 && ctx->inputs[2];
  if (st == TB_OK) st = tb_vk_input(ctx, 0, TB_DTYPE_F32, &x);
  if (st == TB_OK) st = tb_vk_input(ctx, 1, TB_DTYPE_F32, &s);
  if (st == TB_OK && has_b) st = tb_vk_input(ctx, 2, TB_DTYPE_F32, &b);
  if (st != TB_OK) return st;
  const tb_tensor *t = ctx->inputs[0];
  const tb_norm_params *pb = tb_kernel_params(ctx, &st);
  if (!pb) return st;
  size_t axis = 0;
  /* InstanceNormalization: rows (n, c) over the spatial dimensions, scale and bias per channel */
  bool instance = pb->kind == TB_NORM_INSTANCE;
  if (instance && t->ndim < 3) return tb_kernel_error(ctx, TB_ERR_MODEL, "the input has rank %zu; N x C x D1 ... expected", t->ndim);
  int64_t axis_attr = instance ? 2 : pb->axis;
  float eps = pb->epsilon;
  st = norm_axis(ctx, axis_attr, t->ndim, &axis);
  if (st != TB_OK) return st;
  int64_t cols = prod(t->shape, axis, t->ndim), sn = ctx->inputs[1]->numel, bn = has_b ? ctx->inputs[2]->numel : 1;
  if (instance && (sn != t->shape[1] || bn != t->shape[1]))
    return tb_kernel_error(ctx, TB_ERR_MODEL, "scale (%lld values) and B (%lld) need one value per channel (%lld)", (long long)sn, (long long)bn,
                           (long long)t->shape[1]);
  if (!instance && (sn < 1 || cols % sn || (has_b && (bn < 1 || cols % bn))))
    return tb_kernel_error(ctx, TB_ERR_INVALID_ARGUMENT, "Scale (%lld values) or B (%lld) does not broadcast to the %lld normalized values",
                           (long long)sn, (long long)bn, (long long)cols);
  tb_tensor *out, *stat_out;
  st = tb_vk_output(ctx, 0, TB_DTYPE_F32, t->ndim, t->shape, &out, &y);
  /* Mean and InvStdDev: X's shape with the normalized dimensions 1 */
  int64_t stat_shape[TB_MAX_DIMS];
  for (size_t d = 0; d < t->ndim; d++) stat_shape[d] = d < axis ? t->shape[d] : 1;
  vk_arg stats[2] = {y, y};
  uint32_t want = ln_stats(pb);
  for (size_t i = 0; i < 2 && st == TB_OK; i++)
    if ((want >> i) & 1u) st = tb_vk_output(ctx, i + 1, TB_DTYPE_F32, t->ndim, stat_shape, &stat_out, &stats[i]);
  if (st != TB_OK || out->numel == 0) return st;
  struct {
    uint32_t rows, cols, x_off, s_off, b_off, y_off, s_n, b_n;
    float eps;
    uint32_t m_off, i_off, per_row;
  } p = {(uint32_t)prod(t->shape, 0, axis), (uint32_t)cols, x.offset, s.offset, b.offset, y.offset, (uint32_t)sn, (uint32_t)bn, eps,
         stats[0].offset, stats[1].offset, instance};
  uint32_t gx, gy;
  tb_vk_groups((uint64_t)p.rows, 1, &gx, &gy);
  tb_vk_buffer buffers[6] = {x.buffer, s.buffer, has_b ? b.buffer : s.buffer, y.buffer, stats[0].buffer, stats[1].buffer};
  return tb_vk_node_dispatch(node, 0, buffers, 6, &p, sizeof p, gx, gy, 1);
}

const tb_kernel tb_vk_kernel_layernorm = {"", "LayerNormalization", TB_KERNEL_REFERENCE, 0, ln_accepts, ln_run, ln_prepare, tb_vk_release_node, NULL};
const tb_kernel tb_vk_kernel_fused_layernorm = {"tb", "LayerNormalization", TB_KERNEL_REFERENCE, 0, ln_accepts, ln_run, ln_prepare, tb_vk_release_node, NULL};
const tb_kernel tb_vk_kernel_instancenorm = {"", "InstanceNormalization", TB_KERNEL_REFERENCE, 0, ln_accepts, ln_run, ln_prepare, tb_vk_release_node, NULL};

/* ---- Reduce* ---- */

/* The input's dimensions merged into runs of kept (0) and reduced (1) dimensions, outermost first, with
 * their input strides; dimensions of size 1 drop out. A rank-8 tensor has at most 4 runs of each kind. */
typedef struct reduce_runs {
  uint32_t n[2];
  uint32_t size[2][4], stride[2][4];
  int64_t len; /* product of the reduced sizes */
} reduce_runs;

static void reduce_split(const tb_tensor *t, const bool *reduced, reduce_runs *r) {
  memset(r, 0, sizeof *r);
  r->len = 1;
  int last = -1;
  int64_t stride = 1;
  uint64_t strides[TB_MAX_DIMS];
  for (size_t d = t->ndim; d-- > 0;) {
    strides[d] = (uint64_t)stride;
    stride *= t->shape[d];
  }
  for (size_t d = 0; d < t->ndim; d++) {
    int kind = reduced[d] ? 1 : 0;
    if (kind) r->len *= t->shape[d];
    if (t->shape[d] == 1) continue;
    if (kind == last) {
      uint32_t i = r->n[kind] - 1;
      r->size[kind][i] *= (uint32_t)t->shape[d];
      r->stride[kind][i] = (uint32_t)strides[d];
    } else {
      uint32_t i = r->n[kind]++;
      r->size[kind][i] = (uint32_t)t->shape[d];
      r->stride[kind][i] = (uint32_t)strides[d];
      last = kind;
    }
  }
}

/* reduce.comp's mode by tb_reduce_op. */
static const uint32_t reduce_modes[] = {[TB_REDUCE_SUM] = 0, [TB_REDUCE_MEAN] = 1, [TB_REDUCE_MAX] = 2,
                                        [TB_REDUCE_MIN] = 3, [TB_REDUCE_SUM_SQUARE] = 4, [TB_REDUCE_L1] = 5,
                                        [TB_REDUCE_L2] = 6,  [TB_REDUCE_LOG_SUM_EXP] = 7, [TB_REDUCE_PROD] = 8};

static tb_status reduce_prepare(tb_kernel_ctx *ctx, void **state) {
  tb_status st;
  const tb_reduce_params *pb = tb_kernel_params(ctx, &st);
  if (st != TB_OK) return st;
  uint32_t mode = reduce_modes[pb->op];
  tb_vk_shader_id id = variant(ctx, TB_VK_SHADER_REDUCE, TB_VK_SHADER_REDUCE_SG);
  return tb_vk_prepare_node(ctx, id, &mode, 1, 1, state);
}

static tb_status reduce_run(tb_kernel_ctx *ctx) {
  vk_node *node;
  vk_arg x, y;
  tb_status st = tb_vk_node_of(ctx, &node);
  if (st == TB_OK) st = tb_vk_input(ctx, 0, TB_DTYPE_F32, &x);
  if (st != TB_OK) return st;
  const tb_tensor *t = ctx->inputs[0];
  const tb_reduce_params *pb = tb_kernel_params(ctx, &st);
  if (!pb) return st;
  int64_t axes[TB_MAX_DIMS];
  size_t n_axes = 0;
  bool from_input = pb->axes_from_input && ctx->n_inputs > 1 && ctx->inputs[1];
  if (from_input && (st = tb_vk_value_ints(ctx, 1, axes, TB_MAX_DIMS, &n_axes)) != TB_OK) return st;
  nn_reduce_axes ax;
  if ((st = tb_nn_reduce_axes_resolve(pb, t->ndim, from_input, axes, n_axes, &ax)) != TB_OK) return st;
  bool keepdims = ax.keepdims, *reduced = ax.reduce;
  int64_t shape[TB_MAX_DIMS];
  size_t ndim = 0;
  for (size_t d = 0; d < t->ndim; d++) {
    if (!reduced[d]) shape[ndim++] = t->shape[d];
    else if (keepdims) shape[ndim++] = 1;
  }
  reduce_runs runs;
  reduce_split(t, reduced, &runs);
  st = tb_vk_check_u32(ctx, runs.len, "the reduced length");
  if (st != TB_OK) return st;
  tb_tensor *out;
  st = tb_vk_output(ctx, 0, TB_DTYPE_F32, ndim, shape, &out, &y);
  if (st != TB_OK || out->numel == 0) return st;
  struct {
    uint32_t rows, len, x_off, y_off, nk, nr;
    uint32_t ks[4], kst[4], rs[4], rst[4];
  } p = {(uint32_t)out->numel, (uint32_t)runs.len, x.offset, y.offset, runs.n[0], runs.n[1], {0}, {0}, {0}, {0}};
  for (uint32_t i = 0; i < 4; i++) {
    p.ks[i] = runs.size[0][i];
    p.kst[i] = runs.stride[0][i];
    p.rs[i] = runs.size[1][i];
    p.rst[i] = runs.stride[1][i];
  }
  uint32_t gx, gy;
  tb_vk_groups((uint64_t)p.rows, 1, &gx, &gy);
  tb_vk_buffer buffers[2] = {x.buffer, y.buffer};
  return tb_vk_node_dispatch(node, 0, buffers, 2, &p, sizeof p, gx, gy, 1);
}

#define REDUCE(sym, opname) const tb_kernel sym = {"", opname, TB_KERNEL_REFERENCE, 0, f32_in0, reduce_run, reduce_prepare, tb_vk_release_node, NULL};
REDUCE(tb_vk_kernel_reduce_mean, "ReduceMean")
REDUCE(tb_vk_kernel_reduce_sum, "ReduceSum")
REDUCE(tb_vk_kernel_reduce_max, "ReduceMax")
REDUCE(tb_vk_kernel_reduce_min, "ReduceMin")
REDUCE(tb_vk_kernel_reduce_sum_square, "ReduceSumSquare")
REDUCE(tb_vk_kernel_reduce_l1, "ReduceL1")
REDUCE(tb_vk_kernel_reduce_l2, "ReduceL2")
REDUCE(tb_vk_kernel_reduce_log_sum_exp, "ReduceLogSumExp")
REDUCE(tb_vk_kernel_reduce_prod, "ReduceProd")

/* ---- tb::Attention (no mask) ---- */

#define MAX_LK 1024

static bool attn_accepts(const tb_kernel_query *q) {
  bool mask = q->n_inputs > 3 && q->in[3];
  return !mask && q->n_inputs >= 3 && q->in[0] && q->in[1] && q->in[2] && tb_vk_query_f32(q, 7u);
}

static tb_status attn_prepare(tb_kernel_ctx *ctx, void **state) {
  tb_vk_shader_id id = variant(ctx, TB_VK_SHADER_ATTENTION, TB_VK_SHADER_ATTENTION_SG);
  return tb_vk_prepare_node(ctx, id, NULL, 0, 1, state);
}

static tb_status attn_run(tb_kernel_ctx *ctx) {
  vk_node *node;
  vk_arg a[3], y;
  tb_status st = tb_vk_node_of(ctx, &node);
  for (size_t i = 0; i < 3 && st == TB_OK; i++) st = tb_vk_input(ctx, i, TB_DTYPE_F32, &a[i]);
  if (st != TB_OK) return st;
  const tb_tensor *q = ctx->inputs[0], *k = ctx->inputs[1], *v = ctx->inputs[2];
  if (q->ndim < 2 || k->ndim < 2 || v->ndim < 2) return tb_kernel_error(ctx, TB_ERR_INVALID_ARGUMENT, "Q, K_T and V need rank >= 2");
  int64_t lq = q->shape[q->ndim - 2], d = q->shape[q->ndim - 1], lk = k->shape[k->ndim - 1], dv = v->shape[v->ndim - 1];
  if (k->shape[k->ndim - 2] != d || v->shape[v->ndim - 2] != lk)
    return tb_kernel_error(ctx, TB_ERR_INVALID_ARGUMENT, "inner dimensions of Q, K_T and V differ");
  if (lk > MAX_LK) return tb_kernel_error(ctx, TB_ERR_UNSUPPORTED, "%lld keys; the Vulkan attention kernel takes up to %d", (long long)lk, MAX_LK);
  const tb_tensor *ops[3] = {q, k, v};
  size_t nb = 0;
  for (int i = 0; i < 3; i++)
    if (ops[i]->ndim - 2 > nb) nb = ops[i]->ndim - 2;
  int64_t size[TB_MAX_DIMS], str[3][TB_MAX_DIMS], running[3];
  for (int i = 0; i < 3; i++) running[i] = ops[i]->shape[ops[i]->ndim - 2] * ops[i]->shape[ops[i]->ndim - 1];
  int64_t shape[TB_MAX_DIMS];
  for (size_t dd = nb; dd-- > 0;) {
    size[dd] = 1;
    for (int i = 0; i < 3; i++) {
      size_t r = ops[i]->ndim - 2;
      int64_t dim = dd + r >= nb ? ops[i]->shape[dd + r - nb] : 1;
      if (dim != 1 && size[dd] != 1 && dim != size[dd])
        return tb_kernel_error(ctx, TB_ERR_INVALID_ARGUMENT, "batch dims of Q, K_T and V do not broadcast");
      if (dim != 1) size[dd] = dim;
      str[i][dd] = dim == 1 ? 0 : running[i];
      running[i] *= dim;
    }
    shape[dd] = size[dd];
  }
  int64_t ls[2] = {1, 1}, lst[3][2] = {{0, 0}, {0, 0}, {0, 0}};
  int levels = 0;
  for (size_t dd = 0; dd < nb; dd++) {
    if (size[dd] == 1) continue;
    bool merge = levels > 0;
    for (int i = 0; i < 3 && merge; i++) merge = lst[i][levels - 1] == str[i][dd] * size[dd];
    if (merge) {
      ls[levels - 1] *= size[dd];
      for (int i = 0; i < 3; i++) lst[i][levels - 1] = str[i][dd];
      continue;
    }
    if (levels == 2) return tb_kernel_error(ctx, TB_ERR_UNSUPPORTED, "batch broadcasting over more than two separate dimensions");
    ls[levels] = size[dd];
    for (int i = 0; i < 3; i++) lst[i][levels] = str[i][dd];
    levels++;
  }
  if (levels == 1) {
    ls[1] = ls[0];
    ls[0] = 1;
    for (int i = 0; i < 3; i++) {
      lst[i][1] = lst[i][0];
      lst[i][0] = 0;
    }
  }
  shape[nb] = lq;
  shape[nb + 1] = dv;
  tb_tensor *out;
  st = tb_vk_output(ctx, 0, TB_DTYPE_F32, nb + 2, shape, &out, &y);
  if (st != TB_OK || out->numel == 0) return st;
  const tb_attention_params *pb = tb_kernel_params(ctx, &st);
  if (!pb) return st;
  float scale = pb->scale;
  uint32_t mode = pb->has_scale ? (pb->scale_divide ? 2u : 1u) : 0u;
  struct {
    uint32_t lq, d, lk, dv, nb2;
    uint32_t q_off, q_b1, q_b2, k_off, k_b1, k_b2, v_off, v_b1, v_b2, y_off, mode;
    float scale;
  } p = {(uint32_t)lq, (uint32_t)d, (uint32_t)lk, (uint32_t)dv, (uint32_t)ls[1],
         a[0].offset, (uint32_t)lst[0][0], (uint32_t)lst[0][1], a[1].offset, (uint32_t)lst[1][0], (uint32_t)lst[1][1],
         a[2].offset, (uint32_t)lst[2][0], (uint32_t)lst[2][1], y.offset, mode, scale};
  tb_vk_buffer buffers[4] = {a[0].buffer, a[1].buffer, a[2].buffer, y.buffer};
  return tb_vk_node_dispatch(node, 0, buffers, 4, &p, sizeof p, (uint32_t)lq, (uint32_t)(ls[0] * ls[1]), 1);
}

const tb_kernel tb_vk_kernel_attention = {"tb", "Attention", TB_KERNEL_REFERENCE, 0, attn_accepts, attn_run, attn_prepare, tb_vk_release_node, NULL};
