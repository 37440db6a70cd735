/* Replay: a record written on the CPU (tb_record_write, as `tb run --record` does) replays on opencl:0 and
 * passes; a record with wrong outputs fails with the element count; the record of one model replayed with
 * another is TB_ERR_INVALID_ARGUMENT naming both hashes; a truncated record is the reader's error; the model
 * is found next to the record when the recorded path is relative and not found from here. */
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "test_util.h"

#define MODELS TB_TEST_FIXTURES "/../../models/"

static char dir[64];

static int setup(void **state) {
  (void)state;
  snprintf(dir, sizeof dir, "/tmp/tb_replay_XXXXXX");
  return mkdtemp(dir) ? 0 : -1;
}

static int teardown(void **state) {
  (void)state;
  char cmd[128];
  snprintf(cmd, sizeof cmd, "rm -rf %s", dir);
  return system(cmd) == 0 ? 0 : -1;
}

/* Run the CNN on the CPU at O2 and record it; `perturb` adds 0.1 to the recorded output. */
static void record_cnn(const char *path, bool perturb) {
  tb_model *m = NULL;
  tb_backend *cpu = NULL;
  tb_prepared *p = NULL;
  TB_ASSERT_OK(tb_model_load(MODELS "cnn_small.onnx", &m));
  TB_ASSERT_OK(tb_backend_create("cpu", &cpu));
  tb_prepare_options po = {.size = sizeof po, .level = TB_LEVEL_O2, .precision = TB_PRECISION_FP32};
  TB_ASSERT_OK(tb_model_prepare(m, cpu, &po, &p, NULL));
  int64_t shape[4] = {1, 3, 32, 32};
  tb_tensor *in = NULL, *out = NULL;
  TB_ASSERT_OK(tb_tensor_create(cpu, TB_DTYPE_F32, 4, shape, &in));
  TB_ASSERT_OK(tb_tensor_fill_random(in, 5, 0));
  const char *in_names[] = {"input"}, *out_names[] = {"probs"};
  TB_ASSERT_OK(tb_prepared_run(p, 1, in_names, &in, 1, out_names, &out));
  if (perturb) {
    float *v = tb_tensor_host_data(out);
    for (int i = 0; i < 10; i++) v[i] += 0.1f;
  }
  tb_record_options ro = {.size = sizeof ro, .model_file = MODELS "cnn_small.onnx", .level = TB_LEVEL_O2,
                          .precision = TB_PRECISION_FP32, .rtol = 1e-4, .atol = 1e-5};
  const tb_tensor *ins[] = {in}, *outs[] = {out};
  TB_ASSERT_OK(tb_record_write(path, m, cpu, &ro, 1, in_names, ins, 1, out_names, outs));
  tb_tensor_destroy(in);
  tb_tensor_destroy(out);
  tb_prepared_destroy(p);
  tb_backend_destroy(cpu);
  tb_model_destroy(m);
}

static void cpu_record_replays_on_opencl(void **state) {
  (void)state;
  char path[128];
  snprintf(path, sizeof path, "%s/cnn.safetensors", dir);
  record_cnn(path, false);
  tb_validation_report *r = NULL;
  TB_ASSERT_OK(tb_validate_replay(path, NULL, "opencl:0", &r));
  assert_int_equal(tb_validation_report_total(r), 1);
  assert_int_equal(tb_validation_report_passed(r), 1);
  tb_validation_config c = {.size = sizeof c};
  TB_ASSERT_OK(tb_validation_report_config(r, 0, &c));
  assert_string_equal(c.backend, "opencl:0");
  assert_int_equal(c.level, TB_LEVEL_O2);
  assert_int_equal(c.precision, TB_PRECISION_FP32);
  assert_string_equal(c.tolerance.source, "record");
  assert_float_equal(c.tolerance.rtol, 1e-4, 0);
  TB_ASSERT_CONTAINS(c.tolerance.note, "cpu");
  tb_output_metrics om = {.size = sizeof om};
  TB_ASSERT_OK(tb_validation_report_output(r, 0, 0, &om));
  assert_string_equal(om.name, "probs");
  assert_int_equal(om.numel, 10);
  assert_int_equal(om.mismatches, 0);
  char *json = NULL;
  TB_ASSERT_OK(tb_validation_report_to_json(r, &json));
  TB_ASSERT_CONTAINS(json, path);
  tb_free(json);
  tb_validation_report_destroy(r);
  /* the default backend: the record's (cpu) */
  TB_ASSERT_OK(tb_validate_replay(path, NULL, NULL, &r));
  TB_ASSERT_OK(tb_validation_report_config(r, 0, &c));
  assert_string_equal(c.backend, "cpu");
  assert_true(c.passed);
  tb_validation_report_destroy(r);
}

static void wrong_outputs_fail(void **state) {
  (void)state;
  char path[128];
  snprintf(path, sizeof path, "%s/bad.safetensors", dir);
  record_cnn(path, true);
  tb_validation_report *r = NULL;
  TB_ASSERT_OK(tb_validate_replay(path, NULL, "vulkan:0", &r));
  assert_int_equal(tb_validation_report_passed(r), 0);
  tb_output_metrics om = {.size = sizeof om};
  TB_ASSERT_OK(tb_validation_report_output(r, 0, 0, &om));
  assert_int_equal(om.mismatches, 10);
  assert_float_equal(om.max_abs_error, 0.1, 1e-6);
  tb_validation_report_destroy(r);
}

static void other_model_is_refused(void **state) {
  (void)state;
  char path[128];
  snprintf(path, sizeof path, "%s/cnn2.safetensors", dir);
  record_cnn(path, false);
  tb_validation_report *r = NULL;
  assert_int_equal(tb_validate_replay(path, MODELS "encoder_small.onnx", "cpu", &r), TB_ERR_INVALID_ARGUMENT);
  assert_null(r);
  tb_model *enc = NULL;
  TB_ASSERT_OK(tb_model_load(MODELS "encoder_small.onnx", &enc));
  TB_ASSERT_CONTAINS(tb_last_error(), tb_model_sha256(enc)); /* both hashes are named */
  tb_model_destroy(enc);
}

static void corrupted_record_is_the_readers_error(void **state) {
  (void)state;
  char path[128], bad[128];
  snprintf(path, sizeof path, "%s/cnn3.safetensors", dir);
  snprintf(bad, sizeof bad, "%s/truncated.safetensors", dir);
  record_cnn(path, false);
  FILE *f = fopen(path, "rb"), *g = fopen(bad, "wb");
  assert_non_null(f);
  assert_non_null(g);
  char buf[100];
  size_t n = fread(buf, 1, sizeof buf, f); /* the length prefix and part of the header only */
  fwrite(buf, 1, n, g);
  fclose(f);
  fclose(g);
  tb_validation_report *r = NULL;
  tb_status st = tb_validate_replay(bad, NULL, "cpu", &r);
  assert_int_equal(st, TB_ERR_MODEL);
  TB_ASSERT_CONTAINS(tb_last_error(), "truncated.safetensors");
  assert_null(r);
  assert_int_not_equal(tb_validate_replay(NULL, NULL, NULL, &r), TB_OK);
  char missing[128];
  snprintf(missing, sizeof missing, "%s/none.safetensors", dir);
  assert_int_not_equal(tb_validate_replay(missing, NULL, NULL, &r), TB_OK);
  assert_null(r);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(cpu_record_replays_on_opencl),
      cmocka_unit_test(wrong_outputs_fail),
      cmocka_unit_test(other_model_is_refused),
      cmocka_unit_test(corrupted_record_is_the_readers_error),
  };
  return cmocka_run_group_tests(tests, setup, teardown);
}
