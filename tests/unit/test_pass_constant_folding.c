/* constant_folding: nodes whose inputs are all constants run once at prepare time with the reference
 * kernel (Add, Mul, a Constant node, Relu), Shape of a static shape becomes a constant, while nodes on the
 * graph input stay; a result over the 64 MiB cap is left to run time. Outputs are bit-identical (the same
 * reference kernels compute the same bits). */
#include "pass_test.h"

static void graph(tb_graph *g) {
  int64_t dims[2] = {2, 3}, three = 3;
  tbt_input(g, "X", TB_DTYPE_F32, 2, dims, NULL);
  const float a[3] = {1, 2, 3}, b[3] = {0.5f, 0.25f, -1}, c[3] = {4, -5, 6};
  tbt_const_f32(g, "A", 1, &three, a);
  tbt_const_f32(g, "B", 1, &three, b);
  pt_const_scalar(g, "two", 2.0f);
  tbt_node(g, "Add", "add_ab", "A,B", "k");
  tbt_node(g, "Mul", "mul2", "k,two", "k2");
  tbt_node(g, "Add", "add_x", "X,k2", "y");
  tbt_node(g, "Shape", "shape", "X", "sh");
  int cn = tbt_node(g, "Constant", "const", "", "cst");
  void *bytes;
  tb_ir_tensor *t = tb_graph_new_tensor(g, "cst", TB_DTYPE_F32, 1, &three, &bytes);
  memcpy(bytes, c, sizeof c);
  pt_attr(g, cn, "value", TB_ATTR_TENSOR)->t = t;
  tbt_node(g, "Relu", "relu", "cst", "ncst");
  tbt_node(g, "Sub", "sub", "y,ncst", "y1");
  tbt_node(g, "Reshape", "reshape", "y1,sh", "Y");
  tbt_output(g, "Y");
}

static void test_folds(void **state) {
  (void)state;
  pt_pair p = pt_build(13, graph);
  pt_assert_ops(p.after, "before:", "Add,Mul,Add,Shape,Constant,Relu,Sub,Reshape");
  tb_pass_stats st = pt_run_pass(p.after, "constant_folding");
  pt_assert_ops(p.after, "after:", "Add,Sub,Reshape");
  assert_int_equal(st.nodes_removed, 5);
  TB_ASSERT_CONTAINS(st.summary, "1 Shape");
  /* The folded values are constants with the computed data: k2 = (A + B) * 2. */
  int k2 = tb_graph_find(p.after, "k2");
  assert_true(k2 >= 0);
  const tb_ir_tensor *c = p.after->values[k2].constant;
  assert_non_null(c);
  const float *v = c->data;
  assert_true(v[0] == 3.0f && v[1] == 4.5f && v[2] == 4.0f);
  int sh = tb_graph_find(p.after, "sh");
  assert_non_null(p.after->values[sh].constant);
  assert_int_equal(tb_ir_tensor_int(p.after->values[sh].constant, 1), 3);
  pt_compare(p.before, p.after, 7, 0.0);
  pt_free(&p);
}

/* Shape of a value with an unknown dim is not folded; a node reading a graph input never is. */
static void dynamic(tb_graph *g) {
  int64_t dims[2] = {-1, 3};
  const char *sym[2] = {"batch", NULL};
  tbt_input(g, "X", TB_DTYPE_F32, 2, dims, sym);
  tbt_node(g, "Shape", "shape", "X", "sh");
  tbt_node(g, "Reshape", "reshape", "X,sh", "Y");
  tbt_output(g, "Y");
}

static void test_dynamic_shape_kept(void **state) {
  (void)state;
  tb_ir_model *m;
  tb_graph *g = pt_ready_graph(13, dynamic, &m);
  tb_pass_stats st = pt_run_pass(g, "constant_folding");
  pt_assert_ops(g, "after:", "Shape,Reshape");
  assert_int_equal(st.changed, 0);
  tb_ir_model_destroy(m);
}

/* Expand of a scalar to 4096 x 4097 floats (over 64 MiB) stays for run time, while the same Expand to
 * [2, 3] and the ReduceSum after it fold. */
static void huge(tb_graph *g) {
  int64_t one = 1, two = 2;
  tbt_input(g, "X", TB_DTYPE_F32, 1, &one, NULL);
  pt_const_scalar(g, "s", 1.0f);
  const int64_t shape[2] = {4096, 4097};
  tbt_const_i64(g, "shape", 1, &two, shape);
  tbt_node(g, "Expand", "expand", "s,shape", "big");
  int r = tbt_node(g, "ReduceSum", "sum", "big", "total");
  pt_attr_int(g, r, "keepdims", 0);
  tbt_node(g, "Add", "add", "X,total", "y");
  const int64_t small_shape[2] = {2, 3};
  tbt_const_i64(g, "small_shape", 1, &two, small_shape);
  tbt_node(g, "Expand", "expand_small", "s,small_shape", "small");
  int r2 = tbt_node(g, "ReduceSum", "sum_small", "small", "small_total");
  pt_attr_int(g, r2, "keepdims", 0);
  tbt_node(g, "Add", "add_small", "y,small_total", "Y");
  tbt_output(g, "Y");
}

static void test_size_cap(void **state) {
  (void)state;
  tb_ir_model *m;
  tb_graph *g = pt_ready_graph(13, huge, &m);
  tb_pass_stats st = pt_run_pass(g, "constant_folding");
  pt_assert_ops(g, "after:", "Expand,ReduceSum,Add,Add");
  assert_int_equal(st.changed, 2);
  int total = tb_graph_find(g, "small_total");
  assert_non_null(g->values[total].constant);
  assert_true(tb_ir_tensor_double(g->values[total].constant, 0) == 6.0);
  tb_ir_model_destroy(m);
}

/* A graph input with an initializer is a default the caller may replace: nodes reading it are not
 * folded (the run below passes other values for D). */
static void default_input(tb_graph *g) {
  int64_t dims[2] = {2, 3}, three = 3;
  tbt_input(g, "X", TB_DTYPE_F32, 2, dims, NULL);
  const float a[3] = {1, 2, 3};
  tbt_const_f32(g, "A", 1, &three, a);
  int d = tbt_const_f32(g, "D", 1, &three, a);
  g->values[d].is_input = true;
  g->inputs = tbt_append(g, g->inputs, g->n_inputs++, d);
  tbt_node(g, "Add", "add_da", "D,A", "k");
  tbt_node(g, "Add", "add_x", "X,k", "Y");
  tbt_output(g, "Y");
}

static void test_default_input_kept(void **state) {
  (void)state;
  pt_assert_kept(13, default_input, "constant_folding", "Add,Add", 8);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test_setup(test_folds, tbt_setup_clean_env),
      cmocka_unit_test_setup(test_dynamic_shape_kept, tbt_setup_clean_env),
      cmocka_unit_test_setup(test_size_cap, tbt_setup_clean_env),
      cmocka_unit_test_setup(test_default_input_kept, tbt_setup_clean_env),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
