/* The GEMM epilogue on one C tile while it is in cache: before the first product block C = beta * C +
 * bias + residual (the residual read before C is written, so it may be C itself), and after the last one
 * the late bias and residual, then the activation (the tb_fused_act kinds, in float), row by row through
 * the epilogue's vec_ops table (every kind), else per element. */
#include <math.h>
#include <stddef.h>
#include "backend/cpu/kernels/fast/gemm/gemm_f32_internal.h"
#include "backend/cpu/kernels/fast/vec/vec_ops.h"

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

static float clamp01f(float v) { return v < 0 ? 0.0f : v > 1 ? 1.0f : v; }

float tb_gemm_act(const tb_gemm_epilogue *ep, float x) {
  const float k_tanh = 0.7978845608f, inv_sqrt2 = 0.70710678f; /* sqrt(2/pi), 1/sqrt(2) */
  switch (ep->act) {
    case 1: return x < 0 ? 0.0f : x;
    case 2: return x < 0 ? ep->act_alpha * x : x;
    case 3: return x < ep->act_min ? ep->act_min : x > ep->act_max ? ep->act_max : x;
    case 4: return 1.0f / (1.0f + expf(-x));
    case 5: return tanhf(x);
    case 6: return clamp01f(ep->act_alpha * x + ep->act_beta); /* NaN kept, as the HardSigmoid kernel */
    case 7: return x * clamp01f(x / 6.0f + 0.5f);
    case 8: return 0.5f * x * (1.0f + erff(x * inv_sqrt2));
    case 9: return 0.5f * x * (1.0f + tanhf(k_tanh * (x + 0.044715f * x * x * x)));
    case 10: return x * (x >= 0 ? 1.0f / (1.0f + expf(-x)) : expf(x) / (1.0f + expf(x)));
    case 11: return x * tanhf(x > 0 ? x + log1pf(expf(-x)) : log1pf(expf(x)));
    default: return x;
  }
}

/* The vec_ops unary loop of an activation kind and its two parameters; false when the table has none. */
static bool vec_unop_of(const tb_gemm_epilogue *ep, vec_unop *op, float *p0, float *p1) {
  static const vec_unop ops[] = {VEC_UNOP_COUNT,   VEC_RELU,       VEC_LEAKY_RELU, VEC_CLIP,
                                 VEC_SIGMOID,      VEC_TANH,       VEC_HARD_SIGMOID, VEC_HARD_SWISH,
                                 VEC_GELU_ERF,     VEC_GELU_TANH,  VEC_SILU,       VEC_MISH};
  if (ep->act <= 0 || (size_t)ep->act >= sizeof ops / sizeof ops[0]) return false;
  *op = ops[ep->act];
  *p0 = ep->act == 3 ? ep->act_min : ep->act_alpha;
  *p1 = ep->act == 3 ? ep->act_max : ep->act_beta;
  return true;
}

void tb_gemm_act_row(const tb_gemm_epilogue *ep, float *x, int64_t n) {
  vec_unop op;
  float p0, p1;
  if (ep->act == 0 || n <= 0) return;
  if (ep->vec && vec_unop_of(ep, &op, &p0, &p1)) {
    ep->vec->unary_p(op, p0, p1, x, x, n);
  } else if (ep->act == 1) {
    for (int64_t j = 0; j < n; j++) x[j] = x[j] < 0 ? 0.0f : x[j];
  } else {
    for (int64_t j = 0; j < n; j++) x[j] = tb_gemm_act(ep, x[j]);
  }
}

void tb_gemm_tile_act(float *c, int64_t ldc, int64_t i0, int64_t j0, int64_t rows, int64_t cols,
                      const tb_gemm_epilogue *ep) {
  if (!ep || (ep->act == 0 && !ep->late_bias && !ep->late_residual)) return;
  for (int64_t i = 0; i < rows; i++) {
    float *ci = c + i * ldc;
    const float *bias = ep->late_bias ? ep->late_bias + j0 : NULL;
    const float *res = ep->late_residual ? ep->late_residual + (i0 + i) * ep->ld_late_residual + j0 : NULL;
    for (int64_t j = 0; bias && j < cols; j++) ci[j] += bias[j];
    for (int64_t j = 0; res && j < cols; j++) ci[j] += res[j];
    tb_gemm_act_row(ep, ci, cols);
  }
}
