/* `tb` on recorded machines (tests/fixtures through TB_FSROOT, fake vendor libraries): an 8x H100
 * server with its driver, a GPU without a driver, and an MI300X node without ROCm. Checks the table
 * columns, the why/fix lines, selection, `info` fields and doctor's to-do list as a user sees them. */
#include "test_cli_util.h"

static int setup(void **state) {
  tbt_setup_clean_nvidia(state);
  tbt_no_vendor_libs(); /* no real Vulkan/OpenCL devices: the output depends on the fixture only */
  return 0;
}

static void h100x8_with_driver(void) {
  tbt_use_fixture("h100x8");
  tbt_use_nvidia_fakes();
}

static void h100_server_table_selection_and_info(void **state) {
  (void)state;
  h100x8_with_driver();
  tcli_run r = tcli("devices");
  TCLI_ASSERT_EXIT(r, 0);
  char line[1024], prefix[32];
  for (int i = 0; i < 8; i++) {
    snprintf(prefix, sizeof prefix, "cuda:%d ", i);
    if (!tbt_line(r.out, prefix, line, sizeof line)) fail_msg("no %s line in:\n%s", prefix, r.out);
    TB_ASSERT_CONTAINS(line, "NVIDIA H100 80GB HBM3");
    TB_ASSERT_CONTAINS(line, "discrete_gpu");
    TB_ASSERT_CONTAINS(line, "Hopper");
    TB_ASSERT_CONTAINS(line, "/79.6 GiB"); /* free/total from NVML, total 85520809984 bytes */
    assert_string_equal(line + strlen(line) - 5, "  yes");
  }
  assert_null(strstr(r.out, "\ncuda: ")); /* cuda found devices: no "found nothing" line */
  TB_ASSERT_CONTAINS(r.out, "\nrocm: ");
  assert_null(strstr(r.out, "  why: "));
  tcli_free(&r);

  tcli_expect_out("select", 0, "cuda:0\n");
  tcli_expect_out("select nvidia:3", 0, "cuda:3\n");
  tcli_expect_err("select cuda:8", 2, "cuda:8");

  r = tcli("info cuda:0");
  TCLI_ASSERT_EXIT(r, 0);
  assert_non_null(tbt_line(r.out, "  compute capability:", line, sizeof line));
  TB_ASSERT_CONTAINS(line, " 9.0");
  assert_non_null(tbt_line(r.out, "  memory total:", line, sizeof line));
  TB_ASSERT_CONTAINS(line, " 79.6 GiB (85520809984 bytes)");
  assert_non_null(tbt_line(r.out, "  pci bus id:", line, sizeof line));
  TB_ASSERT_CONTAINS(line, " 0000:18:00.0");
  assert_non_null(tbt_line(r.out, "  features:", line, sizeof line));
  TB_ASSERT_CONTAINS(line, " tensor_cores");
  assert_non_null(tbt_line(r.out, "  dtypes:", line, sizeof line));
  TB_ASSERT_CONTAINS(line, " fp8_e4m3fn");
  tcli_free(&r);

  r = tcli("info cuda --json");
  TCLI_ASSERT_EXIT(r, 0);
  cJSON *root = tcli_json(r.out);
  assert_int_equal(cJSON_GetArraySize(root), 8);
  const cJSON *d = cJSON_GetArrayItem(root, 7);
  assert_string_equal(tcli_json_str(d, "device"), "cuda:7");
  assert_string_equal(tcli_json_str(d, "compute_capability"), "9.0");
  assert_true(cJSON_GetObjectItemCaseSensitive(d, "memory_total_bytes")->valuedouble == 85520809984.0);
  cJSON_Delete(root);
  tcli_free(&r);

  r = tcli("doctor");
  TCLI_ASSERT_EXIT(r, 0);
  assert_non_null(tbt_line(r.out, "cuda: ", line, sizeof line));
  TB_ASSERT_CONTAINS(line, "cuda: available: ");
  TB_ASSERT_CONTAINS(r.out, "\n  auto picks cuda:0");
  tcli_free(&r);
}

static void gpu_without_driver_says_why_and_what_to_do(void **state) {
  (void)state;
  tbt_use_fixture("nvidia_nodriver");
  tcli_run r = tcli("devices");
  TCLI_ASSERT_EXIT(r, 0);
  char line[2048];
  assert_non_null(tbt_line(r.out, "pci:0000:01:00.0 ", line, sizeof line));
  TB_ASSERT_CONTAINS(line, "NVIDIA");
  assert_string_equal(line + strlen(line) - 4, "  no");
  const char *why = strstr(r.out, "\n  why: ");
  assert_non_null(why);
  TB_ASSERT_CONTAINS(why, "0000:01:00.0");
  const char *fix = strstr(why + 1, "\n");
  assert_int_equal(strncmp(fix, "\n  fix: ", 8), 0);
  TB_ASSERT_CONTAINS(fix, "NVIDIA driver");
  tcli_free(&r);

  /* The device's fix is in doctor's to-do list, under cuda. */
  tb_device_list *list = tbt_discover(1u << TB_BACKEND_CUDA);
  const tb_device_info *gpu = tbt_nth(list, TB_BACKEND_CUDA, 0);
  assert_non_null(gpu);
  assert_false(gpu->usable);
  char expected[2048];
  snprintf(expected, sizeof expected, "\n  - cuda: %s\n", gpu->fix);
  r = tcli("doctor");
  TCLI_ASSERT_EXIT(r, 0);
  assert_non_null(tbt_line(r.out, "cuda: ", line, sizeof line));
  TB_ASSERT_CONTAINS(line, "cuda: found, not usable: ");
  TB_ASSERT_CONTAINS(strstr(r.out, "\nTo do:\n"), expected);
  TB_ASSERT_CONTAINS(r.out, "\n  auto picks cpu:0");
  tcli_free(&r);
  tb_device_list_destroy(list);

  /* Asking for CUDA fails with the reason; auto does not fall back silently when CUDA is named. */
  setenv("TB_BACKEND", "cuda", 1);
  r = tcli("select");
  TCLI_ASSERT_EXIT(r, 3);
  assert_string_equal(r.out, "");
  TB_ASSERT_CONTAINS(r.err, "tb: error: TB_BACKEND=cuda");
  TB_ASSERT_CONTAINS(r.err, "0000:01:00.0");
  tcli_free(&r);
}

static void mi300x_without_rocm_shows_total_memory(void **state) {
  (void)state;
  tbt_use_fixture("mi300x");
  tcli_run r = tcli("devices");
  TCLI_ASSERT_EXIT(r, 0);
  char line[1024];
  assert_non_null(tbt_line(r.out, "pci:0000:05:00.0 ", line, sizeof line));
  TB_ASSERT_CONTAINS(line, "AMD Instinct MI300X");
  TB_ASSERT_CONTAINS(line, "CDNA3");
  TB_ASSERT_CONTAINS(line, " 192.0 GiB ");
  TB_ASSERT_CONTAINS(r.out, "\n  why: ");
  tcli_free(&r);

  tcli_expect_err("select amd", 3, "tb: error: ");

  r = tcli("devices --json");
  TCLI_ASSERT_EXIT(r, 0);
  cJSON *root = tcli_json(r.out);
  const cJSON *d, *mi300 = NULL;
  cJSON_ArrayForEach(d, cJSON_GetObjectItemCaseSensitive(root, "devices"))
    if (strcmp(tcli_json_str(d, "device"), "pci:0000:05:00.0") == 0) mi300 = d;
  assert_non_null(mi300);
  assert_false(cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(mi300, "usable")));
  assert_true(tcli_json_str(mi300, "reason")[0] != '\0');
  assert_true(cJSON_IsNull(cJSON_GetObjectItemCaseSensitive(mi300, "memory_free_bytes")));
  cJSON_Delete(root);
  tcli_free(&r);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test_setup(h100_server_table_selection_and_info, setup),
      cmocka_unit_test_setup(gpu_without_driver_says_why_and_what_to_do, setup),
      cmocka_unit_test_setup(mi300x_without_rocm_shows_total_memory, setup),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
