/* Status names, the thread-local last error, and name parsing of the public enums. */
#include <pthread.h>
#include <string.h>
#include "test_util.h"

static void status_names(void **state) {
  (void)state;
  assert_string_equal(tb_status_str(TB_OK), "TB_OK");
  assert_string_equal(tb_status_str(TB_ERR_NOT_FOUND), "TB_ERR_NOT_FOUND");
  assert_string_equal(tb_status_str(TB_ERR_INTERNAL), "TB_ERR_INTERNAL");
  assert_string_equal(tb_status_str((tb_status)999), "TB_ERR_UNKNOWN");
}

static void *fail_on_other_thread(void *arg) {
  (void)arg;
  tb_backend_kind k;
  assert_int_equal(tb_backend_parse("warp-drive", &k, NULL), TB_ERR_NOT_FOUND);
  return NULL;
}

static void last_error_is_per_thread(void **state) {
  (void)state;
  tb_clear_error();
  assert_string_equal(tb_last_error(), "");
  pthread_t t;
  assert_int_equal(pthread_create(&t, NULL, fail_on_other_thread, NULL), 0);
  pthread_join(t, NULL);
  assert_string_equal(tb_last_error(), "");
  tb_backend_kind k;
  assert_int_equal(tb_backend_parse("warp-drive", &k, NULL), TB_ERR_NOT_FOUND);
  TB_ASSERT_CONTAINS(tb_last_error(), "unknown backend 'warp-drive'");
  TB_ASSERT_CONTAINS(tb_last_error(), "cuda (nvidia)");
}

static void backend_names_and_aliases(void **state) {
  (void)state;
  static const struct { const char *name; tb_backend_kind kind; } cases[] = {
      {"cpu", TB_BACKEND_CPU},   {"CUDA", TB_BACKEND_CUDA},    {"nvidia", TB_BACKEND_CUDA},
      {"rocm", TB_BACKEND_ROCM}, {"AMD", TB_BACKEND_ROCM},     {"hip", TB_BACKEND_ROCM},
      {"xpu", TB_BACKEND_XPU},   {"Intel", TB_BACKEND_XPU},    {"level_zero", TB_BACKEND_XPU},
      {"tpu", TB_BACKEND_TPU},   {"xla", TB_BACKEND_TPU},      {"Vulkan", TB_BACKEND_VULKAN},
      {"opencl", TB_BACKEND_OPENCL}};
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
    tb_backend_kind k = TB_BACKEND_COUNT;
    bool is_auto = true;
    TB_ASSERT_OK(tb_backend_parse(cases[i].name, &k, &is_auto));
    assert_int_equal(k, cases[i].kind);
    assert_false(is_auto);
  }
  tb_backend_kind k = TB_BACKEND_COUNT;
  bool is_auto = false;
  TB_ASSERT_OK(tb_backend_parse("AUTO", &k, &is_auto));
  assert_true(is_auto);
  assert_int_equal(tb_backend_parse("auto", &k, NULL), TB_ERR_INVALID_ARGUMENT);
  assert_int_equal(tb_backend_parse("", &k, &is_auto), TB_ERR_NOT_FOUND);
  assert_int_equal(tb_backend_parse(NULL, &k, &is_auto), TB_ERR_INVALID_ARGUMENT);
  assert_string_equal(tb_backend_name(TB_BACKEND_ROCM), "rocm");
  assert_string_equal(tb_backend_name(TB_BACKEND_COUNT), "?");
}

static void dtype_and_feature_names(void **state) {
  (void)state;
  tb_dtype d;
  TB_ASSERT_OK(tb_dtype_parse("bfloat16", &d));
  assert_int_equal(d, TB_DTYPE_BF16);
  TB_ASSERT_OK(tb_dtype_parse("FP8_E4M3FN", &d));
  assert_int_equal(d, TB_DTYPE_FP8_E4M3FN);
  assert_int_equal(tb_dtype_size(TB_DTYPE_I64), 8);
  assert_int_equal(tb_dtype_size(TB_DTYPE_COUNT), 0);
  assert_int_equal(tb_dtype_parse("float128", &d), TB_ERR_NOT_FOUND);
  TB_ASSERT_CONTAINS(tb_last_error(), "unknown dtype 'float128'");
  tb_feature f;
  TB_ASSERT_OK(tb_feature_parse("AMX_BF16", &f));
  assert_int_equal(f, TB_FEATURE_AMX_BF16);
  for (int i = 0; i < TB_FEATURE_COUNT; i++) {
    TB_ASSERT_OK(tb_feature_parse(tb_feature_name((tb_feature)i), &f));
    assert_int_equal(f, i);
  }
  assert_int_equal(tb_feature_parse("avx1024", &f), TB_ERR_NOT_FOUND);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(status_names),
      cmocka_unit_test(last_error_is_per_thread),
      cmocka_unit_test(backend_names_and_aliases),
      cmocka_unit_test(dtype_and_feature_names),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
