/* The memory plan: exact peak for a chain, no two values alive together share bytes (property test on
 * random graphs), and what is never placed (graph inputs/outputs, constants, values a subgraph reads). */
#include "test_ir_util.h"

static void chain_peak_is_exact(void **state) {
  (void)state;
  tb_ir_model *m = tbt_ir_model(13);
  tb_graph *g = tb_graph_new(m, NULL, "chain");
  int64_t d = 100;
  tbt_input(g, "x", TB_DTYPE_F32, 1, &d, NULL);
  tbt_node(g, "FooOp", "n1", "x", "a");
  tbt_node(g, "FooOp", "n2", "a", "b");
  tbt_node(g, "FooOp", "n3", "b", "c");
  tbt_node(g, "FooOp", "n4", "c", "out");
  tbt_output(g, "out");
  uint64_t bytes[5] = {400, 400, 400, 400, 400};
  tb_plan plan = {0};
  TB_ASSERT_OK(tb_plan_build(g, bytes, &plan));
  int a = tb_graph_find(g, "a"), b = tb_graph_find(g, "b"), c = tb_graph_find(g, "c");
  assert_int_equal(plan.first[a], 0);
  assert_int_equal(plan.last[a], 1);
  assert_int_equal(plan.first[c], 2);
  assert_int_equal(plan.last[c], 3);
  /* a and c never live together: they share offset 0; b sits after a, aligned to 64 bytes */
  assert_int_equal(plan.offset[a], 0);
  assert_int_equal(plan.offset[b], 448);
  assert_int_equal(plan.offset[c], 0);
  assert_int_equal(plan.offset[tb_graph_find(g, "x")], -1);
  assert_int_equal(plan.offset[tb_graph_find(g, "out")], -1);
  assert_int_equal(plan.arena_bytes, 896);
  tb_plan_free(&plan);
  tb_ir_model_destroy(m);
}

static void unused_output_lives_one_step(void **state) {
  (void)state;
  tb_ir_model *m = tbt_ir_model(13);
  tb_graph *g = tb_graph_new(m, NULL, "g");
  int64_t d = 16;
  tbt_input(g, "x", TB_DTYPE_F32, 1, &d, NULL);
  tbt_node(g, "FooOp", "n1", "x", "a,mask");
  tbt_node(g, "FooOp", "n2", "a", "b");
  tbt_node(g, "FooOp", "n3", "b", "out");
  tbt_output(g, "out");
  uint64_t bytes[5] = {64, 64, 64, 64, 64};
  tb_plan plan = {0};
  TB_ASSERT_OK(tb_plan_build(g, bytes, &plan));
  int mask = tb_graph_find(g, "mask");
  assert_int_equal(plan.first[mask], 0);
  assert_int_equal(plan.last[mask], 0);
  assert_true(plan.offset[mask] >= 0);
  /* a with mask at step 0, a with b at step 1: mask and b share bytes */
  assert_int_equal(plan.offset[mask], plan.offset[tb_graph_find(g, "b")]);
  assert_int_equal(plan.arena_bytes, 128);
  tb_plan_free(&plan);
  tb_ir_model_destroy(m);
}

static void subgraph_reads_are_not_placed(void **state) {
  (void)state;
  tb_ir_model *m = tbt_ir_model(13);
  tb_graph *g = tb_graph_new(m, NULL, "g");
  int64_t d = 16;
  tbt_input(g, "x", TB_DTYPE_F32, 1, &d, NULL);
  tbt_input(g, "cond", TB_DTYPE_BOOL, 0, NULL, NULL);
  float w[16] = {0};
  tbt_const_f32(g, "w", 1, &d, w);
  tbt_node(g, "FooOp", "n1", "x,w", "seen_inside");
  tb_graph *body = tb_graph_new(m, g, "then");
  tbt_node(body, "Neg", "inner", "seen_inside", "b_out");
  tbt_output(body, "b_out");
  tb_attr attr = {.name = "then_branch", .type = TB_ATTR_GRAPH, .g = body};
  int in = tb_graph_find(g, "cond"), out = tb_graph_value(g, "y");
  tb_graph_add_node(g, "if0", "If", "", &in, 1, &out, 1, &attr, 1);
  tbt_node(g, "FooOp", "n3", "y", "z");
  tbt_output(g, "z");
  uint64_t *bytes = calloc(g->n_values, sizeof *bytes);
  for (size_t v = 0; v < g->n_values; v++) bytes[v] = 64;
  tb_plan plan = {0};
  TB_ASSERT_OK(tb_plan_build(g, bytes, &plan));
  int seen = tb_graph_find(g, "seen_inside");
  assert_int_equal(plan.last[seen], 1); /* the If reads it */
  assert_int_equal(plan.offset[seen], -1);
  assert_int_equal(plan.offset[tb_graph_find(g, "w")], -1);
  assert_int_equal(plan.offset[tb_graph_find(g, "y")], 0);
  assert_int_equal(plan.arena_bytes, 64);
  free(bytes);
  tb_plan_free(&plan);
  tb_ir_model_destroy(m);
}

static uint32_t rng_next(uint32_t *s) {
  *s ^= *s << 13;
  *s ^= *s >> 17;
  *s ^= *s << 5;
  return *s;
}

/* Random DAGs: every pair of placed values whose lifetimes overlap gets disjoint bytes. */
static void random_dags_never_overlap(void **state) {
  (void)state;
  uint32_t seed = 12345;
  for (int trial = 0; trial < 200; trial++) {
    tb_ir_model *m = tbt_ir_model(13);
    tb_graph *g = tb_graph_new(m, NULL, "random");
    int64_t d = 8;
    tbt_input(g, "v0", TB_DTYPE_F32, 1, &d, NULL);
    int nodes = 2 + (int)(rng_next(&seed) % 40);
    for (int i = 0; i < nodes; i++) {
      char ins[64], outs[32], name[16];
      int have = i + 1; /* values v0..v{i} exist */
      int k = 1 + (int)(rng_next(&seed) % 3);
      size_t len = 0;
      for (int j = 0; j < k; j++)
        len += (size_t)snprintf(ins + len, sizeof ins - len, "%sv%u", j ? "," : "", rng_next(&seed) % (unsigned)have);
      snprintf(outs, sizeof outs, "v%d", i + 1);
      snprintf(name, sizeof name, "n%d", i);
      tbt_node(g, "FooOp", name, ins, outs);
    }
    char last[16];
    snprintf(last, sizeof last, "v%d", nodes);
    tbt_output(g, last);
    if (rng_next(&seed) % 2) tbt_output(g, "v1");
    uint64_t *bytes = calloc(g->n_values, sizeof *bytes);
    for (size_t v = 0; v < g->n_values; v++) bytes[v] = 1 + rng_next(&seed) % 5000;
    tb_plan plan = {0};
    TB_ASSERT_OK(tb_plan_build(g, bytes, &plan));
    uint64_t max_end = 0;
    for (size_t a = 0; a < g->n_values; a++) {
      if (plan.offset[a] < 0) continue;
      assert_int_equal(plan.offset[a] % 64, 0);
      assert_false(g->values[a].is_input || g->values[a].is_output);
      uint64_t end_a = (uint64_t)plan.offset[a] + bytes[a];
      if (end_a > max_end) max_end = end_a;
      for (size_t b = a + 1; b < g->n_values; b++) {
        if (plan.offset[b] < 0) continue;
        bool alive_together = plan.first[a] <= plan.last[b] && plan.first[b] <= plan.last[a];
        if (!alive_together) continue;
        uint64_t end_b = (uint64_t)plan.offset[b] + bytes[b];
        bool disjoint = end_a <= (uint64_t)plan.offset[b] || end_b <= (uint64_t)plan.offset[a];
        if (!disjoint) fail_msg("trial %d: values %zu and %zu overlap", trial, a, b);
      }
    }
    assert_true(plan.arena_bytes >= max_end);
    assert_true(plan.arena_bytes < max_end + 64);
    free(bytes);
    tb_plan_free(&plan);
    tb_ir_model_destroy(m);
  }
}

static void value_bytes(void **state) {
  (void)state;
  tb_value_type t = {.kind = TB_VALUE_TENSOR, .has_dtype = true, .dtype = TB_DTYPE_F16, .has_shape = true, .ndim = 2};
  t.dims[0].value = 3;
  t.dims[1].value = 5;
  assert_int_equal(tb_plan_value_bytes(&t), 30);
  t.dims[1].value = -1;
  assert_int_equal(tb_plan_value_bytes(&t), 0);
  t.ndim = 0;
  assert_int_equal(tb_plan_value_bytes(&t), 2);
  t.has_dtype = false;
  assert_int_equal(tb_plan_value_bytes(&t), 0);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(chain_peak_is_exact),
      cmocka_unit_test(unused_output_lives_one_step),
      cmocka_unit_test(subgraph_reads_are_not_placed),
      cmocka_unit_test(random_dags_never_overlap),
      cmocka_unit_test(value_bytes),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
