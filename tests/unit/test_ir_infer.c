/* Type and shape inference over graphs (declared vs inferred conflicts, bound symbolic dims, Constant
 * values feeding shape inputs), the infer helpers of src/ops/op_util.c, and subgraph captures. */
#include "ops/op.h"
#include "test_ir_util.h"

static tb_value_type shape_of(size_t ndim, const int64_t *dims) { return toh_type(TB_DTYPE_F32, ndim, dims); }

static void broadcast_rules(void **state) {
  (void)state;
  tb_ir_model *m = tbt_ir_model(13);
  tb_graph *g = tb_graph_new(m, NULL, "g");
  tbt_node(g, "Add", "add", "a,b", "c");
  tb_infer_ctx ctx = {.graph = g, .node = &g->nodes[0]};
  int64_t a_dims[3] = {4, 1, 3}, b_dims[2] = {5, 1};
  tb_value_type a = shape_of(3, a_dims), b = shape_of(2, b_dims), out;
  TB_ASSERT_OK(tb_infer_broadcast(&ctx, &a, &b, &out));
  assert_int_equal(out.ndim, 3);
  assert_int_equal(out.dims[0].value, 4);
  assert_int_equal(out.dims[1].value, 5);
  assert_int_equal(out.dims[2].value, 3);
  assert_int_equal(out.dtype, TB_DTYPE_F32);
  /* unknown dims: a symbol meets 1 -> the symbol; a symbol meets 7 -> 7; two different unknowns -> unknown */
  a.dims[0].value = -1;
  a.dims[0].symbol = 2;
  int64_t c_dims[3] = {1, 7, -1};
  tb_value_type c = shape_of(3, c_dims);
  TB_ASSERT_OK(tb_infer_broadcast(&ctx, &a, &c, &out));
  assert_int_equal(out.dims[0].value, -1);
  assert_int_equal(out.dims[0].symbol, 2);
  assert_int_equal(out.dims[1].value, 7);
  assert_int_equal(out.dims[2].value, 3);
  int64_t bad_dims[1] = {4};
  tb_value_type bad = shape_of(1, bad_dims);
  assert_int_equal(tb_infer_broadcast(&ctx, &a, &bad, &out), TB_ERR_MODEL);
  assert_string_equal(tb_last_error(), "node 'add' (Add): shapes [?, 1, 3] and [4] cannot broadcast (dimension 2: 3 vs 4)");
  tb_value_type unranked = a;
  unranked.has_shape = false;
  TB_ASSERT_OK(tb_infer_broadcast(&ctx, &unranked, &b, &out));
  assert_false(out.has_shape);
  tb_ir_model_destroy(m);
}

static void require_axis_error(void **state) {
  (void)state;
  tb_ir_model *m = tbt_ir_model(13);
  tb_graph *g = tb_graph_new(m, NULL, "g");
  tbt_node(g, "Softmax", "", "a,b", "c");
  int64_t dims[2] = {2, 3};
  tb_value_type a = shape_of(2, dims), untyped;
  memset(&untyped, 0, sizeof untyped);
  const tb_value_type *in[3] = {&a, &untyped, NULL};
  tb_infer_ctx ctx = {.graph = g, .node = &g->nodes[0], .n_inputs = 3, .in = in};
  TB_ASSERT_OK(tb_infer_require(&ctx, 0, TB_DTYPE_BIT(TB_DTYPE_F32) | TB_DTYPE_BIT(TB_DTYPE_F64)));
  TB_ASSERT_OK(tb_infer_require(&ctx, 0, 0));
  assert_int_equal(tb_infer_require(&ctx, 0, TB_DTYPE_BIT(TB_DTYPE_I64) | TB_DTYPE_BIT(TB_DTYPE_I32)), TB_ERR_UNSUPPORTED);
  assert_string_equal(tb_last_error(), "node #0 (Softmax): input 0 has element type f32; supported: i64, i32");
  assert_int_equal(tb_infer_require(&ctx, 1, 0), TB_ERR_MODEL);
  TB_ASSERT_CONTAINS(tb_last_error(), "input 1 has no known element type");
  assert_int_equal(tb_infer_require(&ctx, 2, 0), TB_ERR_MODEL);
  TB_ASSERT_CONTAINS(tb_last_error(), "input 2 is required but not given");
  assert_int_equal(tb_infer_require(&ctx, 5, 0), TB_ERR_MODEL);
  size_t axis;
  TB_ASSERT_OK(tb_infer_axis(&ctx, "axis", -1, 4, &axis));
  assert_int_equal(axis, 3);
  TB_ASSERT_OK(tb_infer_axis(&ctx, "axis", 0, 4, &axis));
  assert_int_equal(axis, 0);
  assert_int_equal(tb_infer_axis(&ctx, "attribute 'axis'", 4, 4, &axis), TB_ERR_MODEL);
  assert_string_equal(tb_last_error(), "node #0 (Softmax): attribute 'axis' 4 is out of range for rank 4 (valid: -4 to 3)");
  assert_int_equal(tb_infer_axis(&ctx, "axis", -5, 4, &axis), TB_ERR_MODEL);
  assert_int_equal(tb_infer_error(&ctx, TB_ERR_UNSUPPORTED, "mode '%s' is not supported", "cubic"), TB_ERR_UNSUPPORTED);
  assert_string_equal(tb_last_error(), "node #0 (Softmax): mode 'cubic' is not supported");
  tb_value_type copy;
  tb_infer_same(&a, &copy);
  assert_int_equal(copy.dims[1].value, 3);
  tb_ir_model_destroy(m);
}

static void ready(tb_graph *g) {
  TB_ASSERT_OK(tb_graph_sort(g));
  TB_ASSERT_OK(tb_graph_check(g));
}

static void graph_inference_and_conflicts(void **state) {
  (void)state;
  tb_ir_model *m = tbt_ir_model(13);
  tb_graph *g = tb_graph_new(m, NULL, "g");
  int64_t x_dims[2] = {-1, 4};
  const char *sym[2] = {"batch", NULL};
  tbt_input(g, "x", TB_DTYPE_F32, 2, x_dims, sym);
  /* Reshape's shape comes from a Constant node: inference sees its value */
  int64_t two = 2;
  void *data;
  tb_ir_tensor *shape = tb_graph_new_tensor(g, "shape_value", TB_DTYPE_I64, 1, &two, &data);
  int64_t target[2] = {-1, 2};
  memcpy(data, target, sizeof target);
  tb_attr value = {.name = "value", .type = TB_ATTR_TENSOR, .t = shape};
  int shape_out = tb_graph_value(g, "shape");
  tb_graph_add_node(g, "const", "Constant", "", NULL, 0, &shape_out, 1, &value, 1);
  tbt_node(g, "Relu", "relu", "x", "r");
  tbt_node(g, "Reshape", "reshape", "r,shape", "y");
  tbt_output(g, "y");
  ready(g);
  TB_ASSERT_OK(tb_graph_infer(g));
  const tb_value_type *r = &g->values[tb_graph_find(g, "r")].type;
  assert_int_equal(r->ndim, 2);
  assert_int_equal(r->dims[0].value, -1);
  assert_int_equal(r->dims[0].symbol, 0);
  assert_int_equal(r->dims[1].value, 4);
  const tb_value_type *y = &g->values[tb_graph_find(g, "y")].type;
  assert_true(y->has_shape);
  assert_int_equal(y->ndim, 2);
  assert_int_equal(y->dims[1].value, 2);
  /* binding batch = 3 makes every shape known */
  const char *names[1] = {"batch"};
  int64_t values[1] = {3};
  tb_dim_bindings b = {1, names, values};
  assert_int_equal(tb_dim_binding_find(g, &b, 0), 3);
  assert_int_equal(tb_dim_binding_find(g, &b, 5), -1);
  tb_graph_bind_dims(g, &b);
  TB_ASSERT_OK(tb_graph_infer(g));
  assert_int_equal(g->values[tb_graph_find(g, "r")].type.dims[0].value, 3);
  assert_int_equal(g->values[tb_graph_find(g, "y")].type.dims[0].value, 6);
  char buf[64];
  assert_string_equal(tb_value_type_dims_str(g, &g->values[tb_graph_find(g, "y")].type, buf, sizeof buf), "[6, 2]");
  /* a declared output type that contradicts the inferred one names the value */
  tb_ir_model_destroy(m);
  m = tbt_ir_model(13);
  g = tb_graph_new(m, NULL, "g");
  int64_t d[1] = {4}, wrong[1] = {5};
  tbt_input(g, "x", TB_DTYPE_F32, 1, d, NULL);
  tbt_node(g, "Relu", "relu", "x", "y");
  int yv = tbt_output(g, "y");
  tbt_type(g, yv, TB_DTYPE_F32, 1, wrong, NULL);
  ready(g);
  assert_int_equal(tb_graph_infer(g), TB_ERR_MODEL);
  assert_string_equal(tb_last_error(), "value 'y': declared shape [5] but node 'relu' (Relu) gives [4]");
  tbt_type(g, yv, TB_DTYPE_F16, 1, d, NULL);
  assert_int_equal(tb_graph_infer(g), TB_ERR_MODEL);
  assert_string_equal(tb_last_error(), "value 'y': declared element type f16 but node 'relu' (Relu) gives f32");
  tb_ir_model_destroy(m);
}

static void subgraph_captures(void **state) {
  (void)state;
  tb_ir_model *m = tbt_ir_model(13);
  tb_graph *g = tb_graph_new(m, NULL, "main");
  int64_t d = 2;
  tbt_input(g, "x", TB_DTYPE_F32, 1, &d, NULL);
  tbt_input(g, "cond", TB_DTYPE_BOOL, 0, NULL, NULL);
  /* then: an If nested in the branch, whose own branch reads x two levels up */
  tb_graph *then_g = tb_graph_new(m, g, "then");
  tb_graph *inner_then = tb_graph_new(m, then_g, "inner_then");
  tb_graph *inner_else = tb_graph_new(m, then_g, "inner_else");
  tbt_node(inner_then, "Relu", "deep", "x", "it_out");
  tbt_output(inner_then, "it_out");
  tbt_node(inner_else, "Neg", "deep_neg", "x", "ie_out");
  tbt_output(inner_else, "ie_out");
  tb_attr inner_attrs[2] = {{.name = "then_branch", .type = TB_ATTR_GRAPH, .g = inner_then},
                            {.name = "else_branch", .type = TB_ATTR_GRAPH, .g = inner_else}};
  int c1 = tb_graph_value(then_g, "cond"), o1 = tb_graph_value(then_g, "t_out");
  tb_graph_add_node(then_g, "inner_if", "If", "", &c1, 1, &o1, 1, inner_attrs, 2);
  tbt_output(then_g, "t_out");
  tb_graph *else_g = tb_graph_new(m, g, "else");
  tbt_node(else_g, "Neg", "e", "ghost", "e_out");
  tbt_output(else_g, "e_out");
  tb_attr attrs[2] = {{.name = "then_branch", .type = TB_ATTR_GRAPH, .g = then_g},
                      {.name = "else_branch", .type = TB_ATTR_GRAPH, .g = else_g}};
  int c0 = tb_graph_find(g, "cond"), o0 = tb_graph_value(g, "y");
  tb_graph_add_node(g, "if0", "If", "", &c0, 1, &o0, 1, attrs, 2);
  tbt_output(g, "y");
  TB_ASSERT_OK(tb_graph_sort(g));
  assert_int_equal(tb_graph_check(g), TB_ERR_MODEL);
  assert_string_equal(tb_last_error(),
                      "node 'e' (Neg): input 'ghost' is not defined (not a graph input, an initializer or a node's output, "
                      "nor an outer-scope value)");
  /* the then branch was checked before: captures resolved through the middle graph */
  assert_int_equal(then_g->values[tb_graph_find(then_g, "cond")].outer, tb_graph_find(g, "cond"));
  int mid_x = tb_graph_find(then_g, "x");
  assert_true(mid_x >= 0);
  assert_int_equal(then_g->values[mid_x].outer, tb_graph_find(g, "x"));
  assert_int_equal(inner_then->values[tb_graph_find(inner_then, "x")].outer, mid_x);
  /* define ghost in main: now the graph checks */
  tbt_node(g, "Relu", "ghost_maker", "x", "ghost");
  TB_ASSERT_OK(tb_graph_sort(g));
  assert_string_equal(g->nodes[0].name, "ghost_maker");
  TB_ASSERT_OK(tb_graph_check(g));
  assert_int_equal(else_g->values[tb_graph_find(else_g, "ghost")].outer, tb_graph_find(g, "ghost"));
  assert_non_null(else_g->nodes[0].def);
  /* compaction keeps values only subgraphs read */
  tb_graph_compact(g);
  assert_true(tb_graph_find(g, "ghost") >= 0);
  TB_ASSERT_OK(tb_graph_check(g));
  tb_ir_model_destroy(m);
}

static void arity_checked(void **state) {
  (void)state;
  tb_ir_model *m = tbt_ir_model(13);
  tb_graph *g = tb_graph_new(m, NULL, "g");
  int64_t d = 2;
  tbt_input(g, "x", TB_DTYPE_F32, 1, &d, NULL);
  tbt_node(g, "Add", "add", "x,x,x", "y");
  tbt_output(g, "y");
  assert_int_equal(tb_graph_check(g), TB_ERR_MODEL);
  assert_string_equal(tb_last_error(), "node 'add' (Add): 3 inputs given; 2 expected");
  g->nodes[0].n_inputs = 1;
  assert_int_equal(tb_graph_check(g), TB_ERR_MODEL);
  assert_string_equal(tb_last_error(), "node 'add' (Add): 1 input given; 2 expected");
  g->nodes[0].n_inputs = 2;
  g->nodes[0].n_outputs = 0;
  assert_int_equal(tb_graph_check(g), TB_ERR_MODEL);
  TB_ASSERT_CONTAINS(tb_last_error(), "node 'add' (Add): 0 outputs given; 1 expected");
  tb_ir_model_destroy(m);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(broadcast_rules),      cmocka_unit_test(require_axis_error),
      cmocka_unit_test(graph_inference_and_conflicts), cmocka_unit_test(subgraph_captures),
      cmocka_unit_test(arity_checked),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
