/* Reference kernel of tb::Attention (see src/ops/fused/attention.c): per batch, S = Q @ K_T scaled and
 * masked, a softmax over the last axis, then S @ V. Sums are in double; each step is rounded to the
 * input dtype as the separate MatMul / Mul / Add / Softmax kernels round their outputs, so results match
 * the unfused graph to within the softmax's last-bit differences. */
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include "backend/cpu/kernels/fused/fused_kernel.h"
#include "backend/cpu/kernels/nn/nn_kernel.h"

static double round_to(tb_dtype dtype, double x) { return dtype == TB_DTYPE_F32 ? (double)(float)x : x; }

typedef struct attn {
  nn_buf q, k, v, mask;
  size_t nb;                    /* batch rank of the output */
  int64_t batch[TB_MAX_DIMS];
  int64_t lq, d, lk, dv;
  double scale;
  bool divide, has_scale;
} attn;

static tb_status batch_shape(tb_kernel_ctx *ctx, attn *a) {
  const nn_buf *ops[3] = {&a->q, &a->k, &a->v};
  a->nb = 0;
  for (int i = 0; i < 3; i++) {
    if (ops[i]->ndim < 2) return tb_kernel_error(ctx, TB_ERR_INVALID_ARGUMENT, "input %d has rank %zu; it needs >= 2", i, ops[i]->ndim);
    if (ops[i]->ndim - 2 > a->nb) a->nb = ops[i]->ndim - 2;
  }
  for (size_t k = 0; k < a->nb; k++) a->batch[k] = 1;
  for (int i = 0; i < 3; i++) {
    size_t r = ops[i]->ndim - 2;
    for (size_t k = 0; k < r; k++) {
      int64_t dim = ops[i]->shape[k], *out = &a->batch[a->nb - r + k];
      if (dim == *out || dim == 1) continue;
      if (*out != 1) return tb_kernel_error(ctx, TB_ERR_INVALID_ARGUMENT, "batch dims of Q, K_T and V do not broadcast");
      *out = dim;
    }
  }
  a->lq = a->q.shape[a->q.ndim - 2];
  a->d = a->q.shape[a->q.ndim - 1];
  a->lk = a->k.shape[a->k.ndim - 1];
  a->dv = a->v.shape[a->v.ndim - 1];
  if (a->k.shape[a->k.ndim - 2] != a->d || a->v.shape[a->v.ndim - 2] != a->lk)
    return tb_kernel_error(ctx, TB_ERR_INVALID_ARGUMENT, "inner dims differ: Q [.., %lld, %lld], K_T [.., %lld, %lld], V [.., %lld, %lld]",
                           (long long)a->lq, (long long)a->d, (long long)a->k.shape[a->k.ndim - 2], (long long)a->lk,
                           (long long)a->v.shape[a->v.ndim - 2], (long long)a->dv);
  if (a->mask.data && a->mask.ndim > a->nb + 2) return tb_kernel_error(ctx, TB_ERR_INVALID_ARGUMENT, "the mask has rank %zu, over the scores' %zu", a->mask.ndim, a->nb + 2);
  return TB_OK;
}

/* One batch entry: rows of S in s (lk doubles), output rows into y. */
static void attend(const attn *a, tb_dtype dt, const int64_t *bidx, double *s, double *y) {
  const double *q = a->q.data + tb_nn_bcast_offset(a->nb, bidx, a->q.ndim - 2, a->q.shape) * a->lq * a->d;
  const double *k = a->k.data + tb_nn_bcast_offset(a->nb, bidx, a->k.ndim - 2, a->k.shape) * a->d * a->lk;
  const double *v = a->v.data + tb_nn_bcast_offset(a->nb, bidx, a->v.ndim - 2, a->v.shape) * a->lk * a->dv;
  int64_t full[TB_MAX_DIMS + 2];
  memcpy(full, bidx, a->nb * sizeof(int64_t));
  for (int64_t i = 0; i < a->lq; i++) {
    double mx = -INFINITY;
    for (int64_t j = 0; j < a->lk; j++) {
      double acc = 0.0;
      for (int64_t c = 0; c < a->d; c++) acc += q[i * a->d + c] * k[c * a->lk + j];
      double x = round_to(dt, acc);
      if (a->has_scale) x = round_to(dt, a->divide ? x / a->scale : x * a->scale);
      if (a->mask.data) {
        full[a->nb] = i;
        full[a->nb + 1] = j;
        x = round_to(dt, x + a->mask.data[tb_nn_bcast_offset(a->nb + 2, full, a->mask.ndim, a->mask.shape)]);
      }
      s[j] = x;
      if (x > mx) mx = x;
    }
    double sum = 0.0;
    for (int64_t j = 0; j < a->lk; j++) sum += (s[j] = exp(s[j] - mx));
    for (int64_t j = 0; j < a->lk; j++) s[j] = round_to(dt, s[j] / sum);
    for (int64_t c = 0; c < a->dv; c++) {
      double acc = 0.0;
      for (int64_t j = 0; j < a->lk; j++) acc += s[j] * v[j * a->dv + c];
      y[i * a->dv + c] = acc;
    }
  }
}

static tb_status attention_run(tb_kernel_ctx *ctx) {
  attn a;
  memset(&a, 0, sizeof a);
  tb_status st;
  const tb_attention_params *pb = tb_kernel_params(ctx, &st);
  if (!pb) return st;
  a.scale = pb->scale;
  a.divide = pb->scale_divide;
  a.has_scale = pb->has_scale;
  if (st == TB_OK) st = tb_nn_load(ctx, 0, false, &a.q);
  if (st == TB_OK) st = tb_nn_load(ctx, 1, false, &a.k);
  if (st == TB_OK) st = tb_nn_load(ctx, 2, false, &a.v);
  if (st == TB_OK) st = tb_nn_load(ctx, 3, true, &a.mask);
  if (st == TB_OK) st = batch_shape(ctx, &a);
  int64_t shape[TB_MAX_DIMS + 2], n_out = 0;
  double *y = NULL, *s = NULL;
  if (st == TB_OK) {
    memcpy(shape, a.batch, a.nb * sizeof(int64_t));
    shape[a.nb] = a.lq;
    shape[a.nb + 1] = a.dv;
    st = tb_nn_checked_numel(ctx, a.nb + 2, shape, &n_out);
  }
  if (st == TB_OK) st = tb_nn_alloc(ctx, n_out, &y);
  if (st == TB_OK) st = tb_nn_alloc(ctx, a.lk, &s);
  if (st == TB_OK && n_out > 0) {
    int64_t bidx[TB_MAX_DIMS] = {0};
    int64_t per = a.lq * a.dv;
    double *yb = y;
    do {
      attend(&a, a.q.dtype, bidx, s, yb);
      yb += per;
    } while (tb_kernel_next_index(a.nb, a.batch, bidx));
  }
  if (st == TB_OK) st = tb_nn_store(ctx, 0, a.q.dtype, a.nb + 2, shape, y);
  free(y);
  free(s);
  tb_nn_buf_free(&a.q);
  tb_nn_buf_free(&a.k);
  tb_nn_buf_free(&a.v);
  tb_nn_buf_free(&a.mask);
  return st;
}

const tb_kernel tb_kernel_fused_attention = {.domain = "tb", .name = "Attention", .level = TB_KERNEL_REFERENCE, .cpu_features = 0, .accepts = NULL, .run = attention_run};
