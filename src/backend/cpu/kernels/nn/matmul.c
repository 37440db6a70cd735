/* Reference kernels for MatMul (numpy matmul) and Gemm; products accumulate in double. */
#include "backend/cpu/kernels/nn/nn_kernel.h"
#include <stdlib.h>
#include <string.h>
#include "core/threadpool.h"

typedef struct matmul_rows {
  const nn_buf *a, *b;
  double *y;
  int64_t m, k, n;
  size_t nb, ba, bb;
  const int64_t *batch;
} matmul_rows;

/* Rows [begin, end) of the flattened (batch, row) index space. */
static void matmul_row_range(void *arg, size_t begin, size_t end) {
  const matmul_rows *r = arg;
  int64_t m = r->m, k = r->k, n = r->n;
  for (size_t t = begin; t < end; t++) {
    int64_t p = (int64_t)t / m, i = (int64_t)t % m, rest = p;
    int64_t idx[TB_MAX_DIMS] = {0};
    for (size_t d = r->nb; d-- > 0;) {
      idx[d] = rest % r->batch[d];
      rest /= r->batch[d];
    }
    const double *pa = r->a->data + tb_nn_bcast_offset(r->nb, idx, r->ba, r->a->shape) * m * k + i * k;
    const double *pb = r->b->data + tb_nn_bcast_offset(r->nb, idx, r->bb, r->b->shape) * k * n;
    double *py = r->y + p * m * n + i * n;
    for (int64_t j = 0; j < n; j++) {
      double s = 0;
      for (int64_t q = 0; q < k; q++) s += pa[q] * pb[q * n + j];
      py[j] = s;
    }
  }
}

tb_status tb_nn_matmul(tb_kernel_ctx *ctx, const nn_buf *a, const nn_buf *b, double **out, size_t *out_ndim,
                    int64_t *out_shape) {
  *out = NULL;
  if (a->ndim == 0 || b->ndim == 0)
    return tb_kernel_error(ctx, TB_ERR_MODEL, "MatMul operands must have rank >= 1 (got %zu and %zu)", a->ndim, b->ndim);
  /* Promote 1-D operands: a [K] -> [1, K], b [K] -> [K, 1]; the added axes are not in the output. */
  int64_t m = a->ndim >= 2 ? a->shape[a->ndim - 2] : 1, k = a->shape[a->ndim - 1];
  int64_t kb = b->ndim >= 2 ? b->shape[b->ndim - 2] : b->shape[0], n = b->ndim >= 2 ? b->shape[b->ndim - 1] : 1;
  if (k != kb)
    return tb_kernel_error(ctx, TB_ERR_MODEL, "MatMul inner dimensions differ: %lld vs %lld", (long long)k, (long long)kb);
  size_t ba = a->ndim > 2 ? a->ndim - 2 : 0, bb = b->ndim > 2 ? b->ndim - 2 : 0, nb = ba > bb ? ba : bb;
  int64_t batch[TB_MAX_DIMS] = {0};
  for (size_t i = 0; i < nb; i++) {
    int64_t da = i + ba >= nb ? a->shape[i + ba - nb] : 1, db = i + bb >= nb ? b->shape[i + bb - nb] : 1;
    if (da != db && da != 1 && db != 1)
      return tb_kernel_error(ctx, TB_ERR_MODEL, "MatMul batch dims %lld and %lld do not broadcast", (long long)da,
                             (long long)db);
    batch[i] = da == 1 ? db : da;
  }
  size_t on = nb;
  memcpy(out_shape, batch, nb * sizeof(int64_t));
  if (a->ndim >= 2) out_shape[on++] = m;
  if (b->ndim >= 2) out_shape[on++] = n;
  *out_ndim = on;
  int64_t total = 0;
  double *y = NULL;
  tb_status st = tb_nn_checked_numel(ctx, on, out_shape, &total);
  if (st == TB_OK) st = tb_nn_alloc(ctx, total, &y);
  if (st != TB_OK) return st;
  int64_t batches = total ? tb_nn_numel(nb, batch) : 0; /* fits: total does */
  matmul_rows job = {a, b, y, m, k, n, nb, ba, bb, batch};
  /* Each task is one output row of one batch: independent outputs, so any split gives the same bits. */
  tb_pool_parallel_for_work(ctx->pool, (size_t)(batches * m), (double)total * (double)k, matmul_row_range, &job);
  *out = y;
  return TB_OK;
}

static tb_status matmul_run(tb_kernel_ctx *ctx) {
  nn_buf a = {0}, b = {0};
  double *y = NULL;
  int64_t shape[TB_MAX_DIMS];
  size_t ndim = 0;
  tb_status st = tb_nn_load(ctx, 0, false, &a);
  if (st == TB_OK) st = tb_nn_load(ctx, 1, false, &b);
  if (st == TB_OK) st = tb_nn_matmul(ctx, &a, &b, &y, &ndim, shape);
  if (st == TB_OK) st = tb_nn_store(ctx, 0, a.dtype, ndim, shape, y);
  free(y);
  tb_nn_buf_free(&a);
  tb_nn_buf_free(&b);
  return st;
}

static tb_status gemm_run(tb_kernel_ctx *ctx) {
  tb_status st;
  const tb_gemm_params *pb = tb_kernel_params(ctx, &st);
  if (st != TB_OK) return st;
  const tb_gemm_params *p = pb;
  bool trans_a = p->trans_a, trans_b = p->trans_b;
  double alpha = p->alpha, beta = p->beta;
  nn_buf a = {0}, b = {0}, c = {0};
  double *y = NULL;
  st = tb_nn_load(ctx, 0, false, &a);
  if (st == TB_OK) st = tb_nn_load(ctx, 1, false, &b);
  if (st == TB_OK) st = tb_nn_load(ctx, 2, true, &c);
  if (st != TB_OK) goto done;
  if (a.ndim != 2 || b.ndim != 2) {
    st = tb_kernel_error(ctx, TB_ERR_MODEL, "A and B must be 2-D (got ranks %zu and %zu)", a.ndim, b.ndim);
    goto done;
  }
  int64_t m = a.shape[trans_a ? 1 : 0], k = a.shape[trans_a ? 0 : 1];
  int64_t kb = b.shape[trans_b ? 1 : 0], n = b.shape[trans_b ? 0 : 1];
  int64_t out_shape[2] = {m, n};
  if (k != kb) {
    st = tb_kernel_error(ctx, TB_ERR_MODEL, "inner dimensions of A and B differ: %lld vs %lld", (long long)k, (long long)kb);
    goto done;
  }
  if (c.data) {
    bool ok = c.ndim <= 2;
    for (size_t i = 0; ok && i < c.ndim; i++) ok = c.shape[i] == 1 || c.shape[i] == out_shape[2 - c.ndim + i];
    if (!ok) {
      st = tb_kernel_error(ctx, TB_ERR_MODEL, "input C (rank %zu) does not broadcast to [%lld, %lld]", c.ndim,
                           (long long)m, (long long)n);
      goto done;
    }
  }
  int64_t total = 0;
  st = tb_nn_checked_numel(ctx, 2, out_shape, &total);
  if (st == TB_OK) st = tb_nn_alloc(ctx, total, &y);
  if (st != TB_OK) goto done;
  for (int64_t i = 0; i < m; i++)
    for (int64_t j = 0; j < n; j++) {
      double s = 0;
      for (int64_t q = 0; q < k; q++) {
        double av = trans_a ? a.data[q * m + i] : a.data[i * k + q];
        double bv = trans_b ? b.data[j * k + q] : b.data[q * n + j];
        s += av * bv;
      }
      double v = (double)alpha * s;
      if (c.data) {
        int64_t idx[2] = {i, j};
        v += (double)beta * c.data[tb_nn_bcast_offset(2, idx, c.ndim, c.shape)];
      }
      y[i * n + j] = v;
    }
  st = tb_nn_store(ctx, 0, a.dtype, 2, out_shape, y);
done:
  free(y);
  tb_nn_buf_free(&a);
  tb_nn_buf_free(&b);
  tb_nn_buf_free(&c);
  return st;
}

const tb_kernel tb_kernel_matmul = {.domain = "", .name = "MatMul", .level = TB_KERNEL_REFERENCE, .cpu_features = 0, .accepts = NULL, .run = matmul_run};
const tb_kernel tb_kernel_gemm = {.domain = "", .name = "Gemm", .level = TB_KERNEL_REFERENCE, .cpu_features = 0, .accepts = NULL, .run = gemm_run};
