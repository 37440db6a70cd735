/* Internal: cuBLASLt, NVIDIA's GEMM library, as one dlopen symbol table. The CUDA backend runs MatMul,
 * Gemm and the batched products through it (backend/cuda/cuda_blas.c). The few types and enum values are
 * declared here with the C ABI of cublasLt.h, cublas_api.h and library_types.h (CUDA 12 and 13 agree on
 * every value used), so no CUDA header is needed to build.
 *
 * Search order (the first that loads wins; the library then stays loaded for the process, core/dl.c):
 *   1. TB_CUBLASLT_LIB, a path: when set, only it is tried, and a value that does not load is an error;
 *   2. libcublasLt.so.13, then libcublasLt.so.12, through the loader path (ldconfig, LD_LIBRARY_PATH);
 *   3. the NVIDIA pip wheels (where PyTorch users have cuBLAS): in each site-packages folder,
 *      nvidia/cu13/lib/libcublasLt.so.13 (CUDA 13 wheels) then nvidia/cublas/lib/libcublasLt.so.12 (CUDA 12
 *      wheels, nvidia-cublas-cu12); the folders as runtime/nvidia_lib_search.h finds them. */
#ifndef TB_RUNTIME_CUBLASLT_API_H
#define TB_RUNTIME_CUBLASLT_API_H
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <tensorbridge/status.h>
#include "runtime/nvidia_cuda_api.h"

typedef int tb_cublas_status;
typedef struct tb_cublaslt_context *tb_cublaslt_handle;
typedef struct tb_cublaslt_matmul_desc_st *tb_cublaslt_matmul_desc;
typedef struct tb_cublaslt_layout_st *tb_cublaslt_layout;
typedef struct tb_cublaslt_pref_st *tb_cublaslt_pref;

/* cublasLtMatmulAlgo_t: opaque, 64 bytes. */
typedef struct tb_cublaslt_algo {
  uint64_t data[8];
} tb_cublaslt_algo;

/* cublasLtMatmulHeuristicResult_t. */
typedef struct tb_cublaslt_heuristic {
  tb_cublaslt_algo algo;
  size_t workspace_size;
  tb_cublas_status state;
  float waves_count;
  int reserved[4];
} tb_cublaslt_heuristic;

enum {
  /* cublasStatus_t */
  TB_CUBLAS_STATUS_SUCCESS = 0,
  TB_CUBLAS_STATUS_NOT_INITIALIZED = 1,
  TB_CUBLAS_STATUS_ALLOC_FAILED = 3,
  TB_CUBLAS_STATUS_INVALID_VALUE = 7,
  TB_CUBLAS_STATUS_NOT_SUPPORTED = 15,
  /* cudaDataType */
  TB_CUDA_R_32F = 0,
  TB_CUDA_R_16F = 2,
  TB_CUDA_R_16BF = 14,
  TB_CUDA_R_8F_E4M3 = 28,
  /* cublasComputeType_t */
  TB_CUBLAS_COMPUTE_32F = 68,
  TB_CUBLAS_COMPUTE_32F_FAST_TF32 = 77,
  /* cublasOperation_t */
  TB_CUBLAS_OP_N = 0,
  TB_CUBLAS_OP_T = 1,
  /* cublasLtMatmulDescAttributes_t */
  TB_CUBLASLT_MATMUL_DESC_TRANSA = 3,
  TB_CUBLASLT_MATMUL_DESC_TRANSB = 4,
  TB_CUBLASLT_MATMUL_DESC_EPILOGUE = 7,
  TB_CUBLASLT_MATMUL_DESC_BIAS_POINTER = 8,
  TB_CUBLASLT_MATMUL_DESC_A_SCALE_POINTER = 17,
  TB_CUBLASLT_MATMUL_DESC_B_SCALE_POINTER = 18,
  TB_CUBLASLT_MATMUL_DESC_BIAS_DATA_TYPE = 26,
  /* cublasLtEpilogue_t */
  TB_CUBLASLT_EPILOGUE_DEFAULT = 1,
  TB_CUBLASLT_EPILOGUE_RELU = 2,
  TB_CUBLASLT_EPILOGUE_BIAS = 4,
  TB_CUBLASLT_EPILOGUE_RELU_BIAS = 6,
  /* cublasLtMatrixLayoutAttribute_t */
  TB_CUBLASLT_MATRIX_LAYOUT_BATCH_COUNT = 5,
  TB_CUBLASLT_MATRIX_LAYOUT_STRIDED_BATCH_OFFSET = 6,
  /* cublasLtMatmulPreferenceAttributes_t */
  TB_CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES = 1,
  TB_CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_A_BYTES = 5,
  TB_CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_B_BYTES = 6,
  TB_CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_C_BYTES = 7,
  TB_CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_D_BYTES = 8,
};

/* Name, return type, parameters, optional. */
#define TB_CUBLASLT_SYMBOLS(X)                                                                                 \
  X(cublasLtGetVersion, size_t, (void), false)                                                                 \
  X(cublasLtGetStatusName, const char *, (tb_cublas_status status), true)                                      \
  X(cublasLtGetStatusString, const char *, (tb_cublas_status status), true)                                    \
  X(cublasLtCreate, tb_cublas_status, (tb_cublaslt_handle * handle), false)                                    \
  X(cublasLtDestroy, tb_cublas_status, (tb_cublaslt_handle handle), false)                                     \
  X(cublasLtMatmulDescCreate, tb_cublas_status, (tb_cublaslt_matmul_desc * desc, int compute_type, int scale_type), \
    false)                                                                                                     \
  X(cublasLtMatmulDescDestroy, tb_cublas_status, (tb_cublaslt_matmul_desc desc), false)                        \
  X(cublasLtMatmulDescSetAttribute, tb_cublas_status,                                                          \
    (tb_cublaslt_matmul_desc desc, int attr, const void *buf, size_t size), false)                             \
  X(cublasLtMatrixLayoutCreate, tb_cublas_status,                                                              \
    (tb_cublaslt_layout * layout, int type, uint64_t rows, uint64_t cols, int64_t ld), false)                  \
  X(cublasLtMatrixLayoutDestroy, tb_cublas_status, (tb_cublaslt_layout layout), false)                         \
  X(cublasLtMatrixLayoutSetAttribute, tb_cublas_status,                                                        \
    (tb_cublaslt_layout layout, int attr, const void *buf, size_t size), false)                                \
  X(cublasLtMatmulPreferenceCreate, tb_cublas_status, (tb_cublaslt_pref * pref), false)                        \
  X(cublasLtMatmulPreferenceDestroy, tb_cublas_status, (tb_cublaslt_pref pref), false)                         \
  X(cublasLtMatmulPreferenceSetAttribute, tb_cublas_status,                                                    \
    (tb_cublaslt_pref pref, int attr, const void *buf, size_t size), false)                                    \
  X(cublasLtMatmulAlgoGetHeuristic, tb_cublas_status,                                                          \
    (tb_cublaslt_handle handle, tb_cublaslt_matmul_desc desc, tb_cublaslt_layout a, tb_cublaslt_layout b,      \
     tb_cublaslt_layout c, tb_cublaslt_layout d, tb_cublaslt_pref pref, int requested,                         \
     tb_cublaslt_heuristic *results, int *returned),                                                           \
    false)                                                                                                     \
  X(cublasLtMatmul, tb_cublas_status,                                                                          \
    (tb_cublaslt_handle handle, tb_cublaslt_matmul_desc desc, const void *alpha, const void *a,                \
     tb_cublaslt_layout a_layout, const void *b, tb_cublaslt_layout b_layout, const void *beta, const void *c, \
     tb_cublaslt_layout c_layout, void *d, tb_cublaslt_layout d_layout, const tb_cublaslt_algo *algo,          \
     void *workspace, size_t workspace_bytes, tb_cu_stream stream),                                            \
    false)

typedef struct tb_cublaslt_api {
#define TB_CUBLASLT_MEMBER(name, ret, params, optional) ret(*name) params;
  TB_CUBLASLT_SYMBOLS(TB_CUBLASLT_MEMBER)
#undef TB_CUBLASLT_MEMBER
  char path[512]; /* the file loaded */
  size_t version; /* cublasLtGetVersion: major*10000 + minor*100 + patch (130100 for 13.1.0) */
} tb_cublaslt_api;

/* Open cuBLASLt (the search order above) and resolve the table. On failure TB_ERR_UNAVAILABLE with a
 * sentence naming what was tried and what to install or set; `who` ("cuda:0") leads it. */
tb_status tb_cublaslt_open(tb_cublaslt_api *api, const char *who);

/* The name of a cublasStatus_t ("CUBLAS_STATUS_NOT_SUPPORTED"): cuBLASLt's own, else "cuBLAS status <n>". */
void tb_cublaslt_status_name(const tb_cublaslt_api *api, tb_cublas_status status, char *out, size_t cap);

/* Test hook: the names tried through the loader path (NULL-terminated; NULL: back to libcublasLt.so.13 and
 * libcublasLt.so.12), so that tests on a machine with the CUDA toolkit can reach the other paths. */
void tb_cublaslt_test_loader_names(const char *const *names);

#endif
