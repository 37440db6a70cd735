/* The Vulkan probe's local declarations and helpers: structure sizes and offsets equal vulkan_core.h's
 * (when the system has it), VkResult names, vendor names, version and UUID text, fixed-size strings
 * without a terminator, and the validation messenger's counting rules. */
#include <string.h>
#include "test_util.h"
#include "core/uuid.h"
#include "runtime/vulkan_api.h"
#include "discover/vulkan_validation.h"

#if __has_include(<vulkan/vulkan_core.h>)
#include <vulkan/vulkan_core.h>
#define HAVE_VULKAN_HEADERS 1
#define SAME(a, b) _Static_assert(sizeof(a) == sizeof(b), #a)
#define OFF(a, fa, b, fb) _Static_assert(offsetof(a, fa) == offsetof(b, fb), #a "." #fa)
SAME(tb_vk_limits, VkPhysicalDeviceLimits);
OFF(tb_vk_limits, maxStorageBufferRange, VkPhysicalDeviceLimits, maxStorageBufferRange);
OFF(tb_vk_limits, maxComputeSharedMemorySize, VkPhysicalDeviceLimits, maxComputeSharedMemorySize);
OFF(tb_vk_limits, maxComputeWorkGroupInvocations, VkPhysicalDeviceLimits, maxComputeWorkGroupInvocations);
OFF(tb_vk_limits, minMemoryMapAlignment, VkPhysicalDeviceLimits, minMemoryMapAlignment);
OFF(tb_vk_limits, nonCoherentAtomSize, VkPhysicalDeviceLimits, nonCoherentAtomSize);
OFF(tb_vk_limits, optimalBufferCopyOffsetAlignment, VkPhysicalDeviceLimits, optimalBufferCopyOffsetAlignment);
SAME(tb_vk_physical_device_properties, VkPhysicalDeviceProperties);
OFF(tb_vk_physical_device_properties, sparseProperties, VkPhysicalDeviceProperties, sparseProperties);
SAME(tb_vk_physical_device_properties2, VkPhysicalDeviceProperties2);
SAME(tb_vk_id_properties, VkPhysicalDeviceIDProperties);
SAME(tb_vk_driver_properties, VkPhysicalDeviceDriverProperties);
SAME(tb_vk_subgroup_properties, VkPhysicalDeviceSubgroupProperties);
SAME(tb_vk_pci_bus_info_properties, VkPhysicalDevicePCIBusInfoPropertiesEXT);
SAME(tb_vk_physical_device_features, VkPhysicalDeviceFeatures);
_Static_assert(offsetof(VkPhysicalDeviceFeatures, shaderFloat64) == 4*TB_VK_FEATURE_SHADER_FLOAT64, "f64");
_Static_assert(offsetof(VkPhysicalDeviceFeatures, shaderInt64) == 4*TB_VK_FEATURE_SHADER_INT64, "i64");
_Static_assert(offsetof(VkPhysicalDeviceFeatures, shaderInt16) == 4*TB_VK_FEATURE_SHADER_INT16, "i16");
SAME(tb_vk_physical_device_features2, VkPhysicalDeviceFeatures2);
SAME(tb_vk_float16_int8_features, VkPhysicalDeviceShaderFloat16Int8Features);
SAME(tb_vk_memory_properties, VkPhysicalDeviceMemoryProperties);
OFF(tb_vk_memory_properties, memoryHeaps, VkPhysicalDeviceMemoryProperties, memoryHeaps);
SAME(tb_vk_memory_properties2, VkPhysicalDeviceMemoryProperties2);
SAME(tb_vk_memory_budget_properties, VkPhysicalDeviceMemoryBudgetPropertiesEXT);
SAME(tb_vk_debug_callback_data, VkDebugUtilsMessengerCallbackDataEXT);
OFF(tb_vk_debug_callback_data, pMessage, VkDebugUtilsMessengerCallbackDataEXT, pMessage);
SAME(tb_vk_debug_messenger_create_info, VkDebugUtilsMessengerCreateInfoEXT);
OFF(tb_vk_debug_messenger_create_info, pUserData, VkDebugUtilsMessengerCreateInfoEXT, pUserData);
SAME(tb_vk_instance_create_info, VkInstanceCreateInfo);
SAME(tb_vk_application_info, VkApplicationInfo);
SAME(tb_vk_layer_properties, VkLayerProperties);
SAME(tb_vk_extension_properties, VkExtensionProperties);
_Static_assert(TB_VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_FEATURES_2 == VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_FEATURES_2, "sType");
_Static_assert(TB_VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_PROPERTIES_2 == VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_PROPERTIES_2, "sType");
_Static_assert(TB_VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_MEMORY_PROPERTIES_2 == VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_MEMORY_PROPERTIES_2, "sType");
_Static_assert(TB_VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_ID_PROPERTIES == VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_ID_PROPERTIES, "sType");
_Static_assert(TB_VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_SHADER_FLOAT16_INT8_FEATURES == VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_SHADER_FLOAT16_INT8_FEATURES, "sType");
_Static_assert(TB_VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_SUBGROUP_PROPERTIES == VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_SUBGROUP_PROPERTIES, "sType");
_Static_assert(TB_VK_STRUCTURE_TYPE_DEBUG_UTILS_MESSENGER_CREATE_INFO_EXT == VK_STRUCTURE_TYPE_DEBUG_UTILS_MESSENGER_CREATE_INFO_EXT, "sType");
_Static_assert(TB_VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_DRIVER_PROPERTIES == VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_DRIVER_PROPERTIES, "sType");
_Static_assert(TB_VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_PCI_BUS_INFO_PROPERTIES_EXT == VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_PCI_BUS_INFO_PROPERTIES_EXT, "sType");
_Static_assert(TB_VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_MEMORY_BUDGET_PROPERTIES_EXT == VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_MEMORY_BUDGET_PROPERTIES_EXT, "sType");
_Static_assert(TB_VK_PHYSICAL_DEVICE_TYPE_CPU == VK_PHYSICAL_DEVICE_TYPE_CPU && TB_VK_PHYSICAL_DEVICE_TYPE_VIRTUAL_GPU == VK_PHYSICAL_DEVICE_TYPE_VIRTUAL_GPU &&
               TB_VK_PHYSICAL_DEVICE_TYPE_DISCRETE_GPU == VK_PHYSICAL_DEVICE_TYPE_DISCRETE_GPU &&
               TB_VK_PHYSICAL_DEVICE_TYPE_INTEGRATED_GPU == VK_PHYSICAL_DEVICE_TYPE_INTEGRATED_GPU, "device types");
_Static_assert(TB_VK_ERROR_INCOMPATIBLE_DRIVER == VK_ERROR_INCOMPATIBLE_DRIVER && TB_VK_ERROR_INITIALIZATION_FAILED == VK_ERROR_INITIALIZATION_FAILED &&
               TB_VK_INCOMPLETE == VK_INCOMPLETE, "results");
_Static_assert(TB_VK_DEBUG_SEVERITY_WARNING == VK_DEBUG_UTILS_MESSAGE_SEVERITY_WARNING_BIT_EXT &&
               TB_VK_DEBUG_SEVERITY_ERROR == VK_DEBUG_UTILS_MESSAGE_SEVERITY_ERROR_BIT_EXT, "severities");
_Static_assert(TB_VK_API_VERSION_1_1 == VK_API_VERSION_1_1 && TB_VK_API_VERSION_1_2 == VK_API_VERSION_1_2, "versions");
#endif

static void matches_system_header(void **state) {
  (void)state;
#ifdef HAVE_VULKAN_HEADERS
  assert_int_equal(sizeof(tb_vk_physical_device_properties), sizeof(VkPhysicalDeviceProperties)); /* the rest at compile time */
#else
  skip(); /* no <vulkan/vulkan_core.h> (libvulkan-dev) on this machine: nothing to compare with */
#endif
}

static void result_and_vendor_names(void **state) {
  (void)state;
  assert_string_equal(tb_vk_result_name(-9), "VK_ERROR_INCOMPATIBLE_DRIVER");
  assert_string_equal(tb_vk_result_name(-3), "VK_ERROR_INITIALIZATION_FAILED");
  assert_string_equal(tb_vk_result_name(5), "VK_INCOMPLETE");
  assert_string_equal(tb_vk_result_name(-1000069000), "VK_ERROR_OUT_OF_POOL_MEMORY");
  assert_string_equal(tb_vk_result_name(-77), "unknown VkResult");
  assert_string_equal(tb_vk_vendor_name(0x10de), "NVIDIA");
  assert_string_equal(tb_vk_vendor_name(0x1002), "AMD");
  assert_string_equal(tb_vk_vendor_name(0x8086), "Intel");
  assert_string_equal(tb_vk_vendor_name(0x10005), "Mesa");
  assert_null(tb_vk_vendor_name(0x1af4));
}

static void version_text(void **state) {
  (void)state;
  char text[32];
  tb_vk_driver_version_text(0x10de, (535u << 22) | (183u << 14) | (1u << 6) | 3u, text, sizeof text);
  assert_string_equal(text, "535.183.1.3");
  tb_vk_driver_version_text(0x1002, TB_VK_MAKE_API_VERSION(2, 0, 279), text, sizeof text);
  assert_string_equal(text, "2.0.279");
  tb_vk_driver_version_text(0x10005, TB_VK_MAKE_API_VERSION(0, 0, 1), text, sizeof text);
  assert_string_equal(text, "0.0.1");
  tb_vk_api_version_text(TB_VK_MAKE_API_VERSION(1, 3, 230), text, sizeof text);
  assert_string_equal(text, "1.3.230");
}

static void uuid_and_fixed_text(void **state) {
  (void)state;
  uint8_t uuid[16] = {0x6d, 0x65, 0x73, 0x61, 0x32, 0x32, 0x2e, 0x33, 0x2e, 0x36, 0, 0, 0, 0, 0, 0};
  char text[64];
  tb_uuid_text(uuid, text, sizeof text);
  assert_string_equal(text, "6d657361-3232-2e33-2e36-000000000000");
  uint8_t zero[16] = {0};
  tb_uuid_text(zero, text, sizeof text);
  assert_string_equal(text, "");
  char field[8] = {'a', 'b', '\n', 'c', 'd', 'e', 'f', 'g'}; /* no terminator, a control byte */
  tb_vk_fixed_text(field, sizeof field, text, sizeof text);
  assert_string_equal(text, "ab cdefg");
  tb_vk_fixed_text(field, sizeof field, text, 4); /* the output is bounded too */
  assert_string_equal(text, "ab");
  char padded[8] = "gpu  ";
  tb_vk_fixed_text(padded, sizeof padded, text, sizeof text);
  assert_string_equal(text, "gpu");
}

static void messenger_counts_warnings_and_errors(void **state) {
  (void)state;
  tb_vk_validation v;
  memset(&v, 0, sizeof v);
  tb_vk_debug_callback_data data = {.sType = TB_VK_STRUCTURE_TYPE_DEBUG_UTILS_MESSENGER_CALLBACK_DATA_EXT,
                                    .pMessageIdName = "VUID-test-0001", .pMessage = "first problem"};
  assert_int_equal(tb_vk_validation_callback(TB_VK_DEBUG_SEVERITY_INFO, TB_VK_DEBUG_TYPE_GENERAL, &data, &v), 0);
  assert_int_equal(tb_vk_validation_callback(TB_VK_DEBUG_SEVERITY_VERBOSE, TB_VK_DEBUG_TYPE_GENERAL, &data, &v), 0);
  assert_int_equal(v.warnings + v.errors, 0);
  assert_string_equal(v.first_message, "");
  assert_int_equal(tb_vk_validation_callback(TB_VK_DEBUG_SEVERITY_WARNING, TB_VK_DEBUG_TYPE_VALIDATION, &data, &v), 0);
  data.pMessage = "second problem";
  data.pMessageIdName = NULL;
  assert_int_equal(tb_vk_validation_callback(TB_VK_DEBUG_SEVERITY_ERROR, TB_VK_DEBUG_TYPE_VALIDATION, &data, &v), 0);
  assert_int_equal(tb_vk_validation_callback(TB_VK_DEBUG_SEVERITY_ERROR, TB_VK_DEBUG_TYPE_VALIDATION, NULL, &v), 0);
  assert_int_equal(v.warnings, 1);
  assert_int_equal(v.errors, 2);
  assert_string_equal(v.first_message, "VUID-test-0001: first problem");
  assert_int_equal(tb_vk_validation_callback(TB_VK_DEBUG_SEVERITY_ERROR, TB_VK_DEBUG_TYPE_VALIDATION, &data, NULL), 0);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(matches_system_header),
      cmocka_unit_test(result_and_vendor_names),
      cmocka_unit_test(version_text),
      cmocka_unit_test(uuid_and_fixed_text),
      cmocka_unit_test(messenger_counts_warnings_and_errors),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
