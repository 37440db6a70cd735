/* pattern_gelu: the exact GELU chain (Div by sqrt(2), Erf, Add 1, Mul x, Mul 0.5) and the tanh
 * approximation (Pow 3, Mul 0.044715, Add x, Mul sqrt(2/pi), Tanh, Add 1, then (x * 0.5) * .) become
 * tb::Gelu with approximate "none" / "tanh". Equal within 1e-5 relative (tb::Gelu computes in double and
 * rounds once; the chain rounds each step to float). A chain whose Erf output is also read elsewhere stays. */
#include "pass_test.h"

static void exact(tb_graph *g) {
  int64_t x[2] = {3, 7};
  tbt_input(g, "X", TB_DTYPE_F32, 2, x, NULL);
  pt_const_scalar(g, "sqrt2", 1.4142135f);
  pt_const_scalar(g, "one", 1.0f);
  pt_const_scalar(g, "half", 0.5f);
  tbt_node(g, "Div", "div", "X,sqrt2", "u");
  tbt_node(g, "Erf", "erf", "u", "e");
  tbt_node(g, "Add", "add", "e,one", "a");
  tbt_node(g, "Mul", "mul_x", "X,a", "m");
  tbt_node(g, "Mul", "mul_half", "m,half", "Y");
  tbt_output(g, "Y");
}

static void approx(tb_graph *g) {
  int64_t x[2] = {3, 7};
  tbt_input(g, "X", TB_DTYPE_F32, 2, x, NULL);
  pt_const_scalar(g, "three", 3.0f);
  pt_const_scalar(g, "c", 0.044715f);
  pt_const_scalar(g, "k", 0.7978845608f);
  pt_const_scalar(g, "one", 1.0f);
  pt_const_scalar(g, "half", 0.5f);
  tbt_node(g, "Pow", "cube", "X,three", "x3");
  tbt_node(g, "Mul", "mul_c", "x3,c", "cx3");
  tbt_node(g, "Add", "add_x", "X,cx3", "w");
  tbt_node(g, "Mul", "mul_k", "w,k", "u");
  tbt_node(g, "Tanh", "tanh", "u", "t");
  tbt_node(g, "Add", "add_one", "t,one", "a");
  tbt_node(g, "Mul", "half_x", "X,half", "h");
  tbt_node(g, "Mul", "out", "h,a", "Y");
  tbt_output(g, "Y");
}

static void recognised(void (*build)(tb_graph *), const char *before, const char *mode, size_t absorbed) {
  pt_pair p = pt_build(13, build);
  pt_assert_ops(p.after, "before:", before);
  tb_pass_stats st = pt_run_pass(p.after, "pattern_gelu");
  pt_assert_ops(p.after, "after:", "tb::Gelu");
  assert_int_equal(st.changed, 1);
  assert_int_equal(st.nodes_fused, absorbed);
  const char *s = NULL;
  TB_ASSERT_OK(tb_attr_string(p.after, &p.after->nodes[0], "approximate", NULL, &s));
  assert_string_equal(s, mode);
  pt_compare(p.before, p.after, 70, 1e-5);
  pt_free(&p);
}

static void test_exact(void **state) {
  (void)state;
  recognised(exact, "Div,Erf,Add,Mul,Mul", "none", 4);
}

static void test_tanh(void **state) {
  (void)state;
  recognised(approx, "Pow,Mul,Add,Mul,Tanh,Add,Mul,Mul", "tanh", 7);
}

static void erf_shared(tb_graph *g) {
  exact(g);
  tbt_output(g, "e");
}

static void test_shared_kept(void **state) {
  (void)state;
  pt_assert_kept(13, erf_shared, "pattern_gelu", "Div,Erf,Add,Mul,Mul", PT_NO_COMPARE);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test_setup(test_exact, tbt_setup_clean_env),
      cmocka_unit_test_setup(test_tanh, tbt_setup_clean_env),
      cmocka_unit_test_setup(test_shared_kept, tbt_setup_clean_env),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
