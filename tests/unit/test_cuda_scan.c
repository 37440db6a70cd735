/* CumSum's block scan (kernels/31_index_reduce.cu's tb_cu_ew_cumsum_scan_*: one block per row along the last axis, for
 * the integers and float16, whose sums do not depend on the order of the additions) on the fake cuda:0 of the
 * recorded 8x H100 node, its values computed by the kernel's own source on the emulated grid (tests/cuda_emu) and
 * compared with the CPU backend at O0 bit for bit: rows of one tile and of several (the running total carried
 * between tiles of 1024), all four exclusive / reverse forms, integer sums that wrap, float16 with +-inf and NaN;
 * which kernel each shape and dtype gets (short rows, other axes, float32, float16 rows past the exact length keep
 * the sequential kernel). Without the emulator (no C++ compiler) the values are not checked (the tests print why) but
 * the kernel choices are: the fake driver records every launch, computed or not. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "core/convert_scalar.h"
#include "pass_test.h"
#include "test_cuda_values.h"
#include "test_util.h"

static char cache_dir[64];
static bool emulated; /* the values are checked (the emulator built); the kernel choices are either way */

static int setup(void **state) {
  int rc = tcv_setup(state, cache_dir, "tb_cuscan");
  emulated = emulator_here();
  return rc;
}

static int teardown(void **state) {
  (void)state;
  return tcv_teardown(cache_dir);
}

/* A model of the four CumSum forms of x [rows, len] (dtype dt) along `axis`. */
static tb_model *cumsum_model(tb_dtype dt, int64_t rows, int64_t len, int64_t axis) {
  tb_ir_model *ir = tbt_ir_model(14);
  tb_graph *g = tb_graph_new(ir, NULL, "scan");
  tbt_input(g, "x", dt, 2, (const int64_t[]){rows, len}, NULL);
  tbt_const_i64(g, "axis", 0, NULL, &axis);
  for (int form = 0; form < 4; form++) {
    char name[16], out[16];
    snprintf(name, sizeof name, "cumsum%d", form);
    snprintf(out, sizeof out, "y%d", form);
    int n = tbt_node(g, "CumSum", name, "x,axis", out);
    pt_attr_int(g, n, "exclusive", form & 1);
    pt_attr_int(g, n, "reverse", (form >> 1) & 1);
    tbt_output(g, out);
  }
  return tbt_model_of(ir);
}

/* The four forms run on cuda:0 at O0 alone (no emulator: the fake computes nothing, it records the launches). */
static void run_on_cuda(tb_model *model, const feed *in, size_t *device_nodes, size_t *fallbacks) {
  tb_backend *cpu = NULL, *cuda = open_cuda0();
  TB_ASSERT_OK(tb_backend_create("cpu", &cpu));
  tb_prepare_options o = {.size = sizeof o, .level = TB_LEVEL_O0};
  tb_prepared *pg = NULL;
  const tb_prepare_result *rg = NULL;
  TB_ASSERT_OK(tb_model_prepare(model, cuda, &o, &pg, &rg));
  *device_nodes = rg->device_nodes;
  *fallbacks = rg->cpu_fallback_nodes;
  tb_tensor *x = make_input(cpu, &in[0]), *got[4] = {NULL};
  const char *names[1] = {in[0].name};
  TB_ASSERT_OK(tb_prepared_run(pg, 1, names, &x, 4, NULL, got));
  for (size_t k = 0; k < 4; k++) tb_tensor_destroy(got[k]);
  tb_tensor_destroy(x);
  tb_prepared_destroy(pg);
  tb_backend_destroy(cuda);
  tb_backend_destroy(cpu);
}

/* Run the four forms on the CPU at O0 and on the emulated cuda:0: equal bit for bit (halves as values), all on the
 * device (without the emulator: cuda:0's run alone); the launches of `kernel` (4 per run) in both cases. */
static void scan_matches(tb_dtype dt, int64_t rows, int64_t len, int64_t axis, const void *x, const char *kernel) {
  tb_model *model = cumsum_model(dt, rows, len, axis);
  const feed in[1] = {{"x", dt, 2, {rows, len}, x}};
  size_t device_nodes = 0, fallbacks = 0;
  launch_reset();
  if (emulated) compare_runs(model, 1, in, 4, TB_LEVEL_O0, 0, 0, &device_nodes, &fallbacks);
  else run_on_cuda(model, in, &device_nodes, &fallbacks);
  assert_int_equal(fallbacks, 0);
  assert_int_equal(device_nodes, 4);
  if (launches_of(kernel) != 4) fail_msg("%s [%lld, %lld] axis %lld: %d launches of %s, not 4", tb_dtype_name(dt), (long long)rows,
                                         (long long)len, (long long)axis, launches_of(kernel), kernel);
  tb_model_destroy(model);
}

/* Integers: rows of 37 (one tile of 64 threads), 700 (one of 704) and 2100 (three tiles of 1024); sums that wrap (int8, uint8,
 * int32 near its limits, int64 near its). */
static void integer_rows_match_the_cpu(void **state) {
  (void)state;
  static const int64_t lens[3] = {37, 700, 2100};
  for (int l = 0; l < 3; l++) {
    int64_t len = lens[l], rows = 2, n = rows * len;
    int8_t *i8 = malloc((size_t)n);
    uint8_t *u8 = malloc((size_t)n);
    int16_t *i16 = malloc((size_t)n * 2);
    int32_t *i32 = malloc((size_t)n * 4);
    int64_t *i64 = malloc((size_t)n * 8);
    unsigned seed = 7u + (unsigned)l;
    for (int64_t i = 0; i < n; i++) {
      seed = seed * 1103515245u + 12345u;
      int r = (int)((seed >> 8) & 0xffff);
      i8[i] = (int8_t)(r % 251 - 125);
      u8[i] = (uint8_t)(r % 256);
      i16[i] = (int16_t)(r * 3 - 98304);
      i32[i] = i % 5 == 0 ? 2147483000 : (int32_t)((int64_t)r * 40000 - 1310700000);
      i64[i] = i % 7 == 0 ? INT64_MAX - 3 : (int64_t)r * 1000003 - 32768000000;
    }
    scan_matches(TB_DTYPE_I8, rows, len, -1, i8, "tb_cu_ew_cumsum_scan_i8");
    scan_matches(TB_DTYPE_U8, rows, len, 1, u8, "tb_cu_ew_cumsum_scan_u8");
    scan_matches(TB_DTYPE_I16, rows, len, -1, i16, "tb_cu_ew_cumsum_scan_i16");
    scan_matches(TB_DTYPE_I32, rows, len, -1, i32, "tb_cu_ew_cumsum_scan_i32");
    scan_matches(TB_DTYPE_I64, rows, len, 1, i64, "tb_cu_ew_cumsum_scan_i64");
    free(i8), free(u8), free(i16), free(i32), free(i64);
  }
}

/* float16: rows of 40 and 1100 (two tiles) with values of every magnitude (sums a float32 or float16 running total would round),
 * +-inf (one sign, then both: NaN from there), NaN; a row of 8200 (past the exact length) keeps the sequential
 * kernel, as do float32 along the last axis, short rows and a middle axis. */
static void half_rows_and_the_kernel_choice(void **state) {
  (void)state;
  static const int64_t lens[2] = {40, 1100};
  for (int l = 0; l < 2; l++) {
    int64_t len = lens[l], rows = 3, n = rows * len;
    uint16_t *h = malloc((size_t)n * 2);
    unsigned seed = 3u + (unsigned)l;
    for (int64_t i = 0; i < n; i++) {
      seed = seed * 1103515245u + 12345u;
      float v = (float)((seed >> 8) & 0xffff) / 64.0f - 512.0f;
      if (i % 11 == 0) v *= 97.0f;        /* large and small magnitudes mixed: ulps of the sum differ */
      if (i % 13 == 0) v = 0.0009765625f; /* 2^-10 */
      h[i] = tb_f32_to_f16_ref(v);
    }
    h[len + 5] = tb_f32_to_f16_ref(INFINITY);                     /* row 1: +inf from 5 on */
    h[2 * len + 3] = tb_f32_to_f16_ref(INFINITY);                 /* row 2: +inf, then -inf: NaN */
    h[2 * len + 9] = tb_f32_to_f16_ref(-INFINITY);
    h[len - 2] = tb_f32_to_f16_ref(NAN);                          /* row 0: NaN near the end */
    scan_matches(TB_DTYPE_F16, rows, len, -1, h, "tb_cu_ew_cumsum_scan_f16");
    free(h);
  }
  int64_t long_len = 8200;
  uint16_t *h = calloc((size_t)long_len, 2);
  for (int64_t i = 0; i < long_len; i++) h[i] = tb_f32_to_f16_ref((float)(i % 17) - 8.0f);
  scan_matches(TB_DTYPE_F16, 1, long_len, -1, h, "tb_cu_ew_cumsum_f16");
  free(h);
  static float f[2 * 64];
  fill(f, 2 * 64, 5);
  scan_matches(TB_DTYPE_F32, 2, 64, -1, f, "tb_cu_ew_cumsum_f32"); /* the order of float32 additions is the CPU's */
  static int32_t i32[2 * 64];
  for (int i = 0; i < 2 * 64; i++) i32[i] = i * 7 - 300;
  scan_matches(TB_DTYPE_I32, 2, 64, 0, i32, "tb_cu_ew_cumsum_i32");  /* a column: inner 64 */
  scan_matches(TB_DTYPE_I32, 64, 2, -1, i32, "tb_cu_ew_cumsum_i32"); /* rows of 2: one thread each */
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test_setup_teardown(integer_rows_match_the_cpu, setup, teardown),
      cmocka_unit_test_setup_teardown(half_rows_and_the_kernel_choice, setup, teardown),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
