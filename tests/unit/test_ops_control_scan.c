/* Scan (opset 9+): the kernel with a stand-in body "cumsum" (s, x) -> (s + x, s + x) over x = [[1,2],[3,4],
 * [5,6]]: forward, reversed input, reversed output, input axis 1, output axis 1; inference of the scan
 * outputs' shapes; Scan-8 with its batch axis (padded sequence_lens refused); bad attributes and
 * mismatched lengths. */
#include "test_ops_control_util.h"

static const ct_port F32_2 = {TB_DTYPE_F32, 1, {2}, 0};

static void setup_scan(toh *t, int opset, const tb_attr *extra, size_t n_extra, size_t n_scan_in) {
  toh_begin(t, NULL);
  ct_port ins[3] = {F32_2, F32_2, F32_2}, outs[2] = {F32_2, F32_2};
  tb_attr attrs[6] = {TOH_GRAPH("body", ct_body(t, "cumsum", 1 + n_scan_in, ins, 2, outs)),
                      TOH_INT("num_scan_inputs", (int64_t)n_scan_in)};
  for (size_t i = 0; i < n_extra; i++) attrs[2 + i] = extra[i];
  toh_add(t, "Scan", opset, 1 + n_scan_in, 0, 2, 0, attrs, 2 + n_extra);
  t->run_subgraph = ct_run_subgraph;
}

static const float X[] = {1, 2, 3, 4, 5, 6};       /* [3, 2] */
static const float XT[] = {1, 3, 5, 2, 4, 6};      /* [2, 3]: X transposed */
static const float ZERO[] = {0, 0};

static void run_scan(const tb_attr *extra, size_t n_extra, bool transposed_input, tb_tensor **out) {
  toh t;
  setup_scan(&t, 11, extra, n_extra, 1);
  toh_in in[2] = {{TB_DTYPE_F32, 1, {2}, ZERO}, {TB_DTYPE_F32, 2, {3, 2}, X}};
  if (transposed_input) in[1] = (toh_in){TB_DTYPE_F32, 2, {2, 3}, XT};
  ct_calls = 0;
  TB_ASSERT_OK(toh_run(&t, in, out));
  assert_int_equal(ct_calls, 3);
  toh_teardown(&t);
}

static void test_scan_forward(void **state) {
  (void)state;
  tb_tensor *out[2];
  run_scan(NULL, 0, false, out);
  rt_assert_f32(out[0], 1, (const int64_t[]){2}, (const double[]){9, 12});
  rt_assert_f32(out[1], 2, (const int64_t[]){3, 2}, (const double[]){1, 2, 4, 6, 9, 12});
  toh_free_outs(out, 2);
}

static void test_scan_directions(void **state) {
  (void)state;
  tb_tensor *out[2];
  tb_attr in_rev[] = {TOH_INTS("scan_input_directions", 1)};
  run_scan(in_rev, 1, false, out); /* slices 5,6 then 3,4 then 1,2 */
  rt_assert_f32(out[0], 1, (const int64_t[]){2}, (const double[]){9, 12});
  rt_assert_f32(out[1], 2, (const int64_t[]){3, 2}, (const double[]){5, 6, 8, 10, 9, 12});
  toh_free_outs(out, 2);
  tb_attr out_rev[] = {TOH_INTS("scan_output_directions", 1)};
  run_scan(out_rev, 1, false, out); /* the last iteration first */
  rt_assert_f32(out[1], 2, (const int64_t[]){3, 2}, (const double[]){9, 12, 4, 6, 1, 2});
  toh_free_outs(out, 2);
}

static void test_scan_axes(void **state) {
  (void)state;
  tb_tensor *out[2];
  tb_attr in_axis[] = {TOH_INTS("scan_input_axes", 1)};
  run_scan(in_axis, 1, true, out); /* columns of X^T are the rows of X */
  rt_assert_f32(out[1], 2, (const int64_t[]){3, 2}, (const double[]){1, 2, 4, 6, 9, 12});
  toh_free_outs(out, 2);
  tb_attr out_axis[] = {TOH_INTS("scan_output_axes", -1)};
  run_scan(out_axis, 1, false, out); /* iterations stacked along the last axis */
  rt_assert_f32(out[1], 2, (const int64_t[]){2, 3}, (const double[]){1, 4, 9, 2, 6, 12});
  toh_free_outs(out, 2);
}

static void test_scan_kernel_errors(void **state) {
  (void)state;
  toh t;
  setup_scan(&t, 11, NULL, 0, 2);
  toh_in in[3] = {{TB_DTYPE_F32, 1, {2}, ZERO}, {TB_DTYPE_F32, 2, {3, 2}, X}, {TB_DTYPE_F32, 2, {2, 3}, XT}};
  tb_tensor *out[2];
  assert_int_equal(toh_run(&t, in, out), TB_ERR_MODEL);
  TB_ASSERT_CONTAINS(tb_last_error(), "node 'n0' (Scan): scan input 1 has 2 iterations along its axis, the first has 3");
  toh_teardown(&t);

  tb_attr bad_axis[] = {TOH_INTS("scan_input_axes", 2)};
  setup_scan(&t, 11, bad_axis, 1, 1);
  assert_int_equal(toh_run(&t, in, out), TB_ERR_MODEL);
  TB_ASSERT_CONTAINS(tb_last_error(), "scan_input_axes[0] = 2 is out of range for rank 2");
  toh_teardown(&t);
}

static tb_status infer_scan(toh *t, const tb_value_type *x, tb_value_type *out) {
  tb_value_type s = toh_type(TB_DTYPE_F32, 1, (const int64_t[]){2});
  const tb_value_type *in[2] = {&s, x};
  return toh_infer(t, in, out);
}

static void test_scan_infer(void **state) {
  (void)state;
  toh t;
  tb_value_type out[2], x = toh_type(TB_DTYPE_F32, 2, (const int64_t[]){7, 2});
  tb_attr out_axis[] = {TOH_INTS("scan_output_axes", 1)};
  setup_scan(&t, 9, out_axis, 1, 1);
  TB_ASSERT_OK(infer_scan(&t, &x, out));
  toh_assert_type(&out[0], TB_DTYPE_F32, 1, (const int64_t[]){2});
  toh_assert_type(&out[1], TB_DTYPE_F32, 2, (const int64_t[]){2, 7});
  toh_teardown(&t);

  tb_attr dirs[] = {TOH_INTS("scan_input_directions", 2)};
  setup_scan(&t, 9, dirs, 1, 1);
  assert_int_equal(infer_scan(&t, &x, out), TB_ERR_MODEL);
  TB_ASSERT_CONTAINS(tb_last_error(), "'scan_input_directions'[0] is 2, expected 0 (forward) or 1 (reverse)");
  toh_teardown(&t);

  tb_attr two_axes[] = {TOH_INTS("scan_output_axes", 0, 1)};
  setup_scan(&t, 9, two_axes, 1, 1);
  assert_int_equal(infer_scan(&t, &x, out), TB_ERR_MODEL);
  TB_ASSERT_CONTAINS(tb_last_error(), "'scan_output_axes' has 2 entries, expected 1");
  toh_teardown(&t);

  toh_begin(&t, NULL);
  tb_attr no_count[] = {TOH_GRAPH("body", ct_body(&t, "cumsum", 2, (const ct_port[]){F32_2, F32_2}, 2,
                                                 (const ct_port[]){F32_2, F32_2}))};
  toh_add(&t, "Scan", 11, 2, 0, 2, 0, no_count, 1);
  assert_int_equal(infer_scan(&t, &x, out), TB_ERR_MODEL);
  TB_ASSERT_CONTAINS(tb_last_error(), "num_scan_inputs is 0, expected 1 to the 2 inputs");
  toh_teardown(&t);
}

/* Scan-8: (sequence_lens, s [batch, 2], x [batch, 3, 2]); row 1 is row 0 times 10. */
static const float X8[] = {1, 2, 3, 4, 5, 6, 10, 20, 30, 40, 50, 60};
static const float S8[] = {0, 0, 0, 0};

static void setup_scan8(toh *t, const tb_attr *extra, size_t n_extra, unsigned omit) {
  toh_begin(t, NULL);
  ct_port ins[2] = {F32_2, F32_2}, outs[2] = {F32_2, F32_2};
  tb_attr attrs[3] = {TOH_GRAPH("body", ct_body(t, "cumsum", 2, ins, 2, outs)), TOH_INT("num_scan_inputs", 1)};
  for (size_t i = 0; i < n_extra; i++) attrs[2 + i] = extra[i];
  toh_add(t, "Scan", 8, 3, omit, 2, 0, attrs, 2 + n_extra);
  t->run_subgraph = ct_run_subgraph;
}

static tb_status run_scan8(const tb_attr *extra, size_t n_extra, const int64_t *lens, tb_tensor **out) {
  toh t;
  setup_scan8(&t, extra, n_extra, lens ? 0 : 1u);
  toh_in in[3] = {{TB_DTYPE_I64, 1, {2}, lens}, {TB_DTYPE_F32, 2, {2, 2}, S8}, {TB_DTYPE_F32, 3, {2, 3, 2}, X8}};
  if (!lens) in[0].dtype = TOH_NONE;
  ct_calls = 0;
  tb_status st = toh_run(&t, in, out);
  toh_teardown(&t);
  return st;
}

static void test_scan8_batches(void **state) {
  (void)state;
  tb_tensor *out[2];
  TB_ASSERT_OK(run_scan8(NULL, 0, NULL, out));
  assert_int_equal(ct_calls, 6); /* 2 rows x 3 steps */
  rt_assert_f32(out[0], 2, (const int64_t[]){2, 2}, (const double[]){9, 12, 90, 120});
  rt_assert_f32(out[1], 3, (const int64_t[]){2, 3, 2}, (const double[]){1, 2, 4, 6, 9, 12, 10, 20, 40, 60, 90, 120});
  toh_free_outs(out, 2);
  tb_attr reverse[] = {TOH_INTS("directions", 1)};
  const int64_t full[2] = {3, 3};
  TB_ASSERT_OK(run_scan8(reverse, 1, full, out));
  rt_assert_f32(out[1], 3, (const int64_t[]){2, 3, 2}, (const double[]){5, 6, 8, 10, 9, 12, 50, 60, 80, 100, 90, 120});
  toh_free_outs(out, 2);
  const int64_t padded[2] = {3, 2};
  assert_int_equal(run_scan8(NULL, 0, padded, out), TB_ERR_UNSUPPORTED);
  TB_ASSERT_CONTAINS(tb_last_error(), "sequence_lens[1] is 2, shorter than the sequence (3): padded batches are not supported");
}

static void test_scan8_infer(void **state) {
  (void)state;
  toh t;
  setup_scan8(&t, NULL, 0, 1u);
  tb_value_type s = toh_type(TB_DTYPE_F32, 2, (const int64_t[]){4, 2}), x = toh_type(TB_DTYPE_F32, 3, (const int64_t[]){4, 9, 2});
  const tb_value_type *in[3] = {NULL, &s, &x};
  tb_value_type out[2];
  TB_ASSERT_OK(toh_infer(&t, in, out));
  toh_assert_type(&out[0], TB_DTYPE_F32, 2, (const int64_t[]){4, 2});
  toh_assert_type(&out[1], TB_DTYPE_F32, 3, (const int64_t[]){4, 9, 2});
  x = toh_type(TB_DTYPE_F32, 1, (const int64_t[]){4});
  assert_int_equal(toh_infer(&t, in, out), TB_ERR_MODEL);
  TB_ASSERT_CONTAINS(tb_last_error(), "input 2 must have a batch axis and a sequence axis");
  toh_teardown(&t);
}

int main(void) {
  tbt_clear_env();
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_scan_forward),       cmocka_unit_test(test_scan_directions), cmocka_unit_test(test_scan_axes),
      cmocka_unit_test(test_scan_kernel_errors), cmocka_unit_test(test_scan_infer),
      cmocka_unit_test(test_scan8_batches),      cmocka_unit_test(test_scan8_infer),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
