/* `tb validate`: the table of every configuration and output with "passed N/M" and exit 0 on the bundled
 * models (cpu, opencl:0, vulkan:0 at O0-O3); a forced failure (--rtol 0 --atol 0 at O1, where Conv+BN folding
 * changes the last bits) exits 1 and --localize names the first fused Conv; --json; --replay of a record made
 * with the library on the CPU, replayed on opencl:0, and one made by `tb run --record`, replayed on vulkan:0 and
 * opencl:0; usage errors. */
#include "test_cli_util.h"

#define MODELS TB_TEST_FIXTURES "/../../models/"

static void table_and_summary(void **state) {
  (void)state;
  setenv("TB_BF16_TRIAL", "off", 1); /* O3: bf16 wherever a kernel exists, not where this machine's trial says */
  tcli_run r = tcli("validate " MODELS "cnn_small.onnx --backends cpu,opencl:0,vulkan:0");
  TCLI_ASSERT_EXIT(r, 0);
  TB_ASSERT_CONTAINS(r.out, "backend   level  precision  output  max abs");
  TB_ASSERT_CONTAINS(r.out, "max ulp");
  TB_ASSERT_CONTAINS(r.out, "\nopencl:0  O2     fp32       probs");
  TB_ASSERT_CONTAINS(r.out, "\nvulkan:0  O0     fp32       probs");
  TB_ASSERT_CONTAINS(r.out, tbt_cpu_has_bf16() ? "\ncpu       O3     bf16       probs" : "\ncpu       O3     fp32       probs");
  TB_ASSERT_CONTAINS(r.out, "passed 12/12\n");
  assert_null(strstr(r.out, "FAIL"));
  tcli_free(&r);
  r = tcli("validate " MODELS "encoder_small.onnx --levels O0,O3 --input x=" MODELS "encoder_small/inputs/x.npy");
  TCLI_ASSERT_EXIT(r, 0);
  TB_ASSERT_CONTAINS(r.out, "0/2048");
  TB_ASSERT_CONTAINS(r.out, "passed 2/2\n");
  tcli_free(&r);
  unsetenv("TB_BF16_TRIAL");
}

static void failure_and_localize(void **state) {
  (void)state;
  tcli_run r = tcli("validate " MODELS "cnn_small.onnx --levels O0,O1 --rtol 0 --atol 0 --localize");
  TCLI_ASSERT_EXIT(r, 1);
  TB_ASSERT_CONTAINS(r.out, "FAIL");
  TB_ASSERT_CONTAINS(r.out, "first diverging node: #0 FusedConv '/block0/conv/Conv' output '/block0/relu/Relu_output_0'");
  TB_ASSERT_CONTAINS(r.out, "passed 1/2\n");
  tcli_free(&r);
}

static void json_output(void **state) {
  (void)state;
  tcli_run r = tcli("validate " MODELS "cnn_small.onnx --levels O2 --backends opencl:0 --seed 4 --json");
  TCLI_ASSERT_EXIT(r, 0);
  cJSON *o = tcli_json(r.out);
  assert_int_equal(cJSON_GetObjectItem(o, "passed")->valueint, 1);
  assert_int_equal(cJSON_GetObjectItem(o, "total")->valueint, 1);
  assert_int_equal(cJSON_GetObjectItem(o, "seed")->valueint, 4);
  cJSON *c = cJSON_GetArrayItem(cJSON_GetObjectItem(o, "configurations"), 0);
  assert_string_equal(tcli_json_str(c, "backend"), "opencl:0");
  assert_string_equal(tcli_json_str(c, "level"), "O2");
  cJSON *tol = cJSON_GetObjectItem(c, "tolerance");
  assert_string_equal(tcli_json_str(tol, "source"), "measured");
  cJSON *out = cJSON_GetArrayItem(cJSON_GetObjectItem(c, "outputs"), 0);
  assert_string_equal(tcli_json_str(out, "name"), "probs");
  assert_int_equal(cJSON_GetObjectItem(out, "mismatches")->valueint, 0);
  cJSON_Delete(o);
  tcli_free(&r);
}

static void replay(void **state) {
  (void)state;
  char dir[] = "/tmp/tb_cli_replay_XXXXXX";
  assert_non_null(mkdtemp(dir));
  char path[128], args[512];
  snprintf(path, sizeof path, "%s/run.safetensors", dir);
  tb_model *m = NULL;
  tb_backend *cpu = NULL;
  tb_prepared *p = NULL;
  TB_ASSERT_OK(tb_model_load(MODELS "cnn_small.onnx", &m));
  TB_ASSERT_OK(tb_backend_create("cpu", &cpu));
  TB_ASSERT_OK(tb_model_prepare(m, cpu, NULL, &p, NULL));
  int64_t shape[4] = {1, 3, 32, 32};
  tb_tensor *in = NULL, *out = NULL;
  TB_ASSERT_OK(tb_tensor_create(cpu, TB_DTYPE_F32, 4, shape, &in));
  TB_ASSERT_OK(tb_tensor_fill_random(in, 0, 0));
  const char *in_names[] = {"input"}, *out_names[] = {"probs"};
  TB_ASSERT_OK(tb_prepared_run(p, 1, in_names, &in, 1, out_names, &out));
  tb_record_options ro = {.size = sizeof ro, .model_file = MODELS "cnn_small.onnx", .level = TB_LEVEL_O2,
                          .precision = TB_PRECISION_FP32, .rtol = 1e-4, .atol = 1e-5};
  const tb_tensor *ins[] = {in}, *outs[] = {out};
  TB_ASSERT_OK(tb_record_write(path, m, cpu, &ro, 1, in_names, ins, 1, out_names, outs));
  snprintf(args, sizeof args, "validate --replay %s --backend opencl:0", path);
  tcli_run r = tcli(args);
  TCLI_ASSERT_EXIT(r, 0);
  TB_ASSERT_CONTAINS(r.out, "replay ");
  TB_ASSERT_CONTAINS(r.out, "\nopencl:0  O2     fp32       probs");
  TB_ASSERT_CONTAINS(r.out, "record");
  TB_ASSERT_CONTAINS(r.out, "passed 1/1\n");
  tcli_free(&r);
  snprintf(args, sizeof args, "validate --replay %s --model " MODELS "encoder_small.onnx", path);
  r = tcli(args);
  TCLI_ASSERT_EXIT(r, 2);
  TB_ASSERT_CONTAINS(r.err, tb_model_sha256(m));
  tcli_free(&r);
  tb_tensor_destroy(in);
  tb_tensor_destroy(out);
  tb_prepared_destroy(p);
  tb_backend_destroy(cpu);
  tb_model_destroy(m);
  unlink(path);
  rmdir(dir);
}

/* End to end: `tb run --record` on the CPU, `tb validate --replay` on vulkan:0 and opencl:0. */
static void run_record_then_replay(void **state) {
  (void)state;
  char dir[] = "/tmp/tb_cli_record_XXXXXX";
  assert_non_null(mkdtemp(dir));
  char path[128], args[512];
  snprintf(path, sizeof path, "%s/enc.safetensors", dir);
  snprintf(args, sizeof args, "run " MODELS "encoder_small.onnx --backend cpu --level O1 --dim batch=2 --seed 9 --record %s",
           path);
  tcli_run r = tcli(args);
  TCLI_ASSERT_EXIT(r, 0);
  tcli_free(&r);
  snprintf(args, sizeof args, "validate --replay %s --backend vulkan:0 --json", path);
  r = tcli(args);
  TCLI_ASSERT_EXIT(r, 0);
  cJSON *o = tcli_json(r.out);
  cJSON *c = cJSON_GetArrayItem(cJSON_GetObjectItem(o, "configurations"), 0);
  assert_string_equal(tcli_json_str(c, "backend"), "vulkan:0");
  assert_string_equal(tcli_json_str(c, "level"), "O1");
  cJSON *out = cJSON_GetArrayItem(cJSON_GetObjectItem(c, "outputs"), 0);
  assert_int_equal(cJSON_GetObjectItem(out, "numel")->valueint, 2 * 16 * 64);
  assert_int_equal(cJSON_GetObjectItem(out, "mismatches")->valueint, 0);
  cJSON_Delete(o);
  tcli_free(&r);
  snprintf(args, sizeof args, "validate --replay %s --backend opencl:0", path);
  r = tcli(args);
  TCLI_ASSERT_EXIT(r, 0);
  TB_ASSERT_CONTAINS(r.out, "passed 1/1\n");
  tcli_free(&r);
  unlink(path);
  rmdir(dir);
}

static void usage_errors(void **state) {
  (void)state;
  tcli_expect_err("validate", 2, "needs a MODEL");
  tcli_expect_err("validate " MODELS "cnn_small.onnx --levels O9", 2, "unknown optimization level 'O9'");
  tcli_expect_err("validate " MODELS "cnn_small.onnx --rtol 1", 2, "--rtol and --atol together");
  tcli_expect_err("validate " MODELS "cnn_small.onnx --frobnicate", 2, "unknown option '--frobnicate' for 'tb validate'");
  tcli_expect_err("validate " MODELS "cnn_small.onnx --input nope=" MODELS "cnn_small/inputs/input.npy", 2,
                  "no input named 'nope'");
  tcli_expect_err("validate " MODELS "cnn_small.onnx --backend cpu", 2, "go with --replay");
  tcli_expect_err("validate --replay /nonexistent/run.safetensors", 2, "/nonexistent/run.safetensors");
  tcli_run r = tcli("validate --help");
  TCLI_ASSERT_EXIT(r, 0);
  TB_ASSERT_CONTAINS(r.out, "Usage: tb validate MODEL");
  TB_ASSERT_CONTAINS(r.out, "--localize");
  tcli_free(&r);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(table_and_summary), cmocka_unit_test(failure_and_localize), cmocka_unit_test(json_output),
      cmocka_unit_test(replay),            cmocka_unit_test(run_record_then_replay),
      cmocka_unit_test(usage_errors),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
