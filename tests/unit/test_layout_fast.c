/* The level-2 layout kernels (src/backend/cpu/kernels/fast/layout/: Slice, Squeeze, Unsqueeze, Concat) in
 * an executor at level 2 against the same graph at level 0 (the reference kernels), byte for byte, and
 * against hand-computed values: Slice with constant starts/ends/axes/steps (the plan made at prepare, and
 * remade for another input shape), with runtime starts/ends (read per run), negative and clamped indices,
 * negative steps, empty results, opset-1 attributes; Squeeze with and without axes, Unsqueeze with negative
 * axes, Concat along every axis; errors with the reference's codes and the value named; and that the
 * executor picks these kernels at level 2. */
#include <string.h>
#include "backend/cpu/kernels/fast/layout/layout_kernels.h"
#include "core/convert_features.h"
#include "model/params.h"
#include "test_engine_util.h"
#include "test_kernel_util.h"
#include "test_op_harness.h"

static float X60[60];

/* The graph's executor at `level` on one thread. */
static tb_exec *exec_at(tb_graph *g, tb_backend *cpu, tb_kernel_level level) {
  TB_ASSERT_OK(tb_graph_sort(g));
  TB_ASSERT_OK(tb_graph_check(g));
  TB_ASSERT_OK(tb_graph_infer(g));
  TB_ASSERT_OK(tb_graph_parse_params(g));
  tb_exec *e = NULL;
  TB_ASSERT_OK(tb_exec_create(g, cpu, level, tb_convert_features(), 1, &e));
  return e;
}

/* Run g's one output at level 0 and level 2 on these inputs: the same bytes; returns the level-2 output
 * (the caller destroys it) and, when want_kernel is given, asserts node 0 ran it. */
static tb_tensor *run_both(tb_graph *g, tb_backend *cpu, tb_tensor *const *in, const tb_kernel *want_kernel,
                           const char *want_method) {
  tb_exec *ref = exec_at(g, cpu, TB_KERNEL_REFERENCE), *fast = exec_at(g, cpu, TB_KERNEL_FAST);
  tb_tensor *r = NULL, *f = NULL;
  TB_ASSERT_OK(tb_exec_run(ref, in, &r));
  for (int run = 0; run < 2; run++) { /* the second run: the settled node (no inference) */
    tb_tensor_destroy(f);
    f = NULL;
    TB_ASSERT_OK(tb_exec_run(fast, in, &f));
    toh_assert_tensor(f, tb_tensor_dtype(r), tb_tensor_ndim(r), tb_tensor_shape(r));
    if (tb_tensor_nbytes(r)) assert_memory_equal(tb_tensor_host_data(f), tb_tensor_host_data(r), tb_tensor_nbytes(r));
  }
  int side = 0;
  if (want_kernel) assert_ptr_equal(tb_exec_node_kernel(fast, 0, &side), want_kernel);
  if (want_method) {
    const char *m = tb_exec_node_method(fast, 0);
    assert_non_null(m);
    assert_string_equal(m, want_method);
  }
  tb_tensor_destroy(r);
  tb_exec_destroy(ref);
  tb_exec_destroy(fast);
  return f;
}

/* Slice of x [3, 4, 5] (X60) by starts/ends/axes/steps (n entries; axes/steps NULL: absent), constants or
 * graph inputs; returns the level-2 output after checking it against level 0. */
static tb_tensor *slice(const int64_t *starts, const int64_t *ends, const int64_t *axes, const int64_t *steps, size_t n,
                        bool constant, const char *want_method) {
  tb_ir_model *m = tbt_ir_model(13);
  tb_graph *g = tb_graph_new(m, NULL, "main");
  int64_t xd[3] = {3, 4, 5}, nd[1] = {(int64_t)n};
  tbt_input(g, "x", TB_DTYPE_F32, 3, xd, NULL);
  const int64_t *vals[4] = {starts, ends, axes, steps};
  const char *names[4] = {"s", "e", "a", "st"};
  for (int i = 0; i < 4; i++) {
    if (!vals[i]) continue;
    if (constant) tbt_const_i64(g, names[i], 1, nd, vals[i]);
    else tbt_input(g, names[i], TB_DTYPE_I64, 1, nd, NULL);
  }
  char ins[40];
  snprintf(ins, sizeof ins, "x,s,e,%s,%s", axes ? "a" : "", steps ? "st" : "");
  tbt_node(g, "Slice", "sl", ins, "y");
  tbt_output(g, "y");
  tb_backend *cpu = NULL;
  TB_ASSERT_OK(tb_backend_create_kind(TB_BACKEND_CPU, 0, &cpu));
  tb_tensor *in[5] = {tbt_f32(cpu, 3, xd, X60)};
  size_t k = 1;
  for (int i = 0; i < 4 && !constant; i++)
    if (vals[i]) in[k++] = toh_host_tensor(cpu, TB_DTYPE_I64, 1, nd, vals[i]);
  tb_tensor *out = run_both(g, cpu, in, &tb_kernel_slice_fast, want_method);
  for (size_t i = 0; i < k; i++) tb_tensor_destroy(in[i]);
  tb_backend_destroy(cpu);
  tb_ir_model_destroy(m);
  return out;
}

/* The values of y (f32) are x's at these flat indices. */
static void expect_picks(tb_tensor *y, size_t ndim, const int64_t *shape, const int *picks, size_t n) {
  toh_assert_tensor(y, TB_DTYPE_F32, ndim, shape);
  const float *v = tb_tensor_host_data(y);
  for (size_t i = 0; i < n; i++) assert_float_equal(v[i], X60[picks[i]], 0);
  tb_tensor_destroy(y);
}

static void slice_constant_and_runtime(void **state) {
  (void)state;
  for (int c = 0; c < 2; c++) {
    const char *planned = c ? "plan made at prepare" : NULL;
    /* rows 1..2, columns 0, 2 (step 2 up to 4) of the middle dim */
    tb_tensor *y = slice((int64_t[]){1, 0}, (int64_t[]){3, 4}, (int64_t[]){0, 1}, (int64_t[]){1, 2}, 2, c, planned);
    int p1[] = {20, 21, 22, 23, 24, 30, 31, 32, 33, 34, 40, 41, 42, 43, 44, 50, 51, 52, 53, 54};
    expect_picks(y, 3, (int64_t[]){2, 2, 5}, p1, 20);
    /* negative indices and a negative step: last dim from -1 down to (not including) -4 */
    y = slice((int64_t[]){-1}, (int64_t[]){-4}, (int64_t[]){-1}, (int64_t[]){-1}, 1, c, planned);
    toh_assert_tensor(y, TB_DTYPE_F32, 3, (int64_t[]){3, 4, 3});
    assert_float_equal(((float *)tb_tensor_host_data(y))[0], X60[4], 0);
    assert_float_equal(((float *)tb_tensor_host_data(y))[2], X60[2], 0);
    tb_tensor_destroy(y);
    /* clamped: INT64_MIN..INT64_MAX is everything; an end below -dim with step -2 runs to the first element */
    y = slice((int64_t[]){INT64_MIN}, (int64_t[]){INT64_MAX}, (int64_t[]){1}, NULL, 1, c, planned);
    toh_assert_tensor(y, TB_DTYPE_F32, 3, (int64_t[]){3, 4, 5});
    tb_tensor_destroy(y);
    y = slice((int64_t[]){100}, (int64_t[]){-100}, (int64_t[]){2}, (int64_t[]){-2}, 1, c, planned);
    int p2[] = {4, 2, 0};
    expect_picks(y, 3, (int64_t[]){3, 4, 3}, p2, 3);
    /* empty results: start past the end, and a start after the end with step 1 */
    y = slice((int64_t[]){7}, (int64_t[]){9}, (int64_t[]){0}, NULL, 1, c, planned);
    toh_assert_tensor(y, TB_DTYPE_F32, 3, (int64_t[]){0, 4, 5});
    tb_tensor_destroy(y);
    y = slice((int64_t[]){3, 2}, (int64_t[]){1, 4}, (int64_t[]){2, 1}, NULL, 2, c, planned);
    toh_assert_tensor(y, TB_DTYPE_F32, 3, (int64_t[]){3, 2, 0});
    tb_tensor_destroy(y);
    /* no axes: 0..n-1 */
    y = slice((int64_t[]){2, 1}, (int64_t[]){3, 2}, NULL, NULL, 2, c, planned);
    int p3[] = {45, 46, 47, 48, 49};
    expect_picks(y, 3, (int64_t[]){1, 1, 5}, p3, 5);
  }
}

/* A plan made at prepare for one shape is not used for another: x's first dim is symbolic, the runs give 3
 * and then 2 rows; both against hand values. Opset-1 attributes take the same path. */
static void slice_plan_follows_shape(void **state) {
  (void)state;
  for (int opset1 = 0; opset1 < 2; opset1++) {
    tb_ir_model *m = tbt_ir_model(opset1 ? 9 : 13);
    tb_graph *g = tb_graph_new(m, NULL, "main");
    int64_t xd[2] = {-1, 4}, one[1] = {1};
    tbt_input(g, "x", TB_DTYPE_F32, 2, xd, (const char *[]){"n", NULL});
    if (opset1) {
      tb_attr at[3] = {TOH_INTS_N("starts", ((const int64_t[]){-3}), 1),
                       TOH_INTS_N("ends", ((const int64_t[]){1000}), 1), TOH_INTS_N("axes", ((const int64_t[]){1}), 1)};
      int x = tb_graph_find(g, "x"), y = tb_graph_value(g, "y");
      tb_graph_add_node(g, "sl", "Slice", "", &x, 1, &y, 1, at, 3);
    } else {
      tbt_const_i64(g, "s", 1, one, (int64_t[]){-3});
      tbt_const_i64(g, "e", 1, one, (int64_t[]){1000});
      tbt_const_i64(g, "a", 1, one, (int64_t[]){1});
      tbt_node(g, "Slice", "sl", "x,s,e,a", "y");
    }
    tbt_output(g, "y");
    tb_backend *cpu = NULL;
    TB_ASSERT_OK(tb_backend_create_kind(TB_BACKEND_CPU, 0, &cpu));
    tb_exec *e = exec_at(g, cpu, TB_KERNEL_FAST);
    for (int rows = 3; rows >= 2; rows--) {
      int64_t s[2] = {rows, 4};
      tb_tensor *in = tbt_f32(cpu, 2, s, X60), *y = NULL;
      TB_ASSERT_OK(tb_exec_run(e, &in, &y));
      float want[9];
      for (int r = 0; r < rows; r++)
        for (int k = 0; k < 3; k++) want[r * 3 + k] = X60[r * 4 + 1 + k];
      tbt_expect_f32(y, 2, (int64_t[]){rows, 3}, want);
      int side = 0;
      assert_ptr_equal(tb_exec_node_kernel(e, 0, &side), &tb_kernel_slice_fast);
      tb_tensor_destroy(y);
      tb_tensor_destroy(in);
    }
    tb_exec_destroy(e);
    tb_backend_destroy(cpu);
    tb_ir_model_destroy(m);
  }
}

/* Runtime starts/ends that break the rules: the reference's code and sentence, from the level-2 kernel. */
static void slice_errors(void **state) {
  (void)state;
  tb_ir_model *m = tbt_ir_model(13);
  tb_graph *g = tb_graph_new(m, NULL, "main");
  int64_t xd[1] = {10}, nd[1] = {1}, two[1] = {2}, any[1] = {-1};
  tbt_input(g, "x", TB_DTYPE_F32, 1, xd, NULL);
  tbt_input(g, "s", TB_DTYPE_I64, 1, any, (const char *[]){"k"});
  tbt_input(g, "e", TB_DTYPE_I64, 1, any, (const char *[]){"k2"});
  tbt_input(g, "st", TB_DTYPE_I64, 1, any, (const char *[]){"k3"});
  tbt_node(g, "Slice", "sl", "x,s,e,,st", "y");
  tbt_output(g, "y");
  tb_backend *cpu = NULL;
  TB_ASSERT_OK(tb_backend_create_kind(TB_BACKEND_CPU, 0, &cpu));
  tb_exec *e = exec_at(g, cpu, TB_KERNEL_FAST);
  tb_tensor *in[4] = {tbt_f32(cpu, 1, xd, X60), toh_host_tensor(cpu, TB_DTYPE_I64, 1, nd, (int64_t[]){0}),
                      toh_host_tensor(cpu, TB_DTYPE_I64, 1, nd, (int64_t[]){5}),
                      toh_host_tensor(cpu, TB_DTYPE_I64, 1, nd, (int64_t[]){0})};
  tb_tensor *y = NULL;
  assert_int_equal(tb_exec_run(e, in, &y), TB_ERR_MODEL);
  assert_non_null(strstr(tb_last_error(), "the step for axis 0 is 0"));
  assert_non_null(strstr(tb_last_error(), "'sl'"));
  tb_tensor_destroy(in[1]);
  in[1] = toh_host_tensor(cpu, TB_DTYPE_I64, 1, two, (int64_t[]){0, 1});
  tb_tensor_destroy(in[3]);
  in[3] = toh_host_tensor(cpu, TB_DTYPE_I64, 1, nd, (int64_t[]){1});
  tb_status st = tb_exec_run(e, in, &y);
  assert_int_equal(st, TB_ERR_MODEL);
  assert_non_null(strstr(tb_last_error(), "starts has 2 entries but"));
  for (int i = 0; i < 4; i++) tb_tensor_destroy(in[i]);
  tb_exec_destroy(e);
  tb_backend_destroy(cpu);
  tb_ir_model_destroy(m);
}

/* op(x [axes]) with x of shape xd; axes a constant input (opset 13) or absent. */
static tb_tensor *squeeze_like(const char *op, size_t xn, const int64_t *xd, const int64_t *axes, size_t n_axes,
                               const tb_kernel *want) {
  tb_ir_model *m = tbt_ir_model(13);
  tb_graph *g = tb_graph_new(m, NULL, "main");
  int64_t nd[1] = {(int64_t)n_axes};
  tbt_input(g, "x", TB_DTYPE_F32, xn, xd, NULL);
  if (axes) tbt_const_i64(g, "a", 1, nd, axes);
  tbt_node(g, op, "sq", axes ? "x,a" : "x", "y");
  tbt_output(g, "y");
  tb_backend *cpu = NULL;
  TB_ASSERT_OK(tb_backend_create_kind(TB_BACKEND_CPU, 0, &cpu));
  tb_tensor *in[1] = {tbt_f32(cpu, xn, xd, X60)};
  tb_tensor *out = run_both(g, cpu, in, want, NULL);
  tb_tensor_destroy(in[0]);
  tb_backend_destroy(cpu);
  tb_ir_model_destroy(m);
  return out;
}

static void squeeze_unsqueeze_concat(void **state) {
  (void)state;
  tb_tensor *y = squeeze_like("Squeeze", 4, (int64_t[]){1, 3, 1, 20}, (int64_t[]){-2}, 1, &tb_kernel_squeeze_fast);
  toh_assert_tensor(y, TB_DTYPE_F32, 3, (int64_t[]){1, 3, 20});
  assert_memory_equal(tb_tensor_host_data(y), X60, sizeof X60);
  tb_tensor_destroy(y);
  y = squeeze_like("Squeeze", 4, (int64_t[]){1, 3, 1, 20}, NULL, 0, &tb_kernel_squeeze_fast); /* every 1 */
  toh_assert_tensor(y, TB_DTYPE_F32, 2, (int64_t[]){3, 20});
  tb_tensor_destroy(y);
  y = squeeze_like("Unsqueeze", 2, (int64_t[]){3, 20}, (int64_t[]){0, -1}, 2, &tb_kernel_unsqueeze_fast);
  toh_assert_tensor(y, TB_DTYPE_F32, 4, (int64_t[]){1, 3, 20, 1});
  assert_memory_equal(tb_tensor_host_data(y), X60, sizeof X60);
  tb_tensor_destroy(y);
  for (int axis = -3; axis < 3; axis++) { /* Concat of [3,4,5] pieces along every axis, negative ones too */
    tb_ir_model *m = tbt_ir_model(13);
    tb_graph *g = tb_graph_new(m, NULL, "main");
    int64_t a[3] = {3, 4, 5}, b[3] = {3, 4, 5};
    b[axis < 0 ? axis + 3 : axis] = 2;
    tbt_input(g, "a", TB_DTYPE_F32, 3, a, NULL);
    tbt_input(g, "b", TB_DTYPE_F32, 3, b, NULL);
    tb_attr at = {.name = "axis", .type = TB_ATTR_INT, .i = axis};
    int ins[3] = {tb_graph_find(g, "a"), tb_graph_find(g, "b"), tb_graph_find(g, "a")}, out = tb_graph_value(g, "y");
    tb_graph_add_node(g, "cat", "Concat", "", ins, 3, &out, 1, &at, 1);
    tbt_output(g, "y");
    tb_backend *cpu = NULL;
    TB_ASSERT_OK(tb_backend_create_kind(TB_BACKEND_CPU, 0, &cpu));
    tb_tensor *in[2] = {tbt_f32(cpu, 3, a, X60), tbt_f32(cpu, 3, b, X60 + 7)};
    y = run_both(g, cpu, in, &tb_kernel_concat_fast, NULL);
    int64_t want[3] = {3, 4, 5};
    int ax = axis < 0 ? axis + 3 : axis;
    want[ax] = a[ax] * 2 + b[ax];
    toh_assert_tensor(y, TB_DTYPE_F32, 3, want);
    tb_tensor_destroy(y);
    tb_tensor_destroy(in[0]);
    tb_tensor_destroy(in[1]);
    tb_backend_destroy(cpu);
    tb_ir_model_destroy(m);
  }
}

/* The kernels' own checks at run time, where the shapes are only known then. */
static void squeeze_errors(void **state) {
  (void)state;
  tb_ir_model *m = tbt_ir_model(13);
  tb_graph *g = tb_graph_new(m, NULL, "main");
  int64_t xd[2] = {-1, 3}, one[1] = {1};
  tbt_input(g, "x", TB_DTYPE_F32, 2, xd, (const char *[]){"n", NULL});
  tbt_const_i64(g, "a", 1, one, (int64_t[]){0});
  tbt_node(g, "Squeeze", "sq", "x,a", "y");
  tbt_output(g, "y");
  tb_backend *cpu = NULL;
  TB_ASSERT_OK(tb_backend_create_kind(TB_BACKEND_CPU, 0, &cpu));
  tb_exec *e = exec_at(g, cpu, TB_KERNEL_FAST);
  tb_tensor *in = tbt_f32(cpu, 2, (int64_t[]){2, 3}, X60), *y = NULL;
  assert_int_equal(tb_exec_run(e, &in, &y), TB_ERR_MODEL);
  assert_non_null(strstr(tb_last_error(), "cannot squeeze axis 0 of size 2 (it must be 1)"));
  tb_tensor_destroy(in);
  tb_exec_destroy(e);
  tb_backend_destroy(cpu);
  tb_ir_model_destroy(m);
}

/* Concat's run-time check through the operator's rule (tb_rule_concat), in its single wording. */
static void concat_errors(void **state) {
  (void)state;
  tb_ir_model *m = tbt_ir_model(13);
  tb_graph *g = tb_graph_new(m, NULL, "main");
  int64_t xd[2] = {-1, 3};
  tbt_input(g, "a", TB_DTYPE_F32, 2, xd, (const char *[]){"n", NULL});
  tbt_input(g, "b", TB_DTYPE_F32, 2, xd, (const char *[]){"m", NULL});
  tb_attr at = {.name = "axis", .type = TB_ATTR_INT, .i = 1};
  int ins[2] = {tb_graph_find(g, "a"), tb_graph_find(g, "b")}, out = tb_graph_value(g, "y");
  tb_graph_add_node(g, "cat", "Concat", "", ins, 2, &out, 1, &at, 1);
  tbt_output(g, "y");
  tb_backend *cpu = NULL;
  TB_ASSERT_OK(tb_backend_create_kind(TB_BACKEND_CPU, 0, &cpu));
  tb_exec *e = exec_at(g, cpu, TB_KERNEL_FAST);
  tb_tensor *in[2] = {tbt_f32(cpu, 2, (int64_t[]){2, 3}, X60), tbt_f32(cpu, 2, (int64_t[]){4, 3}, X60)}, *y = NULL;
  assert_int_equal(tb_exec_run(e, in, &y), TB_ERR_MODEL);
  assert_non_null(
      strstr(tb_last_error(), "input 1 has size 4 on dim 0 where another input has 2; only axis 1 may differ"));
  tb_tensor_destroy(in[0]);
  tb_tensor_destroy(in[1]);
  tb_exec_destroy(e);
  tb_backend_destroy(cpu);
  tb_ir_model_destroy(m);
}

int main(void) {
  for (int i = 0; i < 60; i++) X60[i] = (float)(i * 3 - 50) * 0.25f;
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(slice_constant_and_runtime), cmocka_unit_test(slice_plan_follows_shape),
      cmocka_unit_test(slice_errors), cmocka_unit_test(squeeze_unsqueeze_concat), cmocka_unit_test(squeeze_errors),
      cmocka_unit_test(concat_errors),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
