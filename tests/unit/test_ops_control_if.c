/* If: inference merges the branches' output types (unknown where they differ, an error where dtypes
 * disagree, unsupported for sequences), and the kernel runs the chosen branch through run_subgraph and
 * makes outputs of that branch's shape. */
#include "test_ops_control_util.h"

static const ct_port F32_3 = {TB_DTYPE_F32, 1, {3}, TB_VALUE_TENSOR}, F32_2 = {TB_DTYPE_F32, 1, {2}, TB_VALUE_TENSOR};

/* An If node whose branches output then_out / else_out. */
static void setup_if(toh *t, const ct_port *then_out, const ct_port *else_out, size_t n_out) {
  toh_begin(t, NULL);
  tb_graph *then_g = ct_body(t, "then", 0, NULL, 1, then_out);
  tb_graph *else_g = ct_body(t, "else", 0, NULL, 1, else_out);
  tb_attr attrs[] = {TOH_GRAPH("then_branch", then_g), TOH_GRAPH("else_branch", else_g)};
  toh_add(t, "If", 13, 1, 0, n_out, 0, attrs, 2);
  t->run_subgraph = ct_run_subgraph;
}

static tb_status infer_if(toh *t, tb_value_type *out) {
  tb_value_type cond = toh_type(TB_DTYPE_BOOL, 0, NULL);
  const tb_value_type *in[1] = {&cond};
  return toh_infer(t, in, out);
}

static void test_if_infer_merges_branches(void **state) {
  (void)state;
  toh t;
  ct_port a = {TB_DTYPE_F32, 2, {2, 3}, 0}, b = {TB_DTYPE_F32, 2, {2, 4}, 0};
  setup_if(&t, &a, &b, 1);
  tb_value_type out[1];
  TB_ASSERT_OK(infer_if(&t, out));
  toh_assert_type(&out[0], TB_DTYPE_F32, 2, (const int64_t[]){2, -1}); /* the dim that differs is unknown */
  toh_teardown(&t);

  setup_if(&t, &F32_3, &(ct_port){TB_DTYPE_F32, 2, {1, 3}, 0}, 1);
  TB_ASSERT_OK(infer_if(&t, out));
  assert_true(out[0].has_dtype);
  assert_false(out[0].has_shape); /* ranks differ: shape unknown until the branch runs */
  toh_teardown(&t);

  setup_if(&t, &F32_3, &F32_3, 1);
  TB_ASSERT_OK(infer_if(&t, out));
  toh_assert_type(&out[0], TB_DTYPE_F32, 1, (const int64_t[]){3});
  toh_teardown(&t);
}

static void test_if_infer_errors(void **state) {
  (void)state;
  toh t;
  tb_value_type out[2];
  setup_if(&t, &F32_3, &(ct_port){TB_DTYPE_I64, 1, {3}, 0}, 1);
  assert_int_equal(infer_if(&t, out), TB_ERR_MODEL);
  TB_ASSERT_CONTAINS(tb_last_error(), "node 'n0' (If): output 0 is f32 on one path and i64 on the other");
  toh_teardown(&t);

  setup_if(&t, &F32_3, &(ct_port){TB_DTYPE_F32, 1, {3}, TB_VALUE_SEQUENCE}, 1);
  assert_int_equal(infer_if(&t, out), TB_ERR_UNSUPPORTED);
  TB_ASSERT_CONTAINS(tb_last_error(), "else_branch output 'o0' is a sequence; only tensors are supported");
  toh_teardown(&t);

  setup_if(&t, &F32_3, &F32_3, 2);
  assert_int_equal(infer_if(&t, out), TB_ERR_MODEL);
  TB_ASSERT_CONTAINS(tb_last_error(), "the node has 2 outputs but its branches have 1");
  toh_teardown(&t);

  toh_begin(&t, NULL);
  tb_attr only_then[] = {TOH_GRAPH("then_branch", ct_body(&t, "then", 0, NULL, 1, &F32_3))};
  toh_add(&t, "If", 13, 1, 0, 1, 0, only_then, 1);
  assert_int_equal(infer_if(&t, out), TB_ERR_MODEL);
  TB_ASSERT_CONTAINS(tb_last_error(), "the graph attribute 'else_branch' is missing");
  tb_value_type cond = toh_type(TB_DTYPE_F32, 0, NULL);
  const tb_value_type *in[1] = {&cond};
  assert_int_equal(toh_infer(&t, in, out), TB_ERR_UNSUPPORTED); /* the condition must be bool */
  TB_ASSERT_CONTAINS(tb_last_error(), "input 0 has element type f32; supported: bool");
  toh_teardown(&t);
}

static void run_if(bool cond, tb_tensor **out) {
  toh t;
  setup_if(&t, &F32_3, &F32_2, 1);
  uint8_t c = cond;
  toh_in in[1] = {{TB_DTYPE_BOOL, 1, {1}, &c}};
  ct_calls = 0;
  TB_ASSERT_OK(toh_run(&t, in, out));
  assert_int_equal(ct_calls, 1);
  toh_teardown(&t);
}

static void test_if_runs_the_chosen_branch(void **state) {
  (void)state;
  tb_tensor *out[1];
  run_if(true, out);
  rt_assert_f32(out[0], 1, (const int64_t[]){3}, (const double[]){1, 2, 3});
  toh_free_outs(out, 1);
  run_if(false, out);
  rt_assert_f32(out[0], 1, (const int64_t[]){2}, (const double[]){5, 4});
  toh_free_outs(out, 1);
}

static void test_if_kernel_errors(void **state) {
  (void)state;
  toh t;
  setup_if(&t, &F32_3, &F32_2, 1);
  uint8_t two[2] = {1, 0};
  toh_in in[1] = {{TB_DTYPE_BOOL, 1, {2}, two}};
  tb_tensor *out[1];
  assert_int_equal(toh_run(&t, in, out), TB_ERR_MODEL);
  TB_ASSERT_CONTAINS(tb_last_error(), "the condition must have one element, it has 2");
  t.run_subgraph = NULL;
  in[0].shape[0] = 1;
  assert_int_equal(toh_run(&t, in, out), TB_ERR_INTERNAL);
  TB_ASSERT_CONTAINS(tb_last_error(), "no subgraph runner");
  assert_null(out[0]);
  toh_teardown(&t);
}

/* The executor preallocates outputs from the declared (merged) types; a branch that gives another shape
 * is the model's fault, said with both shapes. */
static void test_if_branch_disagrees_with_declared_type(void **state) {
  (void)state;
  toh t;
  setup_if(&t, &F32_3, &F32_2, 1);
  uint8_t c = 1;
  tb_tensor *cond = NULL, *pre = NULL;
  TB_ASSERT_OK(tb_tensor_create(t.cpu, TB_DTYPE_BOOL, 1, (const int64_t[]){1}, &cond));
  TB_ASSERT_OK(tb_tensor_copy_from_host(cond, &c, 1));
  TB_ASSERT_OK(tb_tensor_create(t.cpu, TB_DTYPE_F32, 1, (const int64_t[]){4}, &pre));
  tb_tensor *outs[1] = {pre};
  tb_tensor *ins[1] = {cond};
  tb_kernel_ctx ctx = {t.graph, toh_node(&t), 1, ins, 1, outs, t.cpu, ct_run_subgraph, NULL, 1, NULL, NULL, NULL, NULL, NULL, 0, NULL, 0, 0, 0, NULL};
  (void)tbt_kernel_bind(&ctx, t.graph, toh_node(&t), NULL);
  const tb_kernel *k = tbt_kernel_find(t.graph, toh_node(&t), NULL, 0, 0);
  assert_non_null(k);
  assert_int_equal(k->run(&ctx), TB_ERR_MODEL);
  TB_ASSERT_CONTAINS(tb_last_error(), "the body gave output 0 as f32 [3] but the model declares it f32 [4]");
  tb_tensor_destroy(pre);
  tb_tensor_destroy(cond);
  toh_teardown(&t);
}

int main(void) {
  tbt_clear_env();
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_if_infer_merges_branches),
      cmocka_unit_test(test_if_infer_errors),
      cmocka_unit_test(test_if_runs_the_chosen_branch),
      cmocka_unit_test(test_if_kernel_errors),
      cmocka_unit_test(test_if_branch_disagrees_with_declared_type),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
