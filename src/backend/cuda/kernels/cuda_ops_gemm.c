/* CUDA kernels of the matrix products on float32: MatMul (numpy's: 1-D operands promoted, any broadcast of
 * the batch dims), Gemm (transposes, alpha, beta and C broadcast to [M, N]), the O1 passes' tb::FusedMatMul
 * (bias, residual, activation) and tb::FusedGemm (activation), and tb::Attention (Q K_T scaled, plus the
 * mask, softmax along the last axis, times V: two products and the softmax kernel between them). Each
 * product is one tb_cuda_gemm_desc run by cuda_gemm.c: cuBLASLt where it is installed, the own tiled
 * kernel otherwise. Each op has an entry per reduced precision the prepare options may ask for
 * (tb_kernel_query.device_precision: tf32, bf16, fp16, fp8), named in the prepare result's node_precisions, and
 * the fp32 one. */
#include <math.h>
#include <string.h>
#include "backend/cuda/kernels/cuda_gemm.h"
#include "backend/cuda/kernels/cuda_ops.h"
#include "backend/kernel_params.h"
#include "backend/tensor/tensor_impl.h"
#include "ops/fused/fused_params.h"
#include "ops/nn/nn_params.h"

/* The broadcast of the batch dims (all but the last two) of n tensors into dims; false when two differ. */
static bool batch_broadcast(const tb_tensor *const *ts, size_t n, size_t *rank, int64_t *dims) {
  *rank = 0;
  for (size_t i = 0; i < n; i++)
    if (ts[i]->ndim > 2 && ts[i]->ndim - 2 > *rank) *rank = ts[i]->ndim - 2;
  for (size_t r = 0; r < *rank; r++) dims[r] = 1;
  for (size_t i = 0; i < n; i++) {
    size_t br = ts[i]->ndim > 2 ? ts[i]->ndim - 2 : 0;
    for (size_t r = 0; r < br; r++) {
      int64_t v = ts[i]->shape[r], *o = &dims[*rank - br + r];
      if (v == *o || v == 1) continue;
      if (*o != 1) return false;
      *o = v;
    }
  }
  return true;
}

/* d: C [batch..., m, n] = alpha A B over the batch dims (dims, batch_rank of them); the strides, addends and
 * activation left zero for the caller. */
static void product_desc(tb_cuda_gemm_desc *d, size_t batch_rank, const int64_t *dims, int64_t m, int64_t n, int64_t k, float alpha) {
  memset(d, 0, sizeof *d);
  tb_cuda_gemm_set_batch(d, batch_rank, dims);
  d->m = m;
  d->n = n;
  d->k = k;
  d->alpha = alpha;
}

/* An addend of the product (bias, residual, C, mask): its strides against the output [batch..., m, n]
 * with `scale`, into addend slot `slot` (0 or 1) of d; false when it does not broadcast to that shape. */
static bool set_addend(tb_cuda_gemm_desc *d, int slot, const tb_tensor *t, float scale) {
  size_t full = (size_t)d->batch_rank + 2;
  if (t->ndim > full) return false;
  for (size_t i = 0; i < t->ndim; i++) {
    size_t o = full - t->ndim + i;
    int64_t want = o < (size_t)d->batch_rank ? d->batch_dims[o] : o == full - 2 ? d->m : d->n;
    if (t->shape[i] != 1 && t->shape[i] != want) return false;
  }
  int64_t *batch = slot ? d->add1_batch : d->add0_batch;
  int64_t *rs = slot ? &d->add1_rs : &d->add0_rs, *cs = slot ? &d->add1_cs : &d->add0_cs;
  tb_cuda_gemm_strides(t->ndim, t->shape, (size_t)d->batch_rank, batch, rs, cs);
  *(slot ? &d->add1_scale : &d->add0_scale) = scale;
  return true;
}

static void set_activation(tb_cuda_gemm_desc *d, const tb_activation_params *act) {
  if (!act) return;
  d->act = (int32_t)act->kind;
  d->act_alpha = act->alpha;
  d->act_beta = act->beta;
  d->act_min = act->min;
  d->act_max = act->max;
}

static tb_status addend_error(tb_kernel_ctx *ctx, const char *what, const tb_tensor *t, const tb_tensor *y) {
  char ts[160], ys[160];
  tb_dims_str(ts, sizeof ts, t->ndim, t->shape);
  tb_dims_str(ys, sizeof ys, y->ndim, y->shape);
  return tb_kernel_error(ctx, TB_ERR_INVALID_ARGUMENT, "the %s %s does not broadcast to the output %s; give it a shape that does",
                         what, ts, ys);
}

/* ---- MatMul and tb::FusedMatMul ------------------------------------------------------------------ */

static tb_status matmul_run(tb_kernel_ctx *ctx) {
  const tb_tensor *a = ctx->inputs[0], *b = ctx->inputs[1];
  const tb_tensor *bias = ctx->n_inputs > 2 ? ctx->inputs[2] : NULL, *residual = ctx->n_inputs > 3 ? ctx->inputs[3] : NULL;
  char as[160], bs[160];
  if (a->ndim < 1 || b->ndim < 1) return tb_kernel_error(ctx, TB_ERR_INVALID_ARGUMENT, "MatMul operands must have rank >= 1 (got ranks %zu and %zu)", a->ndim, b->ndim);
  int64_t m = a->ndim >= 2 ? a->shape[a->ndim - 2] : 1, k = a->shape[a->ndim - 1];
  int64_t kb = b->ndim >= 2 ? b->shape[b->ndim - 2] : b->shape[0], n = b->ndim >= 2 ? b->shape[b->ndim - 1] : 1;
  int64_t dims[TB_MAX_DIMS], shape[TB_MAX_DIMS];
  size_t rank = 0;
  const tb_tensor *ops[2] = {a, b};
  if (k != kb || !batch_broadcast(ops, 2, &rank, dims)) {
    tb_dims_str(as, sizeof as, a->ndim, a->shape);
    tb_dims_str(bs, sizeof bs, b->ndim, b->shape);
    return tb_kernel_error(ctx, TB_ERR_INVALID_ARGUMENT, "A %s and B %s do not multiply: %s; check the inputs' shapes", as, bs,
                           k != kb ? "A's last dim differs from B's rows" : "their batch dims do not broadcast");
  }
  size_t ndim = rank;
  memcpy(shape, dims, rank * sizeof *shape);
  if (a->ndim >= 2) shape[ndim++] = m;
  if (b->ndim >= 2) shape[ndim++] = n;
  tb_tensor *y = NULL;
  tb_status st = tb_kernel_output(ctx, 0, TB_DTYPE_F32, ndim, shape, &y);
  if (st != TB_OK) return st;
  tb_cuda_gemm_desc d;
  product_desc(&d, rank, dims, m, n, k, 1.0f);
  if (a->ndim >= 2) tb_cuda_gemm_strides(a->ndim, a->shape, rank, d.a_batch, &d.a_rs, &d.a_cs);
  else d.a_cs = 1;
  if (b->ndim >= 2) tb_cuda_gemm_strides(b->ndim, b->shape, rank, d.b_batch, &d.b_rs, &d.b_cs);
  else d.b_rs = 1;
  if (bias && !set_addend(&d, 0, bias, 1.0f)) return addend_error(ctx, "bias", bias, y);
  if (residual) {
    /* the output's shape: read as [batch..., m, n] (a 1-D operand's dropped dim back as 1) */
    if (residual->ndim != y->ndim || memcmp(residual->shape, y->shape, y->ndim * sizeof *y->shape) != 0)
      return addend_error(ctx, "residual", residual, y); /* read with the output's strides: the same shape only */
    int64_t full[TB_MAX_DIMS];
    memcpy(full, dims, rank * sizeof *full);
    full[rank] = m;
    full[rank + 1] = n;
    tb_cuda_gemm_strides(rank + 2, full, rank, d.add1_batch, &d.add1_rs, &d.add1_cs);
    d.add1_scale = 1.0f;
  }
  set_activation(&d, tb_fused_activation(ctx->domain, ctx->op_type, ctx->params));
  tb_cuda_gemm_merge_batch(&d);
  return tb_cuda_gemm_run(ctx, &d, a, b, y, bias, residual);
}

/* ---- Gemm and tb::FusedGemm ---------------------------------------------------------------------- */

static tb_status gemm_run(tb_kernel_ctx *ctx) {
  tb_status st;
  const tb_gemm_params *p = tb_kernel_params(ctx, &st); /* FusedGemm's parameters start with Gemm's */
  if (!p) return st;
  const tb_tensor *a = ctx->inputs[0], *b = ctx->inputs[1], *c = ctx->n_inputs > 2 ? ctx->inputs[2] : NULL;
  char as[160], bs[160];
  if (a->ndim != 2 || b->ndim != 2) {
    tb_dims_str(as, sizeof as, a->ndim, a->shape);
    tb_dims_str(bs, sizeof bs, b->ndim, b->shape);
    return tb_kernel_error(ctx, TB_ERR_INVALID_ARGUMENT, "Gemm takes 2-D A and B (got %s and %s)", as, bs);
  }
  int64_t m = a->shape[p->trans_a ? 1 : 0], k = a->shape[p->trans_a ? 0 : 1];
  int64_t kb = b->shape[p->trans_b ? 1 : 0], n = b->shape[p->trans_b ? 0 : 1];
  if (k != kb) {
    tb_dims_str(as, sizeof as, a->ndim, a->shape);
    tb_dims_str(bs, sizeof bs, b->ndim, b->shape);
    return tb_kernel_error(ctx, TB_ERR_INVALID_ARGUMENT, "A %s (transA %d) and B %s (transB %d) do not multiply: inner dims %lld and %lld", as,
                           (int)p->trans_a, bs, (int)p->trans_b, (long long)k, (long long)kb);
  }
  const int64_t shape[2] = {m, n};
  tb_tensor *y = NULL;
  if ((st = tb_kernel_output(ctx, 0, TB_DTYPE_F32, 2, shape, &y)) != TB_OK) return st;
  tb_cuda_gemm_desc d;
  product_desc(&d, 0, NULL, m, n, k, p->alpha);
  /* stored row-major: A [m, k] or, transposed, [k, m]; B [k, n] or [n, k] */
  d.a_rs = p->trans_a ? 1 : a->shape[1];
  d.a_cs = p->trans_a ? a->shape[1] : 1;
  d.b_rs = p->trans_b ? 1 : b->shape[1];
  d.b_cs = p->trans_b ? b->shape[1] : 1;
  if (c && !set_addend(&d, 0, c, p->beta)) return addend_error(ctx, "input C", c, y);
  set_activation(&d, tb_fused_activation(ctx->domain, ctx->op_type, ctx->params));
  return tb_cuda_gemm_run(ctx, &d, a, b, y, c, NULL);
}

/* ---- tb::Attention ------------------------------------------------------------------------------- */

static bool power_of_two(float v) {
  int e;
  return v > 0.0f && isfinite(v) && frexpf(v, &e) == 0.5f;
}

static tb_status attention_run(tb_kernel_ctx *ctx) {
  tb_status st;
  const tb_attention_params *p = tb_kernel_params(ctx, &st);
  if (!p) return st;
  const tb_tensor *q = ctx->inputs[0], *kt = ctx->inputs[1], *v = ctx->inputs[2], *mask = ctx->n_inputs > 3 ? ctx->inputs[3] : NULL;
  if (q->ndim < 2 || kt->ndim < 2 || v->ndim < 2)
    return tb_kernel_error(ctx, TB_ERR_INVALID_ARGUMENT, "Q, K_T and V must have rank >= 2 (got %zu, %zu, %zu)", q->ndim, kt->ndim, v->ndim);
  int64_t lq = q->shape[q->ndim - 2], dk = q->shape[q->ndim - 1], lk = kt->shape[kt->ndim - 1], dv = v->shape[v->ndim - 1];
  int64_t dims[TB_MAX_DIMS], shape[TB_MAX_DIMS];
  size_t rank = 0;
  const tb_tensor *ops[3] = {q, kt, v};
  if (kt->shape[kt->ndim - 2] != dk || v->shape[v->ndim - 2] != lk || !batch_broadcast(ops, 3, &rank, dims))
    return tb_kernel_error(ctx, TB_ERR_INVALID_ARGUMENT,
                           "Q [.., %lld, %lld], K_T [.., %lld, %lld] and V [.., %lld, %lld] do not chain or their batch dims do not "
                           "broadcast; check the inputs' shapes",
                           (long long)lq, (long long)dk, (long long)kt->shape[kt->ndim - 2], (long long)lk,
                           (long long)v->shape[v->ndim - 2], (long long)dv);
  memcpy(shape, dims, rank * sizeof *shape);
  shape[rank] = lq;
  shape[rank + 1] = dv;
  tb_tensor *y = NULL, *scores = NULL, *probs = NULL;
  if ((st = tb_kernel_output(ctx, 0, TB_DTYPE_F32, rank + 2, shape, &y)) != TB_OK) return st;
  if (tb_tensor_numel(y) == 0) return TB_OK;
  /* S = Q K_T (scaled) + mask */
  tb_cuda_gemm_desc s;
  product_desc(&s, rank, dims, lq, lk, dk, p->has_scale ? p->scale : 1.0f);
  s.divide = p->has_scale && p->scale_divide;
  if (s.divide && power_of_two(s.alpha)) { /* x / 2^e is x * 2^-e exactly: cuBLASLt's alpha can carry it */
    s.alpha = 1.0f / s.alpha;
    s.divide = 0;
  }
  tb_cuda_gemm_strides(q->ndim, q->shape, rank, s.a_batch, &s.a_rs, &s.a_cs);
  tb_cuda_gemm_strides(kt->ndim, kt->shape, rank, s.b_batch, &s.b_rs, &s.b_cs);
  if (mask && !set_addend(&s, 0, mask, 1.0f)) return addend_error(ctx, "mask", mask, y);
  int64_t s_shape[TB_MAX_DIMS];
  memcpy(s_shape, dims, rank * sizeof *s_shape);
  s_shape[rank] = lq;
  s_shape[rank + 1] = lk;
  /* Y = softmax(S) V */
  tb_cuda_gemm_desc o;
  product_desc(&o, rank, dims, lq, dv, lk, 1.0f);
  tb_cuda_gemm_strides(rank + 2, s_shape, rank, o.a_batch, &o.a_rs, &o.a_cs);
  tb_cuda_gemm_strides(v->ndim, v->shape, rank, o.b_batch, &o.b_rs, &o.b_cs);
  tb_cuda_gemm_merge_batch(&s);
  tb_cuda_gemm_merge_batch(&o);
  st = tb_tensor_create(ctx->backend, TB_DTYPE_F32, rank + 2, s_shape, &scores);
  if (st == TB_OK) st = tb_tensor_create(ctx->backend, TB_DTYPE_F32, rank + 2, s_shape, &probs);
  if (st == TB_OK) st = tb_cuda_gemm_run(ctx, &s, q, kt, scores, mask, NULL);
  if (st == TB_OK && lk > 0) {
    tb_cuda_launch l;
    tb_cuda_begin(&l, ctx, "tb_cu_softmax_f32_rows");
    tb_cuda_arg_tensor(&l, scores);
    tb_cuda_arg_tensor(&l, probs);
    tb_cuda_arg_i64(&l, tb_tensor_numel(scores) / lk);
    tb_cuda_arg_i64(&l, lk);
    st = tb_cuda_go_rows(&l, tb_tensor_numel(scores) / lk, lk);
  }
  if (st == TB_OK) st = tb_cuda_gemm_run(ctx, &o, probs, v, y, NULL, NULL);
  tb_tensor_destroy(scores);
  tb_tensor_destroy(probs);
  return st;
}

/* ---- Registration -------------------------------------------------------------------------------- */

static bool all_f32(const tb_kernel_query *q, size_t min_inputs) {
  return q->n_inputs >= min_inputs && q->in[0] && q->in[1] && tb_cuda_all_f32(q);
}
static bool matmul_accepts(const tb_kernel_query *q) { return all_f32(q, 2); }
static bool gemm_accepts(const tb_kernel_query *q) { return q->params && all_f32(q, 2); }
static bool attention_accepts(const tb_kernel_query *q) { return q->params && q->in[2] && all_f32(q, 3); }

/* The reduced-precision entries: the op's accepts() and the precision the options ask for. */
#define TB_CUDA_LOWP_ACCEPTS(base, tag, precision) \
  static bool base##_##tag(const tb_kernel_query *q) { return q->device_precision == (precision) && base(q); }
#define TB_CUDA_LOWP_ALL(base)                    \
  TB_CUDA_LOWP_ACCEPTS(base, tf32, TB_DEVICE_TF32) \
  TB_CUDA_LOWP_ACCEPTS(base, bf16, TB_DEVICE_BF16) \
  TB_CUDA_LOWP_ACCEPTS(base, fp16, TB_DEVICE_FP16) \
  TB_CUDA_LOWP_ACCEPTS(base, fp8, TB_DEVICE_FP8)
TB_CUDA_LOWP_ALL(matmul_accepts)
TB_CUDA_LOWP_ALL(gemm_accepts)
TB_CUDA_LOWP_ALL(attention_accepts)

#define TB_CUDA_GEMM_KERNEL(domain, name, accepts, run, prepare, precision) \
  {domain, name, TB_KERNEL_REFERENCE, 0, accepts, run, prepare, tb_cuda_gemm_release, precision}
/* Every precision of one op, the reduced ones first (find_kernel takes the first that accepts). Attention asked for
 * fp8 computes in bf16 (its operands are all activations, the second product's A the softmax's output: per-tensor
 * fp8 scales would cost two passes over each for little). */
#define TB_CUDA_GEMM_OP(domain, name, accepts, run)                                                 \
  TB_CUDA_GEMM_KERNEL(domain, name, accepts##_tf32, run, tb_cuda_gemm_prepare_tf32, "tf32"),        \
      TB_CUDA_GEMM_KERNEL(domain, name, accepts##_bf16, run, tb_cuda_gemm_prepare_bf16, "bf16"),    \
      TB_CUDA_GEMM_KERNEL(domain, name, accepts##_fp16, run, tb_cuda_gemm_prepare_fp16, "fp16"),    \
      TB_CUDA_GEMM_KERNEL(domain, name, accepts##_fp8, run, tb_cuda_gemm_prepare_fp8, "fp8 e4m3"), \
      TB_CUDA_GEMM_KERNEL(domain, name, accepts, run, tb_cuda_gemm_prepare, NULL)
static const tb_kernel kernels[] = {
    TB_CUDA_GEMM_OP("", "MatMul", matmul_accepts, matmul_run),
    TB_CUDA_GEMM_OP("", "Gemm", gemm_accepts, gemm_run),
    TB_CUDA_GEMM_OP("tb", "FusedMatMul", gemm_accepts, matmul_run),
    TB_CUDA_GEMM_OP("tb", "FusedGemm", gemm_accepts, gemm_run),
    TB_CUDA_GEMM_KERNEL("tb", "Attention", attention_accepts_tf32, attention_run, tb_cuda_gemm_prepare_tf32, "tf32"),
    TB_CUDA_GEMM_KERNEL("tb", "Attention", attention_accepts_bf16, attention_run, tb_cuda_gemm_prepare_bf16, "bf16"),
    TB_CUDA_GEMM_KERNEL("tb", "Attention", attention_accepts_fp16, attention_run, tb_cuda_gemm_prepare_fp16, "fp16"),
    TB_CUDA_GEMM_KERNEL("tb", "Attention", attention_accepts_fp8, attention_run, tb_cuda_gemm_prepare_fp8_as_bf16, "bf16"),
    TB_CUDA_GEMM_KERNEL("tb", "Attention", attention_accepts, attention_run, tb_cuda_gemm_prepare, NULL),
};
const tb_cuda_family tb_cuda_family_gemm = {kernels, sizeof kernels / sizeof kernels[0]};
