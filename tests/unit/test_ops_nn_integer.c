/* The integer and quantized ops (ConvInteger, QLinearConv, QLinearMatMul: zero points, per-channel
 * scales, round half to even) and hostile shapes and attributes at run time (sizes that overflow int64
 * are TB_ERR_MODEL naming the node, never undefined behaviour). */
#include "test_ops_nn_util.h"

#define U8 TB_DTYPE_U8
#define F32 TB_DTYPE_F32

static const uint8_t x4[4] = {1, 2, 3, 4};
static const uint8_t one[1] = {1};
static const float fone[1] = {1};

static void test_conv_integer(void **state) {
  (void)state;
  toh t;
  tb_tensor *out[1];
  const uint8_t w[1] = {3};
  toh_setup(&t, "ConvInteger", 10, 4, 0, 1, NULL, 0);
  toh_in in[4] = {{U8, 4, {1, 1, 2, 2}, x4}, {U8, 4, {1, 1, 1, 1}, w}, {U8, 0, {0}, one}, {U8, 0, {0}, one}};
  TB_ASSERT_OK(toh_run(&t, in, out));
  const int32_t want[4] = {0, 2, 4, 6};
  assert_int_equal(tb_tensor_dtype(out[0]), TB_DTYPE_I32);
  assert_memory_equal(tb_tensor_host_data(out[0]), want, sizeof want);
  toh_free_outs(out, 1);
  toh_teardown(&t);
}

static void test_qlinear_conv(void **state) {
  (void)state;
  toh t;
  tb_tensor *out[1];
  /* Two output channels; w_scale per channel; bias in the accumulator's scale; ties round to even. */
  const uint8_t w[2] = {3, 5};
  const float ws[2] = {0.5f, 1};
  const int32_t bias[2] = {1, 0};
  const uint8_t yzp[1] = {0};
  toh_setup(&t, "QLinearConv", 10, 9, 0, 1, NULL, 0);
  toh_in in[9] = {{U8, 4, {1, 1, 2, 2}, x4}, {F32, 0, {0}, fone},   {U8, 0, {0}, one},
                  {U8, 4, {2, 1, 1, 1}, w},  {F32, 1, {2}, ws},     {U8, 0, {0}, one},
                  {F32, 0, {0}, fone},       {U8, 0, {0}, yzp},     {TB_DTYPE_I32, 1, {2}, bias}};
  TB_ASSERT_OK(toh_run(&t, in, out));
  const uint8_t want[8] = {0, 2, 2, 4, 0, 4, 8, 12};
  assert_int_equal(tb_tensor_dtype(out[0]), U8);
  assert_memory_equal(tb_tensor_host_data(out[0]), want, sizeof want);
  toh_free_outs(out, 1);
  toh_teardown(&t);
}

static void test_qlinear_matmul(void **state) {
  (void)state;
  toh t;
  tb_tensor *out[1];
  const uint8_t a[2] = {2, 4}, b[4] = {3, 2, 5, 3}, zero[1] = {0}, yzp[1] = {10};
  const float as[1] = {0.5f}, ys[1] = {2};
  toh_setup(&t, "QLinearMatMul", 10, 8, 0, 1, NULL, 0);
  toh_in in[8] = {{U8, 2, {1, 2}, a}, {F32, 0, {0}, as}, {U8, 0, {0}, zero}, {U8, 2, {2, 2}, b},
                  {F32, 0, {0}, fone}, {U8, 0, {0}, one}, {F32, 0, {0}, ys},  {U8, 0, {0}, yzp}};
  TB_ASSERT_OK(toh_run(&t, in, out));
  /* Accumulators 20 and 10, times 0.25: 5 and 2.5 (-> 2, half to even), plus 10. */
  const uint8_t want[2] = {15, 12};
  assert_memory_equal(tb_tensor_host_data(out[0]), want, sizeof want);
  toh_free_outs(out, 1);
  toh_teardown(&t);
}

static void test_hostile_shapes(void **state) {
  (void)state;
  toh t;
  tb_tensor *out[2];
  /* Empty operands whose product shape overflows int64: [2^40, 0] @ [0, 2^40]. */
  const int64_t big = (int64_t)1 << 40;
  toh_setup(&t, "MatMul", 13, 2, 0, 1, NULL, 0);
  toh_in mm[2] = {{F32, 2, {big, 0}, NULL}, {F32, 2, {0, big}, NULL}};
  assert_int_equal(toh_run(&t, mm, out), TB_ERR_MODEL);
  TB_ASSERT_CONTAINS(tb_last_error(), "node 'n0' (MatMul)");
  TB_ASSERT_CONTAINS(tb_last_error(), "overflow");
  toh_free_outs(out, 1);
  toh_teardown(&t);
  /* Window attributes that overflow, at run time too. */
  const float x[3] = {1, 2, 3}, w[1] = {1};
  tb_attr pads[] = {TOH_INTS("pads", INT64_MAX, INT64_MAX)};
  toh_setup(&t, "Conv", 11, 2, 0, 1, pads, 1);
  toh_in cv[2] = {{F32, 3, {1, 1, 3}, x}, {F32, 3, {1, 1, 1}, w}};
  assert_int_equal(toh_run(&t, cv, out), TB_ERR_MODEL);
  TB_ASSERT_CONTAINS(tb_last_error(), "overflows");
  toh_free_outs(out, 1);
  toh_teardown(&t);
  tb_attr kern[] = {TOH_INTS("kernel_shape", INT64_MAX), TOH_INTS("dilations", 2)};
  toh_setup(&t, "MaxPool", 12, 1, 0, 2, kern, 2);
  toh_in mp[1] = {{F32, 3, {1, 1, 3}, x}};
  assert_int_equal(toh_run(&t, mp, out), TB_ERR_MODEL);
  TB_ASSERT_CONTAINS(tb_last_error(), "dilations[0] is 2");
  toh_free_outs(out, 2);
  toh_teardown(&t);
  tb_attr strides[] = {TOH_INTS("strides", INT64_MAX), TOH_INTS("output_padding", 1)};
  toh_setup(&t, "ConvTranspose", 11, 2, 0, 1, strides, 2);
  assert_int_equal(toh_run(&t, cv, out), TB_ERR_MODEL);
  TB_ASSERT_CONTAINS(tb_last_error(), "the output size overflows");
  toh_free_outs(out, 1);
  toh_teardown(&t);
  /* Group that does not divide the channels, at run time. */
  tb_attr group[] = {TOH_INT("group", 2)};
  toh_setup(&t, "Conv", 11, 2, 0, 1, group, 1);
  assert_int_equal(toh_run(&t, cv, out), TB_ERR_MODEL);
  TB_ASSERT_CONTAINS(tb_last_error(), "group (2)");
  toh_free_outs(out, 1);
  toh_teardown(&t);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_conv_integer),
      cmocka_unit_test(test_qlinear_conv),
      cmocka_unit_test(test_qlinear_matmul),
      cmocka_unit_test(test_hostile_shapes),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
