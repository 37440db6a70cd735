/* The CUDA math and index kernels (kernels/12_math.cu, 31_index_reduce.cu; cuda_ops_math.c, cuda_ops_argtopk.c)
 * on the fake cuda:0 of the recorded 8x H100 node, their values computed by the kernels' own source on the
 * emulated grid (tests/cuda_emu) and compared with the CPU backend at O0: floats within 1e-6 + 1e-5 |cpu| (NaN
 * where the CPU has NaN), every other dtype byte for byte; every node on the device. The inputs hold odd
 * shapes, broadcasting, NaN, +-inf, +-0, halves (Round), out-of-domain values (Acos, Acosh, Atanh), INT_MIN
 * (Abs, Neg), zero and negative divisors (Mod), shifts past the width (BitShift), ties and NaN (ArgMax, TopK,
 * Hardmax), empty tensors and negative axes. Also: find_kernel's answers by dtype and attribute, tb::Silu and
 * tb::Mish from the O2 passes, TopK's rows past the shared-memory sort, a bad CumSum axis, a failing launch and
 * device memory running out. Without the emulator (no C++ compiler) the value tests print why and check nothing. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "backend/cuda/cuda_module.h"
#include "backend/cuda/kernels/cuda_ops.h"
#include "core/convert_scalar.h"
#include "core/error.h"
#include "ops/elementwise/ew_params.h"
#include "ops/nn/nn_params.h"
#include "ops/tensor/tensor_params.h"
#include "pass_test.h"
#include "test_cuda_values.h"
#include "test_util.h"

static char cache_dir[64];

static int setup(void **state) { return tcv_setup(state, cache_dir, "tb_cumath"); }

static int teardown(void **state) {
  (void)state;
  return tcv_teardown(cache_dir);
}

/* Run `model` on the CPU at O0 and on the emulated cuda:0 at `level`; compare every output (floats within 1e-6 +
 * 1e-5 |cpu|); every node on the device (nodes of them after the level's passes). */
static void all_on_device(tb_model *model, size_t n_in, const feed *in, size_t n_out, tb_opt_level level, size_t nodes) {
  size_t device_nodes = 0, fallbacks = 0;
  compare_runs(model, n_in, in, n_out, level, 1e-6, 1e-5, &device_nodes, &fallbacks);
  assert_int_equal(fallbacks, 0);
  assert_int_equal(device_nodes, nodes);
}

/* The special values every float test starts with. */
static const float specials[] = {NAN, INFINITY, -INFINITY, 0.0f, -0.0f, 0.5f, -0.5f, 1.5f, 2.5f, -2.5f, 1.0f, -1.0f, 0.25f, -0.75f, 1e-7f, 30.0f, -30.0f};
enum { N_SPECIALS = sizeof specials / sizeof specials[0] };

/* ---- find_kernel ------------------------------------------------------------------------------------ */

#define DT(...) ((const tb_dtype[]){__VA_ARGS__})
static void find_kernel_by_dtype_and_attribute(void **state) {
  (void)state;
  tb_act_params act = {.alpha = 1.0f};
  assert_non_null(tcv_find("", "Acos", 7, NULL, 1, DT(TB_DTYPE_F32), 1));
  assert_non_null(tcv_find("", "Acos", 7, NULL, 1, DT(TB_DTYPE_F64), 1));
  assert_non_null(tcv_find("", "Acos", 7, NULL, 1, DT(TB_DTYPE_F16), 1)); /* the halves computed in float32 */
  assert_non_null(tcv_find("", "Neg", 13, NULL, 1, DT(TB_DTYPE_BF16), 1));
  assert_non_null(tcv_find("", "Sum", 13, NULL, 2, DT(TB_DTYPE_F16, TB_DTYPE_F16), 1));
  assert_non_null(tcv_find("", "Sum", 13, NULL, 3, DT(TB_DTYPE_F16, TB_DTYPE_F16, TB_DTYPE_F16), 1)); /* a float32 accumulator */
  /* fmod 0 on floats: the CPU's refusal */
  assert_null(tcv_find("", "Mod", 13, &(tb_mod_params){false}, 2, DT(TB_DTYPE_BF16, TB_DTYPE_BF16), 1));
  assert_non_null(tcv_find("", "Mod", 13, &(tb_mod_params){true}, 2, DT(TB_DTYPE_BF16, TB_DTYPE_BF16), 1));
  assert_null(tcv_find("", "Acos", 7, NULL, 1, DT(TB_DTYPE_I32), 1));
  assert_non_null(tcv_find("", "Celu", 12, &act, 1, DT(TB_DTYPE_F32), 1));
  assert_non_null(tcv_find("tb", "Silu", 1, NULL, 1, DT(TB_DTYPE_F64), 1));
  assert_null(tcv_find("", "Silu", 1, NULL, 1, DT(TB_DTYPE_F32), 1)); /* only TensorBridge's domain has Silu */
  /* Sign of every numeric dtype the CPU takes; Neg of unsigned is the CPU's refusal; float32 Abs is 10_elementwise's */
  assert_non_null(tcv_find("", "Sign", 13, NULL, 1, DT(TB_DTYPE_I8), 1));
  assert_non_null(tcv_find("", "Sign", 13, NULL, 1, DT(TB_DTYPE_U8), 1));
  assert_non_null(tcv_find("", "Neg", 13, NULL, 1, DT(TB_DTYPE_I64), 1));
  assert_null(tcv_find("", "Neg", 13, NULL, 1, DT(TB_DTYPE_U8), 1));
  assert_non_null(tcv_find("", "Abs", 13, NULL, 1, DT(TB_DTYPE_F32), 1));
  assert_non_null(tcv_find("", "Abs", 13, NULL, 1, DT(TB_DTYPE_U8), 1));
  tb_isinf_params isinf = {true, true};
  assert_non_null(tcv_find("", "IsInf", 10, &isinf, 1, DT(TB_DTYPE_F64), 1));
  assert_null(tcv_find("", "IsNaN", 13, NULL, 1, DT(TB_DTYPE_I32), 1));
  /* Mod: fmod 1 on floats, both forms on integers; BitShift on uint8 */
  tb_mod_params fmod0 = {false}, fmod1 = {true};
  assert_null(tcv_find("", "Mod", 13, &fmod0, 2, DT(TB_DTYPE_F32, TB_DTYPE_F32), 1));
  assert_non_null(tcv_find("", "Mod", 13, &fmod1, 2, DT(TB_DTYPE_F32, TB_DTYPE_F32), 1));
  assert_non_null(tcv_find("", "Mod", 13, &fmod0, 2, DT(TB_DTYPE_I16, TB_DTYPE_I16), 1));
  assert_null(tcv_find("", "Mod", 13, &fmod0, 2, DT(TB_DTYPE_I16, TB_DTYPE_I32), 1));
  tb_bitshift_params left = {true};
  assert_non_null(tcv_find("", "BitShift", 11, &left, 2, DT(TB_DTYPE_U8, TB_DTYPE_U8), 1));
  assert_null(tcv_find("", "BitShift", 11, &left, 2, DT(TB_DTYPE_I32, TB_DTYPE_I32), 1));
  /* Sum and Mean: any count of one float dtype */
  assert_non_null(tcv_find("", "Sum", 13, NULL, 3, DT(TB_DTYPE_F32, TB_DTYPE_F32, TB_DTYPE_F32), 1));
  assert_non_null(tcv_find("", "Mean", 13, NULL, 1, DT(TB_DTYPE_F64), 1));
  assert_null(tcv_find("", "Sum", 13, NULL, 2, DT(TB_DTYPE_F32, TB_DTYPE_F64), 1));
  assert_null(tcv_find("", "Sum", 13, NULL, 2, DT(TB_DTYPE_I32, TB_DTYPE_I32), 1));
  /* the index ops: float32, float64 and the integers (Hardmax: the floats) */
  tb_argreduce_params arg = {.is_max = true, .axis = -1, .keepdims = true};
  assert_non_null(tcv_find("", "ArgMax", 13, &arg, 1, DT(TB_DTYPE_I64), 1));
  assert_non_null(tcv_find("", "ArgMax", 13, &arg, 1, DT(TB_DTYPE_F16), 1));
  tb_softmax_params hard = {.kind = TB_HARDMAX, .axis = -1}, soft = {.kind = TB_SOFTMAX, .axis = -1};
  assert_non_null(tcv_find("", "Hardmax", 13, &hard, 1, DT(TB_DTYPE_F64), 1));
  assert_null(tcv_find("", "Hardmax", 13, &soft, 1, DT(TB_DTYPE_F64), 1));
  tb_cumsum_params cs = {0};
  assert_non_null(tcv_find("", "CumSum", 14, &cs, 2, DT(TB_DTYPE_I32, TB_DTYPE_I32), 1));
  assert_null(tcv_find("", "CumSum", 14, &cs, 2, DT(TB_DTYPE_F32, TB_DTYPE_F32), 1)); /* a float axis */
  tb_topk_params tk = {.axis = -1, .largest = true, .sorted = true};
  assert_non_null(tcv_find("", "TopK", 11, &tk, 2, DT(TB_DTYPE_F32, TB_DTYPE_I64), 2));
  assert_non_null(tcv_find("", "TopK", 11, &tk, 2, DT(TB_DTYPE_U8, TB_DTYPE_I64), 2));
  assert_non_null(tcv_find("", "TopK", 11, &tk, 2, DT(TB_DTYPE_BF16, TB_DTYPE_I64), 2));
  assert_non_null(tcv_find("", "ArgMin", 13, &arg, 1, DT(TB_DTYPE_I8), 1));
  assert_null(tcv_find("", "Hardmax", 13, &hard, 1, DT(TB_DTYPE_I32), 1)); /* Hardmax takes floats */
}

/* ---- Values ------------------------------------------------------------------------------------------ */

/* Every unary float op on float32 [3, 37] and float64 [37] with the special values, with attributes where the op
 * has them (Shrink's bias and lambd, ThresholdedRelu's alpha, Celu's alpha, Selu's alpha and gamma, IsInf's
 * detect flags), and Abs / Neg / Sign of float64. */
static void unary_values_match_the_cpu(void **state) {
  (void)state;
  if (!emulator_here()) return;
  static float x[3 * 37];
  static double x64[37];
  fill_with_specials(x, 3 * 37, 1, specials, N_SPECIALS);
  for (int i = 0; i < 37; i++) x64[i] = i < N_SPECIALS ? specials[i] : (double)x[i + 40] * 1.000000001;
  static const char *const plain[] = {"Acos", "Acosh", "Asin", "Asinh", "Atan", "Atanh", "Cos", "Cosh", "Sin", "Sinh", "Tan",
                                      "Round", "Sign", "Softsign", "HardSwish", "IsNaN"};
  tb_ir_model *ir = tbt_ir_model(17);
  tb_graph *g = tb_graph_new(ir, NULL, "unary");
  tbt_input(g, "x", TB_DTYPE_F32, 2, (const int64_t[]){3, 37}, NULL);
  tbt_input(g, "x64", TB_DTYPE_F64, 1, (const int64_t[]){37}, NULL);
  size_t nodes = 0;
  for (size_t i = 0; i < sizeof plain / sizeof plain[0]; i++)
    for (int w = 0; w < 2; w++) {
      char name[32], out[32];
      snprintf(name, sizeof name, "%s_%d", plain[i], w);
      snprintf(out, sizeof out, "y_%s_%d", plain[i], w);
      output(g, plain[i], name, w ? "x64" : "x", out);
      nodes++;
    }
  int n = tbt_node(g, "Shrink", "shrink", "x", "y_shrink");
  pt_attr_float(g, n, "bias", 0.75f);
  pt_attr_float(g, n, "lambd", 1.25f);
  tbt_output(g, "y_shrink");
  n = tbt_node(g, "ThresholdedRelu", "trelu", "x64", "y_trelu");
  pt_attr_float(g, n, "alpha", 0.5f);
  tbt_output(g, "y_trelu");
  n = tbt_node(g, "Celu", "celu", "x", "y_celu");
  pt_attr_float(g, n, "alpha", 1.5f);
  tbt_output(g, "y_celu");
  n = tbt_node(g, "Selu", "selu", "x64", "y_selu");
  pt_attr_float(g, n, "alpha", 1.25f);
  pt_attr_float(g, n, "gamma", 2.0f);
  tbt_output(g, "y_selu");
  output(g, "Selu", "selu_default", "x", "y_selu_default");
  n = tbt_node(g, "IsInf", "isinf_neg", "x", "y_isinf_neg");
  pt_attr_int(g, n, "detect_positive", 0);
  tbt_output(g, "y_isinf_neg");
  output(g, "IsInf", "isinf", "x64", "y_isinf");
  output(g, "Abs", "abs64", "x64", "y_abs64");
  output(g, "Neg", "neg64", "x64", "y_neg64");
  nodes += 9;
  tb_model *model = tbt_model_of(ir);
  const feed in[2] = {{"x", TB_DTYPE_F32, 2, {3, 37}, x}, {"x64", TB_DTYPE_F64, 1, {37}, x64}};
  all_on_device(model, 2, in, nodes, TB_LEVEL_O0, nodes);
  tb_model_destroy(model);
}

/* x * Sigmoid(x) and x * Tanh(Softplus(x)) become tb::Silu and tb::Mish at O2 and run on the device. */
static void silu_and_mish_at_o2(void **state) {
  (void)state;
  if (!emulator_here()) return;
  static float x[5 * 41];
  fill_with_specials(x, 5 * 41, 2, specials, N_SPECIALS);
  x[20] = 20.0f, x[21] = -20.0f, x[22] = 90.0f, x[23] = -90.0f;
  tb_ir_model *ir = tbt_ir_model(17);
  tb_graph *g = tb_graph_new(ir, NULL, "gated");
  tbt_input(g, "x", TB_DTYPE_F32, 2, (const int64_t[]){5, 41}, NULL);
  tbt_input(g, "w", TB_DTYPE_F32, 2, (const int64_t[]){5, 41}, NULL); /* the pass fuses a value read by the pattern only */
  tbt_node(g, "Sigmoid", "sig", "x", "s");
  output(g, "Mul", "silu", "x,s", "y_silu");
  tbt_node(g, "Softplus", "sp", "w", "p");
  tbt_node(g, "Tanh", "th", "p", "t");
  output(g, "Mul", "mish", "t,w", "y_mish");
  tb_model *model = tbt_model_of(ir);
  const feed in[2] = {{"x", TB_DTYPE_F32, 2, {5, 41}, x}, {"w", TB_DTYPE_F32, 2, {5, 41}, x}};
  all_on_device(model, 2, in, 2, TB_LEVEL_O2, 2);
  tb_model_destroy(model);
}

/* Sign, Abs and Neg of the integers with their extremes; Mod of every dtype with broadcasting, zero and negative
 * divisors, both sign rules; BitShift both ways with shifts past the width. */
static void integer_and_binary_values_match_the_cpu(void **state) {
  (void)state;
  if (!emulator_here()) return;
  int8_t i8[7] = {-128, -1, 0, 1, 127, -7, 9};
  uint8_t u8[7] = {0, 1, 255, 128, 7, 200, 3}, sh[7] = {0, 1, 7, 8, 9, 255, 3};
  int32_t a32[4 * 5], b32[5] = {3, -3, 0, -1, 7};
  int64_t a64[4 * 5], b64[4 * 1] = {5, -5, 0, -1};
  int16_t a16[5] = {-32768, 7, -7, 32767, 0}, b16[5] = {-1, 3, 3, -4, 5};
  float af[3 * 4], bf[4] = {2.5f, -2.5f, 0.0f, INFINITY};
  double ad[4] = {7.5, -7.5, 1e300, -0.0}, bd[4] = {2.0, 2.0, 3.0, 5.0};
  for (int i = 0; i < 20; i++) a32[i] = i == 3 ? INT32_MIN : (i * 7919) % 41 - 20, a64[i] = (int64_t)a32[i] * 3 - (i == 4 ? INT64_MAX : 0);
  fill_with_specials(af, 12, 3, specials, N_SPECIALS);
  tb_ir_model *ir = tbt_ir_model(13);
  tb_graph *g = tb_graph_new(ir, NULL, "ints");
  tbt_input(g, "i8", TB_DTYPE_I8, 1, (const int64_t[]){7}, NULL);
  tbt_input(g, "u8", TB_DTYPE_U8, 1, (const int64_t[]){7}, NULL);
  tbt_input(g, "sh", TB_DTYPE_U8, 1, (const int64_t[]){7}, NULL);
  tbt_input(g, "a32", TB_DTYPE_I32, 2, (const int64_t[]){4, 5}, NULL);
  tbt_input(g, "b32", TB_DTYPE_I32, 1, (const int64_t[]){5}, NULL);
  tbt_input(g, "a64", TB_DTYPE_I64, 2, (const int64_t[]){4, 5}, NULL);
  tbt_input(g, "b64", TB_DTYPE_I64, 2, (const int64_t[]){4, 1}, NULL);
  tbt_input(g, "a16", TB_DTYPE_I16, 1, (const int64_t[]){5}, NULL);
  tbt_input(g, "b16", TB_DTYPE_I16, 1, (const int64_t[]){5}, NULL);
  tbt_input(g, "af", TB_DTYPE_F32, 2, (const int64_t[]){3, 4}, NULL);
  tbt_input(g, "bf", TB_DTYPE_F32, 1, (const int64_t[]){4}, NULL);
  tbt_input(g, "ad", TB_DTYPE_F64, 1, (const int64_t[]){4}, NULL);
  tbt_input(g, "bd", TB_DTYPE_F64, 1, (const int64_t[]){4}, NULL);
  output(g, "Sign", "sign8", "i8", "y0");
  output(g, "Abs", "abs8", "i8", "y1");
  output(g, "Neg", "neg8", "i8", "y2");
  output(g, "Sign", "signu8", "u8", "y3");
  output(g, "Abs", "absu8", "u8", "y4");
  output(g, "Abs", "abs32", "a32", "y5");
  output(g, "Neg", "neg64", "a64", "y6");
  output(g, "Sign", "sign64", "a64", "y7");
  static const struct { const char *a, *b; int fmod; } mods[] = {
      {"a32", "b32", 0}, {"a32", "b32", 1}, {"b64", "a64", 0}, {"a64", "b64", 1}, {"a16", "b16", 0}, {"i8", "i8", 1},
      {"u8", "sh", 0},   {"af", "bf", 1},   {"bf", "af", 1},   {"ad", "bd", 1},
  };
  for (size_t i = 0; i < sizeof mods / sizeof mods[0]; i++) {
    char name[16], in[16], out[16];
    snprintf(name, sizeof name, "mod%zu", i);
    snprintf(in, sizeof in, "%s,%s", mods[i].a, mods[i].b);
    snprintf(out, sizeof out, "m%zu", i);
    int n = tbt_node(g, "Mod", name, in, out);
    pt_attr_int(g, n, "fmod", mods[i].fmod);
    tbt_output(g, out);
  }
  int n = tbt_node(g, "BitShift", "left", "u8,sh", "s0");
  pt_attr_string(g, n, "direction", "LEFT");
  tbt_output(g, "s0");
  n = tbt_node(g, "BitShift", "right", "u8,sh", "s1");
  pt_attr_string(g, n, "direction", "RIGHT");
  tbt_output(g, "s1");
  tb_model *model = tbt_model_of(ir);
  const feed in[13] = {
      {"i8", TB_DTYPE_I8, 1, {7}, i8},        {"u8", TB_DTYPE_U8, 1, {7}, u8},        {"sh", TB_DTYPE_U8, 1, {7}, sh},
      {"a32", TB_DTYPE_I32, 2, {4, 5}, a32},  {"b32", TB_DTYPE_I32, 1, {5}, b32},     {"a64", TB_DTYPE_I64, 2, {4, 5}, a64},
      {"b64", TB_DTYPE_I64, 2, {4, 1}, b64},  {"a16", TB_DTYPE_I16, 1, {5}, a16},     {"b16", TB_DTYPE_I16, 1, {5}, b16},
      {"af", TB_DTYPE_F32, 2, {3, 4}, af},    {"bf", TB_DTYPE_F32, 1, {4}, bf},       {"ad", TB_DTYPE_F64, 1, {4}, ad},
      {"bd", TB_DTYPE_F64, 1, {4}, bd},
  };
  all_on_device(model, 13, in, 20, TB_LEVEL_O0, 20);
  tb_model_destroy(model);
}

/* Sum and Mean of three broadcasting inputs ([2, 1, 5], [3, 1], [5]), of one, of an empty one; float32 and float64. */
static void sum_and_mean_match_the_cpu(void **state) {
  (void)state;
  if (!emulator_here()) return;
  static float a[10], b[3], c[5];
  static double a64[10], b64[3];
  fill_with_specials(a, 10, 4, specials, N_SPECIALS);
  fill(b, 3, 5);
  fill(c, 5, 6);
  for (int i = 0; i < 10; i++) a64[i] = a[i] * 1.0000001;
  for (int i = 0; i < 3; i++) b64[i] = b[i] / 3.0;
  tb_ir_model *ir = tbt_ir_model(13);
  tb_graph *g = tb_graph_new(ir, NULL, "fold");
  tbt_input(g, "a", TB_DTYPE_F32, 3, (const int64_t[]){2, 1, 5}, NULL);
  tbt_input(g, "b", TB_DTYPE_F32, 2, (const int64_t[]){3, 1}, NULL);
  tbt_input(g, "c", TB_DTYPE_F32, 1, (const int64_t[]){5}, NULL);
  tbt_input(g, "e", TB_DTYPE_F32, 2, (const int64_t[]){0, 5}, NULL);
  tbt_input(g, "a64", TB_DTYPE_F64, 3, (const int64_t[]){2, 1, 5}, NULL);
  tbt_input(g, "b64", TB_DTYPE_F64, 2, (const int64_t[]){3, 1}, NULL);
  output(g, "Sum", "sum3", "a,b,c", "y0");
  output(g, "Mean", "mean3", "c,b,a", "y1");
  output(g, "Sum", "sum1", "b", "y2");
  output(g, "Mean", "mean1", "a", "y3");
  output(g, "Sum", "sum_empty", "e,c", "y4");
  output(g, "Mean", "mean64", "a64,b64,a64", "y5");
  output(g, "Sum", "sum64", "b64,a64", "y6");
  tb_model *model = tbt_model_of(ir);
  const feed in[6] = {{"a", TB_DTYPE_F32, 3, {2, 1, 5}, a},     {"b", TB_DTYPE_F32, 2, {3, 1}, b},
                      {"c", TB_DTYPE_F32, 1, {5}, c},           {"e", TB_DTYPE_F32, 2, {0, 5}, NULL},
                      {"a64", TB_DTYPE_F64, 3, {2, 1, 5}, a64}, {"b64", TB_DTYPE_F64, 2, {3, 1}, b64}};
  all_on_device(model, 6, in, 7, TB_LEVEL_O0, 7);
  tb_model_destroy(model);
}

/* float16 and bfloat16 [3, 37] with the special values through every unary float op (with attributes), IsNaN,
 * IsInf, Abs, Neg and Sign; Mod (fmod 1) with broadcasting, zero and infinite divisors; Sum and Mean of one and
 * two broadcasting inputs whose sums round (2048 + 1 and 2048 + 3 in float16, 256 + 1 in bfloat16; overflow to
 * inf) and of an empty one: each result rounded once from float32, as the CPU, compared bit for bit. */
static void half_values_match_the_cpu(void **state) {
  (void)state;
  if (!emulator_here()) return;
  static const tb_dtype dts[2] = {TB_DTYPE_F16, TB_DTYPE_BF16};
  static const char *const plain[] = {"Acos", "Acosh", "Asin", "Asinh", "Atan", "Atanh", "Cos", "Cosh", "Sin", "Sinh", "Tan",
                                      "Round", "Sign", "Softsign", "HardSwish", "IsNaN", "IsInf", "Abs", "Neg", "Selu"};
  for (int t = 0; t < 2; t++) {
    tb_dtype dt = dts[t];
    static float xf[3 * 37], af[3 * 4], bf[4] = {2.5f, -2.5f, 0.0f, INFINITY};
    static float sa[2 * 5] = {2048.0f, 2048.0f, 256.0f, 65504.0f, -1.0f, 1.0f, 3.0f, -3.0f, 0.5f, 7.0f};
    static float sb[3] = {1.0f, 3.0f, 65504.0f};
    static uint16_t x[3 * 37], a[3 * 4], b[4], ha[10], hb[3];
    fill_with_specials(xf, 3 * 37, 11 + (unsigned)t, specials, N_SPECIALS);
    fill_with_specials(af, 3 * 4, 13, specials, N_SPECIALS);
    to_halves(xf, 3 * 37, dt, x);
    to_halves(af, 12, dt, a);
    to_halves(bf, 4, dt, b);
    to_halves(sa, 10, dt, ha);
    to_halves(sb, 3, dt, hb);
    tb_ir_model *ir = tbt_ir_model(17);
    tb_graph *g = tb_graph_new(ir, NULL, "halves");
    tbt_input(g, "x", dt, 2, (const int64_t[]){3, 37}, NULL);
    tbt_input(g, "a", dt, 2, (const int64_t[]){3, 4}, NULL);
    tbt_input(g, "b", dt, 1, (const int64_t[]){4}, NULL);
    tbt_input(g, "sa", dt, 3, (const int64_t[]){2, 1, 5}, NULL);
    tbt_input(g, "sb", dt, 2, (const int64_t[]){3, 1}, NULL);
    tbt_input(g, "e", dt, 2, (const int64_t[]){0, 5}, NULL);
    size_t nodes = 0;
    for (size_t i = 0; i < sizeof plain / sizeof plain[0]; i++) {
      char out[32];
      snprintf(out, sizeof out, "y_%s", plain[i]);
      output(g, plain[i], plain[i], "x", out);
      nodes++;
    }
    int n = tbt_node(g, "Shrink", "shrink", "x", "y_shrink");
    pt_attr_float(g, n, "bias", 0.75f);
    pt_attr_float(g, n, "lambd", 1.25f);
    tbt_output(g, "y_shrink");
    n = tbt_node(g, "ThresholdedRelu", "trelu", "x", "y_trelu");
    pt_attr_float(g, n, "alpha", 0.5f);
    tbt_output(g, "y_trelu");
    n = tbt_node(g, "Celu", "celu", "x", "y_celu");
    pt_attr_float(g, n, "alpha", 1.5f);
    tbt_output(g, "y_celu");
    n = tbt_node(g, "IsInf", "isinf_neg", "x", "y_isinf_neg");
    pt_attr_int(g, n, "detect_positive", 0);
    tbt_output(g, "y_isinf_neg");
    n = tbt_node(g, "Mod", "mod_ab", "a,b", "m0");
    pt_attr_int(g, n, "fmod", 1);
    tbt_output(g, "m0");
    n = tbt_node(g, "Mod", "mod_ba", "b,a", "m1");
    pt_attr_int(g, n, "fmod", 1);
    tbt_output(g, "m1");
    output(g, "Sum", "sum2", "sa,sb", "s0");
    output(g, "Mean", "mean2", "sb,sa", "s1");
    output(g, "Sum", "sum1", "sb", "s2");
    output(g, "Mean", "mean1", "sa", "s3");
    output(g, "Sum", "sum_empty", "e,sa", "s4");
    nodes += 11;
    tb_model *model = tbt_model_of(ir);
    const feed in[6] = {{"x", dt, 2, {3, 37}, x},     {"a", dt, 2, {3, 4}, a},  {"b", dt, 1, {4}, b},
                        {"sa", dt, 3, {2, 1, 5}, ha}, {"sb", dt, 2, {3, 1}, hb}, {"e", dt, 2, {0, 5}, NULL}};
    all_on_device(model, 6, in, nodes, TB_LEVEL_O0, nodes);
    tb_model_destroy(model);
  }
}

/* The index ops on float16 and bfloat16 [4, 6, 37] with ties, NaN (first in a row and inside), +-inf and a row
 * of -inf: ArgMax / ArgMin along the last (a block per row) and a middle axis, Hardmax, CumSum both ways (summed in
 * double and rounded once per output, as the CPU: a column 1, half an ulp, a sliver whose sum a float32
 * intermediate would round to a tie and then to 1) and TopK largest and smallest, k 5 and 37. */
static void half_index_values_match_the_cpu(void **state) {
  (void)state;
  if (!emulator_here()) return;
  static const tb_dtype dts[2] = {TB_DTYPE_F16, TB_DTYPE_BF16};
  for (int t = 0; t < 2; t++) {
    tb_dtype dt = dts[t];
    static float xf[4 * 6 * 37];
    static uint16_t x[4 * 6 * 37], c[3];
    fill(xf, 4 * 6 * 37, 21 + (unsigned)t);
    for (size_t i = 0; i < 4 * 6 * 37; i++) xf[i] = roundf(xf[i] * 2.0f) / 2.0f; /* many ties */
    xf[0] = NAN, xf[37 + 5] = NAN, xf[2 * 37 + 3] = INFINITY, xf[3 * 37] = -INFINITY;
    for (int i = 0; i < 37; i++) xf[5 * 37 + i] = -INFINITY;
    const float cf[3] = {1.0f, t == 0 ? 0x1p-11f : 0x1p-8f, t == 0 ? 0x1p-24f : 0x1p-40f};
    to_halves(xf, 4 * 6 * 37, dt, x);
    to_halves(cf, 3, dt, c);
    tb_ir_model *ir = tbt_ir_model(13);
    tb_graph *g = tb_graph_new(ir, NULL, "half_index");
    tbt_input(g, "x", dt, 3, (const int64_t[]){4, 6, 37}, NULL);
    tbt_input(g, "c", dt, 1, (const int64_t[]){3}, NULL);
    static const struct { const char *op; int axis, last; } args[] = {{"ArgMax", -1, 0}, {"ArgMin", 1, 1}, {"ArgMax", 0, 1}, {"ArgMin", 2, 0}};
    for (size_t i = 0; i < 4; i++) {
      char name[16], out[16];
      snprintf(name, sizeof name, "arg%zu", i);
      snprintf(out, sizeof out, "ya%zu", i);
      int n = tbt_node(g, args[i].op, name, "x", out);
      pt_attr_int(g, n, "axis", args[i].axis);
      pt_attr_int(g, n, "select_last_index", args[i].last);
      tbt_output(g, out);
    }
    int n = tbt_node(g, "Hardmax", "hard_mid", "x", "yh0");
    pt_attr_int(g, n, "axis", 1);
    tbt_output(g, "yh0");
    output(g, "Hardmax", "hard_last", "x", "yh1");
    tbt_const_i64(g, "ax_last", 0, NULL, (const int64_t[]){-1});
    tbt_const_i64(g, "ax_mid", 0, NULL, (const int64_t[]){1});
    output(g, "CumSum", "cumsum_last", "x,ax_last", "yc0");
    n = tbt_node(g, "CumSum", "cumsum_mid", "x,ax_mid", "yc1");
    pt_attr_int(g, n, "exclusive", 1);
    pt_attr_int(g, n, "reverse", 1);
    tbt_output(g, "yc1");
    output(g, "CumSum", "cumsum_tie", "c,ax_last", "yc2");
    tbt_const_i64(g, "k5", 1, (const int64_t[]){1}, (const int64_t[]){5});
    tbt_const_i64(g, "k37", 1, (const int64_t[]){1}, (const int64_t[]){37});
    n = tbt_node(g, "TopK", "top_last", "x,k37", "ytv0,yti0");
    tbt_output(g, "ytv0");
    tbt_output(g, "yti0");
    n = tbt_node(g, "TopK", "top_mid", "x,k5", "ytv1,yti1");
    pt_attr_int(g, n, "axis", 1);
    pt_attr_int(g, n, "largest", 0);
    tbt_output(g, "ytv1");
    tbt_output(g, "yti1");
    tb_model *model = tbt_model_of(ir);
    const feed in[2] = {{"x", dt, 3, {4, 6, 37}, x}, {"c", dt, 1, {3}, c}};
    all_on_device(model, 2, in, 13, TB_LEVEL_O0, 11);
    tb_model_destroy(model);
  }
}

/* ArgMax / ArgMin along the last axis (a block per row) and a middle one (a thread per column), with ties both
 * ways and NaN first and inside a row; Hardmax at opset 13 (a middle axis) and 11 (flattened); CumSum forward,
 * exclusive and reverse with negative axes; TopK largest and smallest along the last, a middle and the first axis
 * with ties and NaN, k 0 and k of the whole axis; each on float32, float64, int8, int16, int32, int64 and uint8. */
static void index_values_match_the_cpu(void **state) {
  (void)state;
  if (!emulator_here()) return;
  static float x[4 * 6 * 37];
  static double x64[6 * 37];
  static int64_t xi[6 * 37];
  static int32_t xi32[6 * 37];
  static int8_t xi8[6 * 37];
  static uint8_t xu8[6 * 37];
  static int16_t xi16[6 * 37];
  fill(x, 4 * 6 * 37, 7);
  for (size_t i = 0; i < 4 * 6 * 37; i++) x[i] = roundf(x[i] * 2.0f) / 2.0f; /* many ties */
  x[0] = NAN;                      /* a row starting with NaN */
  x[37 + 5] = NAN;                 /* NaN inside a row */
  x[2 * 37 + 3] = INFINITY, x[3 * 37] = -INFINITY;
  for (int i = 0; i < 37; i++) x[5 * 37 + i] = -INFINITY; /* a row of -inf (Hardmax: index 0) */
  for (size_t i = 0; i < 6 * 37; i++) x64[i] = x[i] + (double)x[i + 222] * 1e-3, xi[i] = (int64_t)(x[i + 300] * 2) * 1000003, xi32[i] = (int32_t)(x[i + 400] * 2);
  x64[7] = NAN;
  xi[9] = INT64_MAX, xi[10] = INT64_MIN;
  for (size_t i = 0; i < 6 * 37; i++) /* few distinct values: ties; sums that wrap */
    xi8[i] = (int8_t)((i * 37) % 7 * 40 - 120), xu8[i] = (uint8_t)((i * 11) % 5 * 60), xi16[i] = (int16_t)((i * 13) % 9 * 8000 - 32000);
  tb_ir_model *ir = tbt_ir_model(13);
  tb_graph *g = tb_graph_new(ir, NULL, "index");
  tbt_input(g, "x", TB_DTYPE_F32, 3, (const int64_t[]){4, 6, 37}, NULL);
  tbt_input(g, "x64", TB_DTYPE_F64, 2, (const int64_t[]){6, 37}, NULL);
  tbt_input(g, "xi", TB_DTYPE_I64, 2, (const int64_t[]){6, 37}, NULL);
  tbt_input(g, "xi32", TB_DTYPE_I32, 2, (const int64_t[]){6, 37}, NULL);
  tbt_input(g, "xi8", TB_DTYPE_I8, 2, (const int64_t[]){6, 37}, NULL);
  tbt_input(g, "xu8", TB_DTYPE_U8, 2, (const int64_t[]){6, 37}, NULL);
  tbt_input(g, "xi16", TB_DTYPE_I16, 2, (const int64_t[]){6, 37}, NULL);
  size_t outs = 0;
  static const struct { const char *op, *in; int axis, keepdims, last; } args[] = {
      {"ArgMax", "x", -1, 1, 0}, {"ArgMax", "x", 2, 0, 1}, {"ArgMin", "x", 1, 1, 0}, {"ArgMin", "x", -2, 0, 1},
      {"ArgMax", "x", 0, 1, 1},  {"ArgMax", "x64", 1, 1, 0}, {"ArgMin", "xi", -1, 0, 0}, {"ArgMax", "xi32", 0, 1, 1},
      {"ArgMax", "xu8", -1, 1, 1}, {"ArgMin", "xi8", 0, 0, 0}, {"ArgMax", "xi16", 1, 1, 0},
  };
  for (size_t i = 0; i < sizeof args / sizeof args[0]; i++) {
    char name[16], out[16];
    snprintf(name, sizeof name, "arg%zu", i);
    snprintf(out, sizeof out, "ya%zu", i);
    int n = tbt_node(g, args[i].op, name, args[i].in, out);
    pt_attr_int(g, n, "axis", args[i].axis);
    pt_attr_int(g, n, "keepdims", args[i].keepdims);
    pt_attr_int(g, n, "select_last_index", args[i].last);
    tbt_output(g, out);
    outs++;
  }
  int n = tbt_node(g, "Hardmax", "hard_mid", "x", "yh0");
  pt_attr_int(g, n, "axis", 1);
  tbt_output(g, "yh0");
  output(g, "Hardmax", "hard_last", "x64", "yh1");
  outs += 2;
  tbt_const_i64(g, "ax_last", 0, NULL, (const int64_t[]){-1});
  tbt_const(g, "ax_mid", TB_DTYPE_I32, 1, (const int64_t[]){1}, (const int32_t[]){-2});
  static const struct { const char *in; int exclusive, reverse; } sums[] = {
      {"x,ax_last", 0, 0}, {"x,ax_mid", 1, 0}, {"x64,ax_last", 0, 1}, {"xi,ax_mid", 1, 1}, {"xi32,ax_last", 0, 0},
      {"xi8,ax_last", 0, 0}, {"xu8,ax_mid", 1, 1}, {"xi16,ax_last", 0, 1},
  };
  for (size_t i = 0; i < sizeof sums / sizeof sums[0]; i++) {
    char name[16], out[16];
    snprintf(name, sizeof name, "cumsum%zu", i);
    snprintf(out, sizeof out, "yc%zu", i);
    n = tbt_node(g, "CumSum", name, sums[i].in, out);
    pt_attr_int(g, n, "exclusive", sums[i].exclusive);
    pt_attr_int(g, n, "reverse", sums[i].reverse);
    tbt_output(g, out);
    outs++;
  }
  tbt_const_i64(g, "k5", 1, (const int64_t[]){1}, (const int64_t[]){5});
  tbt_const_i64(g, "k0", 1, (const int64_t[]){1}, (const int64_t[]){0});
  tbt_const_i64(g, "k37", 1, (const int64_t[]){1}, (const int64_t[]){37});
  static const struct { const char *in; int axis, largest; } tops[] = {
      {"x,k5", -1, 1}, {"x,k5", 1, 0}, {"x64,k37", 1, 0}, {"xi,k5", 0, 1}, {"xi32,k5", -1, 0}, {"x,k0", 2, 1},
      {"xu8,k37", -1, 1}, {"xi8,k5", 0, 0}, {"xi16,k5", 1, 1},
  };
  for (size_t i = 0; i < sizeof tops / sizeof tops[0]; i++) {
    char name[16], outv[16], outi[16], both[40];
    snprintf(name, sizeof name, "topk%zu", i);
    snprintf(outv, sizeof outv, "ytv%zu", i);
    snprintf(outi, sizeof outi, "yti%zu", i);
    snprintf(both, sizeof both, "%s,%s", outv, outi);
    n = tbt_node(g, "TopK", name, tops[i].in, both);
    pt_attr_int(g, n, "axis", tops[i].axis);
    pt_attr_int(g, n, "largest", tops[i].largest);
    tbt_output(g, outv);
    tbt_output(g, outi);
    outs += 2;
  }
  tb_model *model = tbt_model_of(ir);
  const feed in[7] = {{"x", TB_DTYPE_F32, 3, {4, 6, 37}, x}, {"x64", TB_DTYPE_F64, 2, {6, 37}, x64},
                      {"xi", TB_DTYPE_I64, 2, {6, 37}, xi},  {"xi32", TB_DTYPE_I32, 2, {6, 37}, xi32},
                      {"xi8", TB_DTYPE_I8, 2, {6, 37}, xi8}, {"xu8", TB_DTYPE_U8, 2, {6, 37}, xu8},
                      {"xi16", TB_DTYPE_I16, 2, {6, 37}, xi16}};
  all_on_device(model, 7, in, outs, TB_LEVEL_O0, 11 + 2 + 8 + 9);
  tb_model_destroy(model);
  /* Hardmax before opset 13: the axis and every dim after it form one row */
  ir = tbt_ir_model(11);
  g = tb_graph_new(ir, NULL, "hardmax11");
  tbt_input(g, "x", TB_DTYPE_F32, 3, (const int64_t[]){4, 6, 37}, NULL);
  n = tbt_node(g, "Hardmax", "hard", "x", "y");
  pt_attr_int(g, n, "axis", 1);
  tbt_output(g, "y");
  model = tbt_model_of(ir);
  all_on_device(model, 1, in, 1, TB_LEVEL_O0, 1);
  tb_model_destroy(model);
}

/* TopK of rows longer than the shared-memory sort (2500 elements): the radix select (test_cuda_topk has more), with
 * ties and NaN (the values on the emulator; the kernel that ran with or without it). */
static void topk_of_long_rows_matches_the_cpu(void **state) {
  (void)state;
  static float x[2 * 2500];
  fill(x, 2 * 2500, 8);
  for (size_t i = 0; i < 2 * 2500; i++) x[i] = roundf(x[i] * 4.0f); /* ties */
  x[1234] = NAN, x[2500 + 17] = INFINITY;
  tb_ir_model *ir = tbt_ir_model(13);
  tb_graph *g = tb_graph_new(ir, NULL, "long");
  tbt_input(g, "x", TB_DTYPE_F32, 2, (const int64_t[]){2, 2500}, NULL);
  tbt_const_i64(g, "k", 1, (const int64_t[]){1}, (const int64_t[]){4});
  int n = tbt_node(g, "TopK", "top", "x,k", "v0,i0");
  tbt_output(g, "v0");
  tbt_output(g, "i0");
  n = tbt_node(g, "TopK", "bottom", "x,k", "v1,i1");
  pt_attr_int(g, n, "largest", 0);
  tbt_output(g, "v1");
  tbt_output(g, "i1");
  tb_model *model = tbt_model_of(ir);
  const feed in[1] = {{"x", TB_DTYPE_F32, 2, {2, 2500}, x}};
  launch_reset();
  if (emulator_here()) all_on_device(model, 1, in, 4, TB_LEVEL_O0, 2);
  else tcv_run_device(model, 1, in, 4, TB_LEVEL_O0);
  assert_int_equal(launches_of("tb_cu_ew_topk_radix_f32"), 2);
  assert_int_equal(launches_of("tb_cu_ew_topk_sort_f32"), 0);
  tb_model_destroy(model);
}

/* CumSum's axis, a constant, stays on the host (a value input): the run reads nothing back, so the model is captured as
 * a CUDA graph and replayed (one cuGraphLaunch, no kernel launch) while its shapes repeat. */
static void cumsum_with_a_constant_axis_is_replayed(void **state) {
  (void)state;
  static float x[3 * 5];
  fill(x, 15, 9);
  tb_ir_model *ir = tbt_ir_model(14);
  tb_graph *g = tb_graph_new(ir, NULL, "scan");
  tbt_input(g, "x", TB_DTYPE_F32, 2, (const int64_t[]){3, 5}, NULL);
  tbt_const_i64(g, "axis", 0, NULL, (const int64_t[]){1});
  output(g, "CumSum", "cumsum", "x,axis", "y");
  tb_model *model = tbt_model_of(ir);
  tb_backend *cpu = NULL, *cuda = open_cuda0();
  TB_ASSERT_OK(tb_backend_create("cpu", &cpu));
  tb_prepare_options o = {.size = sizeof o, .level = TB_LEVEL_O2};
  tb_prepared *p = NULL;
  const tb_prepare_result *r = NULL;
  TB_ASSERT_OK(tb_model_prepare(model, cuda, &o, &p, &r));
  assert_true(r->graph_capture);
  tb_tensor *in = tbt_f32(cpu, 2, (const int64_t[]){3, 5}, x);
  const char *names[1] = {"x"};
  int (*calls)(const char *) = (int (*)(const char *))fake_symbol("fake_cuda_calls");
  void (*log_reset)(void) = (void (*)(void))fake_symbol("fake_cuda_call_log_reset");
  for (int run = 0; run < 3; run++) {
    tb_tensor *y = NULL;
    log_reset();
    TB_ASSERT_OK(tb_prepared_run(p, 1, names, &in, 1, NULL, &y));
    assert_int_equal(calls("cuMemcpyDtoH_v2") + calls("cuMemcpyDtoHAsync_v2"), 0); /* the axis is not read back */
    if (run > 0) {
      assert_int_equal(calls("cuGraphLaunch"), 1);
      assert_int_equal(calls("cuLaunchKernel"), 0);
    }
    if (run == 2 && emulator_here()) {
      float got[15];
      TB_ASSERT_OK(tb_tensor_copy_to_host(y, got, sizeof got));
      for (int i = 0; i < 3; i++) {
        float sum = 0;
        for (int j = 0; j < 5; j++) {
          sum += x[i * 5 + j];
          assert_true(got[i * 5 + j] == sum);
        }
      }
    }
    tb_tensor_destroy(y);
  }
  tb_tensor_destroy(in);
  tb_prepared_destroy(p);
  tb_model_destroy(model);
  tb_backend_destroy(cuda);
  tb_backend_destroy(cpu);
}

/* ---- Errors ------------------------------------------------------------------------------------------ */

/* A CumSum axis outside the rank, a failing launch (faulted, out of memory) and device memory running out: each a
 * status and a sentence naming the node, nothing leaked (teardown counts the device allocations). */
static void errors_are_statuses(void **state) {
  (void)state;
  tb_backend *cpu = NULL, *cuda = open_cuda0();
  TB_ASSERT_OK(tb_backend_create("cpu", &cpu));
  tb_ir_model *ir = tbt_ir_model(14);
  tb_graph *g = tb_graph_new(ir, NULL, "errors");
  tbt_input(g, "x", TB_DTYPE_F32, 2, (const int64_t[]){3, 5}, NULL);
  tbt_input(g, "axis", TB_DTYPE_I64, 0, NULL, NULL);
  output(g, "Sin", "sin", "x", "y");
  output(g, "CumSum", "cumsum", "y,axis", "z");
  tb_model *model = tbt_model_of(ir);
  tb_prepare_options o = {.size = sizeof o, .level = TB_LEVEL_O0};
  tb_prepared *p = NULL;
  const tb_prepare_result *r = NULL;
  TB_ASSERT_OK(tb_model_prepare(model, cuda, &o, &p, &r));
  assert_int_equal(r->device_nodes, 2);
  static const float x[15] = {0};
  tb_tensor *in[2] = {tbt_f32(cpu, 2, (const int64_t[]){3, 5}, x), NULL}, *out[2] = {NULL, NULL};
  TB_ASSERT_OK(tb_tensor_create(cpu, TB_DTYPE_I64, 0, NULL, &in[1]));
  const int64_t bad = 2, good = -1;
  const char *names[2] = {"x", "axis"};
  TB_ASSERT_OK(tb_tensor_copy_from_host(in[1], &bad, sizeof bad));
  assert_int_equal(tb_prepared_run(p, 2, names, in, 2, NULL, out), TB_ERR_INVALID_ARGUMENT);
  TB_ASSERT_CONTAINS(tb_last_error(), "node 'cumsum' (CumSum): axis 2 is out of range for rank 2; give an axis in [-2, 2)");
  assert_null(out[0]);
  TB_ASSERT_OK(tb_tensor_copy_from_host(in[1], &good, sizeof good));
  setenv("FAKE_CUDA_LAUNCH_FAIL_AT", "1", 1);
  setenv("FAKE_CUDA_FAIL_CODE", "700", 1);
  launch_reset();
  assert_int_equal(tb_prepared_run(p, 2, names, in, 2, NULL, out), TB_ERR_DRIVER);
  TB_ASSERT_CONTAINS(tb_last_error(), "cuda:0: cuLaunchKernel of tb_cu_ew_math_f32 for node 'sin' (Sin) (grid 1 x 1 x 1 of 256 threads) "
                                      "failed with 700 CUDA_ERROR_ILLEGAL_ADDRESS");
  setenv("FAKE_CUDA_LAUNCH_FAIL_AT", "2", 1);
  setenv("FAKE_CUDA_FAIL_CODE", "2", 1);
  launch_reset();
  assert_int_equal(tb_prepared_run(p, 2, names, in, 2, NULL, out), TB_ERR_OUT_OF_MEMORY);
  TB_ASSERT_CONTAINS(tb_last_error(), "cuLaunchKernel of tb_cu_ew_cumsum_f32 for node 'cumsum' (CumSum)");
  TB_ASSERT_CONTAINS(tb_last_error(), "CUDA_ERROR_OUT_OF_MEMORY; free device memory");
  unsetenv("FAKE_CUDA_LAUNCH_FAIL_AT");
  unsetenv("FAKE_CUDA_FAIL_CODE");
  launch_reset();
  TB_ASSERT_OK(tb_prepared_run(p, 2, names, in, 2, NULL, out));
  assert_int_equal(launches_of("tb_cu_ew_math_f32"), 1);
  assert_int_equal(launches_of("tb_cu_ew_cumsum_f32"), 1);
  for (int i = 0; i < 2; i++) tb_tensor_destroy(out[i]), tb_tensor_destroy(in[i]);
  tb_prepared_destroy(p);
  tb_model_destroy(model);
  /* activations larger than the device */
  setenv("FAKE_CUDA_MEM_CAPACITY", "64K", 1);
  tb_backend_destroy(cuda);
  cuda = open_cuda0();
  ir = tbt_ir_model(13);
  g = tb_graph_new(ir, NULL, "big");
  tbt_input(g, "x", TB_DTYPE_F32, 2, (const int64_t[]){200, 100}, NULL);
  output(g, "Cos", "cos", "x", "y");
  model = tbt_model_of(ir);
  TB_ASSERT_OK(tb_model_prepare(model, cuda, &o, &p, NULL));
  static float big[20000];
  tb_tensor *t = tbt_f32(cpu, 2, (const int64_t[]){200, 100}, big), *y = NULL;
  assert_int_equal(tb_prepared_run(p, 1, names, &t, 1, NULL, &y), TB_ERR_OUT_OF_MEMORY);
  assert_null(y);
  TB_ASSERT_CONTAINS(tb_last_error(), "cuda:0: out of memory allocating");
  unsetenv("FAKE_CUDA_MEM_CAPACITY");
  tb_tensor_destroy(t);
  tb_prepared_destroy(p);
  tb_model_destroy(model);
  tb_backend_destroy(cuda);
  tb_backend_destroy(cpu);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(find_kernel_by_dtype_and_attribute),
      cmocka_unit_test_setup_teardown(unary_values_match_the_cpu, setup, teardown),
      cmocka_unit_test_setup_teardown(silu_and_mish_at_o2, setup, teardown),
      cmocka_unit_test_setup_teardown(integer_and_binary_values_match_the_cpu, setup, teardown),
      cmocka_unit_test_setup_teardown(sum_and_mean_match_the_cpu, setup, teardown),
      cmocka_unit_test_setup_teardown(half_values_match_the_cpu, setup, teardown),
      cmocka_unit_test_setup_teardown(half_index_values_match_the_cpu, setup, teardown),
      cmocka_unit_test_setup_teardown(index_values_match_the_cpu, setup, teardown),
      cmocka_unit_test_setup_teardown(topk_of_long_rows_matches_the_cpu, setup, teardown),
      cmocka_unit_test_setup_teardown(cumsum_with_a_constant_axis_is_replayed, setup, teardown),
      cmocka_unit_test_setup_teardown(errors_are_statuses, setup, teardown),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
