/* Validation through the library API: the metrics against hand-computed examples (ULP distance, cosine,
 * relative error, NaN/Inf counts, the atol + rtol*|ref| rule), the tolerance table and its fallback order,
 * tb_validate on the bundled models for the CPU at O0-O3 and opencl:0 / vulkan:0 (all pass), the report's
 * accessors and JSON, random inputs as `tb run` makes them, and bad arguments. */
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include "test_util.h"
#include "tools/validate_impl.h"

#define MODELS TB_TEST_FIXTURES "/../../models/"

static tb_tensor *f32(tb_backend *b, int64_t n, const float *v) {
  tb_tensor *t = NULL;
  TB_ASSERT_OK(tb_tensor_create(b, TB_DTYPE_F32, 1, &n, &t));
  TB_ASSERT_OK(tb_tensor_copy_from_host(t, v, (size_t)n * 4));
  return t;
}

static void ulp_distance_by_hand(void **state) {
  (void)state;
  assert_int_equal(tb_tbv_ulp_distance(1.0f, 1.0f), 0);
  assert_int_equal(tb_tbv_ulp_distance(1.0f, nextafterf(1.0f, 2.0f)), 1);
  assert_int_equal(tb_tbv_ulp_distance(1.0f, 1.0f + 4 * 1.1920929e-7f), 4); /* 4 steps of 2^-23 */
  assert_int_equal(tb_tbv_ulp_distance(0.0f, -0.0f), 0);
  /* the smallest subnormals on either side of zero are 2 apart */
  assert_int_equal(tb_tbv_ulp_distance(1.4e-45f, -1.4e-45f), 2);
  assert_int_equal(tb_tbv_ulp_distance(2.0f, nextafterf(2.0f, 0.0f)), 1);
}

static void metrics_by_hand(void **state) {
  (void)state;
  tb_backend *cpu = NULL;
  TB_ASSERT_OK(tb_backend_create("cpu", &cpu));
  const float ref[4] = {1, 2, 0, -4};
  const float got[4] = {1, 2.5f, 0.001f, -4};
  tb_tensor *r = f32(cpu, 4, ref), *g = f32(cpu, 4, got);
  tb_output_metrics m = {.size = sizeof m};
  TB_ASSERT_OK(tb_compare_tensors(g, r, 0.1, 0.01, &m));
  assert_true(m.shape_matches);
  assert_int_equal(m.numel, 4);
  assert_float_equal(m.max_abs_error, 0.5, 1e-12);
  assert_float_equal(m.max_rel_error, 0.25, 1e-12); /* 0.5 / 2; the element with ref 0 is left out */
  /* cosine: dot = 1 + 5 + 0 + 16 = 22; |g| = sqrt(1 + 6.25 + 1e-6 + 16), |r| = sqrt(21) */
  double want_cos = 22.0 / (sqrt(1 + 6.25 + 1e-6 + 16) * sqrt(21.0));
  assert_float_equal(m.cosine, want_cos, 1e-6);
  /* 2.5 vs 2: 0.5 > 0.01 + 0.1*2 fails; 0.001 vs 0: within 0.01 */
  assert_int_equal(m.mismatches, 1);
  assert_false(m.passed);
  /* ULPs: 2.5 vs 2 is 2^21 steps of 2^-22; 0.001f vs 0 is every float between, 0.001f's bits 0x3a83126f */
  assert_int_equal(m.max_ulp, 0x3a83126fu);
  const float got2[4] = {1, 2.5f, 0, -4};
  tb_tensor *g2 = f32(cpu, 4, got2);
  TB_ASSERT_OK(tb_compare_tensors(g2, r, 0.1, 0.01, &m));
  assert_int_equal(m.max_ulp, 1u << 21);
  tb_tensor_destroy(g2);
  TB_ASSERT_OK(tb_compare_tensors(g, r, 0.3, 0.01, &m));
  assert_int_equal(m.mismatches, 0);
  assert_true(m.passed);
  tb_tensor_destroy(r);
  tb_tensor_destroy(g);
  tb_backend_destroy(cpu);
}

/* atol is in units of the output's scale: 2e-4 off on an element near 0 passes atol 1e-5 when the output
 * reaches 400 (logits of a sum over thousands of terms), fails when it reaches 1. */
static void atol_scales_with_the_output(void **state) {
  (void)state;
  tb_backend *cpu = NULL;
  TB_ASSERT_OK(tb_backend_create("cpu", &cpu));
  const float big[3] = {400, -3, 0.001f}, big_got[3] = {400, -3, 0.0012f};
  const float small[3] = {1, -0.5f, 0.001f}, small_got[3] = {1, -0.5f, 0.0012f};
  tb_tensor *r1 = f32(cpu, 3, big), *g1 = f32(cpu, 3, big_got), *r2 = f32(cpu, 3, small), *g2 = f32(cpu, 3, small_got);
  tb_output_metrics m = {.size = sizeof m};
  TB_ASSERT_OK(tb_compare_tensors(g1, r1, 1e-4, 1e-5, &m));
  assert_int_equal(m.mismatches, 0); /* 2e-4 <= 1e-5 * 400 + 1e-4 * 0.001 */
  assert_true(m.passed);
  TB_ASSERT_OK(tb_compare_tensors(g2, r2, 1e-4, 1e-5, &m));
  assert_int_equal(m.mismatches, 1); /* 2e-4 > 1e-5 * 1 + 1e-4 * 0.001 */
  assert_false(m.passed);
  tb_tensor_destroy(r1);
  tb_tensor_destroy(g1);
  tb_tensor_destroy(r2);
  tb_tensor_destroy(g2);
  tb_backend_destroy(cpu);
}

static void nan_inf_counts(void **state) {
  (void)state;
  tb_backend *cpu = NULL;
  TB_ASSERT_OK(tb_backend_create("cpu", &cpu));
  const float ref[5] = {NAN, INFINITY, 1, -INFINITY, 2};
  const float got[5] = {NAN, INFINITY, NAN, INFINITY, 2};
  tb_tensor *r = f32(cpu, 5, ref), *g = f32(cpu, 5, got);
  tb_output_metrics m = {.size = sizeof m};
  TB_ASSERT_OK(tb_compare_tensors(g, r, 0, 0, &m));
  assert_int_equal(m.nan_got, 2);
  assert_int_equal(m.inf_got, 2);
  assert_int_equal(m.nan_ref, 1);
  assert_int_equal(m.inf_ref, 2);
  assert_int_equal(m.mismatches, 2); /* NaN for 1, +Inf for -Inf; NaN~NaN and Inf~Inf match */
  assert_float_equal(m.max_abs_error, 0, 0);
  assert_float_equal(m.cosine, 1, 1e-12); /* only the finite pair 2, 2 */
  tb_tensor_destroy(r);
  tb_tensor_destroy(g);
  tb_backend_destroy(cpu);
}

static void cosine_of_zero_and_shape_mismatch(void **state) {
  (void)state;
  tb_backend *cpu = NULL;
  TB_ASSERT_OK(tb_backend_create("cpu", &cpu));
  const float z[3] = {0, 0, 0}, one[3] = {1, 0, 0}, neg[3] = {-1, 0, 0};
  tb_tensor *a = f32(cpu, 3, z), *b = f32(cpu, 3, one), *c = f32(cpu, 3, neg), *d = f32(cpu, 2, z);
  tb_output_metrics m = {.size = sizeof m};
  TB_ASSERT_OK(tb_compare_tensors(a, a, 0, 0, &m));
  assert_float_equal(m.cosine, 1, 0);
  TB_ASSERT_OK(tb_compare_tensors(a, b, 0, 0, &m));
  assert_float_equal(m.cosine, 0, 0);
  TB_ASSERT_OK(tb_compare_tensors(c, b, 0, 0, &m));
  assert_float_equal(m.cosine, -1, 1e-12);
  TB_ASSERT_OK(tb_compare_tensors(d, a, 0, 0, &m));
  assert_false(m.shape_matches);
  assert_false(m.passed);
  assert_int_equal(m.mismatches, 3);
  assert_int_equal(tb_compare_tensors(a, b, -1, 0, &m), TB_ERR_INVALID_ARGUMENT);
  TB_ASSERT_CONTAINS(tb_last_error(), "rtol -1");
  tb_tensor_destroy(a);
  tb_tensor_destroy(b);
  tb_tensor_destroy(c);
  tb_tensor_destroy(d);
  tb_backend_destroy(cpu);
}

static void tolerance_table(void **state) {
  (void)state;
  tb_tolerance t = {.size = sizeof t};
  TB_ASSERT_OK(tb_tolerance_lookup(TB_BACKEND_CPU, TB_PRECISION_FP32, TB_LEVEL_O0, &t));
  assert_float_equal(t.rtol, 0, 0);
  assert_float_equal(t.atol, 0, 0);
  assert_string_equal(t.source, "measured");
  TB_ASSERT_OK(tb_tolerance_lookup(TB_BACKEND_CPU, TB_PRECISION_FP32, TB_LEVEL_O1, &t));
  assert_float_equal(t.rtol, 1e-5, 0);
  assert_float_equal(t.atol, 1e-6, 0);
  assert_string_equal(t.source, "measured");
  /* opencl O2: (opencl, fp32, any level) */
  TB_ASSERT_OK(tb_tolerance_lookup(TB_BACKEND_OPENCL, TB_PRECISION_FP32, TB_LEVEL_O2, &t));
  assert_int_equal(t.backend, TB_BACKEND_OPENCL);
  assert_int_equal(t.level, TB_TOLERANCE_ANY);
  assert_string_equal(t.source, "measured");
  TB_ASSERT_CONTAINS(t.note, "OpenCL (PoCL) and Vulkan (lavapipe) kernels");
  /* cuda fp32: (any, fp32, any), assumed */
  TB_ASSERT_OK(tb_tolerance_lookup(TB_BACKEND_CUDA, TB_PRECISION_FP32, TB_LEVEL_O1, &t));
  assert_int_equal(t.backend, TB_TOLERANCE_ANY);
  assert_string_equal(t.source, "assumed");
  /* cpu bf16: measured on this machine's AVX512-BF16; another backend's bf16: assumed */
  TB_ASSERT_OK(tb_tolerance_lookup(TB_BACKEND_CPU, TB_PRECISION_BF16, TB_LEVEL_O3, &t));
  assert_float_equal(t.rtol, 1e-2, 0);
  assert_string_equal(t.source, "measured");
  TB_ASSERT_OK(tb_tolerance_lookup(TB_BACKEND_CUDA, TB_PRECISION_BF16, TB_LEVEL_O3, &t));
  assert_float_equal(t.rtol, 1e-2, 0);
  assert_string_equal(t.source, "assumed");
  TB_ASSERT_OK(tb_tolerance_lookup(TB_BACKEND_VULKAN, TB_PRECISION_FP16, TB_LEVEL_O3, &t));
  assert_string_equal(t.source, "assumed");
  assert_int_equal(tb_tolerance_lookup(TB_BACKEND_CPU, TB_PRECISION_AUTO, TB_LEVEL_O0, &t), TB_ERR_INVALID_ARGUMENT);
  TB_ASSERT_CONTAINS(tb_last_error(), "auto");
  /* every entry says where it comes from */
  assert_true(tb_tolerance_count() >= 10);
  for (size_t i = 0; i < tb_tolerance_count(); i++) {
    const tb_tolerance *e = tb_tolerance_entry(i);
    assert_true(strcmp(e->source, "measured") == 0 || strcmp(e->source, "assumed") == 0);
    assert_true(strlen(e->note) > 20);
  }
  assert_null(tb_tolerance_entry(tb_tolerance_count()));
}

static void random_inputs_are_seeded(void **state) {
  (void)state;
  tb_backend *cpu = NULL;
  TB_ASSERT_OK(tb_backend_create("cpu", &cpu));
  int64_t n = 64;
  tb_tensor *a = NULL, *b = NULL, *c = NULL, *i = NULL;
  TB_ASSERT_OK(tb_tensor_create(cpu, TB_DTYPE_F32, 1, &n, &a));
  TB_ASSERT_OK(tb_tensor_create(cpu, TB_DTYPE_F32, 1, &n, &b));
  TB_ASSERT_OK(tb_tensor_create(cpu, TB_DTYPE_F32, 1, &n, &c));
  TB_ASSERT_OK(tb_tensor_create(cpu, TB_DTYPE_I64, 1, &n, &i));
  TB_ASSERT_OK(tb_tensor_fill_random(a, 7, 0));
  TB_ASSERT_OK(tb_tensor_fill_random(b, 7, 0));
  TB_ASSERT_OK(tb_tensor_fill_random(c, 7, 1));
  TB_ASSERT_OK(tb_tensor_fill_random(i, 7, 0));
  assert_memory_equal(tb_tensor_host_data(a), tb_tensor_host_data(b), 256);
  assert_memory_not_equal(tb_tensor_host_data(a), tb_tensor_host_data(c), 256);
  const float *fa = tb_tensor_host_data(a);
  const int64_t *ia = tb_tensor_host_data(i);
  for (int k = 0; k < 64; k++) {
    assert_true(fa[k] >= -1 && fa[k] < 1);
    assert_true(ia[k] >= 0 && ia[k] < 10);
  }
  tb_tensor_destroy(a);
  tb_tensor_destroy(b);
  tb_tensor_destroy(c);
  tb_tensor_destroy(i);
  tb_backend_destroy(cpu);
}

static void check_all_pass(const char *path) {
  setenv("TB_BF16_TRIAL", "off", 1); /* O3: bf16 wherever a kernel exists, not where this machine's trial says */
  tb_model *m = NULL;
  TB_ASSERT_OK(tb_model_load(path, &m));
  const char *backends[] = {"cpu", "opencl:0", "vulkan:0"};
  tb_validate_options o = {.size = sizeof o, .backend_count = 3, .backends = backends, .seed = 1};
  tb_validation_report *r = NULL;
  TB_ASSERT_OK(tb_validate(m, &o, &r));
  assert_int_equal(tb_validation_report_total(r), 12);
  for (size_t c = 0; c < 12; c++) {
    tb_validation_config cfg = {.size = sizeof cfg};
    TB_ASSERT_OK(tb_validation_report_config(r, c, &cfg));
    if (!cfg.passed) print_error("%s %s: %s\n", cfg.backend, tb_opt_level_name(cfg.level), cfg.error ? cfg.error : "differs");
    assert_true(cfg.passed);
    assert_null(cfg.error);
    assert_string_equal(cfg.backend, backends[c / 4]);
    assert_int_equal(cfg.level, (tb_opt_level)(c % 4));
    /* O3 on the CPU computes MatMul/Gemm/Conv in bf16; the devices stay in fp32 */
    bool bf16 = c / 4 == 0 && c % 4 == 3 && tbt_cpu_has_bf16();
    assert_int_equal(cfg.precision, bf16 ? TB_PRECISION_BF16 : TB_PRECISION_FP32);
    assert_string_equal(cfg.tolerance.source, "measured");
    assert_int_equal(cfg.output_count, 1);
    tb_output_metrics om = {.size = sizeof om};
    TB_ASSERT_OK(tb_validation_report_output(r, c, 0, &om));
    assert_int_equal(om.mismatches, 0);
    assert_int_equal(om.nan_got, 0);
    assert_true(om.cosine > (bf16 ? 0.9999 : 0.999999));
    if (cfg.level == TB_LEVEL_O0 && c / 4 == 0) { /* the reference itself: bit for bit */
      assert_float_equal(om.max_abs_error, 0, 0);
      assert_int_equal(om.max_ulp, 0);
    }
  }
  assert_int_equal(tb_validation_report_passed(r), 12);
  assert_string_equal(tb_validation_report_model_sha256(r), tb_model_sha256(m));
  assert_int_equal(tb_validation_report_seed(r), 1);
  char *json = NULL;
  TB_ASSERT_OK(tb_validation_report_to_json(r, &json));
  TB_ASSERT_CONTAINS(json, "\"passed\":\t12");
  TB_ASSERT_CONTAINS(json, "\"backend\":\t\"vulkan:0\"");
  TB_ASSERT_CONTAINS(json, "\"max_ulp\"");
  tb_free(json);
  tb_validation_report_destroy(r);
  tb_model_destroy(m);
  unsetenv("TB_BF16_TRIAL");
}

static void cnn_passes_everywhere(void **state) {
  (void)state;
  check_all_pass(MODELS "cnn_small.onnx");
}

static void encoder_passes_everywhere(void **state) {
  (void)state;
  check_all_pass(MODELS "encoder_small.onnx");
}

static void given_inputs_and_bad_arguments(void **state) {
  (void)state;
  tb_model *m = NULL;
  tb_backend *cpu = NULL;
  TB_ASSERT_OK(tb_model_load(MODELS "encoder_small.onnx", &m));
  TB_ASSERT_OK(tb_backend_create("cpu", &cpu));
  tb_tensor *x = NULL;
  TB_ASSERT_OK(tb_npy_load(MODELS "encoder_small/inputs/x.npy", cpu, &x));
  const char *names[] = {"x"};
  tb_tensor *inputs[] = {x};
  tb_opt_level levels[] = {TB_LEVEL_O1};
  const char *bad_backend[] = {"nosuch"};
  tb_validate_options o = {.size = sizeof o, .level_count = 1, .levels = levels, .input_count = 1,
                           .input_names = names, .inputs = inputs, .backend_count = 1, .backends = bad_backend};
  tb_validation_report *r = NULL;
  TB_ASSERT_OK(tb_validate(m, &o, &r)); /* a backend that cannot be created fails its configuration */
  tb_validation_config c = {.size = sizeof c};
  TB_ASSERT_OK(tb_validation_report_config(r, 0, &c));
  assert_false(c.passed);
  TB_ASSERT_CONTAINS(c.error, "nosuch");
  assert_int_equal(tb_validation_report_passed(r), 0);
  assert_int_equal(tb_validation_report_config(r, 1, &c), TB_ERR_INVALID_ARGUMENT);
  tb_validation_report_destroy(r);
  o.backend_count = 0;
  TB_ASSERT_OK(tb_validate(m, &o, &r));
  tb_output_metrics om = {.size = sizeof om};
  TB_ASSERT_OK(tb_validation_report_output(r, 0, 0, &om));
  assert_int_equal(om.numel, 2 * 16 * 64); /* the given input has batch 2 */
  assert_true(om.passed);
  tb_validation_report_destroy(r);
  const char *wrong[] = {"nope"};
  o.input_names = wrong;
  assert_int_equal(tb_validate(m, &o, &r), TB_ERR_INVALID_ARGUMENT);
  TB_ASSERT_CONTAINS(tb_last_error(), "no input named 'nope'");
  assert_null(r);
  o.input_names = names;
  o.size = 8;
  assert_int_equal(tb_validate(m, &o, &r), TB_ERR_INVALID_ARGUMENT);
  TB_ASSERT_CONTAINS(tb_last_error(), "sizeof(tb_validate_options)");
  o.size = sizeof o;
  tb_opt_level bad_level[] = {(tb_opt_level)7};
  o.levels = bad_level;
  assert_int_equal(tb_validate(m, &o, &r), TB_ERR_INVALID_ARGUMENT);
  TB_ASSERT_CONTAINS(tb_last_error(), "level 7");
  assert_int_equal(tb_validate(NULL, &o, &r), TB_ERR_INVALID_ARGUMENT);
  tb_tensor_destroy(x);
  tb_backend_destroy(cpu);
  tb_model_destroy(m);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(ulp_distance_by_hand),
      cmocka_unit_test(metrics_by_hand),
      cmocka_unit_test(atol_scales_with_the_output),
      cmocka_unit_test(nan_inf_counts),
      cmocka_unit_test(cosine_of_zero_and_shape_mismatch),
      cmocka_unit_test(tolerance_table),
      cmocka_unit_test(random_inputs_are_seeded),
      cmocka_unit_test(cnn_passes_everywhere),
      cmocka_unit_test(encoder_passes_everywhere),
      cmocka_unit_test(given_inputs_and_bad_arguments),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
