/* Errors from running a node name the node and its op, also when they come from a shared helper the kernel
 * called (tb_tensor_create for an absurd ConstantOfShape): exec.c's run_node and the kernel prepare put the
 * node's label in front of a message that lacks it (tb_node_name_error). */
#include "core/error.h"
#include "test_engine_util.h"
#include "test_util.h"

/* y = ConstantOfShape(shape) + x: the shape is a graph input, so nothing is folded at prepare. */
static tb_model *constant_of_shape_model(void) {
  tb_ir_model *m = tbt_ir_model(13);
  tb_graph *g = tb_graph_new(m, NULL, "absurd");
  int64_t two = 2;
  tbt_input(g, "shape", TB_DTYPE_I64, 1, &two, NULL);
  tbt_node(g, "ConstantOfShape", "huge", "shape", "y");
  tbt_output(g, "y");
  return tbt_model_of(m);
}

/* Run the model with the shape `dims`; the status must be `want` and the error start with the node. */
static void run_absurd(tb_opt_level level, int64_t d0, int64_t d1, tb_status want, const char *exact) {
  tb_model *model = constant_of_shape_model();
  tb_backend *cpu;
  TB_ASSERT_OK(tb_backend_create("cpu", &cpu));
  tb_prepare_options opts = {.size = sizeof opts, .level = level};
  tb_prepared *p = NULL;
  TB_ASSERT_OK(tb_model_prepare(model, cpu, &opts, &p, NULL));
  const int64_t dims[2] = {d0, d1}, two = 2;
  tb_tensor *shape = toh_host_tensor(cpu, TB_DTYPE_I64, 1, &two, dims), *out = NULL;
  const char *names[1] = {"shape"};
  tb_status st = tb_prepared_run(p, 1, names, &shape, 1, NULL, &out);
  if (st != want) fail_msg("status %s, expected %s: %s", tb_status_str(st), tb_status_str(want), tb_last_error());
  assert_null(out);
  const char *err = tb_last_error();
  if (strncmp(err, "node 'huge' (ConstantOfShape): ", 31) != 0) fail_msg("the error does not start with the node: %s", err);
  if (exact) assert_string_equal(err, exact);
  tb_tensor_destroy(shape);
  tb_prepared_destroy(p);
  tb_model_destroy(model);
  tb_backend_destroy(cpu);
}

#define PAST_2_63 \
  "node 'huge' (ConstantOfShape): tb_tensor_create: shape [2147483648, 2147483648] is too large: dimension 0 (size " \
  "2147483648) takes the size past 2^63-1 bytes of 4-byte elements"

static void absurd_constant_of_shape_o0(void **state) {
  (void)state;
  run_absurd(TB_LEVEL_O0, INT64_C(1) << 31, INT64_C(1) << 31, TB_ERR_INVALID_ARGUMENT, PAST_2_63);
  run_absurd(TB_LEVEL_O0, INT64_C(1) << 22, INT64_C(1) << 22, TB_ERR_OUT_OF_MEMORY, NULL); /* 64 TiB: no host has it */
}

static void absurd_constant_of_shape_o2(void **state) {
  (void)state;
  run_absurd(TB_LEVEL_O2, INT64_C(1) << 31, INT64_C(1) << 31, TB_ERR_INVALID_ARGUMENT, PAST_2_63);
}

/* A message a kernel's node stand-in wrote names the op only ("node (Add): "): the label replaces that
 * prefix instead of standing in front of it; other messages get the label in front. */
static void stand_in_prefix_replaced(void **state) {
  (void)state;
  tb_ir_model *m = tbt_ir_model(13);
  tb_graph *g = tb_graph_new(m, NULL, "g");
  int64_t two = 2;
  tbt_input(g, "x", TB_DTYPE_F32, 1, &two, NULL);
  tbt_node(g, "Add", "sum", "x,x", "y");
  const tb_node *n = &g->nodes[0];
  assert_int_equal(tb_node_name_error(g, n, tb_error(TB_ERR_MODEL, "node (Add): shapes [2] and [3] do not broadcast")),
                   TB_ERR_MODEL);
  assert_string_equal(tb_last_error(), "node 'sum' (Add): shapes [2] and [3] do not broadcast");
  tb_node_name_error(g, n, tb_error(TB_ERR_MODEL, "node (Mul): other op"));
  assert_string_equal(tb_last_error(), "node 'sum' (Add): node (Mul): other op");
  tb_ir_model_destroy(m);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(stand_in_prefix_replaced),
      cmocka_unit_test(absurd_constant_of_shape_o0),
      cmocka_unit_test(absurd_constant_of_shape_o2),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
