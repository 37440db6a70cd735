/* Internal: what the fused family's reference kernels share — running the ONNX kernel a fused op extends
 * (found in the kernel registry, so the same math as at O0), and the epilogue applied to its output. */
#ifndef TB_CPU_KERNELS_FUSED_KERNEL_H
#define TB_CPU_KERNELS_FUSED_KERNEL_H
#include "backend/cpu/kernels/kernel.h"
#include "ops/fused/fused_params.h"

/* Run the reference kernel of ONNX op `base` on the first n_base inputs of ctx, writing ctx->outputs. */
tb_status tb_fused_run_base(tb_kernel_ctx *ctx, const char *base, size_t n_base);
/* Output 0 in place: add `bias` (NULL for none: N values broadcast along the output's last axis of size
 * N), then `residual` (same shape; NULL for none), then apply the node's activation attributes. Computed
 * in double and rounded to the output dtype after each step, as the separate Add kernels and the
 * activation's kernel do (so the result is theirs bit for bit). A bias or residual of the wrong size is
 * TB_ERR_INVALID_ARGUMENT naming the node, the size and the expected one. */
tb_status tb_fused_epilogue(tb_kernel_ctx *ctx, const tb_tensor *bias, const tb_tensor *residual);

/* The activation named by the node's attributes (activation, activation_alpha/beta/min/max and, for Gelu,
 * activation_approximate). */
typedef struct tb_fused_act {
  int kind; /* a TB_FUSED_ACT_* value; the numbering is tb_gemm_epilogue's act (gemm_f32.h) */
  double alpha, beta, min, max;
} tb_fused_act;
tb_status tb_fused_act_read(tb_kernel_ctx *ctx, tb_fused_act *act);
/* The activation of one value in double (identity when none); Gelu exactly as tb::Gelu's reference. */
double tb_fused_act_apply(const tb_fused_act *act, double x);

#endif
