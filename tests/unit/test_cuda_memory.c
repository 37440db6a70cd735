/* The CUDA backend's memory ops (tb_cuda_ops) on the recorded 8x H100 node with the fake libcuda: the
 * device found by discovery is opened (primary context, stream), memory is allocated on the right GPU,
 * written and read back at offsets, copied, filled with every pattern size, synchronized; memory_info
 * gives the fake's numbers; out of memory and driver errors come back as statuses with the code and its
 * name; close releases every allocation, stream and context; and the caching allocator runs over it. */
#include <pthread.h>
#include "test_gpumem_helpers.h"

#define CUDA_ONLY (1u << TB_BACKEND_CUDA)
#define MIB (1024ull * 1024ull)

static tb_device_list *list;

static int setup(void **state) {
  tbt_setup_clean_nvidia(state);
  unsetenv("FAKE_CUDA_MEM_CAPACITY");
  unsetenv("FAKE_CUDA_FAIL");
  unsetenv("FAKE_CUDA_FAIL_CODE");
  tbt_use_fixture("h100x8");
  tbt_use_nvidia_fakes();
  list = tbt_discover(CUDA_ONLY);
  return 0;
}

static int teardown(void **state) {
  (void)state;
  tb_device_list_destroy(list);
  list = NULL;
  return 0;
}

static int fake_int(const char *name, int arg) {
  int (*fn)(int) = (int (*)(int))gpumem_fake_symbol("fake_cuda", name);
  return fn(arg);
}

static int fake_count(const char *name) {
  int (*fn)(void) = (int (*)(void))gpumem_fake_symbol("fake_cuda", name);
  return fn();
}

static unsigned long long bytes_in_use(int device) {
  unsigned long long (*fn)(int) = (unsigned long long (*)(int))gpumem_fake_symbol("fake_cuda", "fake_cuda_bytes_in_use");
  return fn(device);
}

static unsigned long long memset_calls(int width) {
  unsigned long long (*fn)(int) = (unsigned long long (*)(int))gpumem_fake_symbol("fake_cuda", "fake_cuda_memset_calls");
  return fn(width);
}

static void *open_cuda(int index) {
  const tb_device_info *d = tbt_nth(list, TB_BACKEND_CUDA, index);
  assert_non_null(d);
  assert_true(d->usable);
  void *state = NULL;
  TB_ASSERT_OK(tb_cuda_ops.open(d, &state));
  assert_non_null(state);
  return state;
}

/* After close: nothing of the backend is left in the driver. */
static void close_and_expect_nothing_live(void *state) {
  tb_cuda_ops.close(state);
  assert_int_equal(fake_int("fake_cuda_live_allocations", -1), 0);
  assert_int_equal(fake_count("fake_cuda_live_streams"), 0);
  assert_int_equal(fake_count("fake_cuda_live_contexts"), 0);
}

static void open_retains_the_primary_context_and_a_stream(void **s) {
  (void)s;
  void *state = open_cuda(2);
  assert_int_equal(tb_cuda_ops.kind, TB_BACKEND_CUDA);
  assert_int_equal(tb_cuda_ops.alignment(state), 256);
  assert_int_equal(fake_count("fake_cuda_live_contexts"), 1);
  assert_int_equal(fake_count("fake_cuda_live_streams"), 1);
  assert_int_equal(fake_count("fake_cuda_context_depth"), 0); /* pushed and popped: the thread is as it was */
  tb_devmem mem;
  TB_ASSERT_OK(tb_cuda_ops.alloc(state, 3 * MIB, &mem));
  assert_int_equal(fake_int("fake_cuda_live_allocations", 2), 1); /* on cuda:2, not on the default device */
  assert_int_equal(fake_int("fake_cuda_live_allocations", 0), 0);
  assert_int_equal(bytes_in_use(2), 3 * MIB);
  assert_int_equal(fake_count("fake_cuda_context_depth"), 0);
  tb_cuda_ops.free(state, mem);
  assert_int_equal(fake_int("fake_cuda_live_allocations", 2), 0);
  close_and_expect_nothing_live(state);
}

static void round_trip_copy_and_fill(void **s) {
  (void)s;
  void *state = open_cuda(0);
  gpumem_round_trip(&tb_cuda_ops, state);
  gpumem_copy(&tb_cuda_ops, state);
  unsigned long long d8 = memset_calls(1), d16 = memset_calls(2), d32 = memset_calls(4);
  gpumem_fill_patterns(&tb_cuda_ops, state);
  /* 1 byte: cuMemsetD8 for the zeroing (6x) and the 1-byte fill; 2 bytes: cuMemsetD16 once (the empty fill
   * makes no call); 4 bytes and the 8-byte pattern of two equal halves: cuMemsetD32; the 8-byte pattern
   * with different halves and the misaligned 4-byte fill go through a host buffer. */
  assert_int_equal(memset_calls(1) - d8, 7 + 1);
  assert_int_equal(memset_calls(2) - d16, 1);
  assert_int_equal(memset_calls(4) - d32, 2);
  gpumem_bad_requests(&tb_cuda_ops, state, "cuda:0");
  assert_int_equal(fake_count("fake_cuda_context_depth"), 0);
  close_and_expect_nothing_live(state);
}

static void synchronize_and_memory_info(void **s) {
  (void)s;
  setenv("FAKE_CUDA_MEM_CAPACITY", "64M", 1);
  void *state = open_cuda(1);
  TB_ASSERT_OK(tb_cuda_ops.synchronize(state));
  uint64_t free_bytes = 0, total = 0;
  TB_ASSERT_OK(tb_cuda_ops.memory_info(state, &free_bytes, &total));
  assert_int_equal(total, 64 * MIB);
  assert_int_equal(free_bytes, 64 * MIB);
  tb_devmem mem;
  TB_ASSERT_OK(tb_cuda_ops.alloc(state, 5 * MIB, &mem));
  TB_ASSERT_OK(tb_cuda_ops.memory_info(state, &free_bytes, &total));
  assert_int_equal(total, 64 * MIB);
  assert_int_equal(free_bytes, 59 * MIB);

  setenv("FAKE_CUDA_FAIL", "sync", 1);
  assert_int_equal(tb_cuda_ops.synchronize(state), TB_ERR_DRIVER);
  TB_ASSERT_CONTAINS(tb_last_error(), "cuda:1: cuCtxSynchronize failed with 700 CUDA_ERROR_ILLEGAL_ADDRESS");
  setenv("FAKE_CUDA_FAIL", "info", 1);
  setenv("FAKE_CUDA_FAIL_CODE", "999", 1);
  assert_int_equal(tb_cuda_ops.memory_info(state, &free_bytes, &total), TB_ERR_DRIVER);
  TB_ASSERT_CONTAINS(tb_last_error(), "cuMemGetInfo_v2 failed with 999 CUDA_ERROR_UNKNOWN");
  unsetenv("FAKE_CUDA_FAIL");
  unsetenv("FAKE_CUDA_FAIL_CODE");
  tb_cuda_ops.free(state, mem);
  close_and_expect_nothing_live(state);
}

static void out_of_memory_then_recovery(void **s) {
  (void)s;
  setenv("FAKE_CUDA_MEM_CAPACITY", "8M", 1);
  void *state = open_cuda(0);
  tb_devmem held, big, small;
  TB_ASSERT_OK(tb_cuda_ops.alloc(state, 6 * MIB, &held));
  assert_int_equal(tb_cuda_ops.alloc(state, 4 * MIB, &big), TB_ERR_OUT_OF_MEMORY);
  TB_ASSERT_CONTAINS(tb_last_error(), "cuda:0: cuMemAlloc_v2 of 4194304 bytes failed with 2 CUDA_ERROR_OUT_OF_MEMORY");
  TB_ASSERT_CONTAINS(tb_last_error(), "the driver reports 2097152 bytes free of 8388608");
  assert_int_equal(fake_count("fake_cuda_context_depth"), 0); /* popped on the error path too */
  TB_ASSERT_OK(tb_cuda_ops.alloc(state, 2 * MIB, &small)); /* what fits still works */
  tb_cuda_ops.free(state, held);
  TB_ASSERT_OK(tb_cuda_ops.alloc(state, 4 * MIB, &big)); /* and the big one once there is room */
  tb_cuda_ops.free(state, big);
  tb_cuda_ops.free(state, small);
  close_and_expect_nothing_live(state);
}

static void driver_error_on_copies(void **s) {
  (void)s;
  void *state = open_cuda(0);
  tb_devmem a, b;
  TB_ASSERT_OK(tb_cuda_ops.alloc(state, 4096, &a));
  TB_ASSERT_OK(tb_cuda_ops.alloc(state, 4096, &b));
  unsigned char buf[64] = {1, 2, 3};
  setenv("FAKE_CUDA_FAIL", "copy", 1);
  assert_int_equal(tb_cuda_ops.write(state, a, 128, buf, 64), TB_ERR_DRIVER);
  TB_ASSERT_CONTAINS(tb_last_error(),
                     "cuda:0: cuMemcpyHtoD_v2 of 64 bytes at offset 128 failed with 700 CUDA_ERROR_ILLEGAL_ADDRESS");
  assert_int_equal(tb_cuda_ops.read(state, a, 0, buf, 64), TB_ERR_DRIVER);
  TB_ASSERT_CONTAINS(tb_last_error(), "cuMemcpyDtoH_v2 of 64 bytes at offset 0 failed with 700");
  setenv("FAKE_CUDA_FAIL_CODE", "12345", 1); /* a code neither the driver nor the table knows */
  assert_int_equal(tb_cuda_ops.copy(state, b, 0, a, 0, 64), TB_ERR_DRIVER);
  TB_ASSERT_CONTAINS(tb_last_error(), "cuMemcpyDtoD_v2 of 64 bytes failed with 12345 CUDA error 12345");
  setenv("FAKE_CUDA_FAIL", "fill", 1);
  setenv("FAKE_CUDA_FAIL_CODE", "1", 1);
  assert_int_equal(tb_cuda_ops.fill(state, a, 0, "\x07", 1, 64), TB_ERR_DRIVER);
  TB_ASSERT_CONTAINS(tb_last_error(), "cuMemsetD8_v2 of 64 bytes at offset 0 failed with 1 CUDA_ERROR_INVALID_VALUE");
  unsetenv("FAKE_CUDA_FAIL");
  unsetenv("FAKE_CUDA_FAIL_CODE");
  assert_int_equal(fake_count("fake_cuda_context_depth"), 0);
  TB_ASSERT_OK(tb_cuda_ops.write(state, a, 128, buf, 64)); /* the next call works */
  tb_cuda_ops.free(state, a);
  tb_cuda_ops.free(state, b);
  close_and_expect_nothing_live(state);
}

static void open_failures_leave_nothing_behind(void **s) {
  (void)s;
  const tb_device_info *d = tbt_nth(list, TB_BACKEND_CUDA, 3);
  void *state = (void *)1;
  setenv("FAKE_CUDA_FAIL", "ctx", 1);
  setenv("FAKE_CUDA_FAIL_CODE", "46", 1);
  assert_int_equal(tb_cuda_ops.open(d, &state), TB_ERR_DRIVER);
  assert_null(state);
  TB_ASSERT_CONTAINS(tb_last_error(), "cuda:3: cuDevicePrimaryCtxRetain failed with 46 CUDA_ERROR_DEVICE_UNAVAILABLE");
  TB_ASSERT_CONTAINS(tb_last_error(), "exclusive-process");
  assert_int_equal(fake_count("fake_cuda_live_contexts"), 0);

  setenv("FAKE_CUDA_FAIL", "stream", 1);
  setenv("FAKE_CUDA_FAIL_CODE", "2", 1);
  assert_int_equal(tb_cuda_ops.open(d, &state), TB_ERR_OUT_OF_MEMORY);
  TB_ASSERT_CONTAINS(tb_last_error(), "cuStreamCreate failed with 2 CUDA_ERROR_OUT_OF_MEMORY");
  assert_int_equal(fake_count("fake_cuda_live_contexts"), 0); /* the retained context was released */
  assert_int_equal(fake_count("fake_cuda_live_streams"), 0);
  unsetenv("FAKE_CUDA_FAIL");
  unsetenv("FAKE_CUDA_FAIL_CODE");

  setenv("FAKE_CUDA_MODE", "stub", 1); /* the toolkit's stub libcuda found after discovery */
  assert_int_equal(tb_cuda_ops.open(d, &state), TB_ERR_DRIVER);
  TB_ASSERT_CONTAINS(tb_last_error(), "cuInit failed with 34 CUDA_ERROR_STUB_LIBRARY; install the NVIDIA driver");
  unsetenv("FAKE_CUDA_MODE");

  setenv("TB_CUDA_LIB", "/nonexistent/libcuda.so.1", 1);
  assert_int_equal(tb_cuda_ops.open(d, &state), TB_ERR_UNAVAILABLE);
  TB_ASSERT_CONTAINS(tb_last_error(), "cuda:3: libcuda.so.1 not found (tried TB_CUDA_LIB=/nonexistent/libcuda.so.1)");
  TB_ASSERT_CONTAINS(tb_last_error(), "set TB_CUDA_LIB");
  tbt_use_nvidia_fakes();

  tb_device_info cpu = {.size = sizeof cpu, .backend = TB_BACKEND_CPU, .index = 0, .device = "cpu:0"};
  assert_int_equal(tb_cuda_ops.open(&cpu, &state), TB_ERR_INVALID_ARGUMENT);
  TB_ASSERT_CONTAINS(tb_last_error(), "the CUDA backend needs a CUDA device (cuda:N), not cpu:0");
  assert_null(state);
}

typedef struct thread_job {
  void *state;
  tb_devmem mem;
  size_t offset;
  unsigned seed;
  int failures;
  int depth_after;
} thread_job;

static void *worker(void *arg) {
  thread_job *job = arg;
  unsigned char in[512], out[512];
  for (int round = 0; round < 200; round++) {
    gpumem_pattern(in, sizeof in, job->seed + (unsigned)round);
    if (tb_cuda_ops.write(job->state, job->mem, job->offset, in, sizeof in) != TB_OK ||
        tb_cuda_ops.read(job->state, job->mem, job->offset, out, sizeof out) != TB_OK || memcmp(in, out, sizeof in))
      job->failures++;
  }
  job->depth_after = fake_count("fake_cuda_context_depth");
  return NULL;
}

/* Threads that never made the context current use the backend: each call pushes it for itself. */
static void threads_share_one_backend(void **s) {
  (void)s;
  void *state = open_cuda(0);
  tb_devmem mem;
  TB_ASSERT_OK(tb_cuda_ops.alloc(state, 4096, &mem));
  thread_job jobs[4];
  pthread_t threads[4];
  for (int i = 0; i < 4; i++) {
    jobs[i] = (thread_job){state, mem, (size_t)i * 1024, (unsigned)i * 1000, 0, -1};
    assert_int_equal(pthread_create(&threads[i], NULL, worker, &jobs[i]), 0);
  }
  for (int i = 0; i < 4; i++) {
    pthread_join(threads[i], NULL);
    assert_int_equal(jobs[i].failures, 0);
    assert_int_equal(jobs[i].depth_after, 0);
  }
  tb_cuda_ops.free(state, mem);
  close_and_expect_nothing_live(state);
}

static void caching_allocator_over_cuda(void **s) {
  (void)s;
  setenv("FAKE_CUDA_MEM_CAPACITY", "64M", 1);
  void *state = open_cuda(0);
  gpumem_through_allocator(&tb_cuda_ops, state, "cuda:0", 64 * MIB, 64 * MIB);
  assert_int_equal(fake_int("fake_cuda_live_allocations", 0), 0); /* destroy gave everything back */
  gpumem_allocator_oom(&tb_cuda_ops, state, "cuda:0", (size_t)(100 * MIB));
  TB_ASSERT_OK(tb_cuda_ops.memory_info(state, &(uint64_t){0}, &(uint64_t){0}));
  close_and_expect_nothing_live(state);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test_setup_teardown(open_retains_the_primary_context_and_a_stream, setup, teardown),
      cmocka_unit_test_setup_teardown(round_trip_copy_and_fill, setup, teardown),
      cmocka_unit_test_setup_teardown(synchronize_and_memory_info, setup, teardown),
      cmocka_unit_test_setup_teardown(out_of_memory_then_recovery, setup, teardown),
      cmocka_unit_test_setup_teardown(driver_error_on_copies, setup, teardown),
      cmocka_unit_test_setup_teardown(open_failures_leave_nothing_behind, setup, teardown),
      cmocka_unit_test_setup_teardown(threads_share_one_backend, setup, teardown),
      cmocka_unit_test_setup_teardown(caching_allocator_over_cuda, setup, teardown),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
