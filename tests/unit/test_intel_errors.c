/* The XPU probe's failure paths: zeInit and zeDeviceGetProperties errors, a loader without Sysman, a render
 * node the user cannot open (checked by an unprivileged child), no kernel driver, no render node, and garbage
 * or truncated sysfs files. */
#include "test_intel_tree.h"

static int clean_env(void **state) {
  (void)state;
  xpu_env("");
  return 0;
}

static void zeinit_error_names_the_code(void **state) {
  (void)state;
  xpu_env("intel_max");
  xpu_use_fake("max4", "init_error");
  tb_device_list *list = tbt_discover(XPU_ONLY);
  assert_int_equal(tbt_count(list, TB_BACKEND_XPU), 4);
  for (int i = 0; i < 4; i++) {
    const tb_device_info *d = tbt_nth(list, TB_BACKEND_XPU, i);
    char reason[256];
    snprintf(reason, sizeof reason,
             "Intel GPU 0x0bd5 at %s present but zeInit failed with 0x78000001 (ZE_RESULT_ERROR_UNINITIALIZED)",
             xpu_max_buses[i]);
    assert_int_equal(d->index, -1);
    assert_false(d->usable);
    assert_string_equal(d->reason, reason);
    TB_ASSERT_CONTAINS(d->fix, "i915 or xe kernel driver");
    TB_ASSERT_CONTAINS(d->fix, "ZE_ENABLE_LOADER_DEBUG_TRACE=1");
  }
  const tb_backend_report *r = tb_device_list_report(list, TB_BACKEND_XPU);
  assert_true(tbt_report_has(r, "zeInit", "0x78000001 (ZE_RESULT_ERROR_UNINITIALIZED)"));
  assert_false(tbt_report_has(r, "zeDriverGet", NULL)); /* nothing is asked after zeInit failed */
  TB_ASSERT_CONTAINS(r->summary, "0 usable: zeInit failed with 0x78000001 (ZE_RESULT_ERROR_UNINITIALIZED)");
  tb_device_list_destroy(list);
}

static void device_properties_error_marks_one_device(void **state) {
  (void)state;
  xpu_env("intel_max");
  xpu_use_fake("max4", "props_error");
  tb_device_list *list = tbt_discover(XPU_ONLY);
  assert_int_equal(tbt_count(list, TB_BACKEND_XPU), 4);
  const tb_device_info *bad = tbt_nth(list, TB_BACKEND_XPU, 1);
  assert_string_equal(bad->device, "xpu:1");
  assert_false(bad->usable);
  assert_string_equal(bad->reason,
                      "Intel GPU at 0000:3a:00.0: zeDeviceGetProperties failed with 0x70000001 (ZE_RESULT_ERROR_DEVICE_LOST)");
  TB_ASSERT_CONTAINS(bad->fix, "reset the GPU");
  assert_string_equal(bad->pci_bus_id, "0000:3a:00.0");       /* the PCI address still answered */
  assert_string_equal(bad->name, "Intel Data Center GPU Max 1550"); /* named from the bus id table */
  assert_string_equal(bad->architecture, "Xe-HPC");
  assert_false(bad->memory_free_known);
  for (int i = 0; i < 4; i++)
    if (i != 1) assert_true(tbt_nth(list, TB_BACKEND_XPU, i)->usable);
  const tb_backend_report *r = tb_device_list_report(list, TB_BACKEND_XPU);
  assert_string_equal(r->summary, "4 Intel GPUs found, 3 usable");
  assert_true(tbt_report_has(r, "zeDeviceGetProperties", "0x70000001 (ZE_RESULT_ERROR_DEVICE_LOST)"));
  tb_device_list_destroy(list);
}

static void no_sysman_leaves_free_memory_unknown(void **state) {
  (void)state;
  xpu_env("intel_max");
  xpu_use_fake("max4", "no_sysman");
  tb_device_list *list = tbt_discover(XPU_ONLY);
  assert_int_equal(tbt_count(list, TB_BACKEND_XPU), 4);
  for (int i = 0; i < 4; i++) {
    const tb_device_info *d = tbt_nth(list, TB_BACKEND_XPU, i);
    assert_true(d->usable); /* Sysman is a check, not a requirement */
    assert_true(d->memory_total_known);
    assert_int_equal(d->memory_total, 128 * XPU_GIB);
    assert_false(d->memory_free_known);
    assert_int_equal(d->memory_free, 0);
  }
  const tb_backend_report *r = tb_device_list_report(list, TB_BACKEND_XPU);
  assert_true(tbt_report_has(r, "zesInit", "0x78000003 (ZE_RESULT_ERROR_UNSUPPORTED_FEATURE): free memory unknown"));
  assert_false(tbt_report_has(r, "zesMemoryGetState", NULL));
  assert_string_equal(r->summary, "4 Intel GPUs found, 4 usable");
  /* Sysman is reached through zesInit only: the probe never sets ZES_ENABLE_SYSMAN. */
  assert_null(getenv("ZES_ENABLE_SYSMAN"));
  tb_device_list_destroy(list);
}

/* renderD129 is 0600 root: an unprivileged user cannot open GPU 1. */
static void render_node_not_accessible(void **state) {
  (void)state;
  char *root = tbt_fixture_copy("intel_max");
  tbt_tree_sh(root, "chmod 600 dev/dri/renderD129 && chmod 666 dev/dri/renderD128 dev/dri/renderD130 dev/dri/renderD131");
  char line[512];

  /* With Level Zero: the device is listed but unusable. */
  xpu_use_fake("max4", "ok");
  char *seen = xpu_discover_as_nobody(TB_BACKEND_XPU);
  xpu_child_line(seen, "xpu:0", line, sizeof line);
  assert_string_equal(line, "xpu:0|1||");
  xpu_child_line(seen, "xpu:1", line, sizeof line);
  assert_string_equal(line,
                      "xpu:1|0|Intel(R) Data Center GPU Max 1550 at 0000:3a:00.0: render node /dev/dri/renderD129 is not "
                      "accessible (Permission denied)|add the user to the render group (sudo usermod -aG render $USER) "
                      "and log in again");
  TB_ASSERT_CONTAINS(seen, "summary|4 Intel GPUs found, 3 usable");
  free(seen);

  /* Without Level Zero the permission is named first: installing the runtime alone would not help. */
  setenv("TB_ZE_LIB", "/nonexistent/tb-test-no-lib.so", 1);
  seen = xpu_discover_as_nobody(TB_BACKEND_XPU);
  xpu_child_line(seen, "pci:0000:3a:00.0", line, sizeof line);
  TB_ASSERT_CONTAINS(line, "present but render node /dev/dri/renderD129 is not accessible (Permission denied)");
  xpu_child_line(seen, "pci:0000:29:00.0", line, sizeof line);
  TB_ASSERT_CONTAINS(line, "present but libze_loader.so.1 not found");
  free(seen);
  tbt_tree_remove(root);
}

static void no_kernel_driver_and_no_render_node(void **state) {
  (void)state;
  char *root = tbt_fixture_copy("intel_max");
  const char *ca = "sys/bus/pci/devices/0000:ca:00.0";
  char rel[256];
  snprintf(rel, sizeof rel, "%s/uevent", ca);
  tbt_tree_write(root, rel, "PCI_CLASS=38000\nPCI_ID=8086:0BD5\nPCI_SUBSYS_ID=8086:0000\nPCI_SLOT_NAME=0000:ca:00.0\n");
  tbt_tree_sh(root, "rm -rf sys/bus/pci/devices/0000:ca:00.0/driver sys/bus/pci/devices/0000:ca:00.0/drm");
  tbt_tree_sh(root, "rm -f dev/dri/renderD130"); /* GPU 2 keeps its sysfs entry but lost its /dev node */
  tb_device_list *list = tbt_discover(XPU_ONLY);
  const tb_device_info *gpu2 = tbt_nth(list, TB_BACKEND_XPU, 2);
  const tb_device_info *gpu3 = tbt_nth(list, TB_BACKEND_XPU, 3);
  assert_string_equal(gpu2->reason, "Intel GPU 0x0bd5 at 0000:9a:00.0 present but has no render node /dev/dri/renderD130");
  TB_ASSERT_CONTAINS(gpu2->fix, "--device /dev/dri");
  assert_string_equal(gpu3->reason, "Intel GPU 0x0bd5 at 0000:ca:00.0 present but no kernel driver bound");
  TB_ASSERT_CONTAINS(gpu3->fix, "modprobe xe");
  assert_string_equal(tb_device_property(gpu3, "kernel_driver"), "none");
  assert_true(tbt_report_has(tb_device_list_report(list, TB_BACKEND_XPU), "/sys/bus/pci/devices/0000:ca:00.0/drm",
                             "no renderD* entry"));
  tb_device_list_destroy(list);

  /* With Level Zero listing all four, the one whose node is gone is still refused. */
  xpu_use_fake("max4", "ok");
  list = tbt_discover(XPU_ONLY);
  assert_int_equal(tbt_count(list, TB_BACKEND_XPU), 4);
  assert_false(tbt_nth(list, TB_BACKEND_XPU, 2)->usable);
  TB_ASSERT_CONTAINS(tbt_nth(list, TB_BACKEND_XPU, 2)->reason, "has no render node /dev/dri/renderD130");
  assert_true(tbt_nth(list, TB_BACKEND_XPU, 3)->usable); /* no drm entry in sysfs: nothing to hold against it */
  tb_device_list_destroy(list);
  tbt_tree_remove(root);
}

static void gpu_bound_to_vfio(void **state) {
  (void)state;
  char *root = tbt_fixture_copy("intel_max");
  tbt_tree_write(root, "sys/bus/pci/devices/0000:29:00.0/uevent",
                 "DRIVER=vfio-pci\nPCI_CLASS=38000\nPCI_ID=8086:0BD5\nPCI_SLOT_NAME=0000:29:00.0\n");
  tb_device_list *list = tbt_discover(XPU_ONLY);
  const tb_device_info *d = tbt_nth(list, TB_BACKEND_XPU, 0);
  assert_string_equal(d->reason, "Intel GPU 0x0bd5 at 0000:29:00.0 present but bound to kernel driver vfio-pci, not i915 or xe");
  TB_ASSERT_CONTAINS(d->fix, "virtual machine");
  tb_device_list_destroy(list);
  tbt_tree_remove(root);
}

/* Garbage on purpose: a vendor that is not a number, a truncated class, an empty device id, an unknown device
 * id, a bus directory name that is not an address. Bad entries are skipped; the good one is still found. */
static void garbage_sysfs_files_are_skipped(void **state) {
  (void)state;
  char *root = tbt_fixture_copy("intel_max");
  tbt_tree_write(root, "sys/bus/pci/devices/0000:29:00.0/vendor", "zzz\n");
  tbt_tree_write(root, "sys/bus/pci/devices/0000:3a:00.0/class", "0x03");
  tbt_tree_write(root, "sys/bus/pci/devices/0000:9a:00.0/device", "");
  tbt_tree_sh(root, "mkdir -p sys/bus/pci/devices/not-a-bus-id && printf '0x8086\\n' > sys/bus/pci/devices/not-a-bus-id/vendor"
                    " && printf '0x56a0\\n' > sys/bus/pci/devices/not-a-bus-id/device"
                    " && printf '0x030000\\n' > sys/bus/pci/devices/not-a-bus-id/class");
  tbt_tree_write(root, "sys/bus/pci/devices/0000:ca:00.0/device", "0x1234\n");
  tb_device_list *list = tbt_discover(XPU_ONLY);
  assert_int_equal(tbt_count(list, TB_BACKEND_XPU), 1);
  const tb_device_info *d = tbt_nth(list, TB_BACKEND_XPU, 0);
  assert_string_equal(d->device, "pci:0000:ca:00.0");
  assert_string_equal(d->name, "Intel GPU 0x1234"); /* not in the name table */
  assert_string_equal(d->arch_id, "0x1234");
  assert_string_equal(d->architecture, "");   /* not in the capability table either */
  TB_ASSERT_CONTAINS(d->reason, "Intel GPU 0x1234 at 0000:ca:00.0 present but");
  tb_device_list_destroy(list);

  /* The last good function turns to garbage too: no crash, no device. */
  tbt_tree_write(root, "sys/bus/pci/devices/0000:ca:00.0/class", "\xff\xfe garbage");
  list = tbt_discover(XPU_ONLY);
  assert_int_equal(tbt_count(list, TB_BACKEND_XPU), 0);
  assert_string_equal(tb_device_list_report(list, TB_BACKEND_XPU)->summary, "no Intel GPU found");
  tb_device_list_destroy(list);
  tbt_tree_remove(root);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test_setup(zeinit_error_names_the_code, clean_env),
      cmocka_unit_test_setup(device_properties_error_marks_one_device, clean_env),
      cmocka_unit_test_setup(no_sysman_leaves_free_memory_unknown, clean_env),
      cmocka_unit_test_setup(render_node_not_accessible, clean_env),
      cmocka_unit_test_setup(no_kernel_driver_and_no_render_node, clean_env),
      cmocka_unit_test_setup(gpu_bound_to_vfio, clean_env),
      cmocka_unit_test_setup(garbage_sysfs_files_are_skipped, clean_env),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
