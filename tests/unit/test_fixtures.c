/* Whole machines, end to end: every probe at once on each recorded tree (with the fake drivers where a
 * driver is present), checking the devices, their capabilities, and what `auto` and TB_BACKEND select.
 * The real OpenCL and Vulkan loaders are switched off so only the recorded machine is seen. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "test_util.h"

/* A recorded machine: fixture tree, a recorded CPU, and no vendor library unless a test sets one. */
static void machine(const char *fixture, const char *cpuid_fixture) {
  tbt_clear_env();
  tbt_no_vendor_libs();
  tbt_use_fixture(fixture);
  static char cpuid[1024];
  snprintf(cpuid, sizeof cpuid, "%s/%s/cpuid.txt", TB_TEST_FIXTURES, cpuid_fixture);
  setenv("TB_CPUID_FILE", cpuid, 1);
  unsetenv("FAKE_CUDA_DEVICES");
  unsetenv("FAKE_ZE_DEVICES");
  unsetenv("FAKE_HIP_DEVICES");
}

static tb_device_list *discover_all(void) { return tbt_discover(0); }

/* Select with `request` and check the chosen device string. */
static void expect_selection(const tb_device_list *list, const char *request, const char *device) {
  tb_selection *sel = NULL;
  TB_ASSERT_OK(tb_select(list, request, &sel));
  assert_string_equal(tb_selection_device(sel)->device, device);
  tb_selection_destroy(sel);
}

static bool has_dtype(const tb_device_info *d, tb_dtype t) { return (d->dtypes & TB_DTYPE_BIT(t)) != 0; }
static bool has_feature(const tb_device_info *d, tb_feature f) { return (d->features & TB_FEATURE_BIT(f)) != 0; }

static void h100_server_with_driver(void **state) {
  (void)state;
  machine("h100x8", "cpu_spr");
  setenv("TB_CUDA_LIB", tbt_fake("fake_cuda"), 1);
  setenv("TB_NVML_LIB", tbt_fake("fake_nvml"), 1);
  tb_device_list *list = discover_all();
  assert_int_equal(tbt_count(list, TB_BACKEND_CUDA), 8);
  for (int i = 0; i < 8; i++) {
    const tb_device_info *d = tbt_nth(list, TB_BACKEND_CUDA, i);
    assert_true(d->usable);
    assert_string_equal(d->architecture, "Hopper");
    assert_string_equal(d->arch_id, "sm_90");
    assert_true(has_dtype(d, TB_DTYPE_BF16) && has_dtype(d, TB_DTYPE_FP8_E4M3FN) && has_dtype(d, TB_DTYPE_F16));
    assert_true(has_feature(d, TB_FEATURE_TENSOR_CORES) && has_feature(d, TB_FEATURE_TF32));
    assert_int_equal(d->type, TB_DEVICE_DISCRETE_GPU);
  }
  /* The recorded Sapphire Rapids host: AMX granted, so AMX is a usable feature of cpu:0. */
  const tb_device_info *cpu = tbt_nth(list, TB_BACKEND_CPU, 0);
  assert_non_null(cpu);
  assert_true(has_feature(cpu, TB_FEATURE_AMX_BF16) && has_feature(cpu, TB_FEATURE_AMX_TILE));
  assert_true(has_dtype(cpu, TB_DTYPE_BF16));
  assert_int_equal(tbt_count(list, TB_BACKEND_ROCM) + tbt_count(list, TB_BACKEND_XPU) + tbt_count(list, TB_BACKEND_TPU), 0);
  expect_selection(list, "auto", "cuda:0");
  expect_selection(list, "nvidia:3", "cuda:3");
  expect_selection(list, "cpu", "cpu:0");
  tb_device_list_destroy(list);
}

static void h100_server_without_driver(void **state) {
  (void)state;
  machine("h100x8", "cpu_spr");
  tb_device_list *list = discover_all();
  assert_int_equal(tbt_count(list, TB_BACKEND_CUDA), 8);
  for (int i = 0; i < 8; i++) {
    const tb_device_info *d = tbt_nth(list, TB_BACKEND_CUDA, i);
    assert_false(d->usable);
    assert_int_equal(d->index, -1);
    TB_ASSERT_CONTAINS(d->reason, "libcuda.so.1 not found");
    TB_ASSERT_CONTAINS(d->fix, "TB_CUDA_LIB");
  }
  expect_selection(list, NULL, "cpu:0");
  setenv("TB_BACKEND", "cuda", 1);
  tb_selection *sel = NULL;
  assert_int_equal(tb_select(list, NULL, &sel), TB_ERR_UNAVAILABLE);
  assert_null(sel);
  TB_ASSERT_CONTAINS(tb_last_error(), "TB_BACKEND=cuda");
  TB_ASSERT_CONTAINS(tb_last_error(), "libcuda.so.1 not found");
  tb_device_list_destroy(list);
}

static void mi300x_node(void **state) {
  (void)state;
  machine("mi300x", "cpu_spr");
  setenv("TB_HIP_LIB", tbt_fake("fake_hip"), 1);
  setenv("TB_ROCM_SMI_LIB", tbt_fake("fake_rocm_smi"), 1);
  tb_device_list *list = discover_all();
  assert_int_equal(tbt_count(list, TB_BACKEND_ROCM), 8);
  for (int i = 0; i < 8; i++) {
    const tb_device_info *d = tbt_nth(list, TB_BACKEND_ROCM, i);
    assert_true(d->usable);
    assert_string_equal(d->arch_id, "gfx942");
    assert_string_equal(d->architecture, "CDNA3");
    assert_string_equal(d->memory_type, "HBM3");
    assert_int_equal(d->compute_units, 304);
    assert_true(d->memory_total_known);
    assert_int_equal(d->memory_total, 206158430208ull);
    assert_true(has_feature(d, TB_FEATURE_MATRIX_CORES) && has_dtype(d, TB_DTYPE_BF16));
  }
  expect_selection(list, NULL, "rocm:0");
  expect_selection(list, "AMD", "rocm:0");
  tb_device_list_destroy(list);
}

static void intel_max_node(void **state) {
  (void)state;
  machine("intel_max", "cpu_spr");
  setenv("TB_ZE_LIB", tbt_fake("fake_ze"), 1);
  tb_device_list *list = discover_all();
  assert_int_equal(tbt_count(list, TB_BACKEND_XPU), 4);
  for (int i = 0; i < 4; i++) {
    const tb_device_info *d = tbt_nth(list, TB_BACKEND_XPU, i);
    assert_true(d->usable);
    assert_string_equal(d->architecture, "Xe-HPC");
    assert_true(has_feature(d, TB_FEATURE_XMX) && has_dtype(d, TB_DTYPE_BF16));
    assert_int_equal(d->type, TB_DEVICE_DISCRETE_GPU);
  }
  expect_selection(list, NULL, "xpu:0");
  expect_selection(list, "level_zero:2", "xpu:2");
  tb_device_list_destroy(list);
}

static void tpu_v5e_vm(void **state) {
  (void)state;
  machine("tpu_v5e", "cpu_zen5_epyc");
  unsetenv("TB_TPU_LIB"); /* the fixture has libtpu.so where pip installs it */
  tb_device_list *list = discover_all();
  assert_int_equal(tbt_count(list, TB_BACKEND_TPU), 4);
  for (int i = 0; i < 4; i++) {
    const tb_device_info *d = tbt_nth(list, TB_BACKEND_TPU, i);
    assert_true(d->usable);
    assert_string_equal(d->arch_id, "v5e");
    assert_int_equal(d->type, TB_DEVICE_TPU);
    assert_true(has_feature(d, TB_FEATURE_MXU) && has_dtype(d, TB_DTYPE_BF16));
  }
  expect_selection(list, NULL, "tpu:0");
  /* Without libtpu the chips are listed, unusable, and auto falls back to the CPU: not silently, the
   * explanation says why the TPUs were rejected. */
  setenv("TB_TPU_LIB", "/nonexistent/libtpu.so", 1);
  tb_device_list *without = discover_all();
  assert_int_equal(tbt_count(without, TB_BACKEND_TPU), 4);
  assert_false(tbt_nth(without, TB_BACKEND_TPU, 0)->usable);
  tb_selection *sel = NULL;
  TB_ASSERT_OK(tb_select(without, NULL, &sel));
  assert_string_equal(tb_selection_device(sel)->device, "cpu:0");
  TB_ASSERT_CONTAINS(tb_selection_explain(sel), "libtpu");
  tb_selection_destroy(sel);
  tb_device_list_destroy(without);
  tb_device_list_destroy(list);
}

static void laptop_with_igpu_and_dgpu(void **state) {
  (void)state;
  machine("laptop_intel_nvidia", "cpu_skylake_laptop");
  setenv("TB_CUDA_LIB", tbt_fake("fake_cuda"), 1);
  setenv("TB_NVML_LIB", tbt_fake("fake_nvml"), 1);
  setenv("FAKE_CUDA_DEVICES", "laptop", 1);
  setenv("TB_ZE_LIB", tbt_fake("fake_ze"), 1);
  setenv("FAKE_ZE_DEVICES", "laptop", 1);
  tb_device_list *list = discover_all();
  assert_int_equal(tbt_count(list, TB_BACKEND_CUDA), 1);
  assert_int_equal(tbt_count(list, TB_BACKEND_XPU), 1);
  const tb_device_info *dgpu = tbt_nth(list, TB_BACKEND_CUDA, 0);
  const tb_device_info *igpu = tbt_nth(list, TB_BACKEND_XPU, 0);
  assert_true(dgpu->usable && igpu->usable);
  assert_string_equal(dgpu->architecture, "Ada Lovelace");
  assert_int_equal(dgpu->type, TB_DEVICE_DISCRETE_GPU);
  assert_int_equal(igpu->type, TB_DEVICE_INTEGRATED_GPU);
  assert_string_equal(igpu->architecture, "Xe-LP");
  /* The AVX2-only laptop CPU: no AVX-512, no AMX. */
  const tb_device_info *cpu = tbt_nth(list, TB_BACKEND_CPU, 0);
  assert_true(has_feature(cpu, TB_FEATURE_AVX2));
  assert_false(has_feature(cpu, TB_FEATURE_AVX512F) || has_feature(cpu, TB_FEATURE_AMX_TILE));
  /* auto: the discrete NVIDIA GPU first, the integrated Intel GPU second, the CPU last. */
  tb_selection *sel = NULL;
  TB_ASSERT_OK(tb_select(list, NULL, &sel));
  assert_string_equal(tb_selection_device(sel)->device, "cuda:0");
  int rank_xpu = 0, rank_cpu = 0;
  for (size_t i = 0; i < tb_selection_candidate_count(sel); i++) {
    const tb_candidate *c = tb_selection_candidate(sel, i);
    if (strcmp(c->device->device, "xpu:0") == 0) rank_xpu = c->rank;
    if (strcmp(c->device->device, "cpu:0") == 0) rank_cpu = c->rank;
  }
  assert_int_equal(rank_xpu, 2);
  assert_int_equal(rank_cpu, 3);
  tb_selection_destroy(sel);
  setenv("TB_BACKEND", "intel", 1);
  expect_selection(list, NULL, "xpu:0");
  tb_device_list_destroy(list);
}

static void nvidia_gpu_without_kernel_driver(void **state) {
  (void)state;
  machine("nvidia_nodriver", "cpu_zen5_epyc");
  tb_device_list *list = discover_all();
  assert_int_equal(tbt_count(list, TB_BACKEND_CUDA), 1);
  const tb_device_info *d = tbt_nth(list, TB_BACKEND_CUDA, 0);
  assert_false(d->usable);
  TB_ASSERT_CONTAINS(d->reason, "no kernel driver is bound");
  TB_ASSERT_CONTAINS(d->fix, "NVIDIA driver");
  assert_string_equal(d->architecture, "Ada Lovelace"); /* from the PCI id: an RTX 4090 */
  expect_selection(list, NULL, "cpu:0");
  tb_selection *sel = NULL;
  assert_int_equal(tb_select(list, "cuda", &sel), TB_ERR_UNAVAILABLE);
  TB_ASSERT_CONTAINS(tb_last_error(), "no kernel driver is bound");
  tb_device_list_destroy(list);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(h100_server_with_driver), cmocka_unit_test(h100_server_without_driver),
      cmocka_unit_test(mi300x_node),             cmocka_unit_test(intel_max_node),
      cmocka_unit_test(tpu_v5e_vm),              cmocka_unit_test(laptop_with_igpu_and_dgpu),
      cmocka_unit_test(nvidia_gpu_without_kernel_driver),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
