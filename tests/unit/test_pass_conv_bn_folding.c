/* conv_bn_folding: Conv (with or without bias) followed by an inference BatchNormalization becomes one
 * Conv with folded weights and bias. Equal within 1e-5 relative, not bit for bit: the normalization's
 * arithmetic moves into the weights (reassociated, computed in double, rounded once to float). A Conv whose
 * output is also read elsewhere is left alone. */
#include "pass_test.h"

static void bn_params(tb_graph *g, int64_t m) {
  pt_const_rand(g, "scale", 1, &m, 21, 0.5f, 1.5f);
  pt_const_rand(g, "bias", 1, &m, 22, -1.0f, 1.0f);
  pt_const_rand(g, "mean", 1, &m, 23, -0.5f, 0.5f);
  pt_const_rand(g, "var", 1, &m, 24, 0.1f, 2.0f);
}

static void conv_bn(tb_graph *g, bool with_bias) {
  int64_t x[4] = {1, 3, 6, 6}, w[4] = {4, 3, 3, 3}, m = 4;
  tbt_input(g, "X", TB_DTYPE_F32, 4, x, NULL);
  pt_const_rand(g, "W", 4, w, 20, -1.0f, 1.0f);
  if (with_bias) pt_const_rand(g, "B", 1, &m, 25, -1.0f, 1.0f);
  bn_params(g, m);
  int c = tbt_node(g, "Conv", "conv", with_bias ? "X,W,B" : "X,W", "y");
  const int64_t pads[4] = {1, 1, 1, 1};
  pt_attr_ints(g, c, "pads", 4, pads);
  int b = tbt_node(g, "BatchNormalization", "bn", "y,scale,bias,mean,var", "Y");
  pt_attr_float(g, b, "epsilon", 1e-3f);
  tbt_output(g, "Y");
}
static void with_bias(tb_graph *g) { conv_bn(g, true); }
static void without_bias(tb_graph *g) { conv_bn(g, false); }

static void check_folded(void (*build)(tb_graph *)) {
  pt_pair p = pt_build(13, build);
  pt_assert_ops(p.after, "before:", "Conv,BatchNormalization");
  tb_pass_stats st = pt_run_pass(p.after, "conv_bn_folding");
  pt_assert_ops(p.after, "after:", "Conv");
  assert_int_equal(st.nodes_fused, 1);
  TB_ASSERT_CONTAINS(st.summary, "folded 1 BatchNormalization into Conv");
  /* The Conv now has constant W' and B' and writes Y. */
  const tb_node *n = &p.after->nodes[0];
  assert_int_equal(n->n_inputs, 3);
  assert_non_null(p.after->values[n->inputs[1]].constant);
  assert_non_null(p.after->values[n->inputs[2]].constant);
  assert_string_equal(p.after->values[n->outputs[0]].name, "Y");
  pt_compare(p.before, p.after, 31, 1e-5); /* 1e-6 absolute near zero, where cancellation makes relative error meaningless */
  pt_free(&p);
}

static void test_folds_with_bias(void **state) {
  (void)state;
  check_folded(with_bias);
}

static void test_folds_without_bias(void **state) {
  (void)state;
  check_folded(without_bias);
}

/* The Conv's output is a graph output too: folding would change it, so nothing happens. */
static void shared(tb_graph *g) {
  conv_bn(g, true);
  tbt_output(g, "y");
}

static void test_shared_output_kept(void **state) {
  (void)state;
  pt_assert_kept(13, shared, "conv_bn_folding", "Conv,BatchNormalization", 32);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test_setup(test_folds_with_bias, tbt_setup_clean_env),
      cmocka_unit_test_setup(test_folds_without_bias, tbt_setup_clean_env),
      cmocka_unit_test_setup(test_shared_output_kept, tbt_setup_clean_env),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
