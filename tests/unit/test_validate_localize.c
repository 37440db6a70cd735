/* Localisation: a kernel broken on purpose (tb_exec_test_break_op, src/model/engine.h: +0.25 on every float
 * output of one op type, only in executors at kernel level >= 2, so the O0 reference stays right) makes
 * validation fail at O2, and --localize names the first node of that op in the target's execution order,
 * with its numbers; without localize no node is named; a correct run is not localised. */
#include <stdlib.h>
#include <string.h>
#include "model/engine.h"
#include "model/prepared.h"
#include "test_util.h"

#define MODELS TB_TEST_FIXTURES "/../../models/"

/* The first node of op_type in the graph prepared at O2 on the CPU: its name and position. */
static void first_node_of(tb_model *m, const char *op_type, const char **name, size_t *index) {
  tb_backend *cpu = NULL;
  tb_prepared *p = NULL;
  TB_ASSERT_OK(tb_backend_create("cpu", &cpu));
  tb_prepare_options po = {.size = sizeof po, .level = TB_LEVEL_O2, .precision = TB_PRECISION_FP32};
  TB_ASSERT_OK(tb_model_prepare(m, cpu, &po, &p, NULL));
  *name = NULL;
  for (size_t i = 0; i < p->graph->n_nodes && !*name; i++)
    if (strcmp(p->graph->nodes[i].op_type, op_type) == 0) {
      *name = strdup(p->graph->nodes[i].name);
      *index = i;
    }
  assert_non_null(*name);
  tb_prepared_destroy(p);
  tb_backend_destroy(cpu);
}

static tb_validation_report *validate_o2(tb_model *m, const char *backend, bool localize) {
  const char *backends[] = {backend};
  tb_opt_level levels[] = {TB_LEVEL_O0, TB_LEVEL_O2};
  tb_validate_options o = {.size = sizeof o, .backend_count = 1, .backends = backends, .level_count = 2,
                           .levels = levels, .precision = TB_PRECISION_FP32, .seed = 3, .localize = localize};
  tb_validation_report *r = NULL;
  TB_ASSERT_OK(tb_validate(m, &o, &r));
  return r;
}

static void check_broken(const char *model, const char *op_type, const char *backend) {
  tb_model *m = NULL;
  TB_ASSERT_OK(tb_model_load(model, &m));
  const char *want_name;
  size_t want_index;
  first_node_of(m, op_type, &want_name, &want_index);
  tb_exec_test_break_op(op_type, 2);
  tb_validation_report *r = validate_o2(m, backend, true);
  tb_exec_test_break_op(NULL, 0);
  assert_int_equal(tb_validation_report_total(r), 2);
  assert_int_equal(tb_validation_report_passed(r), 1); /* O0 runs the reference kernels: still right */
  tb_validation_config c = {.size = sizeof c};
  TB_ASSERT_OK(tb_validation_report_config(r, 0, &c));
  assert_true(c.passed);
  assert_null(c.localize_note);
  TB_ASSERT_OK(tb_validation_report_config(r, 1, &c));
  assert_false(c.passed);
  assert_null(c.error);
  assert_true(c.localized);
  assert_string_equal(c.node_op, op_type);
  assert_string_equal(c.node_name, want_name);
  assert_int_equal(c.node_index, want_index);
  assert_true(c.node_max_abs_error > 0.2 && c.node_max_abs_error < 0.3);
  assert_true(c.node_mismatches > 0 && c.node_mismatches <= c.node_numel);
  TB_ASSERT_CONTAINS(c.localize_note, want_name);
  char *json = NULL;
  TB_ASSERT_OK(tb_validation_report_to_json(r, &json));
  TB_ASSERT_CONTAINS(json, "\"localized\"");
  TB_ASSERT_CONTAINS(json, want_name);
  tb_free(json);
  tb_validation_report_destroy(r);
  tb_model_destroy(m);
  free((char *)want_name);
}

/* At O2 the encoder's Softmax is inside the fused Attention node (named after it, "/attn/Softmax"). */
static void broken_attention_in_encoder_is_named(void **state) {
  (void)state;
  check_broken(MODELS "encoder_small.onnx", "Attention", "cpu");
}

static void broken_softmax_in_cnn_is_named_on_opencl(void **state) {
  (void)state;
  check_broken(MODELS "cnn_small.onnx", "Softmax", "opencl:0");
}

/* At O1 and up every MatMul of the encoder is fused with its bias Add (tb::FusedMatMul, named after it). */
static void broken_matmul_in_encoder_is_named_on_vulkan(void **state) {
  (void)state;
  check_broken(MODELS "encoder_small.onnx", "FusedMatMul", "vulkan:0");
}

static void without_localize_no_node(void **state) {
  (void)state;
  tb_model *m = NULL;
  TB_ASSERT_OK(tb_model_load(MODELS "cnn_small.onnx", &m));
  tb_exec_test_break_op("Softmax", 2);
  tb_validation_report *r = validate_o2(m, "cpu", false);
  tb_exec_test_break_op(NULL, 0);
  tb_validation_config c = {.size = sizeof c};
  TB_ASSERT_OK(tb_validation_report_config(r, 1, &c));
  assert_false(c.passed);
  assert_false(c.localized);
  assert_null(c.localize_note);
  tb_output_metrics om = {.size = sizeof om};
  TB_ASSERT_OK(tb_validation_report_output(r, 1, 0, &om));
  assert_string_equal(om.name, "probs");
  assert_int_equal(om.mismatches, 10); /* every probability is 0.25 off */
  assert_true(om.max_abs_error > 0.249 && om.max_abs_error < 0.251);
  tb_validation_report_destroy(r);
  tb_model_destroy(m);
}

static void correct_run_is_not_localized(void **state) {
  (void)state;
  tb_model *m = NULL;
  TB_ASSERT_OK(tb_model_load(MODELS "cnn_small.onnx", &m));
  tb_validation_report *r = validate_o2(m, "cpu", true);
  assert_int_equal(tb_validation_report_passed(r), 2);
  tb_validation_config c = {.size = sizeof c};
  TB_ASSERT_OK(tb_validation_report_config(r, 1, &c));
  assert_false(c.localized);
  assert_null(c.localize_note);
  tb_validation_report_destroy(r);
  tb_model_destroy(m);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(broken_attention_in_encoder_is_named),
      cmocka_unit_test(broken_softmax_in_cnn_is_named_on_opencl),
      cmocka_unit_test(broken_matmul_in_encoder_is_named_on_vulkan),
      cmocka_unit_test(without_localize_no_node),
      cmocka_unit_test(correct_run_is_not_localized),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
