/* What the CUDA value tests share (test_cuda_data, _layout, _math, _ew_half, _quant, _rnn, _gemm, _lowp, _conv,
 * _conv_lowp): the fixture (the fakes, the emulator, a private module cache), graph inputs fed from host buffers,
 * and a model run on the CPU at O0 and on the emulated cuda:0 with every output compared: floats within atol +
 * rtol |cpu| (NaN where the CPU has NaN; atol and rtol 0: byte for byte), float16 and bfloat16 equal as values,
 * everything else byte for byte; the reduced-precision runs (a CPU reference at a level, the CPU's fp32 and the
 * device) of one float32 input; find_kernel's answer by dtypes (tcv_find); deterministic inputs (ranged, with
 * special values, in any float dtype). */
#ifndef TB_TEST_CUDA_VALUES_H
#define TB_TEST_CUDA_VALUES_H
#include <math.h>
#include "backend/cuda/cuda_module.h"
#include "backend/cuda/kernels/cuda_ops.h"
#include "core/convert_scalar.h"
#include "test_cuda_util.h"
#include "test_device_control.h"
#include "test_engine_util.h"

static inline bool emulator_here(void) {
  if (access(tbt_fake("cuda_emu"), R_OK) == 0) return true;
  print_message("no %s (no C++ compiler at configure): the values are not checked\n", tbt_fake("cuda_emu"));
  return false;
}

static const char *const tcv_vars[] = {"FAKE_CUDA_FAIL", "FAKE_CUDA_FAIL_CODE", "FAKE_CUDA_CC", "FAKE_CUDA_LAUNCH_FAIL_AT",
                                       "FAKE_CUDA_EMULATE", "FAKE_CUDA_MEM_CAPACITY", "FAKE_NVRTC_FAIL", "TB_NVRTC_LIB",
                                       "TB_CUDA_GEMM", "TB_GRAPH_CAPTURE"};

static inline void tcv_unset(const char *const *more, size_t n_more) {
  for (size_t i = 0; i < sizeof tcv_vars / sizeof tcv_vars[0]; i++) unsetenv(tcv_vars[i]);
  for (size_t i = 0; i < n_more; i++) unsetenv(more[i]);
}

/* The fixture without the emulator (a test turns it on with emulate()): the recorded 8x H100 node on the fakes,
 * the products on the own kernel (a real cuBLASLt is not loaded over the fake driver), a private module cache made
 * in cache_dir (named from prefix); the fakes' variables and the test's own (more) unset first. */
static inline int tcv_setup_fakes(void **state, char cache_dir[64], const char *prefix, const char *const *more, size_t n_more) {
  tbt_setup_clean_nvidia(state);
  tcv_unset(more, n_more);
  tbt_use_fixture("h100x8");
  tbt_use_nvidia_fakes();
  setenv("TB_NVRTC_LIB", tbt_fake("fake_nvrtc"), 1);
  setenv("TB_CUDA_GEMM", "own", 1);
  tcu_cache_make(cache_dir, prefix);
  tb_cuda_module_test_source(NULL);
  return 0;
}

/* The fixture of a values test: tcv_setup_fakes with the emulator on when built. */
static inline int tcv_setup(void **state, char cache_dir[64], const char *prefix) {
  tcv_setup_fakes(state, cache_dir, prefix, NULL, 0);
  if (access(tbt_fake("cuda_emu"), R_OK) == 0) setenv("FAKE_CUDA_EMULATE", tbt_fake("cuda_emu"), 1);
  return 0;
}

/* tcv_setup_fakes' undone: the variables unset, the cache removed; nothing left on the fake device. */
static inline int tcv_teardown_fakes(const char cache_dir[64], const char *const *more, size_t n_more) {
  tcv_unset(more, n_more);
  tcu_cache_remove(cache_dir);
  assert_int_equal(live_allocations(), 0);
  return 0;
}

/* The cache removed; nothing left on the fake device. */
static inline int tcv_teardown(const char cache_dir[64]) { return tcv_teardown_fakes(cache_dir, NULL, 0); }

/* A graph input's value for a run (test_device_control.h's, shared with the OpenCL and Vulkan tests). */
typedef dctl_input feed;

static inline tb_tensor *make_input(tb_backend *cpu, const feed *f) { return dctl_make_input(cpu, f); }

/* Element i of a host buffer of dtype as float (f16, bf16 through tb_convert). */
static inline double as_double(const unsigned char *p, tb_dtype dt, size_t i) {
  float f = 0;
  if (dt == TB_DTYPE_F64) {
    double d;
    memcpy(&d, p + i * 8, 8);
    return d;
  }
  TB_ASSERT_OK(tb_convert(dt, p + i * tb_dtype_size(dt), TB_DTYPE_F32, &f, 1, true));
  return f;
}

/* The output of both runs: same dtype and shape; floats within atol + rtol |cpu| (NaN where the CPU has
 * NaN), float16 and bfloat16 equal as values, everything else (and every dtype with atol and rtol 0) byte for
 * byte. */
static inline void expect_same(const tb_tensor *want, const tb_tensor *got, size_t k, double atol, double rtol) {
  tb_dtype dt = tb_tensor_dtype(want);
  if (tb_tensor_dtype(got) != dt) fail_msg("output %zu: cuda:0 gives %s, the cpu %s", k, tb_dtype_name(tb_tensor_dtype(got)), tb_dtype_name(dt));
  assert_int_equal(tb_tensor_ndim(got), tb_tensor_ndim(want));
  for (size_t d = 0; d < tb_tensor_ndim(want); d++) assert_int_equal(tb_tensor_shape(got)[d], tb_tensor_shape(want)[d]);
  size_t n = (size_t)tb_tensor_numel(want), bytes = tb_tensor_nbytes(want);
  unsigned char *a = malloc(bytes + 1), *b = malloc(bytes + 1);
  TB_ASSERT_OK(tb_tensor_copy_to_host(want, a, bytes));
  TB_ASSERT_OK(tb_tensor_copy_to_host(got, b, bytes));
  bool is_float = dt == TB_DTYPE_F32 || dt == TB_DTYPE_F64 || dt == TB_DTYPE_F16 || dt == TB_DTYPE_BF16;
  for (size_t i = 0; i < n; i++) {
    if (!is_float || (atol == 0 && rtol == 0)) {
      size_t es = tb_dtype_size(dt);
      if (memcmp(a + i * es, b + i * es, es) != 0) fail_msg("output %zu (%s) element %zu differs from the cpu's", k, tb_dtype_name(dt), i);
      continue;
    }
    double x = as_double(a, dt, i), y = as_double(b, dt, i);
    bool exact = dt == TB_DTYPE_F16 || dt == TB_DTYPE_BF16;
    bool same = isnan(x) ? isnan(y) : x == y || (!exact && fabs(x - y) <= atol + rtol * fabs(x));
    if (!same) fail_msg("output %zu (%s) element %zu: cuda:0 (emulated) %.9g, cpu %.9g", k, tb_dtype_name(dt), i, y, x);
  }
  free(a);
  free(b);
}

/* What the device's prepare said: its nodes, the CPU fallbacks, all nodes after the level's passes. */
typedef struct tcv_counts {
  size_t device_nodes, fallbacks, nodes_after;
} tcv_counts;

/* Run `model` on the CPU at O0 and on the emulated cuda:0 at `level` with these inputs (the device's run after
 * launch_reset: its launches are the test's to count); compare every output; returns the device's prepare result's
 * counts. */
static inline tcv_counts tcv_compare(tb_model *model, size_t n_in, const feed *in, size_t n_out, tb_opt_level level, double atol,
                                     double rtol) {
  tb_backend *cpu = NULL, *cuda = open_cuda0();
  TB_ASSERT_OK(tb_backend_create("cpu", &cpu));
  tb_prepare_options o = {.size = sizeof o, .level = TB_LEVEL_O0};
  tb_prepared *pc = NULL, *pg = NULL;
  const tb_prepare_result *rg = NULL;
  TB_ASSERT_OK(tb_model_prepare(model, cpu, &o, &pc, NULL));
  o.level = level;
  TB_ASSERT_OK(tb_model_prepare(model, cuda, &o, &pg, &rg));
  tcv_counts counts = {rg->device_nodes, rg->cpu_fallback_nodes, rg->nodes_after};
  for (size_t i = 0; i < rg->cpu_fallback_nodes; i++) print_message("fallback: %s\n", rg->fallback_ops[i]);
  tb_tensor *inputs[16] = {NULL}, *want[64] = {NULL}, *got[64] = {NULL};
  const char *names[16];
  assert_true(n_in <= 16 && n_out <= 64);
  for (size_t i = 0; i < n_in; i++) {
    inputs[i] = make_input(cpu, &in[i]);
    names[i] = in[i].name;
  }
  TB_ASSERT_OK(tb_prepared_run(pc, n_in, names, inputs, n_out, NULL, want));
  launch_reset();
  tb_status st = tb_prepared_run(pg, n_in, names, inputs, n_out, NULL, got);
  if (st != TB_OK) fail_msg("the cuda:0 run failed: %s: %s", tb_status_str(st), tb_last_error());
  for (size_t k = 0; k < n_out; k++) {
    expect_same(want[k], got[k], k, atol, rtol);
    tb_tensor_destroy(want[k]);
    tb_tensor_destroy(got[k]);
  }
  for (size_t i = 0; i < n_in; i++) tb_tensor_destroy(inputs[i]);
  tb_prepared_destroy(pc);
  tb_prepared_destroy(pg);
  tb_backend_destroy(cuda);
  tb_backend_destroy(cpu);
  return counts;
}

/* tcv_compare with the counts returned through device_nodes and fallbacks. */
static inline void compare_runs(tb_model *model, size_t n_in, const feed *in, size_t n_out, tb_opt_level level, double atol, double rtol,
                                size_t *device_nodes, size_t *fallbacks) {
  tcv_counts c = tcv_compare(model, n_in, in, n_out, level, atol, rtol);
  *device_nodes = c.device_nodes;
  *fallbacks = c.fallbacks;
}

/* Run `model` on cuda:0 at level with these inputs and nothing compared (without the emulator the values mean
 * nothing; what the fake driver recorded, e.g. the launches, does). */
static inline void tcv_run_device(tb_model *model, size_t n_in, const feed *in, size_t n_out, tb_opt_level level) {
  tb_backend *cpu = NULL, *cuda = open_cuda0();
  TB_ASSERT_OK(tb_backend_create("cpu", &cpu));
  tb_prepare_options o = {.size = sizeof o, .level = level};
  tb_prepared *pg = NULL;
  TB_ASSERT_OK(tb_model_prepare(model, cuda, &o, &pg, NULL));
  tb_tensor *inputs[16] = {NULL}, *got[64] = {NULL};
  const char *names[16];
  assert_true(n_in <= 16 && n_out <= 64);
  for (size_t i = 0; i < n_in; i++) {
    inputs[i] = make_input(cpu, &in[i]);
    names[i] = in[i].name;
  }
  tb_status st = tb_prepared_run(pg, n_in, names, inputs, n_out, NULL, got);
  if (st != TB_OK) fail_msg("the cuda:0 run failed: %s: %s", tb_status_str(st), tb_last_error());
  for (size_t k = 0; k < n_out; k++) tb_tensor_destroy(got[k]);
  for (size_t i = 0; i < n_in; i++) tb_tensor_destroy(inputs[i]);
  tb_prepared_destroy(pg);
  tb_backend_destroy(cuda);
  tb_backend_destroy(cpu);
}

/* The kernel the CUDA backend's find_kernel picks at the reference level for op (opset) with these input dtypes
 * (TB_DTYPE_COUNT: the input omitted) and n_out outputs; NULL where it has none. */
static inline const tb_kernel *tcv_find(const char *domain, const char *op, int opset, const void *params, size_t n_in,
                                        const tb_dtype *dts, size_t n_out) {
  tb_value_type types[16];
  const tb_value_type *in[16] = {NULL};
  assert_true(n_in <= 16);
  for (size_t i = 0; i < n_in; i++) {
    if (dts[i] == TB_DTYPE_COUNT) continue;
    types[i] = (tb_value_type){.kind = TB_VALUE_TENSOR, .has_dtype = true, .dtype = dts[i]};
    in[i] = &types[i];
  }
  tb_kernel_query q = {.domain = domain, .op_type = op, .opset = opset, .params = params, .n_inputs = n_in, .in = in,
                       .n_outputs = n_out, .level = TB_KERNEL_REFERENCE, .name = "n"};
  const char *why = NULL;
  return tb_cuda_find(&q, &why);
}

/* ---- Inputs ---- */

/* n values in [lo, hi) from seed: the same sequence whatever the range (a 16-bit fraction of it). */
static inline void fill_range(float *x, size_t n, unsigned seed, float lo, float hi) {
  for (size_t i = 0; i < n; i++) {
    seed = seed * 1103515245u + 12345u;
    x[i] = (float)((seed >> 8) & 0xffff) / 65536.0f * (hi - lo) + lo;
  }
}

/* n values in [-4, 4) from seed. */
static inline void fill(float *x, size_t n, unsigned seed) { fill_range(x, n, seed, -4.0f, 4.0f); }

/* fill, then the first values (at most n_specials) replaced by specials. */
static inline void fill_with_specials(float *x, size_t n, unsigned seed, const float *specials, size_t n_specials) {
  fill(x, n, seed);
  for (size_t i = 0; i < n && i < n_specials; i++) x[i] = specials[i];
}

/* Floats as float16 or bfloat16 (dt), rounded to nearest even. */
static inline void to_halves(const float *x, size_t n, tb_dtype dt, uint16_t *h) {
  for (size_t i = 0; i < n; i++) h[i] = dt == TB_DTYPE_F16 ? tb_f32_to_f16_ref(x[i]) : tb_f32_to_bf16_ref(x[i]);
}

/* Floats as dt: the halves as to_halves, float64 widened; out holds n elements of dt. */
static inline void to_dtype(const float *x, size_t n, tb_dtype dt, void *out) {
  if (dt != TB_DTYPE_F64) {
    to_halves(x, n, dt, out);
    return;
  }
  for (size_t i = 0; i < n; i++) ((double *)out)[i] = x[i];
}

/* A node of op that is also a graph output. */
static inline void output(tb_graph *g, const char *op, const char *name, const char *in, const char *out) {
  tbt_node(g, op, name, in, out);
  tbt_output(g, out);
}

/* ---- Reduced precision: one float32 input "x" run on the CPU at a reference level, on the CPU at O0 (fp32) and on
 * cuda:0 at a level and precision. ---- */

typedef struct tcv_lowp {
  tb_backend *cpu, *cuda;
  tb_prepared *pref, *p32, *pg;
  const tb_prepare_result *rg; /* the device's */
  tb_tensor *in, *want, *want32, *got;
} tcv_lowp;

/* Prepare model on cuda:0 at level / precision and on the CPU at ref_level and O0; run the three on one input of
 * dims in [-2, 2) (seed 5), the device's run after launch_reset (its launches are the test's to count). */
static inline void tcv_lowp_run(tcv_lowp *t, tb_model *model, size_t ndim, const int64_t *dims, tb_opt_level level,
                                tb_precision precision, tb_opt_level ref_level) {
  *t = (tcv_lowp){.cuda = open_cuda0()};
  TB_ASSERT_OK(tb_backend_create("cpu", &t->cpu));
  tb_prepare_options o = {.size = sizeof o, .level = ref_level};
  TB_ASSERT_OK(tb_model_prepare(model, t->cpu, &o, &t->pref, NULL));
  o.level = TB_LEVEL_O0;
  TB_ASSERT_OK(tb_model_prepare(model, t->cpu, &o, &t->p32, NULL));
  o.level = level;
  o.precision = precision;
  tb_status st = tb_model_prepare(model, t->cuda, &o, &t->pg, &t->rg);
  if (st != TB_OK) fail_msg("prepare on cuda:0: %s: %s", tb_status_str(st), tb_last_error());
  size_t n = 1;
  for (size_t d = 0; d < ndim; d++) n *= (size_t)dims[d];
  float *x = malloc(n * sizeof *x + 1);
  fill_range(x, n, 5, -2.0f, 2.0f);
  t->in = tbt_f32(t->cpu, ndim, dims, x);
  free(x);
  const char *names[1] = {"x"};
  TB_ASSERT_OK(tb_prepared_run(t->pref, 1, names, &t->in, 1, NULL, &t->want));
  TB_ASSERT_OK(tb_prepared_run(t->p32, 1, names, &t->in, 1, NULL, &t->want32));
  launch_reset();
  st = tb_prepared_run(t->pg, 1, names, &t->in, 1, NULL, &t->got);
  if (st != TB_OK) fail_msg("run on cuda:0: %s: %s", tb_status_str(st), tb_last_error());
}

/* The device's output element by element within atol + rtol |ref| of the CPU reference's (rtol 0: not checked),
 * its first out_cap values copied to out (when given); returns the largest |cuda - cpu fp32|, which is > 0 where
 * the reduced precision is real. */
static inline double tcv_lowp_check(const tcv_lowp *t, float rtol, float atol, float *out, size_t out_cap) {
  size_t count = (size_t)tb_tensor_numel(t->want);
  assert_int_equal(tb_tensor_numel(t->got), count);
  float *a = malloc(count * sizeof *a + 1), *b = malloc(count * sizeof *b + 1), *c = malloc(count * sizeof *c + 1);
  TB_ASSERT_OK(tb_tensor_copy_to_host(t->want, a, count * sizeof *a));
  TB_ASSERT_OK(tb_tensor_copy_to_host(t->got, b, count * sizeof *b));
  TB_ASSERT_OK(tb_tensor_copy_to_host(t->want32, c, count * sizeof *c));
  if (out) memcpy(out, b, (count < out_cap ? count : out_cap) * sizeof *out);
  double max_error = 0;
  for (size_t i = 0; i < count; i++) {
    if (rtol > 0 && !(fabsf(a[i] - b[i]) <= atol + rtol * fabsf(a[i])))
      fail_msg("element %zu: cuda:0 %.9g, cpu %.9g (atol %g, rtol %g)", i, (double)b[i], (double)a[i], (double)atol, (double)rtol);
    if (fabs((double)b[i] - c[i]) > max_error) max_error = fabs((double)b[i] - c[i]);
  }
  free(a);
  free(b);
  free(c);
  return max_error;
}

/* Everything tcv_lowp_run made destroyed; nothing left on the fake device. */
static inline void tcv_lowp_free(tcv_lowp *t) {
  tb_tensor_destroy(t->want);
  tb_tensor_destroy(t->want32);
  tb_tensor_destroy(t->got);
  tb_tensor_destroy(t->in);
  tb_prepared_destroy(t->pref);
  tb_prepared_destroy(t->p32);
  tb_prepared_destroy(t->pg);
  tb_backend_destroy(t->cuda);
  tb_backend_destroy(t->cpu);
  assert_int_equal(live_allocations(), 0);
}

#endif
