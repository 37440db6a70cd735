/* The graph IR builder: models, symbols, opsets, values and the name index, nodes (copied), constant
 * tensors and their elements, typed attribute reads, subgraph ownership, and the deep copy. */
#include "test_ir_util.h"

static void model_symbols_and_opsets(void **state) {
  (void)state;
  tb_ir_model *m = tbt_ir_model(13);
  assert_int_equal(tb_ir_model_opset(m, ""), 13);
  assert_int_equal(tb_ir_model_opset(m, "ai.onnx"), 13);
  assert_int_equal(tb_ir_model_opset(m, NULL), 13);
  assert_int_equal(tb_ir_model_opset(m, "com.microsoft"), 0);
  assert_int_equal(tb_ir_model_opset(NULL, ""), 0);
  assert_int_equal(tb_ir_model_symbol(m, "batch"), 0);
  assert_int_equal(tb_ir_model_symbol(m, "seq"), 1);
  assert_int_equal(tb_ir_model_symbol(m, "batch"), 0);
  assert_int_equal(m->n_symbols, 2);
  assert_string_equal(m->symbols[1], "seq");
  void *block = malloc(100);
  assert_true(tb_ir_model_own(m, block));
  assert_int_equal(m->n_owned, 1);
  tb_ir_model_destroy(m);
}

static void values_and_name_index(void **state) {
  (void)state;
  tb_ir_model *m = tbt_ir_model(13);
  tb_graph *g = tb_graph_new(m, NULL, "main");
  assert_ptr_equal(m->graph, g);
  assert_string_equal(g->name, "main");
  assert_int_equal(tb_graph_find(g, "x"), -1);
  int x = tb_graph_value(g, "x");
  assert_int_equal(x, 0);
  assert_int_equal(tb_graph_value(g, "x"), 0);
  assert_int_equal(tb_graph_find(g, "x"), 0);
  assert_int_equal(g->values[x].producer, -1);
  assert_int_equal(g->values[x].outer, -1);
  assert_false(g->values[x].type.has_dtype);
  /* many values: the index grows and every name still resolves */
  char name[32];
  for (int i = 0; i < 1000; i++) {
    snprintf(name, sizeof name, "v%d", i);
    assert_int_equal(tb_graph_value(g, name), i + 1);
  }
  for (int i = 0; i < 1000; i += 37) {
    snprintf(name, sizeof name, "v%d", i);
    assert_int_equal(tb_graph_find(g, name), i + 1);
  }
  int a = tb_graph_new_value(g, "x");
  int b = tb_graph_new_value(g, "x");
  assert_string_equal(g->values[a].name, "x_1");
  assert_string_equal(g->values[b].name, "x_2");
  int c = tb_graph_new_value(g, "fresh");
  assert_string_equal(g->values[c].name, "fresh");
  tb_ir_model_destroy(m);
}

static void nodes_are_copied(void **state) {
  (void)state;
  tb_ir_model *m = tbt_ir_model(17);
  tb_graph *g = tb_graph_new(m, NULL, "main");
  int ins[2] = {tb_graph_value(g, "a"), tb_graph_value(g, "b")};
  int outs[1] = {tb_graph_value(g, "c")};
  char opname[8] = "Add", nodename[8] = "add0";
  int64_t perm[3] = {2, 0, 1};
  tb_attr attr = {.name = "perm", .type = TB_ATTR_INTS, .ints = perm, .count = 3};
  int n = tb_graph_add_node(g, nodename, opname, "ai.onnx", ins, 2, outs, 1, &attr, 1);
  assert_int_equal(n, 0);
  ins[0] = 99;
  perm[0] = 7;
  strcpy(opname, "Sub");
  strcpy(nodename, "zzz");
  const tb_node *node = &g->nodes[0];
  assert_string_equal(node->op_type, "Add");
  assert_string_equal(node->name, "add0");
  assert_string_equal(node->domain, "");
  assert_int_equal(node->opset, 17);
  assert_int_equal(node->inputs[0], 0);
  assert_int_equal(g->values[outs[0]].producer, 0);
  const int64_t *ints;
  size_t count;
  TB_ASSERT_OK(tb_attr_ints(g, node, "perm", &ints, &count));
  assert_int_equal(count, 3);
  assert_int_equal(ints[0], 2);
  assert_int_equal(ints[2], 1);
  tb_ir_model_destroy(m);
}

static void attributes_typed(void **state) {
  (void)state;
  tb_ir_model *m = tbt_ir_model(13);
  tb_graph *g = tb_graph_new(m, NULL, "main");
  float scales[2] = {0.5f, 2.0f};
  tb_attr attrs[4] = {
      {.name = "axis", .type = TB_ATTR_INT, .i = -1},
      {.name = "alpha", .type = TB_ATTR_FLOAT, .f = 0.25f},
      {.name = "mode", .type = TB_ATTR_STRING, .s = "nearest", .s_len = 7},
      {.name = "scales", .type = TB_ATTR_FLOATS, .floats = scales, .count = 2},
  };
  int out = tb_graph_value(g, "y");
  tb_graph_add_node(g, "r", "Resize", "", NULL, 0, &out, 1, attrs, 4);
  const tb_node *n = &g->nodes[0];
  int64_t i;
  float f;
  const char *s;
  const float *fl;
  size_t count;
  TB_ASSERT_OK(tb_attr_int(g, n, "axis", 0, &i));
  assert_int_equal(i, -1);
  TB_ASSERT_OK(tb_attr_int(g, n, "missing", 42, &i));
  assert_int_equal(i, 42);
  TB_ASSERT_OK(tb_attr_float(g, n, "alpha", 1.0f, &f));
  assert_true(f == 0.25f);
  TB_ASSERT_OK(tb_attr_string(g, n, "mode", "x", &s));
  assert_string_equal(s, "nearest");
  TB_ASSERT_OK(tb_attr_string(g, n, "coordinate", "half_pixel", &s));
  assert_string_equal(s, "half_pixel");
  TB_ASSERT_OK(tb_attr_floats(g, n, "scales", &fl, &count));
  assert_int_equal(count, 2);
  assert_true(fl[1] == 2.0f);
  TB_ASSERT_OK(tb_attr_floats(g, n, "none", &fl, &count));
  assert_null(fl);
  assert_int_equal(count, 0);
  assert_int_equal(tb_attr_int(g, n, "mode", 3, &i), TB_ERR_MODEL);
  TB_ASSERT_CONTAINS(tb_last_error(), "node 'r' (Resize): attribute 'mode' is of type string; int expected");
  assert_int_equal(i, 3);
  assert_int_equal(tb_attr_float(g, n, "axis", 0, &f), TB_ERR_MODEL);
  TB_ASSERT_CONTAINS(tb_last_error(), "attribute 'axis' is of type int; float expected");
  tb_graph *sub;
  TB_ASSERT_OK(tb_attr_graph(g, n, "then_branch", &sub));
  assert_null(sub);
  assert_null(tb_node_attr(n, "nope"));
  tb_ir_model_destroy(m);
}

static void constant_elements(void **state) {
  (void)state;
  tb_ir_model *m = tbt_ir_model(13);
  tb_graph *g = tb_graph_new(m, NULL, "main");
  int64_t dims[2] = {2, 3};
  void *data;
  tb_ir_tensor *t = tb_graph_new_tensor(g, "w", TB_DTYPE_I32, 2, dims, &data);
  assert_non_null(t);
  assert_int_equal(t->nbytes, 24);
  assert_int_equal(tb_ir_tensor_numel(t), 6);
  int32_t vals[6] = {1, -2, 3, -4, 5, 2147483647};
  memcpy(data, vals, sizeof vals);
  assert_int_equal(tb_ir_tensor_int(t, 1), -2);
  assert_int_equal(tb_ir_tensor_int(t, 5), 2147483647);
  assert_true(tb_ir_tensor_double(t, 3) == -4.0);
  assert_int_equal(tb_ir_tensor_int(t, 6), 0); /* out of range */
  assert_int_equal(tb_ir_tensor_int(t, -1), 0);
  uint16_t half = 0x3e00; /* 1.5 in f16 */
  int64_t one = 1;
  tb_ir_tensor *h = tb_graph_new_tensor(g, "h", TB_DTYPE_F16, 1, &one, &data);
  memcpy(data, &half, 2);
  assert_true(tb_ir_tensor_double(h, 0) == 1.5);
  assert_int_equal(tb_ir_tensor_int(h, 0), 1);
  tb_ir_tensor *s = tb_graph_new_tensor(g, "s", TB_DTYPE_F32, 0, NULL, &data);
  assert_int_equal(tb_ir_tensor_numel(s), 1);
  assert_int_equal(s->nbytes, 4);
  int64_t bad[1] = {-3};
  assert_null(tb_graph_new_tensor(g, "bad", TB_DTYPE_F32, 1, bad, &data));
  int64_t huge[2] = {INT64_MAX, INT64_MAX};
  assert_null(tb_graph_new_tensor(g, "huge", TB_DTYPE_F32, 2, huge, &data));
  tb_ir_model_destroy(m);
}

/* A graph with an If whose branches are subgraphs: destroyed with the graph (ASan finds leaks), and
 * copied deeply with the copy's subgraphs pointing at the copy. */
static tb_graph *graph_with_if(tb_ir_model *m) {
  tb_graph *g = tb_graph_new(m, NULL, "main");
  int64_t one = 1;
  tbt_input(g, "cond", TB_DTYPE_BOOL, 0, NULL, NULL);
  tbt_input(g, "x", TB_DTYPE_F32, 1, &one, NULL);
  tb_graph *then_g = tb_graph_new(m, g, "then");
  tb_graph *else_g = tb_graph_new(m, g, "else");
  tbt_node(then_g, "Relu", "r", "x", "t_out");
  tbt_output(then_g, "t_out");
  tbt_node(else_g, "Neg", "n", "x", "e_out");
  tbt_output(else_g, "e_out");
  tb_attr attrs[2] = {{.name = "then_branch", .type = TB_ATTR_GRAPH, .g = then_g},
                      {.name = "else_branch", .type = TB_ATTR_GRAPH, .g = else_g}};
  int in = tb_graph_value(g, "cond"), out = tb_graph_value(g, "y");
  tb_graph_add_node(g, "if0", "If", "", &in, 1, &out, 1, attrs, 2);
  tbt_output(g, "y");
  return g;
}

static void subgraphs_owned_and_cloned(void **state) {
  (void)state;
  tb_ir_model *m = tbt_ir_model(13);
  tb_graph *g = graph_with_if(m);
  tb_graph *copy = tb_graph_clone(g, NULL);
  assert_non_null(copy);
  assert_ptr_not_equal(copy, g);
  assert_ptr_equal(m->graph, g);
  assert_int_equal(copy->n_nodes, 1);
  assert_int_equal(copy->n_values, g->n_values);
  assert_int_equal(copy->n_inputs, 2);
  assert_int_equal(copy->n_outputs, 1);
  assert_ptr_not_equal(copy->values[0].name, g->values[0].name);
  assert_string_equal(copy->values[0].name, "cond");
  assert_int_equal(tb_graph_find(copy, "y"), tb_graph_find(g, "y"));
  tb_graph *then_copy, *then_orig;
  TB_ASSERT_OK(tb_attr_graph(copy, &copy->nodes[0], "then_branch", &then_copy));
  TB_ASSERT_OK(tb_attr_graph(g, &g->nodes[0], "then_branch", &then_orig));
  assert_ptr_not_equal(then_copy, then_orig);
  assert_ptr_equal(then_copy->parent, copy);
  assert_ptr_equal(then_orig->parent, g);
  assert_string_equal(then_copy->nodes[0].op_type, "Relu");
  /* changing the copy leaves the original as it was */
  copy->nodes[0].dead = true;
  copy->values[1].type.dims[0].value = 7;
  assert_false(g->nodes[0].dead);
  assert_int_equal(g->values[1].type.dims[0].value, 1);
  tb_graph_destroy(copy);
  assert_ptr_equal(m->graph, g);
  tb_ir_model_destroy(m);
}

static void labels(void **state) {
  (void)state;
  tb_ir_model *m = tbt_ir_model(13);
  tb_graph *g = tb_graph_new(m, NULL, "main");
  tbt_node(g, "Conv", "conv1", "x", "y");
  tbt_node(g, "Relu", "", "y", "z");
  char buf[64];
  assert_string_equal(tb_node_label(g, &g->nodes[0], buf, sizeof buf), "node 'conv1' (Conv)");
  assert_string_equal(tb_node_label(g, &g->nodes[1], buf, sizeof buf), "node #1 (Relu)");
  char tiny[8];
  assert_string_equal(tb_node_label(g, &g->nodes[0], tiny, sizeof tiny), "node 'c");
  tb_ir_model_destroy(m);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(model_symbols_and_opsets),  cmocka_unit_test(values_and_name_index),
      cmocka_unit_test(nodes_are_copied),          cmocka_unit_test(attributes_typed),
      cmocka_unit_test(constant_elements),         cmocka_unit_test(subgraphs_owned_and_cloned),
      cmocka_unit_test(labels),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
