/* Environment variables whose values cannot be used are never ignored without a word: TB_LOG, TB_CPU_FEATURES,
 * TB_CPUID_FILE, TB_FSROOT, TB_CACHE_DIR (relative, a file, a folder that cannot be made) and TB_CONV_WINOGRAD
 * on a CPU without AVX-512, TB_INTER_OP not a mode, TB_CUDA_FUSE_CASTS not on or off, each give one warning on stderr per process and value (core/env.c's
 * tb_env_warn), naming the variable, the value and the valid values; then the default applies. */
#include <sys/stat.h>
#include "backend/cuda/kernels/cuda_handoff.h"
#include "core/convert_features.h"
#include "core/disk_cache.h"
#include "core/env.h"
#include "core/fs.h"
#include "model/exec_interop.h"
#include "test_engine_util.h"
#include "test_util.h"

static char dir[64];

static int setup(void **state) {
  (void)state;
  tbt_clear_env();
  setenv("TB_LOG", "warn", 1);
  strcpy(dir, "/tmp/tb_envwarn_XXXXXX");
  assert_non_null(mkdtemp(dir));
  return 0;
}

static int teardown(void **state) {
  (void)state;
  tbt_clear_env();
  unsetenv("TB_CACHE_DIR");
  unsetenv("TB_CONV_WINOGRAD");
  setenv("TB_LOG", "error", 1);
  char cmd[128];
  snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
  return system(cmd) == 0 ? 0 : -1;
}

static size_t count(const char *text, const char *part) {
  size_t n = 0;
  for (const char *p = text; (p = strstr(p, part)) != NULL; p += strlen(part)) n++;
  return n;
}

static void log_level_unknown(void **state) {
  (void)state;
  setenv("TB_LOG", "verbose", 1);
  tbt_capture_stderr_begin();
  tb_log(TB_LOG_WARN, "first");
  tb_log(TB_LOG_INFO, "not shown: the default level is warn");
  tb_log(TB_LOG_WARN, "second");
  char *log = tbt_capture_stderr_end();
  assert_string_equal(log, "tensorbridge: warning: TB_LOG=verbose is not a log level; use off, error, warn, info or debug "
                           "(warn applies)\n"
                           "tensorbridge: warning: first\n"
                           "tensorbridge: warning: second\n");
  free(log);
}

static void cpu_features_garbage(void **state) {
  (void)state;
  uint64_t hardware = tb_convert_hardware_features();
  setenv("TB_CPU_FEATURES", "garbage", 1);
  tbt_capture_stderr_begin();
  assert_true(tb_convert_features() == hardware); /* the default: nothing masked */
  assert_true(tb_convert_features() == hardware);
  char *log = tbt_capture_stderr_end();
  TB_ASSERT_CONTAINS(log, "tensorbridge: warning: TB_CPU_FEATURES=garbage: 'garbage' skipped: each item needs a sign, "
                          "'-garbage' to remove or '+garbage' to keep; valid names: ");
  TB_ASSERT_CONTAINS(log, "avx512f");
  TB_ASSERT_CONTAINS(log, "; the other items apply\n");
  assert_int_equal(count(log, "tensorbridge: warning:"), 1);
  free(log);
}

static void cpuid_file(void **state) {
  (void)state;
  setenv("TB_CPUID_FILE", "/nonexistent/tb-cpuid.txt", 1);
  tbt_capture_stderr_begin();
  tb_device_list_destroy(tbt_discover(1u << TB_BACKEND_CPU));
  tb_device_list_destroy(tbt_discover(1u << TB_BACKEND_CPU));
  char *log = tbt_capture_stderr_end();
  assert_int_equal(count(log, "TB_CPUID_FILE"), 1);
  TB_ASSERT_CONTAINS(log, "tensorbridge: warning: TB_CPUID_FILE=/nonexistent/tb-cpuid.txt cannot be used (cannot open it: No "
                          "such file or directory); it must name a cpuid dump (docs/cpu.md): the cpuid instruction is used "
                          "instead\n");
  free(log);
  char path[128];
  snprintf(path, sizeof path, "%s/cpuid.txt", dir);
  FILE *f = fopen(path, "w");
  assert_non_null(f);
  fputs("garbage\n", f);
  fclose(f);
  setenv("TB_CPUID_FILE", path, 1);
  tbt_capture_stderr_begin();
  tb_device_list_destroy(tbt_discover(1u << TB_BACKEND_CPU));
  log = tbt_capture_stderr_end();
  char want[256];
  snprintf(want, sizeof want, "tensorbridge: warning: TB_CPUID_FILE=%s cannot be used (line 1: ", path);
  TB_ASSERT_CONTAINS(log, want);
  TB_ASSERT_CONTAINS(log, "it must name a cpuid dump (docs/cpu.md): the cpuid instruction is used instead\n");
  free(log);
}

static void fsroot(void **state) {
  (void)state;
  setenv("TB_FSROOT", "/nonexistent/tb-root", 1);
  tbt_capture_stderr_begin();
  char buf[64];
  assert_false(tb_fs_read("/proc/meminfo", buf, sizeof buf)); /* nothing there, and no hang */
  assert_false(tb_fs_read("/proc/meminfo", buf, sizeof buf));
  char *log = tbt_capture_stderr_end();
  assert_string_equal(log, "tensorbridge: warning: TB_FSROOT=/nonexistent/tb-root cannot be used: No such file or directory; "
                           "set it to a folder that holds a recorded sys/proc/dev tree, or unset it for the real system "
                           "(every read under it finds nothing)\n");
  free(log);
  char file[128];
  snprintf(file, sizeof file, "%s/root-file", dir);
  FILE *f = fopen(file, "w");
  assert_non_null(f);
  fclose(f);
  setenv("TB_FSROOT", file, 1);
  tbt_capture_stderr_begin();
  assert_false(tb_fs_read("/proc/meminfo", buf, sizeof buf));
  log = tbt_capture_stderr_end();
  char want[400];
  snprintf(want, sizeof want, "tensorbridge: warning: TB_FSROOT=%s is a regular file, not a folder; set it to a folder that "
           "holds a recorded sys/proc/dev tree, or unset it for the real system (every read under it finds nothing)\n", file);
  assert_string_equal(log, want);
  free(log);
}

static void cache_dir(void **state) {
  (void)state;
  char buf[256], file[128], want[512];
  setenv("TB_CACHE_DIR", "relative/cache", 1);
  tbt_capture_stderr_begin();
  assert_int_equal(tb_disk_cache_dir("opencl", buf, sizeof buf), TB_ERR_INVALID_ARGUMENT);
  assert_int_equal(tb_disk_cache_dir("vulkan", buf, sizeof buf), TB_ERR_INVALID_ARGUMENT);
  char *log = tbt_capture_stderr_end();
  assert_string_equal(log, "tensorbridge: warning: TB_CACHE_DIR=relative/cache is not an absolute path, so the on-disk cache "
                           "of compiled device code is off; set it to an absolute folder, or to 'off'\n");
  free(log);

  snprintf(file, sizeof file, "%s/a-file", dir);
  FILE *f = fopen(file, "w");
  assert_non_null(f);
  fclose(f);
  setenv("TB_CACHE_DIR", file, 1);
  tbt_capture_stderr_begin();
  assert_int_equal(tb_disk_cache_write("opencl", "k", "x", 1), TB_ERR_IO);
  assert_int_equal(tb_disk_cache_write("vulkan", "k", "x", 1), TB_ERR_IO);
  log = tbt_capture_stderr_end();
  snprintf(want, sizeof want, "tensorbridge: warning: TB_CACHE_DIR=%s names a cache folder that cannot be used (disk cache: "
           "cannot create folder %s/opencl: Not a directory), so compiled device code is not cached; set TB_CACHE_DIR to "
           "an absolute folder you can write, or to 'off'\n", file, file);
  assert_string_equal(log, want);
  free(log);

  setenv("TB_CACHE_DIR", "/proc/self/tb-cache", 1); /* no one can make folders there, root included */
  tbt_capture_stderr_begin();
  assert_int_equal(tb_disk_cache_write("opencl", "k", "x", 1), TB_ERR_IO);
  log = tbt_capture_stderr_end();
  TB_ASSERT_CONTAINS(log, "tensorbridge: warning: TB_CACHE_DIR=/proc/self/tb-cache names a cache folder that cannot be used "
                          "(disk cache: cannot create folder /proc/self/tb-cache: ");
  assert_int_equal(count(log, "warning"), 1);
  free(log);
}

/* A 3x3 convolution at O2 with AVX-512 masked off: no Winograd kernel exists on that path, and the value
 * is still read and warned about. */
static void conv_winograd_without_avx512(void **state) {
  (void)state;
  setenv("TB_CPU_FEATURES", "-avx512f", 1);
  setenv("TB_CONV_WINOGRAD", "maybe", 1);
  tb_ir_model *m = tbt_ir_model(13);
  tb_graph *g = tb_graph_new(m, NULL, "conv");
  int64_t x_dims[4] = {1, 4, 16, 16}, w_dims[4] = {8, 4, 3, 3};
  tbt_input(g, "x", TB_DTYPE_F32, 4, x_dims, NULL);
  float w[8 * 4 * 9];
  for (size_t i = 0; i < sizeof w / sizeof w[0]; i++) w[i] = (float)(i % 7) - 3.0f;
  tbt_const_f32(g, "W", 4, w_dims, w);
  tbt_node(g, "Conv", "conv", "x,W", "y");
  tbt_output(g, "y");
  tb_model *model = tbt_model_of(m);
  tb_backend *cpu;
  TB_ASSERT_OK(tb_backend_create("cpu", &cpu));
  tb_prepare_options opts = {.size = sizeof opts, .level = TB_LEVEL_O2};
  tb_prepared *p = NULL;
  float x[4 * 16 * 16];
  for (size_t i = 0; i < sizeof x / sizeof x[0]; i++) x[i] = (float)(i % 5) * 0.5f;
  tb_tensor *in = tbt_f32(cpu, 4, x_dims, x), *out = NULL;
  const char *names[1] = {"x"};
  tbt_capture_stderr_begin();
  tb_status st = tb_model_prepare(model, cpu, &opts, &p, NULL);
  if (st == TB_OK) st = tb_prepared_run(p, 1, names, &in, 1, NULL, &out);
  char *log = tbt_capture_stderr_end();
  TB_ASSERT_OK(st);
  assert_string_equal(log, "tensorbridge: warning: CPU: TB_CONV_WINOGRAD='maybe' is not one of on, 1, off, 0; Winograd runs "
                           "where it fits\n");
  free(log);
  /* the default applied: the convolution ran; one output value checked against the sum it is */
  float y0 = 0, got[8 * 14 * 14];
  for (int c = 0; c < 4; c++)
    for (int i = 0; i < 3; i++)
      for (int j = 0; j < 3; j++) y0 += x[(c * 16 + i) * 16 + j] * w[(0 * 4 + c) * 9 + i * 3 + j];
  TB_ASSERT_OK(tb_tensor_copy_to_host(out, got, sizeof got));
  assert_float_equal(got[0], y0, 1e-4);
  tb_tensor_destroy(out);
  tb_tensor_destroy(in);
  tb_prepared_destroy(p);
  tb_model_destroy(model);
  tb_backend_destroy(cpu);
}

static void inter_op_unknown(void **state) {
  (void)state;
  setenv("TB_INTER_OP", "sometimes", 1);
  tbt_capture_stderr_begin();
  assert_int_equal(tb_inter_op_from_env(), TB_INTER_OP_AUTO); /* the default applies */
  assert_int_equal(tb_inter_op_from_env(), TB_INTER_OP_AUTO);
  char *log = tbt_capture_stderr_end();
  unsetenv("TB_INTER_OP");
  assert_string_equal(log, "tensorbridge: warning: CPU: TB_INTER_OP='sometimes' is not one of auto, on, 1, off, 0; using auto\n");
  free(log);
}

static void cuda_fuse_casts_unknown(void **state) {
  (void)state;
  setenv("TB_CUDA_FUSE_CASTS", "maybe", 1);
  tbt_capture_stderr_begin();
  assert_true(tb_cuda_fuse_casts_wanted()); /* the default (on) applies */
  assert_true(tb_cuda_fuse_casts_wanted());
  char *log = tbt_capture_stderr_end();
  unsetenv("TB_CUDA_FUSE_CASTS");
  assert_string_equal(log, "tensorbridge: warning: TB_CUDA_FUSE_CASTS=maybe is not on or off; conversions are fused into "
                           "their producers where they can be (on)\n");
  free(log);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test_setup_teardown(log_level_unknown, setup, teardown),
      cmocka_unit_test_setup_teardown(cpu_features_garbage, setup, teardown),
      cmocka_unit_test_setup_teardown(cpuid_file, setup, teardown),
      cmocka_unit_test_setup_teardown(fsroot, setup, teardown),
      cmocka_unit_test_setup_teardown(cache_dir, setup, teardown),
      cmocka_unit_test_setup_teardown(conv_winograd_without_avx512, setup, teardown),
      cmocka_unit_test_setup_teardown(inter_op_unknown, setup, teardown),
      cmocka_unit_test_setup_teardown(cuda_fuse_casts_unknown, setup, teardown),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
