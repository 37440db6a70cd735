/* The fp32 AVX2 + FMA micro-kernels of the direct convolution (conv_direct.h; the source and weight layout
 * are conv_direct_f32.c's, the store conv_direct_store_avx2.c's). A tile is `rows` (1..6) output pixels of
 * one output row by 16 output channels: 12 ymm accumulators stay in registers for the whole chunk, each
 * (channel, tap) step loads the tap's two weight vectors once and broadcasts each pixel's input value from
 * the source (vbroadcastss: 8 loads per 12 FMAs, as the 6 x 16 GEMM micro-kernel, without its patch
 * packing). The rows and the horizontal stride (1 or 2; above 2 the generic kernels read it from the args)
 * are compile-time constants of each variant. Built for AVX2 + FMA by target attribute; the driver uses it
 * only when cpuid has both (the AVX2 Conv entries). */
#include "backend/cpu/kernels/fast/conv/conv_direct.h"

#if defined(__x86_64__)
#include <immintrin.h>

#define TARGET __attribute__((target("avx2,fma")))

enum { MAX_ROWS = 6, COLS = 16 };

/* acc[rows x 16] (+)= the chunk's sum, pixel r reading src + r * stride + tap offset (stride 0: the generic
 * kernel, a->pixel_stride). */
static inline __attribute__((always_inline)) TARGET void body(const tb_conv_direct_args *a, int rows, int64_t stride) {
  float *out = a->acc;
  __m256 acc[MAX_ROWS][2];
#pragma GCC unroll 6
  for (int r = 0; r < MAX_ROWS; r++)
    if (r < rows) {
      acc[r][0] = a->accumulate ? _mm256_loadu_ps(out + r * COLS) : _mm256_setzero_ps();
      acc[r][1] = a->accumulate ? _mm256_loadu_ps(out + r * COLS + 8) : _mm256_setzero_ps();
    }
  const float *src = a->src, *w = a->w;
  const int64_t *tap_off = a->tap_off;
  const int n_taps = a->n_taps;
  const int64_t step = stride ? stride : a->pixel_stride;
  /* the prefetch lines spread evenly over the call's steps: one every pf_every steps */
  const char *pf = a->prefetch;
  int64_t pf_left = pf ? a->prefetch_bytes : 0, steps = a->n_units * a->n_taps;
  int64_t pf_every = pf_left > 0 && steps * 64 > pf_left ? steps * 64 / pf_left : 1, pf_count = pf_every;
  for (int64_t u = 0; u < a->n_units; u++, src += a->unit_stride)
    for (int t = 0; t < n_taps; t++, w += COLS) {
      const float *p = src + tap_off[t];
      if (pf_left > 0 && --pf_count == 0) { /* one line of what the driver needs next, into L2 */
        _mm_prefetch(pf, _MM_HINT_T1);
        pf += 64;
        pf_left -= 64;
        pf_count = pf_every;
      }
      __m256 w0 = _mm256_loadu_ps(w), w1 = _mm256_loadu_ps(w + 8);
#pragma GCC unroll 6
      for (int r = 0; r < MAX_ROWS; r++)
        if (r < rows) {
          __m256 b = _mm256_broadcast_ss(p + r * step);
          acc[r][0] = _mm256_fmadd_ps(b, w0, acc[r][0]);
          acc[r][1] = _mm256_fmadd_ps(b, w1, acc[r][1]);
        }
    }
#pragma GCC unroll 6
  for (int r = 0; r < MAX_ROWS; r++)
    if (r < rows) {
      _mm256_storeu_ps(out + r * COLS, acc[r][0]);
      _mm256_storeu_ps(out + r * COLS + 8, acc[r][1]);
    }
}

#define KERNEL(r, s) \
  TARGET static void k##r##_s##s(const tb_conv_direct_args *a) { body(a, r, s); }
#define KERNELS(s) KERNEL(1, s) KERNEL(2, s) KERNEL(3, s) KERNEL(4, s) KERNEL(5, s) KERNEL(6, s)
KERNELS(1)
KERNELS(2)
KERNELS(0)
#define TABLE(s) {k1_s##s, k2_s##s, k3_s##s, k4_s##s, k5_s##s, k6_s##s}

static const tb_conv_direct_ukr kernels[3][MAX_ROWS] = {TABLE(1), TABLE(2), TABLE(0)};

static tb_conv_direct_ukr ukr_avx2(int rows, int cols, int64_t pixel_stride) {
  if (pixel_stride < 1 || rows < 1 || rows > MAX_ROWS || cols != COLS) return NULL;
  return kernels[pixel_stride <= 2 ? (int)pixel_stride - 1 : 2][rows - 1];
}
#define STORE tb_conv_direct_store_avx2
#else
static tb_conv_direct_ukr ukr_avx2(int rows, int cols, int64_t pixel_stride) {
  (void)rows, (void)cols, (void)pixel_stride;
  return NULL;
}
#define STORE NULL
#endif

const tb_conv_direct_impl tb_conv_direct_f32_avx2 = {.name = "fp32 avx2", .lanes = 1, .src_elem = 4, .w_elem = 4,
                                                     .max_rows = 6, .cols = 16, .ukr = ukr_avx2,
                                                     .make_source = tb_conv_direct_make_source_f32,
                                                     .pack_weights = tb_conv_direct_pack_weights_f32, .store = STORE};
