/* The bundled demo models (models/, made by scripts/make_models.py) run on the CPU at O0 and O1 and match
 * ONNX Runtime's outputs (models/<name>/outputs) within rtol 1e-4 / atol 1e-5; the encoder's symbolic
 * batch bound at prepare time and at run time; O1 rewrites the encoder (LayerNorm, GELU, attention) and
 * the CNN (Conv+BatchNormalization) and still matches. The libonnx-testdata model tests (pytorch-converted,
 * pytorch-operator, simple) run through the conformance runner's CTest entry conformance_models_O0. */
#include <math.h>
#include "test_tensor_util.h"

#define MODELS TB_TEST_FIXTURES "/../../models/"

typedef struct ref_case {
  const char *model;
  const char *input_name;
  const char *output_name;
} ref_case;

static const ref_case cnn = {"cnn_small", "input", "probs"};
static const ref_case encoder = {"encoder_small", "x", "y"};

static tb_tensor *load_npy(tb_backend *b, const char *model, const char *kind, const char *name) {
  char path[1024];
  snprintf(path, sizeof path, "%s%s/%s/%s.npy", MODELS, model, kind, name);
  tb_tensor *t = NULL;
  TB_ASSERT_OK(tb_npy_load(path, b, &t));
  return t;
}

/* Every element within atol + rtol * |ref|; returns the number of mismatches and the worst error. */
static int64_t mismatches(const tb_tensor *got, const tb_tensor *ref, int64_t ref_offset, double *max_abs) {
  assert_int_equal(tb_tensor_dtype(got), TB_DTYPE_F32);
  const float *g = tb_tensor_host_data(got);
  const float *r = (const float *)tb_tensor_host_data(ref) + ref_offset;
  int64_t n = tb_tensor_numel(got), bad = 0;
  *max_abs = 0;
  for (int64_t i = 0; i < n; i++) {
    double d = fabs((double)g[i] - (double)r[i]);
    if (d > *max_abs || isnan(d)) *max_abs = d;
    if (!(d <= 1e-5 + 1e-4 * fabs((double)r[i]))) bad++;
  }
  return bad;
}

static tb_prepared *prepare(tb_backend *b, tb_model *m, tb_opt_level level, const char *dim, int64_t dim_value,
                            const tb_prepare_result **result) {
  tb_prepare_options o = {.size = sizeof o, .level = level, .precision = TB_PRECISION_AUTO};
  const char *names[] = {dim};
  if (dim) {
    o.dim_count = 1;
    o.dim_names = names;
    o.dim_values = &dim_value;
  }
  tb_prepared *p = NULL;
  TB_ASSERT_OK(tb_model_prepare(m, b, &o, &p, result));
  assert_non_null(p);
  assert_true((*result)->success);
  assert_int_equal((*result)->level, level);
  assert_int_equal((*result)->cpu_fallback_nodes, 0);
  return p;
}

/* Load, prepare at `level`, run on the reference input, compare; returns the prepare result's node counts. */
static void run_and_compare(tb_backend *b, const ref_case *c, tb_opt_level level, size_t *nodes_before,
                            size_t *nodes_after) {
  char path[1024];
  snprintf(path, sizeof path, "%s%s.onnx", MODELS, c->model);
  tb_model *m = NULL;
  TB_ASSERT_OK(tb_model_load(path, &m));
  const tb_prepare_result *r = NULL;
  tb_prepared *p = prepare(b, m, level, NULL, 0, &r);
  *nodes_before = r->nodes_before;
  *nodes_after = r->nodes_after;
  tb_tensor *in = load_npy(b, c->model, "inputs", c->input_name);
  tb_tensor *ref = load_npy(b, c->model, "outputs", c->output_name);
  tb_tensor *out = NULL;
  const char *names[] = {c->input_name};
  /* twice: memory reused across runs must give the same answer */
  for (int run = 0; run < 2; run++) {
    tb_tensor_destroy(out);
    out = NULL;
    TB_ASSERT_OK(tb_prepared_run(p, 1, names, &in, 1, NULL, &out));
    assert_int_equal(tb_tensor_ndim(out), tb_tensor_ndim(ref));
    for (size_t i = 0; i < tb_tensor_ndim(ref); i++) assert_int_equal(tb_tensor_shape(out)[i], tb_tensor_shape(ref)[i]);
    double max_abs;
    int64_t bad = mismatches(out, ref, 0, &max_abs);
    if (bad) fail_msg("%s at %s run %d: %lld elements differ from ONNX Runtime's (max abs error %g)", c->model,
                      tb_opt_level_name(level), run, (long long)bad, max_abs);
  }
  tb_tensor_destroy(out);
  tb_tensor_destroy(in);
  tb_tensor_destroy(ref);
  tb_prepared_destroy(p);
  tb_model_destroy(m);
}

static void cnn_matches_onnxruntime_at_o0_and_o1(void **state) {
  size_t before, after;
  run_and_compare(*state, &cnn, TB_LEVEL_O0, &before, &after);
  assert_int_equal(before, 15);
  assert_int_equal(after, 15); /* O0 rewrites nothing */
  run_and_compare(*state, &cnn, TB_LEVEL_O1, &before, &after);
  assert_int_equal(before, 15);
  assert_true(after <= 12); /* the three BatchNormalization nodes are folded into their Conv */
}

static void encoder_matches_onnxruntime_at_o0_and_o1(void **state) {
  size_t before, after;
  run_and_compare(*state, &encoder, TB_LEVEL_O0, &before, &after);
  assert_int_equal(before, 50);
  assert_int_equal(after, 50);
  run_and_compare(*state, &encoder, TB_LEVEL_O1, &before, &after);
  assert_int_equal(before, 50);
  assert_true(after < 40); /* LayerNorm, GELU and attention patterns become single nodes */
}

/* The encoder's batch is symbolic: the declared input says so; batch 1 (bound at prepare) gives the
 * first row of the batch-2 reference, and batch 2 bound at run time gives all of it. */
static void encoder_symbolic_batch(void **state) {
  tb_backend *b = *state;
  tb_model *m = NULL;
  TB_ASSERT_OK(tb_model_load(MODELS "encoder_small.onnx", &m));
  tb_model_io io = {.size = sizeof io};
  TB_ASSERT_OK(tb_model_input(m, 0, &io));
  assert_string_equal(io.name, "x");
  assert_int_equal(io.ndim, 3);
  assert_int_equal(io.dims[0], -1);
  assert_string_equal(io.dim_names[0], "batch");
  assert_int_equal(io.dims[1], 16);
  assert_int_equal(io.dims[2], 64);
  tb_tensor *x2 = load_npy(b, "encoder_small", "inputs", "x");
  tb_tensor *ref = load_npy(b, "encoder_small", "outputs", "y");
  const int64_t shape1[] = {1, 16, 64};
  tb_tensor *x1 = NULL;
  TB_ASSERT_OK(tb_tensor_view(x2, 3, shape1, NULL, 0, &x1));
  for (tb_opt_level level = TB_LEVEL_O0; level <= TB_LEVEL_O1; level++) {
    const tb_prepare_result *r = NULL;
    tb_prepared *p = prepare(b, m, level, "batch", 1, &r);
    const char *names[] = {"x"};
    tb_tensor *y = NULL;
    TB_ASSERT_OK(tb_prepared_run(p, 1, names, &x1, 1, NULL, &y));
    assert_int_equal(tb_tensor_shape(y)[0], 1);
    double max_abs;
    assert_int_equal(mismatches(y, ref, 0, &max_abs), 0);
    tb_tensor_destroy(y);
    tb_prepared_destroy(p);
    /* unbound at prepare: batch 2 at run time */
    p = prepare(b, m, level, NULL, 0, &r);
    TB_ASSERT_OK(tb_prepared_run(p, 1, names, &x2, 1, NULL, &y));
    assert_int_equal(tb_tensor_shape(y)[0], 2);
    assert_int_equal(mismatches(y, ref, 0, &max_abs), 0);
    tb_tensor_destroy(y);
    tb_prepared_destroy(p);
  }
  tb_tensor_destroy(x1);
  tb_tensor_destroy(x2);
  tb_tensor_destroy(ref);
  tb_model_destroy(m);
}

/* The CNN's declared input is fixed: a wrong shape is an error naming the input, not a crash. */
static void cnn_wrong_input_shape(void **state) {
  tb_backend *b = *state;
  tb_model *m = NULL;
  TB_ASSERT_OK(tb_model_load(MODELS "cnn_small.onnx", &m));
  const tb_prepare_result *r = NULL;
  tb_prepared *p = prepare(b, m, TB_LEVEL_O0, NULL, 0, &r);
  const int64_t shape[] = {1, 3, 16, 16};
  tb_tensor *x = NULL, *y = NULL;
  TB_ASSERT_OK(tb_tensor_create(b, TB_DTYPE_F32, 4, shape, &x));
  const char *names[] = {"input"};
  assert_int_equal(tb_prepared_run(p, 1, names, &x, 1, NULL, &y), TB_ERR_INVALID_ARGUMENT);
  assert_null(y);
  TB_ASSERT_CONTAINS(tb_last_error(), "input");
  tb_tensor_destroy(x);
  tb_prepared_destroy(p);
  tb_model_destroy(m);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(cnn_matches_onnxruntime_at_o0_and_o1),
      cmocka_unit_test(encoder_matches_onnxruntime_at_o0_and_o1),
      cmocka_unit_test(encoder_symbolic_batch),
      cmocka_unit_test(cnn_wrong_input_shape),
  };
  return cmocka_run_group_tests(tests, tbt_cpu_setup, tbt_cpu_teardown);
}
