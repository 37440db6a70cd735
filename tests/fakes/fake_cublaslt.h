/* What the fake cuBLASLt (fake_cublaslt.c) saw, for tests: the arguments of the last heuristic query and
 * the last matmul, and the live objects. Tests read it through fake_cublaslt_state(), found with dlsym. */
#ifndef TB_FAKE_CUBLASLT_H
#define TB_FAKE_CUBLASLT_H
#include <stddef.h>
#include <stdint.h>

typedef struct fake_cublaslt_layout {
  int type;
  uint64_t rows, cols;
  int64_t ld;
  int32_t batch;  /* 1 unless set */
  int64_t stride; /* 0 unless set */
} fake_cublaslt_layout;

typedef struct fake_cublaslt_call {
  int compute_type, scale_type;
  int32_t trans_a, trans_b, epilogue;
  const void *bias;
  const void *a_scale, *b_scale; /* CUBLASLT_MATMUL_DESC_A/B_SCALE_POINTER (fp8), NULL unless set */
  fake_cublaslt_layout a, b, c, d;
  const void *pa, *pb, *pc, *pd; /* the data pointers (matmul only) */
  float alpha, beta;
  void *workspace;
  size_t workspace_bytes;
  void *stream;
  /* the preference (heuristic only) */
  uint64_t max_workspace;
  uint32_t align_a, align_b, align_c, align_d;
  int requested;
} fake_cublaslt_call;

typedef struct fake_cublaslt_state {
  fake_cublaslt_call heuristic; /* the last cublasLtMatmulAlgoGetHeuristic */
  fake_cublaslt_call matmul;    /* the last cublasLtMatmul */
  int heuristics, matmuls;
  int live_handles, live_descs, live_layouts, live_prefs;
} fake_cublaslt_state;

#endif
