/* Helpers for the XPU and TPU probes' tests: the environment for the intel fixtures and the fake Level
 * Zero, and discovery run by an unprivileged child (on a tbt_fixture_copy of a fixture). */
#ifndef TB_TEST_INTEL_TREE_H
#define TB_TEST_INTEL_TREE_H
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "test_util.h"

#define XPU_ONLY (1u << TB_BACKEND_XPU)
#define XPU_GIB 1073741824ull

static const char *const xpu_max_buses[4] = {"0000:29:00.0", "0000:3a:00.0", "0000:9a:00.0", "0000:ca:00.0"};

/* No vendor library, no fake mode, and `fixture` as the root ("" for the real machine). */
static inline void xpu_env(const char *fixture) {
  tbt_clear_env();
  tbt_no_vendor_libs();
  unsetenv("FAKE_ZE_MODE");
  unsetenv("FAKE_ZE_DEVICES");
  if (fixture[0]) tbt_use_fixture(fixture);
}

/* The fake Level Zero loader with the given device set and mode. */
static inline void xpu_use_fake(const char *devices, const char *mode) {
  setenv("TB_ZE_LIB", tbt_fake("fake_ze"), 1);
  setenv("FAKE_ZE_DEVICES", devices, 1);
  setenv("FAKE_ZE_MODE", mode, 1);
}

/* In the unprivileged child: discover *(const tb_backend_kind *)arg and write one line per device,
 * "device|usable|reason|fix\n", then "summary|<summary>\n". */
static inline int xpu_child_discover(const void *arg, FILE *out) {
  tb_backend_kind kind = *(const tb_backend_kind *)arg;
  tb_discover_options opts = {.size = sizeof opts, .backends = 1u << kind};
  tb_device_list *list = NULL;
  if (tb_discover(&opts, &list) != TB_OK) return 10;
  for (size_t i = 0; i < tb_device_list_count(list); i++) {
    const tb_device_info *d = tb_device_list_get(list, i);
    if (d->backend == kind) fprintf(out, "%s|%d|%s|%s\n", d->device, d->usable ? 1 : 0, d->reason, d->fix);
  }
  fprintf(out, "summary|%s\n", tb_device_list_report(list, kind)->summary);
  tb_device_list_destroy(list);
  return 0;
}

/* Discover `kind` as uid/gid 65534 (see tbt_run_as_nobody); returns the child's lines (the caller frees). */
static inline char *xpu_discover_as_nobody(tb_backend_kind kind) {
  return tbt_run_as_nobody(xpu_child_discover, &kind);
}

/* The line of `device` in xpu_discover_as_nobody's output, copied into out; fails the test when absent. */
static inline void xpu_child_line(const char *text, const char *device, char *out, size_t cap) {
  char key[64];
  snprintf(key, sizeof key, "%s|", device);
  if (!tbt_line(text, key, out, cap)) fail_msg("no line for %s in: %s", device, text);
}

#endif
