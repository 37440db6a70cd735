/* What the CUDA value tests share (test_cuda_data, test_cuda_layout, test_cuda_math): the fixture (the fakes, the emulator, a
 * private module cache), graph inputs fed from host buffers, and a model run on the CPU at O0 and on the emulated
 * cuda:0 with every output compared: floats within atol + rtol |cpu| (NaN where the CPU has NaN; atol and rtol 0:
 * byte for byte), float16 and bfloat16 equal as values, everything else byte for byte. */
#ifndef TB_TEST_CUDA_VALUES_H
#define TB_TEST_CUDA_VALUES_H
#include <math.h>
#include "backend/cuda/cuda_module.h"
#include "test_cuda_util.h"
#include "test_device_control.h"
#include "test_engine_util.h"

static inline bool emulator_here(void) {
  if (access(tbt_fake("cuda_emu"), R_OK) == 0) return true;
  print_message("no %s (no C++ compiler at configure): the values are not checked\n", tbt_fake("cuda_emu"));
  return false;
}

/* The fixture of a values test: the recorded 8x H100 node on the fakes, the emulator when built, the products on
 * the own kernel (a real cuBLASLt is not loaded over the fake driver), a private module cache made in cache_dir
 * (named from prefix). */
static inline int tcv_setup(void **state, char cache_dir[64], const char *prefix) {
  tbt_setup_clean_nvidia(state);
  static const char *const vars[] = {"FAKE_CUDA_FAIL", "FAKE_CUDA_FAIL_CODE", "FAKE_CUDA_CC", "FAKE_CUDA_LAUNCH_FAIL_AT",
                                     "FAKE_CUDA_EMULATE", "FAKE_CUDA_MEM_CAPACITY", "FAKE_NVRTC_FAIL", "TB_NVRTC_LIB",
                                     "TB_CUDA_GEMM", "TB_GRAPH_CAPTURE"};
  for (size_t i = 0; i < sizeof vars / sizeof vars[0]; i++) unsetenv(vars[i]);
  tbt_use_fixture("h100x8");
  tbt_use_nvidia_fakes();
  setenv("TB_NVRTC_LIB", tbt_fake("fake_nvrtc"), 1);
  setenv("TB_CUDA_GEMM", "own", 1);
  if (access(tbt_fake("cuda_emu"), R_OK) == 0) setenv("FAKE_CUDA_EMULATE", tbt_fake("cuda_emu"), 1);
  tcu_cache_make(cache_dir, prefix);
  tb_cuda_module_test_source(NULL);
  return 0;
}

/* The cache removed; nothing left on the fake device. */
static inline int tcv_teardown(const char cache_dir[64]) {
  tcu_cache_remove(cache_dir);
  assert_int_equal(live_allocations(), 0);
  return 0;
}

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

/* Run `model` on the CPU at O0 and on the emulated cuda:0 at `level` with these inputs; compare every output;
 * returns the device's prepare result's counts (device nodes, CPU fallbacks). */
static inline void compare_runs(tb_model *model, size_t n_in, const feed *in, size_t n_out, tb_opt_level level, double atol, double rtol,
                         size_t *device_nodes, size_t *fallbacks) {
  tb_backend *cpu = NULL, *cuda = open_cuda0();
  TB_ASSERT_OK(tb_backend_create("cpu", &cpu));
  tb_prepare_options o = {.size = sizeof o, .level = TB_LEVEL_O0};
  tb_prepared *pc = NULL, *pg = NULL;
  const tb_prepare_result *rg = NULL;
  TB_ASSERT_OK(tb_model_prepare(model, cpu, &o, &pc, NULL));
  o.level = level;
  TB_ASSERT_OK(tb_model_prepare(model, cuda, &o, &pg, &rg));
  *device_nodes = rg->device_nodes;
  *fallbacks = rg->cpu_fallback_nodes;
  for (size_t i = 0; i < rg->cpu_fallback_nodes; i++) print_message("fallback: %s\n", rg->fallback_ops[i]);
  tb_tensor *inputs[16] = {NULL}, *want[64] = {NULL}, *got[64] = {NULL};
  const char *names[16];
  assert_true(n_in <= 16 && n_out <= 64);
  for (size_t i = 0; i < n_in; i++) {
    inputs[i] = make_input(cpu, &in[i]);
    names[i] = in[i].name;
  }
  TB_ASSERT_OK(tb_prepared_run(pc, n_in, names, inputs, n_out, NULL, want));
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
}

/* n values in [-4, 4) from seed. */
static inline void fill(float *x, size_t n, unsigned seed) {
  for (size_t i = 0; i < n; i++) {
    seed = seed * 1103515245u + 12345u;
    x[i] = (float)((seed >> 8) & 0xffff) / 8192.0f - 4.0f; /* [-4, 4) */
  }
}

#endif
