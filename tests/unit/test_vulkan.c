/* The Vulkan probe against what is real on this machine: the Khronos loader with Mesa's lavapipe
 * (llvmpipe) driver under the Khronos validation layer, the loader with no driver, and TB_VULKAN_LIB
 * pointing at nothing or at the wrong library. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "test_util.h"
#include "discover/vulkan_validation.h"

#define VULKAN_ONLY (1u << TB_BACKEND_VULKAN)

static int reset_env(void **state) {
  (void)state;
  tbt_clear_env();
  static const char *const vars[] = {"TB_VULKAN_VALIDATION", "VK_ICD_FILENAMES", "VK_DRIVER_FILES", "VK_LAYER_PATH",
                                     "VK_LAYER_ENABLES", "VK_INSTANCE_LAYERS", "TBT_FAKE_VULKAN"};
  for (size_t i = 0; i < sizeof vars / sizeof vars[0]; i++) unsetenv(vars[i]);
  return 0;
}

static const tb_device_info *find_lavapipe(const tb_device_list *list) {
  for (int i = 0; tbt_nth(list, TB_BACKEND_VULKAN, i); i++)
    if (strstr(tbt_nth(list, TB_BACKEND_VULKAN, i)->name, "llvmpipe")) return tbt_nth(list, TB_BACKEND_VULKAN, i);
  return NULL;
}

static void assert_lavapipe(const tb_device_info *d) {
  char expected[32];
  snprintf(expected, sizeof expected, "vulkan:%d", d->index);
  assert_string_equal(d->device, expected);
  assert_int_equal(d->type, TB_DEVICE_CPU);
  assert_true(d->usable);
  assert_string_equal(d->vendor, "Mesa");
  assert_string_equal(tb_device_property(d, "vendor_id"), "0x10005");
  TB_ASSERT_CONTAINS(tb_device_property(d, "driver_name"), "llvmpipe");
  TB_ASSERT_CONTAINS(tb_device_property(d, "driver_info"), "Mesa");
  assert_string_equal(tb_device_property(d, "driver_id"), "13"); /* VK_DRIVER_ID_MESA_LLVMPIPE */
  assert_true(atoi(tb_device_property(d, "subgroup_size")) > 0);
  assert_true(d->features & TB_FEATURE_BIT(TB_FEATURE_SUBGROUPS));
  assert_true(d->memory_total_known);
  assert_true(d->memory_total >= 256u * 1024 * 1024);
  assert_int_equal(strlen(d->uuid), 36);
  assert_int_equal(d->uuid[8], '-');
  assert_int_equal(d->uuid[23], '-');
  TB_ASSERT_CONTAINS(tb_device_property(d, "api_version"), "1.");
  assert_true(d->driver_version[0] != '\0');
  assert_true(d->dtypes & TB_DTYPE_BIT(TB_DTYPE_F32));
  /* lavapipe has shaderFloat16 and shaderInt8 (VkPhysicalDeviceShaderFloat16Int8Features) */
  assert_true(d->dtypes & TB_DTYPE_BIT(TB_DTYPE_F16));
  assert_true(d->dtypes & TB_DTYPE_BIT(TB_DTYPE_I8));
  assert_string_equal(d->capability_source, "Vulkan device query");
  assert_string_equal(d->memory_type, "system");
  assert_string_equal(d->pci_bus_id, "");
}

static void lavapipe_under_validation(void **state) {
  (void)state;
  setenv("TB_VULKAN_VALIDATION", "1", 1);
  tb_device_list *list = tbt_discover(VULKAN_ONLY);
  const tb_device_info *d = find_lavapipe(list);
  if (!d) fail_msg("no llvmpipe device; Vulkan report: %s", tb_device_list_report(list, TB_BACKEND_VULKAN)->summary);
  assert_lavapipe(d);
  tb_vk_validation v;
  tb_vulkan_validation_last(&v);
  assert_true(v.requested);
  assert_true(v.layer_enabled);
  assert_true(v.counting);
  if (v.warnings + v.errors) fail_msg("validation reported: %s", v.first_message);
  assert_int_equal(tb_vulkan_validation_messages(), 0);
  const tb_backend_report *r = tb_device_list_report(list, TB_BACKEND_VULKAN);
  assert_true(r->available);
  assert_true(tbt_report_has(r, "validation layer VK_LAYER_KHRONOS_validation", "enabled"));
  assert_true(tbt_report_has(r, "vkCreateInstance", "VK_LAYER_KHRONOS_validation"));
  assert_true(tbt_report_has(r, "validation messages", "0 warnings, 0 errors"));
  assert_true(tbt_report_has(r, "dlopen libvulkan.so.1", "libvulkan.so"));
  tb_device_list_destroy(list);
}

static void lavapipe_without_validation(void **state) {
  (void)state;
  tb_device_list *list = tbt_discover(VULKAN_ONLY);
  const tb_device_info *d = find_lavapipe(list);
  assert_non_null(d);
  assert_lavapipe(d);
  tb_vk_validation v;
  tb_vulkan_validation_last(&v);
  assert_false(v.requested);
  assert_false(tbt_report_has(tb_device_list_report(list, TB_BACKEND_VULKAN), "validation", NULL));
  tb_device_list_destroy(list);
}

/* The counter sees what the real layer says: best-practices checks warn that VK_EXT_debug_utils
 * (which the probe enables to count) is a debugging extension. */
static void validation_messages_are_counted(void **state) {
  (void)state;
  setenv("TB_VULKAN_VALIDATION", "1", 1);
  setenv("VK_LAYER_ENABLES", "VK_VALIDATION_FEATURE_ENABLE_BEST_PRACTICES_EXT", 1);
  tb_device_list *list = tbt_discover(VULKAN_ONLY);
  tb_vk_validation v;
  tb_vulkan_validation_last(&v);
  assert_true(v.warnings >= 1);
  assert_int_equal(tb_vulkan_validation_messages(), v.warnings + v.errors);
  TB_ASSERT_CONTAINS(v.first_message, "BestPractices");
  const tb_backend_report *r = tb_device_list_report(list, TB_BACKEND_VULKAN);
  assert_true(tbt_report_has(r, "validation messages", "BestPractices"));
  assert_non_null(find_lavapipe(list)); /* warnings do not cost the device */
  tb_device_list_destroy(list);
}

static void validation_layer_absent(void **state) {
  (void)state;
  char dir[] = "/tmp/tb-test-no-layers-XXXXXX";
  assert_non_null(mkdtemp(dir));
  setenv("VK_LAYER_PATH", dir, 1);
  setenv("TB_VULKAN_VALIDATION", "1", 1);
  tb_device_list *list = tbt_discover(VULKAN_ONLY);
  rmdir(dir);
  const tb_backend_report *r = tb_device_list_report(list, TB_BACKEND_VULKAN);
  assert_true(tbt_report_has(r, "validation layer VK_LAYER_KHRONOS_validation", "TB_VULKAN_VALIDATION=1 but the layer is not installed"));
  assert_non_null(find_lavapipe(list));
  tb_vk_validation v;
  tb_vulkan_validation_last(&v);
  assert_true(v.requested);
  assert_false(v.layer_enabled);
  tb_device_list_destroy(list);

  setenv("TB_VULKAN_VALIDATION", "yes", 1);
  list = tbt_discover(VULKAN_ONLY);
  assert_true(tbt_report_has(tb_device_list_report(list, TB_BACKEND_VULKAN), "TB_VULKAN_VALIDATION", "'yes' is not 0 or 1"));
  tb_device_list_destroy(list);
}

/* The real loader with VK_ICD_FILENAMES at an empty directory finds no driver. */
static void real_loader_without_driver(void **state) {
  (void)state;
  char dir[] = "/tmp/tb-test-no-icd-XXXXXX";
  assert_non_null(mkdtemp(dir));
  setenv("VK_ICD_FILENAMES", dir, 1);
  tb_device_list *list = tbt_discover(VULKAN_ONLY);
  rmdir(dir);
  assert_int_equal(tbt_count(list, TB_BACKEND_VULKAN), 0);
  const tb_backend_report *r = tb_device_list_report(list, TB_BACKEND_VULKAN);
  assert_false(r->available);
  TB_ASSERT_CONTAINS(r->summary, "no Vulkan driver");
  TB_ASSERT_CONTAINS(r->summary, "-9 VK_ERROR_INCOMPATIBLE_DRIVER");
  assert_string_equal(r->fix, "install mesa-vulkan-drivers or your GPU vendor's Vulkan driver");
  assert_true(tbt_report_has(r, "vkCreateInstance", "-9 VK_ERROR_INCOMPATIBLE_DRIVER"));
  tb_device_list_destroy(list);
}

static void lib_variable_pointing_nowhere(void **state) {
  (void)state;
  setenv("TB_VULKAN_LIB", "/nonexistent/tb-test/libvulkan.so.1", 1);
  tb_device_list *list = tbt_discover(VULKAN_ONLY);
  assert_int_equal(tbt_count(list, TB_BACKEND_VULKAN), 0);
  const tb_backend_report *r = tb_device_list_report(list, TB_BACKEND_VULKAN);
  TB_ASSERT_CONTAINS(r->summary, "TB_VULKAN_LIB=/nonexistent/tb-test/libvulkan.so.1");
  TB_ASSERT_CONTAINS(r->summary, "could not be loaded");
  TB_ASSERT_CONTAINS(r->fix, "TB_VULKAN_LIB");
  assert_true(tbt_report_has(r, "dlopen TB_VULKAN_LIB", "/nonexistent/tb-test/libvulkan.so.1"));
  tb_device_list_destroy(list);
}

static void lib_variable_pointing_at_another_library(void **state) {
  (void)state;
  setenv("TB_VULKAN_LIB", "libm.so.6", 1);
  tb_device_list *list = tbt_discover(VULKAN_ONLY);
  assert_int_equal(tbt_count(list, TB_BACKEND_VULKAN), 0);
  const tb_backend_report *r = tb_device_list_report(list, TB_BACKEND_VULKAN);
  TB_ASSERT_CONTAINS(r->summary, "vkGetInstanceProcAddr not found in ");
  TB_ASSERT_CONTAINS(r->summary, "libm.so.6");
  TB_ASSERT_CONTAINS(r->fix, "TB_VULKAN_LIB");
  tb_device_list_destroy(list);
}

static void repeated_discovery_is_stable(void **state) {
  (void)state;
  char first[64] = "";
  for (int round = 0; round < 3; round++) {
    tb_device_list *list = tbt_discover(VULKAN_ONLY);
    const tb_device_info *d = find_lavapipe(list);
    assert_non_null(d);
    if (round == 0) snprintf(first, sizeof first, "%s", d->uuid);
    assert_string_equal(d->uuid, first);
    tb_device_list_destroy(list);
  }
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test_setup(lavapipe_under_validation, reset_env),
      cmocka_unit_test_setup(lavapipe_without_validation, reset_env),
      cmocka_unit_test_setup(validation_messages_are_counted, reset_env),
      cmocka_unit_test_setup(validation_layer_absent, reset_env),
      cmocka_unit_test_setup(real_loader_without_driver, reset_env),
      cmocka_unit_test_setup(lib_variable_pointing_nowhere, reset_env),
      cmocka_unit_test_setup(lib_variable_pointing_at_another_library, reset_env),
      cmocka_unit_test_setup(repeated_discovery_is_stable, reset_env),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
