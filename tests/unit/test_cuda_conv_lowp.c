/* The CUDA backend's reduced-precision convolutions (src/backend/cuda/kernels/cuda_conv_precision.c, 63_conv_lowp.cu,
 * cuda_conv_dnn.c, cuda_dnn.c) on the fake cuda:0 of the recorded 8x H100 node: Conv and tb::FusedConv in bf16 at O3
 * (and fp16 / bf16 when asked, bf16 under fp8), W converted once at prepare and X per run, on the own 16-bit direct
 * and implicit-GEMM kernels (values on the emulator against the CPU within docs/validation.md's bf16 / fp16 rows, and
 * visibly not fp32's) and through the computing fake cuDNN (bfloat16 / half X and W, float Y and compute; TF32
 * engines only under precision tf32; engines that sum in reduced precision passed over); the prepare result's
 * precisions; errors (the conversion's launch failing at run and at prepare, the converted weight out of memory). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "../fakes/fake_cuda_launch.h"
#include "backend/cuda/cuda_dnn.h"
#include "core/error.h"
#include "pass_test.h"
#include "runtime/cudnn_api.h"
#include "test_cuda_fakes.h"
#include "test_cuda_values.h"
#include "test_engine_util.h"
#include "test_util.h"

static char cache_dir[64];

/* Beside test_cuda_values.h's variables. */
static const char *const vars[] = {"TB_CUDNN_LIB", "TB_BF16_TRIAL", "FAKE_CUDNN_TF32_ENGINES", "FAKE_CUDNN_REDUCED_ENGINES",
                                   "FAKE_CUDNN_ENGINES_A", "FAKE_CUDNN_ENGINES_FALLBACK"};
enum { N_VARS = sizeof vars / sizeof vars[0] };

static int setup(void **state) {
  tcv_setup_fakes(state, cache_dir, "tb_cuconvlp", vars, N_VARS);
  setenv("TB_CUDNN_LIB", "/nonexistent/libcudnn.so.9", 1); /* the own kernels; the cuDNN tests say otherwise */
  setenv("TB_GRAPH_CAPTURE", "off", 1); /* the fake cuDNN computes even on a capturing stream */
  setenv("TB_BF16_TRIAL", "off", 1);    /* the CPU reference at O3: bf16 wherever it has a kernel */
  return 0;
}

static int teardown(void **state) {
  (void)state;
  return tcv_teardown_fakes(cache_dir, vars, N_VARS);
}

/* One convolution: x [n, c, spatial...], W [k, c / group, kernel...] in [-1, 1) / sqrt(depth), a bias, then `after`
 * (NULL: none; "Relu" makes one tb::FusedConv at O1 and up). */
typedef struct conv_case {
  size_t rank;
  int64_t x[5], w[5];
  int64_t group;
  int64_t strides[3], dilations[3], pads[6];
  const char *after;
} conv_case;

static tb_model *conv_model(const conv_case *c) {
  tb_ir_model *ir = tbt_ir_model(17);
  tb_graph *g = tb_graph_new(ir, NULL, "conv");
  size_t sp = c->rank - 2, wn = 1;
  int64_t depth = 1;
  for (size_t d = 0; d < c->rank; d++) wn *= (size_t)c->w[d];
  for (size_t d = 1; d < c->rank; d++) depth *= c->w[d];
  float *w = malloc(wn * sizeof *w), *b = malloc((size_t)c->w[0] * sizeof *b);
  fill_range(w, wn, 7, -2.0f, 2.0f);
  for (size_t i = 0; i < wn; i++) w[i] /= 2.0f * sqrtf((float)depth);
  fill_range(b, (size_t)c->w[0], 9, -2.0f, 2.0f);
  tbt_input(g, "x", TB_DTYPE_F32, c->rank, c->x, NULL);
  tbt_const_f32(g, "W", c->rank, c->w, w);
  tbt_const_f32(g, "B", 1, &c->w[0], b);
  free(w);
  free(b);
  int node = tbt_node(g, "Conv", "conv", "x,W,B", c->after ? "c" : "y");
  pt_attr_int(g, node, "group", c->group);
  if (c->strides[0]) pt_attr_ints(g, node, "strides", sp, c->strides);
  if (c->dilations[0]) pt_attr_ints(g, node, "dilations", sp, c->dilations);
  pt_attr_ints(g, node, "pads", 2 * sp, c->pads);
  if (c->after) tbt_node(g, c->after, "act", "c", "y");
  tbt_output(g, "y");
  return tbt_model_of(ir);
}

/* What a run on cuda:0 showed. */
typedef struct lowp_run {
  size_t device_nodes, reduced_nodes;
  tb_precision precision;
  char node_precision[160];   /* the first of node_precisions */
  char precision_choice[400]; /* the first of precision_choices */
  int casts, direct[3], igemm[3]; /* launches: tb_cu_dm_cast; the own kernels by form f32, bf16, f16 */
  double max_error_vs_fp32;       /* the largest |cuda - cpu O0 fp32|: > 0 shows the reduced precision is real */
} lowp_run;

/* Prepare the case on cuda:0 at level / precision and on the CPU at ref_level and O0; run all on the same input;
 * each output element within atol + rtol |ref| of the CPU's at ref_level. */
static lowp_run compare(const conv_case *c, tb_opt_level level, tb_precision precision, tb_opt_level ref_level, float rtol, float atol) {
  tb_model *model = conv_model(c);
  tcv_lowp t;
  tcv_lowp_run(&t, model, c->rank, c->x, level, precision, ref_level);
  const tb_prepare_result *rg = t.rg;
  lowp_run r = {.device_nodes = rg->device_nodes, .reduced_nodes = rg->reduced_precision_nodes, .precision = rg->precision};
  if (rg->reduced_precision_nodes) snprintf(r.node_precision, sizeof r.node_precision, "%s", rg->node_precisions[0]);
  if (rg->precision_choice_count) snprintf(r.precision_choice, sizeof r.precision_choice, "%s", rg->precision_choices[0]);
  static const char *const direct[3] = {"tb_cu_cnn_conv_f32", "tb_cu_cnn_conv_bf16", "tb_cu_cnn_conv_f16"};
  static const char *const igemm[3] = {"tb_cu_cnn_conv_igemm_f32", "tb_cu_cnn_conv_igemm_bf16", "tb_cu_cnn_conv_igemm_f16"};
  r.casts = launches_of("tb_cu_dm_cast");
  for (int f = 0; f < 3; f++) {
    r.direct[f] = launches_of(direct[f]);
    r.igemm[f] = launches_of(igemm[f]);
  }
  r.max_error_vs_fp32 = tcv_lowp_check(&t, rtol, atol, NULL, 0);
  tcv_lowp_free(&t);
  tb_model_destroy(model);
  return r;
}

/* 16 output channels over a 3 x 3 x 3 reduction: the implicit GEMM; Relu after it: one FusedConv from O1. */
static const conv_case wide = {4, {2, 3, 9, 11}, {16, 3, 3, 3}, 1, {1, 2}, {1, 1}, {1, 0, 2, 1}, "Relu"};
/* depthwise (one channel per group): the direct kernel; strides and dilations, asymmetric pads */
static const conv_case depthwise = {4, {1, 6, 10, 7}, {6, 1, 3, 3}, 6, {2, 1}, {1, 2}, {1, 2, 0, 1}, NULL};

/* O3 without cuDNN: bf16 on the own kernels, W converted at prepare (one cast per run: X), the CPU's bf16 O3 numbers
 * within the bf16 row and visibly not fp32's; O2 and precision fp32 stay fp32; fp16 and bf16 when asked. */
static void bf16_at_o3_on_the_own_kernels(void **state) {
  (void)state;
  if (!emulate()) skip();
  lowp_run r = compare(&wide, TB_LEVEL_O3, TB_PRECISION_AUTO, TB_LEVEL_O3, 1e-2f, 1e-2f);
  assert_int_equal(r.device_nodes, 1); /* one FusedConv */
  assert_int_equal(r.reduced_nodes, 1);
  assert_int_equal(r.precision, TB_PRECISION_BF16);
  assert_string_equal(r.node_precision, "FusedConv (conv): bf16");
  assert_string_equal(r.precision_choice, "FusedConv (conv): bf16: the precision asked for, accumulated in fp32 with fp32 outputs");
  assert_int_equal(r.casts, 1); /* x; W was converted at prepare */
  assert_int_equal(r.igemm[1], 1);
  assert_int_equal(r.igemm[0] + r.direct[0] + r.direct[1], 0);
  assert_true(r.max_error_vs_fp32 > 1e-4); /* bf16's rounding shows */
  r = compare(&depthwise, TB_LEVEL_O3, TB_PRECISION_AUTO, TB_LEVEL_O3, 1e-2f, 1e-2f);
  assert_int_equal(r.direct[1], 1);
  assert_int_equal(r.casts, 1);
  assert_string_equal(r.node_precision, "Conv (conv): bf16");
  assert_true(r.max_error_vs_fp32 > 1e-4);
  /* O2 and O3 with precision fp32: the fp32 kernels, fp32's numbers */
  r = compare(&wide, TB_LEVEL_O2, TB_PRECISION_AUTO, TB_LEVEL_O0, 1e-4f, 2e-5f);
  assert_int_equal(r.reduced_nodes, 0);
  assert_int_equal(r.precision, TB_PRECISION_FP32);
  assert_int_equal(r.igemm[0], 1);
  assert_int_equal(r.casts, 0);
  r = compare(&depthwise, TB_LEVEL_O3, TB_PRECISION_FP32, TB_LEVEL_O0, 1e-4f, 2e-5f);
  assert_int_equal(r.direct[0], 1);
  /* fp16 at O3: the f16 kernels, within the fp16 row of fp32 (the CPU has no fp16 convolution) */
  r = compare(&wide, TB_LEVEL_O3, TB_PRECISION_FP16, TB_LEVEL_O0, 5e-3f, 5e-3f);
  assert_int_equal(r.precision, TB_PRECISION_FP16);
  assert_string_equal(r.node_precision, "FusedConv (conv): fp16");
  assert_int_equal(r.igemm[2], 1);
  assert_int_equal(r.casts, 1);
  assert_true(r.max_error_vs_fp32 > 0);
  r = compare(&depthwise, TB_LEVEL_O3, TB_PRECISION_FP16, TB_LEVEL_O0, 5e-3f, 5e-3f);
  assert_int_equal(r.direct[2], 1);
  /* bf16 asked at O2; fp8 asked without cuDNN: fp8 convolutions are cuDNN's, so bf16 */
  r = compare(&wide, TB_LEVEL_O2, TB_PRECISION_BF16, TB_LEVEL_O3, 1e-2f, 1e-2f);
  assert_int_equal(r.igemm[1], 1);
  r = compare(&wide, TB_LEVEL_O3, TB_PRECISION_FP8, TB_LEVEL_O3, 1e-2f, 1e-2f);
  assert_int_equal(r.igemm[1], 1);
  assert_string_equal(r.node_precision, "FusedConv (conv): bf16");
  assert_string_equal(r.precision_choice, "FusedConv (conv): bf16: fp8 convolutions run only through cuDNN, which is not in use "
                                          "on cuda:0 (not found, or it did not start: tb doctor says which); the own kernels "
                                          "have no fp8 form; this convolution runs in bf16 on the device (fp32 accumulation "
                                          "and outputs)");
  /* tf32 without cuDNN: the own kernels compute fp32, and the result says so */
  r = compare(&wide, TB_LEVEL_O3, TB_PRECISION_TF32, TB_LEVEL_O0, 1e-4f, 2e-5f);
  assert_int_equal(r.igemm[0], 1);
  assert_int_equal(r.reduced_nodes, 0);
  assert_int_equal(r.precision, TB_PRECISION_FP32);
  assert_string_equal(r.precision_choice, "FusedConv (conv): fp32: TF32 convolutions run only through cuDNN's TF32 engines and "
                                          "cuDNN is not in use on cuda:0 (not found, or it did not start: tb doctor says "
                                          "which); the own kernel computes fp32");
}

/* The own 16-bit kernels on other shapes: 1-D and 3-D, groups, a single output channel, odd sizes, a batch of 3. */
static void bf16_shapes_on_the_own_kernels(void **state) {
  (void)state;
  if (!emulate()) skip();
  const conv_case cases[] = {
      {3, {2, 5, 13}, {9, 5, 4}, 1, {3}, {1}, {2, 1}, NULL},                                  /* 1-D, igemm */
      {5, {1, 2, 4, 5, 6}, {8, 2, 2, 3, 2}, 1, {1, 2, 1}, {1, 1, 2}, {0, 1, 1, 1, 0, 0}, "Relu"}, /* 3-D, igemm */
      {4, {3, 4, 5, 5}, {8, 2, 3, 3}, 2, {1, 1}, {1, 1}, {1, 1, 1, 1}, NULL},                  /* groups of 4 -> 4 */
      {4, {1, 7, 6, 9}, {1, 7, 1, 1}, 1, {1, 1}, {1, 1}, {0, 0, 0, 0}, NULL},                  /* one output channel */
      {4, {1, 1, 1, 1}, {1, 1, 1, 1}, 1, {1, 1}, {1, 1}, {0, 0, 0, 0}, NULL},                  /* 1 x 1 x 1 */
  };
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
    lowp_run r = compare(&cases[i], TB_LEVEL_O3, TB_PRECISION_AUTO, TB_LEVEL_O3, 1e-2f, 1e-2f);
    if (r.direct[1] + r.igemm[1] != 1) fail_msg("case %zu: %d direct and %d igemm bf16 launches", i, r.direct[1], r.igemm[1]);
    r = compare(&cases[i], TB_LEVEL_O3, TB_PRECISION_FP16, TB_LEVEL_O0, 5e-3f, 5e-3f);
    if (r.direct[2] + r.igemm[2] != 1) fail_msg("case %zu: %d direct and %d igemm fp16 launches", i, r.direct[2], r.igemm[2]);
  }
}

/* Through the fake cuDNN: 16-bit X and W, float Y and compute; the values within the rows; TF32 engines only
 * under precision tf32; engines that reduce in reduced precision passed over for 16-bit data. */
static void cudnn_runs_bf16_and_fp16(void **state) {
  (void)state;
  if (!emulate()) skip();
  use_fake_cudnn();
  int executes = cudnn()->executes;
  lowp_run r = compare(&wide, TB_LEVEL_O3, TB_PRECISION_AUTO, TB_LEVEL_O3, 1e-2f, 1e-2f);
  assert_int_equal(cudnn()->executes, executes + 1);
  assert_int_equal(r.igemm[1] + r.direct[1], 0);
  assert_int_equal(r.casts, 1);
  assert_int_equal(cudnn()->x_type, TB_CUDNN_DATA_BFLOAT16);
  assert_int_equal(cudnn()->w_type, TB_CUDNN_DATA_BFLOAT16);
  assert_int_equal(cudnn()->y_type, TB_CUDNN_DATA_FLOAT);
  assert_int_equal(cudnn()->comp_type, TB_CUDNN_DATA_FLOAT);
  assert_int_equal(cudnn()->pointwise_modes[2], TB_CUDNN_POINTWISE_RELU_FWD); /* bias and ReLU fused, fp32 */
  assert_true(r.max_error_vs_fp32 > 1e-4);
  r = compare(&wide, TB_LEVEL_O3, TB_PRECISION_FP16, TB_LEVEL_O0, 5e-3f, 5e-3f);
  assert_int_equal(cudnn()->x_type, TB_CUDNN_DATA_HALF);
  assert_int_equal(cudnn()->w_type, TB_CUDNN_DATA_HALF);
  assert_int_equal(cudnn()->y_type, TB_CUDNN_DATA_FLOAT);
  assert_true(r.max_error_vs_fp32 > 0);
  /* the first engine sums in reduced precision: the second runs it */
  setenv("FAKE_CUDNN_REDUCED_ENGINES", "1", 1);
  compare(&depthwise, TB_LEVEL_O3, TB_PRECISION_AUTO, TB_LEVEL_O3, 1e-2f, 1e-2f);
  assert_int_equal(cudnn()->engine_index, 1);
  assert_int_equal(cudnn()->x_type, TB_CUDNN_DATA_BFLOAT16);
  /* every engine does: the own bf16 kernel */
  setenv("FAKE_CUDNN_REDUCED_ENGINES", "9", 1);
  executes = cudnn()->executes;
  r = compare(&depthwise, TB_LEVEL_O3, TB_PRECISION_AUTO, TB_LEVEL_O3, 1e-2f, 1e-2f);
  assert_int_equal(cudnn()->executes, executes);
  assert_int_equal(r.direct[1], 1);
  unsetenv("FAKE_CUDNN_REDUCED_ENGINES");
  /* the first engine is a TF32 one: fp32 (O2) passes it over, precision tf32 takes it */
  setenv("FAKE_CUDNN_TF32_ENGINES", "1", 1);
  r = compare(&wide, TB_LEVEL_O2, TB_PRECISION_AUTO, TB_LEVEL_O0, 1e-4f, 2e-5f);
  assert_int_equal(cudnn()->engine_index, 1);
  assert_int_equal(cudnn()->x_type, TB_CUDNN_DATA_FLOAT);
  r = compare(&wide, TB_LEVEL_O3, TB_PRECISION_TF32, TB_LEVEL_O0, 1e-4f, 2e-5f);
  assert_int_equal(cudnn()->engine_index, 0);
  assert_string_equal(r.node_precision, "FusedConv (conv): tf32");
  assert_int_equal(r.casts, 0);
  /* a 3-D convolution under tf32: cuDNN here takes 1 or 2 spatial axes, so fp32, said why */
  const conv_case three = {5, {1, 2, 4, 5, 6}, {8, 2, 2, 3, 2}, 1, {1, 1, 1}, {1, 1, 1}, {0, 0, 0, 0, 0, 0}, NULL};
  r = compare(&three, TB_LEVEL_O3, TB_PRECISION_TF32, TB_LEVEL_O0, 1e-4f, 2e-5f);
  assert_int_equal(r.reduced_nodes, 0);
  assert_int_equal(r.igemm[0], 1);
  assert_string_equal(r.precision_choice, "Conv (conv): fp32: cuDNN runs the convolutions of 1 or 2 spatial axes here (this one "
                                          "has 3) and TF32 is cuDNN's; the own kernel computes fp32");
  /* 16-bit data may run on tensor cores (they accumulate in fp32) */
  compare(&wide, TB_LEVEL_O3, TB_PRECISION_AUTO, TB_LEVEL_O3, 1e-2f, 1e-2f);
  assert_int_equal(cudnn()->engine_index, 0);
  /* every engine is TF32: fp32 falls to the own kernel, the reason names TF32 */
  setenv("FAKE_CUDNN_TF32_ENGINES", "9", 1);
  executes = cudnn()->executes;
  r = compare(&wide, TB_LEVEL_O2, TB_PRECISION_AUTO, TB_LEVEL_O0, 1e-4f, 2e-5f);
  assert_int_equal(cudnn()->executes, executes);
  assert_int_equal(r.igemm[0], 1);
}

/* cuda_dnn.c directly: the 16-bit operations build with the fake (its checks of the types), a bad data type is an
 * error naming it, and the sentence when every engine computes in TF32. */
static void dnn_data_types(void **state) {
  (void)state;
  setenv("TB_CUDNN_LIB", tbt_fake("fake_cudnn"), 1);
  tb_cuda_conv conv = {.n = 1, .c = 4, .h = 5, .w = 5, .k = 8, .kernel_h = 3, .kernel_w = 3, .x = 256, .weight = 512, .y = 1024,
                       .bias = 2048, .relu = true, .data = TB_CUDA_DNN_BF16};
  size_t descs = 0;
  TB_ASSERT_OK(tb_cuda_dnn_test_operations("cuda:0", &conv, true, &descs));
  assert_int_equal(cudnn()->x_type, TB_CUDNN_DATA_BFLOAT16);
  assert_int_equal(cudnn()->y_type, TB_CUDNN_DATA_FLOAT);
  conv.data = TB_CUDA_DNN_F16;
  TB_ASSERT_OK(tb_cuda_dnn_test_operations("cuda:0", &conv, false, &descs));
  assert_int_equal(cudnn()->w_type, TB_CUDNN_DATA_HALF);
  conv.data = (tb_cuda_dnn_data)7;
  assert_int_equal(tb_cuda_dnn_test_operations("cuda:0", &conv, false, &descs), TB_ERR_INVALID_ARGUMENT);
  TB_ASSERT_CONTAINS(tb_last_error(), "cuda:0: a cuDNN convolution's data type is 7; use float32, bfloat16, float16 or fp8 e4m3");
  /* no engine but TF32 ones (3: 2 from mode A, 1 fallback) for fp32 data */
  conv.data = TB_CUDA_DNN_F32;
  setenv("FAKE_CUDNN_TF32_ENGINES", "9", 1);
  tb_cuda_dnn *dnn = NULL;
  TB_ASSERT_OK(tb_cuda_dnn_create("cuda:0", &dnn));
  size_t workspace = 0;
  bool fused = false;
  assert_int_equal(tb_cuda_dnn_conv_prepare(dnn, &conv, &workspace, &fused), TB_ERR_UNSUPPORTED);
  TB_ASSERT_CONTAINS(tb_last_error(), "(6 engines passed over for computing in TF32 where fp32 was asked); the backend's own");
  conv.tf32 = true;
  TB_ASSERT_OK(tb_cuda_dnn_conv_prepare(dnn, &conv, &workspace, &fused));
  tb_cuda_dnn_stats stats;
  tb_cuda_dnn_stats_get(dnn, &stats);
  assert_int_equal(stats.passed_over, 6); /* 3 for the fused graph, 3 for the convolution alone; none with tf32 */
  tb_cuda_dnn_destroy(dnn);
  assert_int_equal(cudnn()->live_descs, 0);
}

/* The per-run conversion failing (700 at its launch) is the node's error and the model runs again after; the weight's
 * conversion failing at prepare, or not fitting the device, fails the prepare; nothing is left allocated. */
static void errors(void **state) {
  (void)state;
  tb_model *m = conv_model(&wide);
  tb_backend *cuda = open_cuda0(), *cpu = NULL;
  TB_ASSERT_OK(tb_backend_create("cpu", &cpu));
  tb_prepare_options o = {.size = sizeof o, .level = TB_LEVEL_O3};
  tb_prepared *p = NULL;
  TB_ASSERT_OK(tb_model_prepare(m, cuda, &o, &p, NULL));
  float x[594] = {0};
  tb_tensor *in = tbt_f32(cpu, 4, wide.x, x), *out = NULL;
  const char *names[1] = {"x"};
  launch_reset();
  setenv("FAKE_CUDA_LAUNCH_FAIL_AT", "1", 1);
  setenv("FAKE_CUDA_FAIL_CODE", "700", 1);
  assert_int_equal(tb_prepared_run(p, 1, names, &in, 1, NULL, &out), TB_ERR_DRIVER);
  TB_ASSERT_CONTAINS(tb_last_error(), "cuLaunchKernel of tb_cu_dm_cast for node 'conv' (FusedConv)");
  TB_ASSERT_CONTAINS(tb_last_error(), "700");
  assert_null(out);
  unsetenv("FAKE_CUDA_LAUNCH_FAIL_AT");
  launch_reset();
  TB_ASSERT_OK(tb_prepared_run(p, 1, names, &in, 1, NULL, &out));
  assert_int_equal(launches_of("tb_cu_cnn_conv_igemm_bf16"), 1);
  tb_tensor_destroy(out);
  tb_prepared_destroy(p);
  /* W's conversion at prepare fails */
  launch_reset();
  setenv("FAKE_CUDA_LAUNCH_FAIL_AT", "1", 1);
  p = NULL;
  assert_int_equal(tb_model_prepare(m, cuda, &o, &p, NULL), TB_ERR_DRIVER);
  TB_ASSERT_CONTAINS(tb_last_error(), "tb_cu_dm_cast");
  TB_ASSERT_CONTAINS(tb_last_error(), "node 'conv' (FusedConv)");
  assert_null(p);
  unsetenv("FAKE_CUDA_LAUNCH_FAIL_AT");
  unsetenv("FAKE_CUDA_FAIL_CODE");
  tb_tensor_destroy(in);
  tb_backend_destroy(cuda);
  assert_int_equal(live_allocations(), 0);
  tb_model_destroy(m);
  /* a weight of 4 MiB (fp32) on a device of 5 MiB: its 2 MiB bf16 copy does not fit beside it */
  const conv_case big = {4, {1, 512, 1, 1}, {2048, 512, 1, 1}, 1, {1, 1}, {1, 1}, {0, 0, 0, 0}, NULL};
  m = conv_model(&big);
  setenv("FAKE_CUDA_MEM_CAPACITY", "5M", 1);
  cuda = open_cuda0();
  assert_int_equal(tb_model_prepare(m, cuda, &o, &p, NULL), TB_ERR_OUT_OF_MEMORY);
  TB_ASSERT_CONTAINS(tb_last_error(), "out of memory allocating");
  assert_null(p);
  unsetenv("FAKE_CUDA_MEM_CAPACITY");
  tb_backend_destroy(cuda);
  tb_backend_destroy(cpu);
  assert_int_equal(live_allocations(), 0);
  tb_model_destroy(m);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test_setup_teardown(bf16_at_o3_on_the_own_kernels, setup, teardown),
      cmocka_unit_test_setup_teardown(bf16_shapes_on_the_own_kernels, setup, teardown),
      cmocka_unit_test_setup_teardown(cudnn_runs_bf16_and_fp16, setup, teardown),
      cmocka_unit_test_setup_teardown(dnn_data_types, setup, teardown),
      cmocka_unit_test_setup_teardown(errors, setup, teardown),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
