/* Tensor-family operators with their own arithmetic: Resize and Upsample (nearest rounding rules,
 * coordinate modes, linear, cubic), DepthToSpace, SpaceToDepth, Trilu, OneHot, NonZero, TopK, CumSum,
 * ReverseSequence — against hand-computed values, and their errors. */
#include <math.h>
#include "test_ops_tensor_util.h"

static void check_f32_near(const toh *t, size_t o, size_t n, const float *want) {
  const float *got = tb_tensor_host_data(t->out[o]);
  assert_int_equal(tb_tensor_numel(t->out[o]), (int64_t)n);
  for (size_t i = 0; i < n; i++)
    if (fabsf(got[i] - want[i]) > 1e-6f) fail_msg("element %zu is %g, expected %g", i, got[i], want[i]);
}

/* Resize of a [1, 1, 1, n] input along the last dim with these attributes and scales or sizes. */
static toh *resize_case(void **state, int opset, const tb_attr *attrs, size_t n_attrs, const float *x, int64_t n,
                        const float *scale_last, const int64_t *size_last) {
  toh *t = ttn_new(*state, "Resize", opset, 4, 1, attrs, n_attrs);
  toh_input(t, 0, TB_DTYPE_F32, 4, TTN_SHAPE(1, 1, 1, n), x);
  if (scale_last) toh_input(t, 2, TB_DTYPE_F32, 1, TTN_SHAPE(4), TTN_F32(1, 1, 1, *scale_last));
  if (size_last) toh_input(t, 3, TB_DTYPE_I64, 1, TTN_SHAPE(4), TTN_I64(1, 1, 1, *size_last));
  return t;
}

static void test_resize_nearest(void **state) {
  const float x[2] = {1, 2}, two = 2;
  toh *t = resize_case(state, 13, NULL, 0, x, 2, &two, NULL);
  ttn_check_inferred(t, false, TB_DTYPE_F32, 4, TTN_SHAPE(-1, -1, -1, -1));
  TB_ASSERT_OK(ttn_run(t));
  ttn_check(t, 0, TB_DTYPE_F32, 4, TTN_SHAPE(1, 1, 1, 4), TTN_F32(1, 1, 2, 2));
  ttn_free(t);
  tb_attr a[2] = {TOH_STR("coordinate_transformation_mode", "asymmetric"), TOH_STR("nearest_mode", "round_prefer_ceil")};
  t = resize_case(state, 13, a, 2, x, 2, &two, NULL);
  TB_ASSERT_OK(ttn_run(t));
  ttn_check(t, 0, TB_DTYPE_F32, 4, TTN_SHAPE(1, 1, 1, 4), TTN_F32(1, 2, 2, 2));
  ttn_free(t);
  /* Nearest moves bytes: int8 works. */
  t = ttn_new(*state, "Resize", 13, 3, 1, NULL, 0);
  toh_input(t, 0, TB_DTYPE_I8, 2, TTN_SHAPE(1, 2), (const int8_t[]){-5, 7});
  toh_input(t, 2, TB_DTYPE_F32, 1, TTN_SHAPE(2), TTN_F32(1, 1.5f));
  TB_ASSERT_OK(ttn_run(t));
  /* half_pixel: x = 0.5 at output 1 is a tie, rounded down by round_prefer_floor. */
  ttn_check(t, 0, TB_DTYPE_I8, 2, TTN_SHAPE(1, 3), (const int8_t[]){-5, -5, 7});
  ttn_free(t);
  /* Upsample-9: asymmetric, floor. */
  t = ttn_new(*state, "Upsample", 9, 2, 1, NULL, 0);
  toh_input(t, 0, TB_DTYPE_F32, 2, TTN_SHAPE(1, 2), x);
  toh_input(t, 1, TB_DTYPE_F32, 1, TTN_SHAPE(2), TTN_F32(1, 2));
  TB_ASSERT_OK(ttn_run(t));
  ttn_check(t, 0, TB_DTYPE_F32, 2, TTN_SHAPE(1, 4), TTN_F32(1, 1, 2, 2));
  ttn_free(t);
}

static void test_resize_linear_cubic(void **state) {
  const float x[2] = {1, 2}, two = 2;
  tb_attr lin = TOH_STR("mode", "linear");
  toh *t = resize_case(state, 13, &lin, 1, x, 2, &two, NULL);
  TB_ASSERT_OK(ttn_run(t));
  check_f32_near(t, 0, 4, TTN_F32(1, 1.25f, 1.75f, 2));
  ttn_free(t);
  tb_attr ac[2] = {TOH_STR("mode", "linear"), TOH_STR("coordinate_transformation_mode", "align_corners")};
  const int64_t three = 3;
  t = resize_case(state, 13, ac, 2, x, 2, NULL, &three);
  TB_ASSERT_OK(ttn_run(t));
  check_f32_near(t, 0, 3, TTN_F32(1, 1.5f, 2));
  ttn_free(t);
  /* Cubic (A = -0.75), asymmetric, scale 2 on 0..3; edge taps repeat the border. */
  tb_attr cu[2] = {TOH_STR("mode", "cubic"), TOH_STR("coordinate_transformation_mode", "asymmetric")};
  t = resize_case(state, 13, cu, 2, TTN_F32(0, 1, 2, 3), 4, &two, NULL);
  TB_ASSERT_OK(ttn_run(t));
  check_f32_near(t, 0, 8, TTN_F32(0, 0.40625f, 1, 1.5f, 2, 2.59375f, 3, 3.09375f));
  ttn_free(t);
}

static void test_resize_errors(void **state) {
  const float x[2] = {1, 2}, two = 2, zero = 0;
  const int64_t four = 4;
  toh *t = resize_case(state, 13, NULL, 0, x, 2, &two, &four);
  assert_int_equal(toh_infer_tensors(t, true), TB_ERR_MODEL);
  TB_ASSERT_CONTAINS(tb_last_error(), "has both scales and sizes");
  ttn_free(t);
  t = resize_case(state, 13, NULL, 0, x, 2, &zero, NULL);
  ttn_run_fails(t, TB_ERR_MODEL, "scale 0 on dim 3 must be positive");
  tb_attr m = TOH_STR("mode", "cubic");
  t = ttn_new(*state, "Resize", 10, 2, 1, &m, 1);
  toh_input(t, 0, TB_DTYPE_F32, 2, TTN_SHAPE(1, 2), x);
  toh_input(t, 1, TB_DTYPE_F32, 1, TTN_SHAPE(2), TTN_F32(1, 2));
  assert_int_equal(toh_infer_tensors(t, true), TB_ERR_MODEL);
  TB_ASSERT_CONTAINS(tb_last_error(), "unknown mode 'cubic'");
  ttn_free(t);
  m = TOH_STR("mode", "linear");
  t = ttn_new(*state, "Resize", 13, 3, 1, &m, 1);
  toh_input(t, 0, TB_DTYPE_I32, 2, TTN_SHAPE(1, 2), TTN_I32(1, 2));
  toh_input(t, 2, TB_DTYPE_F32, 1, TTN_SHAPE(2), TTN_F32(1, 2));
  assert_int_equal(toh_infer_tensors(t, true), TB_ERR_UNSUPPORTED);
  TB_ASSERT_CONTAINS(tb_last_error(), "linear interpolation of i32");
  ttn_free(t);
  m = TOH_STR("coordinate_transformation_mode", "half_pixel_symmetric");
  t = resize_case(state, 13, &m, 1, x, 2, &two, NULL);
  assert_int_equal(toh_infer_tensors(t, true), TB_ERR_UNSUPPORTED);
  ttn_free(t);
}

static void test_depth_space(void **state) {
  const float c8[8] = {0, 1, 2, 3, 4, 5, 6, 7};
  tb_attr a[2] = {TOH_INT("blocksize", 2), TOH_STR("mode", "DCR")};
  toh *t = ttn_new(*state, "DepthToSpace", 13, 1, 1, a, 2);
  toh_input(t, 0, TB_DTYPE_F32, 4, TTN_SHAPE(1, 8, 1, 1), c8);
  TB_ASSERT_OK(ttn_run(t));
  ttn_check(t, 0, TB_DTYPE_F32, 4, TTN_SHAPE(1, 2, 2, 2), TTN_F32(0, 2, 4, 6, 1, 3, 5, 7));
  ttn_free(t);
  a[1] = TOH_STR("mode", "CRD");
  t = ttn_new(*state, "DepthToSpace", 13, 1, 1, a, 2);
  toh_input(t, 0, TB_DTYPE_F32, 4, TTN_SHAPE(1, 8, 1, 1), c8);
  TB_ASSERT_OK(ttn_run(t));
  ttn_check(t, 0, TB_DTYPE_F32, 4, TTN_SHAPE(1, 2, 2, 2), c8);
  ttn_free(t);
  t = ttn_new(*state, "SpaceToDepth", 13, 1, 1, a, 1);
  toh_input(t, 0, TB_DTYPE_F32, 4, TTN_SHAPE(1, 2, 2, 2), c8);
  TB_ASSERT_OK(ttn_run(t));
  ttn_check(t, 0, TB_DTYPE_F32, 4, TTN_SHAPE(1, 8, 1, 1), TTN_F32(0, 4, 1, 5, 2, 6, 3, 7));
  ttn_free(t);
  t = ttn_new(*state, "DepthToSpace", 13, 1, 1, a, 1);
  toh_input(t, 0, TB_DTYPE_F32, 4, TTN_SHAPE(1, 6, 1, 1), c8);
  ttn_run_fails(t, TB_ERR_MODEL, "channels (6) must be a multiple of blocksize^2 (4)");
}

static void test_trilu(void **state) {
  const int32_t m[9] = {1, 2, 3, 4, 5, 6, 7, 8, 9};
  toh *t = ttn_new(*state, "Trilu", 14, 1, 1, NULL, 0);
  toh_input(t, 0, TB_DTYPE_I32, 2, TTN_SHAPE(3, 3), m);
  TB_ASSERT_OK(ttn_run(t));
  ttn_check(t, 0, TB_DTYPE_I32, 2, TTN_SHAPE(3, 3), TTN_I32(1, 2, 3, 0, 5, 6, 0, 0, 9));
  ttn_free(t);
  tb_attr lower = TOH_INT("upper", 0);
  t = ttn_new(*state, "Trilu", 14, 2, 1, &lower, 1);
  toh_input(t, 0, TB_DTYPE_I32, 2, TTN_SHAPE(3, 3), m);
  toh_input(t, 1, TB_DTYPE_I64, 0, NULL, TTN_I64(-1));
  TB_ASSERT_OK(ttn_run(t));
  ttn_check(t, 0, TB_DTYPE_I32, 2, TTN_SHAPE(3, 3), TTN_I32(0, 0, 0, 4, 0, 0, 7, 8, 0));
  ttn_free(t);
  t = ttn_new(*state, "Trilu", 14, 1, 1, NULL, 0);
  toh_input(t, 0, TB_DTYPE_I32, 1, TTN_SHAPE(3), m);
  assert_int_equal(toh_infer_tensors(t, true), TB_ERR_MODEL);
  TB_ASSERT_CONTAINS(tb_last_error(), "rank 2 or more");
  ttn_free(t);
}

static void test_onehot(void **state) {
  toh *t = ttn_new(*state, "OneHot", 11, 3, 1, NULL, 0);
  toh_input(t, 0, TB_DTYPE_I64, 1, TTN_SHAPE(3), TTN_I64(0, -1, 5));
  toh_input(t, 1, TB_DTYPE_F32, 0, NULL, TTN_F32(3));
  toh_input(t, 2, TB_DTYPE_F32, 1, TTN_SHAPE(2), TTN_F32(0, 1));
  ttn_check_inferred(t, false, TB_DTYPE_F32, 2, TTN_SHAPE(3, -1));
  TB_ASSERT_OK(ttn_run(t));
  ttn_check(t, 0, TB_DTYPE_F32, 2, TTN_SHAPE(3, 3), TTN_F32(1, 0, 0, 0, 0, 1, 0, 0, 0));
  ttn_free(t);
  tb_attr axis = TOH_INT("axis", 0);
  t = ttn_new(*state, "OneHot", 11, 3, 1, &axis, 1);
  toh_input(t, 0, TB_DTYPE_I64, 1, TTN_SHAPE(3), TTN_I64(0, -1, 5));
  toh_input(t, 1, TB_DTYPE_I64, 0, NULL, TTN_I64(3));
  toh_input(t, 2, TB_DTYPE_I32, 1, TTN_SHAPE(2), TTN_I32(-1, 7));
  TB_ASSERT_OK(ttn_run(t));
  ttn_check(t, 0, TB_DTYPE_I32, 2, TTN_SHAPE(3, 3), TTN_I32(7, -1, -1, -1, -1, -1, -1, 7, -1));
  ttn_free(t);
  t = ttn_new(*state, "OneHot", 11, 3, 1, NULL, 0);
  toh_input(t, 0, TB_DTYPE_I64, 1, TTN_SHAPE(1), TTN_I64(0));
  toh_input(t, 1, TB_DTYPE_I64, 0, NULL, TTN_I64(0));
  toh_input(t, 2, TB_DTYPE_F32, 1, TTN_SHAPE(2), TTN_F32(0, 1));
  ttn_run_fails(t, TB_ERR_MODEL, "depth 0 must be at least 1");
}

static void test_nonzero(void **state) {
  toh *t = ttn_new(*state, "NonZero", 13, 1, 1, NULL, 0);
  toh_input(t, 0, TB_DTYPE_F32, 2, TTN_SHAPE(2, 2), TTN_F32(1, -0.0f, 0, 2));
  ttn_check_inferred(t, true, TB_DTYPE_I64, 2, TTN_SHAPE(2, -1));
  TB_ASSERT_OK(ttn_run(t));
  ttn_check(t, 0, TB_DTYPE_I64, 2, TTN_SHAPE(2, 2), TTN_I64(0, 1, 0, 1));
  ttn_free(t);
  t = ttn_new(*state, "NonZero", 13, 1, 1, NULL, 0);
  toh_input(t, 0, TB_DTYPE_BOOL, 1, TTN_SHAPE(3), (const uint8_t[]){0, 0, 0});
  TB_ASSERT_OK(ttn_run(t));
  toh_assert_tensor(t->out[0], TB_DTYPE_I64, 2, TTN_SHAPE(1, 0));
  ttn_free(t);
}

static void test_topk(void **state) {
  toh *t = ttn_new(*state, "TopK", 11, 2, 2, NULL, 0);
  toh_input(t, 0, TB_DTYPE_F32, 1, TTN_SHAPE(4), TTN_F32(1, 3, 2, 3));
  toh_input(t, 1, TB_DTYPE_I64, 1, TTN_SHAPE(1), TTN_I64(2));
  TB_ASSERT_OK(ttn_run(t));
  ttn_check(t, 0, TB_DTYPE_F32, 1, TTN_SHAPE(2), TTN_F32(3, 3));
  ttn_check(t, 1, TB_DTYPE_I64, 1, TTN_SHAPE(2), TTN_I64(1, 3));
  ttn_free(t);
  tb_attr small = TOH_INT("largest", 0);
  t = ttn_new(*state, "TopK", 11, 2, 2, &small, 1);
  toh_input(t, 0, TB_DTYPE_I64, 2, TTN_SHAPE(2, 2), TTN_I64(5, INT64_MIN, 9, 8));
  toh_input(t, 1, TB_DTYPE_I64, 1, TTN_SHAPE(1), TTN_I64(1));
  TB_ASSERT_OK(ttn_run(t));
  ttn_check(t, 0, TB_DTYPE_I64, 2, TTN_SHAPE(2, 1), TTN_I64(INT64_MIN, 8));
  ttn_check(t, 1, TB_DTYPE_I64, 2, TTN_SHAPE(2, 1), TTN_I64(1, 1));
  ttn_free(t);
  t = ttn_new(*state, "TopK", 11, 2, 2, NULL, 0);
  toh_input(t, 0, TB_DTYPE_F32, 1, TTN_SHAPE(4), TTN_F32(1, 3, 2, 3));
  toh_input(t, 1, TB_DTYPE_I64, 1, TTN_SHAPE(1), TTN_I64(5));
  ttn_run_fails(t, TB_ERR_MODEL, "k 5 is out of range for axis 0 of size 4");
}

static void test_cumsum(void **state) {
  static const struct {
    int64_t exclusive, reverse;
    int32_t want[3];
  } cases[] = {{0, 0, {1, 3, 6}}, {1, 0, {0, 1, 3}}, {0, 1, {6, 5, 3}}, {1, 1, {5, 3, 0}}};
  for (size_t c = 0; c < 4; c++) {
    tb_attr a[2] = {TOH_INT("exclusive", cases[c].exclusive), TOH_INT("reverse", cases[c].reverse)};
    toh *t = ttn_new(*state, "CumSum", 14, 2, 1, a, 2);
    toh_input(t, 0, TB_DTYPE_I32, 1, TTN_SHAPE(3), TTN_I32(1, 2, 3));
    toh_input(t, 1, TB_DTYPE_I32, 0, NULL, TTN_I32(0));
    TB_ASSERT_OK(ttn_run(t));
    ttn_check(t, 0, TB_DTYPE_I32, 1, TTN_SHAPE(3), cases[c].want);
    ttn_free(t);
  }
  toh *t = ttn_new(*state, "CumSum", 14, 2, 1, NULL, 0);
  toh_input(t, 0, TB_DTYPE_F32, 2, TTN_SHAPE(2, 2), TTN_F32(1, 2, 3, 4));
  toh_input(t, 1, TB_DTYPE_I64, 0, NULL, TTN_I64(-1));
  TB_ASSERT_OK(ttn_run(t));
  ttn_check(t, 0, TB_DTYPE_F32, 2, TTN_SHAPE(2, 2), TTN_F32(1, 3, 3, 7));
  ttn_free(t);
  t = ttn_new(*state, "CumSum", 14, 2, 1, NULL, 0);
  toh_input(t, 0, TB_DTYPE_F32, 2, TTN_SHAPE(2, 2), TTN_F32(1, 2, 3, 4));
  toh_input(t, 1, TB_DTYPE_I64, 0, NULL, TTN_I64(2));
  ttn_run_fails(t, TB_ERR_INVALID_ARGUMENT, "axis 2 is out of range for rank 2");
}

static void test_reverse_sequence(void **state) {
  const float x[8] = {0, 1, 2, 3, 4, 5, 6, 7};
  toh *t = ttn_new(*state, "ReverseSequence", 13, 2, 1, NULL, 0);
  toh_input(t, 0, TB_DTYPE_F32, 2, TTN_SHAPE(4, 2), x);
  toh_input(t, 1, TB_DTYPE_I64, 1, TTN_SHAPE(2), TTN_I64(3, 1));
  TB_ASSERT_OK(ttn_run(t));
  ttn_check(t, 0, TB_DTYPE_F32, 2, TTN_SHAPE(4, 2), TTN_F32(4, 1, 2, 3, 0, 5, 6, 7));
  ttn_free(t);
  t = ttn_new(*state, "ReverseSequence", 13, 2, 1, NULL, 0);
  toh_input(t, 0, TB_DTYPE_F32, 2, TTN_SHAPE(4, 2), x);
  toh_input(t, 1, TB_DTYPE_I64, 1, TTN_SHAPE(2), TTN_I64(5, 1));
  ttn_run_fails(t, TB_ERR_INVALID_ARGUMENT, "sequence length 5 (batch 0) is out of range [0, 4]");
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_resize_nearest), cmocka_unit_test(test_resize_linear_cubic),
      cmocka_unit_test(test_resize_errors),  cmocka_unit_test(test_depth_space),
      cmocka_unit_test(test_trilu),          cmocka_unit_test(test_onehot),
      cmocka_unit_test(test_nonzero),        cmocka_unit_test(test_topk),
      cmocka_unit_test(test_cumsum),         cmocka_unit_test(test_reverse_sequence),
  };
  return cmocka_run_group_tests(tests, tbt_cpu_setup, tbt_cpu_teardown);
}
