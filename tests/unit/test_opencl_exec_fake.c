/* The OpenCL backend with a loader that has no program or kernel calls (tests/fakes/fake_opencl.c
 * exports only the memory API): the device still opens and moves memory, and find_kernel sends every node
 * to the CPU instead of failing. */
#include "test_opencl_exec_util.h"

static void no_program_calls_means_cpu(void **state) {
  (void)state;
  tbt_clear_env();
  unsetenv("TBT_FAKE_OPENCL");
  setenv("TB_OPENCL_LIB", tbt_fake("fake_opencl"), 1);
  tb_backend *b = NULL;
  TB_ASSERT_OK(tb_backend_create("opencl:0", &b));
  toh t;
  toh_setup(&t, "Relu", 14, 1, 0, 1, NULL, 0);
  tb_value_type f = toh_type(TB_DTYPE_F32, 1, (int64_t[]){4});
  const tb_value_type *in[] = {&f};
  assert_non_null(b->ops->find_kernel);
  assert_null(tbt_backend_kernel_find(b, t.graph, toh_node(&t), in));
  float x[4] = {1, -2, 3, -4}, y[4] = {0};
  tb_tensor *d = NULL;
  TB_ASSERT_OK(tb_tensor_create(b, TB_DTYPE_F32, 1, (int64_t[]){4}, &d));
  TB_ASSERT_OK(tb_tensor_copy_from_host(d, x, sizeof x));
  TB_ASSERT_OK(tb_tensor_copy_to_host(d, y, sizeof y));
  assert_memory_equal(x, y, sizeof x);
  tb_tensor_destroy(d);
  toh_teardown(&t);
  tb_backend_destroy(b);
  unsetenv("TB_OPENCL_LIB");
}

int main(void) {
  const struct CMUnitTest tests[] = {cmocka_unit_test(no_program_calls_means_cpu)};
  return cmocka_run_group_tests(tests, NULL, NULL);
}
