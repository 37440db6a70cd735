/* Control flow on cuda:0 (backend/control/, docs/cuda.md "Control flow"): If, Loop and Scan models on the fake
 * cuda:0 of the recorded 8x H100 node, the kernels' values computed by their own source on the emulated grid
 * (tests/cuda_emu) and compared with the CPU backend at O0 (floats within 1e-6 + 1e-5 |cpu|). Each model checks
 * that every node of the graph ran on the device and, through the profile, that every node of the bodies did
 * too (none fell back to the CPU); that outer weights are uploaded once, not per iteration; that graph replay is
 * ruled out with the host synchronisation named; that device_only refuses a body node without a CUDA kernel with
 * its name; and that a launch failing inside a body is the run's status with the body node named, nothing
 * leaked. Without the emulator (no C++ compiler) the value tests print why and check nothing. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "backend/cuda/cuda_module.h"
#include "core/error.h"
#include "pass_test.h"
#include "test_cuda_util.h"
#include "test_engine_util.h"
#include "test_util.h"

static char cache_dir[64];

/* Host-to-device copies since the call log's reset (staged or direct). */
static int uploads_since_reset(void) {
  int (*calls)(const char *) = (int (*)(const char *))fake_symbol("fake_cuda_calls");
  return calls("cuMemcpyHtoDAsync_v2") + calls("cuMemcpyHtoD_v2");
}
static void log_reset(void) { ((void (*)(void))fake_symbol("fake_cuda_call_log_reset"))(); }

static bool emulator_here(void) {
  if (access(tbt_fake("cuda_emu"), R_OK) == 0) return true;
  print_message("no %s (no C++ compiler at configure): the values are not checked\n", tbt_fake("cuda_emu"));
  return false;
}

static int setup(void **state) {
  tbt_setup_clean_nvidia(state);
  static const char *const vars[] = {"FAKE_CUDA_FAIL", "FAKE_CUDA_FAIL_CODE", "FAKE_CUDA_CC", "FAKE_CUDA_LAUNCH_FAIL_AT",
                                     "FAKE_CUDA_EMULATE", "FAKE_CUDA_MEM_CAPACITY", "FAKE_NVRTC_FAIL", "TB_NVRTC_LIB",
                                     "TB_CUDA_GEMM", "TB_GRAPH_CAPTURE"};
  for (size_t i = 0; i < sizeof vars / sizeof vars[0]; i++) unsetenv(vars[i]);
  tbt_use_fixture("h100x8");
  tbt_use_nvidia_fakes();
  setenv("TB_NVRTC_LIB", tbt_fake("fake_nvrtc"), 1);
  setenv("TB_CUDA_GEMM", "own", 1); /* a real cuBLASLt is not loaded over the fake driver */
  if (access(tbt_fake("cuda_emu"), R_OK) == 0) setenv("FAKE_CUDA_EMULATE", tbt_fake("cuda_emu"), 1);
  tcu_cache_make(cache_dir, "tb_cuctl");
  tb_cuda_module_test_source(NULL);
  return 0;
}

static int teardown(void **state) {
  (void)state;
  tcu_cache_remove(cache_dir);
  assert_int_equal(live_allocations(), 0);
  return 0;
}

typedef struct feed {
  const char *name;
  tb_dtype dtype;
  size_t ndim;
  int64_t dims[TB_MAX_DIMS];
  const void *data;
} feed;

static tb_tensor *make_input(tb_backend *cpu, const feed *f) {
  tb_tensor *t = NULL;
  TB_ASSERT_OK(tb_tensor_create(cpu, f->dtype, f->ndim, f->dims, &t));
  size_t bytes = tb_tensor_nbytes(t);
  if (bytes) TB_ASSERT_OK(tb_tensor_copy_from_host(t, f->data, bytes));
  return t;
}

static void expect_same(const tb_tensor *want, const tb_tensor *got, size_t k) {
  assert_int_equal(tb_tensor_dtype(got), tb_tensor_dtype(want));
  assert_int_equal(tb_tensor_ndim(got), tb_tensor_ndim(want));
  for (size_t d = 0; d < tb_tensor_ndim(want); d++) assert_int_equal(tb_tensor_shape(got)[d], tb_tensor_shape(want)[d]);
  size_t n = (size_t)tb_tensor_numel(want), bytes = tb_tensor_nbytes(want);
  unsigned char *a = malloc(bytes + 1), *b = malloc(bytes + 1);
  TB_ASSERT_OK(tb_tensor_copy_to_host(want, a, bytes));
  TB_ASSERT_OK(tb_tensor_copy_to_host(got, b, bytes));
  if (tb_tensor_dtype(want) == TB_DTYPE_F32) {
    for (size_t i = 0; i < n; i++) {
      float x, y;
      memcpy(&x, a + 4 * i, 4);
      memcpy(&y, b + 4 * i, 4);
      if (!(fabs((double)x - (double)y) <= 1e-6 + 1e-5 * fabs((double)x)))
        fail_msg("output %zu element %zu: cuda:0 (emulated) %.9g, cpu %.9g", k, i, (double)y, (double)x);
    }
  } else if (memcmp(a, b, bytes) != 0) {
    fail_msg("output %zu (%s) differs from the cpu's", k, tb_dtype_name(tb_tensor_dtype(want)));
  }
  free(a);
  free(b);
}

/* How many profile entries inside subgraphs ran on the device and on the CPU. */
static void body_placements(tb_prepared *p, size_t *on_device, size_t *on_cpu) {
  size_t count = 0;
  const tb_node_profile *entries = NULL;
  TB_ASSERT_OK(tb_prepared_profile(p, &count, &entries));
  *on_device = *on_cpu = 0;
  for (size_t i = 0; i < count; i++) {
    if (!entries[i].graph[0] || entries[i].runs == 0) continue;
    if (strcmp(entries[i].placement, "cuda") == 0) ++*on_device;
    else {
      print_message("body node %s (%s) in %s ran on %s\n", entries[i].name, entries[i].op_type, entries[i].graph,
                    entries[i].placement);
      ++*on_cpu;
    }
  }
}

/* Run `model` on the CPU at O0 and on the emulated cuda:0 at `level` for each of `runs` input sets; compare every
 * output; every node of the graph on the device, and `body_nodes` body nodes run (profiled) on it, none on the CPU. */
static void compare(tb_model *model, size_t runs, size_t n_in, const feed *in, size_t n_out, tb_opt_level level,
                    size_t body_nodes) {
  tb_backend *cpu = NULL, *cuda = open_cuda0();
  TB_ASSERT_OK(tb_backend_create("cpu", &cpu));
  tb_prepare_options o = {.size = sizeof o, .level = TB_LEVEL_O0};
  tb_prepared *pc = NULL, *pg = NULL;
  const tb_prepare_result *rg = NULL;
  TB_ASSERT_OK(tb_model_prepare(model, cpu, &o, &pc, NULL));
  o.level = level;
  TB_ASSERT_OK(tb_model_prepare(model, cuda, &o, &pg, &rg));
  for (size_t i = 0; i < rg->cpu_fallback_nodes; i++) print_message("fallback: %s\n", rg->fallback_ops[i]);
  assert_int_equal(rg->cpu_fallback_nodes, 0);
  assert_int_equal(rg->device_nodes, rg->node_count);
  const char *why = NULL;
  assert_false(tb_prepared_graph_capture(pg, &why));
  TB_ASSERT_CONTAINS(why, "reads its condition or trip count on the host");
  TB_ASSERT_OK(tb_prepared_set_profiling(pg, true));
  for (size_t r = 0; r < runs; r++) {
    tb_tensor *inputs[8] = {NULL}, *want[8] = {NULL}, *got[8] = {NULL};
    const char *names[8];
    assert_true(n_in <= 8 && n_out <= 8);
    for (size_t i = 0; i < n_in; i++) {
      inputs[i] = make_input(cpu, &in[r * n_in + i]);
      names[i] = in[r * n_in + i].name;
    }
    TB_ASSERT_OK(tb_prepared_run(pc, n_in, names, inputs, n_out, NULL, want));
    tb_status st = tb_prepared_run(pg, n_in, names, inputs, n_out, NULL, got);
    if (st != TB_OK) fail_msg("the cuda:0 run %zu failed: %s: %s", r, tb_status_str(st), tb_last_error());
    for (size_t k = 0; k < n_out; k++) {
      expect_same(want[k], got[k], k);
      tb_tensor_destroy(want[k]);
      tb_tensor_destroy(got[k]);
    }
    for (size_t i = 0; i < n_in; i++) tb_tensor_destroy(inputs[i]);
  }
  size_t dev = 0, host = 0;
  body_placements(pg, &dev, &host);
  assert_int_equal(host, 0);
  assert_int_equal(dev, body_nodes);
  tb_prepared_destroy(pc);
  tb_prepared_destroy(pg);
  tb_backend_destroy(cuda);
  tb_backend_destroy(cpu);
}

static void fill(float *x, size_t n, unsigned seed) {
  for (size_t i = 0; i < n; i++) {
    seed = seed * 1103515245u + 12345u;
    x[i] = (float)((seed >> 8) & 0xffff) / 8192.0f - 4.0f; /* [-4, 4) */
  }
}

static void graph_attr(tb_graph *g, int node, const char *name, tb_graph *sub) { pt_attr(g, node, name, TB_ATTR_GRAPH)->g = sub; }

/* ---- If ------------------------------------------------------------------------------------------------ */

/* y = If(cond, then: Relu(x + x) * w, else: Neg(x + x) - w) with w an outer weight [3, 5] and x [3, 5]. */
static tb_model *if_model(void) {
  tb_ir_model *ir = tbt_ir_model(13);
  tb_graph *g = tb_graph_new(ir, NULL, "main");
  const int64_t d[2] = {3, 5};
  static float w[15];
  fill(w, 15, 7);
  tbt_input(g, "x", TB_DTYPE_F32, 2, d, NULL);
  tbt_input(g, "cond", TB_DTYPE_BOOL, 0, NULL, NULL);
  tbt_const_f32(g, "w", 2, d, w);
  tbt_node(g, "Add", "double", "x,x", "xx");
  tb_graph *then_g = tb_graph_new(ir, g, "then");
  tbt_node(then_g, "Relu", "t_relu", "xx", "t_r");
  tbt_node(then_g, "Mul", "t_mul", "t_r,w", "t_out");
  tbt_output(then_g, "t_out");
  tb_graph *else_g = tb_graph_new(ir, g, "else");
  tbt_node(else_g, "Neg", "e_neg", "xx", "e_n");
  tbt_node(else_g, "Sub", "e_sub", "e_n,w", "e_out");
  tbt_output(else_g, "e_out");
  int n = tbt_node(g, "If", "if0", "cond", "y");
  graph_attr(g, n, "then_branch", then_g);
  graph_attr(g, n, "else_branch", else_g);
  tbt_output(g, "y");
  return tbt_model_of(ir);
}

static void if_runs_its_branch_on_the_device(void **state) {
  (void)state;
  if (!emulator_here()) return;
  static float x[15];
  fill(x, 15, 3);
  static const uint8_t yes = 1, no = 0;
  const feed in[4] = {{"x", TB_DTYPE_F32, 2, {3, 5}, x}, {"cond", TB_DTYPE_BOOL, 0, {0}, &yes},
                      {"x", TB_DTYPE_F32, 2, {3, 5}, x}, {"cond", TB_DTYPE_BOOL, 0, {0}, &no}};
  tb_model *m = if_model();
  compare(m, 2, 2, in, 1, TB_LEVEL_O0, 4); /* both branches' two nodes, each run once */
  tb_model_destroy(m);
}

/* ---- Loop ---------------------------------------------------------------------------------------------- */

/* (s_final, scan) = Loop(M, cond, s0) with body (i, c, s) -> (c, s + w + float(i), (s + w) * s): w an outer weight
 * [2, 3], the iteration number cast to float on the device, the condition passed through. */
static tb_model *loop_model(void) {
  tb_ir_model *ir = tbt_ir_model(13);
  tb_graph *g = tb_graph_new(ir, NULL, "main");
  const int64_t d[2] = {2, 3};
  static float w[6];
  fill(w, 6, 11);
  tbt_input(g, "M", TB_DTYPE_I64, 0, NULL, NULL);
  tbt_input(g, "cond", TB_DTYPE_BOOL, 0, NULL, NULL);
  tbt_input(g, "s0", TB_DTYPE_F32, 2, d, NULL);
  tbt_const_f32(g, "w", 2, d, w);
  tb_graph *body = tb_graph_new(ir, g, "body");
  tbt_input(body, "i", TB_DTYPE_I64, 0, NULL, NULL);
  tbt_input(body, "c", TB_DTYPE_BOOL, 0, NULL, NULL);
  tbt_input(body, "s", TB_DTYPE_F32, 2, d, NULL);
  tbt_node(body, "Identity", "keep", "c", "c_out");
  tbt_node(body, "Add", "add_w", "s,w", "sw");
  int cast = tbt_node(body, "Cast", "cast_i", "i", "fi");
  pt_attr_int(body, cast, "to", 1);
  tbt_node(body, "Add", "add_i", "sw,fi", "s_out");
  tbt_node(body, "Mul", "square", "sw,s", "scan_out");
  tbt_output(body, "c_out");
  tbt_output(body, "s_out");
  tbt_output(body, "scan_out");
  int n = tbt_node(g, "Loop", "loop", "M,cond,s0", "s_final,scan");
  graph_attr(g, n, "body", body);
  tbt_output(g, "s_final");
  tbt_output(g, "scan");
  return tbt_model_of(ir);
}

static void loop_keeps_its_values_on_the_device(void **state) {
  (void)state;
  if (!emulator_here()) return;
  static float s0[6];
  fill(s0, 6, 5);
  static const uint8_t yes = 1;
  static const int64_t four = 4, one = 1;
  const feed in[6] = {{"M", TB_DTYPE_I64, 0, {0}, &four}, {"cond", TB_DTYPE_BOOL, 0, {0}, &yes}, {"s0", TB_DTYPE_F32, 2, {2, 3}, s0},
                      {"M", TB_DTYPE_I64, 0, {0}, &one},  {"cond", TB_DTYPE_BOOL, 0, {0}, &yes}, {"s0", TB_DTYPE_F32, 2, {2, 3}, s0}};
  tb_model *m = loop_model();
  compare(m, 2, 3, in, 2, TB_LEVEL_O0, 5);
  compare(m, 1, 3, in, 2, TB_LEVEL_O2, 5); /* O2's passes leave the body's nodes on the device too */
  tb_model_destroy(m);
}

/* The outer weight is uploaded once per prepared model, not at every iteration: the host-to-device copies of a
 * run of 4 iterations and one of 1 differ only by the per-iteration scalars (the iteration number and the
 * condition the kernel writes for the body). */
static void loop_uploads_outer_weights_once(void **state) {
  (void)state;
  tb_model *m = loop_model();
  tb_backend *cpu = NULL, *cuda = open_cuda0();
  TB_ASSERT_OK(tb_backend_create("cpu", &cpu));
  tb_prepare_options o = {.size = sizeof o, .level = TB_LEVEL_O0};
  tb_prepared *p = NULL;
  TB_ASSERT_OK(tb_model_prepare(m, cuda, &o, &p, NULL));
  float s0[6] = {0};
  uint8_t yes = 1;
  int64_t trips[2] = {1, 4};
  int uploads[2];
  for (int r = 0; r < 2; r++) {
    const feed in[3] = {{"M", TB_DTYPE_I64, 0, {0}, &trips[r]}, {"cond", TB_DTYPE_BOOL, 0, {0}, &yes}, {"s0", TB_DTYPE_F32, 2, {2, 3}, s0}};
    tb_tensor *inputs[3], *out[2] = {NULL};
    const char *names[3] = {"M", "cond", "s0"};
    for (int i = 0; i < 3; i++) inputs[i] = make_input(cpu, &in[i]);
    /* a first run places the body and copies the weight; count from the second */
    TB_ASSERT_OK(tb_prepared_run(p, 3, names, inputs, 2, NULL, out));
    for (int k = 0; k < 2; k++) tb_tensor_destroy(out[k]);
    log_reset();
    TB_ASSERT_OK(tb_prepared_run(p, 3, names, inputs, 2, NULL, out));
    uploads[r] = uploads_since_reset();
    for (int k = 0; k < 2; k++) tb_tensor_destroy(out[k]);
    for (int i = 0; i < 3; i++) tb_tensor_destroy(inputs[i]);
  }
  /* 3 more iterations: each uploads its iteration number and condition, nothing else */
  assert_int_equal(uploads[1] - uploads[0], 3 * 2);
  tb_prepared_destroy(p);
  tb_backend_destroy(cuda);
  tb_backend_destroy(cpu);
  tb_model_destroy(m);
}

/* ---- Scan ---------------------------------------------------------------------------------------------- */

/* (h_final, ys) = Scan(h0, xs, zs) with body (h, x, z) -> (h + x * z, (h + x * z) * x): xs [5, 3] scanned along
 * axis 0, zs [3, 5] along axis 1 in reverse (a strided slice: copied as runs on the device), ys stacked along
 * axis 1 ([3, 5]: strided slots). */
static tb_model *scan_model(void) {
  tb_ir_model *ir = tbt_ir_model(11);
  tb_graph *g = tb_graph_new(ir, NULL, "main");
  const int64_t h[1] = {3}, xd[2] = {5, 3}, zd[2] = {3, 5};
  tbt_input(g, "h0", TB_DTYPE_F32, 1, h, NULL);
  tbt_input(g, "xs", TB_DTYPE_F32, 2, xd, NULL);
  tbt_input(g, "zs", TB_DTYPE_F32, 2, zd, NULL);
  tb_graph *body = tb_graph_new(ir, g, "body");
  tbt_input(body, "h", TB_DTYPE_F32, 1, h, NULL);
  tbt_input(body, "x", TB_DTYPE_F32, 1, h, NULL);
  tbt_input(body, "z", TB_DTYPE_F32, 1, h, NULL);
  tbt_node(body, "Mul", "xz", "x,z", "p");
  tbt_node(body, "Add", "acc", "h,p", "h_out");
  tbt_node(body, "Mul", "emit", "h_out,x", "y");
  tbt_output(body, "h_out");
  tbt_output(body, "y");
  int n = tbt_node(g, "Scan", "scan", "h0,xs,zs", "h_final,ys");
  graph_attr(g, n, "body", body);
  pt_attr_int(g, n, "num_scan_inputs", 2);
  pt_attr_ints(g, n, "scan_input_axes", 2, (const int64_t[]){0, 1});
  pt_attr_ints(g, n, "scan_input_directions", 2, (const int64_t[]){0, 1});
  pt_attr_ints(g, n, "scan_output_axes", 1, (const int64_t[]){1});
  tbt_output(g, "h_final");
  tbt_output(g, "ys");
  return tbt_model_of(ir);
}

static void scan_slices_on_the_device(void **state) {
  (void)state;
  if (!emulator_here()) return;
  static float h0[3], xs[15], zs[15];
  fill(h0, 3, 1);
  fill(xs, 15, 2);
  fill(zs, 15, 3);
  const feed in[3] = {{"h0", TB_DTYPE_F32, 1, {3}, h0}, {"xs", TB_DTYPE_F32, 2, {5, 3}, xs}, {"zs", TB_DTYPE_F32, 2, {3, 5}, zs}};
  tb_model *m = scan_model();
  compare(m, 1, 3, in, 2, TB_LEVEL_O0, 3);
  tb_model_destroy(m);
}

/* ---- device_only and errors ---------------------------------------------------------------------------- */

/* A body node without a CUDA kernel (Loop's body with a float16 Relu: 10_elementwise.cu takes float32 only; the
 * math kernels take float16 since cudahalf): device_only refuses it with its name. */
static void device_only_names_a_body_node(void **state) {
  (void)state;
  tb_ir_model *ir = tbt_ir_model(13);
  tb_graph *g = tb_graph_new(ir, NULL, "main");
  const int64_t d[1] = {4};
  tbt_input(g, "M", TB_DTYPE_I64, 0, NULL, NULL);
  tbt_input(g, "s0", TB_DTYPE_F16, 1, d, NULL);
  tb_graph *body = tb_graph_new(ir, g, "body");
  tbt_input(body, "i", TB_DTYPE_I64, 0, NULL, NULL);
  tbt_input(body, "c", TB_DTYPE_BOOL, 0, NULL, NULL);
  tbt_input(body, "s", TB_DTYPE_F16, 1, d, NULL);
  tbt_node(body, "Identity", "keep", "c", "c_out");
  tbt_node(body, "Relu", "relu", "s", "s_out");
  tbt_output(body, "c_out");
  tbt_output(body, "s_out");
  int n = tbt_node(g, "Loop", "loop", "M,,s0", "s_final");
  graph_attr(g, n, "body", body);
  tbt_output(g, "s_final");
  tb_model *m = tbt_model_of(ir);
  tb_backend *cpu = NULL, *cuda = open_cuda0();
  TB_ASSERT_OK(tb_backend_create("cpu", &cpu));
  tb_prepare_options o = {.size = sizeof o, .level = TB_LEVEL_O0, .device_only = true};
  tb_prepared *p = NULL;
  TB_ASSERT_OK(tb_model_prepare(m, cuda, &o, &p, NULL)); /* the Loop itself runs on cuda:0 */
  int64_t two = 2;
  const float s0[4] = {0.5f, -1, 2, -3};
  uint16_t s0_half[4];
  TB_ASSERT_OK(tb_convert(TB_DTYPE_F32, s0, TB_DTYPE_F16, s0_half, 4, true));
  const feed in[2] = {{"M", TB_DTYPE_I64, 0, {0}, &two}, {"s0", TB_DTYPE_F16, 1, {4}, s0_half}};
  tb_tensor *inputs[2] = {make_input(cpu, &in[0]), make_input(cpu, &in[1])}, *out = NULL;
  const char *names[2] = {"M", "s0"};
  assert_int_equal(tb_prepared_run(p, 2, names, inputs, 1, NULL, &out), TB_ERR_UNSUPPORTED);
  TB_ASSERT_CONTAINS(tb_last_error(), "device_only: node 'relu' (Relu) in the body 'body' would fall back to the CPU from cuda:0");
  assert_null(out);
  tb_prepared_destroy(p);
  /* without device_only the Relu runs on the CPU and the rest of the body on cuda:0; values as the CPU's */
  o.device_only = false;
  TB_ASSERT_OK(tb_model_prepare(m, cuda, &o, &p, NULL));
  TB_ASSERT_OK(tb_prepared_run(p, 2, names, inputs, 1, NULL, &out));
  uint16_t got_half[4];
  float got[4];
  TB_ASSERT_OK(tb_tensor_copy_to_host(out, got_half, sizeof got_half));
  TB_ASSERT_OK(tb_convert(TB_DTYPE_F16, got_half, TB_DTYPE_F32, got, 4, true));
  for (int k = 0; k < 4; k++) assert_true(got[k] == (s0[k] > 0 ? s0[k] : 0.0f)); /* exact in float16 */
  tb_tensor_destroy(out);
  for (int i = 0; i < 2; i++) tb_tensor_destroy(inputs[i]);
  tb_prepared_destroy(p);
  tb_backend_destroy(cuda);
  tb_backend_destroy(cpu);
  tb_model_destroy(m);
}

/* A launch failing inside the body (700): the run's status, the body's node named, nothing leaked; then a good run. */
static void a_launch_failing_in_a_body(void **state) {
  (void)state;
  tb_model *m = loop_model();
  tb_backend *cpu = NULL, *cuda = open_cuda0();
  TB_ASSERT_OK(tb_backend_create("cpu", &cpu));
  tb_prepare_options o = {.size = sizeof o, .level = TB_LEVEL_O0};
  tb_prepared *p = NULL;
  TB_ASSERT_OK(tb_model_prepare(m, cuda, &o, &p, NULL));
  float s0[6] = {0};
  uint8_t yes = 1;
  int64_t three = 3;
  const feed in[3] = {{"M", TB_DTYPE_I64, 0, {0}, &three}, {"cond", TB_DTYPE_BOOL, 0, {0}, &yes}, {"s0", TB_DTYPE_F32, 2, {2, 3}, s0}};
  tb_tensor *inputs[3], *out[2] = {NULL};
  const char *names[3] = {"M", "cond", "s0"};
  for (int i = 0; i < 3; i++) inputs[i] = make_input(cpu, &in[i]);
  setenv("FAKE_CUDA_LAUNCH_FAIL_AT", "4", 1); /* the second iteration's first kernel */
  setenv("FAKE_CUDA_FAIL_CODE", "700", 1);
  launch_reset();
  tb_status st = tb_prepared_run(p, 3, names, inputs, 2, NULL, out);
  unsetenv("FAKE_CUDA_LAUNCH_FAIL_AT");
  unsetenv("FAKE_CUDA_FAIL_CODE");
  assert_int_equal(st, TB_ERR_DRIVER);
  TB_ASSERT_CONTAINS(tb_last_error(), "CUDA_ERROR_ILLEGAL_ADDRESS");
  TB_ASSERT_CONTAINS(tb_last_error(), "node 'loop' (Loop)");
  assert_null(out[0]);
  launch_reset();
  TB_ASSERT_OK(tb_prepared_run(p, 3, names, inputs, 2, NULL, out));
  for (int k = 0; k < 2; k++) tb_tensor_destroy(out[k]);
  for (int i = 0; i < 3; i++) tb_tensor_destroy(inputs[i]);
  tb_prepared_destroy(p);
  tb_backend_destroy(cuda);
  tb_backend_destroy(cpu);
  tb_model_destroy(m);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test_setup_teardown(if_runs_its_branch_on_the_device, setup, teardown),
      cmocka_unit_test_setup_teardown(loop_keeps_its_values_on_the_device, setup, teardown),
      cmocka_unit_test_setup_teardown(loop_uploads_outer_weights_once, setup, teardown),
      cmocka_unit_test_setup_teardown(scan_slices_on_the_device, setup, teardown),
      cmocka_unit_test_setup_teardown(device_only_names_a_body_node, setup, teardown),
      cmocka_unit_test_setup_teardown(a_launch_failing_in_a_body, setup, teardown),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
