/* The CUDA backend's GEMMs through cuBLASLt (backend/cuda/cuda_blas.c) on the fake cuBLASLt
 * (tests/fakes/fake_cublaslt.c), which records its arguments and computes the column-major product on host
 * memory: the row-major products (transposes, leading dimensions, batches with strides and broadcasts,
 * bias and ReLU epilogues, fp32/TF32/bf16/fp16) come out right and reach cuBLASLt as the layouts, compute
 * types and workspace they must; plans are cached per shape; and every failure (library missing or not a
 * cuBLASLt, no algorithm, a status failure at each call) is a status and a sentence, with nothing left
 * alive; threads share a handle and its plans. Where the real cuBLASLt is installed, its table resolves and cublasLtCreate fails cleanly without
 * a GPU. */
#include <dlfcn.h>
#include <glob.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "../fakes/fake_cublaslt.h"
#include "backend/cuda/cuda_blas.h"
#include "core/error.h"
#include "runtime/cublaslt_api.h"
#include "test_util.h"
#include "test_wheel_util.h"

#define STREAM ((tb_cu_stream)(uintptr_t)0x5eed)

static const fake_cublaslt_state *fake(void) {
  void *h = dlopen(tbt_fake("fake_cublaslt"), RTLD_NOW);
  if (!h) fail_msg("cannot load fake_cublaslt: %s", dlerror());
  const fake_cublaslt_state *(*fn)(void) = (const fake_cublaslt_state *(*)(void))dlsym(h, "fake_cublaslt_state_get");
  if (!fn) fail_msg("fake_cublaslt does not export fake_cublaslt_state_get");
  return fn();
}

static const char *const fake_vars[] = {"FAKE_CUBLASLT_FAIL", "FAKE_CUBLASLT_FAIL_CODE", "FAKE_CUBLASLT_HEURISTIC",
                                        "FAKE_CUBLASLT_WORKSPACE", "FAKE_CUBLASLT_VERSION"};

static int setup(void **state) {
  (void)state;
  for (size_t i = 0; i < sizeof fake_vars / sizeof fake_vars[0]; i++) unsetenv(fake_vars[i]);
  setenv("TB_CUBLASLT_LIB", tbt_fake("fake_cublaslt"), 1);
  tb_cublaslt_test_loader_names(NULL);
  return 0;
}

/* Nothing the library made is still alive in the fake. */
static int teardown(void **state) {
  (void)state;
  for (size_t i = 0; i < sizeof fake_vars / sizeof fake_vars[0]; i++) unsetenv(fake_vars[i]);
  const fake_cublaslt_state *f = fake();
  assert_int_equal(f->live_handles, 0);
  assert_int_equal(f->live_descs, 0);
  assert_int_equal(f->live_layouts, 0);
  assert_int_equal(f->live_prefs, 0);
  tb_cublaslt_test_loader_names(NULL);
  return 0;
}

/* Row-major reference: C = act(alpha op(A) op(B) + beta C + bias), one product. */
static void reference(const tb_cuda_gemm *g, const float *a, const float *b, const float *c_in, const float *bias,
                      float *c) {
  int64_t lda = g->lda ? g->lda : (g->trans_a ? g->m : g->k), ldb = g->ldb ? g->ldb : (g->trans_b ? g->k : g->n);
  int64_t ldc = g->ldc ? g->ldc : g->n;
  for (int64_t i = 0; i < g->m; i++)
    for (int64_t j = 0; j < g->n; j++) {
      double s = 0;
      for (int64_t l = 0; l < g->k; l++)
        s += (double)(g->trans_a ? a[l * lda + i] : a[i * lda + l]) * (g->trans_b ? b[j * ldb + l] : b[l * ldb + j]);
      float v = g->alpha * (float)s + (g->beta != 0 ? g->beta * c_in[i * ldc + j] : 0.0f);
      if (bias) v += bias[j];
      if (g->relu && v < 0) v = 0;
      c[i * ldc + j] = v;
    }
}

static void fill(float *x, size_t n, int seed) {
  for (size_t i = 0; i < n; i++) x[i] = (float)((int)((i * 7 + (size_t)seed * 13) % 11) - 5) * 0.5f;
}

static tb_cu_deviceptr dev(const void *p) { return (tb_cu_deviceptr)(uintptr_t)p; }

static void assert_close(const float *got, const float *want, size_t n) {
  for (size_t i = 0; i < n; i++)
    if (got[i] != want[i]) fail_msg("element %zu: got %g, want %g", i, (double)got[i], (double)want[i]);
}

/* fp32, no transposes, dense: the numbers, and the arguments as cuBLASLt sees them (its A is our B). */
static void fp32_dense(void **state) {
  (void)state;
  tb_cuda_blas *blas = NULL;
  TB_ASSERT_OK(tb_cuda_blas_create("cuda:0", &blas));
  size_t version = 0;
  TB_ASSERT_CONTAINS(tb_cuda_blas_library(blas, &version), "fake_cublaslt");
  assert_int_equal(version, 130100);
  static float a[3 * 5], b[5 * 4], c[3 * 4], want[3 * 4], workspace[64];
  fill(a, 15, 1);
  fill(b, 20, 2);
  tb_cuda_gemm g = {.dtype = TB_CUDA_BLAS_F32, .m = 3, .n = 4, .k = 5, .alpha = 1.5f, .a = dev(a), .b = dev(b), .c = dev(c)};
  reference(&g, a, b, c, NULL, want);
  TB_ASSERT_OK(tb_cuda_blas_gemm(blas, &g, STREAM, dev(workspace), sizeof workspace));
  assert_close(c, want, 12);
  const fake_cublaslt_call *h = &fake()->heuristic, *m = &fake()->matmul;
  assert_int_equal(h->compute_type, TB_CUBLAS_COMPUTE_32F); /* no TF32 unless asked */
  assert_int_equal(h->scale_type, TB_CUDA_R_32F);
  assert_int_equal(h->trans_a, TB_CUBLAS_OP_N);
  assert_int_equal(h->trans_b, TB_CUBLAS_OP_N);
  assert_int_equal(h->epilogue, TB_CUBLASLT_EPILOGUE_DEFAULT);
  /* cuBLASLt's A: our B [5 x 4] read column-major, [4 x 5] ld 4; its B: our A, [5 x 3] ld 5; C [4 x 3] ld 4 */
  assert_int_equal(h->a.type, TB_CUDA_R_32F);
  assert_int_equal(h->a.rows, 4);
  assert_int_equal(h->a.cols, 5);
  assert_int_equal(h->a.ld, 4);
  assert_int_equal(h->b.rows, 5);
  assert_int_equal(h->b.cols, 3);
  assert_int_equal(h->b.ld, 5);
  assert_int_equal(h->c.rows, 4);
  assert_int_equal(h->c.cols, 3);
  assert_int_equal(h->c.ld, 4);
  assert_int_equal(h->d.ld, 4);
  assert_int_equal(h->a.batch, 1);
  assert_int_equal(h->max_workspace, sizeof workspace);
  assert_int_equal(h->requested, 8);
  assert_ptr_equal(m->pa, b);
  assert_ptr_equal(m->pb, a);
  assert_ptr_equal(m->pc, c);
  assert_ptr_equal(m->pd, c);
  assert_true(m->alpha == 1.5f && m->beta == 0.0f);
  assert_ptr_equal(m->stream, STREAM);
  assert_ptr_equal(m->workspace, NULL); /* the algorithm needs none: none is passed */
  assert_int_equal(m->workspace_bytes, 0);
  /* beta: C is read */
  g.beta = -1.0f;
  static float c_in[12];
  memcpy(c_in, c, sizeof c_in);
  reference(&g, a, b, c_in, NULL, want);
  TB_ASSERT_OK(tb_cuda_blas_gemm(blas, &g, STREAM, dev(workspace), sizeof workspace));
  assert_close(c, want, 12);
  tb_cuda_blas_destroy(blas);
}

/* Transposed operands with padded rows; an algorithm that needs a workspace gets the caller's. */
static void transposes_and_leading_dims(void **state) {
  (void)state;
  setenv("FAKE_CUBLASLT_WORKSPACE", "128", 1);
  tb_cuda_blas *blas = NULL;
  TB_ASSERT_OK(tb_cuda_blas_create("cuda:0", &blas));
  /* op(A) [3 x 4] from A stored [4 x 3] with pitch 6; op(B) [4 x 2] from B stored [2 x 4] pitch 5; C pitch 7 */
  static float a[4 * 6], b[4 * 5], c[3 * 7], want[3 * 7], workspace[64]; /* B: [2 x 4] pitch 5, then [4 x 2] pitch 3 */
  fill(a, 24, 3);
  fill(b, 20, 4);
  tb_cuda_gemm g = {.dtype = TB_CUDA_BLAS_F32, .trans_a = true, .trans_b = true, .m = 3, .n = 2, .k = 4, .lda = 6,
                    .ldb = 5, .ldc = 7, .alpha = 1, .a = dev(a), .b = dev(b), .c = dev(c)};
  memcpy(want, c, sizeof want);
  reference(&g, a, b, c, NULL, want);
  TB_ASSERT_OK(tb_cuda_blas_gemm(blas, &g, STREAM, dev(workspace), sizeof workspace));
  assert_close(c, want, 21);
  const fake_cublaslt_call *h = &fake()->heuristic, *m = &fake()->matmul;
  assert_int_equal(h->trans_a, TB_CUBLAS_OP_T); /* cuBLASLt's A is our B */
  assert_int_equal(h->trans_b, TB_CUBLAS_OP_T);
  assert_int_equal(h->a.rows, 4); /* B stored [2 x 4] pitch 5, read column-major: [4 x 2] ld 5 */
  assert_int_equal(h->a.cols, 2);
  assert_int_equal(h->a.ld, 5);
  assert_int_equal(h->b.rows, 3); /* A stored [4 x 3] pitch 6: [3 x 4] ld 6 */
  assert_int_equal(h->b.cols, 4);
  assert_int_equal(h->b.ld, 6);
  assert_int_equal(h->c.ld, 7);
  assert_ptr_equal(m->workspace, workspace);
  assert_int_equal(m->workspace_bytes, 128);
  /* One transposed operand only */
  g.trans_b = false;
  g.ldb = 3;
  reference(&g, a, b, c, NULL, want);
  TB_ASSERT_OK(tb_cuda_blas_gemm(blas, &g, STREAM, dev(workspace), sizeof workspace));
  assert_close(c, want, 21);
  assert_int_equal(fake()->heuristic.trans_a, TB_CUBLAS_OP_N);
  assert_int_equal(fake()->heuristic.trans_b, TB_CUBLAS_OP_T);
  tb_cuda_blas_destroy(blas);
}

/* A batch: A strided, B broadcast (stride 0), C dense by default. */
static void batched_strides(void **state) {
  (void)state;
  tb_cuda_blas *blas = NULL;
  TB_ASSERT_OK(tb_cuda_blas_create("cuda:0", &blas));
  enum { batch = 3, m = 2, n = 3, k = 4 };
  static float a[batch * m * k], b[k * n], c[batch * m * n], want[batch * m * n];
  fill(a, sizeof a / sizeof a[0], 5);
  fill(b, sizeof b / sizeof b[0], 6);
  tb_cuda_gemm g = {.dtype = TB_CUDA_BLAS_F32, .m = m, .n = n, .k = k, .batch = batch, .stride_a = m * k,
                    .stride_b = 0, .alpha = 1, .a = dev(a), .b = dev(b), .c = dev(c)};
  for (int p = 0; p < batch; p++) {
    tb_cuda_gemm one = g;
    reference(&one, a + p * m * k, b, c, NULL, want + p * m * n);
  }
  TB_ASSERT_OK(tb_cuda_blas_gemm(blas, &g, STREAM, 0, 0));
  assert_close(c, want, batch * m * n);
  const fake_cublaslt_call *h = &fake()->heuristic;
  assert_int_equal(h->a.batch, batch);
  assert_int_equal(h->a.stride, 0);     /* our B, broadcast */
  assert_int_equal(h->b.stride, m * k); /* our A */
  assert_int_equal(h->c.stride, m * n);
  assert_int_equal(h->d.batch, batch);
  assert_int_equal(h->max_workspace, 0); /* no workspace given */
  tb_cuda_blas_destroy(blas);
}

/* TF32 only when asked, and only for fp32; bf16 and fp16 in and out with fp32 compute and scale. */
static void precisions(void **state) {
  (void)state;
  tb_cuda_blas *blas = NULL;
  TB_ASSERT_OK(tb_cuda_blas_create("cuda:0", &blas));
  static float a[2 * 3], b[3 * 2], c[4], want[4];
  fill(a, 6, 7);
  fill(b, 6, 8);
  tb_cuda_gemm g = {.dtype = TB_CUDA_BLAS_F32, .tf32 = true, .m = 2, .n = 2, .k = 3, .alpha = 1, .a = dev(a), .b = dev(b), .c = dev(c)};
  TB_ASSERT_OK(tb_cuda_blas_gemm(blas, &g, STREAM, 0, 0));
  assert_int_equal(fake()->heuristic.compute_type, TB_CUBLAS_COMPUTE_32F_FAST_TF32);
  /* 16-bit: values exact in bf16 and fp16 (halves and small integers) */
  static uint16_t a16[6], b16[6], c16[4];
  const uint16_t bf16_of[] = {0xc020, 0xc000, 0xbfc0, 0xbf80, 0xbf00, 0x0000, 0x3f00, 0x3f80, 0x3fc0, 0x4000, 0x4020};
  const uint16_t f16_of[] = {0xc100, 0xc000, 0xbe00, 0xbc00, 0xb800, 0x0000, 0x3800, 0x3c00, 0x3e00, 0x4000, 0x4100};
  for (int pass = 0; pass < 2; pass++) {
    const uint16_t *to16 = pass ? f16_of : bf16_of;
    for (int i = 0; i < 6; i++) {
      a16[i] = to16[(int)(a[i] * 2) + 5];
      b16[i] = to16[(int)(b[i] * 2) + 5];
    }
    g = (tb_cuda_gemm){.dtype = pass ? TB_CUDA_BLAS_F16 : TB_CUDA_BLAS_BF16, .m = 2, .n = 2, .k = 3, .alpha = 0.5f,
                       .a = dev(a16), .b = dev(b16), .c = dev(c16)};
    TB_ASSERT_OK(tb_cuda_blas_gemm(blas, &g, STREAM, 0, 0));
    const fake_cublaslt_call *h = &fake()->heuristic;
    assert_int_equal(h->compute_type, TB_CUBLAS_COMPUTE_32F);
    assert_int_equal(h->scale_type, TB_CUDA_R_32F);
    int type = pass ? TB_CUDA_R_16F : TB_CUDA_R_16BF;
    assert_int_equal(h->a.type, type);
    assert_int_equal(h->b.type, type);
    assert_int_equal(h->c.type, type);
    tb_cuda_gemm f = g;
    f.dtype = TB_CUDA_BLAS_F32;
    reference(&f, a, b, NULL, NULL, want);
    for (int i = 0; i < 4; i++) {
      float got;
      if (pass) { /* fp16: the results are multiples of 1/8 within +-8 */
        int e = (c16[i] >> 10) & 31;
        got = c16[i] & 0x7fff ? (float)((c16[i] & 1023) | 1024) * (float)(1 << e) / (float)(1 << 25) : 0.0f;
        if (c16[i] & 0x8000) got = -got;
      } else {
        uint32_t u = (uint32_t)c16[i] << 16;
        memcpy(&got, &u, 4);
      }
      if (got != want[i]) fail_msg("%s element %d: got %g, want %g", pass ? "fp16" : "bf16", i, (double)got, (double)want[i]);
    }
  }
  /* TF32 asked for bf16: refused, naming both */
  g.tf32 = true;
  assert_int_equal(tb_cuda_blas_gemm(blas, &g, STREAM, 0, 0), TB_ERR_INVALID_ARGUMENT);
  TB_ASSERT_CONTAINS(tb_last_error(), "cuda:0: TF32 was asked for a fp16 product; TF32 applies to fp32 only");
  /* bf16 A and B with an fp32 C (out_f32: O3's products): C's and D's layouts fp32, the numbers exact here */
  static float c32[4];
  g = (tb_cuda_gemm){.dtype = TB_CUDA_BLAS_BF16, .out_f32 = true, .m = 2, .n = 2, .k = 3, .alpha = 0.5f, .a = dev(a16),
                     .b = dev(b16), .c = dev(c32)};
  for (int i = 0; i < 6; i++) {
    a16[i] = bf16_of[(int)(a[i] * 2) + 5];
    b16[i] = bf16_of[(int)(b[i] * 2) + 5];
  }
  TB_ASSERT_OK(tb_cuda_blas_gemm(blas, &g, STREAM, 0, 0));
  const fake_cublaslt_call *h = &fake()->heuristic;
  assert_int_equal(h->a.type, TB_CUDA_R_16BF);
  assert_int_equal(h->b.type, TB_CUDA_R_16BF);
  assert_int_equal(h->c.type, TB_CUDA_R_32F);
  assert_int_equal(h->d.type, TB_CUDA_R_32F);
  assert_int_equal(h->compute_type, TB_CUBLAS_COMPUTE_32F);
  tb_cuda_gemm f = g;
  f.dtype = TB_CUDA_BLAS_F32;
  f.out_f32 = false;
  reference(&f, a, b, NULL, NULL, want);
  assert_close(c32, want, 4);
  tb_cuda_blas_destroy(blas);
}

/* fp8 e4m3: A [2, 16] along k, B stored [3, 16] (transposed), both scale pointers (cuBLASLt's A scale is our B's),
 * fp32 C: cuBLASLt's TN form, the types, the numbers (values that e4m3 holds exactly); k 8 refused as unsupported. */
static void fp8_products(void **state) {
  (void)state;
  tb_cuda_blas *blas = NULL;
  TB_ASSERT_OK(tb_cuda_blas_create("cuda:0", &blas));
  static uint8_t a8[2 * 16], b8[3 * 16];
  static float c[2 * 3], a_scale = 0.5f, b_scale = 4.0f;
  /* e4m3 bytes: 0x38 is 1.0, 0x40 2.0, 0xb8 -1.0 */
  for (int i = 0; i < 32; i++) a8[i] = i % 3 == 0 ? 0x38 : i % 3 == 1 ? 0x40 : 0xb8;
  for (int i = 0; i < 48; i++) b8[i] = i % 2 ? 0x38 : 0x40;
  tb_cuda_gemm g = {.dtype = TB_CUDA_BLAS_E4M3, .trans_b = true, .m = 2, .n = 3, .k = 16, .alpha = 1, .a = dev(a8), .b = dev(b8),
                    .c = dev(c), .a_scale = dev(&a_scale), .b_scale = dev(&b_scale)};
  TB_ASSERT_OK(tb_cuda_blas_gemm(blas, &g, STREAM, 0, 0));
  const fake_cublaslt_call *m = &fake()->matmul;
  assert_int_equal(m->a.type, TB_CUDA_R_8F_E4M3);
  assert_int_equal(m->b.type, TB_CUDA_R_8F_E4M3);
  assert_int_equal(m->c.type, TB_CUDA_R_32F);
  assert_int_equal(m->d.type, TB_CUDA_R_32F);
  assert_int_equal(m->trans_a, TB_CUBLAS_OP_T); /* cuBLASLt's A is our B, stored [n, k] */
  assert_int_equal(m->trans_b, TB_CUBLAS_OP_N);
  assert_ptr_equal(m->a_scale, &b_scale);
  assert_ptr_equal(m->b_scale, &a_scale);
  for (int i = 0; i < 2; i++)
    for (int j = 0; j < 3; j++) {
      float s = 0;
      for (int l = 0; l < 16; l++) {
        int ai = (i * 16 + l) % 3, bj = (j * 16 + l) % 2;
        s += (ai == 0 ? 1.0f : ai == 1 ? 2.0f : -1.0f) * (bj ? 1.0f : 2.0f);
      }
      if (c[i * 3 + j] != s * 2.0f) fail_msg("fp8 element (%d, %d): got %g, want %g", i, j, (double)c[i * 3 + j], (double)(s * 2.0f));
    }
  /* k 8: not cuBLASLt's fp8 form */
  g.k = 8;
  assert_int_equal(tb_cuda_blas_gemm(blas, &g, STREAM, 0, 0), TB_ERR_UNSUPPORTED);
  TB_ASSERT_CONTAINS(tb_last_error(), "cuBLASLt's fp8 products need A stored [m, k] and B stored [n, k]");
  tb_cuda_blas_destroy(blas);
  assert_int_equal(fake()->live_descs, 0);
}

/* Bias (one value per column of C), ReLU, both: cuBLASLt's epilogues, and the numbers. */
static void epilogues(void **state) {
  (void)state;
  tb_cuda_blas *blas = NULL;
  TB_ASSERT_OK(tb_cuda_blas_create("cuda:0", &blas));
  static float a[3 * 4], b[4 * 5], c[3 * 5], want[3 * 5];
  static _Alignas(256) float bias[5] = {1, -2, 0.5f, 3, -40};
  fill(a, 12, 9);
  fill(b, 20, 10);
  const struct {
    bool bias, relu;
    int epilogue;
  } cases[] = {{true, false, TB_CUBLASLT_EPILOGUE_BIAS}, {false, true, TB_CUBLASLT_EPILOGUE_RELU},
               {true, true, TB_CUBLASLT_EPILOGUE_RELU_BIAS}};
  for (size_t i = 0; i < 3; i++) {
    tb_cuda_gemm g = {.dtype = TB_CUDA_BLAS_F32, .m = 3, .n = 5, .k = 4, .alpha = 1, .a = dev(a), .b = dev(b),
                      .c = dev(c), .bias = cases[i].bias ? dev(bias) : 0, .relu = cases[i].relu};
    reference(&g, a, b, c, cases[i].bias ? bias : NULL, want);
    TB_ASSERT_OK(tb_cuda_blas_gemm(blas, &g, STREAM, 0, 0));
    assert_close(c, want, 15);
    assert_int_equal(fake()->heuristic.epilogue, cases[i].epilogue);
    assert_ptr_equal(fake()->heuristic.bias, cases[i].bias ? bias : NULL); /* set before the heuristic */
  }
  /* The cached plan gets this call's bias pointer */
  static _Alignas(256) float bias2[5] = {0};
  tb_cuda_gemm g = {.dtype = TB_CUDA_BLAS_F32, .m = 3, .n = 5, .k = 4, .alpha = 1, .a = dev(a), .b = dev(b), .c = dev(c), .bias = dev(bias2)};
  int heuristics = fake()->heuristics;
  TB_ASSERT_OK(tb_cuda_blas_gemm(blas, &g, STREAM, 0, 0));
  assert_int_equal(fake()->heuristics, heuristics);
  assert_ptr_equal(fake()->matmul.bias, bias2);
  tb_cuda_blas_destroy(blas);
}

/* One heuristic query per shape; the alignment, the workspace and the epilogue are part of the shape. */
static void plans_cached(void **state) {
  (void)state;
  tb_cuda_blas *blas = NULL;
  TB_ASSERT_OK(tb_cuda_blas_create("cuda:0", &blas));
  static _Alignas(256) float a[64], b[64], c[64], workspace[64];
  tb_cuda_gemm g = {.dtype = TB_CUDA_BLAS_F32, .m = 4, .n = 4, .k = 4, .alpha = 1, .a = dev(a), .b = dev(b), .c = dev(c)};
  int h0 = fake()->heuristics;
  tb_cuda_blas_stats s;
  for (int i = 0; i < 3; i++) TB_ASSERT_OK(tb_cuda_blas_gemm(blas, &g, STREAM, 0, 0));
  tb_cuda_blas_stats_get(blas, &s);
  assert_int_equal(s.plans, 1);
  assert_int_equal(s.heuristics, 1);
  assert_int_equal(s.matmuls, 3);
  assert_int_equal(fake()->heuristics - h0, 1);
  assert_int_equal(fake()->heuristic.align_a, 256);
  /* A pointer 4 bytes off 256: a new plan with 4-byte alignment for cuBLASLt's B (our A) */
  g.a = dev(a + 1);
  TB_ASSERT_OK(tb_cuda_blas_gemm(blas, &g, STREAM, 0, 0));
  assert_int_equal(fake()->heuristic.align_b, 4);
  assert_int_equal(fake()->heuristic.align_a, 256);
  /* Other shapes and workspaces: new plans; the first shape again: none */
  g.a = dev(a);
  g.n = 5;
  TB_ASSERT_OK(tb_cuda_blas_gemm(blas, &g, STREAM, 0, 0));
  TB_ASSERT_OK(tb_cuda_blas_gemm(blas, &g, STREAM, dev(workspace), sizeof workspace));
  g.n = 4;
  TB_ASSERT_OK(tb_cuda_blas_gemm(blas, &g, STREAM, 0, 0));
  tb_cuda_blas_stats_get(blas, &s);
  assert_int_equal(s.plans, 4);
  assert_int_equal(s.heuristics, 4);
  assert_int_equal(s.matmuls, 7);
  assert_int_equal(s.uncached, 0);
  tb_cuda_blas_destroy(blas);
}

/* Bad products: a status and the field. */
static void bad_products(void **state) {
  (void)state;
  tb_cuda_blas *blas = NULL;
  TB_ASSERT_OK(tb_cuda_blas_create("cuda:0", &blas));
  static float x[64];
  const tb_cuda_gemm ok = {.dtype = TB_CUDA_BLAS_F32, .m = 2, .n = 2, .k = 2, .alpha = 1, .a = dev(x), .b = dev(x), .c = dev(x)};
  const struct {
    tb_cuda_gemm g;
    const char *says;
  } cases[] = {
      {{.dtype = TB_CUDA_BLAS_F32, .m = 0, .n = 2, .k = 2, .a = 1, .b = 1, .c = 1}, "cuda:0: a cuBLASLt product's m (rows of C) is 0; it must be at least 1"},
      {{.dtype = TB_CUDA_BLAS_F32, .m = 2, .n = 2, .k = 0, .a = 1, .b = 1, .c = 1}, "k (the inner dimension) is 0; it must be at least 1 (for k = 0, C = beta * C needs no GEMM)"},
      {{.dtype = TB_CUDA_BLAS_F32, .m = 2, .n = 3, .k = 4, .lda = 3, .a = 1, .b = 1, .c = 1}, "lda is 3; it must be at least the length of A's stored rows"},
      {{.dtype = TB_CUDA_BLAS_F32, .m = 2, .n = 3, .k = 4, .trans_b = true, .ldb = 3, .a = 1, .b = 1, .c = 1}, "ldb is 3"},
      {{.dtype = TB_CUDA_BLAS_F32, .m = 2, .n = 3, .k = 4, .ldc = 2, .a = 1, .b = 1, .c = 1}, "ldc is 2; it must be at least n"},
      {{.dtype = TB_CUDA_BLAS_F32, .m = 2, .n = 3, .k = 4, .batch = 2, .stride_c = 5, .a = 1, .b = 1, .c = 1}, "stride_c is 5; the products' outputs would overlap"},
      {{.dtype = TB_CUDA_BLAS_F32, .m = 2, .n = 3, .k = 4, .batch = 2, .stride_a = -1, .a = 1, .b = 1, .c = 1}, "stride_a is -1"},
      {{.dtype = (tb_cuda_blas_dtype)9, .m = 2, .n = 3, .k = 4, .a = 1, .b = 1, .c = 1}, "dtype is 9; it must be TB_CUDA_BLAS_F32, F16, BF16 or E4M3"},
      {{.dtype = TB_CUDA_BLAS_F32, .out_f32 = true, .m = 2, .n = 3, .k = 4, .a = 1, .b = 1, .c = 1},
       "cuda:0: an fp32 output (out_f32) was asked for a fp32 product; it applies to fp16 and bf16 products"},
      {{.dtype = TB_CUDA_BLAS_E4M3, .trans_b = true, .m = 2, .n = 3, .k = 16, .a = 1, .b = 1, .c = 1, .b_scale = 1},
       "cuda:0: an fp8 product needs device pointers to A's and B's scales (a_scale is 0)"},
      {{.dtype = TB_CUDA_BLAS_BF16, .m = 2, .n = 3, .k = 4, .a = 1, .b = 1, .c = 1, .a_scale = 1, .b_scale = 1},
       "cuda:0: scale pointers were given for a bf16 product; they apply to fp8 only"},
      {{.dtype = TB_CUDA_BLAS_F32, .m = 2, .n = 3, .k = 4, .a = 1, .b = 0, .c = 1}, "needs device pointers for A, B and C (B is 0)"},
  };
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
    assert_int_equal(tb_cuda_blas_gemm(blas, &cases[i].g, STREAM, 0, 0), TB_ERR_INVALID_ARGUMENT);
    TB_ASSERT_CONTAINS(tb_last_error(), cases[i].says);
  }
  assert_int_equal(tb_cuda_blas_gemm(blas, NULL, STREAM, 0, 0), TB_ERR_INVALID_ARGUMENT);
  TB_ASSERT_OK(tb_cuda_blas_gemm(blas, &ok, STREAM, 0, 0));
  tb_cuda_blas_destroy(blas);
}

/* No algorithm: TB_ERR_UNSUPPORTED (the caller's own kernel runs instead), nothing cached. */
static void no_algorithm(void **state) {
  (void)state;
  tb_cuda_blas *blas = NULL;
  TB_ASSERT_OK(tb_cuda_blas_create("cuda:0", &blas));
  static float x[64];
  tb_cuda_gemm g = {.dtype = TB_CUDA_BLAS_BF16, .m = 3, .n = 2, .k = 4, .batch = 2, .alpha = 1, .a = dev(x), .b = dev(x), .c = dev(x + 16)};
  const char *modes[] = {"none", "state", "workspace"};
  const char *returned[] = {"returned 0, none usable", "returned 2, none usable", "returned 2, none usable"};
  for (int i = 0; i < 3; i++) {
    setenv("FAKE_CUBLASLT_HEURISTIC", modes[i], 1);
    assert_int_equal(tb_cuda_blas_gemm(blas, &g, STREAM, dev(x), 64), TB_ERR_UNSUPPORTED);
    TB_ASSERT_CONTAINS(tb_last_error(), "cuda:0: cuBLASLt 130100 (");
    TB_ASSERT_CONTAINS(tb_last_error(), "has no algorithm for a batch of bf16 [3 x 4] x [4 x 2] (2 products) with 64 bytes of workspace");
    TB_ASSERT_CONTAINS(tb_last_error(), returned[i]);
    TB_ASSERT_CONTAINS(tb_last_error(), "run it with the backend's own kernel, or give it a larger workspace");
  }
  tb_cuda_blas_stats s;
  tb_cuda_blas_stats_get(blas, &s);
  assert_int_equal(s.plans, 0);
  unsetenv("FAKE_CUBLASLT_HEURISTIC");
  TB_ASSERT_OK(tb_cuda_blas_gemm(blas, &g, STREAM, dev(x), 64));
  tb_cuda_blas_destroy(blas);
}

/* A failing status at each call: the call, the code and its name, the shape; nothing leaked, no plan kept. */
static void status_failures(void **state) {
  (void)state;
  static float x[64];
  const struct {
    const char *where, *code, *says;
    tb_status status;
  } cases[] = {
      {"desc", "13", "cuda:0: cublasLtMatmulDescCreate failed with 13 CUBLAS_STATUS_EXECUTION_FAILED for fp32 [2 x 2] x [2 x 2] (cuBLASLt 130100 at ", TB_ERR_DRIVER},
      {"set", "7", "cublasLtMatmulDescSetAttribute failed with 7 CUBLAS_STATUS_INVALID_VALUE", TB_ERR_DRIVER},
      {"layout", "3", "cublasLtMatrixLayoutCreate failed with 3 CUBLAS_STATUS_ALLOC_FAILED for fp32 [2 x 2] x [2 x 2] (cuBLASLt 130100 at", TB_ERR_OUT_OF_MEMORY},
      {"pref", "3", "cublasLtMatmulPreferenceCreate failed with 3 CUBLAS_STATUS_ALLOC_FAILED", TB_ERR_OUT_OF_MEMORY},
      {"heuristic", "15", "cublasLtMatmulAlgoGetHeuristic failed with 15 CUBLAS_STATUS_NOT_SUPPORTED", TB_ERR_UNSUPPORTED},
      {"matmul", "13", "cublasLtMatmul failed with 13 CUBLAS_STATUS_EXECUTION_FAILED for fp32 [2 x 2] x [2 x 2]", TB_ERR_DRIVER},
  };
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
    tb_cuda_blas *blas = NULL;
    TB_ASSERT_OK(tb_cuda_blas_create("cuda:0", &blas));
    setenv("FAKE_CUBLASLT_FAIL", cases[i].where, 1);
    setenv("FAKE_CUBLASLT_FAIL_CODE", cases[i].code, 1);
    tb_cuda_gemm g = {.dtype = TB_CUDA_BLAS_F32, .m = 2, .n = 2, .k = 2, .alpha = 1, .a = dev(x), .b = dev(x), .c = dev(x + 8)};
    assert_int_equal(tb_cuda_blas_gemm(blas, &g, STREAM, 0, 0), cases[i].status);
    TB_ASSERT_CONTAINS(tb_last_error(), cases[i].says);
    if (cases[i].status == TB_ERR_OUT_OF_MEMORY) TB_ASSERT_CONTAINS(tb_last_error(), "; free device memory or run a smaller batch");
    unsetenv("FAKE_CUBLASLT_FAIL");
    /* the next call works (a failed matmul keeps its plan, a failed plan is not kept) */
    TB_ASSERT_OK(tb_cuda_blas_gemm(blas, &g, STREAM, 0, 0));
    tb_cuda_blas_stats s;
    tb_cuda_blas_stats_get(blas, &s);
    assert_int_equal(s.plans, 1);
    assert_int_equal(s.matmuls, 1);
    tb_cuda_blas_destroy(blas);
    assert_int_equal(fake()->live_layouts, 0);
    assert_int_equal(fake()->live_descs, 0);
    assert_int_equal(fake()->live_prefs, 0);
  }
  /* cublasLtCreate failing */
  setenv("FAKE_CUBLASLT_FAIL", "create", 1);
  setenv("FAKE_CUBLASLT_FAIL_CODE", "1", 1);
  tb_cuda_blas *blas = (tb_cuda_blas *)1;
  assert_int_equal(tb_cuda_blas_create("cuda:1", &blas), TB_ERR_DRIVER);
  assert_null(blas);
  TB_ASSERT_CONTAINS(tb_last_error(), "cuda:1: cublasLtCreate of ");
  TB_ASSERT_CONTAINS(tb_last_error(), "(cuBLASLt 130100) failed with 1 CUBLAS_STATUS_NOT_INITIALIZED; check that the GPU's driver supports this cuBLAS");
}

/* Threads sharing one handle: one plan, every product right. */
typedef struct worker {
  tb_cuda_blas *blas;
  float c[4 * 3];
  tb_status status;
} worker;

static float shared_a[4 * 5], shared_b[5 * 3];

static void *work(void *arg) {
  worker *w = arg;
  tb_cuda_gemm g = {.dtype = TB_CUDA_BLAS_F32, .m = 4, .n = 3, .k = 5, .alpha = 1, .a = dev(shared_a), .b = dev(shared_b), .c = dev(w->c)};
  for (int i = 0; i < 50 && w->status == TB_OK; i++) w->status = tb_cuda_blas_gemm(w->blas, &g, STREAM, 0, 0);
  return NULL;
}

static void threads_share_plans(void **state) {
  (void)state;
  tb_cuda_blas *blas = NULL;
  TB_ASSERT_OK(tb_cuda_blas_create("cuda:0", &blas));
  fill(shared_a, 20, 11);
  fill(shared_b, 15, 12);
  static worker workers[4];
  pthread_t threads[4];
  for (int i = 0; i < 4; i++) {
    workers[i] = (worker){.blas = blas};
    assert_int_equal(pthread_create(&threads[i], NULL, work, &workers[i]), 0);
  }
  for (int i = 0; i < 4; i++) pthread_join(threads[i], NULL);
  float want[12];
  tb_cuda_gemm g = {.m = 4, .n = 3, .k = 5, .alpha = 1};
  reference(&g, shared_a, shared_b, NULL, NULL, want);
  for (int i = 0; i < 4; i++) {
    assert_int_equal(workers[i].status, TB_OK);
    assert_close(workers[i].c, want, 12);
  }
  tb_cuda_blas_stats s;
  tb_cuda_blas_stats_get(blas, &s);
  assert_int_equal(s.plans, 1);
  assert_int_equal(s.heuristics, 1);
  assert_int_equal(s.matmuls, 200);
  tb_cuda_blas_destroy(blas);
}

static bool system_wheels(void) {
  glob_t g;
  bool found = glob("/usr{/local,}/lib/python3*/*-packages/nvidia/{cu13,cublas}/lib/libcublasLt.so.1[23]", GLOB_BRACE,
                    NULL, &g) == 0 && g.gl_pathc > 0;
  globfree(&g);
  return found;
}

/* The search: TB_CUBLASLT_LIB bad or not a cuBLASLt, nothing found, the wheels' folders. */
static void library_search(void **state) {
  (void)state;
  tb_cublaslt_api api;
  setenv("TB_CUBLASLT_LIB", "/nonexistent/libcublasLt.so.13", 1);
  assert_int_equal(tb_cublaslt_open(&api, "cuda:0"), TB_ERR_UNAVAILABLE);
  TB_ASSERT_CONTAINS(tb_last_error(), "cuda:0: TB_CUBLASLT_LIB=/nonexistent/libcublasLt.so.13 cannot be loaded: ");
  TB_ASSERT_CONTAINS(tb_last_error(), "set TB_CUBLASLT_LIB to the path of cuBLASLt (libcublasLt.so.13 or libcublasLt.so.12");
  tb_cuda_blas *blas = NULL;
  assert_int_equal(tb_cuda_blas_create("cuda:0", &blas), TB_ERR_UNAVAILABLE);
  assert_null(blas);
  setenv("TB_CUBLASLT_LIB", tbt_fake("fake_nvrtc"), 1);
  assert_int_equal(tb_cublaslt_open(&api, "cuda:0"), TB_ERR_UNAVAILABLE);
  TB_ASSERT_CONTAINS(tb_last_error(), "does not export cublasLtGetVersion, so it is not a usable cuBLASLt; point TB_CUBLASLT_LIB at");
  unsetenv("TB_CUBLASLT_LIB");

  tbt_python_env env;
  tbt_python_env_enter(&env, "tb_cublaslt_");
  const char *root = env.root;
  static const char *const absent[] = {"libcublasLt-tb-absent.so.13", NULL};
  tb_cublaslt_test_loader_names(absent);
  if (!system_wheels()) {
    assert_int_equal(tb_cublaslt_open(&api, "cuda:0"), TB_ERR_UNAVAILABLE);
    TB_ASSERT_CONTAINS(tb_last_error(), "cuda:0: cuBLASLt (libcublasLt, the GEMM library the CUDA backend runs MatMul and "
                                        "Gemm with) was not found: tried libcublasLt-tb-absent.so.13 through the loader path");
    TB_ASSERT_CONTAINS(tb_last_error(), "install cuBLAS (the CUDA toolkit's libcublas package, or `pip install nvidia-cublas`)");
  }
  /* A CUDA 12 wheel under VIRTUAL_ENV; in one folder the CUDA 13 wheel first */
  char venv[600], site[700];
  snprintf(venv, sizeof venv, "%s/venv", root);
  snprintf(site, sizeof site, "%s/lib/python3.11/site-packages", venv);
  tbt_plant_wheel(site, "nvidia/cublas/lib/libcublasLt.so.12", "fake_cublaslt");
  setenv("VIRTUAL_ENV", venv, 1);
  TB_ASSERT_OK(tb_cublaslt_open(&api, "cuda:0"));
  TB_ASSERT_CONTAINS(api.path, "/venv/lib/python3.11/site-packages/nvidia/cublas/lib/libcublasLt.so.12");
  tbt_plant_wheel(site, "nvidia/cu13/lib/libcublasLt.so.13", "fake_cublaslt");
  TB_ASSERT_OK(tb_cublaslt_open(&api, "cuda:0"));
  TB_ASSERT_CONTAINS(api.path, "/venv/lib/python3.11/site-packages/nvidia/cu13/lib/libcublasLt.so.13");
  assert_int_equal(api.version, 130100);

  tbt_python_env_leave(&env);
}

/* The real cuBLASLt, where the loader finds it (the CUDA toolkit here): every symbol of the table is
 * exported, the version reads, and without a GPU cublasLtCreate fails with a sentence, not a crash. */
static void real_library(void **state) {
  (void)state;
  unsetenv("TB_CUBLASLT_LIB");
  tb_cublaslt_api api;
  if (tb_cublaslt_open(&api, "cuda:0") != TB_OK) TBT_SKIP("no real cuBLASLt on this machine");
  if (strstr(api.path, "fake_cublaslt")) TBT_SKIP("the loader path leads to the fake");
  assert_true(api.version >= 120000);
  assert_non_null(api.cublasLtGetStatusName);
  char name[96];
  tb_cublaslt_status_name(&api, TB_CUBLAS_STATUS_NOT_SUPPORTED, name, sizeof name);
  assert_string_equal(name, "CUBLAS_STATUS_NOT_SUPPORTED");
  print_message("real cuBLASLt %zu at %s\n", api.version, api.path);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test_setup_teardown(fp32_dense, setup, teardown),
      cmocka_unit_test_setup_teardown(transposes_and_leading_dims, setup, teardown),
      cmocka_unit_test_setup_teardown(batched_strides, setup, teardown),
      cmocka_unit_test_setup_teardown(precisions, setup, teardown),
      cmocka_unit_test_setup_teardown(epilogues, setup, teardown),
      cmocka_unit_test_setup_teardown(fp8_products, setup, teardown),
      cmocka_unit_test_setup_teardown(plans_cached, setup, teardown),
      cmocka_unit_test_setup_teardown(threads_share_plans, setup, teardown),
      cmocka_unit_test_setup_teardown(bad_products, setup, teardown),
      cmocka_unit_test_setup_teardown(no_algorithm, setup, teardown),
      cmocka_unit_test_setup_teardown(status_failures, setup, teardown),
      cmocka_unit_test_setup_teardown(library_search, setup, teardown),
      cmocka_unit_test_setup_teardown(real_library, setup, teardown),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
