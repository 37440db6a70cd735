/* Einsum's generic contraction on cuda:0 (kernels/72_einsum.cu's tb_cu_dm_einsum, host side cuda_ops_einsum.c) on the
 * fake libcuda with the emulator, against the CPU at O0: diagonals, traces, labels summed within one input with and
 * without a second input, an ellipsis that broadcasts, full sums, empty axes, on every dtype the CPU's Einsum takes
 * (f32, f64, f16, bf16, i64, i32, i16, i8, u8), each sum on the grouping its length picks (a thread, a warp or a block
 * per output: the launch's descriptor and geometry checked), twice on the device with the same bytes (the tree's order
 * is fixed). Tolerances: the data of every dtype but float64 makes every partial sum exact in double (multiples of
 * 2^-13 below 4 in magnitude, small integers), so the tree's order and the CPU's sequential one give the same double and
 * the outputs are compared byte for byte; float64 data with full 53-bit fractions is compared within the bound of
 * either order's rounding, (terms + 12) 2^-53 16 terms (|term| < 16; 3.3e-8 for the longest sum here, 4099 terms), float32
 * on the GEMM routes within 1e-6 + 1e-5 |cpu| (float sums). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "pass_test.h"
#include "test_cuda_util.h"
#include "test_cuda_values.h"
#include "test_engine_util.h"
#include "test_util.h"

static char cache_dir[64];

static int setup(void **state) { return tcv_setup(state, cache_dir, "tb_cueinsum"); }

static int teardown(void **state) {
  (void)state;
  return tcv_teardown(cache_dir);
}

enum { GROUP_THREAD = 0, GROUP_WARP = 1, GROUP_BLOCK = 2 };

typedef struct einsum_case {
  const char *eq;
  size_t n_in;
  size_t rank[2];
  int64_t dims[2][4];
  size_t terms; /* the terms each output sums */
  int group;    /* the grouping that length picks */
  bool gemm;    /* a float32 product the GEMM routes take */
} einsum_case;

static const einsum_case cases[] = {
    {"ii->i", 1, {2}, {{37, 37}}, 1, GROUP_THREAD, false},                      /* a diagonal, nothing summed */
    {"ii", 1, {2}, {{37, 37}}, 37, GROUP_WARP, false},                          /* the trace, one output */
    {"bii->bi", 1, {3}, {{3, 9, 9}}, 1, GROUP_THREAD, false},                   /* batched diagonals */
    {"ij->i", 1, {2}, {{5, 1500}}, 1500, GROUP_BLOCK, false},                   /* rows */
    {"ij->j", 1, {2}, {{1100, 3}}, 1100, GROUP_BLOCK, false},                   /* columns */
    {"abc->", 1, {3}, {{8, 16, 20}}, 2560, GROUP_BLOCK, false},                 /* a full sum */
    {"aib->i", 1, {3}, {{7, 5, 9}}, 63, GROUP_WARP, false},                     /* two labels summed around an output one */
    {"ij,jk->k", 2, {2, 2}, {{40, 7}, {7, 9}}, 280, GROUP_WARP, false},         /* i summed within the first input */
    {"ii,ij->j", 2, {2, 2}, {{6, 6}, {6, 6}}, 6, GROUP_THREAD, false},          /* a diagonal beside a product */
    {"ij,ij->", 2, {2, 2}, {{40, 60}, {40, 60}}, 2400, GROUP_BLOCK, true},      /* a dot */
    {"...i,...i->...", 2, {3, 3}, {{3, 1, 50}, {1, 4, 50}}, 50, GROUP_WARP, true}, /* an ellipsis broadcasting both ways */
    {"bij,bjj->bi", 2, {3, 3}, {{2, 5, 33}, {2, 33, 33}}, 33, GROUP_WARP, false}, /* a diagonal of the second input summed */
    {"ij->i", 1, {2}, {{3, 0}}, 0, GROUP_THREAD, false},                        /* an empty summed axis: zeros */
    {"ij,jk->k", 2, {2, 2}, {{0, 4}, {4, 6}}, 0, GROUP_THREAD, false},          /* an empty label summed within one input */
};

static const tb_dtype dtypes[] = {TB_DTYPE_F32, TB_DTYPE_F64, TB_DTYPE_F16, TB_DTYPE_BF16, TB_DTYPE_I64,
                                  TB_DTYPE_I32, TB_DTYPE_I16, TB_DTYPE_I8,  TB_DTYPE_U8};

/* n elements of dt from seed: floats in [-4, 4) (multiples of 2^-13, float64 with full fractions), the halves
 * rounded from those, signed integers in [-7, 7], uint8 in [0, 7] (int8 sums of 40 terms and more saturate, as on the
 * CPU). */
static void make_data(void *out, tb_dtype dt, size_t n, unsigned seed) {
  float *f = malloc(n * sizeof *f + 1);
  fill(f, n, seed);
  for (size_t i = 0; i < n; i++) {
    int64_t k = (int64_t)floorf(f[i] * 2.0f); /* -8 .. 7 */
    if (k < -7) k = -7;
    switch (dt) {
      case TB_DTYPE_F32: ((float *)out)[i] = f[i]; break;
      case TB_DTYPE_F64: ((double *)out)[i] = (double)f[i] + (double)(i % 977) * 1.0e-9 / 3.0; break;
      case TB_DTYPE_F16:
      case TB_DTYPE_BF16: to_halves(&f[i], 1, dt, (uint16_t *)out + i); break;
      case TB_DTYPE_I64: ((int64_t *)out)[i] = k; break;
      case TB_DTYPE_I32: ((int32_t *)out)[i] = (int32_t)k; break;
      case TB_DTYPE_I16: ((int16_t *)out)[i] = (int16_t)k; break;
      case TB_DTYPE_I8: ((int8_t *)out)[i] = (int8_t)(k * 4); break;
      default: ((uint8_t *)out)[i] = (uint8_t)(k < 0 ? -k : k); break;
    }
  }
  free(f);
}

static size_t numel(const int64_t *dims, size_t rank) {
  size_t n = 1;
  for (size_t d = 0; d < rank; d++) n *= (size_t)dims[d];
  return n;
}

static void expect_case(const einsum_case *c, tb_dtype dt) {
  tb_ir_model *ir = tbt_ir_model(12);
  tb_graph *g = tb_graph_new(ir, NULL, "einsum");
  const char *names[2] = {"a", "b"};
  void *data[2] = {NULL, NULL};
  feed in[2];
  for (size_t i = 0; i < c->n_in; i++) {
    tbt_input(g, names[i], dt, c->rank[i], c->dims[i], NULL);
    size_t n = numel(c->dims[i], c->rank[i]);
    data[i] = malloc(n * tb_dtype_size(dt) + 1);
    make_data(data[i], dt, n, 31u + (unsigned)i * 7u);
    in[i] = (feed){names[i], dt, c->rank[i], {0}, data[i]};
    memcpy(in[i].dims, c->dims[i], c->rank[i] * sizeof(int64_t));
  }
  int node = tbt_node(g, "Einsum", "einsum", c->n_in == 2 ? "a,b" : "a", "y");
  pt_attr_string(g, node, "equation", c->eq);
  tbt_output(g, "y");
  tb_model *m = tbt_model_of(ir);

  tb_backend *cpu = NULL, *cuda = open_cuda0();
  TB_ASSERT_OK(tb_backend_create("cpu", &cpu));
  tb_prepare_options o = {.size = sizeof o, .level = TB_LEVEL_O0};
  tb_prepared *pc = NULL, *pg = NULL;
  const tb_prepare_result *rg = NULL;
  TB_ASSERT_OK(tb_model_prepare(m, cpu, &o, &pc, NULL));
  TB_ASSERT_OK(tb_model_prepare(m, cuda, &o, &pg, &rg));
  if (rg->cpu_fallback_nodes) fail_msg("'%s' on %s: %s", c->eq, tb_dtype_name(dt), rg->fallback_ops[0]);
  tb_tensor *inputs[2] = {NULL}, *want = NULL, *got[2] = {NULL};
  for (size_t i = 0; i < c->n_in; i++) inputs[i] = make_input(cpu, &in[i]);
  TB_ASSERT_OK(tb_prepared_run(pc, c->n_in, names, inputs, 1, NULL, &want));
  for (int run = 0; run < 2; run++) {
    launch_reset();
    tb_status st = tb_prepared_run(pg, c->n_in, names, inputs, 1, NULL, &got[run]);
    if (st != TB_OK) fail_msg("'%s' on %s: %s: %s", c->eq, tb_dtype_name(dt), tb_status_str(st), tb_last_error());
  }
  /* the launch: the generic kernel on the grouping the sum's length picks (float32's products take the GEMM routes) */
  size_t outputs = (size_t)tb_tensor_numel(want);
  if (outputs > 0 && !(c->gemm && dt == TB_DTYPE_F32)) {
    assert_int_equal(fake_int("fake_cuda_launch_count"), 1);
    const fake_launch *l = launch_at(0);
    assert_string_equal(l->name, "tb_cu_dm_einsum");
    int32_t mode;
    memcpy(&mode, l->args + l->arg_offset[5] + 4, sizeof mode);
    int group = c->group;
    if ((mode >> 6 & 3) != group) fail_msg("'%s' on %s: grouping %d, want %d", c->eq, tb_dtype_name(dt), mode >> 6 & 3, group);
    assert_int_equal(mode >> 24 & 0xff, (int)dt);
    if (group == GROUP_BLOCK) { /* a block of 256 per output */
      assert_int_equal(l->block[0], 256);
      assert_int_equal(l->grid[0], outputs);
    } else if (group == GROUP_WARP) { /* a warp per output: 32 threads each */
      assert_true((size_t)l->grid[0] * l->block[0] >= (outputs * 32 < 256 ? outputs * 32 : 256));
      assert_int_equal(l->block[0] % 32, 0);
    }
  }
  if (emulator_here()) {
    /* run to run: the same bytes */
    size_t bytes = tb_tensor_nbytes(want);
    unsigned char *r0 = malloc(bytes + 1), *r1 = malloc(bytes + 1);
    TB_ASSERT_OK(tb_tensor_copy_to_host(got[0], r0, bytes));
    TB_ASSERT_OK(tb_tensor_copy_to_host(got[1], r1, bytes));
    assert_memory_equal(r0, r1, bytes);
    free(r0);
    free(r1);
    double atol = 0, rtol = 0;
    if (dt == TB_DTYPE_F64) atol = ((double)c->terms + 12) * ldexp(1.0, -53) * (double)c->terms * 16.0; /* |term| < 16 */
    if (dt == TB_DTYPE_F32 && c->gemm) atol = 1e-6, rtol = 1e-5;
    expect_same(want, got[0], 0, atol, rtol);
  }
  tb_tensor_destroy(want);
  for (int run = 0; run < 2; run++) tb_tensor_destroy(got[run]);
  for (size_t i = 0; i < c->n_in; i++) {
    tb_tensor_destroy(inputs[i]);
    free(data[i]);
  }
  tb_prepared_destroy(pc);
  tb_prepared_destroy(pg);
  tb_model_destroy(m);
  tb_backend_destroy(cuda);
  tb_backend_destroy(cpu);
  assert_int_equal(live_allocations(), 0);
}

static void every_dtype_and_grouping_matches_the_cpu(void **state) {
  (void)state;
  for (size_t k = 0; k < sizeof dtypes / sizeof dtypes[0]; k++)
    for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++) expect_case(&cases[c], dtypes[k]);
}

/* Longer float64 sums of full 53-bit fractions, whose order matters: the device's tree against the CPU's loop within
 * the bound, and the same bytes on every run. */
static void float64_sums_stay_within_the_bound(void **state) {
  (void)state;
  if (!emulator_here()) return;
  einsum_case c = {"ij->i", 1, {2}, {{3, 4099}}, 4099, GROUP_BLOCK, false};
  expect_case(&c, TB_DTYPE_F64);
  c = (einsum_case){"ii", 1, {2}, {{300, 300}}, 300, GROUP_WARP, false};
  expect_case(&c, TB_DTYPE_F64);
}

/* The kernel's launch failing: 700 and 2 (out of memory) as statuses naming the kernel and the node. */
static void a_failing_launch_is_a_status(void **state) {
  (void)state;
  setenv("TB_GRAPH_CAPTURE", "off", 1);
  tb_ir_model *ir = tbt_ir_model(12);
  tb_graph *g = tb_graph_new(ir, NULL, "einsum");
  const int64_t dims[2] = {6, 6};
  tbt_input(g, "a", TB_DTYPE_F64, 2, dims, NULL);
  int node = tbt_node(g, "Einsum", "einsum", "a", "y");
  pt_attr_string(g, node, "equation", "ii->i");
  tbt_output(g, "y");
  tb_model *m = tbt_model_of(ir);
  tb_backend *cpu = NULL, *cuda = open_cuda0();
  TB_ASSERT_OK(tb_backend_create("cpu", &cpu));
  tb_prepare_options o = {.size = sizeof o, .level = TB_LEVEL_O0};
  tb_prepared *pg = NULL;
  TB_ASSERT_OK(tb_model_prepare(m, cuda, &o, &pg, NULL));
  double a[36];
  for (int i = 0; i < 36; i++) a[i] = i;
  const feed in = {"a", TB_DTYPE_F64, 2, {6, 6}, a};
  tb_tensor *x = make_input(cpu, &in), *out = NULL;
  const char *names[1] = {"a"};
  const char *codes[2] = {"700", "2"};
  const tb_status want[2] = {TB_ERR_DRIVER, TB_ERR_OUT_OF_MEMORY};
  for (int k = 0; k < 2; k++) {
    setenv("FAKE_CUDA_LAUNCH_FAIL_AT", "1", 1);
    setenv("FAKE_CUDA_FAIL_CODE", codes[k], 1);
    launch_reset();
    assert_int_equal(tb_prepared_run(pg, 1, names, &x, 1, NULL, &out), want[k]);
    assert_null(out);
    TB_ASSERT_CONTAINS(tb_last_error(), "cuLaunchKernel of tb_cu_dm_einsum for node 'einsum' (Einsum)");
  }
  unsetenv("FAKE_CUDA_LAUNCH_FAIL_AT");
  unsetenv("FAKE_CUDA_FAIL_CODE");
  TB_ASSERT_OK(tb_prepared_run(pg, 1, names, &x, 1, NULL, &out));
  if (emulator_here()) {
    double y[6];
    TB_ASSERT_OK(tb_tensor_copy_to_host(out, y, sizeof y));
    for (int i = 0; i < 6; i++) assert_true(y[i] == 7.0 * i);
  }
  tb_tensor_destroy(out);
  tb_tensor_destroy(x);
  tb_prepared_destroy(pg);
  tb_model_destroy(m);
  tb_backend_destroy(cuda);
  tb_backend_destroy(cpu);
  unsetenv("TB_GRAPH_CAPTURE");
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test_setup_teardown(every_dtype_and_grouping_matches_the_cpu, setup, teardown),
      cmocka_unit_test_setup_teardown(float64_sums_stay_within_the_bound, setup, teardown),
      cmocka_unit_test_setup_teardown(a_failing_launch_is_a_status, setup, teardown),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
