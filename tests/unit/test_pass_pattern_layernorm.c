/* pattern_layernorm: the ReduceMean / Sub / Pow / ReduceMean / Add / Sqrt / Div / Mul / Add chain PyTorch
 * exports for layer norm before opset 17 becomes one LayerNormalization: tb::LayerNormalization for an
 * opset-13 model, the ONNX op for opset 17. Equal within 1e-5 relative (the LayerNormalization kernel
 * computes in double where the chain rounds each step to float). A chain whose variance is also a graph
 * output is left alone. */
#include "pass_test.h"

static bool square_by_mul;
static bool with_beta;

static void layernorm(tb_graph *g) {
  int64_t x[3] = {2, 3, 8}, c = 8;
  const int64_t axes[1] = {-1};
  tbt_input(g, "X", TB_DTYPE_F32, 3, x, NULL);
  pt_const_rand(g, "gamma", 1, &c, 60, 0.5f, 1.5f);
  pt_const_rand(g, "beta", 1, &c, 61, -0.5f, 0.5f);
  pt_const_scalar(g, "two", 2.0f);
  pt_const_scalar(g, "eps", 1e-5f);
  pt_attr_ints(g, tbt_node(g, "ReduceMean", "mean", "X", "m"), "axes", 1, axes);
  tbt_node(g, "Sub", "sub", "X,m", "d");
  if (square_by_mul) tbt_node(g, "Mul", "sq", "d,d", "sq");
  else tbt_node(g, "Pow", "sq", "d,two", "sq");
  pt_attr_ints(g, tbt_node(g, "ReduceMean", "var", "sq", "v"), "axes", 1, axes);
  tbt_node(g, "Add", "add_eps", "v,eps", "ve");
  tbt_node(g, "Sqrt", "sqrt", "ve", "s");
  tbt_node(g, "Div", "div", "d,s", "n");
  tbt_node(g, "Mul", "mul_gamma", "n,gamma", with_beta ? "gm" : "Y");
  if (with_beta) tbt_node(g, "Add", "add_beta", "gm,beta", "Y");
  tbt_output(g, "Y");
}

static void recognised(int opset, const char *before, const char *after) {
  pt_pair p = pt_build(opset, layernorm);
  pt_assert_ops(p.after, "before:", before);
  tb_pass_stats st = pt_run_pass(p.after, "pattern_layernorm");
  pt_assert_ops(p.after, "after:", after);
  assert_int_equal(st.changed, 1);
  const tb_node *n = &p.after->nodes[0];
  int64_t axis = 0;
  float eps = 0;
  TB_ASSERT_OK(tb_attr_int(p.after, n, "axis", 0, &axis));
  TB_ASSERT_OK(tb_attr_float(p.after, n, "epsilon", 0, &eps));
  assert_int_equal(axis, -1);
  assert_true(eps == 1e-5f);
  assert_int_equal(n->n_inputs, with_beta ? 3 : 2);
  pt_compare(p.before, p.after, 62, 1e-5);
  pt_free(&p);
}

static void test_opset13_pow_beta(void **state) {
  (void)state;
  square_by_mul = false;
  with_beta = true;
  recognised(13, "ReduceMean,Sub,Pow,ReduceMean,Add,Sqrt,Div,Mul,Add", "tb::LayerNormalization");
}

static void test_opset17_mul_no_beta(void **state) {
  (void)state;
  square_by_mul = true;
  with_beta = false;
  recognised(17, "ReduceMean,Sub,Mul,ReduceMean,Add,Sqrt,Div,Mul", "LayerNormalization");
}

static void variance_exposed(tb_graph *g) {
  square_by_mul = false;
  with_beta = true;
  layernorm(g);
  tbt_output(g, "v");
}

static void test_intermediate_output_kept(void **state) {
  (void)state;
  pt_assert_kept(13, variance_exposed, "pattern_layernorm", "ReduceMean,Sub,Pow,ReduceMean,Add,Sqrt,Div,Mul,Add", PT_NO_COMPARE);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test_setup(test_opset13_pow_beta, tbt_setup_clean_env),
      cmocka_unit_test_setup(test_opset17_mul_no_beta, tbt_setup_clean_env),
      cmocka_unit_test_setup(test_intermediate_output_kept, tbt_setup_clean_env),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
