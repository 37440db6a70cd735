/* TopK of rows longer than the shared-memory sort on the emulated cuda:0 (kernels/32_topk.cu's radix select, through
 * cuda_ops_argtopk.c): values and indices compared byte for byte with the CPU backend at O0, on rows of 2049 to
 * 200000 elements, k 1, 37, len/2 and len, largest and smallest, along the last and a middle axis, with NaN of both
 * signs, +-inf, -0 beside +0 and many ties, on every dtype the kernel takes (float32, float64, float16, bfloat16,
 * int8, int16, int32, int64, uint8; the integers at their extremes, int64 keys differing in every byte). The fake
 * driver's records say the radix kernel ran and the sort did not. Without the emulator (no C++ compiler) the
 * value tests print why and check nothing. Also, without the emulator: the launch's geometry, and a failing launch
 * (faulted, out of memory) as a status and a sentence. */
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

static int setup(void **state) { return tcv_setup(state, cache_dir, "tb_cutopk"); }

static int teardown(void **state) {
  (void)state;
  return tcv_teardown(cache_dir);
}

typedef struct top {
  int64_t k;
  int axis, largest;
} top;

/* Element i of a row of mostly tied values with the specials sprinkled in (as double; the caller narrows it). */
static double value_at(size_t i, unsigned seed) {
  unsigned s = (unsigned)i * 2654435761u + seed * 40503u;
  s ^= s >> 13;
  s *= 1103515245u;
  double v = (double)((s >> 16) % 64) - 32.0; /* 64 values: ties everywhere */
  switch ((s >> 8) % 97) {
    case 0: return NAN;
    case 1: return -NAN;
    case 2: return INFINITY;
    case 3: return -INFINITY;
    case 4: return -0.0;
    case 5: return 0.0;
    default: return v;
  }
}

/* n elements of dtype dt into a new buffer: the floats from value_at (float64 with a fraction that only it holds),
 * the integers spread over their range with their extremes and ties. */
static void *make_values(tb_dtype dt, size_t n, unsigned seed) {
  unsigned char *buf = malloc(n * tb_dtype_size(dt) + 1);
  for (size_t i = 0; i < n; i++) {
    double v = value_at(i, seed);
    int64_t w = isfinite(v) ? (int64_t)v : (int64_t)(i % 5) - 2;
    switch (dt) {
      case TB_DTYPE_F32: ((float *)buf)[i] = (float)v; break;
      case TB_DTYPE_F64: ((double *)buf)[i] = isfinite(v) && v != 0 && i % 3 == 0 ? v + (double)(i % 7) * 1e-12 : v; break;
      case TB_DTYPE_F16: ((uint16_t *)buf)[i] = tb_f32_to_f16_ref((float)v); break;
      case TB_DTYPE_BF16: ((uint16_t *)buf)[i] = tb_f32_to_bf16_ref((float)v); break;
      case TB_DTYPE_I8: ((int8_t *)buf)[i] = i % 11 == 0 ? INT8_MIN : i % 13 == 0 ? INT8_MAX : (int8_t)(w * 3); break;
      case TB_DTYPE_U8: ((uint8_t *)buf)[i] = i % 11 == 0 ? 0 : i % 13 == 0 ? UINT8_MAX : (uint8_t)(w + 100); break;
      case TB_DTYPE_I16: ((int16_t *)buf)[i] = i % 11 == 0 ? INT16_MIN : i % 13 == 0 ? INT16_MAX : (int16_t)(w * 1000 + (int64_t)(i % 3)); break;
      case TB_DTYPE_I32: ((int32_t *)buf)[i] = i % 11 == 0 ? INT32_MIN : i % 13 == 0 ? INT32_MAX : (int32_t)(w * 60000000 + (int64_t)(i % 3)); break;
      case TB_DTYPE_I64: /* keys that differ in every byte, ties in the low ones */
        ((int64_t *)buf)[i] = i % 11 == 0 ? INT64_MIN : i % 13 == 0 ? INT64_MAX : w * 0x0101010101010101ll + (int64_t)(i % 4) * 0x10001ll;
        break;
      default: fail_msg("no values for %s", tb_dtype_name(dt));
    }
  }
  return buf;
}

static const char *suffix(tb_dtype dt) {
  switch (dt) {
    case TB_DTYPE_F32: return "f32";
    case TB_DTYPE_F64: return "f64";
    case TB_DTYPE_F16: return "f16";
    case TB_DTYPE_BF16: return "bf16";
    case TB_DTYPE_I8: return "i8";
    case TB_DTYPE_I16: return "i16";
    case TB_DTYPE_I32: return "i32";
    case TB_DTYPE_I64: return "i64";
    default: return "u8";
  }
}

/* One TopK node per entry of tops over x (dt, shape) on the CPU and the emulated cuda:0, every output compared byte
 * for byte; every node runs the radix kernel (rows past the shared-memory sort). */
static void tops_match_the_cpu(tb_dtype dt, size_t ndim, const int64_t *shape, const top *tops, size_t n_tops, unsigned seed) {
  size_t n = 1;
  for (size_t i = 0; i < ndim; i++) n *= (size_t)shape[i];
  void *x = make_values(dt, n, seed);
  tb_ir_model *ir = tbt_ir_model(13);
  tb_graph *g = tb_graph_new(ir, NULL, "topk");
  tbt_input(g, "x", dt, ndim, shape, NULL);
  for (size_t i = 0; i < n_tops; i++) {
    char k[32], name[32], both[48], v[32], ix[32];
    snprintf(k, sizeof k, "k%zu", i);
    snprintf(name, sizeof name, "top%zu", i);
    snprintf(v, sizeof v, "v%zu", i);
    snprintf(ix, sizeof ix, "i%zu", i);
    snprintf(both, sizeof both, "x,%s", k);
    tbt_const_i64(g, k, 1, (const int64_t[]){1}, &tops[i].k);
    char outs[72];
    snprintf(outs, sizeof outs, "%s,%s", v, ix);
    int node = tbt_node(g, "TopK", name, both, outs);
    pt_attr_int(g, node, "axis", tops[i].axis);
    pt_attr_int(g, node, "largest", tops[i].largest);
    tbt_output(g, v);
    tbt_output(g, ix);
  }
  tb_model *model = tbt_model_of(ir);
  feed in[1] = {{"x", dt, ndim, {0}, x}};
  memcpy(in[0].dims, shape, ndim * sizeof *shape);
  size_t device_nodes = 0, fallbacks = 0;
  char radix[40];
  snprintf(radix, sizeof radix, "tb_cu_ew_topk_radix_%s", suffix(dt));
  launch_reset();
  compare_runs(model, 1, in, 2 * n_tops, TB_LEVEL_O0, 0, 0, &device_nodes, &fallbacks);
  assert_int_equal(fallbacks, 0);
  assert_int_equal(device_nodes, n_tops);
  assert_int_equal(launches_of(radix), (int)n_tops);
  char sort[40];
  snprintf(sort, sizeof sort, "tb_cu_ew_topk_sort_%s", suffix(dt));
  assert_int_equal(launches_of(sort), 0);
  tb_model_destroy(model);
  free(x);
}

/* float32 rows of 2049 (two rows), 5003 along a middle axis (strided outputs), 65537 and 200000 elements. */
static void float32_rows_match_the_cpu(void **state) {
  (void)state;
  if (!emulator_here()) return;
  const top short_rows[] = {{1, -1, 1}, {37, -1, 0}, {1024, -1, 1}, {2049, -1, 0}};
  tops_match_the_cpu(TB_DTYPE_F32, 2, (const int64_t[]){2, 2049}, short_rows, 4, 1);
  const top middle[] = {{37, 1, 1}, {2501, 1, 0}, {5003, 1, 1}};
  tops_match_the_cpu(TB_DTYPE_F32, 3, (const int64_t[]){2, 5003, 3}, middle, 3, 2);
  const top half[] = {{32768, 0, 0}, {1, 0, 1}};
  tops_match_the_cpu(TB_DTYPE_F32, 1, (const int64_t[]){65537}, half, 2, 3);
  const top longest[] = {{1, 0, 0}, {37, 0, 1}, {200000, 0, 1}};
  tops_match_the_cpu(TB_DTYPE_F32, 1, (const int64_t[]){200000}, longest, 3, 4);
}

/* Every other dtype on two rows of 3001 elements and on a middle axis: k 1, 37, len/2 and len. */
static void every_dtype_matches_the_cpu(void **state) {
  (void)state;
  if (!emulator_here()) return;
  static const tb_dtype dts[] = {TB_DTYPE_F64, TB_DTYPE_F16, TB_DTYPE_BF16, TB_DTYPE_I8, TB_DTYPE_I16, TB_DTYPE_I32, TB_DTYPE_I64, TB_DTYPE_U8};
  const top tops[] = {{1, -1, 1}, {37, -1, 0}, {1500, -1, 1}, {3001, -1, 0}};
  const top mid[] = {{37, 0, 1}, {2100, 0, 0}};
  for (size_t i = 0; i < sizeof dts / sizeof dts[0]; i++) {
    tops_match_the_cpu(dts[i], 2, (const int64_t[]){2, 3001}, tops, 4, 10 + (unsigned)i);
    if (i % 2 == 0) tops_match_the_cpu(dts[i], 2, (const int64_t[]){2100, 2}, mid, 2, 20 + (unsigned)i);
  }
}

/* Without the emulator: a long row launches the radix kernel, one block of 1024 threads per row; a failing launch
 * (faulted, out of memory) is a status and a sentence naming the kernel and the node, nothing leaked. */
static void the_radix_kernel_runs_and_its_failures_are_statuses(void **state) {
  (void)state;
  unsetenv("FAKE_CUDA_EMULATE");
  setenv("TB_GRAPH_CAPTURE", "off", 1); /* each run launches its kernel (a replayed graph would launch none) */
  tb_backend *cpu = NULL, *cuda = open_cuda0();
  TB_ASSERT_OK(tb_backend_create("cpu", &cpu));
  tb_ir_model *ir = tbt_ir_model(13);
  tb_graph *g = tb_graph_new(ir, NULL, "errors");
  tbt_input(g, "x", TB_DTYPE_F32, 2, (const int64_t[]){3, 2049}, NULL);
  tbt_const_i64(g, "k", 1, (const int64_t[]){1}, (const int64_t[]){5});
  tbt_node(g, "TopK", "top", "x,k", "v,i");
  tbt_output(g, "v");
  tbt_output(g, "i");
  tb_model *model = tbt_model_of(ir);
  tb_prepare_options o = {.size = sizeof o, .level = TB_LEVEL_O0};
  tb_prepared *p = NULL;
  TB_ASSERT_OK(tb_model_prepare(model, cuda, &o, &p, NULL));
  static float x[3 * 2049];
  tb_tensor *in = tbt_f32(cpu, 2, (const int64_t[]){3, 2049}, x), *out[2] = {NULL, NULL};
  const char *names[1] = {"x"};
  launch_reset();
  TB_ASSERT_OK(tb_prepared_run(p, 1, names, &in, 2, NULL, out));
  assert_int_equal(fake_int("fake_cuda_launch_count"), 1);
  assert_string_equal(launch_at(0)->name, "tb_cu_ew_topk_radix_f32");
  assert_int_equal(launch_at(0)->grid[0], 3);
  assert_int_equal(launch_at(0)->block[0], 1024);
  for (int i = 0; i < 2; i++) tb_tensor_destroy(out[i]), out[i] = NULL;
  setenv("FAKE_CUDA_LAUNCH_FAIL_AT", "1", 1);
  setenv("FAKE_CUDA_FAIL_CODE", "700", 1);
  launch_reset();
  assert_int_equal(tb_prepared_run(p, 1, names, &in, 2, NULL, out), TB_ERR_DRIVER);
  TB_ASSERT_CONTAINS(tb_last_error(), "cuda:0: cuLaunchKernel of tb_cu_ew_topk_radix_f32 for node 'top' (TopK) (grid 3 x 1 x 1 of 1024 threads) "
                                      "failed with 700 CUDA_ERROR_ILLEGAL_ADDRESS");
  assert_null(out[0]);
  setenv("FAKE_CUDA_FAIL_CODE", "2", 1);
  launch_reset();
  assert_int_equal(tb_prepared_run(p, 1, names, &in, 2, NULL, out), TB_ERR_OUT_OF_MEMORY);
  TB_ASSERT_CONTAINS(tb_last_error(), "CUDA_ERROR_OUT_OF_MEMORY; free device memory");
  unsetenv("FAKE_CUDA_LAUNCH_FAIL_AT");
  unsetenv("FAKE_CUDA_FAIL_CODE");
  unsetenv("TB_GRAPH_CAPTURE");
  tb_tensor_destroy(in);
  tb_prepared_destroy(p);
  tb_model_destroy(model);
  tb_backend_destroy(cuda);
  tb_backend_destroy(cpu);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test_setup_teardown(float32_rows_match_the_cpu, setup, teardown),
      cmocka_unit_test_setup_teardown(every_dtype_matches_the_cpu, setup, teardown),
      cmocka_unit_test_setup_teardown(the_radix_kernel_runs_and_its_failures_are_statuses, setup, teardown),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
