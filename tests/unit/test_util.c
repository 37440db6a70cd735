/* Shared test helpers (see test_util.h). */
#include "test_util.h"
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>

static const char *const tb_vars[] = {"TB_BACKEND",  "TB_FSROOT",   "TB_CPU_FEATURES", "TB_CUDA_LIB",
                                      "TB_NVML_LIB", "TB_HIP_LIB",  "TB_ROCM_SMI_LIB", "TB_ZE_LIB",
                                      "TB_OPENCL_LIB", "TB_VULKAN_LIB", "TB_TPU_LIB",  "TB_CPUID_FILE"};

void tbt_clear_env(void) {
  for (size_t i = 0; i < sizeof tb_vars / sizeof tb_vars[0]; i++) unsetenv(tb_vars[i]);
}

void tbt_use_fixture(const char *name) {
  static char path[1024];
  snprintf(path, sizeof path, "%s/%s", TB_TEST_FIXTURES, name);
  setenv("TB_FSROOT", path, 1);
}

const char *tbt_fake(const char *name) {
  static char path[8][1024];
  static int slot;
  char *p = path[slot++ % 8];
  snprintf(p, 1024, "%s/%s.so", TB_TEST_FAKES, name);
  return p;
}

void tbt_no_vendor_libs(void) {
  static const char *const libs[] = {"TB_CUDA_LIB", "TB_NVML_LIB",   "TB_HIP_LIB",    "TB_ROCM_SMI_LIB",
                                     "TB_ZE_LIB",   "TB_OPENCL_LIB", "TB_VULKAN_LIB", "TB_TPU_LIB"};
  for (size_t i = 0; i < sizeof libs / sizeof libs[0]; i++) setenv(libs[i], "/nonexistent/tb-test-no-lib.so", 1);
}

tb_device_list *tbt_discover(uint32_t mask) {
  tb_discover_options opts = {.size = sizeof opts, .backends = mask};
  tb_device_list *list = NULL;
  TB_ASSERT_OK(tb_discover(&opts, &list));
  assert_non_null(list);
  return list;
}

const tb_device_info *tbt_nth(const tb_device_list *list, tb_backend_kind kind, int n) {
  for (size_t i = 0; i < tb_device_list_count(list); i++) {
    const tb_device_info *d = tb_device_list_get(list, i);
    if (d->backend == kind && n-- == 0) return d;
  }
  return NULL;
}

size_t tbt_count(const tb_device_list *list, tb_backend_kind kind) {
  size_t n = 0;
  for (size_t i = 0; i < tb_device_list_count(list); i++)
    if (tb_device_list_get(list, i)->backend == kind) n++;
  return n;
}

int tbt_report_has(const tb_backend_report *r, const char *what_part, const char *detail_part) {
  for (size_t i = 0; i < r->check_count; i++)
    if ((!what_part || strstr(r->checks[i].what, what_part)) && (!detail_part || strstr(r->checks[i].detail, detail_part)))
      return 1;
  return 0;
}

int tbt_run_tool(const char *args, char **out) {
  char cmd[4096];
  snprintf(cmd, sizeof cmd, "%s %s 2>/dev/null", TB_TEST_TOOL, args);
  FILE *p = popen(cmd, "r");
  if (!p) return -1;
  size_t cap = 4096, len = 0;
  char *buf = malloc(cap);
  size_t r;
  while (buf && (r = fread(buf + len, 1, cap - len - 1, p)) > 0) {
    len += r;
    if (cap - len < 1024) {
      char *grown = realloc(buf, cap * 2);
      if (!grown) break;
      buf = grown;
      cap *= 2;
    }
  }
  if (buf) buf[len] = '\0';
  int status = pclose(p);
  if (out) *out = buf; else free(buf);
  return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}
