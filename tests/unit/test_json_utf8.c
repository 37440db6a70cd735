/* Every JSON text of the library is valid UTF-8 without control bytes (tb_json_finish ->
 * tb_json_repair_utf8): bytes that are not UTF-8 become \ufffd, DEL becomes \u007f, well-formed UTF-8 and
 * the rest of the text stay as they are, byte for byte. */
#include <cjson/cJSON.h>
#include <stdlib.h>
#include <string.h>
#include "json/json_util.h"
#include "test_util.h"

static void expect_repaired(const char *in, const char *want) {
  char *text = strdup(in);
  assert_non_null(text);
  text = tb_json_repair_utf8(text);
  assert_non_null(text);
  assert_string_equal(text, want);
  free(text);
}

static void repair_cases(void **state) {
  (void)state;
  expect_repaired("{\"a\":\"plain\"}", "{\"a\":\"plain\"}");
  expect_repaired("\"\xc3\xa9 \xe2\x82\xac \xf0\x9f\x98\x80\"", "\"\xc3\xa9 \xe2\x82\xac \xf0\x9f\x98\x80\"");
  expect_repaired("\"a\xff" "b\"", "\"a\\ufffdb\"");            /* never a UTF-8 byte */
  expect_repaired("\"\x80\"", "\"\\ufffd\"");                   /* a stray continuation byte */
  expect_repaired("\"\xc0\xaf\"", "\"\\ufffd\\ufffd\"");        /* an overlong '/' */
  expect_repaired("\"\xed\xa0\x80\"", "\"\\ufffd\\ufffd\\ufffd\""); /* a surrogate */
  expect_repaired("\"\xf4\x90\x80\x80\"", "\"\\ufffd\\ufffd\\ufffd\\ufffd\""); /* past U+10FFFF */
  expect_repaired("\"\xe2\x82\"", "\"\\ufffd\\ufffd\"");        /* cut short by the quote */
  expect_repaired("\"x\xe2\"", "\"x\\ufffd\"");                 /* cut short by the end */
  expect_repaired("\"\x7f\"", "\"\\u007f\"");
}

/* A device whose name a driver reported with bytes that are not UTF-8. */
static void device_json_is_utf8(void **state) {
  (void)state;
  tb_device_info d = {.size = sizeof d, .backend = TB_BACKEND_CPU, .device = "cpu:0", .name = "Chip\xff\xc3\xa9\x7f", .routes = ""};
  char *json = NULL;
  TB_ASSERT_OK(tb_device_info_to_json(&d, &json));
  assert_non_null(strstr(json, "\"name\":\t\"Chip\\ufffd\xc3\xa9\\u007f\""));
  cJSON *j = cJSON_Parse(json);
  assert_non_null(j);
  assert_string_equal(cJSON_GetObjectItemCaseSensitive(j, "name")->valuestring, "Chip\xef\xbf\xbd\xc3\xa9\x7f");
  cJSON_Delete(j);
  tb_free(json);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(repair_cases),
      cmocka_unit_test(device_json_is_utf8),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
