/* The control-flow operators' parse functions (ops/control/control_params.h): If's branches, Loop's body and
 * Scan's body, counts, axes and directions (Scan-9+ and the batched Scan-8) as borrowed pointers into the
 * node, and every rejection with its status and message. */
#include "ops/control/control_params.h"
#include "test_params_util.h"

/* A body graph under t's main graph with n_in inputs and n_out outputs (their types do not matter here). */
static tb_graph *body(tpp *t, const char *name, size_t n_in, size_t n_out) {
  tb_graph *b = tb_graph_new(t->model, t->graph, name);
  assert_non_null(b);
  b->inputs = tb_graph_alloc(b, (n_in + 1) * sizeof *b->inputs);
  b->outputs = tb_graph_alloc(b, (n_out + 1) * sizeof *b->outputs);
  assert_true(b->inputs && b->outputs);
  char v[32];
  for (size_t i = 0; i < n_in; i++) {
    snprintf(v, sizeof v, "i%zu", i);
    b->inputs[b->n_inputs++] = tb_graph_value(b, v);
  }
  for (size_t i = 0; i < n_out; i++) {
    snprintf(v, sizeof v, "o%zu", i);
    b->outputs[b->n_outputs++] = tb_graph_value(b, v);
  }
  return b;
}

static void test_if_loop(void **state) {
  (void)state;
  tpp t;
  tpp_begin(&t);
  tb_graph *then_g = body(&t, "then", 0, 1), *else_g = body(&t, "else", 0, 1);
  tb_if_params ip = {0};
  TB_ASSERT_OK(tb_if_parse(t.graph, tpp_node(&t, "If", 13, 1, 1, TPP_ATTRS(TOH_GRAPH("then_branch", then_g),
                                                                          TOH_GRAPH("else_branch", else_g))), &ip));
  assert_ptr_equal(ip.then_branch, then_g);
  assert_ptr_equal(ip.else_branch, else_g);
  tb_graph *loop_g = body(&t, "loop", 3, 2);
  tb_loop_params lp = {0};
  TB_ASSERT_OK(tb_loop_parse(t.graph, tpp_node(&t, "Loop", 13, 3, 1, TPP_ATTRS(TOH_GRAPH("body", loop_g))), &lp));
  assert_ptr_equal(lp.body, loop_g);
  tb_graph *lonely = body(&t, "lonely", 0, 1);
  TPP_REJECTS(TB_ERR_MODEL, "If", "the graph attribute 'else_branch' is missing",
              tb_if_parse(t.graph, tpp_node(&t, "If", 13, 1, 1, TPP_ATTRS(TOH_GRAPH("then_branch", lonely))), &ip));
  TPP_REJECTS(TB_ERR_MODEL, "Loop", "the graph attribute 'body' is missing",
              tb_loop_parse(t.graph, tpp_node(&t, "Loop", 13, 3, 1, TPP_NO_ATTRS), &lp));
  TPP_REJECTS(TB_ERR_MODEL, "Loop", "attribute 'body' is of type int",
              tb_loop_parse(t.graph, tpp_node(&t, "Loop", 13, 3, 1, TPP_ATTRS(TOH_INT("body", 1))), &lp));
  tpp_end(&t);
}

static void test_scan(void **state) {
  (void)state;
  tpp t;
  tpp_begin(&t);
  tb_graph *b = body(&t, "scan", 3, 3); /* 1 state, 2 scan inputs; 1 state, 2 scan outputs */
  tb_scan_params p = {0};
  TB_ASSERT_OK(tb_scan_parse(t.graph, tpp_node(&t, "Scan", 16, 3, 3,
                                               TPP_ATTRS(TOH_GRAPH("body", b), TOH_INT("num_scan_inputs", 2),
                                                         TOH_INTS("scan_input_axes", 1, -1),
                                                         TOH_INTS("scan_input_directions", 0, 1),
                                                         TOH_INTS("scan_output_directions", 1, 0))), &p));
  assert_ptr_equal(p.body, b);
  assert_false(p.batched);
  assert_int_equal(p.n_state, 1);
  assert_int_equal(p.n_scan_in, 2);
  assert_int_equal(p.n_scan_out, 2);
  assert_int_equal(tb_scan_attr_at(p.in_axes, 1), -1);
  assert_int_equal(tb_scan_attr_at(p.in_dirs, 1), 1);
  assert_int_equal(tb_scan_attr_at(p.out_dirs, 0), 1);
  assert_null(p.out_axes);
  assert_int_equal(tb_scan_attr_at(p.out_axes, 1), 0);

  tb_graph *b8 = body(&t, "scan8", 2, 2); /* sequence_lens, 1 state, 1 scan input */
  memset(&p, 0, sizeof p);
  TB_ASSERT_OK(tb_scan8_parse(t.graph, tpp_node(&t, "Scan", 8, 3, 2,
                                                TPP_ATTRS(TOH_GRAPH("body", b8), TOH_INT("num_scan_inputs", 1),
                                                          TOH_INTS("directions", 1))), &p));
  assert_true(p.batched);
  assert_int_equal(p.n_state, 1);
  assert_int_equal(p.n_scan_in, 1);
  assert_int_equal(p.n_scan_out, 1);
  assert_int_equal(tb_scan_attr_at(p.in_dirs, 0), 1);

  tb_graph *c = body(&t, "c", 3, 3);
  TPP_REJECTS(TB_ERR_MODEL, "Scan", "num_scan_inputs is 4, expected 1 to the 3 inputs",
              tb_scan_parse(t.graph, tpp_node(&t, "Scan", 16, 3, 3, TPP_ATTRS(TOH_GRAPH("body", c), TOH_INT("num_scan_inputs", 4))), &p));
  tb_graph *d = body(&t, "d", 3, 3);
  TPP_REJECTS(TB_ERR_MODEL, "Scan", "attribute 'scan_input_axes' has 1 entries, expected 2",
              tb_scan_parse(t.graph, tpp_node(&t, "Scan", 16, 3, 3, TPP_ATTRS(TOH_GRAPH("body", d), TOH_INT("num_scan_inputs", 2),
                                                                            TOH_INTS("scan_input_axes", 0))), &p));
  tb_graph *e = body(&t, "e", 3, 3);
  TPP_REJECTS(TB_ERR_MODEL, "Scan", "'scan_output_directions'[1] is 2, expected 0 (forward) or 1 (reverse)",
              tb_scan_parse(t.graph, tpp_node(&t, "Scan", 16, 3, 3, TPP_ATTRS(TOH_GRAPH("body", e), TOH_INT("num_scan_inputs", 2),
                                                                            TOH_INTS("scan_output_directions", 0, 2))), &p));
  tb_graph *f = body(&t, "f", 2, 3);
  TPP_REJECTS(TB_ERR_MODEL, "Scan", "the body takes 2 inputs, expected 3 (1 states, 2 scan inputs)",
              tb_scan_parse(t.graph, tpp_node(&t, "Scan", 16, 3, 3, TPP_ATTRS(TOH_GRAPH("body", f), TOH_INT("num_scan_inputs", 2))), &p));
  tb_graph *h = body(&t, "h", 3, 0);
  TPP_REJECTS(TB_ERR_MODEL, "Scan", "the body returns 0 outputs, fewer than its 1 states",
              tb_scan_parse(t.graph, tpp_node(&t, "Scan", 16, 3, 3, TPP_ATTRS(TOH_GRAPH("body", h), TOH_INT("num_scan_inputs", 2))), &p));
  tb_graph *k = body(&t, "k", 2, 2);
  TPP_REJECTS(TB_ERR_MODEL, "Scan", "'directions' has 2 entries, expected 1",
              tb_scan8_parse(t.graph, tpp_node(&t, "Scan", 8, 3, 2, TPP_ATTRS(TOH_GRAPH("body", k), TOH_INT("num_scan_inputs", 1),
                                                                           TOH_INTS("directions", 0, 1))), &p));
  tpp_end(&t);
}

int main(void) {
  tbt_clear_env();
  const struct CMUnitTest tests[] = {cmocka_unit_test(test_if_loop), cmocka_unit_test(test_scan)};
  return cmocka_run_group_tests(tests, NULL, NULL);
}
