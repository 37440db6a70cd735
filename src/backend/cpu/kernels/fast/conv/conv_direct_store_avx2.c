/* The AVX2 store of the direct convolution (conv_direct.h: tb_conv_direct_impl.store): a tile of up to 16
 * pixels x its column block, 8 x 8 blocks transposed in registers into the NCHW output with bias, residual
 * and Relu / LeakyRelu / Clip (the other activations per channel row after, tb_conv_epilogue_row).
 * Branch-free per block: rows past the tile's pixels load as zeros (masked loads), the bias is one vector
 * added to each row before the transpose, and channels past the block store nothing (mask 0); one
 * instance per activation, bias and residual, chosen once per tile. Built for AVX2 by target attribute;
 * the driver calls it only through the AVX2 implementation. */
#include "backend/cpu/kernels/fast/conv/conv_direct.h"

#if defined(__x86_64__)
#include <immintrin.h>
#include "backend/cpu/kernels/fast/vec/transpose_avx2.h"
#define AVX2 __attribute__((target("avx2")))

/* One block of up to 8 channels (jn) x up to 8 pixels (n): y[j * plane + p] = act(acc[p * cols + j] +
 * bias[j] + res[j * plane + p]). ACT 1, 2, 3 (Relu, LeakyRelu, Clip) with the scalar rules: vmaxps returns
 * its second operand, v, when v is NaN or both are zero (-0 stays -0); the compares are false for NaN. */
static inline __attribute__((always_inline)) AVX2 void store_block(const float *acc, int cols, int64_t n, int64_t jn,
                                                                   float *y, int64_t plane, const float *bias,
                                                                   const float *res, __m256 alpha, __m256 lo, __m256 hi,
                                                                   const int ACT, const bool BIAS, const bool RES) {
  const __m256i m = tb_lanes_below_avx2(n), none = _mm256_setzero_si256(), all = _mm256_set1_epi32(-1);
  const __m256 zero = _mm256_setzero_ps();
  const __m256 b = BIAS ? _mm256_maskload_ps(bias, tb_lanes_below_avx2(jn)) : zero;
  __m256 r[8];
#pragma GCC unroll 8
  for (int p = 0; p < 8; p++) {
    r[p] = _mm256_maskload_ps(acc + (p < n ? p : 0) * cols, p < n ? all : none); /* no address past the tile */
    if (BIAS) r[p] = _mm256_add_ps(r[p], b);
  }
  tb_transpose8_ps(r);
#pragma GCC unroll 8
  for (int j = 0; j < 8; j++) {
    const __m256i mj = j < jn ? m : none;
    const int64_t at = (j < jn ? j : 0) * plane; /* a channel past the block touches no address past the tensor */
    __m256 v = r[j];
    if (RES) v = _mm256_add_ps(v, _mm256_maskload_ps(res + at, mj));
    if (ACT == 1) {
      v = _mm256_max_ps(zero, v);
    } else if (ACT == 2) {
      v = _mm256_blendv_ps(v, _mm256_mul_ps(v, alpha), _mm256_cmp_ps(v, zero, _CMP_LT_OQ));
    } else if (ACT == 3) {
      v = _mm256_blendv_ps(v, lo, _mm256_cmp_ps(v, lo, _CMP_LT_OQ));
      v = _mm256_blendv_ps(v, hi, _mm256_cmp_ps(v, hi, _CMP_GT_OQ));
    }
    _mm256_maskstore_ps(y + at, mj, v);
  }
}

/* Blocks of 8 pixels x 8 channels over the tile (store_block, one instance per activation, bias and
 * residual). */
#define STORE_VARIANT(ACT, BIAS, RES)                                                                              \
  AVX2 static void store_##ACT##_##BIAS##_##RES(const float *acc, int cols, int64_t n, int64_t ch, float *y,     \
                                                 int64_t plane, const float *bias, const float *res, __m256 alpha, \
                                                 __m256 lo, __m256 hi) {                                           \
    for (int64_t p0 = 0; p0 < n; p0 += 8)                                                                          \
      for (int64_t j0 = 0; j0 < ch; j0 += 8)                                                                       \
        store_block(acc + p0 * cols + j0, cols, n - p0 < 8 ? n - p0 : 8, ch - j0 < 8 ? ch - j0 : 8,                \
                    y + j0 * plane + p0, plane, BIAS ? bias + j0 : NULL, RES ? res + j0 * plane + p0 : NULL, alpha,  \
                    lo, hi, ACT, BIAS, RES);                                                                       \
  }
#define STORE_VARIANTS(ACT) STORE_VARIANT(ACT, 0, 0) STORE_VARIANT(ACT, 0, 1) STORE_VARIANT(ACT, 1, 0) STORE_VARIANT(ACT, 1, 1)
STORE_VARIANTS(0)
STORE_VARIANTS(1)
STORE_VARIANTS(2)
STORE_VARIANTS(3)

typedef void (*store_fn)(const float *, int, int64_t, int64_t, float *, int64_t, const float *, const float *, __m256,
                         __m256, __m256);
#define STORE_ROW(ACT) {store_##ACT##_0_0, store_##ACT##_0_1, store_##ACT##_1_0, store_##ACT##_1_1}

AVX2 void tb_conv_direct_store_avx2(const float *acc, int cols, int64_t n, int64_t ch, float *y, int64_t plane,
                                    const float *bias, const float *res, const tb_gemm_epilogue *ep) {
  static const store_fn variants[4][4] = {STORE_ROW(0), STORE_ROW(1), STORE_ROW(2), STORE_ROW(3)};
  const int act = ep->act, in_regs = act >= 1 && act <= 3 ? act : 0;
  variants[in_regs][(bias ? 2 : 0) + (res ? 1 : 0)](acc, cols, n, ch, y, plane, bias, res, _mm256_set1_ps(ep->act_alpha),
                                                    _mm256_set1_ps(ep->act_min), _mm256_set1_ps(ep->act_max));
  if (act > 3)
    for (int64_t j = 0; j < ch; j++) tb_conv_epilogue_row(ep, NULL, y + j * plane, n);
}
#endif
