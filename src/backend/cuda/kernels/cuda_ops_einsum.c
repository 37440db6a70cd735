/* CUDA Einsum: one or two inputs of one dtype (float32, float64, float16, bfloat16, int64, int32, int16, int8, uint8:
 * the CPU reference's), any equation the CPU reference parses (ops/nn/einsum_parse.h: explicit or implicit output,
 * repeated labels, an ellipsis with broadcasting) with at most 8 output labels and 4 summed ones; other equations run on
 * the CPU. A float32 product of two inputs whose labels are batch (both inputs and the output), at most one row label
 * (A and the output), one column label (B and the output) and one summed label, with the output ordered [batch...,
 * row, column], runs on the GEMM family (cuda_gemm.h: cuBLASLt or the own tiled kernel, the operands' strides as they
 * are, no copy); a float32 product after permutations (several batch, row, column or summed labels, any output order)
 * through cuda_einsum_permute.c (device copies around one GEMM); anything else on the generic contraction kernel
 * (kernels/72_einsum.cu, in double: a thread, a warp or a block per output by the length of the sum). */
#include <string.h>
#include "backend/cuda/kernels/cuda_dm.h"
#include "backend/cuda/kernels/cuda_einsum_permute.h"
#include "backend/cuda/kernels/cuda_gemm.h"
#include "backend/cuda/kernels/cuda_ops.h"
#include "backend/kernel_params.h"
#include "backend/tensor/tensor_impl.h"
#include "ops/fused/fused_params.h"
#include "ops/nn/einsum_parse.h"
#include "ops/nn/nn_params.h"

enum {
  EINSUM_INPUTS = 2,
  EINSUM_SUMMED = 4,
  EINSUM_WARP_FROM = 32,  /* summed terms from which a warp sums each output (below: a thread, in the CPU's order) */
  EINSUM_BLOCK_FROM = 1024 /* ... from which a block of 256 threads does */
};

/* The equation parsed for these input ranks; the summed labels, in the CPU's loop order (by label), in *sum. */
static tb_status einsum_plan(const char *equation, size_t n_in, const size_t *ranks, nn_einsum *e, int *sum, size_t *n_sum) {
  tb_status st = tb_nn_einsum_parse(equation, n_in, ranks, e);
  if (st != TB_OK) return st;
  bool in_out[NN_EINSUM_LABELS] = {false};
  for (size_t k = 0; k < e->out_rank; k++) in_out[e->out_label[k]] = true;
  *n_sum = 0;
  for (int l = 0; l < NN_EINSUM_LABELS; l++)
    if (e->used[l] && !in_out[l]) {
      if (*n_sum == EINSUM_SUMMED) return TB_ERR_UNSUPPORTED;
      sum[(*n_sum)++] = l;
    }
  return TB_OK;
}

/* The labels of a product the GEMM family can run (-1: none); false when the equation is no such product. */
typedef struct gemm_form {
  int batch[TB_CUDA_GEMM_MAX_BATCH], row, col, sum;
  size_t n_batch;
} gemm_form;

static bool gemm_form_of(const nn_einsum *e, gemm_form *f) {
  *f = (gemm_form){.row = -1, .col = -1, .sum = -1};
  if (e->n_inputs != 2) return false;
  int count[3][NN_EINSUM_LABELS];
  tb_cuda_einsum_label_counts(e, count);
  for (int l = 0; l < NN_EINSUM_LABELS; l++) {
    if (!e->used[l]) continue;
    bool a = count[0][l] > 0, b = count[1][l] > 0, out = count[2][l] > 0;
    if (count[0][l] > 1 || count[1][l] > 1) return false; /* a diagonal */
    if (a && b && !out) {
      if (f->sum >= 0) return false;
      f->sum = l;
    } else if (!(a && b && out) && !(a && out) && !(b && out)) {
      return false; /* summed within one input */
    }
  }
  size_t k = 0; /* the output: the batch labels, then the row's, then the column's */
  for (; k < e->out_rank && count[0][e->out_label[k]] && count[1][e->out_label[k]]; k++) {
    if (f->n_batch == TB_CUDA_GEMM_MAX_BATCH) return false;
    f->batch[f->n_batch++] = e->out_label[k];
  }
  if (k < e->out_rank && count[0][e->out_label[k]]) f->row = e->out_label[k++];
  if (k < e->out_rank && count[1][e->out_label[k]]) f->col = e->out_label[k++];
  return k == e->out_rank;
}

static tb_status einsum_gemm(tb_kernel_ctx *ctx, const nn_einsum *e, const gemm_form *f, const int64_t *sizes, tb_tensor *y) {
  const tb_tensor *a = ctx->inputs[0], *b = ctx->inputs[1];
  tb_cuda_gemm_desc d = {.act = TB_FUSED_ACT_NONE, .alpha = 1.0f};
  int64_t dims[TB_CUDA_GEMM_MAX_BATCH];
  for (size_t i = 0; i < f->n_batch; i++) {
    dims[i] = sizes[f->batch[i]];
    d.a_batch[i] = tb_cuda_einsum_step(a, e, 0, f->batch[i]);
    d.b_batch[i] = tb_cuda_einsum_step(b, e, 1, f->batch[i]);
  }
  tb_cuda_gemm_set_batch(&d, f->n_batch, dims);
  d.m = f->row >= 0 ? sizes[f->row] : 1;
  d.n = f->col >= 0 ? sizes[f->col] : 1;
  d.k = f->sum >= 0 ? sizes[f->sum] : 1;
  d.a_rs = tb_cuda_einsum_step(a, e, 0, f->row), d.a_cs = tb_cuda_einsum_step(a, e, 0, f->sum);
  d.b_rs = tb_cuda_einsum_step(b, e, 1, f->sum), d.b_cs = tb_cuda_einsum_step(b, e, 1, f->col);
  tb_cuda_gemm_merge_batch(&d);
  return tb_cuda_gemm_run(ctx, &d, a, b, y, NULL, NULL);
}

static tb_status einsum_run(tb_kernel_ctx *ctx) {
  tb_status st;
  const tb_einsum_params *p = tb_kernel_params(ctx, &st);
  if (!p) return st;
  size_t n_in = ctx->n_inputs, ranks[EINSUM_INPUTS];
  const int64_t *dims[EINSUM_INPUTS];
  if (n_in < 1 || n_in > EINSUM_INPUTS)
    return tb_kernel_error(ctx, TB_ERR_UNSUPPORTED, "%zu inputs; the CUDA Einsum takes 1 or 2", n_in);
  for (size_t i = 0; i < n_in; i++) ranks[i] = ctx->inputs[i]->ndim, dims[i] = ctx->inputs[i]->shape;
  nn_einsum e;
  int sum[EINSUM_SUMMED];
  size_t n_sum = 0;
  int64_t sizes[NN_EINSUM_LABELS];
  st = einsum_plan(p->equation, n_in, ranks, &e, sum, &n_sum);
  if (st == TB_ERR_UNSUPPORTED)
    return tb_kernel_error(ctx, st, "equation '%s' sums over more than %d labels; the CUDA Einsum takes up to %d", p->equation,
                           EINSUM_SUMMED, EINSUM_SUMMED);
  if (st == TB_OK) st = tb_nn_einsum_sizes(&e, dims, sizes);
  if (st != TB_OK) return tb_kernel_name_error(ctx, st);
  int64_t shape[TB_MAX_DIMS];
  for (size_t k = 0; k < e.out_rank; k++) shape[k] = sizes[e.out_label[k]];
  tb_tensor *y = NULL;
  tb_dtype dt = ctx->inputs[0]->dtype;
  if ((st = tb_kernel_output(ctx, 0, dt, e.out_rank, shape, &y)) != TB_OK) return st;
  gemm_form f;
  if (dt == TB_DTYPE_F32 && gemm_form_of(&e, &f)) return einsum_gemm(ctx, &e, &f, sizes, y);
  bool summed_empty = false;
  for (size_t k = 0; k < n_sum; k++) summed_empty = summed_empty || sizes[sum[k]] == 0;
  if (dt == TB_DTYPE_F32 && !summed_empty && tb_cuda_einsum_permutable(&e)) return tb_cuda_einsum_permuted(ctx, &e, sizes, y);
  int64_t space = 1;
  for (size_t k = 0; k < n_sum; k++) space *= sizes[sum[k]];
  tb_cuda_dm_grid grid = space >= EINSUM_BLOCK_FROM ? TB_CUDA_DM_BLOCKS : space >= EINSUM_WARP_FROM ? TB_CUDA_DM_WARPS : TB_CUDA_DM_ELEMENTS;
  int group = grid == TB_CUDA_DM_BLOCKS ? 2 : grid == TB_CUDA_DM_WARPS ? 1 : 0; /* 72_einsum.cu's TB_ES_* */
  uint32_t mode = (uint32_t)n_sum | (uint32_t)n_in << 4 | (uint32_t)group << 6 | (uint32_t)dt << 8 | (uint32_t)dt << 16 | (uint32_t)dt << 24;
  tb_cuda_dm d = {.rank = (int32_t)e.out_rank, .mode = (int32_t)mode};
  memcpy(d.dims, shape, e.out_rank * sizeof *shape);
  for (size_t k = 0; k < n_sum; k++) d.p[k] = sizes[sum[k]];
  for (size_t i = 0; i < n_in; i++) {
    int64_t own[TB_MAX_DIMS];
    tb_shape_strides(ranks[i], dims[i], own);
    for (size_t a = 0; a < ranks[i]; a++) {
      if (dims[i][a] == 1) continue; /* broadcast: always index 0 */
      int l = e.label[i][a];
      for (size_t k = 0; k < e.out_rank; k++)
        if (e.out_label[k] == l) d.st[i][k] += own[a];
      for (size_t k = 0; k < n_sum; k++)
        if (sum[k] == l) d.st[2 + i][k] += own[a];
    }
  }
  /* empty inputs have no device memory and are never read (an empty summed space: zeros) */
  const tb_tensor *a = tb_tensor_numel(ctx->inputs[0]) > 0 ? ctx->inputs[0] : NULL;
  const tb_tensor *b = n_in > 1 && tb_tensor_numel(ctx->inputs[1]) > 0 ? ctx->inputs[1] : NULL;
  return tb_cuda_dm_go(ctx, "tb_cu_dm_einsum", a, b, NULL, y, tb_tensor_numel(y), &d, grid);
}

/* The dtypes the generic kernel computes in double, as the CPU reference. */
static bool einsum_dtype(tb_dtype dt) {
  switch (dt) {
    case TB_DTYPE_F32:
    case TB_DTYPE_F64:
    case TB_DTYPE_F16:
    case TB_DTYPE_BF16:
    case TB_DTYPE_I64:
    case TB_DTYPE_I32:
    case TB_DTYPE_I16:
    case TB_DTYPE_I8:
    case TB_DTYPE_U8: return true;
    default: return false;
  }
}

/* Inputs of one of those dtypes (the same for all) of known ranks whose equation parses with at most 4 summed labels. */
static bool einsum_accepts(const tb_kernel_query *q) {
  const tb_einsum_params *p = q->params;
  if (!p || !p->equation || q->n_inputs < 1 || q->n_inputs > EINSUM_INPUTS || q->n_outputs != 1) return false;
  size_t ranks[EINSUM_INPUTS];
  for (size_t i = 0; i < q->n_inputs; i++) {
    const tb_value_type *t = q->in[i];
    if (!t || !t->has_shape || !t->has_dtype || !einsum_dtype(t->dtype) || t->dtype != q->in[0]->dtype)
      return false;
    ranks[i] = q->in[i]->ndim;
  }
  nn_einsum e;
  int sum[EINSUM_SUMMED];
  size_t n_sum = 0;
  return einsum_plan(p->equation, q->n_inputs, ranks, &e, sum, &n_sum) == TB_OK;
}

/* The product kernels' prepare (tb_cuda_gemm_node: cuBLASLt's handle unless TB_CUDA_GEMM=own), whichever kernel the
 * node's shapes pick at run time. */
static const tb_kernel kernels[] = {
    {"", "Einsum", TB_KERNEL_REFERENCE, 0, einsum_accepts, einsum_run, tb_cuda_gemm_prepare, tb_cuda_gemm_release, NULL},
};
const tb_cuda_family tb_cuda_family_einsum = {kernels, sizeof kernels / sizeof kernels[0]};
