/* AVX-512 loops for f32 <-> f16, bf16 and fp8, compiled for AVX-512F with target attributes (so the
 * rest of the library stays baseline x86-64) and called only when the CPU has the feature. Each loop
 * does 16 elements at a time; the last partial vector goes through a 16-element buffer, so every
 * element sees the same instructions. Results equal the scalar reference bit for bit (NaN payloads
 * included), which the tests check exhaustively. */
#include "core/convert_kernels.h"

#ifdef TB_CONVERT_X86
#include <immintrin.h>
#include <string.h>

#define TB_AVX512 __attribute__((target("avx512f")))
#define TB_AVX512BF16 __attribute__((target("avx512f,avx512bf16")))

/* Run `vec16` over src in blocks of 16, the tail through zero-padded buffers. */
#define TB_FOR_BLOCKS_OF_16(SRC_T, DST_T, vec16)                                       \
  do {                                                                                 \
    const SRC_T *s_ = src;                                                             \
    DST_T *d_ = dst;                                                                   \
    size_t i_ = 0;                                                                     \
    for (; i_ + 16 <= count; i_ += 16) vec16(s_ + i_, d_ + i_, saturate);              \
    if (i_ < count) {                                                                  \
      SRC_T in_[16];                                                                   \
      DST_T out_[16];                                                                  \
      memset(in_, 0, sizeof in_);                                                      \
      memcpy(in_, s_ + i_, (count - i_) * sizeof(SRC_T));                             \
      vec16(in_, out_, saturate);                                                      \
      memcpy(d_ + i_, out_, (count - i_) * sizeof(DST_T));                             \
    }                                                                                  \
  } while (0)

TB_AVX512 static inline void f32_to_f16_16(const float *s, uint16_t *d, bool saturate) {
  (void)saturate;
  __m256i h = _mm512_cvtps_ph(_mm512_loadu_ps(s), _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
  _mm256_storeu_si256((__m256i *)(void *)d, h);
}

TB_AVX512 void tb_convert_f32_to_f16_avx512(const void *src, void *dst, size_t count, bool saturate) {
  TB_FOR_BLOCKS_OF_16(float, uint16_t, f32_to_f16_16);
}

TB_AVX512 static inline void f16_to_f32_16(const uint16_t *s, float *d, bool saturate) {
  (void)saturate;
  _mm512_storeu_ps(d, _mm512_cvtph_ps(_mm256_loadu_si256((const __m256i *)(const void *)s)));
}

TB_AVX512 void tb_convert_f16_to_f32_avx512(const void *src, void *dst, size_t count, bool saturate) {
  TB_FOR_BLOCKS_OF_16(uint16_t, float, f16_to_f32_16);
}

/* bf16 by integer arithmetic: add 0x7fff plus the lowest kept bit, keep the top half (round to
 * nearest even, carries into the exponent give Inf where they should); NaN keeps its top payload bits
 * and gets the quiet bit. */
TB_AVX512 static inline __m256i bf16_from_bits(__m512i bits) {
  const __m512i one = _mm512_set1_epi32(1);
  __m512i high = _mm512_srli_epi32(bits, 16);
  __m512i bias = _mm512_add_epi32(_mm512_and_si512(high, one), _mm512_set1_epi32(0x7FFF));
  __m512i rounded = _mm512_srli_epi32(_mm512_add_epi32(bits, bias), 16);
  __m512i quiet_nan = _mm512_or_si512(high, _mm512_set1_epi32(0x40));
  __m512i magnitude = _mm512_and_si512(bits, _mm512_set1_epi32(0x7FFFFFFF));
  __mmask16 nan = _mm512_cmpgt_epu32_mask(magnitude, _mm512_set1_epi32(0x7F800000));
  return _mm512_cvtepi32_epi16(_mm512_mask_blend_epi32(nan, rounded, quiet_nan));
}

TB_AVX512 static inline void f32_to_bf16_16(const float *s, uint16_t *d, bool saturate) {
  (void)saturate;
  _mm256_storeu_si256((__m256i *)(void *)d, bf16_from_bits(_mm512_loadu_si512(s)));
}

TB_AVX512 void tb_convert_f32_to_bf16_avx512(const void *src, void *dst, size_t count, bool saturate) {
  TB_FOR_BLOCKS_OF_16(float, uint16_t, f32_to_bf16_16);
}

/* vcvtneps2bf16 rounds to nearest even and quiets NaN exactly like bf16_from_bits, but treats
 * subnormal inputs as zero whatever MXCSR says (measured on Zen 5); a vector with a nonzero subnormal
 * lane is done by the integer method instead, so subnormals are kept. */
TB_AVX512BF16 static inline void f32_to_bf16_16_bf16(const float *s, uint16_t *d, bool saturate) {
  (void)saturate;
  __m512i bits = _mm512_loadu_si512(s);
  __m512i magnitude = _mm512_and_si512(bits, _mm512_set1_epi32(0x7FFFFFFF));
  __mmask16 subnormal = _mm512_cmplt_epu32_mask(magnitude, _mm512_set1_epi32(0x00800000)) &
                        _mm512_cmpneq_epi32_mask(magnitude, _mm512_setzero_si512());
  __m256i out;
  if (subnormal) {
    out = bf16_from_bits(bits);
  } else {
    __m256bh h = _mm512_cvtneps_pbh(_mm512_castsi512_ps(bits));
    memcpy(&out, &h, sizeof out);
  }
  _mm256_storeu_si256((__m256i *)(void *)d, out);
}

TB_AVX512BF16 void tb_convert_f32_to_bf16_avx512bf16(const void *src, void *dst, size_t count, bool saturate) {
  TB_FOR_BLOCKS_OF_16(float, uint16_t, f32_to_bf16_16_bf16);
}

TB_AVX512 static inline void bf16_to_f32_16(const uint16_t *s, float *d, bool saturate) {
  (void)saturate;
  __m512i wide = _mm512_cvtepu16_epi32(_mm256_loadu_si256((const __m256i *)(const void *)s));
  _mm512_storeu_si512(d, _mm512_slli_epi32(wide, 16));
}

TB_AVX512 void tb_convert_bf16_to_f32_avx512(const void *src, void *dst, size_t count, bool saturate) {
  TB_FOR_BLOCKS_OF_16(uint16_t, float, bf16_to_f32_16);
}

/* An fp8 format as the vector encoder needs it. */
typedef struct fp8_consts {
  int mbits;                /* stored mantissa bits */
  int bias;
  uint32_t min_normal_bits; /* f32 bits of the smallest normal value */
  float subnormal_scale;    /* 1 / (the smallest subnormal) */
  uint32_t overflow_above;  /* f32 magnitudes above this round beyond the largest finite value */
  int max_code, inf_or_nan_code, nan_code;
} fp8_consts;

/* 464 = halfway between 448 (even mantissa) and the NaN slot: a tie that rounds down to 448. */
static const fp8_consts e4m3fn = {3, 7, 0x3C800000u, 512.0f, 0x43E80000u, 0x7E, 0x7F, 0x7F};
/* 61440 = halfway between 57344 (odd mantissa) and 2^16: a tie that rounds up, out of range. */
static const fp8_consts e5m2 = {2, 15, 0x38800000u, 65536.0f, 0x476FFFFFu, 0x7B, 0x7C, 0x7E};

TB_AVX512 static inline void fp8_16(const fp8_consts *c, const float *s, uint8_t *d, bool saturate) {
  __m512i bits = _mm512_loadu_si512(s);
  __m512i magnitude = _mm512_and_si512(bits, _mm512_set1_epi32(0x7FFFFFFF));
  __m512i sign = _mm512_and_si512(_mm512_srli_epi32(bits, 24), _mm512_set1_epi32(0x80));
  /* normal range: round the f32 mantissa to mbits (ties to even) and rebias the exponent */
  int drop = 23 - c->mbits;
  __m512i lowest_kept = _mm512_and_si512(_mm512_srli_epi32(magnitude, (unsigned)drop), _mm512_set1_epi32(1));
  __m512i bias = _mm512_add_epi32(lowest_kept, _mm512_set1_epi32((1 << (drop - 1)) - 1));
  __m512i normal = _mm512_sub_epi32(_mm512_srli_epi32(_mm512_add_epi32(magnitude, bias), (unsigned)drop),
                                    _mm512_set1_epi32((127 - c->bias) << c->mbits));
  /* subnormal range: the value in units of the smallest subnormal, rounded to an integer (RNE);
   * a result of 2^mbits is the smallest normal, which is also its code */
  __m512 units = _mm512_mul_ps(_mm512_castsi512_ps(magnitude), _mm512_set1_ps(c->subnormal_scale));
  __m512i subnormal = _mm512_cvt_roundps_epi32(units, _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
  __mmask16 small = _mm512_cmplt_epu32_mask(magnitude, _mm512_set1_epi32((int)c->min_normal_bits));
  __m512i code = _mm512_mask_blend_epi32(small, normal, subnormal);
  /* beyond the range (and Inf): the largest value, or Inf/NaN without saturation */
  __mmask16 over = _mm512_cmpgt_epu32_mask(magnitude, _mm512_set1_epi32((int)c->overflow_above));
  code = _mm512_mask_blend_epi32(over, code, _mm512_set1_epi32(saturate ? c->max_code : c->inf_or_nan_code));
  __mmask16 nan = _mm512_cmpgt_epu32_mask(magnitude, _mm512_set1_epi32(0x7F800000));
  code = _mm512_mask_blend_epi32(nan, code, _mm512_set1_epi32(c->nan_code));
  _mm_storeu_si128((__m128i *)(void *)d, _mm512_cvtepi32_epi8(_mm512_or_si512(code, sign)));
}

TB_AVX512 static inline void e4m3fn_16(const float *s, uint8_t *d, bool saturate) { fp8_16(&e4m3fn, s, d, saturate); }
TB_AVX512 static inline void e5m2_16(const float *s, uint8_t *d, bool saturate) { fp8_16(&e5m2, s, d, saturate); }

TB_AVX512 void tb_convert_f32_to_e4m3fn_avx512(const void *src, void *dst, size_t count, bool saturate) {
  TB_FOR_BLOCKS_OF_16(float, uint8_t, e4m3fn_16);
}

TB_AVX512 void tb_convert_f32_to_e5m2_avx512(const void *src, void *dst, size_t count, bool saturate) {
  TB_FOR_BLOCKS_OF_16(float, uint8_t, e5m2_16);
}

#endif
