/* Pad on cuda:0 (kernels/cuda_ops_data.c, 70_data.cu's tb_cu_dm_pad_*) with a constant_value input that another node
 * computes: the kernel reads the scalar on the device, so no run copies anything to the host for it and the model is
 * captured as a CUDA graph and replayed with new values. On the fake libcuda with the emulator, against the CPU at O0
 * byte for byte, for every dtype the CPU's Pad takes (f64, f32, f16, bf16, fp8 e4m3 and e5m2, i64, i32, i16, i8, u8,
 * bool), odd shapes, an empty input; a model-constant constant_value and opset 2's attribute on the same kernel; reflect
 * and edge with a constant_value given (not read); a launch failing with 700 and with 2 (out of memory). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "model/prepared.h"
#include "model/replay.h"
#include "pass_test.h"
#include "test_cuda_util.h"
#include "test_cuda_values.h"
#include "test_engine_util.h"
#include "test_util.h"

static char cache_dir[64];

static int setup(void **state) { return tcv_setup(state, cache_dir, "tb_cupad"); }

static int teardown(void **state) {
  (void)state;
  return tcv_teardown(cache_dir);
}

/* How constant_value reaches the Pad node. */
typedef enum cv_source { CV_COMPUTED, CV_CONSTANT, CV_NONE } cv_source;

/* y = Pad(x, pads, cv) in `mode`, x [rows, cols] of dt: cv = Squeeze(c) of a graph input c [1] (computed on the device),
 * a model constant, or none. */
static tb_model *pad_model(tb_dtype dt, int64_t rows, int64_t cols, const char *mode, cv_source src, const void *constant) {
  tb_ir_model *ir = tbt_ir_model(13);
  tb_graph *g = tb_graph_new(ir, NULL, "pad");
  const int64_t dims[2] = {rows, cols}, one = 1, four = 4;
  tbt_input(g, "x", dt, 2, dims, NULL);
  tbt_const_i64(g, "pads", 1, &four, (const int64_t[]){2, 0, 1, 3});
  const char *inputs = "x,pads";
  if (src == CV_COMPUTED) {
    tbt_input(g, "c", dt, 1, &one, NULL);
    tbt_node(g, "Squeeze", "squeeze", "c", "cv");
    inputs = "x,pads,cv";
  } else if (src == CV_CONSTANT) {
    tbt_const(g, "cv", dt, 0, NULL, constant);
    inputs = "x,pads,cv";
  }
  int p = tbt_node(g, "Pad", "pad", inputs, "y");
  pt_attr_string(g, p, "mode", mode);
  tbt_output(g, "y");
  return tbt_model_of(ir);
}

/* n deterministic elements of dt (seed): any bits for the numbers (NaN payloads included: Pad moves bytes), 0 / 1 for
 * bool. */
static void fill_bytes(unsigned char *out, tb_dtype dt, size_t n, unsigned seed) {
  size_t es = tb_dtype_size(dt);
  for (size_t i = 0; i < n * es; i++) {
    seed = seed * 1103515245u + 12345u;
    out[i] = dt == TB_DTYPE_BOOL ? (unsigned char)(seed >> 16 & 1) : (unsigned char)(seed >> 16);
  }
}

static const char *const pad_kernel[4] = {"tb_cu_dm_pad_b1", "tb_cu_dm_pad_b2", "tb_cu_dm_pad_b4", "tb_cu_dm_pad_b8"};

/* Prepare m on the CPU (O0) and cuda:0 (level); three runs with cvs[run] as c (when computed): each run's output equal
 * to the CPU's byte for byte, and no device-to-host copy during any of them; the first run captured, the others
 * replayed (`captured`). */
static void expect_pad(tb_model *m, tb_dtype dt, int64_t rows, int64_t cols, cv_source src, const unsigned char *cvs,
                       tb_opt_level level) {
  tb_backend *cpu = NULL, *cuda = open_cuda0();
  TB_ASSERT_OK(tb_backend_create("cpu", &cpu));
  tb_prepare_options o = {.size = sizeof o, .level = TB_LEVEL_O0};
  tb_prepared *pc = NULL, *pg = NULL;
  const tb_prepare_result *rg = NULL;
  TB_ASSERT_OK(tb_model_prepare(m, cpu, &o, &pc, NULL));
  o.level = level;
  TB_ASSERT_OK(tb_model_prepare(m, cuda, &o, &pg, &rg));
  for (size_t i = 0; i < rg->cpu_fallback_nodes; i++) print_message("fallback: %s\n", rg->fallback_ops[i]);
  assert_int_equal(rg->cpu_fallback_nodes, 0);
  if (!rg->graph_capture) fail_msg("capture ruled out at prepare: %s", rg->graph_capture_why ? rg->graph_capture_why : "");
  size_t es = tb_dtype_size(dt), n = (size_t)(rows * cols);
  unsigned char *x = malloc(n * es + 1);
  fill_bytes(x, dt, n, (unsigned)dt * 7u + 3u);
  const feed in_x = {"x", dt, 2, {rows, cols}, x};
  for (int run = 0; run < 3; run++) {
    const feed in_c = {"c", dt, 1, {1}, cvs + (size_t)run * es};
    tb_tensor *inputs[2] = {make_input(cpu, &in_x), src == CV_COMPUTED ? make_input(cpu, &in_c) : NULL};
    const char *names[2] = {"x", "c"};
    size_t n_in = src == CV_COMPUTED ? 2 : 1;
    tb_tensor *want = NULL, *got = NULL;
    TB_ASSERT_OK(tb_prepared_run(pc, n_in, names, inputs, 1, NULL, &want));
    tcu_call_log_reset();
    launch_reset();
    tb_status st = tb_prepared_run(pg, n_in, names, inputs, 1, NULL, &got);
    if (st != TB_OK) fail_msg("run %d on cuda:0 (%s): %s: %s", run, tb_dtype_name(dt), tb_status_str(st), tb_last_error());
    /* nothing read back for the constant (nor anything else): the run has no host synchronisation in its middle */
    assert_int_equal(tcu_calls("cuMemcpyDtoHAsync_v2") + tcu_calls("cuMemcpyDtoH_v2"), 0);
    if (run == 0) assert_int_equal(launches_of(pad_kernel[es == 1 ? 0 : es == 2 ? 1 : es == 4 ? 2 : 3]), 1);
    expect_same(want, got, 0, 0, 0);
    tb_tensor_destroy(want);
    tb_tensor_destroy(got);
    for (size_t k = 0; k < n_in; k++) tb_tensor_destroy(inputs[k]);
  }
  const char *why = NULL;
  if (!tb_prepared_graph_capture(pg, &why)) fail_msg("%s: not captured: %s", tb_dtype_name(dt), why ? why : "");
  tb_replay_counts rc = tb_replay_counts_of(pg->replay);
  assert_int_equal(rc.captures, 1);
  assert_int_equal(rc.replays, 2);
  free(x);
  tb_prepared_destroy(pc);
  tb_prepared_destroy(pg);
  tb_backend_destroy(cuda);
  tb_backend_destroy(cpu);
  assert_int_equal(live_allocations(), 0);
}

static const tb_dtype every_dtype[] = {TB_DTYPE_F64,  TB_DTYPE_F32,           TB_DTYPE_F16,        TB_DTYPE_BF16,
                                       TB_DTYPE_FP8_E4M3FN, TB_DTYPE_FP8_E5M2, TB_DTYPE_I64, TB_DTYPE_I32,
                                       TB_DTYPE_I16,  TB_DTYPE_I8,            TB_DTYPE_U8,         TB_DTYPE_BOOL};

/* A computed constant_value, three values per dtype (new ones in the replays), odd shapes and an empty input. */
static void a_computed_constant_is_read_on_the_device(void **state) {
  (void)state;
  if (!emulator_here()) return;
  for (size_t k = 0; k < sizeof every_dtype / sizeof every_dtype[0]; k++) {
    tb_dtype dt = every_dtype[k];
    unsigned char cvs[3 * 8];
    fill_bytes(cvs, dt, 3, 100u + (unsigned)k);
    tb_model *m = pad_model(dt, 3, 5, "constant", CV_COMPUTED, NULL);
    expect_pad(m, dt, 3, 5, CV_COMPUTED, cvs, TB_LEVEL_O0);
    expect_pad(m, dt, 3, 5, CV_COMPUTED, cvs, TB_LEVEL_O2);
    tb_model_destroy(m);
    m = pad_model(dt, 0, 7, "constant", CV_COMPUTED, NULL); /* nothing of x: every element the constant */
    expect_pad(m, dt, 0, 7, CV_COMPUTED, cvs, TB_LEVEL_O0);
    tb_model_destroy(m);
  }
  /* float32 with a NaN, -0 and an infinity as the constant */
  const float specials[3] = {-0.0f, (float)NAN, -(float)INFINITY};
  tb_model *m = pad_model(TB_DTYPE_F32, 37, 1, "constant", CV_COMPUTED, NULL);
  expect_pad(m, TB_DTYPE_F32, 37, 1, CV_COMPUTED, (const unsigned char *)specials, TB_LEVEL_O0);
  tb_model_destroy(m);
}

/* A model constant, the attribute (opset 2, read on the host at prepare as before), no constant (0), and reflect / edge
 * with a constant_value input (which they ignore) on the same kernel. */
static void other_constants_and_modes(void **state) {
  (void)state;
  if (!emulator_here()) return;
  const int64_t i64 = -77;
  const uint16_t f16 = 0x3e00; /* 1.5 */
  unsigned char cvs[3 * 8];
  tb_model *m = pad_model(TB_DTYPE_I64, 4, 3, "constant", CV_CONSTANT, &i64);
  expect_pad(m, TB_DTYPE_I64, 4, 3, CV_CONSTANT, NULL, TB_LEVEL_O0);
  tb_model_destroy(m);
  m = pad_model(TB_DTYPE_F16, 2, 9, "constant", CV_CONSTANT, &f16);
  expect_pad(m, TB_DTYPE_F16, 2, 9, CV_CONSTANT, NULL, TB_LEVEL_O2);
  tb_model_destroy(m);
  m = pad_model(TB_DTYPE_U8, 3, 3, "constant", CV_NONE, NULL);
  expect_pad(m, TB_DTYPE_U8, 3, 3, CV_NONE, NULL, TB_LEVEL_O0);
  tb_model_destroy(m);
  const char *modes[2] = {"reflect", "edge"};
  for (int k = 0; k < 2; k++) {
    fill_bytes(cvs, TB_DTYPE_F32, 3, 9);
    m = pad_model(TB_DTYPE_F32, 4, 5, modes[k], CV_COMPUTED, NULL);
    expect_pad(m, TB_DTYPE_F32, 4, 5, CV_COMPUTED, cvs, TB_LEVEL_O0);
    tb_model_destroy(m);
  }
  /* opset 2: pads and value attributes */
  tb_ir_model *ir = tbt_ir_model(2);
  tb_graph *g = tb_graph_new(ir, NULL, "pad2");
  const int64_t dims[2] = {3, 4};
  tbt_input(g, "x", TB_DTYPE_F32, 2, dims, NULL);
  int p = tbt_node(g, "Pad", "pad", "x", "y");
  pt_attr_ints(g, p, "pads", 4, (const int64_t[]){1, 2, 0, 1});
  pt_attr_float(g, p, "value", -2.25f);
  tbt_output(g, "y");
  m = tbt_model_of(ir);
  expect_pad(m, TB_DTYPE_F32, 3, 4, CV_NONE, NULL, TB_LEVEL_O0);
  tb_model_destroy(m);
}

/* The Pad launch failing (the Squeeze is a device copy, no launch): 700, then 2 (out of memory), each a status and the
 * driver's sentence naming the kernel and the node, nothing left on the device; then a good run. */
static void a_failing_launch_is_a_status(void **state) {
  (void)state;
  setenv("TB_GRAPH_CAPTURE", "off", 1);
  tb_model *m = pad_model(TB_DTYPE_F32, 3, 5, "constant", CV_COMPUTED, NULL);
  tb_backend *cpu = NULL, *cuda = open_cuda0();
  TB_ASSERT_OK(tb_backend_create("cpu", &cpu));
  tb_prepare_options o = {.size = sizeof o, .level = TB_LEVEL_O0};
  tb_prepared *pg = NULL;
  TB_ASSERT_OK(tb_model_prepare(m, cuda, &o, &pg, NULL));
  float x[15] = {0}, c = 4.5f;
  const feed in[2] = {{"x", TB_DTYPE_F32, 2, {3, 5}, x}, {"c", TB_DTYPE_F32, 1, {1}, &c}};
  tb_tensor *inputs[2] = {make_input(cpu, &in[0]), make_input(cpu, &in[1])};
  const char *names[2] = {"x", "c"};
  tb_tensor *out = NULL;
  const char *codes[2] = {"700", "2"};
  const tb_status want[2] = {TB_ERR_DRIVER, TB_ERR_OUT_OF_MEMORY};
  for (int k = 0; k < 2; k++) {
    setenv("FAKE_CUDA_LAUNCH_FAIL_AT", "1", 1);
    setenv("FAKE_CUDA_FAIL_CODE", codes[k], 1);
    launch_reset();
    assert_int_equal(tb_prepared_run(pg, 2, names, inputs, 1, NULL, &out), want[k]);
    assert_null(out);
    TB_ASSERT_CONTAINS(tb_last_error(), "cuLaunchKernel of tb_cu_dm_pad_b4 for node 'pad' (Pad)");
  }
  TB_ASSERT_CONTAINS(tb_last_error(), "CUDA_ERROR_OUT_OF_MEMORY");
  unsetenv("FAKE_CUDA_LAUNCH_FAIL_AT");
  unsetenv("FAKE_CUDA_FAIL_CODE");
  TB_ASSERT_OK(tb_prepared_run(pg, 2, names, inputs, 1, NULL, &out));
  if (emulator_here()) {
    float y[6 * 8]; /* [3 + 2 + 1, 5 + 0 + 3] */
    assert_int_equal(tb_tensor_numel(out), 48);
    TB_ASSERT_OK(tb_tensor_copy_to_host(out, y, sizeof y));
    assert_true(y[0] == 4.5f && y[47] == 4.5f && y[2 * 8 + 0] == 0.0f && y[2 * 8 + 5] == 4.5f);
  }
  tb_tensor_destroy(out);
  for (int k = 0; k < 2; k++) tb_tensor_destroy(inputs[k]);
  tb_prepared_destroy(pg);
  tb_model_destroy(m);
  tb_backend_destroy(cuda);
  tb_backend_destroy(cpu);
  unsetenv("TB_GRAPH_CAPTURE");
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test_setup_teardown(a_computed_constant_is_read_on_the_device, setup, teardown),
      cmocka_unit_test_setup_teardown(other_constants_and_modes, setup, teardown),
      cmocka_unit_test_setup_teardown(a_failing_launch_is_a_status, setup, teardown),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
