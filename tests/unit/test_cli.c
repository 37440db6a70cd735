/* The `tb` tool as a user runs it: global help and version, usage errors and their exit codes,
 * `tb devices` (table and JSON) and `tb select` (plain, --explain, --json, TB_BACKEND). */
#include "test_cli_util.h"

static const char *const command_names[] = {"devices", "info", "select", "doctor"};
#define COMMAND_COUNT (sizeof command_names / sizeof command_names[0])

/* ---- global ---------------------------------------------------------------------------------- */

static void help_lists_every_command_and_exit_code(void **state) {
  (void)state;
  tcli_run r = tcli("--help");
  TCLI_ASSERT_EXIT(r, 0);
  for (size_t i = 0; i < COMMAND_COUNT; i++) {
    char line[64];
    snprintf(line, sizeof line, "\n  %s ", command_names[i]);
    TB_ASSERT_CONTAINS(r.out, line);
  }
  TB_ASSERT_CONTAINS(r.out, "\n  help ");
  TB_ASSERT_CONTAINS(r.out, "Exit codes:");
  TB_ASSERT_CONTAINS(r.out, "  3  the requested backend or device is unavailable");
  TB_ASSERT_CONTAINS(r.out, "TB_BACKEND");
  assert_string_equal(r.err, "");
  tcli_free(&r);
}

static void every_command_has_help(void **state) {
  (void)state;
  for (size_t i = 0; i < COMMAND_COUNT; i++) {
    char args[64], usage[64];
    snprintf(args, sizeof args, "%s --help", command_names[i]);
    snprintf(usage, sizeof usage, "Usage: tb %s", command_names[i]);
    tcli_run r = tcli(args);
    TCLI_ASSERT_EXIT(r, 0);
    assert_memory_equal(r.out, usage, strlen(usage));
    TB_ASSERT_CONTAINS(r.out, "--json");
    TB_ASSERT_CONTAINS(r.out, "Exit codes:");
    /* `tb help X` prints the same text. */
    snprintf(args, sizeof args, "help %s", command_names[i]);
    tcli_expect_out(args, 0, r.out);
    /* -h is --help. */
    snprintf(args, sizeof args, "%s -h", command_names[i]);
    tcli_expect_out(args, 0, r.out);
    tcli_free(&r);
  }
}

static void version_is_the_library_version(void **state) {
  (void)state;
  char expected[64];
  snprintf(expected, sizeof expected, "tb %s\n", tb_version());
  tcli_expect_out("--version", 0, expected);
  tcli_expect_out("-V", 0, expected);
}

static void usage_errors_exit_2_and_say_what(void **state) {
  (void)state;
  tcli_run r = tcli("frobnicate");
  TCLI_ASSERT_EXIT(r, 2);
  TB_ASSERT_CONTAINS(r.err, "tb: error: unknown command 'frobnicate'");
  TB_ASSERT_CONTAINS(r.err, "tb --help");
  assert_string_equal(r.out, "");
  tcli_free(&r);

  tcli_expect_err("", 2, "tb: error: no command given");

  tcli_expect_err("help frobnicate", 2, "unknown command 'frobnicate'");

  tcli_expect_err("--frob", 2, "unknown option '--frob'");

  for (size_t i = 0; i < COMMAND_COUNT; i++) {
    char args[64], help_hint[64];
    snprintf(args, sizeof args, "%s --frob-nozzle", command_names[i]);
    snprintf(help_hint, sizeof help_hint, "see 'tb %s --help'", command_names[i]);
    r = tcli(args);
    TCLI_ASSERT_EXIT(r, 2);
    TB_ASSERT_CONTAINS(r.err, "tb: error: unknown option '--frob-nozzle'");
    TB_ASSERT_CONTAINS(r.err, help_hint);
    assert_string_equal(r.out, "");
    tcli_free(&r);
  }

  tcli_expect_err("devices extra", 2, "'extra'");

  tcli_expect_err("select cpu cuda", 2, "unexpected argument 'cuda'");

  tcli_expect_err("select --explain --json", 2, "--explain or --json");
}

/* ---- tb devices ------------------------------------------------------------------------------ */

static void devices_lists_the_cpu_as_usable(void **state) {
  (void)state;
  tcli_run r = tcli("devices");
  TCLI_ASSERT_EXIT(r, 0);
  char line[1024];
  assert_non_null(tbt_line(r.out, "DEVICE ", line, sizeof line));
  TB_ASSERT_CONTAINS(line, "NAME");
  TB_ASSERT_CONTAINS(line, "MEMORY");
  assert_non_null(strstr(line, "USABLE"));
  assert_non_null(tbt_line(r.out, "cpu:0 ", line, sizeof line));
  size_t len = strlen(line);
  assert_true(len > 5);
  assert_string_equal(line + len - 5, "  yes");
  /* The CPU's name, from the library, is on its line. */
  tb_device_list *list = tbt_discover(0);
  const tb_device_info *cpu = tbt_nth(list, TB_BACKEND_CPU, 0);
  assert_non_null(cpu);
  if (cpu->name[0]) TB_ASSERT_CONTAINS(line, cpu->name);
  /* Every device is listed, usable or not; every unusable one has a why line. */
  size_t unusable = 0;
  for (size_t i = 0; i < tb_device_list_count(list); i++) {
    const tb_device_info *d = tb_device_list_get(list, i);
    char prefix[256];
    snprintf(prefix, sizeof prefix, "%s ", d->device);
    if (!tbt_line(r.out, prefix, line, sizeof line)) fail_msg("device %s missing from:\n%s", d->device, r.out);
    if (!d->usable) unusable++;
  }
  size_t why = 0;
  for (const char *p = strstr(r.out, "\n  why: "); p; p = strstr(p + 1, "\n  why: ")) why++;
  assert_int_equal(why, unusable);
  /* Each backend that found nothing gets a line with its summary. */
  for (int k = 0; k < TB_BACKEND_COUNT; k++) {
    const tb_backend_report *rep = tb_device_list_report(list, (tb_backend_kind)k);
    if (rep->device_count) continue;
    char expected[1024];
    snprintf(expected, sizeof expected, "\n%s: %s\n", tb_backend_name((tb_backend_kind)k), rep->summary[0] ? rep->summary : "-");
    TB_ASSERT_CONTAINS(r.out, expected);
  }
  assert_null(strchr(r.out, '\x1b')); /* no colour, ever */
  tb_device_list_destroy(list);
  tcli_free(&r);
}

static void devices_all_adds_columns_and_every_backend(void **state) {
  (void)state;
  tcli_run r = tcli("devices --all");
  TCLI_ASSERT_EXIT(r, 0);
  char line[1024];
  assert_non_null(tbt_line(r.out, "DEVICE ", line, sizeof line));
  TB_ASSERT_CONTAINS(line, "VENDOR");
  TB_ASSERT_CONTAINS(line, "DRIVER");
  TB_ASSERT_CONTAINS(line, "ROUTES");
  for (int k = 0; k < TB_BACKEND_COUNT; k++) {
    char prefix[32];
    snprintf(prefix, sizeof prefix, "%s: ", tb_backend_name((tb_backend_kind)k));
    if (!tbt_line(r.out, prefix, line, sizeof line)) fail_msg("no line for backend %s in:\n%s", prefix, r.out);
  }
  tcli_free(&r);
}

static void devices_json_has_the_cpu(void **state) {
  (void)state;
  tcli_run r = tcli("devices --json");
  TCLI_ASSERT_EXIT(r, 0);
  assert_int_equal(r.out[0], '{');
  cJSON *root = tcli_json(r.out);
  assert_string_equal(tcli_json_str(root, "tensorbridge_version"), tb_version());
  const cJSON *devices = cJSON_GetObjectItemCaseSensitive(root, "devices");
  assert_true(cJSON_IsArray(devices));
  const cJSON *cpu = NULL, *d;
  cJSON_ArrayForEach(d, devices) if (strcmp(tcli_json_str(d, "device"), "cpu:0") == 0) cpu = d;
  assert_non_null(cpu);
  assert_string_equal(tcli_json_str(cpu, "backend"), "cpu");
  assert_true(cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(cpu, "usable")));
  const cJSON *backends = cJSON_GetObjectItemCaseSensitive(root, "backends");
  assert_int_equal(cJSON_GetArraySize(backends), TB_BACKEND_COUNT);
  cJSON_Delete(root);
  tcli_free(&r);
}

/* ---- tb select ------------------------------------------------------------------------------- */

static void select_cpu_prints_one_line(void **state) {
  (void)state;
  tcli_run r = tcli("select cpu");
  TCLI_ASSERT_EXIT(r, 0);
  assert_string_equal(r.out, "cpu:0\n");
  assert_string_equal(r.err, "");
  tcli_free(&r);
  tcli_expect_out("select cpu:0", 0, "cpu:0\n");
}

static void select_default_matches_the_library(void **state) {
  (void)state;
  tb_device_list *list = tbt_discover(0);
  tb_selection *sel = NULL;
  TB_ASSERT_OK(tb_select(list, NULL, &sel));
  char expected[256];
  snprintf(expected, sizeof expected, "%s\n", tb_selection_device(sel)->device);
  tcli_expect_out("select", 0, expected);
  tcli_expect_out("select auto", 0, expected);
  tb_selection_destroy(sel);
  tb_device_list_destroy(list);
}

static void select_explain_and_json(void **state) {
  (void)state;
  tcli_run r = tcli("select cpu --explain");
  TCLI_ASSERT_EXIT(r, 0);
  TB_ASSERT_CONTAINS(r.out, "cpu:0");
  assert_true(strchr(r.out, '\n') != strrchr(r.out, '\n')); /* several lines */
  tcli_free(&r);

  r = tcli("select cpu --json");
  TCLI_ASSERT_EXIT(r, 0);
  cJSON *root = tcli_json(r.out);
  assert_string_equal(tcli_json_str(root, "request"), "cpu");
  assert_string_equal(tcli_json_str(root, "source"), "argument");
  char *selected = cJSON_PrintUnformatted(cJSON_GetObjectItemCaseSensitive(root, "selected"));
  TB_ASSERT_CONTAINS(selected, "\"cpu:0\"");
  free(selected);
  assert_true(cJSON_IsArray(cJSON_GetObjectItemCaseSensitive(root, "candidates")));
  cJSON_Delete(root);
  tcli_free(&r);

  r = tcli("select --json");
  TCLI_ASSERT_EXIT(r, 0);
  root = tcli_json(r.out);
  assert_string_equal(tcli_json_str(root, "request"), "auto");
  assert_string_equal(tcli_json_str(root, "source"), "default");
  cJSON_Delete(root);
  tcli_free(&r);
}

static void select_unknown_tb_backend_exits_2(void **state) {
  (void)state;
  setenv("TB_BACKEND", "warp", 1);
  tcli_run r = tcli("select");
  TCLI_ASSERT_EXIT(r, 2);
  assert_string_equal(r.out, "");
  TB_ASSERT_CONTAINS(r.err, "tb: error: ");
  TB_ASSERT_CONTAINS(r.err, "warp");
  TB_ASSERT_CONTAINS(r.err, "cuda"); /* the valid names are listed */
  TB_ASSERT_CONTAINS(r.err, "opencl");
  tcli_free(&r);
  unsetenv("TB_BACKEND");
  tcli_expect_err("select warp", 2, "warp");
}

static void select_unavailable_backend_exits_3_and_says_why(void **state) {
  (void)state;
  /* This machine (and CI) has no NVIDIA GPU: CUDA is unavailable, never replaced by another. */
  tb_device_list *list = tbt_discover(1u << TB_BACKEND_CUDA);
  size_t usable = 0;
  for (size_t i = 0; i < tb_device_list_count(list); i++) usable += tb_device_list_get(list, i)->usable;
  tb_device_list_destroy(list);
  if (usable) skip(); /* a machine with a working NVIDIA GPU: nothing to check */
  setenv("TB_BACKEND", "cuda", 1);
  tcli_run r = tcli("select");
  TCLI_ASSERT_EXIT(r, 3);
  assert_string_equal(r.out, "");
  TB_ASSERT_CONTAINS(r.err, "tb: error: ");
  TB_ASSERT_CONTAINS(r.err, "TB_BACKEND");
  TB_ASSERT_CONTAINS(r.err, "NVIDIA");
  tcli_free(&r);
  unsetenv("TB_BACKEND");
  tcli_expect_err("select nvidia --explain", 3, "NVIDIA");
}

static void select_unknown_device_index_exits_2(void **state) {
  (void)state;
  tcli_expect_err("select cpu:x", 2, "cpu:x");
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test_setup(help_lists_every_command_and_exit_code, tbt_setup_clean_env),
      cmocka_unit_test_setup(every_command_has_help, tbt_setup_clean_env),
      cmocka_unit_test_setup(version_is_the_library_version, tbt_setup_clean_env),
      cmocka_unit_test_setup(usage_errors_exit_2_and_say_what, tbt_setup_clean_env),
      cmocka_unit_test_setup(devices_lists_the_cpu_as_usable, tbt_setup_clean_env),
      cmocka_unit_test_setup(devices_all_adds_columns_and_every_backend, tbt_setup_clean_env),
      cmocka_unit_test_setup(devices_json_has_the_cpu, tbt_setup_clean_env),
      cmocka_unit_test_setup(select_cpu_prints_one_line, tbt_setup_clean_env),
      cmocka_unit_test_setup(select_default_matches_the_library, tbt_setup_clean_env),
      cmocka_unit_test_setup(select_explain_and_json, tbt_setup_clean_env),
      cmocka_unit_test_setup(select_unknown_tb_backend_exits_2, tbt_setup_clean_env),
      cmocka_unit_test_setup(select_unavailable_backend_exits_3_and_says_why, tbt_setup_clean_env),
      cmocka_unit_test_setup(select_unknown_device_index_exits_2, tbt_setup_clean_env),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
