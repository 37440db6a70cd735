/* `tb ops`: the table of every operator (concrete rows: Conv with fast CPU kernels from O2, bf16 at O3 and
 * OpenCL and Vulkan kernels; And with the reference only), the count line matching the library's, one
 * operator with its kernels, --json with every documented key (docs/json.md), and the exit codes of
 * docs/cli.md for an unknown operator and bad arguments. */
#include <tensorbridge/ops.h>
#include "test_cli_util.h"

static int setup(void **state) {
  (void)state;
  tbt_clear_env();
  return 0;
}

/* The cells of the table row that starts with `name` (cells are separated by two or more spaces). */
static size_t row_cells(const char *out, const char *name, char cells[8][128]) {
  size_t want = strlen(name);
  for (const char *line = out; line && *line; line = strchr(line, '\n') ? strchr(line, '\n') + 1 : NULL) {
    if (strncmp(line, name, want) != 0 || line[want] != ' ') continue;
    size_t n = 0, len = strcspn(line, "\n");
    const char *p = line, *end = line + len;
    while (p < end && n < 8) {
      const char *gap = strstr(p, "  ");
      if (!gap || gap > end) gap = end;
      snprintf(cells[n++], 128, "%.*s", (int)(gap - p), p);
      p = gap;
      while (p < end && *p == ' ') p++;
    }
    return n;
  }
  fail_msg("no row '%s' in:\n%s", name, out);
  return 0;
}

static void table_rows(void **state) {
  (void)state;
  setenv("TB_CPU_FEATURES", "-avx2", 1); /* the same text on every x86-64 CPU */
  tcli_run r = tcli("ops");
  TCLI_ASSERT_EXIT(r, 0);
  assert_string_equal(r.err, "");
  assert_int_equal(strncmp(r.out, "OPERATOR ", 9), 0);
  char cells[8][128];
  assert_int_equal(row_cells(r.out, "OPERATOR", cells), 7);
  assert_string_equal(cells[1], "OPSETS");
  assert_string_equal(cells[2], "INPUT DTYPES");
  assert_string_equal(cells[3], "CPU");
  assert_string_equal(cells[4], "OPENCL");
  assert_string_equal(cells[5], "VULKAN");
  assert_string_equal(cells[6], "CUDA");
  assert_int_equal(row_cells(r.out, "Conv", cells), 7);
  assert_string_equal(cells[1], "1");
  assert_string_equal(cells[2], "f64,f32,f16,bf16");
  assert_string_equal(cells[3], "O0 reference, O2 fast, O3 bf16");
  assert_string_equal(cells[4], "yes");
  assert_string_equal(cells[5], "yes");
  assert_string_equal(cells[6], "yes"); /* cuDNN, else the own kernels (docs/cuda.md) */
  assert_int_equal(row_cells(r.out, "Softmax", cells), 7);
  assert_string_equal(cells[6], "yes");
  assert_int_equal(row_cells(r.out, "And", cells), 7);
  assert_string_equal(cells[2], "bool");
  assert_string_equal(cells[3], "O0 reference");
  assert_string_equal(cells[4], "-");
  assert_string_equal(cells[5], "-");
  assert_string_equal(cells[6], "yes"); /* the CUDA logic kernels (cuda_ops_logic.c) */
  assert_int_equal(row_cells(r.out, "Transpose", cells), 7);
  assert_string_equal(cells[6], "yes");
  assert_int_equal(row_cells(r.out, "BatchNormalization", cells), 7);
  assert_string_equal(cells[1], "1,14");
  assert_int_equal(row_cells(r.out, "tb.FusedConv", cells), 7);
  char count[64];
  snprintf(count, sizeof count, "\n%zu operators\n", tb_op_info_count());
  TB_ASSERT_CONTAINS(r.out, count);
  /* the coverage line: "<n> of the <m> operators the CPU reference runs have a CUDA kernel", 0 < n < m */
  const char *cov = strstr(r.out, count);
  unsigned long n = 0, m = 0;
  assert_int_equal(sscanf(cov + strlen(count), "%lu of the %lu operators the CPU reference runs have a CUDA kernel", &n, &m), 2);
  assert_true(n > 60 && n < m && m <= tb_op_info_count());
  tcli_free(&r);
  unsetenv("TB_CPU_FEATURES");
}

/* One operator: its row, then each kernel; a kernel the CPU cannot run says so. */
static void one_operator(void **state) {
  (void)state;
  setenv("TB_CPU_FEATURES", "-avx2", 1);
  tcli_run r = tcli("ops conv");
  TCLI_ASSERT_EXIT(r, 0);
  char cells[8][128];
  assert_int_equal(row_cells(r.out, "Conv", cells), 7);
  TB_ASSERT_CONTAINS(r.out, "\n  kernel: cpu O0 reference (portable C)\n");
  TB_ASSERT_CONTAINS(r.out, "\n  kernel: cpu O2 fast (portable C)\n");
  TB_ASSERT_CONTAINS(r.out, "\n  kernel: cpu O2 fast (avx2,fma): not on this CPU\n");
  TB_ASSERT_CONTAINS(r.out, "\n  kernel: opencl O0 device (on the device)\n");
  TB_ASSERT_CONTAINS(r.out, "\n  kernel: vulkan O0 device (on the device)\n");
  TB_ASSERT_CONTAINS(r.out, "\n  kernel: cuda O0 device (on the device)\n");
  assert_null(strstr(r.out, "ConvTranspose"));
  assert_null(strstr(r.out, "operators\n"));
  tcli_free(&r);
  unsetenv("TB_CPU_FEATURES");
  r = tcli("ops tb.fusedconv");
  TCLI_ASSERT_EXIT(r, 0);
  assert_int_equal(row_cells(r.out, "tb.FusedConv", cells), 7);
  tcli_free(&r);
  r = tcli("ops relu");
  TCLI_ASSERT_EXIT(r, 0);
  TB_ASSERT_CONTAINS(r.out, "\n  kernel: cuda O0 device (on the device)\n");
  tcli_free(&r);
}

static const cJSON *find_json_op(const cJSON *ops, const char *domain, const char *name) {
  const cJSON *o;
  cJSON_ArrayForEach(o, ops) {
    if (strcmp(tcli_json_str(o, "domain"), domain) == 0 && strcmp(tcli_json_str(o, "name"), name) == 0) return o;
  }
  fail_msg("operator '%s' '%s' not in the JSON", domain, name);
  return NULL;
}

static void json_keys(void **state) {
  (void)state;
  tcli_run r = tcli("ops --json");
  TCLI_ASSERT_EXIT(r, 0);
  cJSON *root = tcli_json(r.out);
  const cJSON *ops = cJSON_GetObjectItemCaseSensitive(root, "operators");
  assert_true(cJSON_IsArray(ops));
  assert_int_equal((size_t)cJSON_GetArraySize(ops), tb_op_info_count());
  const cJSON *conv = find_json_op(ops, "", "Conv");
  const cJSON *opsets = cJSON_GetObjectItemCaseSensitive(conv, "opsets");
  assert_int_equal(cJSON_GetArraySize(opsets), 1);
  assert_int_equal(cJSON_GetArrayItem(opsets, 0)->valueint, 1);
  const cJSON *dtypes = cJSON_GetObjectItemCaseSensitive(conv, "input_dtypes");
  assert_int_equal(cJSON_GetArraySize(dtypes), 4);
  assert_string_equal(cJSON_GetArrayItem(dtypes, 1)->valuestring, "f32");
  assert_true(cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(conv, "fast_cpu_kernel")));
  const cJSON *k, *kernels = cJSON_GetObjectItemCaseSensitive(conv, "kernels");
  bool fast_o2 = false, opencl = false;
  cJSON_ArrayForEach(k, kernels) {
    const char *backend = tcli_json_str(k, "backend"), *level = tcli_json_str(k, "level"), *kind = tcli_json_str(k, "kind");
    (void)tcli_json_str(k, "cpu_features");
    assert_true(cJSON_IsBool(cJSON_GetObjectItemCaseSensitive(k, "usable")));
    fast_o2 |= strcmp(backend, "cpu") == 0 && strcmp(level, "O2") == 0 && strcmp(kind, "fast") == 0;
    opencl |= strcmp(backend, "opencl") == 0 && strcmp(level, "O0") == 0 && strcmp(kind, "device") == 0;
  }
  assert_true(fast_o2 && opencl);
  const cJSON *and_op = find_json_op(ops, "", "And");
  assert_true(cJSON_IsFalse(cJSON_GetObjectItemCaseSensitive(and_op, "fast_cpu_kernel")));
  kernels = cJSON_GetObjectItemCaseSensitive(and_op, "kernels");
  assert_int_equal(cJSON_GetArraySize(kernels), 2); /* the CPU's reference and CUDA's (cuda_ops_logic.c) */
  assert_string_equal(tcli_json_str(cJSON_GetArrayItem(kernels, 0), "kind"), "reference");
  assert_string_equal(tcli_json_str(cJSON_GetArrayItem(kernels, 0), "cpu_features"), "");
  assert_string_equal(tcli_json_str(cJSON_GetArrayItem(kernels, 1), "backend"), "cuda");
  const cJSON *constant = find_json_op(ops, "", "Constant");
  assert_int_equal(cJSON_GetArraySize(cJSON_GetObjectItemCaseSensitive(constant, "input_dtypes")), 0);
  cJSON_Delete(root);
  tcli_free(&r);
  /* one operator: the same object alone */
  r = tcli("ops And --json");
  TCLI_ASSERT_EXIT(r, 0);
  root = tcli_json(r.out);
  ops = cJSON_GetObjectItemCaseSensitive(root, "operators");
  assert_int_equal(cJSON_GetArraySize(ops), 1);
  assert_string_equal(tcli_json_str(cJSON_GetArrayItem(ops, 0), "name"), "And");
  cJSON_Delete(root);
  tcli_free(&r);
}

static void errors_and_exit_codes(void **state) {
  (void)state;
  char want[256];
  snprintf(want, sizeof want, "tb: error: TensorBridge defines no operator 'FooOp' (in any domain); 'tb ops' lists the %zu it runs\n",
           tb_op_info_count());
  tcli_run r = tcli("ops FooOp");
  TCLI_ASSERT_EXIT(r, 2);
  assert_string_equal(r.err, want);
  assert_string_equal(r.out, "");
  tcli_free(&r);
  tcli_expect_err("ops Conv Relu", 2, "'tb ops'");
  tcli_expect_err("ops --jsn", 2, "unknown option '--jsn' for 'tb ops'");
  r = tcli("help ops");
  TCLI_ASSERT_EXIT(r, 0);
  TB_ASSERT_CONTAINS(r.out, "Usage: tb ops [OP] [--json]");
  tcli_free(&r);
  r = tcli("--help");
  TB_ASSERT_CONTAINS(r.out, "  ops       the operators TensorBridge runs");
  tcli_free(&r);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test_setup(table_rows, setup),
      cmocka_unit_test_setup(one_operator, setup),
      cmocka_unit_test_setup(json_keys, setup),
      cmocka_unit_test_setup(errors_and_exit_codes, setup),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
