/* The bf16 direct convolution's AVX512-BF16 parts (src/backend/cpu/kernels/fast/conv/conv_direct_bf16_avx512.c,
 * the contract in conv_direct.h): make_source against tb_convert's bf16 bits (NaN, Inf, subnormals, ties,
 * overflow to Inf, random bit patterns; pads, odd channel counts, channel ranges not starting at 0, row
 * lengths around the vector width; nothing written outside the units asked for); pack_weights against the
 * layout formula (zeros past mg and past cg); every micro-kernel (rows 1..14 x cols 32, rows 1..7 x cols 64,
 * pixel strides 1 and 2) against a double-precision sum over the same bf16 values, with and without
 * accumulate and a prefetch range, several units and taps, a unit stride with a gap; and which tile shapes
 * exist. The driver
 * (conv_direct.c) with this implementation against a double-precision convolution of the same bf16 values
 * on ResNet-like shapes (3x3 stride 1 and 2, the 7x7 stride-2 stem with C = 3, 7 x 64 tiles, odd widths
 * and channel counts, groups 2, batch 2, two depth chunks, bias + residual + Relu), bit-identical on 1, 2
 * and 3 threads, and what it declines (81 taps, depthwise, 1x1) with the reason; tap pairs for few input
 * channels (make_source_taps and pack_weights_taps against their formulas, which geometries take them,
 * the stem with C = 1 and 3, even kw, dilation 2, groups); strides 3 and 4 (the generic-stride kernels). The level-3 Conv and
 * tb::FusedConv entries (conv_bf16.c) on the AVX512-BF16 path: the same bits as tb_conv_direct_run (the
 * direct path ran) prepared or packed per run, on one or two threads, and with conv_algo gemm (the
 * implicit GEMM), both within 1e-4 of the level-0 reference on the bf16-rounded inputs.
 *
 * Tolerance of the micro-kernel check: bf16 x bf16 products are exact in fp32, so only the fp32 sums differ
 * from the exact sum: at most n * 2^-24 * sum|products| for n terms in any order (n <= 200 here); we allow
 * 1e-5 * sum|products|, which a wrong tap, row, lane or channel exceeds by orders of magnitude.
 * The AVX512-BF16 parts skip with a message when the CPU (after TB_CPU_FEATURES) lacks AVX512_BF16. */
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include "backend/cpu/kernels/fast/conv/conv_direct.h"
#include "backend/cpu/kernels/fast/gemm/gemm_bf16_kernel.h"
#include "core/convert_features.h"
#include "core/convert_scalar.h"
#include "core/threadpool.h"
#include "test_conv_util.h"
#include "test_op_harness.h"

static const tb_conv_direct_impl *const impl = &tb_conv_direct_bf16_avx512bf16;

static bool has_avx512bf16(void) { return tbt_cpu_has_bf16_path(); }

#define SKIP_WITHOUT_AVX512BF16()                                                                  \
  do {                                                                                             \
    if (!has_avx512bf16()) {                                                                       \
      print_message("skipped: this CPU (or valgrind) lacks the AVX512-BF16 path's features\n");       \
      skip();                                                                                      \
    }                                                                                              \
  } while (0)

static uint64_t rng_next(uint64_t *s) {
  *s ^= *s >> 12;
  *s ^= *s << 25;
  *s ^= *s >> 27;
  return *s * 0x2545F4914F6CDD1Dull;
}

static float uniform(uint64_t *s) { return (float)((double)(rng_next(s) >> 40) / (double)(1ull << 24) * 2.0 - 1.0); }

static float from_bits(uint32_t bits) {
  float x;
  memcpy(&x, &bits, sizeof x);
  return x;
}

static double bf(uint16_t h) { return (double)tb_minifloat_to_float(TB_MINIFLOAT_BF16, h); }

/* ---- make_source ---- */

/* Bit patterns that exercise the rounding: zeros, subnormals (kept, not flushed), ties to even, overflow
 * to Inf, Inf, signalling and quiet NaNs with payloads. */
static const uint32_t specials[] = {0x00000000u, 0x80000000u, 0x00000001u, 0x807FFFFFu, 0x00008000u, 0x00018000u,
                                    0x3F808000u, 0x3F818000u, 0x3F80FFFFu, 0x7F7FFFFFu, 0x7F7F8000u, 0xFF7F8001u,
                                    0x7F800000u, 0xFF800000u, 0x7F800001u, 0xFFC00000u, 0x7FBFFFFFu, 0x3FFFFFFFu,
                                    0x00400000u, 0x80010000u, 0x3F800000u, 0xC0400000u};
enum { N_SPECIALS = sizeof specials / sizeof specials[0] };

typedef struct source_case {
  int64_t channels, ih, iw, c0, n_c, src_h, src_w, pt, pl;
} source_case;

static void check_source(const source_case *c, uint64_t seed) {
  int64_t plane = c->ih * c->iw, src_plane = c->src_h * c->src_w, units = (c->channels + 1) / 2 + 1;
  float *x = malloc((size_t)(c->channels * plane + 1) * sizeof *x);
  uint32_t *src = malloc((size_t)(units * src_plane + 1) * sizeof *src);
  assert_true(x && src);
  uint64_t s = seed;
  for (int64_t i = 0; i < c->channels * plane; i++) /* specials first, then random bit patterns and values */
    x[i] = i < N_SPECIALS ? from_bits(specials[i]) : i % 3 ? uniform(&s) : from_bits((uint32_t)(rng_next(&s) >> 32));
  for (int64_t i = 0; i < units * src_plane; i++) src[i] = 0xDEADBEEFu;
  impl->make_source(x, c->ih, c->iw, c->c0, c->n_c, c->src_h, c->src_w, c->pt, c->pl, src);
  for (int64_t u = 0; u < units; u++)
    for (int64_t y = 0; y < c->src_h; y++)
      for (int64_t col = 0; col < c->src_w; col++) {
        uint32_t want = 0xDEADBEEFu, got = src[u * src_plane + y * c->src_w + col];
        int64_t iy = y - c->pt, ix = col - c->pl;
        if (2 * u >= c->c0 && 2 * u < c->c0 + c->n_c) { /* a unit asked for */
          want = 0;
          if (iy >= 0 && iy < c->ih && ix >= 0 && ix < c->iw)
            for (int l = 0; l < 2; l++) {
              int64_t ch = 2 * u + l;
              if (ch < c->c0 + c->n_c) want |= (uint32_t)tb_f32_to_bf16_ref(x[ch * plane + iy * c->iw + ix]) << (16 * l);
            }
        }
        if (got != want)
          fail_msg("source %lldx%lld c0 %lld n_c %lld into %lldx%lld at (%lld, %lld): unit %lld (%lld, %lld) is "
                   "0x%08x, want 0x%08x",
                   (long long)c->ih, (long long)c->iw, (long long)c->c0, (long long)c->n_c, (long long)c->src_h,
                   (long long)c->src_w, (long long)c->pt, (long long)c->pl, (long long)u, (long long)y, (long long)col,
                   got, want);
      }
  free(x);
  free(src);
}

static void make_source_rounds_and_pads(void **state) {
  (void)state;
  SKIP_WITHOUT_AVX512BF16();
  /* channels, ih, iw, c0, n_c, src_h, src_w, pt, pl */
  static const source_case cases[] = {
      {4, 5, 37, 0, 4, 7, 39, 1, 1},      /* 3x3 pad 1 over a row of 32 + 5 */
      {6, 4, 9, 2, 3, 8, 17, 3, 3},       /* odd n_c from c0 2: unit 2's high half zero; units 0, 3 untouched */
      {3, 9, 9, 0, 3, 15, 16, 3, 3},      /* the stem's C = 3 with pad 3 and a wider plane */
      {2, 3, 64, 0, 2, 3, 64, 0, 0},      /* no pads: the plane is the input */
      {5, 6, 1, 4, 1, 8, 3, 1, 1},        /* width 1, last lone channel */
      {2, 2, 70, 0, 2, 5, 75, 2, 4},      /* asymmetric pads, 2 x 32 + 6 */
      {2, 1, 29, 0, 2, 1, 31, 0, 1},      /* 1-D */
      {8, 7, 16, 2, 4, 9, 18, 1, 1},      /* a middle range */
  };
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) check_source(&cases[i], 11 + i);
}

/* Every special value in both halves of the pair, and random bit patterns, against tb_f32_to_bf16_ref. */
static void make_source_matches_tb_convert_bits(void **state) {
  (void)state;
  SKIP_WITHOUT_AVX512BF16();
  enum { W = 4096 };
  float *x = malloc(2 * W * sizeof *x);
  uint32_t *src = malloc(W * sizeof *src);
  assert_true(x && src);
  uint64_t s = 5;
  for (int i = 0; i < W; i++) {
    x[i] = i < N_SPECIALS ? from_bits(specials[i]) : from_bits((uint32_t)(rng_next(&s) >> 32));
    x[W + i] = i < N_SPECIALS ? from_bits(specials[N_SPECIALS - 1 - i]) : from_bits((uint32_t)(rng_next(&s) >> 32));
  }
  impl->make_source(x, 1, W, 0, 2, 1, W, 0, 0, src);
  for (int i = 0; i < W; i++) {
    uint16_t lo = tb_f32_to_bf16_ref(x[i]), hi = tb_f32_to_bf16_ref(x[W + i]);
    if (src[i] != ((uint32_t)hi << 16 | lo))
      fail_msg("pixel %d: 0x%08x from %a, %a; tb_convert gives 0x%04x%04x", i, src[i], (double)x[i], (double)x[W + i],
               hi, lo);
  }
  /* the special cases by name: a subnormal kept, a NaN quieted with its payload, the largest float to Inf */
  assert_int_equal(src[2] & 0xFFFF, 0x0000); /* 0x00000001 rounds to +0 (below half of bf16's smallest) */
  assert_int_equal(src[3] & 0xFFFF, 0x8080); /* -0x007FFFFF (subnormal) rounds to the bf16 subnormal 0x8080 */
  assert_int_equal(src[9] & 0xFFFF, 0x7F80); /* FLT_MAX overflows to +Inf */
  assert_int_equal(src[14] & 0xFFFF, 0x7FC0); /* signalling NaN 0x7F800001 becomes quiet */
  free(x);
  free(src);
}

/* make_source_taps: channel c in unit c, the low half the padded input at (y, col), the high half at
 * (y, col + dw); zeros outside the input; units outside [c0, c0 + n_c) untouched. */
static void check_source_taps(const source_case *c, int64_t dw, uint64_t seed) {
  int64_t plane = c->ih * c->iw, src_plane = c->src_h * c->src_w, units = c->channels + 1;
  float *x = malloc((size_t)(c->channels * plane + 1) * sizeof *x);
  uint32_t *src = malloc((size_t)(units * src_plane + 1) * sizeof *src);
  assert_true(x && src);
  uint64_t s = seed;
  for (int64_t i = 0; i < c->channels * plane; i++)
    x[i] = i < N_SPECIALS ? from_bits(specials[i]) : i % 3 ? uniform(&s) : from_bits((uint32_t)(rng_next(&s) >> 32));
  for (int64_t i = 0; i < units * src_plane; i++) src[i] = 0xDEADBEEFu;
  impl->make_source_taps(x, c->ih, c->iw, c->c0, c->n_c, c->src_h, c->src_w, c->pt, c->pl, dw, src);
  for (int64_t u = 0; u < units; u++)
    for (int64_t y = 0; y < c->src_h; y++)
      for (int64_t col = 0; col < c->src_w; col++) {
        uint32_t want = 0xDEADBEEFu, got = src[u * src_plane + y * c->src_w + col];
        int64_t iy = y - c->pt;
        if (u >= c->c0 && u < c->c0 + c->n_c) {
          want = 0;
          for (int l = 0; l < 2; l++) {
            int64_t ix = col - c->pl + l * dw;
            if (iy >= 0 && iy < c->ih && ix >= 0 && ix < c->iw)
              want |= (uint32_t)tb_f32_to_bf16_ref(x[u * plane + iy * c->iw + ix]) << (16 * l);
          }
        }
        if (got != want)
          fail_msg("tap source %lldx%lld c0 %lld n_c %lld dw %lld into %lldx%lld at (%lld, %lld): unit %lld (%lld, %lld) "
                   "is 0x%08x, want 0x%08x",
                   (long long)c->ih, (long long)c->iw, (long long)c->c0, (long long)c->n_c, (long long)dw,
                   (long long)c->src_h, (long long)c->src_w, (long long)c->pt, (long long)c->pl, (long long)u,
                   (long long)y, (long long)col, got, want);
      }
  free(x);
  free(src);
}

static void make_source_taps_pairs_neighbours(void **state) {
  (void)state;
  SKIP_WITHOUT_AVX512BF16();
  assert_non_null(impl->make_source_taps);
  /* channels, ih, iw, c0, n_c, src_h, src_w, pt, pl */
  static const source_case cases[] = {
      {3, 9, 9, 0, 3, 15, 16, 3, 3},    /* the stem's C = 3 with pad 3 */
      {3, 5, 37, 1, 2, 11, 43, 3, 3},   /* channels 1 and 2 only; a row of 32 + 11 */
      {1, 4, 16, 0, 1, 4, 16, 0, 0},    /* no pads: the last column's neighbour is outside */
      {2, 3, 70, 0, 2, 7, 75, 2, 4},    /* asymmetric pads */
      {1, 6, 1, 0, 1, 8, 3, 1, 1},      /* width 1 */
      {2, 1, 29, 0, 2, 1, 31, 0, 1},    /* 1-D */
  };
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++)
    for (int64_t dw = 1; dw <= 3; dw++) check_source_taps(&cases[i], dw, 23 + i);
}

/* ---- pack_weights ---- */

static void check_pack(int64_t mg, int64_t cg, int n_taps, int64_t m0, int cols) {
  int64_t units = (cg + 1) / 2, n = units * n_taps * cols * 2;
  float *w = malloc((size_t)(mg * cg * n_taps) * sizeof *w);
  uint16_t *dst = malloc((size_t)(n + 8) * sizeof *dst);
  assert_true(w && dst);
  uint64_t s = (uint64_t)(mg * 131 + cg * 17 + n_taps);
  for (int64_t i = 0; i < mg * cg * n_taps; i++) w[i] = uniform(&s) * 3.0f;
  for (int64_t i = 0; i < n + 8; i++) dst[i] = 0xFFFF;
  impl->pack_weights(w, mg, cg, n_taps, m0, cols, dst);
  for (int64_t u = 0; u < units; u++)
    for (int t = 0; t < n_taps; t++)
      for (int j = 0; j < cols; j++)
        for (int l = 0; l < 2; l++) {
          int64_t ch = 2 * u + l, m = m0 + j;
          uint16_t want = m < mg && ch < cg ? tb_f32_to_bf16_ref(w[(m * cg + ch) * n_taps + t]) : 0;
          uint16_t got = dst[((u * n_taps + t) * cols + j) * 2 + l];
          if (got != want)
            fail_msg("pack mg %lld cg %lld taps %d m0 %lld cols %d: unit %lld tap %d column %d lane %d is 0x%04x, want 0x%04x",
                     (long long)mg, (long long)cg, n_taps, (long long)m0, cols, (long long)u, t, j, l, got, want);
        }
  for (int64_t i = n; i < n + 8; i++) assert_int_equal(dst[i], 0xFFFF); /* nothing past the block */
  free(w);
  free(dst);
}

static void pack_weights_layout(void **state) {
  (void)state;
  if (!impl->pack_weights) {
    print_message("skipped: no bf16 direct convolution on this architecture\n");
    skip();
  }
  check_pack(40, 5, 9, 0, 32);   /* odd cg: the last unit's high lane zero */
  check_pack(40, 5, 9, 32, 32);  /* 8 channels then 24 zero columns */
  check_pack(70, 4, 1, 64, 64);  /* one tap, 6 channels of 64 */
  check_pack(64, 3, 49, 0, 64);  /* the stem: 7x7, C = 3 */
  check_pack(128, 64, 9, 64, 64);
  check_pack(1, 1, 3, 0, 32);
}

static void check_pack_taps(int64_t mg, int64_t cg, int kh, int kw, int64_t m0, int cols) {
  int pairs = (kw + 1) / 2, n_taps = kh * pairs;
  int64_t n = cg * n_taps * cols * 2;
  float *w = malloc((size_t)(mg * cg * kh * kw) * sizeof *w);
  uint16_t *dst = malloc((size_t)(n + 8) * sizeof *dst);
  assert_true(w && dst);
  uint64_t s = (uint64_t)(mg * 131 + cg * 17 + kh * kw);
  for (int64_t i = 0; i < mg * cg * kh * kw; i++) w[i] = uniform(&s) * 3.0f;
  for (int64_t i = 0; i < n + 8; i++) dst[i] = 0xFFFF;
  impl->pack_weights_taps(w, mg, cg, kh, kw, m0, cols, dst);
  for (int64_t u = 0; u < cg; u++)
    for (int i = 0; i < kh; i++)
      for (int p = 0; p < pairs; p++)
        for (int j = 0; j < cols; j++)
          for (int l = 0; l < 2; l++) {
            int64_t m = m0 + j;
            int k = 2 * p + l;
            uint16_t want = m < mg && k < kw ? tb_f32_to_bf16_ref(w[((m * cg + u) * kh + i) * kw + k]) : 0;
            uint16_t got = dst[((u * n_taps + i * pairs + p) * cols + j) * 2 + l];
            if (got != want)
              fail_msg("pack taps mg %lld cg %lld %dx%d m0 %lld cols %d: channel %lld row %d pair %d column %d lane %d "
                       "is 0x%04x, want 0x%04x",
                       (long long)mg, (long long)cg, kh, kw, (long long)m0, cols, (long long)u, i, p, j, l, got, want);
          }
  for (int64_t i = n; i < n + 8; i++) assert_int_equal(dst[i], 0xFFFF);
  free(w);
  free(dst);
}

static void pack_weights_taps_layout(void **state) {
  (void)state;
  if (!impl->pack_weights_taps) {
    print_message("skipped: no bf16 direct convolution on this architecture\n");
    skip();
  }
  check_pack_taps(64, 3, 7, 7, 0, 64);  /* the stem: the fourth pair's high lane zero */
  check_pack_taps(40, 3, 7, 7, 32, 32); /* 8 channels then 24 zero columns */
  check_pack_taps(33, 1, 3, 4, 0, 64);  /* even kw: no zero lane */
  check_pack_taps(5, 2, 1, 3, 0, 32);
}

/* Which geometries take tap pairs: few odd channels with kw >= 2 (fewer (unit, tap) steps), not C = 3 at
 * 3x3 (as many steps either way), not many channels, never the fp32 implementation. */
static void tap_pairs_chosen(void **state) {
  (void)state;
  tb_conv_geom g = {.spatial = 2, .batch = 1, .in_c = 3, .out_c = 64, .group = 1, .ih = 224, .iw = 224, .kh = 7,
                    .kw = 7, .sh = 2, .sw = 2, .dh = 1, .dw = 1, .ph = 3, .pw = 3, .oh = 112, .ow = 112};
  bool has = impl->make_source_taps != NULL;
  assert_int_equal(tb_conv_direct_tap_pairs(impl, &g), has);
  assert_false(tb_conv_direct_tap_pairs(&tb_conv_direct_f32_avx512, &g));
  g.in_c = 1;
  assert_int_equal(tb_conv_direct_tap_pairs(impl, &g), has);
  g.in_c = 64;
  assert_false(tb_conv_direct_tap_pairs(impl, &g));
  g.in_c = 3, g.kh = 3, g.kw = 3;
  assert_false(tb_conv_direct_tap_pairs(impl, &g));
  g.kh = 1, g.kw = 1, g.in_c = 1;
  assert_false(tb_conv_direct_tap_pairs(impl, &g));
}

/* ---- micro-kernels ---- */

typedef struct tile_case {
  int rows, cols;
  int64_t stride;
  int kh, kw;
  int64_t units;
} tile_case;

/* A source of `units` planes (src_h x src_w, unit stride with a gap of 3) of random bf16 pairs, weights of
 * a kh x kw kernel, and the tile at output row 1, pixel 0. Two chunks: units [0, units / 2) without
 * accumulate over an acc full of NaN, then the rest with accumulate; against the double sum. */
static void check_tile(const tile_case *c) {
  tb_conv_direct_ukr ukr = impl->ukr(c->rows, c->cols, c->stride);
  if (!ukr) fail_msg("no micro-kernel for %d x %d stride %lld", c->rows, c->cols, (long long)c->stride);
  int n_taps = c->kh * c->kw;
  int64_t src_w = (c->rows - 1) * c->stride + c->kw + 2, src_h = c->kh + 2, unit_stride = src_h * src_w + 3;
  int64_t n_src = c->units * unit_stride, n_w = c->units * n_taps * c->cols * 2;
  uint32_t *src = malloc((size_t)n_src * sizeof *src);
  uint16_t *w = malloc((size_t)n_w * sizeof *w);
  float *acc = malloc((size_t)(c->rows * c->cols + 16) * sizeof *acc);
  int64_t tap_off[64];
  assert_true(src && w && acc && n_taps <= 64);
  uint64_t s = (uint64_t)(c->rows * 1000 + c->cols * 10 + c->stride + c->kh * 7);
  for (int64_t i = 0; i < n_src; i++)
    src[i] = (uint32_t)tb_f32_to_bf16_ref(uniform(&s)) | (uint32_t)tb_f32_to_bf16_ref(uniform(&s)) << 16;
  for (int64_t i = 0; i < n_w; i++) w[i] = tb_f32_to_bf16_ref(uniform(&s));
  for (int kh = 0; kh < c->kh; kh++)
    for (int kw = 0; kw < c->kw; kw++) tap_off[kh * c->kw + kw] = kh * src_w + kw;
  for (int i = 0; i < c->rows * c->cols + 16; i++) acc[i] = i < c->rows * c->cols ? NAN : -7.0f;
  const int64_t origin = src_w; /* the tile's first pixel: row 1, column 0 of unit 0 */
  int64_t first = c->units / 2 > 0 ? c->units / 2 : c->units;
  tb_conv_direct_args a = {.src = src + origin, .unit_stride = unit_stride, .tap_off = tap_off, .n_taps = n_taps,
                           .n_units = first, .w = w, .acc = acc, .accumulate = false, .pixel_stride = c->stride};
  ukr(&a);
  if (first < c->units) {
    /* with a prefetch range (here the weights themselves): it must not change the sums */
    a = (tb_conv_direct_args){.src = src + origin + first * unit_stride, .unit_stride = unit_stride, .tap_off = tap_off,
                              .n_taps = n_taps, .n_units = c->units - first, .w = w + first * n_taps * c->cols * 2,
                              .acc = acc, .accumulate = true, .prefetch = w, .prefetch_bytes = n_w * 2,
                              .pixel_stride = c->stride};
    ukr(&a);
  }
  for (int r = 0; r < c->rows; r++)
    for (int j = 0; j < c->cols; j++) {
      double sum = 0, mag = 0;
      for (int64_t u = 0; u < c->units; u++)
        for (int t = 0; t < n_taps; t++) {
          uint32_t pair = src[origin + u * unit_stride + tap_off[t] + r * c->stride];
          const uint16_t *wt = w + ((u * n_taps + t) * c->cols + j) * 2;
          for (int l = 0; l < 2; l++) {
            double p = bf((uint16_t)(pair >> (16 * l))) * bf(wt[l]);
            sum += p;
            mag += fabs(p);
          }
        }
      double got = acc[r * c->cols + j];
      if (!(fabs(got - sum) <= 1e-5 * mag + 1e-30))
        fail_msg("tile %d x %d stride %lld, %dx%d taps, %lld units: row %d column %d is %.9g, want %.9g", c->rows,
                 c->cols, (long long)c->stride, c->kh, c->kw, (long long)c->units, r, j, got, sum);
    }
  for (int i = c->rows * c->cols; i < c->rows * c->cols + 16; i++) assert_true(acc[i] == -7.0f); /* not past the tile */
  free(src);
  free(w);
  free(acc);
}

static void micro_kernels_match_double_sum(void **state) {
  (void)state;
  SKIP_WITHOUT_AVX512BF16();
  for (int64_t stride = 1; stride <= 4; stride++) { /* 3 and 4: the generic kernel, the stride from the args */
    for (int rows = 1; rows <= impl->max_rows; rows++) {
      check_tile(&(tile_case){rows, 32, stride, 3, 3, 5});
      check_tile(&(tile_case){rows, 32, stride, 1, 1, 2});
    }
    for (int rows = 1; rows <= 7; rows++) {
      check_tile(&(tile_case){rows, 64, stride, 3, 3, 4});
      check_tile(&(tile_case){rows, 64, stride, 7, 7, 2}); /* the stem's 49 taps */
      check_tile(&(tile_case){rows, 64, stride, 1, 3, 1}); /* one unit: a single call */
    }
  }
}

/* The shapes the contract promises and nothing else (the driver relies on NULL to fall back). */
static void tile_shapes_available(void **state) {
  (void)state;
  assert_string_equal(impl->name, "bf16 avx512bf16");
  assert_int_equal(impl->lanes, 2);
  assert_int_equal(impl->src_elem, 4);
  assert_int_equal(impl->w_elem, 2);
  assert_int_equal(impl->max_rows, 14);
#if defined(__x86_64__)
  for (int64_t stride = 1; stride <= 5; stride++) {
    for (int rows = 1; rows <= 14; rows++) assert_non_null(impl->ukr(rows, 32, stride));
    for (int rows = 1; rows <= 7; rows++) assert_non_null(impl->ukr(rows, 64, stride));
    assert_null(impl->ukr(8, 64, stride));
    assert_null(impl->ukr(15, 32, stride));
    assert_null(impl->ukr(0, 32, stride));
    assert_null(impl->ukr(4, 48, stride));
  }
  assert_ptr_not_equal(impl->ukr(14, 32, 1), impl->ukr(14, 32, 2));
  assert_ptr_not_equal(impl->ukr(14, 32, 2), impl->ukr(14, 32, 3));
  assert_ptr_equal(impl->ukr(7, 64, 3), impl->ukr(7, 64, 9)); /* one generic kernel for every stride above 2 */
  assert_null(impl->ukr(4, 32, 0));
  assert_null(impl->ukr(4, 32, -1));
#else
  assert_null(impl->ukr(14, 32, 1));
#endif
}

/* ---- the driver (conv_direct.c) with this implementation ---- */

typedef struct net_case {
  const char *what;
  int64_t batch, c, h, w, m, k, stride, pad, group;
  bool bias, residual, relu;
  int64_t dilation;
} net_case;

/* batch, c, h, w, m, k, stride, pad, group, bias, residual, relu, dilation */
static const net_case net_cases[] = {
    {"3x3 s1 14 wide (14 x 32 tiles)", 1, 16, 14, 14, 64, 3, 1, 1, 1, true, true, true, 1},
    {"3x3 s1 7 wide (7 x 64 tiles)", 1, 64, 7, 7, 128, 3, 1, 1, 1, true, false, true, 1},
    {"3x3 s2 15 -> 8", 1, 32, 15, 15, 64, 3, 2, 1, 1, true, false, false, 1},
    {"7x7 s2 stem C = 3", 1, 3, 40, 38, 64, 7, 2, 3, 1, true, false, true, 1},
    {"3x3 odd width 13, C = 5, M = 40", 1, 5, 9, 13, 40, 3, 1, 1, 1, false, true, false, 1},
    {"3x3 groups 2 of C = 5 (odd), batch 2", 2, 10, 11, 9, 24, 3, 1, 1, 2, true, true, true, 1},
    {"3x3 C = 320 at 7 wide: two depth chunks of 7 x 64", 1, 320, 7, 7, 64, 3, 1, 1, 1, true, true, true, 1},
    {"3x3 C = 640 at 4 wide: two depth chunks of 14 x 32", 1, 640, 4, 4, 32, 3, 1, 1, 1, false, false, false, 1},
    {"3x3 s1 width 1", 1, 6, 5, 1, 32, 3, 1, 1, 1, true, false, false, 1},
    {"1x3 no pad (a 1-D-like row)", 2, 7, 1, 30, 33, 3, 1, 0, 1, true, false, true, 1},
    {"7x7 s2 C = 1 (tap pairs)", 1, 1, 23, 29, 32, 7, 2, 3, 1, true, true, true, 1},
    {"4x4 s1 C = 3, even kw (tap pairs)", 1, 3, 10, 17, 40, 4, 1, 2, 1, false, false, false, 1},
    {"5x5 s1 C = 3 dilation 2 (tap pairs dw 2)", 1, 3, 13, 16, 32, 5, 1, 4, 1, true, false, true, 2},
    {"7x7 s2 groups 2 of C = 3, batch 2 (tap pairs)", 2, 6, 17, 20, 64, 7, 2, 3, 2, true, false, false, 1},
    {"1x5 C = 1 no pad (tap pairs, 1-D-like)", 1, 1, 1, 40, 32, 5, 1, 0, 1, false, false, true, 1},
    {"3x3 s3 (the generic-stride kernel)", 1, 8, 17, 44, 64, 3, 3, 1, 1, true, true, true, 1},
    {"3x3 s3 7 wide, M 128 (generic 7 x 64)", 1, 16, 21, 21, 128, 3, 3, 1, 1, true, false, false, 1},
    {"7x7 s4 C = 3 (tap pairs, generic stride)", 1, 3, 30, 33, 32, 7, 4, 3, 1, false, false, true, 1},
};

static void fill_rounded(float *x, int64_t n, uint64_t seed, float scale) {
  uint64_t s = seed * 0x9E3779B97F4A7C15ull + 3;
  for (int64_t i = 0; i < n; i++) x[i] = (float)bf(tb_f32_to_bf16_ref(uniform(&s) * scale));
}

static tb_conv_geom geom_of(const net_case *c) {
  int64_t kh = c->h == 1 ? 1 : c->k, ph = c->h == 1 ? 0 : c->pad, d = c->dilation;
  tb_conv_geom g = {.spatial = 2, .batch = c->batch, .in_c = c->c, .out_c = c->m, .group = c->group, .ih = c->h,
                    .iw = c->w, .kh = kh, .kw = c->k, .sh = c->stride, .sw = c->stride, .dh = d, .dw = d, .ph = ph,
                    .pw = c->pad};
  g.oh = (c->h + 2 * ph - (kh - 1) * d - 1) / c->stride + 1;
  g.ow = (c->w + 2 * c->pad - (c->k - 1) * d - 1) / c->stride + 1;
  return g;
}

/* The tensors of a case: X and W already bf16 values (so the double sum is the exact one), B and R fp32. */
typedef struct net_data {
  tb_conv_geom g;
  float *x, *w, *b, *r;
  int64_t nx, nw, ny;
} net_data;

static void net_data_make(const net_case *c, net_data *d) {
  d->g = geom_of(c);
  const tb_conv_geom *g = &d->g;
  d->nx = g->batch * g->in_c * g->ih * g->iw;
  d->nw = g->out_c * (g->in_c / g->group) * g->kh * g->kw;
  d->ny = g->batch * g->out_c * g->oh * g->ow;
  d->x = malloc((size_t)d->nx * sizeof *d->x);
  d->w = malloc((size_t)d->nw * sizeof *d->w);
  d->b = c->bias ? malloc((size_t)g->out_c * sizeof *d->b) : NULL;
  d->r = c->residual ? malloc((size_t)d->ny * sizeof *d->r) : NULL;
  assert_true(d->x && d->w && (!c->bias || d->b) && (!c->residual || d->r));
  fill_rounded(d->x, d->nx, (uint64_t)(c->c * 31 + c->w), 1.0f);
  fill_rounded(d->w, d->nw, (uint64_t)(c->m * 17 + c->k), 1.0f);
  if (d->b) fill_rounded(d->b, g->out_c, 77, 0.5f);
  if (d->r) fill_rounded(d->r, d->ny, 78, 2.0f);
}

static void net_data_free(net_data *d) {
  free(d->x);
  free(d->w);
  free(d->b);
  free(d->r);
}

/* act(conv + bias + residual) in double against y, within 1e-5 of the magnitudes summed. */
static void check_against_double(const net_case *c, const net_data *d, const float *y, const char *how) {
  const tb_conv_geom *g = &d->g;
  int64_t cg = g->in_c / g->group, mg = g->out_c / g->group;
  for (int64_t b = 0; b < g->batch; b++)
    for (int64_t m = 0; m < g->out_c; m++)
      for (int64_t oy = 0; oy < g->oh; oy++)
        for (int64_t ox = 0; ox < g->ow; ox++) {
          int64_t gi = m / mg, at = ((b * g->out_c + m) * g->oh + oy) * g->ow + ox;
          double sum = d->b ? d->b[m] : 0, mag = fabs(sum);
          for (int64_t ci = 0; ci < cg; ci++)
            for (int64_t ky = 0; ky < g->kh; ky++)
              for (int64_t kx = 0; kx < g->kw; kx++) {
                int64_t iy = oy * g->sh + ky * g->dh - g->ph, ix = ox * g->sw + kx * g->dw - g->pw;
                if (iy < 0 || iy >= g->ih || ix < 0 || ix >= g->iw) continue;
                double p = (double)d->x[((b * g->in_c + gi * cg + ci) * g->ih + iy) * g->iw + ix] *
                           d->w[((m * cg + ci) * g->kh + ky) * g->kw + kx];
                sum += p;
                mag += fabs(p);
              }
          if (d->r) sum += d->r[at], mag += fabs(d->r[at]);
          if (c->relu && sum < 0) sum = 0;
          if (!(fabs(y[at] - sum) <= 1e-5 * mag + 1e-6))
            fail_msg("%s (%s): output [%lld, %lld, %lld, %lld] is %.9g, want %.9g", c->what, how, (long long)b,
                     (long long)m, (long long)oy, (long long)ox, y[at], sum);
        }
}

static tb_pool *pool2, *pool3;

static int make_pools(void **state) {
  (void)state;
  tbt_clear_env();
  tconv_conv_algo = TB_CONV_ALGO_DIRECT; /* the entries' 3x3 stride-1 cases must run the direct path */
  return tb_pool_create(2, &pool2) == TB_OK && tb_pool_create(3, &pool3) == TB_OK ? 0 : -1;
}

static int free_pools(void **state) {
  (void)state;
  tb_pool_destroy(pool2);
  tb_pool_destroy(pool3);
  return 0;
}

/* Every case through tb_conv_direct_run on 1, 2 and 3 threads: the double sum, and the same bits at every
 * thread count. */
static void driver_matches_double_reference(void **state) {
  (void)state;
  SKIP_WITHOUT_AVX512BF16();
  for (size_t i = 0; i < sizeof net_cases / sizeof net_cases[0]; i++) {
    const net_case *c = &net_cases[i];
    net_data d;
    net_data_make(c, &d);
    char why[200] = "";
    if (!tb_conv_direct_fits(impl, &d.g, why, sizeof why)) fail_msg("%s: the direct convolution does not take it: %s", c->what, why);
    tb_conv_direct_weights *pw = tb_conv_direct_pack(impl, &d.g, d.w);
    assert_non_null(pw);
    tb_gemm_epilogue ep = {.act = c->relu ? 1 : 0};
    float *y[3];
    tb_pool *pools[3] = {NULL, pool2, pool3};
    for (int p = 0; p < 3; p++) {
      y[p] = malloc((size_t)d.ny * sizeof *y[p]);
      assert_non_null(y[p]);
      assert_true(tb_conv_direct_run(impl, &d.g, pw, d.x, d.b, d.r, &ep, y[p], pools[p]));
    }
    check_against_double(c, &d, y[0], "1 thread");
    for (int p = 1; p < 3; p++)
      if (memcmp(y[0], y[p], (size_t)d.ny * sizeof *y[0]) != 0)
        fail_msg("%s: %d threads give other bits than 1", c->what, tb_pool_threads(pools[p]));
    for (int p = 0; p < 3; p++) free(y[p]);
    tb_conv_direct_free(pw);
    net_data_free(&d);
  }
}

/* What the bf16 implementation does not take: more than 64 taps, depthwise, 1x1 stride 1; stride 3 it takes. */
static void driver_declines_with_reasons(void **state) {
  (void)state;
  SKIP_WITHOUT_AVX512BF16();
  char why[200];
  tb_conv_geom g = geom_of(&(net_case){"", 1, 8, 12, 12, 16, 3, 3, 0, 1, false, false, false, 1});
  assert_true(tb_conv_direct_fits(impl, &g, why, sizeof why));
  g = geom_of(&(net_case){"", 1, 8, 12, 12, 16, 9, 1, 4, 1, false, false, false, 1});
  assert_false(tb_conv_direct_fits(impl, &g, why, sizeof why));
  TB_ASSERT_CONTAINS(why, "81 taps");
  g = geom_of(&(net_case){"", 1, 8, 12, 12, 8, 3, 1, 1, 8, false, false, false, 1});
  assert_false(tb_conv_direct_fits(impl, &g, why, sizeof why));
  TB_ASSERT_CONTAINS(why, "depthwise");
  g = geom_of(&(net_case){"", 1, 8, 12, 12, 16, 1, 1, 0, 1, false, false, false, 1});
  assert_false(tb_conv_direct_fits(impl, &g, why, sizeof why));
  TB_ASSERT_CONTAINS(why, "1x1");
}

/* ---- the level-3 Conv / tb::FusedConv entries (conv_bf16.c) with the direct path on and off ---- */

extern const tb_kernel tb_kernel_conv_bf16_avx512bf16, tb_kernel_fused_conv_bf16_avx512bf16;
extern const tb_kernel tb_kernel_conv, tb_kernel_fused_conv;

/* The node: Conv or tb::FusedConv (Relu when the case has it) with X, W, B (or none), R (fused with a
 * residual); X's static shape known to prepare, W a graph constant when `constant_w`. */
static void entry_setup(toh *t, const net_case *c, const net_data *d, bool fused, bool constant_w) {
  toh_begin(t, NULL);
  const tb_conv_geom *g = &d->g;
  tb_attr attrs[8];
  size_t na = 0;
  attrs[na++] = TOH_INT("group", g->group);
  attrs[na++] = TOH_INTS("kernel_shape", g->kh, g->kw);
  attrs[na++] = TOH_INTS("strides", g->sh, g->sw);
  attrs[na++] = TOH_INTS("pads", g->ph, g->pw, g->ph, g->pw);
  if (fused && c->relu) attrs[na++] = TOH_STR("activation", "Relu");
  bool residual = fused && d->r;
  tconv_add_node(t, fused, d->b != NULL, residual, attrs, na);
  int64_t xs[4] = {g->batch, g->in_c, g->ih, g->iw}, ws[4] = {g->out_c, g->in_c / g->group, g->kh, g->kw};
  int64_t ys[4] = {g->batch, g->out_c, g->oh, g->ow};
  t->in[0] = toh_host_tensor(t->cpu, TB_DTYPE_F32, 4, xs, d->x);
  t->in[1] = toh_host_tensor(t->cpu, TB_DTYPE_F32, 4, ws, d->w);
  if (d->b) t->in[2] = toh_host_tensor(t->cpu, TB_DTYPE_F32, 1, &g->out_c, d->b);
  if (residual) t->in[3] = toh_host_tensor(t->cpu, TB_DTYPE_F32, 4, ys, d->r);
  tconv_set_prepare_view(t, true, constant_w);
}

/* Run kernel k on t->in, prepared (W given to prepare) or not, on pool; the output. */
static tb_tensor *entry_run(toh *t, const tb_kernel *k, bool prepare, tb_pool *pool) {
  void *st = NULL;
  if (prepare && k->prepare) {
    tb_tensor *consts[4] = {NULL, t->in[1], NULL, NULL};
    tb_kernel_ctx pc = {.graph = t->graph, .node = toh_node(t), .n_inputs = t->n_in, .inputs = consts, .backend = t->cpu,
                        .threads = 1, .conv_algo = tconv_conv_algo};
    (void)tbt_kernel_bind(&pc, t->graph, toh_node(t), NULL);
    TB_ASSERT_OK(k->prepare(&pc, &st));
    assert_non_null(st);
  }
  tb_tensor *out = NULL;
  tb_kernel_ctx ctx = {.graph = t->graph, .node = toh_node(t), .n_inputs = t->n_in, .inputs = t->in, .n_outputs = 1,
                       .outputs = &out, .backend = t->cpu, .threads = tb_pool_threads(pool), .pool = pool, .state = st,
                       .conv_algo = tconv_conv_algo};
  (void)tbt_kernel_bind(&ctx, t->graph, toh_node(t), NULL);
  TB_ASSERT_OK(k->run(&ctx));
  if (k->release) k->release(st);
  assert_non_null(out);
  return out;
}

static void assert_close_to(const float *got, const float *ref, int64_t n, const char *what, const char *how) {
  for (int64_t i = 0; i < n; i++)
    if (!(fabs((double)got[i] - ref[i]) <= 1e-4 * fabs((double)ref[i]) + 1e-4))
      fail_msg("%s (%s): element %lld is %.9g, level-0 reference %.9g", what, how, (long long)i, got[i], ref[i]);
}

/* Conv and FusedConv at level 3 on the AVX512-BF16 path: with the direct convolution (the default) their
 * output is the same bits as tb_conv_direct_run's (so that path ran), prepared (W constant) or packed per
 * run, on one or two threads; with conv_algo gemm the implicit GEMM; both within the fp32 bound of
 * the level-0 reference on the same bf16 values. */
static void level3_entries_direct_on_and_off(void **state) {
  (void)state;
  SKIP_WITHOUT_AVX512BF16();
  static const size_t picks[] = {0, 1, 3, 5, 6};
  for (size_t pi = 0; pi < sizeof picks / sizeof picks[0]; pi++) {
    const net_case *c = &net_cases[picks[pi]];
    net_data d;
    net_data_make(c, &d);
    for (int fused = 0; fused < 2; fused++) {
      net_case cc = *c; /* plain Conv: no residual, no activation */
      if (!fused) cc.relu = false;
      float *r_saved = d.r;
      if (!fused) d.r = NULL;
      toh t;
      entry_setup(&t, &cc, &d, fused != 0, true);
      const tb_kernel *k = fused ? &tb_kernel_fused_conv_bf16_avx512bf16 : &tb_kernel_conv_bf16_avx512bf16;
      tb_tensor *ref = entry_run(&t, fused ? &tb_kernel_fused_conv : &tb_kernel_conv, false, NULL);
      const float *rf = tb_tensor_host_data(ref);
      /* what the direct convolution gives for this node */
      tb_conv_direct_weights *pw = tb_conv_direct_pack(impl, &d.g, d.w);
      float *direct = malloc((size_t)d.ny * sizeof *direct);
      assert_true(pw && direct);
      tb_gemm_epilogue ep = {.act = cc.relu ? 1 : 0};
      assert_true(tb_conv_direct_run(impl, &d.g, pw, d.x, d.b, d.r, &ep, direct, NULL));
      char what[200];
      snprintf(what, sizeof what, "%s %s", c->what, fused ? "FusedConv" : "Conv");
      for (int mode = 0; mode < 4; mode++) { /* prepared 1 thread, prepared pool, per run 1 thread, per run pool */
        tb_tensor *got = entry_run(&t, k, mode < 2, mode % 2 ? pool2 : NULL);
        const float *gf = tb_tensor_host_data(got);
        assert_close_to(gf, rf, d.ny, what, "direct");
        if (memcmp(gf, direct, (size_t)d.ny * sizeof *gf) != 0)
          fail_msg("%s: the level-3 entry (mode %d) did not give tb_conv_direct_run's bits", what, mode);
        tb_tensor_destroy(got);
      }
      tconv_conv_algo = TB_CONV_ALGO_GEMM;
      for (int mode = 0; mode < 2; mode++) {
        tb_tensor *got = entry_run(&t, k, mode == 0, pool2);
        assert_close_to(tb_tensor_host_data(got), rf, d.ny, what, "conv_algo gemm");
        tb_tensor_destroy(got);
      }
      tconv_conv_algo = TB_CONV_ALGO_DIRECT;
      free(direct);
      tb_conv_direct_free(pw);
      tb_tensor_destroy(ref);
      toh_teardown(&t);
      d.r = r_saved;
    }
    net_data_free(&d);
  }
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(make_source_rounds_and_pads),
      cmocka_unit_test(make_source_matches_tb_convert_bits),
      cmocka_unit_test(pack_weights_layout),
      cmocka_unit_test(make_source_taps_pairs_neighbours),
      cmocka_unit_test(pack_weights_taps_layout),
      cmocka_unit_test(tap_pairs_chosen),
      cmocka_unit_test(micro_kernels_match_double_sum),
      cmocka_unit_test(tile_shapes_available),
      cmocka_unit_test(driver_matches_double_reference),
      cmocka_unit_test(driver_declines_with_reasons),
      cmocka_unit_test(level3_entries_direct_on_and_off),
  };
  return cmocka_run_group_tests(tests, make_pools, free_pools);
}
