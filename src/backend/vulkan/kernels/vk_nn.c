/* Vulkan kernels of the neural-network ops on fp32: MatMul, Gemm and their fused forms (matmul.comp, with
 * the activation epilogue, Gelu included, as a specialization constant and FusedMatMul's bias as the
 * shader's C; a FusedMatMul with a residual input is refused and runs on the CPU), Conv / FusedConv
 * (conv2d.comp, 1-D and 2-D), MaxPool, AveragePool, GlobalAveragePool, GlobalMaxPool (pool.comp) and
 * BatchNormalization in inference mode (batchnorm.comp). */
#include <string.h>
#include "backend/cpu/kernels/fused/fused_kernel.h"
#include "backend/kernel_params.h"
#include "ops/fused/fused_params.h"
#include "backend/vulkan/kernels/vk_kernel.h"
#include "backend/tensor/tensor_impl.h"
#include "ops/nn/window.h"

static bool is_op(const char *op_type, const char *name) { return strcmp(op_type, name) == 0; }

/* The fused activation is one common.glsl's tb_act has (kinds 0-9: not SiLU or Mish, which run on the CPU). */
static bool act_in_shader(const tb_kernel_query *q) {
  const tb_activation_params *act = tb_fused_activation(q->domain, q->op_type, q->params);
  return !act || act->kind <= TB_FUSED_ACT_GELU_TANH;
}

/* The activation of a fused node as (kind, a, b) for tb_act in common.glsl. */
static tb_status read_act(tb_kernel_ctx *ctx, uint32_t *kind, float *a, float *b) {
  *kind = 0;
  *a = *b = 0.0f;
  tb_fused_act act;
  tb_status st = tb_fused_act_read(ctx, &act);
  if (st != TB_OK) return st;
  *kind = (uint32_t)act.kind;
  *a = (float)(act.kind == 3 ? act.min : act.alpha);
  *b = (float)(act.kind == 3 ? act.max : act.beta);
  return TB_OK;
}

/* ---- MatMul, Gemm, FusedMatMul, FusedGemm ---- */

typedef struct mm_push {
  uint32_t M, N, K, nb2;
  uint32_t a_off, a_b1, a_b2, a_m, a_k;
  uint32_t b_off, b_b1, b_b2, b_k, b_n;
  uint32_t c_off, c_m, c_n, y_off;
  float alpha, beta, act_a, act_b;
} mm_push;

/* FusedMatMul's bias is matmul.comp's C (broadcast along the rows); its residual (input 3) is not in the
 * shader: such a node runs on the CPU (the placement says why). */
static bool mm_accepts(const tb_kernel_query *q) {
  const tb_value_type *const *in = q->in;
  if (is_op(q->op_type, "FusedMatMul") && q->n_inputs > 3 && in[3]) return false;
  return q->n_outputs == 1 && act_in_shader(q) && tb_vk_query_f32(q, 7u);
}

/* The node's input 2 is matmul.comp's C: Gemm's C, or FusedMatMul's bias. */
static bool mm_has_c(const tb_kernel_ctx *ctx) {
  return ctx->in_types && ctx->n_inputs > 2 && ctx->in_types[2] && !is_op(ctx->op_type, "MatMul");
}

static tb_status mm_prepare(tb_kernel_ctx *ctx, void **state) {
  uint32_t spec[2] = {0, 0};
  float a, b;
  spec[0] = mm_has_c(ctx);
  tb_status st = read_act(ctx, &spec[1], &a, &b);
  if (st != TB_OK) return st;
  return tb_vk_prepare_node(ctx, TB_VK_SHADER_MATMUL, spec, 2, 1, state);
}

/* MatMul's batch dims broadcast and collapsed to at most two levels of (size, A stride, B stride). */
static tb_status mm_batches(tb_kernel_ctx *ctx, const tb_tensor *a, const tb_tensor *b, size_t ra, size_t rb, int64_t *out_shape,
                            size_t *out_nb, mm_push *p, uint32_t *nb1) {
  size_t na = a->ndim - ra, nb = b->ndim - rb, n = na > nb ? na : nb;
  int64_t size[TB_MAX_DIMS], sa[TB_MAX_DIMS], sb[TB_MAX_DIMS];
  int64_t stride_a = (int64_t)p->M * p->K, stride_b = (int64_t)p->K * p->N;
  for (size_t d = n; d-- > 0;) {
    int64_t da = d + na >= n ? a->shape[d + na - n] : 1, db = d + nb >= n ? b->shape[d + nb - n] : 1;
    if (da != db && da != 1 && db != 1)
      return tb_kernel_error(ctx, TB_ERR_INVALID_ARGUMENT, "batch dimensions %lld and %lld do not broadcast", (long long)da, (long long)db);
    size[d] = da == 1 ? db : da;
    sa[d] = da == 1 ? 0 : stride_a;
    sb[d] = db == 1 ? 0 : stride_b;
    stride_a *= da;
    stride_b *= db;
    out_shape[d] = size[d];
  }
  *out_nb = n;
  int64_t ls[2] = {1, 1}, la[2] = {0, 0}, lb[2] = {0, 0};
  int levels = 0;
  for (size_t d = 0; d < n; d++) {
    if (size[d] == 1) continue;
    if (levels > 0 && la[levels - 1] == sa[d] * size[d] && lb[levels - 1] == sb[d] * size[d]) {
      ls[levels - 1] *= size[d];
      la[levels - 1] = sa[d];
      lb[levels - 1] = sb[d];
      continue;
    }
    if (levels == 2)
      return tb_kernel_error(ctx, TB_ERR_UNSUPPORTED, "batch broadcasting over more than two separate dimensions is not in the Vulkan MatMul");
    ls[levels] = size[d];
    la[levels] = sa[d];
    lb[levels] = sb[d];
    levels++;
  }
  if (levels == 1) { /* one level: use the inner one */
    ls[1] = ls[0];
    la[1] = la[0];
    lb[1] = lb[0];
    ls[0] = 1;
    la[0] = lb[0] = 0;
  }
  tb_status st = tb_vk_check_u32(ctx, ls[0] * ls[1], "the batch count");
  if (st == TB_OK) st = tb_vk_check_u32(ctx, la[0], "A's batch stride");
  if (st == TB_OK) st = tb_vk_check_u32(ctx, lb[0], "B's batch stride");
  if (st != TB_OK) return st;
  *nb1 = (uint32_t)ls[0];
  p->nb2 = (uint32_t)ls[1];
  p->a_b1 = (uint32_t)la[0];
  p->a_b2 = (uint32_t)la[1];
  p->b_b1 = (uint32_t)lb[0];
  p->b_b2 = (uint32_t)lb[1];
  return TB_OK;
}

static tb_status mm_run(tb_kernel_ctx *ctx) {
  vk_node *node;
  tb_status st = tb_vk_node_of(ctx, &node);
  if (st != TB_OK) return st;
  bool gemm = is_op(ctx->op_type, "Gemm") || is_op(ctx->op_type, "FusedGemm");
  vk_arg a, b, c = {0, 0}, y;
  st = tb_vk_input(ctx, 0, TB_DTYPE_F32, &a);
  if (st == TB_OK) st = tb_vk_input(ctx, 1, TB_DTYPE_F32, &b);
  bool has_c = mm_has_c(ctx) && ctx->n_inputs > 2 && ctx->inputs[2];
  if (st == TB_OK && has_c) st = tb_vk_input(ctx, 2, TB_DTYPE_F32, &c);
  if (st != TB_OK) return st;
  const tb_tensor *ta = ctx->inputs[0], *tbt = ctx->inputs[1];
  mm_push p;
  memset(&p, 0, sizeof p);
  p.alpha = 1.0f;
  p.beta = 1.0f;
  uint32_t kind, nb1 = 1;
  st = read_act(ctx, &kind, &p.act_a, &p.act_b);
  if (st != TB_OK) return st;
  int64_t shape[TB_MAX_DIMS];
  size_t ndim = 0;
  if (gemm) {
    const tb_gemm_params *pb = tb_kernel_params(ctx, &st); /* a FusedGemm's parameters start with Gemm's */
    if (st != TB_OK) return st;
    bool trans_a = pb->trans_a, trans_b = pb->trans_b;
    p.alpha = pb->alpha;
    p.beta = pb->beta;
    if (ta->ndim != 2 || tbt->ndim != 2) return tb_kernel_error(ctx, TB_ERR_INVALID_ARGUMENT, "Gemm takes 2-D A and B");
    int64_t M = trans_a ? ta->shape[1] : ta->shape[0], K = trans_a ? ta->shape[0] : ta->shape[1];
    int64_t KB = trans_b ? tbt->shape[1] : tbt->shape[0], N = trans_b ? tbt->shape[0] : tbt->shape[1];
    if (K != KB) return tb_kernel_error(ctx, TB_ERR_INVALID_ARGUMENT, "inner dimensions differ: %lld and %lld", (long long)K, (long long)KB);
    p.M = (uint32_t)M, p.N = (uint32_t)N, p.K = (uint32_t)K;
    p.a_m = trans_a ? 1 : (uint32_t)K;
    p.a_k = trans_a ? (uint32_t)M : 1;
    p.b_k = trans_b ? 1 : (uint32_t)N;
    p.b_n = trans_b ? (uint32_t)K : 1;
    p.nb2 = 1;
    shape[0] = M;
    shape[1] = N;
    ndim = 2;
    if (has_c) {
      const tb_tensor *tc = ctx->inputs[2];
      if (tc->ndim > 2) return tb_kernel_error(ctx, TB_ERR_INVALID_ARGUMENT, "C has rank %zu", tc->ndim);
      int64_t cm = tc->ndim == 2 ? tc->shape[0] : 1, cn = tc->ndim >= 1 ? tc->shape[tc->ndim - 1] : 1;
      if ((cm != 1 && cm != M) || (cn != 1 && cn != N))
        return tb_kernel_error(ctx, TB_ERR_INVALID_ARGUMENT, "C does not broadcast to [%lld, %lld]", (long long)M, (long long)N);
      p.c_m = cm == 1 ? 0 : (uint32_t)cn;
      p.c_n = cn == 1 ? 0 : 1;
      p.c_off = c.offset;
    }
  } else {
    if (ta->ndim < 1 || tbt->ndim < 1) return tb_kernel_error(ctx, TB_ERR_INVALID_ARGUMENT, "MatMul of a scalar");
    size_t ra = ta->ndim >= 2 ? 2 : 1, rb = tbt->ndim >= 2 ? 2 : 1;
    int64_t M = ra == 2 ? ta->shape[ta->ndim - 2] : 1, K = ta->shape[ta->ndim - 1];
    int64_t KB = rb == 2 ? tbt->shape[tbt->ndim - 2] : tbt->shape[0], N = rb == 2 ? tbt->shape[tbt->ndim - 1] : 1;
    if (K != KB) return tb_kernel_error(ctx, TB_ERR_INVALID_ARGUMENT, "inner dimensions differ: %lld and %lld", (long long)K, (long long)KB);
    p.M = (uint32_t)M, p.N = (uint32_t)N, p.K = (uint32_t)K;
    p.a_m = (uint32_t)K;
    p.a_k = 1;
    p.b_k = (uint32_t)N;
    p.b_n = 1;
    st = mm_batches(ctx, ta, tbt, ra, rb, shape, &ndim, &p, &nb1);
    if (st != TB_OK) return st;
    if (ra == 2) shape[ndim++] = M;
    if (rb == 2) shape[ndim++] = N;
    if (has_c) { /* the bias: N values (the output's last dim) added to every row, as C with beta 1 */
      const tb_tensor *tc = ctx->inputs[2];
      int64_t last = ndim ? shape[ndim - 1] : 1;
      if (tb_tensor_numel(tc) != last || tc->ndim == 0 || tc->shape[tc->ndim - 1] != last)
        return tb_kernel_error(ctx, TB_ERR_INVALID_ARGUMENT,
                               "the bias (input 2) has %lld values; expected %lld, the output's last dimension",
                               (long long)tb_tensor_numel(tc), (long long)last);
      p.c_off = c.offset;
      p.c_m = rb == 2 ? 0 : 1; /* a 1-D B: the output's last dim is M (a value per row) */
      p.c_n = rb == 2 ? 1 : 0;
    }
  }
  tb_tensor *out;
  st = tb_vk_output(ctx, 0, TB_DTYPE_F32, ndim, shape, &out, &y);
  if (st != TB_OK || out->numel == 0) return st;
  p.a_off = a.offset;
  p.b_off = b.offset;
  p.y_off = y.offset;
  tb_vk_buffer buffers[4] = {a.buffer, b.buffer, has_c ? c.buffer : a.buffer, y.buffer};
  uint32_t batches = nb1 * p.nb2;
  if (p.K == 0) p.alpha = 0.0f;
  return tb_vk_node_dispatch(node, 0, buffers, 4, &p, sizeof p, (p.N + 15) / 16, (p.M + 15) / 16, batches);
}

#define MATMUL(sym, dom, opname) const tb_kernel sym = {dom, opname, TB_KERNEL_REFERENCE, 0, mm_accepts, mm_run, mm_prepare, tb_vk_release_node, NULL};
MATMUL(tb_vk_kernel_matmul, "", "MatMul")
MATMUL(tb_vk_kernel_gemm, "", "Gemm")
MATMUL(tb_vk_kernel_fused_matmul, "tb", "FusedMatMul")
MATMUL(tb_vk_kernel_fused_gemm, "tb", "FusedGemm")

/* ---- window geometry shared by Conv and the pools ---- */

typedef struct window {
  uint32_t kh, kw, sh, sw, ph, pw, eh, ew, dh, dw, oh, ow;
} window;

/* The window of wp over input x (rank 3 or 4) with kernel size from `kernel` (NULL: kernel_shape), from
 * the ops' window geometry (ops/nn/window.h), as inference sized the output. */
static tb_status read_window(tb_kernel_ctx *ctx, const tb_window_params *wp, const tb_tensor *x, const int64_t *kernel, window *w) {
  if (x->ndim != 3 && x->ndim != 4) return tb_kernel_error(ctx, TB_ERR_UNSUPPORTED, "the Vulkan kernel takes 1-D or 2-D windows (input rank 3 or 4), not rank %zu", x->ndim);
  size_t sp = x->ndim - 2;
  nn_window win;
  tb_status st = tb_nn_window_init(wp, sp, kernel, &win);
  if (st != TB_OK) return st;
  int64_t o[2] = {1, 1}, b[2] = {0, 0}, e[2] = {0, 0}, k[2] = {1, 1}, s[2] = {1, 1}, d[2] = {1, 1};
  for (size_t i = 0; i < sp; i++) {
    size_t j = i + 2 - sp; /* 1-D uses the w slot */
    st = tb_nn_window_out(&win, i, x->shape[2 + i], &o[j]);
    if (st != TB_OK) return st;
    k[j] = win.kernel[i];
    s[j] = win.stride[i];
    d[j] = win.dilation[i];
    b[j] = win.pad_begin[i];
    e[j] = win.pad_end[i];
  }
  *w = (window){(uint32_t)k[0], (uint32_t)k[1], (uint32_t)s[0], (uint32_t)s[1], (uint32_t)b[0], (uint32_t)b[1],
                (uint32_t)e[0], (uint32_t)e[1], (uint32_t)d[0], (uint32_t)d[1], (uint32_t)o[0], (uint32_t)o[1]};
  return TB_OK;
}

/* ---- Conv, FusedConv ---- */

static bool conv_accepts(const tb_kernel_query *q) {
  const tb_value_type *const *in = q->in;
  if (q->n_outputs != 1 || !act_in_shader(q) || !tb_vk_query_f32(q, 15u)) return false;
  return !in[0]->has_shape || in[0]->ndim == 3 || in[0]->ndim == 4;
}

static tb_status conv_prepare(tb_kernel_ctx *ctx, void **state) {
  uint32_t spec[3];
  float a, b;
  spec[0] = ctx->in_types && ctx->n_inputs > 2 && ctx->in_types[2];
  spec[1] = ctx->in_types && ctx->n_inputs > 3 && ctx->in_types[3];
  tb_status st = read_act(ctx, &spec[2], &a, &b);
  if (st != TB_OK) return st;
  return tb_vk_prepare_node(ctx, TB_VK_SHADER_CONV2D, spec, 3, 1, state);
}

static tb_status conv_run(tb_kernel_ctx *ctx) {
  vk_node *node;
  tb_status st = tb_vk_node_of(ctx, &node);
  vk_arg x, w, bias = {0, 0}, res = {0, 0}, y;
  if (st == TB_OK) st = tb_vk_input(ctx, 0, TB_DTYPE_F32, &x);
  if (st == TB_OK) st = tb_vk_input(ctx, 1, TB_DTYPE_F32, &w);
  bool has_b = ctx->n_inputs > 2 && ctx->inputs[2], has_r = ctx->n_inputs > 3 && ctx->inputs[3];
  if (st == TB_OK && has_b) st = tb_vk_input(ctx, 2, TB_DTYPE_F32, &bias);
  if (st == TB_OK && has_r) st = tb_vk_input(ctx, 3, TB_DTYPE_F32, &res);
  if (st != TB_OK) return st;
  const tb_tensor *tx = ctx->inputs[0], *tw = ctx->inputs[1];
  if (tw->ndim != tx->ndim) return tb_kernel_error(ctx, TB_ERR_INVALID_ARGUMENT, "W has rank %zu, X rank %zu", tw->ndim, tx->ndim);
  const tb_conv_params *pb = tb_kernel_params(ctx, &st); /* a FusedConv's parameters start with Conv's */
  if (st != TB_OK) return st;
  int64_t group = pb->group;
  int64_t C = tx->shape[1], M = tw->shape[0];
  if (group < 1 || C % group || M % group || tw->shape[1] != C / group)
    return tb_kernel_error(ctx, TB_ERR_INVALID_ARGUMENT, "channels %lld, filters %lld and group %lld do not fit W's %lld input channels", (long long)C,
                           (long long)M, (long long)group, (long long)tw->shape[1]);
  if (has_b && ctx->inputs[2]->numel != M) return tb_kernel_error(ctx, TB_ERR_INVALID_ARGUMENT, "B has %lld values for %lld filters", (long long)ctx->inputs[2]->numel, (long long)M);
  window win;
  st = read_window(ctx, &pb->win, tx, tw->shape + 2, &win);
  if (st != TB_OK) return st;
  int64_t shape[4] = {tx->shape[0], M, win.oh, win.ow};
  if (tx->ndim == 3) shape[2] = win.ow;
  tb_tensor *out;
  st = tb_vk_output(ctx, 0, TB_DTYPE_F32, tx->ndim, shape, &out, &y);
  if (st == TB_OK && has_r && ctx->inputs[3]->numel != out->numel)
    st = tb_kernel_error(ctx, TB_ERR_INVALID_ARGUMENT, "the residual has %lld values, the output %lld", (long long)ctx->inputs[3]->numel, (long long)out->numel);
  if (st != TB_OK || out->numel == 0) return st;
  uint32_t kind;
  float aa, ab;
  st = read_act(ctx, &kind, &aa, &ab);
  if (st != TB_OK) return st;
  struct {
    uint32_t C, H, W, M, OH, OW, KH, KW, sh, sw, ph, pw, dh, dw, groups;
    uint32_t x_off, w_off, b_off, r_off, y_off, total;
    float act_a, act_b;
  } p = {(uint32_t)C, tx->ndim == 4 ? (uint32_t)tx->shape[2] : 1, (uint32_t)tx->shape[tx->ndim - 1], (uint32_t)M, win.oh, win.ow,
         win.kh, win.kw, win.sh, win.sw, win.ph, win.pw, win.dh, win.dw, (uint32_t)group, x.offset, w.offset, bias.offset, res.offset,
         y.offset, (uint32_t)out->numel, aa, ab};
  uint32_t gx, gy;
  tb_vk_groups((uint64_t)out->numel, 256, &gx, &gy);
  tb_vk_buffer buffers[5] = {x.buffer, w.buffer, has_b ? bias.buffer : x.buffer, has_r ? res.buffer : x.buffer, y.buffer};
  return tb_vk_node_dispatch(node, 0, buffers, 5, &p, sizeof p, gx, gy, 1);
}

const tb_kernel tb_vk_kernel_conv = {"", "Conv", TB_KERNEL_REFERENCE, 0, conv_accepts, conv_run, conv_prepare, tb_vk_release_node, NULL};
const tb_kernel tb_vk_kernel_fused_conv = {"tb", "FusedConv", TB_KERNEL_REFERENCE, 0, conv_accepts, conv_run, conv_prepare, tb_vk_release_node, NULL};

/* ---- pools ---- */

static bool pool_accepts(const tb_kernel_query *q) {
  const tb_value_type *const *in = q->in;
  const tb_pool_params *p = q->params;
  if (!p || p->indices) return false; /* MaxPool's Indices: CPU */
  return tb_vk_query_f32(q, 1u) && in[0] && (!in[0]->has_shape || in[0]->ndim == 3 || in[0]->ndim == 4);
}

static tb_status pool_prepare(tb_kernel_ctx *ctx, void **state) {
  const tb_pool_params *p = ctx->params;
  uint32_t mode = p && p->kind == TB_POOL_AVERAGE ? 1 : 0;
  return tb_vk_prepare_node(ctx, TB_VK_SHADER_POOL, &mode, 1, 1, state);
}

static tb_status pool_run(tb_kernel_ctx *ctx) {
  vk_node *node;
  vk_arg x, y;
  tb_status st = tb_vk_node_of(ctx, &node);
  if (st == TB_OK) st = tb_vk_input(ctx, 0, TB_DTYPE_F32, &x);
  if (st != TB_OK) return st;
  const tb_tensor *tx = ctx->inputs[0];
  if (tx->ndim != 3 && tx->ndim != 4) return tb_kernel_error(ctx, TB_ERR_UNSUPPORTED, "the Vulkan pools take rank 3 or 4, not %zu", tx->ndim);
  const tb_pool_params *pb = tb_kernel_params(ctx, &st);
  if (!pb) return st;
  bool global = pb->global, include_pad = pb->count_include_pad;
  window win;
  if (global) {
    uint32_t h = tx->ndim == 4 ? (uint32_t)tx->shape[2] : 1, w = (uint32_t)tx->shape[tx->ndim - 1];
    win = (window){h, w, 1, 1, 0, 0, 0, 0, 1, 1, 1, 1};
  } else {
    st = read_window(ctx, &pb->win, tx, NULL, &win);
    if (st != TB_OK) return st;
  }
  int64_t shape[4] = {tx->shape[0], tx->shape[1], win.oh, win.ow};
  if (tx->ndim == 3) shape[2] = win.ow;
  tb_tensor *out;
  st = tb_vk_output(ctx, 0, TB_DTYPE_F32, tx->ndim, shape, &out, &y);
  if (st != TB_OK || out->numel == 0) return st;
  struct {
    uint32_t H, W, OH, OW, KH, KW, sh, sw, ph, pw, eh, ew, dh, dw, total, x_off, y_off, include_pad;
  } p = {tx->ndim == 4 ? (uint32_t)tx->shape[2] : 1, (uint32_t)tx->shape[tx->ndim - 1], win.oh, win.ow, win.kh, win.kw, win.sh, win.sw,
         win.ph, win.pw, win.eh, win.ew, win.dh, win.dw, (uint32_t)out->numel, x.offset, y.offset, include_pad != 0};
  uint32_t gx, gy;
  tb_vk_groups((uint64_t)out->numel, 256, &gx, &gy);
  tb_vk_buffer buffers[2] = {x.buffer, y.buffer};
  return tb_vk_node_dispatch(node, 0, buffers, 2, &p, sizeof p, gx, gy, 1);
}

#define POOL(sym, opname) const tb_kernel sym = {"", opname, TB_KERNEL_REFERENCE, 0, pool_accepts, pool_run, pool_prepare, tb_vk_release_node, NULL};
POOL(tb_vk_kernel_maxpool, "MaxPool")
POOL(tb_vk_kernel_averagepool, "AveragePool")
POOL(tb_vk_kernel_global_averagepool, "GlobalAveragePool")
POOL(tb_vk_kernel_global_maxpool, "GlobalMaxPool")

/* ---- BatchNormalization (inference) ---- */

static bool bn_accepts(const tb_kernel_query *q) {
  /* parse refuses training_mode and the training outputs */
  return q->params && q->n_inputs == 5 && tb_vk_query_f32(q, 31u);
}

static tb_status bn_prepare(tb_kernel_ctx *ctx, void **state) { return tb_vk_prepare_node(ctx, TB_VK_SHADER_BATCHNORM, NULL, 0, 1, state); }

static tb_status bn_run(tb_kernel_ctx *ctx) {
  vk_node *node;
  vk_arg a[5], y;
  tb_status st = tb_vk_node_of(ctx, &node);
  for (size_t i = 0; i < 5 && st == TB_OK; i++) st = tb_vk_input(ctx, i, TB_DTYPE_F32, &a[i]);
  if (st != TB_OK) return st;
  const tb_tensor *x = ctx->inputs[0];
  if (x->ndim < 2) return tb_kernel_error(ctx, TB_ERR_INVALID_ARGUMENT, "X has rank %zu; it needs >= 2", x->ndim);
  int64_t C = x->shape[1], hw = 1;
  for (size_t d = 2; d < x->ndim; d++) hw *= x->shape[d];
  for (size_t i = 1; i < 5; i++)
    if (ctx->inputs[i]->numel != C)
      return tb_kernel_error(ctx, TB_ERR_INVALID_ARGUMENT, "input %zu has %lld values for %lld channels", i, (long long)ctx->inputs[i]->numel, (long long)C);
  const tb_norm_params *pb = tb_kernel_params(ctx, &st);
  if (!pb) return st;
  float eps = pb->epsilon;
  tb_tensor *out;
  if (st == TB_OK) st = tb_vk_output(ctx, 0, TB_DTYPE_F32, x->ndim, x->shape, &out, &y);
  if (st != TB_OK || out->numel == 0) return st;
  struct {
    uint32_t C, HW, total, x_off, s_off, b_off, m_off, v_off, y_off;
    float eps;
  } p = {(uint32_t)C, (uint32_t)hw, (uint32_t)out->numel, a[0].offset, a[1].offset, a[2].offset, a[3].offset, a[4].offset, y.offset, eps};
  uint32_t gx, gy;
  tb_vk_groups((uint64_t)out->numel, 256, &gx, &gy);
  tb_vk_buffer buffers[6] = {a[0].buffer, a[1].buffer, a[2].buffer, a[3].buffer, a[4].buffer, y.buffer};
  return tb_vk_node_dispatch(node, 0, buffers, 6, &p, sizeof p, gx, gy, 1);
}

const tb_kernel tb_vk_kernel_batchnorm = {"", "BatchNormalization", TB_KERNEL_REFERENCE, 0, bn_accepts, bn_run, bn_prepare, tb_vk_release_node, NULL};
