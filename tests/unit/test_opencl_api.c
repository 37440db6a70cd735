/* The OpenCL probe's local declarations and helpers: constants equal the Khronos headers' (when the
 * system has them), error names, whole-word extension lookup, UUID text. */
#include <string.h>
#include "test_util.h"
#include "core/uuid.h"
#include "runtime/opencl_api.h"
#include "runtime/opencl_query.h"

#if __has_include(<CL/cl_ext.h>)
#define CL_TARGET_OPENCL_VERSION 300
#include <CL/cl.h>
#include <CL/cl_ext.h>
#define HAVE_CL_HEADERS 1
_Static_assert(TB_CL_PLATFORM_NOT_FOUND_KHR == CL_PLATFORM_NOT_FOUND_KHR, "CL_PLATFORM_NOT_FOUND_KHR");
_Static_assert(TB_CL_DEVICE_NOT_FOUND == CL_DEVICE_NOT_FOUND, "CL_DEVICE_NOT_FOUND");
_Static_assert(TB_CL_PLATFORM_NAME == CL_PLATFORM_NAME && TB_CL_PLATFORM_VENDOR == CL_PLATFORM_VENDOR &&
                   TB_CL_PLATFORM_VERSION == CL_PLATFORM_VERSION, "platform info");
_Static_assert(TB_CL_DEVICE_TYPE_CPU == CL_DEVICE_TYPE_CPU && TB_CL_DEVICE_TYPE_GPU == CL_DEVICE_TYPE_GPU &&
                   TB_CL_DEVICE_TYPE_ACCELERATOR == CL_DEVICE_TYPE_ACCELERATOR && TB_CL_DEVICE_TYPE_ALL == CL_DEVICE_TYPE_ALL,
               "device types");
_Static_assert(TB_CL_DEVICE_NAME == CL_DEVICE_NAME && TB_CL_DEVICE_VENDOR == CL_DEVICE_VENDOR &&
                   TB_CL_DEVICE_TYPE == CL_DEVICE_TYPE && TB_CL_DEVICE_MAX_COMPUTE_UNITS == CL_DEVICE_MAX_COMPUTE_UNITS &&
                   TB_CL_DEVICE_GLOBAL_MEM_SIZE == CL_DEVICE_GLOBAL_MEM_SIZE &&
                   TB_CL_DEVICE_MAX_MEM_ALLOC_SIZE == CL_DEVICE_MAX_MEM_ALLOC_SIZE &&
                   TB_CL_DEVICE_EXTENSIONS == CL_DEVICE_EXTENSIONS && TB_CL_DRIVER_VERSION == CL_DRIVER_VERSION &&
                   TB_CL_DEVICE_OPENCL_C_VERSION == CL_DEVICE_OPENCL_C_VERSION &&
                   TB_CL_DEVICE_DOUBLE_FP_CONFIG == CL_DEVICE_DOUBLE_FP_CONFIG &&
                   TB_CL_DEVICE_HOST_UNIFIED_MEMORY == CL_DEVICE_HOST_UNIFIED_MEMORY &&
                   TB_CL_DEVICE_AVAILABLE == CL_DEVICE_AVAILABLE && TB_CL_DEVICE_PROFILE == CL_DEVICE_PROFILE &&
                   TB_CL_DEVICE_VERSION == CL_DEVICE_VERSION && TB_CL_DEVICE_VENDOR_ID == CL_DEVICE_VENDOR_ID &&
                   TB_CL_DEVICE_LOCAL_MEM_SIZE == CL_DEVICE_LOCAL_MEM_SIZE &&
                   TB_CL_DEVICE_MAX_WORK_GROUP_SIZE == CL_DEVICE_MAX_WORK_GROUP_SIZE &&
                   TB_CL_DEVICE_MAX_CLOCK_FREQUENCY == CL_DEVICE_MAX_CLOCK_FREQUENCY,
               "device info");
_Static_assert(TB_CL_DEVICE_UUID_KHR == CL_DEVICE_UUID_KHR && TB_CL_DRIVER_UUID_KHR == CL_DRIVER_UUID_KHR &&
                   TB_CL_DEVICE_PCI_BUS_INFO_KHR == CL_DEVICE_PCI_BUS_INFO_KHR &&
                   TB_CL_DEVICE_TOPOLOGY_AMD == CL_DEVICE_TOPOLOGY_AMD &&
                   TB_CL_DEVICE_GLOBAL_FREE_MEMORY_AMD == CL_DEVICE_GLOBAL_FREE_MEMORY_AMD &&
                   TB_CL_DEVICE_TOPOLOGY_TYPE_PCIE_AMD == CL_DEVICE_TOPOLOGY_TYPE_PCIE_AMD,
               "extension queries");
_Static_assert(sizeof(tb_cl_device_pci_bus_info_khr) == sizeof(cl_device_pci_bus_info_khr), "pci bus info");
_Static_assert(sizeof(tb_cl_device_topology_amd) == sizeof(cl_device_topology_amd), "AMD topology");
_Static_assert(offsetof(tb_cl_device_topology_amd, pcie.bus) == offsetof(cl_device_topology_amd, pcie.bus), "AMD bus");
_Static_assert(offsetof(tb_cl_device_topology_amd, pcie.function) == offsetof(cl_device_topology_amd, pcie.function),
               "AMD function");
#endif

static void matches_system_headers(void **state) {
  (void)state;
#ifdef HAVE_CL_HEADERS
  assert_int_equal(TB_CL_DEVICE_PCI_BUS_INFO_KHR, CL_DEVICE_PCI_BUS_INFO_KHR); /* the rest is checked at compile time */
#else
  skip(); /* no <CL/cl_ext.h> (opencl-c-headers) on this machine: nothing to compare with */
#endif
}

static void error_names(void **state) {
  (void)state;
  assert_string_equal(tb_cl_error_name(-1001), "CL_PLATFORM_NOT_FOUND_KHR");
  assert_string_equal(tb_cl_error_name(-1), "CL_DEVICE_NOT_FOUND");
  assert_string_equal(tb_cl_error_name(-33), "CL_INVALID_DEVICE");
  assert_string_equal(tb_cl_error_name(-72), "CL_MAX_SIZE_RESTRICTION_EXCEEDED");
  assert_string_equal(tb_cl_error_name(-9999), "unknown OpenCL error");
  char text[96];
  tb_cl_code_text(-30, text, sizeof text);
  assert_string_equal(text, "-30 CL_INVALID_VALUE");
  tb_cl_code_text(TB_CL_REPLY_WRONG_SIZE, text, sizeof text);
  assert_string_equal(text, "a reply of the wrong size");
}

static void extension_words(void **state) {
  (void)state;
  const char *list = "  cl_khr_fp64 cl_khr_fp16_extra   cl_khr_icd";
  assert_true(tb_cl_has_extension(list, "cl_khr_fp64"));
  assert_true(tb_cl_has_extension(list, "cl_khr_icd"));
  assert_false(tb_cl_has_extension(list, "cl_khr_fp16"));
  assert_false(tb_cl_has_extension(list, "cl_khr"));
  assert_false(tb_cl_has_extension("", "cl_khr_fp64"));
  assert_false(tb_cl_has_extension(NULL, "cl_khr_fp64"));
}

static void uuid_text(void **state) {
  (void)state;
  unsigned char bytes[16] = {0xde, 0xad, 0xbe, 0xef, 0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 0xa, 0xb};
  char text[40];
  tb_uuid_text(bytes, text, sizeof text);
  assert_string_equal(text, "deadbeef-0001-0203-0405-060708090a0b");
  assert_int_equal(strlen(text), 36);
  unsigned char zero[16] = {0};
  tb_uuid_text(zero, text, sizeof text);
  assert_string_equal(text, "");
  tb_uuid_text(bytes, text, 20); /* too small: nothing rather than a cut UUID */
  assert_string_equal(text, "");
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(matches_system_headers),
      cmocka_unit_test(error_names),
      cmocka_unit_test(extension_words),
      cmocka_unit_test(uuid_text),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
