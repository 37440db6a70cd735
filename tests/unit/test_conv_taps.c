/* The tap GEMM of dilated convolutions (src/backend/cpu/kernels/fast/conv/conv_taps.c) against the level-0
 * reference Conv and tb::FusedConv, through the level-2 entries of every instruction set this CPU has
 * (AVX-512, AVX2, portable): DeepLabV3's ASPP shape at a smaller size (dilations 6, 12 and 20 on a 16x16 map:
 * taps partly inside, and at 20 every tap but the centre outside the map), a 9x13 map whose side taps cut
 * both rows and columns, stride 2 with dilation 5, a 5x5 kernel with asymmetric pads, a 1-D case, groups 2,
 * batch 2, no bias; FusedConv with every activation and a residual. Each entry's output (weights packed at
 * prepare with X's shape known, and per run on a two-thread pool) must be bit-identical to tb_conv_taps_run's
 * (the entry took the tap path) and within tolerance of the reference, as must the entry prepared without
 * X's shape (the cost rule needs it: the direct convolution or the implicit GEMM is packed) and conv_algo
 * gemm (the implicit GEMM). 1, 2 and 3 threads give the same bits. The bf16 entries (portable, AMX
 * emulated, AVX512-BF16) on bf16-valued inputs within the same tolerance. The cost rule (tb_conv_taps_fits):
 * the valid share against its three thresholds, dilation 1, depthwise, a single tap and fewer than 16
 * channels per group.
 * Tolerance: |got - ref| <= 1e-4 |ref| + 1e-4 (inputs in [-1, 1]). */
#include <math.h>
#include "backend/cpu/kernels/fast/conv/conv_taps.h"
#include "backend/cpu/kernels/fast/gemm/gemm_f32.h"
#include "core/convert_features.h"
#include "core/threadpool.h"
#include "test_conv_util.h"
#include "test_op_harness.h"
#include "test_tensor_util.h"
#include "test_util.h"

extern const tb_kernel tb_kernel_conv_f32_avx512, tb_kernel_fused_conv_f32_avx512;
extern const tb_kernel tb_kernel_conv_f32_avx2, tb_kernel_fused_conv_f32_avx2;
extern const tb_kernel tb_kernel_conv_f32_portable, tb_kernel_fused_conv_f32_portable;
extern const tb_kernel tb_kernel_conv, tb_kernel_fused_conv;
extern const tb_kernel tb_kernel_fused_conv_bf16_portable, tb_kernel_fused_conv_bf16_amx_emulated;
extern const tb_kernel tb_kernel_fused_conv_bf16_avx512bf16;

static tb_pool *pool2, *pool3;

/* batch, c, h, w, m, kh, kw, group, stride, dilation, pads, auto_pad, bias */
static const conv_case cases[] = {
    {"ASPP dilation 6", 1, 32, 16, 16, 40, 3, 3, 1, 1, 6, {6, 6, 6, 6}, NULL, true},
    {"ASPP dilation 12", 1, 48, 16, 16, 32, 3, 3, 1, 1, 12, {12, 12, 12, 12}, NULL, true},
    {"ASPP dilation 20 (only the centre tap inside)", 1, 32, 16, 16, 24, 3, 3, 1, 1, 20, {20, 20, 20, 20}, NULL, true},
    {"dilation 4, 9x13", 1, 16, 9, 13, 17, 3, 3, 1, 1, 4, {4, 4, 4, 4}, NULL, true},
    {"stride 2 dilation 5", 1, 20, 15, 17, 30, 3, 3, 1, 2, 5, {5, 5, 5, 5}, NULL, true},
    {"5x5 dilation 3 asymmetric pads", 1, 16, 11, 12, 8, 5, 5, 1, 1, 3, {1, 4, 3, 0}, NULL, true},
    {"1-D k3 dilation 8", 1, 24, 0, 10, 20, 1, 3, 1, 1, 8, {0, 8, 0, 8}, NULL, true},
    {"groups 2", 1, 64, 10, 10, 32, 3, 3, 2, 1, 4, {4, 4, 4, 4}, NULL, true},
    {"batch 2, no bias", 2, 16, 8, 8, 16, 3, 3, 1, 1, 4, {4, 4, 4, 4}, NULL, false},
};

typedef struct entry {
  const char *name;
  tb_gemm_path path;
  const tb_kernel *conv, *fused;
} entry;

static const entry entries[] = {
    {"avx512", TB_GEMM_AVX512, &tb_kernel_conv_f32_avx512, &tb_kernel_fused_conv_f32_avx512},
    {"avx2", TB_GEMM_AVX2, &tb_kernel_conv_f32_avx2, &tb_kernel_fused_conv_f32_avx2},
    {"portable", TB_GEMM_PORTABLE, &tb_kernel_conv_f32_portable, &tb_kernel_fused_conv_f32_portable},
};

/* Whether this CPU (with TB_CPU_FEATURES) runs the entry's instruction set. */
static bool can_run(const entry *e) {
  tb_gemm_path best = tb_gemm_path_for(tb_convert_hardware_features());
  return e->path == TB_GEMM_PORTABLE || (e->path == TB_GEMM_AVX2 && best >= TB_GEMM_AVX2) || best == TB_GEMM_AVX512;
}

static void assert_close(const tb_tensor *got, const tb_tensor *ref, const char *what, const char *how) {
  assert_non_null(got);
  toh_assert_shape(got, tb_tensor_ndim(ref), tb_tensor_shape(ref));
  const float *g = tb_tensor_host_data(got), *r = tb_tensor_host_data(ref);
  for (int64_t i = 0; i < tb_tensor_numel(ref); i++) {
    bool ok = isnan(r[i]) ? isnan(g[i]) : fabs((double)g[i] - r[i]) <= 1e-4 + 1e-4 * fabs((double)r[i]);
    if (!ok) fail_msg("%s (%s): element %lld is %.9g, reference %.9g", what, how, (long long)i, g[i], r[i]);
  }
}

/* tb_conv_taps_run itself on `pool` for the entry's path, into a tensor shaped like `like`; ep from act. */
static tb_tensor *run_taps(toh *t, const entry *e, const act_case *act, const tb_tensor *like, tb_pool *pool) {
  tb_conv_geom g = tconv_geom(t);
  assert_true(tb_conv_taps_fits(&g, TB_CONV_TAPS_MAX_SHARE_VS_DIRECT));
  tb_conv_taps_weights *w = tb_conv_taps_pack(&tb_conv_gemm_f32, e->path, &g, tb_tensor_host_data(t->in[1]));
  assert_non_null(w);
  tb_tensor *y = NULL;
  TB_ASSERT_OK(tb_tensor_create(t->cpu, TB_DTYPE_F32, tb_tensor_ndim(like), tb_tensor_shape(like), &y));
  tb_gemm_epilogue ep = {0};
  if (act->name) {
    static const char *const names[] = {"", "Relu", "LeakyRelu", "Clip", "Sigmoid", "Tanh", "HardSigmoid", "HardSwish"};
    for (int i = 1; i < 8; i++)
      if (strcmp(act->name, names[i]) == 0) ep.act = i;
    ep.act_alpha = act->alpha, ep.act_beta = act->beta, ep.act_min = act->lo, ep.act_max = act->hi;
  }
  const float *bias = t->in[2] ? tb_tensor_host_data(t->in[2]) : NULL;
  const float *res = t->n_in > 3 && t->in[3] ? tb_tensor_host_data(t->in[3]) : NULL;
  assert_true(tb_conv_taps_run(w, e->path == TB_GEMM_AVX512, &g, tb_tensor_host_data(t->in[0]), bias, res, &ep,
                               tb_tensor_host_data(y), pool));
  tb_conv_taps_free(w);
  return y;
}

/* The case through one entry (prepared with X known, unknown, per run on two threads) against the reference
 * and bit-identical to run_taps; then conv_algo gemm against the reference. */
static void check_case(const conv_case *c, const entry *e, bool fused, const act_case *act, bool residual) {
  toh t;
  setup(&t, fused, c, act, residual);
  make_inputs(&t, c, (uint64_t)(c->m * 5 + c->c + c->dilation));
  if (residual) {
    tb_conv_geom g = tconv_geom(&t);
    int64_t ys[4] = {g.batch, g.out_c, g.oh, g.ow};
    if (g.spatial == 1) ys[2] = g.ow;
    t.in[3] = random_tensor(&t, g.spatial + 2, ys, 77);
  }
  const tb_kernel *k = fused ? e->fused : e->conv;
  tb_tensor *ref = tconv_run_kernel(&t, fused ? &tb_kernel_fused_conv : &tb_kernel_conv, TCONV_PREP_NONE, false, NULL);
  /* activations past Clip are not bit-exact against the entry's vec_ops epilogue: those are checked against
   * the reference only */
  bool exact = !act->name || act - acts <= 3;
  tb_tensor *taps = exact ? run_taps(&t, e, act, ref, NULL) : NULL;
  char what[200];
  snprintf(what, sizeof what, "%s %s%s%s%s%s", c->what, e->name, fused ? " fused" : "", act->name ? " " : "",
           act->name ? act->name : "", residual ? " residual" : "");
  static const char *const hows[] = {"prepared, X known", "prepared, X unknown", "packed per run, 2 threads"};
  tconv_conv_algo = TB_CONV_ALGO_AUTO;
  for (int how = 0; how < 3; how++) {
    tb_tensor *got = tconv_run_kernel(&t, k, how < 2 ? TCONV_PREP_CONST_W : TCONV_PREP_NO_W, how == 0, how == 2 ? pool2 : NULL);
    assert_close(got, ref, what, hows[how]);
    if (taps && how != 1) tconv_assert_same_bits(got, taps, what, hows[how]); /* X unknown: the share is not known */
    tb_tensor_destroy(got);
  }
  tconv_conv_algo = TB_CONV_ALGO_GEMM;
  tb_tensor *gemm = tconv_run_kernel(&t, k, TCONV_PREP_CONST_W, true, NULL);
  assert_close(gemm, ref, what, "conv_algo gemm");
  tb_tensor_destroy(gemm);
  tconv_conv_algo = TB_CONV_ALGO_AUTO;
  tb_tensor_destroy(taps);
  tb_tensor_destroy(ref);
  toh_teardown(&t);
}

static void taps_match_reference(void **state) {
  (void)state;
  for (size_t e = 0; e < sizeof entries / sizeof entries[0]; e++) {
    if (!can_run(&entries[e])) {
      print_message("skipped the %s entry: this CPU does not have its instruction set\n", entries[e].name);
      continue;
    }
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) check_case(&cases[i], &entries[e], false, &no_act, false);
  }
}

/* FusedConv: every activation, with and without a residual, on two cases, on the best entry and portable. */
static void fused_activations_and_residual(void **state) {
  (void)state;
  const entry *picked[] = {&entries[0], &entries[1], &entries[2]};
  for (size_t e = 0; e < 3; e++) {
    if (!can_run(picked[e])) continue;
    for (size_t a = 0; a < sizeof acts / sizeof acts[0]; a++) {
      check_case(&cases[1], picked[e], true, &acts[a], a % 2 == 1);
      check_case(&cases[4], picked[e], true, &acts[a], a % 2 == 0);
    }
  }
}

static void threads_give_the_same_bits(void **state) {
  (void)state;
  for (size_t e = 0; e < sizeof entries / sizeof entries[0]; e++) {
    if (!can_run(&entries[e])) continue;
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
      toh t;
      setup(&t, true, &cases[i], &acts[1], false);
      make_inputs(&t, &cases[i], 41 + i);
      tb_tensor *ref = tconv_run_kernel(&t, &tb_kernel_fused_conv, TCONV_PREP_NONE, false, NULL);
      tb_tensor *one = run_taps(&t, &entries[e], &acts[1], ref, NULL), *two = run_taps(&t, &entries[e], &acts[1], ref, pool2);
      tb_tensor *three = run_taps(&t, &entries[e], &acts[1], ref, pool3);
      assert_close(one, ref, cases[i].what, entries[e].name);
      tconv_assert_same_bits(two, one, cases[i].what, "2 threads against 1");
      tconv_assert_same_bits(three, one, cases[i].what, "3 threads against 1");
      tb_tensor_destroy(one);
      tb_tensor_destroy(two);
      tb_tensor_destroy(three);
      tb_tensor_destroy(ref);
      toh_teardown(&t);
    }
  }
}

/* X and W of t rounded to bf16 values (the low 16 bits cleared), so the bf16 entries' rounding changes nothing
 * and their products are exact in fp32. */
static void truncate_to_bf16(toh *t) {
  for (int i = 0; i < 2; i++) {
    uint32_t *v = tb_tensor_host_data(t->in[i]);
    for (int64_t j = 0; j < tb_tensor_numel(t->in[i]); j++) v[j] &= 0xFFFF0000u;
  }
}

/* The level-3 bf16 entries (conv_bf16.c: portable, AMX emulated, AVX512-BF16 where the CPU has it) take the
 * tap GEMM too: on bf16-valued inputs within 1e-4 of the fp32 reference, with and without constant W, and
 * with conv_algo gemm (the implicit GEMM) as well. */
static void bf16_entries(void **state) {
  (void)state;
  const tb_kernel *ks[] = {&tb_kernel_fused_conv_bf16_portable, &tb_kernel_fused_conv_bf16_amx_emulated,
                           tbt_cpu_has_bf16_path() ? &tb_kernel_fused_conv_bf16_avx512bf16 : NULL};
  const char *names[] = {"bf16 portable", "bf16 amx emulated", "bf16 avx512bf16"};
  const size_t picked[] = {1, 2, 4, 7};
  for (size_t e = 0; e < 3; e++) {
    if (!ks[e]) {
      print_message("skipped the %s entry: this CPU has no AVX512-BF16\n", names[e]);
      continue;
    }
    for (size_t i = 0; i < sizeof picked / sizeof picked[0]; i++) {
      const conv_case *c = &cases[picked[i]];
      toh t;
      setup(&t, true, c, &acts[1], false);
      make_inputs(&t, c, 51 + i);
      truncate_to_bf16(&t);
      tb_tensor *ref = tconv_run_kernel(&t, &tb_kernel_fused_conv, TCONV_PREP_NONE, false, NULL);
      for (int how = 0; how < 3; how++) {
        tconv_conv_algo = how == 2 ? TB_CONV_ALGO_GEMM : TB_CONV_ALGO_AUTO;
        tb_tensor *got = tconv_run_kernel(&t, ks[e], how == 1 ? TCONV_PREP_NO_W : TCONV_PREP_CONST_W, true, how ? pool2 : NULL);
        char what[160];
        snprintf(what, sizeof what, "%s %s", c->what, names[e]);
        assert_close(got, ref, what, how == 0 ? "prepared" : how == 1 ? "packed per run" : "conv_algo gemm");
        tb_tensor_destroy(got);
      }
      tconv_conv_algo = TB_CONV_ALGO_AUTO;
      tb_tensor_destroy(ref);
      toh_teardown(&t);
    }
  }
}

/* The cost rule: dilated, more than one tap, not depthwise, at least 16 channels per group, and a share of
 * products on the input (not the padding) of at most 0.6 against the AVX-512 direct convolution, 0.8 against
 * the AVX2 one, 0.85 against the implicit GEMM. */
static void fits_follows_the_cost_rule(void **state) {
  (void)state;
  /* 28x28, 3x3 dilation 4: rows and columns (24 + 28 + 24) / 84 inside, a share of 0.819 */
  tb_conv_geom base = {.spatial = 2, .batch = 1, .in_c = 64, .out_c = 32, .group = 1, .ih = 28, .iw = 28, .oh = 28,
                       .ow = 28, .kh = 3, .kw = 3, .sh = 1, .sw = 1, .dh = 4, .dw = 4, .ph = 4, .pw = 4};
  assert_float_equal(tb_conv_taps_valid_share(&base), (76.0 / 84) * (76.0 / 84), 1e-12);
  assert_false(tb_conv_taps_fits(&base, TB_CONV_TAPS_MAX_SHARE_VS_DIRECT)); /* the direct convolution runs it faster */
  assert_true(tb_conv_taps_fits(&base, TB_CONV_TAPS_MAX_SHARE_VS_GEMM)); /* the implicit GEMM does not */
  assert_false(tb_conv_taps_fits(&base, TB_CONV_TAPS_MAX_SHARE_VS_DIRECT_AVX2)); /* nor the AVX2 direct one */
  tb_conv_geom g = base;
  g.dh = g.dw = 5, g.ph = g.pw = 5; /* (23 + 28 + 23) / 84 per axis: 0.776 */
  assert_true(tb_conv_taps_fits(&g, TB_CONV_TAPS_MAX_SHARE_VS_DIRECT_AVX2));
  assert_false(tb_conv_taps_fits(&g, TB_CONV_TAPS_MAX_SHARE_VS_DIRECT));
  g = base;
  g.dh = g.dw = 12, g.ph = g.pw = 12; /* (16 + 28 + 16) / 84 per axis: 0.510 */
  assert_float_equal(tb_conv_taps_valid_share(&g), (60.0 / 84) * (60.0 / 84), 1e-12);
  assert_true(tb_conv_taps_fits(&g, TB_CONV_TAPS_MAX_SHARE_VS_DIRECT));
  g.dh = g.dw = 30, g.ph = g.pw = 30; /* only the centre tap reads the map: 1/9 */
  assert_float_equal(tb_conv_taps_valid_share(&g), 1.0 / 9, 1e-12);
  assert_true(tb_conv_taps_fits(&g, TB_CONV_TAPS_MAX_SHARE_VS_DIRECT));
  g = base;
  g.dh = g.dw = 2, g.ph = g.pw = 2, g.ih = g.iw = g.oh = g.ow = 56; /* (54 + 56 + 54) / 168: 0.953 */
  assert_false(tb_conv_taps_fits(&g, TB_CONV_TAPS_MAX_SHARE_VS_GEMM));
  g = base;
  g.dh = g.dw = 1, g.ph = g.pw = 12;
  assert_false(tb_conv_taps_fits(&g, TB_CONV_TAPS_MAX_SHARE_VS_GEMM)); /* not dilated: Winograd, direct or the implicit GEMM */
  g = base;
  g.dh = 1, g.ph = 1; /* dilated along columns only: 0.905 x 0.929 */
  assert_false(tb_conv_taps_fits(&g, TB_CONV_TAPS_MAX_SHARE_VS_GEMM));
  g.ih = g.oh = 4, g.dw = g.pw = 12, g.iw = g.ow = 12; /* rows 2/3 x columns 1/3 inside */
  assert_true(tb_conv_taps_fits(&g, TB_CONV_TAPS_MAX_SHARE_VS_DIRECT));
  g.in_c = g.out_c = g.group = 64;
  assert_false(tb_conv_taps_fits(&g, TB_CONV_TAPS_MAX_SHARE_VS_GEMM)); /* depthwise */
  g.out_c = 32, g.group = 1, g.in_c = 15;
  assert_false(tb_conv_taps_fits(&g, TB_CONV_TAPS_MAX_SHARE_VS_GEMM)); /* depth 15 per tap: the implicit GEMM's 135 runs better */
  g.in_c = 60, g.group = 4;
  assert_false(tb_conv_taps_fits(&g, TB_CONV_TAPS_MAX_SHARE_VS_GEMM)); /* groups of 15 channels */
  g.in_c = 64;
  assert_true(tb_conv_taps_fits(&g, TB_CONV_TAPS_MAX_SHARE_VS_GEMM)); /* groups of 16 */
  g.kh = g.kw = 1, g.ph = g.pw = 0, g.group = 1;
  assert_false(tb_conv_taps_fits(&g, TB_CONV_TAPS_MAX_SHARE_VS_GEMM)); /* one tap: the dilation changes nothing */
}

static int group_setup(void **state) {
  (void)state;
  tbt_tensor_env();
  return tb_pool_create(2, &pool2) == TB_OK && tb_pool_create(3, &pool3) == TB_OK ? 0 : -1;
}

static int group_teardown(void **state) {
  (void)state;
  tb_pool_destroy(pool2);
  tb_pool_destroy(pool3);
  return 0;
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(taps_match_reference),
      cmocka_unit_test(fused_activations_and_residual),
      cmocka_unit_test(threads_give_the_same_bits),
      cmocka_unit_test(bf16_entries),
      cmocka_unit_test(fits_follows_the_cost_rule),
  };
  return cmocka_run_group_tests(tests, group_setup, group_teardown);
}
