/* The convolution's epilogue on one output row, for the paths that apply it outside the GEMM (depthwise,
 * direct, Winograd, and the implicit GEMM's activations beyond the piecewise-linear ones): the residual
 * add and the activation through the epilogue's vec_ops table (AVX-512, AVX2+FMA or portable, the same
 * loops as the level-2 elementwise kernels, so a fused activation equals the unfused node bit for bit),
 * or per element in float when the epilogue has no table. */
#include "backend/cpu/kernels/fast/conv/conv_fast.h"
#include "backend/cpu/kernels/fast/vec/vec_ops.h"

void tb_conv_epilogue_row(const tb_gemm_epilogue *ep, const float *residual, float *y, int64_t n) {
  if (n <= 0) return;
  if (residual) {
    if (ep->vec)
      ep->vec->binary(VEC_ADD, y, false, residual, false, y, n);
    else
      for (int64_t i = 0; i < n; i++) y[i] += residual[i];
  }
  tb_gemm_act_row(ep, y, n);
}
