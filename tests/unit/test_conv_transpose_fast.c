/* The level-2 fp32 ConvTranspose (src/backend/cpu/kernels/fast/conv/conv_transpose*.c: GEMM plus col2im)
 * against the level-0 reference kernel on every path the CPU has after TB_CPU_FEATURES (portable, AVX2+FMA,
 * AVX-512; the entries are called directly, so scripts/test_isa.sh's mask keeps the AVX-512 one off):
 * strides (the 2x2 stride-2 upsampling, 4x4 stride 2 pad 1, stride 3, unequal strides), dilations, groups,
 * explicit and asymmetric pads, output_padding, output_shape (smaller and larger than the full output),
 * auto_pad SAME_UPPER / SAME_LOWER / VALID, 1-D, batch 2, with and without bias, no input channels, rows wide
 * enough for the vector col2im and an input cut into several row blocks; each with W packed at prepare and
 * W read per run, on one thread and on the two-thread pool (jobs shared, or run in turn with the GEMM and
 * col2im split). Bad shapes and attributes as statuses naming the node, and which entry the executor picks
 * under masks and levels.
 * Tolerance: |fast - reference| <= 1e-4 * |reference| + 1e-4 (inputs in [-1, 1], at most a few hundred
 * products per output: fp32 summation in any order stays near 1e-6 of sum |w x|, while a wrong tap, pad or
 * channel is off by 0.1 or more). */
#include <math.h>
#include "backend/cpu/kernels/fast/gemm/gemm_f32.h"
#include "core/convert_features.h"
#include "core/threadpool.h"
#include "test_conv_util.h"
#include "test_kernel_util.h"
#include "test_op_harness.h"
#include "test_tensor_util.h"

extern const tb_kernel tb_kernel_conv_transpose_f32_avx512, tb_kernel_conv_transpose_f32_avx2,
    tb_kernel_conv_transpose_f32_portable, tb_kernel_conv_transpose;

static const tb_kernel *const entries[] = {&tb_kernel_conv_transpose_f32_portable, &tb_kernel_conv_transpose_f32_avx2,
                                               &tb_kernel_conv_transpose_f32_avx512};
static const char *const path_names[] = {"portable", "avx2", "avx512"};
static tb_pool *pool2;

/* The paths this run may use: the CPU's, less what TB_CPU_FEATURES removes. */
static int n_paths(void) { return (int)tb_gemm_path_for(tb_convert_features()) + 1; }

typedef struct ct_case {
  const char *what;
  int64_t batch, c, h, w; /* h 0: 1-D */
  int64_t m, kh, kw, group, sh, sw, dh, dw;
  int64_t pads[4];        /* begin h, begin w, end h, end w (1-D: pads[1] and pads[3]) */
  int64_t opad[2];        /* output_padding h, w (1-D: opad[1]) */
  int64_t oshape[2];      /* output_shape h, w when oshape[1] > 0 (1-D: oshape[1]) */
  const char *auto_pad;   /* instead of pads when set */
  bool bias;
} ct_case;

static const ct_case cases[] = {
    {"2x2 stride 2", 1, 8, 5, 7, 6, 2, 2, 1, 2, 2, 1, 1, {0}, {0}, {0}, NULL, true},
    {"3x3 stride 1 pad 1, batch 2", 2, 5, 6, 6, 4, 3, 3, 1, 1, 1, 1, 1, {1, 1, 1, 1}, {0}, {0}, NULL, true},
    {"4x4 stride 2 pad 1", 1, 6, 4, 5, 3, 4, 4, 1, 2, 2, 1, 1, {1, 1, 1, 1}, {0}, {0}, NULL, false},
    {"groups 2, asymmetric pads, output_padding", 1, 4, 5, 4, 6, 3, 3, 2, 2, 2, 1, 1, {1, 0, 0, 2}, {1, 1}, {0}, NULL, true},
    {"dilation 2, stride 3", 1, 3, 4, 4, 2, 3, 2, 1, 3, 3, 2, 2, {0, 1, 1, 0}, {0}, {0}, NULL, true},
    {"groups 4 (one channel each), strides 2 x 1", 2, 4, 6, 5, 4, 3, 3, 4, 2, 1, 1, 1, {1, 1, 1, 1}, {0}, {0}, NULL, true},
    {"output_shape smaller than the full output", 1, 3, 4, 4, 2, 3, 3, 1, 2, 2, 1, 1, {0}, {0}, {8, 7}, NULL, true},
    {"output_shape larger than the full output", 1, 3, 4, 4, 2, 3, 3, 1, 2, 2, 1, 1, {0}, {0}, {10, 11}, NULL, true},
    {"auto_pad SAME_UPPER", 1, 3, 5, 5, 4, 3, 3, 1, 2, 2, 1, 1, {0}, {0}, {0}, "SAME_UPPER", true},
    {"auto_pad SAME_LOWER 4x4", 1, 3, 5, 6, 4, 4, 4, 1, 2, 2, 1, 1, {0}, {0}, {0}, "SAME_LOWER", false},
    {"auto_pad VALID", 1, 2, 3, 4, 3, 2, 3, 1, 1, 2, 1, 1, {0}, {0}, {0}, "VALID", true},
    {"1-D stride 2", 1, 4, 0, 9, 3, 1, 3, 1, 1, 2, 1, 1, {0, 1, 0, 2}, {0, 1}, {0}, NULL, true},
    {"1-D 2x stride 2, batch 2", 2, 3, 0, 40, 5, 1, 2, 1, 1, 2, 1, 1, {0}, {0}, {0}, NULL, false},
    {"wide rows, stride 2, 3x3", 1, 8, 6, 37, 5, 3, 3, 1, 2, 2, 1, 1, {1, 1, 1, 1}, {1, 1}, {0}, NULL, true},
    {"wide rows, stride 1, 3x5", 1, 4, 3, 40, 3, 3, 5, 1, 1, 1, 1, 1, {2, 2, 2, 2}, {0}, {0}, NULL, true},
    {"stride 2 dilation 2 (strided adds)", 1, 3, 5, 19, 2, 3, 3, 1, 2, 2, 2, 2, {1, 2, 0, 1}, {1, 1}, {0}, NULL, true},
    {"several row blocks", 1, 16, 40, 64, 64, 2, 2, 1, 2, 2, 1, 1, {0}, {0}, {0}, NULL, true},
    {"no input channels", 1, 0, 3, 3, 2, 3, 3, 1, 2, 2, 1, 1, {0}, {0}, {0}, NULL, true},
};

/* W's second dim: output channels per group (m holds the total). */
static int64_t per_group(const ct_case *c) { return c->group ? c->m / c->group : 0; }

/* The ConvTranspose node (opset 11) of a case, with X, W (, B) in t->in. */
static void setup_case(toh *t, const ct_case *c, uint64_t seed) {
  toh_begin(t, NULL);
  bool two = c->h != 0;
  size_t n = two ? 2 : 1;
  int64_t kernel[2] = {c->kh, c->kw}, strides[2] = {c->sh, c->sw}, dil[2] = {c->dh, c->dw};
  int64_t pads[4] = {c->pads[0], c->pads[1], c->pads[2], c->pads[3]}, pads1[2] = {c->pads[1], c->pads[3]};
  tb_attr attrs[8];
  size_t na = 0;
  attrs[na++] = TOH_INT("group", c->group);
  attrs[na++] = TOH_INTS_N("kernel_shape", two ? kernel : kernel + 1, n);
  attrs[na++] = TOH_INTS_N("strides", two ? strides : strides + 1, n);
  attrs[na++] = TOH_INTS_N("dilations", two ? dil : dil + 1, n);
  attrs[na++] = TOH_INTS_N("output_padding", two ? c->opad : c->opad + 1, n);
  if (c->oshape[1] > 0) attrs[na++] = TOH_INTS_N("output_shape", two ? c->oshape : c->oshape + 1, n);
  if (c->auto_pad) attrs[na++] = TOH_STR("auto_pad", c->auto_pad);
  else attrs[na++] = TOH_INTS_N("pads", two ? pads : pads1, 2 * n);
  toh_add_op(t, "", "ConvTranspose", 11, 3, c->bias ? 0u : 4u, 1, 0, attrs, na);
  int64_t xs[4] = {c->batch, c->c, c->h, c->w}, ws[4] = {c->c, per_group(c), c->kh, c->kw};
  if (!two) xs[2] = c->w, ws[2] = c->kw;
  size_t rank = two ? 4 : 3;
  t->in[0] = random_tensor(t, rank, xs, seed);
  t->in[1] = random_tensor(t, rank, ws, seed + 1);
  if (c->bias) t->in[2] = random_tensor(t, 1, &c->m, seed + 2);
}

/* Kernel k on t->in: prepared with W a constant (packed once) or with no W (read per run), then run on
 * `pool`; the status, the output in *out. */
static tb_status run_fast(toh *t, const tb_kernel *k, bool w_constant, tb_pool *pool, tb_tensor **out) {
  void *state = NULL;
  *out = NULL;
  tconv_set_prepare_view(t, false, w_constant);
  tb_tensor *consts[3] = {NULL, w_constant ? t->in[1] : NULL, NULL};
  tb_kernel_ctx pc = {.graph = t->graph, .node = toh_node(t), .n_inputs = t->n_in, .inputs = consts, .backend = t->cpu,
                      .threads = 1};
  (void)tbt_kernel_bind(&pc, t->graph, toh_node(t), NULL);
  TB_ASSERT_OK(k->prepare(&pc, &state));
  if (!w_constant) assert_null(state);
  tb_kernel_ctx ctx = {.graph = t->graph, .node = toh_node(t), .n_inputs = t->n_in, .inputs = t->in, .n_outputs = 1,
                       .outputs = out, .backend = t->cpu, .threads = tb_pool_threads(pool), .pool = pool, .state = state};
  (void)tbt_kernel_bind(&ctx, t->graph, toh_node(t), NULL);
  tb_status st = k->run(&ctx);
  k->release(state);
  return st;
}

static void assert_close(const tb_tensor *got, const tb_tensor *ref, const char *what, const char *how) {
  assert_non_null(got);
  toh_assert_shape(got, tb_tensor_ndim(ref), tb_tensor_shape(ref));
  const float *g = tb_tensor_host_data(got), *r = tb_tensor_host_data(ref);
  for (int64_t i = 0; i < tb_tensor_numel(ref); i++)
    if (!(fabs((double)g[i] - r[i]) <= 1e-4 + 1e-4 * fabs((double)r[i])))
      fail_msg("%s (%s): element %lld is %.9g, reference %.9g", what, how, (long long)i, g[i], r[i]);
}

static void paths_match_reference(void **state) {
  (void)state;
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
    const ct_case *c = &cases[i];
    toh t;
    setup_case(&t, c, 100 + i);
    tb_tensor *ref[1] = {NULL};
    TB_ASSERT_OK(toh_run_tensors(&t, t.in, ref, false));
    for (int p = 0; p < n_paths(); p++)
      for (int w_const = 0; w_const < 2; w_const++)
        for (int threads = 1; threads <= 2; threads++) {
          char how[96];
          snprintf(how, sizeof how, "%s path, W %s, %d thread%s", path_names[p], w_const ? "packed at prepare" : "read per run",
                   threads, threads > 1 ? "s" : "");
          tb_tensor *out = NULL;
          TB_ASSERT_OK(run_fast(&t, entries[p], w_const, threads > 1 ? pool2 : NULL, &out));
          assert_close(out, ref[0], c->what, how);
          tb_tensor_destroy(out);
        }
    tb_tensor_destroy(ref[0]);
    toh_teardown(&t);
  }
}

/* The output shapes of a few cases, checked by value (the reference could share a mistake in the window
 * helpers): full = stride * (in - 1) + output_padding + (kernel - 1) * dilation + 1 - pads. */
static void output_sizes_follow_the_spec(void **state) {
  (void)state;
  static const struct {
    size_t i;
    int64_t shape[4];
  } want[] = {
      {0, {1, 6, 10, 14}}, /* 2 * 4 + 2, 2 * 6 + 2 */
      {3, {1, 6, 11, 8}},  /* 2 * 4 + 1 + 3 - 1, 2 * 3 + 1 + 3 - 2 */
      {6, {1, 2, 8, 7}},   {7, {1, 2, 10, 11}}, {8, {1, 4, 10, 10}}, /* SAME: in * stride */
      {11, {1, 3, 17, 0}}, /* 1-D: 2 * 8 + 1 + 3 - 3 */
  };
  for (size_t k = 0; k < sizeof want / sizeof want[0]; k++) {
    const ct_case *c = &cases[want[k].i];
    toh t;
    setup_case(&t, c, 7);
    tb_tensor *out = NULL;
    TB_ASSERT_OK(run_fast(&t, entries[n_paths() - 1], true, NULL, &out));
    toh_assert_shape(out, c->h ? 4 : 3, want[k].shape);
    tb_tensor_destroy(out);
    toh_teardown(&t);
  }
}

/* One ConvTranspose 2x2 stride 2 on a 1 x 1 x 2 x 2 input with hand-computed outputs: each input pixel
 * scatters W times itself into its own 2x2 block, plus the bias. */
static void known_values(void **state) {
  (void)state;
  const ct_case c = {"known", 1, 1, 2, 2, 1, 2, 2, 1, 2, 2, 1, 1, {0}, {0}, {0}, NULL, true};
  toh t;
  setup_case(&t, &c, 1);
  float *x = tb_tensor_host_data(t.in[0]), *w = tb_tensor_host_data(t.in[1]), *b = tb_tensor_host_data(t.in[2]);
  const float xv[4] = {1, 2, 3, 4}, wv[4] = {1, 10, 100, 1000};
  memcpy(x, xv, sizeof xv);
  memcpy(w, wv, sizeof wv);
  b[0] = 0.5f;
  const float want[16] = {1.5f,   10.5f,   2.5f,   20.5f,   100.5f, 1000.5f, 200.5f, 2000.5f,
                          3.5f,   30.5f,   4.5f,   40.5f,   300.5f, 3000.5f, 400.5f, 4000.5f};
  for (int p = 0; p < n_paths(); p++) {
    tb_tensor *out = NULL;
    TB_ASSERT_OK(run_fast(&t, entries[p], true, NULL, &out));
    const float *y = tb_tensor_host_data(out);
    for (int i = 0; i < 16; i++)
      if (y[i] != want[i]) fail_msg("%s path: element %d is %g, want %g", path_names[p], i, y[i], want[i]);
    tb_tensor_destroy(out);
  }
  toh_teardown(&t);
}

static void expect_error(toh *t, int p, tb_status want, const char *words) {
  tb_tensor *out = NULL;
  tb_status st = run_fast(t, entries[p], true, NULL, &out);
  assert_int_equal(st, want);
  TB_ASSERT_CONTAINS(tb_last_error(), "n0");
  TB_ASSERT_CONTAINS(tb_last_error(), words);
  tb_tensor_destroy(out);
}

static void bad_shapes_and_attributes_are_errors(void **state) {
  (void)state;
  const ct_case base = {"errors", 1, 4, 5, 5, 6, 3, 3, 2, 2, 2, 1, 1, {1, 1, 1, 1}, {0}, {0}, NULL, true};
  for (int p = 0; p < n_paths(); p++) {
    toh t;
    setup_case(&t, &base, 5);
    tb_tensor *w = t.in[1], *b = t.in[2], *x = t.in[0];
    t.in[1] = random_tensor(&t, 4, (const int64_t[]){5, 3, 3, 3}, 1);
    expect_error(&t, p, TB_ERR_MODEL, "W's first dim (5) differs from X's 4 channels");
    tb_tensor_destroy(t.in[1]);
    t.in[1] = w;
    t.in[2] = random_tensor(&t, 1, (const int64_t[]){5}, 2);
    expect_error(&t, p, TB_ERR_MODEL, "bias B must be 1-D with 6 values");
    tb_tensor_destroy(t.in[2]);
    t.in[2] = b;
    t.in[0] = random_tensor(&t, 4, (const int64_t[]){1, 3, 5, 5}, 3);
    expect_error(&t, p, TB_ERR_MODEL, "attribute group (2) must be >= 1 and divide the 3 input channels");
    tb_tensor_destroy(t.in[0]);
    t.in[0] = random_tensor(&t, 2, (const int64_t[]){4, 5}, 4);
    expect_error(&t, p, TB_ERR_MODEL, "rank");
    tb_tensor_destroy(t.in[0]);
    t.in[0] = x;
    toh_teardown(&t);
  }
  /* output_shape of the wrong length, output_padding not below the stride */
  ct_case c = base;
  c.oshape[0] = 9, c.oshape[1] = 9;
  toh t;
  setup_case(&t, &c, 6);
  toh_node(&t)->attrs[5].count = 1; /* output_shape [9] */
  assert_string_equal(toh_node(&t)->attrs[5].name, "output_shape");
  expect_error(&t, 0, TB_ERR_MODEL, "output_shape has 1 values; it needs 2");
  toh_teardown(&t);
  c = base;
  c.opad[0] = 2;
  setup_case(&t, &c, 6);
  expect_error(&t, 0, TB_ERR_MODEL, "output_padding[0] is 2");
  toh_teardown(&t);
  /* a float64 input handed to the float32 kernel */
  setup_case(&t, &base, 6);
  tb_tensor_destroy(t.in[0]);
  double xd[100] = {0};
  t.in[0] = toh_host_tensor(t.cpu, TB_DTYPE_F64, 4, (const int64_t[]){1, 4, 5, 5}, xd);
  tb_tensor *out = NULL;
  tb_kernel_ctx ctx = {.graph = t.graph, .node = toh_node(&t), .n_inputs = t.n_in, .inputs = t.in, .n_outputs = 1,
                       .outputs = &out, .backend = t.cpu, .threads = 1};
  (void)tbt_kernel_bind(&ctx, t.graph, toh_node(&t), NULL);
  assert_int_equal(entries[0]->run(&ctx), TB_ERR_INTERNAL);
  TB_ASSERT_CONTAINS(tb_last_error(), "got input 0 of dtype f64");
  toh_teardown(&t);
}

static uint64_t features_with_mask(const char *mask) {
  const char *saved = getenv("TB_CPU_FEATURES");
  char keep[256] = "";
  if (saved) snprintf(keep, sizeof keep, "%s", saved);
  if (mask) setenv("TB_CPU_FEATURES", mask, 1);
  else unsetenv("TB_CPU_FEATURES");
  uint64_t f = tb_convert_features();
  if (saved) setenv("TB_CPU_FEATURES", keep, 1);
  else unsetenv("TB_CPU_FEATURES");
  return f;
}

/* The kernel the executor picks at `level` under a mask, for X of this dtype and rank. */
static const tb_kernel *pick(tb_dtype dtype, size_t rank, int level, const char *mask) {
  toh t;
  setup_case(&t, &cases[0], 1);
  const int64_t d[5] = {1, 8, 5, 7, 7}, wd[5] = {8, 6, 2, 2, 2};
  tb_value_type x = toh_type(dtype, rank, d), w = toh_type(dtype, rank, wd), b = toh_type(dtype, 1, wd + 1);
  const tb_value_type *in[3] = {&x, &w, &b};
  const tb_kernel *k = tbt_kernel_find(t.graph, toh_node(&t), in, level, features_with_mask(mask));
  toh_teardown(&t);
  return k;
}

static void kernel_choice_follows_mask(void **state) {
  (void)state;
  tb_gemm_path best = tb_gemm_path_for(tb_convert_hardware_features());
  if (best == TB_GEMM_AVX512) assert_ptr_equal(pick(TB_DTYPE_F32, 4, 2, ""), entries[TB_GEMM_AVX512]);
  if (best >= TB_GEMM_AVX2) assert_ptr_equal(pick(TB_DTYPE_F32, 4, 2, "-avx512f"), entries[TB_GEMM_AVX2]);
  assert_ptr_equal(pick(TB_DTYPE_F32, 3, 2, "-avx2"), entries[TB_GEMM_PORTABLE]);
  assert_ptr_equal(pick(TB_DTYPE_F32, 4, 1, ""), &tb_kernel_conv_transpose); /* O1 keeps the reference */
  assert_ptr_equal(pick(TB_DTYPE_F64, 4, 2, ""), &tb_kernel_conv_transpose); /* float32 only */
  assert_ptr_equal(pick(TB_DTYPE_F32, 5, 2, ""), &tb_kernel_conv_transpose); /* 3-D stays on the reference */
  assert_ptr_equal(pick(TB_DTYPE_F32, 4, 3, ""), entries[best]);             /* no bf16 entry: fp32 at O3 */
}

static int group_setup(void **state) {
  (void)state;
  return tb_pool_create(2, &pool2) == TB_OK ? 0 : -1;
}

static int group_teardown(void **state) {
  (void)state;
  tb_pool_destroy(pool2);
  return 0;
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(paths_match_reference),
      cmocka_unit_test(output_sizes_follow_the_spec),
      cmocka_unit_test(known_values),
      cmocka_unit_test(bad_shapes_and_attributes_are_errors),
      cmocka_unit_test(kernel_choice_follows_mask),
  };
  return cmocka_run_group_tests(tests, group_setup, group_teardown);
}
