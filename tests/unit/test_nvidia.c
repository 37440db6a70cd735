/* The NVIDIA probe on recorded trees with the fake libcuda and NVML: an 8x H100 server, a laptop, a
 * GPU without a driver, no GPU at all, a container without sysfs, and a driver that lists fewer GPUs
 * than the bus shows. The listing from NVML without cuInit is in test_nvidia_nvml.c. Failure paths (stub, driver errors, permissions) are in test_nvidia_errors.c. */
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cjson/cJSON.h>
#include "test_util.h"

#define CUDA_ONLY (1u << TB_BACKEND_CUDA)
#define H100_TOTAL 85520809984ULL
#define GIB 1073741824ULL

static const char *const h100_buses[8] = {"0000:18:00.0", "0000:2a:00.0", "0000:3a:00.0", "0000:5d:00.0",
                                          "0000:9a:00.0", "0000:ab:00.0", "0000:ba:00.0", "0000:db:00.0"};

/* The listing from libcuda (cuInit): an NVML without the device queries makes the probe ask libcuda.
 * test_nvidia_nvml.c checks that the listing from NVML, without cuInit, equals this one. */
static void h100x8_with_driver(void **state) {
  (void)state;
  tbt_use_fixture("h100x8");
  tbt_use_nvidia_fakes();
  setenv("FAKE_NVML_MODE", "old", 1);
  tb_device_list *list = tbt_discover(CUDA_ONLY);
  assert_int_equal(tbt_count(list, TB_BACKEND_CUDA), 8); /* the NVSwitch (class 0x0680) is not a GPU */
  for (int i = 0; i < 8; i++) {
    const tb_device_info *d = tbt_nth(list, TB_BACKEND_CUDA, i);
    assert_non_null(d);
    char device[16];
    snprintf(device, sizeof device, "cuda:%d", i);
    assert_string_equal(d->device, device);
    assert_int_equal(d->index, i);
    assert_true(d->usable);
    assert_string_equal(d->reason, "");
    assert_string_equal(d->name, "NVIDIA H100 80GB HBM3");
    assert_string_equal(d->vendor, "NVIDIA");
    assert_int_equal(d->type, TB_DEVICE_DISCRETE_GPU);
    assert_int_equal(d->compute_major, 9);
    assert_int_equal(d->compute_minor, 0);
    assert_string_equal(d->arch_id, "sm_90");
    assert_int_equal(d->compute_units, 132);
    assert_true(d->memory_total_known);
    assert_int_equal(d->memory_total, H100_TOTAL);
    assert_true(d->memory_free_known);
    assert_int_equal(d->memory_free, H100_TOTAL - (uint64_t)(i + 1) * GIB);
    assert_string_equal(d->pci_bus_id, h100_buses[i]);
    assert_string_equal(d->driver_version, "550.54.15");
    assert_string_equal(tb_device_property(d, "cuda_driver_api"), "12.4");
    assert_string_equal(tb_device_property(d, "numa_node"), i < 4 ? "0" : "1");
    char node[32];
    snprintf(node, sizeof node, "/dev/nvidia%d", i);
    assert_string_equal(tb_device_property(d, "dev_node"), node);
  }
  const tb_device_info *first = tbt_nth(list, TB_BACKEND_CUDA, 0);
  const tb_device_info *last = tbt_nth(list, TB_BACKEND_CUDA, 7);
  assert_string_equal(first->uuid, "GPU-8c0f3a51-1d6e-4b27-9a33-5e10c47b2000");
  assert_string_equal(last->uuid, "GPU-8c0f3a51-1d6e-4b27-9a33-5e10c47b2007");
  assert_string_equal(tb_device_property(first, "sm_count"), "132");
  assert_string_equal(tb_device_property(first, "clock_mhz"), "1980");
  assert_string_equal(tb_device_property(first, "memory_clock_mhz"), "2619");
  assert_string_equal(tb_device_property(first, "memory_bus_width_bits"), "5120");
  assert_string_equal(tb_device_property(first, "l2_cache_bytes"), "52428800");
  assert_string_equal(tb_device_property(first, "pci_device_id"), "0x2330");
  assert_string_equal(tb_device_property(first, "kernel_driver"), "nvidia");
  /* From the capability table (capability_nvidia.c), keyed by sm_90. */
  assert_string_equal(first->architecture, "Hopper");
  assert_true(first->dtypes & TB_DTYPE_BIT(TB_DTYPE_BF16));
  assert_true(first->dtypes & TB_DTYPE_BIT(TB_DTYPE_FP8_E4M3FN));
  assert_true(first->features & TB_FEATURE_BIT(TB_FEATURE_TENSOR_CORES));
  /* One physical GPU per device: no two share a physical id. */
  for (int i = 1; i < 8; i++) assert_int_not_equal(tbt_nth(list, TB_BACKEND_CUDA, i)->physical_id, first->physical_id);

  const tb_backend_report *r = tb_device_list_report(list, TB_BACKEND_CUDA);
  assert_true(r->available);
  assert_int_equal(r->device_count, 8);
  TB_ASSERT_CONTAINS(r->summary, "8 NVIDIA GPUs usable (driver 550.54.15, CUDA 12.4)");
  assert_string_equal(r->fix, "");
  assert_true(tbt_report_has(r, "PCI", "0000:18:00.0 10de:2330 class 0x030200 driver nvidia"));
  assert_false(tbt_report_has(r, "PCI", "0000:05:00.0"));
  assert_true(tbt_report_has(r, "dlopen libcuda", "fake_cuda.so"));
  assert_true(tbt_report_has(r, "cuInit", "0 CUDA_SUCCESS"));
  assert_true(tbt_report_has(r, "cuDriverGetVersion", "12040 (CUDA 12.4)"));
  assert_true(tbt_report_has(r, "cuDeviceGetCount", "8"));
  assert_true(tbt_report_has(r, "NVML", "driver 550.54.15"));
  assert_true(tbt_report_has(r, "nvmlDeviceGetMemoryInfo", "0000:db:00.0: 76930875392 of 85520809984 bytes free"));
  assert_true(tbt_report_has(r, "/proc/driver/nvidia/version", "kernel module 550.54.15"));
  assert_true(tbt_report_has(r, "/dev/nvidia7", "read-write access"));
  tb_device_list_destroy(list);
}

static void h100x8_without_libcuda(void **state) {
  (void)state;
  tbt_use_fixture("h100x8");
  tbt_no_vendor_libs();
  tb_device_list *list = tbt_discover(CUDA_ONLY);
  assert_int_equal(tbt_count(list, TB_BACKEND_CUDA), 8);
  for (int i = 0; i < 8; i++) {
    const tb_device_info *d = tbt_nth(list, TB_BACKEND_CUDA, i);
    char device[32];
    snprintf(device, sizeof device, "pci:%s", h100_buses[i]);
    assert_string_equal(d->device, device);
    assert_int_equal(d->index, -1);
    assert_false(d->usable);
    assert_string_equal(d->name, "NVIDIA H100 80GB HBM3");
    assert_string_equal(d->pci_bus_id, h100_buses[i]);
    TB_ASSERT_CONTAINS(d->reason, h100_buses[i]);
    TB_ASSERT_CONTAINS(d->reason, "present but libcuda.so.1 not found");
    TB_ASSERT_CONTAINS(d->reason, "TB_CUDA_LIB=/nonexistent/tb-test-no-lib.so");
    TB_ASSERT_CONTAINS(d->fix, "TB_CUDA_LIB");
    assert_string_equal(d->arch_id, "sm_90"); /* from the PCI device id table */
    assert_string_equal(d->driver_version, "550.54.15"); /* the kernel module's, from /proc */
    assert_false(d->memory_free_known);
  }
  const tb_backend_report *r = tb_device_list_report(list, TB_BACKEND_CUDA);
  assert_false(r->available);
  TB_ASSERT_CONTAINS(r->summary, "8 NVIDIA GPUs found, 0 usable: libcuda.so.1 not found");
  TB_ASSERT_CONTAINS(r->fix, "TB_CUDA_LIB");
  assert_true(tbt_report_has(r, "dlopen libcuda", "TB_CUDA_LIB=/nonexistent/tb-test-no-lib.so"));
  tb_device_list_destroy(list);
}

/* Without TB_CUDA_LIB the loader path is searched: the sentence says so. */
static void h100x8_libcuda_not_in_loader_path(void **state) {
  (void)state;
  void *real = dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
  if (real) {
    dlclose(real);
    skip(); /* a real NVIDIA driver is installed here; the other tests cover this path with TB_CUDA_LIB */
  }
  tbt_use_fixture("h100x8");
  setenv("TB_NVML_LIB", "/nonexistent/tb-test-no-lib.so", 1);
  tb_device_list *list = tbt_discover(CUDA_ONLY);
  const tb_device_info *d = tbt_nth(list, TB_BACKEND_CUDA, 3);
  assert_non_null(d);
  assert_string_equal(d->reason, "NVIDIA GPU at 0000:5d:00.0 present but libcuda.so.1 not found in the loader path");
  TB_ASSERT_CONTAINS(d->fix, "install the NVIDIA driver");
  const tb_backend_report *r = tb_device_list_report(list, TB_BACKEND_CUDA);
  assert_true(tbt_report_has(r, "dlopen libcuda", "libcuda.so.1, libcuda.so"));
  tb_device_list_destroy(list);
}

static void gpu_without_kernel_driver(void **state) {
  (void)state;
  tbt_use_fixture("nvidia_nodriver");
  tbt_use_nvidia_fakes();
  setenv("FAKE_CUDA_MODE", "no_device", 1); /* even a working libcuda cannot see an unbound GPU */
  tb_device_list *list = tbt_discover(CUDA_ONLY);
  assert_int_equal(tbt_count(list, TB_BACKEND_CUDA), 1); /* the HDMI audio function 0000:01:00.1 is not a GPU */
  const tb_device_info *d = tbt_nth(list, TB_BACKEND_CUDA, 0);
  assert_string_equal(d->device, "pci:0000:01:00.0");
  assert_string_equal(d->name, "NVIDIA GeForce RTX 4090");
  assert_false(d->usable);
  assert_string_equal(d->reason, "NVIDIA GPU at 0000:01:00.0 present but no kernel driver is bound to it");
  TB_ASSERT_CONTAINS(d->fix, "install the NVIDIA driver");
  assert_string_equal(d->arch_id, "sm_89");
  assert_string_equal(tb_device_property(d, "kernel_driver"), "none");
  assert_null(tb_device_property(d, "numa_node")); /* numa_node -1: unknown */
  const tb_backend_report *r = tb_device_list_report(list, TB_BACKEND_CUDA);
  TB_ASSERT_CONTAINS(r->summary, "1 NVIDIA GPU found, 0 usable: no kernel driver is bound to it");
  assert_true(tbt_report_has(r, "PCI", "0000:01:00.0 10de:2684 class 0x030000 driver none"));
  assert_true(tbt_report_has(r, "cuInit", "100 CUDA_ERROR_NO_DEVICE"));
  tb_device_list_destroy(list);
}

static void laptop_rtx4060(void **state) {
  (void)state;
  tbt_use_fixture("laptop_intel_nvidia");
  tbt_use_nvidia_fakes();
  setenv("FAKE_CUDA_DEVICES", "laptop", 1);
  tb_device_list *list = tbt_discover(CUDA_ONLY);
  assert_int_equal(tbt_count(list, TB_BACKEND_CUDA), 1); /* the Intel iGPU is not the NVIDIA probe's */
  const tb_device_info *d = tbt_nth(list, TB_BACKEND_CUDA, 0);
  assert_string_equal(d->device, "cuda:0");
  assert_true(d->usable);
  assert_string_equal(d->name, "NVIDIA GeForce RTX 4060 Laptop GPU");
  assert_int_equal(d->type, TB_DEVICE_DISCRETE_GPU);
  assert_string_equal(d->arch_id, "sm_89");
  assert_string_equal(d->architecture, "Ada Lovelace");
  assert_int_equal(d->compute_units, 24);
  assert_int_equal(d->memory_total, 8585740288ULL);
  assert_int_equal(d->memory_free, 8585740288ULL - GIB);
  assert_string_equal(d->pci_bus_id, "0000:01:00.0");
  assert_string_equal(d->uuid, "GPU-3f6a910c-52d4-478e-b109-7ae2641dc835");
  assert_string_equal(tb_device_property(d, "dev_node"), "/dev/nvidia0");
  TB_ASSERT_CONTAINS(tb_device_list_report(list, TB_BACKEND_CUDA)->summary, "1 NVIDIA GPU usable");
  tb_device_list_destroy(list);
}

static void no_nvidia_gpu_at_all(void **state) {
  (void)state;
  setenv("TB_FSROOT", "/nonexistent/tb-empty-root", 1);
  tbt_no_vendor_libs();
  tb_device_list *list = tbt_discover(CUDA_ONLY);
  assert_int_equal(tbt_count(list, TB_BACKEND_CUDA), 0);
  const tb_backend_report *r = tb_device_list_report(list, TB_BACKEND_CUDA);
  assert_false(r->available);
  TB_ASSERT_CONTAINS(r->summary, "no NVIDIA GPU found");
  TB_ASSERT_CONTAINS(r->summary, "libcuda.so.1 not found");
  assert_string_equal(r->fix, ""); /* no hardware, nothing to fix: `tb doctor` lists no to-do */
  assert_true(tbt_report_has(r, "PCI", "no NVIDIA display, 3D or accelerator function"));
  assert_true(tbt_report_has(r, "/proc/driver/nvidia/version", "not loaded"));
  tb_device_list_destroy(list);
}

/* Containers often hide /sys: with no PCI function visible, the driver is trusted. */
static void container_without_sysfs(void **state) {
  (void)state;
  setenv("TB_FSROOT", "/nonexistent/tb-empty-root", 1);
  tbt_use_nvidia_fakes();
  tb_device_list *list = tbt_discover(CUDA_ONLY);
  assert_int_equal(tbt_count(list, TB_BACKEND_CUDA), 8);
  const tb_device_info *d = tbt_nth(list, TB_BACKEND_CUDA, 5);
  assert_true(d->usable);
  assert_string_equal(d->device, "cuda:5");
  assert_string_equal(d->pci_bus_id, "0000:ab:00.0");
  assert_string_equal(d->driver_version, "550.54.15"); /* from NVML */
  assert_int_equal(d->memory_free, H100_TOTAL - 6 * GIB);
  assert_null(tb_device_property(d, "dev_node"));
  assert_true(tb_device_list_report(list, TB_BACKEND_CUDA)->available);
  tb_device_list_destroy(list);
}

/* The driver lists 6 of the 8 GPUs on the bus: the other two stay listed, unusable, with the reason. */
static void driver_lists_fewer_than_bus(void **state) {
  (void)state;
  tbt_use_fixture("h100x8");
  tbt_use_nvidia_fakes();
  setenv("FAKE_NVML_MODE", "old", 1); /* libcuda lists them: NVML would list all 8 */
  setenv("FAKE_CUDA_COUNT", "6", 1);
  tb_device_list *list = tbt_discover(CUDA_ONLY);
  assert_int_equal(tbt_count(list, TB_BACKEND_CUDA), 8);
  for (int i = 0; i < 6; i++) assert_true(tbt_nth(list, TB_BACKEND_CUDA, i)->usable);
  const tb_device_info *d = tbt_nth(list, TB_BACKEND_CUDA, 6);
  assert_string_equal(d->device, "pci:0000:ba:00.0");
  assert_false(d->usable);
  assert_string_equal(d->reason, "NVIDIA GPU at 0000:ba:00.0 present but libcuda lists 6 devices and not this one");
  TB_ASSERT_CONTAINS(d->fix, "nvidia-smi");
  assert_true(d->memory_free_known); /* NVML still sees it */
  assert_int_equal(d->memory_free, H100_TOTAL - 7 * GIB);
  assert_string_equal(tbt_nth(list, TB_BACKEND_CUDA, 7)->device, "pci:0000:db:00.0");
  TB_ASSERT_CONTAINS(tb_device_list_report(list, TB_BACKEND_CUDA)->summary, "8 NVIDIA GPUs found, 6 usable");
  tb_device_list_destroy(list);

  setenv("CUDA_VISIBLE_DEVICES", "0,1,2,3,4,5", 1);
  list = tbt_discover(CUDA_ONLY);
  d = tbt_nth(list, TB_BACKEND_CUDA, 7);
  TB_ASSERT_CONTAINS(d->reason, "(CUDA_VISIBLE_DEVICES=0,1,2,3,4,5)");
  assert_string_equal(d->fix, "unset CUDA_VISIBLE_DEVICES or add this GPU to it");
  tb_device_list_destroy(list);
}

/* NVML and libcuda disagree on the total, as on an H100 (NVML 79.6 GiB, cuDeviceTotalMem 79.2 GiB): the
 * line once read "79.2/79.2 GiB" (NVML's free over CUDA's total). Both figures now come from NVML when it
 * answers, else the total from libcuda alone; memory_source says which, and `tb devices` agrees. */
static void memory_from_one_source(void **state) {
  (void)state;
  tbt_use_fixture("h100x8");
  tbt_no_vendor_libs();
  tbt_use_nvidia_fakes();
  const uint64_t nvml_total = 80 * GIB;
  char extra[32];
  snprintf(extra, sizeof extra, "%llu", (unsigned long long)(nvml_total - H100_TOTAL));
  setenv("FAKE_NVML_TOTAL_EXTRA", extra, 1);
  tb_device_list *list = tbt_discover(CUDA_ONLY);
  for (int i = 0; i < 8; i++) {
    const tb_device_info *d = tbt_nth(list, TB_BACKEND_CUDA, i);
    assert_int_equal(d->memory_total, nvml_total);
    assert_int_equal(d->memory_free, nvml_total - (uint64_t)(i + 1) * GIB);
    assert_string_equal(tb_device_property(d, "memory_source"), "NVML");
  }
  tb_device_list_destroy(list);

  char *out = NULL, line[256];
  assert_int_equal(tbt_run_tool("devices", &out), 0);
  TB_ASSERT_CONTAINS(tbt_line(out, "cuda:0 ", line, sizeof line), " 79.0/80.0 GiB ");
  TB_ASSERT_CONTAINS(tbt_line(out, "cuda:7 ", line, sizeof line), " 72.0/80.0 GiB ");
  free(out);
  assert_int_equal(tbt_run_tool("devices --json", &out), 0);
  cJSON *root = cJSON_Parse(out);
  assert_non_null(root);
  const cJSON *devices = cJSON_GetObjectItemCaseSensitive(root, "devices");
  int cuda_seen = 0;
  const cJSON *dev;
  cJSON_ArrayForEach(dev, devices) {
    const cJSON *backend = cJSON_GetObjectItemCaseSensitive(dev, "backend");
    if (!cJSON_IsString(backend) || strcmp(backend->valuestring, "cuda") != 0) continue;
    assert_true(cJSON_GetObjectItemCaseSensitive(dev, "memory_total_bytes")->valuedouble == (double)nvml_total);
    assert_true(cJSON_GetObjectItemCaseSensitive(dev, "memory_free_bytes")->valuedouble ==
                (double)(nvml_total - (uint64_t)(cuda_seen + 1) * GIB));
    cuda_seen++;
  }
  assert_int_equal(cuda_seen, 8);
  cJSON_Delete(root);
  free(out);

  /* NVML cannot say: libcuda's total, free unknown (a context would be needed), and the source named. */
  setenv("FAKE_NVML_MODE", "memory_error", 1);
  list = tbt_discover(CUDA_ONLY);
  const tb_device_info *d = tbt_nth(list, TB_BACKEND_CUDA, 0);
  assert_int_equal(d->memory_total, H100_TOTAL);
  assert_false(d->memory_free_known);
  assert_string_equal(tb_device_property(d, "memory_source"), "libcuda (free memory unknown without NVML)");
  tb_device_list_destroy(list);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test_setup(h100x8_with_driver, tbt_setup_clean_nvidia),
      cmocka_unit_test_setup(h100x8_without_libcuda, tbt_setup_clean_nvidia),
      cmocka_unit_test_setup(h100x8_libcuda_not_in_loader_path, tbt_setup_clean_nvidia),
      cmocka_unit_test_setup(gpu_without_kernel_driver, tbt_setup_clean_nvidia),
      cmocka_unit_test_setup(laptop_rtx4060, tbt_setup_clean_nvidia),
      cmocka_unit_test_setup(no_nvidia_gpu_at_all, tbt_setup_clean_nvidia),
      cmocka_unit_test_setup(container_without_sysfs, tbt_setup_clean_nvidia),
      cmocka_unit_test_setup(driver_lists_fewer_than_bus, tbt_setup_clean_nvidia),
      cmocka_unit_test_setup(memory_from_one_source, tbt_setup_clean_nvidia),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
