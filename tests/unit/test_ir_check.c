/* Ordering and checking graphs: stable topological order, cycles named by a node inside them, order
 * across subgraph captures, unknown operators, undefined inputs, duplicate producers, compaction. */
#include "test_ir_util.h"

static tb_graph *new_graph(tb_ir_model **m) {
  *m = tbt_ir_model(13);
  return tb_graph_new(*m, NULL, "main");
}

static void sort_is_stable(void **state) {
  (void)state;
  tb_ir_model *m;
  tb_graph *g = new_graph(&m);
  int64_t d = 4;
  tbt_input(g, "x", TB_DTYPE_F32, 1, &d, NULL);
  tbt_node(g, "FooOp", "c", "p,q", "r");
  tbt_node(g, "FooOp", "b", "x", "q");
  tbt_node(g, "FooOp", "a", "x", "p");
  tbt_node(g, "FooOp", "z", "x", "s");
  tbt_node(g, "FooOp", "e", "r,s", "t");
  tbt_output(g, "t");
  TB_ASSERT_OK(tb_graph_sort(g));
  const char *want[] = {"b", "a", "c", "z", "e"};
  for (size_t i = 0; i < 5; i++) assert_string_equal(g->nodes[i].name, want[i]);
  assert_int_equal(g->values[tb_graph_find(g, "r")].producer, 2);
  assert_int_equal(g->values[tb_graph_find(g, "q")].producer, 0);
  /* sorting a sorted graph changes nothing */
  TB_ASSERT_OK(tb_graph_sort(g));
  for (size_t i = 0; i < 5; i++) assert_string_equal(g->nodes[i].name, want[i]);
  tb_ir_model_destroy(m);
}

static void cycle_names_a_node_in_it(void **state) {
  (void)state;
  tb_ir_model *m;
  tb_graph *g = new_graph(&m);
  int64_t d = 4;
  tbt_input(g, "x", TB_DTYPE_F32, 1, &d, NULL);
  tbt_node(g, "FooOp", "downstream", "v", "out");
  tbt_node(g, "FooOp", "start", "x", "u");
  tbt_node(g, "FooOp", "loop_a", "u,w", "v");
  tbt_node(g, "FooOp", "loop_b", "v", "w");
  tbt_output(g, "out");
  assert_int_equal(tb_graph_sort(g), TB_ERR_MODEL);
  const char *err = tb_last_error();
  TB_ASSERT_CONTAINS(err, "graph 'main': node 'loop_");
  TB_ASSERT_CONTAINS(err, "is part of a cycle");
  assert_null(strstr(err, "downstream"));
  assert_null(strstr(err, "start"));
  /* order untouched on failure */
  assert_string_equal(g->nodes[0].name, "downstream");
  tb_ir_model_destroy(m);
}

static void self_loop(void **state) {
  (void)state;
  tb_ir_model *m;
  tb_graph *g = new_graph(&m);
  tbt_node(g, "FooOp", "", "y", "y");
  assert_int_equal(tb_graph_sort(g), TB_ERR_MODEL);
  TB_ASSERT_CONTAINS(tb_last_error(), "node #0 (FooOp) is part of a cycle");
  tb_ir_model_destroy(m);
}

static void sort_orders_subgraph_captures(void **state) {
  (void)state;
  tb_ir_model *m;
  tb_graph *g = new_graph(&m);
  int64_t d = 2;
  tbt_input(g, "x", TB_DTYPE_F32, 1, &d, NULL);
  tbt_input(g, "cond", TB_DTYPE_BOOL, 0, NULL, NULL);
  tb_graph *body = tb_graph_new(m, g, "then");
  tbt_node(body, "Neg", "inner", "captured", "b_out");
  tbt_output(body, "b_out");
  tb_attr attr = {.name = "then_branch", .type = TB_ATTR_GRAPH, .g = body};
  int in = tb_graph_value(g, "cond"), out = tb_graph_value(g, "y");
  tb_graph_add_node(g, "if0", "If", "", &in, 1, &out, 1, &attr, 1);
  tbt_node(g, "FooOp", "producer", "x", "captured");
  tbt_output(g, "y");
  TB_ASSERT_OK(tb_graph_sort(g));
  assert_string_equal(g->nodes[0].name, "producer");
  assert_string_equal(g->nodes[1].name, "if0");
  tb_ir_model_destroy(m);
}

static void unknown_operator_message(void **state) {
  (void)state;
  tb_ir_model *m;
  tb_graph *g = new_graph(&m);
  int64_t d = 2;
  tbt_input(g, "x", TB_DTYPE_F32, 1, &d, NULL);
  tbt_node(g, "FooOp", "x", "x", "y");
  tbt_output(g, "y");
  assert_int_equal(tb_graph_check(g), TB_ERR_UNSUPPORTED);
  assert_string_equal(tb_last_error(),
                      "node 'x' (FooOp, domain '', opset 13): operator not supported; supported operators: run `tb ops`");
  g->nodes[0].name = "";
  int in = tb_graph_find(g, "x"), out = tb_graph_value(g, "z");
  tb_graph_add_node(g, "n", "Gadget", "com.example", &in, 1, &out, 1, NULL, 0);
  assert_int_equal(tb_graph_check(g), TB_ERR_UNSUPPORTED);
  TB_ASSERT_CONTAINS(tb_last_error(), "node #0 (FooOp, domain '', opset 13)");
  tb_ir_model_destroy(m);
}

static void undefined_input(void **state) {
  (void)state;
  tb_ir_model *m;
  tb_graph *g = new_graph(&m);
  int64_t d = 2;
  tbt_input(g, "x", TB_DTYPE_F32, 1, &d, NULL);
  tbt_node(g, "FooOp", "a", "x,ghost", "y");
  tbt_output(g, "y");
  assert_int_equal(tb_graph_check(g), TB_ERR_MODEL);
  assert_string_equal(tb_last_error(),
                      "node 'a' (FooOp): input 'ghost' is not defined (not a graph input, an initializer or a node's output)");
  tb_ir_model_destroy(m);
}

static void input_used_before_its_producer(void **state) {
  (void)state;
  tb_ir_model *m;
  tb_graph *g = new_graph(&m);
  int64_t d = 2;
  tbt_input(g, "x", TB_DTYPE_F32, 1, &d, NULL);
  tbt_node(g, "FooOp", "late_user", "t", "y");
  tbt_node(g, "FooOp", "maker", "x", "t");
  tbt_output(g, "y");
  assert_int_equal(tb_graph_check(g), TB_ERR_MODEL);
  TB_ASSERT_CONTAINS(tb_last_error(), "node 'late_user' (FooOp): input 't' is used before node 'maker' (FooOp) produces it");
  tb_ir_model_destroy(m);
}

static void duplicate_producers(void **state) {
  (void)state;
  tb_ir_model *m;
  tb_graph *g = new_graph(&m);
  int64_t d = 2;
  tbt_input(g, "x", TB_DTYPE_F32, 1, &d, NULL);
  tbt_node(g, "FooOp", "first", "x", "y");
  tbt_node(g, "FooOp", "second", "x", "y");
  tbt_output(g, "y");
  assert_int_equal(tb_graph_check(g), TB_ERR_MODEL);
  assert_string_equal(tb_last_error(), "node 'second' (FooOp): output 'y' is already produced by node 'first' (FooOp)");
  g->nodes[1].outputs[0] = tb_graph_find(g, "x");
  assert_int_equal(tb_graph_check(g), TB_ERR_MODEL);
  assert_string_equal(tb_last_error(), "node 'second' (FooOp): output 'x' is also a graph input");
  tb_ir_model_destroy(m);
}

static void output_not_produced(void **state) {
  (void)state;
  tb_ir_model *m;
  tb_graph *g = new_graph(&m);
  int64_t d = 2;
  tbt_input(g, "x", TB_DTYPE_F32, 1, &d, NULL);
  tbt_output(g, "nowhere");
  assert_int_equal(tb_graph_check(g), TB_ERR_MODEL);
  assert_string_equal(tb_last_error(), "graph 'main': output 'nowhere' is not produced by any node");
  tb_ir_model_destroy(m);
}

static void compact_drops_dead_and_unused(void **state) {
  (void)state;
  tb_ir_model *m;
  tb_graph *g = new_graph(&m);
  int64_t d = 2;
  float junk[2] = {1, 2};
  tbt_input(g, "x", TB_DTYPE_F32, 1, &d, NULL);
  tbt_const_f32(g, "junk", 1, &d, junk);
  tbt_node(g, "FooOp", "a", "x", "y");
  tbt_node(g, "FooOp", "b", "y", "z");
  tbt_node(g, "FooOp", "c", "y", "w");
  tbt_output(g, "w");
  g->nodes[1].dead = true;
  tb_graph_compact(g);
  assert_int_equal(g->n_nodes, 2);
  assert_string_equal(g->nodes[0].name, "a");
  assert_string_equal(g->nodes[1].name, "c");
  assert_int_equal(g->n_values, 3);
  assert_int_equal(tb_graph_find(g, "junk"), -1);
  assert_int_equal(tb_graph_find(g, "z"), -1);
  int y = tb_graph_find(g, "y"), w = tb_graph_find(g, "w");
  assert_true(y >= 0 && w >= 0);
  assert_int_equal(g->nodes[1].inputs[0], y);
  assert_int_equal(g->nodes[1].outputs[0], w);
  assert_int_equal(g->outputs[0], w);
  assert_int_equal(g->values[w].producer, 1);
  assert_int_equal(g->inputs[0], tb_graph_find(g, "x"));
  tb_ir_model_destroy(m);
}

static void compact_destroys_dead_subgraphs(void **state) {
  (void)state;
  tb_ir_model *m;
  tb_graph *g = new_graph(&m);
  tbt_input(g, "cond", TB_DTYPE_BOOL, 0, NULL, NULL);
  tb_graph *body = tb_graph_new(m, g, "then");
  tbt_node(body, "Neg", "inner", "cond", "b_out");
  tbt_output(body, "b_out");
  tb_attr attr = {.name = "then_branch", .type = TB_ATTR_GRAPH, .g = body};
  int in = tb_graph_value(g, "cond"), out = tb_graph_value(g, "y");
  tb_graph_add_node(g, "if0", "If", "", &in, 1, &out, 1, &attr, 1);
  g->nodes[0].dead = true;
  tb_graph_compact(g); /* the body is freed here: ASan reports a leak otherwise */
  assert_int_equal(g->n_nodes, 0);
  assert_int_equal(g->n_values, 1);
  tb_ir_model_destroy(m);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(sort_is_stable),
      cmocka_unit_test(cycle_names_a_node_in_it),
      cmocka_unit_test(self_loop),
      cmocka_unit_test(sort_orders_subgraph_captures),
      cmocka_unit_test(unknown_operator_message),
      cmocka_unit_test(undefined_input),
      cmocka_unit_test(input_used_before_its_producer),
      cmocka_unit_test(duplicate_producers),
      cmocka_unit_test(output_not_produced),
      cmocka_unit_test(compact_drops_dead_and_unused),
      cmocka_unit_test(compact_destroys_dead_subgraphs),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
