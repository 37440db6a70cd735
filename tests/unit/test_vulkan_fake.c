/* The Vulkan probe against tests/fakes/fake_vulkan.c: a discrete GPU with every extension the probe
 * reads, an integrated GPU, a Vulkan 1.1 virtual GPU, and the loader misbehaving on purpose (instance
 * errors with their codes, a name without terminator, a count that grows, a Vulkan 1.0 loader). The
 * test keeps the fake open so its counters show the instance was destroyed every time. */
#include <dlfcn.h>
#include <stdlib.h>
#include <string.h>
#include "test_util.h"
#include "discover/vulkan_validation.h"

#define VULKAN_ONLY (1u << TB_BACKEND_VULKAN)
#define GIB (1024ull * 1024ull * 1024ull)

static void *fake;
static int (*live_instances)(void);
static int (*created_instances)(void);
static int (*calls_after_1_0)(void);
static uint32_t (*asked_api_version)(void);
static int (*live_messengers)(void);

static int open_fake(void **state) {
  (void)state;
  fake = dlopen(tbt_fake("fake_vulkan"), RTLD_NOW | RTLD_LOCAL);
  if (!fake) return -1;
  *(void **)&live_instances = dlsym(fake, "fake_vulkan_live_instances");
  *(void **)&created_instances = dlsym(fake, "fake_vulkan_created_instances");
  *(void **)&calls_after_1_0 = dlsym(fake, "fake_vulkan_calls_after_1_0");
  *(void **)&asked_api_version = dlsym(fake, "fake_vulkan_asked_api_version");
  *(void **)&live_messengers = dlsym(fake, "fake_vulkan_live_messengers");
  return live_instances && created_instances && calls_after_1_0 && asked_api_version && live_messengers ? 0 : -1;
}

static int close_fake(void **state) {
  (void)state;
  dlclose(fake);
  return 0;
}

static int reset_env(void **state) {
  (void)state;
  tbt_clear_env();
  unsetenv("TB_VULKAN_VALIDATION");
  unsetenv("TBT_FAKE_VULKAN");
  setenv("TB_VULKAN_LIB", tbt_fake("fake_vulkan"), 1);
  return 0;
}

static tb_device_list *discover_mode(const char *mode) {
  if (mode) setenv("TBT_FAKE_VULKAN", mode, 1);
  tb_device_list *list = tbt_discover(VULKAN_ONLY);
  unsetenv("TBT_FAKE_VULKAN");
  assert_int_equal(live_instances(), 0);  /* vkDestroyInstance was called for every instance created */
  assert_int_equal(live_messengers(), 0); /* and the debug messenger destroyed before it */
  return list;
}

static bool has_dtype(const tb_device_info *d, tb_dtype t) { return (d->dtypes & TB_DTYPE_BIT(t)) != 0; }
static bool has_feature(const tb_device_info *d, tb_feature f) { return (d->features & TB_FEATURE_BIT(f)) != 0; }

static void three_devices_in_enumeration_order(void **state) {
  (void)state;
  int before = created_instances();
  tb_device_list *list = discover_mode(NULL);
  assert_int_equal(created_instances(), before + 1);
  assert_int_equal(asked_api_version(), (1u << 22) | (3u << 12)); /* the loader's 1.3.280 as 1.3.0 */
  assert_int_equal(tbt_count(list, TB_BACKEND_VULKAN), 3);
  const tb_backend_report *r = tb_device_list_report(list, TB_BACKEND_VULKAN);
  assert_string_equal(r->summary, "3 devices found, 3 usable");
  assert_true(tbt_report_has(r, "loader instance version", "1.3.280"));
  assert_true(tbt_report_has(r, "vkEnumeratePhysicalDevices", "3 devices"));

  const tb_device_info *d = tbt_nth(list, TB_BACKEND_VULKAN, 0);
  assert_string_equal(d->device, "vulkan:0");
  assert_string_equal(d->name, "NVIDIA Fake RTX 4090");
  assert_string_equal(d->vendor, "NVIDIA");
  assert_int_equal(d->type, TB_DEVICE_DISCRETE_GPU);
  assert_string_equal(d->driver_version, "550.54.14.0"); /* NVIDIA's 10.8.8.6-bit packing */
  assert_string_equal(tb_device_property(d, "api_version"), "1.3.277");
  assert_string_equal(tb_device_property(d, "device_id"), "0x2684");
  assert_string_equal(tb_device_property(d, "driver_name"), "NVIDIA");
  assert_string_equal(tb_device_property(d, "driver_info"), "550.54.14");
  assert_string_equal(tb_device_property(d, "conformance_version"), "1.3.7.2");
  assert_string_equal(d->uuid, "10111213-1415-1617-1819-1a1b1c1d1e1f");
  assert_string_equal(tb_device_property(d, "driver_uuid"), "d0d0d0d0-d0d0-d0d0-d0d0-d0d0d0d0d0d0");
  assert_string_equal(d->pci_bus_id, "0000:65:00.0");
  assert_true(d->memory_total_known);
  assert_int_equal(d->memory_total, 24 * GIB); /* the device-local heap, not the 64 GiB host heap */
  assert_true(d->memory_free_known);
  assert_int_equal(d->memory_free, 20 * GIB); /* budget 22 GiB - usage 2 GiB */
  assert_string_equal(tb_device_property(d, "memory_budget"), "VK_EXT_memory_budget");
  assert_string_equal(tb_device_property(d, "memory_heap_1"), "68719476736 bytes");
  assert_string_equal(tb_device_property(d, "subgroup_size"), "32");
  assert_string_equal(tb_device_property(d, "max_compute_shared_memory"), "49152");
  assert_string_equal(tb_device_property(d, "max_compute_workgroup_size"), "1024,1024,64");
  assert_string_equal(tb_device_property(d, "cooperative_matrix"), "VK_KHR_cooperative_matrix");
  assert_true(has_dtype(d, TB_DTYPE_F16) && has_dtype(d, TB_DTYPE_I8) && has_dtype(d, TB_DTYPE_U8));
  assert_true(has_dtype(d, TB_DTYPE_F64) && has_dtype(d, TB_DTYPE_I64) && has_dtype(d, TB_DTYPE_I16));
  assert_true(has_feature(d, TB_FEATURE_COOPERATIVE_MATRIX) && has_feature(d, TB_FEATURE_SUBGROUPS));
  assert_true(has_feature(d, TB_FEATURE_FP64));
  assert_false(has_feature(d, TB_FEATURE_UNIFIED_MEMORY));

  d = tbt_nth(list, TB_BACKEND_VULKAN, 1);
  assert_string_equal(d->name, "Fake Intel Graphics");
  assert_string_equal(d->vendor, "Intel");
  assert_int_equal(d->type, TB_DEVICE_INTEGRATED_GPU);
  assert_string_equal(d->driver_version, "23.2.1");
  assert_int_equal(d->memory_total, 16 * GIB);
  assert_false(d->memory_free_known); /* no VK_EXT_memory_budget */
  assert_string_equal(d->pci_bus_id, "");  /* no VK_EXT_pci_bus_info */
  assert_string_equal(d->memory_type, "system");
  assert_true(has_dtype(d, TB_DTYPE_F16));
  assert_false(has_dtype(d, TB_DTYPE_F64));
  assert_false(has_feature(d, TB_FEATURE_COOPERATIVE_MATRIX));
  assert_true(has_feature(d, TB_FEATURE_UNIFIED_MEMORY));

  d = tbt_nth(list, TB_BACKEND_VULKAN, 2);
  assert_string_equal(d->device, "vulkan:2");
  assert_string_equal(d->vendor, "0x1af4");
  assert_int_equal(d->type, TB_DEVICE_VIRTUAL_GPU);
  assert_null(tb_device_property(d, "driver_name")); /* Vulkan 1.1 without VK_KHR_driver_properties */
  assert_false(has_dtype(d, TB_DTYPE_F16) || has_dtype(d, TB_DTYPE_I8));
  assert_true(has_feature(d, TB_FEATURE_COOPERATIVE_MATRIX)); /* VK_NV_cooperative_matrix */
  assert_string_equal(tb_device_property(d, "cooperative_matrix"), "VK_NV_cooperative_matrix");
  assert_false(has_feature(d, TB_FEATURE_SUBGROUPS)); /* subgroup size 0 */
  assert_int_equal(d->memory_total, 4 * GIB);
  tb_device_list_destroy(list);
}

static void no_driver(void **state) {
  (void)state;
  tb_device_list *list = discover_mode("incompatible");
  assert_int_equal(tbt_count(list, TB_BACKEND_VULKAN), 0);
  const tb_backend_report *r = tb_device_list_report(list, TB_BACKEND_VULKAN);
  assert_false(r->available);
  TB_ASSERT_CONTAINS(r->summary, "no Vulkan driver: vkCreateInstance returned -9 VK_ERROR_INCOMPATIBLE_DRIVER");
  assert_string_equal(r->fix, "install mesa-vulkan-drivers or your GPU vendor's Vulkan driver");
  tb_device_list_destroy(list);
}

static void instance_errors(void **state) {
  (void)state;
  tb_device_list *list = discover_mode("init_failed");
  const tb_backend_report *r = tb_device_list_report(list, TB_BACKEND_VULKAN);
  assert_int_equal(r->device_count, 0);
  assert_string_equal(r->summary, "vkCreateInstance failed with -3 VK_ERROR_INITIALIZATION_FAILED");
  TB_ASSERT_CONTAINS(r->fix, "vulkaninfo");
  assert_true(tbt_report_has(r, "vkCreateInstance", "-3 VK_ERROR_INITIALIZATION_FAILED"));
  tb_device_list_destroy(list);

  list = discover_mode("null_instance");
  r = tb_device_list_report(list, TB_BACKEND_VULKAN);
  assert_int_equal(r->device_count, 0);
  TB_ASSERT_CONTAINS(r->summary, "vkCreateInstance returned VK_SUCCESS but a NULL instance");
  tb_device_list_destroy(list);
}

static void name_without_terminator(void **state) {
  (void)state;
  tb_device_list *list = discover_mode("unterminated");
  const tb_device_info *d = tbt_nth(list, TB_BACKEND_VULKAN, 0);
  assert_int_equal(strlen(d->name), 256); /* all 256 bytes of deviceName, terminated by the probe */
  assert_int_equal(strspn(d->name, "X"), 256);
  assert_true(d->usable);
  assert_string_equal(tbt_nth(list, TB_BACKEND_VULKAN, 1)->name, "Fake Intel Graphics");
  tb_device_list_destroy(list);
}

static void count_grows_between_calls(void **state) {
  (void)state;
  tb_device_list *list = discover_mode("count_grows");
  assert_int_equal(tbt_count(list, TB_BACKEND_VULKAN), 3);
  const tb_backend_report *r = tb_device_list_report(list, TB_BACKEND_VULKAN);
  assert_true(tbt_report_has(r, "vkEnumeratePhysicalDevices", "device count changed after 1 (VK_INCOMPLETE); asking again"));
  assert_true(tbt_report_has(r, "vkEnumeratePhysicalDevices", "3 devices"));
  tb_device_list_destroy(list);
}

static void enumeration_errors(void **state) {
  (void)state;
  tb_device_list *list = discover_mode("enum_error");
  const tb_backend_report *r = tb_device_list_report(list, TB_BACKEND_VULKAN);
  assert_int_equal(r->device_count, 0);
  assert_string_equal(r->summary, "vkEnumeratePhysicalDevices failed with -3 VK_ERROR_INITIALIZATION_FAILED");
  tb_device_list_destroy(list);

  list = discover_mode("no_devices");
  r = tb_device_list_report(list, TB_BACKEND_VULKAN);
  assert_int_equal(r->device_count, 0);
  TB_ASSERT_CONTAINS(r->summary, "no Vulkan device");
  TB_ASSERT_CONTAINS(r->fix, "mesa-vulkan-drivers");
  tb_device_list_destroy(list);

  list = discover_mode("no_enumerate");
  r = tb_device_list_report(list, TB_BACKEND_VULKAN);
  assert_int_equal(r->device_count, 0);
  TB_ASSERT_CONTAINS(r->summary, "vkEnumeratePhysicalDevices not available from ");
  TB_ASSERT_CONTAINS(r->summary, "fake_vulkan.so");
  tb_device_list_destroy(list);
}

/* A loader without vkEnumerateInstanceVersion is Vulkan 1.0: only the 1.0 queries are used. */
static void vulkan_1_0_loader(void **state) {
  (void)state;
  tb_device_list *list = discover_mode("old_loader");
  assert_int_equal(asked_api_version(), 1u << 22);
  assert_int_equal(calls_after_1_0(), 0);
  assert_int_equal(tbt_count(list, TB_BACKEND_VULKAN), 3);
  assert_true(tbt_report_has(tb_device_list_report(list, TB_BACKEND_VULKAN), "loader instance version", "1.0.0 (no vkEnumerateInstanceVersion"));
  const tb_device_info *d = tbt_nth(list, TB_BACKEND_VULKAN, 0);
  assert_string_equal(d->name, "NVIDIA Fake RTX 4090");
  assert_string_equal(d->uuid, "");                 /* VkPhysicalDeviceIDProperties needs 1.1 */
  assert_null(tb_device_property(d, "subgroup_size"));
  assert_false(has_dtype(d, TB_DTYPE_F16));         /* the fp16/int8 features need 1.1 */
  assert_true(has_dtype(d, TB_DTYPE_F64));          /* VkPhysicalDeviceFeatures (1.0) */
  assert_int_equal(d->memory_total, 24 * GIB);
  assert_false(d->memory_free_known);
  tb_device_list_destroy(list);
}

static void validation_requested_but_no_layer(void **state) {
  (void)state;
  setenv("TB_VULKAN_VALIDATION", "1", 1);
  tb_device_list *list = discover_mode(NULL);
  const tb_backend_report *r = tb_device_list_report(list, TB_BACKEND_VULKAN);
  assert_true(tbt_report_has(r, "validation layer VK_LAYER_KHRONOS_validation", "not installed"));
  assert_int_equal(tbt_count(list, TB_BACKEND_VULKAN), 3);
  tb_device_list_destroy(list);
}

/* The messenger counts what the layer reports: a warning during vkCreateInstance (through the
 * structure chained to VkInstanceCreateInfo) and an error while the instance lives. */
static void validation_messages_counted(void **state) {
  (void)state;
  setenv("TB_VULKAN_VALIDATION", "1", 1);
  tb_device_list *list = discover_mode("with_layer");
  assert_int_equal(tbt_count(list, TB_BACKEND_VULKAN), 3);
  tb_vk_validation v;
  tb_vulkan_validation_last(&v);
  assert_true(v.requested && v.layer_enabled && v.counting);
  assert_int_equal(v.warnings, 1);
  assert_int_equal(v.errors, 1);
  assert_int_equal(tb_vulkan_validation_messages(), 2);
  assert_string_equal(v.first_message, "FAKE-0001: fake warning at vkCreateInstance");
  const tb_backend_report *r = tb_device_list_report(list, TB_BACKEND_VULKAN);
  assert_true(tbt_report_has(r, "validation messages", "1 warning, 1 error; first: FAKE-0001: fake warning at vkCreateInstance"));
  assert_true(tbt_report_has(r, "vkCreateInstance", "apiVersion 1.3.0, VK_LAYER_KHRONOS_validation"));
  tb_device_list_destroy(list);
}

/* A layer that is listed but fails to load costs validation, not the devices. */
static void broken_layer_falls_back(void **state) {
  (void)state;
  setenv("TB_VULKAN_VALIDATION", "1", 1);
  tb_device_list *list = discover_mode("layer_broken");
  assert_int_equal(tbt_count(list, TB_BACKEND_VULKAN), 3);
  const tb_backend_report *r = tb_device_list_report(list, TB_BACKEND_VULKAN);
  assert_true(tbt_report_has(r, "vkCreateInstance", "-6 VK_ERROR_LAYER_NOT_PRESENT with VK_LAYER_KHRONOS_validation; retrying without validation"));
  assert_string_equal(r->summary, "3 devices found, 3 usable");
  tb_vk_validation v;
  tb_vulkan_validation_last(&v);
  assert_true(v.requested);
  assert_false(v.layer_enabled);
  tb_device_list_destroy(list);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test_setup(three_devices_in_enumeration_order, reset_env),
      cmocka_unit_test_setup(no_driver, reset_env),
      cmocka_unit_test_setup(instance_errors, reset_env),
      cmocka_unit_test_setup(name_without_terminator, reset_env),
      cmocka_unit_test_setup(count_grows_between_calls, reset_env),
      cmocka_unit_test_setup(enumeration_errors, reset_env),
      cmocka_unit_test_setup(vulkan_1_0_loader, reset_env),
      cmocka_unit_test_setup(validation_requested_but_no_layer, reset_env),
      cmocka_unit_test_setup(validation_messages_counted, reset_env),
      cmocka_unit_test_setup(broken_layer_falls_back, reset_env),
  };
  return cmocka_run_group_tests(tests, open_fake, close_fake);
}
