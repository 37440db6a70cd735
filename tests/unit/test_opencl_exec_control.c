/* The shared control-flow kernels (If, Loop, Scan: backend/control/) registered by the OpenCL backend, on
 * opencl:0 (PoCL): each model (test_device_control.h) at O0 and O2 against the CPU at O0, every node of the graph
 * and every body node that ran placed on opencl:0 (the profile), none on the CPU. */
#include "test_opencl_exec_util.h"
#include "test_device_control.h"

static void if_keeps_its_branch_on_opencl(void **state) {
  (void)state;
  dctl_if_both_branches(clx_dev, "opencl", NULL);
}

static void loop_keeps_its_body_on_opencl(void **state) {
  (void)state;
  dctl_loop_runs(clx_dev, "opencl", NULL);
}

static void scan_keeps_its_body_on_opencl(void **state) {
  (void)state;
  dctl_scan_runs(clx_dev, "opencl", NULL);
}

static int close_device(void **state) {
  int rc = clx_teardown(state);
  unsetenv("TB_CACHE_DIR");
  return rc;
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(if_keeps_its_branch_on_opencl),
      cmocka_unit_test(loop_keeps_its_body_on_opencl),
      cmocka_unit_test(scan_keeps_its_body_on_opencl),
  };
  return cmocka_run_group_tests(tests, clx_setup, close_device);
}
