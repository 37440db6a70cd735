/* `tb info --memory`: the memory stats of a fresh CPU backend on a recorded machine (zeros, and the free and
 * total memory the CPU device reports), as text and as JSON; every usable device of the live machine shown;
 * unknown names exit 2; a backend without a usable device exits 3 with its summary; an unusable device
 * named alone shows the library's reason; a TPU (a backend with no memory support in this build) shows
 * the library's TB_ERR_UNSUPPORTED message instead of stats, while the CPU beside it still works. */
#include "test_cli_util.h"

/* The Sapphire Rapids recording: 64 GiB total, 56 GiB available (tests/fixtures/cpu_spr). */
#define SPR_TOTAL "68719476736"
#define SPR_FREE "60129542144"

static void expect_line(const char *out, const char *expected) {
  char line[1024], prefix[64];
  const char *colon = strchr(expected + 2, ':');
  assert_non_null(colon);
  snprintf(prefix, sizeof prefix, "%.*s", (int)(colon - expected + 1), expected);
  if (!tbt_line(out, prefix, line, sizeof line)) fail_msg("no \"%s\" line in:\n%s", prefix, out);
  assert_string_equal(line, expected);
}

static void memory_cpu_text(void **state) {
  (void)state;
  tcli_recorded_spr();
  tcli_run r = tcli("info --memory cpu");
  TCLI_ASSERT_EXIT(r, 0);
  static const char head[] = "cpu:0: Intel(R) Xeon(R) Gold 5415+\n";
  assert_true(strncmp(r.out, head, strlen(head)) == 0);
  expect_line(r.out, "  allocated:          0 B (0 bytes)");
  expect_line(r.out, "  requested:          0 B (0 bytes)");
  expect_line(r.out, "  reserved:           0 B (0 bytes)");
  expect_line(r.out, "  peak allocated:     0 B (0 bytes)");
  expect_line(r.out, "  peak reserved:      0 B (0 bytes)");
  expect_line(r.out, "  allocations:        0 (0 freed)");
  expect_line(r.out, "  device allocations: 0 (0 freed)");
  expect_line(r.out, "  oom retries:        0");
  expect_line(r.out, "  device free:        56.0 GiB (" SPR_FREE " bytes)");
  expect_line(r.out, "  device total:       64.0 GiB (" SPR_TOTAL " bytes)");
  expect_line(r.out, "  limit:              none");
  assert_string_equal(r.err, "");
  tcli_free(&r);
  /* The same device named as a device string and through an alias of nothing else: the same text. */
  tcli_run again = tcli("info cpu:0 --memory");
  TCLI_ASSERT_EXIT(again, 0);
  tcli_run first = tcli("info --memory cpu");
  assert_string_equal(again.out, first.out);
  tcli_free(&again);
  tcli_free(&first);
}

static double json_number(const cJSON *o, const char *key) {
  const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, key);
  if (!cJSON_IsNumber(v)) fail_msg("JSON key \"%s\" is missing or not a number", key);
  return v->valuedouble;
}

static void memory_cpu_json(void **state) {
  (void)state;
  tcli_recorded_spr();
  tcli_run r = tcli("info --memory cpu --json");
  TCLI_ASSERT_EXIT(r, 0);
  cJSON *root = tcli_json(r.out);
  assert_true(cJSON_IsArray(root));
  assert_int_equal(cJSON_GetArraySize(root), 1);
  const cJSON *entry = cJSON_GetArrayItem(root, 0);
  assert_string_equal(tcli_json_str(entry, "device"), "cpu:0");
  assert_null(cJSON_GetObjectItemCaseSensitive(entry, "error"));
  const cJSON *memory = cJSON_GetObjectItemCaseSensitive(entry, "memory");
  assert_true(cJSON_IsObject(memory));
  static const char *const zero_keys[] = {"allocated_bytes",      "requested_bytes",     "reserved_bytes",
                                          "peak_allocated_bytes", "peak_reserved_bytes", "num_allocs",
                                          "num_frees",            "num_device_allocs",   "num_device_frees",
                                          "num_oom_retries"};
  for (size_t i = 0; i < sizeof zero_keys / sizeof zero_keys[0]; i++)
    if (json_number(memory, zero_keys[i]) != 0) fail_msg("%s is not 0 in %s", zero_keys[i], r.out);
  assert_true(json_number(memory, "device_total_bytes") == 68719476736.0);
  assert_true(json_number(memory, "device_free_bytes") == 60129542144.0);
  assert_true(cJSON_IsNull(cJSON_GetObjectItemCaseSensitive(memory, "limit_bytes")));
  cJSON_Delete(root);
  tcli_free(&r);
}

/* The live machine: every usable device gets a section, the CPU's with its stats; the others (PoCL,
 * lavapipe) with stats or with the library's message when their backend has no memory support yet. */
static void memory_every_usable_device(void **state) {
  (void)state;
  tb_device_list *list = tbt_discover(0);
  tcli_run r = tcli("info --memory");
  TCLI_ASSERT_EXIT(r, 0);
  tcli_run j = tcli("info --memory --json");
  TCLI_ASSERT_EXIT(j, 0);
  cJSON *root = tcli_json(j.out);
  int usable = 0;
  for (size_t i = 0; i < tb_device_list_count(list); i++) {
    const tb_device_info *d = tb_device_list_get(list, i);
    char header[128];
    snprintf(header, sizeof header, "\n%s: ", d->device);
    bool shown = strncmp(r.out, header + 1, strlen(header + 1)) == 0 || strstr(r.out, header) != NULL;
    if (d->usable != shown) fail_msg("%s (usable %d) shown %d in:\n%s", d->device, d->usable, shown, r.out);
    if (!d->usable) continue;
    const cJSON *entry = cJSON_GetArrayItem(root, usable++);
    assert_non_null(entry);
    assert_string_equal(tcli_json_str(entry, "device"), d->device);
    bool has_memory = cJSON_IsObject(cJSON_GetObjectItemCaseSensitive(entry, "memory"));
    bool has_error = cJSON_IsString(cJSON_GetObjectItemCaseSensitive(entry, "error"));
    assert_true(has_memory != has_error);
    if (d->backend == TB_BACKEND_CPU) assert_true(has_memory);
    if (has_error) assert_string_equal(tcli_json_str(entry, "status"), "TB_ERR_UNSUPPORTED");
  }
  assert_int_equal(cJSON_GetArraySize(root), usable);
  /* The CPU's total is what the library reports for it. */
  tb_backend *cpu = NULL;
  TB_ASSERT_OK(tb_backend_create("cpu", &cpu));
  tb_memory_stats stats = {.size = sizeof stats};
  TB_ASSERT_OK(tb_backend_memory_stats(cpu, &stats));
  assert_true(stats.device_total_known);
  char total[64];
  snprintf(total, sizeof total, " (%llu bytes)\n", (unsigned long long)stats.device_total);
  const char *cpu_section = strstr(r.out, "cpu:0: ");
  assert_non_null(cpu_section);
  const char *total_line = strstr(cpu_section, "  device total:");
  assert_non_null(total_line);
  TB_ASSERT_CONTAINS(total_line, total);
  tb_backend_destroy(cpu);
  cJSON_Delete(root);
  tcli_free(&j);
  tcli_free(&r);
  tb_device_list_destroy(list);
}

static void memory_unknown_names_exit_2(void **state) {
  (void)state;
  tcli_expect_err("info --memory cuda:7", 2, "cuda:7");
  tcli_expect_err("info --memory nosuch", 2, "nosuch");
  tcli_expect_err("info --memory --capabilities", 2, "--capabilities or --memory");
  tcli_expect_err("info --memory cpu gpu", 2, "'gpu'");
}

static void memory_backend_without_devices_exits_3(void **state) {
  (void)state;
  tcli_recorded_spr(); /* no vendor runtime: CUDA found nothing */
  tcli_run r = tcli("info --memory cuda");
  TCLI_ASSERT_EXIT(r, 3);
  assert_string_equal(r.out, "");
  TB_ASSERT_CONTAINS(r.err, "tb: error: cuda: no usable device: ");
  tcli_free(&r);
}

/* A device named alone is tried even when unusable, so that the library says why (here: a GPU the bus
 * shows without a driver bound). */
static void memory_unusable_device_says_why(void **state) {
  (void)state;
  tbt_use_fixture("nvidia_nodriver");
  tbt_no_vendor_libs();
  tcli_run r = tcli("info --memory pci:0000:01:00.0");
  TCLI_ASSERT_EXIT(r, 3);
  static const char head[] = "pci:0000:01:00.0: NVIDIA GeForce RTX 4090\n  error:              ";
  assert_true(strncmp(r.out, head, strlen(head)) == 0);
  TB_ASSERT_CONTAINS(r.out, "no kernel driver is bound");
  TB_ASSERT_CONTAINS(r.out, " (TB_ERR_UNAVAILABLE)\n");
  tcli_free(&r);
  tcli_run j = tcli("info --memory pci:0000:01:00.0 --json");
  TCLI_ASSERT_EXIT(j, 3);
  cJSON *root = tcli_json(j.out);
  assert_int_equal(cJSON_GetArraySize(root), 1);
  const cJSON *entry = cJSON_GetArrayItem(root, 0);
  assert_string_equal(tcli_json_str(entry, "device"), "pci:0000:01:00.0");
  assert_string_equal(tcli_json_str(entry, "status"), "TB_ERR_UNAVAILABLE");
  TB_ASSERT_CONTAINS(tcli_json_str(entry, "error"), "no kernel driver is bound");
  cJSON_Delete(root);
  tcli_free(&j);
}

/* TPU v5e VM with libtpu installed: four usable chips, but no TPU memory support in this build. */
static void use_tpu_vm(void) {
  tbt_use_fixture("tpu_v5e");
  tbt_no_vendor_libs();
  unsetenv("TB_TPU_LIB");
}

static void memory_tpu_unsupported(void **state) {
  (void)state;
  use_tpu_vm();
  tcli_run j = tcli("info --memory tpu --json");
  TCLI_ASSERT_EXIT(j, 3); /* no device of the request worked */
  cJSON *root = tcli_json(j.out);
  assert_int_equal(cJSON_GetArraySize(root), 4);
  for (int i = 0; i < 4; i++) {
    const cJSON *entry = cJSON_GetArrayItem(root, i);
    char device[16];
    snprintf(device, sizeof device, "tpu:%d", i);
    assert_string_equal(tcli_json_str(entry, "device"), device);
    assert_string_equal(tcli_json_str(entry, "status"), "TB_ERR_UNSUPPORTED");
    TB_ASSERT_CONTAINS(tcli_json_str(entry, "error"), device);
    assert_null(cJSON_GetObjectItemCaseSensitive(entry, "memory"));
  }
  cJSON_Delete(root);
  tcli_free(&j);

  tcli_run r = tcli("info --memory tpu:2");
  TCLI_ASSERT_EXIT(r, 3);
  static const char head[] = "tpu:2: TPU v5e\n  error:              ";
  assert_true(strncmp(r.out, head, strlen(head)) == 0);
  TB_ASSERT_CONTAINS(r.out, "tpu:2");
  TB_ASSERT_CONTAINS(r.out, " (TB_ERR_UNSUPPORTED)\n");
  assert_null(strstr(r.out, "allocated:"));
  tcli_free(&r);
}

/* All devices of the TPU VM: the TPUs fail, the CPU works, so the command succeeds. */
static void memory_mixed_devices_exit_0(void **state) {
  (void)state;
  use_tpu_vm();
  tb_device_list *list = tbt_discover(0);
  const tb_device_info *cpu = tbt_nth(list, TB_BACKEND_CPU, 0);
  assert_non_null(cpu);
  assert_true(cpu->usable);
  tcli_run j = tcli("info --memory --json");
  TCLI_ASSERT_EXIT(j, 0);
  cJSON *root = tcli_json(j.out);
  int errors = 0, stats = 0;
  const cJSON *entry = NULL;
  cJSON_ArrayForEach(entry, root) {
    if (cJSON_GetObjectItemCaseSensitive(entry, "memory")) {
      stats++;
      assert_string_equal(tcli_json_str(entry, "device"), "cpu:0");
    } else {
      errors++;
      assert_string_equal(tcli_json_str(entry, "status"), "TB_ERR_UNSUPPORTED");
    }
  }
  assert_int_equal(stats, 1);
  assert_int_equal(errors, 4);
  cJSON_Delete(root);
  tcli_free(&j);
  tb_device_list_destroy(list);
}

static void memory_help(void **state) {
  (void)state;
  tcli_run r = tcli("info --help");
  TCLI_ASSERT_EXIT(r, 0);
  TB_ASSERT_CONTAINS(r.out, "tb info --memory [BACKEND|DEVICE] [--json]");
  TB_ASSERT_CONTAINS(r.out, "  --memory ");
  tcli_free(&r);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test_setup(memory_cpu_text, tbt_setup_clean_env),
      cmocka_unit_test_setup(memory_cpu_json, tbt_setup_clean_env),
      cmocka_unit_test_setup(memory_every_usable_device, tbt_setup_clean_env),
      cmocka_unit_test_setup(memory_unknown_names_exit_2, tbt_setup_clean_env),
      cmocka_unit_test_setup(memory_backend_without_devices_exits_3, tbt_setup_clean_env),
      cmocka_unit_test_setup(memory_unusable_device_says_why, tbt_setup_clean_env),
      cmocka_unit_test_setup(memory_tpu_unsupported, tbt_setup_clean_env),
      cmocka_unit_test_setup(memory_mixed_devices_exit_0, tbt_setup_clean_env),
      cmocka_unit_test_setup(memory_help, tbt_setup_clean_env),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
