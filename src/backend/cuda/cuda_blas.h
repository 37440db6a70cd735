/* Internal: GEMMs on an NVIDIA GPU through cuBLASLt (runtime/cublaslt_api.h), for the CUDA backend's
 * MatMul, Gemm and batched-product kernels. Row-major, as the tensors are:
 *
 *   C[i] = act(alpha * op(A[i]) * op(B[i]) + beta * C[i] + bias)   for i < batch
 *
 * with op(A) [m, k], op(B) [k, n], C [m, n] row-major, op(X) = X or its transpose. fp32 (TF32 tensor cores
 * only when asked), bf16 and fp16 (fp32 accumulation and fp32 alpha/beta; C 16-bit, or fp32 with out_f32), and
 * fp8 e4m3 A and B with per-tensor scales (fp32 accumulation, C fp32). Work is enqueued on the caller's
 * stream with the caller's workspace; nothing waits for the GPU. The caller makes its CUDA context current.
 *
 * A plan (the matmul descriptor, the four layouts and cuBLASLt's heuristic choice) is made once per
 * shape and kept until tb_cuda_blas_destroy; the shape is every field below except the pointers, alpha and
 * beta, plus the pointers' alignments and the workspace size. Calls on one tb_cuda_blas are serialised
 * (the bias pointer is set on the cached descriptor); enqueueing is all they do while holding the lock. */
#ifndef TB_BACKEND_CUDA_BLAS_H
#define TB_BACKEND_CUDA_BLAS_H
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <tensorbridge/status.h>
#include "runtime/nvidia_cuda_api.h"

typedef enum tb_cuda_blas_dtype {
  TB_CUDA_BLAS_F32 = 0,  /* fp32 in and out; fp32 compute, or TF32 when tf32 is set */
  TB_CUDA_BLAS_F16 = 1,  /* fp16 in and out, fp32 accumulation */
  TB_CUDA_BLAS_BF16 = 2, /* bf16 in and out, fp32 accumulation */
  TB_CUDA_BLAS_E4M3 = 3, /* fp8 e4m3 A and B, each times its scale (a_scale, b_scale); fp32 C and bias, fp32
                            accumulation. cuBLASLt's rules for fp8: compute capability 8.9 or newer, B transposed
                            and A not (stored [n, k] and [m, k]: both along k), k and the leading dims multiples
                            of 16 (else TB_ERR_UNSUPPORTED) */
} tb_cuda_blas_dtype;

typedef struct tb_cuda_gemm {
  tb_cuda_blas_dtype dtype; /* of A, B, C and bias (but see out_f32 and E4M3) */
  bool out_f32;             /* F16 / BF16 only: C and the bias are fp32 (the reduced-precision products of O3, whose
                               neighbours stay fp32) */
  bool tf32;                /* fp32 only: allow TF32 tensor cores (the precision option asked for it) */
  bool trans_a, trans_b;    /* op(A) = A^T: A is stored [k, m]; op(B) = B^T: B is stored [n, k] */
  int64_t m, n, k;          /* each >= 1 */
  int64_t lda, ldb, ldc;    /* row-major leading dimensions in elements (the row pitch); 0: dense */
  int64_t batch;            /* products; 0 or 1: one */
  int64_t stride_a, stride_b, stride_c; /* elements from one product's matrix to the next; A's or B's 0:
                                           the same matrix for every product (broadcast); C's 0: dense */
  float alpha, beta;        /* beta 0: C is only written */
  tb_cu_deviceptr a, b, c;  /* device pointers; C is read (beta != 0) and written in place */
  tb_cu_deviceptr bias;     /* 0: none; else n values of dtype added to every row (the same for every product) */
  bool relu;                /* max(0, .) after the bias */
  tb_cu_deviceptr a_scale, b_scale; /* E4M3 only (required): device pointers to one fp32 each, the factor that
                                       turns A's (B's) stored values into the real ones */
} tb_cuda_gemm;

typedef struct tb_cuda_blas tb_cuda_blas;

/* Counters, for tests and `--profile`. */
typedef struct tb_cuda_blas_stats {
  size_t plans;      /* plans cached now */
  size_t heuristics; /* cublasLtMatmulAlgoGetHeuristic calls (one per new plan) */
  size_t matmuls;    /* cublasLtMatmul calls that succeeded */
  size_t uncached;   /* products run with a plan made for them alone (the cache was full) */
} tb_cuda_blas_stats;

#define TB_CUDA_BLAS_MAX_PLANS 256

/* Open cuBLASLt (TB_ERR_UNAVAILABLE with the search's sentence when it is absent, so a kernel can fall
 * back to its own) and create its handle. `who` ("cuda:0") leads every error sentence. */
tb_status tb_cuda_blas_create(const char *who, tb_cuda_blas **out);

/* Enqueue one (batched) product on `stream` with `workspace_bytes` of device memory at `workspace` (0 and
 * 0: none). TB_ERR_INVALID_ARGUMENT for a shape that is not one (each field named); TB_ERR_UNSUPPORTED when
 * cuBLASLt has no algorithm for it (the caller may use its own kernel); TB_ERR_DRIVER /
 * TB_ERR_OUT_OF_MEMORY when cuBLASLt fails, with the call, its status and the shape. */
tb_status tb_cuda_blas_gemm(tb_cuda_blas *blas, const tb_cuda_gemm *gemm, tb_cu_stream stream,
                            tb_cu_deviceptr workspace, size_t workspace_bytes);

void tb_cuda_blas_stats_get(tb_cuda_blas *blas, tb_cuda_blas_stats *out);

/* The library cuBLASLt was loaded from and its version (130100 for 13.1.0). */
const char *tb_cuda_blas_library(const tb_cuda_blas *blas, size_t *version);

/* Destroy every plan and the handle. NULL is fine. Call it while the context is still alive. */
void tb_cuda_blas_destroy(tb_cuda_blas *blas);

#endif
