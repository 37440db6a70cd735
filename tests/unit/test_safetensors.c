/* safetensors read and write: every dtype round-trips; files the Python `safetensors` package wrote
 * (tests/fixtures/safetensors, made by make_fixtures.py there) are read with their values and metadata; and
 * a file we write for the same tensors is byte-identical to the package's (same SHA-256), which the
 * script's --check reads back (run by hand: TB_KEEP_SAFETENSORS=DIR keeps our file). */
#include <stdarg.h>
#include <setjmp.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <cmocka.h>
#include <tensorbridge/tensorbridge.h>
#include "test_util.h"

#define ST_FIXTURES TB_TEST_FIXTURES "/safetensors/"
#define EVERY_DTYPE_SHA256 "ed1ed0d60a2d13604f630959639ce67c48389780520ccc5629b2e22921ddb6ad"

static const struct {
  const char *name;
  tb_dtype dtype;
} every[] = {{"t_f64", TB_DTYPE_F64},       {"t_f32", TB_DTYPE_F32},        {"t_f16", TB_DTYPE_F16},
             {"t_bf16", TB_DTYPE_BF16},     {"t_f8_e4m3", TB_DTYPE_FP8_E4M3FN}, {"t_f8_e5m2", TB_DTYPE_FP8_E5M2},
             {"t_i64", TB_DTYPE_I64},       {"t_i32", TB_DTYPE_I32},        {"t_i16", TB_DTYPE_I16},
             {"t_i8", TB_DTYPE_I8},         {"t_u8", TB_DTYPE_U8},          {"t_bool", TB_DTYPE_BOOL}};
#define EVERY_COUNT (sizeof every / sizeof every[0])

static bool is_float(tb_dtype d) { return d <= TB_DTYPE_FP8_E5M2; }

/* make_fixtures.py's values for flat index i. */
static double value_of(tb_dtype d, int i) {
  if (is_float(d)) return (i - 2.5) * 0.5;
  if (d == TB_DTYPE_U8) return 40.0 * i;
  if (d == TB_DTYPE_BOOL) return i % 2;
  return 7.0 * i - 10;
}

static tb_tensor *make_tensor(tb_backend *cpu, tb_dtype d) {
  int64_t shape[2] = {2, 3};
  tb_tensor *t = NULL;
  TB_ASSERT_OK(tb_tensor_create(cpu, d, 2, shape, &t));
  double v[6];
  for (int i = 0; i < 6; i++) v[i] = value_of(d, i);
  TB_ASSERT_OK(tb_convert(TB_DTYPE_F64, v, d, tb_tensor_host_data(t), 6, true));
  return t;
}

static char *temp_path(const char *name) {
  static char dir[] = "/tmp/tb-test-st-XXXXXX";
  static bool made;
  if (!made) {
    assert_non_null(mkdtemp(dir));
    made = true;
  }
  char *p = malloc(strlen(dir) + strlen(name) + 2);
  sprintf(p, "%s/%s", dir, name);
  return p;
}

static char *file_sha(const char *path) {
  FILE *f = fopen(path, "rb");
  assert_non_null(f);
  fseek(f, 0, SEEK_END);
  long n = ftell(f);
  fseek(f, 0, SEEK_SET);
  unsigned char *b = malloc((size_t)n + 1);
  assert_int_equal(fread(b, 1, (size_t)n, f), (size_t)n);
  fclose(f);
  static char hex[65];
  tb_sha256_hex(b, (size_t)n, hex);
  free(b);
  return hex;
}

static void assert_values(const tb_safetensors *st, const char *name, tb_dtype d) {
  tb_safetensors_info info = {.size = sizeof info};
  TB_ASSERT_OK(tb_safetensors_find(st, name, &info));
  assert_int_equal(info.dtype, d);
  assert_int_equal(info.ndim, 2);
  assert_int_equal(info.shape[0], 2);
  assert_int_equal(info.shape[1], 3);
  assert_int_equal(info.nbytes, 6 * tb_dtype_size(d));
  const void *data;
  size_t bytes;
  TB_ASSERT_OK(tb_safetensors_data(st, name, &data, &bytes));
  double got[6];
  TB_ASSERT_OK(tb_convert(d, data, TB_DTYPE_F64, got, 6, false));
  for (int i = 0; i < 6; i++) {
    if (got[i] != value_of(d, i)) fail_msg("%s[%d] = %g, expected %g", name, i, got[i], value_of(d, i));
  }
}

static void write_every(tb_backend *cpu, const char *path, size_t n_meta, const char *const *k, const char *const *v) {
  tb_tensor *ts[EVERY_COUNT];
  const char *names[EVERY_COUNT];
  /* given in reverse order: the writer sorts */
  for (size_t i = 0; i < EVERY_COUNT; i++) {
    names[i] = every[EVERY_COUNT - 1 - i].name;
    ts[i] = make_tensor(cpu, every[EVERY_COUNT - 1 - i].dtype);
  }
  TB_ASSERT_OK(tb_safetensors_write(path, EVERY_COUNT, names, (const tb_tensor *const *)ts, n_meta, k, v));
  for (size_t i = 0; i < EVERY_COUNT; i++) tb_tensor_destroy(ts[i]);
}

/* Every dtype written and read back, with metadata; tensors read onto a backend hold the same bytes. */
static void test_round_trip_every_dtype(void **state) {
  (void)state;
  tb_backend *cpu = NULL;
  TB_ASSERT_OK(tb_backend_create("cpu", &cpu));
  char *path = temp_path("every_meta.safetensors");
  const char *keys[] = {"zeta", "alpha", "quote\"nl\n"};
  const char *vals[] = {"last", "first", "tab\there \xc3\xa9"};
  write_every(cpu, path, 3, keys, vals);
  tb_safetensors *st = NULL;
  TB_ASSERT_OK(tb_safetensors_open(path, &st));
  assert_int_equal(tb_safetensors_count(st), EVERY_COUNT);
  for (size_t i = 0; i < EVERY_COUNT; i++) {
    assert_values(st, every[i].name, every[i].dtype);
    tb_tensor *t = NULL;
    TB_ASSERT_OK(tb_safetensors_read(st, every[i].name, cpu, &t));
    assert_int_equal(tb_tensor_dtype(t), every[i].dtype);
    const void *data;
    size_t bytes;
    TB_ASSERT_OK(tb_safetensors_data(st, every[i].name, &data, &bytes));
    assert_int_equal(tb_tensor_nbytes(t), bytes);
    assert_memory_equal(tb_tensor_host_data(t), data, bytes);
    tb_tensor_destroy(t);
  }
  /* the data order is the package's: dtype (I64 F64 F32 I32 BF16 F16 I16 F8_E4M3 F8_E5M2 I8 U8 BOOL), then name */
  assert_string_equal(tb_safetensors_name(st, 0), "t_i64");
  assert_string_equal(tb_safetensors_name(st, 1), "t_f64");
  assert_string_equal(tb_safetensors_name(st, 7), "t_f8_e4m3");
  assert_string_equal(tb_safetensors_name(st, 11), "t_bool");
  assert_null(tb_safetensors_name(st, 12));
  assert_int_equal(tb_safetensors_metadata_count(st), 3);
  const char *k, *v;
  TB_ASSERT_OK(tb_safetensors_metadata_at(st, 0, &k, &v));
  assert_string_equal(k, "alpha");
  assert_string_equal(v, "first");
  assert_string_equal(tb_safetensors_metadata(st, "quote\"nl\n"), "tab\there \xc3\xa9");
  assert_null(tb_safetensors_metadata(st, "missing"));
  tb_tensor *t = NULL;
  assert_int_equal(tb_safetensors_read(st, "nope", cpu, &t), TB_ERR_NOT_FOUND);
  TB_ASSERT_CONTAINS(tb_last_error(), "no tensor 'nope'");
  tb_safetensors_close(st);
  /* the file is readable by others as umask allows, like any file the user makes */
  struct stat sb;
  assert_int_equal(stat(path, &sb), 0);
  assert_true((sb.st_mode & 0444) != 0);
  unlink(path);
  free(path);
  tb_backend_destroy(cpu);
}

/* No metadata: our bytes are exactly the Python package's for the same tensors. */
static void test_bytes_equal_python(void **state) {
  (void)state;
  tb_backend *cpu = NULL;
  TB_ASSERT_OK(tb_backend_create("cpu", &cpu));
  const char *keep = getenv("TB_KEEP_SAFETENSORS");
  char *path = temp_path("every.safetensors");
  write_every(cpu, path, 0, NULL, NULL);
  assert_string_equal(file_sha(path), EVERY_DTYPE_SHA256);
  assert_string_equal(file_sha(ST_FIXTURES "every_dtype.safetensors"), EVERY_DTYPE_SHA256);
  if (keep) {
    char cmd[4096];
    snprintf(cmd, sizeof cmd, "cp '%s' '%s/tb_every_dtype.safetensors'", path, keep);
    assert_int_equal(system(cmd), 0);
  }
  unlink(path);
  free(path);
  tb_backend_destroy(cpu);
}

/* Files the Python package wrote. */
static void test_read_python_files(void **state) {
  (void)state;
  tb_safetensors *st = NULL;
  TB_ASSERT_OK(tb_safetensors_open(ST_FIXTURES "every_dtype.safetensors", &st));
  assert_int_equal(tb_safetensors_count(st), EVERY_COUNT);
  for (size_t i = 0; i < EVERY_COUNT; i++) assert_values(st, every[i].name, every[i].dtype);
  assert_int_equal(tb_safetensors_metadata_count(st), 0);
  tb_safetensors_close(st);

  TB_ASSERT_OK(tb_safetensors_open(ST_FIXTURES "with_metadata.safetensors", &st));
  assert_int_equal(tb_safetensors_count(st), 3);
  assert_string_equal(tb_safetensors_metadata(st, "format"), "pt");
  assert_string_equal(tb_safetensors_metadata(st, "note"), "made by make_fixtures.py");
  assert_values(st, "weight", TB_DTYPE_F32);
  tb_safetensors_info info = {.size = sizeof info};
  TB_ASSERT_OK(tb_safetensors_find(st, "scalar", &info));
  assert_int_equal(info.ndim, 0);
  assert_int_equal(info.nbytes, 4);
  const void *data;
  size_t bytes;
  TB_ASSERT_OK(tb_safetensors_data(st, "scalar", &data, &bytes));
  float f;
  memcpy(&f, data, 4);
  assert_true(f == 3.5f);
  TB_ASSERT_OK(tb_safetensors_find(st, "empty", &info));
  assert_int_equal(info.dtype, TB_DTYPE_F16);
  assert_int_equal(info.ndim, 2);
  assert_int_equal(info.shape[0], 0);
  assert_int_equal(info.shape[1], 4);
  assert_int_equal(info.nbytes, 0);
  tb_backend *cpu = NULL;
  TB_ASSERT_OK(tb_backend_create("cpu", &cpu));
  tb_tensor *t = NULL;
  TB_ASSERT_OK(tb_safetensors_read(st, "empty", cpu, &t));
  assert_int_equal(tb_tensor_numel(t), 0);
  tb_tensor_destroy(t);
  tb_backend_destroy(cpu);
  tb_safetensors_close(st);
}

/* A strided view is written packed; writer argument errors name the problem. */
static void test_write_views_and_errors(void **state) {
  (void)state;
  tb_backend *cpu = NULL;
  TB_ASSERT_OK(tb_backend_create("cpu", &cpu));
  tb_tensor *base = make_tensor(cpu, TB_DTYPE_F32), *view = NULL;
  int64_t shape[2] = {3, 2}, strides[2] = {1, 3};
  TB_ASSERT_OK(tb_tensor_view(base, 2, shape, strides, 0, &view));
  char *path = temp_path("view.safetensors");
  const char *names[] = {"transposed"};
  TB_ASSERT_OK(tb_safetensors_write(path, 1, names, (const tb_tensor *const *)&view, 0, NULL, NULL));
  tb_safetensors *st = NULL;
  TB_ASSERT_OK(tb_safetensors_open(path, &st));
  const void *data;
  size_t bytes;
  TB_ASSERT_OK(tb_safetensors_data(st, "transposed", &data, &bytes));
  float want[6] = {-1.25f, 0.25f, -0.75f, 0.75f, -0.25f, 1.25f}, got[6];
  assert_int_equal(bytes, sizeof got);
  memcpy(got, data, sizeof got);
  assert_memory_equal(got, want, sizeof got);
  tb_safetensors_close(st);

  const tb_tensor *two[2] = {base, view};
  const char *dup[2] = {"same", "same"};
  assert_int_equal(tb_safetensors_write(path, 2, dup, two, 0, NULL, NULL), TB_ERR_INVALID_ARGUMENT);
  TB_ASSERT_CONTAINS(tb_last_error(), "tensor name 'same' is given twice");
  const char *meta_name[1] = {"__metadata__"};
  assert_int_equal(tb_safetensors_write(path, 1, meta_name, two, 0, NULL, NULL), TB_ERR_INVALID_ARGUMENT);
  TB_ASSERT_CONTAINS(tb_last_error(), "may not be named \"__metadata__\"");
  const char *k[2] = {"a", "a"}, *v[2] = {"1", "2"};
  assert_int_equal(tb_safetensors_write(path, 1, names, two, 2, k, v), TB_ERR_INVALID_ARGUMENT);
  TB_ASSERT_CONTAINS(tb_last_error(), "metadata key 'a' is given twice");
  assert_int_equal(tb_safetensors_write("/nonexistent-dir/x.safetensors", 1, names, two, 0, NULL, NULL), TB_ERR_NOT_FOUND);
  TB_ASSERT_CONTAINS(tb_last_error(), "/nonexistent-dir/x.safetensors: cannot create the file");
  /* the failed writes left the earlier file intact and no temporary files behind */
  TB_ASSERT_OK(tb_safetensors_open(path, &st));
  assert_int_equal(tb_safetensors_count(st), 1);
  tb_safetensors_close(st);
  char cmd[4096];
  snprintf(cmd, sizeof cmd, "ls '%s'.tmp.* 2>/dev/null | wc -l | grep -qx 0", path);
  assert_int_equal(system(cmd), 0);
  unlink(path);
  free(path);
  tb_tensor_destroy(view);
  tb_tensor_destroy(base);
  tb_backend_destroy(cpu);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_round_trip_every_dtype),
      cmocka_unit_test(test_bytes_equal_python),
      cmocka_unit_test(test_read_python_files),
      cmocka_unit_test(test_write_views_and_errors),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
