/* The direct pointwise convolution (src/backend/cpu/kernels/fast/conv/conv_pointwise*.c: 1x1 stride-1 fp32
 * convolutions with few input channels over large maps, AVX-512 only) called directly against a double-precision
 * 1x1 convolution: output channel counts that fill 8-channel chunks and odd ones (1, 2, 11, 13, 67: last chunks of
 * 1 to 5 rows), depths 1 to 96, maps whose pixels end inside a 48-pixel tile and inside a 480-pixel job block
 * (28x28, 29x31, 56x56, 112x112 rows), batch 2, with and without bias; a residual (also y itself, in place) with
 * each activation (Relu, LeakyRelu, Clip, Sigmoid, HardSigmoid, HardSwish, SiLU in registers, with the bits of the
 * vec_ops table's loop; Tanh and Mish over each block's rows after it); one thread and a 3-thread pool with the
 * same bits. Every output element is checked (the buffer starts as NaN, so an unwritten one fails) and the floats
 * after the output stay untouched. What it takes (tb_conv_pointwise_fits) by path, depth and map size. Through the
 * Conv and FusedConv entries (prepared with W constant, X's shape known and not, per run, conv_algo gemm) the
 * level-0 reference's values. Without AVX-512 only the rule (nothing taken) and the entries run. Tolerance: |got -
 * ref| <= 3e-5 * (sum over terms |w x| + |bias| + |residual|) + 1e-6 after the activation: an fp32 sum of at most
 * 96 products in any order stays near 1e-7 of that sum, while a wrong channel, pixel or weight is off by a whole
 * term. */
#include <math.h>
#include "backend/cpu/kernels/fast/conv/conv_fast.h"
#include "backend/cpu/kernels/fast/conv/conv_pointwise.h"
#include "backend/cpu/kernels/fast/gemm/fast_kernel.h"
#include "backend/cpu/kernels/fast/gemm/gemm_f32.h"
#include "core/convert_features.h"
#include "core/threadpool.h"
#include "model/params.h"
#include "test_engine_util.h"
#include "test_conv_util.h"
#include "test_op_harness.h"
#include "test_tensor_util.h"

extern const tb_kernel tb_kernel_conv_f32_avx512, tb_kernel_conv_f32_avx2, tb_kernel_fused_conv_f32_avx512,
    tb_kernel_fused_conv_f32_avx2, tb_kernel_conv, tb_kernel_fused_conv;

static tb_pool *pool3;

static bool have_avx512(void) { return tb_gemm_path_for(tb_convert_hardware_features()) == TB_GEMM_AVX512; }

typedef struct pw_case {
  const char *what;
  int64_t batch, c, m, h, w;
  bool bias;
} pw_case;

static const pw_case cases[] = {
    {"16 -> 64 at 112x112 (MobileNetV3)", 1, 16, 64, 112, 112, true},
    {"32 -> 16 at 112x112 (EfficientNet-B0), no bias", 1, 32, 16, 112, 112, false},
    {"24 -> 72 at 56x56", 1, 24, 72, 56, 56, true},
    {"96 -> 24 at 56x56 (the deepest it takes there)", 1, 96, 24, 56, 56, true},
    {"3 -> 13 at 29x31 (odd channels, a short last tile)", 2, 3, 13, 29, 31, true},
    {"1 -> 1 at 28x28", 1, 1, 1, 28, 28, true},
    {"17 -> 67 at 30x33 (two job blocks, a partial chunk)", 2, 17, 67, 30, 33, false},
    {"8 -> 24 at 28x28", 1, 8, 24, 28, 28, true},
    {"32 -> 2 at 40x40 (a segmentation head: 2 of 8 rows)", 1, 32, 2, 40, 40, true},
    {"4 -> 11 at 28x29 (a last chunk of 3 rows)", 1, 4, 11, 28, 29, false},
};

static tb_conv_geom geom_of(const pw_case *c) {
  return (tb_conv_geom){.spatial = 2, .batch = c->batch, .in_c = c->c, .out_c = c->m, .group = 1, .ih = c->h, .iw = c->w,
                        .oh = c->h, .ow = c->w, .kh = 1, .kw = 1, .sh = 1, .sw = 1, .dh = 1, .dw = 1};
}

enum { GUARD = 64 };

/* Case c on `pool` with activation ep (residual when with_res, in place in y when in_place); every output
 * checked; y1 (may be NULL) receives the output. */
static void check(const pw_case *c, tb_pool *pool, const tb_gemm_epilogue *ep, bool with_res, bool in_place, float *y1) {
  tb_conv_geom g = geom_of(c);
  assert_true(tb_conv_pointwise_fits(TB_GEMM_AVX512, &g));
  int64_t n = g.oh * g.ow, nx = g.batch * g.in_c * n, nw = g.out_c * g.in_c, ny = g.batch * g.out_c * n;
  float *x = malloc((size_t)nx * sizeof *x), *w = malloc((size_t)nw * sizeof *w), *bias = malloc((size_t)g.out_c * sizeof *bias);
  float *res = malloc((size_t)ny * sizeof *res), *y = malloc((size_t)(ny + GUARD) * sizeof *y);
  double *ref = malloc((size_t)ny * sizeof *ref), *mag = malloc((size_t)ny * sizeof *mag);
  assert_true(x && w && bias && res && y && ref && mag);
  fill(x, nx, 1 + (uint64_t)nx);
  fill(w, nw, 2 + (uint64_t)nw);
  fill(bias, g.out_c, 3);
  fill(res, ny, 4);
  const float *b = c->bias ? bias : NULL;
  for (int64_t bi = 0; bi < g.batch; bi++)
    for (int64_t m = 0; m < g.out_c; m++)
      for (int64_t p = 0; p < n; p++) {
        int64_t o = (bi * g.out_c + m) * n + p;
        double s = b ? b[m] : 0.0, a = b ? fabs(b[m]) : 0.0;
        for (int64_t k = 0; k < g.in_c; k++) {
          double t = (double)w[m * g.in_c + k] * x[(bi * g.in_c + k) * n + p];
          s += t, a += fabs(t);
        }
        if (with_res) s += res[o], a += fabs(res[o]);
        ref[o] = s, mag[o] = a;
      }
  for (int64_t i = 0; i < ny; i++) y[i] = in_place ? res[i] : NAN;
  for (int64_t i = ny; i < ny + GUARD; i++) y[i] = 1234.5f;
  tb_conv_pointwise_weights *pw = tb_conv_pointwise_pack(&g, w);
  assert_non_null(pw);
  tb_conv_pointwise_run(&g, pw, x, b, with_res ? (in_place ? y : res) : NULL, ep, y, pool);
  tb_conv_pointwise_free(pw);
  for (int64_t i = 0; i < ny; i++) {
    float want = (float)ref[i];
    tb_conv_epilogue_row(ep, NULL, &want, 1);
    if (!(fabs((double)y[i] - want) <= 3e-5 * mag[i] + 1e-6))
      fail_msg("%s (%d threads, act %d%s): output %lld (channel %lld, pixel %lld) is %.9g, expected %.9g", c->what,
               tb_pool_threads(pool), ep->act, with_res ? (in_place ? ", residual in place" : ", residual") : "",
               (long long)i, (long long)(i / n % g.out_c), (long long)(i % n), y[i], want);
  }
  for (int64_t i = ny; i < ny + GUARD; i++)
    if (y[i] != 1234.5f) fail_msg("%s: wrote past the output (element %lld)", c->what, (long long)i);
  if (y1) memcpy(y1, y, (size_t)ny * sizeof *y);
  free(x), free(w), free(bias), free(res), free(y), free(ref), free(mag);
}

static const tb_gemm_epilogue plain_ep = {0};

/* Every case on one thread and on the pool, with the same bits. */
static void every_case_one_and_three_threads(void **state) {
  (void)state;
  if (!have_avx512()) skip();
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
    tb_conv_geom g = geom_of(&cases[i]);
    size_t ny = (size_t)(g.batch * g.out_c * g.oh * g.ow);
    float *y1 = malloc(ny * sizeof *y1), *y3 = malloc(ny * sizeof *y3);
    assert_true(y1 && y3);
    check(&cases[i], NULL, &plain_ep, false, false, y1);
    check(&cases[i], pool3, &plain_ep, false, false, y3);
    if (memcmp(y1, y3, ny * sizeof *y1) != 0) fail_msg("%s: 3 threads differ from 1", cases[i].what);
    free(y1), free(y3);
  }
}

/* Each activation with and without a residual, and the residual read from y itself. */
static void residual_and_each_activation(void **state) {
  (void)state;
  if (!have_avx512()) skip();
  const tb_gemm_epilogue epilogues[] = {
      {.act = 0}, {.act = 1}, {.act = 2, .act_alpha = 0.1f}, {.act = 3, .act_min = -0.3f, .act_max = 0.4f},
      {.act = 4}, {.act = 5}, {.act = 6, .act_alpha = 0.2f, .act_beta = 0.5f}, {.act = 7}, {.act = 10}, {.act = 11}};
  const pw_case *picks[] = {&cases[2], &cases[4], &cases[6]};
  for (size_t k = 0; k < sizeof picks / sizeof picks[0]; k++)
    for (size_t a = 0; a < sizeof epilogues / sizeof epilogues[0]; a++) {
      check(picks[k], NULL, &epilogues[a], true, false, NULL);
      check(picks[k], pool3, &epilogues[a], a % 2 == 0, false, NULL);
      check(picks[k], pool3, &epilogues[a], true, true, NULL);
    }
}

/* The activations applied in registers (Sigmoid, HardSigmoid, HardSwish, SiLU besides Relu, LeakyRelu,
 * Clip) give the bits of the AVX-512 vec_ops table's loop run over the output afterwards (what the GEMM
 * path's block epilogue and the unfused kernels compute), with a residual and without. */
static void activations_in_registers_same_bits_as_the_table(void **state) {
  (void)state;
  if (!have_avx512()) skip();
  const struct vec_ops *vec = tb_fast_vec_ops(TB_GEMM_AVX512);
  const tb_gemm_epilogue epilogues[] = {{.act = 4, .vec = vec}, {.act = 6, .act_alpha = 0.2f, .act_beta = 0.5f, .vec = vec},
                                        {.act = 7, .vec = vec}, {.act = 10, .vec = vec}, {.act = 2, .act_alpha = 0.1f, .vec = vec}};
  const pw_case *c = &cases[6]; /* 17 -> 67 at 30x33, batch 2 */
  tb_conv_geom g = geom_of(c);
  int64_t n = g.oh * g.ow, nx = g.batch * g.in_c * n, ny = g.batch * g.out_c * n;
  float *x = malloc((size_t)nx * sizeof *x), *w = malloc((size_t)(g.out_c * g.in_c) * sizeof *w);
  float *bias = malloc((size_t)g.out_c * sizeof *bias), *res = malloc((size_t)ny * sizeof *res);
  float *y1 = malloc((size_t)ny * sizeof *y1), *y2 = malloc((size_t)ny * sizeof *y2);
  assert_true(x && w && bias && res && y1 && y2);
  fill(x, nx, 5), fill(w, g.out_c * g.in_c, 6), fill(bias, g.out_c, 7), fill(res, ny, 8);
  for (int64_t i = 0; i < nx; i += 7) x[i] *= 40.0f; /* some sums far into each function's tails */
  tb_conv_pointwise_weights *pw = tb_conv_pointwise_pack(&g, w);
  assert_non_null(pw);
  for (size_t a = 0; a < sizeof epilogues / sizeof epilogues[0]; a++)
    for (int with_res = 0; with_res < 2; with_res++) {
      assert_true(tb_conv_pointwise_act_in_regs(epilogues[a].act));
      tb_conv_pointwise_run(&g, pw, x, bias, with_res ? res : NULL, &epilogues[a], y1, NULL);
      tb_conv_pointwise_run(&g, pw, x, bias, with_res ? res : NULL, &plain_ep, y2, NULL);
      for (int64_t i = 0; i < g.batch * g.out_c; i++) tb_conv_epilogue_row(&epilogues[a], NULL, y2 + i * n, n);
      for (int64_t i = 0; i < ny; i++)
        if (memcmp(&y1[i], &y2[i], sizeof y1[i]) != 0)
          fail_msg("act %d%s: output %lld is %.9g in registers, %.9g through the table's loop", epilogues[a].act,
                   with_res ? " with a residual" : "", (long long)i, y1[i], y2[i]);
    }
  assert_false(tb_conv_pointwise_act_in_regs(5));  /* Tanh: over the block's rows after it */
  assert_false(tb_conv_pointwise_act_in_regs(11)); /* Mish */
  tb_conv_pointwise_free(pw);
  free(x), free(w), free(bias), free(res), free(y1), free(y2);
}

/* What it takes: AVX-512 only; one group, 1x1 stride 1 unpadded; depth <= 32 from 28x28 up, <= 96 from
 * 56x56 up. */
static void what_it_takes(void **state) {
  (void)state;
  tb_conv_geom base = geom_of(&cases[0]), g;
  assert_true(tb_conv_pointwise_fits(TB_GEMM_AVX512, &base));
  assert_false(tb_conv_pointwise_fits(TB_GEMM_AVX2, &base));
  assert_false(tb_conv_pointwise_fits(TB_GEMM_PORTABLE, &base));
  g = base, g.in_c = 33, g.oh = g.ow = g.ih = g.iw = 28; /* 784 pixels: deeper than 32 stays on the GEMM */
  assert_false(tb_conv_pointwise_fits(TB_GEMM_AVX512, &g));
  g.in_c = 32;
  assert_true(tb_conv_pointwise_fits(TB_GEMM_AVX512, &g));
  g = base, g.oh = g.ow = g.ih = g.iw = 27; /* 729 pixels */
  assert_false(tb_conv_pointwise_fits(TB_GEMM_AVX512, &g));
  g = base, g.in_c = 96, g.oh = g.ow = g.ih = g.iw = 56;
  assert_true(tb_conv_pointwise_fits(TB_GEMM_AVX512, &g));
  g.in_c = 97;
  assert_false(tb_conv_pointwise_fits(TB_GEMM_AVX512, &g));
  g = base, g.group = 2, g.in_c = 16;
  assert_false(tb_conv_pointwise_fits(TB_GEMM_AVX512, &g));
  g = base, g.sh = g.sw = 2, g.oh = g.ow = 56;
  assert_false(tb_conv_pointwise_fits(TB_GEMM_AVX512, &g));
  g = base, g.kh = g.kw = 3, g.ph = g.pw = 1;
  assert_false(tb_conv_pointwise_fits(TB_GEMM_AVX512, &g));
}

/* The method an executor at level 2 on this CPU's features (TB_CPU_FEATURES applied) records for a 1x1
 * 16 -> 40 Conv at 28x30 with W and the bias constant and X's shape known: "pointwise direct" where the
 * features give the AVX-512 path; skipped, with the reason printed, elsewhere. */
static void executor_names_the_method(void) {
  if (tb_gemm_path_for(tb_convert_features()) != TB_GEMM_AVX512) {
    print_message("skipping the method assertion: this CPU (or TB_CPU_FEATURES) lacks AVX-512F\n");
    return;
  }
  tb_ir_model *m = tbt_ir_model(13);
  tb_graph *g = tb_graph_new(m, NULL, "main");
  int64_t xd[4] = {1, 16, 28, 30}, wd[4] = {40, 16, 1, 1}, bd[1] = {40};
  float w[40 * 16], b[40];
  fill(w, 40 * 16, 5);
  fill(b, 40, 6);
  tbt_input(g, "x", TB_DTYPE_F32, 4, xd, NULL);
  tbt_const_f32(g, "w", 4, wd, w);
  tbt_const_f32(g, "b", 1, bd, b);
  tbt_node(g, "Conv", "conv", "x,w,b", "y");
  tbt_output(g, "y");
  TB_ASSERT_OK(tb_graph_sort(g));
  TB_ASSERT_OK(tb_graph_check(g));
  TB_ASSERT_OK(tb_graph_infer(g));
  TB_ASSERT_OK(tb_graph_parse_params(g));
  tb_backend *cpu = NULL;
  TB_ASSERT_OK(tb_backend_create_kind(TB_BACKEND_CPU, 0, &cpu));
  tb_exec *e = NULL;
  TB_ASSERT_OK(tb_exec_create(g, cpu, TB_KERNEL_FAST, tb_convert_features(), 1, &e));
  float *xv = malloc(16 * 28 * 30 * sizeof(float));
  assert_non_null(xv);
  fill(xv, 16 * 28 * 30, 7);
  tb_tensor *in = tbt_f32(cpu, 4, xd, xv), *y = NULL;
  TB_ASSERT_OK(tb_exec_run(e, &in, &y));
  const char *method = tb_exec_node_method(e, 0);
  assert_non_null(method);
  assert_string_equal(method, "pointwise direct");
  tb_tensor_destroy(y);
  tb_tensor_destroy(in);
  free(xv);
  tb_exec_destroy(e);
  tb_backend_destroy(cpu);
  tb_ir_model_destroy(m);
}

/* A state prepared for the pointwise kernel (X's shape known: 28x30) run on a 7x7 map, which the kernel
 * refuses: conv_fast.c keeps W and the GEMM packs it per run; the level-0 reference's values. */
static void refused_map_after_a_pointwise_prepare(const tb_kernel *k, const tb_kernel *ref_k, bool fused) {
  static const conv_case big = {"1x1 16 -> 40 at 28x30", 1, 16, 28, 30, 40, 1, 1, 1, 1, 1, {0}, NULL, true};
  toh t;
  setup(&t, fused, &big, fused ? &acts[1] : &no_act, false);
  make_inputs(&t, &big, 41);
  void *state = NULL;
  tconv_set_prepare_view(&t, true, true);
  tb_tensor *consts[4] = {NULL, t.in[1], NULL, NULL};
  tb_kernel_ctx pc = {.graph = t.graph, .node = toh_node(&t), .n_inputs = t.n_in, .inputs = consts, .backend = t.cpu,
                      .threads = 1};
  const tb_value_type *types[TOH_MAX];
  (void)tbt_kernel_bind(&pc, t.graph, toh_node(&t), tbt_graph_in_types(t.graph, toh_node(&t), types, TOH_MAX));
  TB_ASSERT_OK(k->prepare(&pc, &state));
  assert_non_null(state);
  int64_t sd[4] = {1, 16, 7, 7};
  tb_tensor_destroy(t.in[0]);
  t.in[0] = random_tensor(&t, 4, sd, 43);
  tb_tensor *ref = tconv_run_kernel(&t, ref_k, TCONV_PREP_NONE, false, NULL), *got = NULL;
  tb_kernel_ctx ctx = {.graph = t.graph, .node = toh_node(&t), .n_inputs = t.n_in, .inputs = t.in, .n_outputs = 1,
                       .outputs = &got, .backend = t.cpu, .threads = 1, .state = state};
  (void)tbt_kernel_bind(&ctx, t.graph, toh_node(&t), NULL);
  TB_ASSERT_OK(k->run(&ctx));
  k->release(state);
  toh_assert_tensor(got, TB_DTYPE_F32, 4, (int64_t[]){1, 40, 7, 7});
  const float *gv = tb_tensor_host_data(got), *rv = tb_tensor_host_data(ref);
  for (int64_t e = 0; e < tb_tensor_numel(ref); e++)
    if (!(fabs((double)gv[e] - rv[e]) <= 1e-4 + 1e-4 * fabs((double)rv[e])))
      fail_msg("7x7 after a pointwise prepare (%s): element %lld is %.9g, reference %.9g",
               fused ? "fused Relu" : "Conv", (long long)e, gv[e], rv[e]);
  tb_tensor_destroy(got);
  tb_tensor_destroy(ref);
  toh_teardown(&t);
}

/* Through the Conv and FusedConv entries (the driver's choice, prepared and per-run weights, an activation
 * over the block's rows): the level-0 reference's values under conv_algo auto and gemm, on each vector
 * path this CPU has (on AVX-512 the prepare with X's shape known packs for the kernel, the others run it with
 * W packed per run or keep the GEMM's packing); then that an executor names the kernel's method and a 7x7 run
 * after a pointwise prepare. */
static void conv_entries_take_it(void **state) {
  (void)state;
  static const conv_case ccases[] = {
      {"1x1 16 -> 40 at 28x30", 1, 16, 28, 30, 40, 1, 1, 1, 1, 1, {0}, NULL, true},
      {"1x1 5 -> 11 at 29x29, batch 2", 2, 5, 29, 29, 11, 1, 1, 1, 1, 1, {0}, NULL, false},
  };
  const tb_kernel *conv[] = {NULL, &tb_kernel_conv_f32_avx2, &tb_kernel_conv_f32_avx512};
  const tb_kernel *fused[] = {NULL, &tb_kernel_fused_conv_f32_avx2, &tb_kernel_fused_conv_f32_avx512};
  int paths = (int)tb_gemm_path_for(tb_convert_hardware_features()) + 1;
  for (size_t i = 0; i < sizeof ccases / sizeof ccases[0]; i++)
    for (int f = 0; f < 3; f++) {
      const act_case *act = f == 1 ? &acts[7] : f == 2 ? &acts[1] : &no_act; /* HardSwish after, Relu in registers */
      toh t;
      setup(&t, f != 0, &ccases[i], act, f != 0);
      make_inputs(&t, &ccases[i], 21 + i);
      if (f) {
        int64_t ys[4] = {ccases[i].batch, ccases[i].m, ccases[i].h, ccases[i].w};
        t.in[3] = random_tensor(&t, 4, ys, 77);
      }
      tb_tensor *ref = tconv_run_kernel(&t, f ? &tb_kernel_fused_conv : &tb_kernel_conv, TCONV_PREP_NONE, false, NULL);
      for (int p = TB_GEMM_AVX2; p < paths; p++)
        for (int mode = 0; mode < 4; mode++) {
          tconv_conv_algo = mode == 3 ? TB_CONV_ALGO_GEMM : TB_CONV_ALGO_AUTO;
          tconv_prep prep = mode == 2 ? TCONV_PREP_NO_W : TCONV_PREP_CONST_W;
          tb_tensor *got = tconv_run_kernel(&t, f ? fused[p] : conv[p], prep, mode == 1, mode == 2 ? pool3 : NULL);
          const float *gv = tb_tensor_host_data(got), *rv = tb_tensor_host_data(ref);
          for (int64_t e = 0; e < tb_tensor_numel(ref); e++)
            if (!(fabs((double)gv[e] - rv[e]) <= 1e-4 + 1e-4 * fabs((double)rv[e])))
              fail_msg("%s (%s) on path %d, mode %d: element %lld is %.9g, reference %.9g", ccases[i].what,
                       f == 1 ? "fused HardSwish" : f == 2 ? "fused Relu" : "Conv", p, mode, (long long)e, gv[e], rv[e]);
          tb_tensor_destroy(got);
        }
      tconv_conv_algo = 0;
      tb_tensor_destroy(ref);
      toh_teardown(&t);
    }
  /* that the kernel is what the entries choose (the executor's method), and its state on a map it refuses */
  executor_names_the_method();
  if (!have_avx512()) {
    print_message("skipping the 7x7 run after a pointwise prepare: this CPU lacks AVX-512F\n");
    return;
  }
  refused_map_after_a_pointwise_prepare(&tb_kernel_conv_f32_avx512, &tb_kernel_conv, false);
  refused_map_after_a_pointwise_prepare(&tb_kernel_fused_conv_f32_avx512, &tb_kernel_fused_conv, true);
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
      cmocka_unit_test(every_case_one_and_three_threads),
      cmocka_unit_test(residual_and_each_activation),
      cmocka_unit_test(activations_in_registers_same_bits_as_the_table),
      cmocka_unit_test(what_it_takes),
      cmocka_unit_test(conv_entries_take_it),
  };
  return cmocka_run_group_tests(tests, group_setup, group_teardown);
}
