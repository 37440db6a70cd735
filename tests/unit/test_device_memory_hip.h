/* The HIP case of the device-memory suite (included by test_device_memory.c after its helpers): the
 * recorded 8x MI300X node with the fake HIP runtime; every call runs on the backend's device (hipSetDevice)
 * and leaves the calling thread's own current device as it was; the HIP-only open paths fail as the
 * runtime would. */
#include "test_amd_tree.h"

static void hip_setup(void) {
  amd_use_fakes();
  devmem_list = tbt_discover(AMD_ROCM_ONLY);
}

static void hip_nothing_live(void) {} /* HIP has no context or stream of ours: allocations are all */

static int hip_current_device(void) { return fake_count("fake_hip_current_device"); }

/* The caller's own hipSetDevice, as an application using HIP itself would make it. */
static void caller_sets_device(int device) {
  int (*fn)(int) = (int (*)(int))gpumem_fake_symbol("fake_hip", "hipSetDevice");
  assert_int_equal(fn(device), 0);
}

static void hip_info_failure(void *state) {
  uint64_t free_bytes = 0, total = 0;
  setenv("FAKE_HIP_FAIL", "info", 1);
  setenv("FAKE_HIP_FAIL_CODE", "999", 1);
  assert_int_equal(tb_hip_ops.memory_info(state, &free_bytes, &total), TB_ERR_DRIVER);
  TB_ASSERT_CONTAINS(tb_last_error(), "hipMemGetInfo failed with 999 hipErrorUnknown");
  unsetenv("FAKE_HIP_FAIL");
  unsetenv("FAKE_HIP_FAIL_CODE");
}

static void every_call_runs_on_the_backend_device(void **s) {
  (void)s;
  caller_sets_device(0);
  void *state = open_device(3);
  assert_int_equal(tb_hip_ops.kind, TB_BACKEND_ROCM);
  assert_int_equal(tb_hip_ops.alignment(state), 256);
  assert_int_equal(hip_current_device(), 0); /* open put the thread's device back */
  tb_devmem mem;
  TB_ASSERT_OK(tb_hip_ops.alloc(state, 3 * MIB, &mem));
  assert_int_equal(live_allocations(3), 1); /* on rocm:3, not on the thread's device 0 */
  assert_int_equal(live_allocations(0), 0);
  assert_int_equal(fake_u64("fake_hip_bytes_in_use", 3), 3 * MIB);
  assert_int_equal(hip_current_device(), 0);
  caller_sets_device(5); /* whatever the caller had current stays current */
  unsigned char in[100], out[100];
  gpumem_pattern(in, sizeof in, 3);
  TB_ASSERT_OK(tb_hip_ops.write(state, mem, 7, in, sizeof in));
  TB_ASSERT_OK(tb_hip_ops.read(state, mem, 7, out, sizeof out));
  assert_memory_equal(in, out, sizeof in);
  assert_int_equal(hip_current_device(), 5);
  caller_sets_device(3);
  TB_ASSERT_OK(tb_hip_ops.synchronize(state));
  assert_int_equal(hip_current_device(), 3);
  caller_sets_device(0);
  tb_hip_ops.free(state, mem);
  assert_int_equal(live_allocations(3), 0);
  close_and_expect_nothing_live(state);
}

static void hip_open_failures(void **s) {
  (void)s;
  const tb_device_info *d = tbt_nth(devmem_list, TB_BACKEND_ROCM, 5);
  void *state = (void *)1;
  setenv("FAKE_HIP_MODE", "error", 1);
  assert_int_equal(tb_hip_ops.open(d, &state), TB_ERR_DRIVER);
  assert_null(state);
  TB_ASSERT_CONTAINS(tb_last_error(), "rocm:5: hipInit failed with 35 hipErrorInsufficientDriver; check that the amdgpu");
  unsetenv("FAKE_HIP_MODE");

  setenv("FAKE_HIP_FAIL", "set_device", 1);
  setenv("FAKE_HIP_FAIL_CODE", "101", 1);
  assert_int_equal(tb_hip_ops.open(d, &state), TB_ERR_DRIVER);
  TB_ASSERT_CONTAINS(tb_last_error(), "rocm:5: hipSetDevice (5) failed with 101 hipErrorInvalidDevice");
  unsetenv("FAKE_HIP_FAIL");
  unsetenv("FAKE_HIP_FAIL_CODE");

  setenv("FAKE_HIP_DEVICES", "mi300x_first4", 1); /* HIP_VISIBLE_DEVICES changed since discovery */
  assert_int_equal(tb_hip_ops.open(d, &state), TB_ERR_NOT_FOUND);
  TB_ASSERT_CONTAINS(tb_last_error(), "rocm:5: HIP lists 4 devices");
  unsetenv("FAKE_HIP_DEVICES");

  setenv("TB_HIP_LIB", "/nonexistent/libamdhip64.so", 1);
  assert_int_equal(tb_hip_ops.open(d, &state), TB_ERR_UNAVAILABLE);
  TB_ASSERT_CONTAINS(tb_last_error(), "rocm:5: libamdhip64.so not found (tried TB_HIP_LIB=/nonexistent/libamdhip64.so)");
  setenv("TB_HIP_LIB", tbt_fake("fake_hip"), 1);

  tb_device_info cuda = {.size = sizeof cuda, .backend = TB_BACKEND_CUDA, .index = 0, .device = "cuda:0"};
  assert_int_equal(tb_hip_ops.open(&cuda, &state), TB_ERR_INVALID_ARGUMENT);
  TB_ASSERT_CONTAINS(tb_last_error(), "the HIP backend needs a ROCm device (rocm:N), not cuda:0");
  assert_null(state);
  assert_int_equal(live_allocations(-1), 0);
}

static const struct CMUnitTest hip_own[] = {
    cmocka_unit_test(every_call_runs_on_the_backend_device),
    cmocka_unit_test(hip_open_failures),
};

static const devmem_case hip_case = {
    .name = "hip",
    .ops = &tb_hip_ops,
    .kind = TB_BACKEND_ROCM,
    .prefix = "rocm",
    .fake = "fake_hip",
    .fail_env = "FAKE_HIP_FAIL",
    .fail_code_env = "FAKE_HIP_FAIL_CODE",
    .capacity_env = "FAKE_HIP_MEM_CAPACITY",
    .setup = hip_setup,
    .nothing_live = hip_nothing_live,
    .thread_is_as_it_was = NULL,
    .thread_state = hip_current_device, /* new threads start on device 0; each call puts 0 back */
    /* hipMemset for the 7 zeroings and the 1-byte fill; hipMemsetD16 once; hipMemsetD32 for the 4-byte
     * fill and the 8-byte pattern of equal halves; the rest through a host buffer. */
    .fill_counter = "fake_hip_memset_calls",
    .fills = {8, 1, 2, 0},
    .info_capacity = "64M",
    .info_device = 6,
    .info_total = 64 * MIB,
    .info_free = 64 * MIB,
    .sync_failure = "rocm:6: hipDeviceSynchronize failed with 700 hipErrorIllegalAddress",
    .info_failure = hip_info_failure,
    .oom_failure = "rocm:0: hipMalloc of 4194304 bytes failed with 2 hipErrorOutOfMemory",
    .oom_free = "the runtime reports 2097152 bytes free of 8388608",
    .write_failure =
        "rocm:0: hipMemcpy (host to device) of 64 bytes at offset 128 failed with 700 hipErrorIllegalAddress",
    .read_failure = "hipMemcpy (device to host) of 64 bytes at offset 0 failed with 700",
    .unknown_code = "12345",
    .copy_failure = "hipMemcpy (device to device) of 64 bytes at offset 0 failed with 12345 hipError",
    .fill_code = "1",
    .fill_pattern = "\x07\x00",
    .fill_pattern_size = 2,
    .fill_offset = 0,
    .fill_failure = "hipMemsetD16 of 64 bytes at offset 0 failed with 1 hipErrorInvalidValue",
    .threads_device = 2,
    .allocator_device = 1,
    .allocator_capacity = "64M",
    .allocator_total = 64 * MIB,
    .allocator_free = 64 * MIB,
    .own = hip_own,
    .own_count = sizeof hip_own / sizeof hip_own[0],
};
