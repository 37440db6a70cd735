/* Internal: what the level-2 (fast) fp32 kernels share: the f32-only accepts, constant-input tests, the
 * per-node state (op(B) packed once at prepare), the activation, bias and residual of a fused node as a
 * GEMM epilogue, a MatMul's or Gemm's output and sizes (also for the bf16 kernels), and the MatMul / Gemm
 * runs the fused kernels extend. */
#ifndef TB_CPU_KERNELS_FAST_KERNEL_H
#define TB_CPU_KERNELS_FAST_KERNEL_H
#include "backend/cpu/kernels/fast/gemm/gemm_f32.h"
#include "backend/cpu/kernels/fast/vec/vec_kernel.h"
#include "backend/cpu/kernels/kernel.h"
#include "backend/kernel_params.h"
#include "ops/fused/fused_params.h"

/* A "node needs float32" error when input i is present and not f32. */
tb_status tb_fast_check_f32(tb_kernel_ctx *ctx, size_t n);
/* Input i is a constant of the graph (initializer or folded value, not a graph input) and ctx has it. */
bool tb_fast_input_constant(const tb_kernel_ctx *ctx, size_t i);

/* A node's prepared state: its constant B operand packed for the kernel's path (k x n of op(B)). */
typedef struct tb_fast_gemm_state {
  tb_gemm_packed *b;
  int64_t k, n;
  bool trans_b;
} tb_fast_gemm_state;
/* Pack constant 2-D input 1 (transposed when trans_b) into *state; *state NULL when input 1 is not a
 * constant 2-D float32 tensor (run() then packs per call). */
tb_status tb_fast_prepare_b(tb_kernel_ctx *ctx, tb_gemm_path path, bool trans_b, void **state);
void tb_fast_release(void *state);
/* The B operand for a run: the packed one when the state matches (k, n, trans), else the plain data. */
tb_gemm_operand tb_fast_operand_b(const tb_kernel_ctx *ctx, const float *b, int64_t ldb, bool trans_b, int64_t k,
                                  int64_t n);

/* The activation attributes of a fused node (tb::FusedGemm, tb::FusedMatMul) into ep's act fields. */
tb_status tb_fast_read_act(tb_kernel_ctx *ctx, tb_gemm_epilogue *ep);
/* The vec_ops table (vec_ops.h) of the level-2 elementwise kernels that run on the CPU features a GEMM path
 * needs (AVX-512, AVX2, portable), for tb_gemm_epilogue.vec. */
const struct vec_ops *tb_fast_vec_ops(tb_gemm_path path);

/* A MatMul node's operands and output as the fp32 and bf16 MatMul kernels run it: the output's shape by
 * the MatMul op's rule (1-D promotion, batch broadcast), y allocated, the product sizes and batch ranks. */
typedef struct tb_fast_matmul {
  const tb_tensor *a, *b;
  tb_tensor *y;
  int64_t m, k, n;
  size_t ba, bb, nb;          /* batch dims of A, of B, of the output (0 when B is 1-D or 2-D) */
  int64_t shape[TB_MAX_DIMS]; /* the output's */
} tb_fast_matmul;
/* Fill mm and allocate y (an error naming the node when the shapes do not multiply). */
tb_status tb_fast_matmul_begin(tb_kernel_ctx *ctx, tb_fast_matmul *mm);
/* A tb::FusedMatMul's bias (input 2, when present: mm->n values, added along the columns) and residual
 * (input 3: the output's shape, row stride mm->n over the output's rows) into ep: as its late_bias and
 * late_residual when `late` (the fp32 GEMM: added after the products, as the separate Adds add them),
 * else as its bias and residual (the bf16 GEMM, which adds those after the products).
 * TB_ERR_INVALID_ARGUMENT naming the node when the bias's length or the residual's shape is not the
 * output's. Call only with B of rank 2 or more when there is a bias (then the output's last dim is
 * mm->n); see tb_fast_matmul_bias_by_rows. */
tb_status tb_fast_matmul_epilogue(tb_kernel_ctx *ctx, const tb_fast_matmul *mm, bool late, tb_gemm_epilogue *ep);
/* True when a tb::FusedMatMul has a bias and a 1-D B (the bias then runs along A's rows, which the GEMM
 * epilogue does not index across batches): the fast kernels hand such a node to the reference kernel. */
bool tb_fast_matmul_bias_by_rows(const tb_kernel_ctx *ctx);

/* A Gemm node as the fp32 and bf16 Gemm kernels run it: its attributes, 2-D A and B with matching inner
 * sizes, C's rank and shape (cnd 0: no C) broadcasting to [m, n], and y [m, n] allocated. */
typedef struct tb_fast_gemm {
  const tb_tensor *a, *b, *c;
  tb_tensor *y;
  int64_t trans_a, trans_b;
  float alpha, beta;
  int64_t m, k, n;
  size_t cnd;
  const int64_t *cs;
} tb_fast_gemm;
/* Fill gm and allocate y; an error naming the node for bad attributes or shapes. */
tb_status tb_fast_gemm_begin(tb_kernel_ctx *ctx, tb_fast_gemm *gm);

/* MatMul / Gemm on a path with the epilogue's activation (act 0: plain ONNX MatMul / Gemm); MatMul adds a
 * fused node's bias and residual (tb_fast_matmul_epilogue) to it. */
tb_status tb_fast_matmul_run(tb_kernel_ctx *ctx, tb_gemm_path path, const tb_gemm_epilogue *act);
tb_status tb_fast_gemm_run(tb_kernel_ctx *ctx, tb_gemm_path path, const tb_gemm_epilogue *act);
bool tb_fast_matmul_accepts(const tb_kernel_query *q);
bool tb_fast_gemm_accepts(const tb_kernel_query *q);

#define TB_FAST_FEATURES_AVX512 (TB_FEATURE_BIT(TB_FEATURE_AVX512F) | TB_FEATURE_BIT(TB_FEATURE_FMA))
#define TB_FAST_FEATURES_AVX2 (TB_FEATURE_BIT(TB_FEATURE_AVX2) | TB_FEATURE_BIT(TB_FEATURE_FMA))

#endif
