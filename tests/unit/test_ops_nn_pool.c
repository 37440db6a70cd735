/* Pools, softmax and normalizations: output shapes (ceil_mode, SAME/VALID padding, Indices), kernels
 * against hand-computed values, opset <13 flattening vs opset 13 axis softmax, and bad attributes. */
#include "test_ops_nn_util.h"

#define F32 TB_DTYPE_F32

static tb_status infer1(toh *t, size_t ndim, const int64_t *dims, tb_value_type *out) {
  tb_value_type x = toh_type(F32, ndim, dims);
  const tb_value_type *in[1] = {&x};
  return toh_infer(t, in, out);
}

static int64_t pool_out(const tb_attr *attrs, size_t n_attrs, int64_t in) {
  toh t;
  tb_value_type out[2];
  toh_setup(&t, "MaxPool", 12, 1, 0, 2, attrs, n_attrs);
  TB_ASSERT_OK(infer1(&t, 3, (int64_t[]){1, 1, in}, out));
  assert_int_equal(out[1].dtype, TB_DTYPE_I64);
  assert_int_equal(out[1].dims[2].value, out[0].dims[2].value);
  toh_teardown(&t);
  return out[0].dims[2].value;
}

static void test_pool_infer(void **state) {
  (void)state;
  tb_attr k3s2[] = {TOH_INTS("kernel_shape", 3), TOH_INTS("strides", 2)};
  assert_int_equal(pool_out(k3s2, 2, 6), 2); /* floor((6-3)/2)+1 */
  tb_attr ceil[] = {TOH_INTS("kernel_shape", 3), TOH_INTS("strides", 2), TOH_INT("ceil_mode", 1)};
  assert_int_equal(pool_out(ceil, 3, 6), 3);
  /* ceil_mode never starts a window in the end padding only: in 5, k 2, s 3, pads 0/1 -> 2, not 3 */
  tb_attr ceil_pad[] = {TOH_INTS("kernel_shape", 2), TOH_INTS("strides", 3), TOH_INT("ceil_mode", 1), TOH_INTS("pads", 0, 1)};
  assert_int_equal(pool_out(ceil_pad, 4, 5), 2);
  tb_attr same[] = {TOH_INTS("kernel_shape", 3), TOH_INTS("strides", 2), TOH_STR("auto_pad", "SAME_LOWER")};
  assert_int_equal(pool_out(same, 3, 7), 4);
  tb_attr valid[] = {TOH_INTS("kernel_shape", 3), TOH_STR("auto_pad", "VALID")};
  assert_int_equal(pool_out(valid, 2, 7), 5);
  tb_attr dil[] = {TOH_INTS("kernel_shape", 2), TOH_INTS("dilations", 3)};
  assert_int_equal(pool_out(dil, 2, 7), 4); /* dilated kernel 4 */

  toh t;
  tb_value_type out[2];
  toh_setup(&t, "MaxPool", 12, 1, 0, 1, NULL, 0);
  assert_int_equal(infer1(&t, 4, (int64_t[]){1, 1, 4, 4}, out), TB_ERR_MODEL);
  TB_ASSERT_CONTAINS(tb_last_error(), "kernel_shape is required");
  toh_teardown(&t);
  tb_attr big[] = {TOH_INTS("kernel_shape", 5, 5)};
  toh_setup(&t, "AveragePool", 11, 1, 0, 1, big, 1);
  assert_int_equal(infer1(&t, 4, (int64_t[]){1, 1, 4, 4}, out), TB_ERR_MODEL);
  TB_ASSERT_CONTAINS(tb_last_error(), "node 'n0' (AveragePool)");
  TB_ASSERT_CONTAINS(tb_last_error(), "larger than the padded input (4)");
  toh_teardown(&t);
  tb_attr order[] = {TOH_INTS("kernel_shape", 2), TOH_INT("storage_order", 2)};
  toh_setup(&t, "MaxPool", 12, 1, 0, 1, order, 2);
  assert_int_equal(infer1(&t, 3, (int64_t[]){1, 1, 4}, out), TB_ERR_MODEL);
  TB_ASSERT_CONTAINS(tb_last_error(), "storage_order is 2");
  toh_teardown(&t);
  toh_setup(&t, "GlobalAveragePool", 1, 1, 0, 1, NULL, 0);
  TB_ASSERT_OK(infer1(&t, 4, (int64_t[]){2, 3, 5, -1}, out));
  toh_assert_dims(&out[0], 4, (int64_t[]){2, 3, 1, 1});
  toh_teardown(&t);
}

static void test_maxpool_kernel(void **state) {
  (void)state;
  toh t;
  tb_tensor *out[2];
  /* 3x3 input, kernel 2x2, stride 1, pads 0: windows' max and flat index; storage_order 1 indexes columns. */
  const float x[9] = {1, 5, 2, 7, 3, 4, 0, 9, 6};
  tb_attr attrs[] = {TOH_INTS("kernel_shape", 2, 2)};
  toh_setup(&t, "MaxPool", 12, 1, 0, 2, attrs, 1);
  toh_in in[1] = {{F32, 4, {1, 1, 3, 3}, x}};
  TB_ASSERT_OK(toh_run(&t, in, out));
  nnt_assert_f32(out[0], 4, (int64_t[]){1, 1, 2, 2}, (float[]){7, 5, 9, 9});
  nnt_assert_i64(out[1], 4, (int64_t[]){1, 1, 2, 2}, (int64_t[]){3, 1, 7, 7});
  toh_free_outs(out, 2);
  toh_teardown(&t);
  tb_attr col[] = {TOH_INTS("kernel_shape", 2, 2), TOH_INT("storage_order", 1)};
  toh_setup(&t, "MaxPool", 12, 1, 0, 2, col, 2);
  TB_ASSERT_OK(toh_run(&t, in, out));
  nnt_assert_i64(out[1], 4, (int64_t[]){1, 1, 2, 2}, (int64_t[]){1, 3, 5, 5});
  toh_free_outs(out, 2);
  toh_teardown(&t);
  /* ceil_mode with a partial last window: 1-D [1,2,3,4,5], k 2, s 2 -> [2,4,5]. */
  tb_attr ceil[] = {TOH_INTS("kernel_shape", 2), TOH_INTS("strides", 2), TOH_INT("ceil_mode", 1)};
  toh_setup(&t, "MaxPool", 12, 1, 0, 1, ceil, 3);
  const float x1[5] = {1, 2, 3, 4, 5};
  toh_in in1[1] = {{F32, 3, {1, 1, 5}, x1}};
  TB_ASSERT_OK(toh_run(&t, in1, out));
  nnt_assert_f32(out[0], 3, (int64_t[]){1, 1, 3}, (float[]){2, 4, 5});
  toh_free_outs(out, 1);
  toh_teardown(&t);
}

static void test_avgpool_kernel(void **state) {
  (void)state;
  toh t;
  tb_tensor *out[1];
  const float x[4] = {1, 2, 3, 4};
  /* 1-D, k 3, pads 1/1: windows [pad,1,2] [1,2,3] [2,3,4] [3,4,pad]. */
  tb_attr ex[] = {TOH_INTS("kernel_shape", 3), TOH_INTS("pads", 1, 1)};
  toh_setup(&t, "AveragePool", 11, 1, 0, 1, ex, 2);
  toh_in in[1] = {{F32, 3, {1, 1, 4}, x}};
  TB_ASSERT_OK(toh_run(&t, in, out));
  nnt_assert_f32(out[0], 3, (int64_t[]){1, 1, 4}, (float[]){1.5f, 2, 3, 3.5f});
  toh_free_outs(out, 1);
  toh_teardown(&t);
  tb_attr inc[] = {TOH_INTS("kernel_shape", 3), TOH_INTS("pads", 1, 1), TOH_INT("count_include_pad", 1)};
  toh_setup(&t, "AveragePool", 11, 1, 0, 1, inc, 3);
  TB_ASSERT_OK(toh_run(&t, in, out));
  nnt_assert_f32(out[0], 3, (int64_t[]){1, 1, 4}, (float[]){1, 2, 3, 7.0f / 3});
  toh_free_outs(out, 1);
  toh_teardown(&t);
  /* Global pools over 2 channels of 2x2. */
  const float g[8] = {1, 2, 3, 4, -1, -2, -3, -8};
  toh_in gin[1] = {{F32, 4, {1, 2, 2, 2}, g}};
  toh_setup(&t, "GlobalAveragePool", 1, 1, 0, 1, NULL, 0);
  TB_ASSERT_OK(toh_run(&t, gin, out));
  nnt_assert_f32(out[0], 4, (int64_t[]){1, 2, 1, 1}, (float[]){2.5f, -3.5f});
  toh_free_outs(out, 1);
  toh_teardown(&t);
  toh_setup(&t, "GlobalMaxPool", 1, 1, 0, 1, NULL, 0);
  TB_ASSERT_OK(toh_run(&t, gin, out));
  nnt_assert_f32(out[0], 4, (int64_t[]){1, 2, 1, 1}, (float[]){4, -1});
  toh_free_outs(out, 1);
  toh_teardown(&t);
  tb_attr lp[] = {TOH_INTS("kernel_shape", 2), TOH_INT("p", 2)};
  const float l[3] = {3, 4, 0};
  toh_in lin[1] = {{F32, 3, {1, 1, 3}, l}};
  toh_setup(&t, "LpPool", 11, 1, 0, 1, lp, 2);
  TB_ASSERT_OK(toh_run(&t, lin, out));
  nnt_assert_f32(out[0], 3, (int64_t[]){1, 1, 2}, (float[]){5, 4});
  toh_free_outs(out, 1);
  toh_teardown(&t);
}

static void test_softmax_opsets(void **state) {
  (void)state;
  toh t;
  tb_tensor *out[1];
  tb_value_type o;
  /* x [2, 2, 2]; axis 1. Opset 11: rows are the last 4 elements of each batch; opset 13: pairs along axis 1. */
  const float x[8] = {0, 1, 2, 3, 0, 0, 0, 0};
  toh_in in[1] = {{F32, 3, {2, 2, 2}, x}};
  tb_attr axis1[] = {TOH_INT("axis", 1)};
  toh_setup(&t, "Softmax", 11, 1, 0, 1, axis1, 1);
  TB_ASSERT_OK(toh_run(&t, in, out));
  double s = 1 + exp(1) + exp(2) + exp(3);
  nnt_assert_f32(out[0], 3, (int64_t[]){2, 2, 2},
                 (float[]){(float)(1 / s), (float)(exp(1) / s), (float)(exp(2) / s), (float)(exp(3) / s), 0.25f, 0.25f,
                           0.25f, 0.25f});
  toh_free_outs(out, 1);
  toh_teardown(&t);
  toh_setup(&t, "Softmax", 13, 1, 0, 1, axis1, 1);
  TB_ASSERT_OK(toh_run(&t, in, out));
  float a = (float)(1 / (1 + exp(2))), b = (float)(exp(2) / (1 + exp(2)));
  nnt_assert_f32(out[0], 3, (int64_t[]){2, 2, 2}, (float[]){a, a, b, b, 0.5f, 0.5f, 0.5f, 0.5f});
  toh_free_outs(out, 1);
  toh_teardown(&t);
  /* Default axes: 1 before 13, -1 from 13. */
  toh_setup(&t, "LogSoftmax", 13, 1, 0, 1, NULL, 0);
  TB_ASSERT_OK(toh_run(&t, in, out));
  float l0 = (float)-log(1 + exp(1)), l1 = (float)(1 - log(1 + exp(1)));
  nnt_assert_f32(out[0], 3, (int64_t[]){2, 2, 2}, (float[]){l0, l1, l0, l1, (float)-log(2), (float)-log(2), (float)-log(2), (float)-log(2)});
  toh_free_outs(out, 1);
  toh_teardown(&t);
  toh_setup(&t, "Hardmax", 1, 1, 0, 1, NULL, 0);
  TB_ASSERT_OK(toh_run(&t, in, out));
  nnt_assert_f32(out[0], 3, (int64_t[]){2, 2, 2}, (float[]){0, 0, 0, 1, 1, 0, 0, 0});
  toh_free_outs(out, 1);
  toh_teardown(&t);
  tb_attr bad[] = {TOH_INT("axis", 3)};
  toh_setup(&t, "Softmax", 13, 1, 0, 1, bad, 1);
  assert_int_equal(infer1(&t, 3, (int64_t[]){2, 2, 2}, &o), TB_ERR_MODEL);
  TB_ASSERT_CONTAINS(tb_last_error(), "axis");
  toh_teardown(&t);
  toh_setup(&t, "Softmax", 11, 1, 0, 1, bad, 1);
  TB_ASSERT_OK(infer1(&t, 3, (int64_t[]){2, 2, 2}, &o)); /* axis == rank is allowed before 13 */
  toh_teardown(&t);
}

static void test_batchnorm(void **state) {
  (void)state;
  toh t;
  tb_tensor *out[1];
  tb_value_type o[5];
  /* x [1, 2, 2]: channel 0 {1, 3}, channel 1 {2, 6}. */
  const float x[4] = {1, 3, 2, 6}, scale[2] = {2, 1}, bias[2] = {0, 1}, mean[2] = {2, 4}, var[2] = {1, 4};
  tb_attr eps[] = {TOH_FLOAT("epsilon", 0.0f)};
  toh_setup(&t, "BatchNormalization", 15, 5, 0, 1, eps, 1);
  toh_in in[5] = {{F32, 3, {1, 2, 2}, x}, {F32, 1, {2}, scale}, {F32, 1, {2}, bias}, {F32, 1, {2}, mean}, {F32, 1, {2}, var}};
  TB_ASSERT_OK(toh_run(&t, in, out));
  nnt_assert_f32(out[0], 3, (int64_t[]){1, 2, 2}, (float[]){-2, 2, 0, 2});
  toh_free_outs(out, 1);
  toh_teardown(&t);
  tb_attr train[] = {TOH_INT("training_mode", 1)};
  toh_setup(&t, "BatchNormalization", 15, 5, 0, 3, train, 1);
  tb_value_type tx = toh_type(F32, 3, (int64_t[]){1, 2, 2}), tp = toh_type(F32, 1, (int64_t[]){2});
  const tb_value_type *ins[5] = {&tx, &tp, &tp, &tp, &tp};
  assert_int_equal(toh_infer(&t, ins, o), TB_ERR_UNSUPPORTED);
  TB_ASSERT_CONTAINS(tb_last_error(), "training_mode");
  toh_teardown(&t);
  /* Opset 7, spatial=0: parameters per element of a sample [C, D]. */
  const float s4[4] = {1, 1, 1, 1}, b4[4] = {0, 0, 0, 0}, m4[4] = {1, 3, 2, 6}, v4[4] = {1, 1, 1, 1};
  tb_attr sp[] = {TOH_INT("spatial", 0), TOH_FLOAT("epsilon", 0.0f)};
  toh_setup(&t, "BatchNormalization", 7, 5, 0, 1, sp, 2);
  toh_in in4[5] = {{F32, 3, {1, 2, 2}, x}, {F32, 2, {2, 2}, s4}, {F32, 2, {2, 2}, b4}, {F32, 2, {2, 2}, m4}, {F32, 2, {2, 2}, v4}};
  TB_ASSERT_OK(toh_run(&t, in4, out));
  nnt_assert_f32(out[0], 3, (int64_t[]){1, 2, 2}, (float[]){0, 0, 0, 0});
  toh_free_outs(out, 1);
  toh_teardown(&t);
}

static void test_layernorm_instancenorm_lrn(void **state) {
  (void)state;
  toh t;
  tb_tensor *out[3];
  tb_value_type o[3];
  /* x [2, 2]: rows {1, 3} (mean 2, var 1) and {0, 4} (mean 2, var 4); eps 0. */
  const float x[4] = {1, 3, 0, 4}, scale[2] = {1, 2}, bias[2] = {0, 1};
  tb_attr eps[] = {TOH_FLOAT("epsilon", 0.0f)};
  toh_setup(&t, "LayerNormalization", 17, 3, 0, 3, eps, 1);
  tb_value_type tx = toh_type(F32, 3, (int64_t[]){2, 3, 4}), ts = toh_type(F32, 1, (int64_t[]){4});
  const tb_value_type *ins[3] = {&tx, &ts, &ts};
  TB_ASSERT_OK(toh_infer(&t, ins, o));
  toh_assert_dims(&o[1], 3, (int64_t[]){2, 3, 1});
  toh_in in[3] = {{F32, 2, {2, 2}, x}, {F32, 1, {2}, scale}, {F32, 1, {2}, bias}};
  TB_ASSERT_OK(toh_run(&t, in, out));
  nnt_assert_f32(out[0], 2, (int64_t[]){2, 2}, (float[]){-1, 3, -1, 3});
  nnt_assert_f32(out[1], 2, (int64_t[]){2, 1}, (float[]){2, 2});
  nnt_assert_f32(out[2], 2, (int64_t[]){2, 1}, (float[]){1, 0.5f});
  toh_free_outs(out, 3);
  toh_teardown(&t);
  /* InstanceNormalization: x [1, 1, 2] = {1, 3} -> {-1, 1} * 2 + 1. */
  const float ix[2] = {1, 3}, is[1] = {2}, ib[1] = {1};
  toh_setup(&t, "InstanceNormalization", 6, 3, 0, 1, eps, 1);
  toh_in iin[3] = {{F32, 3, {1, 1, 2}, ix}, {F32, 1, {1}, is}, {F32, 1, {1}, ib}};
  TB_ASSERT_OK(toh_run(&t, iin, out));
  nnt_assert_f32(out[0], 3, (int64_t[]){1, 1, 2}, (float[]){-1, 3});
  toh_free_outs(out, 1);
  toh_teardown(&t);
  /* LRN size 2 (channels c and c+1... floor((2-1)/2)=0 before, 1 after), alpha 2, beta 1, bias 1. */
  const float lx[3] = {1, 2, 3};
  tb_attr lrn[] = {TOH_INT("size", 2), TOH_FLOAT("alpha", 2.0f), TOH_FLOAT("beta", 1.0f), TOH_FLOAT("bias", 1.0f)};
  toh_setup(&t, "LRN", 13, 1, 0, 1, lrn, 4);
  toh_in lin[1] = {{F32, 4, {1, 3, 1, 1}, lx}};
  TB_ASSERT_OK(toh_run(&t, lin, out));
  nnt_assert_f32(out[0], 4, (int64_t[]){1, 3, 1, 1}, (float[]){1.0f / 6, 2.0f / 14, 3.0f / 10});
  toh_free_outs(out, 1);
  toh_teardown(&t);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_pool_infer),    cmocka_unit_test(test_maxpool_kernel),
      cmocka_unit_test(test_avgpool_kernel), cmocka_unit_test(test_softmax_opsets),
      cmocka_unit_test(test_batchnorm),     cmocka_unit_test(test_layernorm_instancenorm_lrn),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
