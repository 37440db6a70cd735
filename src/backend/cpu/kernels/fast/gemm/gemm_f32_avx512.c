/* The AVX-512 micro-kernel (14 x 32: 28 zmm accumulators, two B loads and fourteen broadcasts per step,
 * which keeps both 512-bit FMA pipes busy), its variant that does not read C (the first depth block of a
 * product onto a zero C), and their edge variants: the same body specialised for 1..14
 * rows, with masked loads and stores of C for fewer than 32 columns, so edges of C cost only their own
 * rows and need no copy. Only these functions are built for AVX-512 (target attribute); the library stays
 * baseline x86-64 and the executor calls them only when cpuid has AVX512F. */
#include "backend/cpu/kernels/fast/gemm/gemm_f32_internal.h"
#if defined(__x86_64__)
#include <immintrin.h>

enum { MR = 14, NR = 32 };

#define AVX512_TARGET __attribute__((target("avx512f,avx512bw,avx512vl,fma")))

/* c[rows x 32] masked by m0 (columns 0..15) and m1 (16..31) = alpha * acc + c, or alpha * acc + 0 without
 * reading c when !load_c (the same rounding as onto a zeroed c). */
static inline __attribute__((always_inline)) AVX512_TARGET void body(int rows, int64_t kc, const float *a, const float *b,
                                                                     float *c, int64_t ldc, float alpha, __mmask16 m0,
                                                                     __mmask16 m1, bool load_c) {
  __m512 acc[MR][2];
#pragma GCC unroll 14
  for (int i = 0; i < MR; i++)
    if (i < rows) acc[i][0] = acc[i][1] = _mm512_setzero_ps();
  for (int64_t p = 0; p < kc; p++) {
    __m512 b0 = _mm512_loadu_ps(b + p * NR), b1 = _mm512_loadu_ps(b + p * NR + 16);
#pragma GCC unroll 14
    for (int i = 0; i < MR; i++) {
      if (i >= rows) break;
      __m512 av = _mm512_set1_ps(a[p * MR + i]);
      acc[i][0] = _mm512_fmadd_ps(av, b0, acc[i][0]);
      acc[i][1] = _mm512_fmadd_ps(av, b1, acc[i][1]);
    }
  }
  __m512 al = _mm512_set1_ps(alpha);
#pragma GCC unroll 14
  for (int i = 0; i < MR; i++) {
    if (i >= rows) break;
    float *ci = c + i * ldc;
    __m512 c0 = load_c ? _mm512_maskz_loadu_ps(m0, ci) : _mm512_setzero_ps();
    __m512 c1 = load_c ? _mm512_maskz_loadu_ps(m1, ci + 16) : _mm512_setzero_ps();
    _mm512_mask_storeu_ps(ci, m0, _mm512_fmadd_ps(al, acc[i][0], c0));
    _mm512_mask_storeu_ps(ci + 16, m1, _mm512_fmadd_ps(al, acc[i][1], c1));
  }
}

AVX512_TARGET static void ukr_avx512(int64_t kc, const float *a, const float *b, float *c, int64_t ldc, float alpha) {
  body(MR, kc, a, b, c, ldc, alpha, 0xFFFF, 0xFFFF, true);
}

AVX512_TARGET static void ukr_set_avx512(int64_t kc, const float *a, const float *b, float *c, int64_t ldc,
                                         float alpha) {
  body(MR, kc, a, b, c, ldc, alpha, 0xFFFF, 0xFFFF, false);
}

static inline __attribute__((always_inline)) AVX512_TARGET void edge(int64_t kc, const float *a, const float *b,
                                                                     float *c, int64_t ldc, float alpha, int rows,
                                                                     int cols, bool load_c) {
  __mmask16 m0 = cols >= 16 ? 0xFFFF : (__mmask16)((1u << cols) - 1);
  __mmask16 m1 = cols >= 32 ? 0xFFFF : cols > 16 ? (__mmask16)((1u << (cols - 16)) - 1) : 0;
  switch (rows) {
#define ROWS(r) \
  case r: body(r, kc, a, b, c, ldc, alpha, m0, m1, load_c); break;
    ROWS(1) ROWS(2) ROWS(3) ROWS(4) ROWS(5) ROWS(6) ROWS(7) ROWS(8) ROWS(9) ROWS(10) ROWS(11) ROWS(12) ROWS(13)
    default: body(MR, kc, a, b, c, ldc, alpha, m0, m1, load_c); break;
#undef ROWS
  }
}

AVX512_TARGET static void edge_avx512(int64_t kc, const float *a, const float *b, float *c, int64_t ldc, float alpha,
                                      int rows, int cols) {
  edge(kc, a, b, c, ldc, alpha, rows, cols, true);
}

AVX512_TARGET static void edge_set_avx512(int64_t kc, const float *a, const float *b, float *c, int64_t ldc,
                                          float alpha, int rows, int cols) {
  edge(kc, a, b, c, ldc, alpha, rows, cols, false);
}

const tb_gemm_kernel tb_gemm_kernel_avx512 = {.mr = MR, .nr = NR, .ukr = ukr_avx512, .edge = edge_avx512,
                                              .ukr_set = ukr_set_avx512, .edge_set = edge_set_avx512,
                                              .tile_init = tb_gemm_tile_init_avx512,
                                              .tile_act = tb_gemm_tile_act_avx512,
                                              .pack_rows = tb_gemm_pack_rows_avx512,
                                              .narrow = tb_gemm_narrow_avx512, .narrow_cols = 24};
#else
const tb_gemm_kernel tb_gemm_kernel_avx512 = {.ukr = 0};
#endif
