/* `tb doctor`: every backend with its state, checks and fix; the verdict of auto (and of TB_BACKEND
 * when set); the to-do list of distinct fixes; the same as JSON. */
#include "test_cli_util.h"

static void doctor_covers_every_backend(void **state) {
  (void)state;
  tb_device_list *list = tbt_discover(0);
  tcli_run r = tcli("doctor");
  TCLI_ASSERT_EXIT(r, 0);
  char line[2048], prefix[64];
  for (int k = 0; k < TB_BACKEND_COUNT; k++) {
    const tb_backend_report *rep = tb_device_list_report(list, (tb_backend_kind)k);
    snprintf(prefix, sizeof prefix, "%s: ", tb_backend_name((tb_backend_kind)k));
    if (!tbt_line(r.out, prefix, line, sizeof line)) fail_msg("no line for %s in:\n%s", prefix, r.out);
    const char *state_word = rep->available ? ": available: " : rep->device_count ? ": found, not usable: " : ": missing: ";
    TB_ASSERT_CONTAINS(line, state_word);
    if (rep->summary[0]) TB_ASSERT_CONTAINS(line, rep->summary);
    /* Every check, with ok or failed. */
    for (size_t i = 0; i < rep->check_count; i++) {
      char expected[1024];
      snprintf(expected, sizeof expected, "  %-6s  %s", rep->checks[i].ok ? "ok" : "failed", rep->checks[i].what);
      TB_ASSERT_CONTAINS(r.out, expected);
    }
    /* The fix, in the backend's section and in the to-do list. */
    if (rep->fix[0]) {
      char expected[1024];
      snprintf(expected, sizeof expected, "\n  - %s: %s\n", tb_backend_name((tb_backend_kind)k), rep->fix);
      TB_ASSERT_CONTAINS(strstr(r.out, "\nTo do:\n"), expected);
    }
  }
  TB_ASSERT_CONTAINS(r.out, "\nVerdict:\n  auto picks ");
  tb_selection *sel = NULL;
  TB_ASSERT_OK(tb_select(list, "auto", &sel));
  char expected[256];
  snprintf(expected, sizeof expected, "  auto picks %s", tb_selection_device(sel)->device);
  TB_ASSERT_CONTAINS(r.out, expected);
  tb_selection_destroy(sel);
  tb_device_list_destroy(list);
  tcli_free(&r);
}

static void doctor_todo_lists_each_fix_once(void **state) {
  (void)state;
  tcli_run r = tcli("doctor");
  TCLI_ASSERT_EXIT(r, 0);
  const char *todo = strstr(r.out, "\nTo do:");
  assert_non_null(todo);
  for (const char *item = strstr(todo, "\n  - "); item; item = strstr(item + 1, "\n  - ")) {
    const char *end = strchr(item + 1, '\n');
    size_t len = end ? (size_t)(end - item) : strlen(item);
    char needle[2048];
    snprintf(needle, sizeof needle, "%.*s\n", (int)len, item);
    const char *again = strstr(item + len, needle);
    if (again) fail_msg("to-do item listed twice: %s", needle);
  }
  tcli_free(&r);
}

static void doctor_reports_tb_backend(void **state) {
  (void)state;
  setenv("TB_BACKEND", "cpu", 1);
  tcli_run r = tcli("doctor");
  TCLI_ASSERT_EXIT(r, 0);
  TB_ASSERT_CONTAINS(r.out, "\n  TB_BACKEND=cpu picks cpu:0");
  tcli_free(&r);
  setenv("TB_BACKEND", "warp", 1);
  r = tcli("doctor");
  TCLI_ASSERT_EXIT(r, 0); /* doctor diagnoses a bad TB_BACKEND; it does not fail on it */
  TB_ASSERT_CONTAINS(r.out, "\n  TB_BACKEND=warp picks nothing: ");
  TB_ASSERT_CONTAINS(r.out, "\n  - TB_BACKEND: ");
  TB_ASSERT_CONTAINS(strstr(r.out, "\n  - TB_BACKEND: "), "warp");
  tcli_free(&r);
}

static void doctor_json_has_backends_selection_and_todo(void **state) {
  (void)state;
  tcli_recorded_spr(); /* the live machine's free memory, in a check's detail, changes between runs */
  tb_device_list *list = tbt_discover(0);
  tcli_run r = tcli("doctor --json");
  TCLI_ASSERT_EXIT(r, 0);
  cJSON *root = tcli_json(r.out);
  assert_string_equal(tcli_json_str(root, "tensorbridge_version"), tb_version());
  const cJSON *backends = cJSON_GetObjectItemCaseSensitive(root, "backends");
  assert_int_equal(cJSON_GetArraySize(backends), TB_BACKEND_COUNT);
  for (int k = 0; k < TB_BACKEND_COUNT; k++) {
    const cJSON *b = cJSON_GetArrayItem(backends, k);
    const tb_backend_report *rep = tb_device_list_report(list, (tb_backend_kind)k);
    assert_string_equal(tcli_json_str(b, "backend"), tb_backend_name((tb_backend_kind)k));
    assert_string_equal(tcli_json_str(b, "summary"), rep->summary);
    assert_string_equal(tcli_json_str(b, "fix"), rep->fix);
    assert_int_equal(cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(b, "available")), rep->available);
    assert_int_equal(cJSON_GetObjectItemCaseSensitive(b, "device_count")->valuedouble, (double)rep->device_count);
    const cJSON *checks = cJSON_GetObjectItemCaseSensitive(b, "checks");
    assert_int_equal((size_t)cJSON_GetArraySize(checks), rep->check_count);
    for (size_t i = 0; i < rep->check_count; i++) {
      const cJSON *c = cJSON_GetArrayItem(checks, (int)i);
      assert_string_equal(tcli_json_str(c, "what"), rep->checks[i].what);
      assert_string_equal(tcli_json_str(c, "detail"), rep->checks[i].detail);
      assert_int_equal(cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(c, "ok")), rep->checks[i].ok);
    }
  }
  const cJSON *selected = cJSON_GetObjectItemCaseSensitive(root, "selected");
  assert_true(cJSON_IsObject(selected));
  assert_string_equal(tcli_json_str(selected, "request"), "auto");
  assert_string_equal(tcli_json_str(root, "selected_error"), "");
  assert_true(cJSON_IsNull(cJSON_GetObjectItemCaseSensitive(root, "tb_backend")));
  const cJSON *todo = cJSON_GetObjectItemCaseSensitive(root, "todo"), *item;
  assert_true(cJSON_IsArray(todo));
  cJSON_ArrayForEach(item, todo) {
    tb_backend_kind kind;
    TB_ASSERT_OK(tb_backend_parse(tcli_json_str(item, "about"), &kind, NULL));
    assert_true(tcli_json_str(item, "fix")[0] != '\0');
  }
  cJSON_Delete(root);
  tcli_free(&r);

  setenv("TB_BACKEND", "warp", 1);
  r = tcli("doctor --json");
  TCLI_ASSERT_EXIT(r, 0);
  root = tcli_json(r.out);
  const cJSON *env = cJSON_GetObjectItemCaseSensitive(root, "tb_backend");
  assert_string_equal(tcli_json_str(env, "request"), "warp");
  assert_true(cJSON_IsNull(cJSON_GetObjectItemCaseSensitive(env, "selected")));
  TB_ASSERT_CONTAINS(tcli_json_str(env, "error"), "warp");
  todo = cJSON_GetObjectItemCaseSensitive(root, "todo");
  item = cJSON_GetArrayItem(todo, cJSON_GetArraySize(todo) - 1);
  assert_string_equal(tcli_json_str(item, "about"), "TB_BACKEND");
  assert_string_equal(tcli_json_str(item, "fix"), tcli_json_str(env, "error"));
  cJSON_Delete(root);
  tcli_free(&r);
  tb_device_list_destroy(list);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test_setup(doctor_covers_every_backend, tbt_setup_clean_env),
      cmocka_unit_test_setup(doctor_todo_lists_each_fix_once, tbt_setup_clean_env),
      cmocka_unit_test_setup(doctor_reports_tb_backend, tbt_setup_clean_env),
      cmocka_unit_test_setup(doctor_json_has_backends_selection_and_todo, tbt_setup_clean_env),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
