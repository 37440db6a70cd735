/* MatMul, Gemm, Conv and ConvTranspose: output shapes from infer (1-D promotion, batch broadcast, every
 * auto_pad mode, groups), kernels against hand-computed values, and bad attributes naming node and value. */
#include "test_ops_nn_util.h"

#define F32 TB_DTYPE_F32
#define DIMS(...) (const int64_t[]){__VA_ARGS__}, sizeof((int64_t[]){__VA_ARGS__}) / sizeof(int64_t)

static void infer2(toh *t, tb_value_type a, tb_value_type b, tb_status want, tb_value_type *out) {
  const tb_value_type *in[3] = {&a, &b, NULL};
  tb_status st = toh_infer(t, in, out);
  if (st != want) fail_msg("infer returned %s (%s), expected %s", tb_status_str(st), tb_last_error(), tb_status_str(want));
}

static tb_value_type ty(const int64_t *dims, size_t n) { return toh_type(F32, n, dims); }

static void test_matmul_infer(void **state) {
  (void)state;
  toh t;
  tb_value_type out;
  toh_setup(&t, "MatMul", 13, 2, 0, 1, NULL, 0);
  infer2(&t, ty(DIMS(2, 3)), ty(DIMS(3, 4)), TB_OK, &out);
  toh_assert_dims(&out, 2, (int64_t[]){2, 4});
  infer2(&t, ty(DIMS(3)), ty(DIMS(5, 3, 4)), TB_OK, &out); /* 1-D a: prepended 1 removed */
  toh_assert_dims(&out, 2, (int64_t[]){5, 4});
  infer2(&t, ty(DIMS(2, 1, 2, 3)), ty(DIMS(3)), TB_OK, &out); /* 1-D b: appended 1 removed */
  toh_assert_dims(&out, 3, (int64_t[]){2, 1, 2});
  infer2(&t, ty(DIMS(3)), ty(DIMS(3)), TB_OK, &out); /* dot product: a scalar */
  toh_assert_dims(&out, 0, NULL);
  infer2(&t, ty(DIMS(2, 1, 4, 3)), ty(DIMS(5, 3, 6)), TB_OK, &out); /* batch broadcast */
  toh_assert_dims(&out, 4, (int64_t[]){2, 5, 4, 6});
  infer2(&t, ty(DIMS(-1, 4, 3)), ty(DIMS(3, 6)), TB_OK, &out); /* unknown batch stays unknown */
  toh_assert_dims(&out, 3, (int64_t[]){-1, 4, 6});
  infer2(&t, ty(DIMS(2, 3)), ty(DIMS(4, 5)), TB_ERR_MODEL, &out);
  TB_ASSERT_CONTAINS(tb_last_error(), "node 'n0' (MatMul)");
  TB_ASSERT_CONTAINS(tb_last_error(), "3 vs 4");
  infer2(&t, ty(DIMS(2, 2, 3)), ty(DIMS(3, 3, 4)), TB_ERR_MODEL, &out);
  toh_teardown(&t);
}

static void test_matmul_kernel(void **state) {
  (void)state;
  toh t;
  tb_tensor *out[1];
  toh_setup(&t, "MatMul", 13, 2, 0, 1, NULL, 0);
  /* [2,2,3] @ [3,2] with the batch broadcast over b. */
  const float a[12] = {1, 2, 3, 4, 5, 6, -1, 0, 1, 2, 2, 2};
  const float b[6] = {1, 0, 0, 1, 1, 1};
  toh_in in[2] = {{F32, 3, {2, 2, 3}, a}, {F32, 2, {3, 2}, b}};
  TB_ASSERT_OK(toh_run(&t, in, out));
  nnt_assert_f32(out[0], 3, (int64_t[]){2, 2, 2}, (float[]){4, 5, 10, 11, 0, 1, 4, 4});
  toh_free_outs(out, 1);
  /* 1-D @ 1-D: a scalar. */
  toh_in dot[2] = {{F32, 1, {3}, a}, {F32, 1, {3}, a + 3}};
  TB_ASSERT_OK(toh_run(&t, dot, out));
  nnt_assert_f32(out[0], 0, NULL, (float[]){1 * 4 + 2 * 5 + 3 * 6});
  toh_free_outs(out, 1);
  /* 1-D @ 2-D. */
  toh_in vec[2] = {{F32, 1, {3}, a}, {F32, 2, {3, 2}, b}};
  TB_ASSERT_OK(toh_run(&t, vec, out));
  nnt_assert_f32(out[0], 1, (int64_t[]){2}, (float[]){4, 5});
  toh_free_outs(out, 1);
  /* int64 */
  const int64_t ia[4] = {1, 2, 3, 4}, ib[4] = {5, 6, 7, 8};
  toh_in ints[2] = {{TB_DTYPE_I64, 2, {2, 2}, ia}, {TB_DTYPE_I64, 2, {2, 2}, ib}};
  TB_ASSERT_OK(toh_run(&t, ints, out));
  nnt_assert_i64(out[0], 2, (int64_t[]){2, 2}, (int64_t[]){19, 22, 43, 50});
  toh_free_outs(out, 1);
  toh_in bad[2] = {{F32, 2, {2, 3}, a}, {F32, 2, {2, 3}, b}};
  assert_int_equal(toh_run(&t, bad, out), TB_ERR_MODEL);
  TB_ASSERT_CONTAINS(tb_last_error(), "inner dimensions differ");
  toh_free_outs(out, 1);
  toh_teardown(&t);
}

static void test_gemm(void **state) {
  (void)state;
  toh t;
  tb_value_type out;
  tb_tensor *outs[1];
  tb_attr attrs[] = {TOH_INT("transA", 1), TOH_INT("transB", 1), TOH_FLOAT("alpha", 2.0f), TOH_FLOAT("beta", 0.5f)};
  toh_setup(&t, "Gemm", 13, 3, 0, 1, attrs, 4);
  tb_value_type a = ty(DIMS(3, 2)), b = ty(DIMS(4, 3)), c = ty(DIMS(4));
  const tb_value_type *in[3] = {&a, &b, &c};
  TB_ASSERT_OK(toh_infer(&t, in, &out));
  toh_assert_dims(&out, 2, (int64_t[]){2, 4});
  tb_value_type bad_c = ty(DIMS(3));
  in[2] = &bad_c;
  assert_int_equal(toh_infer(&t, in, &out), TB_ERR_MODEL);
  TB_ASSERT_CONTAINS(tb_last_error(), "does not broadcast");
  /* A^T = [[1,2,3],[4,5,6]], B^T = columns of ones and index: y = 2 * A^T B^T + 0.5 * C */
  const float av[6] = {1, 4, 2, 5, 3, 6};
  const float bv[12] = {1, 1, 1, 1, 0, 0, 0, 1, 0, 0, 0, 1};
  const float cv[4] = {2, 4, 6, 8};
  toh_in ins[3] = {{F32, 2, {3, 2}, av}, {F32, 2, {4, 3}, bv}, {F32, 1, {4}, cv}};
  TB_ASSERT_OK(toh_run(&t, ins, outs));
  nnt_assert_f32(outs[0], 2, (int64_t[]){2, 4}, (float[]){13, 4, 7, 10, 31, 10, 13, 16});
  toh_free_outs(outs, 1);
  toh_teardown(&t);
  /* Opset 11: C optional. */
  toh_setup(&t, "Gemm", 11, 3, 1u << 2, 1, NULL, 0); /* C omitted */
  assert_int_equal(toh_node(&t)->def->min_inputs, 2);
  toh_in two[3] = {{F32, 2, {1, 2}, av}, {F32, 2, {2, 1}, av}, {TOH_NONE, 0, {0}, NULL}};
  TB_ASSERT_OK(toh_run(&t, two, outs));
  nnt_assert_f32(outs[0], 2, (int64_t[]){1, 1}, (float[]){1 * 1 + 4 * 4});
  toh_free_outs(outs, 1);
  toh_teardown(&t);
  toh_setup(&t, "Gemm", 9, 3, 0, 1, NULL, 0);
  assert_int_equal(toh_node(&t)->def->min_inputs, 3);
  toh_teardown(&t);
}

/* Conv output spatial shape for X [1,1,in...] and W [1,1,k...] under attrs. */
static tb_status conv_shape(const tb_attr *attrs, size_t n_attrs, int64_t in, int64_t k, int64_t *out_dim) {
  toh t;
  tb_value_type out;
  toh_setup(&t, "Conv", 11, 2, 0, 1, attrs, n_attrs);
  infer2(&t, ty(DIMS(1, 1, in)), ty(DIMS(1, 1, k)), TB_OK, &out);
  tb_status st = TB_OK;
  *out_dim = out.dims[2].value;
  toh_teardown(&t);
  return st;
}

static void test_conv_infer_padding(void **state) {
  (void)state;
  int64_t o;
  conv_shape(NULL, 0, 7, 3, &o);
  assert_int_equal(o, 5);
  tb_attr pads[] = {TOH_INTS("pads", 1, 2), TOH_INTS("strides", 2)};
  conv_shape(pads, 2, 7, 3, &o); /* (7+3-3)/2+1 */
  assert_int_equal(o, 4);
  tb_attr same[] = {TOH_STR("auto_pad", "SAME_UPPER"), TOH_INTS("strides", 2)};
  conv_shape(same, 2, 7, 3, &o);
  assert_int_equal(o, 4);
  tb_attr lower[] = {TOH_STR("auto_pad", "SAME_LOWER"), TOH_INTS("strides", 3)};
  conv_shape(lower, 2, 7, 3, &o);
  assert_int_equal(o, 3);
  tb_attr valid[] = {TOH_STR("auto_pad", "VALID"), TOH_INTS("strides", 2), TOH_INTS("pads", 5, 5)};
  conv_shape(valid, 3, 8, 3, &o); /* pads ignored: (8-3)/2+1 */
  assert_int_equal(o, 3);
  tb_attr dil[] = {TOH_INTS("dilations", 2)};
  conv_shape(dil, 1, 7, 3, &o); /* dilated kernel 5 */
  assert_int_equal(o, 3);
}

static void expect_conv_error(const tb_attr *attrs, size_t n_attrs, const int64_t *x, const int64_t *w, size_t rank,
                              const char *needle) {
  toh t;
  tb_value_type out;
  toh_setup(&t, "Conv", 11, 2, 0, 1, attrs, n_attrs);
  infer2(&t, toh_type(F32, rank, x), toh_type(F32, rank, w), TB_ERR_MODEL, &out);
  TB_ASSERT_CONTAINS(tb_last_error(), "node 'n0' (Conv)");
  TB_ASSERT_CONTAINS(tb_last_error(), needle);
  toh_teardown(&t);
}

static void test_conv_infer_errors(void **state) {
  (void)state;
  const int64_t x[4] = {1, 4, 5, 5}, w[4] = {2, 2, 3, 3};
  tb_attr neg_stride[] = {TOH_INTS("strides", 1, -2), TOH_INT("group", 2)};
  expect_conv_error(neg_stride, 2, x, w, 4, "strides[1] is -2");
  tb_attr group3[] = {TOH_INT("group", 3)};
  expect_conv_error(group3, 1, x, w, 4, "group (3) does not divide the 4 input channels");
  tb_attr group0[] = {TOH_INT("group", 0)};
  expect_conv_error(group0, 1, x, w, 4, "group is 0");
  tb_attr group2[] = {TOH_INT("group", 2), TOH_INTS("dilations", 3, 3)};
  expect_conv_error(group2, 2, x, w, 4, "larger than the padded input");
  tb_attr bad_pad[] = {TOH_INT("group", 2), TOH_INTS("pads", 0, -1, 0, 0)};
  expect_conv_error(bad_pad, 2, x, w, 4, "pads[1] is -1");
  tb_attr short_pads[] = {TOH_INT("group", 2), TOH_INTS("pads", 0, 0)};
  expect_conv_error(short_pads, 2, x, w, 4, "pads has 2 values; it needs 4");
  tb_attr ap[] = {TOH_INT("group", 2), TOH_STR("auto_pad", "SAME")};
  expect_conv_error(ap, 2, x, w, 4, "auto_pad is 'SAME'");
  tb_attr huge[] = {TOH_INT("group", 2), TOH_INTS("pads", INT64_MAX, 0, INT64_MAX, 0)};
  expect_conv_error(huge, 2, x, w, 4, "overflows");
  tb_attr hdil[] = {TOH_INT("group", 2), TOH_INTS("dilations", INT64_MAX, 1)};
  expect_conv_error(hdil, 2, x, w, 4, "overflows");
  tb_attr hgroup[] = {TOH_INT("group", INT64_MAX)};
  const int64_t x0[4] = {1, 0, 5, 5};
  expect_conv_error(hgroup, 1, x0, w, 4, "channels");
}

static void test_conv_kernel(void **state) {
  (void)state;
  toh t;
  tb_tensor *out[1];
  /* 1x1x3x3 input 0..8, 2x2 ones kernel, pads 1 on top/left only, stride 1, bias 10. */
  const float x[9] = {0, 1, 2, 3, 4, 5, 6, 7, 8}, w[4] = {1, 1, 1, 1}, b[1] = {10};
  tb_attr attrs[] = {TOH_INTS("pads", 1, 1, 0, 0)};
  toh_setup(&t, "Conv", 11, 3, 0, 1, attrs, 1);
  toh_in in[3] = {{F32, 4, {1, 1, 3, 3}, x}, {F32, 4, {1, 1, 2, 2}, w}, {F32, 1, {1}, b}};
  TB_ASSERT_OK(toh_run(&t, in, out));
  nnt_assert_f32(out[0], 4, (int64_t[]){1, 1, 3, 3}, (float[]){10, 11, 13, 13, 18, 22, 19, 30, 34});
  toh_free_outs(out, 1);
  toh_teardown(&t);
  /* Depthwise 1-D: 2 channels, group 2, stride 2, dilation 2, SAME_UPPER. */
  const float x1[10] = {1, 2, 3, 4, 5, 10, 20, 30, 40, 50}, w1[4] = {1, -1, 2, 1};
  tb_attr a1[] = {TOH_INT("group", 2), TOH_INTS("strides", 2), TOH_INTS("dilations", 2), TOH_STR("auto_pad", "SAME_UPPER")};
  toh_setup(&t, "Conv", 11, 2, 0, 1, a1, 4);
  toh_in in1[2] = {{F32, 3, {1, 2, 5}, x1}, {F32, 3, {2, 1, 2}, w1}};
  /* out 3; dilated kernel 3; total pad (3-1)*2+3-5 = 2: begin 1, end 1. Positions -1,1,3 with taps at +0,+2. */
  TB_ASSERT_OK(toh_run(&t, in1, out));
  nnt_assert_f32(out[0], 3, (int64_t[]){1, 2, 3}, (float[]){-2, 2 - 4, 4, 20, 2 * 20 + 40, 2 * 40});
  toh_free_outs(out, 1);
  toh_teardown(&t);
}

static void test_conv_transpose(void **state) {
  (void)state;
  toh t;
  tb_value_type o;
  tb_tensor *out[1];
  /* 1-D: x [1,1,3] = 1,2,3, w [1,2,2] (2 output channels), stride 2. Full out = 2*2+2 = 6. */
  const float x[3] = {1, 2, 3}, w[4] = {1, 10, 2, 20};
  tb_attr attrs[] = {TOH_INTS("strides", 2)};
  toh_setup(&t, "ConvTranspose", 11, 2, 0, 1, attrs, 1);
  infer2(&t, ty(DIMS(1, 1, 3)), ty(DIMS(1, 2, 2)), TB_OK, &o);
  toh_assert_dims(&o, 3, (int64_t[]){1, 2, 6});
  toh_in in[2] = {{F32, 3, {1, 1, 3}, x}, {F32, 3, {1, 2, 2}, w}};
  TB_ASSERT_OK(toh_run(&t, in, out));
  nnt_assert_f32(out[0], 3, (int64_t[]){1, 2, 6}, (float[]){1, 10, 2, 20, 3, 30, 2, 20, 4, 40, 6, 60});
  toh_free_outs(out, 1);
  toh_teardown(&t);
  /* output_padding, pads, output_shape, SAME_UPPER. */
  tb_attr op[] = {TOH_INTS("strides", 2), TOH_INTS("output_padding", 1), TOH_INTS("pads", 1, 0)};
  toh_setup(&t, "ConvTranspose", 11, 2, 0, 1, op, 3);
  infer2(&t, ty(DIMS(1, 1, 3)), ty(DIMS(1, 2, 2)), TB_OK, &o);
  toh_assert_dims(&o, 3, (int64_t[]){1, 2, 6}); /* 6 + 1 - 1 */
  TB_ASSERT_OK(toh_run(&t, in, out));
  nnt_assert_f32(out[0], 3, (int64_t[]){1, 2, 6}, (float[]){10, 2, 20, 3, 30, 0, 20, 4, 40, 6, 60, 0});
  toh_free_outs(out, 1);
  toh_teardown(&t);
  tb_attr os[] = {TOH_INTS("strides", 2), TOH_INTS("output_shape", 5)};
  toh_setup(&t, "ConvTranspose", 11, 2, 0, 1, os, 2);
  infer2(&t, ty(DIMS(1, 1, 3)), ty(DIMS(1, 2, 2)), TB_OK, &o);
  toh_assert_dims(&o, 3, (int64_t[]){1, 2, 5});
  toh_teardown(&t);
  tb_attr same[] = {TOH_INTS("strides", 2), TOH_STR("auto_pad", "SAME_UPPER")};
  toh_setup(&t, "ConvTranspose", 11, 2, 0, 1, same, 2);
  infer2(&t, ty(DIMS(1, 1, 3)), ty(DIMS(1, 2, 2)), TB_OK, &o);
  toh_assert_dims(&o, 3, (int64_t[]){1, 2, 6});
  toh_teardown(&t);
  tb_attr bad[] = {TOH_INTS("strides", 2), TOH_INTS("output_padding", 3)};
  toh_setup(&t, "ConvTranspose", 11, 2, 0, 1, bad, 2);
  infer2(&t, ty(DIMS(1, 1, 3)), ty(DIMS(1, 2, 2)), TB_ERR_MODEL, &o);
  TB_ASSERT_CONTAINS(tb_last_error(), "output_padding[0] is 3");
  toh_teardown(&t);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_matmul_infer),       cmocka_unit_test(test_matmul_kernel),
      cmocka_unit_test(test_gemm),               cmocka_unit_test(test_conv_infer_padding),
      cmocka_unit_test(test_conv_infer_errors),  cmocka_unit_test(test_conv_kernel),
      cmocka_unit_test(test_conv_transpose),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
