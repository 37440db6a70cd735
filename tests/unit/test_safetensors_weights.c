/* A model's initializers exported to safetensors and overridden from it (models/cnn_small.onnx): weights
 * exported on the CPU load on opencl:0 and give the CPU's outputs; changed weights change the outputs;
 * lossless widening (f16 -> f32) is accepted, narrowing refused unless asked; unknown names and shape or
 * dtype mismatches are errors naming both sides, and a failed override changes nothing. */
#include <math.h>
#include <stdarg.h>
#include <setjmp.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>
#include <tensorbridge/tensorbridge.h>
#include "test_util.h"

#define MODELS TB_TEST_FIXTURES "/../../models/"

static char dir[] = "/tmp/tb-test-weights-XXXXXX";
static tb_backend *cpu;

static const char *path_in(const char *name) {
  static char buf[8][512];
  static int k;
  char *p = buf[k++ % 8];
  snprintf(p, 512, "%s/%s", dir, name);
  return p;
}

/* Outputs of cnn_small on backend b for a fixed input. */
static void outputs(tb_model *model, tb_backend *b, float out[10]) {
  int64_t shape[4] = {1, 3, 32, 32};
  tb_tensor *in = NULL, *o = NULL;
  TB_ASSERT_OK(tb_tensor_create(cpu, TB_DTYPE_F32, 4, shape, &in));
  float *x = tb_tensor_host_data(in);
  for (int i = 0; i < 3 * 32 * 32; i++) x[i] = (float)((i * 13) % 97) / 48.0f - 1.0f;
  tb_model_io io = {.size = sizeof io};
  TB_ASSERT_OK(tb_model_input(model, 0, &io));
  tb_prepare_options opts = {.size = sizeof opts, .level = TB_LEVEL_O0, .precision = TB_PRECISION_FP32};
  tb_prepared *p = NULL;
  TB_ASSERT_OK(tb_model_prepare(model, b, &opts, &p, NULL));
  TB_ASSERT_OK(tb_prepared_run(p, 1, &io.name, &in, 1, NULL, &o));
  TB_ASSERT_OK(tb_tensor_copy_to_host(o, out, 10 * sizeof(float)));
  tb_tensor_destroy(o);
  tb_tensor_destroy(in);
  tb_prepared_destroy(p);
}

/* Write a file with one tensor of dtype d, shape, filled by converting `values` (f32). */
static void write_one(const char *path, const char *name, tb_dtype d, size_t ndim, const int64_t *shape,
                      const float *values) {
  tb_tensor *t = NULL;
  TB_ASSERT_OK(tb_tensor_create(cpu, d, ndim, shape, &t));
  TB_ASSERT_OK(tb_convert(TB_DTYPE_F32, values, d, tb_tensor_host_data(t), (size_t)tb_tensor_numel(t), true));
  TB_ASSERT_OK(tb_safetensors_write(path, 1, &name, (const tb_tensor *const *)&t, 0, NULL, NULL));
  tb_tensor_destroy(t);
}

/* The same bytes on the CPU; within the fp32 device tolerance (1e-5 + 1e-4 * |want|) on OpenCL, whose kernels
 * sum in another order. */
static void expect_close(const float *got, const float *want, bool exact) {
  if (exact) {
    assert_memory_equal(got, want, 10 * sizeof *got);
    return;
  }
  for (int i = 0; i < 10; i++)
    if (!(fabsf(got[i] - want[i]) <= 1e-5f + 1e-4f * fabsf(want[i]))) fail_msg("output %d: %g, expected %g", i, (double)got[i], (double)want[i]);
}

static void test_export_then_override_on_opencl(void **state) {
  (void)state;
  tb_model *a = NULL, *b = NULL;
  TB_ASSERT_OK(tb_model_load(MODELS "cnn_small.onnx", &a));
  TB_ASSERT_OK(tb_model_export_weights(a, path_in("w.safetensors")));
  tb_safetensors *st = NULL;
  TB_ASSERT_OK(tb_safetensors_open(path_in("w.safetensors"), &st));
  assert_int_equal(tb_safetensors_count(st), 20);
  assert_string_equal(tb_safetensors_metadata(st, "model_sha256"), tb_model_sha256(a));
  assert_string_equal(tb_safetensors_metadata(st, "format"), "tensorbridge-weights");
  tb_safetensors_info info = {.size = sizeof info};
  TB_ASSERT_OK(tb_safetensors_find(st, "conv1.weight", &info));
  assert_int_equal(info.dtype, TB_DTYPE_F32);
  assert_int_equal(info.ndim, 4);
  assert_int_equal(info.shape[0], 32);
  assert_int_equal(info.shape[1], 16);
  tb_safetensors_close(st);

  float ref[10], got[10];
  outputs(a, cpu, ref);
  tb_backend *ocl = NULL;
  tb_backend *target = cpu;
  if (tb_backend_create("opencl:0", &ocl) == TB_OK) target = ocl;
  else print_message("opencl:0 unavailable here (%s): overriding on the CPU only\n", tb_last_error());
  TB_ASSERT_OK(tb_model_load(MODELS "cnn_small.onnx", &b));
  size_t replaced = 0;
  TB_ASSERT_OK(tb_model_override_weights(b, path_in("w.safetensors"), false, &replaced));
  assert_int_equal(replaced, 20);
  outputs(b, target, got);
  expect_close(got, ref, target == cpu);

  /* changed weights change the outputs, the same on both backends */
  float bias[10] = {5, 0, 0, 0, 0, 0, 0, 0, 0, -5};
  int64_t n10[1] = {10};
  write_one(path_in("fc_bias.safetensors"), "fc.bias", TB_DTYPE_F32, 1, n10, bias);
  TB_ASSERT_OK(tb_model_override_weights(b, path_in("fc_bias.safetensors"), false, &replaced));
  assert_int_equal(replaced, 1);
  float on_cpu[10], on_target[10];
  outputs(b, cpu, on_cpu);
  outputs(b, target, on_target);
  expect_close(on_target, on_cpu, target == cpu);
  assert_true(on_cpu[0] > ref[0] * 10 && on_cpu[9] < ref[9]);
  tb_backend_destroy(ocl);
  tb_model_destroy(b);
  tb_model_destroy(a);
}

static void test_override_dtypes_and_mismatches(void **state) {
  (void)state;
  tb_model *m = NULL;
  TB_ASSERT_OK(tb_model_load(MODELS "cnn_small.onnx", &m));
  float ref[10], got[10];
  outputs(m, cpu, ref);
  float v[64];
  for (int i = 0; i < 64; i++) v[i] = 0.5f * (float)(i % 5) - 1.0f; /* exact in f16 */
  int64_t n10[1] = {10}, n11[1] = {11}, n2x5[2] = {2, 5};
  size_t replaced = 99;

  /* f16 -> f32 widens exactly; the values arrive as they were */
  write_one(path_in("f16.safetensors"), "fc.bias", TB_DTYPE_F16, 1, n10, v);
  TB_ASSERT_OK(tb_model_override_weights(m, path_in("f16.safetensors"), false, &replaced));
  assert_int_equal(replaced, 1);
  TB_ASSERT_OK(tb_model_export_weights(m, path_in("after.safetensors")));
  tb_safetensors *st = NULL;
  TB_ASSERT_OK(tb_safetensors_open(path_in("after.safetensors"), &st));
  const void *data;
  size_t bytes;
  TB_ASSERT_OK(tb_safetensors_data(st, "fc.bias", &data, &bytes));
  assert_int_equal(bytes, 40);
  assert_memory_equal(data, v, 40);
  tb_safetensors_close(st);
  outputs(m, cpu, got);
  assert_memory_not_equal(got, ref, sizeof got);

  /* f64 -> f32 narrows: refused, then allowed when asked */
  write_one(path_in("f64.safetensors"), "fc.bias", TB_DTYPE_F64, 1, n10, v);
  assert_int_equal(tb_model_override_weights(m, path_in("f64.safetensors"), false, &replaced), TB_ERR_INVALID_ARGUMENT);
  assert_int_equal(replaced, 0);
  TB_ASSERT_CONTAINS(tb_last_error(), "tensor 'fc.bias' is f64 but the model's initializer 'fc.bias' is f32, and f64 -> f32 "
                                      "is not a lossless widening (allow narrowing");
  TB_ASSERT_OK(tb_model_override_weights(m, path_in("f64.safetensors"), true, &replaced));
  assert_int_equal(replaced, 1);

  /* integers do not become floats */
  write_one(path_in("i32.safetensors"), "fc.bias", TB_DTYPE_I32, 1, n10, v);
  assert_int_equal(tb_model_override_weights(m, path_in("i32.safetensors"), true, NULL), TB_ERR_INVALID_ARGUMENT);
  TB_ASSERT_CONTAINS(tb_last_error(), "is i32 but the model's initializer 'fc.bias' is f32");
  TB_ASSERT_CONTAINS(tb_last_error(), "float and integer weights do not mix");

  /* shape and name mismatches */
  write_one(path_in("shape.safetensors"), "fc.bias", TB_DTYPE_F32, 1, n11, v);
  assert_int_equal(tb_model_override_weights(m, path_in("shape.safetensors"), false, NULL), TB_ERR_INVALID_ARGUMENT);
  TB_ASSERT_CONTAINS(tb_last_error(), "tensor 'fc.bias' has shape [11] but the model's initializer 'fc.bias' has shape [10]");
  write_one(path_in("rank.safetensors"), "fc.bias", TB_DTYPE_F32, 2, n2x5, v);
  assert_int_equal(tb_model_override_weights(m, path_in("rank.safetensors"), false, NULL), TB_ERR_INVALID_ARGUMENT);
  TB_ASSERT_CONTAINS(tb_last_error(), "has shape [2, 5] but the model's initializer 'fc.bias' has shape [10]");
  write_one(path_in("name.safetensors"), "fc.biass", TB_DTYPE_F32, 1, n10, v);
  assert_int_equal(tb_model_override_weights(m, path_in("name.safetensors"), false, NULL), TB_ERR_INVALID_ARGUMENT);
  TB_ASSERT_CONTAINS(tb_last_error(), "name.safetensors: tensor 'fc.biass' names no initializer of the model (no value has "
                                      "that name; the model's initializers include");
  TB_ASSERT_CONTAINS(tb_last_error(), "'conv0.weight'");
  assert_int_equal(tb_model_override_weights(m, path_in("missing.safetensors"), false, NULL), TB_ERR_NOT_FOUND);

  /* a file with one good and one bad tensor changes nothing */
  float before[10];
  outputs(m, cpu, before);
  tb_tensor *good = NULL, *bad = NULL;
  TB_ASSERT_OK(tb_tensor_create(cpu, TB_DTYPE_F32, 1, n10, &good));
  TB_ASSERT_OK(tb_tensor_create(cpu, TB_DTYPE_F32, 1, n11, &bad));
  float zero = 0;
  TB_ASSERT_OK(tb_tensor_fill(good, &zero));
  TB_ASSERT_OK(tb_tensor_fill(bad, &zero));
  const char *names[2] = {"fc.bias", "conv0.bias"};
  const tb_tensor *ts[2] = {good, bad};
  TB_ASSERT_OK(tb_safetensors_write(path_in("mixed.safetensors"), 2, names, ts, 0, NULL, NULL));
  assert_int_equal(tb_model_override_weights(m, path_in("mixed.safetensors"), false, NULL), TB_ERR_INVALID_ARGUMENT);
  TB_ASSERT_CONTAINS(tb_last_error(), "tensor 'conv0.bias' has shape [11] but the model's initializer 'conv0.bias' has shape [16]");
  outputs(m, cpu, got);
  assert_memory_equal(got, before, sizeof got);
  tb_tensor_destroy(good);
  tb_tensor_destroy(bad);
  tb_model_destroy(m);
}

static int setup(void **state) {
  (void)state;
  if (!mkdtemp(dir)) return -1;
  return tb_backend_create("cpu", &cpu) == TB_OK ? 0 : -1;
}

static int teardown(void **state) {
  (void)state;
  tb_backend_destroy(cpu);
  char cmd[600];
  snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
  return system(cmd) == 0 ? 0 : -1;
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_export_then_override_on_opencl),
      cmocka_unit_test(test_override_dtypes_and_mismatches),
  };
  return cmocka_run_group_tests(tests, setup, teardown);
}
