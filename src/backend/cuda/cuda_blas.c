/* GEMMs through cuBLASLt (cuda_blas.h): the row-major product mapped onto cuBLASLt's column-major one, a
 * plan per shape (descriptor, layouts, heuristic choice) cached for the life of the handle, and every
 * cuBLASLt failure turned into a status and a sentence.
 *
 * The mapping: a row-major [r, c] matrix with pitch ld is, read column-major, its transpose [c, r] with the
 * same ld. So row-major C = op(A) op(B) is column-major C^T = op(B)^T op(A)^T: cuBLASLt's "A" is our B,
 * its "B" our A, its m our n and its n our m, the transposes carried over unchanged. The bias vector
 * cuBLASLt adds per row of its D is then one value per column of our C, as Gemm's bias is. */
#include "backend/cuda/cuda_blas.h"
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "core/error.h"
#include "runtime/cublaslt_api.h"

/* Everything a plan depends on; zeroed before it is filled, so memcmp compares it. */
typedef struct plan_key {
  int32_t dtype, out_f32, tf32, trans_a, trans_b, relu, bias;
  int64_t m, n, k, lda, ldb, ldc, batch, stride_a, stride_b, stride_c;
  uint32_t align_a, align_b, align_c, align_bias;
  uint64_t workspace_bytes;
} plan_key;

typedef struct plan {
  plan_key key;
  tb_cublaslt_matmul_desc desc;
  tb_cublaslt_layout a, b, c; /* cuBLASLt's A (our B), B (our A) and C = D */
  tb_cublaslt_algo algo;
  size_t workspace_size; /* what the algorithm needs, <= the key's workspace */
} plan;

struct tb_cuda_blas {
  char who[64];
  tb_cublaslt_api api;
  tb_cublaslt_handle handle;
  pthread_mutex_t lock;
  plan *plans[TB_CUDA_BLAS_MAX_PLANS];
  size_t count;
  tb_cuda_blas_stats stats;
};

static const char *dtype_name(int dtype) {
  return dtype == TB_CUDA_BLAS_F16 ? "fp16" : dtype == TB_CUDA_BLAS_BF16 ? "bf16" : dtype == TB_CUDA_BLAS_E4M3 ? "fp8 e4m3" : "fp32";
}

static size_t dtype_bytes(int dtype) { return dtype == TB_CUDA_BLAS_F32 ? 4 : dtype == TB_CUDA_BLAS_E4M3 ? 1 : 2; }

static int cuda_type(int dtype) {
  return dtype == TB_CUDA_BLAS_F16    ? TB_CUDA_R_16F
         : dtype == TB_CUDA_BLAS_BF16 ? TB_CUDA_R_16BF
         : dtype == TB_CUDA_BLAS_E4M3 ? TB_CUDA_R_8F_E4M3
                                      : TB_CUDA_R_32F;
}

/* C's (and the bias's) type: fp32 for fp8 and for 16-bit products with out_f32, else A's. */
static bool c_is_f32(const plan_key *k) { return k->dtype == TB_CUDA_BLAS_F32 || k->dtype == TB_CUDA_BLAS_E4M3 || k->out_f32; }

/* "batch 4 of fp32 [64 x 32] x [32 x 16] (A^T)" for messages. */
static void describe(const plan_key *k, char *out, size_t cap) {
  snprintf(out, cap, "%s%s%s [%lld x %lld]%s x [%lld x %lld]%s", k->batch > 1 ? "a batch of " : "",
           k->tf32 ? "fp32 (TF32)" : dtype_name(k->dtype), k->dtype != TB_CUDA_BLAS_F32 && c_is_f32(k) ? " (fp32 out)" : "", (long long)k->m, (long long)k->k,
           k->trans_a ? " (A transposed)" : "", (long long)k->k, (long long)k->n, k->trans_b ? " (B transposed)" : "");
  if (k->batch > 1) {
    size_t len = strlen(out);
    snprintf(out + len, cap - len, " (%lld products)", (long long)k->batch);
  }
}

static tb_status cublas_failed(const tb_cuda_blas *blas, const char *call, tb_cublas_status st, const plan_key *k) {
  char name[96], shape[200];
  tb_cublaslt_status_name(&blas->api, st, name, sizeof name);
  describe(k, shape, sizeof shape);
  tb_status code = st == TB_CUBLAS_STATUS_ALLOC_FAILED    ? TB_ERR_OUT_OF_MEMORY
                   : st == TB_CUBLAS_STATUS_NOT_SUPPORTED ? TB_ERR_UNSUPPORTED
                                                          : TB_ERR_DRIVER;
  return tb_error(code, "%s: %s failed with %d %s for %s (cuBLASLt %zu at %s)%s", blas->who, call, st, name, shape,
                  blas->api.version, blas->api.path,
                  code == TB_ERR_OUT_OF_MEMORY ? "; free device memory or run a smaller batch" : "");
}

tb_status tb_cuda_blas_create(const char *who, tb_cuda_blas **out) {
  if (!out) return tb_error(TB_ERR_INVALID_ARGUMENT, "tb_cuda_blas_create needs somewhere to put the handle (out is NULL)");
  *out = NULL;
  tb_cuda_blas *blas = calloc(1, sizeof *blas);
  if (!blas) return tb_error(TB_ERR_OUT_OF_MEMORY, "%s: no host memory for the cuBLASLt state (%zu bytes)", who, sizeof *blas);
  snprintf(blas->who, sizeof blas->who, "%s", who ? who : "cuda");
  tb_status st = tb_cublaslt_open(&blas->api, blas->who);
  if (st != TB_OK) {
    free(blas);
    return st;
  }
  tb_cublas_status r = blas->api.cublasLtCreate(&blas->handle);
  if (r != TB_CUBLAS_STATUS_SUCCESS) {
    char name[96];
    tb_cublaslt_status_name(&blas->api, r, name, sizeof name);
    st = tb_error(r == TB_CUBLAS_STATUS_ALLOC_FAILED ? TB_ERR_OUT_OF_MEMORY : TB_ERR_DRIVER,
                  "%s: cublasLtCreate of %s (cuBLASLt %zu) failed with %d %s; check that the GPU's driver supports this "
                  "cuBLAS (nvidia-smi shows the CUDA version it supports), or set TB_CUBLASLT_LIB to a matching one",
                  blas->who, blas->api.path, blas->api.version, r, name);
    free(blas);
    return st;
  }
  pthread_mutex_init(&blas->lock, NULL);
  *out = blas;
  return TB_OK;
}

static void plan_free(const tb_cublaslt_api *api, plan *p) {
  if (!p) return;
  if (p->a) api->cublasLtMatrixLayoutDestroy(p->a);
  if (p->b) api->cublasLtMatrixLayoutDestroy(p->b);
  if (p->c) api->cublasLtMatrixLayoutDestroy(p->c);
  if (p->desc) api->cublasLtMatmulDescDestroy(p->desc);
  free(p);
}

void tb_cuda_blas_destroy(tb_cuda_blas *blas) {
  if (!blas) return;
  for (size_t i = 0; i < blas->count; i++) plan_free(&blas->api, blas->plans[i]);
  blas->api.cublasLtDestroy(blas->handle);
  pthread_mutex_destroy(&blas->lock);
  free(blas);
}

void tb_cuda_blas_stats_get(tb_cuda_blas *blas, tb_cuda_blas_stats *out) {
  pthread_mutex_lock(&blas->lock);
  *out = blas->stats;
  out->plans = blas->count;
  pthread_mutex_unlock(&blas->lock);
}

const char *tb_cuda_blas_library(const tb_cuda_blas *blas, size_t *version) {
  if (version) *version = blas->api.version;
  return blas->api.path;
}

/* The largest power of two (<= 256, cuBLASLt's default assumption) dividing the address of every product's
 * matrix: the address and, for a batch, the stride in bytes. */
static uint32_t alignment(tb_cu_deviceptr address, int64_t stride_bytes) {
  uint64_t bits = address | (uint64_t)stride_bytes | 256u;
  return (uint32_t)(bits & (~bits + 1));
}

static tb_status bad(const char *who, const char *field, long long value, const char *rule) {
  return tb_error(TB_ERR_INVALID_ARGUMENT, "%s: a cuBLASLt product's %s is %lld; %s", who, field, value, rule);
}

/* Check the product and fill its key (dense defaults resolved). */
static tb_status make_key(const char *who, const tb_cuda_gemm *g, size_t workspace_bytes, plan_key *k) {
  memset(k, 0, sizeof *k);
  if (g->dtype != TB_CUDA_BLAS_F32 && g->dtype != TB_CUDA_BLAS_F16 && g->dtype != TB_CUDA_BLAS_BF16 &&
      g->dtype != TB_CUDA_BLAS_E4M3)
    return bad(who, "dtype", g->dtype, "it must be TB_CUDA_BLAS_F32, F16, BF16 or E4M3");
  if (g->tf32 && g->dtype != TB_CUDA_BLAS_F32)
    return tb_error(TB_ERR_INVALID_ARGUMENT, "%s: TF32 was asked for a %s product; TF32 applies to fp32 only", who,
                    dtype_name(g->dtype));
  if (g->out_f32 && g->dtype != TB_CUDA_BLAS_F16 && g->dtype != TB_CUDA_BLAS_BF16)
    return tb_error(TB_ERR_INVALID_ARGUMENT, "%s: an fp32 output (out_f32) was asked for a %s product; it applies to fp16 and "
                    "bf16 products (fp32 and fp8 ones always write fp32)", who, dtype_name(g->dtype));
  if (g->dtype == TB_CUDA_BLAS_E4M3 && (!g->a_scale || !g->b_scale))
    return tb_error(TB_ERR_INVALID_ARGUMENT, "%s: an fp8 product needs device pointers to A's and B's scales (%s is 0)", who,
                    !g->a_scale ? "a_scale" : "b_scale");
  if (g->dtype != TB_CUDA_BLAS_E4M3 && (g->a_scale || g->b_scale))
    return tb_error(TB_ERR_INVALID_ARGUMENT, "%s: scale pointers were given for a %s product; they apply to fp8 only", who,
                    dtype_name(g->dtype));
  if (g->m < 1) return bad(who, "m (rows of C)", g->m, "it must be at least 1");
  if (g->n < 1) return bad(who, "n (columns of C)", g->n, "it must be at least 1");
  if (g->k < 1) return bad(who, "k (the inner dimension)", g->k, "it must be at least 1 (for k = 0, C = beta * C needs no GEMM)");
  if (!g->a || !g->b || !g->c)
    return tb_error(TB_ERR_INVALID_ARGUMENT, "%s: a cuBLASLt product needs device pointers for A, B and C (%s is 0)",
                    who, !g->a ? "A" : !g->b ? "B" : "C");
  k->dtype = g->dtype;
  k->out_f32 = g->out_f32;
  k->tf32 = g->tf32;
  k->trans_a = g->trans_a;
  k->trans_b = g->trans_b;
  k->relu = g->relu;
  k->bias = g->bias != 0;
  k->m = g->m;
  k->n = g->n;
  k->k = g->k;
  int64_t row_a = g->trans_a ? g->m : g->k;
  int64_t row_b = g->trans_b ? g->k : g->n;
  k->lda = g->lda ? g->lda : row_a;
  k->ldb = g->ldb ? g->ldb : row_b;
  k->ldc = g->ldc ? g->ldc : g->n;
  if (k->lda < row_a) return bad(who, "lda", k->lda, "it must be at least the length of A's stored rows");
  if (k->ldb < row_b) return bad(who, "ldb", k->ldb, "it must be at least the length of B's stored rows");
  if (k->ldc < g->n) return bad(who, "ldc", k->ldc, "it must be at least n, the length of C's rows");
  k->batch = g->batch > 1 ? g->batch : 1;
  if (g->batch < 0) return bad(who, "batch", g->batch, "it must be 0 or more");
  if (k->batch > 1) {
    if (g->stride_a < 0) return bad(who, "stride_a", g->stride_a, "it must be 0 (broadcast) or more");
    if (g->stride_b < 0) return bad(who, "stride_b", g->stride_b, "it must be 0 (broadcast) or more");
    int64_t c_size = (g->m - 1) * k->ldc + g->n;
    k->stride_c = g->stride_c ? g->stride_c : g->m * k->ldc;
    if (k->stride_c < c_size)
      return bad(who, "stride_c", k->stride_c, "the products' outputs would overlap: it must be at least (m - 1) * ldc + n");
    k->stride_a = g->stride_a;
    k->stride_b = g->stride_b;
  }
  if (g->dtype == TB_CUDA_BLAS_E4M3 && (g->trans_a || !g->trans_b || g->k % 16 || k->lda % 16 || k->ldb % 16)) {
    char shape[200];
    describe(k, shape, sizeof shape);
    return tb_error(TB_ERR_UNSUPPORTED,
                    "%s: cuBLASLt's fp8 products need A stored [m, k] and B stored [n, k] (both along k) with k and the "
                    "leading dims multiples of 16; %s (lda %lld, ldb %lld) is not one: run it in bf16 or fp32", who, shape,
                    (long long)k->lda, (long long)k->ldb);
  }
  int64_t bytes = (int64_t)dtype_bytes(g->dtype);
  k->align_a = alignment(g->a, k->stride_a * bytes);
  k->align_b = alignment(g->b, k->stride_b * bytes);
  k->align_c = alignment(g->c, k->stride_c * (c_is_f32(k) ? 4 : bytes));
  k->align_bias = g->bias ? alignment(g->bias, 0) : 0;
  k->workspace_bytes = workspace_bytes;
  return TB_OK;
}

#define CHECK(call, ...)                                               \
  do {                                                                 \
    tb_cublas_status r_ = api->call(__VA_ARGS__);                      \
    if (r_ != TB_CUBLAS_STATUS_SUCCESS) {                              \
      plan_free(api, p);                                               \
      return cublas_failed(blas, #call, r_, k);                        \
    }                                                                  \
  } while (0)

/* One column-major layout with its batch. */
static tb_status layout(tb_cuda_blas *blas, plan *p, tb_cublaslt_layout *out, int type, int64_t rows, int64_t cols, int64_t ld,
                        int64_t stride, const plan_key *k) {
  const tb_cublaslt_api *api = &blas->api;
  tb_cublas_status r = api->cublasLtMatrixLayoutCreate(out, type, (uint64_t)rows, (uint64_t)cols, ld);
  if (r != TB_CUBLAS_STATUS_SUCCESS) {
    *out = NULL;
    plan_free(api, p);
    return cublas_failed(blas, "cublasLtMatrixLayoutCreate", r, k);
  }
  if (k->batch > 1) {
    int32_t count = (int32_t)k->batch;
    CHECK(cublasLtMatrixLayoutSetAttribute, *out, TB_CUBLASLT_MATRIX_LAYOUT_BATCH_COUNT, &count, sizeof count);
    CHECK(cublasLtMatrixLayoutSetAttribute, *out, TB_CUBLASLT_MATRIX_LAYOUT_STRIDED_BATCH_OFFSET, &stride, sizeof stride);
  }
  return TB_OK;
}

static tb_status choose_algorithm(tb_cuda_blas *blas, plan *p, const plan_key *k) {
  const tb_cublaslt_api *api = &blas->api;
  tb_cublaslt_pref pref = NULL;
  tb_cublas_status r = api->cublasLtMatmulPreferenceCreate(&pref);
  if (r != TB_CUBLAS_STATUS_SUCCESS) {
    plan_free(api, p);
    return cublas_failed(blas, "cublasLtMatmulPreferenceCreate", r, k);
  }
  uint64_t workspace = k->workspace_bytes;
  /* cuBLASLt's A is our B and its B our A; C and D are our C. */
  const struct {
    int attr;
    uint32_t value;
  } aligns[] = {{TB_CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_A_BYTES, k->align_b},
                {TB_CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_B_BYTES, k->align_a},
                {TB_CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_C_BYTES, k->align_c},
                {TB_CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_D_BYTES, k->align_c}};
  r = api->cublasLtMatmulPreferenceSetAttribute(pref, TB_CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES, &workspace,
                                                sizeof workspace);
  const char *call = "cublasLtMatmulPreferenceSetAttribute";
  for (size_t i = 0; i < sizeof aligns / sizeof aligns[0] && r == TB_CUBLAS_STATUS_SUCCESS; i++)
    r = api->cublasLtMatmulPreferenceSetAttribute(pref, aligns[i].attr, &aligns[i].value, sizeof aligns[i].value);
  enum { wanted = 8 };
  tb_cublaslt_heuristic results[wanted];
  int returned = 0;
  if (r == TB_CUBLAS_STATUS_SUCCESS) {
    call = "cublasLtMatmulAlgoGetHeuristic";
    memset(results, 0, sizeof results);
    blas->stats.heuristics++;
    r = api->cublasLtMatmulAlgoGetHeuristic(blas->handle, p->desc, p->a, p->b, p->c, p->c, pref, wanted, results,
                                            &returned);
  }
  api->cublasLtMatmulPreferenceDestroy(pref);
  if (r != TB_CUBLAS_STATUS_SUCCESS) {
    plan_free(api, p);
    return cublas_failed(blas, call, r, k);
  }
  for (int i = 0; i < returned && i < wanted; i++) {
    if (results[i].state == TB_CUBLAS_STATUS_SUCCESS && results[i].workspace_size <= k->workspace_bytes) {
      p->algo = results[i].algo;
      p->workspace_size = results[i].workspace_size;
      return TB_OK;
    }
  }
  plan_free(api, p);
  char shape[200];
  describe(k, shape, sizeof shape);
  return tb_error(TB_ERR_UNSUPPORTED,
                  "%s: cuBLASLt %zu (%s) has no algorithm for %s with %llu bytes of workspace and alignments A %u, B %u, "
                  "C %u bytes (cublasLtMatmulAlgoGetHeuristic returned %d, none usable); run it with the backend's own "
                  "kernel, or give it a larger workspace",
                  blas->who, blas->api.version, blas->api.path, shape, (unsigned long long)k->workspace_bytes,
                  k->align_a, k->align_b, k->align_c, returned);
}

/* A new plan for a key: descriptor, layouts, algorithm. */
/* The bias pointer is set before the heuristic too: cuBLASLt reads its alignment from it. */
static tb_status plan_make(tb_cuda_blas *blas, const plan_key *k, tb_cu_deviceptr bias, const tb_cu_deviceptr scales[2], plan **out) {
  const tb_cublaslt_api *api = &blas->api;
  plan *p = calloc(1, sizeof *p);
  if (!p) return tb_error(TB_ERR_OUT_OF_MEMORY, "%s: no host memory for a cuBLASLt plan (%zu bytes)", blas->who, sizeof *p);
  p->key = *k;
  int compute = k->tf32 ? TB_CUBLAS_COMPUTE_32F_FAST_TF32 : TB_CUBLAS_COMPUTE_32F;
  tb_cublas_status r = api->cublasLtMatmulDescCreate(&p->desc, compute, TB_CUDA_R_32F);
  if (r != TB_CUBLAS_STATUS_SUCCESS) {
    p->desc = NULL;
    plan_free(api, p);
    return cublas_failed(blas, "cublasLtMatmulDescCreate", r, k);
  }
  int32_t trans_a = k->trans_b ? TB_CUBLAS_OP_T : TB_CUBLAS_OP_N; /* cuBLASLt's A is our B */
  int32_t trans_b = k->trans_a ? TB_CUBLAS_OP_T : TB_CUBLAS_OP_N;
  int32_t epilogue = k->bias ? (k->relu ? TB_CUBLASLT_EPILOGUE_RELU_BIAS : TB_CUBLASLT_EPILOGUE_BIAS)
                             : (k->relu ? TB_CUBLASLT_EPILOGUE_RELU : TB_CUBLASLT_EPILOGUE_DEFAULT);
  CHECK(cublasLtMatmulDescSetAttribute, p->desc, TB_CUBLASLT_MATMUL_DESC_TRANSA, &trans_a, sizeof trans_a);
  CHECK(cublasLtMatmulDescSetAttribute, p->desc, TB_CUBLASLT_MATMUL_DESC_TRANSB, &trans_b, sizeof trans_b);
  if (epilogue != TB_CUBLASLT_EPILOGUE_DEFAULT)
    CHECK(cublasLtMatmulDescSetAttribute, p->desc, TB_CUBLASLT_MATMUL_DESC_EPILOGUE, &epilogue, sizeof epilogue);
  if (k->bias) {
    const void *bias_pointer = (const void *)(uintptr_t)bias;
    CHECK(cublasLtMatmulDescSetAttribute, p->desc, TB_CUBLASLT_MATMUL_DESC_BIAS_POINTER, &bias_pointer,
          sizeof bias_pointer);
  }
  if (k->dtype == TB_CUDA_BLAS_E4M3) { /* cuBLASLt's A is our B: its scale is our B's */
    const void *scale_a = (const void *)(uintptr_t)scales[1], *scale_b = (const void *)(uintptr_t)scales[0];
    CHECK(cublasLtMatmulDescSetAttribute, p->desc, TB_CUBLASLT_MATMUL_DESC_A_SCALE_POINTER, &scale_a, sizeof scale_a);
    CHECK(cublasLtMatmulDescSetAttribute, p->desc, TB_CUBLASLT_MATMUL_DESC_B_SCALE_POINTER, &scale_b, sizeof scale_b);
  }
  /* Column-major shapes as stored: cuBLASLt's A is our B read column-major, and so on. */
  int ab = cuda_type(k->dtype), c = c_is_f32(k) ? TB_CUDA_R_32F : ab;
  tb_status st = layout(blas, p, &p->a, ab, k->trans_b ? k->k : k->n, k->trans_b ? k->n : k->k, k->ldb, k->stride_b, k);
  if (st == TB_OK) st = layout(blas, p, &p->b, ab, k->trans_a ? k->m : k->k, k->trans_a ? k->k : k->m, k->lda, k->stride_a, k);
  if (st == TB_OK) st = layout(blas, p, &p->c, c, k->n, k->m, k->ldc, k->stride_c, k);
  if (st == TB_OK) st = choose_algorithm(blas, p, k);
  if (st != TB_OK) return st; /* p was freed by the step that failed */
  *out = p;
  return TB_OK;
}

static plan *find_plan(tb_cuda_blas *blas, const plan_key *k) {
  for (size_t i = 0; i < blas->count; i++)
    if (memcmp(&blas->plans[i]->key, k, sizeof *k) == 0) return blas->plans[i];
  return NULL;
}

static tb_status run(tb_cuda_blas *blas, plan *p, const tb_cuda_gemm *g, tb_cu_stream stream, tb_cu_deviceptr workspace) {
  const tb_cublaslt_api *api = &blas->api;
  const plan_key *k = &p->key;
  if (k->bias) {
    const void *bias = (const void *)(uintptr_t)g->bias;
    tb_cublas_status r =
        api->cublasLtMatmulDescSetAttribute(p->desc, TB_CUBLASLT_MATMUL_DESC_BIAS_POINTER, &bias, sizeof bias);
    if (r != TB_CUBLAS_STATUS_SUCCESS) return cublas_failed(blas, "cublasLtMatmulDescSetAttribute", r, k);
  }
  if (k->dtype == TB_CUDA_BLAS_E4M3) { /* the scales live per run (the activations'): set at every call */
    const void *scale_a = (const void *)(uintptr_t)g->b_scale, *scale_b = (const void *)(uintptr_t)g->a_scale;
    tb_cublas_status r =
        api->cublasLtMatmulDescSetAttribute(p->desc, TB_CUBLASLT_MATMUL_DESC_A_SCALE_POINTER, &scale_a, sizeof scale_a);
    if (r == TB_CUBLAS_STATUS_SUCCESS)
      r = api->cublasLtMatmulDescSetAttribute(p->desc, TB_CUBLASLT_MATMUL_DESC_B_SCALE_POINTER, &scale_b, sizeof scale_b);
    if (r != TB_CUBLAS_STATUS_SUCCESS) return cublas_failed(blas, "cublasLtMatmulDescSetAttribute", r, k);
  }
  float alpha = g->alpha, beta = g->beta;
  void *c = (void *)(uintptr_t)g->c;
  tb_cublas_status r = api->cublasLtMatmul(blas->handle, p->desc, &alpha, (const void *)(uintptr_t)g->b, p->a,
                                           (const void *)(uintptr_t)g->a, p->b, &beta, c, p->c, c, p->c, &p->algo,
                                           p->workspace_size ? (void *)(uintptr_t)workspace : NULL, p->workspace_size,
                                           stream);
  if (r != TB_CUBLAS_STATUS_SUCCESS) return cublas_failed(blas, "cublasLtMatmul", r, k);
  blas->stats.matmuls++;
  return TB_OK;
}

tb_status tb_cuda_blas_gemm(tb_cuda_blas *blas, const tb_cuda_gemm *gemm, tb_cu_stream stream,
                            tb_cu_deviceptr workspace, size_t workspace_bytes) {
  if (!blas || !gemm)
    return tb_error(TB_ERR_INVALID_ARGUMENT, "tb_cuda_blas_gemm needs a cuBLASLt state and a product (%s is NULL)",
                    !blas ? "blas" : "gemm");
  plan_key k;
  tb_status st = make_key(blas->who, gemm, workspace ? workspace_bytes : 0, &k);
  if (st != TB_OK) return st;
  pthread_mutex_lock(&blas->lock);
  plan *p = find_plan(blas, &k);
  bool cached = p != NULL;
  const tb_cu_deviceptr scales[2] = {gemm->a_scale, gemm->b_scale};
  if (!p) st = plan_make(blas, &k, gemm->bias, scales, &p);
  if (st == TB_OK && !cached && blas->count < TB_CUDA_BLAS_MAX_PLANS) {
    blas->plans[blas->count++] = p;
    cached = true;
  }
  if (st == TB_OK) st = run(blas, p, gemm, stream, workspace);
  if (st == TB_OK && !cached) blas->stats.uncached++;
  if (p && !cached) plan_free(&blas->api, p);
  pthread_mutex_unlock(&blas->lock);
  return st;
}
