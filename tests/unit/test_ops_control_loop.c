/* Loop: the kernel with a stand-in body "acc" (i, cond, s) -> (i < 2, s + i, (s + i) * 10): trip count and
 * condition each stop it, the body's condition is ignored without the cond input, zero iterations give
 * the initial values and an empty scan output, and the errors; inference of carried and scan outputs. */
#include "test_ops_control_util.h"

static const ct_port I64_SCALAR = {TB_DTYPE_I64, 0, {0}, 0}, BOOL_SCALAR = {TB_DTYPE_BOOL, 0, {0}, 0};
static const ct_port F32_1 = {TB_DTYPE_F32, 1, {1}, 0};

/* A Loop node (M, cond, s) -> (s_final, scan) with body `body_name`; omit bit 0: no M, bit 1: no cond. */
static void setup_loop(toh *t, const char *body_name, unsigned omit) {
  toh_begin(t, NULL);
  const ct_port ins[3] = {I64_SCALAR, BOOL_SCALAR, F32_1};
  const ct_port outs[3] = {BOOL_SCALAR, F32_1, F32_1};
  tb_attr attrs[] = {TOH_GRAPH("body", ct_body(t, body_name, 3, ins, 3, outs))};
  toh_add(t, "Loop", 13, 3, omit, 2, 0, attrs, 1);
  t->run_subgraph = ct_run_subgraph;
}

static tb_status run_loop(unsigned omit, int64_t m, const char *body_name, tb_tensor **out) {
  toh t;
  setup_loop(&t, body_name, omit);
  uint8_t cond = 1;
  const float s0 = 1.0f;
  toh_in in[3] = {{TB_DTYPE_I64, 0, {0}, &m}, {TB_DTYPE_BOOL, 0, {0}, &cond}, {TB_DTYPE_F32, 1, {1}, &s0}};
  if (omit & 1u) in[0].dtype = TOH_NONE;
  if (omit & 2u) in[1].dtype = TOH_NONE;
  ct_calls = 0;
  tb_status st = toh_run(&t, in, out);
  toh_teardown(&t);
  return st;
}

static void test_loop_stops_on_condition(void **state) {
  (void)state;
  tb_tensor *out[2];
  /* s: 1 -> 1 (i 0, cond 0<2) -> 2 (i 1, cond 1<2) -> 4 (i 2, cond false: stop) */
  TB_ASSERT_OK(run_loop(0, 5, "acc", out));
  assert_int_equal(ct_calls, 3);
  rt_assert_f32(out[0], 1, (const int64_t[]){1}, (const double[]){4});
  rt_assert_f32(out[1], 2, (const int64_t[]){3, 1}, (const double[]){10, 20, 40});
  toh_free_outs(out, 2);
}

static void test_loop_stops_on_trip_count(void **state) {
  (void)state;
  tb_tensor *out[2];
  TB_ASSERT_OK(run_loop(0, 2, "acc", out));
  assert_int_equal(ct_calls, 2);
  rt_assert_f32(out[0], 1, (const int64_t[]){1}, (const double[]){2});
  rt_assert_f32(out[1], 2, (const int64_t[]){2, 1}, (const double[]){10, 20});
  toh_free_outs(out, 2);
  /* no cond input: a for loop, the body's condition is ignored; s = 1 + 0 + 1 + 2 + 3 + 4 */
  TB_ASSERT_OK(run_loop(2u, 5, "acc", out));
  assert_int_equal(ct_calls, 5);
  rt_assert_f32(out[0], 1, (const int64_t[]){1}, (const double[]){11});
  rt_assert_f32(out[1], 2, (const int64_t[]){5, 1}, (const double[]){10, 20, 40, 70, 110});
  toh_free_outs(out, 2);
  /* no M: a while loop */
  TB_ASSERT_OK(run_loop(1u, 0, "acc", out));
  assert_int_equal(ct_calls, 3);
  rt_assert_f32(out[0], 1, (const int64_t[]){1}, (const double[]){4});
  toh_free_outs(out, 2);
}

static void test_loop_zero_iterations(void **state) {
  (void)state;
  tb_tensor *out[2];
  TB_ASSERT_OK(run_loop(0, 0, "acc", out));
  assert_int_equal(ct_calls, 0);
  rt_assert_f32(out[0], 1, (const int64_t[]){1}, (const double[]){1}); /* the initial value */
  toh_assert_shape(out[1], 2, (const int64_t[]){0, 1});                 /* from the body's declared [1] */
  toh_free_outs(out, 2);
}

static void test_loop_errors(void **state) {
  (void)state;
  tb_tensor *out[2];
  assert_int_equal(run_loop(3u, 0, "acc", out), TB_ERR_MODEL);
  TB_ASSERT_CONTAINS(tb_last_error(), "node 'n0' (Loop): has neither a trip count M nor a condition");
  assert_int_equal(run_loop(0, 3, "badcond", out), TB_ERR_MODEL);
  TB_ASSERT_CONTAINS(tb_last_error(), "the body's condition output must have one element, it has 2");
  assert_null(out[0]);
  assert_null(out[1]);
}

static void test_loop_infer(void **state) {
  (void)state;
  toh t;
  setup_loop(&t, "acc", 0);
  tb_value_type m = toh_type(TB_DTYPE_I64, 0, NULL), cond = toh_type(TB_DTYPE_BOOL, 0, NULL);
  tb_value_type s = toh_type(TB_DTYPE_F32, 1, (const int64_t[]){1});
  const tb_value_type *in[3] = {&m, &cond, &s};
  tb_value_type out[2];
  TB_ASSERT_OK(toh_infer(&t, in, out));
  toh_assert_type(&out[0], TB_DTYPE_F32, 1, (const int64_t[]){1});
  toh_assert_type(&out[1], TB_DTYPE_F32, 2, (const int64_t[]){-1, 1}); /* the trip count is not known */
  s = toh_type(TB_DTYPE_F32, 1, (const int64_t[]){4});                  /* the body declares [1]: they differ */
  TB_ASSERT_OK(toh_infer(&t, in, out));
  toh_assert_type(&out[0], TB_DTYPE_F32, 1, (const int64_t[]){-1});
  s = toh_type(TB_DTYPE_I64, 1, (const int64_t[]){1});
  assert_int_equal(toh_infer(&t, in, out), TB_ERR_MODEL);
  TB_ASSERT_CONTAINS(tb_last_error(), "loop-carried value 0 is i64 on one path and f32 on the other");
  toh_teardown(&t);

  setup_loop(&t, "acc", 2u); /* a for loop over a constant M = 6: the trip count is known */
  s = toh_type(TB_DTYPE_F32, 1, (const int64_t[]){1});
  const int64_t six = 6;
  tb_ir_tensor m_value = {.name = "in0", .dtype = TB_DTYPE_I64, .ndim = 0, .data = &six, .nbytes = sizeof six};
  const tb_value_type *for_in[3] = {&m, NULL, &s};
  const tb_ir_tensor *values[3] = {&m_value, NULL, NULL};
  tb_infer_ctx ictx = {t.graph, toh_node(&t), 3, for_in, values, 2, out};
  TB_ASSERT_OK(toh_node(&t)->def->infer(&ictx));
  toh_assert_type(&out[1], TB_DTYPE_F32, 2, (const int64_t[]){6, 1});
  toh_teardown(&t);

  toh_begin(&t, NULL); /* a body with too few inputs */
  const ct_port ins[2] = {I64_SCALAR, BOOL_SCALAR}, outs[2] = {BOOL_SCALAR, F32_1};
  tb_attr attrs[] = {TOH_GRAPH("body", ct_body(&t, "acc", 2, ins, 2, outs))};
  toh_add(&t, "Loop", 13, 3, 0, 1, 0, attrs, 1);
  s = toh_type(TB_DTYPE_F32, 1, (const int64_t[]){1});
  assert_int_equal(toh_infer(&t, in, out), TB_ERR_MODEL);
  TB_ASSERT_CONTAINS(tb_last_error(), "the body takes 2 inputs, expected 3");
  toh_teardown(&t);
}

int main(void) {
  tbt_clear_env();
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_loop_stops_on_condition), cmocka_unit_test(test_loop_stops_on_trip_count),
      cmocka_unit_test(test_loop_zero_iterations),    cmocka_unit_test(test_loop_errors),
      cmocka_unit_test(test_loop_infer),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
