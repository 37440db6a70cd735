/* `tb convert` between .npy and safetensors and between dtypes, and `tb run --record / --weights /
 * --export-weights`, through the real tool; the files it writes are read back with the library. */
#include <stdarg.h>
#include <setjmp.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>
#include <tensorbridge/tensorbridge.h>
#include "test_cli_util.h"

#define ST TB_TEST_FIXTURES "/safetensors/"
#define MODEL TB_TEST_FIXTURES "/../../models/cnn_small.onnx"

static char dir[] = "/tmp/tb-test-cli-convert-XXXXXX";

static const char *in_dir(const char *name) {
  static char buf[8][512];
  static int k;
  char *p = buf[k++ % 8];
  snprintf(p, 512, "%s/%s", dir, name);
  return p;
}

static void expect_ok(const char *args, const char *out_part) {
  tcli_run r = tcli(args);
  TCLI_ASSERT_EXIT(r, 0);
  TB_ASSERT_CONTAINS(r.out, out_part);
  tcli_free(&r);
}

static void test_convert_safetensors(void **state) {
  (void)state;
  char args[2048];
  snprintf(args, sizeof args, "convert %swith_metadata.safetensors %s --dtype bf16", ST, in_dir("bf16.safetensors"));
  tcli_run r = tcli(args);
  TCLI_ASSERT_EXIT(r, 0);
  TB_ASSERT_CONTAINS(r.out, "weight: f32 [2, 3] -> bf16\n");
  TB_ASSERT_CONTAINS(r.out, "empty: f16 [0, 4] -> bf16\n");
  TB_ASSERT_CONTAINS(r.out, "note: 3 tensors narrowed to bf16: values rounded to nearest, ties to even");
  tcli_free(&r);
  tb_safetensors *st = NULL;
  TB_ASSERT_OK(tb_safetensors_open(in_dir("bf16.safetensors"), &st));
  assert_string_equal(tb_safetensors_metadata(st, "format"), "pt"); /* metadata kept */
  tb_safetensors_info info = {.size = sizeof info};
  TB_ASSERT_OK(tb_safetensors_find(st, "weight", &info));
  assert_int_equal(info.dtype, TB_DTYPE_BF16);
  const void *data;
  size_t bytes;
  TB_ASSERT_OK(tb_safetensors_data(st, "weight", &data, &bytes));
  float got[6], want[6] = {-1.25f, -0.75f, -0.25f, 0.25f, 0.75f, 1.25f};
  TB_ASSERT_OK(tb_convert(TB_DTYPE_BF16, data, TB_DTYPE_F32, got, 6, false));
  assert_memory_equal(got, want, sizeof got);
  tb_safetensors_close(st);

  /* widening back to f64: no note; integer tensors are kept */
  snprintf(args, sizeof args, "convert %s %s --dtype=f64", in_dir("bf16.safetensors"), in_dir("f64.safetensors"));
  r = tcli(args);
  TCLI_ASSERT_EXIT(r, 0);
  assert_null(strstr(r.out, "note:"));
  tcli_free(&r);
  snprintf(args, sizeof args, "convert %severy_dtype.safetensors %s --dtype f32", ST, in_dir("every.safetensors"));
  r = tcli(args);
  TCLI_ASSERT_EXIT(r, 0);
  TB_ASSERT_CONTAINS(r.out, "t_i64: i64 [2, 3]\n");
  TB_ASSERT_CONTAINS(r.out, "t_f8_e5m2: fp8_e5m2 [2, 3] -> f32\n");
  TB_ASSERT_CONTAINS(r.out, "note: 1 tensor narrowed to f32"); /* only f64 */
  tcli_free(&r);
}

static void test_convert_npy(void **state) {
  (void)state;
  char args[2048];
  snprintf(args, sizeof args, "convert %sbf16_2x3.npy %s", ST, in_dir("one.safetensors"));
  expect_ok(args, "bf16_2x3: bf16 [2, 3]\n");
  tb_safetensors *st = NULL;
  TB_ASSERT_OK(tb_safetensors_open(in_dir("one.safetensors"), &st));
  assert_int_equal(tb_safetensors_count(st), 1);
  assert_string_equal(tb_safetensors_name(st, 0), "bf16_2x3");
  tb_safetensors_close(st);
  snprintf(args, sizeof args, "convert %s %s --dtype f32", in_dir("one.safetensors"), in_dir("back.npy"));
  expect_ok(args, "bf16_2x3: bf16 [2, 3] -> f32\n");
  tb_backend *cpu = NULL;
  TB_ASSERT_OK(tb_backend_create("cpu", &cpu));
  tb_tensor *t = NULL;
  TB_ASSERT_OK(tb_npy_load(in_dir("back.npy"), cpu, &t));
  assert_int_equal(tb_tensor_dtype(t), TB_DTYPE_F32);
  float want[6] = {-1.25f, -0.75f, -0.25f, 0.25f, 0.75f, 1.25f};
  assert_memory_equal(tb_tensor_host_data(t), want, sizeof want);
  tb_tensor_destroy(t);
  tb_backend_destroy(cpu);
  /* --name picks the tensor of a file with several */
  snprintf(args, sizeof args, "convert %swith_metadata.safetensors %s --name scalar", ST, in_dir("scalar.npy"));
  expect_ok(args, "scalar: f32 []\n");

  /* errors */
  snprintf(args, sizeof args, "convert %swith_metadata.safetensors %s", ST, in_dir("x.npy"));
  tcli_expect_err(args, 2, "holds 3 tensors; pick one with --name");
  snprintf(args, sizeof args, "convert %swith_metadata.safetensors %s --name nope", ST, in_dir("x.npy"));
  tcli_expect_err(args, 2, "has no tensor 'nope'");
  tcli_expect_err("convert a.txt b.npy", 2, "'a.txt' ends neither in .safetensors nor in .npy");
  tcli_expect_err("convert a.npy b.npy --dtype i32", 2, "takes a floating dtype");
  tcli_expect_err("convert a.npy", 2, "'tb convert' needs IN and OUT files");
  tcli_expect_err("convert /nonexistent.npy b.safetensors", 2, "/nonexistent.npy");
  FILE *f = fopen(in_dir("garbage.safetensors"), "w");
  assert_non_null(f);
  fputs("not a safetensors file", f);
  fclose(f);
  snprintf(args, sizeof args, "convert %s %s", in_dir("garbage.safetensors"), in_dir("y.safetensors"));
  tcli_expect_err(args, 1, "header length is");
  tcli_run r = tcli("convert --help");
  TCLI_ASSERT_EXIT(r, 0);
  TB_ASSERT_CONTAINS(r.out, "Usage: tb convert IN OUT [--dtype D] [--name NAME]");
  tcli_free(&r);
}

static void test_run_record_and_weights(void **state) {
  (void)state;
  char args[2048];
  snprintf(args, sizeof args, "run %s --backend cpu --level O0 --record %s --export-weights %s --atol 1e-3", MODEL,
           in_dir("rec.safetensors"), in_dir("w.safetensors"));
  tcli_run r = tcli(args);
  TCLI_ASSERT_EXIT(r, 0);
  TB_ASSERT_CONTAINS(r.out, "note:     recorded the inputs, outputs and facts of this run in");
  TB_ASSERT_CONTAINS(r.out, "note:     weights: every initializer written to");
  char sha_line[256];
  assert_non_null(tbt_line(r.out, "  sha256: ", sha_line, sizeof sha_line));
  tcli_free(&r);
  tb_record *rec = NULL;
  TB_ASSERT_OK(tb_record_open(in_dir("rec.safetensors"), &rec));
  tb_record_info info = {.size = sizeof info};
  TB_ASSERT_OK(tb_record_info_get(rec, &info));
  assert_string_equal(info.backend, "cpu");
  assert_string_equal(info.model_file, MODEL);
  assert_true(info.atol == 1e-3);
  assert_int_equal(info.level, TB_LEVEL_O0);
  assert_string_equal(tb_record_input_name(rec, 0), "input");
  assert_string_equal(tb_record_output_name(rec, 0), "probs");
  tb_record_close(rec);

  /* the exported weights loaded back give the same output bytes (on the CPU: the same kernels; other
   * backends' kernels round differently and are compared within tolerances by test_safetensors_weights) */
  snprintf(args, sizeof args, "run %s --backend cpu --level O0 --weights %s", MODEL, in_dir("w.safetensors"));
  r = tcli(args);
  TCLI_ASSERT_EXIT(r, 0);
  TB_ASSERT_CONTAINS(r.out, "note:     weights: 20 initializers replaced from");
  char sha2[256];
  assert_non_null(tbt_line(r.out, "  sha256: ", sha2, sizeof sha2));
  assert_string_equal(sha2, sha_line);
  tcli_free(&r);

  snprintf(args, sizeof args, "run %s --backend cpu --weights %s", MODEL, in_dir("rec.safetensors"));
  tcli_expect_err(args, 2, "--weights: ");
  tcli_expect_err(args, 2, "tensor 'input/input' names no initializer of the model");
  snprintf(args, sizeof args, "run %s --backend cpu --weights %s/none.safetensors", MODEL, dir);
  tcli_expect_err(args, 2, "cannot open the safetensors file ");
  tcli_expect_err(args, 2, "/none.safetensors: No such file or directory");
}

static int setup(void **state) {
  (void)state;
  return mkdtemp(dir) ? 0 : -1;
}

static int teardown(void **state) {
  (void)state;
  char cmd[600];
  snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
  return system(cmd) == 0 ? 0 : -1;
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_convert_safetensors),
      cmocka_unit_test(test_convert_npy),
      cmocka_unit_test(test_run_record_and_weights),
  };
  return cmocka_run_group_tests(tests, setup, teardown);
}
