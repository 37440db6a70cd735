/* Level-3 (precision bf16, fp32 accumulation) MatMul, Gemm, tb::FusedMatMul and tb::FusedGemm on the bf16
 * GEMM (gemm_bf16.h), on the AMX, AVX512-BF16 or portable path (the AMX entries run AVX512-BF16 when
 * tb_gemm_bf16_runnable says AMX cannot run here; the emulated-AMX entries are for the tests only). A
 * constant B (the weights) is rounded and packed once in prepare(); the activations are rounded while the
 * GEMM packs them. Inputs and outputs are float32; only the products see bf16. The fused epilogue
 * (FusedMatMul's bias and residual, then the activation) runs in the GEMM's epilogue on finished fp32
 * values, with the row loops of the AVX-512 vec_ops table on the AVX512-BF16 and AMX paths and of the
 * portable one on the portable path (and the model of AMX): on this CPU the
 * same loops as the level-2 Add and Gelu kernels, so the fused node gives the unfused nodes' bits. A
 * FusedMatMul whose bias runs along A's rows (1-D B) goes to the reference kernel. */
#include <stdlib.h>
#include "backend/cpu/kernels/fast/gemm/fast_kernel.h"
#include "backend/cpu/kernels/fast/gemm/gemm_bf16.h"
#include "backend/cpu/kernels/fast/vec/vec_ops.h"
#include "backend/cpu/kernels/nn/nn_kernel.h"

extern const tb_kernel tb_kernel_fused_matmul;

/* B packed at prepare time, for op(B) of k x n. */
typedef struct bf16_weights {
  tb_gemm_bf16_packed *b;
  int64_t k, n;
} bf16_weights;

static tb_status out_of_memory(tb_kernel_ctx *ctx, int64_t m, int64_t n, int64_t k) {
  return tb_kernel_error(ctx, TB_ERR_OUT_OF_MEMORY, "no memory for the bf16 GEMM buffers (%lld x %lld x %lld)",
                         (long long)m, (long long)n, (long long)k);
}

/* The packed B when prepare() made one for these sizes, else B as plain data. */
static tb_gemm_bf16_operand b_operand(const tb_kernel_ctx *ctx, const float *data, int64_t ld, bool trans, int64_t k,
                                      int64_t n) {
  const bf16_weights *w = ctx->state;
  if (w && w->b && w->k == k && w->n == n) return (tb_gemm_bf16_operand){.packed = w->b};
  return (tb_gemm_bf16_operand){.data = data, .ld = ld, .trans = trans};
}

/* The epilogue's row loops for a path (see the top of the file). */
static const vec_ops *path_vec_ops(tb_gemm_bf16_path path) {
  return path == TB_GEMM_BF16_AVX512BF16 || path == TB_GEMM_BF16_AMX ? &tb_vec_ops_avx512 : &tb_vec_ops_portable;
}

/* ---- MatMul / tb::FusedMatMul ---- */

static tb_status matmul_run(tb_kernel_ctx *ctx, tb_gemm_bf16_path path, bool fused) {
  if (fused && tb_fast_matmul_bias_by_rows(ctx)) return tb_kernel_fused_matmul.run(ctx);
  tb_status st = tb_fast_check_f32(ctx, 4);
  tb_gemm_epilogue ep = {.vec = path_vec_ops(path)}; /* no activation, bias or residual for a plain MatMul */
  if (st == TB_OK && fused) st = tb_fast_read_act(ctx, &ep);
  if (st != TB_OK) return st;
  tb_fast_matmul mm;
  st = tb_fast_matmul_begin(ctx, &mm);
  if (st == TB_OK && fused) st = tb_fast_matmul_epilogue(ctx, &mm, false, &ep);
  if (st != TB_OK || tb_tensor_numel(mm.y) == 0) return st;
  const tb_tensor *a = mm.a, *b = mm.b;
  tb_tensor *y = mm.y;
  int64_t m = mm.m, k = mm.k, n = mm.n, *shape = mm.shape;
  size_t ba = mm.ba, bb = mm.bb, nb = mm.nb;
  const int64_t *as = tb_tensor_shape(a), *bs = tb_tensor_shape(b);
  int64_t batches = tb_nn_numel(nb, shape);
  const float *pa = tb_tensor_host_data(a), *pb = tb_tensor_host_data(b);
  float *py = tb_tensor_host_data(y);
  if (bb == 0) { /* one B for every batch of A: the batches are rows of one product */
    tb_gemm_bf16_operand oa = {.data = pa, .ld = k}, ob = b_operand(ctx, pb, n, false, k, n);
    if (!tb_gemm_bf16_run(path, batches * m, n, k, 1.0f, &oa, &ob, 0.0f, py, n, &ep, ctx->pool))
      return out_of_memory(ctx, batches * m, n, k);
    return TB_OK;
  }
  int64_t idx[TB_MAX_DIMS] = {0};
  for (int64_t p = 0; p < batches; p++) {
    tb_gemm_bf16_operand oa = {.data = pa + tb_nn_bcast_offset(nb, idx, ba, as) * m * k, .ld = k};
    tb_gemm_bf16_operand ob = {.data = pb + tb_nn_bcast_offset(nb, idx, bb, bs) * k * n, .ld = n};
    tb_gemm_epilogue product_ep = ep;
    if (ep.residual) product_ep.residual = ep.residual + p * m * n; /* this product's rows of the residual */
    if (!tb_gemm_bf16_run(path, m, n, k, 1.0f, &oa, &ob, 0.0f, py + p * m * n, n, &product_ep, ctx->pool))
      return out_of_memory(ctx, m, n, k);
    tb_kernel_next_index(nb, shape, idx);
  }
  return TB_OK;
}

/* ---- Gemm / tb::FusedGemm ---- */

static tb_status gemm_run(tb_kernel_ctx *ctx, tb_gemm_bf16_path path, bool fused) {
  tb_fast_gemm g;
  tb_gemm_epilogue ep = {.vec = path_vec_ops(path)}; /* no activation for a plain Gemm */
  tb_status st = tb_fast_check_f32(ctx, 3);
  if (st == TB_OK) st = tb_fast_gemm_begin(ctx, &g);
  if (st == TB_OK && fused) st = tb_fast_read_act(ctx, &ep);
  if (st != TB_OK || g.m == 0 || g.n == 0) return st;
  const tb_tensor *a = g.a, *b = g.b, *c = g.c;
  const int64_t *as = tb_tensor_shape(a), *bs = tb_tensor_shape(b), *cs = g.cs;
  int64_t m = g.m, k = g.k, n = g.n;
  size_t cnd = g.cnd;
  tb_tensor *y = g.y;
  float *py = tb_tensor_host_data(y);
  if (c) { /* Y = beta * C broadcast; the GEMM then adds alpha * A B onto it */
    const float *pc = tb_tensor_host_data(c);
    int64_t rows = cnd == 2 ? cs[0] : 1, cols = cnd >= 1 ? cs[cnd - 1] : 1;
    for (int64_t i = 0; i < m; i++)
      for (int64_t j = 0; j < n; j++) py[i * n + j] = g.beta * pc[(rows == 1 ? 0 : i) * cols + (cols == 1 ? 0 : j)];
  }
  tb_gemm_bf16_operand oa = {.data = tb_tensor_host_data(a), .ld = as[1], .trans = g.trans_a != 0};
  tb_gemm_bf16_operand ob = b_operand(ctx, tb_tensor_host_data(b), bs[1], g.trans_b != 0, k, n);
  if (!tb_gemm_bf16_run(path, m, n, k, g.alpha, &oa, &ob, c ? 1.0f : 0.0f, py, n, &ep, ctx->pool))
    return out_of_memory(ctx, m, n, k);
  return TB_OK;
}

/* ---- prepare: a constant B packed once ---- */

static tb_status prepare_weights(tb_kernel_ctx *ctx, void **state, tb_gemm_bf16_path path, bool gemm) {
  *state = NULL;
  const tb_tensor *b = ctx->n_inputs > 1 ? ctx->inputs[1] : NULL;
  if (!b || !tb_fast_input_constant(ctx, 1) || tb_tensor_dtype(b) != TB_DTYPE_F32) return TB_OK;
  size_t nd = tb_tensor_ndim(b);
  const int64_t *bs = tb_tensor_shape(b);
  bool trans_b = false;
  if (gemm) {
    tb_status st;
    const tb_gemm_params *p = tb_kernel_params(ctx, &st); /* a FusedGemm's parameters start with Gemm's */
    if (!p) return st;
    trans_b = p->trans_b;
  }
  if (nd != 2 && (gemm || nd != 1)) return TB_OK; /* batched or malformed: run() handles it */
  int64_t k = nd == 1 ? bs[0] : bs[trans_b ? 1 : 0], n = nd == 1 ? 1 : bs[trans_b ? 0 : 1];
  tb_gemm_bf16_operand src = {.data = tb_tensor_host_data(b), .ld = nd == 1 ? 1 : bs[1], .trans = trans_b != 0};
  bf16_weights *w = malloc(sizeof *w);
  tb_gemm_bf16_packed *packed = w ? tb_gemm_bf16_pack_b(path, &src, k, n) : NULL;
  if (!packed) {
    free(w);
    return tb_kernel_error(ctx, TB_ERR_OUT_OF_MEMORY, "no memory to pack the %lld x %lld weights to bf16", (long long)k,
                           (long long)n);
  }
  *w = (bf16_weights){packed, k, n};
  *state = w;
  tb_kernel_constant_consumed(ctx, 1);
  return TB_OK;
}

static void release_weights(void *state) {
  bf16_weights *w = state;
  if (!w) return;
  tb_gemm_bf16_packed_free(w->b);
  free(w);
}

static bool matmul_accepts(const tb_kernel_query *q) {
  const tb_value_type *const *in = q->in;
  return q->n_inputs >= 2 && tb_fast_accepts_f32(in, q->n_inputs < 4 ? q->n_inputs : 4);
}

static bool gemm_accepts(const tb_kernel_query *q) {
  const tb_value_type *const *in = q->in;
  return q->n_inputs >= 2 && tb_fast_accepts_f32(in, q->n_inputs < 3 ? q->n_inputs : 3);
}

#define BF16_ENTRIES(suffix, path)                                                                                      \
  static tb_status matmul_run_##suffix(tb_kernel_ctx *ctx) { return matmul_run(ctx, path, false); }                    \
  static tb_status fused_matmul_run_##suffix(tb_kernel_ctx *ctx) { return matmul_run(ctx, path, true); }               \
  static tb_status gemm_run_##suffix(tb_kernel_ctx *ctx) { return gemm_run(ctx, path, false); }                        \
  static tb_status fused_gemm_run_##suffix(tb_kernel_ctx *ctx) { return gemm_run(ctx, path, true); }                   \
  static tb_status matmul_prepare_##suffix(tb_kernel_ctx *ctx, void **state) {                                         \
    return prepare_weights(ctx, state, path, false);                                                                    \
  }                                                                                                                     \
  static tb_status gemm_prepare_##suffix(tb_kernel_ctx *ctx, void **state) { return prepare_weights(ctx, state, path, true); } \
  const tb_kernel tb_kernel_matmul_bf16_##suffix = {"",    "MatMul",       3, FEATURES_##suffix, matmul_accepts,   \
                                                        matmul_run_##suffix, matmul_prepare_##suffix, release_weights, "bf16"}; \
  const tb_kernel tb_kernel_gemm_bf16_##suffix = {"",    "Gemm",       3, FEATURES_##suffix, gemm_accepts,         \
                                                      gemm_run_##suffix, gemm_prepare_##suffix, release_weights, "bf16"}; \
  const tb_kernel tb_kernel_fused_matmul_bf16_##suffix = {                                                          \
      "tb", "FusedMatMul", 3, FEATURES_##suffix, matmul_accepts, fused_matmul_run_##suffix, matmul_prepare_##suffix,   \
      release_weights, "bf16"};                                                                                         \
  const tb_kernel tb_kernel_fused_gemm_bf16_##suffix = {                                                            \
      "tb", "FusedGemm", 3, FEATURES_##suffix, gemm_accepts, fused_gemm_run_##suffix, gemm_prepare_##suffix,           \
      release_weights, "bf16"};

#define FEATURES_avx512bf16 TB_GEMM_BF16_AVX512BF16_FEATURES
#define FEATURES_amx TB_GEMM_BF16_AMX_FEATURES
#define FEATURES_portable 0
#define FEATURES_amx_emulated 0 /* not registered: the tests call these entries directly */

BF16_ENTRIES(amx, tb_gemm_bf16_runnable(TB_GEMM_BF16_AMX))
BF16_ENTRIES(amx_emulated, TB_GEMM_BF16_AMX_EMULATED)
BF16_ENTRIES(avx512bf16, TB_GEMM_BF16_AVX512BF16)
BF16_ENTRIES(portable, TB_GEMM_BF16_PORTABLE)
