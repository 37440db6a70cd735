/* Internal: what the fused family's reference kernels share — running the ONNX kernel a fused op extends
 * (found in the kernel registry, so the same math as at O0), and the epilogue applied to its output. */
#ifndef TB_CPU_KERNELS_FUSED_KERNEL_H
#define TB_CPU_KERNELS_FUSED_KERNEL_H
#include "backend/cpu/kernels/kernel.h"

/* Run the reference kernel of ONNX op `base` on the first n_base inputs of ctx, writing ctx->outputs. */
tb_status tb_fused_run_base(tb_kernel_ctx *ctx, const char *base, size_t n_base);
/* Output 0 in place: add `residual` (same shape; NULL for none), then apply the node's activation
 * attributes. Computed in double and rounded once to the output dtype per step, as the separate kernels do. */
tb_status tb_fused_epilogue(tb_kernel_ctx *ctx, const tb_tensor *residual);
/* The activation named by the node's attributes applied to one value (identity when absent). */
typedef struct tb_fused_act {
  int kind; /* 0 none, 1 Relu, 2 LeakyRelu, 3 Clip, 4 Sigmoid, 5 Tanh, 6 HardSigmoid, 7 HardSwish */
  double alpha, beta, min, max;
} tb_fused_act;
tb_status tb_fused_act_read(tb_kernel_ctx *ctx, tb_fused_act *act);
double tb_fused_act_apply(const tb_fused_act *act, double x);

#endif
