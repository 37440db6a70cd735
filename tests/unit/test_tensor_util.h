/* Helpers for the tensor, DLPack and backend-memory tests: a CPU backend per test on the recorded
 * Zen 5 machine (so memory sizes are known and fixed), no vendor libraries, and deterministic random
 * bytes. */
#ifndef TB_TEST_TENSOR_UTIL_H
#define TB_TEST_TENSOR_UTIL_H
#include <stdlib.h>
#include <string.h>
#include "test_util.h"

/* MemTotal of tests/fixtures/cpu_zen5_epyc/proc/meminfo (24684096 kB); its cgroup has no limit. */
#define TBT_ZEN5_MEMORY_TOTAL (24684096ull * 1024ull)

static inline void tbt_tensor_env(void) {
  tbt_clear_env();
  tbt_use_fixture("cpu_zen5_epyc");
  tbt_no_vendor_libs();
}

/* cmocka setup/teardown: *state is a CPU backend. */
static inline int tbt_cpu_setup(void **state) {
  tbt_tensor_env();
  tb_backend *b = NULL;
  if (tb_backend_create("cpu", &b) != TB_OK) {
    fprintf(stderr, "tb_backend_create(cpu): %s\n", tb_last_error());
    return -1;
  }
  *state = b;
  return 0;
}

static inline int tbt_cpu_teardown(void **state) {
  tb_backend_destroy(*state);
  *state = NULL;
  return 0;
}

/* Deterministic bytes (xorshift64*), different for each seed. */
static inline void tbt_random_bytes(void *dst, size_t n, uint64_t seed) {
  uint64_t x = seed * 0x9E3779B97F4A7C15ull + 1;
  unsigned char *p = dst;
  for (size_t i = 0; i < n; i++) {
    x ^= x >> 12;
    x ^= x << 25;
    x ^= x >> 27;
    p[i] = (unsigned char)((x * 0x2545F4914F6CDD1Dull) >> 56);
  }
}

#endif
