/* What the CUDA backend's tests share (test_cuda_exec, _graph, _gemm, _conv, _data): the fakes' exported counters
 * and launch records, a private module cache per test, the kernels' host emulator (tests/cuda_emu), and cuda:0
 * opened on the fakes. Each test sets up the fakes itself (tbt_use_nvidia_fakes) and says which it needs. */
#ifndef TB_TEST_CUDA_UTIL_H
#define TB_TEST_CUDA_UTIL_H

#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "../fakes/fake_cuda_launch.h"
#include "test_util.h"

/* A function the fake library `lib` (fake_cuda, fake_cudnn, fake_cublaslt) exports; the test fails without it. */
static inline void *tcu_symbol(const char *lib, const char *name) {
  void *h = dlopen(tbt_fake(lib), RTLD_NOW);
  if (!h) fail_msg("cannot load %s: %s", lib, dlerror());
  void *fn = dlsym(h, name);
  if (!fn) fail_msg("%s does not export %s", lib, name);
  return fn;
}
static inline void *fake_symbol(const char *name) { return tcu_symbol("fake_cuda", name); }
static inline int fake_int(const char *name) { return ((int (*)(void))fake_symbol(name))(); }
static inline int live_allocations(void) { return ((int (*)(int))fake_symbol("fake_cuda_live_allocations"))(0); }
static inline void launch_reset(void) { ((void (*)(void))fake_symbol("fake_cuda_launch_reset"))(); }
/* The fake driver's call log: how many calls of `name` since the last reset; the reset; host-to-device copies. */
static inline int tcu_calls(const char *name) { return ((int (*)(const char *))fake_symbol("fake_cuda_calls"))(name); }
static inline void tcu_call_log_reset(void) { ((void (*)(void))fake_symbol("fake_cuda_call_log_reset"))(); }
static inline int tcu_uploads(void) { return tcu_calls("cuMemcpyHtoDAsync_v2") + tcu_calls("cuMemcpyHtoD_v2"); }
/* The i-th launch fake_cuda recorded since launch_reset; the test fails when there is none. */
static inline const fake_launch *launch_at(int i) {
  const fake_launch *l = ((const fake_launch *(*)(int))fake_symbol("fake_cuda_launch_at"))(i);
  if (!l) fail_msg("no launch %d (%d recorded)", i, fake_int("fake_cuda_launch_count"));
  return l;
}
/* How many recorded launches were of `kernel`. */
static inline int launches_of(const char *kernel) {
  int n = 0, count = fake_int("fake_cuda_launch_count");
  for (int i = 0; i < count; i++)
    if (strcmp(launch_at(i)->name, kernel) == 0) n++;
  return n;
}

/* A fresh module cache for the test (TB_CACHE_DIR), named from prefix into dir (64 bytes), and its removal. */
static inline void tcu_cache_make(char dir[64], const char *prefix) {
  snprintf(dir, 64, "/tmp/%s_XXXXXX", prefix);
  assert_non_null(mkdtemp(dir));
  setenv("TB_CACHE_DIR", dir, 1);
}
static inline void tcu_cache_remove(const char dir[64]) {
  char cmd[128];
  snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
  assert_int_equal(system(cmd), 0);
}

/* Point fake_cuda at the emulator; false (the test then checks no values) where it was not built. */
static inline bool emulate(void) {
  const char *path = tbt_fake("cuda_emu");
  if (access(path, R_OK) != 0) {
    print_message("no %s (no C++ compiler at configure): the values are not checked\n", path);
    return false;
  }
  setenv("FAKE_CUDA_EMULATE", path, 1);
  return true;
}

static inline tb_backend *open_cuda0(void) {
  tb_backend *b = NULL;
  tb_status st = tb_backend_create("cuda:0", &b);
  if (st != TB_OK) fail_msg("tb_backend_create(cuda:0): %s: %s", tb_status_str(st), tb_last_error());
  return b;
}

#endif
