/* .npy files (src/model/npy.c): files numpy wrote (tests/fixtures/npy, made by make_npy.py there) read
 * with their dtypes, shapes and values; a file written here equal byte for byte to numpy's; a round trip
 * of every dtype, bf16 and fp8 in their documented structured forms included; and broken files made
 * here on purpose (truncated, wrong magic, huge header length, bad dicts, shape overflow, big-endian),
 * each an error naming the field. */
#include <dirent.h>
#include <sys/stat.h>
#include <unistd.h>
#include "test_tensor_util.h"

#define NPY_DIR TB_TEST_FIXTURES "/npy/"

static tb_tensor *load_ok(tb_backend *b, const char *name) {
  tb_tensor *t = NULL;
  char path[512];
  snprintf(path, sizeof path, "%s%s", NPY_DIR, name);
  TB_ASSERT_OK(tb_npy_load(path, b, &t));
  return t;
}

static void assert_shape(const tb_tensor *t, tb_dtype dtype, size_t ndim, const int64_t *shape) {
  assert_int_equal(tb_tensor_dtype(t), dtype);
  assert_int_equal(tb_tensor_ndim(t), ndim);
  for (size_t i = 0; i < ndim; i++) assert_int_equal(tb_tensor_shape(t)[i], shape[i]);
}

static const int64_t shape23[] = {2, 3};
static const double floats[] = {-1.5, 0.0, 0.25, 2.0, 3.5, -4.0};

static void numpy_float_files(void **state) {
  tb_backend *b = *state;
  const char *files[] = {"f8.npy", "f4.npy", "f2.npy", "v2_f4.npy", "v3_f4.npy"};
  const tb_dtype dtypes[] = {TB_DTYPE_F64, TB_DTYPE_F32, TB_DTYPE_F16, TB_DTYPE_F32, TB_DTYPE_F32};
  for (size_t f = 0; f < 5; f++) {
    tb_tensor *t = load_ok(b, files[f]);
    assert_shape(t, dtypes[f], 2, shape23);
    float v[6];
    TB_ASSERT_OK(tb_convert(dtypes[f], tb_tensor_host_data(t), TB_DTYPE_F32, v, 6, false));
    for (int i = 0; i < 6; i++) assert_float_equal(v[i], floats[i], 0.0);
    tb_tensor_destroy(t);
  }
}

static void numpy_integer_and_bool_files(void **state) {
  tb_backend *b = *state;
  tb_tensor *t = load_ok(b, "i8.npy");
  assert_shape(t, TB_DTYPE_I64, 2, shape23);
  const int64_t *i8 = tb_tensor_host_data(t);
  assert_int_equal(i8[0], -3);
  assert_int_equal(i8[5], (int64_t)1 << 40);
  tb_tensor_destroy(t);
  t = load_ok(b, "i4.npy");
  assert_shape(t, TB_DTYPE_I32, 2, shape23);
  assert_int_equal(((const int32_t *)tb_tensor_host_data(t))[5], 100000);
  assert_int_equal(((const int32_t *)tb_tensor_host_data(t))[1], -2);
  tb_tensor_destroy(t);
  t = load_ok(b, "i2.npy");
  assert_shape(t, TB_DTYPE_I16, 2, shape23);
  assert_int_equal(((const int16_t *)tb_tensor_host_data(t))[5], 30000);
  tb_tensor_destroy(t);
  t = load_ok(b, "i1.npy");
  assert_shape(t, TB_DTYPE_I8, 2, shape23);
  assert_int_equal(((const int8_t *)tb_tensor_host_data(t))[0], -3);
  assert_int_equal(((const int8_t *)tb_tensor_host_data(t))[5], 100);
  tb_tensor_destroy(t);
  t = load_ok(b, "u1.npy");
  assert_shape(t, TB_DTYPE_U8, 2, shape23);
  assert_int_equal(((const uint8_t *)tb_tensor_host_data(t))[5], 255);
  tb_tensor_destroy(t);
  t = load_ok(b, "b1.npy");
  assert_shape(t, TB_DTYPE_BOOL, 2, shape23);
  const uint8_t want[] = {1, 0, 1, 0, 0, 1};
  assert_memory_equal(tb_tensor_host_data(t), want, 6);
  tb_tensor_destroy(t);
}

static void numpy_shapes_and_fortran_order(void **state) {
  tb_backend *b = *state;
  tb_tensor *t = load_ok(b, "scalar_f4.npy");
  assert_int_equal(tb_tensor_ndim(t), 0);
  assert_float_equal(*(const float *)tb_tensor_host_data(t), 7.5, 0.0);
  tb_tensor_destroy(t);
  t = load_ok(b, "vector_i8.npy");
  const int64_t s3[] = {3};
  assert_shape(t, TB_DTYPE_I64, 1, s3);
  assert_int_equal(((const int64_t *)tb_tensor_host_data(t))[2], 7);
  tb_tensor_destroy(t);
  t = load_ok(b, "empty_f4.npy");
  const int64_t s03[] = {0, 3};
  assert_shape(t, TB_DTYPE_F32, 2, s03);
  assert_int_equal(tb_tensor_numel(t), 0);
  tb_tensor_destroy(t);
  /* arange(6).reshape(2, 3) stored column by column: read back row-major */
  t = load_ok(b, "fortran_f4.npy");
  assert_shape(t, TB_DTYPE_F32, 2, shape23);
  const float *f = tb_tensor_host_data(t);
  for (int i = 0; i < 6; i++) assert_float_equal(f[i], (float)i, 0.0);
  tb_tensor_destroy(t);
}

/* ml_dtypes' bfloat16 array, which numpy saves as '<V2' */
static void ml_dtypes_bf16(void **state) {
  tb_tensor *t = load_ok(*state, "bf16_ml_dtypes.npy");
  const int64_t s3[] = {3};
  assert_shape(t, TB_DTYPE_BF16, 1, s3);
  float v[3];
  TB_ASSERT_OK(tb_convert(TB_DTYPE_BF16, tb_tensor_host_data(t), TB_DTYPE_F32, v, 3, false));
  assert_float_equal(v[0], 1.0, 0.0);
  assert_float_equal(v[1], -2.5, 0.0);
  assert_float_equal(v[2], 0.15625, 0.0);
  tb_tensor_destroy(t);
}

static char *slurp(const char *path, size_t *len) {
  FILE *f = fopen(path, "rb");
  assert_non_null(f);
  char *buf = malloc(1 << 16);
  assert_non_null(buf);
  *len = fread(buf, 1, 1 << 16, f);
  fclose(f);
  return buf;
}

static void saved_file_equals_numpys(void **state) {
  tb_backend *b = *state;
  tb_tensor *t = load_ok(b, "f4.npy");
  char path[] = "/tmp/tb-npy-XXXXXX";
  int fd = mkstemp(path);
  assert_true(fd >= 0);
  close(fd);
  TB_ASSERT_OK(tb_npy_save(path, t));
  size_t a_len, b_len;
  char *mine = slurp(path, &a_len), *numpys = slurp(NPY_DIR "f4.npy", &b_len);
  assert_int_equal(a_len, b_len);
  assert_memory_equal(mine, numpys, a_len);
  free(mine);
  free(numpys);
  tb_tensor_destroy(t);
  /* the 1-d form is "(3,)" and the scalar "()", as numpy writes them */
  const char *same[] = {"vector_i8.npy", "scalar_f4.npy", "b1.npy", "empty_f4.npy"};
  for (size_t i = 0; i < 4; i++) {
    t = load_ok(b, same[i]);
    TB_ASSERT_OK(tb_npy_save(path, t));
    char ref[512];
    snprintf(ref, sizeof ref, "%s%s", NPY_DIR, same[i]);
    mine = slurp(path, &a_len);
    numpys = slurp(ref, &b_len);
    if (a_len != b_len || memcmp(mine, numpys, a_len) != 0) fail_msg("%s written differently from numpy's", same[i]);
    free(mine);
    free(numpys);
    tb_tensor_destroy(t);
  }
  unlink(path);
}

static void round_trip_every_dtype(void **state) {
  tb_backend *b = *state;
  char path[] = "/tmp/tb-npy-XXXXXX";
  int fd = mkstemp(path);
  assert_true(fd >= 0);
  close(fd);
  const int64_t shape[] = {3, 1, 4};
  for (int d = 0; d < TB_DTYPE_COUNT; d++) {
    tb_tensor *t = NULL, *back = NULL;
    TB_ASSERT_OK(tb_tensor_create(b, (tb_dtype)d, 3, shape, &t));
    size_t n = tb_tensor_nbytes(t);
    uint8_t *bytes = tb_tensor_host_data(t);
    for (size_t i = 0; i < n; i++) bytes[i] = (uint8_t)(i * 37 + 11);
    if (d == TB_DTYPE_BOOL)
      for (size_t i = 0; i < n; i++) bytes[i] &= 1;
    TB_ASSERT_OK(tb_npy_save(path, t));
    struct stat st;
    assert_int_equal(stat(path, &st), 0);
    assert_int_equal(((size_t)st.st_size - n) % 64, 0); /* header aligned to 64 bytes */
    size_t len;
    char *file = slurp(path, &len);
    assert_int_equal(file[6], 1); /* version 1.0 */
    assert_int_equal(file[7], 0);
    if (d == TB_DTYPE_BF16) TB_ASSERT_CONTAINS(file + 10, "'descr': [('bf16', '<u2')]");
    if (d == TB_DTYPE_FP8_E4M3FN) TB_ASSERT_CONTAINS(file + 10, "'descr': [('fp8_e4m3fn', '|u1')]");
    if (d == TB_DTYPE_FP8_E5M2) TB_ASSERT_CONTAINS(file + 10, "'descr': [('fp8_e5m2', '|u1')]");
    TB_ASSERT_CONTAINS(file + 10, "'shape': (3, 1, 4), }");
    free(file);
    TB_ASSERT_OK(tb_npy_load(path, b, &back));
    assert_int_equal(tb_tensor_dtype(back), d);
    assert_int_equal(tb_tensor_ndim(back), 3);
    assert_int_equal(tb_tensor_shape(back)[2], 4);
    assert_memory_equal(tb_tensor_host_data(back), bytes, n);
    tb_tensor_destroy(t);
    tb_tensor_destroy(back);
  }
  unlink(path);
}

static void strided_view_saved_packed(void **state) {
  tb_backend *b = *state;
  tb_tensor *t = load_ok(b, "f4.npy"), *col = NULL, *back = NULL;
  const int64_t shape[] = {2}, strides[] = {3};
  TB_ASSERT_OK(tb_tensor_view(t, 1, shape, strides, 2, &col)); /* column 2: 0.25, -4 */
  char path[] = "/tmp/tb-npy-XXXXXX";
  int fd = mkstemp(path);
  close(fd);
  TB_ASSERT_OK(tb_npy_save(path, col));
  TB_ASSERT_OK(tb_npy_load(path, b, &back));
  const float *v = tb_tensor_host_data(back);
  assert_float_equal(v[0], 0.25, 0.0);
  assert_float_equal(v[1], -4.0, 0.0);
  unlink(path);
  tb_tensor_destroy(back);
  tb_tensor_destroy(col);
  tb_tensor_destroy(t);
}

/* ---- bad files ---------------------------------------------------------------------------------- */

/* Write magic + version + header (padded as numpy does unless raw) + data bytes to a temp file. */
static void write_npy(const char *path, int major, const char *header, const void *data, size_t data_len) {
  FILE *f = fopen(path, "wb");
  assert_non_null(f);
  size_t hlen = strlen(header);
  uint8_t pre[12] = {0x93, 'N', 'U', 'M', 'P', 'Y', (uint8_t)major, 0};
  size_t pre_len = major == 1 ? 10 : 12;
  pre[8] = (uint8_t)hlen;
  pre[9] = (uint8_t)(hlen >> 8);
  pre[10] = (uint8_t)(hlen >> 16);
  pre[11] = (uint8_t)(hlen >> 24);
  fwrite(pre, 1, pre_len, f);
  fwrite(header, 1, hlen, f);
  if (data_len) fwrite(data, 1, data_len, f);
  fclose(f);
}

static void expect_error(tb_backend *b, const char *path, tb_status status, const char *part) {
  tb_tensor *t = (tb_tensor *)1;
  tb_status s = tb_npy_load(path, b, &t);
  if (s != status) fail_msg("%s: got %s (%s), expected %s", part, tb_status_str(s), tb_last_error(), tb_status_str(status));
  assert_null(t);
  TB_ASSERT_CONTAINS(tb_last_error(), part);
  TB_ASSERT_CONTAINS(tb_last_error(), path);
}

/* A file holding exactly these bytes fails to load with status and an error naming part. */
static void expect_bytes_error(tb_backend *b, const char *path, const void *bytes, size_t n, tb_status status,
                               const char *part) {
  FILE *f = fopen(path, "wb");
  assert_non_null(f);
  fwrite(bytes, 1, n, f);
  fclose(f);
  expect_error(b, path, status, part);
}

static void bad_headers(void **state) {
  tb_backend *b = *state;
  char path[] = "/tmp/tb-npy-XXXXXX";
  int fd = mkstemp(path);
  close(fd);
  float data[6] = {0};
  static const struct {
    const char *header;
    tb_status status;
    const char *part;
  } cases[] = {
      {"{'descr': '<f4', 'fortran_order': False, 'shape': (2, 3), }", TB_ERR_INVALID_ARGUMENT, "newline"},
      {"['descr', '<f4']\n", TB_ERR_INVALID_ARGUMENT, "not a dict"},
      {"{'descr': '<f4', 'shape': (2, 3), }\n", TB_ERR_INVALID_ARGUMENT, "'fortran_order' is missing"},
      {"{'descr': '<f4', 'fortran_order': False, 'shape': (2, 3), 'extra': 1}\n", TB_ERR_INVALID_ARGUMENT,
       "key 'extra' is unknown"},
      {"{'descr': '<f4', 'descr': '<f4', 'fortran_order': False, 'shape': (2, 3)}\n", TB_ERR_INVALID_ARGUMENT,
       "key 'descr' is repeated"},
      {"{'descr': '<f4', 'fortran_order': maybe, 'shape': (2, 3), }\n", TB_ERR_INVALID_ARGUMENT, "True or False"},
      {"{'descr': '<f4', 'fortran_order': False, 'shape': (2, -3), }\n", TB_ERR_INVALID_ARGUMENT, "'shape'"},
      {"{'descr': '<f4', 'fortran_order': False, 'shape': (6), }\n", TB_ERR_INVALID_ARGUMENT, "trailing comma"},
      {"{'descr': '<f4', 'fortran_order': False, 'shape': [2, 3], }\n", TB_ERR_INVALID_ARGUMENT, "not a tuple"},
      {"{'descr': 4, 'fortran_order': False, 'shape': (2, 3), }\n", TB_ERR_INVALID_ARGUMENT, "'descr' is not a string"},
      {"{'descr': '<f4', 'fortran_order': False, 'shape': (2, 3), } x\n", TB_ERR_INVALID_ARGUMENT, "after the dict"},
      {"{'descr': '<f4', 'fortran_order': False, 'shape': (4294967296, 4294967296), }\n", TB_ERR_INVALID_ARGUMENT,
       "overflows"},
      {"{'descr': '<f4', 'fortran_order': False, 'shape': (99999999999999999999, 1), }\n", TB_ERR_INVALID_ARGUMENT,
       "too large"},
      {"{'descr': '<f4', 'fortran_order': False, 'shape': (1, 1, 1, 1, 1, 1, 1, 1, 1), }\n", TB_ERR_UNSUPPORTED,
       "more than 8 dimensions"},
      {"{'descr': '>f4', 'fortran_order': False, 'shape': (2, 3), }\n", TB_ERR_UNSUPPORTED, "big-endian"},
      {"{'descr': '<u2', 'fortran_order': False, 'shape': (2, 3), }\n", TB_ERR_UNSUPPORTED, "'<u2' is not supported"},
      {"{'descr': '|V1', 'fortran_order': False, 'shape': (2, 3), }\n", TB_ERR_UNSUPPORTED, "e4m3fn and e5m2"},
      {"{'descr': [('x', '<f4'), ('y', '<f4')], 'fortran_order': False, 'shape': (2, 3), }\n",
       TB_ERR_INVALID_ARGUMENT, "more than one field"},
      {"{'descr': [('rgb', '|u1')], 'fortran_order': False, 'shape': (2, 3), }\n", TB_ERR_UNSUPPORTED,
       "structured dtype [('rgb', '|u1')]"},
  };
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
    write_npy(path, 1, cases[i].header, data, sizeof data);
    expect_error(b, path, cases[i].status, cases[i].part);
  }
  /* a header that is not ASCII in version 1 */
  write_npy(path, 1, "{'descr': '<f4', 'fortran_order': False, 'shape': (2, 3), \xc3\xa9}\n", data, sizeof data);
  expect_error(b, path, TB_ERR_INVALID_ARGUMENT, "not ASCII");
  unlink(path);
}

static void bad_framing(void **state) {
  tb_backend *b = *state;
  char path[] = "/tmp/tb-npy-XXXXXX";
  int fd = mkstemp(path);
  close(fd);
  const char *good = "{'descr': '<f4', 'fortran_order': False, 'shape': (2, 3), }\n";
  float data[7] = {0};

  /* data shorter than the shape says */
  write_npy(path, 1, good, data, 5 * sizeof(float));
  expect_error(b, path, TB_ERR_IO, "truncated");
  TB_ASSERT_CONTAINS(tb_last_error(), "20 bytes but shape [2, 3] of f32 needs 24");
  /* and longer */
  write_npy(path, 1, good, data, 7 * sizeof(float));
  expect_error(b, path, TB_ERR_INVALID_ARGUMENT, "bytes after");
  /* wrong magic */
  expect_bytes_error(b, path, "PK\x03\x04 not numpy at all, a zip file", 33, TB_ERR_INVALID_ARGUMENT, "magic");
  /* too short to hold the magic */
  expect_bytes_error(b, path, "\x93NUM", 4, TB_ERR_INVALID_ARGUMENT, "not a .npy file");
  /* unknown version */
  write_npy(path, 4, good, data, 6 * sizeof(float));
  expect_error(b, path, TB_ERR_UNSUPPORTED, "version 4.0");
  /* huge header length (version 2: 4 bytes) */
  expect_bytes_error(b, path, "\x93NUMPY\x02\x00\xff\xff\xff\xff{", 13, TB_ERR_INVALID_ARGUMENT, "header length 4294967295 is too large");
  /* header length past the end of the file */
  expect_bytes_error(b, path, "\x93NUMPY\x01\x00\x00\x10{'descr'", 18, TB_ERR_IO, "ends in the header");
  /* a header length of zero */
  expect_bytes_error(b, path, "\x93NUMPY\x01\x00\x00\x00", 10, TB_ERR_INVALID_ARGUMENT, "header length 0 is zero");
  /* the header length cut short */
  expect_bytes_error(b, path, "\x93NUMPY\x02\x00\x10", 9, TB_ERR_IO, "header length");
  unlink(path);
  expect_error(b, "/tmp/tb-npy-does-not-exist.npy", TB_ERR_NOT_FOUND, "cannot open");
}

static void unsupported_numpy_files(void **state) {
  tb_backend *b = *state;
  /* ml_dtypes writes fp8 as '<V1' for both formats: refused rather than guessed */
  expect_error(b, NPY_DIR "fp8_ml_dtypes.npy", TB_ERR_UNSUPPORTED, "e4m3fn and e5m2 both write it");
  expect_error(b, NPY_DIR "big_endian_f4.npy", TB_ERR_UNSUPPORTED, "'>f4' is big-endian");
  expect_error(b, NPY_DIR "u2.npy", TB_ERR_UNSUPPORTED, "'<u2' is not supported");
}

static void null_arguments(void **state) {
  tb_backend *b = *state;
  tb_tensor *t = (tb_tensor *)1;
  assert_int_equal(tb_npy_load(NULL, b, &t), TB_ERR_INVALID_ARGUMENT);
  assert_null(t);
  assert_int_equal(tb_npy_load(NPY_DIR "f4.npy", NULL, &t), TB_ERR_INVALID_ARGUMENT);
  assert_int_equal(tb_npy_save(NULL, NULL), TB_ERR_INVALID_ARGUMENT);
  TB_ASSERT_CONTAINS(tb_last_error(), "tb_npy_save");
  /* an unwritable path */
  t = load_ok(b, "f4.npy");
  assert_int_equal(tb_npy_save("/tmp/tb-no-such-dir/x.npy", t), TB_ERR_IO);
  TB_ASSERT_CONTAINS(tb_last_error(), "/tmp/tb-no-such-dir/x.npy");
  tb_tensor_destroy(t);
}

/* Inputs the fuzzer found (tests/fuzz/regressions-npy/): each one is refused with an error, no crash and no
 * huge allocation, in the regular suite too. */
static void fuzzer_regressions(void **state) {
  tb_backend *b = *state;
  char dir[1024];
  snprintf(dir, sizeof dir, "%s/../fuzz/regressions-npy", TB_TEST_FIXTURES);
  DIR *d = opendir(dir);
  assert_non_null(d);
  int seen = 0;
  for (struct dirent *e; (e = readdir(d)) != NULL;) {
    if (e->d_name[0] == '.' || strcmp(e->d_name, "README.md") == 0) continue;
    char path[2048];
    snprintf(path, sizeof path, "%s/%s", dir, e->d_name);
    tb_tensor *t = NULL;
    tb_status st = tb_npy_load(path, b, &t);
    if (st == TB_OK) fail_msg("%s loaded; a regression input must be refused", e->d_name);
    assert_null(t);
    assert_true(tb_last_error()[0] != '\0');
    seen++;
  }
  closedir(d);
  assert_true(seen >= 1);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(numpy_float_files),          cmocka_unit_test(numpy_integer_and_bool_files),
      cmocka_unit_test(numpy_shapes_and_fortran_order), cmocka_unit_test(saved_file_equals_numpys),
      cmocka_unit_test(round_trip_every_dtype),     cmocka_unit_test(strided_view_saved_packed),
      cmocka_unit_test(bad_headers),                cmocka_unit_test(bad_framing),
      cmocka_unit_test(unsupported_numpy_files),    cmocka_unit_test(null_arguments),
      cmocka_unit_test(ml_dtypes_bf16),             cmocka_unit_test(fuzzer_regressions),
  };
  return cmocka_run_group_tests(tests, tbt_cpu_setup, tbt_cpu_teardown);
}
