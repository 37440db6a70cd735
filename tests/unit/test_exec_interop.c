/* Inter-op parallelism (model/exec_interop.h, exec.c): the regions and lanes found in graphs with two
 * branches under each mode and the cost rule, the two branches run at the same time on a 2-thread pool with
 * outputs bit for bit those of the sequential run, the memory plan keeping every value of a region apart,
 * an error in one branch stopping the run with the failing node's sentence, and the option's names. */
#include <string.h>
#include "core/convert_features.h"
#include "model/exec_interop.h"
#include "model/params.h"
#include "test_engine_util.h"

static tb_backend *cpu_backend(void) {
  tb_backend *b = NULL;
  TB_ASSERT_OK(tb_backend_create_kind(TB_BACKEND_CPU, 0, &b));
  return b;
}

/* y = Abs(Neg(x)) + Relu(Gather(table, idx)), x and idx of n elements: two branches of two nodes each. */
static tb_ir_model *two_branches(int64_t n) {
  tb_ir_model *m = tbt_ir_model(13);
  tb_graph *g = tb_graph_new(m, NULL, "two_branches");
  tbt_input(g, "x", TB_DTYPE_F32, 1, &n, NULL);
  tbt_input(g, "idx", TB_DTYPE_I64, 1, &n, NULL);
  int64_t t = 64;
  float table[64];
  for (int i = 0; i < 64; i++) table[i] = (float)(i - 20) * 0.375f;
  tbt_const_f32(g, "table", 1, &t, table);
  tbt_node(g, "Neg", "neg", "x", "b1");
  tbt_node(g, "Abs", "abs", "b1", "b2");
  tbt_node(g, "Gather", "gather", "table,idx", "a1");
  tbt_node(g, "Relu", "relu", "a1", "a2");
  tbt_node(g, "Add", "add", "a2,b2", "y");
  tbt_output(g, "y");
  TB_ASSERT_OK(tb_graph_sort(g));
  TB_ASSERT_OK(tb_graph_check(g));
  TB_ASSERT_OK(tb_graph_infer(g));
  TB_ASSERT_OK(tb_graph_parse_params(g));
  return m;
}

static tb_value_type *static_types(const tb_graph *g) {
  tb_value_type *t = calloc(g->n_values, sizeof *t);
  assert_non_null(t);
  for (size_t v = 0; v < g->n_values; v++) t[v] = g->values[v].type;
  return t;
}

/* The lane holding node `name`, as the index of its region's lane; -1 when in no region. */
static int lane_of(const tb_graph *g, const tb_interop_plan *p, const char *name) {
  int step = tbt_node_pos(g, name);
  for (size_t r = 0; r < p->n_regions; r++)
    for (size_t l = 0; l < p->regions[r].n_lanes; l++) {
      const tb_interop_lane *lane = &p->lanes[p->regions[r].first_lane + l];
      for (size_t i = 0; i < lane->count; i++)
        if (p->steps[lane->first + i] == step) return (int)l;
    }
  return -1;
}

static void regions_by_mode_and_cost(void **state) {
  (void)state;
  static const int64_t sizes[] = {16, 12000, 65536};
  for (int size = 0; size < 3; size++) {
    int64_t n = sizes[size];
    tb_ir_model *m = two_branches(n);
    const tb_graph *g = m->graph;
    tb_value_type *types = static_types(g);
    tb_interop_plan p;
    /* on: one region of the four branch nodes in two lanes of two, each lane in execution order */
    TB_ASSERT_OK(tb_interop_find(g, types, 2, TB_INTER_OP_ON, &p));
    assert_int_equal(p.n_regions, 1);
    assert_int_equal(p.regions[0].begin, 0);
    assert_int_equal(p.regions[0].end, 4);
    assert_int_equal(p.regions[0].n_lanes, 2);
    assert_int_equal(p.max_lanes, 2);
    assert_int_equal(p.region_at[0], 0);
    assert_int_equal(p.region_at[4], -1);
    int neg = lane_of(g, &p, "neg"), gather = lane_of(g, &p, "gather");
    assert_true(neg >= 0 && gather >= 0 && neg != gather);
    assert_int_equal(lane_of(g, &p, "abs"), neg);
    assert_int_equal(lane_of(g, &p, "relu"), gather);
    assert_int_equal(lane_of(g, &p, "add"), -1);
    for (size_t l = 0; l < 2; l++) {
      const tb_interop_lane *lane = &p.lanes[l];
      assert_int_equal(lane->count, 2);
      assert_true(p.steps[lane->first] < p.steps[lane->first + 1]);
    }
    /* heaviest lane first: Neg + Abs read and write n floats each; Gather also reads the 64-value table */
    assert_true(p.lanes[0].work >= p.lanes[1].work);
    assert_int_equal(lane_of(g, &p, "gather"), 0);
    tb_interop_free(&p);
    /* auto: only where both lanes are worth a thread and beat the nodes one after another, each split by
     * its kernel: 16 elements are too few; at 12000 each node (24000 reads and writes) stays on one thread,
     * the lanes (48000 each) take half the time; at 65536 each node splits as well as the lanes do */
    TB_ASSERT_OK(tb_interop_find(g, types, 2, TB_INTER_OP_AUTO, &p));
    assert_int_equal(p.n_regions, size == 1 ? 1 : 0);
    tb_interop_free(&p);
    /* off, or one thread: none */
    TB_ASSERT_OK(tb_interop_find(g, types, 2, TB_INTER_OP_OFF, &p));
    assert_int_equal(p.n_regions, 0);
    tb_interop_free(&p);
    TB_ASSERT_OK(tb_interop_find(g, types, 1, TB_INTER_OP_ON, &p));
    assert_int_equal(p.n_regions, 0);
    tb_interop_free(&p);
    free(types);
    tb_ir_model_destroy(m);
  }
}

/* A branch with a product too large to leave threads idle stays out of regions under auto. */
static void large_nodes_stay_out(void **state) {
  (void)state;
  tb_ir_model *m = tbt_ir_model(13);
  tb_graph *g = tb_graph_new(m, NULL, "large");
  int64_t sq[2] = {256, 256}, vec = 65536;
  tbt_input(g, "a", TB_DTYPE_F32, 2, sq, NULL);
  tbt_input(g, "x", TB_DTYPE_F32, 1, &vec, NULL);
  tbt_node(g, "MatMul", "mm", "a,a", "p");
  tbt_node(g, "Relu", "r", "p", "q");
  tbt_node(g, "Neg", "neg", "x", "b1");
  tbt_node(g, "Abs", "abs", "b1", "b2");
  tbt_output(g, "q");
  tbt_output(g, "b2");
  TB_ASSERT_OK(tb_graph_sort(g));
  TB_ASSERT_OK(tb_graph_check(g));
  TB_ASSERT_OK(tb_graph_infer(g));
  tb_value_type *types = static_types(g);
  /* 256^3 multiply-adds plus the operands and result */
  assert_true(tb_interop_node_work(g, &g->nodes[tbt_node_pos(g, "mm")], types) == 16777216.0 + 3 * 65536.0);
  tb_interop_plan p;
  TB_ASSERT_OK(tb_interop_find(g, types, 2, TB_INTER_OP_AUTO, &p));
  assert_int_equal(lane_of(g, &p, "mm"), -1);
  tb_interop_free(&p);
  TB_ASSERT_OK(tb_interop_find(g, types, 2, TB_INTER_OP_ON, &p));
  assert_true(lane_of(g, &p, "mm") >= 0);
  tb_interop_free(&p);
  free(types);
  tb_ir_model_destroy(m);
}

typedef struct run_io {
  tb_tensor *x, *idx;
} run_io;

static run_io make_inputs(tb_backend *cpu, int64_t n, int64_t bad_at) {
  float *x = malloc((size_t)n * sizeof *x);
  int64_t *idx = malloc((size_t)n * sizeof *idx);
  assert_non_null(x);
  assert_non_null(idx);
  for (int64_t i = 0; i < n; i++) {
    x[i] = (float)((i * 37) % 101 - 50) * 0.125f;
    idx[i] = (i * 13) % 64;
  }
  if (bad_at >= 0) idx[bad_at] = 99;
  run_io io = {tbt_f32(cpu, 1, &n, x), toh_host_tensor(cpu, TB_DTYPE_I64, 1, &n, idx)};
  free(x);
  free(idx);
  return io;
}

static void free_inputs(run_io io) {
  tb_tensor_destroy(io.x);
  tb_tensor_destroy(io.idx);
}

static tb_exec *make_exec(const tb_graph *g, tb_backend *cpu, tb_inter_op mode) {
  tb_exec *e = NULL;
  TB_ASSERT_OK(tb_exec_create(g, cpu, TB_KERNEL_FAST, tb_convert_features(), 2, &e));
  tb_exec_set_inter_op(e, mode);
  assert_true(tb_exec_plan_static(e));
  return e;
}

static float *run_once(tb_exec *e, run_io io, int64_t n) {
  tb_tensor *in[2] = {io.x, io.idx}, *out = NULL;
  TB_ASSERT_OK(tb_exec_run(e, in, &out));
  float *y = malloc((size_t)n * sizeof *y);
  assert_non_null(y);
  TB_ASSERT_OK(tb_tensor_copy_to_host(out, y, (size_t)n * sizeof *y));
  tb_tensor_destroy(out);
  return y;
}

/* Whether the planned byte ranges of values a and b overlap. */
static bool share_bytes(const tb_graph *g, const tb_plan *p, const char *a, const char *b) {
  int va = tb_graph_find(g, a), vb = tb_graph_find(g, b);
  uint64_t size = tb_plan_value_bytes(&g->values[va].type);
  assert_true(p->offset[va] >= 0 && p->offset[vb] >= 0);
  return p->offset[va] < p->offset[vb] + (int64_t)size && p->offset[vb] < p->offset[va] + (int64_t)size;
}

static void branches_run_together_and_match(void **state) {
  (void)state;
  const int64_t n = 65536;
  tb_ir_model *m = two_branches(n);
  const tb_graph *g = m->graph;
  tb_backend *cpu = cpu_backend();
  tb_exec *seq = make_exec(g, cpu, TB_INTER_OP_OFF), *par = make_exec(g, cpu, TB_INTER_OP_ON);
  run_io io = make_inputs(cpu, n, -1);
  float *want = run_once(seq, io, n);
  for (int64_t i = 0; i < n; i += 4099) {
    float x = (float)((i * 37) % 101 - 50) * 0.125f, t = (float)((i * 13) % 64 - 20) * 0.375f;
    assert_true(want[i] == fabsf(-x) + fmaxf(t, 0.0f));
  }
  /* the memory plan: the four values of the region never share bytes; without the region some do */
  const char *region_values[4] = {"b1", "b2", "a1", "a2"};
  for (int i = 0; i < 4; i++)
    for (int j = i + 1; j < 4; j++) assert_false(share_bytes(g, tb_exec_plan(par), region_values[i], region_values[j]));
  assert_true(tb_exec_plan(par)->arena_bytes > tb_exec_plan(seq)->arena_bytes);
  assert_non_null(tb_exec_interop(par));
  assert_int_equal(tb_exec_interop(par)->n_regions, 1);
  assert_int_equal(tb_exec_interop(seq)->n_regions, 0);
  /* the first run settles the nodes one after another; later runs spread the lanes over the pool */
  uint64_t regions = 0, on_workers = 0;
  for (int run = 0; run < 2000 && (run < 8 || on_workers == 0); run++) { /* until a lane ran elsewhere */
    float *got = run_once(par, io, n);
    assert_memory_equal(got, want, (size_t)n * sizeof *got);
    free(got);
    tb_exec_interop_counts(par, &regions, &on_workers);
  }
  assert_true(regions >= 7);
  assert_true(on_workers > 0); /* a lane ran on the pool's worker while the caller ran the other */
  uint64_t seq_regions = 0, seq_workers = 0;
  tb_exec_interop_counts(seq, &seq_regions, &seq_workers);
  assert_int_equal(seq_regions, 0);
  free(want);
  free_inputs(io);
  tb_exec_destroy(seq);
  tb_exec_destroy(par);
  tb_backend_destroy(cpu);
  tb_ir_model_destroy(m);
}

static void branch_error_stops_run(void **state) {
  (void)state;
  const int64_t n = 4096;
  tb_ir_model *m = two_branches(n);
  const tb_graph *g = m->graph;
  tb_backend *cpu = cpu_backend();
  tb_exec *e = make_exec(g, cpu, TB_INTER_OP_ON), *seq = make_exec(g, cpu, TB_INTER_OP_OFF);
  run_io good = make_inputs(cpu, n, -1), bad = make_inputs(cpu, n, 1000);
  float *want = run_once(seq, good, n);
  for (int run = 0; run < 3; run++) free(run_once(e, good, n)); /* settled: the region runs on the pool */
  uint64_t before = 0, regions = 0, workers = 0;
  tb_exec_interop_counts(e, &before, &workers);
  for (int run = 0; run < 3; run++) {
    tb_tensor *in[2] = {bad.x, bad.idx}, *out = NULL;
    assert_int_equal(tb_exec_run(e, in, &out), TB_ERR_INVALID_ARGUMENT);
    assert_null(out);
    TB_ASSERT_CONTAINS(tb_last_error(), "node 'gather' (Gather)");
    TB_ASSERT_CONTAINS(tb_last_error(), "99");
  }
  tb_exec_interop_counts(e, &regions, &workers);
  assert_int_equal(regions, before + 3);
  /* the executor is whole after the failures: the next good run gives the sequential result */
  float *got = run_once(e, good, n);
  assert_memory_equal(got, want, (size_t)n * sizeof *got);
  free(got);
  free(want);
  free_inputs(good);
  free_inputs(bad);
  tb_exec_destroy(e);
  tb_exec_destroy(seq);
  tb_backend_destroy(cpu);
  tb_ir_model_destroy(m);
}

static void mode_names(void **state) {
  (void)state;
  tb_inter_op mode;
  TB_ASSERT_OK(tb_inter_op_parse("Auto", &mode));
  assert_int_equal(mode, TB_INTER_OP_AUTO);
  TB_ASSERT_OK(tb_inter_op_parse("off", &mode));
  assert_int_equal(mode, TB_INTER_OP_OFF);
  TB_ASSERT_OK(tb_inter_op_parse("1", &mode));
  assert_int_equal(mode, TB_INTER_OP_ON);
  assert_int_equal(tb_inter_op_parse("sometimes", &mode), TB_ERR_NOT_FOUND);
  TB_ASSERT_CONTAINS(tb_last_error(), "unknown inter-op mode 'sometimes'; valid ones are default, auto, off");
  setenv("TB_INTER_OP", "off", 1);
  assert_int_equal(tb_inter_op_from_env(), TB_INTER_OP_OFF);
  setenv("TB_INTER_OP", "on", 1);
  assert_int_equal(tb_inter_op_from_env(), TB_INTER_OP_ON);
  setenv("TB_INTER_OP", "maybe", 1);
  assert_int_equal(tb_inter_op_from_env(), TB_INTER_OP_AUTO);
  unsetenv("TB_INTER_OP");
  assert_int_equal(tb_inter_op_from_env(), TB_INTER_OP_AUTO);
}

/* A plan made after a run sees only the computed values' types (the run's `seen`): a constant input (a weight)
 * is weighed by the graph's own type, so its node still has a work and may join a region. */
static void constants_are_weighed_by_their_graph_type(void **state) {
  (void)state;
  tb_ir_model *m = tbt_ir_model(13);
  tb_graph *g = tb_graph_new(m, NULL, "weights");
  int64_t xd[2] = {4, 8}, wd[2] = {8, 16};
  float w[128] = {0};
  tbt_input(g, "x", TB_DTYPE_F32, 2, xd, NULL);
  int wv = tbt_const(g, "w", TB_DTYPE_F32, 2, wd, w);
  tbt_node(g, "MatMul", "mm", "x,w", "y");
  tbt_output(g, "y");
  TB_ASSERT_OK(tb_graph_sort(g));
  TB_ASSERT_OK(tb_graph_check(g));
  TB_ASSERT_OK(tb_graph_infer(g));
  tb_value_type *types = static_types(g);
  memset(&types[wv], 0, sizeof types[wv]); /* as after a run: the weight was never computed */
  /* 4 x 16 outputs of 8 multiply-adds, plus x (32), w (128) and y (64) */
  assert_true(tb_interop_node_work(g, &g->nodes[tbt_node_pos(g, "mm")], types) == 4.0 * 16 * 8 + 32 + 128 + 64);
  free(types);
  tb_ir_model_destroy(m);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(regions_by_mode_and_cost),
      cmocka_unit_test(large_nodes_stay_out),
      cmocka_unit_test(constants_are_weighed_by_their_graph_type),
      cmocka_unit_test(branches_run_together_and_match),
      cmocka_unit_test(branch_error_stops_run),
      cmocka_unit_test(mode_names),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
