/* The real ICD loader (ocl-icd) with an empty vendors directory finds no ICD: clGetPlatformIDs gives
 * -1001 CL_PLATFORM_NOT_FOUND_KHR. A process of its own, because ocl-icd reads OCL_ICD_VENDORS once,
 * when it is first loaded, and the OpenCL probe keeps it loaded. */
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "test_util.h"

static void real_loader_without_icd(void **state) {
  (void)state;
  tbt_clear_env();
  char dir[] = "/tmp/tb-test-no-icd-XXXXXX";
  assert_non_null(mkdtemp(dir));
  setenv("OCL_ICD_VENDORS", dir, 1);
  tb_device_list *list = tbt_discover(1u << TB_BACKEND_OPENCL);
  unsetenv("OCL_ICD_VENDORS");
  rmdir(dir);
  assert_int_equal(tbt_count(list, TB_BACKEND_OPENCL), 0);
  const tb_backend_report *r = tb_device_list_report(list, TB_BACKEND_OPENCL);
  assert_false(r->available);
  TB_ASSERT_CONTAINS(r->summary, "no OpenCL driver");
  TB_ASSERT_CONTAINS(r->summary, "-1001 CL_PLATFORM_NOT_FOUND_KHR");
  TB_ASSERT_CONTAINS(r->fix, "install an OpenCL ICD, e.g. pocl-opencl-icd, or your GPU vendor's");
  assert_true(tbt_report_has(r, "dlopen libOpenCL.so.1", "libOpenCL.so"));
  assert_true(tbt_report_has(r, "clGetPlatformIDs", "-1001 CL_PLATFORM_NOT_FOUND_KHR"));
  tb_device_list_destroy(list);
}

int main(void) {
  const struct CMUnitTest tests[] = {cmocka_unit_test(real_loader_without_icd)};
  return cmocka_run_group_tests(tests, NULL, NULL);
}
