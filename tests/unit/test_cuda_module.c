/* The CUDA backend's kernel module on fakes (tests/fakes/fake_cuda.c, fake_nvrtc.c) and the recorded 8x H100
 * node: the embedded kernels are compiled for the GPU's architecture (a cubin for sm_90, PTX when NVRTC
 * does not know the GPU's architecture), loaded, their functions found by name; the disk cache (kind
 * "cuda") hits, rebuilds a corrupt or refused entry with a warning, survives an unwritable folder with a
 * warning, and its key follows the architecture, the driver, NVRTC and the source; and each failure
 * (NVRTC missing or failing, the driver refusing the image, an old GPU, a bad name) is a status and a
 * sentence. */
#include <dirent.h>
#include <dlfcn.h>
#include <glob.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include "backend/backend_impl.h"
#include "backend/cuda/cuda_module.h"
#include "core/error.h"
#include "runtime/nvrtc_api.h"
#include "test_util.h"
#include "test_wheel_util.h"

static char cache_dir[64];
static tb_device_list *devices;

/* A counter the fake exports, through the test's own reference (the same copy the library loaded). */
static int fake_count(const char *fake, const char *name) {
  void *h = dlopen(tbt_fake(fake), RTLD_NOW);
  if (!h) fail_msg("cannot load %s: %s", fake, dlerror());
  int (*fn)(void) = (int (*)(void))dlsym(h, name);
  if (!fn) fail_msg("%s does not export %s", fake, name);
  return fn();
}

static void rm_rf(const char *path) {
  char cmd[600];
  snprintf(cmd, sizeof cmd, "rm -rf '%s'", path);
  assert_int_equal(system(cmd), 0);
}

static int setup(void **state) {
  tbt_setup_clean_nvidia(state);
  static const char *const vars[] = {"FAKE_CUDA_FAIL", "FAKE_CUDA_FAIL_CODE", "FAKE_CUDA_CC", "FAKE_CUDA_DRIVER_VERSION",
                                     "FAKE_NVRTC_VERSION", "FAKE_NVRTC_ARCHS", "FAKE_NVRTC_FAIL", "FAKE_NVRTC_FAIL_CODE"};
  for (size_t i = 0; i < sizeof vars / sizeof vars[0]; i++) unsetenv(vars[i]);
  tbt_use_fixture("h100x8");
  tbt_use_nvidia_fakes();
  setenv("TB_NVRTC_LIB", tbt_fake("fake_nvrtc"), 1);
  snprintf(cache_dir, sizeof cache_dir, "/tmp/tb_cucache_XXXXXX");
  assert_non_null(mkdtemp(cache_dir));
  setenv("TB_CACHE_DIR", cache_dir, 1);
  tb_cuda_module_test_source(NULL);
  tb_nvrtc_test_loader_names(NULL);
  devices = tbt_discover(1u << TB_BACKEND_CUDA);
  return 0;
}

static int teardown(void **state) {
  (void)state;
  tb_cuda_module_test_source(NULL);
  tb_nvrtc_test_loader_names(NULL);
  tb_device_list_destroy(devices);
  rm_rf(cache_dir);
  return 0;
}

static cuda_state *open_cuda(int index) {
  void *state = NULL;
  const tb_device_info *d = tbt_nth(devices, TB_BACKEND_CUDA, index);
  assert_non_null(d);
  TB_ASSERT_OK(tb_cuda_ops.open(d, &state));
  return state;
}

/* Close, and check that the module was unloaded and NVRTC left no program behind. */
static void close_cuda(cuda_state *s) {
  tb_cuda_ops.close(s);
  assert_int_equal(fake_count("fake_cuda", "fake_cuda_live_modules"), 0);
  assert_int_equal(fake_count("fake_nvrtc", "fake_nvrtc_live_programs"), 0);
  assert_int_equal(fake_count("fake_cuda", "fake_cuda_live_contexts"), 0);
}

/* The one entry of the cache folder, into path; returns how many there are. */
static int cache_entries(char *path, size_t cap) {
  char dir[160];
  snprintf(dir, sizeof dir, "%s/cuda", cache_dir);
  DIR *d = opendir(dir);
  if (!d) return 0;
  int n = 0;
  struct dirent *e;
  while ((e = readdir(d)) != NULL) {
    if (e->d_name[0] == '.') continue;
    if (path) snprintf(path, cap, "%s/%s", dir, e->d_name);
    n++;
  }
  closedir(d);
  return n;
}

static tb_cuda_module_stats stats(void) {
  tb_cuda_module_stats s;
  tb_cuda_module_stats_get(&s);
  return s;
}

/* Load the module on a fresh cuda:0 and find every embedded kernel in it. */
static tb_status load_every_kernel(void) {
  cuda_state *s = open_cuda(0);
  tb_cu_module m = NULL;
  tb_status st = tb_cuda_module_get(s, &m);
  if (st == TB_OK) {
    assert_non_null(m);
    int n = 0;
    for (const char *const *name = tb_cuda_kernel_names; *name; name++, n++) {
      tb_cu_function f = NULL;
      TB_ASSERT_OK(tb_cuda_module_function(s, *name, &f));
      assert_non_null(f);
    }
    assert_true(n >= 50); /* unary, binary (flat and broadcast), softmax, reductions (rows and columns) */
  }
  char *saved = st == TB_OK ? NULL : strdup(tb_last_error());
  close_cuda(s);
  if (saved) {
    tb_error(st, "%s", saved);
    free(saved);
  }
  return st;
}

static void compiles_then_hits_the_cache(void **state) {
  (void)state;
  tb_cuda_module_stats s0 = stats();
  int compiles0 = fake_count("fake_nvrtc", "fake_nvrtc_compiles");
  TB_ASSERT_OK(load_every_kernel());
  tb_cuda_module_stats s1 = stats();
  assert_int_equal(s1.compiles - s0.compiles, 1);
  assert_int_equal(s1.ptx_compiles - s0.ptx_compiles, 0); /* NVRTC knows sm_90: a cubin */
  assert_int_equal(s1.cache_writes - s0.cache_writes, 1);
  assert_int_equal(s1.cache_hits - s0.cache_hits, 0);
  char path[512];
  assert_int_equal(cache_entries(path, sizeof path), 1);
  TB_ASSERT_CONTAINS(path, "/cuda/sm_90-");
  struct stat sb;
  assert_int_equal(stat(path, &sb), 0);
  assert_true(sb.st_size > 32);

  TB_ASSERT_OK(load_every_kernel()); /* a fresh backend: from the cache, no compile */
  tb_cuda_module_stats s2 = stats();
  assert_int_equal(s2.compiles - s1.compiles, 0);
  assert_int_equal(s2.cache_hits - s1.cache_hits, 1);
  assert_int_equal(fake_count("fake_nvrtc", "fake_nvrtc_compiles") - compiles0, 1);

  cuda_state *s = open_cuda(0);
  tb_cu_function f = (tb_cu_function)1;
  assert_int_equal(tb_cuda_module_function(s, "tb_cu_no_such_kernel", &f), TB_ERR_NOT_FOUND);
  assert_null(f);
  TB_ASSERT_CONTAINS(tb_last_error(), "cuda:0: the CUDA kernels have no function 'tb_cu_no_such_kernel'");
  assert_int_equal(tb_cuda_module_function(s, "", &f), TB_ERR_INVALID_ARGUMENT);
  assert_int_equal(tb_cuda_module_function(s, NULL, &f), TB_ERR_INVALID_ARGUMENT);
  TB_ASSERT_CONTAINS(tb_last_error(), "a CUDA kernel needs a name");
  close_cuda(s);
}

static void rewrite(const char *path, long offset, const void *bytes, size_t n, long truncate_to) {
  FILE *f = fopen(path, "r+b");
  assert_non_null(f);
  if (bytes) {
    assert_int_equal(fseek(f, offset, SEEK_SET), 0);
    assert_int_equal(fwrite(bytes, 1, n, f), n);
  }
  fclose(f);
  if (truncate_to >= 0) assert_int_equal(truncate(path, truncate_to), 0);
}

/* Load once with warnings on; the warning text comes back (the caller frees it). */
static char *load_with_warnings(void) {
  setenv("TB_LOG", "warn", 1);
  tbt_capture_stderr_begin();
  tb_status st = load_every_kernel();
  char *err = tbt_capture_stderr_end();
  setenv("TB_LOG", "error", 1);
  TB_ASSERT_OK(st);
  return err;
}

static void corrupt_entries_are_rebuilt(void **state) {
  (void)state;
  TB_ASSERT_OK(load_every_kernel());
  char path[512];
  assert_int_equal(cache_entries(path, sizeof path), 1);
  struct stat sb;
  assert_int_equal(stat(path, &sb), 0);

  tb_cuda_module_stats s0 = stats();
  rewrite(path, 40, "\x01", 1, -1); /* a flipped byte in the image */
  char *err = load_with_warnings();
  TB_ASSERT_CONTAINS(err, "cuda:0: the cached CUDA module ");
  TB_ASSERT_CONTAINS(err, "is unusable (its checksum does not match); compiling the kernels again");
  free(err);
  tb_cuda_module_stats s1 = stats();
  assert_int_equal(s1.cache_rejected - s0.cache_rejected, 1);
  assert_int_equal(s1.compiles - s0.compiles, 1);
  assert_int_equal(s1.cache_writes - s0.cache_writes, 1); /* rewritten */

  rewrite(path, 0, NULL, 0, sb.st_size - 5); /* cut short */
  err = load_with_warnings();
  TB_ASSERT_CONTAINS(err, "is unusable (truncated or grown)");
  free(err);
  rewrite(path, 0, "NOTOURS!", 8, -1);
  err = load_with_warnings();
  TB_ASSERT_CONTAINS(err, "is unusable (not a TensorBridge CUDA module entry)");
  free(err);

  TB_ASSERT_OK(load_every_kernel()); /* rewritten each time: a hit now */
  tb_cuda_module_stats s2 = stats();
  assert_int_equal(s2.cache_rejected - s1.cache_rejected, 2);
  assert_int_equal(s2.cache_hits - s1.cache_hits, 1);

  /* An entry that passes the check but that the driver refuses: a cubin for another GPU. */
  const char image[] = "FAKE-CUBIN sm_80\nentry tb_cu_relu_f32\n";
  unsigned char entry[32 + sizeof image]; /* the fake's images end with their NUL */
  memcpy(entry, "TBCUMOD1", 8);
  uint64_t fields[3] = {1, sizeof image, 14695981039346656037ull};
  for (size_t i = 0; i < sizeof image; i++) fields[2] = (fields[2] ^ (unsigned char)image[i]) * 1099511628211ull;
  memcpy(entry + 8, fields, sizeof fields); /* little-endian host */
  memcpy(entry + 32, image, sizeof image);
  FILE *f = fopen(path, "wb");
  assert_non_null(f);
  assert_int_equal(fwrite(entry, 1, sizeof entry, f), sizeof entry);
  fclose(f);
  err = load_with_warnings();
  TB_ASSERT_CONTAINS(err, "is unusable (cuModuleLoadData refused it with 209 CUDA_ERROR_NO_BINARY_FOR_GPU)");
  free(err);
  tb_cuda_module_stats s3 = stats();
  assert_int_equal(s3.cache_rejected - s2.cache_rejected, 1);
  assert_int_equal(s3.compiles - s2.compiles, 1);
}

static void an_unwritable_cache_is_a_warning(void **state) {
  (void)state;
  char file[128];
  snprintf(file, sizeof file, "%s/a-file", cache_dir);
  FILE *f = fopen(file, "w");
  assert_non_null(f);
  fclose(f);
  char dir[160];
  snprintf(dir, sizeof dir, "%s/below", file); /* a folder inside a file: cannot be made */
  setenv("TB_CACHE_DIR", dir, 1);
  tb_cuda_module_stats s0 = stats();
  char *err = load_with_warnings();
  TB_ASSERT_CONTAINS(err, "TB_CACHE_DIR=");
  TB_ASSERT_CONTAINS(err, "names a cache folder that cannot be used");
  free(err);
  tb_cuda_module_stats s1 = stats();
  assert_int_equal(s1.compiles - s0.compiles, 1);
  assert_int_equal(s1.cache_writes - s0.cache_writes, 0);

  setenv("TB_CACHE_DIR", "off", 1); /* off: a compile every time, nothing written, no warning */
  err = load_with_warnings();
  assert_string_equal(err, "");
  free(err);
  TB_ASSERT_OK(load_every_kernel());
  tb_cuda_module_stats s2 = stats();
  assert_int_equal(s2.compiles - s1.compiles, 2);
  assert_int_equal(s2.cache_writes - s1.cache_writes, 0);
}

static void key_of_cuda0(char *buf, size_t cap) {
  cuda_state *s = open_cuda(0);
  TB_ASSERT_OK(tb_cuda_module_cache_key(s, buf, cap));
  close_cuda(s);
}

static void the_key_follows_arch_driver_nvrtc_and_source(void **state) {
  (void)state;
  char base[64], again[64], key[64];
  key_of_cuda0(base, sizeof base);
  key_of_cuda0(again, sizeof again);
  assert_string_equal(base, again);
  assert_int_equal(strncmp(base, "sm_90-", 6), 0);
  assert_int_equal(strlen(base), strlen("sm_90-0123456789abcdef.bin"));

  setenv("FAKE_CUDA_CC", "10.0", 1);
  key_of_cuda0(key, sizeof key);
  assert_int_equal(strncmp(key, "sm_100-", 7), 0);
  unsetenv("FAKE_CUDA_CC");

  setenv("FAKE_CUDA_DRIVER_VERSION", "13000", 1);
  key_of_cuda0(key, sizeof key);
  assert_int_equal(strncmp(key, "sm_90-", 6), 0);
  assert_string_not_equal(key, base);
  unsetenv("FAKE_CUDA_DRIVER_VERSION");

  setenv("FAKE_NVRTC_VERSION", "12.8", 1);
  key_of_cuda0(key, sizeof key);
  assert_string_not_equal(key, base);
  unsetenv("FAKE_NVRTC_VERSION");

  tb_cuda_module_test_source("extern \"C\" __global__ void tb_cu_test(float *y) { y[0] = 1.0f; }\n");
  key_of_cuda0(key, sizeof key);
  assert_string_not_equal(key, base);
  tb_cuda_module_test_source(NULL);
  key_of_cuda0(key, sizeof key);
  assert_string_equal(key, base);
}

static void ptx_when_nvrtc_does_not_know_the_gpu(void **state) {
  (void)state;
  setenv("FAKE_CUDA_CC", "12.1", 1); /* NVRTC lists up to 120: PTX for compute_120, JIT by the driver */
  tb_cuda_module_stats s0 = stats();
  TB_ASSERT_OK(load_every_kernel());
  tb_cuda_module_stats s1 = stats();
  assert_int_equal(s1.ptx_compiles - s0.ptx_compiles, 1);
  char path[512];
  assert_int_equal(cache_entries(path, sizeof path), 1);
  TB_ASSERT_CONTAINS(path, "/cuda/sm_121-");
  TB_ASSERT_OK(load_every_kernel()); /* the PTX entry is a hit too */
  assert_int_equal(stats().cache_hits - s1.cache_hits, 1);

  setenv("FAKE_CUDA_CC", "6.0", 1); /* older than anything this NVRTC generates code for */
  cuda_state *s = open_cuda(0);
  tb_cu_module m = NULL;
  assert_int_equal(tb_cuda_module_get(s, &m), TB_ERR_UNSUPPORTED);
  assert_null(m);
  TB_ASSERT_CONTAINS(tb_last_error(), "cuda:0: NVRTC 13.0 (");
  TB_ASSERT_CONTAINS(tb_last_error(), "generates code for sm_75 and newer, and this GPU is sm_60; point TB_NVRTC_LIB");
  close_cuda(s);
  unsetenv("FAKE_CUDA_CC");

  setenv("FAKE_CUDA_MODE", "bad_attr", 1); /* device 0 claims compute capability 1000.0 */
  s = open_cuda(0);
  assert_int_equal(tb_cuda_module_get(s, &m), TB_ERR_INVALID_ARGUMENT);
  TB_ASSERT_CONTAINS(tb_last_error(), "cuda:0: compute capability 1000.0 is not a valid one");
  close_cuda(s);
  unsetenv("FAKE_CUDA_MODE");
}

static void a_failing_compile_gives_the_log(void **state) {
  (void)state;
  tb_cuda_module_test_source("extern \"C\" __global__ void tb_cu_a(float *y) { y[0] = 1.0f; }\n\n#error the kernels are broken\n");
  cuda_state *s = open_cuda(0);
  tb_cu_module m = NULL;
  assert_int_equal(tb_cuda_module_get(s, &m), TB_ERR_DRIVER);
  const char *e = tb_last_error();
  TB_ASSERT_CONTAINS(e, "cuda:0: NVRTC 13.0 (");
  TB_ASSERT_CONTAINS(e, "could not compile the CUDA kernels (tb_kernels.cu) for sm_90 with --gpu-architecture=sm_90");
  TB_ASSERT_CONTAINS(e, "nvrtcCompileProgram returned 6 NVRTC_ERROR_COMPILATION");
  TB_ASSERT_CONTAINS(e, "the log begins: tb_kernels.cu(3): error: #error directive: the kernels are broken / #error "
                        "the kernels are broken / ^ / 1 error detected");
  assert_int_equal(cache_entries(NULL, 0), 0); /* nothing cached */
  tb_cuda_module_test_source(NULL);
  TB_ASSERT_OK(tb_cuda_module_get(s, &m)); /* the failure was not kept: the next call compiles */
  assert_non_null(m);
  close_cuda(s);

  s = open_cuda(0);
  tb_cuda_module_release(s); /* nothing loaded: nothing to do */
  setenv("FAKE_NVRTC_FAIL", "create", 1);
  setenv("TB_CACHE_DIR", "off", 1);
  assert_int_equal(tb_cuda_module_get(s, &m), TB_ERR_OUT_OF_MEMORY);
  TB_ASSERT_CONTAINS(tb_last_error(), "cuda:0: nvrtcCreateProgram of ");
  TB_ASSERT_CONTAINS(tb_last_error(), "failed with 1 NVRTC_ERROR_OUT_OF_MEMORY (NVRTC 13.0");
  setenv("FAKE_NVRTC_FAIL", "image", 1);
  assert_int_equal(tb_cuda_module_get(s, &m), TB_ERR_DRIVER);
  TB_ASSERT_CONTAINS(tb_last_error(), "nvrtcGetCUBINSize of the compiled kernels failed with 11 NVRTC_ERROR_INTERNAL_ERROR");
  setenv("FAKE_NVRTC_FAIL", "compile", 1);
  setenv("FAKE_NVRTC_FAIL_CODE", "1", 1);
  assert_int_equal(tb_cuda_module_get(s, &m), TB_ERR_OUT_OF_MEMORY);
  TB_ASSERT_CONTAINS(tb_last_error(), "returned 1 NVRTC_ERROR_OUT_OF_MEMORY; the log begins: tb_kernels.cu(1): catastrophic error: out of memory");
  unsetenv("FAKE_NVRTC_FAIL");
  unsetenv("FAKE_NVRTC_FAIL_CODE");
  close_cuda(s);
}

static void a_refused_image_is_an_error(void **state) {
  (void)state;
  setenv("FAKE_CUDA_FAIL", "module", 1);
  setenv("FAKE_CUDA_FAIL_CODE", "222", 1);
  cuda_state *s = open_cuda(1);
  tb_cu_module m = NULL;
  assert_int_equal(tb_cuda_module_get(s, &m), TB_ERR_DRIVER);
  const char *e = tb_last_error();
  TB_ASSERT_CONTAINS(e, "cuda:1: cuModuleLoadData of the kernels NVRTC 13.0 compiled for sm_90 (a cubin of ");
  TB_ASSERT_CONTAINS(e, "failed with 222 CUDA_ERROR_UNSUPPORTED_PTX_VERSION; the driver supports CUDA 12.4: update the "
                        "NVIDIA driver, which is older than NVRTC");
  assert_int_equal(cache_entries(NULL, 0), 0);
  setenv("FAKE_CUDA_FAIL_CODE", "2", 1);
  assert_int_equal(tb_cuda_module_get(s, &m), TB_ERR_OUT_OF_MEMORY);
  TB_ASSERT_CONTAINS(tb_last_error(), "failed with 2 CUDA_ERROR_OUT_OF_MEMORY");
  unsetenv("FAKE_CUDA_FAIL");
  unsetenv("FAKE_CUDA_FAIL_CODE");
  TB_ASSERT_OK(tb_cuda_module_get(s, &m));
  close_cuda(s);
}

static void *get_module(void *arg) {
  tb_cu_module m = NULL;
  tb_status st = tb_cuda_module_get(arg, &m);
  return st == TB_OK ? (void *)m : NULL;
}

static void threads_share_one_module(void **state) {
  (void)state;
  tb_cuda_module_stats s0 = stats();
  cuda_state *s = open_cuda(2);
  pthread_t t[4];
  void *got[4];
  for (int i = 0; i < 4; i++) assert_int_equal(pthread_create(&t[i], NULL, get_module, s), 0);
  for (int i = 0; i < 4; i++) assert_int_equal(pthread_join(t[i], &got[i]), 0);
  for (int i = 0; i < 4; i++) {
    assert_non_null(got[i]);
    assert_ptr_equal(got[i], got[0]);
  }
  assert_int_equal(stats().compiles - s0.compiles, 1);
  assert_int_equal(fake_count("fake_cuda", "fake_cuda_live_modules"), 1);
  close_cuda(s);
}

static const char *const absent_names[] = {"libnvrtc-tb-absent.so.13", "libnvrtc-tb-absent.so.12", NULL};

static void python_vars_clear(const char *home) {
  static const char *const vars[] = {"VIRTUAL_ENV", "CONDA_PREFIX", "PYTHONHOME", "PYTHONPATH", "PYTHONUSERBASE"};
  for (size_t i = 0; i < sizeof vars / sizeof vars[0]; i++) unsetenv(vars[i]);
  setenv("HOME", home, 1);
}

/* Whether a wheel's NVRTC is installed under /usr/local or /usr (then "not found" cannot be shown here). */
static bool system_wheels(void) {
  glob_t g;
  bool found = glob("/usr{/local,}/lib/python3*/*-packages/nvidia/{cu13,cuda_nvrtc}/lib/libnvrtc.so.1[23]",
                    GLOB_BRACE, NULL, &g) == 0 && g.gl_pathc > 0;
  globfree(&g);
  return found;
}

static void nvrtc_search_order_and_missing(void **state) {
  (void)state;
  char *saved_home = getenv("HOME") ? strdup(getenv("HOME")) : NULL;
  char root[160];
  snprintf(root, sizeof root, "%s/py", cache_dir);
  python_vars_clear(root);
  tb_nvrtc_api api;

  setenv("TB_NVRTC_LIB", "/nonexistent/libnvrtc.so.13", 1);
  assert_int_equal(tb_nvrtc_open(&api, "cuda:0"), TB_ERR_UNAVAILABLE);
  TB_ASSERT_CONTAINS(tb_last_error(), "cuda:0: TB_NVRTC_LIB=/nonexistent/libnvrtc.so.13 cannot be loaded: ");
  TB_ASSERT_CONTAINS(tb_last_error(), "set TB_NVRTC_LIB to the path of NVRTC");
  setenv("TB_NVRTC_LIB", tbt_fake("fake_cuda"), 1); /* a library, but not NVRTC */
  assert_int_equal(tb_nvrtc_open(&api, "cuda:0"), TB_ERR_UNAVAILABLE);
  TB_ASSERT_CONTAINS(tb_last_error(), "does not export nvrtcVersion, so it is not a usable NVRTC; point TB_NVRTC_LIB at");
  setenv("FAKE_NVRTC_VERSION", "garbage", 1);
  setenv("TB_NVRTC_LIB", tbt_fake("fake_nvrtc"), 1);
  assert_int_equal(tb_nvrtc_open(&api, "cuda:0"), TB_ERR_UNAVAILABLE);
  TB_ASSERT_CONTAINS(tb_last_error(), "nvrtcVersion of ");
  TB_ASSERT_CONTAINS(tb_last_error(), "returned 11 NVRTC_ERROR_INTERNAL_ERROR");
  unsetenv("FAKE_NVRTC_VERSION");
  TB_ASSERT_OK(tb_nvrtc_open(&api, "cuda:0"));
  assert_int_equal(api.major, 13);
  assert_int_equal(api.minor, 0);

  unsetenv("TB_NVRTC_LIB");
  tb_nvrtc_test_loader_names(absent_names);
  if (!system_wheels()) {
    assert_int_equal(tb_nvrtc_open(&api, "cuda:0"), TB_ERR_UNAVAILABLE);
    const char *e = tb_last_error();
    TB_ASSERT_CONTAINS(e, "cuda:0: NVRTC (libnvrtc, the CUDA runtime compiler the CUDA backend builds its kernels with) was "
                          "not found: tried libnvrtc-tb-absent.so.13, libnvrtc-tb-absent.so.12 through the loader path");
    TB_ASSERT_CONTAINS(e, "install NVRTC (the CUDA toolkit's cuda-nvrtc package, or `pip install nvidia-cuda-nvrtc`), or set "
                          "TB_NVRTC_LIB to the path of libnvrtc.so.13 or libnvrtc.so.12");
  }

  /* A wheel's file that is not a library: said in the error, and the search goes on. */
  char broken[300];
  snprintf(broken, sizeof broken, "%s/broken/lib/python3.9/site-packages/nvidia/cu13/lib", root);
  char cmd[700];
  snprintf(cmd, sizeof cmd, "mkdir -p '%s' && echo 'not ELF' > '%s/libnvrtc.so.13'", broken, broken);
  assert_int_equal(system(cmd), 0);
  snprintf(cmd, sizeof cmd, "%s/broken", root);
  setenv("VIRTUAL_ENV", cmd, 1);
  if (!system_wheels()) {
    assert_int_equal(tb_nvrtc_open(&api, "cuda:0"), TB_ERR_UNAVAILABLE);
    TB_ASSERT_CONTAINS(tb_last_error(), "in the site-packages folders /");
    TB_ASSERT_CONTAINS(tb_last_error(), "/broken/lib/python3.9/site-packages/nvidia/cu13/lib/libnvrtc.so.13 is there but did "
                                        "not load (");
  }
  unsetenv("VIRTUAL_ENV");

  /* A CUDA 12 wheel under CONDA_PREFIX, found without any loader path. */
  char conda[200], venv[200], path_entry[200], site[300];
  snprintf(conda, sizeof conda, "%s/conda", root);
  snprintf(site, sizeof site, "%s/lib/python3.10/site-packages", conda);
  tbt_plant_wheel(site, "nvidia/cuda_nvrtc/lib/libnvrtc.so.12", "fake_nvrtc");
  setenv("CONDA_PREFIX", conda, 1);
  TB_ASSERT_OK(tb_nvrtc_open(&api, "cuda:0"));
  TB_ASSERT_CONTAINS(api.path, "/conda/lib/python3.10/site-packages/nvidia/cuda_nvrtc/lib/libnvrtc.so.12");

  /* VIRTUAL_ENV comes before CONDA_PREFIX; in one folder the CUDA 13 wheel before the CUDA 12 one. */
  snprintf(venv, sizeof venv, "%s/venv", root);
  snprintf(site, sizeof site, "%s/lib/python3.12/site-packages", venv);
  tbt_plant_wheel(site, "nvidia/cuda_nvrtc/lib/libnvrtc.so.12", "fake_nvrtc");
  tbt_plant_wheel(site, "nvidia/cu13/lib/libnvrtc.so.13", "fake_nvrtc");
  setenv("VIRTUAL_ENV", venv, 1);
  TB_ASSERT_OK(tb_nvrtc_open(&api, "cuda:0"));
  TB_ASSERT_CONTAINS(api.path, "/venv/lib/python3.12/site-packages/nvidia/cu13/lib/libnvrtc.so.13");

  /* A PYTHONPATH entry is a site-packages folder itself, searched first. */
  snprintf(path_entry, sizeof path_entry, "%s/pypath", root);
  tbt_plant_wheel(path_entry, "nvidia/cu13/lib/libnvrtc.so.13", "fake_nvrtc");
  char pythonpath[300];
  snprintf(pythonpath, sizeof pythonpath, "relative/ignored:%s", path_entry);
  setenv("PYTHONPATH", pythonpath, 1);
  TB_ASSERT_OK(tb_nvrtc_open(&api, "cuda:0"));
  TB_ASSERT_CONTAINS(api.path, "/pypath/nvidia/cu13/lib/libnvrtc.so.13");

  /* ~/.local (pip install --user) when nothing else has it. */
  python_vars_clear(root);
  snprintf(site, sizeof site, "%s/.local/lib/python3.11/site-packages", root);
  tbt_plant_wheel(site, "nvidia/cu13/lib/libnvrtc.so.13", "fake_nvrtc");
  TB_ASSERT_OK(tb_nvrtc_open(&api, "cuda:0"));
  TB_ASSERT_CONTAINS(api.path, "/py/.local/lib/python3.11/site-packages/nvidia/cu13/lib/libnvrtc.so.13");

  /* The module, compiled with the NVRTC found there. */
  cuda_state *s = open_cuda(0);
  tb_cu_module m = NULL;
  TB_ASSERT_OK(tb_cuda_module_get(s, &m));
  close_cuda(s);

  tb_nvrtc_test_loader_names(NULL);
  if (saved_home) setenv("HOME", saved_home, 1);
  free(saved_home);

  /* NVRTC missing when the backend loads its kernels: the sentence reaches the caller. */
  setenv("TB_NVRTC_LIB", "/nonexistent/libnvrtc.so.12", 1);
  s = open_cuda(0);
  assert_int_equal(tb_cuda_module_get(s, &m), TB_ERR_UNAVAILABLE);
  TB_ASSERT_CONTAINS(tb_last_error(), "cuda:0: TB_NVRTC_LIB=/nonexistent/libnvrtc.so.12 cannot be loaded");
  close_cuda(s);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test_setup_teardown(compiles_then_hits_the_cache, setup, teardown),
      cmocka_unit_test_setup_teardown(corrupt_entries_are_rebuilt, setup, teardown),
      cmocka_unit_test_setup_teardown(an_unwritable_cache_is_a_warning, setup, teardown),
      cmocka_unit_test_setup_teardown(the_key_follows_arch_driver_nvrtc_and_source, setup, teardown),
      cmocka_unit_test_setup_teardown(ptx_when_nvrtc_does_not_know_the_gpu, setup, teardown),
      cmocka_unit_test_setup_teardown(a_failing_compile_gives_the_log, setup, teardown),
      cmocka_unit_test_setup_teardown(a_refused_image_is_an_error, setup, teardown),
      cmocka_unit_test_setup_teardown(threads_share_one_module, setup, teardown),
      cmocka_unit_test_setup_teardown(nvrtc_search_order_and_missing, setup, teardown),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
