/* The HIP backend's memory ops (tb_hip_ops) on the recorded 8x MI300X node with the fake HIP runtime: the
 * device found by discovery is opened, every call runs on that device (hipSetDevice) and leaves the
 * calling thread's own current device as it was; memory is written and read back at offsets, copied,
 * filled with every pattern size, synchronized; memory_info gives the fake's numbers; out of memory and
 * runtime errors come back as statuses with the code and its name; close leaves nothing allocated; and
 * the caching allocator runs over it. */
#include <pthread.h>
#include "test_amd_tree.h"
#include "test_gpumem_helpers.h"

#define MIB (1024ull * 1024ull)

static tb_device_list *list;

static int setup(void **state) {
  (void)state;
  amd_use_fakes();
  unsetenv("FAKE_HIP_MEM_CAPACITY");
  unsetenv("FAKE_HIP_FAIL");
  unsetenv("FAKE_HIP_FAIL_CODE");
  list = tbt_discover(AMD_ROCM_ONLY);
  return 0;
}

static int teardown(void **state) {
  (void)state;
  tb_device_list_destroy(list);
  list = NULL;
  return 0;
}

static int live_allocations(int device) {
  int (*fn)(int) = (int (*)(int))gpumem_fake_symbol("fake_hip", "fake_hip_live_allocations");
  return fn(device);
}

static int current_device(void) {
  int (*fn)(void) = (int (*)(void))gpumem_fake_symbol("fake_hip", "fake_hip_current_device");
  return fn();
}

static unsigned long long bytes_in_use(int device) {
  unsigned long long (*fn)(int) = (unsigned long long (*)(int))gpumem_fake_symbol("fake_hip", "fake_hip_bytes_in_use");
  return fn(device);
}

static unsigned long long memset_calls(int width) {
  unsigned long long (*fn)(int) = (unsigned long long (*)(int))gpumem_fake_symbol("fake_hip", "fake_hip_memset_calls");
  return fn(width);
}

/* The caller's own hipSetDevice, as an application using HIP itself would make it. */
static void caller_sets_device(int device) {
  int (*fn)(int) = (int (*)(int))gpumem_fake_symbol("fake_hip", "hipSetDevice");
  assert_int_equal(fn(device), 0);
}

static void *open_rocm(int index) {
  const tb_device_info *d = tbt_nth(list, TB_BACKEND_ROCM, index);
  assert_non_null(d);
  assert_true(d->usable);
  void *state = NULL;
  TB_ASSERT_OK(tb_hip_ops.open(d, &state));
  assert_non_null(state);
  return state;
}

static void close_and_expect_nothing_live(void *state) {
  tb_hip_ops.close(state);
  assert_int_equal(live_allocations(-1), 0);
}

static void every_call_runs_on_the_backend_device(void **s) {
  (void)s;
  caller_sets_device(0);
  void *state = open_rocm(3);
  assert_int_equal(tb_hip_ops.kind, TB_BACKEND_ROCM);
  assert_int_equal(tb_hip_ops.alignment(state), 256);
  assert_int_equal(current_device(), 0); /* open put the thread's device back */
  tb_devmem mem;
  TB_ASSERT_OK(tb_hip_ops.alloc(state, 3 * MIB, &mem));
  assert_int_equal(live_allocations(3), 1); /* on rocm:3, not on the thread's device 0 */
  assert_int_equal(live_allocations(0), 0);
  assert_int_equal(bytes_in_use(3), 3 * MIB);
  assert_int_equal(current_device(), 0);
  caller_sets_device(5); /* whatever the caller had current stays current */
  unsigned char in[100], out[100];
  gpumem_pattern(in, sizeof in, 3);
  TB_ASSERT_OK(tb_hip_ops.write(state, mem, 7, in, sizeof in));
  TB_ASSERT_OK(tb_hip_ops.read(state, mem, 7, out, sizeof out));
  assert_memory_equal(in, out, sizeof in);
  assert_int_equal(current_device(), 5);
  caller_sets_device(3);
  TB_ASSERT_OK(tb_hip_ops.synchronize(state));
  assert_int_equal(current_device(), 3);
  caller_sets_device(0);
  tb_hip_ops.free(state, mem);
  assert_int_equal(live_allocations(3), 0);
  close_and_expect_nothing_live(state);
}

static void round_trip_copy_and_fill(void **s) {
  (void)s;
  void *state = open_rocm(0);
  gpumem_round_trip(&tb_hip_ops, state);
  gpumem_copy(&tb_hip_ops, state);
  unsigned long long d8 = memset_calls(1), d16 = memset_calls(2), d32 = memset_calls(4);
  gpumem_fill_patterns(&tb_hip_ops, state);
  /* hipMemset for the 7 zeroings and the 1-byte fill; hipMemsetD16 once; hipMemsetD32 for the 4-byte fill
   * and the 8-byte pattern of equal halves; the rest through a host buffer. */
  assert_int_equal(memset_calls(1) - d8, 8);
  assert_int_equal(memset_calls(2) - d16, 1);
  assert_int_equal(memset_calls(4) - d32, 2);
  gpumem_bad_requests(&tb_hip_ops, state, "rocm:0");
  close_and_expect_nothing_live(state);
}

static void synchronize_and_memory_info(void **s) {
  (void)s;
  setenv("FAKE_HIP_MEM_CAPACITY", "64M", 1);
  void *state = open_rocm(6);
  TB_ASSERT_OK(tb_hip_ops.synchronize(state));
  uint64_t free_bytes = 0, total = 0;
  TB_ASSERT_OK(tb_hip_ops.memory_info(state, &free_bytes, &total));
  assert_int_equal(total, 64 * MIB);
  assert_int_equal(free_bytes, 64 * MIB);
  tb_devmem mem;
  TB_ASSERT_OK(tb_hip_ops.alloc(state, 5 * MIB, &mem));
  TB_ASSERT_OK(tb_hip_ops.memory_info(state, &free_bytes, &total));
  assert_int_equal(total, 64 * MIB);
  assert_int_equal(free_bytes, 59 * MIB); /* device 6's own use, asked on device 6 */

  setenv("FAKE_HIP_FAIL", "sync", 1);
  assert_int_equal(tb_hip_ops.synchronize(state), TB_ERR_DRIVER);
  TB_ASSERT_CONTAINS(tb_last_error(), "rocm:6: hipDeviceSynchronize failed with 700 hipErrorIllegalAddress");
  setenv("FAKE_HIP_FAIL", "info", 1);
  setenv("FAKE_HIP_FAIL_CODE", "999", 1);
  assert_int_equal(tb_hip_ops.memory_info(state, &free_bytes, &total), TB_ERR_DRIVER);
  TB_ASSERT_CONTAINS(tb_last_error(), "hipMemGetInfo failed with 999 hipErrorUnknown");
  unsetenv("FAKE_HIP_FAIL");
  unsetenv("FAKE_HIP_FAIL_CODE");
  tb_hip_ops.free(state, mem);
  close_and_expect_nothing_live(state);
}

static void out_of_memory_then_recovery(void **s) {
  (void)s;
  setenv("FAKE_HIP_MEM_CAPACITY", "8M", 1);
  void *state = open_rocm(0);
  tb_devmem held, big, small;
  TB_ASSERT_OK(tb_hip_ops.alloc(state, 6 * MIB, &held));
  assert_int_equal(tb_hip_ops.alloc(state, 4 * MIB, &big), TB_ERR_OUT_OF_MEMORY);
  TB_ASSERT_CONTAINS(tb_last_error(), "rocm:0: hipMalloc of 4194304 bytes failed with 2 hipErrorOutOfMemory");
  TB_ASSERT_CONTAINS(tb_last_error(), "the runtime reports 2097152 bytes free of 8388608");
  TB_ASSERT_OK(tb_hip_ops.alloc(state, 2 * MIB, &small));
  tb_hip_ops.free(state, held);
  TB_ASSERT_OK(tb_hip_ops.alloc(state, 4 * MIB, &big));
  tb_hip_ops.free(state, big);
  tb_hip_ops.free(state, small);
  close_and_expect_nothing_live(state);
}

static void runtime_error_on_copies(void **s) {
  (void)s;
  void *state = open_rocm(0);
  tb_devmem a, b;
  TB_ASSERT_OK(tb_hip_ops.alloc(state, 4096, &a));
  TB_ASSERT_OK(tb_hip_ops.alloc(state, 4096, &b));
  unsigned char buf[64] = {1, 2, 3};
  setenv("FAKE_HIP_FAIL", "copy", 1);
  assert_int_equal(tb_hip_ops.write(state, a, 128, buf, 64), TB_ERR_DRIVER);
  TB_ASSERT_CONTAINS(tb_last_error(),
                     "rocm:0: hipMemcpy (host to device) of 64 bytes at offset 128 failed with 700 hipErrorIllegalAddress");
  assert_int_equal(tb_hip_ops.read(state, a, 0, buf, 64), TB_ERR_DRIVER);
  TB_ASSERT_CONTAINS(tb_last_error(), "hipMemcpy (device to host) of 64 bytes at offset 0 failed with 700");
  setenv("FAKE_HIP_FAIL_CODE", "12345", 1);
  assert_int_equal(tb_hip_ops.copy(state, b, 0, a, 0, 64), TB_ERR_DRIVER);
  TB_ASSERT_CONTAINS(tb_last_error(), "hipMemcpy (device to device) of 64 bytes at offset 0 failed with 12345 hipError");
  setenv("FAKE_HIP_FAIL", "fill", 1);
  setenv("FAKE_HIP_FAIL_CODE", "1", 1);
  assert_int_equal(tb_hip_ops.fill(state, a, 0, "\x07\x00", 2, 64), TB_ERR_DRIVER);
  TB_ASSERT_CONTAINS(tb_last_error(), "hipMemsetD16 of 64 bytes at offset 0 failed with 1 hipErrorInvalidValue");
  unsetenv("FAKE_HIP_FAIL");
  unsetenv("FAKE_HIP_FAIL_CODE");
  TB_ASSERT_OK(tb_hip_ops.write(state, a, 128, buf, 64));
  tb_hip_ops.free(state, a);
  tb_hip_ops.free(state, b);
  close_and_expect_nothing_live(state);
}

static void open_failures(void **s) {
  (void)s;
  const tb_device_info *d = tbt_nth(list, TB_BACKEND_ROCM, 5);
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

typedef struct thread_job {
  void *state;
  tb_devmem mem;
  size_t offset;
  unsigned seed;
  int failures;
  int device_after;
} thread_job;

static void *worker(void *arg) {
  thread_job *job = arg;
  unsigned char in[512], out[512];
  for (int round = 0; round < 200; round++) {
    gpumem_pattern(in, sizeof in, job->seed + (unsigned)round);
    if (tb_hip_ops.write(job->state, job->mem, job->offset, in, sizeof in) != TB_OK ||
        tb_hip_ops.read(job->state, job->mem, job->offset, out, sizeof out) != TB_OK || memcmp(in, out, sizeof in))
      job->failures++;
  }
  job->device_after = current_device();
  return NULL;
}

/* New threads start on device 0; each call sets rocm:2 for itself and puts 0 back. */
static void threads_share_one_backend(void **s) {
  (void)s;
  void *state = open_rocm(2);
  tb_devmem mem;
  TB_ASSERT_OK(tb_hip_ops.alloc(state, 4096, &mem));
  thread_job jobs[4];
  pthread_t threads[4];
  for (int i = 0; i < 4; i++) {
    jobs[i] = (thread_job){state, mem, (size_t)i * 1024, (unsigned)i * 1000, 0, -1};
    assert_int_equal(pthread_create(&threads[i], NULL, worker, &jobs[i]), 0);
  }
  for (int i = 0; i < 4; i++) {
    pthread_join(threads[i], NULL);
    assert_int_equal(jobs[i].failures, 0);
    assert_int_equal(jobs[i].device_after, 0);
  }
  tb_hip_ops.free(state, mem);
  close_and_expect_nothing_live(state);
}

static void caching_allocator_over_hip(void **s) {
  (void)s;
  setenv("FAKE_HIP_MEM_CAPACITY", "64M", 1);
  void *state = open_rocm(1);
  gpumem_through_allocator(&tb_hip_ops, state, "rocm:1", 64 * MIB, 64 * MIB);
  assert_int_equal(live_allocations(1), 0);
  gpumem_allocator_oom(&tb_hip_ops, state, "rocm:1", (size_t)(100 * MIB));
  close_and_expect_nothing_live(state);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test_setup_teardown(every_call_runs_on_the_backend_device, setup, teardown),
      cmocka_unit_test_setup_teardown(round_trip_copy_and_fill, setup, teardown),
      cmocka_unit_test_setup_teardown(synchronize_and_memory_info, setup, teardown),
      cmocka_unit_test_setup_teardown(out_of_memory_then_recovery, setup, teardown),
      cmocka_unit_test_setup_teardown(runtime_error_on_copies, setup, teardown),
      cmocka_unit_test_setup_teardown(open_failures, setup, teardown),
      cmocka_unit_test_setup_teardown(threads_share_one_backend, setup, teardown),
      cmocka_unit_test_setup_teardown(caching_allocator_over_hip, setup, teardown),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
