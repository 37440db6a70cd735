/* Selection by `auto`: the ranking of DESIGN.md §4 on machines built by hand (no probes), the
 * verdict of every candidate, and the explanation text. */
#include "test_select_helpers.h"

static void eight_h100_picks_cuda0(void **state) {
  (void)state;
  tb_device_list *l = tb_devlist_new();
  static const char *const bus[8] = {"0000:18:00.0", "0000:2a:00.0", "0000:3a:00.0", "0000:5d:00.0",
                                     "0000:9a:00.0", "0000:ab:00.0", "0000:ba:00.0", "0000:db:00.0"};
  sel_add_cpu(l);
  for (int i = 0; i < 8; i++) sel_add_h100(l, bus[i]);
  sel_finish(l);
  tb_selection *sel = sel_select_ok(l, NULL);
  assert_string_equal(tb_selection_device(sel)->device, "cuda:0");
  assert_string_equal(tb_selection_request(sel), "auto");
  assert_string_equal(tb_selection_source(sel), "default");
  assert_int_equal(tb_selection_candidate_count(sel), 9);
  for (int i = 0; i < 8; i++) {
    const tb_candidate *c = tb_selection_candidate(sel, (size_t)i);
    char want[16];
    snprintf(want, sizeof want, "cuda:%d", i);
    assert_string_equal(c->device->device, want);
    assert_int_equal(c->rank, i + 1);
    assert_int_equal(c->chosen, i == 0);
  }
  const tb_candidate *first = tb_selection_candidate(sel, 0);
  TB_ASSERT_CONTAINS(first->verdict, "chosen: the best of 9 usable candidates");
  TB_ASSERT_CONTAINS(first->verdict, "listed first");
  const tb_candidate *cpu = tb_selection_candidate(sel, 8);
  assert_string_equal(cpu->device->device, "cpu:0");
  assert_int_equal(cpu->rank, 9);
  TB_ASSERT_CONTAINS(cpu->verdict, "usable, rank 9; cuda:7 ranks above it: the default order puts cuda before cpu");
  const char *text = tb_selection_explain(sel);
  const char *nl = strchr(text, '\n');
  assert_non_null(nl);
  assert_int_equal((int)(nl - text), (int)strlen("selected cuda:0 (NVIDIA H100 80GB HBM3, Hopper) from request 'auto' (default)"));
  assert_memory_equal(text, "selected cuda:0 (NVIDIA H100 80GB HBM3, Hopper) from request 'auto' (default)\n", (size_t)(nl - text + 1));
  TB_ASSERT_CONTAINS(text, "   1. cuda:0  NVIDIA H100 80GB HBM3 - chosen:");
  TB_ASSERT_CONTAINS(text, "   9. cpu:0   AMD EPYC 9B45 - usable, rank 9");
  tb_selection_destroy(sel);
  tb_device_list_destroy(l);
}

static void mi300x_picks_rocm0(void **state) {
  (void)state;
  tb_device_list *l = tb_devlist_new();
  sel_add_cpu(l);
  for (int i = 0; i < 8; i++) {
    char bus[16];
    snprintf(bus, sizeof bus, "0000:%02x:00.0", 0x0c + 0x10 * i);
    sel_add(l, TB_BACKEND_ROCM, "AMD Instinct MI300X", "AMD", "CDNA3", TB_DEVICE_DISCRETE_GPU, 9, 4, 192, 304, bus);
  }
  sel_finish(l);
  tb_selection *sel = sel_select_ok(l, "auto");
  assert_string_equal(tb_selection_device(sel)->device, "rocm:0");
  assert_string_equal(tb_selection_source(sel), "argument");
  assert_string_equal(sel_candidate(sel, "cpu:0")->verdict, "usable, rank 9; rocm:7 ranks above it: the default order puts rocm before cpu");
  TB_ASSERT_CONTAINS(tb_selection_explain(sel), "selected rocm:0 (AMD Instinct MI300X, CDNA3) from request 'auto' (argument)\n");
  tb_selection_destroy(sel);
  tb_device_list_destroy(l);
}

/* A laptop: Intel iGPU through Level Zero and Vulkan, NVIDIA dGPU through CUDA and Vulkan, lavapipe. */
static void laptop_picks_dgpu_and_lists_routes_once(void **state) {
  (void)state;
  tb_device_list *l = tb_devlist_new();
  sel_add_cpu(l);
  sel_add(l, TB_BACKEND_CUDA, "NVIDIA GeForce RTX 4060 Laptop GPU", "NVIDIA", "Ada Lovelace", TB_DEVICE_DISCRETE_GPU, 8, 9,
          8, 24, "0000:01:00.0");
  sel_add(l, TB_BACKEND_XPU, "Intel(R) Iris(R) Xe Graphics", "Intel", "Xe-LP", TB_DEVICE_INTEGRATED_GPU, 0, 0, 15, 96,
          "0000:00:02.0");
  sel_add(l, TB_BACKEND_VULKAN, "Intel(R) Iris(R) Xe Graphics (TGL GT2)", "Intel", "", TB_DEVICE_INTEGRATED_GPU, 0, 0, 15,
          0, "0000:00:02.0");
  sel_add(l, TB_BACKEND_VULKAN, "NVIDIA GeForce RTX 4060 Laptop GPU", "NVIDIA", "", TB_DEVICE_DISCRETE_GPU, 0, 0, 8, 0,
          "0000:01:00.0");
  sel_add(l, TB_BACKEND_VULKAN, "llvmpipe (LLVM 15.0.6, 256 bits)", "Mesa", "", TB_DEVICE_CPU, 0, 0, 16, 0, NULL);
  sel_finish(l);
  const tb_device_info *vk1 = tbt_nth(l, TB_BACKEND_VULKAN, 1);
  assert_string_equal(vk1->routes, "cuda:0");
  tb_selection *sel = sel_select_ok(l, NULL);
  assert_string_equal(tb_selection_device(sel)->device, "cuda:0");
  assert_int_equal(sel_candidate(sel, "xpu:0")->rank, 2);
  assert_int_equal(sel_candidate(sel, "cpu:0")->rank, 3);
  const tb_candidate *v0 = sel_candidate(sel, "vulkan:0"), *v1 = sel_candidate(sel, "vulkan:1"),
                     *v2 = sel_candidate(sel, "vulkan:2");
  assert_int_equal(v0->rank, 0);
  assert_false(v0->chosen);
  assert_string_equal(v0->verdict, "same hardware as xpu:0, reached through its native backend");
  assert_string_equal(v1->verdict, "same hardware as cuda:0, reached through its native backend");
  assert_string_equal(v2->verdict,
                      "rejected: a CPU implementation of Vulkan (llvmpipe); the native CPU backend is faster");
  TB_ASSERT_CONTAINS(tb_selection_candidate(sel, 1)->verdict, "cuda:0 ranks above it: the default order puts cuda before xpu");
  /* Ranked first, then the others in list order. */
  assert_string_equal(tb_selection_candidate(sel, 3)->device->device, "vulkan:0");
  tb_selection_destroy(sel);
  tb_device_list_destroy(l);
}

/* Without Level Zero the iGPU is reached through Vulkan only; it still ranks (behind CUDA). */
static void laptop_igpu_through_vulkan_only(void **state) {
  (void)state;
  tb_device_list *l = tb_devlist_new();
  sel_add_cpu(l);
  sel_add(l, TB_BACKEND_CUDA, "NVIDIA GeForce RTX 4060 Laptop GPU", "NVIDIA", "Ada Lovelace", TB_DEVICE_DISCRETE_GPU, 8, 9,
          8, 24, "0000:01:00.0");
  sel_add(l, TB_BACKEND_VULKAN, "Intel(R) Iris(R) Xe Graphics (TGL GT2)", "Intel", "", TB_DEVICE_INTEGRATED_GPU, 0, 0, 15,
          0, "0000:00:02.0");
  sel_add(l, TB_BACKEND_VULKAN, "NVIDIA GeForce RTX 4060 Laptop GPU", "NVIDIA", "", TB_DEVICE_DISCRETE_GPU, 0, 0, 8, 0,
          "0000:01:00.0");
  sel_finish(l);
  tb_selection *sel = sel_select_ok(l, NULL);
  assert_string_equal(tb_selection_device(sel)->device, "cuda:0");
  assert_int_equal(sel_candidate(sel, "vulkan:0")->rank, 2);
  TB_ASSERT_CONTAINS(sel_candidate(sel, "vulkan:0")->verdict, "the default order puts cuda before vulkan");
  assert_int_equal(sel_candidate(sel, "vulkan:1")->rank, 0);
  TB_ASSERT_CONTAINS(sel_candidate(sel, "cpu:0")->verdict, "vulkan:0 ranks above it: the default order puts vulkan before cpu");
  tb_selection_destroy(sel);
  tb_device_list_destroy(l);
}

static void nvidia_without_driver_falls_to_cpu_with_reason(void **state) {
  (void)state;
  tb_device_list *l = tb_devlist_new();
  sel_add_cpu(l);
  sel_add_nvidia_no_driver(l, "0000:3b:00.0");
  sel_finish(l);
  tb_selection *sel = sel_select_ok(l, NULL);
  assert_string_equal(tb_selection_device(sel)->device, "cpu:0");
  assert_string_equal(tb_selection_candidate(sel, 0)->verdict, "chosen: the only usable candidate");
  const tb_candidate *gpu = sel_candidate(sel, "pci:0000:3b:00.0");
  assert_int_equal(gpu->rank, 0);
  assert_string_equal(gpu->verdict,
                      "rejected: NVIDIA GPU at 0000:3b:00.0 present but libcuda.so.1 not found in the loader path");
  const char *text = tb_selection_explain(sel);
  TB_ASSERT_CONTAINS(text, "selected cpu:0 (AMD EPYC 9B45, Zen 5) from request 'auto' (default)\n");
  TB_ASSERT_CONTAINS(text, "   -  pci:0000:3b:00.0  NVIDIA GPU 10de:2330 - rejected: NVIDIA GPU at 0000:3b:00.0");
  TB_ASSERT_CONTAINS(text, "; fix: install the NVIDIA driver (nvidia-driver package)");
  tb_selection_destroy(sel);
  tb_device_list_destroy(l);
}

/* A GPU whose native driver is missing but that Vulkan reaches (nouveau/NVK): the Vulkan route ranks. */
static void unusable_native_route_lets_vulkan_rank(void **state) {
  (void)state;
  tb_device_list *l = tb_devlist_new();
  sel_add_cpu(l);
  sel_add_nvidia_no_driver(l, "0000:3b:00.0");
  sel_add(l, TB_BACKEND_VULKAN, "NVK AD104", "NVIDIA", "", TB_DEVICE_DISCRETE_GPU, 0, 0, 12, 0, "0000:3b:00.0");
  sel_finish(l);
  tb_selection *sel = sel_select_ok(l, NULL);
  assert_string_equal(tb_selection_device(sel)->device, "vulkan:0");
  TB_ASSERT_CONTAINS(sel_candidate(sel, "pci:0000:3b:00.0")->verdict, "rejected: NVIDIA GPU at 0000:3b:00.0 present");
  tb_selection_destroy(sel);
  tb_device_list_destroy(l);
}

static void cuda_before_rocm(void **state) {
  (void)state;
  tb_device_list *l = tb_devlist_new();
  sel_add_cpu(l);
  sel_add(l, TB_BACKEND_ROCM, "AMD Instinct MI250X", "AMD", "CDNA2", TB_DEVICE_DISCRETE_GPU, 9, 0, 128, 220, "0000:c1:00.0");
  sel_add(l, TB_BACKEND_CUDA, "NVIDIA A100-SXM4-40GB", "NVIDIA", "Ampere", TB_DEVICE_DISCRETE_GPU, 8, 0, 40, 108,
          "0000:07:00.0");
  sel_finish(l);
  tb_selection *sel = sel_select_ok(l, NULL);
  assert_string_equal(tb_selection_device(sel)->device, "cuda:0");
  TB_ASSERT_CONTAINS(tb_selection_candidate(sel, 0)->verdict, "it ranks above rocm:0: the default order puts cuda before rocm");
  assert_string_equal(tb_selection_candidate(sel, 1)->device->device, "rocm:0");
  assert_string_equal(tb_selection_candidate(sel, 2)->device->device, "cpu:0");
  tb_selection_destroy(sel);
  tb_device_list_destroy(l);
}

static void cpu_implementations_lose_to_native_cpu(void **state) {
  (void)state;
  tb_device_list *l = tb_devlist_new();
  sel_add_cpu(l);
  sel_add(l, TB_BACKEND_VULKAN, "llvmpipe (LLVM 15.0.6, 256 bits)", "Mesa", "", TB_DEVICE_CPU, 0, 0, 16, 0, NULL);
  sel_add(l, TB_BACKEND_OPENCL, "cpu-znver4-AMD EPYC 9B45", "AuthenticAMD", "", TB_DEVICE_CPU, 0, 0, 16, 4, NULL);
  sel_finish(l);
  tb_selection *sel = sel_select_ok(l, NULL);
  assert_string_equal(tb_selection_device(sel)->device, "cpu:0");
  assert_int_equal(sel_candidate(sel, "vulkan:0")->rank, 0);
  assert_string_equal(sel_candidate(sel, "opencl:0")->verdict,
                      "rejected: a CPU implementation of OpenCL (cpu-znver4-AMD EPYC 9B45); the native CPU backend is faster");
  TB_ASSERT_CONTAINS(sel_candidate(sel, "vulkan:0")->verdict, "CPU implementation of Vulkan (llvmpipe)");
  tb_selection_destroy(sel);
  /* Asked for by name, a CPU implementation is what the user gets. */
  sel = sel_select_ok(l, "vulkan");
  assert_string_equal(tb_selection_device(sel)->device, "vulkan:0");
  assert_int_equal(tb_selection_candidate_count(sel), 1);
  tb_selection_destroy(sel);
  tb_device_list_destroy(l);
}

/* Without a usable native CPU device, a CPU implementation is better than nothing. */
static void cpu_implementation_ranks_when_no_native_cpu(void **state) {
  (void)state;
  tb_device_list *l = tb_devlist_new();
  tb_device_info *cpu = sel_add_cpu(l);
  tb_dev_unusable(l, cpu, NULL, "cpuinfo unreadable");
  sel_add(l, TB_BACKEND_VULKAN, "llvmpipe (LLVM 15.0.6, 256 bits)", "Mesa", "", TB_DEVICE_CPU, 0, 0, 16, 0, NULL);
  sel_finish(l);
  tb_selection *sel = sel_select_ok(l, NULL);
  assert_string_equal(tb_selection_device(sel)->device, "vulkan:0");
  assert_string_equal(sel_candidate(sel, "cpu:0")->verdict, "rejected: cpuinfo unreadable");
  tb_selection_destroy(sel);
  tb_device_list_destroy(l);
}

/* A discrete AMD GPU with only Vulkan and OpenCL (no ROCm): Vulkan is preferred for the same hardware. */
static void vulkan_only_amd_gpu_is_chosen(void **state) {
  (void)state;
  tb_device_list *l = tb_devlist_new();
  sel_add_cpu(l);
  sel_add(l, TB_BACKEND_VULKAN, "AMD Radeon RX 7800 XT (RADV NAVI32)", "AMD", "", TB_DEVICE_DISCRETE_GPU, 0, 0, 16, 60,
          "0000:03:00.0");
  sel_add(l, TB_BACKEND_OPENCL, "AMD Radeon RX 7800 XT (radeonsi, navi32)", "AMD", "", TB_DEVICE_DISCRETE_GPU, 0, 0, 16,
          60, "0000:03:00.0");
  sel_finish(l);
  tb_selection *sel = sel_select_ok(l, NULL);
  assert_string_equal(tb_selection_device(sel)->device, "vulkan:0");
  assert_string_equal(sel_candidate(sel, "opencl:0")->verdict,
                      "same hardware as vulkan:0, reached through Vulkan, which is preferred over OpenCL");
  assert_int_equal(sel_candidate(sel, "cpu:0")->rank, 2);
  tb_selection_destroy(sel);
  tb_device_list_destroy(l);
}

static void newer_then_larger_then_discrete(void **state) {
  (void)state;
  tb_device_list *l = tb_devlist_new();
  sel_add_cpu(l);
  sel_add(l, TB_BACKEND_CUDA, "NVIDIA A100-SXM4-80GB", "NVIDIA", "Ampere", TB_DEVICE_DISCRETE_GPU, 8, 0, 80, 108, "0000:01:00.0");
  sel_add(l, TB_BACKEND_CUDA, "NVIDIA H100 PCIe", "NVIDIA", "Hopper", TB_DEVICE_DISCRETE_GPU, 9, 0, 80, 114, "0000:02:00.0");
  sel_add(l, TB_BACKEND_CUDA, "NVIDIA A100-SXM4-40GB", "NVIDIA", "Ampere", TB_DEVICE_DISCRETE_GPU, 8, 0, 40, 108, "0000:03:00.0");
  sel_add(l, TB_BACKEND_CUDA, "NVIDIA H100 80GB HBM3", "NVIDIA", "Hopper", TB_DEVICE_DISCRETE_GPU, 9, 0, 80, 132, "0000:04:00.0");
  sel_add(l, TB_BACKEND_VULKAN, "Intel(R) Arc(tm) Graphics (MTL)", "Intel", "", TB_DEVICE_INTEGRATED_GPU, 0, 0, 32, 0, "0000:00:02.0");
  sel_add(l, TB_BACKEND_VULKAN, "AMD Radeon RX 6600 (RADV NAVI23)", "AMD", "", TB_DEVICE_DISCRETE_GPU, 0, 0, 8, 28, "0000:05:00.0");
  sel_finish(l);
  tb_selection *sel = sel_select_ok(l, NULL);
  static const char *const order[] = {"cuda:3", "cuda:1", "cuda:0", "cuda:2", "vulkan:1", "vulkan:0", "cpu:0"};
  assert_int_equal(tb_selection_candidate_count(sel), 7);
  for (size_t i = 0; i < 7; i++) assert_string_equal(tb_selection_candidate(sel, i)->device->device, order[i]);
  TB_ASSERT_CONTAINS(tb_selection_candidate(sel, 0)->verdict, "it ranks above cuda:1: more compute units (132 vs 114)");
  TB_ASSERT_CONTAINS(tb_selection_candidate(sel, 2)->verdict, "cuda:1 ranks above it: a newer architecture (Hopper, 9.0 vs Ampere, 8.0)");
  TB_ASSERT_CONTAINS(tb_selection_candidate(sel, 3)->verdict, "more memory (80.0 GiB vs 40.0 GiB)");
  TB_ASSERT_CONTAINS(tb_selection_candidate(sel, 5)->verdict, "a discrete GPU comes before an integrated GPU");
  tb_selection_destroy(sel);
  tb_device_list_destroy(l);
}

/* gfx numbers of CDNA and RDNA are not one sequence: memory decides between the two lines. */
static void amd_lines_compare_by_memory(void **state) {
  (void)state;
  tb_device_list *l = tb_devlist_new();
  sel_add(l, TB_BACKEND_ROCM, "AMD Radeon RX 7900 XTX", "AMD", "RDNA3", TB_DEVICE_DISCRETE_GPU, 11, 0, 24, 96, "0000:03:00.0");
  sel_add(l, TB_BACKEND_ROCM, "AMD Instinct MI210", "AMD", "CDNA2", TB_DEVICE_DISCRETE_GPU, 9, 0, 64, 104, "0000:43:00.0");
  sel_add(l, TB_BACKEND_ROCM, "AMD Instinct MI300X", "AMD", "CDNA3", TB_DEVICE_DISCRETE_GPU, 9, 4, 192, 304, "0000:83:00.0");
  sel_finish(l);
  tb_selection *sel = sel_select_ok(l, "rocm");
  assert_string_equal(tb_selection_candidate(sel, 0)->device->device, "rocm:2");
  assert_string_equal(tb_selection_candidate(sel, 1)->device->device, "rocm:1");
  assert_string_equal(tb_selection_candidate(sel, 2)->device->device, "rocm:0");
  TB_ASSERT_CONTAINS(tb_selection_candidate(sel, 1)->verdict, "a newer architecture (CDNA3, 9.4 vs CDNA2, 9.0)");
  TB_ASSERT_CONTAINS(tb_selection_candidate(sel, 2)->verdict, "more memory (64.0 GiB vs 24.0 GiB)");
  tb_selection_destroy(sel);
  tb_device_list_destroy(l);
}

static void nothing_usable_is_unavailable(void **state) {
  (void)state;
  tb_device_list *l = tb_devlist_new();
  sel_add_nvidia_no_driver(l, "0000:3b:00.0");
  sel_finish(l);
  tb_selection *sel = (tb_selection *)1;
  assert_int_equal(tb_select(l, NULL, &sel), TB_ERR_UNAVAILABLE);
  assert_null(sel);
  TB_ASSERT_CONTAINS(tb_last_error(), "request 'auto' (default) found no usable device among 1 listed");
  TB_ASSERT_CONTAINS(tb_last_error(), "cuda: libcuda.so.1 not found");
  TB_ASSERT_CONTAINS(tb_last_error(), "tb doctor");
  tb_device_list_destroy(l);
  /* An empty list (nothing probed) too. */
  l = sel_finish(tb_devlist_new());
  assert_int_equal(tb_select(l, "auto", &sel), TB_ERR_UNAVAILABLE);
  TB_ASSERT_CONTAINS(tb_last_error(), "cpu: not probed");
  tb_device_list_destroy(l);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test_setup(eight_h100_picks_cuda0, tbt_setup_clean_env),
      cmocka_unit_test_setup(mi300x_picks_rocm0, tbt_setup_clean_env),
      cmocka_unit_test_setup(laptop_picks_dgpu_and_lists_routes_once, tbt_setup_clean_env),
      cmocka_unit_test_setup(laptop_igpu_through_vulkan_only, tbt_setup_clean_env),
      cmocka_unit_test_setup(nvidia_without_driver_falls_to_cpu_with_reason, tbt_setup_clean_env),
      cmocka_unit_test_setup(unusable_native_route_lets_vulkan_rank, tbt_setup_clean_env),
      cmocka_unit_test_setup(cuda_before_rocm, tbt_setup_clean_env),
      cmocka_unit_test_setup(cpu_implementations_lose_to_native_cpu, tbt_setup_clean_env),
      cmocka_unit_test_setup(cpu_implementation_ranks_when_no_native_cpu, tbt_setup_clean_env),
      cmocka_unit_test_setup(vulkan_only_amd_gpu_is_chosen, tbt_setup_clean_env),
      cmocka_unit_test_setup(newer_then_larger_then_discrete, tbt_setup_clean_env),
      cmocka_unit_test_setup(amd_lines_compare_by_memory, tbt_setup_clean_env),
      cmocka_unit_test_setup(nothing_usable_is_unavailable, tbt_setup_clean_env),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
