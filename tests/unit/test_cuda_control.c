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
#include "test_cuda_values.h"
#include "test_device_control.h"
#include "test_util.h"

static char cache_dir[64];

/* Host-to-device copies since the call log's reset (staged or direct). */
static int uploads_since_reset(void) {
  int (*calls)(const char *) = (int (*)(const char *))fake_symbol("fake_cuda_calls");
  return calls("cuMemcpyHtoDAsync_v2") + calls("cuMemcpyHtoD_v2");
}

static int setup(void **state) { return tcv_setup(state, cache_dir, "tb_cuctl"); }

static int teardown(void **state) {
  (void)state;
  return tcv_teardown(cache_dir);
}

/* A model with a control-flow node is never captured as one CUDA graph; the reason names the host read. */
static void capture_ruled_out(tb_prepared *p) {
  const char *why = NULL;
  assert_false(tb_prepared_graph_capture(p, &why));
  TB_ASSERT_CONTAINS(why, "reads its condition or trip count on the host");
}

/* Run `model` on the CPU at O0 and on the emulated cuda:0 at `level` for each of `runs` input sets; compare every
 * output; every node of the graph on the device, and `body_nodes` body nodes run (profiled) on it, none on the CPU;
 * graph replay ruled out. */
static void compare(tb_model *model, size_t runs, size_t n_in, const dctl_input *in, size_t n_out, tb_opt_level level,
                    size_t body_nodes) {
  tb_backend *cuda = open_cuda0();
  dctl_compare(cuda, "cuda", model, level, runs, n_in, in, n_out, body_nodes, capture_ruled_out);
  tb_backend_destroy(cuda);
}

/* ---- If ------------------------------------------------------------------------------------------------ */

/* The shared If model (test_device_control.h: an outer weight and an outer activation in the branches), both
 * branches, at O0 and O2. */
static void if_runs_its_branch_on_the_device(void **state) {
  (void)state;
  if (!emulator_here()) return;
  tb_backend *cuda = open_cuda0();
  dctl_if_both_branches(cuda, "cuda", capture_ruled_out);
  tb_backend_destroy(cuda);
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
  dctl_graph_attr(g, n, "body", body);
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
  const dctl_input in[6] = {{"M", TB_DTYPE_I64, 0, {0}, &four}, {"cond", TB_DTYPE_BOOL, 0, {0}, &yes}, {"s0", TB_DTYPE_F32, 2, {2, 3}, s0},
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
    const dctl_input in[3] = {{"M", TB_DTYPE_I64, 0, {0}, &trips[r]}, {"cond", TB_DTYPE_BOOL, 0, {0}, &yes}, {"s0", TB_DTYPE_F32, 2, {2, 3}, s0}};
    tb_tensor *inputs[3], *out[2] = {NULL};
    const char *names[3] = {"M", "cond", "s0"};
    for (int i = 0; i < 3; i++) inputs[i] = dctl_make_input(cpu, &in[i]);
    /* a first run places the body and copies the weight; count from the second */
    TB_ASSERT_OK(tb_prepared_run(p, 3, names, inputs, 2, NULL, out));
    for (int k = 0; k < 2; k++) tb_tensor_destroy(out[k]);
    tcu_call_log_reset();
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

static void scan_slices_on_the_device(void **state) {
  (void)state;
  if (!emulator_here()) return;
  tb_backend *cuda = open_cuda0();
  dctl_scan_runs(cuda, "cuda", capture_ruled_out); /* the shared Scan model (test_device_control.h) at O0 and O2 */
  tb_backend_destroy(cuda);
}

/* ---- device_only and errors ---------------------------------------------------------------------------- */

/* A body node without a CUDA kernel (Loop's body with an int32 Relu: the CPU takes the signed integers, the CUDA
 * kernels the float dtypes only): device_only refuses it with its name. */
static void device_only_names_a_body_node(void **state) {
  (void)state;
  tb_ir_model *ir = tbt_ir_model(13);
  tb_graph *g = tb_graph_new(ir, NULL, "main");
  const int64_t d[1] = {4};
  tbt_input(g, "M", TB_DTYPE_I64, 0, NULL, NULL);
  tbt_input(g, "s0", TB_DTYPE_I32, 1, d, NULL);
  tb_graph *body = tb_graph_new(ir, g, "body");
  tbt_input(body, "i", TB_DTYPE_I64, 0, NULL, NULL);
  tbt_input(body, "c", TB_DTYPE_BOOL, 0, NULL, NULL);
  tbt_input(body, "s", TB_DTYPE_I32, 1, d, NULL);
  tbt_node(body, "Identity", "keep", "c", "c_out");
  tbt_node(body, "Relu", "relu", "s", "s_out");
  tbt_output(body, "c_out");
  tbt_output(body, "s_out");
  int n = tbt_node(g, "Loop", "loop", "M,,s0", "s_final");
  dctl_graph_attr(g, n, "body", body);
  tbt_output(g, "s_final");
  tb_model *m = tbt_model_of(ir);
  tb_backend *cpu = NULL, *cuda = open_cuda0();
  TB_ASSERT_OK(tb_backend_create("cpu", &cpu));
  tb_prepare_options o = {.size = sizeof o, .level = TB_LEVEL_O0, .device_only = true};
  tb_prepared *p = NULL;
  TB_ASSERT_OK(tb_model_prepare(m, cuda, &o, &p, NULL)); /* the Loop itself runs on cuda:0 */
  int64_t two = 2;
  const int32_t s0[4] = {5, -1, 2, -3};
  const dctl_input in[2] = {{"M", TB_DTYPE_I64, 0, {0}, &two}, {"s0", TB_DTYPE_I32, 1, {4}, s0}};
  tb_tensor *inputs[2] = {dctl_make_input(cpu, &in[0]), dctl_make_input(cpu, &in[1])}, *out = NULL;
  const char *names[2] = {"M", "s0"};
  assert_int_equal(tb_prepared_run(p, 2, names, inputs, 1, NULL, &out), TB_ERR_UNSUPPORTED);
  TB_ASSERT_CONTAINS(tb_last_error(), "device_only: node 'relu' (Relu) in the body 'body' would fall back to the CPU from cuda:0");
  assert_null(out);
  tb_prepared_destroy(p);
  /* without device_only the Relu runs on the CPU and the rest of the body on cuda:0; values as the CPU's */
  o.device_only = false;
  TB_ASSERT_OK(tb_model_prepare(m, cuda, &o, &p, NULL));
  TB_ASSERT_OK(tb_prepared_run(p, 2, names, inputs, 1, NULL, &out));
  int32_t got[4];
  TB_ASSERT_OK(tb_tensor_copy_to_host(out, got, sizeof got));
  for (int k = 0; k < 4; k++) assert_int_equal(got[k], s0[k] > 0 ? s0[k] : 0);
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
  const dctl_input in[3] = {{"M", TB_DTYPE_I64, 0, {0}, &three}, {"cond", TB_DTYPE_BOOL, 0, {0}, &yes}, {"s0", TB_DTYPE_F32, 2, {2, 3}, s0}};
  tb_tensor *inputs[3], *out[2] = {NULL};
  const char *names[3] = {"M", "cond", "s0"};
  for (int i = 0; i < 3; i++) inputs[i] = dctl_make_input(cpu, &in[i]);
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
