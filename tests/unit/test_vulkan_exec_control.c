/* The shared control-flow kernels (If, Loop, Scan: backend/control/) registered by the Vulkan backend, on
 * vulkan:0 (lavapipe, with the validation layer): each model (test_device_control.h) at O0 and O2 against the CPU
 * at O0, every node of the graph and every body node that ran placed on vulkan:0 (the profile), none on the CPU,
 * and no validation message. */
#include "test_vulkan_exec_util.h"
#include "test_device_control.h"

static tb_backend *vk;

static int open_device(void **state) {
  (void)state;
  tbt_clear_env();
  setenv("TB_CACHE_DIR", "off", 1);
  vk = vkx_open();
  return 0;
}

static int close_device(void **state) {
  (void)state;
  vkx_close(vk);
  vk = NULL;
  unsetenv("TB_CACHE_DIR");
  return 0;
}

static void if_keeps_its_branch_on_vulkan(void **state) {
  (void)state;
  dctl_if_both_branches(vk, "vulkan", NULL);
  vkx_assert_quiet(vk);
}

static void loop_keeps_its_body_on_vulkan(void **state) {
  (void)state;
  dctl_loop_runs(vk, "vulkan", NULL);
  vkx_assert_quiet(vk);
}

static void scan_keeps_its_body_on_vulkan(void **state) {
  (void)state;
  dctl_scan_runs(vk, "vulkan", NULL);
  vkx_assert_quiet(vk);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(if_keeps_its_branch_on_vulkan),
      cmocka_unit_test(loop_keeps_its_body_on_vulkan),
      cmocka_unit_test(scan_keeps_its_body_on_vulkan),
  };
  return cmocka_run_group_tests(tests, open_device, close_device);
}
