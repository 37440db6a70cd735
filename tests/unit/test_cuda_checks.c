/* The checks the device leaves for the run's host synchronisations (backend/run_checks.h, cuda_index_flag.c;
 * docs/cuda.md "No host round-trips"), on the fake cuda:0 with the kernels on the emulator, against the CPU backend:
 * a Gather in a Loop body makes one flag and one check record per node and run, whatever the iterations (the device's
 * allocations and the records counted over 3 and 300 iterations); a bad index in iteration k stops the loop at k
 * (the launches counted) with the CPU's status and sentence; the index error wins over another error of the same run
 * (a launch failing after the Gather); nothing leaked. Without the emulator (no C++ compiler) the values and the
 * device's findings are not checked (the tests print why), but which kernels ran is: the fake driver records every
 * launch, computed or not. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "backend/run_checks.h"
#include "core/error.h"
#include "pass_test.h"
#include "test_cuda_values.h"
#include "test_device_control.h"
#include "test_util.h"

static char cache_dir[64];

static bool emulated; /* the kernels compute (the emulator built): values and the device's findings are checked */

static int setup(void **state) {
  int rc = tcv_setup(state, cache_dir, "tb_cuchk");
  emulated = emulator_here();
  return rc;
}

static int teardown(void **state) {
  (void)state;
  return tcv_teardown(cache_dir);
}

static float table[2 * 400];

/* s_final = Loop(M, , s0) with body (i, c, s) -> (c, s + Gather(table, i) + ...): `gathers` Gathers of the row i
 * (none: s + s), table an outer constant [rows, 2], so iteration `rows` reads a row past its end in each. */
static tb_model *gathers_loop_model(int64_t rows, int gathers) {
  tb_ir_model *ir = tbt_ir_model(13);
  tb_graph *g = tb_graph_new(ir, NULL, "main");
  const int64_t td[2] = {rows, 2}, sd[1] = {2};
  dctl_fill(table, (size_t)(2 * rows), 3);
  tbt_input(g, "M", TB_DTYPE_I64, 0, NULL, NULL);
  tbt_input(g, "s0", TB_DTYPE_F32, 1, sd, NULL);
  tbt_const_f32(g, "table", 2, td, table);
  tb_graph *body = tb_graph_new(ir, g, "body");
  tbt_input(body, "i", TB_DTYPE_I64, 0, NULL, NULL);
  tbt_input(body, "c", TB_DTYPE_BOOL, 0, NULL, NULL);
  tbt_input(body, "s", TB_DTYPE_F32, 1, sd, NULL);
  tbt_node(body, "Identity", "keep", "c", "c_out");
  if (gathers == 0) tbt_node(body, "Add", "acc", "s,s", "s_out");
  for (int k = 0; k < gathers; k++) {
    char name[16] = "row", r[16], sum[32], acc[16] = "acc", out[16] = "s_out";
    if (k) snprintf(name, sizeof name, "row%d", k);
    snprintf(r, sizeof r, "r%d", k);
    if (k) snprintf(sum, sizeof sum, "a%d,r%d", k - 1, k);
    else snprintf(sum, sizeof sum, "s,r0");
    if (k + 1 < gathers) {
      snprintf(acc, sizeof acc, "acc%d", k);
      snprintf(out, sizeof out, "a%d", k);
    }
    tbt_node(body, "Gather", name, "table,i", r);
    tbt_node(body, "Add", acc, sum, out);
  }
  tbt_output(body, "c_out");
  tbt_output(body, "s_out");
  int n = tbt_node(g, "Loop", "loop", "M,,s0", "s_final");
  dctl_graph_attr(g, n, "body", body);
  tbt_output(g, "s_final");
  return tbt_model_of(ir);
}

static tb_model *gather_loop_model(int64_t rows) { return gathers_loop_model(rows, 1); }

typedef struct prepared_pair {
  tb_backend *cpu, *cuda;
  tb_prepared *pc, *pg;
} prepared_pair;

/* m prepared on the CPU and on cuda:0 at O0, every node on the device. */
static prepared_pair prepare_both(tb_model *m) {
  prepared_pair p = {0};
  p.cuda = open_cuda0();
  TB_ASSERT_OK(tb_backend_create("cpu", &p.cpu));
  tb_prepare_options o = {.size = sizeof o, .level = TB_LEVEL_O0};
  TB_ASSERT_OK(tb_model_prepare(m, p.cpu, &o, &p.pc, NULL));
  const tb_prepare_result *r = NULL;
  TB_ASSERT_OK(tb_model_prepare(m, p.cuda, &o, &p.pg, &r));
  assert_int_equal(r->cpu_fallback_nodes, 0); /* every node on cuda:0 */
  return p;
}

static void release_both(prepared_pair *p) {
  tb_prepared_destroy(p->pc);
  tb_prepared_destroy(p->pg);
  tb_backend_destroy(p->cuda);
  tb_backend_destroy(p->cpu);
}

/* The loop with M trips on prepared p; its status; the output in *out (NULL on failure). */
static tb_status run_loop(tb_backend *cpu, tb_prepared *p, int64_t trips, tb_tensor **out) {
  static const float s0[2] = {0.25f, -0.5f};
  const dctl_input in[2] = {{"M", TB_DTYPE_I64, 0, {0}, &trips}, {"s0", TB_DTYPE_F32, 1, {2}, s0}};
  tb_tensor *inputs[2] = {dctl_make_input(cpu, &in[0]), dctl_make_input(cpu, &in[1])};
  const char *names[2] = {"M", "s0"};
  *out = NULL;
  tb_status st = tb_prepared_run(p, 2, names, inputs, 1, NULL, out);
  for (int i = 0; i < 2; i++) tb_tensor_destroy(inputs[i]);
  return st;
}

/* One flag (made at prepare) and one record per run, whatever the iterations: the device's live allocations after a
 * run of 3 iterations and one of 300 are the same, and each run adds one record; the values are the CPU's. */
static void a_loop_keeps_one_check_per_node(void **state) {
  (void)state;
  if (!emulator_here()) return;
  tb_model *m = gather_loop_model(400);
  prepared_pair p = prepare_both(m);
  tb_tensor *want = NULL, *got = NULL;
  TB_ASSERT_OK(run_loop(p.cpu, p.pg, 3, &got)); /* the first run places the body and prepares its nodes */
  tb_tensor_destroy(got);
  int live[2];
  size_t records[2];
  const int64_t trips[2] = {3, 300};
  for (int r = 0; r < 2; r++) {
    TB_ASSERT_OK(run_loop(p.cpu, p.pc, trips[r], &want));
    size_t made = tb_run_checks_made();
    TB_ASSERT_OK(run_loop(p.cpu, p.pg, trips[r], &got));
    records[r] = tb_run_checks_made() - made;
    expect_same(want, got, 0, 0, 0); /* the same additions in the same order: byte for byte */
    tb_tensor_destroy(want);
    tb_tensor_destroy(got);
    live[r] = live_allocations();
  }
  assert_int_equal(records[0], 1);
  assert_int_equal(records[1], 1);
  assert_int_equal(live[0], live[1]);
  release_both(&p);
  tb_model_destroy(m);
}

/* Which kernel the Loop body's Gather runs, once per iteration (with or without the emulator): 7 iterations, 7
 * launches of tb_cu_dm_gather_b4 (float32 rows), and one record for the node. */
static void a_loop_body_gather_launches_its_kernel_per_iteration(void **state) {
  (void)state;
  tb_model *m = gather_loop_model(20);
  prepared_pair p = prepare_both(m);
  tb_tensor *got = NULL;
  TB_ASSERT_OK(run_loop(p.cpu, p.pg, 1, &got)); /* the first run places the body and prepares its nodes */
  tb_tensor_destroy(got);
  launch_reset();
  size_t made = tb_run_checks_made();
  TB_ASSERT_OK(run_loop(p.cpu, p.pg, 7, &got));
  tb_tensor_destroy(got);
  assert_int_equal(launches_of("tb_cu_dm_gather_b4"), 7);
  assert_int_equal(tb_run_checks_made() - made, 1);
  release_both(&p);
  tb_model_destroy(m);
}

/* A bad index in iteration 5 of 1000 stops the loop there, at its host synchronisation: 6 Gathers launched, the
 * CPU's status and sentence; the next good run works (the flag reset). */
static void a_bad_index_stops_the_loop_at_its_iteration(void **state) {
  (void)state;
  if (!emulator_here()) return;
  tb_model *m = gather_loop_model(5);
  prepared_pair p = prepare_both(m);
  tb_tensor *want = NULL, *got = NULL;
  assert_int_equal(run_loop(p.cpu, p.pc, 1000, &want), TB_ERR_INVALID_ARGUMENT);
  char cpu_sentence[512];
  snprintf(cpu_sentence, sizeof cpu_sentence, "%s", tb_last_error());
  TB_ASSERT_CONTAINS(cpu_sentence, "node 'row' (Gather): index 5 (indices element 0) is out of range for axis 0 of size 5");
  launch_reset();
  assert_int_equal(run_loop(p.cpu, p.pg, 1000, &got), TB_ERR_INVALID_ARGUMENT);
  assert_string_equal(tb_last_error(), cpu_sentence);
  assert_null(got);
  assert_int_equal(launches_of("tb_cu_dm_gather_b4"), 6);
  TB_ASSERT_OK(run_loop(p.cpu, p.pc, 5, &want));
  TB_ASSERT_OK(run_loop(p.cpu, p.pg, 5, &got));
  expect_same(want, got, 0, 0, 0);
  tb_tensor_destroy(want);
  tb_tensor_destroy(got);
  release_both(&p);
  tb_model_destroy(m);
}

/* Device-to-host copies since the call log's reset. */
static int reads_since_reset(void) {
  int (*calls)(const char *) = (int (*)(const char *))fake_symbol("fake_cuda_calls");
  return calls("cuMemcpyDtoHAsync_v2") + calls("cuMemcpyDtoH_v2");
}

/* The device-to-host copies of a run of the loop with `trips` iterations on p (its values the CPU's). */
static int reads_of_run(prepared_pair *p, int64_t trips) {
  tb_tensor *want = NULL, *got = NULL;
  TB_ASSERT_OK(run_loop(p->cpu, p->pc, trips, &want));
  tcu_call_log_reset();
  TB_ASSERT_OK(run_loop(p->cpu, p->pg, trips, &got));
  int reads = reads_since_reset();
  expect_same(want, got, 0, 0, 0);
  tb_tensor_destroy(want);
  tb_tensor_destroy(got);
  return reads;
}

/* One 4-byte read of the run-wide word per Loop iteration, whatever the number of checked nodes in its body: over 100
 * more iterations, a body of 1 and of 3 Gathers makes exactly 100 more device-to-host copies than a body without one
 * (each node's flag read at every iteration made 300 for 3); a bad row in all three Gathers gives the first one's
 * sentence, the CPU's, and the next run is good (every flag behind the word reset with it). */
static void a_loop_reads_one_word_per_iteration(void **state) {
  (void)state;
  if (!emulator_here()) return;
  int extra[3] = {0};
  const int gathers[3] = {0, 1, 3};
  for (int k = 0; k < 3; k++) {
    tb_model *m = gathers_loop_model(120, gathers[k]);
    prepared_pair p = prepare_both(m);
    tb_tensor *got = NULL;
    TB_ASSERT_OK(run_loop(p.cpu, p.pg, 1, &got)); /* the first run places the body and prepares its nodes */
    tb_tensor_destroy(got);
    extra[k] = reads_of_run(&p, 101) - reads_of_run(&p, 1);
    if (gathers[k] == 3) {
      tb_tensor *want = NULL;
      assert_int_equal(run_loop(p.cpu, p.pc, 1000, &want), TB_ERR_INVALID_ARGUMENT);
      char cpu_sentence[512];
      snprintf(cpu_sentence, sizeof cpu_sentence, "%s", tb_last_error());
      TB_ASSERT_CONTAINS(cpu_sentence, "node 'row' (Gather): index 120 (indices element 0) is out of range for axis 0 of size 120");
      assert_int_equal(run_loop(p.cpu, p.pg, 1000, &got), TB_ERR_INVALID_ARGUMENT);
      assert_string_equal(tb_last_error(), cpu_sentence);
      assert_null(got);
      (void)reads_of_run(&p, 7);
    }
    release_both(&p);
    tb_model_destroy(m);
  }
  assert_true(extra[0] > 0); /* the loop's own reads of its condition */
  assert_int_equal(extra[1] - extra[0], 100);
  assert_int_equal(extra[2] - extra[0], 100);
}

/* (s_final, rs) = Scan(s0, ids) with body (s, id) -> (s + Gather(table, id), Gather(table, id)): ids [trips] int64
 * scanned along axis 0, table an outer constant [rows, 2]. A Scan has no host synchronisation: its runs are captured. */
static tb_model *gather_scan_model(int64_t rows, int64_t trips) {
  tb_ir_model *ir = tbt_ir_model(13);
  tb_graph *g = tb_graph_new(ir, NULL, "main");
  const int64_t td[2] = {rows, 2}, sd[1] = {2}, idd[1] = {trips};
  dctl_fill(table, (size_t)(2 * rows), 9);
  tbt_input(g, "s0", TB_DTYPE_F32, 1, sd, NULL);
  tbt_input(g, "ids", TB_DTYPE_I64, 1, idd, NULL);
  tbt_const_f32(g, "table", 2, td, table);
  tb_graph *body = tb_graph_new(ir, g, "body");
  tbt_input(body, "s", TB_DTYPE_F32, 1, sd, NULL);
  tbt_input(body, "id", TB_DTYPE_I64, 0, NULL, NULL);
  tbt_node(body, "Gather", "row", "table,id", "r");
  tbt_node(body, "Add", "acc", "s,r", "s_out");
  tbt_node(body, "Identity", "emit", "r", "r_out");
  tbt_output(body, "s_out");
  tbt_output(body, "r_out");
  int n = tbt_node(g, "Scan", "scan", "s0,ids", "s_final,rs");
  dctl_graph_attr(g, n, "body", body);
  pt_attr_int(g, n, "num_scan_inputs", 1);
  tbt_output(g, "s_final");
  tbt_output(g, "rs");
  return tbt_model_of(ir);
}

/* The scan with ids on p: the CPU's status; cuda:0's the same and, on failure, its sentence the CPU's byte for byte
 * (returned in cpu_sentence), else both outputs the CPU's byte for byte. */
static tb_status run_scan_case(prepared_pair *p, int64_t trips, const int64_t *ids, char cpu_sentence[512]) {
  static const float s0[2] = {0.5f, -1.5f};
  const dctl_input in[2] = {{"s0", TB_DTYPE_F32, 1, {2}, s0}, {"ids", TB_DTYPE_I64, 1, {trips}, ids}};
  tb_tensor *inputs[2] = {dctl_make_input(p->cpu, &in[0]), dctl_make_input(p->cpu, &in[1])};
  const char *names[2] = {"s0", "ids"};
  tb_tensor *want[2] = {NULL, NULL}, *got[2] = {NULL, NULL};
  tb_status cs = tb_prepared_run(p->pc, 2, names, inputs, 2, NULL, want);
  snprintf(cpu_sentence, 512, "%s", cs ? tb_last_error() : "");
  tb_status gs = tb_prepared_run(p->pg, 2, names, inputs, 2, NULL, got);
  if (gs != cs) fail_msg("cuda:0 gives %s (%s), the cpu %s (%s)", tb_status_str(gs), gs ? tb_last_error() : "", tb_status_str(cs), cpu_sentence);
  if (cs != TB_OK) {
    assert_string_equal(tb_last_error(), cpu_sentence);
    assert_null(got[0]);
  } else {
    for (size_t k = 0; k < 2; k++) expect_same(want[k], got[k], k, 0, 0);
  }
  for (size_t k = 0; k < 2; k++) {
    tb_tensor_destroy(want[k]);
    tb_tensor_destroy(got[k]);
    tb_tensor_destroy(inputs[k]);
  }
  return cs;
}

/* A Scan body's bad index in an iteration before its last (the Scan has no host synchronisation per iteration: the
 * check runs at the end of the run) is named as the CPU names it: the first bad iteration's index and position, the
 * CPU's status and sentence byte for byte (the device records the first bad call and position, and its value); a bad
 * index in the last iteration, in two, and good ids before and after (the CPU's values byte for byte). */
static void a_scan_names_the_first_bad_iteration(void **state) {
  (void)state;
  if (!emulator_here()) return;
  tb_model *m = gather_scan_model(6, 5);
  prepared_pair p = prepare_both(m);
  static const struct {
    int64_t ids[5];
    const char *sentence; /* "": good */
  } runs[] = {
      {{0, 5, -6, 2, 1}, ""},
      {{1, 7, 2, -3, 4}, "index 7 (indices element 0) is out of range for axis 0 of size 6"},
      {{1, 2, 3, -9, 4}, "index -9 (indices element 0) is out of range for axis 0 of size 6"},
      {{1, 2, 8, 3, 6}, "index 8 (indices element 0) is out of range for axis 0 of size 6"},
      {{1, 2, 3, 4, 6}, "index 6 (indices element 0) is out of range for axis 0 of size 6"},
      {{5, 4, 3, 2, 1}, ""},
  };
  for (size_t k = 0; k < sizeof runs / sizeof runs[0]; k++) {
    char sentence[512];
    tb_status st = run_scan_case(&p, 5, runs[k].ids, sentence);
    if (!runs[k].sentence[0]) {
      assert_int_equal(st, TB_OK);
      continue;
    }
    assert_int_equal(st, TB_ERR_INVALID_ARGUMENT);
    TB_ASSERT_CONTAINS(sentence, runs[k].sentence);
  }
  release_both(&p);
  tb_model_destroy(m);
}

/* y = Gather(table, ids) + b: a bad id and the Add's launch failing in the same run. The index error is the cause
 * (the Gather wrote 0 for it and what follows computed on that), so its sentence is the run's, as the CPU's (which
 * stops at the Gather); without the bad id the launch failure is the run's error. */
static void the_index_error_wins_over_a_later_failure(void **state) {
  (void)state;
  tb_ir_model *ir = tbt_ir_model(13);
  tb_graph *g = tb_graph_new(ir, NULL, "main");
  const int64_t td[2] = {5, 2}, idd[1] = {3}, yd[2] = {3, 2};
  dctl_fill(table, 10, 7);
  tbt_input(g, "ids", TB_DTYPE_I64, 1, idd, NULL);
  tbt_input(g, "b", TB_DTYPE_F32, 2, yd, NULL);
  tbt_const_f32(g, "table", 2, td, table);
  tbt_node(g, "Gather", "embed", "table,ids", "e");
  tbt_node(g, "Add", "bias", "e,b", "y");
  tbt_output(g, "y");
  tb_model *m = tbt_model_of(ir);
  /* run, not captured: a launch failing in a capture fails it before anything ran on the device (no flag set yet) */
  setenv("TB_GRAPH_CAPTURE", "off", 1);
  prepared_pair p = prepare_both(m);
  unsetenv("TB_GRAPH_CAPTURE");
  static const float b[6] = {1, 2, 3, 4, 5, 6};
  const int64_t bad[3] = {0, -6, 2}, good[3] = {4, -5, 1};
  const char *names[2] = {"ids", "b"};
  for (int k = emulated ? 0 : 1; k < 2; k++) { /* without the emulator the device finds no bad index */
    const dctl_input in[2] = {{"ids", TB_DTYPE_I64, 1, {3}, k ? good : bad}, {"b", TB_DTYPE_F32, 2, {3, 2}, b}};
    tb_tensor *inputs[2] = {dctl_make_input(p.cpu, &in[0]), dctl_make_input(p.cpu, &in[1])}, *want = NULL, *got = NULL;
    char cpu_sentence[512] = "";
    if (!k) {
      assert_int_equal(tb_prepared_run(p.pc, 2, names, inputs, 1, NULL, &want), TB_ERR_INVALID_ARGUMENT);
      snprintf(cpu_sentence, sizeof cpu_sentence, "%s", tb_last_error());
      TB_ASSERT_CONTAINS(cpu_sentence, "node 'embed' (Gather): index -6 (indices element 1) is out of range for axis 0 of size 5");
    }
    launch_reset();
    setenv("FAKE_CUDA_LAUNCH_FAIL_AT", "2", 1); /* the second launch: the Add, after the Gather */
    setenv("FAKE_CUDA_FAIL_CODE", "701", 1); /* too many resources requested: the context stays usable */
    tb_status st = tb_prepared_run(p.pg, 2, names, inputs, 1, NULL, &got);
    unsetenv("FAKE_CUDA_LAUNCH_FAIL_AT");
    unsetenv("FAKE_CUDA_FAIL_CODE");
    assert_null(got);
    if (!k) {
      assert_int_equal(st, TB_ERR_INVALID_ARGUMENT);
      assert_string_equal(tb_last_error(), cpu_sentence);
    } else {
      assert_int_equal(st, TB_ERR_DRIVER);
      TB_ASSERT_CONTAINS(tb_last_error(), "tb_cu_add_f32");
    }
    for (int i = 0; i < 2; i++) tb_tensor_destroy(inputs[i]);
  }
  release_both(&p);
  tb_model_destroy(m);
}

/* Y_h = RNN(X [3, 2, 2], W, R, , L) with sequence_lens L a graph input of `lens_dtype` (hidden 2). */
static tb_model *rnn_model(tb_dtype lens_dtype, bool lstm) {
  tb_ir_model *ir = tbt_ir_model(14);
  tb_graph *g = tb_graph_new(ir, NULL, "main");
  const int64_t xd[3] = {3, 2, 2}, ld[1] = {2}, gh = lstm ? 8 : 2;
  tbt_input(g, "X", TB_DTYPE_F32, 3, xd, NULL);
  tbt_input(g, "L", lens_dtype, 1, ld, NULL);
  pt_const_rand(g, "W", 3, (const int64_t[]){1, gh, 2}, 11, -0.5f, 0.5f);
  pt_const_rand(g, "R", 3, (const int64_t[]){1, gh, 2}, 12, -0.5f, 0.5f);
  int n = tbt_node(g, lstm ? "LSTM" : "RNN", "rnn", "X,W,R,,L", lstm ? ",Y_h," : ",Y_h");
  pt_attr_int(g, n, "hidden_size", 2);
  tbt_output(g, "Y_h");
  return tbt_model_of(ir);
}

/* sequence_lens out of 0..3 (int32 and int64, too long and negative, RNN and LSTM): the CPU's status (TB_ERR_MODEL)
 * and sentence from cuda:0, byte for byte, at the end of the run (the kernel clamps and sets the node's flag); good
 * lengths (a zero among them) give the CPU's values, before and after. */
static void sequence_lens_out_of_range_refused_as_on_the_cpu(void **state) {
  (void)state;
  if (!emulator_here()) return;
  static float x[12];
  dctl_fill(x, 12, 5);
  const int32_t good32[2] = {3, 0}, bad32[2] = {2, 4};
  const int64_t good64[2] = {1, 3}, bad64[2] = {-1, 2};
  const struct {
    tb_dtype dtype;
    bool lstm;
    const void *good, *bad;
    const char *sentence;
  } cases[3] = {{TB_DTYPE_I32, false, good32, bad32, "node 'rnn' (RNN): sequence_lens[1] is 4, outside 0..3"},
                {TB_DTYPE_I64, false, good64, bad64, "node 'rnn' (RNN): sequence_lens[0] is -1, outside 0..3"},
                {TB_DTYPE_I32, true, good32, bad32, "node 'rnn' (LSTM): sequence_lens[1] is 4, outside 0..3"}};
  for (int c = 0; c < 3; c++) {
    tb_model *m = rnn_model(cases[c].dtype, cases[c].lstm);
    prepared_pair p = prepare_both(m);
    const char *names[2] = {"X", "L"};
    for (int run = 0; run < 3; run++) {
      const dctl_input in[2] = {{"X", TB_DTYPE_F32, 3, {3, 2, 2}, x}, {"L", cases[c].dtype, 1, {2}, run == 1 ? cases[c].bad : cases[c].good}};
      tb_tensor *inputs[2] = {dctl_make_input(p.cpu, &in[0]), dctl_make_input(p.cpu, &in[1])}, *want = NULL, *got = NULL;
      if (run == 1) {
        assert_int_equal(tb_prepared_run(p.pc, 2, names, inputs, 1, NULL, &want), TB_ERR_MODEL);
        char cpu_sentence[512];
        snprintf(cpu_sentence, sizeof cpu_sentence, "%s", tb_last_error());
        TB_ASSERT_CONTAINS(cpu_sentence, cases[c].sentence);
        assert_int_equal(tb_prepared_run(p.pg, 2, names, inputs, 1, NULL, &got), TB_ERR_MODEL);
        assert_string_equal(tb_last_error(), cpu_sentence);
        assert_null(got);
      } else {
        TB_ASSERT_OK(tb_prepared_run(p.pc, 2, names, inputs, 1, NULL, &want));
        TB_ASSERT_OK(tb_prepared_run(p.pg, 2, names, inputs, 1, NULL, &got));
        expect_same(want, got, 0, 1e-6, 1e-5);
      }
      tb_tensor_destroy(want);
      tb_tensor_destroy(got);
      for (int i = 0; i < 2; i++) tb_tensor_destroy(inputs[i]);
    }
    release_both(&p);
    tb_model_destroy(m);
  }
}

/* One index node: data x [4, 3] float, indices i (dtype, shape), updates u (a scatter's) of the indices' shape or
 * [rows, 3] (ScatterND); the indices with a bad value and with good ones. */
typedef struct index_case {
  const char *op, *reduction;
  int64_t axis; /* -1: no axis attribute */
  tb_dtype idt;
  size_t ndim;
  int64_t dims[2];
  int64_t udims[2]; /* the updates' shape ([1] == 0: rank 1); [0] == 0: no updates */
  int64_t bad[8], good[8];
  const char *sentence; /* what the CPU says of the bad indices (checked, then compared with cuda:0's) */
  const char *kernel;   /* the kernel cuda:0 launches for it, once per run */
} index_case;

static tb_model *index_model(const index_case *c) {
  tb_ir_model *ir = tbt_ir_model(18);
  tb_graph *g = tb_graph_new(ir, NULL, "main");
  tbt_input(g, "x", TB_DTYPE_F32, 2, (const int64_t[]){4, 3}, NULL);
  tbt_input(g, "i", c->idt, c->ndim, c->dims, NULL);
  if (c->udims[0]) tbt_input(g, "u", TB_DTYPE_F32, c->udims[1] ? 2 : 1, c->udims, NULL);
  int n = tbt_node(g, c->op, "ix", c->udims[0] ? "x,i,u" : "x,i", "y");
  if (c->axis >= 0) pt_attr_int(g, n, "axis", c->axis);
  if (c->reduction) pt_attr_string(g, n, "reduction", c->reduction);
  tbt_output(g, "y");
  return tbt_model_of(ir);
}

/* Runs c with `indices` on both prepared models: the CPU's status; cuda:0's the same and, on failure, its
 * sentence the CPU's byte for byte, else its values; kernel_only: cuda:0's run launches c's kernel once (nothing
 * else checked: it runs without the emulator too). */
static void run_index_case(const index_case *c, prepared_pair *p, const int64_t *indices, bool bad, bool kernel_only) {
  static float x[12], u[12];
  dctl_fill(x, 12, 21);
  dctl_fill(u, 12, 22);
  int32_t i32[8];
  size_t n = (size_t)(c->dims[0] * (c->ndim > 1 ? c->dims[1] : 1));
  for (size_t k = 0; k < n; k++) i32[k] = (int32_t)indices[k];
  const dctl_input in[3] = {{"x", TB_DTYPE_F32, 2, {4, 3}, x},
                            {"i", c->idt, c->ndim, {c->dims[0], c->dims[1]}, c->idt == TB_DTYPE_I32 ? (const void *)i32 : indices},
                            {"u", TB_DTYPE_F32, c->udims[1] ? 2 : 1, {c->udims[0], c->udims[1]}, u}};
  size_t n_in = c->udims[0] ? 3 : 2;
  const char *names[3] = {"x", "i", "u"};
  tb_tensor *inputs[3] = {NULL}, *want = NULL, *got = NULL;
  for (size_t k = 0; k < n_in; k++) inputs[k] = dctl_make_input(p->cpu, &in[k]);
  tb_status cs = tb_prepared_run(p->pc, n_in, names, inputs, 1, NULL, &want);
  char cpu_sentence[512];
  snprintf(cpu_sentence, sizeof cpu_sentence, "%s", cs ? tb_last_error() : "");
  launch_reset();
  tb_status gs = tb_prepared_run(p->pg, n_in, names, inputs, 1, NULL, &got);
  if (kernel_only) { /* the kernel choice only (the values need not be computed): one launch of the case's kernel */
    TB_ASSERT_OK(gs);
    if (launches_of(c->kernel) != 1) fail_msg("%s: %d launches of %s, not 1", c->op, launches_of(c->kernel), c->kernel);
    tb_tensor_destroy(want);
    tb_tensor_destroy(got);
    for (size_t k = 0; k < n_in; k++) tb_tensor_destroy(inputs[k]);
    return;
  }
  if (gs != cs) fail_msg("%s: cuda:0 gives %s (%s), the cpu %s (%s)", c->op, tb_status_str(gs), gs ? tb_last_error() : "", tb_status_str(cs), cpu_sentence);
  if (bad) {
    assert_int_equal(cs, TB_ERR_INVALID_ARGUMENT);
    TB_ASSERT_CONTAINS(cpu_sentence, c->sentence);
    assert_string_equal(tb_last_error(), cpu_sentence);
    assert_null(got);
  } else {
    expect_same(want, got, 0, 0, 0);
  }
  tb_tensor_destroy(want);
  tb_tensor_destroy(got);
  for (size_t k = 0; k < n_in; k++) tb_tensor_destroy(inputs[k]);
}

/* GatherElements, ScatterElements (without and with a reduction), ScatterND (the same) and GatherND with an index
 * out of range, int64 and int32: the CPU's status and sentence from cuda:0 (the device's flag, named at the end of
 * the run); with good indices (negatives among them), before and after, the CPU's values byte for byte; the runs
 * captured as one CUDA graph and replayed (before: the indices read back per run turned graphs off). */
static void index_kernels_check_their_indices_on_the_device(void **state) {
  (void)state;
  static const index_case cases[] = {
      {"GatherElements", NULL, 1, TB_DTYPE_I64, 2, {4, 2}, {0}, {0, 2, 1, 3, 0, 0, 1, 1}, {0, 2, 1, -3, 0, 0, 1, 1},
       "node 'ix' (GatherElements): index 3 (indices element 3) is out of range for axis 1 of size 3", "tb_cu_dm_gather_elements_b4"},
      {"GatherElements", NULL, 0, TB_DTYPE_I32, 2, {2, 3}, {0}, {0, 1, 2, 3, -5, 0}, {0, 1, 2, 3, -4, 0},
       "node 'ix' (GatherElements): index -5 (indices element 4) is out of range for axis 0 of size 4", "tb_cu_dm_gather_elements_b4"},
      {"ScatterElements", NULL, 0, TB_DTYPE_I64, 2, {2, 3}, {2, 3}, {0, 1, 2, 3, 4, 1}, {0, 1, 2, 3, -1, 1},
       "node 'ix' (ScatterElements): index 4 (indices element 4) is out of range for axis 0 of size 4", "tb_cu_dm_scatter_elements_b4"},
      {"ScatterElements", "add", 1, TB_DTYPE_I32, 2, {2, 2}, {2, 2}, {0, 0, 5, 1}, {0, 0, 2, 1},
       "node 'ix' (ScatterElements): index 5 (indices element 2) is out of range for axis 1 of size 3", "tb_cu_dm_scatter_elements_reduce"},
      {"ScatterND", NULL, -1, TB_DTYPE_I64, 2, {2, 1}, {2, 3}, {1, 4}, {1, -4},
       "node 'ix' (ScatterND): index 4 (indices element 1) is out of range for axis 0 of size 4", "tb_cu_dm_scatter_nd_b4"},
      {"ScatterND", "mul", -1, TB_DTYPE_I64, 2, {2, 2}, {2, 0}, {1, 2, 0, 3}, {1, 2, 0, -3},
       "node 'ix' (ScatterND): index 3 (indices element 3) is out of range for axis 1 of size 3", "tb_cu_dm_scatter_nd_mark"},
      {"GatherND", NULL, -1, TB_DTYPE_I64, 2, {2, 2}, {0}, {1, 2, 0, -4}, {1, 2, 0, -3},
       "node 'ix' (GatherND): index -4 (indices element 3) is out of range for axis 1 of size 3", "tb_cu_dm_gather_nd_b4"},
  };
  for (size_t k = 0; k < sizeof cases / sizeof cases[0]; k++) {
    tb_model *m = index_model(&cases[k]);
    setenv("TB_GRAPH_CAPTURE", "off", 1); /* launched one by one: the fake's launch records name the kernel */
    prepared_pair q = prepare_both(m);
    unsetenv("TB_GRAPH_CAPTURE");
    run_index_case(&cases[k], &q, cases[k].good, false, true);
    release_both(&q);
    if (!emulated) {
      tb_model_destroy(m);
      continue;
    }
    prepared_pair p = prepare_both(m);
    run_index_case(&cases[k], &p, cases[k].good, false, false);
    run_index_case(&cases[k], &p, cases[k].bad, true, false);
    run_index_case(&cases[k], &p, cases[k].good, false, false); /* the flag was reset */
    /* no read of the indices in the middle of the run: the model's runs are a captured graph, replayed */
    const char *why = NULL;
    if (!tb_prepared_graph_capture(p.pg, &why)) fail_msg("%s: no graph replay: %s", cases[k].op, why);
    release_both(&p);
    tb_model_destroy(m);
  }
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test_setup_teardown(a_loop_keeps_one_check_per_node, setup, teardown),
      cmocka_unit_test_setup_teardown(a_loop_body_gather_launches_its_kernel_per_iteration, setup, teardown),
      cmocka_unit_test_setup_teardown(a_bad_index_stops_the_loop_at_its_iteration, setup, teardown),
      cmocka_unit_test_setup_teardown(a_loop_reads_one_word_per_iteration, setup, teardown),
      cmocka_unit_test_setup_teardown(a_scan_names_the_first_bad_iteration, setup, teardown),
      cmocka_unit_test_setup_teardown(the_index_error_wins_over_a_later_failure, setup, teardown),
      cmocka_unit_test_setup_teardown(sequence_lens_out_of_range_refused_as_on_the_cpu, setup, teardown),
      cmocka_unit_test_setup_teardown(index_kernels_check_their_indices_on_the_device, setup, teardown),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
