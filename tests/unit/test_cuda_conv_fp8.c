/* fp8 convolutions through cuDNN 9 (src/backend/cuda/kernels/cuda_conv_precision.c, cuda_conv_dnn.c, cuda_dnn.c;
 * docs/cuda.md "Reduced precision") on the fake cuda:0 (compute capability 9.0) with the computing fake cuDNN and the
 * emulator: under precision fp8 a Conv + bias + Relu (one FusedConv) runs as e4m3 X and W with per-tensor scales
 * (max |x| / 448), fp32 compute and Y, the graph convolution -> X's scaling -> W's scaling -> bias -> ReLU, W quantized
 * once at prepare and X per run (the amax's two launches and one conversion), each output equal to the convolution of
 * the quantized operands computed here and within the fp8 row of the CPU's fp32; bf16 with the reason below compute
 * capability 8.9, without cuDNN, and when cuDNN has no engine (FAKE_CUDNN_FP8=none); a bad scale is an error naming
 * it; nothing left allocated. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "../fakes/fake_cuda_launch.h"
#include "backend/cuda/cuda_dnn.h"
#include "runtime/cudnn_api.h"
#include "test_cuda_fakes.h"
#include "test_cuda_values.h"
#include "test_engine_util.h"
#include "pass_test.h"
#include "test_util.h"

static char cache_dir[64];
static const char *const vars[] = {"TB_CUDNN_LIB", "FAKE_CUDNN_FP8", "FAKE_CUDA_CC", "TB_BF16_TRIAL"};
enum { N_VARS = sizeof vars / sizeof vars[0] };

static int setup(void **state) {
  tcv_setup_fakes(state, cache_dir, "tb_cuconv8", vars, N_VARS);
  setenv("TB_CUDNN_LIB", tbt_fake("fake_cudnn"), 1);
  setenv("TB_GRAPH_CAPTURE", "off", 1); /* the fake cuDNN computes even on a capturing stream */
  setenv("TB_BF16_TRIAL", "off", 1);
  return 0;
}

static int teardown(void **state) {
  (void)state;
  return tcv_teardown_fakes(cache_dir, vars, N_VARS);
}

/* x [2, 3, 9, 11], W [16, 3, 3, 3] in [-1, 1) / sqrt(27), bias [16] in [-1, 1); strides 1 x 2, pads 1, 0, 2, 1; Relu:
 * one FusedConv from O1. Y [2, 16, 10, 5]. */
enum { N = 2, C = 3, H = 9, W_ = 11, K = 16, R = 3, S = 3, P = 10, Q = 5 };
static float weight[K * C * R * S], bias[K];

static tb_model *conv_model(void) {
  tb_ir_model *ir = tbt_ir_model(17);
  tb_graph *g = tb_graph_new(ir, NULL, "conv");
  const int64_t x_dims[4] = {N, C, H, W_}, w_dims[4] = {K, C, R, S}, k = K, strides[2] = {1, 2}, pads[4] = {1, 0, 2, 1};
  fill_range(weight, K * C * R * S, 7, -1.0f, 1.0f);
  for (int i = 0; i < K * C * R * S; i++) weight[i] /= sqrtf(27.0f);
  fill_range(bias, K, 9, -1.0f, 1.0f);
  tbt_input(g, "x", TB_DTYPE_F32, 4, x_dims, NULL);
  tbt_const_f32(g, "W", 4, w_dims, weight);
  tbt_const_f32(g, "B", 1, &k, bias);
  int node = tbt_node(g, "Conv", "conv", "x,W,B", "c");
  pt_attr_ints(g, node, "strides", 2, strides);
  pt_attr_ints(g, node, "pads", 4, pads);
  tbt_node(g, "Relu", "act", "c", "y");
  tbt_output(g, "y");
  return tbt_model_of(ir);
}

/* e4m3 of v (rounded to nearest even, saturated at 448) as a float: the test's own quantization. */
static float e4m3_value(float v) {
  float a = fabsf(v), q;
  if (a >= 448.0f) q = 448.0f;
  else if (a < 0.015625f) q = rintf(a * 512.0f) / 512.0f;
  else {
    int e;
    frexpf(a, &e);
    float ulp = ldexpf(1.0f, e - 4);
    q = rintf(a / ulp) * ulp;
  }
  return v < 0 ? -q : q;
}

static float amax_scale(const float *v, int n) {
  float m = 0;
  for (int i = 0; i < n; i++) m = fmaxf(m, fabsf(v[i]));
  return m > 0 ? m / 448.0f : 1.0f;
}

typedef struct fp8_run {
  char node_precision[160], choice[600];
  int amax, to_e4m3, casts, own;
  float y[N * K * P * Q];
} fp8_run;

/* The model on cuda:0 under precision fp8 (against the CPU's O0 fp32 within atol + rtol |ref|). */
static void run_fp8(fp8_run *r, float rtol, float atol) {
  memset(r, 0, sizeof *r);
  tb_model *m = conv_model();
  tcv_lowp t;
  const int64_t dims[4] = {N, C, H, W_};
  tcv_lowp_run(&t, m, 4, dims, TB_LEVEL_O3, TB_PRECISION_FP8, TB_LEVEL_O0);
  if (t.rg->reduced_precision_nodes) snprintf(r->node_precision, sizeof r->node_precision, "%s", t.rg->node_precisions[0]);
  if (t.rg->precision_choice_count) snprintf(r->choice, sizeof r->choice, "%s", t.rg->precision_choices[0]);
  r->amax = launches_of("tb_cu_lowp_amax_f32");
  r->to_e4m3 = launches_of("tb_cu_lowp_to_e4m3");
  r->casts = launches_of("tb_cu_dm_cast");
  r->own = launches_of("tb_cu_cnn_conv_igemm_bf16") + launches_of("tb_cu_cnn_conv_igemm_f32");
  tcv_lowp_check(&t, rtol, atol, r->y, N * K * P * Q);
  tcv_lowp_free(&t);
  tb_model_destroy(m);
}

/* fp8 through cuDNN: the types and scales it saw, the graph's operations, the launches, and the values. */
static void fp8_through_cudnn(void **state) {
  (void)state;
  if (!emulate()) skip();
  int executes = cudnn()->executes;
  fp8_run *r = malloc(sizeof *r);
  run_fp8(r, 0.2f, 0.15f); /* the cuda fp8 row */
  assert_string_equal(r->node_precision, "FusedConv (conv): fp8 e4m3");
  TB_ASSERT_CONTAINS(r->choice, "fp8 e4m3: the precision asked for, through cuDNN with X and W scaled per tensor");
  assert_int_equal(cudnn()->executes, executes + 1);
  const fake_cudnn_state *f = cudnn();
  assert_int_equal(f->x_type, TB_CUDNN_DATA_FP8_E4M3);
  assert_int_equal(f->w_type, TB_CUDNN_DATA_FP8_E4M3);
  assert_int_equal(f->y_type, TB_CUDNN_DATA_FLOAT);
  assert_int_equal(f->comp_type, TB_CUDNN_DATA_FLOAT);
  assert_int_equal(f->ops, 5); /* convolution, X's scaling, W's scaling, bias, ReLU */
  assert_int_equal(f->pointwise_modes[1], TB_CUDNN_POINTWISE_MUL);
  assert_int_equal(f->pointwise_modes[2], TB_CUDNN_POINTWISE_MUL);
  assert_int_equal(f->pointwise_modes[3], TB_CUDNN_POINTWISE_ADD);
  assert_int_equal(f->pointwise_modes[4], TB_CUDNN_POINTWISE_RELU_FWD);
  assert_int_equal(f->pack_count, 6); /* X, W, Y, the bias and the two scales */
  /* the scales: max |x| / 448 of this run's x, max |W| / 448 made at prepare */
  float x[N * C * H * W_];
  fill_range(x, N * C * H * W_, 5, -2.0f, 2.0f); /* tcv_lowp_run's input */
  float xs = amax_scale(x, N * C * H * W_), ws = amax_scale(weight, K * C * R * S);
  assert_true(f->x_scale == xs);
  assert_true(f->w_scale == ws);
  assert_int_equal(r->amax, 2); /* X's maximum in two launches; W's was at prepare */
  assert_int_equal(r->to_e4m3, 1);
  assert_int_equal(r->casts + r->own, 0);
  /* each output: the convolution of the quantized operands, scaled back, biased, ReLU */
  for (int n = 0; n < N; n++)
    for (int k = 0; k < K; k++)
      for (int p = 0; p < P; p++)
        for (int q = 0; q < Q; q++) {
          double s = 0;
          for (int c = 0; c < C; c++)
            for (int i = 0; i < R; i++)
              for (int j = 0; j < S; j++) {
                int ih = p - 1 + i, iw = q * 2 + j;
                if (ih < 0 || ih >= H || iw >= W_) continue;
                s += (double)e4m3_value(x[((n * C + c) * H + ih) * W_ + iw] / xs) * e4m3_value(weight[((k * C + c) * R + i) * S + j] / ws);
              }
          float want = (float)s * xs * ws + bias[k];
          want = want > 0 ? want : 0;
          float got = r->y[((n * K + k) * P + p) * Q + q];
          if (!(fabsf(got - want) <= 1e-5f + 1e-5f * fabsf(want)))
            fail_msg("fp8 element (%d, %d, %d, %d): cuda:0 %.9g, quantized reference %.9g", n, k, p, q, (double)got, (double)want);
        }
  free(r);
}

/* Where fp8 cannot run: bf16 on the device, with the reason in the prepare result (or, for cuDNN's refusal found at run
 * time, at info level). */
static void fp8_falls_back_to_bf16(void **state) {
  (void)state;
  if (!emulate()) skip();
  fp8_run *r = malloc(sizeof *r);
  setenv("FAKE_CUDNN_FP8", "none", 1); /* cuDNN has no engine for the fp8 graph */
  run_fp8(r, 1e-2f, 1e-2f);
  assert_string_equal(r->node_precision, "FusedConv (conv): fp8 e4m3");
  assert_int_equal(cudnn()->x_type, TB_CUDNN_DATA_BFLOAT16); /* the run's convolution: bf16 through cuDNN */
  assert_int_equal(r->casts, 2); /* X and W converted to bf16 for that run */
  unsetenv("FAKE_CUDNN_FP8");
  setenv("FAKE_CUDA_CC", "8.0", 1);
  run_fp8(r, 1e-2f, 1e-2f);
  assert_string_equal(r->node_precision, "FusedConv (conv): bf16");
  assert_string_equal(r->choice, "FusedConv (conv): bf16: precision fp8 needs a GPU of compute capability 8.9 or newer (fp8 tensor "
                                 "cores: Ada, Hopper, Blackwell); cuda:0 is 8.0; this convolution runs in bf16 on the device "
                                 "(fp32 accumulation and outputs)");
  assert_int_equal(r->amax, 0);
  assert_int_equal(cudnn()->x_type, TB_CUDNN_DATA_BFLOAT16);
  free(r);
}

/* cuda_dnn.c directly: the fp8 graph built (the fake's checks), scales missing or given to other data refused. */
static void dnn_fp8_arguments(void **state) {
  (void)state;
  tb_cuda_conv conv = {.n = 1, .c = 4, .h = 5, .w = 5, .k = 8, .kernel_h = 3, .kernel_w = 3, .x = 256, .weight = 512, .y = 1024,
                       .bias = 2048, .relu = true, .data = TB_CUDA_DNN_E4M3, .x_scale = 4096, .w_scale = 4100};
  size_t descs = 0;
  TB_ASSERT_OK(tb_cuda_dnn_test_operations("cuda:0", &conv, true, &descs));
  assert_true(descs >= 16); /* 12 of the fused graph, and fp8's two scale tensors, a virtual one and two multiplications */
  conv.w_scale = 0;
  assert_int_equal(tb_cuda_dnn_test_operations("cuda:0", &conv, true, &descs), TB_ERR_INVALID_ARGUMENT);
  TB_ASSERT_CONTAINS(tb_last_error(), "cuda:0: an fp8 convolution lacks a scale pointer; fp8 e4m3 X and W take one float32 scale each");
  conv.w_scale = 4100;
  conv.data = TB_CUDA_DNN_BF16;
  assert_int_equal(tb_cuda_dnn_test_operations("cuda:0", &conv, true, &descs), TB_ERR_INVALID_ARGUMENT);
  TB_ASSERT_CONTAINS(tb_last_error(), "scale pointers were given for data that is not fp8");
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test_setup_teardown(fp8_through_cudnn, setup, teardown),
      cmocka_unit_test_setup_teardown(fp8_falls_back_to_bf16, setup, teardown),
      cmocka_unit_test_setup_teardown(dnn_fp8_arguments, setup, teardown),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
