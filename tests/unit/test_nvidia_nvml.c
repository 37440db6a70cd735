/* The NVIDIA listing from NVML without cuInit (issue 17: cuInit alone costs about 250 ms on an H100
 * host). The fake libcuda logs every cuInit to FAKE_CUDA_INIT_LOG, so each test counts them, in this
 * process and in the `tb` processes it starts: none when NVML answers and CUDA's numbering can be
 * decided without the driver; the listing then equals libcuda's field by field on the recorded
 * machines; CUDA_VISIBLE_DEVICES is mapped, and what cannot be mapped (MIG, bad entries, GPUs that
 * differ in the default fastest-first order, MIG mode, an NVML without the device queries) falls back
 * to cuInit with the reason in the report; and the backend still opens the GPU that was listed. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <cjson/cJSON.h>
#include "test_gpumem_helpers.h"

#define CUDA_ONLY (1u << TB_BACKEND_CUDA)

static char init_log[64];

static int setup(void **state) {
  tbt_setup_clean_nvidia(state);
  snprintf(init_log, sizeof init_log, "/tmp/tb-test-cuinit-%d.log", (int)getpid());
  unlink(init_log);
  setenv("FAKE_CUDA_INIT_LOG", init_log, 1);
  tbt_use_fixture("h100x8");
  tbt_no_vendor_libs();
  tbt_use_nvidia_fakes();
  return 0;
}

static int teardown(void **state) {
  (void)state;
  unlink(init_log);
  return 0;
}

/* cuInit calls so far, by every process that loaded the fake. */
static int cuinit_calls(void) {
  FILE *f = fopen(init_log, "r");
  if (!f) return 0;
  int n = 0;
  char line[64];
  while (fgets(line, sizeof line, f)) n++;
  fclose(f);
  return n;
}

static void nvml_listing_without_cuinit(void **state) {
  (void)state;
  static const char *const buses[8] = {"0000:18:00.0", "0000:2a:00.0", "0000:3a:00.0", "0000:5d:00.0",
                                       "0000:9a:00.0", "0000:ab:00.0", "0000:ba:00.0", "0000:db:00.0"};
  tb_device_list *list = tbt_discover(CUDA_ONLY);
  assert_int_equal(cuinit_calls(), 0);
  assert_int_equal(tbt_count(list, TB_BACKEND_CUDA), 8);
  for (int i = 0; i < 8; i++) {
    const tb_device_info *d = tbt_nth(list, TB_BACKEND_CUDA, i);
    char device[16];
    snprintf(device, sizeof device, "cuda:%d", i);
    assert_string_equal(d->device, device);
    assert_true(d->usable);
    assert_string_equal(d->pci_bus_id, buses[i]);
    assert_string_equal(d->name, "NVIDIA H100 80GB HBM3");
    assert_string_equal(d->arch_id, "sm_90");
    assert_int_equal(d->compute_units, 132); /* 16896 CUDA cores / 128 per SM on sm_90 */
    assert_string_equal(d->driver_version, "550.54.15");
  }
  const tb_device_info *first = tbt_nth(list, TB_BACKEND_CUDA, 0);
  assert_string_equal(first->uuid, "GPU-8c0f3a51-1d6e-4b27-9a33-5e10c47b2000");
  assert_string_equal(tb_device_property(first, "cuda_driver_api"), "12.4");
  assert_string_equal(tb_device_property(first, "clock_mhz"), "1980");
  assert_string_equal(tb_device_property(first, "memory_clock_mhz"), "2619");
  assert_string_equal(tb_device_property(first, "memory_bus_width_bits"), "5120");
  assert_null(tb_device_property(first, "l2_cache_bytes")); /* not in NVML */
  const tb_backend_report *r = tb_device_list_report(list, TB_BACKEND_CUDA);
  TB_ASSERT_CONTAINS(r->summary, "8 NVIDIA GPUs usable (driver 550.54.15, CUDA 12.4)");
  assert_true(tbt_report_has(r, "device list", "from NVML without cuInit: 8 GPUs in CUDA's order"));
  assert_true(tbt_report_has(r, "cuInit", "not called: NVML lists the GPUs in CUDA's order"));
  assert_true(tbt_report_has(r, "nvml device", "cuda:7 NVIDIA H100 80GB HBM3, sm_90, 132 SMs, bus 0000:db:00.0"));
  tb_device_list_destroy(list);

  char *out = NULL;
  assert_int_equal(tbt_run_tool("devices", &out), 0);
  TB_ASSERT_CONTAINS(out, "cuda:7 ");
  free(out);
  assert_int_equal(cuinit_calls(), 0);
}

/* The cuda devices of `tb devices --json`, as one array. */
static cJSON *cuda_devices_json(void) {
  char *out = NULL;
  assert_int_equal(tbt_run_tool("devices --json", &out), 0);
  cJSON *root = cJSON_Parse(out);
  free(out);
  assert_non_null(root);
  cJSON *cuda = cJSON_CreateArray();
  cJSON *dev;
  cJSON_ArrayForEach(dev, cJSON_GetObjectItemCaseSensitive(root, "devices")) {
    const cJSON *backend = cJSON_GetObjectItemCaseSensitive(dev, "backend");
    if (cJSON_IsString(backend) && strcmp(backend->valuestring, "cuda") == 0)
      cJSON_AddItemToArray(cuda, cJSON_Duplicate(dev, true));
  }
  cJSON_Delete(root);
  return cuda;
}

/* Every field of every device equal, but the L2 size, which only libcuda gives. */
static void assert_same_listing(int expected_devices) {
  cJSON *from_nvml = cuda_devices_json();
  assert_int_equal(cuinit_calls(), 0);
  setenv("FAKE_NVML_MODE", "old", 1);
  cJSON *from_cuinit = cuda_devices_json();
  unsetenv("FAKE_NVML_MODE");
  assert_true(cuinit_calls() > 0);
  assert_int_equal(cJSON_GetArraySize(from_nvml), expected_devices);
  assert_int_equal(cJSON_GetArraySize(from_cuinit), expected_devices);
  for (int i = 0; i < expected_devices; i++) {
    cJSON *a = cJSON_GetArrayItem(from_nvml, i), *b = cJSON_GetArrayItem(from_cuinit, i);
    cJSON *props = cJSON_GetObjectItemCaseSensitive(b, "properties");
    assert_non_null(cJSON_GetObjectItemCaseSensitive(props, "l2_cache_bytes"));
    cJSON_DeleteItemFromObjectCaseSensitive(props, "l2_cache_bytes");
    if (!cJSON_Compare(a, b, true)) {
      char *ta = cJSON_Print(a), *tb = cJSON_Print(b);
      print_error("from NVML:\n%s\nfrom cuInit:\n%s\n", ta, tb);
      free(ta);
      free(tb);
      fail_msg("device %d differs", i);
    }
  }
  cJSON_Delete(from_nvml);
  cJSON_Delete(from_cuinit);
}

static void listing_equals_cuinit_listing(void **state) {
  (void)state;
  assert_same_listing(8);
  unlink(init_log);
  tbt_use_fixture("laptop_intel_nvidia");
  setenv("FAKE_CUDA_DEVICES", "laptop", 1);
  assert_same_listing(1);
}

/* The fake libcuda does not read CUDA_VISIBLE_DEVICES: only NVML's mapping can produce this list. */
static void visible_devices_mapped(void **state) {
  (void)state;
  setenv("CUDA_VISIBLE_DEVICES", "3,GPU-8c0f3a51-1d6e-4b27-9a33-5e10c47b2001,gpu-8C0F3A51-1d6e-4b27-9a33-5e10c47b20", 1);
  tb_device_list *list = tbt_discover(CUDA_ONLY);
  assert_int_equal(cuinit_calls(), 1); /* the last entry is a prefix of every UUID: cuInit decides */
  assert_true(tbt_report_has(tb_device_list_report(list, TB_BACKEND_CUDA), "device list",
                             "from cuInit: CUDA_VISIBLE_DEVICES entry gpu-8C0F3A51-1d6e-4b27-9a33-5e10c47b20 matches "
                             "more than one GPU"));
  tb_device_list_destroy(list);

  setenv("CUDA_VISIBLE_DEVICES", "3,GPU-8c0f3a51-1d6e-4b27-9a33-5e10c47b2001,gpu-8C0F3A51-1d6e-4b27-9a33-5e10c47b2000", 1);
  list = tbt_discover(CUDA_ONLY);
  assert_int_equal(cuinit_calls(), 1);
  assert_int_equal(tbt_count(list, TB_BACKEND_CUDA), 8);
  static const char *const visible[3] = {"0000:5d:00.0", "0000:2a:00.0", "0000:18:00.0"};
  for (int i = 0; i < 3; i++) {
    const tb_device_info *d = tbt_nth(list, TB_BACKEND_CUDA, i);
    assert_int_equal(d->index, i);
    assert_true(d->usable);
    assert_string_equal(d->pci_bus_id, visible[i]);
  }
  const tb_device_info *hidden = tbt_nth(list, TB_BACKEND_CUDA, 3);
  assert_string_equal(hidden->device, "pci:0000:3a:00.0");
  assert_false(hidden->usable);
  TB_ASSERT_CONTAINS(hidden->reason, "NVIDIA GPU at 0000:3a:00.0 present but libcuda lists 3 devices and not this "
                                     "one (CUDA_VISIBLE_DEVICES=3,GPU-");
  assert_string_equal(hidden->fix, "unset CUDA_VISIBLE_DEVICES or add this GPU to it");
  TB_ASSERT_CONTAINS(tb_device_list_report(list, TB_BACKEND_CUDA)->summary, "8 NVIDIA GPUs found, 3 usable");
  tb_device_list_destroy(list);
}

static void visible_devices_fall_back_to_cuinit(void **state) {
  (void)state;
  static const struct {
    const char *value, *why;
  } cases[] = {
      {"MIG-4f0e1c2a-8b7d-5e6f-9a0b-1c2d3e4f5a6b",
       "CUDA_VISIBLE_DEVICES entry \"MIG-4f0e1c2a-8b7d-5e6f-9a0b-1c2d3e4f5a6b\" is not a GPU index or GPU- UUID"},
      {"", "CUDA_VISIBLE_DEVICES is empty"},
      {"0,9", "CUDA_VISIBLE_DEVICES names index 9, and there are 8 GPUs"},
      {"1,1", "CUDA_VISIBLE_DEVICES names 0000:2a:00.0 twice"},
      {"0,,1", "CUDA_VISIBLE_DEVICES entry \"\" is not a GPU index"},
      {"-1", "CUDA_VISIBLE_DEVICES entry \"-1\" is not a GPU index"},
      {"GPU-ffff", "CUDA_VISIBLE_DEVICES entry GPU-ffff matches no GPU's UUID"},
  };
  for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++) {
    setenv("CUDA_VISIBLE_DEVICES", cases[c].value, 1);
    tb_device_list *list = tbt_discover(CUDA_ONLY);
    assert_int_equal(cuinit_calls(), (int)c + 1);
    const tb_backend_report *r = tb_device_list_report(list, TB_BACKEND_CUDA);
    if (!tbt_report_has(r, "device list", cases[c].why)) fail_msg("no check \"from cuInit: %s\"", cases[c].why);
    assert_true(tbt_report_has(r, "cuInit", "0 CUDA_SUCCESS"));
    tb_device_list_destroy(list);
  }
}

/* GPUs that differ: CUDA numbers the faster first (the fake lists the 132-SM GPUs at 9a..db first). */
static void different_gpus(void **state) {
  (void)state;
  setenv("FAKE_CUDA_DEVICES", "mixed", 1);
  tb_device_list *list = tbt_discover(CUDA_ONLY);
  assert_int_equal(cuinit_calls(), 1);
  assert_true(tbt_report_has(tb_device_list_report(list, TB_BACKEND_CUDA), "device list",
                             "from cuInit: the GPUs differ (NVIDIA H100 PCIe at 0000:18:00.0, NVIDIA H100 80GB HBM3 at "
                             "0000:9a:00.0) and CUDA numbers them fastest first"));
  assert_string_equal(tbt_nth(list, TB_BACKEND_CUDA, 0)->pci_bus_id, "0000:9a:00.0");
  assert_string_equal(tbt_nth(list, TB_BACKEND_CUDA, 4)->pci_bus_id, "0000:18:00.0");
  tb_device_list_destroy(list);

  setenv("CUDA_DEVICE_ORDER", "PCI_BUS_ID", 1); /* bus order: NVML can number them */
  list = tbt_discover(CUDA_ONLY);
  assert_int_equal(cuinit_calls(), 1);
  const tb_device_info *d = tbt_nth(list, TB_BACKEND_CUDA, 0);
  assert_string_equal(d->pci_bus_id, "0000:18:00.0");
  assert_string_equal(d->name, "NVIDIA H100 PCIe");
  assert_int_equal(d->compute_units, 114);
  assert_int_equal(tbt_nth(list, TB_BACKEND_CUDA, 7)->compute_units, 132);
  tb_device_list_destroy(list);

  setenv("CUDA_DEVICE_ORDER", "SLOWEST", 1);
  list = tbt_discover(CUDA_ONLY);
  assert_int_equal(cuinit_calls(), 2);
  assert_true(tbt_report_has(tb_device_list_report(list, TB_BACKEND_CUDA), "device list",
                             "from cuInit: CUDA_DEVICE_ORDER=SLOWEST is neither FASTEST_FIRST nor PCI_BUS_ID"));
  tb_device_list_destroy(list);
}

static void mig_and_old_nvml_fall_back(void **state) {
  (void)state;
  setenv("FAKE_NVML_MODE", "mig", 1);
  tb_device_list *list = tbt_discover(CUDA_ONLY);
  assert_int_equal(cuinit_calls(), 1);
  assert_true(tbt_report_has(tb_device_list_report(list, TB_BACKEND_CUDA), "device list",
                             "from cuInit: MIG mode is on at 0000:18:00.0, and CUDA then numbers MIG instances"));
  tb_device_list_destroy(list);

  setenv("FAKE_NVML_MODE", "old", 1);
  list = tbt_discover(CUDA_ONLY);
  assert_int_equal(cuinit_calls(), 2);
  assert_true(tbt_report_has(tb_device_list_report(list, TB_BACKEND_CUDA), "device list",
                             "from cuInit: nvmlDeviceGetName for 0000:18:00.0 returned 3 Not Supported"));
  assert_string_equal(tb_device_property(tbt_nth(list, TB_BACKEND_CUDA, 0), "l2_cache_bytes"), "52428800");
  tb_device_list_destroy(list);
}

/* cuInit runs when the backend opens a GPU, and the ordinal reaches the GPU that was listed. */
static void backend_opens_the_listed_gpu(void **state) {
  (void)state;
  tb_device_list *list = tbt_discover(CUDA_ONLY);
  assert_int_equal(cuinit_calls(), 0);
  const tb_device_info *d = tbt_nth(list, TB_BACKEND_CUDA, 5);
  void *cuda = NULL;
  TB_ASSERT_OK(tb_cuda_ops.open(d, &cuda));
  assert_int_equal(cuinit_calls(), 1);
  gpumem_round_trip(&tb_cuda_ops, cuda);
  tb_cuda_ops.close(cuda);
  tb_device_list_destroy(list);

  /* A numbering that does not match libcuda's (the fake ignores CUDA_VISIBLE_DEVICES) is refused. */
  setenv("CUDA_VISIBLE_DEVICES", "3", 1);
  list = tbt_discover(CUDA_ONLY);
  d = tbt_nth(list, TB_BACKEND_CUDA, 0);
  assert_string_equal(d->pci_bus_id, "0000:5d:00.0");
  cuda = NULL;
  assert_int_equal(tb_cuda_ops.open(d, &cuda), TB_ERR_DRIVER);
  assert_null(cuda);
  TB_ASSERT_CONTAINS(tb_last_error(), "cuda:0: discovery listed the GPU at 0000:5d:00.0 as CUDA ordinal 0, but "
                                      "libcuda has 0000:18:00.0 there");
  tb_device_list_destroy(list);
  unsetenv("CUDA_VISIBLE_DEVICES");

  /* A cuInit error NVML cannot see (Fabric Manager not running) shows when the backend opens the GPU. */
  setenv("FAKE_CUDA_MODE", "init_error", 1);
  setenv("FAKE_CUDA_INIT_CODE", "802", 1);
  list = tbt_discover(CUDA_ONLY);
  d = tbt_nth(list, TB_BACKEND_CUDA, 0);
  assert_true(d->usable);
  assert_int_equal(tb_cuda_ops.open(d, &cuda), TB_ERR_DRIVER);
  TB_ASSERT_CONTAINS(tb_last_error(), "cuda:0: cuInit failed with 802 CUDA_ERROR_SYSTEM_NOT_READY");
  TB_ASSERT_CONTAINS(tb_last_error(), "nvidia-fabricmanager");
  tb_device_list_destroy(list);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test_setup_teardown(nvml_listing_without_cuinit, setup, teardown),
      cmocka_unit_test_setup_teardown(listing_equals_cuinit_listing, setup, teardown),
      cmocka_unit_test_setup_teardown(visible_devices_mapped, setup, teardown),
      cmocka_unit_test_setup_teardown(visible_devices_fall_back_to_cuinit, setup, teardown),
      cmocka_unit_test_setup_teardown(different_gpus, setup, teardown),
      cmocka_unit_test_setup_teardown(mig_and_old_nvml_fall_back, setup, teardown),
      cmocka_unit_test_setup_teardown(backend_opens_the_listed_gpu, setup, teardown),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
