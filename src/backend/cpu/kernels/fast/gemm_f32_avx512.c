/* The AVX-512 micro-kernel (14 x 32: 28 zmm accumulators, two B loads and fourteen broadcasts per step,
 * which keeps both 512-bit FMA pipes busy). Only these functions are built for AVX-512 (target
 * attribute); the library stays baseline x86-64 and the executor calls them only when cpuid has AVX512F. */
#include "backend/cpu/kernels/fast/gemm_f32.h"
#if defined(__x86_64__)
#include <immintrin.h>

enum { MR = 14, NR = 32 };

__attribute__((target("avx512f,avx512bw,avx512vl,fma"))) static void ukr_avx512(int64_t kc, const float *a,
                                                                               const float *b, float *c, int64_t ldc,
                                                                               float alpha) {
  __m512 acc[MR][2];
#pragma GCC unroll 14
  for (int i = 0; i < MR; i++) acc[i][0] = acc[i][1] = _mm512_setzero_ps();
  for (int64_t p = 0; p < kc; p++) {
    __m512 b0 = _mm512_loadu_ps(b + p * NR), b1 = _mm512_loadu_ps(b + p * NR + 16);
#pragma GCC unroll 14
    for (int i = 0; i < MR; i++) {
      __m512 av = _mm512_set1_ps(a[p * MR + i]);
      acc[i][0] = _mm512_fmadd_ps(av, b0, acc[i][0]);
      acc[i][1] = _mm512_fmadd_ps(av, b1, acc[i][1]);
    }
  }
  __m512 al = _mm512_set1_ps(alpha);
#pragma GCC unroll 14
  for (int i = 0; i < MR; i++) {
    float *ci = c + i * ldc;
    _mm512_storeu_ps(ci, _mm512_fmadd_ps(al, acc[i][0], _mm512_loadu_ps(ci)));
    _mm512_storeu_ps(ci + 16, _mm512_fmadd_ps(al, acc[i][1], _mm512_loadu_ps(ci + 16)));
  }
}

const tb_gemm_kernel tb_gemm_kernel_avx512 = {MR, NR, ukr_avx512};
#else
const tb_gemm_kernel tb_gemm_kernel_avx512 = {0, 0, 0};
#endif
