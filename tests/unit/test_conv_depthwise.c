/* The depthwise convolution (src/backend/cpu/kernels/fast/conv/conv_depthwise*.c) called directly, through
 * its cost rule, on the row kernels alone and on the channels-in-lanes kernels alone, on every
 * path this CPU has (portable always; AVX2+FMA and AVX-512 when cpuid shows them, so the TB_CPU_FEATURES
 * mask and qemu's Haswell in scripts/test_isa.sh leave the narrower ones) against a double-precision direct
 * convolution: kernels 3x3, 5x5, 7x7 and 1xN / Nx1 / 17 rows; strides 1, 2, 3 (the phase-split rows);
 * dilations 2 and 3; symmetric, asymmetric, end-only pads and pads wider than the kernel's reach (whole rows
 * and columns of padding); 1xN and Nx1 inputs; rows wider and narrower than one vector block (7, 14, 16,
 * 17, 33, 112 columns) and row counts that leave 1..7 rows for the last block; channel multipliers 2 and 3;
 * batch 2; no bias; a residual with each activation; the small maps of MobileNetV3 and EfficientNet (7x7
 * and 14x14, 3x3 and 5x5, strides 1 and 2) with channel counts that leave 1..15 channels in the last block
 * of lanes and maps whose pixel count leaves a partial last vector (the masked transposes), inputs wider
 * and taller than the output reads; one thread, a 3-thread pool (jobs split into row blocks when the
 * channels are few) and a plane tall enough that its rows are staged in several jobs. The cost rule's
 * choices are pinned by shape.
 * Every output element is checked (the buffer starts as NaN, so an unwritten one fails) and the floats
 * after the output stay untouched.
 * Tolerance: |got - ref| <= 3e-5 * (sum over taps |w x| + |bias| + |residual|) + 1e-6, the activation applied
 * to the double reference rounded to float (the activations' slopes are at most 1.5, HardSwish's near 3):
 * fp32 sums in any order of at most 81 products stay near 1e-7 of that sum, while a wrong tap, pad or
 * channel is off by a whole term. */
#include <math.h>
#include "backend/cpu/kernels/fast/conv/conv_depthwise.h"
#include "backend/cpu/kernels/fast/conv/conv_depthwise_lanes.h"
#include "backend/cpu/kernels/fast/conv/conv_fast.h"
#include "backend/cpu/kernels/fast/gemm/gemm_f32.h"
#include "core/convert_features.h"
#include "core/threadpool.h"
#include "test_conv_util.h"
#include "test_op_harness.h"
#include "test_tensor_util.h"

static tb_pool *pool3;
static const char *const path_names[] = {"portable", "avx2", "avx512"};

static int n_paths(void) { return (int)tb_gemm_path_for(tb_convert_hardware_features()) + 1; }

typedef struct dw_case {
  const char *what;
  int64_t batch, c, mult, ih, iw, kh, kw, sh, sw, dh, dw;
  int64_t pads[4]; /* top, left, bottom, right */
  bool bias;
} dw_case;

static const dw_case cases[] = {
    {"3x3 s1 112 wide", 1, 3, 1, 21, 112, 3, 3, 1, 1, 1, 1, {1, 1, 1, 1}, true},
    {"3x3 s2 112 wide", 1, 3, 1, 23, 112, 3, 3, 2, 2, 1, 1, {1, 1, 1, 1}, true},
    {"3x3 s2 odd, pad 0 1", 1, 2, 1, 17, 33, 3, 3, 2, 2, 1, 1, {0, 0, 1, 1}, true},
    {"5x5 s1 14 wide", 1, 4, 1, 14, 14, 5, 5, 1, 1, 1, 1, {2, 2, 2, 2}, true},
    {"5x5 s2 28 -> 14", 1, 4, 1, 28, 28, 5, 5, 2, 2, 1, 1, {2, 2, 2, 2}, false},
    {"5x5 s1 7x7", 2, 3, 1, 7, 7, 5, 5, 1, 1, 1, 1, {2, 2, 2, 2}, true},
    {"7x7 s1 56 wide", 1, 2, 1, 19, 56, 7, 7, 1, 1, 1, 1, {3, 3, 3, 3}, true},
    {"7x7 s1 7x7", 1, 3, 1, 7, 7, 7, 7, 1, 1, 1, 1, {3, 3, 3, 3}, true},
    {"7x7 s2 odd", 1, 2, 1, 15, 35, 7, 7, 2, 2, 1, 1, {3, 3, 3, 3}, true},
    {"3x3 s1 16 wide, 9 rows", 1, 2, 1, 9, 16, 3, 3, 1, 1, 1, 1, {1, 1, 1, 1}, true},
    {"3x3 s1 17 wide, 13 rows", 1, 2, 1, 13, 17, 3, 3, 1, 1, 1, 1, {1, 1, 1, 1}, true},
    {"3x3 dilation 2", 1, 3, 1, 20, 30, 3, 3, 1, 1, 2, 2, {2, 2, 2, 2}, true},
    {"3x3 dilation 3 stride 2", 1, 2, 1, 25, 41, 3, 3, 2, 2, 3, 3, {3, 3, 3, 3}, true},
    {"5x5 dilation 2 rows 3 cols", 1, 2, 1, 18, 22, 5, 5, 1, 1, 2, 3, {4, 6, 4, 6}, false},
    {"3x3 stride 3 asymmetric", 1, 3, 1, 13, 35, 3, 3, 3, 3, 1, 1, {0, 2, 1, 0}, true},
    {"3x3 stride 1x2", 1, 2, 1, 11, 30, 3, 3, 1, 2, 1, 1, {1, 1, 1, 1}, true},
    {"pads wider than the kernel's reach", 1, 2, 1, 3, 3, 5, 5, 1, 1, 1, 1, {6, 7, 6, 5}, true},
    {"pads wider, stride 2", 1, 2, 1, 5, 6, 3, 3, 2, 2, 1, 1, {4, 5, 4, 3}, true},
    {"1xN input 3x3 pad 1", 1, 4, 1, 1, 40, 3, 3, 1, 1, 1, 1, {1, 1, 1, 1}, true},
    {"1xN input 1x5 stride 2", 2, 3, 1, 1, 50, 1, 5, 1, 2, 1, 1, {0, 2, 0, 2}, true},
    {"Nx1 input 3x3 pad 1", 1, 3, 1, 30, 1, 3, 3, 1, 1, 1, 1, {1, 1, 1, 1}, true},
    {"1x7 kernel", 1, 2, 1, 6, 45, 1, 7, 1, 1, 1, 1, {0, 3, 0, 3}, true},
    {"7x1 kernel", 1, 2, 1, 30, 20, 7, 1, 1, 1, 1, 1, {3, 0, 3, 0}, true},
    {"17 kernel rows", 1, 3, 1, 20, 9, 17, 3, 1, 1, 1, 1, {8, 1, 8, 1}, false},
    {"no pads 3x3 35 wide", 2, 3, 1, 5, 35, 3, 3, 1, 1, 1, 1, {0, 0, 0, 0}, true},
    {"multiplier 2, 3x3", 1, 3, 2, 10, 21, 3, 3, 1, 1, 1, 1, {1, 1, 1, 1}, true},
    {"multiplier 3, 5x5 stride 2", 2, 2, 3, 12, 19, 5, 5, 2, 2, 1, 1, {2, 2, 2, 2}, true},
    {"tall plane (rows staged in several jobs)", 1, 1, 1, 420, 230, 3, 3, 1, 1, 1, 1, {1, 1, 1, 1}, true},
    {"MobileNetV3 5x5 7x7, 37 channels", 1, 37, 1, 7, 7, 5, 5, 1, 1, 1, 1, {2, 2, 2, 2}, true},
    {"EfficientNet 3x3 7x7, 20 channels", 2, 20, 1, 7, 7, 3, 3, 1, 1, 1, 1, {1, 1, 1, 1}, true},
    {"3x3 14x14, 33 channels", 1, 33, 1, 14, 14, 3, 3, 1, 1, 1, 1, {1, 1, 1, 1}, true},
    {"5x5 14x14, 24 channels", 1, 24, 1, 14, 14, 5, 5, 1, 1, 1, 1, {2, 2, 2, 2}, false},
    {"5x5 s2 14 -> 7, 17 channels", 1, 17, 1, 14, 14, 5, 5, 2, 2, 1, 1, {2, 2, 2, 2}, true},
    {"3x3 s2 28 -> 14, 31 channels", 1, 31, 1, 28, 28, 3, 3, 2, 2, 1, 1, {1, 1, 1, 1}, true},
    {"3x3 s2 odd 15 -> 8, 16 channels", 1, 16, 1, 15, 15, 3, 3, 2, 2, 1, 1, {1, 1, 1, 1}, true},
    {"7x7 14x14, 19 channels", 1, 19, 1, 14, 14, 7, 7, 1, 1, 1, 1, {3, 3, 3, 3}, true},
    {"7x7 s2 9 wide, 9 channels", 1, 9, 1, 11, 9, 7, 7, 2, 2, 1, 1, {3, 3, 3, 3}, true},
    {"5x5 dilation 2 10x12, 18 channels", 1, 18, 1, 10, 12, 5, 5, 1, 1, 2, 2, {4, 4, 4, 4}, true},
    {"3x5 kernel stride 2x1, 21 channels", 1, 21, 1, 9, 11, 3, 5, 2, 1, 1, 1, {1, 2, 0, 2}, true},
    {"multiplier 2, 3x3 7x7, 12 channels", 1, 12, 2, 7, 7, 3, 3, 1, 1, 1, 1, {1, 1, 1, 1}, true},
    {"5x5 s1 3x5 map, 40 channels", 1, 40, 1, 3, 5, 5, 5, 1, 1, 1, 1, {2, 2, 2, 2}, true},
    /* lanes at stride 1 on rows of 7k pixels take two output rows at a time on AVX2 and AVX-512: an odd row
     * count leaves one for the single-row block; 8-pixel tiles of the transposes inside a row and across
     * rows (28 and 21 wide) */
    {"5x5 s1 27x28, 13 channels (row pairs, one left)", 1, 13, 1, 27, 28, 5, 5, 1, 1, 1, 1, {2, 2, 2, 2}, true},
    {"3x3 s1 9x21, 11 channels", 2, 11, 1, 9, 21, 3, 3, 1, 1, 1, 1, {1, 1, 1, 1}, true},
    {"7x7 s1 5x14, 9 channels", 1, 9, 1, 5, 14, 7, 7, 1, 1, 1, 1, {3, 3, 3, 3}, true},
    {"1x1 stride 3, unread rows and columns", 1, 18, 1, 9, 42, 1, 1, 3, 3, 1, 1, {0, 0, 0, 0}, true},
    /* row stride 2 stages jobs of 8 output rows (conv_depthwise.c, STAGE_FLOATS_STRIDED): 7 jobs a plane,
     * and 3 with a short last one (23 output rows); 5x5 with input rows shared by neighbouring jobs */
    {"3x3 s2 112x112 (jobs of 8 output rows)", 1, 3, 1, 112, 112, 3, 3, 2, 2, 1, 1, {1, 1, 1, 1}, true},
    {"3x3 s2 45x60 (a short last job)", 2, 2, 1, 45, 60, 3, 3, 2, 2, 1, 1, {1, 1, 1, 1}, true},
    {"5x5 s2 56x56 (staged rows shared by jobs)", 1, 2, 1, 56, 56, 5, 5, 2, 2, 1, 1, {2, 2, 2, 2}, true},
};

/* The driver's choice, the row kernels alone and the channels-in-lanes kernels alone. */
typedef bool (*dw_run_fn)(tb_gemm_path, const tb_conv_geom *, const float *, const float *, const float *,
                          const float *, const tb_gemm_epilogue *, float *, tb_pool *);
static const dw_run_fn methods[] = {tb_conv_depthwise_run, tb_conv_depthwise_rows_run, tb_conv_depthwise_lanes_run};
static const char *const method_names[] = {"cost rule", "rows", "lanes"};
enum { N_METHODS = 3 };

static tb_conv_geom geom_of(const dw_case *c) {
  tb_conv_geom g = {.spatial = 2, .batch = c->batch, .in_c = c->c, .out_c = c->c * c->mult, .group = c->c,
                    .ih = c->ih, .iw = c->iw, .kh = c->kh, .kw = c->kw, .sh = c->sh, .sw = c->sw, .dh = c->dh,
                    .dw = c->dw, .ph = c->pads[0], .pw = c->pads[1]};
  g.oh = (g.ih + c->pads[0] + c->pads[2] - g.dh * (g.kh - 1) - 1) / g.sh + 1;
  g.ow = (g.iw + c->pads[1] + c->pads[3] - g.dw * (g.kw - 1) - 1) / g.sw + 1;
  return g;
}

/* ref[i] = bias + conv + residual in double; mag[i] = the sum of the magnitudes of its terms. */
static void reference(const tb_conv_geom *g, const float *x, const float *w, const float *bias, const float *res,
                      double *ref, double *mag) {
  int64_t mult = g->out_c / g->in_c;
  for (int64_t b = 0; b < g->batch; b++)
    for (int64_t m = 0; m < g->out_c; m++)
      for (int64_t oy = 0; oy < g->oh; oy++)
        for (int64_t ox = 0; ox < g->ow; ox++) {
          int64_t o = ((b * g->out_c + m) * g->oh + oy) * g->ow + ox;
          double s = bias ? bias[m] : 0.0, a = bias ? fabs(bias[m]) : 0.0;
          for (int64_t ky = 0; ky < g->kh; ky++)
            for (int64_t kx = 0; kx < g->kw; kx++) {
              int64_t iy = oy * g->sh - g->ph + ky * g->dh, ix = ox * g->sw - g->pw + kx * g->dw;
              if (iy < 0 || iy >= g->ih || ix < 0 || ix >= g->iw) continue;
              double t = (double)w[m * g->kh * g->kw + ky * g->kw + kx] *
                         x[((b * g->in_c + m / mult) * g->ih + iy) * g->iw + ix];
              s += t;
              a += fabs(t);
            }
          if (res) s += res[o], a += fabs(res[o]);
          ref[o] = s;
          mag[o] = a;
        }
}

enum { GUARD = 64 };

/* Case c on path p by method m with pool and activation ep (residual when with_res); every output checked. */
static void check(const dw_case *c, int p, int m, tb_pool *pool, const tb_gemm_epilogue *ep, bool with_res) {
  tb_conv_geom g = geom_of(c);
  int64_t nx = g.batch * g.in_c * g.ih * g.iw, nw = g.out_c * g.kh * g.kw, ny = g.batch * g.out_c * g.oh * g.ow;
  float *x = malloc((size_t)nx * sizeof *x), *w = malloc((size_t)nw * sizeof *w), *bias = malloc((size_t)g.out_c * sizeof *bias);
  float *res = malloc((size_t)ny * sizeof *res), *y = malloc((size_t)(ny + GUARD) * sizeof *y);
  double *ref = malloc((size_t)ny * sizeof *ref), *mag = malloc((size_t)ny * sizeof *mag);
  assert_true(x && w && bias && res && y && ref && mag);
  fill(x, nx, 1 + (uint64_t)nx);
  fill(w, nw, 2 + (uint64_t)nw);
  fill(bias, g.out_c, 3);
  fill(res, ny, 4);
  for (int64_t i = 0; i < ny + GUARD; i++) y[i] = NAN;
  for (int64_t i = ny; i < ny + GUARD; i++) y[i] = 1234.5f;
  const float *b = c->bias ? bias : NULL, *r = with_res ? res : NULL;
  reference(&g, x, w, b, r, ref, mag);
  assert_true(methods[m]((tb_gemm_path)p, &g, x, w, b, r, ep, y, pool));
  for (int64_t i = 0; i < ny; i++) {
    float want = (float)ref[i];
    tb_conv_epilogue_row(ep, NULL, &want, 1);
    double tol = 3e-5 * mag[i] + 1e-6;
    if (!(fabs((double)y[i] - want) <= tol))
      fail_msg("%s on %s, %s (%d threads, act %d%s): output %lld (channel %lld, row %lld, column %lld) is %.9g, "
               "expected %.9g", c->what, path_names[p], method_names[m], tb_pool_threads(pool), ep->act, with_res ? ", residual" : "", (long long)i,
               (long long)(i / (g.oh * g.ow) % g.out_c), (long long)(i / g.ow % g.oh), (long long)(i % g.ow), y[i], want);
  }
  for (int64_t i = ny; i < ny + GUARD; i++)
    if (y[i] != 1234.5f)
      fail_msg("%s on %s, %s: wrote past the output (element %lld)", c->what, path_names[p], method_names[m], (long long)i);
  free(x), free(w), free(bias), free(res), free(y), free(ref), free(mag);
}

static const tb_gemm_epilogue plain_ep = {0};

static void every_case_on_every_path(void **state) {
  (void)state;
  for (int p = 0; p < n_paths(); p++)
    for (int m = 0; m < N_METHODS; m++)
      for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        check(&cases[i], p, m, NULL, &plain_ep, false);
        check(&cases[i], p, m, pool3, &plain_ep, false);
      }
}

/* Each activation with and without a residual (the residual added in the kernel, the activation on the
 * rows after it). */
static void residual_and_each_activation(void **state) {
  (void)state;
  const tb_gemm_epilogue epilogues[] = {
      {.act = 0}, {.act = 1}, {.act = 2, .act_alpha = 0.1f}, {.act = 3, .act_min = -0.3f, .act_max = 0.4f},
      {.act = 4}, {.act = 5}, {.act = 6, .act_alpha = 0.2f, .act_beta = 0.5f}, {.act = 7}};
  const size_t n_cases = sizeof cases / sizeof cases[0];
  const dw_case *picks[] = {&cases[0], &cases[1], &cases[5], &cases[13], &cases[25], &cases[28], &cases[32],
                            &cases[41], &cases[n_cases - 3], &cases[n_cases - 2]};
  for (int p = 0; p < n_paths(); p++)
    for (int m = 0; m < N_METHODS; m++)
      for (size_t k = 0; k < sizeof picks / sizeof picks[0]; k++)
        for (size_t a = 0; a < sizeof epilogues / sizeof epilogues[0]; a++) {
          check(picks[k], p, m, NULL, &epilogues[a], true);
          check(picks[k], p, m, pool3, &epilogues[a], a % 2 == 0);
        }
}

/* The pool's row blocks give the bits of one thread (each output is one job's, summed in one order). */
static void threads_give_the_same_bits(void **state) {
  (void)state;
  for (int p = 0; p < n_paths(); p++)
    for (int m = 0; m < N_METHODS; m++)
      for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        tb_conv_geom g = geom_of(&cases[i]);
        int64_t nx = g.batch * g.in_c * g.ih * g.iw, nw = g.out_c * g.kh * g.kw, ny = g.batch * g.out_c * g.oh * g.ow;
        float *x = malloc((size_t)nx * sizeof *x), *w = malloc((size_t)nw * sizeof *w);
        float *y1 = malloc((size_t)ny * sizeof *y1), *y3 = malloc((size_t)ny * sizeof *y3);
        assert_true(x && w && y1 && y3);
        fill(x, nx, 7);
        fill(w, nw, 8);
        assert_true(methods[m]((tb_gemm_path)p, &g, x, w, NULL, NULL, &plain_ep, y1, NULL));
        assert_true(methods[m]((tb_gemm_path)p, &g, x, w, NULL, NULL, &plain_ep, y3, pool3));
        if (memcmp(y1, y3, (size_t)ny * sizeof *y1) != 0)
          fail_msg("%s on %s, %s: 3 threads differ from 1", cases[i].what, path_names[p], method_names[m]);
        free(x), free(w), free(y1), free(y3);
      }
}

/* The cost rule as docs/performance.md writes it: channels in lanes for MobileNetV3's and EfficientNet's small
 * maps on both vector paths, the row kernels on AVX-512 for maps over 40 columns and 7x7 kernels over 16,
 * for dilated kernels and on the portable path. */
static void cost_rule_picks_by_shape(void **state) {
  (void)state;
  const struct {
    dw_case c;
    bool avx2, avx512;
  } rules[] = {
      {{"960x7x7 5x5", 1, 960, 1, 7, 7, 5, 5, 1, 1, 1, 1, {2, 2, 2, 2}, true}, true, true},
      {{"480x14x14 3x3", 1, 480, 1, 14, 14, 3, 3, 1, 1, 1, 1, {1, 1, 1, 1}, true}, true, true},
      {{"672x14x14 5x5 s2", 1, 672, 1, 14, 14, 5, 5, 2, 2, 1, 1, {2, 2, 2, 2}, true}, true, true},
      {{"240x28x28 5x5", 1, 240, 1, 28, 28, 5, 5, 1, 1, 1, 1, {2, 2, 2, 2}, true}, true, true},
      {{"72x56x56 3x3", 1, 72, 1, 56, 56, 3, 3, 1, 1, 1, 1, {1, 1, 1, 1}, true}, true, false},
      {{"96x40x40 5x5", 1, 96, 1, 40, 40, 5, 5, 1, 1, 1, 1, {2, 2, 2, 2}, true}, true, true},
      {{"64x56x56 5x5", 1, 64, 1, 56, 56, 5, 5, 1, 1, 1, 1, {2, 2, 2, 2}, true}, true, false},
      {{"96x112x112 3x3 s2", 1, 96, 1, 112, 112, 3, 3, 2, 2, 1, 1, {1, 1, 1, 1}, true}, true, false},
      {{"32x112x112 3x3", 1, 32, 1, 112, 112, 3, 3, 1, 1, 1, 1, {1, 1, 1, 1}, true}, false, false},
      {{"384x14x14 7x7", 1, 384, 1, 14, 14, 7, 7, 1, 1, 1, 1, {3, 3, 3, 3}, true}, true, true},
      {{"96x56x56 7x7", 1, 96, 1, 56, 56, 7, 7, 1, 1, 1, 1, {3, 3, 3, 3}, true}, true, false},
      {{"960x32x32 5x5 dilation 2", 1, 960, 1, 32, 32, 5, 5, 1, 1, 2, 2, {4, 4, 4, 4}, true}, false, false},
  };
  for (size_t i = 0; i < sizeof rules / sizeof rules[0]; i++) {
    tb_conv_geom g = geom_of(&rules[i].c);
    if (tb_dwl_wanted(TB_GEMM_PORTABLE, &g)) fail_msg("%s: the portable path picks lanes", rules[i].c.what);
    if (tb_dwl_wanted(TB_GEMM_AVX2, &g) != rules[i].avx2) fail_msg("%s: AVX2 picks the other kernel", rules[i].c.what);
    if (tb_dwl_wanted(TB_GEMM_AVX512, &g) != rules[i].avx512)
      fail_msg("%s: AVX-512 picks the other kernel", rules[i].c.what);
  }
}

static int group_setup(void **state) {
  (void)state;
  tbt_tensor_env();
  return tb_pool_create(3, &pool3) == TB_OK ? 0 : -1;
}

static int group_teardown(void **state) {
  (void)state;
  tb_pool_destroy(pool3);
  return 0;
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(every_case_on_every_path),
      cmocka_unit_test(residual_and_each_activation),
      cmocka_unit_test(threads_give_the_same_bits),
      cmocka_unit_test(cost_rule_picks_by_shape),
  };
  return cmocka_run_group_tests(tests, group_setup, group_teardown);
}
