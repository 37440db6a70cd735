/* Integer Div and Mod with a zero divisor, and INT_MIN / -1, give the values docs/ops_elementwise.md
 * documents on every backend this machine has (ONNX leaves them undefined): the CPU at O0 (reference
 * kernels) and O2, OpenCL and Vulkan (whose kernels take floats only, so integer nodes run the CPU's
 * reference kernels there). A backend that cannot be opened here is skipped with a line saying so. */
#include <limits.h>
#include "test_engine_util.h"
#include "test_util.h"

enum { N = 8 };
static const int32_t a32[N] = {7, -7, 5, INT32_MIN, INT32_MIN, 0, 9, -9};
static const int32_t b32[N] = {0, 0, -1, -1, 2, 0, 4, 4};
static const int32_t div32[N] = {0, 0, -5, INT32_MIN, INT32_MIN / 2, 0, 2, -2};  /* truncated toward zero */
static const int32_t pymod32[N] = {0, 0, 0, 0, 0, 0, 1, 3};                       /* fmod = 0: divisor's sign */
static const int32_t cmod32[N] = {0, 0, 0, 0, 0, 0, 1, -1};                       /* fmod = 1: dividend's sign */
static const int64_t a64[N] = {7, -7, 5, INT64_MIN, INT64_MIN, 0, 9, -9};
static const int64_t b64[N] = {0, 0, -1, -1, 2, 0, 4, 4};
static const int64_t div64[N] = {0, 0, -5, INT64_MIN, INT64_MIN / 2, 0, 2, -2};

static tb_model *div_mod_model(void) {
  tb_ir_model *m = tbt_ir_model(13);
  tb_graph *g = tb_graph_new(m, NULL, "div_mod");
  int64_t n = N;
  tbt_input(g, "a", TB_DTYPE_I32, 1, &n, NULL);
  tbt_input(g, "b", TB_DTYPE_I32, 1, &n, NULL);
  tbt_input(g, "a64", TB_DTYPE_I64, 1, &n, NULL);
  tbt_input(g, "b64", TB_DTYPE_I64, 1, &n, NULL);
  tbt_node(g, "Div", "div", "a,b", "q");
  tbt_node(g, "Mod", "pymod", "a,b", "r");
  int in[2] = {tb_graph_value(g, "a"), tb_graph_value(g, "b")}, out[1] = {tb_graph_value(g, "c")};
  tb_attr fmod = TOH_INT("fmod", 1);
  assert_true(tb_graph_add_node(g, "cmod", "Mod", "", in, 2, out, 1, &fmod, 1) >= 0);
  tbt_node(g, "Div", "div64", "a64,b64", "q64");
  tbt_output(g, "q");
  tbt_output(g, "r");
  tbt_output(g, "c");
  tbt_output(g, "q64");
  return tbt_model_of(m);
}

static void expect_ints(const char *where, const char *what, const tb_tensor *t, const void *want, size_t elem) {
  unsigned char got[N * 8];
  TB_ASSERT_OK(tb_tensor_copy_to_host(t, got, N * elem));
  for (size_t i = 0; i < N; i++) {
    int64_t g = elem == 4 ? ((const int32_t *)(const void *)got)[i] : ((const int64_t *)(const void *)got)[i];
    int64_t w = elem == 4 ? ((const int32_t *)want)[i] : ((const int64_t *)want)[i];
    if (g != w) fail_msg("%s: %s element %zu: got %lld, expected %lld", where, what, i, (long long)g, (long long)w);
  }
}

static void run_on(const char *request, tb_opt_level level) {
  tb_backend *b = NULL;
  if (tb_backend_create(request, &b) != TB_OK) {
    print_message("skipped %s: %s\n", request, tb_last_error());
    return;
  }
  tb_model *model = div_mod_model();
  tb_prepare_options opts = {.size = sizeof opts, .level = level};
  tb_prepared *p = NULL;
  TB_ASSERT_OK(tb_model_prepare(model, b, &opts, &p, NULL));
  tb_backend *cpu;
  TB_ASSERT_OK(tb_backend_create("cpu", &cpu));
  int64_t n = N;
  tb_tensor *in[4] = {toh_host_tensor(cpu, TB_DTYPE_I32, 1, &n, a32), toh_host_tensor(cpu, TB_DTYPE_I32, 1, &n, b32),
                      toh_host_tensor(cpu, TB_DTYPE_I64, 1, &n, a64), toh_host_tensor(cpu, TB_DTYPE_I64, 1, &n, b64)};
  const char *names[4] = {"a", "b", "a64", "b64"};
  tb_tensor *out[4] = {NULL};
  TB_ASSERT_OK(tb_prepared_run(p, 4, names, in, 4, NULL, out));
  char where[64];
  snprintf(where, sizeof where, "%s at O%d", request, (int)level);
  expect_ints(where, "Div int32", out[0], div32, 4);
  expect_ints(where, "Mod fmod=0 int32", out[1], pymod32, 4);
  expect_ints(where, "Mod fmod=1 int32", out[2], cmod32, 4);
  expect_ints(where, "Div int64", out[3], div64, 8);
  for (int i = 0; i < 4; i++) {
    tb_tensor_destroy(in[i]);
    tb_tensor_destroy(out[i]);
  }
  tb_prepared_destroy(p);
  tb_model_destroy(model);
  tb_backend_destroy(cpu);
  tb_backend_destroy(b);
}

static void cpu_reference(void **state) {
  (void)state;
  run_on("cpu", TB_LEVEL_O0);
}
static void cpu_fast(void **state) {
  (void)state;
  run_on("cpu", TB_LEVEL_O2);
}
static void opencl(void **state) {
  (void)state;
  run_on("opencl:0", TB_LEVEL_O2);
}
static void vulkan(void **state) {
  (void)state;
  run_on("vulkan:0", TB_LEVEL_O2);
}

static int setup(void **state) {
  (void)state;
  tbt_clear_env();
  setenv("TB_CACHE_DIR", "off", 1);
  return 0;
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(cpu_reference),
      cmocka_unit_test(cpu_fast),
      cmocka_unit_test(opencl),
      cmocka_unit_test(vulkan),
  };
  return cmocka_run_group_tests(tests, setup, NULL);
}
