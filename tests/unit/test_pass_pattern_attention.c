/* pattern_attention: MatMul(Q, K^T), Div by sqrt(d), Add mask, Softmax(last axis), MatMul(., V) becomes
 * tb::Attention(Q, K^T, V, mask) (the Transpose of K stays in front of it); without the mask and with a
 * Mul scale it becomes tb::Attention(Q, K^T, V) with scale_divide 0. Equal within 1e-5 relative (the
 * fused softmax sums in double). A Softmax over another axis is not attention and stays. */
#include "pass_test.h"

static bool masked;
static int64_t softmax_axis;

static void attention(tb_graph *g) {
  int64_t q[3] = {2, 4, 8}, k[3] = {2, 6, 8}, mask[2] = {4, 6};
  const int64_t perm[3] = {0, 2, 1};
  tbt_input(g, "Q", TB_DTYPE_F32, 3, q, NULL);
  tbt_input(g, "K", TB_DTYPE_F32, 3, k, NULL);
  tbt_input(g, "V", TB_DTYPE_F32, 3, k, NULL);
  pt_const_rand(g, "mask", 2, mask, 80, -3.0f, 0.0f);
  pt_attr_ints(g, tbt_node(g, "Transpose", "kt", "K", "Kt"), "perm", 3, perm);
  tbt_node(g, "MatMul", "scores", "Q,Kt", "s");
  if (masked) {
    pt_const_scalar(g, "sqrt_d", 2.828427f);
    tbt_node(g, "Div", "scale", "s,sqrt_d", "s2");
    tbt_node(g, "Add", "add_mask", "s2,mask", "s3");
  } else {
    pt_const_scalar(g, "inv_sqrt_d", 0.35355338f);
    tbt_node(g, "Mul", "scale", "inv_sqrt_d,s", "s3");
  }
  pt_attr_int(g, tbt_node(g, "Softmax", "softmax", "s3", "p"), "axis", softmax_axis);
  tbt_node(g, "MatMul", "context", "p,V", "Y");
  tbt_output(g, "Y");
}

static void test_masked(void **state) {
  (void)state;
  masked = true;
  softmax_axis = -1;
  pt_pair p = pt_build(13, attention);
  pt_assert_ops(p.after, "before:", "Transpose,MatMul,Div,Add,Softmax,MatMul");
  tb_pass_stats st = pt_run_pass(p.after, "pattern_attention");
  pt_assert_ops(p.after, "after:", "Transpose,tb::Attention");
  assert_int_equal(st.changed, 1);
  assert_int_equal(st.nodes_fused, 4);
  const tb_node *n = &p.after->nodes[1];
  assert_int_equal(n->n_inputs, 4);
  int64_t divide = 0;
  TB_ASSERT_OK(tb_attr_int(p.after, n, "scale_divide", 0, &divide));
  assert_int_equal(divide, 1);
  pt_compare(p.before, p.after, 81, 1e-5);
  pt_free(&p);
}

static void test_unmasked_mul_scale(void **state) {
  (void)state;
  masked = false;
  softmax_axis = 2;
  pt_pair p = pt_build(13, attention);
  pt_assert_ops(p.after, "before:", "Transpose,MatMul,Mul,Softmax,MatMul");
  tb_pass_stats st = pt_run_pass(p.after, "pattern_attention");
  pt_assert_ops(p.after, "after:", "Transpose,tb::Attention");
  assert_int_equal(st.changed, 1);
  assert_int_equal(p.after->nodes[1].n_inputs, 3);
  pt_compare(p.before, p.after, 82, 1e-5);
  pt_free(&p);
}

static void test_other_axis_kept(void **state) {
  (void)state;
  masked = true;
  softmax_axis = 1;
  pt_assert_kept(13, attention, "pattern_attention", "Transpose,MatMul,Div,Add,Softmax,MatMul", PT_NO_COMPARE);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test_setup(test_masked, tbt_setup_clean_env),
      cmocka_unit_test_setup(test_unmasked_mul_scale, tbt_setup_clean_env),
      cmocka_unit_test_setup(test_other_axis_kept, tbt_setup_clean_env),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
