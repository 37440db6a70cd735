/* The bundled demo models on PoCL's opencl:0 at O0, O1 and O2: every node on the device (no CPU fallback),
 * the outputs match ONNX Runtime's (models/<name>/outputs) within 1e-5 + 1e-4 |ref|, run twice; O2 both with
 * CLBlast and with the built-in GEMM (TB_CLBLAST=off); and a second prepare on a fresh backend loads the
 * kernels' program from the disk cache instead of compiling it. */
#include <tensorbridge/model.h>
#include "backend/opencl/cl_clblast.h"
#include "backend/opencl/cl_program.h"
#include "test_opencl_exec_util.h"

#define MODELS TB_TEST_FIXTURES "/../../models/"

static tb_backend *cpu;
static char cache_dir[64];

static int setup(void **state) {
  (void)state;
  tbt_clear_env();
  unsetenv("TBT_FAKE_OPENCL");
  snprintf(cache_dir, sizeof cache_dir, "/tmp/tb_clmodels_XXXXXX");
  assert_non_null(mkdtemp(cache_dir));
  setenv("TB_CACHE_DIR", cache_dir, 1);
  TB_ASSERT_OK(tb_backend_create("cpu", &cpu));
  return 0;
}

static int teardown(void **state) {
  (void)state;
  tb_backend_destroy(cpu);
  char cmd[128];
  snprintf(cmd, sizeof cmd, "rm -rf %s", cache_dir);
  assert_int_equal(system(cmd), 0);
  return 0;
}

static tb_tensor *load_npy(const char *model, const char *kind, const char *name) {
  char path[1024];
  snprintf(path, sizeof path, "%s%s/%s/%s.npy", MODELS, model, kind, name);
  tb_tensor *t = NULL;
  TB_ASSERT_OK(tb_npy_load(path, cpu, &t));
  return t;
}

/* Prepare `model` on a fresh opencl:0 at `level`, check every node is on the device, run twice, compare. */
static void run_model(const char *model, const char *input, tb_opt_level level) {
  tb_backend *dev = NULL;
  TB_ASSERT_OK(tb_backend_create("opencl:0", &dev));
  char path[1024];
  snprintf(path, sizeof path, "%s%s.onnx", MODELS, model);
  tb_model *m = NULL;
  TB_ASSERT_OK(tb_model_load(path, &m));
  tb_prepare_options o = {.size = sizeof o, .level = level, .precision = TB_PRECISION_AUTO};
  tb_prepared *p = NULL;
  const tb_prepare_result *r = NULL;
  if (tb_model_prepare(m, dev, &o, &p, &r) != TB_OK) fail_msg("%s at O%d on opencl:0: %s", model, (int)level, tb_last_error());
  assert_true(r->success);
  for (size_t i = 0; i < r->cpu_fallback_nodes; i++) print_message("fallback: %s\n", r->fallback_ops[i]);
  assert_int_equal(r->cpu_fallback_nodes, 0);
  assert_int_equal(r->device_nodes, r->nodes_after);
  tb_tensor *x = load_npy(model, "inputs", input);
  tb_tensor *ref = load_npy(model, "outputs", strcmp(model, "cnn_small") == 0 ? "probs" : "y");
  const char *names[] = {input};
  for (int run = 0; run < 2; run++) {
    tb_tensor *y = NULL;
    if (tb_prepared_run(p, 1, names, &x, 1, NULL, &y) != TB_OK) fail_msg("%s run %d: %s", model, run, tb_last_error());
    assert_ptr_equal(tb_tensor_backend(y), dev);
    toh_assert_shape(y, tb_tensor_ndim(ref), tb_tensor_shape(ref));
    float *got = clx_read(y);
    const float *want = tb_tensor_host_data(ref);
    for (int64_t i = 0; i < tb_tensor_numel(ref); i++)
      if (!(fabs((double)got[i] - want[i]) <= 1e-5 + 1e-4 * fabs((double)want[i])))
        fail_msg("%s at O%d run %d element %lld: %.9g, ONNX Runtime %.9g", model, (int)level, run, (long long)i, got[i], want[i]);
    free(got);
    tb_tensor_destroy(y);
  }
  tb_tensor_destroy(x);
  tb_tensor_destroy(ref);
  tb_prepared_destroy(p);
  tb_model_destroy(m);
  tb_backend_destroy(dev);
}

static void cnn_on_device(void **state) {
  (void)state;
  for (int level = TB_LEVEL_O0; level <= TB_LEVEL_O2; level++) run_model("cnn_small", "input", (tb_opt_level)level);
}

static void encoder_on_device(void **state) {
  (void)state;
  for (int level = TB_LEVEL_O0; level <= TB_LEVEL_O2; level++) run_model("encoder_small", "x", (tb_opt_level)level);
}

static void both_gemm_paths(void **state) {
  (void)state;
  unsigned long before = tb_clblast_calls();
  setenv("TB_CLBLAST", "off", 1);
  run_model("encoder_small", "x", TB_LEVEL_O2);
  run_model("cnn_small", "input", TB_LEVEL_O2);
  assert_int_equal(tb_clblast_calls(), before); /* the built-in tiled GEMM ran */
  unsetenv("TB_CLBLAST");
  char why[256];
  if (!tb_clblast_available(why, sizeof why)) fail_msg("CLBlast (libclblast1) is expected on this machine: %s", why);
  run_model("encoder_small", "x", TB_LEVEL_O2);
  assert_true(tb_clblast_calls() > before); /* CLBlast ran the MatMuls */
}

static void second_prepare_uses_disk_cache(void **state) {
  (void)state;
  tb_cl_program_stats s0, s1;
  run_model("cnn_small", "input", TB_LEVEL_O1); /* compiles (or loads what an earlier test stored) */
  tb_cl_program_stats_get(&s0);
  run_model("cnn_small", "input", TB_LEVEL_O1);
  tb_cl_program_stats_get(&s1);
  assert_int_equal(s1.cache_hits - s0.cache_hits, 1);
  assert_int_equal(s1.source_builds - s0.source_builds, 0);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(cnn_on_device),
      cmocka_unit_test(encoder_on_device),
      cmocka_unit_test(both_gemm_paths),
      cmocka_unit_test(second_prepare_uses_disk_cache),
  };
  return cmocka_run_group_tests(tests, setup, teardown);
}
