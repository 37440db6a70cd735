/* The CUDA backend's convolutions through cuDNN 9's graph API (backend/cuda/cuda_dnn.c) on the fake cuDNN
 * (tests/fakes/fake_cudnn.c), which checks descriptors at finalize as cuDNN does and executes the graph on
 * host memory: grouped, padded (asymmetrically), strided and dilated convolutions come out right with the
 * bias and ReLU fused, or unfused (and said so) when no engine takes the fused graph; the descriptors
 * carry the right attributes; engines are tried in the heuristics' order, then the fallback list; plans
 * are cached per shape; the workspace is checked; every failure is a status and a sentence, with no
 * descriptor left alive. Where the real cuDNN 9 is installed, it finalizes the tensors, the convolution
 * and the operations this code builds (no GPU needed up to the operation graph). */
#include <dlfcn.h>
#include <glob.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "../fakes/fake_cudnn.h"
#include "backend/cuda/cuda_dnn.h"
#include "core/error.h"
#include "runtime/cudnn_api.h"
#include "test_util.h"
#include "test_wheel_util.h"

#define STREAM ((tb_cu_stream)(uintptr_t)0xc0de)

static const fake_cudnn_state *fake(void) {
  void *h = dlopen(tbt_fake("fake_cudnn"), RTLD_NOW);
  if (!h) fail_msg("cannot load fake_cudnn: %s", dlerror());
  const fake_cudnn_state *(*fn)(void) = (const fake_cudnn_state *(*)(void))dlsym(h, "fake_cudnn_state_get");
  if (!fn) fail_msg("fake_cudnn does not export fake_cudnn_state_get");
  return fn();
}

static const char *const fake_vars[] = {"FAKE_CUDNN_VERSION", "FAKE_CUDNN_ENGINES_A", "FAKE_CUDNN_ENGINES_FALLBACK",
                                        "FAKE_CUDNN_PLAN_FAIL", "FAKE_CUDNN_FUSION", "FAKE_CUDNN_WORKSPACE",
                                        "FAKE_CUDNN_FAIL", "FAKE_CUDNN_FAIL_CODE"};

static int setup(void **state) {
  (void)state;
  for (size_t i = 0; i < sizeof fake_vars / sizeof fake_vars[0]; i++) unsetenv(fake_vars[i]);
  setenv("TB_CUDNN_LIB", tbt_fake("fake_cudnn"), 1);
  tb_cudnn_test_loader_names(NULL);
  return 0;
}

static int teardown(void **state) {
  (void)state;
  for (size_t i = 0; i < sizeof fake_vars / sizeof fake_vars[0]; i++) unsetenv(fake_vars[i]);
  assert_int_equal(fake()->live_descs, 0);
  assert_int_equal(fake()->live_handles, 0);
  tb_cudnn_test_loader_names(NULL);
  return 0;
}

static tb_cu_deviceptr dev(const void *p) { return (tb_cu_deviceptr)(uintptr_t)p; }

/* The test's shape: N 2, C 4, 6 x 5, K 6, groups 2, kernel 3 x 2, pads top 1 left 0 bottom 2 right 1, strides
 * 2 x 1, dilations 1 x 2: output 4 x 4. */
enum { N = 2, C = 4, H = 6, W = 5, K = 6, G = 2, KH = 3, KW = 2, OH = 4, OW = 4 };
static _Alignas(64) float x[N * C * H * W], w[K * (C / G) * KH * KW], y[N * K * OH * OW], want[N * K * OH * OW];
static _Alignas(64) float bias[K] = {0.5f, -1, 2, -30, 0, 1.5f};

static tb_cuda_conv shape(bool with_bias, bool relu) {
  for (size_t i = 0; i < sizeof x / sizeof x[0]; i++) x[i] = (float)((int)(i * 5 % 9) - 4) * 0.5f;
  for (size_t i = 0; i < sizeof w / sizeof w[0]; i++) w[i] = (float)((int)(i * 7 % 5) - 2);
  memset(y, 0, sizeof y);
  return (tb_cuda_conv){.n = N, .c = C, .h = H, .w = W, .k = K, .groups = G, .kernel_h = KH, .kernel_w = KW,
                        .pad_top = 1, .pad_left = 0, .pad_bottom = 2, .pad_right = 1, .stride_h = 2, .stride_w = 1,
                        .dilation_h = 1, .dilation_w = 2, .x = dev(x), .weight = dev(w), .y = dev(y),
                        .bias = with_bias ? dev(bias) : 0, .relu = relu};
}

/* ONNX Conv, directly. */
static void reference(const tb_cuda_conv *c, bool with_bias, bool relu) {
  int64_t wc = c->c / c->groups, kpg = c->k / c->groups;
  for (int64_t n = 0; n < c->n; n++)
    for (int64_t k = 0; k < c->k; k++)
      for (int64_t p = 0; p < OH; p++)
        for (int64_t q = 0; q < OW; q++) {
          float s = 0;
          for (int64_t ci = 0; ci < wc; ci++)
            for (int64_t r = 0; r < c->kernel_h; r++)
              for (int64_t u = 0; u < c->kernel_w; u++) {
                int64_t ih = p * c->stride_h - c->pad_top + r * c->dilation_h, iw = q * c->stride_w - c->pad_left + u * c->dilation_w;
                if (ih >= 0 && ih < c->h && iw >= 0 && iw < c->w)
                  s += x[((n * c->c + k / kpg * wc + ci) * c->h + ih) * c->w + iw] * w[((k * wc + ci) * c->kernel_h + r) * c->kernel_w + u];
              }
          if (with_bias) s += bias[k];
          if (relu && s < 0) s = 0;
          want[((n * c->k + k) * OH + p) * OW + q] = s;
        }
}

static void assert_y(void) {
  for (size_t i = 0; i < sizeof y / sizeof y[0]; i++)
    if (y[i] != want[i]) fail_msg("y[%zu]: got %g, want %g", i, (double)y[i], (double)want[i]);
}

/* Bias and ReLU fused: the numbers, and every attribute the descriptors carry. */
static void fused_conv(void **state) {
  (void)state;
  tb_cuda_dnn *dnn = NULL;
  TB_ASSERT_OK(tb_cuda_dnn_create("cuda:0", &dnn));
  tb_cuda_conv c = shape(true, true);
  int64_t oh, ow;
  TB_ASSERT_OK(tb_cuda_dnn_conv_output("cuda:0", &c, &oh, &ow));
  assert_int_equal(oh, OH);
  assert_int_equal(ow, OW);
  bool fused = false;
  TB_ASSERT_OK(tb_cuda_dnn_conv(dnn, &c, STREAM, 0, 0, &fused));
  assert_true(fused);
  reference(&c, true, true);
  assert_y();
  const fake_cudnn_state *f = fake();
  assert_int_equal(f->pre[0], 1);
  assert_int_equal(f->pre[1], 0);
  assert_int_equal(f->post[0], 2);
  assert_int_equal(f->post[1], 1);
  assert_int_equal(f->strides[0], 2);
  assert_int_equal(f->strides[1], 1);
  assert_int_equal(f->dilations[0], 1);
  assert_int_equal(f->dilations[1], 2);
  assert_int_equal(f->spatial_dims, 2);
  assert_int_equal(f->comp_type, TB_CUDNN_DATA_FLOAT);
  assert_int_equal(f->conv_mode, TB_CUDNN_CROSS_CORRELATION);
  const int64_t xd[4] = {N, C, H, W}, wd[4] = {K, C / G, KH, KW}, yd[4] = {N, K, OH, OW}, xs[4] = {C * H * W, H * W, W, 1};
  for (int i = 0; i < 4; i++) {
    assert_int_equal(f->x_dims[i], xd[i]);
    assert_int_equal(f->w_dims[i], wd[i]);
    assert_int_equal(f->y_dims[i], yd[i]);
    assert_int_equal(f->x_strides[i], xs[i]);
  }
  assert_int_equal(f->x_align, 16);
  assert_true(f->alpha == 1.0f && f->beta == 0.0f);
  assert_int_equal(f->ops, 3);
  assert_int_equal(f->pointwise_modes[0], -1);
  assert_int_equal(f->pointwise_modes[1], TB_CUDNN_POINTWISE_ADD);
  assert_int_equal(f->pointwise_modes[2], TB_CUDNN_POINTWISE_RELU_FWD);
  assert_int_equal(f->heur_mode, TB_CUDNN_HEUR_MODE_A);
  assert_int_equal(f->engine_index, 0);
  assert_int_equal(f->pack_count, 4);
  assert_int_equal(f->uids[3], 4); /* the bias */
  assert_ptr_equal(f->stream, STREAM);
  assert_null(f->workspace);
  tb_cuda_dnn_destroy(dnn);
}

/* Each epilogue alone, and none: the graph's operations follow. */
static void epilogue_variants(void **state) {
  (void)state;
  tb_cuda_dnn *dnn = NULL;
  TB_ASSERT_OK(tb_cuda_dnn_create("cuda:0", &dnn));
  const struct {
    bool bias, relu;
    int ops, second;
  } cases[] = {{false, false, 1, 0}, {true, false, 2, TB_CUDNN_POINTWISE_ADD}, {false, true, 2, TB_CUDNN_POINTWISE_RELU_FWD}};
  for (size_t i = 0; i < 3; i++) {
    tb_cuda_conv c = shape(cases[i].bias, cases[i].relu);
    bool fused = false;
    TB_ASSERT_OK(tb_cuda_dnn_conv(dnn, &c, STREAM, 0, 0, &fused));
    assert_true(fused);
    reference(&c, cases[i].bias, cases[i].relu);
    assert_y();
    assert_int_equal(fake()->ops, cases[i].ops);
    if (cases[i].ops == 2) assert_int_equal(fake()->pointwise_modes[1], cases[i].second);
  }
  tb_cuda_dnn_destroy(dnn);
}

/* No engine fuses: the convolution alone, fused false, the bias left to the caller. */
static void unfused_fallback(void **state) {
  (void)state;
  setenv("FAKE_CUDNN_FUSION", "none", 1);
  tb_cuda_dnn *dnn = NULL;
  TB_ASSERT_OK(tb_cuda_dnn_create("cuda:0", &dnn));
  tb_cuda_conv c = shape(true, true);
  bool fused = true;
  size_t workspace = 1;
  TB_ASSERT_OK(tb_cuda_dnn_conv_prepare(dnn, &c, &workspace, &fused));
  assert_false(fused);
  assert_int_equal(workspace, 0);
  TB_ASSERT_OK(tb_cuda_dnn_conv(dnn, &c, STREAM, 0, 0, &fused));
  assert_false(fused);
  reference(&c, false, false);
  assert_y();
  assert_int_equal(fake()->ops, 1);
  assert_int_equal(fake()->pack_count, 3);
  tb_cuda_dnn_destroy(dnn);
}

/* Engines in the heuristics' order; the fallback list when mode A's all refuse; none at all. */
static void engine_choice(void **state) {
  (void)state;
  tb_cuda_dnn *dnn = NULL;
  TB_ASSERT_OK(tb_cuda_dnn_create("cuda:0", &dnn));
  tb_cuda_conv c = shape(false, false);
  setenv("FAKE_CUDNN_PLAN_FAIL", "1", 1);
  int tried = fake()->plans_tried;
  TB_ASSERT_OK(tb_cuda_dnn_conv(dnn, &c, STREAM, 0, 0, NULL));
  assert_int_equal(fake()->engine_index, 1);
  assert_int_equal(fake()->plans_tried - tried, 2);
  assert_int_equal(fake()->heur_mode, TB_CUDNN_HEUR_MODE_A);
  setenv("FAKE_CUDNN_PLAN_FAIL", "2", 1);
  setenv("FAKE_CUDNN_ENGINES_FALLBACK", "3", 1);
  c.relu = true; /* another shape */
  TB_ASSERT_OK(tb_cuda_dnn_conv(dnn, &c, STREAM, 0, 0, NULL));
  assert_int_equal(fake()->heur_mode, TB_CUDNN_HEUR_MODE_FALLBACK);
  assert_int_equal(fake()->engine_index, 2);
  reference(&c, false, true);
  assert_y();
  setenv("FAKE_CUDNN_ENGINES_FALLBACK", "1", 1);
  c.bias = dev(bias);
  assert_int_equal(tb_cuda_dnn_conv(dnn, &c, STREAM, 0, 0, NULL), TB_ERR_UNSUPPORTED);
  TB_ASSERT_CONTAINS(tb_last_error(), "cuda:0: no engine of cuDNN 91900 (");
  TB_ASSERT_CONTAINS(tb_last_error(), "runs the convolution of X [2 x 4 x 6 x 5] with W [6 x 2 x 3 x 2] (groups 2, strides 2 x 1, "
                                      "pads 1,0,2,1, dilations 1 x 2, bias, ReLU) (its last word: 3002 "
                                      "CUDNN_STATUS_NOT_SUPPORTED_SHAPE (fake_cudnn: this engine does not take the shape)); "
                                      "the backend's own convolution runs it instead");
  tb_cuda_dnn_stats s;
  tb_cuda_dnn_stats_get(dnn, &s);
  assert_int_equal(s.plans, 2);
  tb_cuda_dnn_destroy(dnn);
}

/* A plan per shape (the pointers' alignment included); prepare then run uses one plan. */
static void plans_cached(void **state) {
  (void)state;
  tb_cuda_dnn *dnn = NULL;
  TB_ASSERT_OK(tb_cuda_dnn_create("cuda:0", &dnn));
  tb_cuda_conv c = shape(true, false);
  int graphs = fake()->graphs;
  TB_ASSERT_OK(tb_cuda_dnn_conv_prepare(dnn, &c, NULL, NULL));
  for (int i = 0; i < 3; i++) TB_ASSERT_OK(tb_cuda_dnn_conv(dnn, &c, STREAM, 0, 0, NULL));
  assert_int_equal(fake()->graphs - graphs, 1);
  c.x = dev(x + 1); /* 4-byte aligned */
  TB_ASSERT_OK(tb_cuda_dnn_conv_prepare(dnn, &c, NULL, NULL));
  assert_int_equal(fake()->x_align, 4);
  c.x = dev(x);
  c.stride_w = 2; /* another shape (output 4 x 2) */
  TB_ASSERT_OK(tb_cuda_dnn_conv_prepare(dnn, &c, NULL, NULL));
  tb_cuda_dnn_stats s;
  tb_cuda_dnn_stats_get(dnn, &s);
  assert_int_equal(s.plans, 3);
  assert_int_equal(s.executes, 3);
  assert_int_equal(fake()->graphs - graphs, 3);
  tb_cuda_dnn_destroy(dnn);
}

/* A plan that needs a workspace: its size from prepare, refused without it, passed when given. */
static void workspace(void **state) {
  (void)state;
  setenv("FAKE_CUDNN_WORKSPACE", "4096", 1);
  tb_cuda_dnn *dnn = NULL;
  TB_ASSERT_OK(tb_cuda_dnn_create("cuda:0", &dnn));
  tb_cuda_conv c = shape(false, false);
  size_t bytes = 0;
  TB_ASSERT_OK(tb_cuda_dnn_conv_prepare(dnn, &c, &bytes, NULL));
  assert_int_equal(bytes, 4096);
  static char space[4096];
  assert_int_equal(tb_cuda_dnn_conv(dnn, &c, STREAM, dev(space), 1024, NULL), TB_ERR_INVALID_ARGUMENT);
  TB_ASSERT_CONTAINS(tb_last_error(), "cuda:0: cuDNN's plan for this convolution needs 4096 bytes of workspace and was given 1024; "
                                      "ask tb_cuda_dnn_conv_prepare for the size and allocate it");
  TB_ASSERT_OK(tb_cuda_dnn_conv(dnn, &c, STREAM, dev(space), sizeof space, NULL));
  assert_ptr_equal(fake()->workspace, space);
  tb_cuda_dnn_destroy(dnn);
}

static void bad_convolutions(void **state) {
  (void)state;
  tb_cuda_dnn *dnn = NULL;
  TB_ASSERT_OK(tb_cuda_dnn_create("cuda:0", &dnn));
  const struct {
    const char *field;
    int64_t value;
    const char *says;
  } cases[] = {
      {"k", 0, "cuda:0: a cuDNN convolution's k (output channels) is 0; it must be at least 1"},
      {"groups", 3, "groups is 3, which divides neither c = 4 nor k = 6 evenly"},
      {"pad_top", -1, "pad_top is -1; it must be 0 or more"},
      {"kernel_h", 12, "dilated kernel (12 x 3) is larger than its padded input (9 x 6); the output would be empty"},
      {"y", 0, "needs device pointers for X, W and Y (Y is 0)"},
  };
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
    tb_cuda_conv c = shape(false, false);
    if (strcmp(cases[i].field, "k") == 0) c.k = cases[i].value;
    if (strcmp(cases[i].field, "groups") == 0) c.groups = cases[i].value;
    if (strcmp(cases[i].field, "pad_top") == 0) c.pad_top = cases[i].value;
    if (strcmp(cases[i].field, "kernel_h") == 0) c.kernel_h = cases[i].value;
    if (strcmp(cases[i].field, "y") == 0) c.y = 0;
    assert_int_equal(tb_cuda_dnn_conv(dnn, &c, STREAM, 0, 0, NULL), TB_ERR_INVALID_ARGUMENT);
    TB_ASSERT_CONTAINS(tb_last_error(), cases[i].says);
  }
  assert_int_equal(tb_cuda_dnn_conv(dnn, NULL, STREAM, 0, 0, NULL), TB_ERR_INVALID_ARGUMENT);
  tb_cuda_dnn_destroy(dnn);
}

/* A failing status at each kind of call: the call, the descriptor, the code, cuDNN's message, the shape. */
static void status_failures(void **state) {
  (void)state;
  const struct {
    const char *fail, *code, *says;
    tb_status status;
  } cases[] = {
      {"desc:17", "4000", "cuda:0: cudnnBackendCreateDescriptor (the X tensor) failed with 4000 CUDNN_STATUS_INTERNAL_ERROR "
                          "(fake_cudnn: desc:17 failed as FAKE_CUDNN_FAIL asked) for the convolution of X [2 x 4 x 6 x 5]", TB_ERR_DRIVER},
      {"set:102", "2000", "cudnnBackendSetAttribute (the convolution descriptor) failed with 2000 CUDNN_STATUS_BAD_PARAM", TB_ERR_DRIVER},
      {"finalize:15", "4000", "cudnnBackendFinalize (the operation graph) failed with 4000 CUDNN_STATUS_INTERNAL_ERROR", TB_ERR_DRIVER},
      {"finalize:4", "4000", "cudnnBackendFinalize (the engine heuristics (mode A)) failed with 4000", TB_ERR_DRIVER},
      {"desc:16", "4004", "cudnnBackendCreateDescriptor (the variant pack) failed with 4004 CUDNN_STATUS_INTERNAL_ERROR_DEVICE_ALLOCATION_FAILED", TB_ERR_OUT_OF_MEMORY},
      {"stream", "2000", "cudnnSetStream (the caller's stream) failed with 2000", TB_ERR_DRIVER},
      {"execute", "5000", "cudnnBackendExecute (the execution plan) failed with 5000 CUDNN_STATUS_EXECUTION_FAILED (fake_cudnn: execute failed as FAKE_CUDNN_FAIL asked) for the convolution of X", TB_ERR_DRIVER},
  };
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
    tb_cuda_dnn *dnn = NULL;
    TB_ASSERT_OK(tb_cuda_dnn_create("cuda:0", &dnn));
    setenv("FAKE_CUDNN_FAIL", cases[i].fail, 1);
    setenv("FAKE_CUDNN_FAIL_CODE", cases[i].code, 1);
    tb_cuda_conv c = shape(true, true);
    assert_int_equal(tb_cuda_dnn_conv(dnn, &c, STREAM, 0, 0, NULL), cases[i].status);
    TB_ASSERT_CONTAINS(tb_last_error(), cases[i].says);
    TB_ASSERT_CONTAINS(tb_last_error(), "(cuDNN 91900 at ");
    unsetenv("FAKE_CUDNN_FAIL");
    TB_ASSERT_OK(tb_cuda_dnn_conv(dnn, &c, STREAM, 0, 0, NULL)); /* and the next call works */
    reference(&c, true, true);
    assert_y();
    tb_cuda_dnn_destroy(dnn);
    assert_int_equal(fake()->live_descs, 0);
  }
  setenv("FAKE_CUDNN_FAIL", "create", 1);
  setenv("FAKE_CUDNN_FAIL_CODE", "1001", 1);
  tb_cuda_dnn *dnn = (tb_cuda_dnn *)1;
  assert_int_equal(tb_cuda_dnn_create("cuda:2", &dnn), TB_ERR_DRIVER);
  assert_null(dnn);
  TB_ASSERT_CONTAINS(tb_last_error(), "cuda:2: cudnnCreate of ");
  TB_ASSERT_CONTAINS(tb_last_error(), "(cuDNN 91900) failed with 1001 ");
  TB_ASSERT_CONTAINS(tb_last_error(), "convolutions can run on the backend's own kernels meanwhile");
}

static bool system_wheels(void) {
  glob_t g;
  bool found = glob("/usr{/local,}/lib/python3*/*-packages/nvidia/cudnn/lib/libcudnn.so.9", GLOB_BRACE, NULL, &g) == 0 &&
               g.gl_pathc > 0;
  globfree(&g);
  return found;
}

/* Absent, not a cuDNN, not cuDNN 9, and the wheel's folder. */
static void library_search(void **state) {
  (void)state;
  tb_cudnn_api api;
  tb_cuda_dnn *dnn = NULL;
  setenv("TB_CUDNN_LIB", "/nonexistent/libcudnn.so.9", 1);
  assert_int_equal(tb_cuda_dnn_create("cuda:0", &dnn), TB_ERR_UNAVAILABLE);
  assert_null(dnn);
  TB_ASSERT_CONTAINS(tb_last_error(), "cuda:0: TB_CUDNN_LIB=/nonexistent/libcudnn.so.9 cannot be loaded: ");
  TB_ASSERT_CONTAINS(tb_last_error(), "; point TB_CUDNN_LIB at libcudnn.so.9 of cuDNN 9");
  setenv("TB_CUDNN_LIB", tbt_fake("fake_cublaslt"), 1);
  assert_int_equal(tb_cudnn_open(&api, "cuda:0"), TB_ERR_UNAVAILABLE);
  TB_ASSERT_CONTAINS(tb_last_error(), "does not export cudnnGetVersion, so it is not a usable cuDNN 9");
  setenv("TB_CUDNN_LIB", tbt_fake("fake_cudnn"), 1);
  setenv("FAKE_CUDNN_VERSION", "80907", 1);
  assert_int_equal(tb_cudnn_open(&api, "cuda:0"), TB_ERR_UNAVAILABLE);
  TB_ASSERT_CONTAINS(tb_last_error(), "fake_cudnn.so is cuDNN 8.9 (cudnnGetVersion 80907), and the CUDA backend uses cuDNN 9");
  unsetenv("FAKE_CUDNN_VERSION");
  unsetenv("TB_CUDNN_LIB");

  tbt_python_env env;
  tbt_python_env_enter(&env, "tb_cudnn_");
  const char *root = env.root;
  static const char *const absent[] = {"libcudnn-tb-absent.so.9", NULL};
  tb_cudnn_test_loader_names(absent);
  if (!system_wheels()) {
    assert_int_equal(tb_cuda_dnn_create("cuda:0", &dnn), TB_ERR_UNAVAILABLE);
    TB_ASSERT_CONTAINS(tb_last_error(), "cuda:0: cuDNN (libcudnn, the library the CUDA backend runs convolutions with) was not "
                                        "found: tried libcudnn-tb-absent.so.9 through the loader path");
    TB_ASSERT_CONTAINS(tb_last_error(), "without it, convolutions run on the backend's own kernels");
  }
  char site[700];
  snprintf(site, sizeof site, "%s/.local/lib/python3.12/site-packages", root);
  tbt_plant_wheel(site, "nvidia/cudnn/lib/libcudnn.so.9", "fake_cudnn");
  TB_ASSERT_OK(tb_cudnn_open(&api, "cuda:0"));
  TB_ASSERT_CONTAINS(api.path, "/.local/lib/python3.12/site-packages/nvidia/cudnn/lib/libcudnn.so.9");
  assert_int_equal(api.version, 91900);
  tbt_python_env_leave(&env);
}

/* The real cuDNN 9 where the loader finds it: it finalizes the tensors, the convolution descriptor and the
 * operations, fused and not (so the attribute names, types and values are cuDNN's), and refuses a handle
 * without a GPU with a sentence. */
static void real_library(void **state) {
  (void)state;
  unsetenv("TB_CUDNN_LIB");
  tb_cudnn_api api;
  if (tb_cudnn_open(&api, "cuda:0") != TB_OK) TBT_SKIP("no real cuDNN 9 on this machine");
  if (strstr(api.path, "fake_cudnn")) TBT_SKIP("the loader path leads to the fake");
  print_message("real cuDNN %zu at %s\n", api.version, api.path);
  tb_cuda_conv c = shape(true, true);
  size_t made = 0;
  TB_ASSERT_OK(tb_cuda_dnn_test_operations("cuda:0", &c, true, &made));
  assert_int_equal(made, 12); /* X, W, Y, the virtual conv output, conv desc, conv op, bias, the virtual biased
                                 output, and a pointwise descriptor and operation each for the add and the ReLU */
  TB_ASSERT_OK(tb_cuda_dnn_test_operations("cuda:0", &c, false, &made));
  assert_int_equal(made, 5);
  /* A handle: without a GPU, a sentence */
  tb_cuda_dnn *dnn = NULL;
  tb_status st = tb_cuda_dnn_create("cuda:0", &dnn);
  if (st == TB_OK) {
    tb_cuda_dnn_destroy(dnn);
  } else {
    assert_int_equal(st, TB_ERR_DRIVER);
    TB_ASSERT_CONTAINS(tb_last_error(), "cuda:0: cudnnCreate of ");
  }
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test_setup_teardown(fused_conv, setup, teardown),
      cmocka_unit_test_setup_teardown(epilogue_variants, setup, teardown),
      cmocka_unit_test_setup_teardown(unfused_fallback, setup, teardown),
      cmocka_unit_test_setup_teardown(engine_choice, setup, teardown),
      cmocka_unit_test_setup_teardown(plans_cached, setup, teardown),
      cmocka_unit_test_setup_teardown(workspace, setup, teardown),
      cmocka_unit_test_setup_teardown(bad_convolutions, setup, teardown),
      cmocka_unit_test_setup_teardown(status_failures, setup, teardown),
      cmocka_unit_test_setup_teardown(library_search, setup, teardown),
      cmocka_unit_test_setup_teardown(real_library, setup, teardown),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
