/* The OpenCL probe against what is real on this machine: the ICD loader (ocl-icd) with PoCL's CPU
 * device, and TB_OPENCL_LIB pointing at nothing or at the wrong library. (The loader with no ICD is
 * test_opencl_no_icd.c: ocl-icd reads its vendor list once per process.) */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "test_util.h"

#define OPENCL_ONLY (1u << TB_BACKEND_OPENCL)

static int reset_env(void **state) {
  (void)state;
  tbt_clear_env();
  unsetenv("OCL_ICD_VENDORS");
  unsetenv("TBT_FAKE_OPENCL");
  return 0;
}

/* The PoCL device: its name says "pthread" (PoCL's CPU driver), or its platform is PoCL's. */
static const tb_device_info *find_pocl(const tb_device_list *list) {
  for (int i = 0; tbt_nth(list, TB_BACKEND_OPENCL, i); i++) {
    const tb_device_info *d = tbt_nth(list, TB_BACKEND_OPENCL, i);
    const char *platform = tb_device_property(d, "platform_name");
    if (strstr(d->name, "pthread") || (platform && strstr(platform, "Portable Computing Language"))) return d;
  }
  return NULL;
}

static void pocl_cpu_device(void **state) {
  (void)state;
  tb_device_list *list = tbt_discover(OPENCL_ONLY);
  const tb_device_info *d = find_pocl(list);
  if (!d) fail_msg("no PoCL device; OpenCL report: %s", tb_device_list_report(list, TB_BACKEND_OPENCL)->summary);
  assert_int_equal(d->backend, TB_BACKEND_OPENCL);
  char expected[32];
  snprintf(expected, sizeof expected, "opencl:%d", d->index);
  assert_string_equal(d->device, expected);
  assert_int_equal(d->type, TB_DEVICE_CPU);
  assert_true(d->usable);
  assert_string_equal(d->reason, "");
  assert_true(d->compute_units >= 1);
  assert_true(d->memory_total_known);
  assert_true(d->memory_total > 64u * 1024 * 1024);
  assert_true(d->dtypes & TB_DTYPE_BIT(TB_DTYPE_F32));
  assert_true(d->dtypes & TB_DTYPE_BIT(TB_DTYPE_I32));
  assert_true(d->dtypes & TB_DTYPE_BIT(TB_DTYPE_I8));
  /* PoCL's CPU driver has cl_khr_fp64 and no cl_khr_fp16 on x86-64 */
  assert_true(d->dtypes & TB_DTYPE_BIT(TB_DTYPE_F64));
  assert_true(d->features & TB_FEATURE_BIT(TB_FEATURE_FP64));
  assert_string_equal(tb_device_property(d, "fp64"), "yes");
  assert_string_equal(d->capability_source, "OpenCL device query");
  assert_string_equal(d->memory_type, "system");
  assert_true(d->driver_version[0] != '\0');
  TB_ASSERT_CONTAINS(tb_device_property(d, "opencl_c_version"), "OpenCL C ");
  TB_ASSERT_CONTAINS(tb_device_property(d, "platform_version"), "OpenCL ");
  TB_ASSERT_CONTAINS(tb_device_property(d, "platform_vendor"), "pocl");
  unsigned long long max_alloc = strtoull(tb_device_property(d, "max_alloc_bytes"), NULL, 10);
  assert_true(max_alloc > 0 && max_alloc <= d->memory_total);
  const tb_backend_report *r = tb_device_list_report(list, TB_BACKEND_OPENCL);
  assert_true(r->available);
  assert_true(r->device_count >= 1);
  assert_true(tbt_report_has(r, "dlopen libOpenCL.so.1", "libOpenCL.so"));
  assert_true(tbt_report_has(r, "clGetPlatformIDs", "platform"));
  assert_true(tbt_report_has(r, "platform", "Portable Computing Language"));
  char *json = NULL;
  TB_ASSERT_OK(tb_device_info_to_json(d, &json));
  TB_ASSERT_CONTAINS(json, d->name);
  tb_free(json);
  tb_device_list_destroy(list);
}

/* Loading and unloading the loader and PoCL again and again gives the same answer. */
static void repeated_discovery_is_stable(void **state) {
  (void)state;
  char first[256] = "";
  for (int round = 0; round < 3; round++) {
    tb_device_list *list = tbt_discover(OPENCL_ONLY);
    const tb_device_info *d = find_pocl(list);
    assert_non_null(d);
    if (round == 0) snprintf(first, sizeof first, "%s|%llu|%d", d->name, (unsigned long long)d->memory_total, d->compute_units);
    char now[256];
    snprintf(now, sizeof now, "%s|%llu|%d", d->name, (unsigned long long)d->memory_total, d->compute_units);
    assert_string_equal(now, first);
    tb_device_list_destroy(list);
  }
}

static void lib_variable_pointing_nowhere(void **state) {
  (void)state;
  setenv("TB_OPENCL_LIB", "/nonexistent/tb-test/libOpenCL.so.1", 1);
  tb_device_list *list = tbt_discover(OPENCL_ONLY);
  assert_int_equal(tbt_count(list, TB_BACKEND_OPENCL), 0);
  const tb_backend_report *r = tb_device_list_report(list, TB_BACKEND_OPENCL);
  assert_false(r->available);
  TB_ASSERT_CONTAINS(r->summary, "TB_OPENCL_LIB=/nonexistent/tb-test/libOpenCL.so.1");
  TB_ASSERT_CONTAINS(r->summary, "could not be loaded");
  TB_ASSERT_CONTAINS(r->fix, "TB_OPENCL_LIB");
  assert_true(tbt_report_has(r, "dlopen TB_OPENCL_LIB", "/nonexistent/tb-test/libOpenCL.so.1"));
  assert_false(r->checks[0].ok);
  tb_device_list_destroy(list);
}

static void lib_variable_pointing_at_another_library(void **state) {
  (void)state;
  setenv("TB_OPENCL_LIB", "libm.so.6", 1);
  tb_device_list *list = tbt_discover(OPENCL_ONLY);
  assert_int_equal(tbt_count(list, TB_BACKEND_OPENCL), 0);
  const tb_backend_report *r = tb_device_list_report(list, TB_BACKEND_OPENCL);
  TB_ASSERT_CONTAINS(r->summary, "clGetPlatformIDs not found in ");
  TB_ASSERT_CONTAINS(r->summary, "libm.so.6");
  TB_ASSERT_CONTAINS(r->fix, "TB_OPENCL_LIB");
  assert_true(tbt_report_has(r, "dlsym", "clGetPlatformIDs not found"));
  tb_device_list_destroy(list);
}

/* Probing only OpenCL leaves every other backend unprobed. */
static void only_the_requested_backend(void **state) {
  (void)state;
  tb_device_list *list = tbt_discover(OPENCL_ONLY);
  for (size_t i = 0; i < tb_device_list_count(list); i++)
    assert_int_equal(tb_device_list_get(list, i)->backend, TB_BACKEND_OPENCL);
  assert_string_equal(tb_device_list_report(list, TB_BACKEND_VULKAN)->summary, "not probed");
  tb_device_list_destroy(list);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test_setup(pocl_cpu_device, reset_env),
      cmocka_unit_test_setup(repeated_discovery_is_stable, reset_env),
      cmocka_unit_test_setup(lib_variable_pointing_nowhere, reset_env),
      cmocka_unit_test_setup(lib_variable_pointing_at_another_library, reset_env),
      cmocka_unit_test_setup(only_the_requested_backend, reset_env),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
