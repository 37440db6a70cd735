/* The fp32 direct convolution (src/backend/cpu/kernels/fast/conv/conv_direct*.c), AVX-512 (14 x 32 tiles) and
 * AVX2 + FMA (6 x 16 tiles, its own store; the `avx2_*` tests), against the level-0 reference Conv and
 * tb::FusedConv: 3x3 stride 1 pad 1 at output widths 56, 28, 14, 7 and 13, 9, 5, 1
 * (shorter and evened-out tiles), stride 2, strides 3 and 4 (the generic-stride kernels), the 7x7 stride-2 stem with 3 channels, dilation 2, asymmetric
 * and end-only pads, 1x3 and 3x1 kernels, 1-D, groups 2 and 4, channel counts that are not multiples of
 * 32 (3, 17, 40, 100), a depth cut into several L2 chunks, weights past L2 taken column block by column
 * block from one padded source (else each thread pads its own rows), X itself as the source, batch 2,
 * with and without bias; FusedConv with a residual and every activation, NaN inputs propagating as in the
 * reference. Through the level-2 AVX-512 entries (weights packed at prepare with X's shape known or not,
 * and packed per run on the two-thread pool), whose output must be bit-identical to tb_conv_direct_run's
 * (the entry took the direct path); 1, 2 and 3 threads give the same bits, also with every share run on the
 * caller (a pool busy or called from a task); the entries run with ctx->conv_algo direct (Winograd would
 * take the 3x3 stride-1 cases), and with gemm the implicit GEMM (still against the reference); fits()
 * refuses depthwise, 1x1 stride-1 unpadded, more than 64 taps and 1x1 kernels with a reason (stride 3 it
 * takes). On AVX2, 3x3 stride-2 convolutions of 1 to 4 channels take the stem kernel (conv_stem_avx2.c)
 * inside tb_conv_direct_run: the `stem` cases (channels and widths leaving partial register blocks, pads
 * from none to wider than the kernel, batch 2), with a residual, every activation and NaN, 1-3 threads, and
 * which geometries it takes; TB_CONV_DIRECT values as the option's default and the warning sentence for a bad one.
 * Tolerance as test_conv_fast.c: |got - ref| <= 1e-4 |ref| + 1e-4 (inputs in [-1, 1]).
 * Each ISA's tests are skipped with a message when the CPU lacks it (valgrind hides AVX-512; qemu Haswell
 * runs the AVX2 ones). */
#include <math.h>
#include "backend/cpu/kernels/fast/conv/conv_direct.h"
#include "backend/cpu/kernels/fast/conv/conv_stem.h"
#include "backend/cpu/kernels/fast/gemm/gemm_f32.h"
#include "core/convert_features.h"
#include "core/threadpool.h"
#include "test_conv_util.h"
#include "test_op_harness.h"
#include "test_tensor_util.h"

extern const tb_kernel tb_kernel_conv_f32_avx512, tb_kernel_fused_conv_f32_avx512;
extern const tb_kernel tb_kernel_conv_f32_avx2, tb_kernel_fused_conv_f32_avx2;
extern const tb_kernel tb_kernel_conv, tb_kernel_fused_conv;

static tb_pool *pool2, *pool3;

/* The ISA under test: its direct convolution and its level-2 entries. */
typedef struct isa {
  const char *name;
  const tb_conv_direct_impl *impl;
  const tb_kernel *conv, *fused;
  tb_gemm_path path;
} isa;
static const isa isa_avx512 = {"AVX-512", &tb_conv_direct_f32_avx512, &tb_kernel_conv_f32_avx512,
                               &tb_kernel_fused_conv_f32_avx512, TB_GEMM_AVX512};
static const isa isa_avx2 = {"AVX2", &tb_conv_direct_f32_avx2, &tb_kernel_conv_f32_avx2, &tb_kernel_fused_conv_f32_avx2,
                             TB_GEMM_AVX2};
static const isa *cur = &isa_avx512;

/* Whether the CPU runs `want`'s kernels (AVX-512 runs the AVX2 ones too); cur set to it. */
static bool have(const isa *want) {
  cur = want;
  tb_gemm_path best = tb_gemm_path_for(tb_convert_hardware_features());
  if (best == want->path || (want->path == TB_GEMM_AVX2 && best == TB_GEMM_AVX512)) return true;
  print_message("skipped: this CPU (or valgrind) shows no %s, so its direct convolution never runs\n", want->name);
  return false;
}

/* batch, c, h, w, m, kh, kw, group, stride, dilation, pads, auto_pad, bias */
static const conv_case cases[] = {
    {"3x3 width 56", 1, 8, 4, 56, 64, 3, 3, 1, 1, 1, {1, 1, 1, 1}, NULL, true},
    {"3x3 width 28", 1, 16, 3, 28, 32, 3, 3, 1, 1, 1, {1, 1, 1, 1}, NULL, true},
    {"3x3 width 14, C 17, M 40", 1, 17, 4, 14, 40, 3, 3, 1, 1, 1, {1, 1, 1, 1}, NULL, true},
    {"3x3 width 7, M 128", 1, 24, 7, 7, 128, 3, 3, 1, 1, 1, {1, 1, 1, 1}, NULL, true},
    {"3x3 width 13, C 3, M 17", 1, 3, 5, 13, 17, 3, 3, 1, 1, 1, {1, 1, 1, 1}, NULL, true},
    {"3x3 width 9, C 40, M 100", 1, 40, 3, 9, 100, 3, 3, 1, 1, 1, {1, 1, 1, 1}, NULL, true},
    {"3x3 width 5 no bias", 1, 5, 5, 5, 33, 3, 3, 1, 1, 1, {1, 1, 1, 1}, NULL, false},
    {"3x3 width 1", 1, 4, 6, 1, 20, 3, 3, 1, 1, 1, {1, 1, 1, 1}, NULL, true},
    {"3x3 width 29 (tiles 10, 10, 9)", 1, 6, 3, 29, 32, 3, 3, 1, 1, 1, {1, 1, 1, 1}, NULL, true},
    {"3x3 stride 2", 1, 8, 15, 29, 48, 3, 3, 1, 2, 1, {1, 1, 1, 1}, NULL, true},
    {"3x3 stride 2 to width 7", 1, 16, 14, 14, 64, 3, 3, 1, 2, 1, {1, 1, 1, 1}, NULL, false},
    {"3x3 stride 3 (the generic-stride kernel)", 1, 8, 16, 44, 48, 3, 3, 1, 3, 1, {1, 1, 1, 1}, NULL, true},
    {"5x5 stride 4 pad 2, C 3", 1, 3, 19, 30, 33, 5, 5, 1, 4, 1, {2, 2, 2, 2}, NULL, false},
    {"1-D k4 stride 3 dilation 2", 1, 6, 0, 50, 20, 1, 4, 1, 3, 2, {0, 3, 0, 3}, NULL, true},
    {"7x7 stride 2 pad 3 stem, C 3", 1, 3, 32, 46, 64, 7, 7, 1, 2, 1, {3, 3, 3, 3}, NULL, true},
    {"3x3 dilation 2", 1, 6, 12, 12, 10, 3, 3, 1, 1, 2, {2, 2, 2, 2}, NULL, true},
    {"5x5 stride 2 asymmetric pads", 1, 3, 17, 15, 8, 5, 5, 1, 2, 1, {0, 2, 1, 0}, NULL, true},
    {"4x4 stride 2 end pads only", 1, 4, 9, 10, 6, 4, 4, 1, 2, 1, {0, 0, 1, 1}, NULL, false},
    {"3x3 no pads (X itself as the source)", 1, 8, 6, 20, 32, 3, 3, 1, 1, 1, {0, 0, 0, 0}, NULL, true},
    {"1x3", 1, 8, 6, 20, 16, 1, 3, 1, 1, 1, {0, 1, 0, 1}, NULL, true},
    {"3x1", 1, 8, 20, 6, 16, 3, 1, 1, 1, 1, {1, 0, 1, 0}, NULL, true},
    {"1-D k3 stride 2 pad 1, batch 2", 2, 5, 0, 29, 7, 1, 3, 1, 2, 1, {0, 1, 0, 1}, NULL, true},
    {"1-D k5 dilation 2", 1, 10, 0, 40, 15, 1, 5, 1, 1, 2, {0, 4, 0, 4}, NULL, false},
    {"groups 2", 1, 16, 6, 10, 64, 3, 3, 2, 1, 1, {1, 1, 1, 1}, NULL, true},
    {"groups 4 stride 2, batch 2", 2, 8, 10, 9, 12, 3, 3, 4, 2, 1, {1, 1, 1, 1}, NULL, true},
    {"several chunks, width 9 (C 600)", 1, 600, 3, 9, 40, 3, 3, 1, 1, 1, {1, 1, 1, 1}, NULL, true},
    {"several chunks, width 7 (C 300, M 128)", 1, 300, 3, 7, 128, 3, 3, 1, 1, 1, {1, 1, 1, 1}, NULL, true},
    {"batch 2 width 14", 2, 8, 3, 14, 64, 3, 3, 1, 1, 1, {1, 1, 1, 1}, NULL, true},
    {"column blocks in turn, one padded source (C 64, M 256)", 2, 64, 3, 14, 256, 3, 3, 1, 1, 1, {1, 1, 1, 1}, NULL, true},
    {"3x3 stride 2 stem, C 3", 1, 3, 17, 31, 16, 3, 3, 1, 2, 1, {1, 1, 1, 1}, NULL, true},
    {"1-D k3 pad 1 (Whisper's Conv1d), C 80, M 48", 1, 80, 0, 61, 48, 1, 3, 1, 1, 1, {0, 1, 0, 1}, NULL, true},
    /* the AVX2 stem kernel (conv_stem_avx2.c: 1 to 4 channels, 3x3 stride 2): blocks of 3 channels x 24
     * pixels, so M leaving 1 and 2 channels and widths leaving 1, 2 or 3 vectors, the last one partial */
    {"stem 3x3 stride 2, 224 -> 112, C 3, M 32", 1, 3, 30, 224, 32, 3, 3, 1, 2, 1, {1, 1, 1, 1}, NULL, true},
    {"stem 3x3 stride 2, C 1, M 7, no pads, width 23", 1, 1, 9, 23, 7, 3, 3, 1, 2, 1, {0, 0, 0, 0}, NULL, true},
    {"stem 3x3 stride 2, C 4, M 24, pads 0 1 2 3", 1, 4, 12, 49, 24, 3, 3, 1, 2, 1, {0, 1, 2, 3}, NULL, false},
    {"stem 3x3 stride 2, C 2, M 5, batch 2, width 2", 2, 2, 7, 2, 5, 3, 3, 1, 2, 1, {1, 1, 1, 1}, NULL, true},
    {"stem 3x3 stride 2, C 3, M 16, pads wider than the kernel", 1, 3, 5, 6, 16, 3, 3, 1, 2, 1, {4, 5, 3, 4}, NULL, true},
};



/* |got - ref| <= 1e-4 + 1e-4 |ref| everywhere (NaN where the reference has NaN), or fail naming the case. */
static void assert_close(const tb_tensor *got, const tb_tensor *ref, const char *what, const char *how) {
  assert_non_null(got);
  toh_assert_shape(got, tb_tensor_ndim(ref), tb_tensor_shape(ref));
  const float *g = tb_tensor_host_data(got), *r = tb_tensor_host_data(ref);
  for (int64_t i = 0; i < tb_tensor_numel(ref); i++) {
    bool ok = isnan(r[i]) ? isnan(g[i]) : fabs((double)g[i] - r[i]) <= 1e-4 + 1e-4 * fabs((double)r[i]);
    if (!ok) fail_msg("%s (%s): element %lld is %.9g, reference %.9g", what, how, (long long)i, g[i], r[i]);
  }
}



/* tb_conv_direct_run itself on `pool` into a tensor of the output's shape (like `like`). */
static tb_tensor *run_direct(toh *t, const act_case *act, const tb_tensor *like, tb_pool *pool) {
  tb_conv_geom g = tconv_geom(t);
  char why[200] = "";
  if (!tb_conv_direct_fits(cur->impl, &g, why, sizeof why)) fail_msg("%s fits refused: %s", cur->name, why);
  tb_conv_direct_weights *w = tb_conv_direct_pack(cur->impl, &g, tb_tensor_host_data(t->in[1]));
  assert_non_null(w);
  tb_tensor *y = NULL;
  TB_ASSERT_OK(tb_tensor_create(t->cpu, TB_DTYPE_F32, tb_tensor_ndim(like), tb_tensor_shape(like), &y));
  tb_gemm_epilogue ep = {0};
  if (act->name) {
    static const char *const names[] = {"", "Relu", "LeakyRelu", "Clip"};
    for (int i = 1; i < 4; i++)
      if (strcmp(act->name, names[i]) == 0) ep.act = i;
    ep.act_alpha = act->alpha, ep.act_min = act->lo, ep.act_max = act->hi;
  }
  const float *bias = t->in[2] ? tb_tensor_host_data(t->in[2]) : NULL;
  const float *res = t->n_in > 3 && t->in[3] ? tb_tensor_host_data(t->in[3]) : NULL;
  assert_true(tb_conv_direct_run(cur->impl, &g, w, tb_tensor_host_data(t->in[0]), bias, res, &ep,
                                 tb_tensor_host_data(y), pool));
  tb_conv_direct_free(w);
  return y;
}

/* The case through the ISA's entry (packed at prepare with X's shape known, then unknown, then per run
 * on the pool) against the reference, each bit-identical to tb_conv_direct_run's output; then conv_algo
 * gemm (the implicit GEMM) against the reference. */
static void check_case(const conv_case *c, bool fused, const act_case *act, bool residual, bool nan_input) {
  toh t;
  setup(&t, fused, c, act, residual);
  make_inputs(&t, c, (uint64_t)(c->m * 7 + c->c * 3 + c->kh));
  if (residual) { /* the residual has the output's shape */
    tb_conv_geom g = tconv_geom(&t);
    int64_t ys[4] = {g.batch, g.out_c, g.oh, g.ow};
    if (g.spatial == 1) ys[2] = g.ow;
    t.in[3] = random_tensor(&t, g.spatial + 2, ys, 99);
  }
  if (nan_input) { /* NaN in the first input value and in the middle of the last channel */
    float *x = tb_tensor_host_data(t.in[0]);
    x[0] = NAN;
    x[tb_tensor_numel(t.in[0]) - 1 - c->w / 2] = NAN;
  }
  const tb_kernel *k = fused ? cur->fused : cur->conv;
  tb_tensor *ref = tconv_run_kernel(&t, fused ? &tb_kernel_fused_conv : &tb_kernel_conv, TCONV_PREP_NONE, false, NULL);
  /* run_direct knows the vectorised activations; the others are compared with the reference only */
  bool vector_act = !act->name || !strcmp(act->name, "Relu") || !strcmp(act->name, "LeakyRelu") || !strcmp(act->name, "Clip");
  tb_tensor *direct = vector_act ? run_direct(&t, act, ref, NULL) : NULL;
  char what[200];
  snprintf(what, sizeof what, "%s: %s%s%s%s%s%s", cur->name, c->what, fused ? " fused" : "", act->name ? " " : "", act->name ? act->name : "",
           residual ? " residual" : "", nan_input ? " NaN input" : "");
  static const char *const hows[] = {"prepared, X known", "prepared, X unknown", "packed per run, 2 threads"};
  for (int how = 0; how < 3; how++) {
    tb_tensor *got = tconv_run_kernel(&t, k, how < 2 ? TCONV_PREP_CONST_W : TCONV_PREP_NO_W, how == 0, how == 2 ? pool2 : NULL);
    assert_close(got, ref, what, hows[how]);
    if (direct) tconv_assert_same_bits(got, direct, what, hows[how]); /* the entry took the direct path */
    tb_tensor_destroy(got);
  }
  tconv_conv_algo = TB_CONV_ALGO_GEMM;
  tb_tensor *gemm = tconv_run_kernel(&t, k, TCONV_PREP_CONST_W, true, NULL);
  assert_close(gemm, ref, what, "conv_algo gemm");
  tb_tensor_destroy(gemm);
  gemm = tconv_run_kernel(&t, k, TCONV_PREP_NO_W, false, pool2);
  assert_close(gemm, ref, what, "conv_algo gemm, packed per run");
  tb_tensor_destroy(gemm);
  tconv_conv_algo = TB_CONV_ALGO_DIRECT;
  tb_tensor_destroy(direct);
  tb_tensor_destroy(ref);
  toh_teardown(&t);
}

static void direct_matches_reference(const isa *want) {
  if (!have(want)) skip();
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) check_case(&cases[i], false, &no_act, false, false);
}

static const conv_case *named(const char *what) {
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++)
    if (strcmp(cases[i].what, what) == 0) return &cases[i];
  fail_msg("no case '%s'", what);
  return NULL;
}

/* FusedConv: every activation with and without a residual, and with NaN in X. */
static void fused_activations_residual_and_nan(const isa *want) {
  if (!have(want)) skip();
  const conv_case *picked[] = {named("3x3 width 14, C 17, M 40"), named("3x3 width 7, M 128"),
                               named("several chunks, width 7 (C 300, M 128)"), named("1-D k3 stride 2 pad 1, batch 2"),
                               named("groups 4 stride 2, batch 2"), named("stem 3x3 stride 2, C 4, M 24, pads 0 1 2 3"),
                               named("stem 3x3 stride 2, C 2, M 5, batch 2, width 2")};
  for (size_t c = 0; c < sizeof picked / sizeof picked[0]; c++)
    for (size_t a = 0; a < sizeof acts / sizeof acts[0]; a++) {
      check_case(picked[c], true, &acts[a], false, false);
      check_case(picked[c], true, &acts[a], true, a == 1 || a == 3 || a == 4);
    }
  check_case(named("3x3 width 5 no bias"), true, &acts[2], true, true); /* input 2 omitted, residual at 3 */
}

/* 1, 2 and 3 threads give the same bits (each tile on one thread, its depth in a fixed order). */
static void threads_give_the_same_bits(const isa *want) {
  if (!have(want)) skip();
  const char *names[] = {"3x3 width 56", "3x3 width 7, M 128", "several chunks, width 9 (C 600)",
                         "several chunks, width 7 (C 300, M 128)", "groups 4 stride 2, batch 2", "batch 2 width 14",
                         "7x7 stride 2 pad 3 stem, C 3", "column blocks in turn, one padded source (C 64, M 256)",
                         "3x3 no pads (X itself as the source)", "3x3 stride 3 (the generic-stride kernel)",
                         "5x5 stride 4 pad 2, C 3", "stem 3x3 stride 2, 224 -> 112, C 3, M 32",
                         "stem 3x3 stride 2, C 2, M 5, batch 2, width 2"};
  for (size_t i = 0; i < sizeof names / sizeof names[0]; i++) {
    const conv_case *c = named(names[i]);
    toh t;
    setup(&t, true, c, &acts[1], false);
    make_inputs(&t, c, 17 + i);
    tb_tensor *ref = tconv_run_kernel(&t, &tb_kernel_fused_conv, TCONV_PREP_NONE, false, NULL);
    tb_tensor *one = run_direct(&t, &acts[1], ref, NULL), *two = run_direct(&t, &acts[1], ref, pool2);
    tb_tensor *three = run_direct(&t, &acts[1], ref, pool3);
    assert_close(one, ref, c->what, "1 thread");
    tconv_assert_same_bits(two, one, c->what, "2 threads against 1");
    tconv_assert_same_bits(three, one, c->what, "3 threads against 1");
    tb_tensor_destroy(one);
    tb_tensor_destroy(two);
    tb_tensor_destroy(three);
    tb_tensor_destroy(ref);
    toh_teardown(&t);
  }
}

/* A pool that is busy, or a call from inside a pool task, runs every share on the caller in one call: each
 * share must still make its own window of the source (a window kept from the share before held other rows; two
 * threads running one model at O2 got wrong outputs from it, found by tb_soak). */
typedef struct nested_job {
  toh *t;
  const tb_tensor *ref;
  tb_tensor *out;
} nested_job;

static void direct_in_task(void *p, size_t begin, size_t end) {
  nested_job *j = p;
  (void)begin, (void)end;
  j->out = run_direct(j->t, &acts[1], j->ref, pool2);
}

static void shares_on_the_caller_give_the_same_bits(const isa *want) {
  if (!have(want)) skip();
  const char *names[] = {"3x3 width 56", "3x3 width 7, M 128", "batch 2 width 14", "7x7 stride 2 pad 3 stem, C 3",
                         "groups 4 stride 2, batch 2", "several chunks, width 9 (C 600)"};
  for (size_t i = 0; i < sizeof names / sizeof names[0]; i++) {
    const conv_case *c = named(names[i]);
    toh t;
    setup(&t, true, c, &acts[1], false);
    make_inputs(&t, c, 31 + i);
    tb_tensor *ref = tconv_run_kernel(&t, &tb_kernel_fused_conv, TCONV_PREP_NONE, false, NULL);
    tb_tensor *one = run_direct(&t, &acts[1], ref, NULL);
    nested_job job = {&t, ref, NULL};
    tb_pool_parallel_for(pool3, 1, direct_in_task, &job); /* one task: it runs on this thread, inside a task */
    assert_close(one, ref, c->what, "1 thread");
    tconv_assert_same_bits(job.out, one, c->what, "2 shares on the caller against 1 thread");
    tb_tensor_destroy(one);
    tb_tensor_destroy(job.out);
    tb_tensor_destroy(ref);
    toh_teardown(&t);
  }
}

#define BOTH_ISAS(test)                                                  \
  static void avx512_##test(void **state) { (void)state, test(&isa_avx512); } \
  static void avx2_##test(void **state) { (void)state, test(&isa_avx2); }
BOTH_ISAS(direct_matches_reference)
BOTH_ISAS(fused_activations_residual_and_nan)
BOTH_ISAS(threads_give_the_same_bits)
BOTH_ISAS(shares_on_the_caller_give_the_same_bits)

/* What fits() refuses, with the reason's key words. */
static void fits_refuses_with_a_reason(void **state) {
  (void)state;
  tb_conv_geom base = {.spatial = 2, .batch = 1, .in_c = 16, .out_c = 32, .group = 1, .ih = 14, .iw = 14, .oh = 14,
                       .ow = 14, .kh = 3, .kw = 3, .sh = 1, .sw = 1, .dh = 1, .dw = 1, .ph = 1, .pw = 1};
  char why[200] = "";
  bool avx512 = tb_gemm_path_for(tb_convert_hardware_features()) == TB_GEMM_AVX512;
#if defined(__x86_64__)
  assert_true(tb_conv_direct_fits(&tb_conv_direct_f32_avx512, &base, why, sizeof why));
  (void)avx512;
#else
  assert_false(tb_conv_direct_fits(&tb_conv_direct_f32_avx512, &base, why, sizeof why));
  (void)avx512;
  return;
#endif
  tb_conv_geom g = base;
  g.in_c = g.out_c = g.group = 16;
  assert_false(tb_conv_direct_fits(&tb_conv_direct_f32_avx512, &g, why, sizeof why));
  TB_ASSERT_CONTAINS(why, "depthwise (16 groups");
  g = base;
  g.kh = g.kw = 1, g.ph = g.pw = 0;
  assert_false(tb_conv_direct_fits(&tb_conv_direct_f32_avx512, &g, why, sizeof why));
  TB_ASSERT_CONTAINS(why, "1x1 stride-1 unpadded");
  g.sh = g.sw = 2, g.oh = g.ow = 7; /* a 1x1 stride-2 convolution stays on the implicit GEMM (faster there) */
  assert_false(tb_conv_direct_fits(&tb_conv_direct_f32_avx512, &g, why, sizeof why));
  TB_ASSERT_CONTAINS(why, "1x1 kernel: the implicit GEMM");
  g = base;
  g.kh = g.kw = 9, g.ph = g.pw = 4;
  assert_false(tb_conv_direct_fits(&tb_conv_direct_f32_avx512, &g, why, sizeof why));
  TB_ASSERT_CONTAINS(why, "81 taps (at most 64)");
  g = base;
  g.sh = g.sw = 3, g.ow = g.oh = 5; /* stride 3: the generic-stride kernel takes it */
  assert_true(tb_conv_direct_fits(&tb_conv_direct_f32_avx512, &g, why, sizeof why));
  assert_false(tb_conv_direct_fits(NULL, &base, why, sizeof why));
  TB_ASSERT_CONTAINS(why, "no direct convolution");
  g.kh = g.kw = 9, g.ph = g.pw = 4;
  assert_false(tb_conv_direct_fits(&tb_conv_direct_f32_avx512, &g, NULL, 0)); /* no reason wanted */
}

/* The AVX2 direct convolution takes the stems, strided and 1-D convolutions (6 x 16 tiles: every row width
 * has its tiles) and refuses what the AVX-512 one refuses, with the same reasons. */
static void avx2_fits_and_tiles(void **state) {
  (void)state;
  const tb_conv_direct_impl *impl = &tb_conv_direct_f32_avx2;
  tb_conv_geom base = {.spatial = 2, .batch = 1, .in_c = 16, .out_c = 32, .group = 1, .ih = 14, .iw = 14, .oh = 14,
                       .ow = 14, .kh = 3, .kw = 3, .sh = 1, .sw = 1, .dh = 1, .dw = 1, .ph = 1, .pw = 1};
  char why[200] = "";
#if !defined(__x86_64__)
  assert_false(tb_conv_direct_fits(impl, &base, why, sizeof why));
  return;
#endif
  assert_true(tb_conv_direct_fits(impl, &base, why, sizeof why));
  tb_conv_geom g = base;
  g.in_c = 3, g.out_c = 64, g.ih = g.iw = 224, g.oh = g.ow = 112, g.kh = g.kw = 7, g.sh = g.sw = 2, g.ph = g.pw = 3;
  assert_true(tb_conv_direct_fits(impl, &g, why, sizeof why)); /* the 7x7 stride-2 stem */
  for (int64_t ow = 1; ow <= 40; ow++) { /* every width: tiles of 1..6 rows */
    g = base, g.ow = ow, g.iw = ow;
    assert_true(tb_conv_direct_fits(impl, &g, why, sizeof why));
  }
  g = base, g.spatial = 1, g.ih = g.oh = 1, g.kh = 1, g.ph = 0, g.in_c = 80, g.out_c = 384, g.iw = 3000, g.ow = 1500,
  g.sw = 2;
  assert_true(tb_conv_direct_fits(impl, &g, why, sizeof why)); /* Whisper's second Conv1d */
  g = base, g.kh = g.kw = 1, g.ph = g.pw = 0, g.sh = g.sw = 2, g.oh = g.ow = 7;
  assert_false(tb_conv_direct_fits(impl, &g, why, sizeof why));
  TB_ASSERT_CONTAINS(why, "1x1 kernel: the implicit GEMM");
  g = base, g.in_c = g.out_c = g.group = 16;
  assert_false(tb_conv_direct_fits(impl, &g, why, sizeof why));
  TB_ASSERT_CONTAINS(why, "depthwise (16 groups");
  /* the stem kernel: 1 to 4 channels, one group, 3x3 stride 2, dilation 1 */
  g = base, g.in_c = 3, g.ih = g.iw = 224, g.oh = g.ow = 112, g.sh = g.sw = 2;
  assert_true(tb_conv_stem_avx2_fits(&g));
  g.in_c = 4;
  assert_true(tb_conv_stem_avx2_fits(&g));
  g.in_c = 5;
  assert_false(tb_conv_stem_avx2_fits(&g));
  g.in_c = 4, g.out_c = 4, g.group = 2;
  assert_false(tb_conv_stem_avx2_fits(&g));
  g.group = 1, g.sw = 1;
  assert_false(tb_conv_stem_avx2_fits(&g));
  g.sw = 2, g.dh = 2;
  assert_false(tb_conv_stem_avx2_fits(&g));
  g.dh = 1, g.kw = 5;
  assert_false(tb_conv_stem_avx2_fits(&g));
}

/* TB_CONV_DIRECT as conv_algo's default: unset, on, 1 leave auto; off, 0 leave Winograd and the GEMM;
 * anything else is the default with a sentence naming the variable and the value. */
static void env_default_and_bad_value(void **state) {
  (void)state;
  assert_env_default("TB_CONV_DIRECT", TB_CONV_ALGO_WINOGRAD, "the direct convolution runs where it fits");
}

static int group_setup(void **state) {
  (void)state;
  tbt_tensor_env();
  tconv_conv_algo = TB_CONV_ALGO_DIRECT; /* the entries' 3x3 stride-1 cases must run the direct path */
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
      cmocka_unit_test(avx512_direct_matches_reference),
      cmocka_unit_test(avx512_fused_activations_residual_and_nan),
      cmocka_unit_test(avx512_threads_give_the_same_bits),
      cmocka_unit_test(avx512_shares_on_the_caller_give_the_same_bits),
      cmocka_unit_test(avx2_direct_matches_reference),
      cmocka_unit_test(avx2_fused_activations_residual_and_nan),
      cmocka_unit_test(avx2_threads_give_the_same_bits),
      cmocka_unit_test(avx2_shares_on_the_caller_give_the_same_bits),
      cmocka_unit_test(avx2_fits_and_tiles),
      cmocka_unit_test(fits_refuses_with_a_reason),
      cmocka_unit_test(env_default_and_bad_value),
  };
  return cmocka_run_group_tests(tests, group_setup, group_teardown);
}
