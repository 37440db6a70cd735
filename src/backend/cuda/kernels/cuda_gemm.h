/* Internal: matrix products on cuda:0 for the MatMul / Gemm / fused / attention kernels (cuda_ops_gemm.c).
 * A product is described once as the kernels' tb_gemm_desc (kernels/40_gemm.cu, mirrored here byte for
 * byte): batch dims with per-operand strides (0 where an operand broadcasts), each operand's row and
 * column strides (a transpose swaps them), two scaled addends (Gemm's C, the bias, the residual, the
 * attention's mask) and the activation. tb_cuda_gemm_run enqueues it through cuBLASLt (cuda_blas.h) where
 * the node has a handle and cuBLASLt can express it, the epilogue cuBLASLt cannot fuse then applied in
 * place by tb_cu_gemm_epilogue_f32; else, or when cuBLASLt answers TB_ERR_UNAVAILABLE / TB_ERR_UNSUPPORTED
 * (logged once with the reason), through the own tiled kernel tb_cu_gemm_f32. The node's precision (its kernel
 * entry's, chosen by tb_kernel_query.device_precision: tf32, bf16, fp16, fp8) is cuda_gemm_precision.c's: it prepares the node,
 * converts its weights once, and runs each product in that precision through tb_cuda_gemm_route. */
#ifndef TB_BACKEND_CUDA_KERNELS_CUDA_GEMM_H
#define TB_BACKEND_CUDA_KERNELS_CUDA_GEMM_H
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include "backend/cuda/cuda_blas.h"
#include "backend/cuda/kernels/cuda_handoff.h"
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

/* A constant operand (input 0 or 1) converted once at prepare for a reduced precision (cuda_gemm_lowp.c). */
typedef struct tb_cuda_gemm_packed {
  tb_tensor *t;          /* bf16 / fp16 / fp8 e4m3 copy on the device; NULL: the operand is converted per run */
  tb_cu_deviceptr from;  /* the fp32 constant's address it was made from (a run uses t only for that operand) */
  tb_tensor *scale;      /* fp8: one fp32 on the device, the factor turning t's values back into the constant's */
  bool transposed;       /* fp8: a [k, n] B stored [n, k] (cuBLASLt's fp8 products read both operands along k) */
} tb_cuda_gemm_packed;

/* The per-node state of the product kernels: the launch helpers' function cache first (cuda_launch.h),
 * then cuBLASLt's handle (NULL: the own kernel runs every product). */
typedef struct tb_cuda_gemm_node {
  tb_cuda_node base;
  tb_cuda_blas *blas;
  int refused_logged; /* cuBLASLt refused a shape of this node: said once */
  tb_device_precision precision; /* what the node's products compute in (its kernel entry's) */
  tb_cuda_gemm_packed packed[2]; /* constant inputs 0 and 1 in that precision (bf16, fp16, fp8 only) */
  tb_cuda_handoff handoff;       /* the output in bf16 / fp16 too, for a consumer that reads it so (cuda_handoff.h) */
  tb_tensor *out16;              /* during a run: handoff's tensor when this product writes it, else NULL */
  int out16_f16;                 /* out16 is fp16 (else bf16) */
} tb_cuda_gemm_node;

/* The node's base state (cuda_gemm.c): the module (as tb_cuda_prepare), and cuBLASLt's handle unless
 * TB_CUDA_GEMM=own or cuBLASLt is absent or does not start (said once per process, with the reason); close
 * destroys the handle and frees the node. */
tb_status tb_cuda_gemm_node_open(tb_kernel_ctx *ctx, tb_cuda_gemm_node **state);
void tb_cuda_gemm_node_close(tb_cuda_gemm_node *node);

/* The kernels' prepare per precision / release (cuda_gemm_precision.c): the base state, the node's precision, and
 * for bf16 / fp16 / fp8 the checks (fp8: compute capability 8.9 and cuBLASLt) and the constant operands converted
 * once, freed at release. */
tb_status tb_cuda_gemm_prepare(tb_kernel_ctx *ctx, void **state); /* fp32 */
tb_status tb_cuda_gemm_prepare_tf32(tb_kernel_ctx *ctx, void **state);
tb_status tb_cuda_gemm_prepare_bf16(tb_kernel_ctx *ctx, void **state);
tb_status tb_cuda_gemm_prepare_fp16(tb_kernel_ctx *ctx, void **state);
tb_status tb_cuda_gemm_prepare_fp8(tb_kernel_ctx *ctx, void **state);
tb_status tb_cuda_gemm_prepare_fp8_as_bf16(tb_kernel_ctx *ctx, void **state); /* tb::Attention under fp8: bf16, said why */
void tb_cuda_gemm_release(void *state);

/* A new tensor of dtype (bf16 or fp16) on the node's device holding the fp32 x converted by tb_cu_dm_cast (round to
 * nearest even), its launch on the node's functions (ctx->state starts with a tb_cuda_node); for the products and
 * the reduced-precision convolutions (cuda_conv_precision.c). */
tb_status tb_cuda_lowp_convert(tb_kernel_ctx *ctx, const tb_tensor *x, tb_dtype dtype, tb_tensor **out);
/* x, fp32 [rows, cols] (any tensor with rows its elements and cols 1 when !transpose), as fp8 e4m3 divided by its
 * per-tensor scale max |x| / 448 (1 when that is 0 or not finite): *out [rows, cols], or [cols, rows] when transpose,
 * and *scale one fp32 on the device (tb_cu_lowp_amax_f32 twice, then tb_cu_lowp_to_e4m3); for the fp8 products and
 * convolutions. */
tb_status tb_cuda_lowp_quantize8(tb_kernel_ctx *ctx, const tb_tensor *x, int64_t rows, int64_t cols, bool transpose, tb_tensor **out,
                                 tb_tensor **scale);

/* C = act(alpha * A B + addends) for every batch index (d complete; c contiguous, holding batch * m * n
 * floats; add0 / add1 NULL for none), in the node's precision. Nothing is launched for an empty output. */
tb_status tb_cuda_gemm_run(tb_kernel_ctx *ctx, const tb_cuda_gemm_desc *d, const tb_tensor *a, const tb_tensor *b, tb_tensor *c,
                           const tb_tensor *add0, const tb_tensor *add1);

/* The product with A and B already of `dtype` (fp32, or the 16-bit / fp8 copies of cuda_gemm_lowp.c; C and the
 * addends fp32): cuBLASLt where the node has it and it takes the form (tf32: TF32 tensor cores; for fp8 a_scale and
 * b_scale, the operands' scale pointers), the rest of the epilogue after it; else the own kernel `own`
 * ("tb_cu_gemm_f32", "tb_cu_gemm_bf16", "tb_cu_gemm_f16"). own NULL (fp8, which has no own kernel): cuBLASLt's
 * TB_ERR_UNSUPPORTED / TB_ERR_UNAVAILABLE come back to the caller, nothing launched. When the node's out16 is set, C
 * is written in 16 bits there too, in the same launch: the own kernel's `_out16` form, or after cuBLASLt the epilogue's
 * (tb_cu_gemm_epilogue_out16, which only converts when cuBLASLt fused the whole epilogue). */
tb_status tb_cuda_gemm_route(tb_kernel_ctx *ctx, const tb_cuda_gemm_desc *d, tb_cuda_blas_dtype dtype, bool tf32,
                             tb_cu_deviceptr a_scale, tb_cu_deviceptr b_scale, const tb_tensor *a, const tb_tensor *b,
                             tb_tensor *c, const tb_tensor *add0, const tb_tensor *add1, const char *own);


/* The cuBLASLt product for d (with addend 0 / 1 present or not), when cuBLASLt can express it (operands
 * with a unit stride along a row or a column, no divide, at most TB_CUDA_GEMM_MAX_CALLS calls: cuBLASLt's
 * batch is the last batch dim after merging, one call per index of the dims before it): false otherwise. A bias (addend 0 along the columns, scale 1, no addend 1) and ReLU go into cuBLASLt's
 * epilogue (g->bias 1: the caller sets the pointer); any other addend or activation is left to
 * tb_cu_gemm_epilogue_f32 (*rest true), g then computing alpha * A B alone. For tests too. */
bool tb_cuda_gemm_blas_form(const tb_cuda_gemm_desc *d, bool has_add0, bool has_add1, tb_cuda_gemm *g, bool *rest);

#endif
