/* Reference kernel of tb::Gelu: computed in double per element, rounded once to the output dtype. */
#include <math.h>
#include <string.h>
#include "backend/cpu/kernels/fused/fused_kernel.h"
#include "backend/cpu/kernels/nn/nn_kernel.h"

static tb_status gelu_run(tb_kernel_ctx *ctx) {
  tb_status st;
  const tb_gelu_params *pb = tb_kernel_params(ctx, &st);
  if (st != TB_OK) return st;
  bool use_tanh = pb->tanh;
  nn_buf x;
  st = tb_nn_load(ctx, 0, false, &x);
  if (st != TB_OK) return st;
  const double k_tanh = 0.79788456080286535588, inv_sqrt2 = 0.70710678118654752440; /* sqrt(2/pi), 1/sqrt(2) */
  for (int64_t i = 0; i < x.numel; i++) {
    double v = x.data[i];
    x.data[i] = use_tanh ? 0.5 * v * (1.0 + tanh(k_tanh * (v + 0.044715 * v * v * v))) : 0.5 * v * (1.0 + erf(v * inv_sqrt2));
  }
  st = tb_nn_store(ctx, 0, x.dtype, x.ndim, x.shape, x.data);
  tb_nn_buf_free(&x);
  return st;
}

const tb_kernel tb_kernel_fused_gelu = {.domain = "tb", .name = "Gelu", .level = TB_KERNEL_REFERENCE, .cpu_features = 0, .accepts = NULL, .run = gelu_run};
