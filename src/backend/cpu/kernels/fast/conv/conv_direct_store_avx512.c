/* The AVX-512 store of the direct convolution (conv_direct.h: tb_conv_direct_impl.store), used by its fp32
 * and bf16 paths: a tile of up to 16 pixels x its column block, transposed 16 x 16 in registers into the
 * NCHW output with bias, residual and Relu / LeakyRelu / Clip. Built for AVX-512 by target attribute; the
 * driver calls it only through an AVX-512 implementation. */
#include "backend/cpu/kernels/fast/conv/conv_direct.h"

#if defined(__x86_64__)
#include <immintrin.h>
#include "backend/cpu/kernels/fast/vec/transpose_avx512.h"
#define AVX512 __attribute__((target("avx512f")))

/* One block of up to 16 channels (jn of them) x n pixels (<= 16): y[j * plane + p] = act(acc[p * cols + j]
 * + bias[j] + res[j * plane + p]). Branch-free: the rows past n load as zeros (masked loads), the bias is
 * one vector added to each row before the 16 x 16 register transpose, and the channels past jn store
 * nothing (mask 0), so the compiler keeps the block in registers. ACT 1, 2, 3 (Relu, LeakyRelu, Clip) in
 * registers with the scalar rules (a NaN passes through: vmaxps returns its second operand, v, when v is
 * NaN, and -0 stays -0); other activations are applied by the caller afterwards. */
static inline __attribute__((always_inline)) AVX512 void store_block(const float *acc, int cols, int64_t n, int64_t jn,
                                                                     float *y, int64_t plane, const float *bias,
                                                                     const float *res, __m512 alpha, __m512 lo, __m512 hi,
                                                                     const int ACT, const bool BIAS, const bool RES) {
  const __mmask16 m = (__mmask16)((1u << n) - 1), jm = (__mmask16)((1u << jn) - 1);
  const __m512 zero = _mm512_setzero_ps();
  __m512 r[16];
  const __m512 b = BIAS ? _mm512_maskz_loadu_ps(jm, bias) : zero;
#pragma GCC unroll 16
  for (int p = 0; p < 16; p++) {
    r[p] = _mm512_maskz_loadu_ps(p < n ? (__mmask16)0xFFFF : (__mmask16)0, acc + p * cols);
    if (BIAS) r[p] = _mm512_add_ps(r[p], b);
  }
  tb_transpose16_ps(r);
#pragma GCC unroll 16
  for (int j = 0; j < 16; j++) {
    const __mmask16 mj = j < jn ? m : (__mmask16)0;
    __m512 v = r[j];
    if (RES) v = _mm512_add_ps(v, _mm512_maskz_loadu_ps(mj, res + j * plane));
    if (ACT == 1) {
      v = _mm512_max_ps(zero, v);
    } else if (ACT == 2) {
      v = _mm512_mask_mul_ps(v, _mm512_cmp_ps_mask(v, zero, _CMP_LT_OQ), v, alpha);
    } else if (ACT == 3) {
      v = _mm512_mask_mov_ps(v, _mm512_cmp_ps_mask(v, lo, _CMP_LT_OQ), lo);
      v = _mm512_mask_mov_ps(v, _mm512_cmp_ps_mask(v, hi, _CMP_GT_OQ), hi);
    }
    _mm512_mask_storeu_ps(y + j * plane, mj, v);
  }
}

/* y[j * plane + p] = act(acc[p * cols + j] + bias[j] + res[j * plane + p]) for pixels p < n (<= 16) and
 * channels j < ch, block by block of 16 channels (store_block, one instance per activation, bias and
 * residual, chosen once per tile); activations other than Relu, LeakyRelu and Clip per channel row after. */
#define STORE_VARIANT(ACT, BIAS, RES)                                                                                \
  AVX512 static void store_##ACT##_##BIAS##_##RES(const float *acc, int cols, int64_t n, int64_t ch, float *y,     \
                                                   int64_t plane, const float *bias, const float *res, __m512 alpha, \
                                                   __m512 lo, __m512 hi) {                                           \
    for (int64_t j0 = 0; j0 < ch; j0 += 16)                                                                          \
      store_block(acc + j0, cols, n, ch - j0 < 16 ? ch - j0 : 16, y + j0 * plane, plane, BIAS ? bias + j0 : NULL,   \
                  RES ? res + j0 * plane : NULL, alpha, lo, hi, ACT, BIAS, RES);                                     \
  }
#define STORE_VARIANTS(ACT) STORE_VARIANT(ACT, 0, 0) STORE_VARIANT(ACT, 0, 1) STORE_VARIANT(ACT, 1, 0) STORE_VARIANT(ACT, 1, 1)
STORE_VARIANTS(0)
STORE_VARIANTS(1)
STORE_VARIANTS(2)
STORE_VARIANTS(3)

typedef void (*store_fn)(const float *, int, int64_t, int64_t, float *, int64_t, const float *, const float *, __m512,
                         __m512, __m512);
#define STORE_ROW(ACT) {store_##ACT##_0_0, store_##ACT##_0_1, store_##ACT##_1_0, store_##ACT##_1_1}

AVX512 void tb_conv_direct_store_avx512(const float *acc, int cols, int64_t n, int64_t ch, float *y, int64_t plane,
                                        const float *bias, const float *res, const tb_gemm_epilogue *ep) {
  static const store_fn variants[4][4] = {STORE_ROW(0), STORE_ROW(1), STORE_ROW(2), STORE_ROW(3)};
  const int act = ep->act, in_regs = act >= 1 && act <= 3 ? act : 0;
  variants[in_regs][(bias ? 2 : 0) + (res ? 1 : 0)](acc, cols, n, ch, y, plane, bias, res, _mm512_set1_ps(ep->act_alpha),
                                                    _mm512_set1_ps(ep->act_min), _mm512_set1_ps(ep->act_max));
  if (act > 3)
    for (int64_t j = 0; j < ch; j++) tb_conv_epilogue_row(ep, NULL, y + j * plane, n);
}
#endif
