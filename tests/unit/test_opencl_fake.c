/* The OpenCL probe against tests/fakes/fake_opencl.c: every device type and PCI-location extension,
 * and the driver misbehaving on purpose (no ICD, errors with their codes, a name without terminator,
 * a huge reply, counts that change between calls). */
#include <stdlib.h>
#include <string.h>
#include "test_util.h"

#define OPENCL_ONLY (1u << TB_BACKEND_OPENCL)
#define GIB (1024ull * 1024ull * 1024ull)

static int reset_env(void **state) {
  (void)state;
  tbt_clear_env();
  setenv("TB_OPENCL_LIB", tbt_fake("fake_opencl"), 1);
  unsetenv("TBT_FAKE_OPENCL");
  return 0;
}

static tb_device_list *discover_mode(const char *mode) {
  if (mode) setenv("TBT_FAKE_OPENCL", mode, 1);
  tb_device_list *list = tbt_discover(OPENCL_ONLY);
  unsetenv("TBT_FAKE_OPENCL");
  return list;
}

static bool has_dtype(const tb_device_info *d, tb_dtype t) { return (d->dtypes & TB_DTYPE_BIT(t)) != 0; }
static bool has_feature(const tb_device_info *d, tb_feature f) { return (d->features & TB_FEATURE_BIT(f)) != 0; }

static void every_device_of_every_platform(void **state) {
  (void)state;
  tb_device_list *list = discover_mode(NULL);
  assert_int_equal(tbt_count(list, TB_BACKEND_OPENCL), 5);
  const tb_backend_report *r = tb_device_list_report(list, TB_BACKEND_OPENCL);
  assert_true(r->available);
  assert_string_equal(r->summary, "5 devices found, 5 usable");
  assert_true(tbt_report_has(r, "clGetPlatformIDs", "2 platforms"));
  assert_true(tbt_report_has(r, "clGetDeviceIDs(platform 1)", "'FakeCL Beta': 3 devices"));

  const tb_device_info *d = tbt_nth(list, TB_BACKEND_OPENCL, 0);
  assert_string_equal(d->device, "opencl:0");
  assert_string_equal(d->name, "Fake Discrete GPU");
  assert_string_equal(d->vendor, "Fake Vendor Inc.");
  assert_int_equal(d->type, TB_DEVICE_DISCRETE_GPU);
  assert_int_equal(d->compute_units, 40);
  assert_true(d->memory_total_known);
  assert_int_equal(d->memory_total, 16 * GIB);
  assert_false(d->memory_free_known);
  assert_string_equal(tb_device_property(d, "max_alloc_bytes"), "4294967296");
  assert_true(has_dtype(d, TB_DTYPE_F16) && has_dtype(d, TB_DTYPE_F64) && has_dtype(d, TB_DTYPE_F32));
  assert_true(has_dtype(d, TB_DTYPE_I64) && has_dtype(d, TB_DTYPE_U8));
  assert_false(has_dtype(d, TB_DTYPE_BF16));
  assert_true(has_feature(d, TB_FEATURE_FP64) && has_feature(d, TB_FEATURE_SUBGROUPS));
  assert_false(has_feature(d, TB_FEATURE_UNIFIED_MEMORY));
  assert_string_equal(d->pci_bus_id, "0000:3b:00.0");
  assert_string_equal(tb_device_property(d, "pci_source"), "cl_khr_pci_bus_info");
  assert_string_equal(d->uuid, "8c0f1234-5678-9abc-def0-0123456789ab");
  assert_string_equal(d->driver_version, "1.2.3-fake");
  assert_string_equal(tb_device_property(d, "opencl_c_version"), "OpenCL C 3.0 FakeCL");
  assert_string_equal(tb_device_property(d, "platform_name"), "FakeCL Alpha");
  assert_string_equal(tb_device_property(d, "platform_version"), "OpenCL 3.0 FakeCL 1.0");
  assert_string_equal(tb_device_property(d, "vendor_id"), "0x1234");
  assert_string_equal(d->capability_source, "OpenCL device query");

  d = tbt_nth(list, TB_BACKEND_OPENCL, 1);
  assert_string_equal(d->name, "Fake Integrated GPU");
  assert_string_equal(d->vendor, "Intel");
  assert_int_equal(d->type, TB_DEVICE_INTEGRATED_GPU);
  assert_false(has_dtype(d, TB_DTYPE_F16)); /* "cl_khr_fp16_extra" is not cl_khr_fp16 */
  assert_true(has_dtype(d, TB_DTYPE_F64));  /* from CL_DEVICE_DOUBLE_FP_CONFIG alone */
  assert_true(has_feature(d, TB_FEATURE_UNIFIED_MEMORY) && has_feature(d, TB_FEATURE_SUBGROUPS));
  assert_string_equal(d->memory_type, "system");
  assert_string_equal(d->pci_bus_id, "");
  assert_string_equal(d->uuid, "");

  d = tbt_nth(list, TB_BACKEND_OPENCL, 2);
  assert_string_equal(d->device, "opencl:2"); /* numbered across platforms */
  assert_string_equal(d->vendor, "NVIDIA");
  assert_string_equal(d->pci_bus_id, "0001:65:01.0");
  assert_string_equal(tb_device_property(d, "pci_source"), "cl_nv_device_attribute_query");
  assert_string_equal(tb_device_property(d, "platform_name"), "FakeCL Beta");
  assert_int_equal(d->memory_total, 80 * GIB);

  d = tbt_nth(list, TB_BACKEND_OPENCL, 3);
  assert_string_equal(d->vendor, "AMD");
  assert_string_equal(d->pci_bus_id, "0000:c1:00.0"); /* bus 0xc1 arrives as a negative cl_char */
  assert_true(d->memory_free_known);
  assert_int_equal(d->memory_free, 190 * GIB);
  assert_int_equal(d->compute_units, 304);

  d = tbt_nth(list, TB_BACKEND_OPENCL, 4);
  assert_string_equal(d->name, "Fake Accelerator");
  assert_int_equal(d->type, TB_DEVICE_OTHER);
  assert_false(has_dtype(d, TB_DTYPE_F64) || has_dtype(d, TB_DTYPE_F16));
  assert_true(has_dtype(d, TB_DTYPE_I64));
  tb_device_list_destroy(list);
}

static void no_icd_installed(void **state) {
  (void)state;
  tb_device_list *list = discover_mode("no_icd");
  assert_int_equal(tbt_count(list, TB_BACKEND_OPENCL), 0);
  const tb_backend_report *r = tb_device_list_report(list, TB_BACKEND_OPENCL);
  assert_false(r->available);
  TB_ASSERT_CONTAINS(r->summary, "-1001 CL_PLATFORM_NOT_FOUND_KHR");
  TB_ASSERT_CONTAINS(r->fix, "install an OpenCL ICD, e.g. pocl-opencl-icd, or your GPU vendor's");
  assert_true(tbt_report_has(r, "clGetPlatformIDs", "-1001 CL_PLATFORM_NOT_FOUND_KHR"));
  tb_device_list_destroy(list);
}

static void platform_query_error(void **state) {
  (void)state;
  tb_device_list *list = discover_mode("platform_error");
  const tb_backend_report *r = tb_device_list_report(list, TB_BACKEND_OPENCL);
  assert_int_equal(r->device_count, 0);
  assert_string_equal(r->summary, "clGetPlatformIDs failed with -6 CL_OUT_OF_HOST_MEMORY");
  TB_ASSERT_CONTAINS(r->fix, "clinfo");
  tb_device_list_destroy(list);

  list = discover_mode("zero_platforms");
  r = tb_device_list_report(list, TB_BACKEND_OPENCL);
  assert_int_equal(r->device_count, 0);
  TB_ASSERT_CONTAINS(r->summary, "0 platforms");
  TB_ASSERT_CONTAINS(r->fix, "pocl-opencl-icd");
  tb_device_list_destroy(list);
}

static void name_without_terminator(void **state) {
  (void)state;
  tb_device_list *list = discover_mode("unterminated");
  const tb_device_info *d = tbt_nth(list, TB_BACKEND_OPENCL, 0);
  assert_non_null(d);
  assert_string_equal(d->name, "Fake Discrete GPU");
  assert_true(d->usable);
  tb_device_list_destroy(list);
}

static void huge_name_is_refused(void **state) {
  (void)state;
  tb_device_list *list = discover_mode("huge_name");
  assert_int_equal(tbt_count(list, TB_BACKEND_OPENCL), 5);
  const tb_device_info *d = tbt_nth(list, TB_BACKEND_OPENCL, 0);
  assert_false(d->usable);
  assert_string_equal(d->name, "unnamed OpenCL device");
  TB_ASSERT_CONTAINS(d->reason, "clGetDeviceInfo(CL_DEVICE_NAME) failed with a reply longer than the 1048576 bytes accepted");
  TB_ASSERT_CONTAINS(d->fix, "clinfo");
  assert_true(tbt_nth(list, TB_BACKEND_OPENCL, 1)->usable);
  tb_device_list_destroy(list);
}

static void name_query_error(void **state) {
  (void)state;
  tb_device_list *list = discover_mode("name_error");
  const tb_device_info *d = tbt_nth(list, TB_BACKEND_OPENCL, 0);
  assert_false(d->usable);
  TB_ASSERT_CONTAINS(d->reason, "opencl:0");
  TB_ASSERT_CONTAINS(d->reason, "FakeCL Alpha");
  TB_ASSERT_CONTAINS(d->reason, "-33 CL_INVALID_DEVICE");
  TB_ASSERT_CONTAINS(d->fix, "FakeCL Alpha");
  assert_string_equal(tb_device_list_report(list, TB_BACKEND_OPENCL)->summary, "5 devices found, 4 usable");
  tb_device_list_destroy(list);
}

static void counts_that_change_between_calls(void **state) {
  (void)state;
  tb_device_list *list = discover_mode("platform_count_shrinks");
  const tb_backend_report *r = tb_device_list_report(list, TB_BACKEND_OPENCL);
  assert_int_equal(tbt_count(list, TB_BACKEND_OPENCL), 2); /* only FakeCL Alpha's devices */
  assert_true(tbt_report_has(r, "clGetPlatformIDs", "platform count changed from 2 to 1 between calls; probing 1"));
  tb_device_list_destroy(list);

  list = discover_mode("device_count_grows");
  r = tb_device_list_report(list, TB_BACKEND_OPENCL);
  assert_int_equal(tbt_count(list, TB_BACKEND_OPENCL), 4); /* 1 of Alpha, 3 of Beta */
  assert_true(tbt_report_has(r, "clGetDeviceIDs(platform 0)", "device count changed from 1 to 3 between calls; probing 1"));
  assert_string_equal(tbt_nth(list, TB_BACKEND_OPENCL, 1)->name, "NVIDIA Fake H100");
  tb_device_list_destroy(list);
}

static void platforms_without_devices(void **state) {
  (void)state;
  tb_device_list *list = discover_mode("no_devices");
  const tb_backend_report *r = tb_device_list_report(list, TB_BACKEND_OPENCL);
  assert_int_equal(r->device_count, 0);
  assert_string_equal(r->summary, "2 OpenCL platforms but no device");
  assert_true(tbt_report_has(r, "clGetDeviceIDs(platform 0)", "'FakeCL Alpha': 0 devices"));
  tb_device_list_destroy(list);

  list = discover_mode("devices_error");
  r = tb_device_list_report(list, TB_BACKEND_OPENCL);
  assert_int_equal(r->device_count, 0);
  TB_ASSERT_CONTAINS(r->summary, "2 OpenCL platforms but no device: clGetDeviceIDs on platform 'FakeCL Alpha' failed with -5 CL_OUT_OF_RESOURCES");
  assert_true(tbt_report_has(r, "clGetDeviceIDs(platform 1)", "-5 CL_OUT_OF_RESOURCES"));
  tb_device_list_destroy(list);
}

static void device_not_available(void **state) {
  (void)state;
  tb_device_list *list = discover_mode("unavailable");
  const tb_device_info *d = tbt_nth(list, TB_BACKEND_OPENCL, 0);
  assert_false(d->usable);
  assert_string_equal(d->reason, "OpenCL reports Fake Discrete GPU (opencl:0) as not available (CL_DEVICE_AVAILABLE is false)");
  TB_ASSERT_CONTAINS(d->fix, "clinfo");
  const tb_backend_report *r = tb_device_list_report(list, TB_BACKEND_OPENCL);
  assert_true(r->available);
  assert_string_equal(r->summary, "5 devices found, 4 usable");
  tb_device_list_destroy(list);
}

static void pci_location_out_of_range(void **state) {
  (void)state;
  tb_device_list *list = discover_mode("bad_pci");
  const tb_device_info *d = tbt_nth(list, TB_BACKEND_OPENCL, 0);
  assert_string_equal(d->pci_bus_id, "");
  assert_true(d->usable);
  assert_true(tbt_report_has(tb_device_list_report(list, TB_BACKEND_OPENCL), "opencl:0",
                             "PCI location from cl_khr_pci_bus_info out of range: domain 0 bus 59 device 40 function 0"));
  tb_device_list_destroy(list);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test_setup(every_device_of_every_platform, reset_env),
      cmocka_unit_test_setup(no_icd_installed, reset_env),
      cmocka_unit_test_setup(platform_query_error, reset_env),
      cmocka_unit_test_setup(name_without_terminator, reset_env),
      cmocka_unit_test_setup(huge_name_is_refused, reset_env),
      cmocka_unit_test_setup(name_query_error, reset_env),
      cmocka_unit_test_setup(counts_that_change_between_calls, reset_env),
      cmocka_unit_test_setup(platforms_without_devices, reset_env),
      cmocka_unit_test_setup(device_not_available, reset_env),
      cmocka_unit_test_setup(pci_location_out_of_range, reset_env),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
