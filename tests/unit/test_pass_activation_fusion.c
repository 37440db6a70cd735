/* activation_fusion: Conv/Gemm/MatMul followed by an activation become tb::FusedConv / FusedGemm /
 * FusedMatMul; Conv + Add(residual) [+ activation] becomes FusedConv with the residual as input 3. Relu,
 * LeakyRelu, Clip and the residual add are bit-identical (the same base kernel, the same rounding); the
 * transcendental activations (Sigmoid, Tanh, HardSigmoid, HardSwish) are computed in double and rounded
 * once, so they agree within 1e-5 relative. A Conv whose output is also a graph output is not fused. */
#include "pass_test.h"

static void conv_input(tb_graph *g) {
  int64_t x[4] = {1, 2, 5, 5}, w[4] = {3, 2, 3, 3}, m = 3;
  tbt_input(g, "X", TB_DTYPE_F32, 4, x, NULL);
  pt_const_rand(g, "W", 4, w, 40, -1.0f, 1.0f);
  pt_const_rand(g, "B", 1, &m, 41, -0.5f, 0.5f);
  int c = tbt_node(g, "Conv", "conv", "X,W,B", "y");
  const int64_t pads[4] = {1, 1, 1, 1};
  pt_attr_ints(g, c, "pads", 4, pads);
}

static void conv_relu(tb_graph *g) {
  conv_input(g);
  tbt_node(g, "Relu", "relu", "y", "Y");
  tbt_output(g, "Y");
}

static void conv_residual_relu(tb_graph *g) {
  conv_input(g);
  int64_t r[4] = {1, 3, 5, 5};
  tbt_input(g, "R", TB_DTYPE_F32, 4, r, NULL);
  tbt_node(g, "Add", "add", "y,R", "z");
  tbt_node(g, "Relu", "relu", "z", "Y");
  tbt_output(g, "Y");
}

static void gemm_leaky(tb_graph *g) {
  int64_t a[2] = {4, 5}, b[2] = {5, 3}, c = 3;
  tbt_input(g, "A", TB_DTYPE_F32, 2, a, NULL);
  pt_const_rand(g, "Bw", 2, b, 42, -1.0f, 1.0f);
  pt_const_rand(g, "C", 1, &c, 43, -1.0f, 1.0f);
  tbt_node(g, "Gemm", "gemm", "A,Bw,C", "y");
  int l = tbt_node(g, "LeakyRelu", "leaky", "y", "Y");
  pt_attr_float(g, l, "alpha", 0.1f);
  tbt_output(g, "Y");
}

static void matmul_clip(tb_graph *g) {
  int64_t a[3] = {2, 4, 5}, b[2] = {5, 6};
  tbt_input(g, "A", TB_DTYPE_F32, 3, a, NULL);
  pt_const_rand(g, "Bw", 2, b, 44, -1.0f, 1.0f);
  pt_const_scalar(g, "lo", -0.5f);
  pt_const_scalar(g, "hi", 0.75f);
  tbt_node(g, "MatMul", "mm", "A,Bw", "y");
  tbt_node(g, "Clip", "clip", "y,lo,hi", "Y");
  tbt_output(g, "Y");
}

static void fuses_exactly(void (*build)(tb_graph *), const char *before, const char *after, size_t absorbed) {
  pt_pair p = pt_build(13, build);
  pt_assert_ops(p.after, "before:", before);
  tb_pass_stats st = pt_run_pass(p.after, "activation_fusion");
  pt_assert_ops(p.after, "after:", after);
  assert_int_equal(st.changed, 1);
  assert_int_equal(st.nodes_fused, absorbed);
  pt_compare(p.before, p.after, 50, 0.0);
  pt_free(&p);
}

static void test_conv_relu(void **state) {
  (void)state;
  fuses_exactly(conv_relu, "Conv,Relu", "tb::FusedConv", 1);
}

static void test_conv_residual_relu(void **state) {
  (void)state;
  fuses_exactly(conv_residual_relu, "Conv,Add,Relu", "tb::FusedConv", 2);
}

static void test_gemm_leaky_relu(void **state) {
  (void)state;
  fuses_exactly(gemm_leaky, "Gemm,LeakyRelu", "tb::FusedGemm", 1);
}

static void test_matmul_clip(void **state) {
  (void)state;
  fuses_exactly(matmul_clip, "MatMul,Clip", "tb::FusedMatMul", 1);
}

/* MatMul followed by each transcendental activation. */
static const char *act_name;
static void matmul_act(tb_graph *g) {
  int64_t a[2] = {3, 4}, b[2] = {4, 5};
  tbt_input(g, "A", TB_DTYPE_F32, 2, a, NULL);
  pt_const_rand(g, "Bw", 2, b, 45, -1.0f, 1.0f);
  tbt_node(g, "MatMul", "mm", "A,Bw", "y");
  tbt_node(g, act_name, "act", "y", "Y");
  tbt_output(g, "Y");
}

static void test_matmul_transcendental(void **state) {
  (void)state;
  const char *acts[] = {"Sigmoid", "Tanh", "HardSigmoid", "HardSwish"};
  for (size_t i = 0; i < 4; i++) {
    act_name = acts[i];
    pt_pair p = pt_build(14, matmul_act); /* HardSwish is opset 14 */
    tb_pass_stats st = pt_run_pass(p.after, "activation_fusion");
    pt_assert_ops(p.after, act_name, "tb::FusedMatMul");
    assert_int_equal(st.changed, 1);
    const char *s = NULL;
    TB_ASSERT_OK(tb_attr_string(p.after, &p.after->nodes[0], "activation", NULL, &s));
    assert_string_equal(s, act_name);
    pt_compare(p.before, p.after, 51, 1e-5);
    pt_free(&p);
  }
}

static void conv_relu_shared(tb_graph *g) {
  conv_relu(g);
  tbt_output(g, "y");
}

static void test_shared_not_fused(void **state) {
  (void)state;
  pt_assert_kept(13, conv_relu_shared, "activation_fusion", "Conv,Relu", PT_NO_COMPARE);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test_setup(test_conv_relu, tbt_setup_clean_env),
      cmocka_unit_test_setup(test_conv_residual_relu, tbt_setup_clean_env),
      cmocka_unit_test_setup(test_gemm_leaky_relu, tbt_setup_clean_env),
      cmocka_unit_test_setup(test_matmul_clip, tbt_setup_clean_env),
      cmocka_unit_test_setup(test_matmul_transcendental, tbt_setup_clean_env),
      cmocka_unit_test_setup(test_shared_not_fused, tbt_setup_clean_env),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
