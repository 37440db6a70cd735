/* Packing a sliver of rows of a row-major matrix with AVX-512 (the common case of op(A) not transposed,
 * and of op(B) transposed): 16 x 16 blocks loaded row by row, transposed in registers and stored 16
 * depth steps at a time, instead of one strided scalar store per element. Same layout and values as the
 * portable packing (gemm_f32.c). Only this file is built for AVX-512 (target attribute); the driver calls
 * it only on the AVX-512 path. */
#include "backend/cpu/kernels/fast/gemm/gemm_f32_internal.h"
#if defined(__x86_64__)
#include <immintrin.h>
#include "backend/cpu/kernels/fast/vec/transpose_avx512.h"

#define AVX512_TARGET __attribute__((target("avx512f,avx512bw,avx512vl,fma")))

static inline AVX512_TARGET __mmask16 low_lanes(int64_t n) {
  return n >= 16 ? (__mmask16)0xFFFF : (__mmask16)((1u << n) - 1);
}


AVX512_TARGET void tb_gemm_pack_rows_avx512(const float *x, int64_t ld, int64_t rows, int64_t kc, int width,
                                            float *dst) {
  for (int o0 = 0; o0 < width; o0 += 16) {
    __mmask16 store = low_lanes(width - o0);
    for (int64_t p = 0; p < kc; p += 16) {
      int64_t steps = kc - p < 16 ? kc - p : 16;
      __mmask16 load = low_lanes(steps);
      __m512 r[16];
#pragma GCC unroll 16
      for (int i = 0; i < 16; i++)
        r[i] = o0 + i < rows ? _mm512_maskz_loadu_ps(load, x + (o0 + i) * ld + p) : _mm512_setzero_ps();
      tb_transpose16_ps(r);
#pragma GCC unroll 16
      for (int q = 0; q < 16; q++)
        if (q < steps) _mm512_mask_storeu_ps(dst + (p + q) * width + o0, store, r[q]);
    }
  }
}
#endif
