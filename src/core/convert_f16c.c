/* F16C loops for f32 <-> f16 with 256-bit AVX registers, for x86 CPUs without AVX-512 (and for
 * TB_CPU_FEATURES=-avx512f). vcvtps2ph with an explicit round-to-nearest-even immediate, 8 at a time;
 * the tail goes through an 8-element buffer. */
#include "core/convert_kernels.h"

#ifdef TB_CONVERT_X86
#include <immintrin.h>
#include <string.h>

#define TB_F16C __attribute__((target("avx,f16c")))

TB_F16C static inline void f32_to_f16_8(const float *s, uint16_t *d) {
  __m128i h = _mm256_cvtps_ph(_mm256_loadu_ps(s), _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
  _mm_storeu_si128((__m128i *)(void *)d, h);
}

TB_F16C void tb_convert_f32_to_f16_f16c(const void *src, void *dst, size_t count, bool saturate) {
  (void)saturate;
  const float *s = src;
  uint16_t *d = dst;
  size_t i = 0;
  for (; i + 8 <= count; i += 8) f32_to_f16_8(s + i, d + i);
  if (i < count) {
    float in[8] = {0};
    uint16_t out[8];
    memcpy(in, s + i, (count - i) * sizeof *s);
    f32_to_f16_8(in, out);
    memcpy(d + i, out, (count - i) * sizeof *d);
  }
}

TB_F16C static inline void f16_to_f32_8(const uint16_t *s, float *d) {
  _mm256_storeu_ps(d, _mm256_cvtph_ps(_mm_loadu_si128((const __m128i *)(const void *)s)));
}

TB_F16C void tb_convert_f16_to_f32_f16c(const void *src, void *dst, size_t count, bool saturate) {
  (void)saturate;
  const uint16_t *s = src;
  float *d = dst;
  size_t i = 0;
  for (; i + 8 <= count; i += 8) f16_to_f32_8(s + i, d + i);
  if (i < count) {
    uint16_t in[8] = {0};
    float out[8];
    memcpy(in, s + i, (count - i) * sizeof *s);
    f16_to_f32_8(in, out);
    memcpy(d + i, out, (count - i) * sizeof *d);
  }
}

#endif
