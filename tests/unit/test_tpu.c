/* The TPU probe on a recorded TPU v5e VM (4 chips on vfio-pci, a gVNIC, libtpu installed with pip) and on
 * copies of it broken on purpose: libtpu absent or given by TB_TPU_LIB, a /dev/vfio node missing or closed
 * to the user, v4 chips without /dev/accel nodes, v2/v3 told apart by subsystem id, an unknown chip, and this
 * machine (no TPU). libtpu is never loaded: the fixture's libtpu.so is an empty file. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include "discover/capability.h"
#include "test_intel_tree.h" /* the unprivileged child */

#define TPU_ONLY (1u << TB_BACKEND_TPU)

static const char *const v5e_buses[4] = {"0000:00:05.0", "0000:00:06.0", "0000:00:07.0", "0000:00:08.0"};

static int clean_env(void **state) {
  (void)state;
  tbt_clear_env();
  tbt_no_vendor_libs();
  unsetenv("TPU_LIBRARY_PATH");
  return 0;
}

static void v5e_vm_with_libtpu(void **state) {
  (void)state;
  tbt_use_fixture("tpu_v5e");
  unsetenv("TB_TPU_LIB"); /* found where pip put it, under the fixture root */
  tb_device_list *list = tbt_discover(TPU_ONLY);
  assert_int_equal(tbt_count(list, TB_BACKEND_TPU), 4); /* the gVNIC (1ae0:0042) is not a TPU */
  const tb_capability *row = tb_capability_tpu("v5e");
  assert_non_null(row);
  for (int i = 0; i < 4; i++) {
    const tb_device_info *d = tbt_nth(list, TB_BACKEND_TPU, i);
    char device[16], node[32];
    snprintf(device, sizeof device, "tpu:%d", i);
    snprintf(node, sizeof node, "/dev/vfio/%d", i);
    assert_string_equal(d->device, device);
    assert_int_equal(d->index, i);
    assert_true(d->usable);
    assert_string_equal(d->reason, "");
    assert_string_equal(d->name, "TPU v5e");
    assert_string_equal(d->vendor, "Google");
    assert_int_equal(d->type, TB_DEVICE_TPU);
    assert_string_equal(d->arch_id, "v5e");
    assert_string_equal(d->architecture, row->architecture);
    assert_true(d->features & TB_FEATURE_BIT(TB_FEATURE_MXU));
    assert_true(d->dtypes & TB_DTYPE_BIT(TB_DTYPE_BF16));
    assert_string_equal(d->pci_bus_id, v5e_buses[i]);
    assert_int_equal(d->compute_units, 1);
    assert_true(d->memory_total_known);
    assert_int_equal(d->memory_total, 16ull << 30);
    assert_false(d->memory_free_known);
    assert_string_equal(tb_device_property(d, "chip_count"), "4");
    assert_string_equal(tb_device_property(d, "dev_node"), node);
    assert_string_equal(tb_device_property(d, "kernel_driver"), "vfio-pci");
    assert_string_equal(tb_device_property(d, "pci_device_id"), "0x0063");
    assert_string_equal(tb_device_property(d, "libtpu"), "/usr/local/lib/python3.10/dist-packages/libtpu/libtpu.so");
  }
  const tb_backend_report *r = tb_device_list_report(list, TB_BACKEND_TPU);
  assert_true(r->available);
  assert_string_equal(r->summary, "4 TPU chips found, 4 usable");
  assert_true(tbt_report_has(r, "/sys/bus/pci/devices", "4 TPU chips (vendor 0x1ae0), 1 other Google function ignored"));
  assert_true(tbt_report_has(r, "libtpu.so (not loaded)", "dist-packages/libtpu/libtpu.so"));
  assert_true(tbt_report_has(r, "/dev/vfio/3", "read-write"));
  tb_device_list_destroy(list);
}

static void v5e_vm_without_libtpu(void **state) {
  (void)state;
  tbt_use_fixture("tpu_v5e"); /* TB_TPU_LIB points at a file that does not exist */
  tb_device_list *list = tbt_discover(TPU_ONLY);
  assert_int_equal(tbt_count(list, TB_BACKEND_TPU), 4);
  for (int i = 0; i < 4; i++) {
    const tb_device_info *d = tbt_nth(list, TB_BACKEND_TPU, i);
    char reason[256];
    snprintf(reason, sizeof reason,
             "TPU v5e chip at %s present but libtpu.so not found (TB_TPU_LIB=/nonexistent/tb-test-no-lib.so)", v5e_buses[i]);
    assert_int_equal(d->index, i); /* still listed, with its generation */
    assert_false(d->usable);
    assert_string_equal(d->reason, reason);
    assert_string_equal(d->fix, "pip install libtpu (or jax[tpu]), or set TB_TPU_LIB to the path of libtpu.so");
    assert_string_equal(d->arch_id, "v5e");
    assert_null(tb_device_property(d, "libtpu"));
  }
  const tb_backend_report *r = tb_device_list_report(list, TB_BACKEND_TPU);
  assert_false(r->available);
  assert_string_equal(r->summary, "4 TPU chips found, 0 usable");
  TB_ASSERT_CONTAINS(r->fix, "pip install libtpu");
  assert_true(tbt_report_has(r, "libtpu.so (not loaded)", "TB_TPU_LIB=/nonexistent/tb-test-no-lib.so: no such file"));
  tb_device_list_destroy(list);
}

/* Nothing under the usual places either: the reason says where it looked. */
static void libtpu_absent_from_usual_places(void **state) {
  (void)state;
  char *root = tbt_fixture_copy("tpu_v5e");
  tbt_tree_sh(root, "rm -rf usr");
  unsetenv("TB_TPU_LIB");
  tb_device_list *list = tbt_discover(TPU_ONLY);
  const tb_device_info *d = tbt_nth(list, TB_BACKEND_TPU, 0);
  assert_false(d->usable);
  TB_ASSERT_CONTAINS(d->reason, "present but libtpu.so not found (/usr/lib, /usr/local/lib, /lib and python3.*");
  TB_ASSERT_CONTAINS(d->fix, "pip install libtpu");
  tb_device_list_destroy(list);
  tbt_tree_remove(root);
}

static void tb_tpu_lib_names_an_existing_file(void **state) {
  (void)state;
  char *root = tbt_fixture_copy("tpu_v5e");
  tbt_tree_sh(root, "rm -rf usr");
  char lib[] = "/tmp/tb-libtpu-XXXXXX";
  int fd = mkstemp(lib);
  assert_true(fd >= 0);
  close(fd);
  setenv("TB_TPU_LIB", lib, 1);
  tb_device_list *list = tbt_discover(TPU_ONLY);
  for (int i = 0; i < 4; i++) {
    const tb_device_info *d = tbt_nth(list, TB_BACKEND_TPU, i);
    assert_true(d->usable);
    assert_string_equal(tb_device_property(d, "libtpu"), lib);
  }
  tb_device_list_destroy(list);

  /* A directory is not a library. */
  setenv("TB_TPU_LIB", root, 1);
  list = tbt_discover(TPU_ONLY);
  assert_false(tbt_nth(list, TB_BACKEND_TPU, 0)->usable);
  tb_device_list_destroy(list);
  unlink(lib);
  tbt_tree_remove(root);
}

static void vfio_node_missing(void **state) {
  (void)state;
  char *root = tbt_fixture_copy("tpu_v5e");
  tbt_tree_sh(root, "rm -f dev/vfio/2");
  unsetenv("TB_TPU_LIB");
  tb_device_list *list = tbt_discover(TPU_ONLY);
  const tb_device_info *d = tbt_nth(list, TB_BACKEND_TPU, 2);
  assert_false(d->usable);
  assert_string_equal(d->reason, "TPU v5e chip at 0000:00:07.0 present but /dev/vfio/2 does not exist");
  TB_ASSERT_CONTAINS(d->fix, "--privileged");
  assert_true(tbt_nth(list, TB_BACKEND_TPU, 1)->usable);
  assert_string_equal(tb_device_list_report(list, TB_BACKEND_TPU)->summary, "4 TPU chips found, 3 usable");
  tb_device_list_destroy(list);
  tbt_tree_remove(root);
}

/* The IOMMU group, not the chip's rank, names the vfio node. */
static void vfio_node_follows_iommu_group(void **state) {
  (void)state;
  char *root = tbt_fixture_copy("tpu_v5e");
  tbt_tree_sh(root, "ln -sfn ../../../kernel/iommu_groups/17 sys/bus/pci/devices/0000:00:05.0/iommu_group");
  unsetenv("TB_TPU_LIB");
  tb_device_list *list = tbt_discover(TPU_ONLY);
  const tb_device_info *d = tbt_nth(list, TB_BACKEND_TPU, 0);
  assert_string_equal(tb_device_property(d, "dev_node"), "/dev/vfio/17");
  assert_string_equal(d->reason, "TPU v5e chip at 0000:00:05.0 present but /dev/vfio/17 does not exist");
  tb_device_list_destroy(list);
  tbt_tree_remove(root);
}

static void vfio_node_not_accessible(void **state) {
  (void)state;
  char *root = tbt_fixture_copy("tpu_v5e");
  tbt_tree_sh(root, "chmod 666 dev/vfio/0 dev/vfio/2 dev/vfio/3 && chmod 600 dev/vfio/1");
  unsetenv("TB_TPU_LIB");
  char *seen = xpu_discover_as_nobody(TB_BACKEND_TPU);
  char line[512];
  xpu_child_line(seen, "tpu:0", line, sizeof line);
  assert_string_equal(line, "tpu:0|1||");
  xpu_child_line(seen, "tpu:1", line, sizeof line);
  TB_ASSERT_CONTAINS(line, "tpu:1|0|TPU v5e chip at 0000:00:06.0 present but /dev/vfio/1 is not accessible (Permission denied)|");
  TB_ASSERT_CONTAINS(line, "read-write access");
  free(seen);
  tbt_tree_remove(root);
}

static void set_chip_ids(const char *root, const char *device, const char *subsystem) {
  for (int i = 0; i < 4; i++) {
    char rel[128];
    snprintf(rel, sizeof rel, "sys/bus/pci/devices/%s/device", v5e_buses[i]);
    tbt_tree_write(root, rel, device);
    snprintf(rel, sizeof rel, "sys/bus/pci/devices/%s/subsystem_device", v5e_buses[i]);
    tbt_tree_write(root, rel, subsystem);
  }
}

/* TPU v4 chips are opened through /dev/accelN. */
static void v4_chips_need_accel_nodes(void **state) {
  (void)state;
  char *root = tbt_fixture_copy("tpu_v5e");
  set_chip_ids(root, "0x005e\n", "0x0000\n");
  tbt_tree_sh(root, "touch dev/accel0");
  unsetenv("TB_TPU_LIB");
  tb_device_list *list = tbt_discover(TPU_ONLY);
  assert_int_equal(tbt_count(list, TB_BACKEND_TPU), 4);
  const tb_device_info *d0 = tbt_nth(list, TB_BACKEND_TPU, 0);
  const tb_device_info *d1 = tbt_nth(list, TB_BACKEND_TPU, 1);
  assert_string_equal(d0->name, "TPU v4");
  assert_string_equal(d0->arch_id, "v4");
  assert_string_equal(d0->architecture, tb_capability_tpu("v4")->architecture);
  assert_int_equal(d0->compute_units, 2);
  assert_int_equal(d0->memory_total, 32ull << 30);
  assert_string_equal(tb_device_property(d0, "dev_node"), "/dev/accel0");
  assert_true(d0->usable);
  assert_false(d1->usable);
  assert_string_equal(d1->reason, "TPU v4 chip at 0000:00:06.0 present but /dev/accel1 does not exist");
  tb_device_list_destroy(list);
  tbt_tree_remove(root);
}

/* v2 and v3 share device id 0x0027; the subsystem id tells them apart. An unknown subsystem, or an unknown
 * Google accelerator, is listed unusable rather than guessed. */
static void v2_v3_and_unknown_chips(void **state) {
  (void)state;
  char *root = tbt_fixture_copy("tpu_v5e");
  set_chip_ids(root, "0x0027\n", "0x004f\n");
  tbt_tree_write(root, "sys/bus/pci/devices/0000:00:08.0/subsystem_device", "0x0099\n");
  tbt_tree_write(root, "sys/bus/pci/devices/0000:00:07.0/device", "0x0099\n");
  tbt_tree_sh(root, "touch dev/accel0 dev/accel1");
  unsetenv("TB_TPU_LIB");
  tb_device_list *list = tbt_discover(TPU_ONLY);
  assert_int_equal(tbt_count(list, TB_BACKEND_TPU), 4);
  const tb_device_info *d = tbt_nth(list, TB_BACKEND_TPU, 0);
  assert_string_equal(d->name, "TPU v3");
  assert_string_equal(d->arch_id, "v3");
  assert_string_equal(d->architecture, tb_capability_tpu("v3")->architecture);
  assert_int_equal(d->compute_units, 2);
  assert_true(d->usable);
  assert_string_equal(tbt_nth(list, TB_BACKEND_TPU, 1)->device, "tpu:1");
  const tb_device_info *odd = tbt_nth(list, TB_BACKEND_TPU, 2);
  assert_string_equal(odd->device, "pci:0000:00:07.0");
  assert_false(odd->usable);
  assert_string_equal(odd->reason,
                      "Google accelerator 0x0099 (subsystem 0x004f) at 0000:00:07.0 is not a TPU generation TensorBridge knows");
  const tb_device_info *v2v3 = tbt_nth(list, TB_BACKEND_TPU, 3);
  assert_string_equal(v2v3->device, "pci:0000:00:08.0");
  assert_string_equal(v2v3->name, "Google accelerator 0x0027");
  assert_string_equal(tb_device_list_report(list, TB_BACKEND_TPU)->summary, "2 TPU chips found, 2 usable");
  tb_device_list_destroy(list);
  tbt_tree_remove(root);
}

static void garbage_pci_files_are_skipped(void **state) {
  (void)state;
  char *root = tbt_fixture_copy("tpu_v5e");
  tbt_tree_write(root, "sys/bus/pci/devices/0000:00:05.0/vendor", "google\n");
  tbt_tree_write(root, "sys/bus/pci/devices/0000:00:06.0/device", "0x");
  tbt_tree_sh(root, "rm -f sys/bus/pci/devices/0000:00:07.0/iommu_group"); /* falls back to the chip's rank */
  unsetenv("TB_TPU_LIB");
  tb_device_list *list = tbt_discover(TPU_ONLY);
  assert_int_equal(tbt_count(list, TB_BACKEND_TPU), 2);
  assert_string_equal(tbt_nth(list, TB_BACKEND_TPU, 0)->pci_bus_id, "0000:00:07.0");
  assert_string_equal(tb_device_property(tbt_nth(list, TB_BACKEND_TPU, 0), "dev_node"), "/dev/vfio/0");
  assert_string_equal(tb_device_property(tbt_nth(list, TB_BACKEND_TPU, 0), "chip_count"), "2");
  assert_string_equal(tb_device_property(tbt_nth(list, TB_BACKEND_TPU, 1), "dev_node"), "/dev/vfio/3");
  tb_device_list_destroy(list);
  tbt_tree_remove(root);
}

/* This machine: no TPU on the bus. libtpu's presence alone is only a check. */
static void this_machine_has_no_tpu(void **state) {
  (void)state;
  tb_device_list *list = tbt_discover(TPU_ONLY | XPU_ONLY);
  assert_int_equal(tbt_count(list, TB_BACKEND_TPU), 0);
  assert_int_equal(tbt_count(list, TB_BACKEND_XPU), 0);
  const tb_backend_report *r = tb_device_list_report(list, TB_BACKEND_TPU);
  assert_false(r->available);
  assert_string_equal(r->summary, "no TPU found");
  assert_string_equal(r->fix, "");
  assert_true(tbt_report_has(r, "/sys/bus/pci/devices", "0 TPU chips"));
  assert_string_equal(tb_device_list_report(list, TB_BACKEND_XPU)->summary, "no Intel GPU found");
  tb_device_list_destroy(list);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test_setup(v5e_vm_with_libtpu, clean_env),
      cmocka_unit_test_setup(v5e_vm_without_libtpu, clean_env),
      cmocka_unit_test_setup(libtpu_absent_from_usual_places, clean_env),
      cmocka_unit_test_setup(tb_tpu_lib_names_an_existing_file, clean_env),
      cmocka_unit_test_setup(vfio_node_missing, clean_env),
      cmocka_unit_test_setup(vfio_node_follows_iommu_group, clean_env),
      cmocka_unit_test_setup(vfio_node_not_accessible, clean_env),
      cmocka_unit_test_setup(v4_chips_need_accel_nodes, clean_env),
      cmocka_unit_test_setup(v2_v3_and_unknown_chips, clean_env),
      cmocka_unit_test_setup(garbage_pci_files_are_skipped, clean_env),
      cmocka_unit_test_setup(this_machine_has_no_tpu, clean_env),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
