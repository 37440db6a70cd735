/* Level-2 Gemm for float32: Y = alpha * op(A) op(B) + beta * C, with C (optional) broadcast into Y first
 * and the blocked GEMM accumulating onto it on the AVX-512, AVX2 or portable path. */
#include "backend/cpu/kernels/fast/fast_kernel.h"
#include "backend/cpu/kernels/fast/gemm_f32.h"

static tb_status gemm_run(tb_kernel_ctx *ctx, tb_gemm_path path) {
  int64_t trans_a = 0, trans_b = 0;
  float alpha = 1, beta = 1;
  tb_status st = tb_fast_check_f32(ctx, 3);
  if (st == TB_OK) st = tb_attr_int(ctx->graph, ctx->node, "transA", 0, &trans_a);
  if (st == TB_OK) st = tb_attr_int(ctx->graph, ctx->node, "transB", 0, &trans_b);
  if (st == TB_OK) st = tb_attr_float(ctx->graph, ctx->node, "alpha", 1.0f, &alpha);
  if (st == TB_OK) st = tb_attr_float(ctx->graph, ctx->node, "beta", 1.0f, &beta);
  if (st != TB_OK) return st;
  const tb_tensor *a = ctx->inputs[0], *b = ctx->inputs[1], *c = ctx->n_inputs > 2 ? ctx->inputs[2] : NULL;
  if (tb_tensor_ndim(a) != 2 || tb_tensor_ndim(b) != 2)
    return tb_kernel_error(ctx, TB_ERR_MODEL, "A and B must be 2-D (got ranks %zu and %zu)", tb_tensor_ndim(a),
                           tb_tensor_ndim(b));
  const int64_t *as = tb_tensor_shape(a), *bs = tb_tensor_shape(b);
  int64_t m = as[trans_a ? 1 : 0], k = as[trans_a ? 0 : 1], kb = bs[trans_b ? 1 : 0], n = bs[trans_b ? 0 : 1];
  if (k != kb)
    return tb_kernel_error(ctx, TB_ERR_MODEL, "inner dimensions of A and B differ: %lld vs %lld", (long long)k,
                           (long long)kb);
  int64_t out_shape[2] = {m, n};
  size_t cnd = c ? tb_tensor_ndim(c) : 0;
  const int64_t *cs = c ? tb_tensor_shape(c) : NULL;
  bool ok = cnd <= 2;
  for (size_t i = 0; c && ok && i < cnd; i++) ok = cs[i] == 1 || cs[i] == out_shape[2 - cnd + i];
  if (!ok)
    return tb_kernel_error(ctx, TB_ERR_MODEL, "input C (rank %zu) does not broadcast to [%lld, %lld]", cnd,
                           (long long)m, (long long)n);
  tb_tensor *y = NULL;
  st = tb_kernel_output(ctx, 0, TB_DTYPE_F32, 2, out_shape, &y);
  if (st != TB_OK) return st;
  float *py = tb_tensor_host_data(y);
  if (c) {
    const float *pc = tb_tensor_host_data(c);
    int64_t rows = cnd == 2 ? cs[0] : 1, cols = cnd >= 1 ? cs[cnd - 1] : 1;
    for (int64_t i = 0; i < m; i++)
      for (int64_t j = 0; j < n; j++) py[i * n + j] = beta * pc[(rows == 1 ? 0 : i) * cols + (cols == 1 ? 0 : j)];
  }
  if (!tb_gemm_f32(path, trans_a != 0, trans_b != 0, m, n, k, alpha, tb_tensor_host_data(a), as[1],
                   tb_tensor_host_data(b), bs[1], c ? 1.0f : 0.0f, py, n))
    return tb_kernel_error(ctx, TB_ERR_OUT_OF_MEMORY, "no memory for the GEMM packing buffers (%lld x %lld x %lld)",
                           (long long)m, (long long)n, (long long)k);
  return TB_OK;
}

static bool gemm_accepts(const tb_graph *g, const tb_node *n, const tb_value_type *const *in) {
  (void)g;
  return n->n_inputs >= 2 && tb_fast_accepts_f32(in, n->n_inputs < 3 ? n->n_inputs : 3);
}

static tb_status run_avx512(tb_kernel_ctx *ctx) { return gemm_run(ctx, TB_GEMM_AVX512); }
static tb_status run_avx2(tb_kernel_ctx *ctx) { return gemm_run(ctx, TB_GEMM_AVX2); }
static tb_status run_portable(tb_kernel_ctx *ctx) { return gemm_run(ctx, TB_GEMM_PORTABLE); }

const tb_cpu_kernel tb_kernel_gemm_f32_avx512 = {
    "", "Gemm", 2, TB_FEATURE_BIT(TB_FEATURE_AVX512F) | TB_FEATURE_BIT(TB_FEATURE_FMA), gemm_accepts, run_avx512};
const tb_cpu_kernel tb_kernel_gemm_f32_avx2 = {
    "", "Gemm", 2, TB_FEATURE_BIT(TB_FEATURE_AVX2) | TB_FEATURE_BIT(TB_FEATURE_FMA), gemm_accepts, run_avx2};
const tb_cpu_kernel tb_kernel_gemm_f32_portable = {"", "Gemm", 2, 0, gemm_accepts, run_portable};
