/* The pieces of the `tb` tool, compiled in here from cli/: byte and memory formatting, feature and
 * dtype lists, column-aligned tables, the JSON string escaper (always UTF-8), UTF-8 checking, one-line
 * text, option and number parsing, and the status -> exit code map. */
#include "test_util.h"
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "../../cli/args.c"
#include "../../cli/common.c"
#include "../../cli/format.c"
#include "../../cli/json_out.c"
#include "../../cli/utf8.c"
#include "../../cli/table.c"

static void bytes_use_binary_units(void **state) {
  (void)state;
  static const struct {
    uint64_t bytes;
    const char *text;
  } cases[] = {
      {0, "0 B"},
      {1, "1 B"},
      {1023, "1023 B"},
      {1024, "1.0 KiB"},
      {1536, "1.5 KiB"},
      {1048575, "1.0 MiB"}, /* rounds up into the next unit, never "1024.0 KiB" */
      {85520809984ull, "79.6 GiB"}, /* H100 80GB as cuDeviceTotalMem reports it */
      {206141652992ull, "192.0 GiB"}, /* MI300X */
      {(1ull << 40) - 1, "1.0 TiB"},
      {UINT64_MAX, "16.0 EiB"},
  };
  char buf[32];
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
    tbc_format_bytes(cases[i].bytes, buf, sizeof buf);
    assert_string_equal(buf, cases[i].text);
  }
  tbc_format_bytes(85520809984ull, buf, 4); /* truncated, still terminated */
  assert_string_equal(buf, "79.");
}

static void memory_shows_what_is_known(void **state) {
  (void)state;
  tb_device_info d = {.size = sizeof d};
  char buf[64];
  tbc_format_memory(&d, buf, sizeof buf);
  assert_string_equal(buf, "-");
  d.memory_total = 85520809984ull;
  d.memory_total_known = true;
  tbc_format_memory(&d, buf, sizeof buf);
  assert_string_equal(buf, "79.6 GiB");
  d.memory_free = 80745381888ull;
  d.memory_free_known = true;
  tbc_format_memory(&d, buf, sizeof buf);
  assert_string_equal(buf, "75.2/79.6 GiB");
  d.memory_free = 512ull << 20; /* free is shown in the unit of total */
  tbc_format_memory(&d, buf, sizeof buf);
  assert_string_equal(buf, "0.5/79.6 GiB");
  d.memory_total_known = false;
  tbc_format_memory(&d, buf, sizeof buf);
  assert_string_equal(buf, "512.0 MiB free");
  d.memory_total_known = true;
  d.memory_total = 1000;
  d.memory_free = 10;
  tbc_format_memory(&d, buf, sizeof buf);
  assert_string_equal(buf, "10/1000 B");
}

static void feature_and_dtype_lists(void **state) {
  (void)state;
  char buf[1024];
  tbc_format_features(0, " ", buf, sizeof buf);
  assert_string_equal(buf, "-");
  tbc_format_features(TB_FEATURE_BIT(TB_FEATURE_AVX2) | TB_FEATURE_BIT(TB_FEATURE_AMX_BF16) |
                          TB_FEATURE_BIT(TB_FEATURE_TENSOR_CORES),
                      ", ", buf, sizeof buf);
  assert_string_equal(buf, "avx2, amx_bf16, tensor_cores");
  tbc_format_features(~(uint64_t)0, " ", buf, 12); /* bits beyond the enum are ignored; truncation is safe */
  assert_int_equal(strlen(buf), 11);
  tbc_format_dtypes(0, " ", buf, sizeof buf);
  assert_string_equal(buf, "-");
  tbc_format_dtypes(TB_DTYPE_BIT(TB_DTYPE_F32) | TB_DTYPE_BIT(TB_DTYPE_BF16) | TB_DTYPE_BIT(TB_DTYPE_FP8_E4M3FN), " ",
                    buf, sizeof buf);
  assert_string_equal(buf, "f32 bf16 fp8_e4m3fn");
  assert_string_equal(tbc_or_dash(NULL), "-");
  assert_string_equal(tbc_or_dash(""), "-");
  assert_string_equal(tbc_or_dash("x"), "x");
}

static char *print_to_string(const tbc_table *t) {
  char *text = NULL;
  size_t len = 0;
  FILE *f = open_memstream(&text, &len);
  assert_non_null(f);
  tbc_table_print(t, f);
  fclose(f);
  return text;
}

static void table_aligns_columns_and_keeps_notes(void **state) {
  (void)state;
  const char *headers[] = {"DEVICE", "NAME", "USABLE"};
  tbc_table *t = tbc_table_new(3, headers);
  assert_non_null(t);
  const char *row1[] = {"cpu:0", "AMD EPYC 9B45", "yes"};
  const char *row2[] = {"pci:0000:3b:00.0", NULL, "no"};
  assert_true(tbc_table_row(t, row1));
  assert_true(tbc_table_row(t, row2));
  assert_true(tbc_table_note(t, "  why: a note far wider than any column does not widen them"));
  char *text = print_to_string(t);
  assert_string_equal(text,
                      "DEVICE            NAME           USABLE\n"
                      "cpu:0             AMD EPYC 9B45  yes\n"
                      "pci:0000:3b:00.0  -              no\n"
                      "  why: a note far wider than any column does not widen them\n");
  free(text);
  tbc_table_free(t);
  tbc_table_free(NULL);
}

static void table_grows_past_its_first_allocation(void **state) {
  (void)state;
  const char *headers[] = {"N"};
  tbc_table *t = tbc_table_new(1, headers);
  char cell[16];
  for (int i = 0; i < 100; i++) {
    snprintf(cell, sizeof cell, "%d", i);
    const char *row[] = {cell};
    assert_true(tbc_table_row(t, row));
  }
  char *text = print_to_string(t);
  assert_int_equal(strncmp(text, "N\n0\n1\n", 6), 0);
  TB_ASSERT_CONTAINS(text, "\n99\n");
  free(text);
  tbc_table_free(t);
}

static void json_strings_are_escaped(void **state) {
  (void)state;
  tbc_buf b = {0};
  tbc_json_string(&b, "say \"hi\"\\ \n\t\r\b\f \x01\x1f caf\xc3\xa9");
  assert_false(b.failed);
  assert_string_equal(b.data, "\"say \\\"hi\\\"\\\\ \\n\\t\\r\\b\\f \\u0001\\u001f caf\xc3\xa9\"");
  tbc_buf_free(&b);
  /* bytes that are not UTF-8 (stray, overlong, surrogate, cut short) become \ufffd each; DEL is escaped */
  tbc_json_string(&b, "a\xff\xc0\xaf\xed\xa0\x80\x7f\xe2\x82");
  assert_string_equal(b.data, "\"a\\ufffd\\ufffd\\ufffd\\ufffd\\ufffd\\ufffd\\u007f\\ufffd\\ufffd\"");
  tbc_buf_free(&b);
  tbc_json_string(&b, "\xf0\x9f\x98\x80\xe2\x82\xac");
  assert_string_equal(b.data, "\"\xf0\x9f\x98\x80\xe2\x82\xac\"");
  tbc_buf_free(&b);
  tbc_json_string(&b, NULL);
  assert_string_equal(b.data, "null");
  tbc_buf_free(&b);
  bool first = true;
  tbc_buf_add(&b, "{");
  tbc_json_key(&b, &first, "a");
  tbc_buf_addf(&b, "%d", 1);
  tbc_json_key(&b, &first, "b\"");
  tbc_json_string(&b, "");
  tbc_buf_add(&b, "}");
  assert_string_equal(b.data, "{\"a\":1,\"b\\\"\":\"\"}");
  tbc_buf_free(&b);
  /* Long text grows the buffer. */
  char big[5000];
  memset(big, 'x', sizeof big - 1);
  big[sizeof big - 1] = '\0';
  tbc_json_string(&b, big);
  assert_int_equal(b.len, sizeof big + 1);
  tbc_buf_free(&b);
}

static void args_parse_flags_positionals_and_errors(void **state) {
  (void)state;
  bool json = false, all = false;
  const tbc_option options[] = {{"--json", &json}, {"--all", &all}, {NULL, NULL}};
  tbc_args args;
  char a0[] = "cuda", a1[] = "--json", a2[] = "--", a3[] = "--all";
  char *argv[] = {a0, a1, a2, a3};
  assert_int_equal(tbc_parse_args("info", 4, argv, options, 2, &args), 0);
  assert_true(json);
  assert_false(all); /* after "--", "--all" is a positional */
  assert_int_equal(args.positional_count, 2);
  assert_string_equal(args.positional[0], "cuda");
  assert_string_equal(args.positional[1], "--all");
  assert_false(args.help);

  char b0[] = "--jsn";
  char *bad[] = {b0};
  assert_int_equal(tbc_parse_args("devices", 1, bad, options, 0, &args), TBC_EXIT_USAGE);
  char c0[] = "x", c1[] = "y";
  char *two[] = {c0, c1};
  assert_int_equal(tbc_parse_args("select", 2, two, options, 1, &args), TBC_EXIT_USAGE);
  assert_int_equal(tbc_parse_args("doctor", 1, two, options, 0, &args), TBC_EXIT_USAGE);
  char d0[] = "-h", d1[] = "-";
  char *help[] = {d0, d1};
  assert_int_equal(tbc_parse_args("select", 2, help, options, 1, &args), 0);
  assert_true(args.help);
  assert_string_equal(args.positional[0], "-"); /* a lone "-" is an argument, not an option */
}

static void utf8_sequences(void **state) {
  (void)state;
  const unsigned char *u = (const unsigned char *)"\xc3\xa9\xe2\x82\xac\xf0\x9f\x98\x80";
  assert_int_equal(tbc_utf8_len(u, 9), 2);
  assert_int_equal(tbc_utf8_len(u + 2, 7), 3);
  assert_int_equal(tbc_utf8_len(u + 5, 4), 4);
  assert_int_equal(tbc_utf8_len(u + 5, 2), -1); /* a valid start, cut short */
  assert_int_equal(tbc_utf8_len((const unsigned char *)"\x80", 1), 0);
  assert_int_equal(tbc_utf8_len((const unsigned char *)"\xc0\xaf", 2), 0);
  assert_int_equal(tbc_utf8_len((const unsigned char *)"\xed\xa0\x80", 3), 0);
  assert_int_equal(tbc_utf8_len((const unsigned char *)"\xf4\x90\x80\x80", 4), 0);
  assert_int_equal(tbc_utf8_len((const unsigned char *)"\xe2\x28", 2), 0);
}

static void one_line_text(void **state) {
  (void)state;
  char buf[16];
  assert_string_equal(tbc_one_line("a\nb\rc\td", buf, sizeof buf), "a\\nb\\rc\td");
  assert_string_equal(tbc_one_line("0123456789abcdefghij", buf, sizeof buf), "0123456789abcd");
  assert_string_equal(tbc_one_line(NULL, buf, sizeof buf), "");
}

static void numbers_are_checked_not_clamped(void **state) {
  (void)state;
  long long n = -1;
  double d = -1;
  assert_int_equal(tbc_parse_int("run", "--threads", "16", 0, 4096, &n), 0);
  assert_int_equal(n, 16);
  assert_int_equal(tbc_parse_int("run", "--x", "-3", -5, 5, &n), 0);
  assert_int_equal(n, -3);
  const char *bad_ints[] = {"", "4097", "-1", "1.5", "1e3", " 7", "+7", "7 ", "0x10", "99999999999999999999999"};
  for (size_t i = 0; i < sizeof bad_ints / sizeof bad_ints[0]; i++) {
    n = 42;
    assert_int_equal(tbc_parse_int("run", "--threads", bad_ints[i], 0, 4096, &n), TBC_EXIT_USAGE);
    assert_int_equal(n, 42); /* untouched */
  }
  assert_int_equal(tbc_parse_double("run", "--rtol", "1e-4", 0, 1e300, &d), 0);
  assert_true(d == 1e-4);
  const char *bad_doubles[] = {"", "x", "nan", "inf", "-0.5", "1e999", "1e301", "2,5", "1e-4x"};
  for (size_t i = 0; i < sizeof bad_doubles / sizeof bad_doubles[0]; i++)
    assert_int_equal(tbc_parse_double("run", "--rtol", bad_doubles[i], 0, 1e300, &d), TBC_EXIT_USAGE);
}

static void statuses_map_to_exit_codes(void **state) {
  (void)state;
  assert_int_equal(tbc_exit_for_status(TB_OK), 0);
  assert_int_equal(tbc_exit_for_status(TB_ERR_NOT_FOUND), 2);
  assert_int_equal(tbc_exit_for_status(TB_ERR_INVALID_ARGUMENT), 2);
  assert_int_equal(tbc_exit_for_status(TB_ERR_UNAVAILABLE), 3);
  assert_int_equal(tbc_exit_for_status(TB_ERR_PERMISSION), 3); /* a device node */
  assert_int_equal(tbc_exit_for_file_status(TB_ERR_PERMISSION), 4); /* a file the user named */
  assert_int_equal(tbc_exit_for_status(TB_ERR_IO), 4);
  assert_int_equal(tbc_exit_for_file_status(TB_ERR_NOT_FOUND), 2);
  assert_int_equal(tbc_exit_for_file_status(TB_ERR_MODEL), 1);
  assert_int_equal(tbc_exit_for_status(TB_ERR_OUT_OF_MEMORY), 1);
  assert_int_equal(tbc_exit_for_status(TB_ERR_DRIVER), 1);
  assert_int_equal(tbc_exit_for_status(TB_ERR_INTERNAL), 1);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(bytes_use_binary_units),
      cmocka_unit_test(memory_shows_what_is_known),
      cmocka_unit_test(feature_and_dtype_lists),
      cmocka_unit_test(table_aligns_columns_and_keeps_notes),
      cmocka_unit_test(table_grows_past_its_first_allocation),
      cmocka_unit_test(json_strings_are_escaped),
      cmocka_unit_test(args_parse_flags_positionals_and_errors),
      cmocka_unit_test(utf8_sequences),
      cmocka_unit_test(one_line_text),
      cmocka_unit_test(numbers_are_checked_not_clamped),
      cmocka_unit_test(statuses_map_to_exit_codes),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
