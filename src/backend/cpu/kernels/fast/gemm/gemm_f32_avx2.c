/* The AVX2+FMA micro-kernel (6 x 16: twelve ymm accumulators, two B loads and six broadcasts per step).
 * Compiled for the baseline ISA; only these functions are built for AVX2/FMA (target attribute). */
#include "backend/cpu/kernels/fast/gemm/gemm_f32_internal.h"
#if defined(__x86_64__) || defined(__i386__)
#include <immintrin.h>

enum { MR = 6, NR = 16 };

__attribute__((target("avx2,fma"))) static void ukr_avx2(int64_t kc, const float *a, const float *b, float *c,
                                                          int64_t ldc, float alpha) {
  __m256 acc[MR][2];
#pragma GCC unroll 6
  for (int i = 0; i < MR; i++) acc[i][0] = acc[i][1] = _mm256_setzero_ps();
  for (int64_t p = 0; p < kc; p++) {
    __m256 b0 = _mm256_loadu_ps(b + p * NR), b1 = _mm256_loadu_ps(b + p * NR + 8);
#pragma GCC unroll 6
    for (int i = 0; i < MR; i++) {
      __m256 av = _mm256_broadcast_ss(a + p * MR + i);
      acc[i][0] = _mm256_fmadd_ps(av, b0, acc[i][0]);
      acc[i][1] = _mm256_fmadd_ps(av, b1, acc[i][1]);
    }
  }
  __m256 al = _mm256_set1_ps(alpha);
#pragma GCC unroll 6
  for (int i = 0; i < MR; i++) {
    float *ci = c + i * ldc;
    _mm256_storeu_ps(ci, _mm256_fmadd_ps(al, acc[i][0], _mm256_loadu_ps(ci)));
    _mm256_storeu_ps(ci + 8, _mm256_fmadd_ps(al, acc[i][1], _mm256_loadu_ps(ci + 8)));
  }
}

const tb_gemm_kernel tb_gemm_kernel_avx2 = {.mr = MR, .nr = NR, .ukr = ukr_avx2, .narrow = tb_gemm_narrow_avx2, .narrow_cols = 8};
#else
const tb_gemm_kernel tb_gemm_kernel_avx2 = {.ukr = 0};
#endif
