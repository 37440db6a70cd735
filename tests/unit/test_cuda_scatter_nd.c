/* ScatterND with a reduction on the emulated cuda:0, parallel over the index rows (kernels/73_scatter_nd.cu through
 * cuda_ops_layout.c): add, mul, min and max compared byte for byte with the CPU backend at O0 on every dtype the
 * kernels take (float32, float64, float16, bfloat16, int8, int16, int32, int64, uint8, bool), with rows that address
 * single elements (k = rank: 200 rows, distinct targets and targets hit up to a dozen times, negative indices) and
 * slices (k 1 and 2), float updates whose sums and products depend on the order (large and small magnitudes, NaN,
 * -0 beside +0). The fake driver's records say which kernels ran (clear, mark, apply; a single row the ordered
 * kernel), also without the emulator. A bad index: the CPU's status and sentence; a failing launch: a status.
 * Without the emulator (no C++ compiler) the value tests print why and check nothing. */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "core/convert_scalar.h"
#include "pass_test.h"
#include "test_cuda_values.h"
#include "test_util.h"

static char cache_dir[64];

static int setup(void **state) { return tcv_setup(state, cache_dir, "tb_cusnd"); }

static int teardown(void **state) {
  (void)state;
  return tcv_teardown(cache_dir);
}

static const char *const reductions[4] = {"add", "mul", "min", "max"};

/* n elements of dtype dt from seed: floats of mixed magnitudes (sums that round differently by order) with NaN,
 * +-0 and +-inf sprinkled (none when plain), integers over their range (wrapping sums and products), bool 0 / 1. */
static void *make_values(tb_dtype dt, size_t n, unsigned seed, bool plain) {
  unsigned char *buf = malloc(n * tb_dtype_size(dt) + 1);
  for (size_t i = 0; i < n; i++) {
    unsigned s = ((unsigned)i + 1) * 2654435761u ^ seed * 97u;
    s ^= s >> 15;
    s *= 2246822519u;
    s ^= s >> 13;
    double v = ((double)(s % 20001) - 10000.0) / 4096.0; /* [-2.44, 2.44], 12 fraction bits */
    if (s % 17 == 0) v *= 65536.0;
    if (!plain) {
      if (s % 53 == 1) v = NAN;
      else if (s % 53 == 2) v = -0.0;
      else if (s % 53 == 3) v = 0.0;
    }
    int64_t w = (int64_t)(s >> 3) - (int64_t)(1u << 28);
    switch (dt) {
      case TB_DTYPE_F32: ((float *)buf)[i] = (float)v; break;
      case TB_DTYPE_F64: ((double *)buf)[i] = v * (1.0 + 1e-9 * (double)(s % 1000)); break;
      case TB_DTYPE_F16: ((uint16_t *)buf)[i] = tb_f32_to_f16_ref((float)(v / 64.0)); break;
      case TB_DTYPE_BF16: ((uint16_t *)buf)[i] = tb_f32_to_bf16_ref((float)v); break;
      case TB_DTYPE_I8: ((int8_t *)buf)[i] = (int8_t)w; break;
      case TB_DTYPE_U8: ((uint8_t *)buf)[i] = (uint8_t)w; break;
      case TB_DTYPE_I16: ((int16_t *)buf)[i] = (int16_t)w; break;
      case TB_DTYPE_I32: ((int32_t *)buf)[i] = (int32_t)(w * 40503); break;
      case TB_DTYPE_I64: ((int64_t *)buf)[i] = w * 0x100000001ll; break;
      case TB_DTYPE_BOOL: ((uint8_t *)buf)[i] = (uint8_t)(s >> 7 & 1); break;
      default: fail_msg("no values for %s", tb_dtype_name(dt));
    }
  }
  return buf;
}

typedef struct nd_case {
  size_t rank;
  int64_t shape[3];
  int64_t k, rows;
  const int64_t *indices; /* rows x k */
} nd_case;

/* ScatterND with each reduction over data and updates of dtype dt (graph inputs) and c's indices (a constant), on the
 * CPU and the emulated cuda:0, compared byte for byte; returns after checking which kernels ran. */
static void reductions_match_the_cpu(tb_dtype dt, const nd_case *c, unsigned seed) {
  size_t n = 1, slice = 1;
  for (size_t i = 0; i < c->rank; i++) n *= (size_t)c->shape[i];
  for (size_t i = (size_t)c->k; i < c->rank; i++) slice *= (size_t)c->shape[i];
  size_t un = (size_t)c->rows * slice;
  void *x = make_values(dt, n, seed, false), *u = make_values(dt, un, seed + 1, false);
  int64_t ushape[4] = {c->rows}, urank = 1;
  for (size_t i = (size_t)c->k; i < c->rank; i++) ushape[urank++] = c->shape[i];
  tb_ir_model *ir = tbt_ir_model(18);
  tb_graph *g = tb_graph_new(ir, NULL, "scatter_nd");
  tbt_input(g, "x", dt, c->rank, c->shape, NULL);
  tbt_input(g, "u", dt, (size_t)urank, ushape, NULL);
  tbt_const_i64(g, "idx", 2, (const int64_t[]){c->rows, c->k}, c->indices);
  for (int r = 0; r < 4; r++) {
    char name[16];
    snprintf(name, sizeof name, "snd_%s", reductions[r]);
    int node = tbt_node(g, "ScatterND", name, "x,idx,u", name);
    pt_attr_string(g, node, "reduction", reductions[r]);
    tbt_output(g, name);
  }
  tb_model *model = tbt_model_of(ir);
  feed in[2] = {{"x", dt, c->rank, {0}, x}, {"u", dt, (size_t)urank, {0}, u}};
  memcpy(in[0].dims, c->shape, c->rank * sizeof *c->shape);
  memcpy(in[1].dims, ushape, (size_t)urank * sizeof *ushape);
  size_t device_nodes = 0, fallbacks = 0;
  launch_reset();
  compare_runs(model, 2, in, 4, TB_LEVEL_O0, 0, 0, &device_nodes, &fallbacks);
  assert_int_equal(fallbacks, 0);
  assert_int_equal(device_nodes, 4);
  assert_int_equal(launches_of("tb_cu_dm_scatter_nd_apply"), c->rows > 1 ? 4 : 0);
  assert_int_equal(launches_of("tb_cu_dm_scatter_nd_mark"), c->rows > 1 ? 4 : 0);
  assert_int_equal(launches_of("tb_cu_dm_scatter_nd_reduce"), c->rows > 1 ? 0 : 4);
  tb_model_destroy(model);
  free(x);
  free(u);
}

static const tb_dtype every_dtype[] = {TB_DTYPE_F32, TB_DTYPE_F64, TB_DTYPE_F16, TB_DTYPE_BF16, TB_DTYPE_I8,
                                       TB_DTYPE_I16, TB_DTYPE_I32, TB_DTYPE_I64, TB_DTYPE_U8, TB_DTYPE_BOOL};

/* Rows of single elements of a [13, 7] data: the first 60 distinct, the next 140 over 20 targets (up to a dozen rows
 * each, spread through the rows), some given as negative indices. */
static void single_elements_match_the_cpu(void **state) {
  (void)state;
  if (!emulator_here()) return;
  static int64_t idx[200 * 2];
  for (int m = 0; m < 200; m++) {
    int t = m < 60 ? m : (m * 7919) % 20 * 4;
    idx[2 * m] = t / 7 - (m % 3 == 0 ? 13 : 0);
    idx[2 * m + 1] = t % 7 - (m % 5 == 0 ? 7 : 0);
  }
  const nd_case c = {2, {13, 7}, 2, 200, idx};
  for (size_t i = 0; i < sizeof every_dtype / sizeof every_dtype[0]; i++) reductions_match_the_cpu(every_dtype[i], &c, 3 + (unsigned)i);
}

/* Rows of slices: k 1 of [5, 4, 6] (slices of 24, rows 0 and 3 repeated), k 2 (slices of 6), and one row (the
 * ordered kernel). */
static void slices_match_the_cpu(void **state) {
  (void)state;
  if (!emulator_here()) return;
  static const int64_t k1[9] = {0, 3, -5, 2, 0, 4, -2, 1, 3};
  static const int64_t k2[12 * 2] = {0, 1, 4, 3, 0, 1, -5, -3, 2, 2, 0, 1, 4, -1, 3, 0, 2, 2, 0, 1, 1, 1, 2, 2};
  static const int64_t one[2] = {3, 2};
  const nd_case cases[3] = {{3, {5, 4, 6}, 1, 9, k1}, {3, {5, 4, 6}, 2, 12, k2}, {3, {5, 4, 6}, 2, 1, one}};
  static const tb_dtype some[] = {TB_DTYPE_F32, TB_DTYPE_F16, TB_DTYPE_I64, TB_DTYPE_U8};
  for (size_t c = 0; c < 3; c++)
    for (size_t i = 0; i < sizeof some / sizeof some[0]; i++) reductions_match_the_cpu(some[i], &cases[c], 40 + (unsigned)(c * 5 + i));
}

/* The three launches over the rows (clear over 2 x targets, mark over the rows, apply over rows x slice), with or
 * without the emulator; with it, a bad index is the CPU's status and sentence, read from the device's flag; a failing
 * launch a status naming the node; nothing leaked. */
static void launches_and_errors(void **state) {
  (void)state;
  setenv("TB_GRAPH_CAPTURE", "off", 1);
  tb_backend *cpu = NULL, *cuda = open_cuda0();
  TB_ASSERT_OK(tb_backend_create("cpu", &cpu));
  tb_ir_model *ir = tbt_ir_model(18);
  tb_graph *g = tb_graph_new(ir, NULL, "errors");
  tbt_input(g, "x", TB_DTYPE_F32, 2, (const int64_t[]){13, 7}, NULL);
  tbt_input(g, "u", TB_DTYPE_F32, 1, (const int64_t[]){300}, NULL);
  tbt_input(g, "idx", TB_DTYPE_I64, 2, (const int64_t[]){300, 2}, NULL);
  int node = tbt_node(g, "ScatterND", "snd", "x,idx,u", "y");
  pt_attr_string(g, node, "reduction", "add");
  tbt_output(g, "y");
  tb_model *model = tbt_model_of(ir);
  tb_prepare_options o = {.size = sizeof o, .level = TB_LEVEL_O0};
  tb_prepared *p = NULL;
  TB_ASSERT_OK(tb_model_prepare(model, cuda, &o, &p, NULL));
  static float x[13 * 7], u[300];
  static int64_t idx[300 * 2];
  for (int m = 0; m < 300; m++) idx[2 * m] = m % 13, idx[2 * m + 1] = m % 7;
  tb_tensor *in[3] = {tbt_f32(cpu, 2, (const int64_t[]){13, 7}, x), tbt_f32(cpu, 1, (const int64_t[]){300}, u), NULL}, *out = NULL;
  TB_ASSERT_OK(tb_tensor_create(cpu, TB_DTYPE_I64, 2, (const int64_t[]){300, 2}, &in[2]));
  TB_ASSERT_OK(tb_tensor_copy_from_host(in[2], idx, sizeof idx));
  const char *names[3] = {"x", "u", "idx"};
  launch_reset();
  TB_ASSERT_OK(tb_prepared_run(p, 3, names, in, 1, NULL, &out));
  tb_tensor_destroy(out), out = NULL;
  const char *want[3] = {"tb_cu_dm_scatter_nd_clear", "tb_cu_dm_scatter_nd_mark", "tb_cu_dm_scatter_nd_apply"};
  const unsigned threads[3] = {2 * 13 * 7, 300, 300};
  int seen = 0;
  for (int i = 0; i < fake_int("fake_cuda_launch_count"); i++) {
    const fake_launch *l = launch_at(i);
    if (strncmp(l->name, "tb_cu_dm_scatter_nd_", 20) != 0) continue;
    assert_true(seen < 3);
    assert_string_equal(l->name, want[seen]);
    assert_true(l->grid[0] * l->block[0] >= threads[seen]);
    seen++;
  }
  assert_int_equal(seen, 3);
  if (emulator_here()) { /* the flag is set by the kernel itself */
    idx[2 * 150 + 1] = 7; /* out of range for axis 1 of size 7 */
    TB_ASSERT_OK(tb_tensor_copy_from_host(in[2], idx, sizeof idx));
    assert_int_equal(tb_prepared_run(p, 3, names, in, 1, NULL, &out), TB_ERR_INVALID_ARGUMENT);
    TB_ASSERT_CONTAINS(tb_last_error(), "node 'snd' (ScatterND): index 7 (indices element 301) is out of range for axis 1 of size 7");
    assert_null(out);
    idx[2 * 150 + 1] = -7;
    TB_ASSERT_OK(tb_tensor_copy_from_host(in[2], idx, sizeof idx));
  }
  setenv("FAKE_CUDA_LAUNCH_FAIL_AT", "3", 1);
  setenv("FAKE_CUDA_FAIL_CODE", "700", 1);
  launch_reset();
  assert_int_equal(tb_prepared_run(p, 3, names, in, 1, NULL, &out), TB_ERR_DRIVER);
  TB_ASSERT_CONTAINS(tb_last_error(), "for node 'snd' (ScatterND)");
  TB_ASSERT_CONTAINS(tb_last_error(), "failed with 700 CUDA_ERROR_ILLEGAL_ADDRESS");
  assert_null(out);
  unsetenv("FAKE_CUDA_LAUNCH_FAIL_AT");
  unsetenv("FAKE_CUDA_FAIL_CODE");
  unsetenv("TB_GRAPH_CAPTURE");
  for (int i = 0; i < 3; i++) tb_tensor_destroy(in[i]);
  tb_prepared_destroy(p);
  tb_model_destroy(model);
  tb_backend_destroy(cuda);
  tb_backend_destroy(cpu);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test_setup_teardown(single_elements_match_the_cpu, setup, teardown),
      cmocka_unit_test_setup_teardown(slices_match_the_cpu, setup, teardown),
      cmocka_unit_test_setup_teardown(launches_and_errors, setup, teardown),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
