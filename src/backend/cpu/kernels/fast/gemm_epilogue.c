/* The GEMM epilogue on one C tile while it is in cache: before the first product block C = beta * C +
 * bias + residual (the residual read before C is written, so it may be C itself), and after the last one
 * the activation (the tb_fused_act kinds, in float). */
#include <math.h>
#include <stddef.h>
#include "backend/cpu/kernels/fast/gemm_f32_internal.h"

void tb_gemm_tile_init(float *c, int64_t ldc, int64_t i0, int64_t j0, int64_t rows, int64_t cols, float beta,
                       const tb_gemm_epilogue *ep) {
  const float *bias = ep ? ep->bias : NULL, *res = ep ? ep->residual : NULL;
  int64_t ldr = ep ? ep->ld_residual : 0;
  bool row_bias = bias && ep->bias_axis == 0;
  if (!bias && !res) {
    if (beta == 1.0f) return;
    for (int64_t i = 0; i < rows; i++)
      for (int64_t j = 0; j < cols; j++) c[i * ldc + j] = beta == 0.0f ? 0.0f : beta * c[i * ldc + j];
    return;
  }
  for (int64_t i = 0; i < rows; i++) {
    float *ci = c + i * ldc;
    const float *ri = res ? res + (i0 + i) * ldr + j0 : NULL;
    const float *bj = bias && !row_bias ? bias + j0 : NULL;
    float bi = row_bias ? bias[i0 + i] : 0.0f;
    for (int64_t j = 0; j < cols; j++) {
      float r = ri ? ri[j] : 0.0f; /* read before C is written: the residual may be C */
      float v = beta == 0.0f ? 0.0f : beta == 1.0f ? ci[j] : beta * ci[j];
      ci[j] = v + (bj ? bj[j] : bi) + r;
    }
  }
}

float tb_gemm_act(const tb_gemm_epilogue *ep, float x) {
  switch (ep->act) {
    case 1: return x < 0 ? 0.0f : x;
    case 2: return x < 0 ? ep->act_alpha * x : x;
    case 3: return x < ep->act_min ? ep->act_min : x > ep->act_max ? ep->act_max : x;
    case 4: return 1.0f / (1.0f + expf(-x));
    case 5: return tanhf(x);
    case 6: return fmaxf(0.0f, fminf(1.0f, ep->act_alpha * x + ep->act_beta));
    case 7: return x * fmaxf(0.0f, fminf(1.0f, x / 6.0f + 0.5f));
    default: return x;
  }
}

void tb_gemm_tile_act(float *c, int64_t ldc, int64_t rows, int64_t cols, const tb_gemm_epilogue *ep) {
  if (!ep || ep->act == 0) return;
  for (int64_t i = 0; i < rows; i++) {
    float *ci = c + i * ldc;
    if (ep->act == 1) {
      for (int64_t j = 0; j < cols; j++) ci[j] = ci[j] < 0 ? 0.0f : ci[j];
      continue;
    }
    for (int64_t j = 0; j < cols; j++) ci[j] = tb_gemm_act(ep, ci[j]);
  }
}
