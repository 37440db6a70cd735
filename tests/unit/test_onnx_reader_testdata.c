/* The ONNX reader on Debian's libonnx-testdata (ONNX 1.12): every model of node/, pytorch-converted/,
 * pytorch-operator/ and simple/ loads, except those whose graph inputs or outputs have element types
 * TensorBridge lacks (string, uint16/32/64), which fail with TB_ERR_UNSUPPORTED naming the type; and
 * every test_data_set .pb file reads as a tensor with the dtype and dims numpy gives
 * (tests/fixtures/onnx_testdata/pb_manifest.txt, made by tests/tools/gen_onnx_pb_manifest.py).
 * Skips when the package is not installed. */
#include <dirent.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include "model/model_impl.h"
#include "model/onnx/onnx_reader.h"
#include "test_util.h"

#define TESTDATA "/usr/share/libonnx-testdata/data"

static bool have_testdata(void) {
  struct stat st;
  return stat(TESTDATA "/node/test_relu/model.onnx", &st) == 0;
}

/* The reasons a model of the suite may fail to load: element types TensorBridge does not have. */
static bool expected_failure(tb_status st, const char *message) {
  static const char *const types[] = {"element type string", "element type uint16", "element type uint32",
                                      "element type uint64"};
  if (st != TB_ERR_UNSUPPORTED) return false;
  for (size_t i = 0; i < sizeof types / sizeof types[0]; i++)
    if (strstr(message, types[i])) return true;
  return false;
}

static void load_suite(const char *suite, size_t *loaded, size_t *unsupported) {
  char dir[512];
  snprintf(dir, sizeof dir, "%s/%s", TESTDATA, suite);
  DIR *d = opendir(dir);
  assert_non_null(d);
  struct dirent *e;
  while ((e = readdir(d))) {
    if (e->d_name[0] == '.') continue;
    char path[1024];
    snprintf(path, sizeof path, "%s/%s/model.onnx", dir, e->d_name);
    struct stat st;
    if (stat(path, &st) != 0) continue;
    tb_model *model;
    tb_status s = tb_model_load(path, &model);
    if (s == TB_OK) {
      (*loaded)++;
      assert_non_null(model->ir->graph);
      assert_true(model->ir->graph->n_outputs > 0);
      assert_non_null(tb_model_property(model, "opset"));
      tb_model_destroy(model);
    } else if (expected_failure(s, tb_last_error())) {
      TB_ASSERT_CONTAINS(tb_last_error(), path);
      (*unsupported)++;
    } else {
      fail_msg("%s: %s %s", path, tb_status_str(s), tb_last_error());
    }
  }
  closedir(d);
}

static void test_every_model_loads(void **state) {
  (void)state;
  if (!have_testdata()) skip();
  size_t loaded = 0, unsupported = 0;
  load_suite("node", &loaded, &unsupported);
  load_suite("pytorch-converted", &loaded, &unsupported);
  load_suite("pytorch-operator", &loaded, &unsupported);
  load_suite("simple", &loaded, &unsupported);
  print_message("libonnx-testdata: %zu models loaded, %zu refused (string/uint16/uint32/uint64 graph io)\n", loaded,
                unsupported);
  /* Debian's libonnx-testdata 1.12: 1072 models, 35 of them with string or unsigned 16-64-bit io. */
  assert_int_equal(loaded + unsupported, 1072);
  assert_int_equal(unsupported, 35);
}

/* ONNX elem_type -> dtype for the manifest's codes; -1 for the ones we lack. */
static int dtype_of(int code) {
  switch (code) {
  case 1: return TB_DTYPE_F32;
  case 2: return TB_DTYPE_U8;
  case 3: return TB_DTYPE_I8;
  case 5: return TB_DTYPE_I16;
  case 6: return TB_DTYPE_I32;
  case 7: return TB_DTYPE_I64;
  case 9: return TB_DTYPE_BOOL;
  case 10: return TB_DTYPE_F16;
  case 11: return TB_DTYPE_F64;
  case 16: return TB_DTYPE_BF16;
  default: return -1;
  }
}

static void test_every_pb_file_reads_with_numpy_dims(void **state) {
  (void)state;
  if (!have_testdata()) skip();
  FILE *f = fopen(TB_TEST_FIXTURES "/onnx_testdata/pb_manifest.txt", "r");
  assert_non_null(f);
  char line[1024];
  size_t tensors = 0, unsupported = 0, other = 0;
  tb_ir_model *holder = tb_ir_model_new();
  assert_non_null(holder);
  while (fgets(line, sizeof line, f)) {
    char rel[512], kind[32], dims[256];
    int code;
    if (sscanf(line, "%511s %31s %d %255s", rel, kind, &code, dims) != 4) fail_msg("bad manifest line: %s", line);
    if (strcmp(kind, "tensor") != 0) {
      other++; /* a SequenceProto or OptionalProto, for sequence/optional inputs */
      continue;
    }
    char path[1024];
    snprintf(path, sizeof path, "%s/%s", TESTDATA, rel);
    tb_ir_tensor *t;
    tb_status s = tb_onnx_read_tensor_file(holder, path, &t);
    if (dtype_of(code) < 0) {
      if (s != TB_ERR_UNSUPPORTED) fail_msg("%s: expected TB_ERR_UNSUPPORTED, got %s", path, tb_status_str(s));
      TB_ASSERT_CONTAINS(tb_last_error(), "is not supported");
      unsupported++;
      continue;
    }
    if (s != TB_OK) fail_msg("%s: %s %s", path, tb_status_str(s), tb_last_error());
    assert_int_equal(t->dtype, dtype_of(code));
    char got[256] = "scalar";
    size_t used = 0;
    for (size_t i = 0; i < t->ndim; i++)
      used += (size_t)snprintf(got + used, sizeof got - used, "%s%lld", i ? "," : "", (long long)t->dims[i]);
    if (strcmp(got, dims) != 0) fail_msg("%s: dims %s, numpy gives %s", path, got, dims);
    assert_int_equal(t->nbytes, (size_t)tb_ir_tensor_numel(t) * tb_dtype_size(t->dtype));
    tensors++;
    if (tensors % 256 == 0) { /* keep the holder small */
      tb_ir_model_destroy(holder);
      holder = tb_ir_model_new();
      assert_non_null(holder);
    }
  }
  fclose(f);
  tb_ir_model_destroy(holder);
  print_message("test_data_set files: %zu tensors read, %zu of types we lack refused, %zu sequences/optionals\n",
                tensors, unsupported, other);
  assert_int_equal(tensors + unsupported + other, 3205);
  assert_int_equal(unsupported, 87);
}

/* A missing file, a folder, and a file that is not a TensorProto. */
static void test_tensor_file_errors(void **state) {
  (void)state;
  tb_ir_model *holder = tb_ir_model_new();
  tb_ir_tensor *t;
  assert_int_equal(tb_onnx_read_tensor_file(holder, "/nonexistent/input_0.pb", &t), TB_ERR_NOT_FOUND);
  assert_string_equal(tb_last_error(), "cannot open the tensor file /nonexistent/input_0.pb: No such file or directory");
  assert_int_equal(tb_onnx_read_tensor_file(holder, "/tmp", &t), TB_ERR_INVALID_ARGUMENT);
  assert_string_equal(tb_last_error(), "the tensor file /tmp is a folder, not a regular file; give the path of a file");
  const unsigned char garbage[] = {0x08, 0x01, 0x12, 0x7f, 0x00};
  assert_int_equal(tb_onnx_read_tensor(holder, garbage, sizeof garbage, "garbage.pb", &t), TB_ERR_MODEL);
  TB_ASSERT_CONTAINS(tb_last_error(), "garbage.pb: tensor");
  TB_ASSERT_CONTAINS(tb_last_error(), "malformed protobuf at byte 2");
  const unsigned char ext[] = {0x10, 0x01, 0x70, 0x01}; /* data_type float, data_location EXTERNAL */
  assert_int_equal(tb_onnx_read_tensor(holder, ext, sizeof ext, "ext.pb", &t), TB_ERR_MODEL);
  TB_ASSERT_CONTAINS(tb_last_error(), "external_data has no 'location'");
  tb_ir_model_destroy(holder);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_every_model_loads),
      cmocka_unit_test(test_every_pb_file_reads_with_numpy_dims),
      cmocka_unit_test(test_tensor_file_errors),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
