/* The fp32 AVX-512 micro-kernels of the direct convolution (conv_direct.h; the source and weight layout are
 * conv_direct_f32.c's, the store conv_direct_store_avx512.c's). A tile is `rows` output pixels of one output row by 32 or 64
 * output channels (2 or 4 zmm per pixel): every accumulator stays in a register for the whole chunk,
 * each step loads the tap's weight vectors once and broadcasts each pixel's input value straight from the
 * source into the FMAs (vfmadd231ps with an embedded broadcast). The rows and the horizontal stride (1 or
 * 2) are compile-time constants of each variant, so a pixel's address is a constant offset from the tap's
 * pointer. Only the micro-kernels are built for AVX-512 (target attribute); the library stays baseline
 * x86-64 and the driver is used only when cpuid has AVX512F. */
#include "backend/cpu/kernels/fast/conv/conv_direct.h"

#if defined(__x86_64__)
#include <immintrin.h>

#define TARGET __attribute__((target("avx512f,fma")))

enum { MAX_ROWS = 14 };

/* acc + w * broadcast(*p) as one vfmadd231ps with an embedded broadcast: written out because GCC would
 * otherwise keep the 7 broadcast values of a 7 x 64 tile in registers and spill 4 accumulators. */
static inline __attribute__((always_inline)) TARGET __m512 fma_bcast(__m512 acc, __m512 w, const float *p) {
  __asm__("vfmadd231ps %2%{1to16%}, %1, %0" : "+v"(acc) : "v"(w), "m"(*p));
  return acc;
}

/* acc[rows x 16 nv] (+)= the chunk's sum, pixel r reading src + r * stride + tap offset (stride 0: the
 * generic kernel, a->pixel_stride). */
static inline __attribute__((always_inline)) TARGET void body(const tb_conv_direct_args *a, int rows, int nv,
                                                              int64_t stride) {
  const int cols = 16 * nv;
  float *out = a->acc;
  __m512 acc[MAX_ROWS][4];
#pragma GCC unroll 14
  for (int r = 0; r < MAX_ROWS; r++)
#pragma GCC unroll 4
    for (int v = 0; v < 4; v++)
      if (r < rows && v < nv)
        acc[r][v] = a->accumulate ? _mm512_loadu_ps(out + r * cols + v * 16) : _mm512_setzero_ps();
  const float *src = a->src, *w = a->w;
  const int64_t *tap_off = a->tap_off;
  const int n_taps = a->n_taps;
  const int64_t step = stride ? stride : a->pixel_stride; /* stride 0: the generic kernel */
  /* the prefetch lines spread evenly over the call's steps: one every pf_every steps */
  const char *pf = a->prefetch;
  int64_t pf_left = pf ? a->prefetch_bytes : 0, steps = a->n_units * a->n_taps;
  int64_t pf_every = pf_left > 0 && steps * 64 > pf_left ? steps * 64 / pf_left : 1, pf_count = pf_every;
  for (int64_t u = 0; u < a->n_units; u++, src += a->unit_stride)
    for (int t = 0; t < n_taps; t++, w += cols) {
      const float *p = src + tap_off[t];
      if (pf_left > 0 && --pf_count == 0) { /* one line of what the driver needs next, into L2 */
        _mm_prefetch(pf, _MM_HINT_T1);
        pf += 64;
        pf_left -= 64;
        pf_count = pf_every;
      }
      if (nv == 2) {
        __m512 w0 = _mm512_loadu_ps(w), w1 = _mm512_loadu_ps(w + 16);
#pragma GCC unroll 14
        for (int r = 0; r < MAX_ROWS; r++)
          if (r < rows) {
            __m512 b = _mm512_set1_ps(p[r * step]);
            acc[r][0] = _mm512_fmadd_ps(b, w0, acc[r][0]);
            acc[r][1] = _mm512_fmadd_ps(b, w1, acc[r][1]);
          }
      } else { /* 4 vectors: one weight vector live at a time keeps 28 accumulators + 1 in registers */
#pragma GCC unroll 4
        for (int v = 0; v < 4; v++) {
          __m512 wv = _mm512_loadu_ps(w + 16 * v);
#pragma GCC unroll 14
          for (int r = 0; r < MAX_ROWS; r++)
            if (r < rows) acc[r][v] = fma_bcast(acc[r][v], wv, p + r * step);
        }
      }
    }
#pragma GCC unroll 14
  for (int r = 0; r < MAX_ROWS; r++)
#pragma GCC unroll 4
    for (int v = 0; v < 4; v++)
      if (r < rows && v < nv) _mm512_storeu_ps(out + r * cols + v * 16, acc[r][v]);
}

#define KERNEL(r, nv, s) \
  TARGET static void k##r##_##nv##_s##s(const tb_conv_direct_args *a) { body(a, r, nv, s); }
#define KERNELS_32(s)                                                                                            \
  KERNEL(1, 2, s) KERNEL(2, 2, s) KERNEL(3, 2, s) KERNEL(4, 2, s) KERNEL(5, 2, s) KERNEL(6, 2, s) KERNEL(7, 2, s) \
  KERNEL(8, 2, s) KERNEL(9, 2, s) KERNEL(10, 2, s) KERNEL(11, 2, s) KERNEL(12, 2, s) KERNEL(13, 2, s)           \
  KERNEL(14, 2, s)
#define KERNELS_64(s) \
  KERNEL(1, 4, s) KERNEL(2, 4, s) KERNEL(3, 4, s) KERNEL(4, 4, s) KERNEL(5, 4, s) KERNEL(6, 4, s) KERNEL(7, 4, s)
KERNELS_32(1)
KERNELS_32(2)
KERNELS_64(1)
KERNELS_64(2)
KERNELS_32(0)
KERNELS_64(0)

#define TABLE_32(s)                                                                                              \
  {k1_2_s##s, k2_2_s##s, k3_2_s##s, k4_2_s##s, k5_2_s##s, k6_2_s##s, k7_2_s##s, k8_2_s##s, k9_2_s##s, k10_2_s##s, \
   k11_2_s##s, k12_2_s##s, k13_2_s##s, k14_2_s##s}
#define TABLE_64(s) {k1_4_s##s, k2_4_s##s, k3_4_s##s, k4_4_s##s, k5_4_s##s, k6_4_s##s, k7_4_s##s}

static const tb_conv_direct_ukr cols32[3][MAX_ROWS] = {TABLE_32(1), TABLE_32(2), TABLE_32(0)};
static const tb_conv_direct_ukr cols64[3][7] = {TABLE_64(1), TABLE_64(2), TABLE_64(0)};

/* Strides 1 and 2 (every stride ResNets and most CNNs use) with the stride built in; any other stride the
 * generic kernels (the stride read from the args). */
static tb_conv_direct_ukr ukr_f32(int rows, int cols, int64_t pixel_stride) {
  if (pixel_stride < 1 || rows < 1) return NULL;
  int which = pixel_stride <= 2 ? (int)pixel_stride - 1 : 2;
  if (cols == 32 && rows <= MAX_ROWS) return cols32[which][rows - 1];
  if (cols == 64 && rows <= 7) return cols64[which][rows - 1];
  return NULL;
}
#else
static tb_conv_direct_ukr ukr_f32(int rows, int cols, int64_t pixel_stride) {
  (void)rows, (void)cols, (void)pixel_stride;
  return NULL;
}
#endif

#if defined(__x86_64__)
#define STORE tb_conv_direct_store_avx512
#else
#define STORE NULL
#endif
const tb_conv_direct_impl tb_conv_direct_f32_avx512 = {.name = "fp32 avx512", .lanes = 1, .src_elem = 4, .w_elem = 4,
                                                       .max_rows = 14, .cols = 32, .ukr = ukr_f32,
                                                       .make_source = tb_conv_direct_make_source_f32,
                                                       .pack_weights = tb_conv_direct_pack_weights_f32, .store = STORE};
