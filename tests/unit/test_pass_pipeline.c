/* All O1 passes together through the public API: tests/fixtures/passes/block_opset{13,17}.onnx (a CNN
 * stem and a transformer block as PyTorch exports them; made by tests/tools/make_pass_models.py) prepared
 * at O0 and at O1 on the CPU, each pass's report line checked, and both run on the same random input:
 * outputs equal within 1e-5 relative + 1e-5 absolute (Conv+BN folding, LayerNorm, GELU and attention
 * reassociate float arithmetic; see docs/passes.md). */
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include "test_util.h"

static tb_tensor *run(tb_model *model, tb_backend *cpu, tb_opt_level level, tb_tensor *x, const tb_prepare_result **res,
                      tb_prepared **prepared) {
  tb_prepare_options o;
  memset(&o, 0, sizeof o);
  o.size = sizeof o;
  o.level = level;
  TB_ASSERT_OK(tb_model_prepare(model, cpu, &o, prepared, res));
  const char *names[1] = {"X"};
  tb_tensor *y = NULL;
  TB_ASSERT_OK(tb_prepared_run(*prepared, 1, names, &x, 1, NULL, &y));
  return y;
}

static const char *pass_line(const tb_prepare_result *r, const char *name) {
  for (size_t i = 0; i < r->pass_count; i++)
    if (strncmp(r->passes[i], name, strlen(name)) == 0) return r->passes[i];
  fail_msg("no line for pass %s", name);
  return NULL;
}

static void check_model(const char *file, const char *layernorm_line) {
  char path[512];
  snprintf(path, sizeof path, "%s/passes/%s", TB_TEST_FIXTURES, file);
  tb_model *model = NULL;
  tb_backend *cpu = NULL;
  TB_ASSERT_OK(tb_model_load(path, &model));
  TB_ASSERT_OK(tb_backend_create_kind(TB_BACKEND_CPU, 0, &cpu));
  const int64_t shape[4] = {1, 3, 8, 8};
  tb_tensor *x = NULL;
  TB_ASSERT_OK(tb_tensor_create(cpu, TB_DTYPE_F32, 4, shape, &x));
  float *p = tb_tensor_host_data(x);
  uint32_t s = 12345;
  for (int i = 0; i < 192; i++) {
    s = s * 1664525u + 1013904223u;
    p[i] = (float)(s >> 8) / 8388608.0f - 1.0f;
  }
  const tb_prepare_result *r0 = NULL, *r1 = NULL;
  tb_prepared *p0 = NULL, *p1 = NULL;
  tb_tensor *y0 = run(model, cpu, TB_LEVEL_O0, x, &r0, &p0);
  tb_tensor *y1 = run(model, cpu, TB_LEVEL_O1, x, &r1, &p1);

  printf("  %s: %zu nodes at O0, %zu at O1, %zu fused\n", file, r0->nodes_after, r1->nodes_after, r1->fused_nodes);
  for (size_t i = 0; i < r1->pass_count; i++) printf("    %s\n", r1->passes[i]);
  assert_int_equal(r0->pass_count, 0);
  assert_int_equal(r0->nodes_after, 69);
  assert_int_equal(r1->nodes_before, 69);
  assert_int_equal(r1->nodes_after, 23);
  assert_int_equal(r1->fused_nodes, 35);
  TB_ASSERT_CONTAINS(pass_line(r1, "identity_removal"), "removed 2 Identity and 1 Dropout");
  TB_ASSERT_CONTAINS(pass_line(r1, "constant_folding"), "1 Shape");
  TB_ASSERT_CONTAINS(pass_line(r1, "dead_node_removal"), "removed 1 node");
  TB_ASSERT_CONTAINS(pass_line(r1, "conv_bn_folding"), "folded 2 BatchNormalization");
  TB_ASSERT_CONTAINS(pass_line(r1, "pattern_layernorm"), layernorm_line);
  TB_ASSERT_CONTAINS(pass_line(r1, "pattern_gelu"), "recognised 1 GELU (erf)");
  TB_ASSERT_CONTAINS(pass_line(r1, "pattern_attention"), "recognised 1 scaled dot-product attention");
  TB_ASSERT_CONTAINS(pass_line(r1, "activation_fusion"), "fused 7 activation/residual epilogues");
  TB_ASSERT_CONTAINS(pass_line(r1, "activation_fusion"), "4 with a bias Add, 1 GELU");

  assert_int_equal(tb_tensor_numel(y0), 1024);
  assert_int_equal(tb_tensor_numel(y1), 1024);
  const float *a = tb_tensor_host_data(y0), *b = tb_tensor_host_data(y1);
  double worst = 0;
  for (int i = 0; i < 1024; i++) {
    double diff = fabs((double)a[i] - (double)b[i]);
    if (diff > worst) worst = diff;
    if (diff > 1e-5 * fabs((double)a[i]) + 1e-5) fail_msg("element %d: %.9g at O0, %.9g at O1", i, a[i], b[i]);
  }
  printf("  largest absolute difference %.3g\n", worst);
  tb_tensor_destroy(y0);
  tb_tensor_destroy(y1);
  tb_tensor_destroy(x);
  tb_prepared_destroy(p0);
  tb_prepared_destroy(p1);
  tb_model_destroy(model);
  tb_backend_destroy(cpu);
}

static void test_opset13(void **state) {
  (void)state;
  check_model("block_opset13.onnx", "recognised 2 LayerNormalization patterns");
}

static void test_opset17(void **state) {
  (void)state;
  check_model("block_opset17.onnx", "recognised 2 LayerNormalization patterns");
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test_setup(test_opset13, tbt_setup_clean_env),
      cmocka_unit_test_setup(test_opset17, tbt_setup_clean_env),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
