/* The AVX2+FMA micro-kernel (6 x 16: twelve ymm accumulators, two B loads and six broadcasts per step), its
 * variant that does not read C (the first depth block of a product onto a zero C), and their edge variants:
 * the same body specialised for 1..6 rows, with masked loads and stores of C (vmaskmovps) for fewer than 16
 * columns, so edges of C cost only their own rows and need no copy (as the AVX-512 kernel's). Only these
 * functions are built for AVX2/FMA (target attribute); the executor calls them only when cpuid has both. */
#include "backend/cpu/kernels/fast/gemm/gemm_f32_internal.h"
#if defined(__x86_64__)
#include <immintrin.h>
#include "backend/cpu/kernels/fast/vec/transpose_avx2.h"

enum { MR = 6, NR = 16 };

#define AVX2_TARGET __attribute__((target("avx2,fma")))

/* c[rows x cols] = alpha * acc + c, or alpha * acc + 0 without reading c when !load_c (the same rounding as
 * onto a zeroed c); cols 16: whole vectors, else lanes masked by cols. */
static inline __attribute__((always_inline)) AVX2_TARGET void body(int rows, int64_t kc, const float *a, const float *b,
                                                                   float *c, int64_t ldc, float alpha, int cols,
                                                                   bool load_c) {
  __m256 acc[MR][2];
#pragma GCC unroll 6
  for (int i = 0; i < MR; i++)
    if (i < rows) acc[i][0] = acc[i][1] = _mm256_setzero_ps();
  for (int64_t p = 0; p < kc; p++) {
    __m256 b0 = _mm256_loadu_ps(b + p * NR), b1 = _mm256_loadu_ps(b + p * NR + 8);
#pragma GCC unroll 6
    for (int i = 0; i < MR; i++) {
      if (i >= rows) break;
      __m256 av = _mm256_broadcast_ss(a + p * MR + i);
      acc[i][0] = _mm256_fmadd_ps(av, b0, acc[i][0]);
      acc[i][1] = _mm256_fmadd_ps(av, b1, acc[i][1]);
    }
  }
  const __m256 al = _mm256_set1_ps(alpha), zero = _mm256_setzero_ps();
  if (cols == NR) {
#pragma GCC unroll 6
    for (int i = 0; i < MR; i++) {
      if (i >= rows) break;
      float *ci = c + i * ldc;
      __m256 c0 = load_c ? _mm256_loadu_ps(ci) : zero, c1 = load_c ? _mm256_loadu_ps(ci + 8) : zero;
      _mm256_storeu_ps(ci, _mm256_fmadd_ps(al, acc[i][0], c0));
      _mm256_storeu_ps(ci + 8, _mm256_fmadd_ps(al, acc[i][1], c1));
    }
    return;
  }
  const __m256i m0 = tb_lanes_below_avx2(cols), m1 = tb_lanes_below_avx2(cols - 8);
#pragma GCC unroll 6
  for (int i = 0; i < MR; i++) {
    if (i >= rows) break;
    float *ci = c + i * ldc;
    __m256 c0 = load_c ? _mm256_maskload_ps(ci, m0) : zero, c1 = load_c ? _mm256_maskload_ps(ci + 8, m1) : zero;
    _mm256_maskstore_ps(ci, m0, _mm256_fmadd_ps(al, acc[i][0], c0));
    _mm256_maskstore_ps(ci + 8, m1, _mm256_fmadd_ps(al, acc[i][1], c1));
  }
}

AVX2_TARGET static void ukr_avx2(int64_t kc, const float *a, const float *b, float *c, int64_t ldc, float alpha) {
  body(MR, kc, a, b, c, ldc, alpha, NR, true);
}

AVX2_TARGET static void ukr_set_avx2(int64_t kc, const float *a, const float *b, float *c, int64_t ldc, float alpha) {
  body(MR, kc, a, b, c, ldc, alpha, NR, false);
}

static inline __attribute__((always_inline)) AVX2_TARGET void edge(int64_t kc, const float *a, const float *b, float *c,
                                                                   int64_t ldc, float alpha, int rows, int cols,
                                                                   bool load_c) {
  switch (rows) {
#define ROWS(r) \
  case r: body(r, kc, a, b, c, ldc, alpha, cols, load_c); break;
    ROWS(1) ROWS(2) ROWS(3) ROWS(4) ROWS(5)
    default: body(MR, kc, a, b, c, ldc, alpha, cols, load_c); break;
#undef ROWS
  }
}

AVX2_TARGET static void edge_avx2(int64_t kc, const float *a, const float *b, float *c, int64_t ldc, float alpha,
                                  int rows, int cols) {
  edge(kc, a, b, c, ldc, alpha, rows, cols, true);
}

AVX2_TARGET static void edge_set_avx2(int64_t kc, const float *a, const float *b, float *c, int64_t ldc, float alpha,
                                      int rows, int cols) {
  edge(kc, a, b, c, ldc, alpha, rows, cols, false);
}

/* tb_gemm_kernel.pack_rows: 8 rows x 8 depth steps loaded (masked at the depth's end, zeros past `rows`),
 * transposed in registers and stored 8 depth steps at a time (masked to the sliver's width). */
AVX2_TARGET static void pack_rows_avx2(const float *x, int64_t ld, int64_t rows, int64_t kc, int width, float *dst) {
  for (int o0 = 0; o0 < width; o0 += 8) {
    bool whole = width - o0 >= 8;
    const __m256i store = tb_lanes_below_avx2(width - o0);
    for (int64_t p = 0; p < kc; p += 8) {
      int64_t steps = kc - p < 8 ? kc - p : 8;
      const __m256i load = tb_lanes_below_avx2(steps);
      __m256 r[8];
#pragma GCC unroll 8
      for (int i = 0; i < 8; i++) {
        const float *src = x + (o0 + i) * ld + p;
        r[i] = o0 + i >= rows ? _mm256_setzero_ps() : steps == 8 ? _mm256_loadu_ps(src) : _mm256_maskload_ps(src, load);
      }
      tb_transpose8_ps(r);
#pragma GCC unroll 8
      for (int q = 0; q < 8; q++) {
        if (q >= steps) break;
        float *d = dst + (p + q) * width + o0;
        if (whole) _mm256_storeu_ps(d, r[q]);
        else _mm256_maskstore_ps(d, store, r[q]);
      }
    }
  }
}

const tb_gemm_kernel tb_gemm_kernel_avx2 = {.mr = MR, .nr = NR, .ukr = ukr_avx2, .edge = edge_avx2,
                                            .ukr_set = ukr_set_avx2, .edge_set = edge_set_avx2,
                                            .tile_init = tb_gemm_tile_init_avx2, .tile_act = tb_gemm_tile_act_avx2,
                                            .pack_rows = pack_rows_avx2, .narrow = tb_gemm_narrow_avx2,
                                            .narrow_cols = 8};
#else
const tb_gemm_kernel tb_gemm_kernel_avx2 = {.ukr = 0};
#endif
