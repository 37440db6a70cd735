/* Level-2 MatMul for float32: the output shape from the MatMul op's own shape rule (1-D promotion, batch
 * broadcast), then one blocked GEMM per batch on the AVX-512, AVX2 or portable path. */
#include "backend/cpu/kernels/fast/fast_kernel.h"
#include "backend/cpu/kernels/fast/gemm_f32.h"
#include "backend/cpu/kernels/nn/nn_kernel.h"
#include "ops/nn/nn_infer.h"

static tb_value_type type_of(const tb_tensor *t) {
  tb_value_type v = {.kind = TB_VALUE_TENSOR, .has_dtype = true, .dtype = tb_tensor_dtype(t), .has_shape = true,
                     .ndim = tb_tensor_ndim(t)};
  for (size_t i = 0; i < v.ndim; i++) v.dims[i] = (tb_dim){tb_tensor_shape(t)[i], -1};
  return v;
}

static tb_status matmul_run(tb_kernel_ctx *ctx, tb_gemm_path path) {
  tb_status st = tb_fast_check_f32(ctx, 2);
  if (st != TB_OK) return st;
  const tb_tensor *a = ctx->inputs[0], *b = ctx->inputs[1];
  tb_value_type ta = type_of(a), tbv = type_of(b), to = {0};
  const tb_value_type *in[2] = {&ta, &tbv};
  tb_infer_ctx ictx = {.graph = ctx->graph, .node = ctx->node, .n_inputs = 2, .in = in, .n_outputs = 1, .out = &to};
  st = tb_nn_matmul_shape(&ictx, &ta, &tbv, &to);
  if (st != TB_OK) return st;
  int64_t shape[TB_MAX_DIMS];
  for (size_t i = 0; i < to.ndim; i++) shape[i] = to.dims[i].value;
  tb_tensor *y = NULL;
  st = tb_kernel_output(ctx, 0, TB_DTYPE_F32, to.ndim, shape, &y);
  if (st != TB_OK) return st;
  size_t and = ta.ndim, bnd = tbv.ndim;
  const int64_t *as = tb_tensor_shape(a), *bs = tb_tensor_shape(b);
  int64_t m = and >= 2 ? as[and - 2] : 1, k = as[and - 1], n = bnd >= 2 ? bs[bnd - 1] : 1;
  size_t ba = and > 2 ? and - 2 : 0, bb = bnd > 2 ? bnd - 2 : 0, nb = ba > bb ? ba : bb;
  int64_t batches = tb_tensor_numel(y) ? nn_numel(nb, shape) : 0;
  const float *pa = tb_tensor_host_data(a), *pb = tb_tensor_host_data(b);
  float *py = tb_tensor_host_data(y);
  int64_t idx[TB_MAX_DIMS] = {0};
  for (int64_t p = 0; p < batches; p++) {
    const float *ap = pa + nn_bcast_offset(nb, idx, ba, as) * m * k;
    const float *bp = pb + nn_bcast_offset(nb, idx, bb, bs) * k * n;
    if (!tb_gemm_f32(path, false, false, m, n, k, 1.0f, ap, k, bp, n, 0.0f, py + p * m * n, n))
      return tb_kernel_error(ctx, TB_ERR_OUT_OF_MEMORY, "no memory for the GEMM packing buffers (%lld x %lld x %lld)",
                             (long long)m, (long long)n, (long long)k);
    tb_kernel_next_index(nb, shape, idx);
  }
  return TB_OK;
}

static bool matmul_accepts(const tb_graph *g, const tb_node *n, const tb_value_type *const *in) {
  (void)g;
  return n->n_inputs >= 2 && tb_fast_accepts_f32(in, 2);
}

static tb_status run_avx512(tb_kernel_ctx *ctx) { return matmul_run(ctx, TB_GEMM_AVX512); }
static tb_status run_avx2(tb_kernel_ctx *ctx) { return matmul_run(ctx, TB_GEMM_AVX2); }
static tb_status run_portable(tb_kernel_ctx *ctx) { return matmul_run(ctx, TB_GEMM_PORTABLE); }

const tb_cpu_kernel tb_kernel_matmul_f32_avx512 = {
    "", "MatMul", 2, TB_FEATURE_BIT(TB_FEATURE_AVX512F) | TB_FEATURE_BIT(TB_FEATURE_FMA), matmul_accepts, run_avx512};
const tb_cpu_kernel tb_kernel_matmul_f32_avx2 = {
    "", "MatMul", 2, TB_FEATURE_BIT(TB_FEATURE_AVX2) | TB_FEATURE_BIT(TB_FEATURE_FMA), matmul_accepts, run_avx2};
const tb_cpu_kernel tb_kernel_matmul_f32_portable = {"", "MatMul", 2, 0, matmul_accepts, run_portable};
