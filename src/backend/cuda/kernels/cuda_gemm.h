/* Internal: matrix products on cuda:0 for the MatMul / Gemm / fused / attention kernels (cuda_ops_gemm.c).
 * A product is described once as the kernels' tb_gemm_desc (kernels/40_gemm.cu, mirrored here byte for
 * byte): batch dims with per-operand strides (0 where an operand broadcasts), each operand's row and
 * column strides (a transpose swaps them), two scaled addends (Gemm's C, the bias, the residual, the
 * attention's mask) and the activation. tb_cuda_gemm_run enqueues it through cuBLASLt (cuda_blas.h) where
 * the node has a handle and cuBLASLt can express it, the epilogue cuBLASLt cannot fuse then applied in
 * place by tb_cu_gemm_epilogue_f32; else, or when cuBLASLt answers TB_ERR_UNAVAILABLE / TB_ERR_UNSUPPORTED
 * (logged once with the reason), through the own tiled kernel tb_cu_gemm_f32. */
#ifndef TB_BACKEND_CUDA_KERNELS_CUDA_GEMM_H
#define TB_BACKEND_CUDA_KERNELS_CUDA_GEMM_H
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include "backend/cuda/cuda_blas.h"
#include "backend/cuda/kernels/cuda_launch.h"

enum {
  TB_CUDA_GEMM_MAX_BATCH = 6, /* TB_MAX_DIMS less the two matrix dims */
  TB_CUDA_GEMM_TILE = 64,     /* the own kernel's output tile (64 x 64) and block (256 threads) */
  TB_CUDA_GEMM_THREADS = 256,
  TB_CUDA_GEMM_BLOCKS_PER_SM = 4, /* the own kernel's grid: tiles up to this many blocks per multiprocessor */
  TB_CUDA_GEMM_MAX_CALLS = 4096,  /* cuBLASLt calls for one product (its batch is the last batch dim) */
};

/* The kernels' tb_gemm_desc (40_gemm.cu), field for field. */
typedef struct tb_cuda_gemm_desc {
  int32_t batch_rank;
  int32_t act; /* tb_fused_act_kind */
  int64_t batch_dims[TB_CUDA_GEMM_MAX_BATCH];
  int64_t a_batch[TB_CUDA_GEMM_MAX_BATCH], b_batch[TB_CUDA_GEMM_MAX_BATCH];
  int64_t add0_batch[TB_CUDA_GEMM_MAX_BATCH], add1_batch[TB_CUDA_GEMM_MAX_BATCH];
  int64_t batch;
  int64_t m, n, k;
  int64_t a_rs, a_cs, b_rs, b_cs;
  int64_t add0_rs, add0_cs, add1_rs, add1_cs;
  float alpha, add0_scale, add1_scale;
  float act_alpha, act_beta, act_min, act_max;
  int32_t divide;
} tb_cuda_gemm_desc;

/* A tensor's strides seen from an output [batch_dims..., rows, cols] it broadcasts to (the tensor
 * contiguous, aligned at the right): per batch dim, 0 where it has the dim as 1 or lacks it; its row
 * stride (0 for rank < 2 or a row count of 1) and column stride (0 for rank 0 or one column). */
void tb_cuda_gemm_strides(size_t ndim, const int64_t *shape, size_t batch_rank, int64_t *batch, int64_t *rs, int64_t *cs);

/* The batch dims of out (rank batch_rank, dims), the product of them in d->batch. */
void tb_cuda_gemm_set_batch(tb_cuda_gemm_desc *d, size_t batch_rank, const int64_t *dims);

/* Merge neighbouring batch dims along which every operand steps alike (fewer dims for the kernel, and
 * for cuBLASLt's single batch stride); drop dims of 1. */
void tb_cuda_gemm_merge_batch(tb_cuda_gemm_desc *d);

/* The per-node state of the product kernels: the launch helpers' function cache first (cuda_launch.h),
 * then cuBLASLt's handle (NULL: the own kernel runs every product). */
typedef struct tb_cuda_gemm_node {
  tb_cuda_node base;
  tb_cuda_blas *blas;
  int refused_logged; /* cuBLASLt refused a shape of this node: said once */
} tb_cuda_gemm_node;

/* The kernels' prepare / release: the module (as tb_cuda_prepare), and cuBLASLt's handle unless
 * TB_CUDA_GEMM=own or cuBLASLt is absent or does not start (said once per process, with the reason). */
tb_status tb_cuda_gemm_prepare(tb_kernel_ctx *ctx, void **state);
void tb_cuda_gemm_release(void *state);

/* C = act(alpha * A B + addends) for every batch index (d complete; c contiguous, holding batch * m * n
 * floats; add0 / add1 NULL for none). Nothing is launched for an empty output. */
tb_status tb_cuda_gemm_run(tb_kernel_ctx *ctx, const tb_cuda_gemm_desc *d, const tb_tensor *a, const tb_tensor *b, tb_tensor *c,
                           const tb_tensor *add0, const tb_tensor *add1);

/* The cuBLASLt product for d (with addend 0 / 1 present or not), when cuBLASLt can express it (operands
 * with a unit stride along a row or a column, no divide, at most TB_CUDA_GEMM_MAX_CALLS calls: cuBLASLt's
 * batch is the last batch dim after merging, one call per index of the dims before it): false otherwise. A bias (addend 0 along the columns, scale 1, no addend 1) and ReLU go into cuBLASLt's
 * epilogue (g->bias 1: the caller sets the pointer); any other addend or activation is left to
 * tb_cu_gemm_epilogue_f32 (*rest true), g then computing alpha * A B alone. For tests too. */
bool tb_cuda_gemm_blas_form(const tb_cuda_gemm_desc *d, bool has_add0, bool has_add1, tb_cuda_gemm *g, bool *rest);

#endif
