/* The CUDA backend's convolutions and CNN operators (kernels/cuda_ops_conv.c, cuda_ops_pool.c,
 * cuda_ops_resize.c, cuda_conv_dnn.c) on the fakes: fake_cuda with FAKE_CUDA_EMULATE running the kernels'
 * own source (tests/cuda_emu) so their values are compared with the CPU backend's, and fake_cudnn computing
 * the convolutions it is given. Covered: find_kernel's answers; Conv (1-D, 2-D, 3-D, strides, asymmetric
 * pads, auto_pad, dilations, groups, depthwise), tb::FusedConv from the O2 passes (bias, residual, each
 * activation), ConvTranspose, MaxPool / AveragePool (pads, ceil_mode, count_include_pad, dilations), the
 * global pools, BatchNormalization, InstanceNormalization and Resize (nearest, linear, cubic) against the
 * CPU; the cuDNN route (no own-kernel launch, ReLU fused, the epilogue kernel when cuDNN does not fuse, the
 * own kernel when cuDNN refuses, its failure as the node's error, the workspace); the bundled demo CNN with
 * no CPU fallback for these ops; launch failures and device out of memory. */
#include <dlfcn.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "backend/cuda/kernels/cuda_ops.h"
#include "backend/cuda/cuda_module.h"
#include "core/error.h"
#include "../fakes/fake_cuda_launch.h"
#include "ops/fused/fused_params.h"
#include "ops/nn/nn_params.h"
#include "ops/tensor/resize.h"
#include "runtime/cudnn_api.h"
#include "pass_test.h"
#include "test_engine_util.h"
#include "test_cuda_fakes.h"
#include "test_cuda_values.h"
#include "test_util.h"

static char cache_dir[64];

/* Beside test_cuda_values.h's variables. */
static const char *const vars[] = {"FAKE_CUDNN_FUSION", "FAKE_CUDNN_PLAN_FAIL", "FAKE_CUDNN_ENGINES_FALLBACK", "FAKE_CUDNN_WORKSPACE",
                                   "FAKE_CUDNN_FAIL", "FAKE_CUDNN_FAIL_CODE", "TB_CUDNN_LIB"};
enum { N_VARS = sizeof vars / sizeof vars[0] };

/* The fakes, the emulator when a test asks (emulate()), and no cuDNN (TB_CUDNN_LIB names nothing): the own kernels.
 * The models' Gemm on the own kernel: a real cuBLASLt is not loaded over the fake driver. */
static int setup(void **state) {
  tcv_setup_fakes(state, cache_dir, "tb_cuconv", vars, N_VARS);
  setenv("TB_CUDNN_LIB", "/nonexistent/libcudnn.so.9", 1);
  return 0;
}

static int teardown(void **state) {
  (void)state;
  return tcv_teardown_fakes(cache_dir, vars, N_VARS);
}

/* ---- find_kernel ------------------------------------------------------------------------------------ */

static const tb_kernel *find(const char *domain, const char *op, const void *params, size_t n_in, size_t rank, tb_dtype dtype,
                             size_t n_out) {
  static tb_value_type types[5];
  const tb_value_type *in[5] = {NULL};
  const int64_t dims[6] = {1, 2, 3, 4, 5, 6};
  for (size_t i = 0; i < n_in; i++) {
    types[i] = toh_type(dtype, i == 0 ? rank : 1, dims);
    in[i] = &types[i];
  }
  tb_kernel_query q = {.domain = domain, .op_type = op, .opset = 17, .params = params, .n_inputs = n_in, .in = in,
                       .n_outputs = n_out, .level = TB_KERNEL_REFERENCE, .name = "n"};
  const char *why = NULL;
  return tb_cuda_find(&q, &why);
}

static void find_kernel_for_cnn_ops(void **state) {
  (void)state;
  tb_conv_params conv = {.group = 1};
  tb_fused_conv_params fused = {.conv = {.group = 1}, .act = {.kind = TB_FUSED_ACT_RELU}};
  tb_pool_params max = {.kind = TB_POOL_MAX}, avg = {.kind = TB_POOL_AVERAGE}, lp = {.kind = TB_POOL_LP, .p = 2};
  tb_pool_params max_indices = {.kind = TB_POOL_MAX, .indices = true}, gap = {.kind = TB_POOL_AVERAGE, .global = true};
  tb_norm_params bn = {.kind = TB_NORM_BATCH, .epsilon = 1e-5f, .spatial = true}, bn_old = {.kind = TB_NORM_BATCH};
  tb_norm_params in = {.kind = TB_NORM_INSTANCE, .epsilon = 1e-5f};
  assert_non_null(find("", "Conv", &conv, 3, 4, TB_DTYPE_F32, 1));
  assert_non_null(find("", "Conv", &conv, 2, 3, TB_DTYPE_F32, 1));
  assert_non_null(find("", "Conv", &conv, 2, 5, TB_DTYPE_F32, 1));
  assert_null(find("", "Conv", &conv, 2, 6, TB_DTYPE_F32, 1)); /* 4 spatial axes: the CPU */
  assert_null(find("", "Conv", &conv, 2, 4, TB_DTYPE_F16, 1));
  assert_non_null(find("tb", "FusedConv", &fused, 4, 4, TB_DTYPE_F32, 1));
  assert_non_null(find("", "ConvTranspose", &conv, 3, 4, TB_DTYPE_F32, 1));
  assert_non_null(find("", "MaxPool", &max, 1, 4, TB_DTYPE_F32, 1));
  assert_null(find("", "MaxPool", &max_indices, 1, 4, TB_DTYPE_F32, 2)); /* Indices: the CPU */
  assert_non_null(find("", "AveragePool", &avg, 1, 3, TB_DTYPE_F32, 1));
  assert_non_null(find("", "LpPool", &lp, 1, 4, TB_DTYPE_F32, 1)); /* 62_lp_lrn.cu (test_cuda_layout) */
  assert_non_null(find("", "GlobalAveragePool", &gap, 1, 4, TB_DTYPE_F32, 1));
  assert_non_null(find("", "BatchNormalization", &bn, 5, 4, TB_DTYPE_F32, 1));
  assert_null(find("", "BatchNormalization", &bn, 5, 4, TB_DTYPE_F32, 3)); /* training outputs */
  assert_null(find("", "BatchNormalization", &bn_old, 5, 4, TB_DTYPE_F32, 1)); /* spatial 0 */
  assert_non_null(find("", "InstanceNormalization", &in, 3, 4, TB_DTYPE_F32, 1));
  tb_resize_params resize = {.mode = TB_RESIZE_LINEAR};
  assert_non_null(find("", "Resize", &resize, 1, 4, TB_DTYPE_F32, 1));
  assert_null(find("", "Resize", &resize, 1, 5, TB_DTYPE_F32, 1)); /* rank 5: the CPU */
}

/* ---- Values against the CPU ------------------------------------------------------------------------- */

/* Run `model` (one float32 input named input) on the CPU at O0 and on the emulated cuda:0 at `level`; every output
 * element within 2e-5 + 1e-4 |cpu| (NaN where the CPU has NaN); the device's run after launch_reset; nothing left on
 * the device. Returns the prepare result's device and fallback counts. */
static void compare_input(tb_model *model, const char *input, size_t ndim, const int64_t *dims, const float *x, size_t n_out,
                          tb_opt_level level, size_t *device_nodes, size_t *fallback_nodes) {
  feed in = {.name = input, .dtype = TB_DTYPE_F32, .ndim = ndim, .data = x};
  memcpy(in.dims, dims, ndim * sizeof *dims);
  tcv_counts c = tcv_compare(model, 1, &in, n_out, level, 2e-5, 1e-4);
  if (device_nodes) *device_nodes = c.device_nodes;
  if (fallback_nodes) *fallback_nodes = c.fallbacks;
  assert_int_equal(live_allocations(), 0);
}

static void compare_with_cpu(tb_model *model, size_t ndim, const int64_t *dims, const float *x, size_t n_out,
                             tb_opt_level level, size_t *device_nodes, size_t *fallback_nodes) {
  compare_input(model, "x", ndim, dims, x, n_out, level, device_nodes, fallback_nodes);
}

/* One Conv (or ConvTranspose) y = op(x, W[, B]) with these attributes; x [n, c, spatial...]. */
typedef struct conv_case {
  const char *op;
  size_t rank;            /* of x */
  int64_t x[5], w[5];
  int64_t group;
  int64_t strides[3], dilations[3], pads[6], output_padding[3];
  const char *auto_pad;
  bool bias;
} conv_case;

static tb_model *conv_model(const conv_case *c, const char *after) {
  tb_ir_model *ir = tbt_ir_model(17);
  tb_graph *g = tb_graph_new(ir, NULL, "conv");
  size_t sp = c->rank - 2;
  tbt_input(g, "x", TB_DTYPE_F32, c->rank, c->x, NULL);
  pt_const_rand(g, "W", c->rank, c->w, 5, -0.5f, 0.5f);
  bool transpose = strcmp(c->op, "ConvTranspose") == 0;
  int64_t k = transpose ? c->w[1] * c->group : c->w[0];
  if (c->bias) pt_const_rand(g, "B", 1, &k, 6, -1.0f, 1.0f);
  int node = tbt_node(g, c->op, "conv", c->bias ? "x,W,B" : "x,W", after ? "c" : "y");
  pt_attr_int(g, node, "group", c->group);
  if (c->strides[0]) pt_attr_ints(g, node, "strides", sp, c->strides);
  if (c->dilations[0]) pt_attr_ints(g, node, "dilations", sp, c->dilations);
  if (c->auto_pad) pt_attr_string(g, node, "auto_pad", c->auto_pad);
  else pt_attr_ints(g, node, "pads", 2 * sp, c->pads);
  if (c->output_padding[0]) pt_attr_ints(g, node, "output_padding", sp, c->output_padding);
  if (after) tbt_node(g, after, "act", "c", "y");
  tbt_output(g, "y");
  return tbt_model_of(ir);
}

static void run_conv_case(const conv_case *c) {
  int64_t numel = 1;
  for (size_t d = 0; d < c->rank; d++) numel *= c->x[d];
  float *x = malloc((size_t)numel * sizeof *x);
  fill_range(x, (size_t)numel, 3, -2.0f, 2.0f);
  tb_model *m = conv_model(c, NULL);
  size_t device = 0, fallback = 9;
  compare_with_cpu(m, c->rank, c->x, x, 1, TB_LEVEL_O0, &device, &fallback);
  assert_int_equal(device, 1);
  assert_int_equal(fallback, 0);
  if (strcmp(c->op, "Conv") == 0) {
    /* the implicit GEMM for 8+ output channels per group with a reduction of 8+, else the direct kernel */
    int64_t per_group = c->w[0] / c->group, depth = c->w[1];
    for (size_t d = 2; d < c->rank; d++) depth *= c->w[d];
    bool igemm = per_group >= 8 && depth >= 8;
    assert_int_equal(launches_of("tb_cu_cnn_conv_igemm_f32"), igemm ? 1 : 0);
    assert_int_equal(launches_of("tb_cu_cnn_conv_f32"), igemm ? 0 : 1);
  } else {
    assert_int_equal(launches_of("tb_cu_cnn_conv_transpose_f32"), 1);
  }
  tb_model_destroy(m);
  free(x);
}

static void conv_values_match_the_cpu(void **state) {
  (void)state;
  if (!emulate()) return;
  static const conv_case cases[] = {
      /* ResNet's stem: 7x7 stride 2 pad 3, bias */
      {"Conv", 4, {1, 3, 13, 11}, {4, 3, 7, 7}, 1, {2, 2}, {0}, {3, 3, 3, 3}, {0}, NULL, true},
      /* asymmetric pads, strides and dilations, 2 groups, batch 2, no bias */
      {"Conv", 4, {2, 4, 9, 8}, {6, 2, 3, 2}, 2, {2, 1}, {2, 3}, {1, 0, 2, 1}, {0}, NULL, false},
      /* depthwise 3x3 */
      {"Conv", 4, {1, 5, 7, 6}, {5, 1, 3, 3}, 5, {1, 1}, {0}, {1, 1, 1, 1}, {0}, NULL, true},
      /* 1x1 pointwise, odd channel counts */
      {"Conv", 4, {1, 7, 5, 3}, {9, 7, 1, 1}, 1, {0}, {0}, {0, 0, 0, 0}, {0}, NULL, true},
      /* 1-D with SAME_UPPER and stride 2 */
      {"Conv", 3, {2, 3, 17}, {4, 3, 4}, 1, {2}, {0}, {0}, {0}, "SAME_UPPER", true},
      /* 3-D */
      {"Conv", 5, {1, 2, 5, 4, 6}, {3, 2, 3, 2, 3}, 1, {1, 2, 1}, {0}, {1, 0, 1, 1, 1, 0}, {0}, NULL, true},
      /* the implicit GEMM: more output channels than a 64-row tile, a reduction (45) with a partial 16-deep
         slice, 143 output positions (a partial 64-column tile), strides and asymmetric pads */
      {"Conv", 4, {1, 5, 11, 13}, {70, 5, 3, 3}, 1, {1, 1}, {0}, {1, 0, 0, 1}, {0}, NULL, true},
      /* the implicit GEMM with 2 groups, batch 2, dilation, stride 2 */
      {"Conv", 4, {2, 6, 9, 8}, {18, 3, 3, 3}, 2, {2, 1}, {1, 2}, {1, 1, 1, 1}, {0}, NULL, true},
      /* the implicit GEMM on a 1x1 convolution and in 3-D */
      {"Conv", 4, {1, 16, 6, 7}, {24, 16, 1, 1}, 1, {0}, {0}, {0, 0, 0, 0}, {0}, NULL, false},
      {"Conv", 5, {1, 3, 5, 6, 7}, {9, 3, 2, 3, 3}, 1, {1, 1, 2}, {0}, {0, 1, 1, 1, 1, 0}, {0}, NULL, true},
      /* ConvTranspose: stride 2, pads, output_padding, bias */
      {"ConvTranspose", 4, {1, 3, 5, 4}, {3, 2, 3, 3}, 1, {2, 2}, {0}, {1, 1, 0, 1}, {1, 1}, NULL, true},
      /* ConvTranspose: 2 groups, dilation 2 */
      {"ConvTranspose", 4, {2, 4, 4, 3}, {4, 3, 2, 3}, 2, {1, 2}, {2, 1}, {0, 1, 1, 0}, {0}, NULL, false},
      /* ConvTranspose 1-D */
      {"ConvTranspose", 3, {1, 2, 7}, {2, 3, 5}, 1, {3}, {0}, {2, 1}, {0}, NULL, true},
  };
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
    print_message("case %zu: %s\n", i, cases[i].op);
    run_conv_case(&cases[i]);
  }
}

/* At O2 the passes fuse the activation (and a residual Add before it) into tb::FusedConv: each activation
 * the epilogue has, on the own kernel. */
static void fused_conv_values_match_the_cpu(void **state) {
  (void)state;
  if (!emulate()) return;
  static const char *const acts[] = {"Relu", "LeakyRelu", "Sigmoid", "Tanh", "HardSigmoid", "HardSwish"};
  const conv_case c = {"Conv", 4, {1, 3, 6, 5}, {4, 3, 3, 3}, 1, {1, 1}, {0}, {1, 1, 1, 1}, {0}, NULL, true};
  float x[90];
  fill_range(x, 90, 9, -2.0f, 2.0f);
  for (size_t a = 0; a < sizeof acts / sizeof acts[0]; a++) {
    tb_model *m = conv_model(&c, acts[a]);
    size_t device = 0, fallback = 9;
    compare_with_cpu(m, 4, c.x, x, 1, TB_LEVEL_O2, &device, &fallback);
    assert_int_equal(fallback, 0);
    assert_int_equal(device, 1); /* one FusedConv */
    assert_int_equal(launches_of("tb_cu_cnn_conv_f32"), 1);
    tb_model_destroy(m);
  }
  /* Conv + residual Add + Relu: a FusedConv with the residual as input 3 */
  tb_ir_model *ir = tbt_ir_model(17);
  tb_graph *g = tb_graph_new(ir, NULL, "residual");
  const int64_t xd[4] = {1, 4, 5, 5}, wd[4] = {4, 4, 3, 3}, four = 4;
  tbt_input(g, "x", TB_DTYPE_F32, 4, xd, NULL);
  pt_const_rand(g, "W", 4, wd, 5, -0.5f, 0.5f);
  pt_const_rand(g, "B", 1, &four, 6, -1.0f, 1.0f);
  int node = tbt_node(g, "Conv", "conv", "x,W,B", "c");
  const int64_t pads[4] = {1, 1, 1, 1};
  pt_attr_ints(g, node, "pads", 4, pads);
  tbt_node(g, "Add", "add", "c,x", "s");
  tbt_node(g, "Relu", "relu", "s", "y");
  tbt_output(g, "y");
  tb_model *m = tbt_model_of(ir);
  float xr[100];
  fill_range(xr, 100, 4, -2.0f, 2.0f);
  size_t device = 0, fallback = 9;
  compare_with_cpu(m, 4, xd, xr, 1, TB_LEVEL_O2, &device, &fallback);
  assert_int_equal(device, 1);
  assert_int_equal(fallback, 0);
  tb_model_destroy(m);
}

/* One pool node on x. */
static void pool_case(const char *op, size_t rank, const int64_t *x_dims, const int64_t *kernel, const int64_t *strides,
                      const int64_t *pads, const int64_t *dilations, bool ceil, int include_pad, const char *auto_pad) {
  tb_ir_model *ir = tbt_ir_model(19);
  tb_graph *g = tb_graph_new(ir, NULL, "pool");
  size_t sp = rank - 2;
  tbt_input(g, "x", TB_DTYPE_F32, rank, x_dims, NULL);
  int node = tbt_node(g, op, "pool", "x", "y");
  if (kernel) pt_attr_ints(g, node, "kernel_shape", sp, kernel);
  if (strides) pt_attr_ints(g, node, "strides", sp, strides);
  if (pads) pt_attr_ints(g, node, "pads", 2 * sp, pads);
  if (dilations) pt_attr_ints(g, node, "dilations", sp, dilations);
  if (ceil) pt_attr_int(g, node, "ceil_mode", 1);
  if (include_pad) pt_attr_int(g, node, "count_include_pad", 1);
  if (auto_pad) pt_attr_string(g, node, "auto_pad", auto_pad);
  tbt_output(g, "y");
  tb_model *m = tbt_model_of(ir);
  int64_t numel = 1;
  for (size_t d = 0; d < rank; d++) numel *= x_dims[d];
  float *x = malloc((size_t)numel * sizeof *x);
  fill_range(x, (size_t)numel, 21, -3.0f, 3.0f);
  size_t device = 0, fallback = 9;
  compare_with_cpu(m, rank, x_dims, x, 1, TB_LEVEL_O0, &device, &fallback);
  assert_int_equal(device, 1);
  assert_int_equal(fallback, 0);
  free(x);
  tb_model_destroy(m);
}

static void pool_values_match_the_cpu(void **state) {
  (void)state;
  if (!emulate()) return;
  const int64_t x4[4] = {2, 3, 9, 8}, x3[3] = {1, 4, 11}, x5[5] = {1, 2, 5, 6, 4};
  const int64_t k3[2] = {3, 3}, s2[2] = {2, 2}, p1[4] = {1, 1, 1, 1}, pa[4] = {0, 1, 2, 0}, d2[2] = {2, 1};
  pool_case("MaxPool", 4, x4, k3, s2, p1, NULL, false, 0, NULL);   /* ResNet's: 3x3 stride 2 pad 1 */
  pool_case("MaxPool", 4, x4, k3, s2, pa, d2, true, 0, NULL);      /* dilated, asymmetric pads, ceil_mode */
  pool_case("AveragePool", 4, x4, k3, s2, p1, NULL, false, 0, NULL);
  pool_case("AveragePool", 4, x4, k3, s2, pa, NULL, true, 1, NULL); /* count_include_pad with ceil_mode */
  pool_case("AveragePool", 4, x4, k3, s2, NULL, NULL, false, 0, "SAME_UPPER");
  const int64_t k1[1] = {4}, s1[1] = {3}, p1d[2] = {1, 2};
  pool_case("MaxPool", 3, x3, k1, s1, p1d, NULL, true, 0, NULL);
  pool_case("AveragePool", 3, x3, k1, s1, p1d, NULL, false, 1, NULL);
  const int64_t k3d[3] = {2, 3, 2}, s3d[3] = {1, 2, 2};
  pool_case("MaxPool", 5, x5, k3d, s3d, NULL, NULL, false, 0, NULL);
  pool_case("AveragePool", 5, x5, k3d, s3d, NULL, NULL, true, 0, NULL);
  pool_case("GlobalAveragePool", 4, x4, NULL, NULL, NULL, NULL, false, 0, NULL);
  pool_case("GlobalMaxPool", 4, x4, NULL, NULL, NULL, NULL, false, 0, NULL);
  pool_case("GlobalAveragePool", 3, x3, NULL, NULL, NULL, NULL, false, 0, NULL);
  const int64_t big[4] = {1, 2, 40, 30}; /* planes of 1200: the block strides */
  pool_case("GlobalAveragePool", 4, big, NULL, NULL, NULL, NULL, false, 0, NULL);
}

static void norm_values_match_the_cpu(void **state) {
  (void)state;
  if (!emulate()) return;
  const int64_t x4[4] = {2, 3, 7, 5}, x3[3] = {3, 4, 37}, three = 3, four = 4;
  float v[3] = {0.5f, 1.5f, 0.25f};
  for (int which = 0; which < 3; which++) {
    tb_ir_model *ir = tbt_ir_model(15);
    tb_graph *g = tb_graph_new(ir, NULL, "norm");
    bool bn = which == 0;
    const int64_t *xd = which == 2 ? x3 : x4, *c = which == 2 ? &four : &three;
    size_t rank = which == 2 ? 3 : 4;
    tbt_input(g, "x", TB_DTYPE_F32, rank, xd, NULL);
    pt_const_rand(g, "scale", 1, c, 7, 0.5f, 2.0f);
    pt_const_rand(g, "bias", 1, c, 8, -1.0f, 1.0f);
    int node;
    if (bn) {
      pt_const_rand(g, "mean", 1, c, 9, -1.0f, 1.0f);
      tbt_const_f32(g, "var", 1, c, v);
      node = tbt_node(g, "BatchNormalization", "bn", "x,scale,bias,mean,var", "y");
    } else {
      node = tbt_node(g, "InstanceNormalization", "in", "x,scale,bias", "y");
    }
    pt_attr_float(g, node, "epsilon", 1e-3f);
    tbt_output(g, "y");
    tb_model *m = tbt_model_of(ir);
    int64_t numel = 1;
    for (size_t d = 0; d < rank; d++) numel *= xd[d];
    float *x = malloc((size_t)numel * sizeof *x);
    fill_range(x, (size_t)numel, 31, -4.0f, 4.0f);
    size_t device = 0, fallback = 9;
    compare_with_cpu(m, rank, xd, x, 1, TB_LEVEL_O0, &device, &fallback);
    assert_int_equal(device, 1);
    assert_int_equal(fallback, 0);
    assert_int_equal(launches_of(bn ? "tb_cu_cnn_batch_norm_f32" : "tb_cu_cnn_instance_norm_f32"), 1);
    free(x);
    tb_model_destroy(m);
  }
}

/* Resize-13 with scales or sizes, each mode and some coordinate transforms. */
static void resize_values_match_the_cpu(void **state) {
  (void)state;
  if (!emulate()) return;
  typedef struct resize_case {
    const char *mode, *coord, *nearest;
    float scales[4];
    int64_t sizes[4];
  } resize_case;
  static const resize_case cases[] = {
      {"nearest", "asymmetric", "floor", {1, 1, 2, 2}, {0}},
      {"nearest", "half_pixel", "round_prefer_floor", {1, 1, 1.5f, 0.5f}, {0}},
      {"linear", "half_pixel", NULL, {1, 1, 2, 2}, {0}},
      {"linear", "align_corners", NULL, {0}, {2, 3, 7, 3}},
      {"linear", "pytorch_half_pixel", NULL, {1, 1, 0.5f, 1.7f}, {0}},
      {"cubic", "half_pixel", NULL, {1, 1, 2, 2}, {0}},
      {"cubic", "align_corners", NULL, {0}, {2, 3, 4, 9}},
  };
  const int64_t xd[4] = {2, 3, 5, 4}, four = 4;
  float x[120];
  fill_range(x, 120, 41, -3.0f, 3.0f);
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
    const resize_case *c = &cases[i];
    tb_ir_model *ir = tbt_ir_model(13);
    tb_graph *g = tb_graph_new(ir, NULL, "resize");
    tbt_input(g, "x", TB_DTYPE_F32, 4, xd, NULL);
    int node;
    if (c->sizes[0]) {
      tbt_const_i64(g, "sizes", 1, &four, c->sizes);
      node = tbt_node(g, "Resize", "resize", "x,,,sizes", "y");
    } else {
      tbt_const_f32(g, "scales", 1, &four, c->scales);
      node = tbt_node(g, "Resize", "resize", "x,,scales", "y");
    }
    pt_attr_string(g, node, "mode", c->mode);
    pt_attr_string(g, node, "coordinate_transformation_mode", c->coord);
    if (c->nearest) pt_attr_string(g, node, "nearest_mode", c->nearest);
    tbt_output(g, "y");
    tb_model *m = tbt_model_of(ir);
    size_t device = 0, fallback = 9;
    print_message("resize case %zu: %s %s\n", i, c->mode, c->coord);
    compare_with_cpu(m, 4, xd, x, 1, TB_LEVEL_O0, &device, &fallback);
    assert_int_equal(device, 1);
    assert_int_equal(fallback, 0);
    assert_int_equal(launches_of("tb_cu_cnn_resize_f32"), 1);
    tb_model_destroy(m);
  }
}

/* ---- cuDNN (the computing fake) ----------------------------------------------------------------------- */

/* Conv + bias + Relu (a FusedConv at O2) through cuDNN: values as the CPU's, no own conv kernel. */
static void cudnn_runs_the_convolutions(void **state) {
  (void)state;
  if (!emulate()) return;
  use_fake_cudnn();
  const conv_case c = {"Conv", 4, {2, 4, 7, 6}, {6, 2, 3, 3}, 2, {2, 1}, {1, 2}, {1, 0, 2, 1}, {0}, NULL, true};
  float x[336];
  fill_range(x, 336, 13, -2.0f, 2.0f);
  tb_model *m = conv_model(&c, "Relu");
  int executes = cudnn()->executes;
  size_t device = 0, fallback = 9;
  compare_with_cpu(m, 4, c.x, x, 1, TB_LEVEL_O2, &device, &fallback);
  assert_int_equal(fallback, 0);
  assert_int_equal(cudnn()->executes, executes + 1);
  assert_int_equal(launches_of("tb_cu_cnn_conv_f32") + launches_of("tb_cu_cnn_conv_igemm_f32"), 0);
  assert_int_equal(launches_of("tb_cu_cnn_epilogue_f32"), 0); /* bias and ReLU fused by cuDNN */
  assert_int_equal(cudnn()->pointwise_modes[1], TB_CUDNN_POINTWISE_ADD);
  assert_int_equal(cudnn()->pointwise_modes[2], TB_CUDNN_POINTWISE_RELU_FWD);
  /* a 1-D convolution goes to cuDNN as a height of 1 */
  const conv_case one = {"Conv", 3, {1, 3, 11}, {2, 3, 3}, 1, {2}, {0}, {1, 1}, {0}, NULL, false};
  tb_model *m1 = conv_model(&one, NULL);
  executes = cudnn()->executes;
  compare_with_cpu(m1, 3, one.x, x, 1, TB_LEVEL_O0, &device, &fallback);
  assert_int_equal(cudnn()->executes, executes + 1);
  assert_int_equal(launches_of("tb_cu_cnn_conv_f32"), 0);
  tb_model_destroy(m1);
  /* no engine fuses: the convolution alone through cuDNN, the bias and ReLU in the epilogue kernel */
  setenv("FAKE_CUDNN_FUSION", "none", 1);
  executes = cudnn()->executes;
  compare_with_cpu(m, 4, c.x, x, 1, TB_LEVEL_O2, &device, &fallback);
  assert_int_equal(cudnn()->executes, executes + 1);
  assert_int_equal(launches_of("tb_cu_cnn_epilogue_f32"), 1);
  assert_int_equal(launches_of("tb_cu_cnn_conv_f32"), 0);
  unsetenv("FAKE_CUDNN_FUSION");
  /* a Sigmoid is no cuDNN epilogue here: bias fused, Sigmoid in the epilogue kernel */
  tb_model *ms = conv_model(&c, "Sigmoid");
  compare_with_cpu(ms, 4, c.x, x, 1, TB_LEVEL_O2, &device, &fallback);
  assert_int_equal(launches_of("tb_cu_cnn_epilogue_f32"), 1);
  tb_model_destroy(ms);
  /* no engine at all: the own kernel runs it */
  setenv("FAKE_CUDNN_PLAN_FAIL", "9", 1);
  setenv("FAKE_CUDNN_ENGINES_FALLBACK", "1", 1);
  executes = cudnn()->executes;
  compare_with_cpu(m, 4, c.x, x, 1, TB_LEVEL_O2, &device, &fallback);
  assert_int_equal(cudnn()->executes, executes);
  assert_int_equal(launches_of("tb_cu_cnn_conv_f32"), 1);
  tb_model_destroy(m);
}

/* cuDNN's workspace comes from the device; cuDNN failing at execute is the node's error. */
static void cudnn_workspace_and_failure(void **state) {
  (void)state;
  if (!emulate()) return;
  use_fake_cudnn();
  const conv_case c = {"Conv", 4, {1, 3, 6, 6}, {4, 3, 3, 3}, 1, {1, 1}, {0}, {1, 1, 1, 1}, {0}, NULL, true};
  float x[108];
  fill_range(x, 108, 17, -2.0f, 2.0f);
  tb_model *m = conv_model(&c, NULL);
  setenv("FAKE_CUDNN_WORKSPACE", "4096", 1);
  compare_with_cpu(m, 4, c.x, x, 1, TB_LEVEL_O0, NULL, NULL);
  assert_non_null(cudnn()->workspace);
  /* cuDNN fails while it executes: the node's error; the prepared model runs again afterwards */
  setenv("FAKE_CUDNN_WORKSPACE", "0", 1);
  tb_backend *cuda = open_cuda0(), *cpu = NULL;
  TB_ASSERT_OK(tb_backend_create("cpu", &cpu));
  tb_prepare_options o = {.size = sizeof o, .level = TB_LEVEL_O0};
  tb_prepared *p = NULL;
  TB_ASSERT_OK(tb_model_prepare(m, cuda, &o, &p, NULL));
  tb_tensor *in = tbt_f32(cpu, 4, c.x, x), *out = NULL;
  const char *names[1] = {"x"};
  setenv("FAKE_CUDNN_FAIL", "execute", 1);
  assert_int_equal(tb_prepared_run(p, 1, names, &in, 1, NULL, &out), TB_ERR_DRIVER);
  TB_ASSERT_CONTAINS(tb_last_error(), "node 'conv' (Conv)");
  TB_ASSERT_CONTAINS(tb_last_error(), "cudnnBackendExecute");
  TB_ASSERT_CONTAINS(tb_last_error(), "CUDNN_STATUS_INTERNAL_ERROR");
  assert_null(out);
  unsetenv("FAKE_CUDNN_FAIL");
  TB_ASSERT_OK(tb_prepared_run(p, 1, names, &in, 1, NULL, &out));
  tb_tensor_destroy(out);
  out = NULL;
  tb_prepared_destroy(p);
  tb_backend_destroy(cuda);
  /* a plan wanting more workspace than the device has: the allocator's sentence with the sizes */
  setenv("FAKE_CUDNN_WORKSPACE", "4000000000", 1);
  cuda = open_cuda0();
  TB_ASSERT_OK(tb_model_prepare(m, cuda, &o, &p, NULL));
  assert_int_equal(tb_prepared_run(p, 1, names, &in, 1, NULL, &out), TB_ERR_OUT_OF_MEMORY);
  TB_ASSERT_CONTAINS(tb_last_error(), "cuda:0: out of memory allocating");
  assert_null(out);
  tb_tensor_destroy(in);
  tb_prepared_destroy(p);
  tb_backend_destroy(cuda);
  tb_backend_destroy(cpu);
  assert_int_equal(live_allocations(), 0);
  tb_model_destroy(m);
}

/* ---- The demo CNN and a ResNet-shaped block ------------------------------------------------------------ */

/* models/cnn_small.onnx (Conv + BatchNormalization + Relu blocks, MaxPool, GlobalAveragePool, Flatten, Gemm,
 * Softmax) at O0 and O2: the CNN ops on cuda:0, the values the CPU's. */
static void demo_cnn_runs_on_cuda(void **state) {
  (void)state;
  if (!emulate()) return;
  tb_model *m = NULL;
  TB_ASSERT_OK(tb_model_load(TB_TEST_FIXTURES "/../../models/cnn_small.onnx", &m));
  const int64_t dims[4] = {1, 3, 32, 32};
  float x[3072];
  fill_range(x, 3072, 51, -1.0f, 1.0f);
  for (int level = 0; level < 2; level++) {
    tb_opt_level lv = level ? TB_LEVEL_O2 : TB_LEVEL_O0;
    tb_backend *cuda = open_cuda0();
    tb_prepare_options o = {.size = sizeof o, .level = lv};
    tb_prepared *p = NULL;
    const tb_prepare_result *r = NULL;
    TB_ASSERT_OK(tb_model_prepare(m, cuda, &o, &p, &r));
    for (size_t f = 0; f < r->cpu_fallback_nodes; f++) {
      static const char *const mine[] = {"Conv", "BatchNormalization", "Relu", "MaxPool", "GlobalAveragePool"};
      for (size_t k = 0; k < sizeof mine / sizeof mine[0]; k++) {
        char needle[64];
        snprintf(needle, sizeof needle, "no cuda kernel for %s", mine[k]);
        if (strstr(r->fallback_ops[f], needle)) fail_msg("%s on the CPU: %s", mine[k], r->fallback_ops[f]);
      }
    }
    assert_true(r->device_nodes >= (level ? 5u : 10u));
    tb_prepared_destroy(p);
    tb_backend_destroy(cuda);
    size_t device = 0;
    compare_input(m, "input", 4, dims, x, 1, lv, &device, NULL);
  }
  tb_model_destroy(m);
}

/* A ResNet basic block at O2: conv-BN-relu, conv-BN + skip, relu; then MaxPool and GlobalAveragePool. */
static void resnet_block_at_o2(void **state) {
  (void)state;
  if (!emulate()) return;
  tb_ir_model *ir = tbt_ir_model(17);
  tb_graph *g = tb_graph_new(ir, NULL, "block");
  const int64_t xd[4] = {1, 8, 10, 10}, wd[4] = {8, 8, 3, 3}, eight = 8;
  const int64_t pads[4] = {1, 1, 1, 1}, k3[2] = {3, 3}, s2[2] = {2, 2};
  tbt_input(g, "x", TB_DTYPE_F32, 4, xd, NULL);
  const char *names[2] = {"a", "b"};
  for (int i = 0; i < 2; i++) {
    char w[8], s[16], b[16], mean[16], var[16], in[128], conv_out[8], bn_out[8];
    snprintf(w, sizeof w, "W%d", i);
    snprintf(s, sizeof s, "s%d", i);
    snprintf(b, sizeof b, "b%d", i);
    snprintf(mean, sizeof mean, "m%d", i);
    snprintf(var, sizeof var, "v%d", i);
    pt_const_rand(g, w, 4, wd, (uint32_t)(60 + i), -0.3f, 0.3f);
    pt_const_rand(g, s, 1, &eight, (uint32_t)(70 + i), 0.5f, 1.5f);
    pt_const_rand(g, b, 1, &eight, (uint32_t)(80 + i), -0.5f, 0.5f);
    pt_const_rand(g, mean, 1, &eight, (uint32_t)(90 + i), -0.5f, 0.5f);
    pt_const_rand(g, var, 1, &eight, (uint32_t)(95 + i), 0.5f, 2.0f);
    snprintf(conv_out, sizeof conv_out, "c%d", i);
    snprintf(bn_out, sizeof bn_out, "n%d", i);
    snprintf(in, sizeof in, "%s,%s", i ? "a" : "x", w);
    int node = tbt_node(g, "Conv", i ? "conv_b" : "conv_a", in, conv_out);
    pt_attr_ints(g, node, "pads", 4, pads);
    snprintf(in, sizeof in, "%s,%s,%s,%s,%s", conv_out, s, b, mean, var);
    tbt_node(g, "BatchNormalization", i ? "bn_b" : "bn_a", in, bn_out);
    if (i == 0) tbt_node(g, "Relu", "relu_a", bn_out, names[0]);
  }
  tbt_node(g, "Add", "skip", "n1,x", "sum");
  tbt_node(g, "Relu", "relu_b", "sum", "r");
  int pool = tbt_node(g, "MaxPool", "pool", "r", "p");
  pt_attr_ints(g, pool, "kernel_shape", 2, k3);
  pt_attr_ints(g, pool, "strides", 2, s2);
  pt_attr_ints(g, pool, "pads", 4, pads);
  tbt_node(g, "GlobalAveragePool", "gap", "p", "y");
  tbt_output(g, "y");
  tb_model *m = tbt_model_of(ir);
  float x[800];
  fill_range(x, 800, 61, -2.0f, 2.0f);
  size_t device = 0, fallback = 9;
  compare_with_cpu(m, 4, xd, x, 1, TB_LEVEL_O2, &device, &fallback);
  assert_int_equal(fallback, 0);
  assert_int_equal(device, 4); /* two FusedConv (BN folded, the second with the skip), MaxPool, GlobalAveragePool */
  assert_int_equal(launches_of("tb_cu_cnn_conv_igemm_f32"), 2); /* 8 channels, a reduction of 72 */
  compare_with_cpu(m, 4, xd, x, 1, TB_LEVEL_O0, &device, &fallback);
  assert_int_equal(fallback, 0);
  tb_model_destroy(m);
}

/* ---- Errors -------------------------------------------------------------------------------------------- */

static void launch_failure_names_kernel_and_node(void **state) {
  (void)state;
  const conv_case c = {"Conv", 4, {1, 2, 5, 5}, {3, 2, 3, 3}, 1, {1, 1}, {0}, {1, 1, 1, 1}, {0}, NULL, true};
  tb_model *m = conv_model(&c, NULL);
  tb_backend *cuda = open_cuda0(), *cpu = NULL;
  TB_ASSERT_OK(tb_backend_create("cpu", &cpu));
  tb_prepare_options o = {.size = sizeof o, .level = TB_LEVEL_O0};
  tb_prepared *p = NULL;
  TB_ASSERT_OK(tb_model_prepare(m, cuda, &o, &p, NULL));
  float x[50] = {0};
  tb_tensor *in = tbt_f32(cpu, 4, c.x, x), *out = NULL;
  const char *names[1] = {"x"};
  setenv("FAKE_CUDA_FAIL", "launch", 1);
  setenv("FAKE_CUDA_FAIL_CODE", "700", 1);
  assert_int_equal(tb_prepared_run(p, 1, names, &in, 1, NULL, &out), TB_ERR_DRIVER);
  TB_ASSERT_CONTAINS(tb_last_error(), "cuLaunchKernel of tb_cu_cnn_conv_f32 for node 'conv' (Conv)");
  TB_ASSERT_CONTAINS(tb_last_error(), "700 CUDA_ERROR_ILLEGAL_ADDRESS");
  assert_null(out);
  unsetenv("FAKE_CUDA_FAIL");
  unsetenv("FAKE_CUDA_FAIL_CODE");
  launch_reset();
  TB_ASSERT_OK(tb_prepared_run(p, 1, names, &in, 1, NULL, &out));
  const fake_launch *l = launch_at(0);
  assert_non_null(l);
  assert_string_equal(l->name, "tb_cu_cnn_conv_f32");
  assert_int_equal(l->n_args, 7);
  long long counts[6];
  memcpy(counts, l->args + l->arg_offset[6], sizeof counts);
  assert_int_equal(counts[0], 50);  /* x */
  assert_int_equal(counts[1], 54);  /* W */
  assert_int_equal(counts[2], 3);   /* B */
  assert_int_equal(counts[3], 0);   /* no residual */
  assert_int_equal(counts[4], 75);  /* y [1, 3, 5, 5] */
  tb_tensor_destroy(out);
  tb_tensor_destroy(in);
  tb_prepared_destroy(p);
  tb_backend_destroy(cuda);
  tb_backend_destroy(cpu);
  assert_int_equal(live_allocations(), 0);
  tb_model_destroy(m);
}

/* A device too small for the activations: the run fails with the sizes; nothing is left behind. */
static void device_out_of_memory_is_a_status(void **state) {
  (void)state;
  const conv_case c = {"Conv", 4, {1, 2, 512, 512}, {8, 2, 1, 1}, 1, {0}, {0}, {0, 0, 0, 0}, {0}, NULL, false};
  tb_model *m = conv_model(&c, NULL);
  setenv("FAKE_CUDA_MEM_CAPACITY", "6M", 1); /* W and x (2 MiB) fit, y (8 MiB) does not */
  tb_backend *cuda = open_cuda0(), *cpu = NULL;
  TB_ASSERT_OK(tb_backend_create("cpu", &cpu));
  tb_prepare_options o = {.size = sizeof o, .level = TB_LEVEL_O0};
  tb_prepared *p = NULL;
  TB_ASSERT_OK(tb_model_prepare(m, cuda, &o, &p, NULL));
  float *x = calloc(524288, sizeof *x);
  tb_tensor *in = tbt_f32(cpu, 4, c.x, x), *out = NULL;
  const char *names[1] = {"x"};
  assert_int_equal(tb_prepared_run(p, 1, names, &in, 1, NULL, &out), TB_ERR_OUT_OF_MEMORY);
  TB_ASSERT_CONTAINS(tb_last_error(), "cuda:0: out of memory allocating");
  assert_null(out);
  unsetenv("FAKE_CUDA_MEM_CAPACITY");
  free(x);
  tb_tensor_destroy(in);
  tb_prepared_destroy(p);
  tb_backend_destroy(cuda);
  tb_backend_destroy(cpu);
  assert_int_equal(live_allocations(), 0);
  tb_model_destroy(m);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(find_kernel_for_cnn_ops),
      cmocka_unit_test_setup_teardown(conv_values_match_the_cpu, setup, teardown),
      cmocka_unit_test_setup_teardown(fused_conv_values_match_the_cpu, setup, teardown),
      cmocka_unit_test_setup_teardown(pool_values_match_the_cpu, setup, teardown),
      cmocka_unit_test_setup_teardown(norm_values_match_the_cpu, setup, teardown),
      cmocka_unit_test_setup_teardown(resize_values_match_the_cpu, setup, teardown),
      cmocka_unit_test_setup_teardown(cudnn_runs_the_convolutions, setup, teardown),
      cmocka_unit_test_setup_teardown(cudnn_workspace_and_failure, setup, teardown),
      cmocka_unit_test_setup_teardown(demo_cnn_runs_on_cuda, setup, teardown),
      cmocka_unit_test_setup_teardown(resnet_block_at_o2, setup, teardown),
      cmocka_unit_test_setup_teardown(launch_failure_names_kernel_and_node, setup, teardown),
      cmocka_unit_test_setup_teardown(device_out_of_memory_is_a_status, setup, teardown),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
