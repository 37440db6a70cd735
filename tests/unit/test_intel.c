/* The XPU probe on recorded trees with the fake Level Zero loader: a node with 4 Data Center GPU Max 1550
 * (whole GPUs, tiles listed one by one, no PCI address from the driver), the same node without Level Zero,
 * a laptop's Iris Xe, and this machine. Failure paths (driver errors, Sysman missing, permissions, garbage
 * sysfs) are in test_intel_errors.c. */
#include <dlfcn.h>
#include "discover/capability.h"
#include "test_intel_tree.h"

static int clean_env(void **state) {
  (void)state;
  xpu_env("");
  return 0;
}

static void expect_max1550_bus_facts(const tb_device_info *d, int gpu) {
  assert_string_equal(d->pci_bus_id, xpu_max_buses[gpu]);
  assert_string_equal(d->vendor, "Intel");
  assert_int_equal(d->type, TB_DEVICE_DISCRETE_GPU);
  assert_string_equal(d->arch_id, "0x0bd5");
  const tb_capability *row = tb_capability_intel(0x0bd5);
  assert_non_null(row);
  assert_string_equal(row->key, "xe-hpc");
  assert_string_equal(d->architecture, row->architecture);
  assert_string_equal(d->architecture, "Xe-HPC");
  assert_true(d->features & TB_FEATURE_BIT(TB_FEATURE_XMX));
  assert_true(d->dtypes & TB_DTYPE_BIT(TB_DTYPE_BF16));
  assert_true(d->dtypes & TB_DTYPE_BIT(TB_DTYPE_F64));
  assert_string_equal(tb_device_property(d, "kernel_driver"), "i915");
  assert_string_equal(tb_device_property(d, "pci_device_id"), "0x0bd5");
  assert_string_equal(tb_device_property(d, "pci_class"), "0x038000");
  assert_string_equal(tb_device_property(d, "numa_node"), gpu < 2 ? "0" : "1");
  char node[32];
  snprintf(node, sizeof node, "/dev/dri/renderD%d", 128 + gpu);
  assert_string_equal(tb_device_property(d, "render_node"), node);
}

static void max1550_node_with_level_zero(void **state) {
  (void)state;
  xpu_env("intel_max");
  xpu_use_fake("max4", "ok");
  tb_device_list *list = tbt_discover(XPU_ONLY);
  assert_int_equal(tbt_count(list, TB_BACKEND_XPU), 4); /* the Intel host bridge (class 0x088000) is not a GPU */
  for (int i = 0; i < 4; i++) {
    const tb_device_info *d = tbt_nth(list, TB_BACKEND_XPU, i);
    assert_non_null(d);
    char device[16];
    snprintf(device, sizeof device, "xpu:%d", i);
    assert_string_equal(d->device, device);
    assert_int_equal(d->index, i);
    assert_true(d->usable);
    assert_string_equal(d->reason, "");
    assert_string_equal(d->name, "Intel(R) Data Center GPU Max 1550");
    expect_max1550_bus_facts(d, i);
    assert_int_equal(d->compute_units, 1024); /* 8 slices x 16 sub-slices x 8 EUs */
    assert_true(d->memory_total_known);
    assert_int_equal(d->memory_total, 128 * XPU_GIB);
    /* Sysman: tile 0 has i + 1 GiB in use, tile 1 has 2 GiB; the system-memory module is not counted. */
    assert_true(d->memory_free_known);
    assert_int_equal(d->memory_free, 128 * XPU_GIB - (uint64_t)(i + 3) * XPU_GIB);
    assert_string_equal(d->driver_version, "1.3.29735");
    assert_string_equal(tb_device_property(d, "eu_count"), "1024");
    assert_string_equal(tb_device_property(d, "threads_per_eu"), "8");
    assert_string_equal(tb_device_property(d, "simd_width"), "16");
    assert_string_equal(tb_device_property(d, "core_clock_mhz"), "1600");
    assert_string_equal(tb_device_property(d, "max_work_group_size"), "1024");
    assert_null(tb_device_property(d, "tile"));
    assert_int_equal(strlen(d->uuid), 32);
  }
  assert_string_equal(tbt_nth(list, TB_BACKEND_XPU, 0)->uuid, "8680d50b000000002900000000000000");
  assert_string_equal(tbt_nth(list, TB_BACKEND_XPU, 3)->uuid, "8680d50b00000000ca00000000000000");
  const tb_backend_report *r = tb_device_list_report(list, TB_BACKEND_XPU);
  assert_true(r->available);
  assert_int_equal(r->device_count, 4);
  assert_string_equal(r->summary, "4 Intel GPUs found, 4 usable");
  assert_string_equal(r->fix, "");
  assert_true(tbt_report_has(r, "dlopen libze_loader", "fake_ze.so"));
  assert_true(tbt_report_has(r, "zeInit", "ZE_RESULT_SUCCESS"));
  assert_true(tbt_report_has(r, "zeDeviceGet", "4 devices"));
  assert_true(tbt_report_has(r, "zesInit", "ZE_RESULT_SUCCESS"));
  assert_true(tbt_report_has(r, "zesMemoryGetState", "0000:29:00.0"));
  assert_true(tbt_report_has(r, "/dev/dri/renderD131", "read-write"));
  assert_true(tbt_report_has(r, "/sys/bus/pci/devices", "4 Intel display functions"));
  tb_device_list_destroy(list);
}

/* Tiles listed one by one (ZE_FLAT_DEVICE_HIERARCHY=FLAT, the default on recent drivers): 8 devices, two per
 * PCI function, each with its own tile's free memory. */
static void max1550_tiles_listed_one_by_one(void **state) {
  (void)state;
  xpu_env("intel_max");
  xpu_use_fake("max4flat", "ok");
  tb_device_list *list = tbt_discover(XPU_ONLY);
  assert_int_equal(tbt_count(list, TB_BACKEND_XPU), 8);
  for (int i = 0; i < 8; i++) {
    const tb_device_info *d = tbt_nth(list, TB_BACKEND_XPU, i);
    int gpu = i / 2, tile = i % 2;
    assert_int_equal(d->index, i);
    assert_true(d->usable);
    expect_max1550_bus_facts(d, gpu);
    assert_int_equal(d->compute_units, 512);
    assert_int_equal(d->memory_total, 64 * XPU_GIB);
    assert_true(d->memory_free_known);
    assert_int_equal(d->memory_free, 64 * XPU_GIB - (uint64_t)(tile == 0 ? gpu + 1 : 2) * XPU_GIB);
    assert_string_equal(tb_device_property(d, "tile"), tile == 0 ? "0 of 2" : "1 of 2");
  }
  /* Two tiles of one GPU stay two devices of the backend, not one merged device. */
  assert_int_not_equal(tbt_nth(list, TB_BACKEND_XPU, 0)->physical_id, tbt_nth(list, TB_BACKEND_XPU, 1)->physical_id);
  assert_string_equal(tb_device_list_report(list, TB_BACKEND_XPU)->summary, "8 Intel GPUs found, 8 usable");
  tb_device_list_destroy(list);
}

/* A driver without zeDevicePciGetPropertiesExt: devices are paired with PCI functions of the same device id in
 * bus order, and with Sysman devices in order. */
static void max1550_without_pci_addresses(void **state) {
  (void)state;
  xpu_env("intel_max");
  xpu_use_fake("max4", "no_pci_ext");
  tb_device_list *list = tbt_discover(XPU_ONLY);
  assert_int_equal(tbt_count(list, TB_BACKEND_XPU), 4);
  for (int i = 0; i < 4; i++) {
    const tb_device_info *d = tbt_nth(list, TB_BACKEND_XPU, i);
    assert_true(d->usable);
    expect_max1550_bus_facts(d, i);
    assert_true(d->memory_free_known);
    assert_int_equal(d->memory_free, 128 * XPU_GIB - (uint64_t)(i + 3) * XPU_GIB);
  }
  tb_device_list_destroy(list);
}

static void max1550_node_without_level_zero(void **state) {
  (void)state;
  xpu_env("intel_max");
  tb_device_list *list = tbt_discover(XPU_ONLY);
  assert_int_equal(tbt_count(list, TB_BACKEND_XPU), 4);
  for (int i = 0; i < 4; i++) {
    const tb_device_info *d = tbt_nth(list, TB_BACKEND_XPU, i);
    char device[32], reason[256];
    snprintf(device, sizeof device, "pci:%s", xpu_max_buses[i]);
    assert_string_equal(d->device, device);
    assert_int_equal(d->index, -1);
    assert_false(d->usable);
    snprintf(reason, sizeof reason,
             "Intel GPU 0x0bd5 at %s present but libze_loader.so.1 not found at TB_ZE_LIB=/nonexistent/tb-test-no-lib.so",
             xpu_max_buses[i]);
    assert_string_equal(d->reason, reason);
    TB_ASSERT_CONTAINS(d->fix, "intel-level-zero-gpu");
    TB_ASSERT_CONTAINS(d->fix, "set TB_ZE_LIB to the path of libze_loader.so.1");
    assert_string_equal(d->name, "Intel Data Center GPU Max 1550"); /* from the local id table */
    expect_max1550_bus_facts(d, i);
    assert_false(d->memory_total_known);
    assert_false(d->memory_free_known);
  }
  const tb_backend_report *r = tb_device_list_report(list, TB_BACKEND_XPU);
  assert_false(r->available);
  assert_string_equal(r->summary,
                      "4 Intel GPUs found, 0 usable: libze_loader.so.1 not found at TB_ZE_LIB=/nonexistent/tb-test-no-lib.so");
  TB_ASSERT_CONTAINS(r->fix, "TB_ZE_LIB");
  assert_true(tbt_report_has(r, "dlopen libze_loader", "TB_ZE_LIB=/nonexistent/tb-test-no-lib.so"));
  tb_device_list_destroy(list);
}

/* Without TB_ZE_LIB the loader is looked for by name, as a user's machine would. */
static void max1550_node_loader_not_in_path(void **state) {
  (void)state;
  void *real = dlopen("libze_loader.so.1", RTLD_NOW | RTLD_LOCAL);
  if (real) {
    dlclose(real);
    skip(); /* a real Level Zero loader is installed here: this case cannot be reproduced */
  }
  xpu_env("intel_max");
  unsetenv("TB_ZE_LIB");
  tb_device_list *list = tbt_discover(XPU_ONLY);
  const tb_device_info *d = tbt_nth(list, TB_BACKEND_XPU, 0);
  assert_string_equal(d->reason, "Intel GPU 0x0bd5 at 0000:29:00.0 present but libze_loader.so.1 not found in the loader path");
  assert_true(tbt_report_has(tb_device_list_report(list, TB_BACKEND_XPU), "dlopen libze_loader",
                             "libze_loader.so.1, libze_loader.so"));
  tb_device_list_destroy(list);
}

static void laptop_iris_xe(void **state) {
  (void)state;
  xpu_env("laptop_intel_nvidia");
  xpu_use_fake("laptop", "ok");
  tb_device_list *list = tbt_discover(XPU_ONLY);
  assert_int_equal(tbt_count(list, TB_BACKEND_XPU), 1); /* the NVIDIA function is not Intel's */
  const tb_device_info *d = tbt_nth(list, TB_BACKEND_XPU, 0);
  assert_string_equal(d->device, "xpu:0");
  assert_true(d->usable);
  assert_string_equal(d->name, "Intel(R) Iris(R) Xe Graphics");
  assert_int_equal(d->type, TB_DEVICE_INTEGRATED_GPU);
  assert_string_equal(d->pci_bus_id, "0000:00:02.0");
  assert_string_equal(d->arch_id, "0xa7a0");
  assert_string_equal(d->architecture, tb_capability_intel(0xa7a0)->architecture);
  assert_string_equal(d->architecture, "Xe-LP");
  assert_false(d->features & TB_FEATURE_BIT(TB_FEATURE_XMX));
  assert_int_equal(d->compute_units, 96);
  assert_true(d->memory_total_known);
  assert_int_equal(d->memory_total, 13 * XPU_GIB);
  assert_false(d->memory_free_known); /* no device-local memory module: it shares system memory */
  assert_string_equal(tb_device_property(d, "render_node"), "/dev/dri/renderD128");
  assert_null(tb_device_property(d, "numa_node"));
  const tb_backend_report *r = tb_device_list_report(list, TB_BACKEND_XPU);
  assert_string_equal(r->summary, "1 Intel GPU found, 1 usable");
  assert_true(tbt_report_has(r, "zesMemoryGetState", "shares system memory"));
  tb_device_list_destroy(list);
}

static void laptop_without_level_zero(void **state) {
  (void)state;
  xpu_env("laptop_intel_nvidia");
  tb_device_list *list = tbt_discover(XPU_ONLY);
  const tb_device_info *d = tbt_nth(list, TB_BACKEND_XPU, 0);
  assert_non_null(d);
  assert_string_equal(d->device, "pci:0000:00:02.0");
  assert_string_equal(d->name, "Intel Iris Xe Graphics");
  assert_int_equal(d->type, TB_DEVICE_INTEGRATED_GPU);
  TB_ASSERT_CONTAINS(d->reason, "Intel GPU 0xa7a0 at 0000:00:02.0 present but libze_loader.so.1 not found");
  tb_device_list_destroy(list);
}

/* This machine has no Intel GPU (and, with the libraries pointed away, no Level Zero). */
static void this_machine_has_no_intel_gpu(void **state) {
  (void)state;
  tb_device_list *list = tbt_discover(XPU_ONLY);
  assert_int_equal(tbt_count(list, TB_BACKEND_XPU), 0);
  const tb_backend_report *r = tb_device_list_report(list, TB_BACKEND_XPU);
  assert_false(r->available);
  assert_int_equal(r->device_count, 0);
  assert_string_equal(r->summary, "no Intel GPU found");
  assert_string_equal(r->fix, "");
  assert_true(tbt_report_has(r, "/sys/bus/pci/devices", "0 Intel display functions"));
  tb_device_list_destroy(list);
}

/* The fake without a fixture: Level Zero is authoritative, its GPUs are listed even where sysfs is missing. */
static void level_zero_without_sysfs(void **state) {
  (void)state;
  char *root = tbt_fixture_copy("laptop_intel_nvidia");
  tbt_tree_sh(root, "rm -rf sys");
  xpu_use_fake("laptop", "ok");
  tb_device_list *list = tbt_discover(XPU_ONLY);
  assert_int_equal(tbt_count(list, TB_BACKEND_XPU), 1);
  const tb_device_info *d = tbt_nth(list, TB_BACKEND_XPU, 0);
  assert_true(d->usable);
  assert_string_equal(d->pci_bus_id, "0000:00:02.0");
  assert_int_equal(d->type, TB_DEVICE_INTEGRATED_GPU);
  assert_null(tb_device_property(d, "render_node"));
  tb_device_list_destroy(list);
  tbt_tree_remove(root);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test_setup(max1550_node_with_level_zero, clean_env),
      cmocka_unit_test_setup(max1550_tiles_listed_one_by_one, clean_env),
      cmocka_unit_test_setup(max1550_without_pci_addresses, clean_env),
      cmocka_unit_test_setup(max1550_node_without_level_zero, clean_env),
      cmocka_unit_test_setup(max1550_node_loader_not_in_path, clean_env),
      cmocka_unit_test_setup(laptop_iris_xe, clean_env),
      cmocka_unit_test_setup(laptop_without_level_zero, clean_env),
      cmocka_unit_test_setup(this_machine_has_no_intel_gpu, clean_env),
      cmocka_unit_test_setup(level_zero_without_sysfs, clean_env),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
