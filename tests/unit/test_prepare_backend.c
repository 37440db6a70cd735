/* A model prepared for a non-CPU backend (OpenCL on PoCL): every node falls back to the CPU and is listed,
 * the copies at the graph's inputs and outputs are counted, outputs come back on the OpenCL backend, and
 * the values equal the CPU run. */
#include "test_engine_util.h"

static tb_prepared *prepare_on(tb_model *model, tb_backend *b, const tb_prepare_result **r) {
  static const char *const names[1] = {"batch"};
  static const int64_t batch[1] = {2};
  tb_prepare_options o = {.size = sizeof o, .level = TB_LEVEL_O0, .dim_count = 1, .dim_names = names, .dim_values = batch};
  tb_prepared *p = NULL;
  TB_ASSERT_OK(tb_model_prepare(model, b, &o, &p, r));
  return p;
}

static void opencl_falls_back_to_cpu(void **state) {
  (void)state;
  tb_backend *cl = NULL;
  if (tb_backend_create("opencl:0", &cl) != TB_OK) {
    skip(); /* no OpenCL platform (PoCL) on this machine */
    return;
  }
  tb_backend *cpu = NULL;
  TB_ASSERT_OK(tb_backend_create_kind(TB_BACKEND_CPU, 0, &cpu));
  tb_model *model = tbt_model_of(tbt_small_model());
  const tb_prepare_result *r = NULL;
  tb_prepared *p = prepare_on(model, cl, &r);
  assert_true(r->success);
  assert_int_equal(r->cpu_fallback_nodes, 4);
  assert_string_equal(r->fallback_ops[0], "Relu (relu): no opencl kernel");
  assert_string_equal(r->fallback_ops[1], "Add (add): no opencl kernel");
  assert_string_equal(r->fallback_ops[2], "MatMul (matmul): no opencl kernel");
  assert_string_equal(r->fallback_ops[3], "Reshape (reshape): no opencl kernel");
  assert_int_equal(r->copies_inserted, 2);
  assert_int_equal(r->warning_count, 1);
  assert_string_equal(r->warnings[0], "4 of 4 nodes run on the CPU: the opencl backend has no kernels yet");
  char *json = NULL;
  TB_ASSERT_OK(tb_prepare_result_to_json(r, &json));
  TB_ASSERT_CONTAINS(json, "\"MatMul (matmul): no opencl kernel\"");
  tb_free(json);

  float x[6] = {0.5f, -1, 2, 3, -4, 1.25f}, want[4];
  tbt_small_expected(x, 2, want);
  int64_t shape[2] = {2, 3}, oshape[1] = {4};
  tb_tensor *on_cl = tbt_f32(cl, 2, shape, x), *on_cpu = tbt_f32(cpu, 2, shape, x);
  const char *names[1] = {"x"};
  tb_tensor *out = NULL;
  TB_ASSERT_OK(tb_prepared_run(p, 1, names, &on_cl, 1, NULL, &out));
  assert_int_equal(tb_backend_kind_of(tb_tensor_backend(out)), TB_BACKEND_OPENCL);
  tbt_expect_f32(out, 1, oshape, want);
  tb_tensor_destroy(out);
  /* an input living on the CPU is fine too; the output still comes back on OpenCL */
  TB_ASSERT_OK(tb_prepared_run(p, 1, names, &on_cpu, 1, NULL, &out));
  assert_int_equal(tb_backend_kind_of(tb_tensor_backend(out)), TB_BACKEND_OPENCL);
  tbt_expect_f32(out, 1, oshape, want);
  tb_tensor_destroy(out);

  /* the same model prepared for the CPU gives the same values */
  const tb_prepare_result *rc = NULL;
  tb_prepared *pc = prepare_on(model, cpu, &rc);
  assert_int_equal(rc->cpu_fallback_nodes, 0);
  assert_int_equal(rc->copies_inserted, 0);
  TB_ASSERT_OK(tb_prepared_run(pc, 1, names, &on_cpu, 1, NULL, &out));
  assert_int_equal(tb_backend_kind_of(tb_tensor_backend(out)), TB_BACKEND_CPU);
  tbt_expect_f32(out, 1, oshape, want);
  tb_tensor_destroy(out);

  tb_tensor_destroy(on_cl);
  tb_tensor_destroy(on_cpu);
  tb_prepared_destroy(pc);
  tb_prepared_destroy(p);
  tb_model_destroy(model);
  tb_backend_destroy(cpu);
  tb_backend_destroy(cl);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(opencl_falls_back_to_cpu),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
