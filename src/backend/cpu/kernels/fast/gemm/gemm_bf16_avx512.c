/* The AVX512-BF16 bf16 GEMM path: a 14 x 32 micro-kernel (28 zmm accumulators; per pair of k, two B loads,
 * fourteen 32-bit broadcasts of A pairs and 28 vdpbf16ps), the same body per row count for the edges, and
 * AVX-512 packing that rounds with integer arithmetic (the same bits as tb_convert, subnormals kept, unlike
 * vcvtneps2bf16). Only these functions are built for AVX-512 (target attributes); the driver calls them
 * only when cpuid has AVX512_BF16. */
#include "backend/cpu/kernels/fast/gemm/gemm_bf16_kernel.h"
#if defined(__x86_64__)
#include "backend/cpu/kernels/fast/vec/bf16_round_avx512.h"

enum { MR = 14, NR = 32 };

/* The top-left rows x cols of the tile (rows a constant after inlining: an edge of 2 rows costs its own
 * rows, not a whole tile), C loaded and stored under column masks (all ones for a whole tile). */
static inline __attribute__((always_inline)) TB_TARGET_BF16 void tile_rows(int rows, int64_t kp, const uint16_t *a,
                                                                            const uint16_t *b, float *c, int64_t ldc,
                                                                            float alpha, float beta, __mmask16 m0,
                                                                            __mmask16 m1) {
  __m512 acc[MR][2];
#pragma GCC unroll 14
  for (int i = 0; i < rows; i++) {
    acc[i][0] = acc[i][1] = _mm512_setzero_ps();
    _mm_prefetch((const char *)(c + i * ldc), _MM_HINT_T0); /* C's rows arrive while the sums run */
    _mm_prefetch((const char *)(c + i * ldc + 16), _MM_HINT_T0);
  }
  for (int64_t q = 0; q < kp; q++) {
    const uint16_t *bq = b + q * NR * 2, *aq = a + q * MR * 2;
    __m512bh b0 = (__m512bh)_mm512_loadu_si512(bq), b1 = (__m512bh)_mm512_loadu_si512(bq + 32);
#pragma GCC unroll 14
    for (int i = 0; i < rows; i++) {
      int32_t pair;
      memcpy(&pair, aq + 2 * i, sizeof pair);
      __m512bh av = (__m512bh)_mm512_set1_epi32(pair);
      acc[i][0] = _mm512_dpbf16_ps(acc[i][0], av, b0);
      acc[i][1] = _mm512_dpbf16_ps(acc[i][1], av, b1);
    }
  }
  const __m512 al = _mm512_set1_ps(alpha), be = _mm512_set1_ps(beta);
#pragma GCC unroll 14
  for (int i = 0; i < rows; i++) {
    float *ci = c + i * ldc;
    __m512 r0 = _mm512_mul_ps(al, acc[i][0]), r1 = _mm512_mul_ps(al, acc[i][1]);
    if (beta != 0.0f) {
      r0 = _mm512_fmadd_ps(be, _mm512_maskz_loadu_ps(m0, ci), r0);
      r1 = _mm512_fmadd_ps(be, _mm512_maskz_loadu_ps(m1, ci + 16), r1);
    }
    _mm512_mask_storeu_ps(ci, m0, r0);
    _mm512_mask_storeu_ps(ci + 16, m1, r1);
  }
}

TB_TARGET_BF16 static void ukr_avx512bf16(int64_t kp, const uint16_t *a, const uint16_t *b, float *c, int64_t ldc,
                                          float alpha, float beta) {
  tile_rows(MR, kp, a, b, c, ldc, alpha, beta, 0xFFFF, 0xFFFF);
}

TB_TARGET_BF16 static void edge_avx512bf16(int64_t kp, const uint16_t *a, const uint16_t *b, float *c, int64_t ldc,
                                           float alpha, float beta, int rows, int cols) {
  __mmask16 m0 = cols >= 16 ? 0xFFFF : (__mmask16)((1u << cols) - 1u);
  __mmask16 m1 = cols >= 32 ? 0xFFFF : cols > 16 ? (__mmask16)((1u << (cols - 16)) - 1u) : 0;
  switch (rows) {
#define ROWS(r) \
  case r: tile_rows(r, kp, a, b, c, ldc, alpha, beta, m0, m1); break;
    ROWS(1) ROWS(2) ROWS(3) ROWS(4) ROWS(5) ROWS(6) ROWS(7) ROWS(8) ROWS(9) ROWS(10) ROWS(11) ROWS(12) ROWS(13)
    default: tile_rows(MR, kp, a, b, c, ldc, alpha, beta, m0, m1); break;
#undef ROWS
  }
}

static __mmask16 lanes(int64_t count) { return count >= 16 ? (__mmask16)0xFFFF : count <= 0 ? 0 : (__mmask16)((1u << count) - 1u); }

/* Element (p, o) at src[p * ld + o]: rows 2q and 2q+1 rounded and interleaved, 16 lines at a time. */
TB_TARGET_BF16 static void pack_o_contiguous(const float *src, int64_t ld, int64_t kc, int64_t outer, int width,
                                             uint16_t *dst) {
  for (int64_t p = 0; p < kc; p += 2) {
    const float *r0 = src + p * ld, *r1 = p + 1 < kc ? src + (p + 1) * ld : NULL;
    uint16_t *d = dst + (p / 2) * width * 2;
    for (int o = 0; o < width; o += 16) {
      __mmask16 load = lanes(outer - o), store = lanes(width - o);
      __m512i lo = tb_round_bf16_avx512(_mm512_maskz_loadu_ps(load, r0 + o));
      __m512i hi = r1 ? tb_round_bf16_avx512(_mm512_maskz_loadu_ps(load, r1 + o)) : _mm512_setzero_si512();
      _mm512_mask_storeu_epi32(d + o * 2, store, _mm512_or_si512(lo, _mm512_slli_epi32(hi, 16)));
    }
  }
}

/* Transpose 8 x 8 32-bit words: r[i] lane j -> r[j] lane i. */
TB_TARGET_BF16 static inline void transpose8(__m256i r[8]) {
  __m256i t[8], u[8];
  for (int i = 0; i < 4; i++) {
    t[2 * i] = _mm256_unpacklo_epi32(r[2 * i], r[2 * i + 1]);
    t[2 * i + 1] = _mm256_unpackhi_epi32(r[2 * i], r[2 * i + 1]);
  }
  for (int i = 0; i < 2; i++) {
    u[4 * i] = _mm256_unpacklo_epi64(t[4 * i], t[4 * i + 2]);
    u[4 * i + 1] = _mm256_unpackhi_epi64(t[4 * i], t[4 * i + 2]);
    u[4 * i + 2] = _mm256_unpacklo_epi64(t[4 * i + 1], t[4 * i + 3]);
    u[4 * i + 3] = _mm256_unpackhi_epi64(t[4 * i + 1], t[4 * i + 3]);
  }
  for (int i = 0; i < 4; i++) {
    r[i] = _mm256_permute2x128_si256(u[i], u[i + 4], 0x20);
    r[i + 4] = _mm256_permute2x128_si256(u[i], u[i + 4], 0x31);
  }
}

enum { PACK_PREFETCH_FLOATS = 64 }; /* 4 lines ahead along each line of the operand */

/* Element (p, o) at src[o * ld + p]: for each 16 k and 8 lines, each line's 16 values rounded and narrowed
 * to 8 pairs, the 8 x 8 pairs transposed in registers, and stored as 8 lines of each pair. The lines are
 * read side by side, up to 14 streams at once, often just written by another core (the previous layer's
 * output on 2 threads): each is prefetched a few cache lines ahead. On BERT-base at O3 this packing took
 * 3.3x its 1-thread time on 2 threads in minutes when the host placed the two vCPUs far apart (its cache
 * lines then come from the other core slowly); the prefetch is meant for those minutes and costs nothing
 * measurable in the others. */
TB_TARGET_BF16 static void pack_p_contiguous(const float *src, int64_t ld, int64_t kc, int64_t outer, int width,
                                             uint16_t *dst) {
  int64_t kp = (kc + 1) / 2;
  for (int64_t p = 0; p < kc; p += 16) {
    __mmask16 load = lanes(kc - p);
    int64_t q0 = p / 2, nq = kp - q0 < 8 ? kp - q0 : 8;
    int ahead = p + PACK_PREFETCH_FLOATS < kc;
    for (int o0 = 0; o0 < width; o0 += 8) {
      __m256i r[8];
      for (int i = 0; i < 8; i++) {
        if (ahead && o0 + i < outer) _mm_prefetch((const char *)(src + (o0 + i) * ld + p + PACK_PREFETCH_FLOATS), _MM_HINT_T0);
        r[i] = o0 + i < outer ? _mm512_cvtepi32_epi16(tb_round_bf16_avx512(_mm512_maskz_loadu_ps(load, src + (o0 + i) * ld + p)))
                              : _mm256_setzero_si256();
      }
      transpose8(r);
      __mmask8 store = (__mmask8)lanes(width - o0 < 8 ? width - o0 : 8);
      for (int64_t t = 0; t < nq; t++) _mm256_mask_storeu_epi32(dst + ((q0 + t) * width + o0) * 2, store, r[t]);
    }
  }
}

const tb_gemm_bf16_kernel tb_gemm_bf16_kernel_avx512bf16 = {.mr = MR, .nr = NR, .ukr = ukr_avx512bf16,
                                                            .edge = edge_avx512bf16,
                                                            .pack_o_contiguous = pack_o_contiguous,
                                                            .pack_p_contiguous = pack_p_contiguous};
#else
const tb_gemm_bf16_kernel tb_gemm_bf16_kernel_avx512bf16 = {0};
#endif
