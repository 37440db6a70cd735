/* The NVIDIA probe when things go wrong: the CUDA toolkit's stub libcuda (the real one and a fake),
 * cuInit errors, garbage attributes, a library without cuInit, NVML missing or failing, /dev nodes
 * missing or not accessible, and garbage sysfs and /proc files. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include "test_util.h"

#define CUDA_ONLY (1u << TB_BACKEND_CUDA)
#define REAL_STUB "/usr/local/cuda/lib64/stubs/libcuda.so"

static void check_stub(const char *path_part) {
  tbt_use_fixture("h100x8");
  setenv("TB_NVML_LIB", "/nonexistent/tb-test-no-lib.so", 1);
  tb_device_list *list = tbt_discover(CUDA_ONLY);
  assert_int_equal(tbt_count(list, TB_BACKEND_CUDA), 8);
  for (int i = 0; i < 8; i++) {
    const tb_device_info *d = tbt_nth(list, TB_BACKEND_CUDA, i);
    assert_int_equal(d->index, -1);
    assert_false(d->usable);
    TB_ASSERT_CONTAINS(d->reason, "the CUDA toolkit's stub libcuda was found at ");
    TB_ASSERT_CONTAINS(d->reason, path_part);
    TB_ASSERT_CONTAINS(d->reason, "it is not a driver (cuInit returned 34 CUDA_ERROR_STUB_LIBRARY)");
    TB_ASSERT_CONTAINS(d->fix, "install the NVIDIA driver");
    TB_ASSERT_CONTAINS(d->fix, "stubs");
  }
  const tb_backend_report *r = tb_device_list_report(list, TB_BACKEND_CUDA);
  TB_ASSERT_CONTAINS(r->summary, "8 NVIDIA GPUs found, 0 usable: the CUDA toolkit's stub libcuda");
  assert_true(tbt_report_has(r, "cuInit", "34 CUDA_ERROR_STUB_LIBRARY (the CUDA toolkit's stub library, not a"));
  tb_device_list_destroy(list);

  /* No GPU on the bus: still not a silent zero. */
  setenv("TB_FSROOT", "/nonexistent/tb-empty-root", 1);
  list = tbt_discover(CUDA_ONLY);
  assert_int_equal(tbt_count(list, TB_BACKEND_CUDA), 0);
  r = tb_device_list_report(list, TB_BACKEND_CUDA);
  TB_ASSERT_CONTAINS(r->summary, "no NVIDIA GPU found");
  TB_ASSERT_CONTAINS(r->summary, "is the CUDA toolkit's stub, not a driver (cuInit returned 34 ");
  TB_ASSERT_CONTAINS(r->summary, "CUDA_ERROR_STUB_LIBRARY");
  tb_device_list_destroy(list);
}

static void real_toolkit_stub(void **state) {
  (void)state;
  if (access(REAL_STUB, R_OK) != 0) skip(); /* no CUDA toolkit installed here; fake_stub covers the path */
  setenv("TB_CUDA_LIB", REAL_STUB, 1);
  check_stub("stubs/libcuda.so");
}

static void fake_stub(void **state) {
  (void)state;
  tbt_use_nvidia_fakes();
  setenv("FAKE_CUDA_MODE", "stub", 1);
  check_stub("fake_cuda.so");
}

static void cuinit_errors(void **state) {
  (void)state;
  static const struct {
    const char *code, *reason, *fix;
  } cases[] = {
      {"999", "cuInit failed with 999 CUDA_ERROR_UNKNOWN", "dmesg"},
      /* The fake's cuGetErrorName does not know 802: the local table names it. */
      {"802", "cuInit failed with 802 CUDA_ERROR_SYSTEM_NOT_READY", "nvidia-fabricmanager"},
      {"12345", "cuInit failed with 12345 CUDA error 12345", "nvidia-smi"},
  };
  tbt_use_fixture("h100x8");
  tbt_use_nvidia_fakes();
  setenv("FAKE_NVML_MODE", "old", 1); /* cuInit runs only when NVML cannot list (test_nvidia_nvml.c) */
  setenv("FAKE_CUDA_MODE", "init_error", 1);
  for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++) {
    setenv("FAKE_CUDA_INIT_CODE", cases[c].code, 1);
    tb_device_list *list = tbt_discover(CUDA_ONLY);
    assert_int_equal(tbt_count(list, TB_BACKEND_CUDA), 8);
    const tb_device_info *d = tbt_nth(list, TB_BACKEND_CUDA, 2);
    assert_false(d->usable);
    assert_string_equal(d->device, "pci:0000:3a:00.0");
    TB_ASSERT_CONTAINS(d->reason, "NVIDIA GPU at 0000:3a:00.0 present but ");
    TB_ASSERT_CONTAINS(d->reason, cases[c].reason);
    TB_ASSERT_CONTAINS(d->fix, cases[c].fix);
    assert_true(d->memory_free_known); /* NVML works without libcuda */
    const tb_backend_report *r = tb_device_list_report(list, TB_BACKEND_CUDA);
    TB_ASSERT_CONTAINS(r->summary, cases[c].reason);
    assert_true(tbt_report_has(r, "cuInit", cases[c].code));
    tb_device_list_destroy(list);
  }

  setenv("FAKE_CUDA_MODE", "no_device", 1);
  tb_device_list *list = tbt_discover(CUDA_ONLY);
  TB_ASSERT_CONTAINS(tbt_nth(list, TB_BACKEND_CUDA, 0)->reason, "cuInit failed with 100 CUDA_ERROR_NO_DEVICE");
  TB_ASSERT_CONTAINS(tbt_nth(list, TB_BACKEND_CUDA, 0)->fix, "CUDA_VISIBLE_DEVICES");
  tb_device_list_destroy(list);
}

static void garbage_attributes(void **state) {
  (void)state;
  tbt_use_fixture("h100x8");
  tbt_use_nvidia_fakes();
  setenv("FAKE_NVML_MODE", "old", 1); /* the attributes are libcuda's: it lists the GPUs */
  setenv("FAKE_CUDA_MODE", "bad_attr", 1);
  tb_device_list *list = tbt_discover(CUDA_ONLY);
  assert_int_equal(tbt_count(list, TB_BACKEND_CUDA), 8);
  const tb_device_info *d = tbt_nth(list, TB_BACKEND_CUDA, 0);
  assert_string_equal(d->device, "cuda:0");
  assert_false(d->usable);
  assert_string_equal(d->reason, "NVIDIA GPU at 0000:18:00.0 present but libcuda reported compute capability 1000.0, "
                                 "which is not a valid value");
  TB_ASSERT_CONTAINS(d->fix, "reinstall the NVIDIA driver");
  assert_int_equal(d->compute_units, 0); /* -5 SMs is ignored */
  assert_string_equal(d->arch_id, "");
  assert_string_equal(d->name, "NVIDIA H100 80GB HBM3");
  const tb_backend_report *r = tb_device_list_report(list, TB_BACKEND_CUDA);
  assert_true(tbt_report_has(r, "cuDeviceGetAttribute", "cuda:0 MULTIPROCESSOR_COUNT (16) = -5 is out of range"));
  TB_ASSERT_CONTAINS(r->summary, "8 NVIDIA GPUs found, 7 usable: libcuda reported compute capability 1000.0");
  const tb_device_info *next = tbt_nth(list, TB_BACKEND_CUDA, 1);
  assert_true(next->usable);
  assert_int_equal(next->compute_units, 132);
  tb_device_list_destroy(list);

  setenv("FAKE_CUDA_MODE", "attr_error", 1);
  list = tbt_discover(CUDA_ONLY);
  d = tbt_nth(list, TB_BACKEND_CUDA, 0);
  assert_false(d->usable);
  TB_ASSERT_CONTAINS(d->reason, "libcuda did not report its compute capability");
  assert_true(tbt_report_has(tb_device_list_report(list, TB_BACKEND_CUDA), "cuDeviceGetAttribute",
                             "cuda:0 COMPUTE_CAPABILITY_MAJOR (75): 1 CUDA_ERROR_INVALID_VALUE"));
  assert_true(tbt_nth(list, TB_BACKEND_CUDA, 7)->usable);
  tb_device_list_destroy(list);
}

static void library_without_cuinit(void **state) {
  (void)state;
  tbt_use_fixture("h100x8");
  setenv("TB_CUDA_LIB", tbt_fake("fake_nvml"), 1);
  setenv("TB_NVML_LIB", "/nonexistent/tb-test-no-lib.so", 1);
  tb_device_list *list = tbt_discover(CUDA_ONLY);
  const tb_device_info *d = tbt_nth(list, TB_BACKEND_CUDA, 0);
  assert_false(d->usable);
  TB_ASSERT_CONTAINS(d->reason, "present but cuInit not found in ");
  TB_ASSERT_CONTAINS(d->reason, "fake_nvml.so");
  TB_ASSERT_CONTAINS(d->fix, "TB_CUDA_LIB");
  const tb_backend_report *r = tb_device_list_report(list, TB_BACKEND_CUDA);
  assert_true(tbt_report_has(r, "libcuda symbols", "cuInit not found in"));
  TB_ASSERT_CONTAINS(r->summary, "0 usable: cuInit not found in");
  tb_device_list_destroy(list);
}

static void nvml_missing_or_failing(void **state) {
  (void)state;
  tbt_use_fixture("h100x8");
  setenv("TB_CUDA_LIB", tbt_fake("fake_cuda"), 1);
  setenv("TB_NVML_LIB", "/nonexistent/tb-test-no-lib.so", 1);
  tb_device_list *list = tbt_discover(CUDA_ONLY);
  const tb_device_info *d = tbt_nth(list, TB_BACKEND_CUDA, 0);
  assert_true(d->usable); /* NVML only adds free memory */
  assert_false(d->memory_free_known);
  assert_true(d->memory_total_known);
  assert_string_equal(d->driver_version, "550.54.15"); /* the kernel module's, from /proc */
  assert_true(tbt_report_has(tb_device_list_report(list, TB_BACKEND_CUDA), "dlopen NVML", "free memory is unknown"));
  tb_device_list_destroy(list);

  /* Neither NVML nor /proc: the CUDA driver API version is all there is. */
  setenv("TB_FSROOT", "/nonexistent/tb-empty-root", 1);
  list = tbt_discover(CUDA_ONLY);
  assert_string_equal(tbt_nth(list, TB_BACKEND_CUDA, 0)->driver_version, "12.4");
  tb_device_list_destroy(list);

  tbt_use_fixture("h100x8");
  tbt_use_nvidia_fakes();
  setenv("FAKE_NVML_MODE", "init_error", 1);
  list = tbt_discover(CUDA_ONLY);
  assert_false(tbt_nth(list, TB_BACKEND_CUDA, 0)->memory_free_known);
  assert_true(tbt_report_has(tb_device_list_report(list, TB_BACKEND_CUDA), "nvmlInit_v2", "9 Driver Not Loaded"));
  tb_device_list_destroy(list);

  setenv("FAKE_NVML_MODE", "memory_error", 1);
  list = tbt_discover(CUDA_ONLY);
  d = tbt_nth(list, TB_BACKEND_CUDA, 4);
  assert_true(d->usable);
  assert_false(d->memory_free_known);
  assert_string_equal(d->driver_version, "550.54.15"); /* from NVML, which initialised */
  assert_true(tbt_report_has(tb_device_list_report(list, TB_BACKEND_CUDA), "nvmlDeviceGetMemoryInfo",
                             "0000:9a:00.0: 4 Insufficient Permissions"));
  tb_device_list_destroy(list);
}

static void dev_node_missing(void **state) {
  (void)state;
  char path[1024];
  char *root = tbt_fixture_copy("h100x8");
  tbt_use_nvidia_fakes();
  snprintf(path, sizeof path, "%s/dev/nvidia3", root);
  assert_int_equal(unlink(path), 0);
  tb_device_list *list = tbt_discover(CUDA_ONLY);
  const tb_device_info *d = tbt_nth(list, TB_BACKEND_CUDA, 3);
  assert_string_equal(d->device, "cuda:3");
  assert_false(d->usable);
  assert_string_equal(d->reason, "NVIDIA GPU at 0000:5d:00.0 present but /dev/nvidia3 does not exist");
  TB_ASSERT_CONTAINS(d->fix, "nvidia-modprobe");
  assert_true(tbt_nth(list, TB_BACKEND_CUDA, 2)->usable);
  const tb_backend_report *r = tb_device_list_report(list, TB_BACKEND_CUDA);
  assert_true(tbt_report_has(r, "/dev/nvidia3", "No such file or directory"));
  tb_device_list_destroy(list);

  snprintf(path, sizeof path, "%s/dev/nvidiactl", root);
  assert_int_equal(unlink(path), 0);
  list = tbt_discover(CUDA_ONLY);
  for (int i = 0; i < 8; i++) {
    d = tbt_nth(list, TB_BACKEND_CUDA, i);
    assert_false(d->usable);
    TB_ASSERT_CONTAINS(d->reason, "present but /dev/nvidiactl does not exist");
  }
  tb_device_list_destroy(list);
  tbt_tree_remove(root);
}

/* The /dev/nvidiaN of a GPU is the "Device Minor" the driver gives in /proc, not its place on the bus. */
static void minor_from_proc(void **state) {
  (void)state;
  char path[1024];
  char *root = tbt_fixture_copy("h100x8");
  tbt_use_nvidia_fakes();
  tbt_tree_write(root, "proc/driver/nvidia/gpus/0000:18:00.0/information",
                 "Model: \t\t NVIDIA H100 80GB HBM3\nDevice Minor: \t 1\n");
  tbt_tree_write(root, "proc/driver/nvidia/gpus/0000:2a:00.0/information",
                 "Model: \t\t NVIDIA H100 80GB HBM3\nDevice Minor: \t 0\n");
  snprintf(path, sizeof path, "%s/dev/nvidia1", root);
  assert_int_equal(unlink(path), 0);
  tb_device_list *list = tbt_discover(CUDA_ONLY);
  const tb_device_info *d = tbt_nth(list, TB_BACKEND_CUDA, 0);
  assert_string_equal(tb_device_property(d, "dev_node"), "/dev/nvidia1");
  assert_false(d->usable);
  assert_string_equal(d->reason, "NVIDIA GPU at 0000:18:00.0 present but /dev/nvidia1 does not exist");
  d = tbt_nth(list, TB_BACKEND_CUDA, 1);
  assert_string_equal(tb_device_property(d, "dev_node"), "/dev/nvidia0");
  assert_true(d->usable);
  tb_device_list_destroy(list);
  tbt_tree_remove(root);
}

/* Run as nobody: discovers and writes "<usable count>|<cuda:0 reason>|<cuda:0 fix>". */
static int probe_as_nobody(const void *arg, FILE *out) {
  (void)arg;
  tb_discover_options opts = {.size = sizeof opts, .backends = CUDA_ONLY};
  tb_device_list *list = NULL;
  if (tb_discover(&opts, &list) != TB_OK) return 11;
  const tb_device_info *d = NULL;
  if (tb_device_list_find(list, "cuda:0", &d) != TB_OK) return 12;
  int usable = 0;
  for (size_t i = 0; i < tb_device_list_count(list); i++) usable += tb_device_list_get(list, i)->usable;
  fprintf(out, "%d|%s|%s", usable, d->reason, d->fix);
  tb_device_list_destroy(list);
  return 0;
}

static void dev_node_not_accessible(void **state) {
  (void)state;
  char path[1024];
  char *root = tbt_fixture_copy("h100x8");
  tbt_use_nvidia_fakes();
  static const char *const nodes[] = {"nvidia0", "nvidia1", "nvidia2", "nvidia3", "nvidia4",
                                      "nvidia5", "nvidia6", "nvidia7", "nvidiactl", "nvidia-uvm"};
  for (size_t i = 0; i < sizeof nodes / sizeof nodes[0]; i++) {
    snprintf(path, sizeof path, "%s/dev/%s", root, nodes[i]);
    assert_int_equal(chmod(path, i == 0 ? 0000 : 0666), 0);
  }
  char *out = tbt_run_as_nobody(probe_as_nobody, NULL);
  TB_ASSERT_CONTAINS(out, "7|NVIDIA GPU at 0000:18:00.0 present but /dev/nvidia0 is not accessible "
                          "(Permission denied)|");
  TB_ASSERT_CONTAINS(out, "add the user to the video group");
  TB_ASSERT_CONTAINS(out, "check the device node permissions");
  free(out);
  tbt_tree_remove(root);
}

/* Garbage and truncated files: a function whose class is not a number is skipped, an empty uevent
 * means no driver, and a version file without a version gives no driver version. */
static void garbage_sysfs_and_proc(void **state) {
  (void)state;
  char *root = tbt_fixture_copy("h100x8");
  tbt_no_vendor_libs();
  tbt_tree_write(root, "sys/bus/pci/devices/0000:2a:00.0/class", "garbage\n");
  tbt_tree_write(root, "sys/bus/pci/devices/0000:3a:00.0/uevent", "");
  tbt_tree_write(root, "sys/bus/pci/devices/0000:9a:00.0/device", "0x2bff\n"); /* an id the local table lacks */
  tbt_tree_write(root, "proc/driver/nvidia/version", "NVRM version: NVIDIA UNIX x86_64 Kernel Module  (truncated");
  tb_device_list *list = tbt_discover(CUDA_ONLY);
  assert_int_equal(tbt_count(list, TB_BACKEND_CUDA), 7);
  for (int i = 0; i < 7; i++) {
    const tb_device_info *d = tbt_nth(list, TB_BACKEND_CUDA, i);
    assert_string_not_equal(d->pci_bus_id, "0000:2a:00.0");
    assert_false(d->usable);
    assert_string_equal(d->driver_version, "");
  }
  const tb_device_info *unbound = tbt_nth(list, TB_BACKEND_CUDA, 1);
  assert_string_equal(unbound->pci_bus_id, "0000:3a:00.0");
  TB_ASSERT_CONTAINS(unbound->reason, "no kernel driver is bound to it");
  const tb_device_info *bound = tbt_nth(list, TB_BACKEND_CUDA, 2);
  assert_string_equal(bound->pci_bus_id, "0000:5d:00.0");
  TB_ASSERT_CONTAINS(bound->reason, "libcuda.so.1 not found");
  const tb_device_info *unknown = tbt_nth(list, TB_BACKEND_CUDA, 3);
  assert_string_equal(unknown->pci_bus_id, "0000:9a:00.0");
  assert_string_equal(unknown->name, "NVIDIA GPU 0x2bff");
  assert_string_equal(unknown->arch_id, "");
  assert_int_equal(unknown->compute_major, 0);
  const tb_backend_report *r = tb_device_list_report(list, TB_BACKEND_CUDA);
  assert_true(tbt_report_has(r, "/proc/driver/nvidia/version", "holds no version number"));
  tb_device_list_destroy(list);
  tbt_tree_remove(root);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test_setup(real_toolkit_stub, tbt_setup_clean_nvidia),
      cmocka_unit_test_setup(fake_stub, tbt_setup_clean_nvidia),
      cmocka_unit_test_setup(cuinit_errors, tbt_setup_clean_nvidia),
      cmocka_unit_test_setup(garbage_attributes, tbt_setup_clean_nvidia),
      cmocka_unit_test_setup(library_without_cuinit, tbt_setup_clean_nvidia),
      cmocka_unit_test_setup(nvml_missing_or_failing, tbt_setup_clean_nvidia),
      cmocka_unit_test_setup(dev_node_missing, tbt_setup_clean_nvidia),
      cmocka_unit_test_setup(minor_from_proc, tbt_setup_clean_nvidia),
      cmocka_unit_test_setup(dev_node_not_accessible, tbt_setup_clean_nvidia),
      cmocka_unit_test_setup(garbage_sysfs_and_proc, tbt_setup_clean_nvidia),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
