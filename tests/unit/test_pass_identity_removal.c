/* identity_removal: Identity and inference Dropout are bypassed; a graph output keeps its name (its
 * producer writes it); a Dropout whose mask is used, or in training mode, stays; an Identity from a graph
 * input to a graph output stays. Outputs are bit-identical before and after. */
#include "pass_test.h"

static void chain(tb_graph *g) {
  int64_t dims[2] = {2, 3};
  tbt_input(g, "X", TB_DTYPE_F32, 2, dims, NULL);
  tbt_node(g, "Identity", "id1", "X", "a");
  tbt_node(g, "Relu", "relu", "a", "b");
  int d = tbt_node(g, "Dropout", "drop", "b", "c");
  pt_attr_float(g, d, "ratio", 0.5f);
  tbt_node(g, "Identity", "id2", "c", "Y");
  tbt_output(g, "Y");
}

static void test_chain_bypassed(void **state) {
  (void)state;
  pt_pair p = pt_build(13, chain);
  pt_assert_ops(p.after, "before:", "Identity,Relu,Dropout,Identity");
  tb_pass_stats st = pt_run_pass(p.after, "identity_removal");
  pt_assert_ops(p.after, "after:", "Relu");
  assert_int_equal(st.nodes_removed, 3);
  TB_ASSERT_CONTAINS(st.summary, "removed 2 Identity and 1 Dropout");
  /* The graph output is still called Y and the Relu writes it. */
  assert_string_equal(p.after->values[p.after->outputs[0]].name, "Y");
  assert_string_equal(p.after->values[p.after->nodes[0].outputs[0]].name, "Y");
  pt_compare(p.before, p.after, 1, 0.0);
  pt_free(&p);
}

/* An Identity from a graph input straight to a graph output must stay (both names are the interface). */
static void passthrough(tb_graph *g) {
  int64_t dims[1] = {4};
  tbt_input(g, "X", TB_DTYPE_F32, 1, dims, NULL);
  tbt_node(g, "Identity", "id", "X", "Y");
  tbt_output(g, "Y");
}

static void test_input_to_output_kept(void **state) {
  (void)state;
  pt_assert_kept(13, passthrough, "identity_removal", "Identity", 2);
}

/* The Identity's input is also read elsewhere: renaming it would break the other reader, so it stays;
 * an inner Identity is still removed. */
static void shared(tb_graph *g) {
  int64_t dims[2] = {3, 2};
  tbt_input(g, "X", TB_DTYPE_F32, 2, dims, NULL);
  tbt_node(g, "Relu", "relu", "X", "b");
  tbt_node(g, "Identity", "id_out", "b", "Y");
  tbt_node(g, "Identity", "id_in", "b", "b2");
  tbt_node(g, "Sigmoid", "sig", "b2", "Z");
  tbt_output(g, "Y");
  tbt_output(g, "Z");
}

static void test_shared_input_kept(void **state) {
  (void)state;
  pt_pair p = pt_build(13, shared);
  pt_assert_ops(p.after, "before:", "Relu,Identity,Identity,Sigmoid");
  tb_pass_stats st = pt_run_pass(p.after, "identity_removal");
  pt_assert_ops(p.after, "after:", "Relu,Identity,Sigmoid");
  assert_int_equal(st.nodes_removed, 1);
  pt_compare(p.before, p.after, 3, 0.0);
  pt_free(&p);
}

/* Dropout whose mask is a graph output, and Dropout with training_mode = true: both stay. */
static void dropouts(tb_graph *g) {
  int64_t dims[2] = {2, 2};
  tbt_input(g, "X", TB_DTYPE_F32, 2, dims, NULL);
  tbt_node(g, "Dropout", "masked", "X", "a,mask");
  tbt_const(g, "train", TB_DTYPE_BOOL, 0, NULL, &(bool){true});
  tbt_node(g, "Dropout", "training", "a,,train", "Y");
  tbt_output(g, "Y");
  tbt_output(g, "mask");
}

static void test_dropout_kept(void **state) {
  (void)state;
  tb_ir_model *m = tbt_ir_model(13);
  tb_graph *g = tb_graph_new(m, NULL, "g");
  dropouts(g);
  TB_ASSERT_OK(tb_graph_sort(g));
  TB_ASSERT_OK(tb_graph_check(g)); /* inference refuses training mode; the pass must leave it alone */
  tb_pass_stats st;
  memset(&st, 0, sizeof st);
  TB_ASSERT_OK(pt_pass("identity_removal")->run(g, &st));
  pt_assert_ops(g, "after:", "Dropout,Dropout");
  assert_int_equal(st.changed, 0);
  tb_ir_model_destroy(m);
}

/* Inside an If branch: the branch's output keeps its name (the Relu writes it). */
static void in_branch(tb_graph *g) {
  int64_t two = 2;
  tbt_input(g, "X", TB_DTYPE_F32, 1, &two, NULL);
  tbt_const(g, "cond", TB_DTYPE_BOOL, 0, NULL, &(bool){false});
  tb_graph *branches[2];
  for (int k = 0; k < 2; k++) {
    tb_graph *b = branches[k] = tb_graph_new(g->model, g, k ? "else" : "then");
    tbt_node(b, k ? "Sigmoid" : "Relu", "", "X", "t");
    tbt_node(b, "Identity", "", "t", "out");
    int v = tbt_output(b, "out");
    tbt_type(b, v, TB_DTYPE_F32, 1, &two, NULL);
  }
  int n = tbt_node(g, "If", "if", "cond", "Y");
  pt_attr(g, n, "then_branch", TB_ATTR_GRAPH)->g = branches[0];
  pt_attr(g, n, "else_branch", TB_ATTR_GRAPH)->g = branches[1];
  tbt_output(g, "Y");
}

static void test_subgraph(void **state) {
  (void)state;
  pt_pair p = pt_build(13, in_branch);
  tb_graph *else_branch = p.after->nodes[0].attrs[1].g;
  pt_assert_ops(else_branch, "before:", "Sigmoid,Identity");
  tb_pass_stats st = pt_run_pass(p.after, "identity_removal");
  assert_int_equal(st.nodes_removed, 2);
  pt_assert_ops(else_branch, "after:", "Sigmoid");
  assert_string_equal(else_branch->values[else_branch->outputs[0]].name, "out");
  assert_string_equal(else_branch->values[else_branch->nodes[0].outputs[0]].name, "out");
  pt_compare(p.before, p.after, 4, 0.0);
  pt_free(&p);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test_setup(test_chain_bypassed, tbt_setup_clean_env),
      cmocka_unit_test_setup(test_input_to_output_kept, tbt_setup_clean_env),
      cmocka_unit_test_setup(test_shared_input_kept, tbt_setup_clean_env),
      cmocka_unit_test_setup(test_dropout_kept, tbt_setup_clean_env),
      cmocka_unit_test_setup(test_subgraph, tbt_setup_clean_env),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
