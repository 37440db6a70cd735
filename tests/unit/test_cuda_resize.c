/* Resize and Upsample on cuda:0 (kernels/cuda_ops_resize.c) on the fake libcuda with FAKE_CUDA_EMULATE running the
 * kernel's own source: every coordinate transform and mode (nearest with each rounding rule, linear, cubic with
 * cubic_coeff_a and exclude_outside, tf_crop_and_resize's extrapolation value), ranks 1 to 4, scales or sizes,
 * Upsample-9 and Resize-10, static and symbolic shapes, an empty output, against the CPU backend; where the tap
 * tables come from: built once at prepare for a static shape with constant scales / sizes, computed on the device
 * per run otherwise (tb_cu_resize_taps, kernels/76_resize_taps.cu: its tables equal tb_resize_taps_of's bit for bit
 * on the emulator over every mode, transform and rounding rule); either way a run copies only its input from the
 * host and is captured as one graph, then replayed; out of memory at prepare and a failing taps launch. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <dlfcn.h>
#include "backend/cuda/cuda_module.h"
#include "backend/cuda/kernels/cuda_resize.h"
#include "core/error.h"
#include "model/prepared.h"
#include "model/replay.h"
#include "pass_test.h"
#include "test_engine_util.h"
#include "test_cuda_util.h"
#include "test_cuda_values.h"
#include "test_util.h"

static char cache_dir[64];

static const char *const more_vars[] = {"FAKE_CUDA_LAUNCH_FAIL_AT", "TB_CUDA_STAGING"};

static int setup(void **state) { return tcv_setup_fakes(state, cache_dir, "tb_curesize", more_vars, 2); }

static int teardown(void **state) {
  (void)state;
  tcu_cache_remove(cache_dir);
  return 0;
}

/* One Resize (or Upsample) node y = op(x, ...) with these attributes; scales[0] 0: sizes are given instead. */
typedef struct resize_case {
  int opset;                 /* 9: Upsample-9; 10: Resize-10 (x, scales); 13 and 18: roi, scales, sizes */
  const char *mode, *coord, *nearest;
  float cubic_a;             /* 0: the default */
  int exclude_outside;
  float extrapolation;       /* tf_crop_and_resize only */
  size_t rank;
  int64_t x[4];
  float scales[4];
  int64_t sizes[4];
  float roi[8];              /* tf_crop_and_resize: starts then ends */
  bool symbolic;             /* x's first dim is a symbol: the tables are built per run */
} resize_case;

static tb_model *resize_model(const resize_case *c) {
  tb_ir_model *ir = tbt_ir_model(c->opset);
  tb_graph *g = tb_graph_new(ir, NULL, "resize");
  int64_t dims[4];
  memcpy(dims, c->x, sizeof dims);
  const char *sym[4] = {NULL};
  if (c->symbolic) dims[0] = -1, sym[0] = "batch";
  tbt_input(g, "x", TB_DTYPE_F32, c->rank, dims, sym);
  const int64_t n = (int64_t)c->rank, n2 = 2 * n;
  const char *op = c->opset == 9 ? "Upsample" : "Resize";
  bool crop = c->coord && strcmp(c->coord, "tf_crop_and_resize") == 0;
  if (crop) tbt_const_f32(g, "roi", 1, &n2, c->roi);
  if (c->scales[0] != 0) tbt_const_f32(g, "scales", 1, &n, c->scales);
  else tbt_const_i64(g, "sizes", 1, &n, c->sizes);
  const char *inputs = c->opset <= 10 ? "x,scales" : c->scales[0] != 0 ? (crop ? "x,roi,scales" : "x,,scales") : (crop ? "x,roi,,sizes" : "x,,,sizes");
  int node = tbt_node(g, op, "resize", inputs, "y");
  pt_attr_string(g, node, "mode", c->mode);
  if (c->coord) pt_attr_string(g, node, "coordinate_transformation_mode", c->coord);
  if (c->nearest) pt_attr_string(g, node, "nearest_mode", c->nearest);
  if (c->cubic_a != 0) pt_attr_float(g, node, "cubic_coeff_a", c->cubic_a);
  if (c->exclude_outside) pt_attr_int(g, node, "exclude_outside", 1);
  if (crop) pt_attr_float(g, node, "extrapolation_value", c->extrapolation);
  tbt_output(g, "y");
  return tbt_model_of(ir);
}

/* The case on the CPU at O0 and on the emulated cuda:0 (capture on): the same shape, every element within 2e-6 +
 * 1e-5 |cpu| (the device sums the taps in float, the CPU in double); the node on the device; one host-to-device
 * copy in each of two runs, the input (a static case's tables came at prepare, a symbolic one's from the device). */
static void expect_case(const resize_case *c, size_t i) {
  tb_backend *cpu = NULL, *cuda = open_cuda0();
  TB_ASSERT_OK(tb_backend_create("cpu", &cpu));
  tb_model *m = resize_model(c);
  tb_prepare_options o = {.size = sizeof o, .level = TB_LEVEL_O0};
  tb_prepared *pc = NULL, *pg = NULL;
  const tb_prepare_result *rg = NULL;
  TB_ASSERT_OK(tb_model_prepare(m, cpu, &o, &pc, NULL));
  if (tb_model_prepare(m, cuda, &o, &pg, &rg) != TB_OK) fail_msg("case %zu: prepare on cuda:0: %s", i, tb_last_error());
  assert_int_equal(rg->cpu_fallback_nodes, 0);
  size_t numel = 1;
  for (size_t d = 0; d < c->rank; d++) numel *= (size_t)c->x[d];
  float *x = malloc(numel * sizeof *x + 1);
  fill(x, numel, 17 + (unsigned)i);
  tb_tensor *in = tbt_f32(cpu, c->rank, c->x, x);
  const char *names[1] = {"x"};
  for (int run = 0; run < 2; run++) {
    tb_tensor *want = NULL, *got = NULL;
    TB_ASSERT_OK(tb_prepared_run(pc, 1, names, &in, 1, NULL, &want));
    tcu_call_log_reset();
    launch_reset();
    if (tb_prepared_run(pg, 1, names, &in, 1, NULL, &got) != TB_OK) fail_msg("case %zu: run on cuda:0: %s", i, tb_last_error());
    size_t n = (size_t)tb_tensor_numel(want);
    assert_int_equal(tb_tensor_numel(got), n);
    assert_int_equal(tb_tensor_ndim(got), c->rank);
    for (size_t d = 0; d < c->rank; d++) assert_int_equal(tb_tensor_shape(got)[d], tb_tensor_shape(want)[d]);
    if (n > 0) {
      float *a = malloc(n * sizeof *a), *b = malloc(n * sizeof *b);
      TB_ASSERT_OK(tb_tensor_copy_to_host(want, a, n * sizeof *a));
      TB_ASSERT_OK(tb_tensor_copy_to_host(got, b, n * sizeof *b));
      for (size_t k = 0; k < n; k++)
        if (fabsf(a[k] - b[k]) > 2e-6f + 1e-5f * fabsf(a[k]))
          fail_msg("case %zu (%s %s) run %d element %zu: cuda:0 %.9g, cpu %.9g", i, c->mode, c->coord ? c->coord : "-", run, k,
                   (double)b[k], (double)a[k]);
      free(a);
      free(b);
      assert_int_equal(tcu_uploads(), 1); /* x: no table copied from the host */
      assert_int_equal(launches_of("tb_cu_resize_taps"), c->symbolic && run == 0 ? 1 : 0); /* a replay launches nothing */
    }
    tb_tensor_destroy(want);
    tb_tensor_destroy(got);
  }
  tb_tensor_destroy(in);
  free(x);
  tb_prepared_destroy(pc);
  tb_prepared_destroy(pg);
  tb_model_destroy(m);
  tb_backend_destroy(cuda);
  tb_backend_destroy(cpu);
  assert_int_equal(live_allocations(), 0);
}

static void values_match_the_cpu_for_every_mode(void **state) {
  (void)state;
  if (!emulate()) return;
  static const resize_case cases[] = {
      {13, "nearest", "asymmetric", "floor", 0, 0, 0, 4, {1, 2, 5, 7}, {1, 1, 2, 1.5f}, {0}, {0}, false},
      {13, "nearest", "half_pixel", "round_prefer_floor", 0, 0, 0, 4, {1, 2, 5, 7}, {1, 1, 1.5f, 0.5f}, {0}, {0}, false},
      {13, "nearest", "half_pixel", "round_prefer_ceil", 0, 0, 0, 4, {1, 2, 5, 7}, {1, 1, 0.6f, 2.5f}, {0}, {0}, false},
      {13, "nearest", "align_corners", "ceil", 0, 0, 0, 4, {1, 2, 5, 7}, {0}, {1, 2, 3, 11}, {0}, false},
      {13, "nearest", "tf_half_pixel_for_nearest", "round_prefer_floor", 0, 0, 0, 4, {1, 2, 5, 7}, {1, 1, 2, 0.7f}, {0}, {0}, false},
      {13, "nearest", "pytorch_half_pixel", "floor", 0, 0, 0, 4, {1, 2, 5, 7}, {0}, {1, 2, 1, 4}, {0}, false},
      {13, "nearest", "tf_crop_and_resize", "round_prefer_floor", 0, 0, -3.0f, 4, {1, 2, 5, 7}, {0}, {1, 2, 4, 9},
       {0, 0, -0.3f, 0.1f, 1, 1, 0.8f, 1.4f}, false},
      {13, "linear", "half_pixel", NULL, 0, 0, 0, 4, {1, 2, 5, 7}, {1, 1, 2, 2}, {0}, {0}, false},
      {13, "linear", "align_corners", NULL, 0, 0, 0, 4, {1, 2, 5, 7}, {0}, {1, 2, 7, 3}, {0}, false},
      {13, "linear", "pytorch_half_pixel", NULL, 0, 0, 0, 4, {1, 2, 5, 7}, {1, 1, 0.5f, 1.7f}, {0}, {0}, false},
      {13, "linear", "asymmetric", NULL, 0, 0, 0, 1, {9}, {2.5f}, {0}, {0}, false},
      {13, "linear", "tf_crop_and_resize", NULL, 0, 0, 7.5f, 4, {1, 2, 5, 7}, {0}, {1, 2, 6, 8}, {0, 0, 0.1f, -0.2f, 1, 1, 0.9f, 1.3f},
       false},
      {13, "cubic", "half_pixel", NULL, 0, 0, 0, 4, {1, 2, 5, 7}, {1, 1, 2, 2}, {0}, {0}, false},
      {13, "cubic", "align_corners", NULL, -0.5f, 0, 0, 4, {1, 2, 5, 7}, {0}, {1, 2, 4, 9}, {0}, false},
      {13, "cubic", "half_pixel", NULL, -0.5f, 1, 0, 4, {1, 2, 5, 7}, {1, 1, 0.6f, 1.8f}, {0}, {0}, false},
      {13, "cubic", "asymmetric", NULL, 0, 1, 0, 2, {5, 6}, {1.4f, 0.5f}, {0}, {0}, false},
      {13, "cubic", "tf_crop_and_resize", NULL, 0, 0, 2.0f, 3, {2, 4, 5}, {0}, {2, 6, 7}, {0, -0.25f, 0.2f, 1, 1.1f, 0.7f}, false},
      {13, "linear", "half_pixel", NULL, 0, 0, 0, 3, {2, 4, 5}, {0}, {2, 7, 3}, {0}, true},
      {13, "cubic", "pytorch_half_pixel", NULL, 0, 1, 0, 4, {3, 2, 5, 7}, {1, 1, 1.3f, 0.8f}, {0}, {0}, true},
      {13, "nearest", "asymmetric", "floor", 0, 0, 0, 4, {1, 2, 0, 7}, {1, 1, 2, 2}, {0}, {0}, false}, /* empty */
      {18, "linear", "align_corners", NULL, 0, 0, 0, 2, {4, 6}, {1.5f, 0.4f}, {0}, {0}, false},
      {9, "nearest", NULL, NULL, 0, 0, 0, 4, {1, 2, 5, 7}, {1, 1, 2, 3}, {0}, {0}, false},
      {10, "linear", NULL, NULL, 0, 0, 0, 4, {1, 2, 5, 7}, {1, 1, 0.5f, 2}, {0}, {0}, false},
  };
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
    print_message("resize case %zu: opset %d %s %s\n", i, cases[i].opset, cases[i].mode, cases[i].coord ? cases[i].coord : "-");
    expect_case(&cases[i], i);
  }
}

/* x [1, 3, 4, 5] -> Resize (linear, constant scales) -> Relu: the tables at prepare, each run's only host-to-device
 * copy its input, the run captured once and replayed, the values the CPU's. */
static void a_static_resize_is_captured_and_replayed(void **state) {
  (void)state;
  bool emulated = emulate();
  tb_ir_model *ir = tbt_ir_model(13);
  tb_graph *g = tb_graph_new(ir, NULL, "resize");
  const int64_t xd[4] = {1, 3, 4, 5}, four = 4;
  const float scales[4] = {1, 1, 1.5f, 2};
  tbt_input(g, "x", TB_DTYPE_F32, 4, xd, NULL);
  tbt_const_f32(g, "scales", 1, &four, scales);
  int node = tbt_node(g, "Resize", "resize", "x,,scales", "r");
  pt_attr_string(g, node, "mode", "linear");
  tbt_node(g, "Relu", "relu", "r", "y");
  tbt_output(g, "y");
  tb_model *m = tbt_model_of(ir);
  tb_backend *cpu = NULL, *cuda = open_cuda0();
  TB_ASSERT_OK(tb_backend_create("cpu", &cpu));
  tb_prepare_options o = {.size = sizeof o, .level = TB_LEVEL_O2};
  tb_prepared *pc = NULL, *pg = NULL;
  const tb_prepare_result *rg = NULL;
  TB_ASSERT_OK(tb_model_prepare(m, cpu, &o, &pc, NULL));
  TB_ASSERT_OK(tb_model_prepare(m, cuda, &o, &pg, &rg));
  assert_int_equal(rg->cpu_fallback_nodes, 0);
  assert_true(rg->graph_capture);
  float x[60];
  const char *names[1] = {"x"};
  tcu_call_log_reset();
  for (unsigned run = 0; run < 3; run++) {
    fill(x, 60, 5 + run);
    tb_tensor *in = tbt_f32(cpu, 4, xd, x), *want = NULL, *got = NULL;
    TB_ASSERT_OK(tb_prepared_run(pc, 1, names, &in, 1, NULL, &want));
    if (tb_prepared_run(pg, 1, names, &in, 1, NULL, &got) != TB_OK) fail_msg("run %u on cuda:0: %s", run, tb_last_error());
    assert_int_equal(tb_tensor_numel(got), 1 * 3 * 6 * 10);
    float a[180], b[180];
    TB_ASSERT_OK(tb_tensor_copy_to_host(want, a, sizeof a));
    TB_ASSERT_OK(tb_tensor_copy_to_host(got, b, sizeof b));
    for (size_t k = 0; emulated && k < 180; k++)
      if (fabsf(a[k] - b[k]) > 2e-6f + 1e-5f * fabsf(a[k])) fail_msg("run %u element %zu: cuda:0 %.9g, cpu %.9g", run, k, (double)b[k], (double)a[k]);
    tb_tensor_destroy(in);
    tb_tensor_destroy(want);
    tb_tensor_destroy(got);
  }
  const char *why = NULL;
  if (!tb_prepared_graph_capture(pg, &why)) fail_msg("not captured: %s", why ? why : "");
  tb_replay_counts rc = tb_replay_counts_of(pg->replay);
  assert_int_equal(rc.captures, 1);
  assert_int_equal(rc.replays, 2);
  assert_int_equal(tcu_calls("cuGraphLaunch"), 3);
  assert_int_equal(tcu_uploads(), 3); /* x of each run, nothing else from the host */
  tb_prepared_destroy(pc);
  tb_prepared_destroy(pg);
  tb_model_destroy(m);
  tb_backend_destroy(cuda);
  tb_backend_destroy(cpu);
  assert_int_equal(live_allocations(), 0);
}

/* Out of device memory while prepare uploads the tables: the status and a sentence, nothing left behind. */
static void out_of_memory_at_prepare(void **state) {
  (void)state;
  tb_ir_model *ir = tbt_ir_model(13);
  tb_graph *g = tb_graph_new(ir, NULL, "resize");
  const int64_t xd[4] = {1, 1, 4, 4}, four = 4;
  const int64_t sizes[4] = {1, 1, 4000, 4000};
  tbt_input(g, "x", TB_DTYPE_F32, 4, xd, NULL);
  tbt_const_i64(g, "sizes", 1, &four, sizes);
  int node = tbt_node(g, "Resize", "resize", "x,,,sizes", "y");
  pt_attr_string(g, node, "mode", "nearest");
  tbt_output(g, "y");
  tb_model *m = tbt_model_of(ir);
  setenv("FAKE_CUDA_MEM_CAPACITY", "65536", 1); /* the tables need 8000 x 4 x 12 bytes */
  tb_backend *cuda = open_cuda0();
  tb_prepare_options o = {.size = sizeof o, .level = TB_LEVEL_O0};
  tb_prepared *pg = NULL;
  assert_int_equal(tb_model_prepare(m, cuda, &o, &pg, NULL), TB_ERR_OUT_OF_MEMORY);
  assert_null(pg);
  print_message("%s\n", tb_last_error());
  TB_ASSERT_CONTAINS(tb_last_error(), "resize");
  unsetenv("FAKE_CUDA_MEM_CAPACITY");
  tb_model_destroy(m);
  tb_backend_destroy(cuda);
  assert_int_equal(live_allocations(), 0);
}

/* ---- The device's tables against the CPU's rule, bit for bit ------------------------------------------ */

typedef int (*emu_launch)(const char *name, unsigned grid, unsigned block, void **params);

/* Run tb_cu_resize_taps on the emulator for this node and geometry; every entry's 4 indices and 4 weights (their
 * bits) equal tb_resize_taps_of's (unused ones 0; an axis in front of the rank: index 0, weight 1). */
static void expect_tables(emu_launch run, const tb_resize_params *p, size_t rank, const int64_t *in, const int64_t *out,
                          const double *scales, const double *roi, const char *what) {
  tb_cuda_resize_axes axes;
  long long entries = tb_cuda_resize_axes_of(p, rank, in, out, scales, roi, &axes);
  long long *taps = calloc((size_t)entries * 4, sizeof *taps);
  float *weights = calloc((size_t)entries * 4, sizeof *weights);
  assert_true(taps && weights);
  void *params[4] = {&taps, &weights, &entries, &axes};
  assert_int_equal(run("tb_cu_resize_taps", 2, 32, params), 0);
  size_t pad = 4 - rank;
  for (size_t a = 0; a < 4; a++)
    for (int64_t k = 0; k < axes.out[a]; k++) {
      long long e = axes.base[a] + k;
      tb_resize_taps t = {.idx = {0}, .w = {1}, .n = 1};
      if (a >= pad) tb_resize_taps_of(p, k, scales[a - pad], in[a - pad], out[a - pad], roi[a - pad], roi[rank + a - pad], &t);
      for (int j = 0; j < 4; j++) {
        long long want_i = j < t.n ? (long long)t.idx[j] : 0;
        float want_w = j < t.n ? (float)t.w[j] : 0.0f;
        if (taps[4 * e + j] != want_i || memcmp(&weights[4 * e + j], &want_w, sizeof want_w) != 0)
          fail_msg("%s: axis %zu coordinate %lld tap %d: device %lld %.9g, cpu %lld %.9g", what, a, (long long)k, j, taps[4 * e + j],
                   (double)weights[4 * e + j], want_i, (double)want_w);
      }
    }
  free(taps);
  free(weights);
}

static void device_tables_equal_the_cpu_rule(void **state) {
  (void)state;
  const char *path = tbt_fake("cuda_emu");
  if (access(path, R_OK) != 0) skip();
  void *h = dlopen(path, RTLD_NOW);
  if (!h) fail_msg("cannot load %s: %s", path, dlerror());
  emu_launch run = (emu_launch)dlsym(h, "cuda_emu_launch");
  assert_non_null(run);
  /* axes up-, down- and same-sized, one to one and one to many, scales not of the sizes (Resize's scales input) */
  const int64_t in[4] = {5, 7, 1, 6}, out[4] = {11, 3, 4, 6}, in2[2] = {9, 2}, out2[2] = {4, 13};
  const double scales[4] = {2.2, 3.0 / 7.0, 4.0, 1.0}, scales2[2] = {0.45, 6.5};
  const double roi[8] = {0.1, -0.2, 0, 0.25, 0.9, 1.3, 1, 0.6}, roi2[4] = {-0.05, 0.3, 1.02, 0.77};
  static const tb_resize_coord coords[] = {TB_COORD_HALF_PIXEL, TB_COORD_PYTORCH_HALF_PIXEL, TB_COORD_ALIGN_CORNERS,
                                           TB_COORD_ASYMMETRIC, TB_COORD_TF_HALF_PIXEL_FOR_NEAREST, TB_COORD_TF_CROP_AND_RESIZE};
  static const tb_resize_nearest roundings[] = {TB_NEAREST_ROUND_PREFER_FLOOR, TB_NEAREST_ROUND_PREFER_CEIL, TB_NEAREST_FLOOR,
                                                TB_NEAREST_CEIL, TB_NEAREST_SIMPLE};
  int checked = 0;
  for (size_t c = 0; c < sizeof coords / sizeof coords[0]; c++) {
    tb_resize_params p = {.coord = coords[c], .extrapolation = 0};
    char what[96];
    for (size_t r = 0; r < sizeof roundings / sizeof roundings[0]; r++) {
      p.mode = TB_RESIZE_NEAREST;
      p.nearest = roundings[r];
      snprintf(what, sizeof what, "nearest coord %d rounding %d", (int)coords[c], (int)roundings[r]);
      expect_tables(run, &p, 4, in, out, scales, roi, what);
      expect_tables(run, &p, 2, in2, out2, scales2, roi2, what);
      checked += 2;
    }
    p.mode = TB_RESIZE_LINEAR;
    snprintf(what, sizeof what, "linear coord %d", (int)coords[c]);
    expect_tables(run, &p, 4, in, out, scales, roi, what);
    expect_tables(run, &p, 2, in2, out2, scales2, roi2, what);
    checked += 2;
    const double cubic_a[3] = {-0.75, -0.5, -0.6180339887};
    for (int a = 0; a < 3; a++)
      for (int ex = 0; ex < 2; ex++) {
        p.mode = TB_RESIZE_CUBIC;
        p.cubic_a = cubic_a[a];
        p.exclude_outside = ex;
        snprintf(what, sizeof what, "cubic coord %d a %g exclude_outside %d", (int)coords[c], cubic_a[a], ex);
        expect_tables(run, &p, 4, in, out, scales, roi, what);
        expect_tables(run, &p, 2, in2, out2, scales2, roi2, what);
        const int64_t one_in[1] = {1}, one_out[1] = {3};
        const double one_scale[1] = {3}, one_roi[2] = {0.2, 0.8};
        expect_tables(run, &p, 1, one_in, one_out, one_scale, one_roi, what);
        checked += 3;
      }
  }
  assert_int_equal(checked, 6 * (10 + 2 + 18));
  dlclose(h);
}

/* x [batch, 2, 4, 5] with a symbolic batch -> Resize (cubic, constant scales): no tables at prepare; each run's
 * computed on the device, so the run is captured (one graph per batch size) and replayed. */
static void a_symbolic_resize_is_captured_and_replayed(void **state) {
  (void)state;
  bool emulated = emulate();
  const resize_case c = {13, "cubic", "half_pixel", NULL, -0.5f, 1, 0, 4, {1, 2, 4, 5}, {1, 1, 1.5f, 0.6f}, {0}, {0}, true};
  tb_model *m = resize_model(&c);
  tb_backend *cpu = NULL, *cuda = open_cuda0();
  TB_ASSERT_OK(tb_backend_create("cpu", &cpu));
  tb_prepare_options o = {.size = sizeof o, .level = TB_LEVEL_O2};
  tb_prepared *pc = NULL, *pg = NULL;
  const tb_prepare_result *rg = NULL;
  TB_ASSERT_OK(tb_model_prepare(m, cpu, &o, &pc, NULL));
  TB_ASSERT_OK(tb_model_prepare(m, cuda, &o, &pg, &rg));
  assert_true(rg->graph_capture);
  const char *names[1] = {"x"};
  const int64_t batches[5] = {1, 3, 1, 3, 3};
  tcu_call_log_reset();
  for (unsigned run = 0; run < 5; run++) {
    const int64_t xd[4] = {batches[run], 2, 4, 5};
    float x[120];
    fill(x, (size_t)batches[run] * 40, 9 + run);
    tb_tensor *in = tbt_f32(cpu, 4, xd, x), *want = NULL, *got = NULL;
    TB_ASSERT_OK(tb_prepared_run(pc, 1, names, &in, 1, NULL, &want));
    if (tb_prepared_run(pg, 1, names, &in, 1, NULL, &got) != TB_OK) fail_msg("run %u on cuda:0: %s", run, tb_last_error());
    size_t n = (size_t)tb_tensor_numel(want);
    assert_int_equal(tb_tensor_numel(got), n);
    assert_int_equal(n, (size_t)batches[run] * 2 * 6 * 3);
    float a[120], b[120];
    TB_ASSERT_OK(tb_tensor_copy_to_host(want, a, n * sizeof *a));
    TB_ASSERT_OK(tb_tensor_copy_to_host(got, b, n * sizeof *b));
    for (size_t k = 0; emulated && k < n; k++)
      if (fabsf(a[k] - b[k]) > 2e-6f + 1e-5f * fabsf(a[k])) fail_msg("run %u element %zu: cuda:0 %.9g, cpu %.9g", run, k, (double)b[k], (double)a[k]);
    tb_tensor_destroy(in);
    tb_tensor_destroy(want);
    tb_tensor_destroy(got);
  }
  const char *why = NULL;
  if (!tb_prepared_graph_capture(pg, &why)) fail_msg("not captured: %s", why ? why : "");
  tb_replay_counts rc = tb_replay_counts_of(pg->replay);
  assert_int_equal(rc.captures, 2);
  assert_int_equal(rc.replays, 3);
  assert_int_equal(tcu_uploads(), 5); /* x of each run, nothing else from the host */
  tb_prepared_destroy(pc);
  tb_prepared_destroy(pg);
  tb_model_destroy(m);
  tb_backend_destroy(cuda);
  tb_backend_destroy(cpu);
  assert_int_equal(live_allocations(), 0);
}

/* The taps kernel's launch failing (a symbolic shape, capture off): the run's status and the driver's sentence naming
 * the kernel and the node; nothing left behind; the next run is good. */
static void a_failing_taps_launch_is_the_runs_error(void **state) {
  (void)state;
  setenv("TB_GRAPH_CAPTURE", "off", 1);
  const resize_case c = {13, "linear", "asymmetric", NULL, 0, 0, 0, 2, {3, 4}, {2, 0.5f}, {0}, {0}, true};
  tb_model *m = resize_model(&c);
  tb_backend *cpu = NULL, *cuda = open_cuda0();
  TB_ASSERT_OK(tb_backend_create("cpu", &cpu));
  tb_prepare_options o = {.size = sizeof o, .level = TB_LEVEL_O0};
  tb_prepared *pg = NULL;
  TB_ASSERT_OK(tb_model_prepare(m, cuda, &o, &pg, NULL));
  const char *names[1] = {"x"};
  float x[12] = {0};
  tb_tensor *in = tbt_f32(cpu, 2, c.x, x), *got = NULL;
  launch_reset();
  setenv("FAKE_CUDA_LAUNCH_FAIL_AT", "1", 1);
  setenv("FAKE_CUDA_FAIL_CODE", "700", 1);
  assert_int_equal(tb_prepared_run(pg, 1, names, &in, 1, NULL, &got), TB_ERR_DRIVER);
  assert_null(got);
  TB_ASSERT_CONTAINS(tb_last_error(), "cuLaunchKernel of tb_cu_resize_taps for node 'resize' (Resize)");
  TB_ASSERT_CONTAINS(tb_last_error(), "700 CUDA_ERROR_ILLEGAL_ADDRESS");
  unsetenv("FAKE_CUDA_LAUNCH_FAIL_AT");
  unsetenv("FAKE_CUDA_FAIL_CODE");
  launch_reset();
  TB_ASSERT_OK(tb_prepared_run(pg, 1, names, &in, 1, NULL, &got));
  assert_int_equal(tb_tensor_numel(got), 6 * 2);
  assert_int_equal(launches_of("tb_cu_resize_taps"), 1);
  assert_int_equal(launches_of("tb_cu_cnn_resize_f32"), 1);
  tb_tensor_destroy(got);
  tb_tensor_destroy(in);
  tb_prepared_destroy(pg);
  tb_model_destroy(m);
  tb_backend_destroy(cuda);
  tb_backend_destroy(cpu);
  unsetenv("TB_GRAPH_CAPTURE");
  assert_int_equal(live_allocations(), 0);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test_setup_teardown(values_match_the_cpu_for_every_mode, setup, teardown),
      cmocka_unit_test_setup_teardown(a_static_resize_is_captured_and_replayed, setup, teardown),
      cmocka_unit_test_setup_teardown(out_of_memory_at_prepare, setup, teardown),
      cmocka_unit_test_setup_teardown(device_tables_equal_the_cpu_rule, setup, teardown),
      cmocka_unit_test_setup_teardown(a_symbolic_resize_is_captured_and_replayed, setup, teardown),
      cmocka_unit_test_setup_teardown(a_failing_taps_launch_is_the_runs_error, setup, teardown),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
