/* OpenCL kernels of the GEMM family on float32: MatMul (batched, broadcast, 1-D operands), Gemm (transA/B,
 * alpha/beta, C broadcast into the output first), tb::FusedMatMul / tb::FusedGemm (then FusedMatMul's
 * bias and residual added and the activation, Gelu included, in place) and tb::Attention (Q K_T scaled,
 * masked, softmax, times V). Each matrix product goes through CLBlast when the node was prepared with it
 * (cl_clblast.h), else through the tiled tb_gemm kernel. */
#include <stdio.h>
#include <string.h>
#include "backend/cpu/kernels/fused/fused_kernel.h"
#include "backend/kernel_params.h"
#include "ops/fused/fused_params.h"
#include "backend/opencl/cl_clblast.h"
#include "backend/opencl/cl_program.h"
#include "backend/opencl/kernels/cl_ops.h"

enum { SLOT_GEMM = 0, SLOT_COPY = 1, SLOT_ACT = 2, SLOT_MASK = 3, SLOT_SOFTMAX = 4, SLOT_ADD = 5 };

typedef cl_mat mat;

/* C = alpha op(A) op(B) + beta C for one m x n x k product (cl_ops.h). */
tb_status tb_cl_gemm(tb_kernel_ctx *ctx, int64_t m, int64_t n, int64_t k, float alpha, mat a, mat b, float beta, mat c) {
  if (m == 0 || n == 0) return TB_OK;
  cl_node *node = ctx->state;
  tb_cl_device *dev = tb_cl_dev(ctx);
  if (node && node->clblast && k > 0 && tb_clblast_fits(dev, (size_t)m, (size_t)n, (size_t)k)) {
    tb_cl_mem am, bm, cm;
    int64_t ao, bo, co;
    tb_status s = tb_cl_buffer(ctx, a.t, &am, &ao);
    if (s == TB_OK) s = tb_cl_buffer(ctx, b.t, &bm, &bo);
    if (s == TB_OK) s = tb_cl_buffer(ctx, c.t, &cm, &co);
    if (s != TB_OK) return s;
    char who[64];
    snprintf(who, sizeof who, "node (%s)", ctx->op_type); /* the executor adds the node's name to errors */
    return tb_clblast_sgemm(dev, who, a.trans, b.trans, (size_t)m, (size_t)n, (size_t)k, alpha, am, (size_t)(ao + a.off),
                            (size_t)a.ld, bm, (size_t)(bo + b.off), (size_t)b.ld, beta, cm, (size_t)(co + c.off), (size_t)c.ld);
  }
  size_t ts = (size_t)tb_cl_program_tile(dev);
  cl_launch l;
  tb_cl_begin(&l, ctx, SLOT_GEMM, "tb_gemm");
  tb_cl_arg_int(&l, m);
  tb_cl_arg_int(&l, n);
  tb_cl_arg_int(&l, k);
  tb_cl_arg_tensor_at(&l, a.t, a.off);
  tb_cl_arg_int(&l, a.ld);
  tb_cl_arg_int(&l, a.trans);
  tb_cl_arg_tensor_at(&l, b.t, b.off);
  tb_cl_arg_int(&l, b.ld);
  tb_cl_arg_int(&l, b.trans);
  tb_cl_arg_tensor_at(&l, c.t, c.off);
  tb_cl_arg_int(&l, c.ld);
  tb_cl_arg_float(&l, alpha);
  tb_cl_arg_float(&l, beta);
  return tb_cl_go2(&l, ((size_t)n + ts - 1) / ts * ts, ((size_t)m + ts - 1) / ts * ts, ts, ts);
}

/* The matrix offset (elements) of a batch index for an operand with op_nb batch dims, broadcast from the
 * right against nb output batch dims; mat_size elements per matrix. */
static int64_t batch_offset(size_t nb, const int64_t *idx, size_t op_nb, const int64_t *op_shape, int64_t mat_size) {
  int64_t off = 0;
  for (size_t k = 0; k < op_nb; k++) {
    int64_t dim = op_shape[k];
    off = off * dim + (dim == 1 ? 0 : idx[nb - op_nb + k]);
  }
  return off * mat_size;
}

static bool next_index(size_t nd, const int64_t *shape, int64_t *idx) {
  for (size_t d = nd; d-- > 0;) {
    if (++idx[d] < shape[d]) return true;
    idx[d] = 0;
  }
  return false;
}

static tb_status activation(tb_kernel_ctx *ctx, tb_tensor *y) {
  tb_fused_act act;
  tb_status s = tb_fused_act_read(ctx, &act);
  if (s != TB_OK || act.kind == 0) return s;
  float a = (float)act.alpha, b = (float)act.beta;
  if (act.kind == 3) a = (float)act.min, b = (float)act.max;
  /* tb_unary's codes (00_common.cl): the fused kinds 1-7, then Gelu 13 and Gelu tanh 14 */
  int op = act.kind == TB_FUSED_ACT_GELU ? 13 : act.kind == TB_FUSED_ACT_GELU_TANH ? 14 : act.kind;
  return tb_cl_unary(ctx, SLOT_ACT, y, y, op, a, b);
}

static tb_status matmul(tb_kernel_ctx *ctx) {
  tb_status s = tb_kernel_outputs(ctx);
  if (s != TB_OK) return s;
  const tb_tensor *a = ctx->inputs[0], *b = ctx->inputs[1];
  tb_tensor *y = ctx->outputs[0];
  if (a->ndim == 0 || b->ndim == 0) return tb_kernel_error(ctx, TB_ERR_INVALID_ARGUMENT, "MatMul of a scalar");
  size_t ra = a->ndim, rb = b->ndim;
  int64_t m = ra >= 2 ? a->shape[ra - 2] : 1, k = a->shape[ra - 1];
  int64_t kb = rb >= 2 ? b->shape[rb - 2] : b->shape[0], n = rb >= 2 ? b->shape[rb - 1] : 1;
  if (k != kb) return tb_kernel_error(ctx, TB_ERR_INVALID_ARGUMENT, "inner dims differ: %lld and %lld", (long long)k, (long long)kb);
  size_t nb = y->ndim - (ra >= 2) - (rb >= 2), na = ra >= 2 ? ra - 2 : 0, nbb = rb >= 2 ? rb - 2 : 0;
  if (y->ndim < (size_t)(ra >= 2) + (rb >= 2) || na > nb || nbb > nb)
    return tb_kernel_error(ctx, TB_ERR_INTERNAL, "output rank %zu does not fit inputs of rank %zu and %zu", y->ndim, ra, rb);
  int64_t idx[TB_MAX_DIMS] = {0};
  if (tb_tensor_numel(y) == 0) return TB_OK;
  do {
    int64_t yoff = 0;
    for (size_t d = 0; d < nb; d++) yoff = yoff * y->shape[d] + idx[d];
    mat ma = {a, batch_offset(nb, idx, na, a->shape, m * k), k, false};
    mat mb = {b, batch_offset(nb, idx, nbb, b->shape, k * n), n, false};
    mat mc = {y, yoff * m * n, n, false};
    s = tb_cl_gemm(ctx, m, n, k, 1.0f, ma, mb, 0.0f, mc);
  } while (s == TB_OK && next_index(nb, y->shape, idx));
  return s;
}

static tb_status gemm_op(tb_kernel_ctx *ctx) {
  tb_status s;
  const tb_gemm_params *pb = tb_kernel_params(ctx, &s); /* a FusedGemm's parameters start with Gemm's */
  if (s == TB_OK) s = tb_kernel_outputs(ctx);
  if (s != TB_OK) return s;
  bool ta = pb->trans_a, tb = pb->trans_b;
  float alpha = pb->alpha, beta = pb->beta;
  const tb_tensor *a = ctx->inputs[0], *b = ctx->inputs[1], *c = ctx->n_inputs > 2 ? ctx->inputs[2] : NULL;
  tb_tensor *y = ctx->outputs[0];
  if (a->ndim != 2 || b->ndim != 2 || y->ndim != 2)
    return tb_kernel_error(ctx, TB_ERR_INVALID_ARGUMENT, "Gemm takes 2-D A and B (got rank %zu and %zu)", a->ndim, b->ndim);
  int64_t m = y->shape[0], n = y->shape[1], k = ta ? a->shape[0] : a->shape[1];
  if ((tb ? b->shape[1] : b->shape[0]) != k)
    return tb_kernel_error(ctx, TB_ERR_INVALID_ARGUMENT, "inner dims of A and B differ");
  if (tb_tensor_numel(y) == 0) return TB_OK;
  if (c && beta != 0.0f && tb_tensor_numel(c) > 0) {
    if (c->ndim > 2) return tb_kernel_error(ctx, TB_ERR_INVALID_ARGUMENT, "C has rank %zu; Gemm broadcasts C of rank <= 2", c->ndim);
    int64_t src[2], dst[2];
    tb_shape_bcast_strides(2, y->shape, c->ndim, c->shape, src);
    tb_shape_strides(2, y->shape, dst);
    s = tb_cl_copy_strided(ctx, SLOT_COPY, c, 0, src, y, 0, dst, 2, y->shape);
  } else {
    beta = 0.0f;
  }
  mat ma = {a, 0, a->shape[1], ta != 0}, mb = {b, 0, b->shape[1], tb != 0}, mc = {y, 0, n, false};
  if (s == TB_OK) s = tb_cl_gemm(ctx, m, n, k, alpha, ma, mb, beta, mc);
  return s;
}

/* MatMul, then the bias (input 2: the output's last dim of values) and the residual (input 3: the output's
 * shape) added in place, each rounded as the Add kernel rounds, then the activation. */
static tb_status fused_matmul(tb_kernel_ctx *ctx) {
  tb_status s = matmul(ctx);
  tb_tensor *y = ctx->outputs[0];
  const tb_tensor *bias = ctx->n_inputs > 2 ? ctx->inputs[2] : NULL, *res = ctx->n_inputs > 3 ? ctx->inputs[3] : NULL;
  int64_t n = y && y->ndim ? y->shape[y->ndim - 1] : 1;
  if (s == TB_OK && bias && (tb_tensor_numel(bias) != n || bias->ndim == 0 || bias->shape[bias->ndim - 1] != n))
    return tb_kernel_error(ctx, TB_ERR_INVALID_ARGUMENT,
                           "the bias (input 2) has %lld values; expected %lld, the output's last dimension",
                           (long long)tb_tensor_numel(bias), (long long)n);
  if (s == TB_OK && res && (res->ndim != y->ndim || memcmp(res->shape, y->shape, y->ndim * sizeof(int64_t)) != 0))
    return tb_kernel_error(ctx, TB_ERR_INVALID_ARGUMENT, "the residual (input 3) does not have the output's shape");
  if (s == TB_OK && bias) s = tb_cl_binary(ctx, SLOT_ADD, y, bias, y, 0);
  if (s == TB_OK && res) s = tb_cl_binary(ctx, SLOT_ADD, y, res, y, 0);
  return s == TB_OK ? activation(ctx, y) : s;
}

static tb_status fused_gemm(tb_kernel_ctx *ctx) {
  tb_status s = gemm_op(ctx);
  return s == TB_OK ? activation(ctx, ctx->outputs[0]) : s;
}

/* tb::Attention: Q [.., Lq, D], K_T [.., D, Lk], V [.., Lk, Dv], optional additive mask. */
static tb_status attention(tb_kernel_ctx *ctx) {
  tb_status s;
  const tb_attention_params *pb = tb_kernel_params(ctx, &s);
  if (s == TB_OK) s = tb_kernel_outputs(ctx);
  if (s != TB_OK) return s;
  const tb_tensor *q = ctx->inputs[0], *kt = ctx->inputs[1], *v = ctx->inputs[2], *mask = ctx->n_inputs > 3 ? ctx->inputs[3] : NULL;
  tb_tensor *y = ctx->outputs[0];
  if (q->ndim < 2 || kt->ndim < 2 || v->ndim < 2 || y->ndim < 2)
    return tb_kernel_error(ctx, TB_ERR_INVALID_ARGUMENT, "Q, K_T and V need rank >= 2");
  int64_t lq = q->shape[q->ndim - 2], d = q->shape[q->ndim - 1], lk = kt->shape[kt->ndim - 1], dv = v->shape[v->ndim - 1];
  if (kt->shape[kt->ndim - 2] != d || v->shape[v->ndim - 2] != lk)
    return tb_kernel_error(ctx, TB_ERR_INVALID_ARGUMENT, "inner dims of Q, K_T and V differ");
  size_t nb = y->ndim - 2;
  if (q->ndim - 2 > nb || kt->ndim - 2 > nb || v->ndim - 2 > nb)
    return tb_kernel_error(ctx, TB_ERR_INTERNAL, "output rank %zu below the inputs' batch ranks", y->ndim);
  if (tb_tensor_numel(y) == 0) return TB_OK;
  int64_t sshape[TB_MAX_DIMS];
  memcpy(sshape, y->shape, nb * sizeof(int64_t));
  sshape[nb] = lq;
  sshape[nb + 1] = lk;
  tb_tensor *scores = NULL;
  if ((s = tb_tensor_create(ctx->backend, q->dtype, nb + 2, sshape, &scores)) != TB_OK) return s;
  float alpha = pb->has_scale ? (pb->scale_divide ? 1.0f / pb->scale : pb->scale) : 1.0f;
  int64_t idx[TB_MAX_DIMS] = {0};
  do {
    int64_t boff = 0;
    for (size_t i = 0; i < nb; i++) boff = boff * y->shape[i] + idx[i];
    mat mq = {q, batch_offset(nb, idx, q->ndim - 2, q->shape, lq * d), d, false};
    mat mk = {kt, batch_offset(nb, idx, kt->ndim - 2, kt->shape, d * lk), lk, false};
    mat ms = {scores, boff * lq * lk, lk, false};
    s = tb_cl_gemm(ctx, lq, lk, d, alpha, mq, mk, 0.0f, ms);
  } while (s == TB_OK && next_index(nb, y->shape, idx));
  if (s == TB_OK && mask) s = tb_cl_binary(ctx, SLOT_MASK, scores, mask, scores, 0);
  if (s == TB_OK && lk > 0) {
    cl_launch l;
    tb_cl_begin(&l, ctx, SLOT_SOFTMAX, "tb_softmax");
    tb_cl_arg_tensor(&l, scores);
    tb_cl_arg_tensor(&l, scores);
    tb_cl_arg_int(&l, tb_tensor_numel(scores) / lk);
    tb_cl_arg_int(&l, lk);
    tb_cl_arg_int(&l, 1);
    tb_cl_arg_int(&l, 0);
    s = tb_cl_go(&l, (size_t)(tb_tensor_numel(scores) / lk));
  }
  memset(idx, 0, sizeof idx);
  if (s == TB_OK) do {
      int64_t boff = 0;
      for (size_t i = 0; i < nb; i++) boff = boff * y->shape[i] + idx[i];
      mat ms = {scores, boff * lq * lk, lk, false};
      mat mv = {v, batch_offset(nb, idx, v->ndim - 2, v->shape, lk * dv), dv, false};
      mat my = {y, boff * lq * dv, dv, false};
      s = tb_cl_gemm(ctx, lq, dv, lk, 1.0f, ms, mv, 0.0f, my);
    } while (s == TB_OK && next_index(nb, y->shape, idx));
  tb_tensor_destroy(scores); /* its block is reused only by work queued after this on the in-order queue */
  return s;
}

static bool f32_accepts(const tb_kernel_query *q) {
  const tb_value_type *const *in = q->in;
  const tb_activation_params *act = tb_fused_activation(q->domain, q->op_type, q->params);
  if (act && act->kind > TB_FUSED_ACT_GELU_TANH) return false; /* SiLU, Mish: not in tb_unary; the CPU runs them */
  bool any = false;
  for (size_t i = 0; i < q->n_inputs; i++) {
    if (!in[i]) continue;
    if (!in[i]->has_dtype || in[i]->dtype != TB_DTYPE_F32) return false;
    any = true;
  }
  return any && q->n_inputs >= 2 && in[0] && in[1];
}

static const tb_kernel kernels[] = {
    CL_KERNEL("", "MatMul", f32_accepts, matmul),
    CL_KERNEL("", "Gemm", f32_accepts, gemm_op),
    CL_KERNEL("tb", "FusedMatMul", f32_accepts, fused_matmul),
    CL_KERNEL("tb", "FusedGemm", f32_accepts, fused_gemm),
    CL_KERNEL("tb", "Attention", f32_accepts, attention),
};
const cl_family tb_cl_family_gemm = {kernels, sizeof kernels / sizeof kernels[0]};
