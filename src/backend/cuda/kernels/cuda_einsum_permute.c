/* A float32 Einsum of two inputs that is a batched matrix product after permutations ("bhqd,bkhd->bhqk",
 * "ijk,kjl->li", "abc,cd->dba", outer products, products with several row, column or summed labels): the labels
 * split into batch (both inputs and the output), rows (A and the output), columns (B and the output) and summed (both
 * inputs only); A copied on the device into [batch, rows, summed], B into [batch, summed, cols] (tb_cu_dm_copy_*,
 * an ellipsis' broadcast dims stepping 0), one product [batch, rows, cols] on the GEMM family, written straight into
 * the output when its labels come in that order, else into a temporary and copied into the output's order. */
#include "backend/cuda/kernels/cuda_einsum_permute.h"
#include <string.h>
#include "backend/cuda/kernels/cuda_dm.h"
#include "backend/cuda/kernels/cuda_gemm.h"
#include "backend/kernel_shape.h"
#include "backend/tensor/tensor_impl.h"
#include "ops/fused/fused_params.h"

enum { ROLE_NONE, ROLE_BATCH, ROLE_ROW, ROLE_COL, ROLE_SUM };

void tb_cuda_einsum_label_counts(const nn_einsum *e, int count[3][NN_EINSUM_LABELS]) {
  memset(count, 0, 3 * sizeof count[0]);
  for (size_t i = 0; i < 2; i++)
    for (size_t a = 0; a < e->rank[i]; a++) count[i][e->label[i][a]]++;
  for (size_t k = 0; k < e->out_rank; k++) count[2][e->out_label[k]]++;
}

/* Each used label's role; false when a label is twice in one input or summed within one input only. */
static bool roles_of(const nn_einsum *e, int *role) {
  if (e->n_inputs != 2) return false;
  int count[3][NN_EINSUM_LABELS];
  tb_cuda_einsum_label_counts(e, count);
  for (int l = 0; l < NN_EINSUM_LABELS; l++) {
    role[l] = ROLE_NONE;
    if (!e->used[l]) continue;
    if (count[0][l] > 1 || count[1][l] > 1) return false;
    bool a = count[0][l] > 0, b = count[1][l] > 0, out = count[2][l] > 0;
    role[l] = a && b ? (out ? ROLE_BATCH : ROLE_SUM) : a && out ? ROLE_ROW : b && out ? ROLE_COL : ROLE_NONE;
    if (role[l] == ROLE_NONE) return false;
  }
  return true;
}

bool tb_cuda_einsum_permutable(const nn_einsum *e) {
  int role[NN_EINSUM_LABELS];
  return roles_of(e, role);
}

/* The labels of a role: from the output in its order (batch, rows, columns) or from A in its order (summed). */
static size_t labels_of(const nn_einsum *e, const int *role, int which, int *out) {
  size_t n = 0;
  if (which == ROLE_SUM) {
    for (size_t a = 0; a < e->rank[0]; a++)
      if (role[e->label[0][a]] == ROLE_SUM) out[n++] = e->label[0][a];
  } else {
    for (size_t k = 0; k < e->out_rank; k++)
      if (role[e->out_label[k]] == which) out[n++] = e->out_label[k];
  }
  return n;
}

int64_t tb_cuda_einsum_step(const tb_tensor *t, const nn_einsum *e, size_t i, int l) {
  int64_t own[TB_MAX_DIMS], st = 0;
  tb_shape_strides(t->ndim, t->shape, own);
  for (size_t a = 0; l >= 0 && a < t->ndim; a++)
    if (e->label[i][a] == l && t->shape[a] != 1) st += own[a];
  return st;
}

/* dst (contiguous, the labels' sizes in this order) = input i laid out by these labels. */
static tb_status gather(tb_kernel_ctx *ctx, const nn_einsum *e, size_t i, const int64_t *sizes, const int *labels, size_t n, tb_tensor *dst) {
  const tb_tensor *src = ctx->inputs[i];
  int64_t shape[TB_MAX_DIMS], src_st[TB_MAX_DIMS], dst_st[TB_MAX_DIMS];
  for (size_t k = 0; k < n; k++) shape[k] = sizes[labels[k]], src_st[k] = tb_cuda_einsum_step(src, e, i, labels[k]);
  tb_shape_strides(n, shape, dst_st);
  return tb_cuda_dm_strided_copy(ctx, src, 0, src_st, dst, 0, dst_st, n, shape);
}

static int64_t product(const int64_t *sizes, const int *labels, size_t n) {
  int64_t p = 1;
  for (size_t k = 0; k < n; k++) p *= sizes[labels[k]];
  return p;
}

tb_status tb_cuda_einsum_permuted(tb_kernel_ctx *ctx, const nn_einsum *e, const int64_t *sizes, tb_tensor *y) {
  int role[NN_EINSUM_LABELS], batch[TB_MAX_DIMS], rows[TB_MAX_DIMS], cols[TB_MAX_DIMS], sum[TB_MAX_DIMS];
  if (!roles_of(e, role)) return tb_kernel_error(ctx, TB_ERR_INTERNAL, "the equation is no product after permutations");
  size_t nb = labels_of(e, role, ROLE_BATCH, batch), nr = labels_of(e, role, ROLE_ROW, rows);
  size_t nc = labels_of(e, role, ROLE_COL, cols), ns = labels_of(e, role, ROLE_SUM, sum);
  int64_t B = product(sizes, batch, nb), M = product(sizes, rows, nr), N = product(sizes, cols, nc), K = product(sizes, sum, ns);
  if (B * M * N == 0) return TB_OK;
  int a_labels[TB_MAX_DIMS], b_labels[TB_MAX_DIMS], c_labels[TB_MAX_DIMS];
  size_t na = 0, nbl = 0, ncl = 0;
  for (size_t k = 0; k < nb; k++) a_labels[na++] = b_labels[nbl++] = c_labels[ncl++] = batch[k];
  for (size_t k = 0; k < nr; k++) a_labels[na++] = c_labels[ncl++] = rows[k];
  for (size_t k = 0; k < ns; k++) a_labels[na++] = sum[k], b_labels[nbl++] = sum[k];
  for (size_t k = 0; k < nc; k++) b_labels[nbl++] = c_labels[ncl++] = cols[k];
  bool direct = true; /* the output's labels are [batch, rows, cols] already */
  for (size_t k = 0; k < e->out_rank; k++) direct = direct && e->out_label[k] == c_labels[k];
  tb_tensor *a = NULL, *b = NULL, *c = NULL;
  const int64_t a_shape[3] = {B, M, K}, b_shape[3] = {B, K, N}, c_shape[3] = {B, M, N};
  tb_status st = tb_tensor_create(ctx->backend, TB_DTYPE_F32, 3, a_shape, &a);
  if (st == TB_OK) st = tb_tensor_create(ctx->backend, TB_DTYPE_F32, 3, b_shape, &b);
  if (st == TB_OK && !direct) st = tb_tensor_create(ctx->backend, TB_DTYPE_F32, 3, c_shape, &c);
  if (st == TB_OK) st = gather(ctx, e, 0, sizes, a_labels, na, a);
  if (st == TB_OK) st = gather(ctx, e, 1, sizes, b_labels, nbl, b);
  if (st == TB_OK) {
    tb_cuda_gemm_desc d = {.act = TB_FUSED_ACT_NONE, .alpha = 1.0f, .m = M, .n = N, .k = K, .a_rs = K, .a_cs = 1, .b_rs = N, .b_cs = 1};
    d.a_batch[0] = M * K, d.b_batch[0] = K * N;
    tb_cuda_gemm_set_batch(&d, 1, &B);
    tb_cuda_gemm_merge_batch(&d);
    st = tb_cuda_gemm_run(ctx, &d, a, b, direct ? y : c, NULL, NULL);
  }
  if (st == TB_OK && !direct) { /* c [batch, rows, cols] into the output's label order */
    int64_t c_st[TB_MAX_DIMS], shape[TB_MAX_DIMS], src_st[TB_MAX_DIMS], dst_st[TB_MAX_DIMS], c_sizes[TB_MAX_DIMS];
    for (size_t k = 0; k < ncl; k++) c_sizes[k] = sizes[c_labels[k]];
    tb_shape_strides(ncl, c_sizes, c_st);
    for (size_t k = 0; k < e->out_rank; k++) {
      shape[k] = sizes[e->out_label[k]];
      for (size_t j = 0; j < ncl; j++)
        if (c_labels[j] == e->out_label[k]) src_st[k] = c_st[j];
    }
    tb_shape_strides(e->out_rank, shape, dst_st);
    st = tb_cuda_dm_strided_copy(ctx, c, 0, src_st, y, 0, dst_st, e->out_rank, shape);
  }
  tb_tensor_destroy(a);
  tb_tensor_destroy(b);
  tb_tensor_destroy(c);
  return st;
}
