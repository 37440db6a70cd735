/* The Winograd F(2x2, 3x3) convolution (src/backend/cpu/kernels/fast/conv/conv_winograd*.c) against the level-0
 * reference Conv and tb::FusedConv, fp32 (level 2, AVX-512) and bf16 (level 3, AVX512-BF16): odd and even
 * output sizes (partial 2x2 blocks at the right and bottom edges), pads 0 and 1 mixed per side, C and K not
 * multiples of 14, 16 or 32 (1, 3, 5, 17, 33, 70), tile rows of 7, 14 and 35 tiles, several blocks and
 * images (batch 2), with and without bias; FusedConv with a residual and every activation, NaN and Inf
 * in X as in the reference (Winograd reports them and the entries take the direct path). The level-2 and
 * level-3 entries (weights transformed at prepare with X's shape known, or per run) give exactly
 * tb_conv_winograd_run's bits (Winograd ran); 1, 2 and 3 threads give the same bits (also with the output
 * channels split between threads); conv_algo direct gives the direct convolution's bits, auto and
 * winograd Winograd's; TB_CONV_WINOGRAD as the option's default (off: direct), a bad value the default
 * with a warning sentence naming it; fits() declines what it does not take with the reason;
 * tb_conv_winograd_no_inf finds infinities; under TB_CPU_FEATURES masks without avx512bf16 / avx512f the
 * executor picks other entries, which are right.
 *
 * Tolerance, relative to the output's scale s = max |reference| (at least 1): fp32 |got - ref| <= 1e-5 s
 * (the fp32 O2 tolerance is 1e-4 relative + 1e-5; Winograd's error here measured below 1e-6 s); bf16
 * |got - ref| <= 1e-2 |ref| + 1e-2 s (the validation table's bf16 rtol and atol, scaled: the transformed
 * tiles are rounded to bf16, so errors follow the magnitude of the sums, not of each output).
 * The fp32 tests run again on the AVX2 implementation (conv_winograd_avx2.c) and the AVX2 entries, which
 * take Winograd too: the same values within the same tolerance, the same bits on any thread count.
 * Skipped with a message when the CPU has no AVX-512 (valgrind hides it too) or, for bf16, no AVX512-BF16;
 * the AVX2 ones when it has no AVX2 and FMA. */
#include <math.h>
#include "backend/cpu/kernels/fast/conv/conv_direct.h"
#include "backend/cpu/kernels/fast/conv/conv_winograd.h"
#include "backend/cpu/kernels/fast/gemm/gemm_bf16.h"
#include "backend/cpu/kernels/fast/gemm/gemm_f32.h"
#include "backend/cpu/kernels/fast/vec/vec_ops.h"
#include "core/convert_features.h"
#include "core/threadpool.h"
#include "test_conv_util.h"
#include "test_op_harness.h"
#include "test_tensor_util.h"

extern const tb_kernel tb_kernel_conv_f32_avx512, tb_kernel_fused_conv_f32_avx512;
extern const tb_kernel tb_kernel_conv_f32_avx2, tb_kernel_fused_conv_f32_avx2;
extern const tb_kernel tb_kernel_conv_bf16_avx512bf16, tb_kernel_fused_conv_bf16_avx512bf16;
extern const tb_kernel tb_kernel_conv, tb_kernel_fused_conv;

static tb_pool *pool2, *pool3;

static bool have_avx512(void) {
  if (tb_gemm_path_for(tb_convert_hardware_features()) == TB_GEMM_AVX512) return true;
  print_message("skipped: this CPU (or valgrind) shows no AVX512F, so Winograd never runs\n");
  return false;
}

/* The fp32 implementation and entries the tests run: AVX-512, or AVX2 while an *_avx2 test runs. */
static const tb_conv_winograd_impl *f32_impl = &tb_conv_winograd_f32_avx512;
static const tb_kernel *f32_conv = &tb_kernel_conv_f32_avx512, *f32_fused = &tb_kernel_fused_conv_f32_avx512;
static bool avx2_only; /* the bf16 parts are skipped */

static bool have_avx2(void) {
  if (tb_gemm_path_for(tb_convert_hardware_features()) >= TB_GEMM_AVX2) return true;
  print_message("skipped: this CPU (or valgrind) shows no AVX2 and FMA, so the AVX2 Winograd never runs\n");
  return false;
}

static void use_avx2(bool on) {
  f32_impl = on ? &tb_conv_winograd_f32_avx2 : &tb_conv_winograd_f32_avx512;
  f32_conv = on ? &tb_kernel_conv_f32_avx2 : &tb_kernel_conv_f32_avx512;
  f32_fused = on ? &tb_kernel_fused_conv_f32_avx2 : &tb_kernel_fused_conv_f32_avx512;
  avx2_only = on;
}

static bool have_bf16(void) {
  if (tbt_cpu_has_bf16_path()) return true;
  print_message("skipped: this CPU (or valgrind) shows no AVX512_BF16, so bf16 Winograd never runs\n");
  return false;
}

/* batch, c, h, w, m, kh, kw, group, stride, dilation, pads (top, left, bottom, right), auto_pad, bias */
static const conv_case cases[] = {
    {"13x13 pads 1 (odd: partial blocks), C 5, K 7", 1, 5, 13, 13, 7, 3, 3, 1, 1, 1, {1, 1, 1, 1}, NULL, true},
    {"16x12 pads 1 (even), C 17, K 33", 1, 17, 16, 12, 33, 3, 3, 1, 1, 1, {1, 1, 1, 1}, NULL, true},
    {"15x17 pads 0 -> 13x15, C 3, K 40, no bias", 1, 3, 15, 17, 40, 3, 3, 1, 1, 1, {0, 0, 0, 0}, NULL, false},
    {"14x16 pads 1 1 0 0 -> 13x15, C 32, K 64", 1, 32, 14, 16, 64, 3, 3, 1, 1, 1, {1, 1, 0, 0}, NULL, true},
    {"12x20 pads 0 1 1 0 -> 11x19, C 8, K 16", 1, 8, 12, 20, 16, 3, 3, 1, 1, 1, {0, 1, 1, 0}, NULL, true},
    {"8x60 pads 1 (35-tile rows), C 64, K 64", 1, 64, 8, 60, 64, 3, 3, 1, 1, 1, {1, 1, 1, 1}, NULL, true},
    {"batch 2, 14x14, C 33, K 70", 2, 33, 14, 14, 70, 3, 3, 1, 1, 1, {1, 1, 1, 1}, NULL, true},
    {"several blocks 28x28, C 128, K 96", 1, 128, 28, 28, 96, 3, 3, 1, 1, 1, {1, 1, 1, 1}, NULL, true},
    {"C 1, K 1, 16x16", 1, 1, 16, 16, 1, 3, 3, 1, 1, 1, {1, 1, 1, 1}, NULL, false},
};

static const conv_case *named(const char *prefix) {
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++)
    if (strncmp(cases[i].what, prefix, strlen(prefix)) == 0) return &cases[i];
  fail_msg("no case '%s'", prefix);
  return NULL;
}



/* Within the tolerance above (bf16: the bf16 one), NaN where the reference has NaN, the same infinities.
 * The scale is at least min_scale (an activation such as Clip bounds the outputs, not the sums' rounding). */
static void assert_close_scaled(const tb_tensor *got, const tb_tensor *ref, bool bf16, double min_scale, const char *what,
                                const char *how) {
  assert_non_null(got);
  toh_assert_shape(got, tb_tensor_ndim(ref), tb_tensor_shape(ref));
  const float *g = tb_tensor_host_data(got), *r = tb_tensor_host_data(ref);
  double scale = min_scale > 1.0 ? min_scale : 1.0;
  for (int64_t i = 0; i < tb_tensor_numel(ref); i++)
    if (isfinite(r[i]) && fabs((double)r[i]) > scale) scale = fabs((double)r[i]);
  for (int64_t i = 0; i < tb_tensor_numel(ref); i++) {
    double err = fabs((double)g[i] - r[i]), bound = bf16 ? 1e-2 * fabs((double)r[i]) + 1e-2 * scale : 1e-5 * scale;
    bool ok = isnan(r[i]) ? isnan(g[i]) : isinf(r[i]) ? g[i] == r[i] : err <= bound;
    if (!ok) fail_msg("%s (%s): element %lld is %.9g, reference %.9g (scale %.3g)", what, how, (long long)i, g[i], r[i], scale);
  }
}

static void assert_close(const tb_tensor *got, const tb_tensor *ref, bool bf16, const char *what, const char *how) {
  assert_close_scaled(got, ref, bf16, 1.0, what, how);
}

static double max_abs_finite(const tb_tensor *t) {
  const float *v = tb_tensor_host_data(t);
  double m = 0;
  for (int64_t i = 0; i < tb_tensor_numel(t); i++)
    if (isfinite(v[i]) && fabs((double)v[i]) > m) m = fabs((double)v[i]);
  return m;
}



static tb_gemm_epilogue epilogue_of(const act_case *act) {
  static const char *const names[] = {"",     "Relu",      "LeakyRelu", "Clip", "Sigmoid", "Tanh",
                                      "HardSigmoid", "HardSwish", "-",       "-",    "Silu",    "Mish"};
  tb_gemm_epilogue ep = {0};
  for (int i = 1; act->name && i < 12; i++)
    if (strcmp(act->name, names[i]) == 0) ep.act = i;
  ep.act_alpha = act->alpha, ep.act_beta = act->beta, ep.act_min = act->lo, ep.act_max = act->hi;
  /* the entries' activation loops (conv_fast.c sets the path's table) */
  ep.vec = avx2_only ? &tb_vec_ops_avx2 : &tb_vec_ops_avx512;
  return ep;
}

static tb_tensor *empty_like(toh *t, const tb_tensor *like) {
  tb_tensor *y = NULL;
  TB_ASSERT_OK(tb_tensor_create(t->cpu, TB_DTYPE_F32, tb_tensor_ndim(like), tb_tensor_shape(like), &y));
  return y;
}

/* tb_conv_winograd_run itself (impl) on `pool` into a tensor shaped like `like`; it must report `want`
 * (NULL returned unless DONE). */
static tb_tensor *run_winograd_status(toh *t, const tb_conv_winograd_impl *impl, const act_case *act, const tb_tensor *like,
                                      tb_pool *pool, tb_conv_winograd_status want) {
  tb_conv_geom g = tconv_geom(t);
  char why[200] = "";
  if (!tb_conv_winograd_fits(impl, &g, why, sizeof why)) fail_msg("fits refused: %s", why);
  tb_conv_winograd_weights *w = tb_conv_winograd_pack(impl, &g, tb_tensor_host_data(t->in[1]));
  assert_non_null(w);
  /* U holds 16 values per (k, c) for K rounded up to 32: 16/9 of W (fp32), 8/9 (bf16), plus that padding */
  assert_int_equal(tb_conv_winograd_bytes(w), (size_t)(16 * g.in_c * ((g.out_c + 31) / 32 * 32)) * (impl->bf16 ? 2 : 4) +
                                                   (impl->bf16 ? (size_t)(16 * (g.in_c % 2) * ((g.out_c + 31) / 32 * 32)) * 2 : 0));
  tb_tensor *y = empty_like(t, like);
  tb_gemm_epilogue ep = epilogue_of(act);
  const float *bias = t->in[2] ? tb_tensor_host_data(t->in[2]) : NULL;
  const float *res = t->n_in > 3 && t->in[3] ? tb_tensor_host_data(t->in[3]) : NULL;
  assert_int_equal(tb_conv_winograd_run(impl, &g, w, tb_tensor_host_data(t->in[0]), bias, res, &ep, tb_tensor_host_data(y), pool),
                   want);
  tb_conv_winograd_free(w);
  if (want == TB_WINOGRAD_DONE) return y;
  tb_tensor_destroy(y);
  return NULL;
}

static tb_tensor *run_winograd(toh *t, const tb_conv_winograd_impl *impl, const act_case *act, const tb_tensor *like,
                               tb_pool *pool) {
  return run_winograd_status(t, impl, act, like, pool, TB_WINOGRAD_DONE);
}

/* Special values put into X: none, NaN, or NaN and infinities. */
typedef enum special_values { PLAIN, WITH_NAN, WITH_INF } special_values;

/* The case's node with its inputs (residual: a 4th input of the output's shape; the special values in X). */
static void make_case(toh *t, const conv_case *c, bool fused, const act_case *act, bool residual, special_values special) {
  setup(t, fused, c, act, residual);
  make_inputs(t, c, (uint64_t)(c->m * 7 + c->c * 3 + c->h));
  if (residual) {
    tb_conv_geom g = tconv_geom(t);
    int64_t ys[4] = {g.batch, g.out_c, g.oh, g.ow};
    t->in[3] = random_tensor(t, 4, ys, 99);
  }
  float *x = tb_tensor_host_data(t->in[0]);
  int64_t n = tb_tensor_numel(t->in[0]);
  if (special != PLAIN) x[0] = x[n - 1 - c->w * (c->h / 2) - c->w / 2] = NAN; /* a corner, and mid last plane */
  if (special == WITH_INF) x[n / 2] = INFINITY, x[n - 2] = -INFINITY;
}

/* The case through the level-2 (bf16: level-3) entry prepared with W constant and X known, then per run on
 * the 2-thread pool: within the tolerance of the reference and the bits of tb_conv_winograd_run. With a
 * NaN or an infinity in X tb_conv_winograd_run reports NOT_FINITE (on 1 and 2 threads) and the entries
 * take the direct path instead: the reference's values, NaN and infinities included. */
static void check_case(const conv_case *c, bool bf16, bool fused, const act_case *act, bool residual, special_values special) {
  toh t;
  make_case(&t, c, fused, act, residual, special);
  const tb_conv_winograd_impl *impl = bf16 ? &tb_conv_winograd_bf16_avx512bf16 : f32_impl;
  const tb_kernel *k = bf16 ? (fused ? &tb_kernel_fused_conv_bf16_avx512bf16 : &tb_kernel_conv_bf16_avx512bf16)
                                : (fused ? f32_fused : f32_conv);
  tb_tensor *ref = tconv_run_kernel(&t, fused ? &tb_kernel_fused_conv : &tb_kernel_conv, TCONV_PREP_NONE, true, NULL);
  double scale = 1.0; /* the sums' scale: the same node without its activation */
  if (act->name) {
    toh plain;
    make_case(&plain, c, fused, &no_act, residual, PLAIN);
    tb_tensor *sums = tconv_run_kernel(&plain, &tb_kernel_fused_conv, TCONV_PREP_NONE, true, NULL);
    scale = max_abs_finite(sums);
    tb_tensor_destroy(sums);
    toh_teardown(&plain);
  }
  tb_tensor *wino = special == PLAIN ? run_winograd(&t, impl, act, ref, NULL) : NULL;
  if (!wino) {
    assert_null(run_winograd_status(&t, impl, act, ref, NULL, TB_WINOGRAD_NOT_FINITE));
    assert_null(run_winograd_status(&t, impl, act, ref, pool2, TB_WINOGRAD_NOT_FINITE));
  }
  char what[240];
  snprintf(what, sizeof what, "%s%s%s%s%s%s%s", c->what, bf16 ? " bf16" : avx2_only ? " fp32 avx2" : " fp32", fused ? " fused" : "",
           act->name ? " " : "", act->name ? act->name : "", residual ? " residual" : "",
           special == WITH_INF ? " NaN/Inf input" : special == WITH_NAN ? " NaN input" : "");
  if (wino) assert_close_scaled(wino, ref, bf16, scale, what, "tb_conv_winograd_run");
  for (int how = 0; how < 2; how++) {
    tb_tensor *got = tconv_run_kernel(&t, k, how == 0 ? TCONV_PREP_CONST_W : TCONV_PREP_NO_W, true, how == 0 ? NULL : pool2);
    const char *name = how == 0 ? "entry prepared" : "entry packed per run, 2 threads";
    if (wino) tconv_assert_same_bits(got, wino, what, name);
    else assert_close_scaled(got, ref, bf16, scale, what, name);
    tb_tensor_destroy(got);
  }
  tb_tensor_destroy(wino);
  tb_tensor_destroy(ref);
  toh_teardown(&t);
}

static void fp32_matches_reference(void **state) {
  (void)state;
  if (!have_avx512()) skip();
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) check_case(&cases[i], false, false, &no_act, false, PLAIN);
}

static void bf16_matches_reference(void **state) {
  (void)state;
  if (!have_bf16()) skip();
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) check_case(&cases[i], true, false, &no_act, false, PLAIN);
}

/* FusedConv: every activation with a residual (and without), NaN and Inf in X, both precisions. */
static void fused_body(void) {
  const conv_case *picked[] = {named("13x13"), named("batch 2"), named("15x17")};
  for (int bf16 = 0; bf16 < 2; bf16++) {
    if (bf16 && (avx2_only || !have_bf16())) break;
    for (size_t c = 0; c < sizeof picked / sizeof picked[0]; c++)
      for (size_t a = 0; a < sizeof acts / sizeof acts[0]; a++) {
        check_case(picked[c], bf16, true, &acts[a], true, PLAIN);
        check_case(picked[c], bf16, true, &acts[a], a % 2 == 0, a % 2 ? WITH_NAN : WITH_INF);
      }
    /* one NaN at the start of the last input row only (the last tile row's loads see it) */
    toh t;
    const conv_case *c1 = named("C 1");
    make_case(&t, c1, false, &no_act, false, PLAIN);
    float *x = tb_tensor_host_data(t.in[0]);
    x[tb_tensor_numel(t.in[0]) - c1->w] = NAN;
    tb_tensor *ref = tconv_run_kernel(&t, &tb_kernel_conv, TCONV_PREP_NONE, true, NULL);
    assert_null(run_winograd_status(&t, bf16 ? &tb_conv_winograd_bf16_avx512bf16 : f32_impl, &no_act,
                                    ref, NULL, TB_WINOGRAD_NOT_FINITE));
    tb_tensor *got = tconv_run_kernel(&t, bf16 ? &tb_kernel_conv_bf16_avx512bf16 : f32_conv, TCONV_PREP_CONST_W, true, NULL);
    assert_close(got, ref, bf16, "C 1, NaN in the last row", "entry prepared");
    tb_tensor_destroy(got);
    tb_tensor_destroy(ref);
    toh_teardown(&t);
  }
}

/* 1, 2 and 3 threads give the same bits (each output from one thread, the same operations in order). */
static void threads_body(void) {
  const char *names[] = {"13x13", "8x60", "batch 2", "several blocks", "C 1"};
  for (int bf16 = 0; bf16 < 2; bf16++) {
    if (bf16 && (avx2_only || !have_bf16())) break;
    const tb_conv_winograd_impl *impl = bf16 ? &tb_conv_winograd_bf16_avx512bf16 : f32_impl;
    for (size_t i = 0; i < sizeof names / sizeof names[0]; i++) {
      const conv_case *c = named(names[i]);
      toh t;
      make_case(&t, c, true, &acts[1], true, PLAIN);
      tb_tensor *ref = tconv_run_kernel(&t, &tb_kernel_fused_conv, TCONV_PREP_NONE, true, NULL);
      tb_tensor *one = run_winograd(&t, impl, &acts[1], ref, NULL), *two = run_winograd(&t, impl, &acts[1], ref, pool2);
      tb_tensor *three = run_winograd(&t, impl, &acts[1], ref, pool3);
      assert_close(one, ref, bf16, c->what, "1 thread");
      tconv_assert_same_bits(two, one, c->what, "2 threads against 1");
      tconv_assert_same_bits(three, one, c->what, "3 threads against 1");
      tb_tensor_destroy(one);
      tb_tensor_destroy(two);
      tb_tensor_destroy(three);
      tb_tensor_destroy(ref);
      toh_teardown(&t);
    }
  }
}

static void fused_activations_residual_and_specials(void **state) {
  (void)state;
  if (!have_avx512()) skip();
  fused_body();
}

static void threads_give_the_same_bits(void **state) {
  (void)state;
  if (!have_avx512()) skip();
  threads_body();
}

/* tb_conv_winograd_no_inf finds +-Inf anywhere (vector body, masked tail, past the first 4096 values),
 * not NaN or the largest finite values: with AVX-512 where the CPU has it, and in plain C under
 * TB_CPU_FEATURES=-avx512f. */
static void no_inf_cases(void) {
  float x[5000];
  fill(x, 5000, 3);
  x[7] = NAN;
  x[100] = 3.4028235e38f;
  x[101] = -3.4028235e38f;
  assert_true(tb_conv_winograd_no_inf(x, 5000));
  assert_true(tb_conv_winograd_no_inf(x, 0));
  const int64_t at[] = {0, 15, 16, 4095, 4096, 4999};
  for (size_t i = 0; i < sizeof at / sizeof at[0]; i++) {
    float keep = x[at[i]];
    x[at[i]] = i % 2 ? -INFINITY : INFINITY;
    assert_false(tb_conv_winograd_no_inf(x, 5000));
    assert_true(tb_conv_winograd_no_inf(x, at[i])); /* the values before it */
    x[at[i]] = keep;
  }
}

static void no_inf_finds_infinities(void **state) {
  (void)state;
  no_inf_cases();
  setenv("TB_CPU_FEATURES", "-avx512f", 1);
  no_inf_cases();
  tbt_clear_env();
}

/* The fp32 tests again on the AVX2 implementation and entries. */
static void avx2_matches_reference(void **state) {
  if (!have_avx2()) skip();
  use_avx2(true);
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) check_case(&cases[i], false, false, &no_act, false, PLAIN);
  use_avx2(false);
  (void)state;
}


/* What fits() declines, with the reason's key words. */
static void fits_declines_with_a_reason(void **state) {
  (void)state;
  const tb_conv_winograd_impl *impl = &tb_conv_winograd_f32_avx512;
  tb_conv_geom base = {.spatial = 2, .batch = 1, .in_c = 16, .out_c = 32, .group = 1, .ih = 14, .iw = 14, .oh = 14,
                       .ow = 14, .kh = 3, .kw = 3, .sh = 1, .sw = 1, .dh = 1, .dw = 1, .ph = 1, .pw = 1};
  char why[200] = "";
#if !defined(__x86_64__)
  assert_false(tb_conv_winograd_fits(impl, &base, why, sizeof why));
  TB_ASSERT_CONTAINS(why, "off x86-64");
  return;
#endif
  assert_true(tb_conv_winograd_fits(impl, &base, why, sizeof why));
  tb_conv_geom g = base;
  g.sh = g.sw = 2, g.oh = g.ow = 7;
  assert_false(tb_conv_winograd_fits(impl, &g, why, sizeof why));
  TB_ASSERT_CONTAINS(why, "strides 2 x 2");
  g = base;
  g.dh = g.dw = 2, g.ph = g.pw = 2;
  assert_false(tb_conv_winograd_fits(impl, &g, why, sizeof why));
  TB_ASSERT_CONTAINS(why, "dilations 2 x 2");
  g = base;
  g.kh = g.kw = 5, g.ph = g.pw = 2;
  assert_false(tb_conv_winograd_fits(impl, &g, why, sizeof why));
  TB_ASSERT_CONTAINS(why, "5 x 5 kernel");
  g = base;
  g.group = 2;
  assert_false(tb_conv_winograd_fits(impl, &g, why, sizeof why));
  TB_ASSERT_CONTAINS(why, "2 groups");
  g = base;
  g.spatial = 1, g.ih = g.oh = 1, g.kh = 1, g.ph = 0;
  assert_false(tb_conv_winograd_fits(impl, &g, why, sizeof why));
  TB_ASSERT_CONTAINS(why, "1 spatial axes");
  g = base;
  g.ph = 2, g.oh = 16;
  assert_false(tb_conv_winograd_fits(impl, &g, why, sizeof why));
  TB_ASSERT_CONTAINS(why, "pads 2, 1, 2, 1 (takes 0 or 1)");
  g = base;
  g.oh = 15; /* the same input with a bottom pad of 2 */
  assert_false(tb_conv_winograd_fits(impl, &g, why, sizeof why));
  TB_ASSERT_CONTAINS(why, "pads 1, 1, 2, 1");
  g = base;
  g.ih = g.iw = g.oh = g.ow = 7; /* ResNet's layer4: 16 tiles, the direct convolution is faster */
  assert_false(tb_conv_winograd_fits(impl, &g, why, sizeof why));
  TB_ASSERT_CONTAINS(why, "7 x 7 output: 16 tiles per image");
  assert_false(tb_conv_winograd_fits(NULL, &base, why, sizeof why));
  TB_ASSERT_CONTAINS(why, "no Winograd convolution on this path");
  assert_false(tb_conv_winograd_fits(impl, &g, NULL, 0)); /* no reason wanted */
}

/* TB_CONV_WINOGRAD as conv_algo's default: off and 0 leave the direct convolution and the GEMM, on, 1 and
 * unset auto, anything else auto with a sentence naming the variable and the value. Through the entries,
 * conv_algo direct gives the direct convolution's bits, auto, winograd and 0 (default: auto) Winograd's. */
static void conv_algo_picks_the_method(void **state) {
  (void)state;
  assert_env_default("TB_CONV_WINOGRAD", TB_CONV_ALGO_DIRECT, "Winograd runs where it fits");
  if (!have_avx512()) return;
  /* through the level-2 entry */
  const conv_case *c = named("14x16");
  toh t;
  make_case(&t, c, false, &no_act, false, PLAIN);
  tb_tensor *ref = tconv_run_kernel(&t, &tb_kernel_conv, TCONV_PREP_NONE, true, NULL);
  tb_tensor *wino = run_winograd(&t, &tb_conv_winograd_f32_avx512, &no_act, ref, NULL);
  tb_conv_geom g = tconv_geom(&t);
  tb_conv_direct_weights *dw = tb_conv_direct_pack(&tb_conv_direct_f32_avx512, &g, tb_tensor_host_data(t.in[1]));
  tb_tensor *direct = empty_like(&t, ref);
  tb_gemm_epilogue ep = {0};
  assert_true(tb_conv_direct_run(&tb_conv_direct_f32_avx512, &g, dw, tb_tensor_host_data(t.in[0]),
                                 tb_tensor_host_data(t.in[2]), NULL, &ep, tb_tensor_host_data(direct), NULL));
  const tb_conv_algo algos[] = {TB_CONV_ALGO_DIRECT, TB_CONV_ALGO_AUTO, TB_CONV_ALGO_WINOGRAD, TB_CONV_ALGO_DEFAULT};
  for (int i = 0; i < 4; i++) {
    tconv_conv_algo = algos[i];
    for (int prep = 0; prep < 2; prep++) {
      tb_tensor *got = tconv_run_kernel(&t, &tb_kernel_conv_f32_avx512, prep ? TCONV_PREP_CONST_W : TCONV_PREP_NO_W, true, prep ? NULL : pool2);
      assert_close(got, ref, false, c->what, tb_conv_algo_name(algos[i]));
      tconv_assert_same_bits(got, i < 1 ? direct : wino, c->what, tb_conv_algo_name(algos[i]));
      tb_tensor_destroy(got);
    }
  }
  tconv_conv_algo = TB_CONV_ALGO_DEFAULT;
  tb_conv_direct_free(dw);
  tb_tensor_destroy(direct);
  tb_tensor_destroy(wino);
  tb_tensor_destroy(ref);
  toh_teardown(&t);
}

/* The kernel the executor picks for the case at `level` under a TB_CPU_FEATURES mask. */
static const tb_kernel *pick(toh *t, int level, const char *mask) {
  setenv("TB_CPU_FEATURES", mask, 1);
  uint64_t features = tb_convert_features();
  unsetenv("TB_CPU_FEATURES");
  tb_value_type types[3];
  const tb_value_type *in[3];
  for (int i = 0; i < 3; i++) {
    types[i] = toh_type(TB_DTYPE_F32, tb_tensor_ndim(t->in[i]), tb_tensor_shape(t->in[i]));
    in[i] = &types[i];
  }
  const tb_kernel *k = tbt_kernel_find(t->graph, toh_node(t), in, level, features);
  assert_non_null(k);
  return k;
}

/* Without avx512bf16 (level 3) or avx512f (levels 2 and 3) the executor picks other entries, which have
 * no Winograd and still give the reference's values. */
static void masked_features_fall_back(void **state) {
  (void)state;
  if (!have_avx512()) skip();
  const conv_case *c = named("16x12");
  toh t;
  make_case(&t, c, false, &no_act, false, PLAIN);
  tb_tensor *ref = tconv_run_kernel(&t, &tb_kernel_conv, TCONV_PREP_NONE, true, NULL);
  struct {
    int level;
    const char *mask;
    bool bf16;
  } runs[] = {{3, "-avx512bf16", true}, {3, "-avx512f", true}, {2, "-avx512f", false}};
  for (size_t i = 0; i < sizeof runs / sizeof runs[0]; i++) {
    const tb_kernel *k = pick(&t, runs[i].level, runs[i].mask);
    assert_ptr_not_equal(k, &tb_kernel_conv_f32_avx512);
    assert_ptr_not_equal(k, &tb_kernel_conv_bf16_avx512bf16);
    assert_int_equal(k->level, runs[i].level);
    for (int prep = 0; prep < 2; prep++) {
      tb_tensor *got = tconv_run_kernel(&t, k, prep ? TCONV_PREP_CONST_W : TCONV_PREP_NO_W, true, prep ? NULL : pool2);
      assert_close(got, ref, runs[i].bf16, c->what, runs[i].mask);
      tb_tensor_destroy(got);
    }
  }
  tb_tensor_destroy(ref);
  toh_teardown(&t);
}

static void avx2_fused_activations_residual_and_specials(void **state) {
  if (!have_avx2()) skip();
  use_avx2(true);
  fused_body();
  use_avx2(false);
  (void)state;
}

static void avx2_threads_give_the_same_bits(void **state) {
  if (!have_avx2()) skip();
  use_avx2(true);
  threads_body();
  use_avx2(false);
  (void)state;
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
      cmocka_unit_test(fp32_matches_reference),
      cmocka_unit_test(bf16_matches_reference),
      cmocka_unit_test(fused_activations_residual_and_specials),
      cmocka_unit_test(threads_give_the_same_bits),
      cmocka_unit_test(no_inf_finds_infinities),
      cmocka_unit_test(fits_declines_with_a_reason),
      cmocka_unit_test(conv_algo_picks_the_method),
      cmocka_unit_test(masked_features_fall_back),
      cmocka_unit_test(avx2_matches_reference),
      cmocka_unit_test(avx2_fused_activations_residual_and_specials),
      cmocka_unit_test(avx2_threads_give_the_same_bits),
  };
  return cmocka_run_group_tests(tests, group_setup, group_teardown);
}
