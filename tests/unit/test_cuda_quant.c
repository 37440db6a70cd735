/* The CUDA kernels of the quantized operators (kernels/45_quant.cu, cuda_ops_quant.c) on the fake cuda:0 of the
 * recorded 8x H100 node: QuantizeLinear and DequantizeLinear per tensor and per axis (uint8 / int8 with and
 * without zero points, int32 input, ties that round half to even, saturation, NaN and infinities),
 * MatMulInteger with zero points per tensor, per row and per column and broadcast batch dims, QLinearMatMul
 * to uint8 and int8, ConvInteger and QLinearConv in 1-D, 2-D (groups, strides, pads, dilations, per-channel zero
 * points and scales, a bias) and 3-D, on odd shapes; their values computed by the kernels' own source on the emulated grid
 * (tests/cuda_emu) and compared with the CPU backend at O0 byte for byte (integers and floats alike). Each model
 * must run on the device. Also: find_kernel's answers, a zero point of the wrong size and a failing launch.
 * Without the emulator (no C++ compiler) the value tests print why and check nothing. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "backend/cuda/cuda_module.h"
#include "backend/cuda/kernels/cuda_ops.h"
#include "core/error.h"
#include "ops/nn/nn_params.h"
#include "pass_test.h"
#include "test_cuda_values.h"
#include "test_engine_util.h"
#include "test_util.h"

static char cache_dir[64];

static int setup(void **state) { return tcv_setup(state, cache_dir, "tb_cuquant"); }
static int teardown(void **state) {
  (void)state;
  return tcv_teardown(cache_dir);
}

/* Run `model` on the CPU and on the emulated cuda:0 at O0: every node on the device, every output byte for byte. */
static void same_as_cpu(tb_model *model, size_t n_in, const feed *in, size_t n_out) {
  size_t device_nodes = 0, fallbacks = 0;
  compare_runs(model, n_in, in, n_out, TB_LEVEL_O0, 0, 0, &device_nodes, &fallbacks);
  assert_int_equal(fallbacks, 0);
}

static void bytes_fill(unsigned char *v, size_t n, unsigned seed) {
  for (size_t i = 0; i < n; i++) {
    seed = seed * 1103515245u + 12345u;
    v[i] = (unsigned char)(seed >> 16);
  }
}

/* ---- find_kernel ------------------------------------------------------------------------------------ */

static const tb_kernel *find(const char *op, const void *params, size_t n_in, const tb_dtype *dts) {
  return tcv_find("", op, 13, params, n_in, dts, 1);
}

static void find_kernel_by_dtype(void **state) {
  (void)state;
  tb_quant_params p = {.axis = 1, .per_axis = true};
  const tb_dtype F = TB_DTYPE_F32, U = TB_DTYPE_U8, I = TB_DTYPE_I8, NONE = TB_DTYPE_COUNT;
  assert_non_null(find("QuantizeLinear", &p, 3, (const tb_dtype[]){F, F, I}));
  assert_non_null(find("QuantizeLinear", &p, 2, (const tb_dtype[]){F, F}));
  assert_null(find("QuantizeLinear", &p, 3, (const tb_dtype[]){TB_DTYPE_F16, TB_DTYPE_F16, U})); /* float16 stays on the CPU */
  assert_null(find("QuantizeLinear", &p, 2, (const tb_dtype[]){TB_DTYPE_I32, F}));
  assert_non_null(find("DequantizeLinear", &p, 3, (const tb_dtype[]){U, F, U}));
  assert_non_null(find("DequantizeLinear", &p, 2, (const tb_dtype[]){TB_DTYPE_I32, F}));
  assert_null(find("DequantizeLinear", &p, 3, (const tb_dtype[]){U, F, I})); /* the zero point's dtype differs */
  assert_non_null(find("MatMulInteger", NULL, 4, (const tb_dtype[]){U, I, U, I}));
  assert_non_null(find("MatMulInteger", NULL, 4, (const tb_dtype[]){I, U, NONE, U}));
  assert_null(find("MatMulInteger", NULL, 2, (const tb_dtype[]){TB_DTYPE_I32, U}));
  assert_non_null(find("QLinearMatMul", NULL, 8, (const tb_dtype[]){U, F, U, I, F, I, F, U}));
  tb_conv_params cp = {.group = 1};
  assert_non_null(find("ConvInteger", &cp, 4, (const tb_dtype[]){U, I, U, I}));
  assert_null(find("ConvInteger", &cp, 2, (const tb_dtype[]){F, F}));
  assert_non_null(find("QLinearConv", &cp, 9, (const tb_dtype[]){I, F, I, U, F, U, F, I, TB_DTYPE_I32}));
  assert_null(find("QLinearConv", &cp, 9, (const tb_dtype[]){I, F, I, U, F, U, F, I, F})); /* a float bias */
  assert_null(find("QLinearMatMul", NULL, 8, (const tb_dtype[]){U, F, U, I, F, I, TB_DTYPE_F16, U}));
}

/* ---- Values ------------------------------------------------------------------------------------------- */

/* QuantizeLinear per tensor (no zero point: uint8; int8 with one), per axis (axis 1 and -1, uint8 and int8
 * zero points), with ties, saturation, NaN and infinities in x; DequantizeLinear of each back, and of int32. */
static void quantize_dequantize_match_the_cpu(void **state) {
  (void)state;
  if (!emulator_here()) return;
  enum { N = 3 * 5 * 7 };
  static float x[N];
  for (int i = 0; i < N; i++) x[i] = (float)((i * 37) % 101 - 50) * 0.25f; /* multiples of 0.25: ties at scale 0.5 */
  x[3] = NAN, x[4] = INFINITY, x[5] = -INFINITY, x[6] = 1e9f, x[7] = -1e9f, x[8] = 0.75f, x[9] = -0.75f, x[10] = 1.25f;
  static int32_t wide[N];
  for (int i = 0; i < N; i++) wide[i] = (i * 7919) % 4001 - 2000;
  tb_ir_model *ir = tbt_ir_model(13);
  tb_graph *g = tb_graph_new(ir, NULL, "quant");
  const int64_t xd[3] = {3, 5, 7}, five = 5, seven = 7;
  tbt_input(g, "x", TB_DTYPE_F32, 3, xd, NULL);
  tbt_input(g, "w", TB_DTYPE_I32, 3, xd, NULL);
  pt_const_scalar(g, "s", 0.5f);
  tbt_const(g, "zi8", TB_DTYPE_I8, 0, NULL, (const int8_t[]){-3});
  tbt_const_f32(g, "s5", 1, &five, (const float[]){0.5f, 0.25f, 1.5f, 0.1f, 3.0f});
  tbt_const(g, "z5", TB_DTYPE_U8, 1, &five, (const uint8_t[]){0, 128, 255, 7, 100});
  tbt_const_f32(g, "s7", 1, &seven, (const float[]){0.5f, 0.3f, 2.0f, 0.7f, 0.05f, 1.0f, 0.125f});
  tbt_const(g, "z7", TB_DTYPE_I8, 1, &seven, (const int8_t[]){-128, -1, 0, 1, 5, 127, -60});
  tbt_node(g, "QuantizeLinear", "q_u8", "x,s", "q0");
  tbt_node(g, "QuantizeLinear", "q_i8", "x,s,zi8", "q1");
  tbt_node(g, "QuantizeLinear", "q_axis1", "x,s5,z5", "q2");
  int n = tbt_node(g, "QuantizeLinear", "q_axis_last", "x,s7,z7", "q3");
  pt_attr_int(g, n, "axis", -1);
  tbt_node(g, "DequantizeLinear", "d_u8", "q0,s", "d0");
  tbt_node(g, "DequantizeLinear", "d_i8", "q1,s,zi8", "d1");
  tbt_node(g, "DequantizeLinear", "d_axis1", "q2,s5,z5", "d2");
  n = tbt_node(g, "DequantizeLinear", "d_axis_last", "q3,s7", "d3");
  pt_attr_int(g, n, "axis", 2);
  tbt_node(g, "DequantizeLinear", "d_i32", "w,s5", "d4");
  static const char *const outs[] = {"q0", "q1", "q2", "q3", "d0", "d1", "d2", "d3", "d4"};
  for (size_t i = 0; i < 9; i++) tbt_output(g, outs[i]);
  tb_model *model = tbt_model_of(ir);
  const feed in[2] = {{"x", TB_DTYPE_F32, 3, {3, 5, 7}, x}, {"w", TB_DTYPE_I32, 3, {3, 5, 7}, wide}};
  same_as_cpu(model, 2, in, 9);
  tb_model_destroy(model);
}

/* MatMulInteger: per-row / per-column zero points with a batch broadcast, scalar zero points with both operands
 * batched, none with a 1-D A; QLinearMatMul to uint8 and int8. */
static void integer_products_match_the_cpu(void **state) {
  (void)state;
  if (!emulator_here()) return;
  static unsigned char a[3 * 5 * 7], b[7 * 9], c[2 * 1 * 4 * 6], e[3 * 6 * 5], v[7], f[2 * 7 * 3], qa[4 * 9], qb[9 * 11];
  bytes_fill(a, sizeof a, 1), bytes_fill(b, sizeof b, 2), bytes_fill(c, sizeof c, 3), bytes_fill(e, sizeof e, 4);
  bytes_fill(v, sizeof v, 5), bytes_fill(f, sizeof f, 6), bytes_fill(qa, sizeof qa, 7), bytes_fill(qb, sizeof qb, 8);
  tb_ir_model *ir = tbt_ir_model(13);
  tb_graph *g = tb_graph_new(ir, NULL, "qmm");
  tbt_input(g, "a", TB_DTYPE_U8, 3, (const int64_t[]){3, 5, 7}, NULL);
  tbt_input(g, "b", TB_DTYPE_I8, 2, (const int64_t[]){7, 9}, NULL);
  tbt_input(g, "c", TB_DTYPE_I8, 4, (const int64_t[]){2, 1, 4, 6}, NULL);
  tbt_input(g, "e", TB_DTYPE_U8, 3, (const int64_t[]){3, 6, 5}, NULL);
  const int64_t five = 5, nine = 9;
  tbt_const(g, "az5", TB_DTYPE_U8, 1, &five, (const uint8_t[]){0, 3, 200, 128, 255});
  tbt_const(g, "bz9", TB_DTYPE_I8, 1, &nine, (const int8_t[]){-128, -5, 0, 1, 2, 3, 4, 127, 9});
  tbt_const(g, "cz", TB_DTYPE_I8, 0, NULL, (const int8_t[]){-7});
  tbt_const(g, "ez", TB_DTYPE_U8, 0, NULL, (const uint8_t[]){131});
  tbt_node(g, "MatMulInteger", "mm_rows_cols", "a,b,az5,bz9", "y0");
  tbt_node(g, "MatMulInteger", "mm_batched", "c,e,cz,ez", "y1");
  tbt_const(g, "v", TB_DTYPE_U8, 1, (const int64_t[]){7}, v);
  tbt_const(g, "f", TB_DTYPE_U8, 3, (const int64_t[]){2, 7, 3}, f);
  tbt_node(g, "MatMulInteger", "mm_vector", "v,f", "y2");
  tbt_const(g, "qa", TB_DTYPE_U8, 2, (const int64_t[]){4, 9}, qa);
  tbt_const(g, "qb", TB_DTYPE_U8, 2, (const int64_t[]){9, 11}, qb);
  pt_const_scalar(g, "sa", 0.02f);
  pt_const_scalar(g, "sb", 0.013f);
  pt_const_scalar(g, "sy", 0.9f);
  pt_const_scalar(g, "sy2", 0.0625f);
  tbt_const(g, "za", TB_DTYPE_U8, 0, NULL, (const uint8_t[]){120});
  tbt_const(g, "zb", TB_DTYPE_U8, 0, NULL, (const uint8_t[]){9});
  tbt_const(g, "zy_u8", TB_DTYPE_U8, 0, NULL, (const uint8_t[]){100});
  tbt_const(g, "zy_i8", TB_DTYPE_I8, 0, NULL, (const int8_t[]){-20});
  tbt_node(g, "QLinearMatMul", "qmm_u8", "qa,sa,za,qb,sb,zb,sy,zy_u8", "y3");
  tbt_node(g, "QLinearMatMul", "qmm_i8", "qa,sa,za,qb,sb,zb,sy2,zy_i8", "y4");
  static const char *const outs[] = {"y0", "y1", "y2", "y3", "y4"};
  for (size_t i = 0; i < 5; i++) tbt_output(g, outs[i]);
  tb_model *model = tbt_model_of(ir);
  const feed in[4] = {{"a", TB_DTYPE_U8, 3, {3, 5, 7}, a}, {"b", TB_DTYPE_I8, 2, {7, 9}, b}, {"c", TB_DTYPE_I8, 4, {2, 1, 4, 6}, c},
                      {"e", TB_DTYPE_U8, 3, {3, 6, 5}, e}};
  same_as_cpu(model, 4, in, 5);
  tb_model_destroy(model);
}


/* ConvInteger in 2-D with groups, strides, pads and dilations, W's zero point per output channel; in 1-D with
 * auto_pad and no zero points; QLinearConv in 2-D with w_scale and W's zero point per channel and an int32 bias
 * (to uint8), and in 3-D per tensor (to int8). */
static void integer_convolutions_match_the_cpu(void **state) {
  (void)state;
  if (!emulator_here()) return;
  static unsigned char x[2 * 4 * 7 * 6], w[6 * 2 * 3 * 2], x1[1 * 3 * 11], w1[5 * 3 * 3], x3[1 * 2 * 4 * 5 * 3], w3[3 * 2 * 2 * 3 * 2];
  bytes_fill(x, sizeof x, 11), bytes_fill(w, sizeof w, 12), bytes_fill(x1, sizeof x1, 13), bytes_fill(w1, sizeof w1, 14);
  bytes_fill(x3, sizeof x3, 15), bytes_fill(w3, sizeof w3, 16);
  tb_ir_model *ir = tbt_ir_model(13);
  tb_graph *g = tb_graph_new(ir, NULL, "qconv");
  tbt_input(g, "x", TB_DTYPE_U8, 4, (const int64_t[]){2, 4, 7, 6}, NULL);
  tbt_input(g, "x1", TB_DTYPE_I8, 3, (const int64_t[]){1, 3, 11}, NULL);
  tbt_input(g, "x3", TB_DTYPE_I8, 5, (const int64_t[]){1, 2, 4, 5, 3}, NULL);
  tbt_const(g, "w", TB_DTYPE_I8, 4, (const int64_t[]){6, 2, 3, 2}, w);
  tbt_const(g, "w1", TB_DTYPE_U8, 3, (const int64_t[]){5, 3, 3}, w1);
  tbt_const(g, "w3", TB_DTYPE_I8, 5, (const int64_t[]){3, 2, 2, 3, 2}, w3);
  const int64_t six = 6, three = 3;
  tbt_const(g, "xz", TB_DTYPE_U8, 0, NULL, (const uint8_t[]){129});
  tbt_const(g, "wz6", TB_DTYPE_I8, 1, &six, (const int8_t[]){0, -3, 5, -128, 127, 9});
  int n = tbt_node(g, "ConvInteger", "ci_2d", "x,w,xz,wz6", "y0");
  pt_attr_int(g, n, "group", 2);
  pt_attr_ints(g, n, "strides", 2, (const int64_t[]){2, 1});
  pt_attr_ints(g, n, "pads", 4, (const int64_t[]){1, 0, 2, 1});
  pt_attr_ints(g, n, "dilations", 2, (const int64_t[]){1, 2});
  n = tbt_node(g, "ConvInteger", "ci_1d", "x1,w1", "y1");
  pt_attr_string(g, n, "auto_pad", "SAME_UPPER");
  pt_attr_ints(g, n, "strides", 1, (const int64_t[]){2});
  pt_const_scalar(g, "xs", 0.05f);
  tbt_const_f32(g, "ws6", 1, &six, (const float[]){0.01f, 0.02f, 0.003f, 0.04f, 0.5f, 0.006f});
  pt_const_scalar(g, "ys", 0.3f);
  tbt_const(g, "yz_u8", TB_DTYPE_U8, 0, NULL, (const uint8_t[]){77});
  tbt_const(g, "bias6", TB_DTYPE_I32, 1, &six, (const int32_t[]){-1000, 0, 55, 7000, -3, 123456});
  n = tbt_node(g, "QLinearConv", "qc_2d", "x,xs,xz,w,ws6,wz6,ys,yz_u8,bias6", "y2");
  pt_attr_int(g, n, "group", 2);
  pt_attr_ints(g, n, "pads", 4, (const int64_t[]){1, 1, 1, 1});
  tbt_const(g, "xz3", TB_DTYPE_I8, 0, NULL, (const int8_t[]){-9});
  tbt_const(g, "wz3", TB_DTYPE_I8, 0, NULL, (const int8_t[]){4});
  pt_const_scalar(g, "ws3", 0.011f);
  tbt_const(g, "yz_i8", TB_DTYPE_I8, 0, NULL, (const int8_t[]){-5});
  n = tbt_node(g, "QLinearConv", "qc_3d", "x3,xs,xz3,w3,ws3,wz3,ys,yz_i8", "y3");
  pt_attr_ints(g, n, "pads", 6, (const int64_t[]){1, 0, 1, 0, 1, 1});
  (void)three;
  static const char *const outs[] = {"y0", "y1", "y2", "y3"};
  for (size_t i = 0; i < 4; i++) tbt_output(g, outs[i]);
  tb_model *model = tbt_model_of(ir);
  const feed in[3] = {{"x", TB_DTYPE_U8, 4, {2, 4, 7, 6}, x}, {"x1", TB_DTYPE_I8, 3, {1, 3, 11}, x1}, {"x3", TB_DTYPE_I8, 5, {1, 2, 4, 5, 3}, x3}};
  same_as_cpu(model, 3, in, 4);
  tb_model_destroy(model);
}

/* ---- Errors ------------------------------------------------------------------------------------------- */

/* A per-row zero point of the wrong length is TB_ERR_MODEL in the CPU's words; a failing launch names the kernel. */
static void bad_zero_point_and_failing_launch(void **state) {
  (void)state;
  static unsigned char a[4 * 6], b[6 * 3];
  bytes_fill(a, sizeof a, 1), bytes_fill(b, sizeof b, 2);
  tb_ir_model *ir = tbt_ir_model(13);
  tb_graph *g = tb_graph_new(ir, NULL, "bad");
  tbt_input(g, "a", TB_DTYPE_U8, 2, (const int64_t[]){4, 6}, NULL);
  tbt_input(g, "b", TB_DTYPE_U8, 2, (const int64_t[]){6, 3}, NULL);
  tbt_input(g, "az", TB_DTYPE_U8, 1, (const int64_t[]){-1}, NULL);
  tbt_node(g, "MatMulInteger", "mm", "a,b,az", "y");
  tbt_output(g, "y");
  tb_model *model = tbt_model_of(ir);
  tb_backend *cpu = NULL, *cuda = open_cuda0();
  TB_ASSERT_OK(tb_backend_create("cpu", &cpu));
  tb_prepare_options o = {.size = sizeof o, .level = TB_LEVEL_O0, .no_graph_capture = true};
  tb_prepared *p = NULL;
  const tb_prepare_result *r = NULL;
  TB_ASSERT_OK(tb_model_prepare(model, cuda, &o, &p, &r));
  assert_int_equal(r->cpu_fallback_nodes, 0);
  const char *names[3] = {"a", "b", "az"};
  static const unsigned char zp[3] = {1, 2, 3};
  tb_tensor *in[3] = {NULL}, *out = NULL;
  TB_ASSERT_OK(tb_tensor_create(cpu, TB_DTYPE_U8, 2, (const int64_t[]){4, 6}, &in[0]));
  TB_ASSERT_OK(tb_tensor_create(cpu, TB_DTYPE_U8, 2, (const int64_t[]){6, 3}, &in[1]));
  TB_ASSERT_OK(tb_tensor_create(cpu, TB_DTYPE_U8, 1, (const int64_t[]){3}, &in[2]));
  TB_ASSERT_OK(tb_tensor_copy_from_host(in[0], a, sizeof a));
  TB_ASSERT_OK(tb_tensor_copy_from_host(in[1], b, sizeof b));
  TB_ASSERT_OK(tb_tensor_copy_from_host(in[2], zp, sizeof zp));
  assert_int_equal(tb_prepared_run(p, 3, names, in, 1, NULL, &out), TB_ERR_MODEL);
  TB_ASSERT_CONTAINS(tb_last_error(), "node 'mm' (MatMulInteger): a zero point has 3 values; it must be a scalar or have 4");
  assert_null(out);
  tb_tensor_destroy(in[2]);
  TB_ASSERT_OK(tb_tensor_create(cpu, TB_DTYPE_U8, 1, (const int64_t[]){1}, &in[2]));
  TB_ASSERT_OK(tb_tensor_copy_from_host(in[2], zp, 1));
  launch_reset();
  setenv("FAKE_CUDA_LAUNCH_FAIL_AT", "1", 1);
  setenv("FAKE_CUDA_FAIL_CODE", "700", 1);
  assert_int_equal(tb_prepared_run(p, 3, names, in, 1, NULL, &out), TB_ERR_DRIVER);
  TB_ASSERT_CONTAINS(tb_last_error(), "cuda:0: cuLaunchKernel of tb_cu_q_matmul for node 'mm' (MatMulInteger)");
  TB_ASSERT_CONTAINS(tb_last_error(), "failed with 700 CUDA_ERROR_ILLEGAL_ADDRESS");
  assert_null(out);
  unsetenv("FAKE_CUDA_LAUNCH_FAIL_AT");
  unsetenv("FAKE_CUDA_FAIL_CODE");
  TB_ASSERT_OK(tb_prepared_run(p, 3, names, in, 1, NULL, &out));
  tb_tensor_destroy(out);
  for (size_t i = 0; i < 3; i++) tb_tensor_destroy(in[i]);
  tb_prepared_destroy(p);
  tb_model_destroy(model);
  tb_backend_destroy(cuda);
  tb_backend_destroy(cpu);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(find_kernel_by_dtype),
      cmocka_unit_test_setup_teardown(quantize_dequantize_match_the_cpu, setup, teardown),
      cmocka_unit_test_setup_teardown(integer_products_match_the_cpu, setup, teardown),
      cmocka_unit_test_setup_teardown(integer_convolutions_match_the_cpu, setup, teardown),
      cmocka_unit_test_setup_teardown(bad_zero_point_and_failing_launch, setup, teardown),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
