/* The level-2 fp32 Resize and Upsample (src/backend/cpu/kernels/fast/resize/) against the level-0
 * reference kernel on every path the CPU has after TB_CPU_FEATURES (portable, AVX2+FMA, AVX-512; the
 * entries are called directly, so scripts/test_isa.sh's mask keeps the AVX-512 one off), on one thread and
 * on the two-thread pool: nearest under every nearest_mode, linear, and cubic (cubic_coeff_a -0.75 and -0.5,
 * exclude_outside 0 and 1), each under every coordinate_transformation_mode (tf_crop_and_resize with a roi
 * that reaches outside the input: the extrapolation value), upsampling, downsampling, unequal and
 * non-integer factors, given by scales and by sizes, widths below, at and past the vector widths, taps
 * within the AVX-512 permute windows and wider than them. Nearest
 * must give the reference's bits; linear and cubic (fp32 here, double there) agree within 1e-5 + 1e-5 |ref|
 * (inputs in [-1, 1], at most 16 weighted taps: fp32 rounding stays below 1e-6, a wrong tap or weight is off
 * by 1e-2 or more). Also: hand-computed values, what the fast kernel hands to the reference (N or C resized,
 * rank 3), Upsample, an empty input, and which entry the executor picks under masks and levels. */
#include <math.h>
#include "backend/cpu/kernels/fast/gemm/gemm_f32.h"
#include "core/convert_features.h"
#include "core/threadpool.h"
#include "test_conv_util.h"
#include "test_kernel_util.h"
#include "test_op_harness.h"
#include "test_tensor_util.h"

extern const tb_kernel tb_kernel_resize_f32_avx512, tb_kernel_resize_f32_avx2, tb_kernel_resize_f32_portable,
    tb_kernel_upsample_f32_avx512, tb_kernel_upsample_f32_avx2, tb_kernel_upsample_f32_portable, tb_kernel_resize;

static const tb_kernel *const entries[] = {&tb_kernel_resize_f32_portable, &tb_kernel_resize_f32_avx2,
                                               &tb_kernel_resize_f32_avx512};
static const tb_kernel *const upsample_entries[] = {&tb_kernel_upsample_f32_portable, &tb_kernel_upsample_f32_avx2,
                                                        &tb_kernel_upsample_f32_avx512};
static const char *const path_names[] = {"portable", "avx2", "avx512"};
static tb_pool *pool2;

static int n_paths(void) { return (int)tb_gemm_path_for(tb_convert_features()) + 1; }

static const char *const modes[] = {"nearest", "linear", "cubic"};
static const char *const coords[] = {"half_pixel", "pytorch_half_pixel", "align_corners", "asymmetric",
                                     "tf_half_pixel_for_nearest", "tf_crop_and_resize"};
static const char *const nearest_modes[] = {"round_prefer_floor", "round_prefer_ceil", "floor", "ceil"};

/* The output size: scales (sizes NULL) or sizes. */
typedef struct size_case {
  const char *what;
  int64_t x[4];
  float scales[4];
  int64_t sizes[4]; /* used when sizes[0] > 0 */
} size_case;

static const size_case size_cases[] = {
    {"2x up", {2, 3, 5, 7}, {1, 1, 2, 2}, {0}},
    {"2x down", {1, 2, 8, 10}, {1, 1, 0.5f, 0.5f}, {0}},
    {"1.7 x 0.6", {1, 3, 6, 9}, {1, 1, 1.7f, 0.6f}, {0}},
    {"sizes 7 x 33 from 4 x 20", {2, 1, 4, 20}, {0}, {2, 1, 7, 33}},
    {"sizes 3 x 80 from 9 x 40", {1, 2, 9, 40}, {0}, {1, 2, 3, 80}},
    {"sizes 1 x 1", {1, 2, 3, 4}, {0}, {1, 2, 1, 1}},
    {"sizes 5 x 21 from 7 x 100 (taps wider than the permute windows)", {1, 2, 7, 100}, {0}, {1, 2, 5, 21}},
};

typedef struct rz_case {
  const char *mode, *coord, *nearest;
  float cubic_a;
  int64_t exclude;
  const size_case *size;
} rz_case;

/* A Resize (opset 13) node of the case with X, roi (tf_crop_and_resize only), scales or sizes in t->in. */
static void setup_case(toh *t, const rz_case *c, uint64_t seed) {
  toh_begin(t, NULL);
  bool crop = strcmp(c->coord, "tf_crop_and_resize") == 0, by_sizes = c->size->sizes[0] > 0;
  tb_attr attrs[] = {TOH_STR("mode", c->mode), TOH_STR("coordinate_transformation_mode", c->coord),
                     TOH_STR("nearest_mode", c->nearest), TOH_FLOAT("cubic_coeff_a", c->cubic_a),
                     TOH_INT("exclude_outside", c->exclude), TOH_FLOAT("extrapolation_value", 7.5f)};
  unsigned omit = (crop ? 0u : 2u) | (by_sizes ? 4u : 8u);
  toh_add_op(t, "", "Resize", 13, 4, omit, 1, 0, attrs, sizeof attrs / sizeof attrs[0]);
  t->in[0] = random_tensor(t, 4, c->size->x, seed);
  static const float roi[8] = {0, 0, 0.1f, -0.2f, 1, 1, 0.8f, 1.3f}; /* W reaches past both ends */
  if (crop) t->in[1] = toh_host_tensor(t->cpu, TB_DTYPE_F32, 1, (const int64_t[]){8}, roi);
  if (by_sizes) t->in[3] = toh_host_tensor(t->cpu, TB_DTYPE_I64, 1, (const int64_t[]){4}, c->size->sizes);
  else t->in[2] = toh_host_tensor(t->cpu, TB_DTYPE_F32, 1, (const int64_t[]){4}, c->size->scales);
}

static tb_status run_entry(toh *t, const tb_kernel *k, tb_pool *pool, tb_tensor **out) {
  *out = NULL;
  tb_kernel_ctx ctx = {.graph = t->graph, .node = toh_node(t), .n_inputs = t->n_in, .inputs = t->in, .n_outputs = 1,
                       .outputs = out, .backend = t->cpu, .threads = tb_pool_threads(pool), .pool = pool};
  (void)tbt_kernel_bind(&ctx, t->graph, toh_node(t), NULL);
  return k->run(&ctx);
}

/* Every element within tol (0: the same bits) of the reference. */
static void assert_matches(const tb_tensor *got, const tb_tensor *ref, double tol, const char *what) {
  assert_non_null(got);
  toh_assert_shape(got, tb_tensor_ndim(ref), tb_tensor_shape(ref));
  const float *g = tb_tensor_host_data(got), *r = tb_tensor_host_data(ref);
  for (int64_t i = 0; i < tb_tensor_numel(ref); i++) {
    bool ok = tol == 0 ? memcmp(&g[i], &r[i], sizeof g[i]) == 0 : fabs((double)g[i] - r[i]) <= tol + tol * fabs((double)r[i]);
    if (!ok) fail_msg("%s: element %lld is %.9g, reference %.9g", what, (long long)i, g[i], r[i]);
  }
}

/* The case on every path and both pools against the reference; *extrapolated counts outputs that hold the
 * extrapolation value. */
static void check_case(const rz_case *c, uint64_t seed, int64_t *extrapolated) {
  toh t;
  setup_case(&t, c, seed);
  tb_tensor *ref[1] = {NULL};
  TB_ASSERT_OK(toh_run_tensors(&t, t.in, ref, false));
  const float *r = tb_tensor_host_data(ref[0]);
  for (int64_t i = 0; i < tb_tensor_numel(ref[0]); i++) *extrapolated += r[i] == 7.5f;
  bool nearest = strcmp(c->mode, "nearest") == 0;
  for (int p = 0; p < n_paths(); p++)
    for (int threads = 1; threads <= 2; threads++) {
      char what[256];
      snprintf(what, sizeof what, "%s %s %s a=%g exclude=%lld, %s, %s path, %d thread(s)", c->mode, c->coord,
               nearest ? c->nearest : "", (double)c->cubic_a, (long long)c->exclude, c->size->what, path_names[p], threads);
      tb_tensor *out = NULL;
      TB_ASSERT_OK(run_entry(&t, entries[p], threads > 1 ? pool2 : NULL, &out));
      assert_matches(out, ref[0], nearest ? 0 : 1e-5, what);
      tb_tensor_destroy(out);
    }
  tb_tensor_destroy(ref[0]);
  toh_teardown(&t);
}

static void every_mode_matches_reference(void **state) {
  (void)state;
  uint64_t seed = 1;
  int64_t extrapolated = 0;
  for (size_t s = 0; s < sizeof size_cases / sizeof size_cases[0]; s++)
    for (size_t c = 0; c < sizeof coords / sizeof coords[0]; c++) {
      for (size_t n = 0; n < 4; n++) {
        rz_case rc = {modes[0], coords[c], nearest_modes[n], -0.75f, 0, &size_cases[s]};
        check_case(&rc, seed++, &extrapolated);
      }
      rz_case lin = {modes[1], coords[c], nearest_modes[0], -0.75f, 0, &size_cases[s]};
      check_case(&lin, seed++, &extrapolated);
      rz_case cub = {modes[2], coords[c], nearest_modes[0], -0.75f, 0, &size_cases[s]};
      check_case(&cub, seed++, &extrapolated);
      rz_case cub2 = {modes[2], coords[c], nearest_modes[0], -0.5f, 1, &size_cases[s]};
      check_case(&cub2, seed++, &extrapolated);
    }
  assert_true(extrapolated > 0); /* the crop cases reached outside the input */
}

/* Hand-computed: [[1, 2], [3, 4]] to 3 x 3, linear align_corners: the corners kept, the midpoints between. */
static void known_values(void **state) {
  (void)state;
  static const size_case s = {"2x2 to 3x3", {1, 1, 2, 2}, {0}, {1, 1, 3, 3}};
  rz_case c = {"linear", "align_corners", "round_prefer_floor", -0.75f, 0, &s};
  toh t;
  setup_case(&t, &c, 1);
  const float xv[4] = {1, 2, 3, 4}, want[9] = {1, 1.5f, 2, 2, 2.5f, 3, 3, 3.5f, 4};
  memcpy(tb_tensor_host_data(t.in[0]), xv, sizeof xv);
  for (int p = 0; p < n_paths(); p++) {
    tb_tensor *out = NULL;
    TB_ASSERT_OK(run_entry(&t, entries[p], NULL, &out));
    const float *y = tb_tensor_host_data(out);
    for (int i = 0; i < 9; i++)
      if (y[i] != want[i]) fail_msg("%s path: element %d is %g, want %g", path_names[p], i, y[i], want[i]);
    tb_tensor_destroy(out);
  }
  toh_teardown(&t);
}

/* N or C resized: handed to the reference kernel (its bits); so is a rank-3 input. */
static void other_axes_and_ranks_run_the_reference(void **state) {
  (void)state;
  static const size_case nc = {"C resized", {1, 2, 3, 4}, {1, 2, 2, 2}, {0}};
  rz_case c = {"linear", "half_pixel", "round_prefer_floor", -0.75f, 0, &nc};
  toh t;
  setup_case(&t, &c, 3);
  tb_tensor *ref[1] = {NULL}, *out = NULL;
  TB_ASSERT_OK(toh_run_tensors(&t, t.in, ref, false));
  toh_assert_shape(ref[0], 4, (const int64_t[]){1, 4, 6, 8});
  for (int p = 0; p < n_paths(); p++) {
    TB_ASSERT_OK(run_entry(&t, entries[p], pool2, &out));
    assert_matches(out, ref[0], 0, "C resized");
    tb_tensor_destroy(out);
  }
  tb_tensor_destroy(ref[0]);
  /* rank 3 */
  tb_tensor_destroy(t.in[0]);
  tb_tensor_destroy(t.in[2]);
  t.in[0] = random_tensor(&t, 3, (const int64_t[]){2, 3, 5}, 4);
  t.in[2] = toh_host_tensor(t.cpu, TB_DTYPE_F32, 1, (const int64_t[]){3}, (const float[]){1, 2, 2});
  TB_ASSERT_OK(toh_run_tensors(&t, t.in, ref, false));
  for (int p = 0; p < n_paths(); p++) {
    TB_ASSERT_OK(run_entry(&t, entries[p], NULL, &out));
    assert_matches(out, ref[0], 0, "rank 3");
    tb_tensor_destroy(out);
  }
  tb_tensor_destroy(ref[0]);
  toh_teardown(&t);
}

/* Upsample-9 (scales input, nearest and linear) as Resize-10 would: the same as the reference. */
static void upsample_matches_reference(void **state) {
  (void)state;
  for (int linear = 0; linear < 2; linear++) {
    toh t;
    toh_begin(&t, NULL);
    tb_attr attrs[] = {TOH_STR("mode", linear ? "linear" : "nearest")};
    toh_add_op(&t, "", "Upsample", 9, 2, 0, 1, 0, attrs, 1);
    t.in[0] = random_tensor(&t, 4, (const int64_t[]){1, 3, 4, 21}, 9);
    t.in[1] = toh_host_tensor(t.cpu, TB_DTYPE_F32, 1, (const int64_t[]){4}, (const float[]){1, 1, 2, 3});
    tb_tensor *ref[1] = {NULL}, *out = NULL;
    TB_ASSERT_OK(toh_run_tensors(&t, t.in, ref, false));
    toh_assert_shape(ref[0], 4, (const int64_t[]){1, 3, 8, 63});
    for (int p = 0; p < n_paths(); p++) {
      TB_ASSERT_OK(run_entry(&t, upsample_entries[p], pool2, &out));
      assert_matches(out, ref[0], linear ? 1e-5 : 0, linear ? "Upsample linear" : "Upsample nearest");
      tb_tensor_destroy(out);
    }
    tb_tensor_destroy(ref[0]);
    toh_teardown(&t);
  }
}

static void empty_input_is_an_error(void **state) {
  (void)state;
  static const size_case s = {"empty", {1, 1, 0, 3}, {0}, {1, 1, 2, 3}};
  rz_case c = {"nearest", "asymmetric", "floor", -0.75f, 0, &s};
  for (int p = 0; p < n_paths(); p++) {
    toh t;
    setup_case(&t, &c, 1);
    tb_tensor *out = NULL;
    assert_int_equal(run_entry(&t, entries[p], NULL, &out), TB_ERR_INVALID_ARGUMENT);
    TB_ASSERT_CONTAINS(tb_last_error(), "n0");
    TB_ASSERT_CONTAINS(tb_last_error(), "cannot resize an empty input [1, 1, 0, 3] to a non-empty output");
    tb_tensor_destroy(out);
    toh_teardown(&t);
  }
}

static uint64_t features_with_mask(const char *mask) {
  const char *saved = getenv("TB_CPU_FEATURES");
  char keep[256] = "";
  if (saved) snprintf(keep, sizeof keep, "%s", saved);
  setenv("TB_CPU_FEATURES", mask, 1);
  uint64_t f = tb_convert_features();
  if (saved) setenv("TB_CPU_FEATURES", keep, 1);
  else unsetenv("TB_CPU_FEATURES");
  return f;
}

static const tb_kernel *pick(tb_dtype dtype, size_t rank, int level, const char *mask) {
  static const size_case s = {"pick", {1, 2, 3, 4}, {1, 1, 2, 2}, {0}};
  rz_case c = {"linear", "half_pixel", "round_prefer_floor", -0.75f, 0, &s};
  toh t;
  setup_case(&t, &c, 1);
  const int64_t d[5] = {1, 2, 3, 4, 5}, four = 4;
  tb_value_type x = toh_type(dtype, rank, d), sc = toh_type(TB_DTYPE_F32, 1, &four);
  const tb_value_type *in[4] = {&x, NULL, &sc, NULL};
  const tb_kernel *k = tbt_kernel_find(t.graph, toh_node(&t), in, level, features_with_mask(mask));
  toh_teardown(&t);
  return k;
}

static void kernel_choice_follows_mask(void **state) {
  (void)state;
  tb_gemm_path best = tb_gemm_path_for(tb_convert_hardware_features());
  if (best == TB_GEMM_AVX512) assert_ptr_equal(pick(TB_DTYPE_F32, 4, 2, ""), entries[TB_GEMM_AVX512]);
  if (best >= TB_GEMM_AVX2) assert_ptr_equal(pick(TB_DTYPE_F32, 4, 2, "-avx512f"), entries[TB_GEMM_AVX2]);
  assert_ptr_equal(pick(TB_DTYPE_F32, 4, 2, "-avx2"), entries[TB_GEMM_PORTABLE]);
  assert_ptr_equal(pick(TB_DTYPE_F32, 4, 1, ""), &tb_kernel_resize); /* O1 keeps the reference */
  assert_ptr_equal(pick(TB_DTYPE_F64, 4, 2, ""), &tb_kernel_resize); /* float32 only */
  assert_ptr_equal(pick(TB_DTYPE_F32, 3, 2, ""), &tb_kernel_resize); /* NCHW only */
  assert_ptr_equal(pick(TB_DTYPE_F32, 5, 2, ""), &tb_kernel_resize);
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
      cmocka_unit_test(every_mode_matches_reference),
      cmocka_unit_test(known_values),
      cmocka_unit_test(other_axes_and_ranks_run_the_reference),
      cmocka_unit_test(upsample_matches_reference),
      cmocka_unit_test(empty_input_is_an_error),
      cmocka_unit_test(kernel_choice_follows_mask),
  };
  return cmocka_run_group_tests(tests, group_setup, group_teardown);
}
