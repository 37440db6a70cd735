/* Helpers for the CPU probe tests: point the probe at a fixture tree and a recorded cpuid dump, run
 * it, and look up properties and report checks (with their ok flag). */
#ifndef TB_TEST_CPU_HELPERS_H
#define TB_TEST_CPU_HELPERS_H
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "test_util.h"

#define CPU_MASK (1u << TB_BACKEND_CPU)
#define F(name) TB_FEATURE_BIT(TB_FEATURE_##name)
#define AVX512_ALL (F(AVX512F) | F(AVX512BW) | F(AVX512VL) | F(AVX512VNNI) | F(AVX512BF16) | F(AVX512FP16))
#define AMX_ALL (F(AMX_TILE) | F(AMX_BF16) | F(AMX_INT8))
#define SPR_FEATURES (F(SSE4_2) | F(AVX2) | F(FMA) | F(F16C) | AVX512_ALL | AMX_ALL)
#define GIB (1024ull * 1024 * 1024)

/* Full path of a file under tests/fixtures (one of 4 rotating buffers). */
static inline const char *cpu_fixture_file(const char *rel) {
  static char paths[4][1024];
  static int slot;
  char *p = paths[slot++ % 4];
  snprintf(p, 1024, "%s/%s", TB_TEST_FIXTURES, rel);
  return p;
}

/* Clean environment; then TB_FSROOT = fixture (when not NULL) and TB_CPUID_FILE = fixture file. */
static inline void cpu_env(const char *fixture, const char *cpuid_rel) {
  tbt_clear_env();
  if (fixture) tbt_use_fixture(fixture);
  if (cpuid_rel) setenv("TB_CPUID_FILE", cpu_fixture_file(cpuid_rel), 1);
}

/* Run the CPU probe; exactly one device, cpu:0. */
static inline const tb_device_info *cpu_probe(tb_device_list **list) {
  *list = tbt_discover(CPU_MASK);
  assert_int_equal(tbt_count(*list, TB_BACKEND_CPU), 1);
  const tb_device_info *d = tbt_nth(*list, TB_BACKEND_CPU, 0);
  assert_non_null(d);
  assert_string_equal(d->device, "cpu:0");
  assert_int_equal(d->backend, TB_BACKEND_CPU);
  assert_int_equal(d->type, TB_DEVICE_CPU);
  assert_true(d->usable);
  return d;
}

/* A check of the CPU report whose `what` contains what_part, with this ok flag (ok < 0: any), and
 * whose detail contains detail_part (NULL: any). */
static inline int cpu_check(const tb_device_list *list, const char *what_part, int ok, const char *detail_part) {
  const tb_backend_report *r = tb_device_list_report(list, TB_BACKEND_CPU);
  for (size_t i = 0; i < r->check_count; i++) {
    const tb_check *c = &r->checks[i];
    if (strstr(c->what, what_part) && (ok < 0 || (int)c->ok == ok) && (!detail_part || strstr(c->detail, detail_part)))
      return 1;
  }
  return 0;
}

static inline void cpu_print_checks(const tb_device_list *list) {
  const tb_backend_report *r = tb_device_list_report(list, TB_BACKEND_CPU);
  for (size_t i = 0; i < r->check_count; i++)
    print_message("  check [%s] %s: %s\n", r->checks[i].ok ? "ok" : "FAIL", r->checks[i].what, r->checks[i].detail);
}

#define ASSERT_CHECK(list, what, ok, detail)                                                       \
  do {                                                                                             \
    if (!cpu_check((list), (what), (ok), (detail))) {                                              \
      cpu_print_checks(list);                                                                      \
      fail_msg("no check '%s' ok=%d with detail containing '%s'", (what), (ok), (detail) ? (detail) : ""); \
    }                                                                                              \
  } while (0)

#define ASSERT_PROP(dev, key, expected)                                                  \
  do {                                                                                   \
    const char *v_ = tb_device_property((dev), (key));                                   \
    if (!v_) fail_msg("property %s missing (expected \"%s\")", (key), (expected));        \
    assert_string_equal(v_, (expected));                                                 \
  } while (0)

#define ASSERT_PROP_CONTAINS(dev, key, part)                                   \
  do {                                                                         \
    const char *v_ = tb_device_property((dev), (key));                         \
    if (!v_) fail_msg("property %s missing (expected to contain \"%s\")", (key), (part)); \
    TB_ASSERT_CONTAINS(v_, (part));                                            \
  } while (0)

#define ASSERT_NO_PROP(dev, key)                                                       \
  do {                                                                                 \
    const char *v_ = tb_device_property((dev), (key));                                 \
    if (v_) fail_msg("property %s should be absent but is \"%s\"", (key), v_);         \
  } while (0)

/* Write text to a new temporary file; returns its path (malloc'd; unlink and free it). */
static inline char *cpu_temp_file(const char *text, size_t len) {
  char *path = strdup("/tmp/tb-test-cpu-XXXXXX");
  assert_non_null(path);
  int fd = mkstemp(path);
  assert_true(fd >= 0);
  assert_int_equal(write(fd, text, len), (ssize_t)len);
  close(fd);
  return path;
}

#endif
