/* The OpenCL program cache and build errors, on PoCL's opencl:0: the first prepare compiles the kernels
 * and stores the binary under TB_CACHE_DIR/opencl/<device>-<hash>.bin; a fresh backend loads it (a hit,
 * no compile); a corrupted entry is detected, rebuilt and rewritten; TB_CACHE_DIR=off compiles every time
 * and writes nothing; a kernel source that does not compile gives TB_ERR_DRIVER naming the device, the
 * node, clBuildProgram's code and the build log, and the next prepare with the real source works. */
#include <dirent.h>
#include <sys/stat.h>
#include <unistd.h>
#include "backend/opencl/cl_program.h"
#include "test_opencl_exec_util.h"

static char cache_dir[64];

static int setup(void **state) {
  (void)state;
  tbt_clear_env();
  unsetenv("TBT_FAKE_OPENCL");
  snprintf(cache_dir, sizeof cache_dir, "/tmp/tb_clcache_XXXXXX");
  assert_non_null(mkdtemp(cache_dir));
  setenv("TB_CACHE_DIR", cache_dir, 1);
  return 0;
}

static int teardown(void **state) {
  (void)state;
  char cmd[128];
  snprintf(cmd, sizeof cmd, "rm -rf %s", cache_dir);
  assert_int_equal(system(cmd), 0);
  return 0;
}

/* Open opencl:0, prepare and run a Relu on it (checked against the reference), close. */
static tb_status relu_on_fresh_backend(void) {
  TB_ASSERT_OK(tb_backend_create("opencl:0", &clx_dev));
  float x[9] = {-2, -1, 0, 1, 2, 3, -4, 5, -6};
  toh t;
  toh_setup(&t, "Relu", 14, 1, 0, 1, NULL, 0);
  tb_tensor *in[1] = {toh_tensor(&t, &(toh_in){TB_DTYPE_F32, 2, {3, 3}, x})}, *out[1] = {NULL};
  tb_status st = clx_run_device(&t, in, out, true, NULL);
  if (st == TB_OK) {
    float *y = clx_read(out[0]);
    for (int i = 0; i < 9; i++) assert_float_equal(y[i], x[i] > 0 ? x[i] : 0.0f, 0.0f);
    free(y);
  }
  toh_clear(in, 1);
  toh_clear(out, 1);
  toh_teardown(&t);
  tb_backend_destroy(clx_dev);
  clx_dev = NULL;
  return st;
}

static void entry_path(char *buf, size_t cap) {
  char dir[160];
  snprintf(dir, sizeof dir, "%s/opencl", cache_dir);
  DIR *d = opendir(dir);
  assert_non_null(d);
  struct dirent *e;
  int n = 0;
  while ((e = readdir(d)) != NULL) {
    if (e->d_name[0] == '.') continue;
    snprintf(buf, cap, "%s/%s", dir, e->d_name);
    n++;
  }
  closedir(d);
  assert_int_equal(n, 1);
}

static void test_cache_hit_and_corruption(void **state) {
  (void)state;
  tb_cl_program_stats s0, s1, s2, s3;
  tb_cl_program_stats_get(&s0);
  TB_ASSERT_OK(relu_on_fresh_backend()); /* compiles, stores */
  tb_cl_program_stats_get(&s1);
  assert_int_equal(s1.source_builds - s0.source_builds, 1);
  assert_int_equal(s1.cache_writes - s0.cache_writes, 1);
  assert_int_equal(s1.cache_hits - s0.cache_hits, 0);
  char path[512];
  entry_path(path, sizeof path);
  TB_ASSERT_CONTAINS(path, "/opencl/pthread");
  TB_ASSERT_CONTAINS(path, ".bin");
  struct stat st;
  assert_int_equal(stat(path, &st), 0);
  assert_true(st.st_size > 24);

  TB_ASSERT_OK(relu_on_fresh_backend()); /* a fresh backend loads the binary */
  tb_cl_program_stats_get(&s2);
  assert_int_equal(s2.cache_hits - s1.cache_hits, 1);
  assert_int_equal(s2.source_builds - s1.source_builds, 0);

  /* flip a byte in the middle of the binary: the checksum fails, the program is rebuilt and rewritten */
  FILE *f = fopen(path, "r+b");
  assert_non_null(f);
  assert_int_equal(fseek(f, st.st_size / 2, SEEK_SET), 0);
  int c = fgetc(f);
  assert_int_equal(fseek(f, st.st_size / 2, SEEK_SET), 0);
  fputc(c ^ 0x5a, f);
  fclose(f);
  TB_ASSERT_OK(relu_on_fresh_backend());
  tb_cl_program_stats_get(&s3);
  assert_int_equal(s3.cache_rejected - s2.cache_rejected, 1);
  assert_int_equal(s3.source_builds - s2.source_builds, 1);
  assert_int_equal(s3.cache_writes - s2.cache_writes, 1);
  TB_ASSERT_OK(relu_on_fresh_backend()); /* the rewritten entry is good */
  tb_cl_program_stats_get(&s1);
  assert_int_equal(s1.cache_hits - s3.cache_hits, 1);

  /* a truncated entry (header only) and a file of garbage are rejected the same way */
  f = fopen(path, "wb");
  assert_non_null(f);
  fputs("TBCLBIN1", f);
  fclose(f);
  TB_ASSERT_OK(relu_on_fresh_backend());
  tb_cl_program_stats_get(&s2);
  assert_int_equal(s2.cache_rejected - s1.cache_rejected, 1);
  assert_int_equal(s2.source_builds - s1.source_builds, 1);
}

static void test_cache_off(void **state) {
  (void)state;
  setenv("TB_CACHE_DIR", "off", 1);
  tb_cl_program_stats s0, s1;
  tb_cl_program_stats_get(&s0);
  TB_ASSERT_OK(relu_on_fresh_backend());
  TB_ASSERT_OK(relu_on_fresh_backend());
  tb_cl_program_stats_get(&s1);
  assert_int_equal(s1.source_builds - s0.source_builds, 2);
  assert_int_equal(s1.cache_hits - s0.cache_hits, 0);
  assert_int_equal(s1.cache_writes - s0.cache_writes, 0);
  setenv("TB_CACHE_DIR", cache_dir, 1);
}

static void test_cache_key(void **state) {
  (void)state;
  TB_ASSERT_OK(tb_backend_create("opencl:0", &clx_dev));
  tb_cl_device *dev = clx_dev->state;
  char k1[128], k2[128], k3[128];
  tb_cl_program_cache_key(dev, k1, sizeof k1);
  TB_ASSERT_CONTAINS(k1, "pthread");
  char saved[96];
  snprintf(saved, sizeof saved, "%s", dev->driver_version);
  snprintf(dev->driver_version, sizeof dev->driver_version, "%s", "9.9-other");
  tb_cl_program_cache_key(dev, k2, sizeof k2);
  snprintf(dev->driver_version, sizeof dev->driver_version, "%s", saved);
  tb_cl_program_test_source("kernel void k(global float *x) { x[0] = 1.0f; }\n");
  tb_cl_program_cache_key(dev, k3, sizeof k3);
  tb_cl_program_test_source(NULL);
  assert_string_not_equal(k1, k2); /* driver version is in the key */
  assert_string_not_equal(k1, k3); /* so is the source */
  tb_backend_destroy(clx_dev);
  clx_dev = NULL;
}

static void test_build_failure(void **state) {
  (void)state;
  tb_cl_program_test_source("kernel void tb_unary_f32(global float *x) { x[0] = undeclared_thing; }\n");
  tb_status st = relu_on_fresh_backend();
  tb_cl_program_test_source(NULL);
  assert_int_equal(st, TB_ERR_DRIVER);
  const char *e = tb_last_error();
  TB_ASSERT_CONTAINS(e, "opencl:0");
  TB_ASSERT_CONTAINS(e, "node 'n0' (Relu)");
  TB_ASSERT_CONTAINS(e, "clBuildProgram");
  TB_ASSERT_CONTAINS(e, "-11 CL_BUILD_PROGRAM_FAILURE");
  TB_ASSERT_CONTAINS(e, "undeclared_thing");
  TB_ASSERT_OK(relu_on_fresh_backend()); /* the real source still builds afterwards */
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_cache_hit_and_corruption),
      cmocka_unit_test(test_cache_off),
      cmocka_unit_test(test_cache_key),
      cmocka_unit_test(test_build_failure),
  };
  return cmocka_run_group_tests(tests, setup, teardown);
}
