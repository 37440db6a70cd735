/* The basic elementwise ops (Relu, Sigmoid, ..., Add, Sub, Mul, Div, Pow, Max, Min, PRelu, Clip, tb::Gelu) on
 * float64, float16 and bfloat16 (kernels/12_math.cu's tb_cu_ew_math_* and tb_cu_ew_arith_*), and Sum / Mean / Max /
 * Min of any count (tb_cu_ew_accumulate_*, tb_cu_ew_fold_*), on the fake cuda:0 of the recorded 8x H100 node with
 * their values computed by the kernels' own source on the emulated grid (tests/cuda_emu), compared with the CPU
 * backend at O0: the halves bit for bit as values (computed in float32 and rounded once, as the CPU's staging),
 * float64 within 1e-6 + 1e-5 |cpu| (NaN where the CPU has NaN). The inputs hold odd shapes, broadcasting, NaN,
 * +-inf, +-0, sums that a float16 intermediate would round differently, and empty tensors. Also: a float16 model
 * at O2 with no CPU fallback, and a failing launch and device memory running out for the float32 accumulator.
 * Without the emulator (no C++ compiler) the value tests print why and check nothing. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "backend/cuda/kernels/cuda_ops.h"
#include "core/convert_scalar.h"
#include "core/error.h"
#include "ops/elementwise/ew_params.h"
#include "ops/fused/fused_params.h"
#include "pass_test.h"
#include "test_cuda_values.h"
#include "test_util.h"

static char cache_dir[64];

static int setup(void **state) { return tcv_setup(state, cache_dir, "tb_cuewh"); }

static int teardown(void **state) {
  (void)state;
  return tcv_teardown(cache_dir);
}

static const tb_dtype dtypes[3] = {TB_DTYPE_F16, TB_DTYPE_BF16, TB_DTYPE_F64};

/* The special values every test's first elements are. */
static const float specials[] = {NAN, INFINITY, -INFINITY, 0.0f, -0.0f, 0.5f, -0.5f, 1.5f, 2.5f, -2.5f, 1.0f, -1.0f, 1e-7f, 30.0f, -30.0f, 12.0f, -12.0f};
enum { N_SPECIALS = sizeof specials / sizeof specials[0] };

/* Run `model` on the CPU at O0 and on the emulated cuda:0 at `level`; compare every output (halves as values, float64
 * within 1e-6 + 1e-5 |cpu|); no CPU fallback; the device's node count. */
static size_t on_device(tb_model *model, size_t n_in, const feed *in, size_t n_out, tb_opt_level level) {
  size_t device_nodes = 0, fallbacks = 0;
  compare_runs(model, n_in, in, n_out, level, 1e-6, 1e-5, &device_nodes, &fallbacks);
  assert_int_equal(fallbacks, 0);
  return device_nodes;
}

/* A tb::Gelu node of x (what the O2 pass makes of the GELU patterns), in the tanh form or the erf one. */
static void gelu_output(tb_graph *g, const char *name, const char *out, bool tanh_form) {
  int in = tb_graph_value(g, "x"), o = tb_graph_value(g, out);
  int n = tb_graph_add_node(g, name, "Gelu", "tb", &in, 1, &o, 1, NULL, 0);
  assert_true(n >= 0);
  if (tanh_form) pt_attr_string(g, n, "approximate", "tanh");
  tbt_output(g, out);
}

/* ---- find_kernel ------------------------------------------------------------------------------------ */

/* op at opset 17 with n_in inputs of dt, the second of dt2. */
static const tb_kernel *find(const char *domain, const char *op, const void *params, size_t n_in, tb_dtype dt, tb_dtype dt2) {
  const tb_dtype dts[4] = {dt, dt2, dt, dt};
  return tcv_find(domain, op, 17, params, n_in, dts, 1);
}

static void find_kernel_takes_the_float_dtypes(void **state) {
  (void)state;
  const tb_binary_params modern = {0}, legacy = {.legacy = true, .broadcast = true};
  const tb_gelu_params erf_form = {false}, tanh_form = {true};
  const tb_clip_params clip = {.attr_form = true, .min = -1.0f, .max = 1.0f};
  for (int t = 0; t < 3; t++) {
    tb_dtype dt = dtypes[t];
    assert_non_null(find("", "Relu", NULL, 1, dt, dt));
    assert_non_null(find("", "Sigmoid", NULL, 1, dt, dt));
    assert_non_null(find("", "Clip", &clip, 1, dt, dt));
    assert_non_null(find("", "Clip", &(tb_clip_params){0}, 3, dt, dt));
    assert_non_null(find("", "Add", &modern, 2, dt, dt));
    assert_non_null(find("", "Pow", &modern, 2, dt, dt));
    assert_non_null(find("", "PRelu", &modern, 2, dt, dt));
    assert_null(find("", "Add", &legacy, 2, dt, dt));           /* the legacy broadcast stays on the CPU */
    assert_null(find("", "Add", &modern, 2, dt, TB_DTYPE_F32)); /* mixed dtypes */
    assert_non_null(find("tb", "Gelu", &erf_form, 1, dt, dt));
    assert_non_null(find("tb", "Gelu", &tanh_form, 1, dt, dt));
    assert_non_null(find("", "Max", NULL, 3, dt, dt)); /* the folds: any count */
    assert_non_null(find("", "Min", NULL, 1, dt, dt));
    assert_non_null(find("", "Sum", NULL, 3, dt, dt));
  }
  assert_null(find("", "Relu", NULL, 1, TB_DTYPE_I32, TB_DTYPE_I32));
  assert_null(find("", "Add", &modern, 2, TB_DTYPE_I64, TB_DTYPE_I64));
  assert_null(find("", "Max", NULL, 3, TB_DTYPE_I32, TB_DTYPE_I32));
}

/* ---- Values ------------------------------------------------------------------------------------------ */

/* Every unary op of 10_elementwise.cu on [3, 37] with the special values (LeakyRelu, Elu, HardSigmoid with their
 * parameters), Clip in its three forms (attributes at opset 6; scalar inputs at 13, with min only and both),
 * tb::Gelu in both forms (computed in double and rounded once, as the CPU), per dtype. */
static void unary_values_match_the_cpu(void **state) {
  (void)state;
  if (!emulator_here()) return;
  static const char *const plain[] = {"Relu", "Sigmoid", "Softplus", "Tanh", "Exp", "Log", "Sqrt", "Reciprocal",
                                      "Erf", "Floor", "Ceil", "Neg", "Abs"};
  for (int t = 0; t < 3; t++) {
    tb_dtype dt = dtypes[t];
    static float xf[3 * 37], lo = -0.75f, hi = 1.25f;
    static double x[3 * 37], l[1], h[1];
    fill_with_specials(xf, 3 * 37, 21 + (unsigned)t, specials, N_SPECIALS);
    to_dtype(xf, 3 * 37, dt, x);
    to_dtype(&lo, 1, dt, l);
    to_dtype(&hi, 1, dt, h);
    tb_ir_model *ir = tbt_ir_model(13);
    tb_graph *g = tb_graph_new(ir, NULL, "unary");
    tbt_input(g, "x", dt, 2, (const int64_t[]){3, 37}, NULL);
    tbt_input(g, "lo", dt, 0, NULL, NULL);
    tbt_input(g, "hi", dt, 0, NULL, NULL);
    size_t nodes = 0;
    for (size_t i = 0; i < sizeof plain / sizeof plain[0]; i++) {
      char out[32];
      snprintf(out, sizeof out, "y_%s", plain[i]);
      output(g, plain[i], plain[i], "x", out);
      nodes++;
    }
    int n = tbt_node(g, "LeakyRelu", "leaky", "x", "y_leaky");
    pt_attr_float(g, n, "alpha", 0.125f);
    tbt_output(g, "y_leaky");
    n = tbt_node(g, "Elu", "elu", "x", "y_elu");
    pt_attr_float(g, n, "alpha", 1.5f);
    tbt_output(g, "y_elu");
    n = tbt_node(g, "HardSigmoid", "hsig", "x", "y_hsig");
    pt_attr_float(g, n, "alpha", 0.3f);
    pt_attr_float(g, n, "beta", 0.4f);
    tbt_output(g, "y_hsig");
    output(g, "Clip", "clip_both", "x,lo,hi", "c0");
    output(g, "Clip", "clip_min", "x,lo", "c1");
    output(g, "Clip", "clip_none", "x", "c2");
    gelu_output(g, "gelu", "y_gelu", false);
    gelu_output(g, "gelu_tanh", "y_gelu_tanh", true);
    nodes += 8;
    tb_model *model = tbt_model_of(ir);
    const feed in[3] = {{"x", dt, 2, {3, 37}, x}, {"lo", dt, 0, {0}, l}, {"hi", dt, 0, {0}, h}};
    assert_int_equal(on_device(model, 3, in, nodes, TB_LEVEL_O0), nodes);
    tb_model_destroy(model);

    /* Clip's attributes (opset 6) */
    ir = tbt_ir_model(6);
    g = tb_graph_new(ir, NULL, "clip6");
    tbt_input(g, "x", dt, 2, (const int64_t[]){3, 37}, NULL);
    n = tbt_node(g, "Clip", "clip", "x", "y");
    pt_attr_float(g, n, "min", -0.3f);
    pt_attr_float(g, n, "max", 2.7f);
    tbt_output(g, "y");
    model = tbt_model_of(ir);
    assert_int_equal(on_device(model, 1, in, 1, TB_LEVEL_O0), 1);
    tb_model_destroy(model);
  }
}

/* Add, Sub, Mul, Div, Pow, Max, Min and PRelu of a [3, 1, 5] and b [4, 5] (broadcast both ways), of two [4, 5] (the
 * same shape), of a scalar, and of an empty [0, 1, 5] (PRelu: its slope broadcast to X); Where picking between the two; per dtype. */
static void binary_values_match_the_cpu(void **state) {
  (void)state;
  if (!emulator_here()) return;
  static const char *const ops[] = {"Add", "Sub", "Mul", "Div", "Pow", "Max", "Min", "PRelu"};
  for (int t = 0; t < 3; t++) {
    tb_dtype dt = dtypes[t];
    static float af[15], bf[20], cf[20], sf = 1.75f;
    static double a[15], b[20], c[20], s[1];
    static uint8_t cond[20];
    fill_with_specials(af, 15, 31 + (unsigned)t, specials, N_SPECIALS);
    fill(bf, 20, 41);
    fill_with_specials(cf, 20, 51, specials, N_SPECIALS);
    bf[0] = 0.0f, bf[1] = -0.0f, bf[2] = 2.0f, bf[3] = NAN, bf[4] = 0.5f; /* x / 0, pow(x, 2), NaN against every value */
    for (int i = 0; i < 20; i++) cond[i] = (uint8_t)(i % 3 == 0);
    to_dtype(af, 15, dt, a);
    to_dtype(bf, 20, dt, b);
    to_dtype(cf, 20, dt, c);
    to_dtype(&sf, 1, dt, s);
    tb_ir_model *ir = tbt_ir_model(14);
    tb_graph *g = tb_graph_new(ir, NULL, "binary");
    tbt_input(g, "a", dt, 3, (const int64_t[]){3, 1, 5}, NULL);
    tbt_input(g, "b", dt, 2, (const int64_t[]){4, 5}, NULL);
    tbt_input(g, "c", dt, 2, (const int64_t[]){4, 5}, NULL);
    tbt_input(g, "s", dt, 0, NULL, NULL);
    tbt_input(g, "e", dt, 3, (const int64_t[]){0, 1, 5}, NULL);
    tbt_input(g, "cond", TB_DTYPE_BOOL, 2, (const int64_t[]){4, 5}, NULL);
    size_t nodes = 0;
    for (size_t i = 0; i < sizeof ops / sizeof ops[0]; i++) {
      static const char *const pairs[4] = {"a,b", "c,b", "b,s", "e,b"};
      static const char *const slopes[4] = {"b,c", "c,b", "b,s", "e,s"}; /* PRelu's slope broadcasts to X only */
      for (int p = 0; p < 4; p++) {
        char name[32], out[32];
        snprintf(name, sizeof name, "%s_%d", ops[i], p);
        snprintf(out, sizeof out, "y_%s_%d", ops[i], p);
        output(g, ops[i], name, strcmp(ops[i], "PRelu") == 0 ? slopes[p] : pairs[p], out);
        nodes++;
      }
    }
    output(g, "Where", "where", "cond,b,c", "w");
    nodes++;
    tb_model *model = tbt_model_of(ir);
    const feed in[6] = {{"a", dt, 3, {3, 1, 5}, a}, {"b", dt, 2, {4, 5}, b}, {"c", dt, 2, {4, 5}, c},
                        {"s", dt, 0, {0}, s},       {"e", dt, 3, {0, 1, 5}, NULL}, {"cond", TB_DTYPE_BOOL, 2, {4, 5}, cond}};
    assert_int_equal(on_device(model, 6, in, nodes, TB_LEVEL_O0), nodes);
    tb_model_destroy(model);
  }
}

/* Sum, Mean, Max and Min of three broadcasting inputs whose float32 sums a float16 / bfloat16 intermediate would
 * round differently (2048 + 1 + 1 in float16, 256 + 1 + 1 in bfloat16, overflow past 65504), with NaN and +-inf;
 * Max and Min of one input and of four; an empty input; per dtype (float32 too). */
static void folds_match_the_cpu(void **state) {
  (void)state;
  if (!emulator_here()) return;
  static const tb_dtype all[4] = {TB_DTYPE_F16, TB_DTYPE_BF16, TB_DTYPE_F64, TB_DTYPE_F32};
  for (int t = 0; t < 4; t++) {
    tb_dtype dt = all[t];
    static float af[10] = {2048.0f, 256.0f, 65504.0f, NAN, INFINITY, -INFINITY, 0.0f, -0.0f, 3.0f, -7.5f};
    static float bf[3] = {1.0f, 1.0f, 65504.0f}, cf[5] = {1.0f, 1.0f, -0.0f, 2.5f, NAN};
    static double a[10], b[3], c[5];
    if (dt == TB_DTYPE_F32) memcpy(a, af, sizeof af), memcpy(b, bf, sizeof bf), memcpy(c, cf, sizeof cf);
    else to_dtype(af, 10, dt, a), to_dtype(bf, 3, dt, b), to_dtype(cf, 5, dt, c);
    tb_ir_model *ir = tbt_ir_model(13);
    tb_graph *g = tb_graph_new(ir, NULL, "folds");
    tbt_input(g, "a", dt, 3, (const int64_t[]){2, 1, 5}, NULL);
    tbt_input(g, "b", dt, 2, (const int64_t[]){3, 1}, NULL);
    tbt_input(g, "c", dt, 1, (const int64_t[]){5}, NULL);
    tbt_input(g, "e", dt, 2, (const int64_t[]){0, 5}, NULL);
    static const char *const ops[] = {"Sum", "Mean", "Max", "Min"};
    size_t nodes = 0;
    for (size_t i = 0; i < 4; i++) {
      char name[32], out[32];
      snprintf(name, sizeof name, "%s3", ops[i]);
      snprintf(out, sizeof out, "y_%s3", ops[i]);
      output(g, ops[i], name, "a,b,c", out);
      snprintf(name, sizeof name, "%s4", ops[i]);
      snprintf(out, sizeof out, "y_%s4", ops[i]);
      output(g, ops[i], name, "c,b,a,b", out);
      snprintf(name, sizeof name, "%s1", ops[i]);
      snprintf(out, sizeof out, "y_%s1", ops[i]);
      output(g, ops[i], name, "a", out);
      snprintf(name, sizeof name, "%s_empty", ops[i]);
      snprintf(out, sizeof out, "y_%s_empty", ops[i]);
      output(g, ops[i], name, "e,c,c", out);
      nodes += 4;
    }
    tb_model *model = tbt_model_of(ir);
    const feed in[4] = {{"a", dt, 3, {2, 1, 5}, a}, {"b", dt, 2, {3, 1}, b}, {"c", dt, 1, {5}, c}, {"e", dt, 2, {0, 5}, NULL}};
    assert_int_equal(on_device(model, 4, in, nodes, TB_LEVEL_O0), nodes);
    tb_model_destroy(model);
  }
}

/* A float16 / bfloat16 model of the kinds a converted network has (a GELU in both forms, which O2 fuses into tb::Gelu,
 * a SiLU, Clip, residual Adds, a three-input Sum) at O2: every node on the device, values as the CPU's at O0. */
static void half_model_at_o2_runs_on_the_device(void **state) {
  (void)state;
  if (!emulator_here()) return;
  for (int t = 0; t < 2; t++) {
    tb_dtype dt = dtypes[t];
    static float xf[7 * 33];
    static double x[7 * 33], k[6];
    static const float kf[6] = {1.4142135f, 1.0f, 0.5f, 3.0f, 0.044715f, 0.7978845608f};
    fill_with_specials(xf, 7 * 33, 61 + (unsigned)t, specials, N_SPECIALS);
    to_dtype(xf, 7 * 33, dt, x);
    to_dtype(kf, 6, dt, k);
    tb_ir_model *ir = tbt_ir_model(17);
    tb_graph *g = tb_graph_new(ir, NULL, "half_model");
    tbt_input(g, "x", dt, 2, (const int64_t[]){7, 33}, NULL);
    tbt_const(g, "sqrt2", dt, 0, NULL, &k[0]);
    tbt_const(g, "one", dt, 0, NULL, &k[1]);
    tbt_const(g, "half", dt, 0, NULL, &k[2]);
    tbt_const(g, "three", dt, 0, NULL, &k[3]);
    tbt_const(g, "c", dt, 0, NULL, &k[4]);
    tbt_const(g, "kk", dt, 0, NULL, &k[5]);
    tbt_node(g, "Div", "div", "x,sqrt2", "u");
    tbt_node(g, "Erf", "erf", "u", "e");
    tbt_node(g, "Add", "add1", "e,one", "a");
    tbt_node(g, "Mul", "mul_x", "x,a", "m");
    tbt_node(g, "Mul", "mul_half", "m,half", "gelu");
    tbt_node(g, "Pow", "cube", "x,three", "x3");
    tbt_node(g, "Mul", "mul_c", "x3,c", "cx3");
    tbt_node(g, "Add", "add_x", "x,cx3", "w");
    tbt_node(g, "Mul", "mul_k", "w,kk", "v");
    tbt_node(g, "Tanh", "tanh", "v", "th");
    tbt_node(g, "Add", "add_one", "th,one", "q");
    tbt_node(g, "Mul", "mul_xq", "x,q", "r");
    tbt_node(g, "Mul", "mul_h", "r,half", "gelu_tanh");
    tbt_node(g, "Sigmoid", "sig", "gelu", "s");
    tbt_node(g, "Mul", "silu", "gelu,s", "silu");
    tbt_node(g, "Clip", "clip", "silu,half,three", "cl");
    tbt_node(g, "Sub", "sub", "cl,x", "d");
    output(g, "Sum", "sum3", "d,gelu_tanh,x", "y");
    tb_model *model = tbt_model_of(ir);
    const feed in[1] = {{"x", dt, 2, {7, 33}, x}};
    assert_true(on_device(model, 1, in, 1, TB_LEVEL_O2) > 0);
    tb_model_destroy(model);
  }
}

/* ---- Errors ------------------------------------------------------------------------------------------ */

/* A failing launch of the fold names the kernel and node; device memory too small for the float32 accumulator is
 * TB_ERR_OUT_OF_MEMORY; nothing leaks (teardown). */
static void errors_are_statuses(void **state) {
  (void)state;
  tb_backend *cpu = NULL, *cuda = open_cuda0();
  TB_ASSERT_OK(tb_backend_create("cpu", &cpu));
  tb_ir_model *ir = tbt_ir_model(13);
  tb_graph *g = tb_graph_new(ir, NULL, "errors");
  tbt_input(g, "x", TB_DTYPE_F16, 2, (const int64_t[]){100, 100}, NULL);
  output(g, "Relu", "relu", "x", "r");
  output(g, "Sum", "sum3", "r,x,x", "y");
  tb_model *model = tbt_model_of(ir);
  tb_prepare_options o = {.size = sizeof o, .level = TB_LEVEL_O0};
  tb_prepared *p = NULL;
  const tb_prepare_result *r = NULL;
  TB_ASSERT_OK(tb_model_prepare(model, cuda, &o, &p, &r));
  assert_int_equal(r->device_nodes, 2);
  static uint16_t x[10000];
  tb_tensor *in = NULL, *out[2] = {NULL, NULL};
  TB_ASSERT_OK(tb_tensor_create(cpu, TB_DTYPE_F16, 2, (const int64_t[]){100, 100}, &in));
  TB_ASSERT_OK(tb_tensor_copy_from_host(in, x, sizeof x));
  const char *names[1] = {"x"};
  setenv("FAKE_CUDA_LAUNCH_FAIL_AT", "1", 1);
  setenv("FAKE_CUDA_FAIL_CODE", "700", 1);
  launch_reset();
  assert_int_equal(tb_prepared_run(p, 1, names, &in, 2, NULL, out), TB_ERR_DRIVER);
  TB_ASSERT_CONTAINS(tb_last_error(), "cuLaunchKernel of tb_cu_ew_math_f16 for node 'relu' (Relu)");
  TB_ASSERT_CONTAINS(tb_last_error(), "failed with 700 CUDA_ERROR_ILLEGAL_ADDRESS");
  assert_null(out[0]);
  setenv("FAKE_CUDA_LAUNCH_FAIL_AT", "3", 1);
  launch_reset();
  assert_int_equal(tb_prepared_run(p, 1, names, &in, 2, NULL, out), TB_ERR_DRIVER);
  TB_ASSERT_CONTAINS(tb_last_error(), "cuLaunchKernel of tb_cu_ew_fold_f16 for node 'sum3' (Sum)");
  unsetenv("FAKE_CUDA_LAUNCH_FAIL_AT");
  unsetenv("FAKE_CUDA_FAIL_CODE");
  launch_reset();
  TB_ASSERT_OK(tb_prepared_run(p, 1, names, &in, 2, NULL, out));
  assert_int_equal(launches_of("tb_cu_ew_math_f16"), 1);
  assert_int_equal(launches_of("tb_cu_ew_fold_f16"), 3);
  for (int i = 0; i < 2; i++) tb_tensor_destroy(out[i]), out[i] = NULL;
  tb_prepared_destroy(p);
  /* the accumulator (40000 bytes) past what the device has left after the input and the outputs */
  setenv("FAKE_CUDA_MEM_CAPACITY", "64K", 1);
  tb_backend_destroy(cuda);
  cuda = open_cuda0();
  TB_ASSERT_OK(tb_model_prepare(model, cuda, &o, &p, NULL));
  assert_int_equal(tb_prepared_run(p, 1, names, &in, 2, NULL, out), TB_ERR_OUT_OF_MEMORY);
  assert_null(out[0]);
  unsetenv("FAKE_CUDA_MEM_CAPACITY");
  tb_prepared_destroy(p);
  tb_model_destroy(model);
  tb_tensor_destroy(in);
  tb_backend_destroy(cuda);
  tb_backend_destroy(cpu);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(find_kernel_takes_the_float_dtypes),
      cmocka_unit_test_setup_teardown(unary_values_match_the_cpu, setup, teardown),
      cmocka_unit_test_setup_teardown(binary_values_match_the_cpu, setup, teardown),
      cmocka_unit_test_setup_teardown(folds_match_the_cpu, setup, teardown),
      cmocka_unit_test_setup_teardown(half_model_at_o2_runs_on_the_device, setup, teardown),
      cmocka_unit_test_setup_teardown(errors_are_statuses, setup, teardown),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
