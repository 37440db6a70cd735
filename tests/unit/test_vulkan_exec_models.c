/* The bundled demo models (models/cnn_small.onnx, models/encoder_small.onnx) prepared on vulkan:0
 * (lavapipe, validation layer on) at O0, O1 and O2: every node on the device (no CPU fallback), outputs
 * within 1e-5 + 1e-4 * |reference| of ONNX Runtime's (models/<name>/outputs), twice per prepared model
 * (the second run reuses the descriptor sets and pipelines: no new pools, no new pipelines), and the
 * dispatches of a run batched into few submits; a second prepare in a fresh backend loads the pipeline
 * cache the first saved. */
#include <math.h>
#include "test_vulkan_exec_util.h"
#include <tensorbridge/model.h>

#define MODELS TB_TEST_FIXTURES "/../../models/"

static tb_backend *vk, *cpu;

static int open_backends(void **state) {
  (void)state;
  tbt_clear_env();
  setenv("TB_CACHE_DIR", "off", 1);
  vk = vkx_open();
  TB_ASSERT_OK(tb_backend_create("cpu", &cpu));
  return 0;
}

static int close_backends(void **state) {
  (void)state;
  tb_backend_destroy(cpu);
  vkx_close(vk);
  unsetenv("TB_CACHE_DIR");
  return 0;
}

static float *host_copy(const tb_tensor *t) {
  size_t bytes = tb_tensor_nbytes(t);
  float *buf = malloc(bytes ? bytes : 1);
  TB_ASSERT_OK(tb_tensor_copy_to_host(t, buf, bytes));
  return buf;
}

static void run_model(const char *model, const char *input, const char *output, tb_opt_level level) {
  char path[1024];
  snprintf(path, sizeof path, "%s%s.onnx", MODELS, model);
  tb_model *m = NULL;
  TB_ASSERT_OK(tb_model_load(path, &m));
  tb_prepare_options o = {.size = sizeof o, .level = level, .precision = TB_PRECISION_AUTO};
  tb_prepared *p = NULL;
  const tb_prepare_result *r = NULL;
  tb_status st = tb_model_prepare(m, vk, &o, &p, &r);
  if (st != TB_OK) fail_msg("%s at %s on vulkan:0: %s", model, tb_opt_level_name(level), tb_last_error());
  if (r->cpu_fallback_nodes) fail_msg("%s at %s: %zu nodes on the CPU, first: %s", model, tb_opt_level_name(level), r->cpu_fallback_nodes, r->fallback_ops[0]);
  assert_int_equal(r->device_nodes, r->nodes_after);
  tb_tensor *in = NULL, *ref = NULL;
  snprintf(path, sizeof path, "%s%s/inputs/%s.npy", MODELS, model, input);
  TB_ASSERT_OK(tb_npy_load(path, cpu, &in));
  snprintf(path, sizeof path, "%s%s/outputs/%s.npy", MODELS, model, output);
  TB_ASSERT_OK(tb_npy_load(path, cpu, &ref));
  const float *want = tb_tensor_host_data(ref);
  const char *names[] = {input};
  tb_vk_compute_stats s0, s1, s2;
  TB_ASSERT_OK(tb_vk_compute_stats_get(vk->state, &s0));
  for (int run = 0; run < 2; run++) {
    tb_tensor *out = NULL;
    st = tb_prepared_run(p, 1, names, &in, 1, NULL, &out);
    if (st != TB_OK) fail_msg("%s at %s run %d: %s", model, tb_opt_level_name(level), run, tb_last_error());
    assert_int_equal(tb_tensor_numel(out), tb_tensor_numel(ref));
    float *got = host_copy(out);
    for (int64_t i = 0; i < tb_tensor_numel(ref); i++)
      if (!(fabs((double)got[i] - want[i]) <= 1e-5 + 1e-4 * fabs((double)want[i])))
        fail_msg("%s at %s run %d: element %lld is %.9g, ONNX Runtime %.9g", model, tb_opt_level_name(level), run, (long long)i, got[i], want[i]);
    free(got);
    tb_tensor_destroy(out);
    TB_ASSERT_OK(tb_vk_compute_stats_get(vk->state, run ? &s2 : &s1));
  }
  /* steady state: the second run made no pools or pipelines, and batched its dispatches */
  assert_int_equal(s2.descriptor_pools, s1.descriptor_pools);
  assert_int_equal(s2.pipelines_created, s1.pipelines_created);
  uint64_t dispatches = s2.dispatches - s1.dispatches, submits = s2.submits - s1.submits;
  assert_true(dispatches >= r->device_nodes);
  assert_true(submits < dispatches);
  (void)s0;
  vkx_assert_quiet(vk);
  tb_tensor_destroy(in);
  tb_tensor_destroy(ref);
  tb_prepared_destroy(p);
  tb_model_destroy(m);
}

static void cnn_on_vulkan(void **state) {
  (void)state;
  for (tb_opt_level level = TB_LEVEL_O0; level <= TB_LEVEL_O2; level++) run_model("cnn_small", "input", "probs", level);
}

static void encoder_on_vulkan(void **state) {
  (void)state;
  for (tb_opt_level level = TB_LEVEL_O0; level <= TB_LEVEL_O2; level++) run_model("encoder_small", "x", "y", level);
}

/* A second process-like prepare (a fresh backend) of the same model loads the pipeline cache the first
 * one saved at close. */
static void second_prepare_hits_the_disk_cache(void **state) {
  (void)state;
  char dir[] = "/tmp/tb-vkmodels-XXXXXX";
  assert_non_null(mkdtemp(dir));
  setenv("TB_CACHE_DIR", dir, 1);
  tb_model *m = NULL;
  TB_ASSERT_OK(tb_model_load(MODELS "encoder_small.onnx", &m));
  for (int round = 0; round < 2; round++) {
    tb_backend *b = vkx_open();
    tb_prepare_options o = {.size = sizeof o, .level = TB_LEVEL_O2, .precision = TB_PRECISION_AUTO};
    tb_prepared *p = NULL;
    const tb_prepare_result *r = NULL;
    TB_ASSERT_OK(tb_model_prepare(m, b, &o, &p, &r));
    tb_vk_compute_stats s;
    TB_ASSERT_OK(tb_vk_compute_stats_get(b->state, &s));
    assert_int_equal(s.cache_hits, round == 1);
    assert_int_equal(s.cache_misses, round == 0);
    assert_int_equal(s.cache_rejected, 0);
    assert_true(s.pipelines_created >= 5);
    tb_prepared_destroy(p);
    vkx_close(b);
  }
  tb_model_destroy(m);
  char cmd[128];
  snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
  assert_int_equal(system(cmd), 0);
  setenv("TB_CACHE_DIR", "off", 1);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(cnn_on_vulkan),
      cmocka_unit_test(encoder_on_vulkan),
      cmocka_unit_test(second_prepare_hits_the_disk_cache),
  };
  return cmocka_run_group_tests(tests, open_backends, close_backends);
}
