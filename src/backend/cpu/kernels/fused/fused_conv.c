/* Reference kernels of tb::FusedConv, tb::FusedGemm and tb::FusedMatMul: the ONNX Conv / Gemm / MatMul
 * reference kernel, then the epilogue in place: FusedConv's residual input 3, FusedMatMul's bias input 2
 * and residual input 3, then the activation. */
#include "backend/cpu/kernels/fused/fused_kernel.h"

static const tb_tensor *optional_input(const tb_kernel_ctx *ctx, size_t i) {
  return ctx->n_inputs > i ? ctx->inputs[i] : NULL;
}

static tb_status fused_conv_run(tb_kernel_ctx *ctx) {
  tb_status st = tb_fused_run_base(ctx, "Conv", 3);
  return st == TB_OK ? tb_fused_epilogue(ctx, NULL, optional_input(ctx, 3)) : st;
}

static tb_status fused_gemm_run(tb_kernel_ctx *ctx) {
  tb_status st = tb_fused_run_base(ctx, "Gemm", 3);
  return st == TB_OK ? tb_fused_epilogue(ctx, NULL, NULL) : st;
}

static tb_status fused_matmul_run(tb_kernel_ctx *ctx) {
  tb_status st = tb_fused_run_base(ctx, "MatMul", 2);
  return st == TB_OK ? tb_fused_epilogue(ctx, optional_input(ctx, 2), optional_input(ctx, 3)) : st;
}

const tb_kernel tb_kernel_fused_conv = {.domain = "tb", .name = "FusedConv", .level = TB_KERNEL_REFERENCE, .cpu_features = 0, .accepts = NULL, .run = fused_conv_run};
const tb_kernel tb_kernel_fused_gemm = {.domain = "tb", .name = "FusedGemm", .level = TB_KERNEL_REFERENCE, .cpu_features = 0, .accepts = NULL, .run = fused_gemm_run};
const tb_kernel tb_kernel_fused_matmul = {.domain = "tb", .name = "FusedMatMul", .level = TB_KERNEL_REFERENCE, .cpu_features = 0, .accepts = NULL, .run = fused_matmul_run};
