/* dead_node_removal: nodes whose outputs reach no graph output go, including chains of them; a node whose
 * only reader is a value captured by an If branch stays; dead nodes inside the branch go too. Outputs are
 * bit-identical. */
#include "pass_test.h"

static tb_graph *branch(tb_graph *g, const char *name, const char *op, const char *in, const char *out, bool with_dead) {
  tb_graph *b = tb_graph_new(g->model, g, name);
  assert_non_null(b);
  tbt_node(b, op, "", in, out);
  if (with_dead) tbt_node(b, "Sigmoid", "inner_dead", in, "unused_inner");
  int v = tbt_output(b, out);
  int64_t two = 2;
  tbt_type(b, v, TB_DTYPE_F32, 1, &two, NULL);
  return b;
}

static void graph(tb_graph *g) {
  int64_t two = 2;
  tbt_input(g, "X", TB_DTYPE_F32, 1, &two, NULL);
  tbt_const(g, "cond", TB_DTYPE_BOOL, 0, NULL, &(bool){true});
  tbt_node(g, "Sigmoid", "captured", "X", "cap");
  tbt_node(g, "Relu", "dead1", "X", "a");
  tbt_node(g, "Sigmoid", "dead2", "a", "b");
  tbt_node(g, "Relu", "dead3", "cap", "d");
  int n = tbt_node(g, "If", "if", "cond", "Y");
  pt_attr(g, n, "then_branch", TB_ATTR_GRAPH)->g = branch(g, "then", "Relu", "cap", "t_out", true);
  pt_attr(g, n, "else_branch", TB_ATTR_GRAPH)->g = branch(g, "else", "Relu", "X", "e_out", false);
  tbt_output(g, "Y");
}

static tb_graph *then_branch(tb_graph *g) {
  for (size_t i = 0; i < g->n_nodes; i++)
    if (strcmp(g->nodes[i].op_type, "If") == 0) return g->nodes[i].attrs[0].g;
  fail_msg("no If node");
  return NULL;
}

static void test_removes_dead(void **state) {
  (void)state;
  pt_pair p = pt_build(13, graph);
  pt_assert_ops(p.after, "before:", "Sigmoid,Relu,Sigmoid,Relu,If");
  pt_assert_ops(then_branch(p.after), "then:", "Relu,Sigmoid");
  tb_pass_stats st = pt_run_pass(p.after, "dead_node_removal");
  pt_assert_ops(p.after, "after:", "Sigmoid,If");
  pt_assert_ops(then_branch(p.after), "then:", "Relu");
  assert_int_equal(st.nodes_removed, 4);
  TB_ASSERT_CONTAINS(st.summary, "removed 4 nodes");
  pt_compare(p.before, p.after, 11, 0.0);
  pt_free(&p);
}

/* Nothing to remove: the pass reports 0 and leaves the graph as it was. */
static void live(tb_graph *g) {
  int64_t dims[2] = {2, 2};
  tbt_input(g, "X", TB_DTYPE_F32, 2, dims, NULL);
  tbt_node(g, "Relu", "r", "X", "a");
  tbt_node(g, "Sigmoid", "s", "a", "Y");
  tbt_output(g, "Y");
  tbt_output(g, "a");
}

static void test_nothing_dead(void **state) {
  (void)state;
  pt_assert_kept(13, live, "dead_node_removal", "Relu,Sigmoid", 12);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test_setup(test_removes_dead, tbt_setup_clean_env),
      cmocka_unit_test_setup(test_nothing_dead, tbt_setup_clean_env),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
