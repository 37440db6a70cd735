/* Run records with the bundled models/cnn_small.onnx: written after a CPU run, read back with every fact
 * and tensor; replayed on opencl:0 (PoCL here) within the recorded tolerance; a record for another model,
 * a corrupted record and a safetensors file that is not a record are errors that say so. */
#include <stdarg.h>
#include <setjmp.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <cmocka.h>
#include <tensorbridge/tensorbridge.h>
#include "test_util.h"

#define MODELS TB_TEST_FIXTURES "/../../models/"

static char dir[] = "/tmp/tb-test-record-XXXXXX";

static char *path_in(const char *name) {
  static char buf[4][512];
  static int k;
  char *p = buf[k++ % 4];
  snprintf(p, 512, "%s/%s", dir, name);
  return p;
}

static tb_tensor *input_for(tb_backend *cpu) {
  int64_t shape[4] = {1, 3, 32, 32};
  tb_tensor *t = NULL;
  TB_ASSERT_OK(tb_tensor_create(cpu, TB_DTYPE_F32, 4, shape, &t));
  float *x = tb_tensor_host_data(t);
  for (int i = 0; i < 3 * 32 * 32; i++) x[i] = (float)((i * 37) % 101) / 50.0f - 1.0f;
  return t;
}

static tb_tensor *run_on(tb_model *model, tb_backend *b, tb_opt_level level, const char *in_name, tb_tensor *in) {
  tb_prepare_options opts = {.size = sizeof opts, .level = level, .precision = TB_PRECISION_FP32};
  tb_prepared *p = NULL;
  TB_ASSERT_OK(tb_model_prepare(model, b, &opts, &p, NULL));
  tb_tensor *out = NULL;
  TB_ASSERT_OK(tb_prepared_run(p, 1, &in_name, &in, 1, NULL, &out));
  tb_prepared_destroy(p);
  return out;
}

static void copy_out(const tb_tensor *t, float *dst, size_t n) {
  assert_int_equal(tb_tensor_nbytes(t), n * sizeof(float));
  TB_ASSERT_OK(tb_tensor_copy_to_host(t, dst, n * sizeof(float)));
}

static void test_record_round_trip_and_replay(void **state) {
  (void)state;
  tb_backend *cpu = NULL;
  TB_ASSERT_OK(tb_backend_create("cpu", &cpu));
  tb_model *model = NULL;
  TB_ASSERT_OK(tb_model_load(MODELS "cnn_small.onnx", &model));
  tb_model_io io = {.size = sizeof io};
  TB_ASSERT_OK(tb_model_input(model, 0, &io));
  const char *in_name = io.name;
  TB_ASSERT_OK(tb_model_output(model, 0, &io));
  const char *out_name = io.name;
  tb_tensor *in = input_for(cpu);
  tb_tensor *out = run_on(model, cpu, TB_LEVEL_O0, in_name, in);
  tb_record_options ro = {.size = sizeof ro, .model_file = "models/cnn_small.onnx", .level = TB_LEVEL_O0,
                          .precision = TB_PRECISION_FP32, .rtol = 1e-4, .atol = 1e-5};
  const char *rec_path = path_in("run.safetensors");
  TB_ASSERT_OK(tb_record_write(rec_path, model, cpu, &ro, 1, &in_name, (const tb_tensor *const *)&in, 1, &out_name,
                               (const tb_tensor *const *)&out));

  tb_record *rec = NULL;
  TB_ASSERT_OK(tb_record_open(rec_path, &rec));
  tb_record_info info = {.size = sizeof info};
  TB_ASSERT_OK(tb_record_info_get(rec, &info));
  assert_string_equal(info.version, "1");
  assert_string_equal(info.model_sha256, tb_model_sha256(model));
  assert_string_equal(info.model_file, "models/cnn_small.onnx");
  assert_string_equal(info.device, "cpu:0");
  assert_string_equal(info.device_name, tb_backend_device(cpu)->name);
  assert_string_equal(info.backend, "cpu");
  assert_string_equal(info.library_version, tb_version());
  assert_int_equal(info.level, TB_LEVEL_O0);
  assert_int_equal(info.precision, TB_PRECISION_FP32);
  assert_true(info.rtol == 1e-4 && info.atol == 1e-5);
  assert_string_equal(tb_record_metadata(rec, "atol"), "1e-05");
  assert_string_equal(tb_record_metadata(rec, "level"), "O0");
  assert_int_equal(tb_record_input_count(rec), 1);
  assert_int_equal(tb_record_output_count(rec), 1);
  assert_string_equal(tb_record_input_name(rec, 0), in_name);
  assert_string_equal(tb_record_output_name(rec, 0), out_name);
  assert_null(tb_record_input_name(rec, 1));
  TB_ASSERT_OK(tb_record_check_model(rec, model));
  const tb_safetensors *st = tb_record_safetensors(rec);
  assert_int_equal(tb_safetensors_count(st), 2);

  float want[10], got[10], x[3 * 32 * 32], y[3 * 32 * 32];
  copy_out(out, want, 10);
  tb_tensor *rin = NULL, *rout = NULL;
  TB_ASSERT_OK(tb_record_read_input(rec, 0, cpu, &rin));
  TB_ASSERT_OK(tb_record_read_output(rec, 0, cpu, &rout));
  copy_out(rin, x, 3 * 32 * 32);
  copy_out(in, y, 3 * 32 * 32);
  assert_memory_equal(x, y, sizeof x);
  copy_out(rout, got, 10);
  assert_memory_equal(got, want, sizeof got);
  tb_tensor_destroy(rin);
  assert_int_equal(tb_record_read_input(rec, 3, cpu, &rin), TB_ERR_INVALID_ARGUMENT);
  TB_ASSERT_CONTAINS(tb_last_error(), "input index 3 is out of range (1 recorded)");
  assert_null(rin);
  tb_tensor_destroy(rout);

  /* replay on another backend: the recorded inputs on opencl:0, at O2, within the recorded tolerance */
  tb_backend *ocl = NULL;
  if (tb_backend_create("opencl:0", &ocl) == TB_OK) {
    tb_tensor *ocl_in = NULL;
    TB_ASSERT_OK(tb_record_read_input(rec, 0, ocl, &ocl_in));
    tb_tensor *replayed = run_on(model, ocl, TB_LEVEL_O2, tb_record_input_name(rec, 0), ocl_in);
    copy_out(replayed, got, 10);
    for (int i = 0; i < 10; i++)
      if (!(got[i] - want[i] <= info.atol + info.rtol * want[i] && want[i] - got[i] <= info.atol + info.rtol * want[i]))
        fail_msg("replayed output %d: %g vs recorded %g", i, got[i], want[i]);
    tb_tensor_destroy(replayed);
    tb_tensor_destroy(ocl_in);
    tb_backend_destroy(ocl);
  } else {
    print_message("opencl:0 unavailable here (%s): replay checked on the CPU only\n", tb_last_error());
  }

  /* a record for a different model */
  tb_model *other = NULL;
  TB_ASSERT_OK(tb_model_load(MODELS "encoder_small.onnx", &other));
  assert_int_equal(tb_record_check_model(rec, other), TB_ERR_INVALID_ARGUMENT);
  TB_ASSERT_CONTAINS(tb_last_error(), "was recorded for a different model: the record's model (models/cnn_small.onnx)");
  TB_ASSERT_CONTAINS(tb_last_error(), tb_model_sha256(other));
  tb_model_destroy(other);
  tb_record_close(rec);

  /* corrupted: one byte of the data region cut off */
  char cmd[1024];
  snprintf(cmd, sizeof cmd, "cp %s %s && truncate -s -1 %s", rec_path, path_in("cut.safetensors"),
           path_in("cut.safetensors"));
  assert_int_equal(system(cmd), 0);
  assert_int_equal(tb_record_open(path_in("cut.safetensors"), &rec), TB_ERR_MODEL);
  TB_ASSERT_CONTAINS(tb_last_error(), "go beyond the data region");
  assert_null(rec);

  /* a plain safetensors file, and a record whose metadata lost a key */
  const char *names[1] = {"input/x"};
  TB_ASSERT_OK(tb_safetensors_write(path_in("plain.safetensors"), 1, names, (const tb_tensor *const *)&in, 0, NULL, NULL));
  assert_int_equal(tb_record_open(path_in("plain.safetensors"), &rec), TB_ERR_MODEL);
  TB_ASSERT_CONTAINS(tb_last_error(), "is a safetensors file but not a TensorBridge record: metadata key 'tb_record_version' is missing");
  const char *k[3] = {"tb_record_version", "model_sha256", "level"}, *v[3] = {"1", "ab", "O1"};
  TB_ASSERT_OK(tb_safetensors_write(path_in("partial.safetensors"), 1, names, (const tb_tensor *const *)&in, 3, k, v));
  assert_int_equal(tb_record_open(path_in("partial.safetensors"), &rec), TB_ERR_MODEL);
  TB_ASSERT_CONTAINS(tb_last_error(), "is not a complete TensorBridge record: metadata key 'model_file' is missing");

  tb_tensor_destroy(rin);
  tb_tensor_destroy(in);
  tb_tensor_destroy(out);
  tb_model_destroy(model);
  tb_backend_destroy(cpu);
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
      cmocka_unit_test(test_record_round_trip_and_replay),
  };
  return cmocka_run_group_tests(tests, setup, teardown);
}
