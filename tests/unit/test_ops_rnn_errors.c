/* Bad recurrent nodes, at inference and in the kernel: weight shapes, hidden_size against the weights,
 * unknown activation names and wrong activation counts, direction, layout before opset 14, dtypes,
 * sequence_lens out of range. Each error names the node and the value. */
#include "test_ops_rnn_util.h"

static tb_status infer3(const char *op, int opset, const tb_attr *attrs, size_t n_attrs, const tb_value_type *x,
                        const tb_value_type *w, const tb_value_type *r) {
  toh t;
  toh_setup(&t, op, opset, 3, 0, 2, attrs, n_attrs);
  const tb_value_type *in[3] = {x, w, r};
  tb_value_type out[2];
  tb_status st = toh_infer(&t, in, out);
  toh_teardown(&t);
  return st;
}

static void test_bad_weight_shapes(void **state) {
  (void)state;
  tb_value_type x = toh_type(TB_DTYPE_F32, 3, (const int64_t[]){5, 2, 3});
  tb_value_type w = toh_type(TB_DTYPE_F32, 3, (const int64_t[]){1, 10, 3}); /* 10 rows: not 4 gates x H */
  tb_value_type r = toh_type(TB_DTYPE_F32, SIZE_MAX, NULL);
  assert_int_equal(infer3("LSTM", 7, NULL, 0, &x, &w, &r), TB_ERR_MODEL);
  TB_ASSERT_CONTAINS(tb_last_error(), "node 'n0' (LSTM)");
  TB_ASSERT_CONTAINS(tb_last_error(), "W's dimension 1 (10) is not a multiple of the 4 gates");

  w = toh_type(TB_DTYPE_F32, 3, (const int64_t[]){1, 8, 4}); /* input size 4, X says 3 */
  assert_int_equal(infer3("LSTM", 7, NULL, 0, &x, &w, &r), TB_ERR_MODEL);
  TB_ASSERT_CONTAINS(tb_last_error(), "input W has dimension 2 of size 4, expected 3");

  w = toh_type(TB_DTYPE_F32, 2, (const int64_t[]){8, 3});
  assert_int_equal(infer3("LSTM", 7, NULL, 0, &x, &w, &r), TB_ERR_MODEL);
  TB_ASSERT_CONTAINS(tb_last_error(), "input W has rank 2, expected 3");

  w = toh_type(TB_DTYPE_F32, 3, (const int64_t[]){2, 6, 3}); /* two directions for a forward GRU */
  assert_int_equal(infer3("GRU", 7, NULL, 0, &x, &w, &r), TB_ERR_MODEL);
  TB_ASSERT_CONTAINS(tb_last_error(), "input W has dimension 0 of size 2, expected 1");

  w = toh_type(TB_DTYPE_F32, 3, (const int64_t[]){1, 6, 3});
  r = toh_type(TB_DTYPE_F32, 3, (const int64_t[]){1, 6, 3});
  assert_int_equal(infer3("GRU", 7, NULL, 0, &x, &w, &r), TB_ERR_MODEL);
  TB_ASSERT_CONTAINS(tb_last_error(), "R's dimension 2 (3) does not match the hidden size 2 from W's shape");

  r = toh_type(TB_DTYPE_F64, 3, (const int64_t[]){1, 6, 2});
  assert_int_equal(infer3("GRU", 7, NULL, 0, &x, &w, &r), TB_ERR_MODEL);
  TB_ASSERT_CONTAINS(tb_last_error(), "input R has dtype f64 but X has f32");

  tb_value_type xi = toh_type(TB_DTYPE_I32, 3, (const int64_t[]){5, 2, 3});
  assert_int_equal(infer3("RNN", 7, NULL, 0, &xi, &w, &r), TB_ERR_UNSUPPORTED);
  TB_ASSERT_CONTAINS(tb_last_error(), "input 0 has element type i32");
}

static void test_hidden_size_mismatch(void **state) {
  (void)state;
  tb_attr attrs[] = {TOH_INT("hidden_size", 3)};
  tb_value_type x = toh_type(TB_DTYPE_F32, 3, (const int64_t[]){5, 2, 3});
  tb_value_type w = toh_type(TB_DTYPE_F32, 3, (const int64_t[]){1, 8, 3}), r = toh_type(TB_DTYPE_F32, SIZE_MAX, NULL);
  assert_int_equal(infer3("LSTM", 7, attrs, 1, &x, &w, &r), TB_ERR_MODEL);
  TB_ASSERT_CONTAINS(tb_last_error(), "hidden_size 3 does not match W's dimension 1 (8 = 4 gates x 2)");

  /* the kernel checks the concrete tensors the same way */
  toh t;
  toh_setup(&t, "LSTM", 7, 3, 0, 2, attrs, 1);
  float data[64] = {0};
  toh_in in[3] = {{TB_DTYPE_F32, 3, {1, 1, 3}, data}, {TB_DTYPE_F32, 3, {1, 8, 3}, data}, {TB_DTYPE_F32, 3, {1, 8, 2}, data}};
  tb_tensor *outs[2];
  assert_int_equal(toh_run(&t, in, outs), TB_ERR_MODEL);
  TB_ASSERT_CONTAINS(tb_last_error(), "node 'n0' (LSTM): hidden_size 3 does not match W's dimension 1");
  toh_teardown(&t);
}

static void test_kernel_bad_shapes(void **state) {
  (void)state;
  toh t;
  toh_setup(&t, "GRU", 7, 6, 1u << 3 | 1u << 4, 2, NULL, 0);
  float data[64] = {0};
  toh_in in[6] = {{TB_DTYPE_F32, 3, {2, 1, 3}, data}, {TB_DTYPE_F32, 3, {1, 6, 3}, data}, {TB_DTYPE_F32, 3, {1, 6, 2}, data},
                 {TOH_NONE, 0, {0}, NULL},            {TOH_NONE, 0, {0}, NULL},            {TB_DTYPE_F32, 3, {1, 2, 2}, data}};
  tb_tensor *outs[2];
  assert_int_equal(toh_run(&t, in, outs), TB_ERR_MODEL);
  TB_ASSERT_CONTAINS(tb_last_error(), "input initial_h has shape [1, 2, 2], expected [1, 1, 2]");
  in[5].dtype = TOH_NONE;
  in[2].shape[2] = 3;
  assert_int_equal(toh_run(&t, in, outs), TB_ERR_MODEL);
  TB_ASSERT_CONTAINS(tb_last_error(), "input R has shape [1, 6, 3], expected [1, 6, 2]");
  in[2].shape[2] = 2;
  in[0].ndim = 2;
  assert_int_equal(toh_run(&t, in, outs), TB_ERR_MODEL);
  TB_ASSERT_CONTAINS(tb_last_error(), "input X has shape [2, 1], expected rank 3");
  toh_teardown(&t);
}

static void test_sequence_lens_out_of_range(void **state) {
  (void)state;
  toh t;
  toh_setup(&t, "RNN", 7, 5, 1u << 3, 2, NULL, 0);
  float data[16] = {0};
  const int32_t lens[] = {2, 5};
  toh_in in[5] = {{TB_DTYPE_F32, 3, {3, 2, 1}, data}, {TB_DTYPE_F32, 3, {1, 1, 1}, data}, {TB_DTYPE_F32, 3, {1, 1, 1}, data},
                 {TOH_NONE, 0, {0}, NULL},            {TB_DTYPE_I32, 1, {2}, lens}};
  tb_tensor *outs[2];
  assert_int_equal(toh_run(&t, in, outs), TB_ERR_MODEL);
  TB_ASSERT_CONTAINS(tb_last_error(), "sequence_lens[1] is 5, outside 0..3");
  toh_teardown(&t);
}

static void test_unknown_activation(void **state) {
  (void)state;
  tb_value_type x = toh_type(TB_DTYPE_F32, 3, (const int64_t[]){5, 2, 3});
  tb_value_type w = toh_type(TB_DTYPE_F32, SIZE_MAX, NULL), r = toh_type(TB_DTYPE_F32, SIZE_MAX, NULL);
  tb_attr swish[] = {TOH_STRS("activations", "Sigmoid", "Swish", "Tanh")};
  assert_int_equal(infer3("LSTM", 7, swish, 1, &x, &w, &r), TB_ERR_MODEL);
  TB_ASSERT_CONTAINS(tb_last_error(), "node 'n0' (LSTM): unknown activation 'Swish'");
  TB_ASSERT_CONTAINS(tb_last_error(), "HardSigmoid");

  tb_attr too_few[] = {TOH_STR("direction", "bidirectional"), TOH_STRS("activations", "Sigmoid", "Tanh", "Tanh")};
  assert_int_equal(infer3("LSTM", 7, too_few, 2, &x, &w, &r), TB_ERR_MODEL);
  TB_ASSERT_CONTAINS(tb_last_error(), "'activations' has 3 names, expected 6 (3 per direction, 2 directions)");

  tb_attr not_strings[] = {TOH_STR("activations", "Tanh")};
  assert_int_equal(infer3("RNN", 7, not_strings, 1, &x, &w, &r), TB_ERR_MODEL);
  TB_ASSERT_CONTAINS(tb_last_error(), "must be a list of strings");
}

static void test_bad_attributes(void **state) {
  (void)state;
  tb_value_type x = toh_type(TB_DTYPE_F32, 3, (const int64_t[]){5, 2, 3});
  tb_value_type w = toh_type(TB_DTYPE_F32, SIZE_MAX, NULL), r = toh_type(TB_DTYPE_F32, SIZE_MAX, NULL);
  tb_attr sideways[] = {TOH_STR("direction", "sideways")};
  assert_int_equal(infer3("GRU", 7, sideways, 1, &x, &w, &r), TB_ERR_MODEL);
  TB_ASSERT_CONTAINS(tb_last_error(), "direction 'sideways' is not one of forward, reverse, bidirectional");
  tb_attr layout[] = {TOH_INT("layout", 1)};
  assert_int_equal(infer3("GRU", 7, layout, 1, &x, &w, &r), TB_ERR_MODEL);
  TB_ASSERT_CONTAINS(tb_last_error(), "'layout' needs opset 14");
  tb_attr layout2[] = {TOH_INT("layout", 2)};
  assert_int_equal(infer3("GRU", 14, layout2, 1, &x, &w, &r), TB_ERR_MODEL);
  TB_ASSERT_CONTAINS(tb_last_error(), "layout must be 0 or 1");
  tb_attr clip[] = {TOH_FLOAT("clip", -1.0f)};
  assert_int_equal(infer3("RNN", 7, clip, 1, &x, &w, &r), TB_ERR_MODEL);
  TB_ASSERT_CONTAINS(tb_last_error(), "clip must be a non-negative number");
  tb_attr hidden[] = {TOH_INT("hidden_size", 0)};
  assert_int_equal(infer3("RNN", 7, hidden, 1, &x, &w, &r), TB_ERR_MODEL);
  TB_ASSERT_CONTAINS(tb_last_error(), "hidden_size must be positive");
  tb_attr wrong_type[] = {TOH_STR("hidden_size", "4")};
  assert_int_equal(infer3("RNN", 7, wrong_type, 1, &x, &w, &r), TB_ERR_MODEL);
}

static void test_kernel_refuses_integer_x(void **state) {
  (void)state;
  toh t;
  toh_setup(&t, "RNN", 7, 3, 0, 2, NULL, 0);
  tb_value_type xi = toh_type(TB_DTYPE_I32, 3, (const int64_t[]){1, 1, 1});
  const tb_value_type *in[3] = {&xi, NULL, NULL};
  assert_null(tbt_kernel_find(t.graph, toh_node(&t), in, 0, 0)); /* accepts() turns it down */
  tb_value_type xf = toh_type(TB_DTYPE_F16, 3, (const int64_t[]){1, 1, 1});
  in[0] = &xf;
  assert_non_null(tbt_kernel_find(t.graph, toh_node(&t), in, 0, 0));
  toh_teardown(&t);
}

int main(void) {
  tbt_clear_env();
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_bad_weight_shapes),         cmocka_unit_test(test_hidden_size_mismatch),
      cmocka_unit_test(test_kernel_bad_shapes),         cmocka_unit_test(test_sequence_lens_out_of_range),
      cmocka_unit_test(test_unknown_activation),        cmocka_unit_test(test_bad_attributes),
      cmocka_unit_test(test_kernel_refuses_integer_x),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
