/* The backend handle and the seeds' conveniences (list available, detect best, is-available), run
 * against real discovery on a machine made empty: TB_FSROOT is an empty directory and every vendor
 * library points nowhere, so the native CPU (cpu:0) is the only usable device. */
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "test_util.h"

static char empty_root[] = "/tmp/tb-test-backend-XXXXXX";

static int group_setup(void **state) {
  (void)state;
  return mkdtemp(empty_root) ? 0 : -1;
}

static int group_teardown(void **state) {
  (void)state;
  return rmdir(empty_root);
}

static int setup(void **state) {
  (void)state;
  tbt_clear_env();
  setenv("TB_FSROOT", empty_root, 1);
  tbt_no_vendor_libs();
  return 0;
}

static void create_auto_gives_cpu(void **state) {
  (void)state;
  tb_backend *b = NULL;
  TB_ASSERT_OK(tb_backend_create(NULL, &b));
  assert_non_null(b);
  const tb_device_info *d = tb_backend_device(b);
  assert_non_null(d);
  assert_string_equal(d->device, "cpu:0");
  assert_int_equal(d->backend, TB_BACKEND_CPU);
  assert_true(d->usable);
  assert_int_equal(tb_backend_kind_of(b), TB_BACKEND_CPU);
  /* The device stays valid while other discoveries come and go. */
  tb_backend *other = NULL;
  TB_ASSERT_OK(tb_backend_create("CPU", &other));
  tb_backend_destroy(other);
  assert_string_equal(tb_backend_device(b)->device, "cpu:0");
  assert_int_equal(tb_backend_device(b)->index, 0);
  tb_backend_destroy(b);
}

static void create_by_name_is_strict(void **state) {
  (void)state;
  tb_backend *b = (tb_backend *)1;
  assert_int_equal(tb_backend_create("cuda", &b), TB_ERR_UNAVAILABLE);
  assert_null(b);
  TB_ASSERT_CONTAINS(tb_last_error(), "request 'cuda' requested, but CUDA is unavailable");
  setenv("TB_BACKEND", "rocm", 1);
  assert_int_equal(tb_backend_create(NULL, &b), TB_ERR_UNAVAILABLE);
  TB_ASSERT_CONTAINS(tb_last_error(), "TB_BACKEND=rocm requested, but ROCm is unavailable");
  setenv("TB_BACKEND", "warp", 1);
  assert_int_equal(tb_backend_create(NULL, &b), TB_ERR_NOT_FOUND);
  TB_ASSERT_CONTAINS(tb_last_error(), "TB_BACKEND=warp is not a backend; valid names are");
  setenv("TB_BACKEND", "cpu", 1);
  TB_ASSERT_OK(tb_backend_create(NULL, &b));
  assert_int_equal(tb_backend_kind_of(b), TB_BACKEND_CPU);
  tb_backend_destroy(b);
  assert_int_equal(tb_backend_create("auto", NULL), TB_ERR_INVALID_ARGUMENT);
}

static void create_by_kind(void **state) {
  (void)state;
  tb_backend *b = NULL;
  TB_ASSERT_OK(tb_backend_create_kind(TB_BACKEND_CPU, 0, &b));
  assert_string_equal(tb_backend_device(b)->device, "cpu:0");
  tb_backend_destroy(b);
  b = (tb_backend *)1;
  assert_int_equal(tb_backend_create_kind(TB_BACKEND_CPU, 1, &b), TB_ERR_NOT_FOUND);
  assert_null(b);
  TB_ASSERT_CONTAINS(tb_last_error(), "no device cpu:1; cpu has only cpu:0");
  assert_int_equal(tb_backend_create_kind(TB_BACKEND_CUDA, 0, &b), TB_ERR_UNAVAILABLE);
  TB_ASSERT_CONTAINS(tb_last_error(), "CUDA is unavailable");
  assert_int_equal(tb_backend_create_kind(TB_BACKEND_COUNT, 0, &b), TB_ERR_INVALID_ARGUMENT);
  TB_ASSERT_CONTAINS(tb_last_error(), "is not a tb_backend_kind value");
  assert_int_equal(tb_backend_create_kind(TB_BACKEND_CPU, -1, &b), TB_ERR_INVALID_ARGUMENT);
  TB_ASSERT_CONTAINS(tb_last_error(), "index -1 must be >= 0");
  assert_int_equal(tb_backend_create_kind(TB_BACKEND_CPU, 0, NULL), TB_ERR_INVALID_ARGUMENT);
}

static void null_handles(void **state) {
  (void)state;
  tb_backend_destroy(NULL);
  assert_null(tb_backend_device(NULL));
  assert_int_equal(tb_backend_kind_of(NULL), TB_BACKEND_COUNT);
}

static void list_available_and_best(void **state) {
  (void)state;
  tb_backend_kind kinds[TB_BACKEND_COUNT];
  size_t count = 99;
  TB_ASSERT_OK(tb_backend_list_available(kinds, TB_BACKEND_COUNT, &count));
  assert_int_equal(count, 1);
  assert_int_equal(kinds[0], TB_BACKEND_CPU);
  /* Asking with no room reports how many there are. */
  count = 99;
  assert_int_equal(tb_backend_list_available(NULL, 0, &count), TB_ERR_INVALID_ARGUMENT);
  assert_int_equal(count, 1);
  TB_ASSERT_CONTAINS(tb_last_error(), "capacity 0 is too small for 1 available backends");
  assert_int_equal(tb_backend_list_available(kinds, TB_BACKEND_COUNT, NULL), TB_ERR_INVALID_ARGUMENT);
  assert_int_equal(tb_backend_list_available(NULL, 3, &count), TB_ERR_INVALID_ARGUMENT);

  tb_backend_kind best = TB_BACKEND_COUNT;
  TB_ASSERT_OK(tb_backend_detect_best(&best));
  assert_int_equal(best, TB_BACKEND_CPU);
  /* detect_best is what `auto` picks: TB_BACKEND does not change it. */
  setenv("TB_BACKEND", "cuda", 1);
  best = TB_BACKEND_COUNT;
  TB_ASSERT_OK(tb_backend_detect_best(&best));
  assert_int_equal(best, TB_BACKEND_CPU);
  assert_int_equal(tb_backend_detect_best(NULL), TB_ERR_INVALID_ARGUMENT);
}

static void is_available(void **state) {
  (void)state;
  assert_true(tb_backend_is_available(TB_BACKEND_CPU));
  static const tb_backend_kind absent[] = {TB_BACKEND_CUDA, TB_BACKEND_ROCM, TB_BACKEND_XPU, TB_BACKEND_TPU,
                                           TB_BACKEND_VULKAN, TB_BACKEND_OPENCL};
  for (size_t i = 0; i < sizeof absent / sizeof absent[0]; i++)
    if (tb_backend_is_available(absent[i])) fail_msg("%s reported available on an empty machine", tb_backend_name(absent[i]));
  assert_false(tb_backend_is_available(TB_BACKEND_COUNT));
  assert_false(tb_backend_is_available((tb_backend_kind)-1));
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test_setup(create_auto_gives_cpu, setup),
      cmocka_unit_test_setup(create_by_name_is_strict, setup),
      cmocka_unit_test_setup(create_by_kind, setup),
      cmocka_unit_test_setup(null_handles, setup),
      cmocka_unit_test_setup(list_available_and_best, setup),
      cmocka_unit_test_setup(is_available, setup),
  };
  return cmocka_run_group_tests(tests, group_setup, group_teardown);
}
