/* Malformed safetensors files, each refused with its status and a message naming the tensor or field and
 * the value; and what the format (and the Python package) allows: JSON order differing from data order,
 * unknown extra fields, zero-size tensors, whitespace around the header. */
#include <stdarg.h>
#include <setjmp.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <cmocka.h>
#include <tensorbridge/tensorbridge.h>
#include "test_util.h"

static unsigned char file_buf[4096];

/* 8-byte length of `header`, the header, then `data_len` bytes of data. */
static size_t make(const char *header, size_t data_len) {
  size_t n = strlen(header);
  for (int i = 0; i < 8; i++) file_buf[i] = (unsigned char)((uint64_t)n >> (8 * i));
  memcpy(file_buf + 8, header, n);
  memset(file_buf + 8 + n, 0, data_len);
  return 8 + n + data_len;
}

static void expect_bad(const char *header, size_t data_len, tb_status status, const char *part) {
  size_t size = make(header, data_len);
  tb_safetensors *st = (tb_safetensors *)&st; /* must be reset to NULL */
  tb_status got = tb_safetensors_open_memory(file_buf, size, "bad.safetensors", &st);
  if (got != status) fail_msg("header %s: status %s, expected %s (%s)", header, tb_status_str(got), tb_status_str(status),
                              tb_last_error());
  assert_null(st);
  TB_ASSERT_CONTAINS(tb_last_error(), "bad.safetensors: ");
  TB_ASSERT_CONTAINS(tb_last_error(), part);
}

static tb_safetensors *expect_good(const char *header, size_t data_len) {
  size_t size = make(header, data_len);
  tb_safetensors *st = NULL;
  tb_status got = tb_safetensors_open_memory(file_buf, size, "good.safetensors", &st);
  if (got != TB_OK) fail_msg("header %s: %s", header, tb_last_error());
  return st;
}

#define U8(name, b, e, n) "\"" name "\":{\"dtype\":\"U8\",\"shape\":[" #n "],\"data_offsets\":[" #b "," #e "]}"

static void test_lengths(void **state) {
  (void)state;
  tb_safetensors *st = NULL;
  assert_int_equal(tb_safetensors_open_memory("\x02\0\0", 3, "short.safetensors", &st), TB_ERR_MODEL);
  TB_ASSERT_CONTAINS(tb_last_error(), "short.safetensors: the file is 3 bytes, shorter than the 8-byte header length");
  unsigned char beyond[10] = {100, 0, 0, 0, 0, 0, 0, 0, '{', '}'};
  assert_int_equal(tb_safetensors_open_memory(beyond, sizeof beyond, "beyond.safetensors", &st), TB_ERR_MODEL);
  TB_ASSERT_CONTAINS(tb_last_error(), "header length is 100 bytes but only 2 bytes follow it");
  unsigned char huge[10] = {0x01, 0xe1, 0xf5, 0x05, 0, 0, 0, 0, '{', '}'}; /* 100000001 */
  assert_int_equal(tb_safetensors_open_memory(huge, sizeof huge, "huge.safetensors", &st), TB_ERR_MODEL);
  TB_ASSERT_CONTAINS(tb_last_error(), "header length is 100000001 bytes, beyond the limit of 100000000");
  unsigned char max[10] = {0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, '{', '}'};
  assert_int_equal(tb_safetensors_open_memory(max, sizeof max, "max.safetensors", &st), TB_ERR_MODEL);
  TB_ASSERT_CONTAINS(tb_last_error(), "header length is 18446744073709551615 bytes, beyond the limit");
  /* a real file cut short */
  char path[] = "/tmp/tb-test-st-bad-XXXXXX";
  int fd = mkstemp(path);
  assert_true(fd >= 0);
  size_t size = make("{" U8("a", 0, 4, 4) "}", 4);
  assert_int_equal(write(fd, file_buf, size - 2), (ssize_t)(size - 2));
  close(fd);
  assert_int_equal(tb_safetensors_open(path, &st), TB_ERR_MODEL);
  TB_ASSERT_CONTAINS(tb_last_error(), "tensor 'a' data_offsets [0, 4] go beyond the data region of 2 bytes (out of range)");
  unlink(path);
  assert_int_equal(tb_safetensors_open(path, &st), TB_ERR_NOT_FOUND);
  TB_ASSERT_CONTAINS(tb_last_error(), "cannot open the safetensors file ");
  TB_ASSERT_CONTAINS(tb_last_error(), ": No such file or directory");
}

static void test_json(void **state) {
  (void)state;
  expect_bad("hello   ", 0, TB_ERR_MODEL, "the header is not valid JSON (error near byte 0 of 8)");
  expect_bad("{\"a\":", 0, TB_ERR_MODEL, "the header is not valid JSON");
  expect_bad("[1,2]   ", 0, TB_ERR_MODEL, "the header is JSON but not an object");
  expect_bad("{}x", 0, TB_ERR_MODEL, "the header has bytes after its JSON object (at byte 2 of 3)");
  expect_bad("{}\x01", 0, TB_ERR_MODEL, "bytes after its JSON object");
  expect_bad("{\"\xff\":1}", 0, TB_ERR_MODEL, "header is not valid UTF-8");
  expect_bad("{\"a\":1}", 0, TB_ERR_MODEL, "tensor 'a' is not a JSON object");
  expect_bad("{\"a\":{\"shape\":[1],\"data_offsets\":[0,1]}}", 1, TB_ERR_MODEL, "tensor 'a' has no \"dtype\" string");
  expect_bad("{\"a\":{\"dtype\":\"U8\",\"data_offsets\":[0,1]}}", 1, TB_ERR_MODEL, "tensor 'a' has no \"shape\" array");
  expect_bad("{\"a\":{\"dtype\":\"U8\",\"shape\":[1]}}", 1, TB_ERR_MODEL, "no \"data_offsets\" array of two numbers");
  expect_bad("{\"a\":{\"dtype\":\"U8\",\"shape\":[1],\"data_offsets\":[0,1,2]}}", 1, TB_ERR_MODEL,
             "no \"data_offsets\" array of two numbers");
  expect_bad("{\"__metadata__\":{\"k\":1}}", 0, TB_ERR_MODEL, "\"__metadata__\" key 'k' has a value that is not a string");
  expect_bad("{\"__metadata__\":[\"k\"]}", 0, TB_ERR_MODEL, "\"__metadata__\" is not a JSON object of strings");
  expect_bad("{\"__metadata__\":{\"k\":\"1\",\"k\":\"2\"}}", 0, TB_ERR_MODEL, "\"__metadata__\" key 'k' appears twice");
  expect_bad("{\"__metadata__\":{},\"__metadata__\":{}}", 0, TB_ERR_MODEL, "\"__metadata__\" appears twice");
}

static void test_entries(void **state) {
  (void)state;
  expect_bad("{\"w\":{\"dtype\":\"Q8\",\"shape\":[1],\"data_offsets\":[0,1]}}", 1, TB_ERR_UNSUPPORTED,
             "tensor 'w' has dtype 'Q8', which is not a safetensors dtype TensorBridge knows");
  expect_bad("{\"w\":{\"dtype\":\"U16\",\"shape\":[1],\"data_offsets\":[0,2]}}", 2, TB_ERR_UNSUPPORTED,
             "tensor 'w' has dtype U16, which safetensors allows but TensorBridge does not support");
  expect_bad("{\"w\":{\"dtype\":\"F32\",\"shape\":[3],\"data_offsets\":[0,8]}}", 8, TB_ERR_MODEL,
             "tensor 'w' data_offsets [0, 8] hold 8 bytes but shape [3] of F32 needs 12");
  expect_bad("{\"w\":{\"dtype\":\"F32\",\"shape\":[-2],\"data_offsets\":[0,8]}}", 8, TB_ERR_MODEL,
             "tensor 'w' shape entry 0 is negative");
  expect_bad("{\"w\":{\"dtype\":\"F32\",\"shape\":[1.5],\"data_offsets\":[0,8]}}", 8, TB_ERR_MODEL,
             "tensor 'w' shape entry 0 is not a whole number in range");
  expect_bad("{\"w\":{\"dtype\":\"F32\",\"shape\":[\"2\"],\"data_offsets\":[0,8]}}", 8, TB_ERR_MODEL,
             "tensor 'w' shape entry 0 is not a number");
  expect_bad("{\"w\":{\"dtype\":\"F32\",\"shape\":[4294967296,4294967296,16],\"data_offsets\":[0,4]}}", 4, TB_ERR_MODEL,
             "tensor 'w' shape [4294967296, 4294967296, 16] of F32 overflows 64 bits");
  expect_bad("{\"w\":{\"dtype\":\"F32\",\"shape\":[1e300],\"data_offsets\":[0,4]}}", 4, TB_ERR_MODEL,
             "tensor 'w' shape entry 0 is not a whole number in range");
  expect_bad("{\"w\":{\"dtype\":\"U8\",\"shape\":[1,1,1,1,1,1,1,1,1],\"data_offsets\":[0,1]}}", 1, TB_ERR_UNSUPPORTED,
             "tensor 'w' has 9 dimensions; TensorBridge handles at most 8");
  expect_bad("{" U8("w", 2, 0, 0) "}", 2, TB_ERR_MODEL, "tensor 'w' data_offsets [2, 0] end before they begin");
  expect_bad("{" U8("w", 0, 9, 9) "}", 4, TB_ERR_MODEL,
             "tensor 'w' data_offsets [0, 9] go beyond the data region of 4 bytes (out of range)");
  expect_bad("{\"w\":{\"dtype\":\"U8\",\"shape\":[1],\"data_offsets\":[-1,0]}}", 1, TB_ERR_MODEL,
             "tensor 'w' data_offsets are not two whole numbers");
}

static void test_layout(void **state) {
  (void)state;
  expect_bad("{" U8("a", 0, 2, 2) "," U8("b", 1, 3, 2) "}", 3, TB_ERR_MODEL,
             "tensor 'b' data_offsets [1, 3] overlap tensor 'a' (ending at 2)");
  expect_bad("{" U8("a", 0, 2, 2) "," U8("b", 3, 5, 2) "}", 5, TB_ERR_MODEL,
             "the data region has a hole of 1 bytes between tensor 'a' and tensor 'b'");
  expect_bad("{" U8("a", 1, 3, 2) "}", 3, TB_ERR_MODEL, "the first tensor, 'a', begins at 1, not 0");
  expect_bad("{" U8("a", 0, 2, 2) "}", 3, TB_ERR_MODEL,
             "the tensors cover 2 bytes of data but 3 follow the header (1 bytes not covered)");
  expect_bad("{" U8("a", 0, 2, 2) "," U8("a", 0, 2, 2) "}", 2, TB_ERR_MODEL,
             "tensor 'a' appears twice in the header (duplicate name)");
  expect_bad("{" U8("a", 0, 2, 2) "," U8("a", 2, 4, 2) "}", 4, TB_ERR_MODEL, "tensor 'a' appears twice");
}

/* What the format allows, as the Python package reads it. */
static void test_allowed(void **state) {
  (void)state;
  /* JSON order is not data order: entries come back sorted by offset */
  tb_safetensors *st = expect_good("{" U8("b", 2, 4, 2) "," U8("a", 0, 2, 2) "}", 4);
  assert_string_equal(tb_safetensors_name(st, 0), "a");
  assert_string_equal(tb_safetensors_name(st, 1), "b");
  tb_safetensors_info info = {.size = sizeof info};
  TB_ASSERT_OK(tb_safetensors_info_at(st, 1, &info));
  assert_int_equal(info.data_offset, 8 + strlen("{" U8("b", 2, 4, 2) "," U8("a", 0, 2, 2) "}") + 2);
  assert_int_equal(tb_safetensors_info_at(st, 2, &info), TB_ERR_INVALID_ARGUMENT);
  TB_ASSERT_CONTAINS(tb_last_error(), "tensor index 2 is out of range (the file has 2 tensors)");
  tb_safetensors_close(st);
  /* extra fields, zero-size tensors sharing an offset, whitespace around the header, an empty file */
  st = expect_good(" {\"z\":{\"dtype\":\"U8\",\"shape\":[0],\"data_offsets\":[0,0],\"extra\":1}," U8("y", 0, 0, 0) "}  \n ",
                   0);
  assert_int_equal(tb_safetensors_count(st), 2);
  tb_safetensors_close(st);
  st = expect_good("{}", 0);
  assert_int_equal(tb_safetensors_count(st), 0);
  tb_safetensors_close(st);
}

/* A NUL would cut a name short in C: refused, raw or escaped, in a name or in metadata; an escaped
 * backslash followed by "u0000" is no NUL and stays. */
static void test_nul(void **state) {
  (void)state;
  expect_bad("{\"a\\u0000hidden\":{\"dtype\":\"U8\",\"shape\":[4],\"data_offsets\":[0,4]}}", 4, TB_ERR_MODEL,
             "bad.safetensors: the header has a NUL character (\\u0000) at byte 3, in the string that starts 'a'; "
             "tensor names and metadata cannot contain NUL: remove it from the file");
  expect_bad("{\"__metadata__\":{\"k\":\"v\\u0000w\"}," U8("a", 0, 4, 4) "}", 4, TB_ERR_MODEL,
             "NUL character (\\u0000) at byte 23, in the string that starts 'v'");
  /* a raw zero byte inside a name: written by hand, strlen cannot */
  size_t size = make("{\"ab\":{\"dtype\":\"U8\",\"shape\":[4],\"data_offsets\":[0,4]}}", 4);
  file_buf[8 + 3] = '\0'; /* {"a<NUL>": the name would read as "a" */
  tb_safetensors *st = NULL;
  assert_int_equal(tb_safetensors_open_memory(file_buf, size, "raw.safetensors", &st), TB_ERR_MODEL);
  assert_null(st);
  assert_string_equal(tb_last_error(), "raw.safetensors: the header has a NUL character (a zero byte) at byte 3, in the "
                                       "string that starts 'a'; tensor names and metadata cannot contain NUL: remove it "
                                       "from the file");
  st = expect_good("{\"a\\\\u0000b\":{\"dtype\":\"U8\",\"shape\":[4],\"data_offsets\":[0,4]}}", 4);
  assert_int_equal(tb_safetensors_count(st), 1);
  assert_string_equal(tb_safetensors_name(st, 0), "a\\u0000b");
  tb_safetensors_close(st);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_lengths), cmocka_unit_test(test_json),    cmocka_unit_test(test_entries),
      cmocka_unit_test(test_layout),  cmocka_unit_test(test_allowed), cmocka_unit_test(test_nul),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
