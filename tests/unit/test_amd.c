/* The ROCm probe on the recorded 8x MI300X node with the fake HIP and ROCm SMI: usable devices and
 * their facts, and every way they become unusable (no HIP, HIP errors, hidden devices, no /dev/kfd,
 * /dev/kfd without permission, no KFD at all); and this machine, which has no AMD GPU. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include "discover/capability.h"
#include "test_amd_tree.h"

static const char *const buses[] = {"0000:05:00.0", "0000:26:00.0", "0000:46:00.0", "0000:65:00.0",
                                    "0000:85:00.0", "0000:a6:00.0", "0000:c6:00.0", "0000:e5:00.0"};

static const tb_device_info *rocm(const tb_device_list *list, int n) {
  const tb_device_info *d = tbt_nth(list, TB_BACKEND_ROCM, n);
  if (!d) fail_msg("no ROCm device #%d", n);
  return d;
}

static void mi300x_with_hip_and_smi(void **state) {
  (void)state;
  amd_use_fakes();
  tb_device_list *list = tbt_discover(AMD_ROCM_ONLY);
  assert_int_equal(tbt_count(list, TB_BACKEND_ROCM), 8); /* the 2 CPU nodes are not devices */
  const tb_capability *row = tb_capability_amd("gfx942");
  assert_non_null(row);
  for (int i = 0; i < 8; i++) {
    const tb_device_info *d = rocm(list, i);
    char device[16];
    snprintf(device, sizeof device, "rocm:%d", i);
    assert_string_equal(d->device, device);
    assert_int_equal(d->index, i);
    assert_true(d->usable);
    assert_string_equal(d->reason, "");
    assert_string_equal(d->name, "AMD Instinct MI300X");
    assert_string_equal(d->vendor, "AMD");
    assert_int_equal(d->type, TB_DEVICE_DISCRETE_GPU);
    assert_string_equal(d->arch_id, "gfx942");
    assert_string_equal(d->architecture, "CDNA3");
    assert_string_equal(d->architecture, row->architecture);
    assert_int_equal(d->compute_major, 9);
    assert_int_equal(d->compute_minor, 4);
    assert_int_equal(d->compute_units, 304);
    assert_true(d->memory_total_known);
    assert_int_equal(d->memory_total, AMD_MI300X_VRAM);
    /* The fake SMI lists the GPUs in reverse; GPU i uses i+1 GiB. */
    assert_true(d->memory_free_known);
    assert_int_equal(d->memory_free, AMD_MI300X_VRAM - ((uint64_t)(i + 1) << 30));
    assert_string_equal(d->memory_type, "HBM3");
    assert_string_equal(d->pci_bus_id, buses[i]);
    assert_string_equal(d->driver_version, "6.8.5");
    assert_true(d->features & TB_FEATURE_BIT(TB_FEATURE_MATRIX_CORES));
    assert_false(d->features & TB_FEATURE_BIT(TB_FEATURE_UNIFIED_MEMORY));
    assert_true(d->dtypes & TB_DTYPE_BIT(TB_DTYPE_BF16));
    char render[32];
    snprintf(render, sizeof render, "/dev/dri/renderD%d", 128 + i);
    assert_string_equal(tb_device_property(d, "render_node"), render);
    assert_string_equal(tb_device_property(d, "pci_class"), "0x120000");
    assert_string_equal(tb_device_property(d, "numa_node"), i < 4 ? "0" : "1");
    assert_string_equal(tb_device_property(d, "hip_runtime_version"), "6.2.41134");
    assert_string_equal(tb_device_property(d, "coherent_host_access"), "no");
  }
  assert_string_equal(rocm(list, 0)->uuid, "9c8d1f2a3b4c5d01");
  assert_string_equal(tb_device_property(rocm(list, 0), "kfd_node"), "2");
  const tb_device_info *found;
  TB_ASSERT_OK(tb_device_list_find(list, "rocm:7", &found));
  assert_string_equal(found->pci_bus_id, "0000:e5:00.0");

  const tb_backend_report *r = tb_device_list_report(list, TB_BACKEND_ROCM);
  assert_true(r->available);
  assert_int_equal(r->device_count, 8);
  assert_string_equal(r->summary, "8 AMD GPUs usable through HIP 6.2.41134");
  assert_string_equal(r->fix, "");
  assert_true(tbt_report_has(r, "/sys/class/kfd/kfd/topology/nodes", "10 nodes: 2 CPU (skipped), 8 GPU"));
  assert_true(tbt_report_has(r, "/dev/kfd", "read/write OK"));
  assert_true(tbt_report_has(r, "dlopen libamdhip64.so", "fake_hip.so"));
  assert_true(tbt_report_has(r, "hipInit", "0 (hipSuccess)"));
  assert_true(tbt_report_has(r, "hipGetDeviceCount", "8"));
  assert_true(tbt_report_has(r, "rsmi_init", "0 (RSMI_STATUS_SUCCESS)"));
  assert_true(tbt_report_has(r, "PCI vendor 0x1002", "8 found"));
  tb_device_list_destroy(list);
}

static void mi300x_without_hip(void **state) {
  (void)state;
  amd_use_fakes();
  unsetenv("TB_HIP_LIB"); /* search the loader path, where there is no libamdhip64 */
  unsetenv("TB_ROCM_SMI_LIB");
  tb_device_list *list = tbt_discover(AMD_ROCM_ONLY);
  assert_int_equal(tbt_count(list, TB_BACKEND_ROCM), 8);
  for (int i = 0; i < 8; i++) {
    const tb_device_info *d = rocm(list, i);
    char expect[128];
    snprintf(expect, sizeof expect, "pci:%s", buses[i]);
    assert_string_equal(d->device, expect);
    assert_int_equal(d->index, -1);
    assert_false(d->usable);
    snprintf(expect, sizeof expect, "AMD Instinct MI300X (gfx942) at %s present but libamdhip64.so not found", buses[i]);
    TB_ASSERT_CONTAINS(d->reason, expect);
    TB_ASSERT_CONTAINS(d->reason, "libamdhip64.so.6, libamdhip64.so.5, libamdhip64.so");
    assert_string_equal(d->fix, "install ROCm (the hip-runtime-amd package) or set TB_HIP_LIB to the path of libamdhip64.so");
    /* What the KFD says is still known; free memory is not (no ROCm SMI). */
    assert_string_equal(d->arch_id, "gfx942");
    assert_int_equal(d->compute_units, 304);
    assert_int_equal(d->memory_total, AMD_MI300X_VRAM);
    assert_false(d->memory_free_known);
    assert_string_equal(d->driver_version, "6.8.5"); /* /sys/module/amdgpu/version */
  }
  const tb_backend_report *r = tb_device_list_report(list, TB_BACKEND_ROCM);
  assert_false(r->available);
  TB_ASSERT_CONTAINS(r->summary, "8 AMD GPUs found, 0 usable");
  TB_ASSERT_CONTAINS(r->summary, "libamdhip64.so not found");
  TB_ASSERT_CONTAINS(r->fix, "hip-runtime-amd");
  assert_true(tbt_report_has(r, "dlopen libamdhip64.so", "not found"));
  assert_true(tbt_report_has(r, "dlopen librocm_smi64.so", "free memory is unknown"));
  tb_device_list_destroy(list);
}

static void hip_library_from_env_missing(void **state) {
  (void)state;
  amd_use_fakes();
  setenv("TB_HIP_LIB", "/nonexistent/libamdhip64.so", 1);
  tb_device_list *list = tbt_discover(AMD_ROCM_ONLY);
  const tb_device_info *d = rocm(list, 0);
  assert_false(d->usable);
  TB_ASSERT_CONTAINS(d->reason, "TB_HIP_LIB=/nonexistent/libamdhip64.so could not be loaded");
  TB_ASSERT_CONTAINS(d->fix, "TB_HIP_LIB");
  tb_device_list_destroy(list);
}

static void expect_hip_failure(const char *mode, const char *reason, const char *fix) {
  amd_use_fakes();
  setenv("FAKE_HIP_MODE", mode, 1);
  tb_device_list *list = tbt_discover(AMD_ROCM_ONLY);
  assert_int_equal(tbt_count(list, TB_BACKEND_ROCM), 8);
  for (int i = 0; i < 8; i++) {
    const tb_device_info *d = rocm(list, i);
    assert_false(d->usable);
    assert_int_equal(d->index, -1);
    TB_ASSERT_CONTAINS(d->reason, reason);
    TB_ASSERT_CONTAINS(d->fix, fix);
    assert_true(d->memory_free_known); /* ROCm SMI still answers */
  }
  const tb_backend_report *r = tb_device_list_report(list, TB_BACKEND_ROCM);
  TB_ASSERT_CONTAINS(r->summary, reason);
  tb_device_list_destroy(list);
}

static void hip_errors(void **state) {
  (void)state;
  expect_hip_failure("error", "hipInit failed with 35 (hipErrorInsufficientDriver)", "amdgpu-dkms");
  expect_hip_failure("no_device", "hipGetDeviceCount failed with 100 (hipErrorNoDevice)", "HIP_VISIBLE_DEVICES");
  expect_hip_failure("count_error", "hipGetDeviceCount failed with 999 (hipErrorUnknown)", "dmesg");
}

static void hip_sees_only_some(void **state) {
  (void)state;
  amd_use_fakes();
  setenv("FAKE_HIP_DEVICES", "mi300x_first4", 1);
  tb_device_list *list = tbt_discover(AMD_ROCM_ONLY);
  assert_int_equal(tbt_count(list, TB_BACKEND_ROCM), 8);
  for (int i = 0; i < 8; i++) {
    const tb_device_info *d = rocm(list, i);
    assert_string_equal(d->pci_bus_id, buses[i]);
    if (i < 4) {
      assert_true(d->usable);
      assert_int_equal(d->index, i);
    } else {
      assert_false(d->usable);
      assert_int_equal(d->index, -1);
      TB_ASSERT_CONTAINS(d->reason, "is not among the 4 devices HIP lists");
      TB_ASSERT_CONTAINS(d->fix, "ROCR_VISIBLE_DEVICES");
    }
  }
  TB_ASSERT_CONTAINS(tb_device_list_report(list, TB_BACKEND_ROCM)->summary, "8 AMD GPUs found, 4 usable");
  tb_device_list_destroy(list);
}

static void smi_init_error(void **state) {
  (void)state;
  amd_use_fakes();
  setenv("FAKE_RSMI_MODE", "init_error", 1);
  tb_device_list *list = tbt_discover(AMD_ROCM_ONLY);
  for (int i = 0; i < 8; i++) {
    const tb_device_info *d = rocm(list, i);
    assert_true(d->usable);
    assert_false(d->memory_free_known);
    assert_int_equal(d->memory_total, AMD_MI300X_VRAM);
  }
  assert_true(tbt_report_has(tb_device_list_report(list, TB_BACKEND_ROCM), "rsmi_init", "8 (RSMI_STATUS_INIT_ERROR)"));
  tb_device_list_destroy(list);
}

static void dev_kfd_missing(void **state) {
  (void)state;
  amd_use_fakes();
  char *root = tbt_fixture_copy(AMD_FIXTURE);
  char path[1024];
  snprintf(path, sizeof path, "%s/dev/kfd", root);
  assert_int_equal(unlink(path), 0);
  tb_device_list *list = tbt_discover(AMD_ROCM_ONLY);
  assert_int_equal(tbt_count(list, TB_BACKEND_ROCM), 8);
  for (int i = 0; i < 8; i++) {
    const tb_device_info *d = rocm(list, i);
    assert_false(d->usable);
    TB_ASSERT_CONTAINS(d->reason, "present but /dev/kfd is missing");
    TB_ASSERT_CONTAINS(d->fix, "--device=/dev/kfd");
  }
  assert_true(tbt_report_has(tb_device_list_report(list, TB_BACKEND_ROCM), "/dev/kfd", "missing"));
  tb_device_list_destroy(list);
  tbt_tree_remove(root);
}

static void render_node_missing(void **state) {
  (void)state;
  amd_use_fakes();
  char *root = tbt_fixture_copy(AMD_FIXTURE);
  char path[1024];
  snprintf(path, sizeof path, "%s/dev/dri/renderD130", root);
  assert_int_equal(unlink(path), 0);
  tb_device_list *list = tbt_discover(AMD_ROCM_ONLY);
  const tb_device_info *d = tbt_nth(list, TB_BACKEND_ROCM, 7); /* unusable ones come after the usable */
  assert_non_null(d);
  assert_false(d->usable);
  assert_string_equal(d->pci_bus_id, "0000:46:00.0");
  TB_ASSERT_CONTAINS(d->reason, "/dev/dri/renderD130 is missing");
  assert_true(rocm(list, 2)->usable);
  assert_string_equal(rocm(list, 2)->device, "rocm:3");
  tb_device_list_destroy(list);
  tbt_tree_remove(root);
}

/* Integrated when the PCI id is MI300A, or when the KFD GPU node has CPU cores; discrete otherwise. */
static void apu_rule(void **state) {
  (void)state;
  amd_use_fakes();
  char *root = tbt_fixture_copy(AMD_FIXTURE);
  amd_tree_set_prop(root, "sys/class/kfd/kfd/topology/nodes/2/properties", "device_id", "29856"); /* 0x74a0 */
  amd_tree_set_prop(root, "sys/class/kfd/kfd/topology/nodes/3/properties", "cpu_cores_count", "24");
  tb_device_list *list = tbt_discover(AMD_ROCM_ONLY);
  const tb_device_info *mi300a = rocm(list, 0), *cores = rocm(list, 1), *plain = rocm(list, 2);
  assert_string_equal(mi300a->name, "AMD Instinct MI300A");
  assert_int_equal(mi300a->type, TB_DEVICE_INTEGRATED_GPU);
  assert_true(mi300a->features & TB_FEATURE_BIT(TB_FEATURE_UNIFIED_MEMORY));
  assert_string_equal(mi300a->architecture, "CDNA3");
  assert_int_equal(cores->type, TB_DEVICE_INTEGRATED_GPU);
  assert_int_equal(plain->type, TB_DEVICE_DISCRETE_GPU);
  assert_false(plain->features & TB_FEATURE_BIT(TB_FEATURE_UNIFIED_MEMORY));
  tb_device_list_destroy(list);
  tbt_tree_remove(root);
}

/* Run as nobody: probes and writes "usable|reason|fix" per device, then the summary. */
static int probe_as_nobody(const void *arg, FILE *out) {
  (void)arg;
  tb_discover_options opts = {.size = sizeof opts, .backends = AMD_ROCM_ONLY};
  tb_device_list *list = NULL;
  if (tb_discover(&opts, &list) != TB_OK) return 10;
  for (size_t i = 0; i < tb_device_list_count(list); i++) {
    const tb_device_info *d = tb_device_list_get(list, i);
    fprintf(out, "%d|%s|%s\n", d->usable ? 1 : 0, d->reason, d->fix);
  }
  fprintf(out, "summary|%s\n", tb_device_list_report(list, TB_BACKEND_ROCM)->summary);
  tb_device_list_destroy(list);
  return 0;
}

static void dev_kfd_not_accessible(void **state) {
  (void)state;
  if (geteuid() != 0) skip(); /* only root can drop to another user; CI runs the suite as root */
  amd_use_fakes();
  char *root = tbt_fixture_copy(AMD_FIXTURE);
  char path[1024];
  snprintf(path, sizeof path, "%s/dev/kfd", root);
  assert_int_equal(chmod(path, 0600), 0);
  char *text = tbt_run_as_nobody(probe_as_nobody, NULL);
  int lines = 0;
  for (char *line = strtok(text, "\n"); line; line = strtok(NULL, "\n")) {
    if (strncmp(line, "summary|", 8) == 0) {
      TB_ASSERT_CONTAINS(line, "8 AMD GPUs found, 0 usable");
      continue;
    }
    lines++;
    assert_true(line[0] == '0');
    TB_ASSERT_CONTAINS(line, "present but /dev/kfd not accessible (Permission denied)");
    TB_ASSERT_CONTAINS(line, "add the user to the render and video groups (sudo usermod -aG render,video $USER) and log in again");
  }
  assert_int_equal(lines, 8);
  free(text);
  tbt_tree_remove(root);
}

/* The GPUs are on the bus but amdgpu is not loaded: no KFD topology, no /dev/kfd. */
static void no_kfd_topology(void **state) {
  (void)state;
  amd_use_fakes();
  char *root = tbt_fixture_copy(AMD_FIXTURE);
  tbt_tree_sh(root, "rm -rf sys/class/kfd dev/kfd");
  /* The last GPU is bound to vfio-pci for a VM. */
  tbt_tree_write(root, "sys/bus/pci/devices/0000:e5:00.0/uevent",
                 "DRIVER=vfio-pci\nPCI_CLASS=120000\nPCI_ID=1002:74A1\nPCI_SUBSYS_ID=1002:74A1\n"
                 "PCI_SLOT_NAME=0000:e5:00.0\n");
  unsetenv("TB_HIP_LIB");
  tb_device_list *list = tbt_discover(AMD_ROCM_ONLY);
  assert_int_equal(tbt_count(list, TB_BACKEND_ROCM), 8);
  for (int i = 0; i < 8; i++) {
    const tb_device_info *d = rocm(list, i);
    assert_false(d->usable);
    assert_string_equal(d->pci_bus_id, buses[i]);
    assert_string_equal(d->name, "AMD Instinct MI300X");
    assert_string_equal(d->arch_id, ""); /* no gfx target without the KFD: never guessed from the name */
    if (i < 7) {
      char expect[160];
      snprintf(expect, sizeof expect, "AMD Instinct MI300X at %s present but amdgpu kernel driver not loaded (no /dev/kfd)",
               buses[i]);
      TB_ASSERT_CONTAINS(d->reason, expect);
      TB_ASSERT_CONTAINS(d->fix, "modprobe amdgpu");
    } else {
      TB_ASSERT_CONTAINS(d->reason, "is bound to the vfio-pci driver, not amdgpu");
    }
  }
  assert_true(tbt_report_has(tb_device_list_report(list, TB_BACKEND_ROCM), "/sys/class/kfd", "missing"));
  tb_device_list_destroy(list);
  tbt_tree_remove(root);
}

/* This machine: no KFD, no AMD GPU on the bus, no ROCm libraries. */
static void machine_without_amd(void **state) {
  (void)state;
  tbt_clear_env();
  tbt_no_vendor_libs();
  tb_device_list *list = tbt_discover(AMD_ROCM_ONLY);
  assert_int_equal(tbt_count(list, TB_BACKEND_ROCM), 0);
  const tb_backend_report *r = tb_device_list_report(list, TB_BACKEND_ROCM);
  assert_false(r->available);
  assert_int_equal(r->device_count, 0);
  TB_ASSERT_CONTAINS(r->summary, "no AMD GPU found");
  assert_true(tbt_report_has(r, "/sys/class/kfd/kfd/topology/nodes", "missing"));
  /* nothing in sysfs could use HIP, so it is not opened at all (see test_discover_reload.c) */
  assert_true(tbt_report_has(r, "dlopen libamdhip64.so", "not opened: no AMD GPU in the KFD topology or on the PCI bus"));
  tb_device_list_destroy(list);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(mi300x_with_hip_and_smi),
      cmocka_unit_test(mi300x_without_hip),
      cmocka_unit_test(hip_library_from_env_missing),
      cmocka_unit_test(hip_errors),
      cmocka_unit_test(hip_sees_only_some),
      cmocka_unit_test(smi_init_error),
      cmocka_unit_test(dev_kfd_missing),
      cmocka_unit_test(render_node_missing),
      cmocka_unit_test(apu_rule),
      cmocka_unit_test(dev_kfd_not_accessible),
      cmocka_unit_test(no_kfd_topology),
      cmocka_unit_test(machine_without_amd),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
