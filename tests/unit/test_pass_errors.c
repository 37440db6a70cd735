/* The graph passes' out-of-memory returns carry their sentence (pass_util.c): tb_tbp_out_of_memory names the
 * pass, what it was making, its size and the fix; tb_tbp_replace gives it when the fused node could not be
 * added, and then leaves the nodes it would have replaced alive. */
#include "model/passes/pass_util.h"
#include "test_ir_util.h"

static void out_of_memory_names_the_pass_the_thing_and_the_size(void **state) {
  (void)state;
  tb_ir_model *m = tbt_ir_model(13);
  tb_graph *g = tb_graph_new(m, NULL, "main");
  int64_t d = 4;
  tbt_input(g, "x", TB_DTYPE_F32, 1, &d, NULL);
  tbt_node(g, "Relu", "relu", "x", "y");
  tbt_node(g, "Neg", "neg", "y", "z");
  tbt_output(g, "z");
  assert_int_equal(tb_tbp_out_of_memory(g, "conv_bn_folding", "the folded weights in f64", 4096), TB_ERR_OUT_OF_MEMORY);
  assert_string_equal(tb_last_error(),
                      "graph pass conv_bn_folding: out of host memory for the folded weights in f64 (4096 bytes) in a "
                      "graph of 2 nodes; free host memory or prepare at O0, which runs no graph passes");

  const int replaced[2] = {0, 1};
  assert_int_equal(tb_tbp_replace(g, "pattern_gelu", -1, replaced, 2, tb_graph_find(g, "z")), TB_ERR_OUT_OF_MEMORY);
  assert_string_equal(tb_last_error(),
                      "graph pass pattern_gelu: out of host memory for the fused node in a graph of 2 nodes; free "
                      "host memory or prepare at O0, which runs no graph passes");
  assert_false(g->nodes[0].dead);
  assert_false(g->nodes[1].dead);
  assert_int_equal(g->values[tb_graph_find(g, "z")].producer, 1);
  tb_ir_model_destroy(m);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(out_of_memory_names_the_pass_the_thing_and_the_size),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
