/* bf16 only where it wins (src/model/precision_trial.c, docs/engine.md): the decision rule and its sentences;
 * through tb_model_prepare with trial times injected by the test hook, a node whose bf16 trial is slower stays
 * fp32 (also at run time) and one whose bf16 wins runs bf16, each with its sentence in the result and its JSON;
 * no trial without shapes; a real trial cached per shape; TB_BF16_TRIAL=off and a bad value; a CPU without bf16
 * instructions; outputs of a trial-chosen bf16 node within the bf16 tolerance of O0. */
#include <stddef.h>
#include "model/precision_trial.h"
#include "model/prepared.h"
#include "test_engine_util.h"

typedef struct hooked {
  double fp32_ms, bf16_ms;
  int calls;
  char last_node[64];
} hooked;

static bool fake_trial(void *ctx, const char *node, const char *op_type, double *fp32_ms, double *bf16_ms) {
  hooked *h = ctx;
  (void)op_type;
  h->calls++;
  snprintf(h->last_node, sizeof h->last_node, "%s", node);
  *fp32_ms = h->fp32_ms;
  *bf16_ms = h->bf16_ms;
  return true;
}

static tb_prepare_options at_o3(int64_t *batch) {
  static const char *const names[1] = {"batch"};
  tb_prepare_options o = {.size = sizeof o, .level = TB_LEVEL_O3, .precision = TB_PRECISION_AUTO};
  if (batch) {
    o.dim_count = 1;
    o.dim_names = names;
    o.dim_values = batch;
  }
  return o;
}

/* The line of the result's precision_choices that starts with `prefix`; fails when there is none. */
static const char *choice(const tb_prepare_result *r, const char *prefix) {
  for (size_t i = 0; i < r->precision_choice_count; i++)
    if (strncmp(r->precision_choices[i], prefix, strlen(prefix)) == 0) return r->precision_choices[i];
  fail_msg("no precision choice starts with '%s' (%zu choices)", prefix, r->precision_choice_count);
  return NULL;
}

/* The kernel that ran the node named `name` (after a run). */
static const tb_kernel *kernel_of(const tb_prepared *p, const char *name) {
  for (size_t i = 0; i < p->graph->n_nodes; i++)
    if (p->graph->nodes[i].name && strcmp(p->graph->nodes[i].name, name) == 0) {
      int side = -1;
      const tb_kernel *k = tb_exec_node_kernel(p->exec, i, &side);
      assert_int_equal(side, TB_EXEC_CPU);
      return k;
    }
  fail_msg("no node '%s'", name);
  return NULL;
}

static void run_small(tb_prepared *p, tb_backend *b) {
  float x[6] = {-1.25f, 0.5f, 2.0f, 0.75f, -0.25f, 1.5f}, want[4];
  tbt_small_expected(x, 2, want);
  int64_t shape[2] = {2, 3}, oshape[1] = {4};
  tb_tensor *in = tbt_f32(b, 2, shape, x), *out = NULL;
  const char *names[1] = {"x"};
  TB_ASSERT_OK(tb_prepared_run(p, 1, names, &in, 1, NULL, &out));
  tbt_expect_f32(out, 1, oshape, want); /* quarter-steps: exact in bf16 too */
  tb_tensor_destroy(out);
  tb_tensor_destroy(in);
}

static void decision_rule(void **state) {
  (void)state;
  char why[300];
  assert_false(tb_bf16_trial_decide(0.23, 0.41, false, why, sizeof why));
  assert_string_equal(why, "fp32: bf16 1.8x slower on this shape (trial: 0.41 vs 0.23 ms)");
  assert_true(tb_bf16_trial_decide(0.41, 0.23, false, why, sizeof why));
  assert_string_equal(why, "bf16: 1.8x faster than fp32 on this shape (trial: 0.23 vs 0.41 ms)");
  assert_false(tb_bf16_trial_decide(1.0, 0.98, true, why, sizeof why));
  assert_string_equal(why, "fp32: bf16 only 1.02x faster on this shape (trial: 0.98 vs 1 ms, cached), less than the 1.05x it "
                           "must win by");
  assert_true(tb_bf16_trial_decide(2.1, 2.0, false, why, sizeof why)); /* exactly the 1.05x margin */
  assert_false(tb_bf16_trial_decide(0.5, 0.5, false, why, sizeof why)); /* a tie keeps fp32 */
}

/* A slower bf16 trial keeps the MatMul in fp32, at prepare and at run time, and the result says why. */
static void slower_bf16_stays_fp32(void **state) {
  (void)state;
  tb_backend *b = NULL;
  TB_ASSERT_OK(tb_backend_create_kind(TB_BACKEND_CPU, 0, &b));
  tb_model *m = tbt_model_of(tbt_small_model());
  hooked h = {.fp32_ms = 0.23, .bf16_ms = 0.41};
  tb_bf16_trial_set_hook(fake_trial, &h);
  int64_t batch = 2;
  tb_prepare_options o = at_o3(&batch);
  tb_prepared *p = NULL;
  const tb_prepare_result *r = NULL;
  TB_ASSERT_OK(tb_model_prepare(m, b, &o, &p, &r));
  tb_bf16_trial_set_hook(NULL, NULL);
  assert_int_equal(r->reduced_precision_nodes, 0);
  assert_int_equal(r->precision, TB_PRECISION_FP32);
  assert_int_equal(r->precision_choice_count, r->nodes_after);
  for (size_t i = 0; i < r->precision_choice_count; i++)
    if (strncmp(r->precision_choices[i], "MatMul (matmul): ", 17) != 0) TB_ASSERT_CONTAINS(r->precision_choices[i], ": fp32: no bf16 kernel");
  if (tbt_cpu_has_bf16()) {
    assert_int_equal(h.calls, 1);
    assert_string_equal(h.last_node, "matmul");
    assert_string_equal(choice(r, "MatMul (matmul): "), "MatMul (matmul): fp32: bf16 1.8x slower on this shape (trial: 0.41 vs 0.23 ms)");
    assert_int_equal(r->warning_count, 1);
    assert_string_equal(r->warnings[0], "precision auto at O3: fp32 is used: fp32 was as fast or faster in every node's bf16 "
                                        "trial (precision_choices says each)");
  } else {
    assert_int_equal(h.calls, 0);
    assert_string_equal(choice(r, "MatMul (matmul): "), "MatMul (matmul): fp32: the CPU has no bf16 instructions (AVX512-BF16)");
  }
  char *json = NULL;
  TB_ASSERT_OK(tb_prepare_result_to_json(r, &json));
  TB_ASSERT_CONTAINS(json, "\"precision_choices\":");
  TB_ASSERT_CONTAINS(json, "MatMul (matmul): fp32: ");
  tb_free(json);
  run_small(p, b);
  assert_null(kernel_of(p, "matmul")->precision); /* the run chose the same fp32 kernel */
  tb_prepared_destroy(p);
  tb_model_destroy(m);
  tb_backend_destroy(b);
}

/* A faster bf16 trial runs the MatMul in bf16. */
static void faster_bf16_runs_bf16(void **state) {
  (void)state;
  if (!tbt_cpu_has_bf16()) skip();
  tb_backend *b = NULL;
  TB_ASSERT_OK(tb_backend_create_kind(TB_BACKEND_CPU, 0, &b));
  tb_model *m = tbt_model_of(tbt_small_model());
  hooked h = {.fp32_ms = 0.41, .bf16_ms = 0.23};
  tb_bf16_trial_set_hook(fake_trial, &h);
  int64_t batch = 2;
  tb_prepare_options o = at_o3(&batch);
  tb_prepared *p = NULL;
  const tb_prepare_result *r = NULL;
  TB_ASSERT_OK(tb_model_prepare(m, b, &o, &p, &r));
  tb_bf16_trial_set_hook(NULL, NULL);
  assert_int_equal(h.calls, 1);
  assert_int_equal(r->precision, TB_PRECISION_BF16);
  assert_int_equal(r->reduced_precision_nodes, 1);
  assert_string_equal(r->node_precisions[0], "MatMul (matmul): bf16");
  assert_string_equal(choice(r, "MatMul (matmul): "), "MatMul (matmul): bf16: 1.8x faster than fp32 on this shape (trial: 0.23 vs 0.41 ms)");
  assert_int_equal(r->warning_count, 0);
  run_small(p, b);
  assert_string_equal(kernel_of(p, "matmul")->precision, "bf16");
  tb_prepared_destroy(p);
  tb_model_destroy(m);
  tb_backend_destroy(b);
}

/* With the batch unbound no trial can run: fp32, and the sentence names the value. */
static void no_trial_without_shapes(void **state) {
  (void)state;
  if (!tbt_cpu_has_bf16()) skip();
  tb_backend *b = NULL;
  TB_ASSERT_OK(tb_backend_create_kind(TB_BACKEND_CPU, 0, &b));
  tb_model *m = tbt_model_of(tbt_small_model());
  hooked h = {.fp32_ms = 0.41, .bf16_ms = 0.23};
  tb_bf16_trial_set_hook(fake_trial, &h);
  tb_prepare_options o = at_o3(NULL);
  tb_prepared *p = NULL;
  const tb_prepare_result *r = NULL;
  TB_ASSERT_OK(tb_model_prepare(m, b, &o, &p, &r));
  tb_bf16_trial_set_hook(NULL, NULL);
  assert_int_equal(h.calls, 0);
  assert_int_equal(r->reduced_precision_nodes, 0);
  const char *line = choice(r, "MatMul (matmul): ");
  TB_ASSERT_CONTAINS(line, "MatMul (matmul): fp32: input '");
  TB_ASSERT_CONTAINS(line, "' has a shape known only at run time, so no bf16 trial ran");
  run_small(p, b);
  assert_null(kernel_of(p, "matmul")->precision);
  tb_prepared_destroy(p);
  tb_model_destroy(m);
  tb_backend_destroy(b);
}

/* y = x (64 x 256) . W (256 x 256), W a constant. */
static tb_model *matmul_model(float *w) {
  tb_ir_model *ir = tbt_ir_model(13);
  tb_graph *g = tb_graph_new(ir, NULL, "mm");
  int64_t x_dims[2] = {64, 256}, w_dims[2] = {256, 256};
  tbt_input(g, "x", TB_DTYPE_F32, 2, x_dims, NULL);
  for (int i = 0; i < 256 * 256; i++) w[i] = (float)((i * 37) % 97 - 48) / 64.0f;
  tbt_const_f32(g, "W", 2, w_dims, w);
  tbt_node(g, "MatMul", "mm", "x,W", "y");
  tbt_output(g, "y");
  return tbt_model_of(ir);
}

static tb_tensor *run_mm(tb_model *m, tb_backend *b, tb_opt_level level, const tb_tensor *x, const char **choice_out) {
  tb_prepare_options o = {.size = sizeof o, .level = level, .precision = TB_PRECISION_AUTO, .threads = 1};
  tb_prepared *p = NULL;
  const tb_prepare_result *r = NULL;
  TB_ASSERT_OK(tb_model_prepare(m, b, &o, &p, &r));
  static char line[400];
  line[0] = '\0';
  if (r->precision_choice_count) snprintf(line, sizeof line, "%s", r->precision_choices[0]);
  *choice_out = line;
  const char *names[1] = {"x"};
  tb_tensor *y = NULL, *in = (tb_tensor *)x;
  TB_ASSERT_OK(tb_prepared_run(p, 1, names, &in, 1, NULL, &y));
  tb_prepared_destroy(p);
  return y;
}

/* A real trial: timed, cached for the same shape, and the output within the bf16 tolerance of O0 whichever
 * precision won. */
static void real_trial_is_cached(void **state) {
  (void)state;
  tb_backend *b = NULL;
  TB_ASSERT_OK(tb_backend_create_kind(TB_BACKEND_CPU, 0, &b));
  float *w = malloc(256 * 256 * sizeof *w), *xs = malloc(64 * 256 * sizeof *xs);
  tb_model *m = matmul_model(w);
  for (int i = 0; i < 64 * 256; i++) xs[i] = (float)((i * 13) % 31 - 15) / 16.0f;
  int64_t xd[2] = {64, 256};
  tb_tensor *x = tbt_f32(b, 2, xd, xs);
  tb_bf16_trial_cache_clear();
  const char *line = NULL;
  tb_tensor *ref = run_mm(m, b, TB_LEVEL_O0, x, &line);
  assert_string_equal(line, "");
  tb_tensor *y = run_mm(m, b, TB_LEVEL_O3, x, &line);
  if (tbt_cpu_has_bf16()) {
    TB_ASSERT_CONTAINS(line, "MatMul (mm): ");
    TB_ASSERT_CONTAINS(line, " on this shape (trial: ");
    assert_null(strstr(line, "cached"));
    assert_int_equal(tb_bf16_trial_cache_count(), 1);
    tb_tensor *again = run_mm(m, b, TB_LEVEL_O3, x, &line);
    TB_ASSERT_CONTAINS(line, " ms, cached)");
    assert_int_equal(tb_bf16_trial_cache_count(), 1);
    tb_tensor_destroy(again);
  } else {
    assert_string_equal(line, "MatMul (mm): fp32: the CPU has no bf16 instructions (AVX512-BF16)");
    assert_int_equal(tb_bf16_trial_cache_count(), 0);
  }
  float *got = malloc(64 * 256 * sizeof *got), *want = malloc(64 * 256 * sizeof *want);
  TB_ASSERT_OK(tb_tensor_copy_to_host(y, got, 64 * 256 * sizeof *got));
  TB_ASSERT_OK(tb_tensor_copy_to_host(ref, want, 64 * 256 * sizeof *want));
  for (int i = 0; i < 64 * 256; i++) /* the validate table's bf16 entry: rtol 1e-2, atol 1e-2 */
    if (fabsf(got[i] - want[i]) > 1e-2f + 1e-2f * fabsf(want[i])) fail_msg("y[%d] = %g, O0 gives %g", i, (double)got[i], (double)want[i]);
  free(got);
  free(want);
  tb_tensor_destroy(y);
  tb_tensor_destroy(ref);
  tb_tensor_destroy(x);
  tb_model_destroy(m);
  tb_backend_destroy(b);
  free(w);
  free(xs);
}

/* TB_BF16_TRIAL=off: bf16 wherever a kernel exists, no trial; another value is an error naming it; O2 and
 * precision fp32 list no choices; a CPU without bf16 instructions says so per node. */
static void switches(void **state) {
  (void)state;
  tb_backend *b = NULL;
  TB_ASSERT_OK(tb_backend_create_kind(TB_BACKEND_CPU, 0, &b));
  tb_model *m = tbt_model_of(tbt_small_model());
  int64_t batch = 2;
  tb_prepare_options o = at_o3(&batch);
  tb_prepared *p = NULL;
  const tb_prepare_result *r = NULL;
  hooked h = {.fp32_ms = 0.23, .bf16_ms = 0.41};
  tb_bf16_trial_set_hook(fake_trial, &h);
  setenv("TB_BF16_TRIAL", "off", 1);
  TB_ASSERT_OK(tb_model_prepare(m, b, &o, &p, &r));
  assert_int_equal(h.calls, 0);
  if (tbt_cpu_has_bf16()) {
    assert_int_equal(r->reduced_precision_nodes, 1);
    assert_string_equal(choice(r, "MatMul (matmul): "), "MatMul (matmul): bf16: asked for (precision bf16 or TB_BF16_TRIAL=off), no trial");
  }
  tb_prepared_destroy(p);
  setenv("TB_BF16_TRIAL", "maybe", 1);
  assert_int_equal(tb_model_prepare(m, b, &o, &p, &r), TB_ERR_INVALID_ARGUMENT);
  assert_null(p);
  assert_string_equal(tb_last_error(), "tb_model_prepare: TB_BF16_TRIAL='maybe' is not one of on, 1, off, 0; unset it (on: O3 "
                                       "runs bf16 only where a trial shows it faster) or set off (bf16 wherever a kernel exists)");
  o.level = TB_LEVEL_O2; /* read only where it matters */
  TB_ASSERT_OK(tb_model_prepare(m, b, &o, &p, &r));
  assert_int_equal(r->precision_choice_count, 0);
  tb_prepared_destroy(p);
  unsetenv("TB_BF16_TRIAL");
  o.level = TB_LEVEL_O3;
  o.precision = TB_PRECISION_FP32;
  TB_ASSERT_OK(tb_model_prepare(m, b, &o, &p, &r));
  assert_int_equal(r->precision_choice_count, 0);
  tb_prepared_destroy(p);
  o.precision = TB_PRECISION_AUTO;
  setenv("TB_CPU_FEATURES", "-avx512bf16,-amx_bf16", 1);
  TB_ASSERT_OK(tb_model_prepare(m, b, &o, &p, &r));
  unsetenv("TB_CPU_FEATURES");
  assert_int_equal(h.calls, 0);
  assert_string_equal(choice(r, "MatMul (matmul): "), "MatMul (matmul): fp32: the CPU has no bf16 instructions (AVX512-BF16)");
  assert_string_equal(choice(r, "Reshape (reshape): "), "Reshape (reshape): fp32: no bf16 kernel");
  tb_prepared_destroy(p);
  tb_bf16_trial_set_hook(NULL, NULL);
  tb_model_destroy(m);
  tb_backend_destroy(b);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(decision_rule),        cmocka_unit_test(slower_bf16_stays_fp32), cmocka_unit_test(faster_bf16_runs_bf16),
      cmocka_unit_test(no_trial_without_shapes), cmocka_unit_test(real_trial_is_cached), cmocka_unit_test(switches),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
