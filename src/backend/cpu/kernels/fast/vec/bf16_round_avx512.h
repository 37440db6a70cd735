/* Internal: fp32 -> bf16 rounding of 16 lanes on AVX-512 with integer arithmetic (round to nearest even,
 * NaN quieted, subnormals kept: the same bits as tb_convert and tb_bf16_round, unlike vcvtneps2bf16), and
 * the target attribute of the AVX512-BF16 files that use it (gemm_bf16_avx512.c, conv_direct_bf16_avx512.c).
 * x86-64 only. */
#ifndef TB_CPU_KERNELS_FAST_BF16_ROUND_AVX512_H
#define TB_CPU_KERNELS_FAST_BF16_ROUND_AVX512_H
#include <immintrin.h>

#define TB_TARGET_BF16 __attribute__((target("avx512f,avx512bw,avx512vl,avx512bf16")))

/* 16 floats to bf16 bits in the low half of each 32-bit lane. */
TB_TARGET_BF16 static inline __attribute__((always_inline)) __m512i tb_round_bf16_avx512(__m512 x) {
  const __m512i bits = _mm512_castps_si512(x);
  const __m512i high = _mm512_srli_epi32(bits, 16);
  const __m512i bias = _mm512_add_epi32(_mm512_and_si512(high, _mm512_set1_epi32(1)), _mm512_set1_epi32(0x7FFF));
  const __m512i rounded = _mm512_srli_epi32(_mm512_add_epi32(bits, bias), 16);
  const __m512i quiet_nan = _mm512_or_si512(high, _mm512_set1_epi32(0x40));
  const __m512i magnitude = _mm512_and_si512(bits, _mm512_set1_epi32(0x7FFFFFFF));
  const __mmask16 nan = _mm512_cmpgt_epu32_mask(magnitude, _mm512_set1_epi32(0x7F800000));
  return _mm512_mask_blend_epi32(nan, rounded, quiet_nan);
}

#endif
