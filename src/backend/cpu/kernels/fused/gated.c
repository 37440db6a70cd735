/* Reference kernels of tb::Silu and tb::Mish: the fused epilogue's double expressions (x * sigmoid(x),
 * x * tanh(softplus(x))) per element, rounded once to the output dtype. */
#include "backend/cpu/kernels/fused/fused_kernel.h"
#include "backend/cpu/kernels/nn/nn_kernel.h"

static tb_status gated_run(tb_kernel_ctx *ctx, int kind) {
  nn_buf x;
  tb_status st = tb_nn_load(ctx, 0, false, &x);
  if (st != TB_OK) return st;
  const tb_fused_act act = {.kind = kind};
  for (int64_t i = 0; i < x.numel; i++) x.data[i] = tb_fused_act_apply(&act, x.data[i]);
  st = tb_nn_store(ctx, 0, x.dtype, x.ndim, x.shape, x.data);
  tb_nn_buf_free(&x);
  return st;
}

static tb_status silu_run(tb_kernel_ctx *ctx) { return gated_run(ctx, TB_FUSED_ACT_SILU); }
static tb_status mish_run(tb_kernel_ctx *ctx) { return gated_run(ctx, TB_FUSED_ACT_MISH); }

const tb_kernel tb_kernel_fused_silu = {.domain = "tb", .name = "Silu", .level = TB_KERNEL_REFERENCE, .cpu_features = 0, .accepts = NULL, .run = silu_run};
const tb_kernel tb_kernel_fused_mish = {.domain = "tb", .name = "Mish", .level = TB_KERNEL_REFERENCE, .cpu_features = 0, .accepts = NULL, .run = mish_run};
