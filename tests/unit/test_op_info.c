/* tb_op_info_get / tb_op_kernel_get: the operator listing behind `tb ops`, read from the library's own
 * tables: sorted, every opset a definition's since-version, concrete rows (Conv has fast CPU kernels from O2,
 * bf16 ones at O3 and OpenCL and Vulkan kernels; And only the reference; If takes a bool; Cast any dtype),
 * CPU kernels usable or not by the CPU features (TB_CPU_FEATURES), and argument errors with their sentences. */
#include <stdlib.h>
#include <string.h>
#include <tensorbridge/ops.h>
#include "ops/op.h"
#include "test_util.h"

static int setup(void **state) {
  (void)state;
  tbt_clear_env();
  return 0;
}

/* The index of domain.name, failing the test when it is not listed. */
static size_t find_op(const char *domain, const char *name, tb_op_info *info) {
  for (size_t i = 0; i < tb_op_info_count(); i++) {
    info->size = sizeof *info;
    TB_ASSERT_OK(tb_op_info_get(i, info));
    if (strcmp(info->domain, domain) == 0 && strcmp(info->name, name) == 0) return i;
  }
  fail_msg("operator '%s' '%s' is not listed", domain, name);
  return 0;
}

static tb_op_kernel kernel_at(size_t op, size_t k) {
  tb_op_kernel kn = {.size = sizeof kn};
  TB_ASSERT_OK(tb_op_kernel_get(op, k, &kn));
  assert_int_equal(kn.size, sizeof kn);
  return kn;
}

/* Sorted by domain then name, each once; every opset is a since-version of a definition of the op. */
static void sorted_and_from_the_registry(void **state) {
  (void)state;
  size_t n = tb_op_info_count();
  assert_true(n > 100);
  tb_op_info prev = {.size = sizeof prev}, cur = {.size = sizeof cur};
  size_t definitions = 0;
  for (size_t i = 0; i < n; i++) {
    TB_ASSERT_OK(tb_op_info_get(i, &cur));
    assert_int_equal(cur.size, sizeof cur);
    if (i > 0) {
      int c = strcmp(prev.domain, cur.domain);
      assert_true(c < 0 || (c == 0 && strcmp(prev.name, cur.name) < 0));
    }
    assert_true(cur.opset_count >= 1);
    for (size_t s = 0; s < cur.opset_count; s++) {
      if (s > 0) assert_true(cur.opsets[s - 1] < cur.opsets[s]);
      const tb_op_def *d = tb_op_find(cur.domain, cur.name, cur.opsets[s]);
      assert_non_null(d);
      assert_int_equal(d->since_version, cur.opsets[s]);
    }
    definitions += cur.opset_count;
    prev = cur;
  }
  assert_int_equal(definitions, tb_op_count()); /* every definition is one opset of one listed op */
}

static void conv_row(void **state) {
  (void)state;
  tb_op_info info = {.size = sizeof info};
  size_t conv = find_op("", "Conv", &info);
  assert_int_equal(info.opset_count, 1);
  assert_int_equal(info.opsets[0], 1);
  assert_int_equal(info.input_dtypes, TB_DTYPE_BIT(TB_DTYPE_F64) | TB_DTYPE_BIT(TB_DTYPE_F32) | TB_DTYPE_BIT(TB_DTYPE_F16) |
                                          TB_DTYPE_BIT(TB_DTYPE_BF16));
  assert_true(info.fast_cpu_kernel);
  bool reference = false, fast_avx512 = false, fast_portable = false, bf16 = false, opencl = false, vulkan = false;
  tb_opt_level last = TB_LEVEL_O0;
  for (size_t k = 0; k < info.kernel_count; k++) {
    tb_op_kernel kn = kernel_at(conv, k);
    if (kn.backend == TB_BACKEND_CPU) {
      assert_true(kn.level >= last); /* the CPU's by level */
      last = kn.level;
    }
    if (kn.backend == TB_BACKEND_CPU && kn.level == TB_LEVEL_O0) {
      assert_string_equal(kn.kind, "reference");
      assert_string_equal(kn.cpu_features, "");
      assert_true(kn.usable);
      reference = true;
    }
    if (kn.backend == TB_BACKEND_CPU && kn.level == TB_LEVEL_O2) {
      assert_string_equal(kn.kind, "fast");
      fast_avx512 |= strstr(kn.cpu_features, "avx512f") != NULL;
      fast_portable |= kn.cpu_features[0] == '\0' && kn.usable;
    }
    if (kn.backend == TB_BACKEND_CPU && kn.level == TB_LEVEL_O3) bf16 |= strcmp(kn.kind, "bf16") == 0;
    if (kn.backend == TB_BACKEND_OPENCL || kn.backend == TB_BACKEND_VULKAN) {
      assert_string_equal(kn.kind, "device");
      assert_int_equal(kn.level, TB_LEVEL_O0);
      assert_true(kn.usable);
      opencl |= kn.backend == TB_BACKEND_OPENCL;
      vulkan |= kn.backend == TB_BACKEND_VULKAN;
    }
  }
  assert_true(reference && fast_avx512 && fast_portable && bf16 && opencl && vulkan);
}

/* An op without a fast CPU kernel: every CPU row it has is the O0 reference (device kernels may sit beside it);
 * If is one (its work is its branch's nodes). */
static void reference_only_rows(void **state) {
  (void)state;
  tb_op_info info = {.size = sizeof info};
  size_t without_fast = 0;
  for (size_t i = 0; i < tb_op_info_count(); i++) {
    TB_ASSERT_OK(tb_op_info_get(i, &info));
    if (info.fast_cpu_kernel) continue;
    without_fast++;
    size_t cpu_rows = 0;
    for (size_t k = 0; k < info.kernel_count; k++) {
      tb_op_kernel kn = kernel_at(i, k);
      if (kn.backend != TB_BACKEND_CPU) continue;
      cpu_rows++;
      assert_int_equal(kn.level, TB_LEVEL_O0);
      assert_string_equal(kn.kind, "reference");
    }
    assert_int_equal(cpu_rows, 1);
  }
  assert_true(without_fast >= 1);
  find_op("", "If", &info);
  assert_int_equal(info.input_dtypes, TB_DTYPE_BIT(TB_DTYPE_BOOL));
  assert_false(info.fast_cpu_kernel);
  /* the dtypes come from inference: Cast takes every dtype, MatMul numbers, Gather's indices are adapted */
  find_op("", "Cast", &info);
  assert_int_equal(info.input_dtypes, (1u << TB_DTYPE_COUNT) - 1u);
  find_op("", "MatMul", &info);
  assert_int_equal(info.input_dtypes, TB_DTYPE_BIT(TB_DTYPE_F64) | TB_DTYPE_BIT(TB_DTYPE_F32) | TB_DTYPE_BIT(TB_DTYPE_F16) |
                                          TB_DTYPE_BIT(TB_DTYPE_BF16) | TB_DTYPE_BIT(TB_DTYPE_I64) | TB_DTYPE_BIT(TB_DTYPE_I32));
  find_op("", "Gather", &info);
  assert_int_equal(info.input_dtypes, (1u << TB_DTYPE_COUNT) - 1u);
  find_op("", "BatchNormalization", &info);
  assert_int_equal(info.opset_count, 2);
  assert_int_equal(info.opsets[0], 1);
  assert_int_equal(info.opsets[1], 14);
  /* O1's fused operators are listed in their domain */
  find_op("tb", "FusedConv", &info);
  assert_true(info.fast_cpu_kernel);
}

/* With AVX2 masked (and so every AVX-512 feature), only the portable fast kernels are usable. */
static void usable_follows_the_cpu_features(void **state) {
  (void)state;
  setenv("TB_CPU_FEATURES", "-avx2", 1);
  tb_op_info info = {.size = sizeof info};
  size_t conv = find_op("", "Conv", &info);
  size_t checked = 0;
  for (size_t k = 0; k < info.kernel_count; k++) {
    tb_op_kernel kn = kernel_at(conv, k);
    if (kn.backend != TB_BACKEND_CPU) continue;
    bool vector = strstr(kn.cpu_features, "avx") != NULL;
    assert_true(kn.usable == !vector);
    checked += vector;
  }
  assert_true(checked >= 2);
  unsetenv("TB_CPU_FEATURES");
}

static void argument_errors(void **state) {
  (void)state;
  tb_op_info info = {.size = sizeof info};
  size_t n = tb_op_info_count();
  assert_int_equal(tb_op_info_get(n, &info), TB_ERR_INVALID_ARGUMENT);
  char want[160];
  snprintf(want, sizeof want, "tb_op_info_get: index %zu is out of range; there are %zu operators", n, n);
  assert_string_equal(tb_last_error(), want);
  assert_int_equal(tb_op_info_get(0, NULL), TB_ERR_INVALID_ARGUMENT);
  info.size = 8;
  assert_int_equal(tb_op_info_get(0, &info), TB_ERR_INVALID_ARGUMENT);
  snprintf(want, sizeof want,
           "tb_op_info_get: info must not be NULL and its size must be set to sizeof(tb_op_info) (%zu, got 8)", sizeof info);
  assert_string_equal(tb_last_error(), want);
  tb_op_kernel kn = {.size = sizeof kn};
  size_t if_op = find_op("", "If", &info);
  assert_int_equal(tb_op_kernel_get(if_op, info.kernel_count, &kn), TB_ERR_INVALID_ARGUMENT);
  snprintf(want, sizeof want, "tb_op_kernel_get: kernel index %zu is out of range; If has %zu kernel%s", info.kernel_count,
           info.kernel_count, info.kernel_count == 1 ? "" : "s");
  assert_string_equal(tb_last_error(), want);
  assert_int_equal(tb_op_kernel_get(n, 0, &kn), TB_ERR_INVALID_ARGUMENT);
  snprintf(want, sizeof want, "tb_op_kernel_get: operator index %zu is out of range; there are %zu operators", n, n);
  assert_string_equal(tb_last_error(), want);
  kn.size = 0;
  assert_int_equal(tb_op_kernel_get(0, 0, &kn), TB_ERR_INVALID_ARGUMENT);
  TB_ASSERT_CONTAINS(tb_last_error(), "its size must be set to sizeof(tb_op_kernel)");
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test_setup(sorted_and_from_the_registry, setup),
      cmocka_unit_test_setup(conv_row, setup),
      cmocka_unit_test_setup(reference_only_rows, setup),
      cmocka_unit_test_setup(usable_follows_the_cpu_features, setup),
      cmocka_unit_test_setup(argument_errors, setup),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
