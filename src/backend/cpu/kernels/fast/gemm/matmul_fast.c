/* Level-2 MatMul for float32: the output shape from the MatMul op's own shape rule (1-D promotion, batch
 * broadcast); with a 2-D (or 1-D) B every batch of A is one tall GEMM against B (packed once at prepare
 * when B is a constant), else one GEMM per batch (small ones spread over ctx->pool, large ones each split
 * over it); on the AVX-512, AVX2 or portable path. tb::FusedMatMul (fused_gemm_fast.c) adds its bias,
 * residual and activation as the GEMM's epilogue, on each finished tile while it is in cache (the late
 * bias and residual of tb_gemm_epilogue: each add rounded as the separate Add kernel rounds it). */
#include <stdatomic.h>
#include "backend/cpu/kernels/fast/gemm/fast_kernel.h"
#include "backend/cpu/kernels/nn/nn_kernel.h"
#include "core/threadpool.h"

/* Below this many multiply-adds per product, a batched MatMul gives each thread whole products. */
enum { BATCH_TASK_WORK = 1 << 21 };

static tb_status no_memory(tb_kernel_ctx *ctx, int64_t m, int64_t n, int64_t k) {
  return tb_kernel_error(ctx, TB_ERR_OUT_OF_MEMORY, "no memory for the GEMM packing buffers (%lld x %lld x %lld)",
                         (long long)m, (long long)n, (long long)k);
}

/* Products per batch of a batched B: batch p of the output against its broadcast batches of A and B. */
typedef struct batch_job {
  tb_gemm_path path;
  int64_t m, n, k;
  size_t nb, ba, bb;
  const int64_t *as, *bs, *shape;
  const float *pa, *pb;
  float *py;
  const tb_gemm_epilogue *ep;
  tb_pool *pool; /* for each product; NULL when the batches are the tasks */
  atomic_bool failed;
} batch_job;

static void batch_tasks(void *ctx, size_t begin, size_t end) {
  batch_job *j = ctx;
  int64_t idx[TB_MAX_DIMS] = {0};
  for (size_t d = j->nb, rest = begin; d-- > 0;) { /* the multi-index of batch `begin` */
    idx[d] = (int64_t)(rest % (size_t)j->shape[d]);
    rest /= (size_t)j->shape[d];
  }
  for (size_t p = begin; p < end; p++) {
    tb_gemm_operand oa = {.data = j->pa + tb_nn_bcast_offset(j->nb, idx, j->ba, j->as) * j->m * j->k, .ld = j->k};
    tb_gemm_operand ob = {.data = j->pb + tb_nn_bcast_offset(j->nb, idx, j->bb, j->bs) * j->k * j->n, .ld = j->n};
    float *c = j->py + (int64_t)p * j->m * j->n;
    tb_gemm_epilogue ep = j->ep ? *j->ep : (tb_gemm_epilogue){0};
    if (ep.late_residual) ep.late_residual += (int64_t)p * j->m * j->n; /* this product's rows of the residual */
    if (!tb_gemm_f32_run(j->path, j->m, j->n, j->k, 1.0f, &oa, &ob, 0.0f, c, j->n, j->ep ? &ep : NULL, j->pool))
      atomic_store(&j->failed, true);
    tb_kernel_next_index(j->nb, j->shape, idx);
  }
}

tb_status tb_fast_matmul_run(tb_kernel_ctx *ctx, tb_gemm_path path, const tb_gemm_epilogue *act) {
  tb_status st = tb_fast_check_f32(ctx, 4);
  if (st != TB_OK) return st;
  tb_fast_matmul mm;
  tb_gemm_epilogue fused = act ? *act : (tb_gemm_epilogue){0};
  st = tb_fast_matmul_begin(ctx, &mm);
  if (st == TB_OK) st = tb_fast_matmul_epilogue(ctx, &mm, true, &fused);
  if (st != TB_OK || tb_tensor_numel(mm.y) == 0) return st;
  const tb_tensor *a = mm.a, *b = mm.b;
  tb_tensor *y = mm.y;
  int64_t m = mm.m, k = mm.k, n = mm.n, *shape = mm.shape;
  const int64_t *as = tb_tensor_shape(a), *bs = tb_tensor_shape(b);
  const float *pa = tb_tensor_host_data(a), *pb = tb_tensor_host_data(b);
  float *py = tb_tensor_host_data(y);
  const tb_gemm_epilogue *ep = fused.act || fused.late_bias || fused.late_residual ? &fused : NULL;
  if (mm.bb == 0) { /* every row of every batch of A against the one B */
    int64_t rows = tb_tensor_numel(a) / (k ? k : 1);
    if (k == 0) rows = tb_tensor_numel(y) / n;
    tb_gemm_operand oa = {.data = pa, .ld = k}, ob = tb_fast_operand_b(ctx, pb, n, false, k, n);
    if (!tb_gemm_f32_run(path, rows, n, k, 1.0f, &oa, &ob, 0.0f, py, n, ep, ctx->pool)) return no_memory(ctx, rows, n, k);
    return TB_OK;
  }
  batch_job j = {.path = path, .m = m, .n = n, .k = k, .nb = mm.nb, .ba = mm.ba, .bb = mm.bb, .as = as, .bs = bs,
                 .shape = shape, .pa = pa, .pb = pb, .py = py, .ep = ep};
  atomic_init(&j.failed, false);
  int64_t batches = tb_nn_numel(j.nb, shape);
  /* small products: one per task over the pool; large ones: each split over the pool in turn */
  bool per_task = ctx->pool && batches > 1 && (double)m * (double)n * (double)k < BATCH_TASK_WORK;
  if (per_task) tb_pool_parallel_for(ctx->pool, (size_t)batches, batch_tasks, &j);
  else {
    j.pool = ctx->pool;
    batch_tasks(&j, 0, (size_t)batches);
  }
  return atomic_load(&j.failed) ? no_memory(ctx, m, n, k) : TB_OK;
}

bool tb_fast_matmul_accepts(const tb_kernel_query *q) {
  const tb_value_type *const *in = q->in;
  return q->n_inputs >= 2 && tb_fast_accepts_f32(in, q->n_inputs < 4 ? q->n_inputs : 4);
}

#define MATMUL_ENTRY(suffix, PATH, features)                                                                        \
  static tb_status run_##suffix(tb_kernel_ctx *ctx) { return tb_fast_matmul_run(ctx, PATH, NULL); }                 \
  static tb_status prepare_##suffix(tb_kernel_ctx *ctx, void **state) {                                            \
    return tb_fast_prepare_b(ctx, PATH, false, state);                                                              \
  }                                                                                                                 \
  const tb_kernel tb_kernel_matmul_f32_##suffix = {.domain = "", .name = "MatMul", .level = TB_KERNEL_FAST,                \
                                                       .cpu_features = (features), .accepts = tb_fast_matmul_accepts, \
                                                       .run = run_##suffix, .prepare = prepare_##suffix,            \
                                                       .release = tb_fast_release};

MATMUL_ENTRY(avx512, TB_GEMM_AVX512, TB_FAST_FEATURES_AVX512)
MATMUL_ENTRY(avx2, TB_GEMM_AVX2, TB_FAST_FEATURES_AVX2)
MATMUL_ENTRY(portable, TB_GEMM_PORTABLE, 0)
