/* The executor on graphs built with the IR builder: outputs equal hand-computed values, the memory plan
 * made at the first run and again when the input shapes change, subgraphs with outer-scope values, and
 * errors that name the node. */
#include "model/params.h"
#include "test_kernel_util.h"
#include "core/convert_features.h"
#include "test_engine_util.h"

static tb_backend *cpu_backend(void) {
  tb_backend *b = NULL;
  TB_ASSERT_OK(tb_backend_create_kind(TB_BACKEND_CPU, 0, &b));
  return b;
}

static void ready(tb_graph *g) {
  TB_ASSERT_OK(tb_graph_sort(g));
  TB_ASSERT_OK(tb_graph_check(g));
  TB_ASSERT_OK(tb_graph_infer(g));
}

static void small_graph_values_and_replan(void **state) {
  (void)state;
  tb_ir_model *m = tbt_small_model();
  tb_graph *g = m->graph;
  ready(g);
  /* inference through the graph: out is [batch * 2], unknown until batch is known */
  const tb_value *out = &g->values[tb_graph_find(g, "out")];
  assert_true(out->type.has_dtype);
  assert_int_equal(out->type.dtype, TB_DTYPE_F32);
  const tb_value *mm = &g->values[tb_graph_find(g, "mm")];
  assert_int_equal(mm->type.ndim, 2);
  assert_int_equal(mm->type.dims[1].value, 2);
  tb_backend *cpu = cpu_backend();
  tb_exec *e = NULL;
  TB_ASSERT_OK(tb_graph_parse_params((tb_graph *)g)); /* what prepare does */
  TB_ASSERT_OK(tb_exec_create(g, cpu, 0, tb_convert_features(), 1, &e));
  assert_false(tb_exec_plan_static(e)); /* batch unknown */
  assert_int_equal(tb_exec_plan_count(e), 0);
  float x2[6] = {1, -2, 3, -4, 5, 0.5f}, want2[4];
  tbt_small_expected(x2, 2, want2);
  int64_t shape2[2] = {2, 3}, out2[1] = {4};
  tb_tensor *in = tbt_f32(cpu, 2, shape2, x2), *res = NULL;
  TB_ASSERT_OK(tb_exec_run(e, &in, &res));
  tbt_expect_f32(res, 1, out2, want2);
  tb_tensor_destroy(res);
  /* planned after the first run for [2, 3]: r (24 bytes) meets s (24) at Add, s meets mm (16) at MatMul;
   * r and mm share bytes: two 64-byte slots */
  assert_int_equal(tb_exec_plan_count(e), 1);
  assert_int_equal(tb_exec_planned_bytes(e), 128);
  TB_ASSERT_OK(tb_exec_run(e, &in, &res));
  tbt_expect_f32(res, 1, out2, want2);
  assert_int_equal(tb_exec_plan_count(e), 1);
  tb_tensor_destroy(res);
  tb_tensor_destroy(in);
  /* another batch size: runs, and is planned again */
  float x5[15], want5[10];
  for (int i = 0; i < 15; i++) x5[i] = (float)(i - 7) * 0.5f;
  tbt_small_expected(x5, 5, want5);
  int64_t shape5[2] = {5, 3}, out5[1] = {10};
  in = tbt_f32(cpu, 2, shape5, x5);
  TB_ASSERT_OK(tb_exec_run(e, &in, &res));
  tbt_expect_f32(res, 1, out5, want5);
  assert_int_equal(tb_exec_plan_count(e), 2);
  tb_tensor_destroy(res);
  TB_ASSERT_OK(tb_exec_run(e, &in, &res));
  tbt_expect_f32(res, 1, out5, want5);
  assert_int_equal(tb_exec_plan_count(e), 2);
  tb_tensor_destroy(res);
  tb_tensor_destroy(in);
  tb_exec_destroy(e);
  tb_backend_destroy(cpu);
  tb_ir_model_destroy(m);
}

static void static_plan_when_shapes_known(void **state) {
  (void)state;
  tb_ir_model *m = tbt_small_model();
  tb_graph *g = m->graph;
  g->values[tb_graph_find(g, "x")].type.dims[0].value = 4;
  ready(g);
  tb_backend *cpu = cpu_backend();
  tb_exec *e = NULL;
  TB_ASSERT_OK(tb_graph_parse_params((tb_graph *)g)); /* what prepare does */
  TB_ASSERT_OK(tb_exec_create(g, cpu, 0, tb_convert_features(), 1, &e));
  assert_true(tb_exec_plan_static(e));
  assert_int_equal(tb_exec_plan_count(e), 1);
  /* r [4,3] and s [4,3] overlap at Add, s and mm [4,2] at MatMul: 64 + 64 bytes (each 48 or 32, aligned) */
  assert_int_equal(tb_exec_planned_bytes(e), 128);
  float x[12], want[8];
  for (int i = 0; i < 12; i++) x[i] = (float)(i % 5) - 2.0f;
  tbt_small_expected(x, 4, want);
  int64_t shape[2] = {4, 3}, oshape[1] = {8};
  tb_tensor *in = tbt_f32(cpu, 2, shape, x), *res = NULL;
  TB_ASSERT_OK(tb_exec_run(e, &in, &res));
  tbt_expect_f32(res, 1, oshape, want);
  assert_int_equal(tb_exec_plan_count(e), 1);
  tb_tensor_destroy(res);
  tb_tensor_destroy(in);
  tb_exec_destroy(e);
  tb_backend_destroy(cpu);
  tb_ir_model_destroy(m);
}

/* out = If(cond, then: Relu(x) using the outer x, else: Neg(x)); also y = x + x used only inside. */
static void if_with_outer_values(void **state) {
  (void)state;
  tb_ir_model *m = tbt_ir_model(13);
  tb_graph *g = tb_graph_new(m, NULL, "main");
  int64_t d = 3;
  tbt_input(g, "x", TB_DTYPE_F32, 1, &d, NULL);
  tbt_input(g, "cond", TB_DTYPE_BOOL, 0, NULL, NULL);
  tbt_node(g, "Add", "double", "x,x", "xx");
  tb_graph *then_g = tb_graph_new(m, g, "then");
  tbt_node(then_g, "Relu", "t_relu", "xx", "t_out");
  tbt_output(then_g, "t_out");
  tb_graph *else_g = tb_graph_new(m, g, "else");
  tbt_node(else_g, "Neg", "e_neg", "xx", "e_out");
  tbt_output(else_g, "e_out");
  tb_attr attrs[2] = {{.name = "then_branch", .type = TB_ATTR_GRAPH, .g = then_g},
                      {.name = "else_branch", .type = TB_ATTR_GRAPH, .g = else_g}};
  int in = tb_graph_find(g, "cond"), out = tb_graph_value(g, "y");
  tb_graph_add_node(g, "if0", "If", "", &in, 1, &out, 1, attrs, 2);
  tbt_output(g, "y");
  ready(g);
  assert_int_equal(then_g->values[tb_graph_find(then_g, "xx")].outer, tb_graph_find(g, "xx"));
  tb_backend *cpu = cpu_backend();
  tb_exec *e = NULL;
  TB_ASSERT_OK(tb_graph_parse_params((tb_graph *)g)); /* what prepare does */
  TB_ASSERT_OK(tb_exec_create(g, cpu, 0, tb_convert_features(), 1, &e));
  float x[3] = {1, -2, 3};
  tb_tensor *inputs[2] = {tbt_f32(cpu, 1, &d, x), NULL}, *res = NULL;
  TB_ASSERT_OK(tb_tensor_create(cpu, TB_DTYPE_BOOL, 0, NULL, &inputs[1]));
  uint8_t yes = 1, no = 0;
  TB_ASSERT_OK(tb_tensor_copy_from_host(inputs[1], &yes, 1));
  TB_ASSERT_OK(tb_exec_run(e, inputs, &res));
  float want_then[3] = {2, 0, 6}, want_else[3] = {-2, 4, -6};
  tbt_expect_f32(res, 1, &d, want_then);
  tb_tensor_destroy(res);
  TB_ASSERT_OK(tb_tensor_copy_from_host(inputs[1], &no, 1));
  TB_ASSERT_OK(tb_exec_run(e, inputs, &res));
  tbt_expect_f32(res, 1, &d, want_else);
  tb_tensor_destroy(res);
  tb_tensor_destroy(inputs[0]);
  tb_tensor_destroy(inputs[1]);
  tb_exec_destroy(e);
  tb_backend_destroy(cpu);
  tb_ir_model_destroy(m);
}

/* An output that is also an input, and an output listed twice: each a tensor of its own. */
static void outputs_that_are_inputs(void **state) {
  (void)state;
  tb_ir_model *m = tbt_ir_model(13);
  tb_graph *g = tb_graph_new(m, NULL, "main");
  int64_t d = 2;
  tbt_input(g, "x", TB_DTYPE_F32, 1, &d, NULL);
  tbt_node(g, "Relu", "r", "x", "y");
  tbt_output(g, "x");
  tbt_output(g, "y");
  g->outputs = tbt_append(g, g->outputs, g->n_outputs++, tb_graph_find(g, "y"));
  ready(g);
  tb_backend *cpu = cpu_backend();
  tb_exec *e = NULL;
  TB_ASSERT_OK(tb_graph_parse_params((tb_graph *)g)); /* what prepare does */
  TB_ASSERT_OK(tb_exec_create(g, cpu, 0, tb_convert_features(), 1, &e));
  float x[2] = {-1, 4}, relu[2] = {0, 4};
  tb_tensor *in = tbt_f32(cpu, 1, &d, x), *res[3] = {NULL, NULL, NULL};
  TB_ASSERT_OK(tb_exec_run(e, &in, res));
  assert_ptr_not_equal(res[0], in);
  assert_ptr_not_equal(res[1], res[2]);
  tbt_expect_f32(res[0], 1, &d, x);
  tbt_expect_f32(res[1], 1, &d, relu);
  tbt_expect_f32(res[2], 1, &d, relu);
  for (int i = 0; i < 3; i++) tb_tensor_destroy(res[i]);
  tb_tensor_destroy(in);
  tb_exec_destroy(e);
  tb_backend_destroy(cpu);
  tb_ir_model_destroy(m);
}

static void kernel_error_names_node(void **state) {
  (void)state;
  tb_ir_model *m = tbt_ir_model(13);
  tb_graph *g = tb_graph_new(m, NULL, "main");
  int64_t d = 2;
  int x = tbt_input(g, "x", TB_DTYPE_F32, 1, &d, NULL);
  tbt_node(g, "Relu", "r", "x", "y");
  tbt_output(g, "y");
  ready(g);
  tb_backend *cpu = cpu_backend();
  tb_exec *e = NULL;
  TB_ASSERT_OK(tb_graph_parse_params((tb_graph *)g)); /* what prepare does */
  TB_ASSERT_OK(tb_exec_create(g, cpu, 0, tb_convert_features(), 1, &e));
  tb_kernel_ctx kc = {g, &g->nodes[0], 1, NULL, 1, NULL, cpu, NULL, NULL, 1, NULL, NULL, NULL, NULL, NULL, 0, NULL, 0, 0, 0, NULL};
  (void)tbt_kernel_bind(&kc, g, &g->nodes[0], NULL);
  tb_tensor *outs[1] = {NULL}, *made = NULL;
  kc.outputs = outs;
  int64_t shape[2] = {2, 2};
  TB_ASSERT_OK(tb_kernel_output(&kc, 0, TB_DTYPE_F32, 2, shape, &made));
  assert_ptr_equal(outs[0], made);
  assert_int_equal(tb_kernel_output(&kc, 0, TB_DTYPE_F32, 1, shape, &made), TB_ERR_INTERNAL);
  TB_ASSERT_CONTAINS(tb_last_error(), "node 'r' (Relu): output 0 was allocated as f32 [2, 2] but the kernel computed f32 [2]");
  assert_int_equal(tb_kernel_error(&kc, TB_ERR_MODEL, "bad %s", "thing"), TB_ERR_MODEL);
  assert_string_equal(tb_last_error(), "node 'r' (Relu): bad thing");
  tb_tensor_destroy(outs[0]);
  (void)x;
  tb_exec_destroy(e);
  tb_backend_destroy(cpu);
  tb_ir_model_destroy(m);
}

/* A node with many inputs (no fixed limit): Concat of x with itself 100 times. */
static void many_inputs(void **state) {
  (void)state;
  tb_ir_model *m = tbt_ir_model(13);
  tb_graph *g = tb_graph_new(m, NULL, "main");
  int64_t d = 2;
  int x = tbt_input(g, "x", TB_DTYPE_F32, 1, &d, NULL);
  int ins[100], out = tb_graph_value(g, "y");
  for (int i = 0; i < 100; i++) ins[i] = x;
  tb_attr axis = {.name = "axis", .type = TB_ATTR_INT, .i = 0};
  tb_graph_add_node(g, "cat", "Concat", "", ins, 100, &out, 1, &axis, 1);
  tbt_output(g, "y");
  ready(g);
  assert_int_equal(g->values[out].type.dims[0].value, 200);
  tb_backend *cpu = cpu_backend();
  tb_exec *e = NULL;
  TB_ASSERT_OK(tb_graph_parse_params((tb_graph *)g)); /* what prepare does */
  TB_ASSERT_OK(tb_exec_create(g, cpu, 0, tb_convert_features(), 1, &e));
  float xv[2] = {1.5f, -2}, want[200];
  for (int i = 0; i < 200; i++) want[i] = xv[i % 2];
  int64_t oshape[1] = {200};
  tb_tensor *in = tbt_f32(cpu, 1, &d, xv), *res = NULL;
  TB_ASSERT_OK(tb_exec_run(e, &in, &res));
  tbt_expect_f32(res, 1, oshape, want);
  tb_tensor_destroy(res);
  tb_tensor_destroy(in);
  tb_exec_destroy(e);
  tb_backend_destroy(cpu);
  tb_ir_model_destroy(m);
}

/* Concat's copies over a 2-thread pool, in pieces (a block of 3 channels of 100 x 100 floats is two 64 KB
 * pieces), along axis 1 (one block per input) and axis 2 (a block per input and channel). */
static void concat_on_the_pool(void **state) {
  (void)state;
  for (int axis = 1; axis <= 2; axis++) {
    tb_ir_model *m = tbt_ir_model(13);
    tb_graph *g = tb_graph_new(m, NULL, "main");
    int64_t parts[3] = {3, 5, 2}, dims[3][4];
    const char *names[3] = {"a", "b", "c"};
    int ins[3], out = tb_graph_value(g, "y");
    for (int i = 0; i < 3; i++) {
      int64_t d[4] = {1, 4, 100, 100};
      d[axis] = parts[i];
      memcpy(dims[i], d, sizeof d);
      ins[i] = tbt_input(g, names[i], TB_DTYPE_F32, 4, d, NULL);
    }
    tb_attr at = {.name = "axis", .type = TB_ATTR_INT, .i = axis};
    tb_graph_add_node(g, "cat", "Concat", "", ins, 3, &out, 1, &at, 1);
    tbt_output(g, "y");
    ready(g);
    tb_backend *cpu = cpu_backend();
    tb_exec *e = NULL;
    TB_ASSERT_OK(tb_graph_parse_params((tb_graph *)g));
    TB_ASSERT_OK(tb_exec_create(g, cpu, 0, tb_convert_features(), 2, &e));
    tb_tensor *in[3];
    float *data[3];
    for (int i = 0; i < 3; i++) {
      size_t n = (size_t)(dims[i][1] * dims[i][2] * dims[i][3]);
      data[i] = malloc(n * sizeof(float));
      assert_non_null(data[i]);
      for (size_t k = 0; k < n; k++) data[i][k] = (float)(i * 1000000 + (int)k);
      in[i] = tbt_f32(cpu, 4, dims[i], data[i]);
    }
    int64_t oshape[4] = {1, 4, 100, 100};
    oshape[axis] = 10;
    size_t total = (size_t)(oshape[1] * oshape[2] * oshape[3]);
    float *want = malloc(total * sizeof *want);
    assert_non_null(want);
    int64_t outer = axis == 1 ? 1 : 4, inner = axis == 1 ? 10000 : 100;
    size_t at_out = 0;
    for (int64_t o = 0; o < outer; o++)
      for (int i = 0; i < 3; i++)
        for (int64_t k = 0; k < parts[i] * inner; k++) want[at_out++] = data[i][o * parts[i] * inner + k];
    tb_tensor *res = NULL;
    TB_ASSERT_OK(tb_exec_run(e, in, &res));
    tbt_expect_f32(res, 4, oshape, want);
    tb_tensor_destroy(res);
    for (int i = 0; i < 3; i++) {
      tb_tensor_destroy(in[i]);
      free(data[i]);
    }
    free(want);
    tb_exec_destroy(e);
    tb_backend_destroy(cpu);
    tb_ir_model_destroy(m);
  }
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(small_graph_values_and_replan),
      cmocka_unit_test(static_plan_when_shapes_known),
      cmocka_unit_test(if_with_outer_values),
      cmocka_unit_test(outputs_that_are_inputs),
      cmocka_unit_test(kernel_error_names_node),
      cmocka_unit_test(many_inputs),
      cmocka_unit_test(concat_on_the_pool),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
