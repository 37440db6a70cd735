/* tb_model_prepare and tb_prepared_run through the public API on a model built with the IR builder: each
 * level and its result (passes, warnings, metrics), option errors, the JSON form, input checks naming the
 * input, symbolic dims, the model destroyed first, and the memory plan's effect on allocations. */
#include <stddef.h>
#include "core/convert_features.h"
#include "model/passes/pass.h"
#include "test_engine_util.h"

typedef struct fixture {
  tb_model *model;
  tb_backend *cpu;
} fixture;

static int setup(void **state) {
  fixture *f = calloc(1, sizeof *f);
  f->model = tbt_model_of(tbt_small_model());
  if (tb_backend_create_kind(TB_BACKEND_CPU, 0, &f->cpu) != TB_OK) return -1;
  *state = f;
  return 0;
}

static int teardown(void **state) {
  fixture *f = *state;
  tb_model_destroy(f->model);
  tb_backend_destroy(f->cpu);
  free(f);
  return 0;
}

static tb_prepare_options options_at(tb_opt_level level, int64_t *batch) {
  static const char *const names[1] = {"batch"};
  tb_prepare_options o = {.size = sizeof o, .level = level, .precision = TB_PRECISION_AUTO};
  if (batch) {
    o.dim_count = 1;
    o.dim_names = names;
    o.dim_values = batch;
  }
  return o;
}

/* Run the prepared small model on `batch` rows and check the values. */
static void run_small(tb_prepared *p, tb_backend *b, size_t batch) {
  float x[30], want[20];
  for (size_t i = 0; i < batch * 3; i++) x[i] = (float)((int)(i * 7 % 11) - 5) * 0.25f;
  tbt_small_expected(x, batch, want);
  int64_t shape[2] = {(int64_t)batch, 3}, oshape[1] = {(int64_t)batch * 2};
  tb_tensor *in = tbt_f32(b, 2, shape, x), *out = NULL;
  const char *names[1] = {"x"};
  TB_ASSERT_OK(tb_prepared_run(p, 1, names, &in, 1, NULL, &out));
  tbt_expect_f32(out, 1, oshape, want);
  tb_tensor_destroy(out);
  tb_tensor_destroy(in);
}

static size_t passes_at(tb_opt_level level) {
  size_t n = 0;
  for (size_t i = 0; i < tb_pass_count(); i++) n += tb_pass_at(i)->min_level <= level;
  return n;
}

static void each_level(void **state) {
  fixture *f = *state;
  setenv("TB_BF16_TRIAL", "off", 1); /* O3: bf16 wherever a kernel exists (test_precision_trial.c tests the trial) */
  for (int level = TB_LEVEL_O0; level <= TB_LEVEL_O3; level++) {
    int64_t batch = 2;
    tb_prepare_options o = options_at((tb_opt_level)level, &batch);
    tb_prepared *p = NULL;
    const tb_prepare_result *r = NULL;
    TB_ASSERT_OK(tb_model_prepare(f->model, f->cpu, &o, &p, &r));
    assert_ptr_equal(r, tb_prepared_result(p));
    assert_true(r->success);
    assert_int_equal(r->size, sizeof *r);
    assert_int_equal(r->level, level);
    /* O3 runs the MatMul in bf16 (with fp32 accumulation) and says so, on a CPU with bf16 instructions */
    bool bf16 = level == TB_LEVEL_O3 && tbt_cpu_has_bf16();
    assert_int_equal(r->precision, bf16 ? TB_PRECISION_BF16 : TB_PRECISION_FP32);
    assert_int_equal(r->reduced_precision_nodes, bf16 ? 1 : 0);
    if (bf16) assert_string_equal(r->node_precisions[0], "MatMul (matmul): bf16");
    assert_int_equal(r->device_nodes, 0);
    assert_int_equal(r->nodes_before, 4);
    assert_true(r->nodes_after >= 1 && r->nodes_after <= 4);
    if (level == TB_LEVEL_O0) assert_int_equal(r->nodes_after, 4);
    assert_int_equal(r->pass_count, level == TB_LEVEL_O0 ? 0 : passes_at((tb_opt_level)level));
    for (size_t i = 0; i < r->pass_count; i++) assert_non_null(strstr(r->passes[i], ": "));
    assert_int_equal(r->cpu_fallback_nodes, 0);
    assert_int_equal(r->copies_inserted, 0);
    assert_true(r->prepare_ms >= 0.0);
    if (level == TB_LEVEL_O0) {
      assert_int_equal(r->weight_bytes, 12 + 24 + 8);
      assert_int_equal(r->planned_peak_activation_bytes, 128);
    }
    /* the MatMul runs the level-2 fp32 GEMM at O2 and the bf16 one at O3: nothing to warn about (without
     * bf16 instructions O3 says why it stays in fp32) */
    assert_int_equal(r->warning_count, level == TB_LEVEL_O3 && !bf16 ? 1 : 0);
    run_small(p, f->cpu, 2); /* quarter-steps: exact in bf16 too */
    tb_prepared_destroy(p);
  }
  unsetenv("TB_BF16_TRIAL");
}

/* O3 on a CPU without bf16 instructions (masked here) keeps fp32: emulated bf16 would be slower. */
static void o3_without_bf16_instructions(void **state) {
  fixture *f = *state;
  setenv("TB_CPU_FEATURES", "-avx512bf16,-amx_bf16", 1);
  tb_prepare_options o = options_at(TB_LEVEL_O3, NULL);
  tb_prepared *p = NULL;
  const tb_prepare_result *r = NULL;
  TB_ASSERT_OK(tb_model_prepare(f->model, f->cpu, &o, &p, &r));
  unsetenv("TB_CPU_FEATURES");
  assert_int_equal(r->precision, TB_PRECISION_FP32);
  assert_int_equal(r->reduced_precision_nodes, 0);
  assert_int_equal(r->warning_count, 1);
  assert_string_equal(r->warnings[0],
                      "precision auto at O3: fp32 is used: this CPU has no bf16 instructions (AVX512-BF16; AMX-BF16 alone is "
                      "not used)");
  run_small(p, f->cpu, 2);
  tb_prepared_destroy(p);
}

/* Per-node profile: off until asked for, one entry per node with its runs, cleared when switched on again. */
static void profiling(void **state) {
  fixture *f = *state;
  int64_t batch = 2;
  tb_prepare_options o = options_at(TB_LEVEL_O2, &batch);
  tb_prepared *p = NULL;
  TB_ASSERT_OK(tb_model_prepare(f->model, f->cpu, &o, &p, NULL));
  size_t n = 9;
  const tb_node_profile *e = (const tb_node_profile *)f;
  assert_int_equal(tb_prepared_profile(p, &n, &e), TB_ERR_INVALID_ARGUMENT);
  assert_string_equal(tb_last_error(), "tb_prepared_profile: profiling is off; call tb_prepared_set_profiling(prepared, true) first");
  assert_int_equal(n, 0);
  assert_null(e);
  assert_int_equal(tb_prepared_set_profiling(NULL, true), TB_ERR_INVALID_ARGUMENT);
  TB_ASSERT_OK(tb_prepared_set_profiling(p, true));
  for (int i = 0; i < 3; i++) run_small(p, f->cpu, 2);
  TB_ASSERT_OK(tb_prepared_profile(p, &n, &e));
  assert_int_equal(n, tb_prepared_result(p)->nodes_after);
  bool matmul = false;
  for (size_t i = 0; i < n; i++) {
    assert_int_equal(e[i].runs, 3);
    assert_true(e[i].total_ms >= 0);
    assert_string_equal(e[i].placement, "cpu");
    if (strcmp(e[i].op_type, "MatMul") == 0 || strcmp(e[i].op_type, "tb.FusedMatMul") == 0) {
      matmul = true;
      TB_ASSERT_CONTAINS(e[i].kernel, "fast fp32 (");
    }
  }
  assert_true(matmul);
  TB_ASSERT_OK(tb_prepared_set_profiling(p, true)); /* again: cleared */
  TB_ASSERT_OK(tb_prepared_profile(p, &n, &e));
  for (size_t i = 0; i < n; i++) assert_int_equal(e[i].runs, 0);
  TB_ASSERT_OK(tb_prepared_set_profiling(p, false));
  assert_int_equal(tb_prepared_profile(p, &n, &e), TB_ERR_INVALID_ARGUMENT);
  tb_prepared_destroy(p);
}

/* y = If(cond, then: MatMul(x, W), else: `else_op`(x) or MatMul(x, W) when NULL), x and W from the outer
 * scope. */
static tb_model *if_model(const char *else_op) {
  tb_ir_model *m = tbt_ir_model(13);
  tb_graph *g = tb_graph_new(m, NULL, "main");
  int64_t x_dims[2] = {2, 3}, w_dims[2] = {3, 2};
  float w[6] = {1, 0, 0, 1, 1, 1};
  tbt_input(g, "x", TB_DTYPE_F32, 2, x_dims, NULL);
  tbt_input(g, "cond", TB_DTYPE_BOOL, 0, NULL, NULL);
  tbt_const_f32(g, "W", 2, w_dims, w);
  tb_graph *then_g = tb_graph_new(m, g, "then");
  tbt_node(then_g, else_op ? else_op : "MatMul", "t_mm", else_op ? "x" : "x,W", "t_out");
  tbt_output(then_g, "t_out");
  tb_graph *else_g = tb_graph_new(m, g, "else");
  tbt_node(else_g, else_op ? else_op : "MatMul", "e_mm", else_op ? "x" : "x,W", "e_out");
  tbt_output(else_g, "e_out");
  tb_attr attrs[2] = {{.name = "then_branch", .type = TB_ATTR_GRAPH, .g = then_g},
                      {.name = "else_branch", .type = TB_ATTR_GRAPH, .g = else_g}};
  int in = tb_graph_find(g, "cond"), out = tb_graph_value(g, "y");
  assert_true(tb_graph_add_node(g, "if0", "If", "", &in, 1, &out, 1, attrs, 2) >= 0);
  tbt_output(g, "y");
  return tbt_model_of(m);
}

static bool warns_reference_only(const tb_prepare_result *r) {
  for (size_t i = 0; i < r->warning_count; i++)
    if (strstr(r->warnings[i], "no faster CPU kernel exists")) return true;
  return false;
}

/* A model whose work is inside an If: the fast-kernel check looks into the branches (no warning at O2), and
 * the profile lists the branches' nodes after the If with their kernels; the If's own time leaves them out. */
static void subgraphs_checked_and_profiled(void **state) {
  fixture *f = *state;
  tb_model *model = if_model(NULL);
  tb_prepare_options o = options_at(TB_LEVEL_O2, NULL);
  tb_prepared *p = NULL;
  const tb_prepare_result *r = NULL;
  TB_ASSERT_OK(tb_model_prepare(model, f->cpu, &o, &p, &r));
  assert_false(warns_reference_only(r));
  TB_ASSERT_OK(tb_prepared_set_profiling(p, true));
  float x[6] = {1, 2, 3, 4, 5, 6};
  int64_t x_shape[2] = {2, 3}, y_shape[2] = {2, 2};
  uint8_t yes = 1;
  tb_tensor *in[2] = {tbt_f32(f->cpu, 2, x_shape, x), NULL}, *out = NULL;
  TB_ASSERT_OK(tb_tensor_create(f->cpu, TB_DTYPE_BOOL, 0, NULL, &in[1]));
  TB_ASSERT_OK(tb_tensor_copy_from_host(in[1], &yes, 1));
  const char *names[2] = {"x", "cond"};
  for (int run = 0; run < 2; run++) {
    TB_ASSERT_OK(tb_prepared_run(p, 2, names, in, 1, NULL, &out));
    float want[4] = {4, 5, 10, 11};
    tbt_expect_f32(out, 2, y_shape, want);
    tb_tensor_destroy(out);
  }
  size_t n = 0;
  const tb_node_profile *e = NULL;
  TB_ASSERT_OK(tb_prepared_profile(p, &n, &e));
  assert_int_equal(n, 3);
  assert_string_equal(e[0].name, "if0");
  assert_string_equal(e[0].op_type, "If");
  assert_string_equal(e[0].graph, "");
  assert_string_equal(e[0].kernel, "reference");
  assert_int_equal(e[0].runs, 2);
  assert_string_equal(e[1].name, "t_mm");
  assert_string_equal(e[1].op_type, "MatMul");
  assert_string_equal(e[1].graph, "if0/then_branch");
  assert_string_equal(e[1].placement, "cpu");
  TB_ASSERT_CONTAINS(e[1].kernel, "fast fp32 (");
  assert_int_equal(e[1].runs, 2);
  assert_true(e[1].total_ms > 0);
  assert_string_equal(e[2].name, "e_mm");
  assert_string_equal(e[2].graph, "if0/else_branch");
  assert_string_equal(e[2].kernel, "not run yet");
  assert_int_equal(e[2].runs, 0);
  /* switched on again: the branch's counts are cleared too */
  TB_ASSERT_OK(tb_prepared_set_profiling(p, true));
  TB_ASSERT_OK(tb_prepared_profile(p, &n, &e));
  assert_int_equal(e[1].runs, 0);
  assert_true(e[1].total_ms == 0);
  tb_tensor_destroy(in[0]);
  tb_tensor_destroy(in[1]);
  tb_prepared_destroy(p);
  tb_model_destroy(model);
  /* branches with only reference kernels: the warning stays */
  model = if_model("Abs");
  TB_ASSERT_OK(tb_model_prepare(model, f->cpu, &o, &p, &r));
  assert_true(warns_reference_only(r));
  assert_string_equal(r->warnings[0], "O2: no faster CPU kernel exists for this model's operators; the reference kernels run");
  tb_prepared_destroy(p);
  tb_model_destroy(model);
}

static const tb_node_profile *profile_entry(const tb_node_profile *e, size_t n, const char *name) {
  for (size_t i = 0; i < n; i++)
    if (strcmp(e[i].name, name) == 0) return &e[i];
  fail_msg("no profile entry for node '%s'", name);
  return NULL;
}

/* y = Loop(M, , x) whose body doubles its carried state with MatMul(s, 2I), W from the outer scope: no
 * warning at O2, and the body's nodes are profiled once per iteration, under "loop0/body". */
static void loop_body_checked_and_profiled(void **state) {
  fixture *f = *state;
  tb_ir_model *m = tbt_ir_model(13);
  tb_graph *g = tb_graph_new(m, NULL, "main");
  int64_t x_dims[2] = {2, 3}, w_dims[2] = {3, 3};
  float w[9] = {2, 0, 0, 0, 2, 0, 0, 0, 2};
  tbt_input(g, "x", TB_DTYPE_F32, 2, x_dims, NULL);
  tbt_input(g, "M", TB_DTYPE_I64, 0, NULL, NULL);
  tbt_const_f32(g, "W", 2, w_dims, w);
  tb_graph *body = tb_graph_new(m, g, "body");
  tbt_input(body, "iter", TB_DTYPE_I64, 0, NULL, NULL);
  tbt_input(body, "cond_in", TB_DTYPE_BOOL, 0, NULL, NULL);
  tbt_input(body, "s", TB_DTYPE_F32, 2, x_dims, NULL);
  tbt_node(body, "Not", "keep_going", "cond_in", "stop");
  tbt_node(body, "Not", "keep_going2", "stop", "cond_out");
  tbt_node(body, "MatMul", "double", "s,W", "s_out");
  tbt_output(body, "cond_out");
  tbt_output(body, "s_out");
  tb_attr attrs[1] = {{.name = "body", .type = TB_ATTR_GRAPH, .g = body}};
  int in[3] = {tb_graph_find(g, "M"), -1, tb_graph_find(g, "x")}, out = tb_graph_value(g, "y");
  assert_true(tb_graph_add_node(g, "loop0", "Loop", "", in, 3, &out, 1, attrs, 1) >= 0);
  tbt_output(g, "y");
  tb_model *model = tbt_model_of(m);
  tb_prepare_options o = options_at(TB_LEVEL_O2, NULL);
  tb_prepared *p = NULL;
  const tb_prepare_result *r = NULL;
  TB_ASSERT_OK(tb_model_prepare(model, f->cpu, &o, &p, &r));
  assert_false(warns_reference_only(r));
  TB_ASSERT_OK(tb_prepared_set_profiling(p, true));
  float x[6] = {1, 2, 3, 4, 5, 6}, want[6] = {8, 16, 24, 32, 40, 48};
  int64_t three = 3;
  tb_tensor *ins[2] = {tbt_f32(f->cpu, 2, x_dims, x), NULL}, *y = NULL;
  TB_ASSERT_OK(tb_tensor_create(f->cpu, TB_DTYPE_I64, 0, NULL, &ins[1]));
  TB_ASSERT_OK(tb_tensor_copy_from_host(ins[1], &three, sizeof three));
  const char *names[2] = {"x", "M"};
  for (int run = 0; run < 2; run++) {
    TB_ASSERT_OK(tb_prepared_run(p, 2, names, ins, 1, NULL, &y));
    tbt_expect_f32(y, 2, x_dims, want);
    tb_tensor_destroy(y);
  }
  size_t n = 0;
  const tb_node_profile *e = NULL;
  TB_ASSERT_OK(tb_prepared_profile(p, &n, &e));
  assert_int_equal(n, 4);
  assert_string_equal(e[0].name, "loop0");
  assert_string_equal(e[0].graph, "");
  assert_int_equal(e[0].runs, 2);
  const tb_node_profile *mm = profile_entry(e, n, "double");
  assert_string_equal(mm->graph, "loop0/body");
  TB_ASSERT_CONTAINS(mm->kernel, "fast fp32 (");
  assert_int_equal(mm->runs, 6); /* 3 iterations in each of 2 runs */
  assert_int_equal(profile_entry(e, n, "keep_going")->runs, 6);
  tb_tensor_destroy(ins[0]);
  tb_tensor_destroy(ins[1]);
  tb_prepared_destroy(p);
  tb_model_destroy(model);
}

static void options_checked(void **state) {
  fixture *f = *state;
  tb_prepared *p = (tb_prepared *)f; /* must be reset to NULL on failure */
  const tb_prepare_result *r = (const tb_prepare_result *)f;
  tb_prepare_options o = options_at((tb_opt_level)7, NULL);
  assert_int_equal(tb_model_prepare(f->model, f->cpu, &o, &p, &r), TB_ERR_INVALID_ARGUMENT);
  assert_null(p);
  assert_null(r);
  TB_ASSERT_CONTAINS(tb_last_error(), "unknown optimization level 7; valid levels are O0 (none)");
  o = options_at(TB_LEVEL_O1, NULL);
  o.precision = (tb_precision)9;
  assert_int_equal(tb_model_prepare(f->model, f->cpu, &o, &p, &r), TB_ERR_INVALID_ARGUMENT);
  TB_ASSERT_CONTAINS(tb_last_error(), "unknown precision 9");
  o = options_at(TB_LEVEL_O1, NULL);
  o.size = 8;
  assert_int_equal(tb_model_prepare(f->model, f->cpu, &o, &p, &r), TB_ERR_INVALID_ARGUMENT);
  TB_ASSERT_CONTAINS(tb_last_error(), "options->size is 8; set it to sizeof(tb_prepare_options)");
  /* a caller built against 0.1's struct (ending before cpu_fallback) is still served */
  o = options_at(TB_LEVEL_O1, NULL);
  o.size = offsetof(tb_prepare_options, cpu_fallback);
  o.cpu_fallback = true; /* beyond the caller's size: must not be read */
  TB_ASSERT_OK(tb_model_prepare(f->model, f->cpu, &o, &p, &r));
  assert_int_equal(r->level, TB_LEVEL_O1);
  tb_prepared_destroy(p);
  o.size = offsetof(tb_prepare_options, cpu_fallback) - 1;
  assert_int_equal(tb_model_prepare(f->model, f->cpu, &o, &p, &r), TB_ERR_INVALID_ARGUMENT);
  o = options_at(TB_LEVEL_O2, NULL);
  o.conv_algo = (tb_conv_algo)5;
  assert_int_equal(tb_model_prepare(f->model, f->cpu, &o, &p, &r), TB_ERR_INVALID_ARGUMENT);
  assert_null(p);
  assert_string_equal(tb_last_error(), "tb_model_prepare: unknown convolution algorithm 5 in conv_algo; valid ones are "
                                       "TB_CONV_ALGO_DEFAULT, _AUTO, _WINOGRAD, _DIRECT, _GEMM (tb_conv_algo_parse reads "
                                       "their names)");
  o.size = offsetof(tb_prepare_options, conv_algo); /* 0.2's struct: conv_algo beyond it is not read */
  TB_ASSERT_OK(tb_model_prepare(f->model, f->cpu, &o, &p, &r));
  tb_prepared_destroy(p);
  static const char *const bad_name[1] = {"bacth"};
  int64_t two = 2, minus = -1;
  o = options_at(TB_LEVEL_O0, &two);
  o.dim_names = bad_name;
  assert_int_equal(tb_model_prepare(f->model, f->cpu, &o, &p, &r), TB_ERR_INVALID_ARGUMENT);
  assert_string_equal(tb_last_error(), "tb_model_prepare: dimension 'bacth' is not a symbolic dimension of the model (it has: batch)");
  o = options_at(TB_LEVEL_O0, &minus);
  assert_int_equal(tb_model_prepare(f->model, f->cpu, &o, &p, &r), TB_ERR_INVALID_ARGUMENT);
  TB_ASSERT_CONTAINS(tb_last_error(), "dimension 'batch' = -1");
  assert_int_equal(tb_model_prepare(NULL, f->cpu, NULL, &p, &r), TB_ERR_INVALID_ARGUMENT);
  /* NULL options: O2 */
  TB_ASSERT_OK(tb_model_prepare(f->model, f->cpu, NULL, &p, &r));
  assert_int_equal(r->level, TB_LEVEL_O2);
  assert_int_equal(r->planned_peak_activation_bytes, 0); /* batch is only known at run time */
  tb_prepared_destroy(p);
}

static void precision_names(void **state) {
  (void)state;
  tb_precision p;
  TB_ASSERT_OK(tb_precision_parse("BF16", &p));
  assert_int_equal(p, TB_PRECISION_BF16);
  TB_ASSERT_OK(tb_precision_parse("auto", &p));
  assert_int_equal(p, TB_PRECISION_AUTO);
  assert_int_equal(tb_precision_parse("fp4", &p), TB_ERR_NOT_FOUND);
  assert_string_equal(tb_last_error(), "unknown precision 'fp4'; valid precisions are auto, fp32, bf16, fp16, fp8, tf32");
  assert_string_equal(tb_precision_name(TB_PRECISION_FP8), "fp8");
  assert_string_equal(tb_precision_name((tb_precision)42), "?");
}

static void conv_algo_names(void **state) {
  (void)state;
  tb_conv_algo a;
  TB_ASSERT_OK(tb_conv_algo_parse("Winograd", &a));
  assert_int_equal(a, TB_CONV_ALGO_WINOGRAD);
  TB_ASSERT_OK(tb_conv_algo_parse("default", &a));
  assert_int_equal(a, TB_CONV_ALGO_DEFAULT);
  assert_int_equal(tb_conv_algo_parse("im2col", &a), TB_ERR_NOT_FOUND);
  assert_string_equal(tb_last_error(),
                      "unknown convolution algorithm 'im2col'; valid ones are default, auto, winograd, direct, gemm");
  assert_int_equal(tb_conv_algo_parse(NULL, &a), TB_ERR_INVALID_ARGUMENT);
  assert_string_equal(tb_conv_algo_name(TB_CONV_ALGO_GEMM), "gemm");
  assert_string_equal(tb_conv_algo_name((tb_conv_algo)9), "?");
}

/* The method a 3x3 stride-1 convolution's prepared state runs at O2, as the profiler shows it, for each
 * conv_algo: on AVX-512 auto and winograd take Winograd, direct the direct convolution, gemm the implicit
 * GEMM; default follows TB_CONV_WINOGRAD / TB_CONV_DIRECT, and an explicit value wins over them. Without
 * AVX-512 (no Winograd or direct kernel on that path) every value runs the implicit GEMM. The output is
 * the same within fp32 rounding whatever the method. */
static void conv_algo_picks_the_method(void **state) {
  fixture *f = *state;
  tb_ir_model *m = tbt_ir_model(13);
  tb_graph *g = tb_graph_new(m, NULL, "conv");
  int64_t x_dims[4] = {1, 8, 28, 28}, w_dims[4] = {16, 8, 3, 3}, y_dims[4] = {1, 16, 26, 26};
  static float w[16 * 8 * 9], x[8 * 28 * 28];
  for (size_t i = 0; i < sizeof w / sizeof w[0]; i++) w[i] = (float)((i * 7) % 11) / 11.0f - 0.5f;
  for (size_t i = 0; i < sizeof x / sizeof x[0]; i++) x[i] = (float)((i * 5) % 13) / 13.0f - 0.5f;
  tbt_input(g, "x", TB_DTYPE_F32, 4, x_dims, NULL);
  tbt_const_f32(g, "W", 4, w_dims, w);
  tbt_node(g, "Conv", "conv", "x,W", "y");
  tbt_output(g, "y");
  tb_model *model = tbt_model_of(m);
  uint64_t features = tb_convert_features();
  bool avx512 = (features & TB_FEATURE_BIT(TB_FEATURE_AVX512F)) != 0;
  bool avx2 = (features & TB_FEATURE_BIT(TB_FEATURE_AVX2)) && (features & TB_FEATURE_BIT(TB_FEATURE_FMA));
  /* the method on AVX-512, and on AVX2 (Winograd and the direct convolution too, with the same rule: direct
   * wherever it fits); the portable path has the implicit GEMM only */
  static const struct {
    tb_conv_algo algo;
    const char *env_winograd, *method, *method_avx2;
  } cases[] = {
      {TB_CONV_ALGO_AUTO, NULL, ", winograd", ", winograd"},
      {TB_CONV_ALGO_WINOGRAD, "off", ", winograd", ", winograd"},
      {TB_CONV_ALGO_DIRECT, NULL, ", direct", ", direct"},
      {TB_CONV_ALGO_GEMM, NULL, ", implicit GEMM", ", implicit GEMM"},
      {TB_CONV_ALGO_DEFAULT, NULL, ", winograd", ", winograd"},
      {TB_CONV_ALGO_DEFAULT, "off", ", direct", ", direct"},
  };
  float first[16 * 26 * 26];
  for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++) {
    if (cases[c].env_winograd) setenv("TB_CONV_WINOGRAD", cases[c].env_winograd, 1);
    tb_prepare_options o = options_at(TB_LEVEL_O2, NULL);
    o.conv_algo = cases[c].algo;
    tb_prepared *p = NULL;
    TB_ASSERT_OK(tb_model_prepare(model, f->cpu, &o, &p, NULL));
    unsetenv("TB_CONV_WINOGRAD");
    TB_ASSERT_OK(tb_prepared_set_profiling(p, true));
    tb_tensor *in = tbt_f32(f->cpu, 4, x_dims, x), *y = NULL;
    const char *names[1] = {"x"};
    TB_ASSERT_OK(tb_prepared_run(p, 1, names, &in, 1, NULL, &y));
    size_t n = 0;
    const tb_node_profile *e = NULL;
    TB_ASSERT_OK(tb_prepared_profile(p, &n, &e));
    assert_int_equal(n, 1);
    const char *want = avx512 ? cases[c].method : avx2 ? cases[c].method_avx2 : ", implicit GEMM";
    size_t len = strlen(e[0].kernel), wl = strlen(want);
    if (len < wl || strcmp(e[0].kernel + len - wl, want) != 0)
      fail_msg("conv_algo %s (TB_CONV_WINOGRAD %s): the profiler shows kernel '%s', want it to end in '%s'",
               tb_conv_algo_name(cases[c].algo), cases[c].env_winograd ? cases[c].env_winograd : "unset", e[0].kernel, want);
    assert_int_equal(tb_tensor_ndim(y), 4);
    assert_memory_equal(tb_tensor_shape(y), y_dims, sizeof y_dims);
    const float *got = tb_tensor_host_data(y);
    if (c == 0) memcpy(first, got, sizeof first);
    for (size_t i = 0; i < sizeof first / sizeof first[0]; i++)
      if (!(fabsf(got[i] - first[i]) <= 1e-4f * (1.0f + fabsf(first[i]))))
        fail_msg("conv_algo %s: y[%zu] = %.9g, auto gave %.9g", tb_conv_algo_name(cases[c].algo), i, got[i], first[i]);
    tb_tensor_destroy(in);
    tb_tensor_destroy(y);
    tb_prepared_destroy(p);
  }
  tb_model_destroy(model);
}

static void result_json(void **state) {
  fixture *f = *state;
  int64_t batch = 3;
  tb_prepare_options o = options_at(TB_LEVEL_O2, &batch);
  tb_prepared *p = NULL;
  const tb_prepare_result *r = NULL;
  TB_ASSERT_OK(tb_model_prepare(f->model, f->cpu, &o, &p, &r));
  char *json = NULL;
  TB_ASSERT_OK(tb_prepare_result_to_json(r, &json));
  const char *keys[] = {"\"success\":\ttrue", "\"level\":\t\"O2\"", "\"precision\":\t\"fp32\"", "\"optimizations_applied\":",
                        "\"warnings\":",      "\"metrics\":",       "\"nodes_before\":\t4",    "\"nodes_after\":",
                        "\"fused_nodes\":",   "\"cpu_fallback_nodes\":\t0", "\"copies_inserted\":\t0", "\"fallback_ops\":\t[]",
                        "\"weight_bytes\":",  "\"planned_peak_activation_bytes\":", "\"prepare_ms\":"};
  for (size_t i = 0; i < sizeof keys / sizeof keys[0]; i++)
    if (!strstr(json, keys[i])) fail_msg("missing %s in %s", keys[i], json);
  tb_free(json);
  tb_prepare_result small = *r;
  small.size = 4;
  assert_int_equal(tb_prepare_result_to_json(&small, &json), TB_ERR_INVALID_ARGUMENT);
  assert_null(json);
  tb_prepared_destroy(p);
}

static void input_errors_name_the_input(void **state) {
  fixture *f = *state;
  int64_t batch = 2;
  tb_prepare_options o = options_at(TB_LEVEL_O0, &batch);
  tb_prepared *p = NULL;
  TB_ASSERT_OK(tb_model_prepare(f->model, f->cpu, &o, &p, NULL));
  float data[12] = {0};
  int64_t good[2] = {2, 3}, wide[2] = {2, 4}, flat[1] = {6};
  tb_tensor *x = tbt_f32(f->cpu, 2, good, data), *out = NULL, *t = NULL;
  const char *name_x[1] = {"x"}, *name_y[1] = {"y"};
  assert_int_equal(tb_prepared_run(p, 1, name_y, &x, 1, NULL, &out), TB_ERR_INVALID_ARGUMENT);
  assert_string_equal(tb_last_error(), "input 'y' is not an input of the model (its inputs: x)");
  assert_null(out);
  t = tbt_f32(f->cpu, 2, wide, data);
  assert_int_equal(tb_prepared_run(p, 1, name_x, &t, 1, NULL, &out), TB_ERR_INVALID_ARGUMENT);
  assert_string_equal(tb_last_error(), "input 'x': shape [2, 3] expected, got [2, 4]");
  tb_tensor_destroy(t);
  t = tbt_f32(f->cpu, 1, flat, data);
  assert_int_equal(tb_prepared_run(p, 1, name_x, &t, 1, NULL, &out), TB_ERR_INVALID_ARGUMENT);
  assert_string_equal(tb_last_error(), "input 'x': shape [2, 3] expected, got [6]");
  tb_tensor_destroy(t);
  TB_ASSERT_OK(tb_tensor_create(f->cpu, TB_DTYPE_F64, 2, good, &t));
  assert_int_equal(tb_prepared_run(p, 1, name_x, &t, 1, NULL, &out), TB_ERR_INVALID_ARGUMENT);
  assert_string_equal(tb_last_error(), "input 'x': dtype f32 expected, got f64");
  tb_tensor_destroy(t);
  assert_int_equal(tb_prepared_run(p, 0, NULL, NULL, 1, NULL, &out), TB_ERR_INVALID_ARGUMENT);
  assert_string_equal(tb_last_error(), "input 'x' was not given (the model's inputs: x)");
  tb_tensor *two[2] = {x, x};
  const char *twice[2] = {"x", "x"};
  assert_int_equal(tb_prepared_run(p, 2, twice, two, 1, NULL, &out), TB_ERR_INVALID_ARGUMENT);
  assert_string_equal(tb_last_error(), "input 'x' is given twice");
  const char *bad_out[1] = {"nope"};
  assert_int_equal(tb_prepared_run(p, 1, name_x, &x, 1, bad_out, &out), TB_ERR_INVALID_ARGUMENT);
  assert_string_equal(tb_last_error(), "output 'nope' is not an output of the model (its outputs: out)");
  tb_tensor *outs[2];
  assert_int_equal(tb_prepared_run(p, 1, name_x, &x, 2, NULL, outs), TB_ERR_INVALID_ARGUMENT);
  TB_ASSERT_CONTAINS(tb_last_error(), "2 outputs requested without names; the model has 1 (out)");
  const char *by_name[2] = {"out", "out"};
  TB_ASSERT_OK(tb_prepared_run(p, 1, name_x, &x, 2, by_name, outs));
  assert_ptr_not_equal(outs[0], outs[1]);
  assert_int_equal(tb_tensor_numel(outs[1]), 4);
  tb_tensor_destroy(outs[0]);
  tb_tensor_destroy(outs[1]);
  tb_tensor_destroy(x);
  tb_prepared_destroy(p);
}

static void symbolic_dims_at_run_time(void **state) {
  fixture *f = *state;
  tb_prepare_options o = options_at(TB_LEVEL_O1, NULL);
  tb_prepared *p = NULL;
  TB_ASSERT_OK(tb_model_prepare(f->model, f->cpu, &o, &p, NULL));
  run_small(p, f->cpu, 1);
  run_small(p, f->cpu, 7);
  run_small(p, f->cpu, 1);
  float data[8] = {0};
  int64_t wrong[2] = {2, 4};
  tb_tensor *t = tbt_f32(f->cpu, 2, wrong, data), *out = NULL;
  const char *name_x[1] = {"x"};
  assert_int_equal(tb_prepared_run(p, 1, name_x, &t, 1, NULL, &out), TB_ERR_INVALID_ARGUMENT);
  assert_string_equal(tb_last_error(), "input 'x': shape [batch, 3] expected, got [2, 4]");
  tb_tensor_destroy(t);
  tb_prepared_destroy(p);
}

static void model_destroyed_first(void **state) {
  (void)state;
  tb_model *model = tbt_model_of(tbt_small_model());
  tb_backend *cpu = NULL;
  TB_ASSERT_OK(tb_backend_create_kind(TB_BACKEND_CPU, 0, &cpu));
  tb_prepare_options o = options_at(TB_LEVEL_O1, NULL);
  tb_prepared *p = NULL;
  TB_ASSERT_OK(tb_model_prepare(model, cpu, &o, &p, NULL));
  tb_model_destroy(model);
  run_small(p, cpu, 3);
  tb_backend_destroy(cpu); /* the prepared model keeps the backend alive */
  tb_backend *other = NULL;
  TB_ASSERT_OK(tb_backend_create_kind(TB_BACKEND_CPU, 0, &other));
  run_small(p, other, 2);
  tb_prepared_destroy(p);
  tb_backend_destroy(other);
}

/* Once planned, a run allocates only its output: the activations live in the arena. */
static void plan_reuses_memory(void **state) {
  fixture *f = *state;
  int64_t batch = 4;
  tb_prepare_options o = options_at(TB_LEVEL_O0, &batch);
  tb_prepared *p = NULL;
  TB_ASSERT_OK(tb_model_prepare(f->model, f->cpu, &o, &p, NULL));
  float x[12] = {1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12};
  int64_t shape[2] = {4, 3};
  tb_tensor *in = tbt_f32(f->cpu, 2, shape, x), *out = NULL;
  const char *name_x[1] = {"x"};
  tb_memory_stats before = {.size = sizeof before}, after = {.size = sizeof after};
  TB_ASSERT_OK(tb_backend_memory_stats(f->cpu, &before));
  TB_ASSERT_OK(tb_prepared_run(p, 1, name_x, &in, 1, NULL, &out));
  TB_ASSERT_OK(tb_backend_memory_stats(f->cpu, &after));
  assert_int_equal(after.num_allocs - before.num_allocs, 1);
  tb_tensor_destroy(out);
  tb_tensor_destroy(in);
  tb_prepared_destroy(p);
}

static void unknown_operator(void **state) {
  (void)state;
  tb_ir_model *ir = tbt_ir_model(13);
  tb_graph *g = tb_graph_new(ir, NULL, "g");
  int64_t d = 2;
  tbt_input(g, "x", TB_DTYPE_F32, 1, &d, NULL);
  tbt_node(g, "FooOp", "x_foo", "x", "y");
  tbt_output(g, "y");
  tb_model *model = tbt_model_of(ir);
  tb_backend *cpu = NULL;
  TB_ASSERT_OK(tb_backend_create_kind(TB_BACKEND_CPU, 0, &cpu));
  tb_prepared *p = NULL;
  assert_int_equal(tb_model_prepare(model, cpu, NULL, &p, NULL), TB_ERR_UNSUPPORTED);
  assert_string_equal(tb_last_error(),
                      "node 'x_foo' (FooOp, domain '', opset 13): operator not supported; supported operators: run `tb ops`");
  assert_null(p);
  tb_model_destroy(model);
  tb_backend_destroy(cpu);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test_setup_teardown(each_level, setup, teardown),
      cmocka_unit_test_setup_teardown(options_checked, setup, teardown),
      cmocka_unit_test_setup_teardown(o3_without_bf16_instructions, setup, teardown),
      cmocka_unit_test_setup_teardown(profiling, setup, teardown),
      cmocka_unit_test_setup_teardown(subgraphs_checked_and_profiled, setup, teardown),
      cmocka_unit_test_setup_teardown(loop_body_checked_and_profiled, setup, teardown),
      cmocka_unit_test(precision_names),
      cmocka_unit_test_setup_teardown(result_json, setup, teardown),
      cmocka_unit_test_setup_teardown(input_errors_name_the_input, setup, teardown),
      cmocka_unit_test_setup_teardown(symbolic_dims_at_run_time, setup, teardown),
      cmocka_unit_test(model_destroyed_first),
      cmocka_unit_test_setup_teardown(plan_reuses_memory, setup, teardown),
      cmocka_unit_test(unknown_operator),
      cmocka_unit_test(conv_algo_names),
      cmocka_unit_test_setup_teardown(conv_algo_picks_the_method, setup, teardown),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
