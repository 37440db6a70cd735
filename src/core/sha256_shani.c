/* SHA-256 block compression with the x86 SHA extensions (SHA-NI: sha256rnds2 runs two rounds, sha256msg1 /
 * sha256msg2 the message schedule), about five times the portable C in sha256.c; used for whole runs of
 * 64-byte blocks when cpuid reports SHA, SSSE3 and SSE4.1. The state is carried as the instructions want
 * it, (A, B, E, F) and (C, D, G, H) in two registers, and converted back after the run. */
#include "core/sha256_impl.h"
#if defined(__x86_64__)
#include <cpuid.h>
#include <immintrin.h>

bool tb_sha256_shani_available(void) {
  unsigned a, b, c, d;
  if (!__get_cpuid(1, &a, &b, &c, &d)) return false;
  bool ssse3 = c & (1u << 9), sse41 = c & (1u << 19);
  if (!__get_cpuid_count(7, 0, &a, &b, &c, &d)) return false;
  return ssse3 && sse41 && (b & (1u << 29));
}

#define TB_TARGET_SHA __attribute__((target("sha,ssse3,sse4.1")))

/* Four message words W[t..t+3] from the previous sixteen (x0 oldest .. x3 newest). */
TB_TARGET_SHA static inline __m128i schedule(__m128i x0, __m128i x1, __m128i x2, __m128i x3) {
  __m128i t = _mm_add_epi32(_mm_sha256msg1_epu32(x0, x1), _mm_alignr_epi8(x3, x2, 4));
  return _mm_sha256msg2_epu32(t, x3);
}

TB_TARGET_SHA void tb_sha256_shani_blocks(uint32_t state[8], const uint8_t *p, size_t blocks) {
  const __m128i byte_swap = _mm_set_epi64x(0x0c0d0e0f08090a0bLL, 0x0405060700010203LL);
  __m128i dcba = _mm_shuffle_epi32(_mm_loadu_si128((const __m128i *)state), 0xB1);      /* b a d c */
  __m128i hgfe = _mm_shuffle_epi32(_mm_loadu_si128((const __m128i *)(state + 4)), 0x1B); /* h g f e */
  __m128i abef = _mm_alignr_epi8(dcba, hgfe, 8);
  __m128i cdgh = _mm_blend_epi16(hgfe, dcba, 0xF0);
  for (; blocks > 0; blocks--, p += 64) {
    __m128i abef0 = abef, cdgh0 = cdgh, w[4];
    for (int g = 0; g < 16; g++) { /* rounds 4g .. 4g+3 */
      __m128i x;
      if (g < 4) x = _mm_shuffle_epi8(_mm_loadu_si128((const __m128i *)(p + 16 * g)), byte_swap);
      else x = schedule(w[g & 3], w[(g + 1) & 3], w[(g + 2) & 3], w[(g + 3) & 3]);
      w[g & 3] = x;
      __m128i k = _mm_add_epi32(x, _mm_loadu_si128((const __m128i *)(tb_sha256_round_constants + 4 * g)));
      /* two rounds make the old (A, B, E, F) the new (C, D, G, H): the registers swap roles twice */
      cdgh = _mm_sha256rnds2_epu32(cdgh, abef, k);
      abef = _mm_sha256rnds2_epu32(abef, cdgh, _mm_shuffle_epi32(k, 0x0E));
    }
    abef = _mm_add_epi32(abef, abef0);
    cdgh = _mm_add_epi32(cdgh, cdgh0);
  }
  __m128i feba = _mm_shuffle_epi32(abef, 0x1B); /* a b e f */
  __m128i dchg = _mm_shuffle_epi32(cdgh, 0xB1); /* g h c d */
  _mm_storeu_si128((__m128i *)state, _mm_blend_epi16(feba, dchg, 0xF0));
  _mm_storeu_si128((__m128i *)(state + 4), _mm_alignr_epi8(dchg, feba, 8));
}
#else
bool tb_sha256_shani_available(void) { return false; }
void tb_sha256_shani_blocks(uint32_t state[8], const uint8_t *p, size_t blocks) {
  (void)state;
  (void)p;
  (void)blocks;
}
#endif
