/* The grouped direct convolution (src/backend/cpu/kernels/fast/conv/conv_grouped*.c) called directly on
 * every path this CPU has that has it (AVX2+FMA, AVX-512; the portable path has none) against a
 * double-precision direct convolution: ResNeXt- and RegNet-like groups (4 to 32 channels per group), 3x3 /
 * 5x5 / 1x7 kernels and a strided 1x1, strides 1, 2 and 3 (the phase-split source), dilation 2, symmetric,
 * asymmetric and no pads, rows one vector wide or narrower up to wider than one tile (1 to 4 vectors and
 * a partial last one), 1-D, batch 2, no bias; a residual with each activation (Relu, LeakyRelu, Clip in the
 * kernel; the others are the caller's, applied here as conv_fast.c applies them); one thread and a
 * 3-thread pool with the same bits. Every output element is checked (the buffer starts as NaN, so an
 * unwritten one fails) and the floats after the output stay untouched. What the kernel takes
 * (tb_conv_grouped_fits) and refuses, with its reasons. Through the Conv entries (prepared with W constant,
 * X's shape known and not, and per run) the same values as the level-0 reference.
 * Tolerance: |got - ref| <= 3e-5 * (sum over terms |w x| + |bias| + |residual|) + 1e-6 after the activation
 * (slopes at most 1.5): fp32 sums of at most a few hundred products in any order stay near 1e-7 of that
 * sum, while a wrong tap, pad, group or channel is off by a whole term. */
#include <math.h>
#include "backend/cpu/kernels/fast/conv/conv_fast.h"
#include "backend/cpu/kernels/fast/conv/conv_grouped.h"
#include "backend/cpu/kernels/fast/gemm/gemm_f32.h"
#include "core/convert_features.h"
#include "core/threadpool.h"
#include "test_conv_util.h"
#include "test_op_harness.h"
#include "test_tensor_util.h"

extern const tb_kernel tb_kernel_conv_f32_avx512, tb_kernel_conv_f32_avx2, tb_kernel_fused_conv_f32_avx512,
    tb_kernel_fused_conv_f32_avx2, tb_kernel_conv, tb_kernel_fused_conv;

static tb_pool *pool3;
static const char *const path_names[] = {"portable", "avx2", "avx512"};

static int n_paths(void) { return (int)tb_gemm_path_for(tb_convert_hardware_features()) + 1; }

typedef struct grp_case {
  const char *what;
  int64_t batch, c, m, group, ih, iw, kh, kw, sh, sw, dh, dw;
  int64_t pads[4]; /* top, left, bottom, right */
  bool bias;
} grp_case;

static const grp_case cases[] = {
    {"ResNeXt 32 x 4, 3x3, 56 wide", 1, 128, 128, 32, 6, 56, 3, 3, 1, 1, 1, 1, {1, 1, 1, 1}, true},
    {"ResNeXt 32 x 8, 3x3 stride 2", 1, 256, 256, 32, 9, 30, 3, 3, 2, 2, 1, 1, {1, 1, 1, 1}, true},
    {"16 per group, 14 wide", 2, 64, 64, 4, 14, 14, 3, 3, 1, 1, 1, 1, {1, 1, 1, 1}, true},
    {"32 per group, 28 wide", 1, 64, 64, 2, 5, 28, 3, 3, 1, 1, 1, 1, {1, 1, 1, 1}, false},
    {"8 in -> 4 out per group", 1, 24, 12, 3, 7, 20, 3, 3, 1, 1, 1, 1, {1, 1, 1, 1}, true},
    {"2 in -> 8 out per group", 1, 6, 24, 3, 6, 17, 3, 3, 1, 1, 1, 1, {1, 1, 1, 1}, true},
    {"1x1 stride 2, 3 groups", 1, 48, 12, 3, 9, 57, 1, 1, 2, 2, 1, 1, {0, 0, 0, 0}, true},
    {"5x5 stride 3 asymmetric", 1, 8, 8, 2, 19, 61, 5, 5, 3, 3, 1, 1, {0, 2, 1, 0}, true},
    {"3x3 dilation 2", 1, 16, 16, 4, 12, 33, 3, 3, 1, 1, 2, 2, {2, 2, 2, 2}, true},
    {"1x7 kernel 130 wide (three tiles)", 1, 8, 8, 2, 3, 130, 1, 7, 1, 1, 1, 1, {0, 3, 0, 3}, true},
    {"no pads 65 wide", 2, 8, 16, 2, 4, 67, 3, 3, 1, 1, 1, 1, {0, 0, 0, 0}, false},
    {"stride 2 one row of output", 1, 8, 8, 2, 2, 41, 3, 3, 2, 2, 1, 1, {0, 1, 0, 1}, true},
    {"1-D k3 (one row)", 1, 12, 8, 2, 1, 45, 1, 3, 1, 1, 1, 1, {0, 1, 0, 1}, true},
};

static tb_conv_geom geom_of(const grp_case *c) {
  tb_conv_geom g = {.spatial = 2, .batch = c->batch, .in_c = c->c, .out_c = c->m, .group = c->group, .ih = c->ih,
                    .iw = c->iw, .kh = c->kh, .kw = c->kw, .sh = c->sh, .sw = c->sw, .dh = c->dh, .dw = c->dw,
                    .ph = c->pads[0], .pw = c->pads[1]};
  g.oh = (g.ih + c->pads[0] + c->pads[2] - g.dh * (g.kh - 1) - 1) / g.sh + 1;
  g.ow = (g.iw + c->pads[1] + c->pads[3] - g.dw * (g.kw - 1) - 1) / g.sw + 1;
  return g;
}

/* ref[i] = bias + conv + residual in double; mag[i] = the sum of the magnitudes of its terms. */
static void reference(const tb_conv_geom *g, const float *x, const float *w, const float *bias, const float *res,
                      double *ref, double *mag) {
  int64_t cg = g->in_c / g->group, mg = g->out_c / g->group;
  for (int64_t b = 0; b < g->batch; b++)
    for (int64_t m = 0; m < g->out_c; m++)
      for (int64_t oy = 0; oy < g->oh; oy++)
        for (int64_t ox = 0; ox < g->ow; ox++) {
          int64_t o = ((b * g->out_c + m) * g->oh + oy) * g->ow + ox;
          double s = bias ? bias[m] : 0.0, a = bias ? fabs(bias[m]) : 0.0;
          for (int64_t c = 0; c < cg; c++)
            for (int64_t ky = 0; ky < g->kh; ky++)
              for (int64_t kx = 0; kx < g->kw; kx++) {
                int64_t iy = oy * g->sh - g->ph + ky * g->dh, ix = ox * g->sw - g->pw + kx * g->dw;
                if (iy < 0 || iy >= g->ih || ix < 0 || ix >= g->iw) continue;
                double t = (double)w[((m * cg + c) * g->kh + ky) * g->kw + kx] *
                           x[((b * g->in_c + m / mg * cg + c) * g->ih + iy) * g->iw + ix];
                s += t;
                a += fabs(t);
              }
          if (res) s += res[o], a += fabs(res[o]);
          ref[o] = s;
          mag[o] = a;
        }
}

enum { GUARD = 64 };

/* Case c on path p with pool and activation ep (residual when with_res); every output checked; y1 (ny
 * floats, may be NULL) receives the output. */
static void check(const grp_case *c, int p, tb_pool *pool, const tb_gemm_epilogue *ep, bool with_res, float *y1) {
  tb_conv_geom g = geom_of(c);
  const tb_conv_grouped_impl *impl = tb_conv_grouped_for((tb_gemm_path)p);
  char why[160] = "";
  if (!tb_conv_grouped_fits(impl, &g, why, sizeof why)) fail_msg("%s on %s: not taken: %s", c->what, path_names[p], why);
  int64_t cg = g.in_c / g.group, nx = g.batch * g.in_c * g.ih * g.iw, nw = g.out_c * cg * g.kh * g.kw;
  int64_t ny = g.batch * g.out_c * g.oh * g.ow;
  float *x = malloc((size_t)nx * sizeof *x), *w = malloc((size_t)nw * sizeof *w), *bias = malloc((size_t)g.out_c * sizeof *bias);
  float *res = malloc((size_t)ny * sizeof *res), *y = malloc((size_t)(ny + GUARD) * sizeof *y);
  double *ref = malloc((size_t)ny * sizeof *ref), *mag = malloc((size_t)ny * sizeof *mag);
  assert_true(x && w && bias && res && y && ref && mag);
  fill(x, nx, 1 + (uint64_t)nx);
  fill(w, nw, 2 + (uint64_t)nw);
  fill(bias, g.out_c, 3);
  fill(res, ny, 4);
  for (int64_t i = 0; i < ny; i++) y[i] = NAN;
  for (int64_t i = ny; i < ny + GUARD; i++) y[i] = 1234.5f;
  const float *b = c->bias ? bias : NULL, *r = with_res ? res : NULL;
  reference(&g, x, w, b, r, ref, mag);
  tb_conv_grouped_weights *pw = tb_conv_grouped_pack(&g, w);
  assert_non_null(pw);
  assert_true(tb_conv_grouped_run(impl, &g, pw, x, b, r, ep, y, pool));
  tb_conv_grouped_free(pw);
  if (ep->act > 3) /* the caller's: over whole planes after the kernel (conv_fast.c's plane_activation) */
    for (int64_t i = 0; i < g.batch * g.out_c; i++) tb_conv_epilogue_row(ep, NULL, y + i * g.oh * g.ow, g.oh * g.ow);
  for (int64_t i = 0; i < ny; i++) {
    float want = (float)ref[i];
    tb_conv_epilogue_row(ep, NULL, &want, 1);
    double tol = 3e-5 * mag[i] + 1e-6;
    if (!(fabs((double)y[i] - want) <= tol))
      fail_msg("%s on %s (%d threads, act %d%s): output %lld (channel %lld, row %lld, column %lld) is %.9g, expected "
               "%.9g", c->what, path_names[p], tb_pool_threads(pool), ep->act, with_res ? ", residual" : "", (long long)i,
               (long long)(i / (g.oh * g.ow) % g.out_c), (long long)(i / g.ow % g.oh), (long long)(i % g.ow), y[i], want);
  }
  for (int64_t i = ny; i < ny + GUARD; i++)
    if (y[i] != 1234.5f) fail_msg("%s on %s: wrote past the output (element %lld)", c->what, path_names[p], (long long)i);
  if (y1) memcpy(y1, y, (size_t)ny * sizeof *y);
  free(x), free(w), free(bias), free(res), free(y), free(ref), free(mag);
}

static const tb_gemm_epilogue plain_ep = {0};

/* Every case on every path with the kernel, on one thread and on the pool, with the same bits. */
static void every_case_on_every_path(void **state) {
  (void)state;
  for (int p = TB_GEMM_AVX2; p < n_paths(); p++)
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
      tb_conv_geom g = geom_of(&cases[i]);
      size_t ny = (size_t)(g.batch * g.out_c * g.oh * g.ow);
      float *y1 = malloc(ny * sizeof *y1), *y3 = malloc(ny * sizeof *y3);
      assert_true(y1 && y3);
      check(&cases[i], p, NULL, &plain_ep, false, y1);
      check(&cases[i], p, pool3, &plain_ep, false, y3);
      if (memcmp(y1, y3, ny * sizeof *y1) != 0) fail_msg("%s on %s: 3 threads differ from 1", cases[i].what, path_names[p]);
      free(y1), free(y3);
    }
}

/* Each activation with and without a residual. */
static void residual_and_each_activation(void **state) {
  (void)state;
  const tb_gemm_epilogue epilogues[] = {
      {.act = 0}, {.act = 1}, {.act = 2, .act_alpha = 0.1f}, {.act = 3, .act_min = -0.3f, .act_max = 0.4f},
      {.act = 4}, {.act = 5}, {.act = 6, .act_alpha = 0.2f, .act_beta = 0.5f}, {.act = 7}};
  const grp_case *picks[] = {&cases[0], &cases[1], &cases[4], &cases[9]};
  for (int p = TB_GEMM_AVX2; p < n_paths(); p++)
    for (size_t k = 0; k < sizeof picks / sizeof picks[0]; k++)
      for (size_t a = 0; a < sizeof epilogues / sizeof epilogues[0]; a++) {
        check(picks[k], p, NULL, &epilogues[a], true, NULL);
        check(picks[k], p, pool3, &epilogues[a], a % 2 == 0, NULL);
      }
}

/* What it takes: groups of several channels, multiples of 4 up to 32 per group, rows not much narrower
 * than a vector; the portable path has none. */
static void what_it_takes(void **state) {
  (void)state;
  assert_null(tb_conv_grouped_for(TB_GEMM_PORTABLE));
  tb_conv_geom base = geom_of(&cases[0]);
  char why[160];
  for (int p = TB_GEMM_AVX2; p < n_paths(); p++) {
    const tb_conv_grouped_impl *impl = tb_conv_grouped_for((tb_gemm_path)p);
    assert_non_null(impl);
    assert_true(tb_conv_grouped_fits(impl, &base, why, sizeof why));
    tb_conv_geom g = base;
    g.group = 1;
    assert_false(tb_conv_grouped_fits(impl, &g, why, sizeof why));
    assert_non_null(strstr(why, "1 groups of 128 -> 128 channels"));
    g = base, g.out_c = g.in_c = 128, g.group = 128; /* depthwise */
    assert_false(tb_conv_grouped_fits(impl, &g, why, sizeof why));
    g = base, g.out_c = 96; /* 3 per group */
    assert_false(tb_conv_grouped_fits(impl, &g, why, sizeof why));
    assert_non_null(strstr(why, "3 output channels per group (takes multiples of 4 up to 32)"));
    g = base, g.out_c = 36 * 32; /* 36 per group */
    assert_false(tb_conv_grouped_fits(impl, &g, why, sizeof why));
    g = base, g.kh = g.kw = 1, g.ph = g.pw = 0; /* 1x1 stride 1 unpadded: the GEMM per group */
    assert_false(tb_conv_grouped_fits(impl, &g, why, sizeof why));
    assert_non_null(strstr(why, "a plain GEMM per group on X"));
    g = base, g.sw = 5;
    assert_false(tb_conv_grouped_fits(impl, &g, why, sizeof why));
    assert_non_null(strstr(why, "stride 5"));
    g = base, g.ow = impl->lanes - 3;
    assert_false(tb_conv_grouped_fits(impl, &g, why, sizeof why));
    assert_non_null(strstr(why, "output rows of"));
  }
}

/* Through the Conv and FusedConv entries (the driver's choice, the prepared and per-run weights, the
 * plane activation): the level-0 reference's values, under conv_algo auto; conv_algo gemm leaves it. */
static void conv_entries_take_it(void **state) {
  (void)state;
  static const conv_case ccases[] = {
      {"grouped 3x3 8 groups of 4", 1, 32, 9, 30, 32, 3, 3, 8, 1, 1, {1, 1, 1, 1}, NULL, true},
      {"grouped 3x3 stride 2 2 groups of 16", 2, 32, 11, 33, 32, 3, 3, 2, 2, 1, {1, 1, 1, 1}, NULL, true},
      {"grouped 1x1 3 groups 8 -> 4 (a GEMM per group)", 1, 24, 6, 20, 12, 1, 1, 3, 1, 1, {0}, NULL, false},
  };
  const tb_kernel *conv[] = {NULL, &tb_kernel_conv_f32_avx2, &tb_kernel_conv_f32_avx512};
  const tb_kernel *fused[] = {NULL, &tb_kernel_fused_conv_f32_avx2, &tb_kernel_fused_conv_f32_avx512};
  for (size_t i = 0; i < sizeof ccases / sizeof ccases[0]; i++)
    for (int f = 0; f < 2; f++) {
      const act_case *act = f ? &acts[7] : &no_act; /* HardSwish: the plane activation after the kernel */
      toh t;
      setup(&t, f != 0, &ccases[i], act, f != 0);
      make_inputs(&t, &ccases[i], 11 + i);
      tb_tensor *ref = NULL;
      if (f) {
        int64_t ys[4] = {ccases[i].batch, ccases[i].m, ccases[i].h, ccases[i].w};
        if (ccases[i].stride == 2) ys[2] = (ys[2] + 1) / 2, ys[3] = (ys[3] + 1) / 2;
        t.in[3] = random_tensor(&t, 4, ys, 99);
      }
      ref = tconv_run_kernel(&t, f ? &tb_kernel_fused_conv : &tb_kernel_conv, TCONV_PREP_NONE, false, NULL);
      for (int p = TB_GEMM_AVX2; p < n_paths(); p++)
        for (int mode = 0; mode < 4; mode++) {
          tconv_conv_algo = mode == 3 ? TB_CONV_ALGO_GEMM : TB_CONV_ALGO_AUTO;
          tconv_prep prep = mode == 2 ? TCONV_PREP_NO_W : TCONV_PREP_CONST_W;
          tb_tensor *got = tconv_run_kernel(&t, f ? fused[p] : conv[p], prep, mode == 1, mode == 2 ? pool3 : NULL);
          const float *gv = tb_tensor_host_data(got), *rv = tb_tensor_host_data(ref);
          for (int64_t e = 0; e < tb_tensor_numel(ref); e++)
            if (!(fabs((double)gv[e] - rv[e]) <= 1e-4 + 1e-4 * fabs((double)rv[e])))
              fail_msg("%s%s on %s, mode %d: element %lld is %.9g, reference %.9g", ccases[i].what, f ? " fused" : "",
                       path_names[p], mode, (long long)e, gv[e], rv[e]);
          tb_tensor_destroy(got);
        }
      tconv_conv_algo = 0;
      tb_tensor_destroy(ref);
      toh_teardown(&t);
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
      cmocka_unit_test(what_it_takes),
      cmocka_unit_test(conv_entries_take_it),
  };
  return cmocka_run_group_tests(tests, group_setup, group_teardown);
}
