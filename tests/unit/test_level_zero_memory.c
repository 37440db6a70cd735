/* The Level Zero backend's memory ops (tb_level_zero_ops) on the recorded node with 4 Data Center GPU Max
 * 1550 and the fake Level Zero loader: the xpu:N device found by discovery is opened (by UUID, else by
 * index), with a context and a synchronous immediate command list; memory is written and read back at
 * offsets, copied, filled with every pattern size; memory_info gives the core API's total and Sysman's
 * free memory (per tile when tiles are devices), or says why it cannot; out of device memory and driver
 * errors come back as statuses with the code and its name; close destroys the list and the context; and
 * the caching allocator runs over it. */
#include <pthread.h>
#include "test_gpumem_helpers.h"
#include "test_intel_tree.h"

#define MIB (1024ull * 1024ull)

static tb_device_list *list;

static void discover_with(const char *devices) {
  tb_device_list_destroy(list);
  xpu_use_fake(devices, "ok");
  list = tbt_discover(XPU_ONLY);
}

static int setup(void **state) {
  (void)state;
  xpu_env("intel_max");
  unsetenv("FAKE_ZE_MEM_CAPACITY");
  unsetenv("FAKE_ZE_FAIL");
  unsetenv("FAKE_ZE_FAIL_CODE");
  list = NULL;
  discover_with("max4");
  return 0;
}

static int teardown(void **state) {
  (void)state;
  tb_device_list_destroy(list);
  list = NULL;
  return 0;
}

static int fake_int(const char *name, int arg) {
  int (*fn)(int) = (int (*)(int))gpumem_fake_symbol("fake_ze", name);
  return fn(arg);
}

static int fake_count(const char *name) {
  int (*fn)(void) = (int (*)(void))gpumem_fake_symbol("fake_ze", name);
  return fn();
}

static unsigned long long fill_calls(int size) {
  unsigned long long (*fn)(int) = (unsigned long long (*)(int))gpumem_fake_symbol("fake_ze", "fake_ze_fill_calls");
  return fn(size);
}

static const tb_device_info *xpu(int index) {
  const tb_device_info *d = tbt_nth(list, TB_BACKEND_XPU, index);
  assert_non_null(d);
  assert_true(d->usable);
  return d;
}

static void *open_xpu(int index) {
  void *state = NULL;
  TB_ASSERT_OK(tb_level_zero_ops.open(xpu(index), &state));
  assert_non_null(state);
  return state;
}

static void close_and_expect_nothing_live(void *state) {
  tb_level_zero_ops.close(state);
  assert_int_equal(fake_int("fake_ze_live_allocations", -1), 0);
  assert_int_equal(fake_count("fake_ze_live_command_lists"), 0);
  assert_int_equal(fake_count("fake_ze_live_contexts"), 0);
}

/* Allocate 4 KiB and report which core device of the fake it landed on. */
static int device_of_allocation(void *state) {
  tb_devmem mem;
  TB_ASSERT_OK(tb_level_zero_ops.alloc(state, 4096, &mem));
  int found = -1;
  for (int i = 0; i < 4; i++)
    if (fake_int("fake_ze_live_allocations", i) == 1) found = i;
  tb_level_zero_ops.free(state, mem);
  return found;
}

static void open_finds_the_device(void **s) {
  (void)s;
  void *state = open_xpu(2);
  assert_int_equal(tb_level_zero_ops.kind, TB_BACKEND_XPU);
  assert_int_equal(tb_level_zero_ops.alignment(state), 256);
  assert_int_equal(fake_count("fake_ze_live_contexts"), 1);
  assert_int_equal(fake_count("fake_ze_live_command_lists"), 1);
  assert_int_equal(fake_count("fake_ze_last_queue_mode"), 1); /* ZE_COMMAND_QUEUE_MODE_SYNCHRONOUS */
  assert_int_equal(device_of_allocation(state), 2);
  close_and_expect_nothing_live(state);

  /* The UUID wins over the index; without a UUID the index-th GPU is taken. */
  tb_device_info d = *xpu(0);
  d.uuid = xpu(1)->uuid;
  TB_ASSERT_OK(tb_level_zero_ops.open(&d, &state));
  assert_int_equal(device_of_allocation(state), 1);
  close_and_expect_nothing_live(state);
  d.uuid = "";
  d.index = 3;
  TB_ASSERT_OK(tb_level_zero_ops.open(&d, &state));
  assert_int_equal(device_of_allocation(state), 3);
  close_and_expect_nothing_live(state);
  d.uuid = "00000000000000000000000000000000";
  d.index = 4;
  state = (void *)1;
  assert_int_equal(tb_level_zero_ops.open(&d, &state), TB_ERR_NOT_FOUND);
  assert_null(state);
  TB_ASSERT_CONTAINS(tb_last_error(), "Level Zero lists 4 GPUs and none has UUID 00000000000000000000000000000000");
  assert_int_equal(fake_count("fake_ze_live_contexts"), 0);
}

static void round_trip_copy_and_fill(void **s) {
  (void)s;
  void *state = open_xpu(0);
  gpumem_round_trip(&tb_level_zero_ops, state);
  gpumem_copy(&tb_level_zero_ops, state);
  unsigned long long f1 = fill_calls(1), f2 = fill_calls(2), f4 = fill_calls(4), f8 = fill_calls(8);
  gpumem_fill_patterns(&tb_level_zero_ops, state);
  /* zeCommandListAppendMemoryFill takes every pattern size itself, aligned or not: 7 zeroings and the
   * 1-byte fill, the 2-byte fill (the empty one makes no call), two 4-byte and two 8-byte fills. */
  assert_int_equal(fill_calls(1) - f1, 8);
  assert_int_equal(fill_calls(2) - f2, 1);
  assert_int_equal(fill_calls(4) - f4, 2);
  assert_int_equal(fill_calls(8) - f8, 2);
  gpumem_bad_requests(&tb_level_zero_ops, state, "xpu:0");
  close_and_expect_nothing_live(state);
}

static void synchronize_and_memory_info(void **s) {
  (void)s;
  void *state = open_xpu(1);
  TB_ASSERT_OK(tb_level_zero_ops.synchronize(state));
  uint64_t free_bytes = 0, total = 0;
  TB_ASSERT_OK(tb_level_zero_ops.memory_info(state, &free_bytes, &total));
  /* The core API's 128 GiB; Sysman: GPU 1 has 2 GiB in use on tile 0 and 2 GiB on tile 1. */
  assert_int_equal(total, 128 * XPU_GIB);
  assert_int_equal(free_bytes, 124 * XPU_GIB);
  tb_devmem mem;
  TB_ASSERT_OK(tb_level_zero_ops.alloc(state, 5 * MIB, &mem));
  TB_ASSERT_OK(tb_level_zero_ops.memory_info(state, &free_bytes, &total));
  assert_int_equal(free_bytes, 124 * XPU_GIB - 5 * MIB);

  setenv("FAKE_ZE_FAIL", "sync", 1);
  assert_int_equal(tb_level_zero_ops.synchronize(state), TB_ERR_DRIVER);
  TB_ASSERT_CONTAINS(tb_last_error(),
                     "xpu:1: zeCommandListHostSynchronize failed with 0x70000001 ZE_RESULT_ERROR_DEVICE_LOST");
  unsetenv("FAKE_ZE_FAIL");

  setenv("FAKE_ZE_MODE", "no_sysman", 1);
  assert_int_equal(tb_level_zero_ops.memory_info(state, &free_bytes, &total), TB_ERR_UNSUPPORTED);
  TB_ASSERT_CONTAINS(tb_last_error(), "xpu:1: free memory unknown (Level Zero Sysman did not report it for 0000:3a:00.0)");
  TB_ASSERT_CONTAINS(tb_last_error(), "total is 137438953472 bytes");
  setenv("FAKE_ZE_MODE", "ok", 1);
  tb_level_zero_ops.free(state, mem);
  close_and_expect_nothing_live(state);
}

/* Each tile of a GPU as its own device: the tile's own memory and Sysman module. */
static void tiles_as_devices(void **s) {
  (void)s;
  discover_with("max4flat");
  assert_int_equal(tbt_count(list, TB_BACKEND_XPU), 8);
  void *state = open_xpu(1); /* GPU 0, tile 1 */
  assert_string_equal(tb_device_property(xpu(1), "tile"), "1 of 2");
  uint64_t free_bytes = 0, total = 0;
  TB_ASSERT_OK(tb_level_zero_ops.memory_info(state, &free_bytes, &total));
  assert_int_equal(total, 64 * XPU_GIB);
  assert_int_equal(free_bytes, 62 * XPU_GIB);
  tb_devmem mem;
  TB_ASSERT_OK(tb_level_zero_ops.alloc(state, 4096, &mem));
  assert_int_equal(fake_int("fake_ze_live_allocations", 1), 1);
  tb_level_zero_ops.free(state, mem);
  close_and_expect_nothing_live(state);
}

static void out_of_device_memory_then_recovery(void **s) {
  (void)s;
  setenv("FAKE_ZE_MEM_CAPACITY", "8M", 1);
  void *state = open_xpu(0);
  tb_devmem held, big, small;
  TB_ASSERT_OK(tb_level_zero_ops.alloc(state, 6 * MIB, &held));
  assert_int_equal(tb_level_zero_ops.alloc(state, 4 * MIB, &big), TB_ERR_OUT_OF_MEMORY);
  TB_ASSERT_CONTAINS(tb_last_error(),
                     "xpu:0: zeMemAllocDevice of 4194304 bytes failed with 0x70000003 ZE_RESULT_ERROR_OUT_OF_DEVICE_MEMORY");
  TB_ASSERT_OK(tb_level_zero_ops.alloc(state, 2 * MIB, &small));
  tb_level_zero_ops.free(state, held);
  TB_ASSERT_OK(tb_level_zero_ops.alloc(state, 4 * MIB, &big));
  tb_level_zero_ops.free(state, big);
  tb_level_zero_ops.free(state, small);
  close_and_expect_nothing_live(state);
}

static void driver_error_on_copies(void **s) {
  (void)s;
  void *state = open_xpu(0);
  tb_devmem a, b;
  TB_ASSERT_OK(tb_level_zero_ops.alloc(state, 4096, &a));
  TB_ASSERT_OK(tb_level_zero_ops.alloc(state, 4096, &b));
  unsigned char buf[64] = {1, 2, 3};
  setenv("FAKE_ZE_FAIL", "copy", 1);
  assert_int_equal(tb_level_zero_ops.write(state, a, 128, buf, 64), TB_ERR_DRIVER);
  TB_ASSERT_CONTAINS(tb_last_error(), "xpu:0: zeCommandListAppendMemoryCopy (host to device) of 64 bytes failed with "
                                      "0x70000001 ZE_RESULT_ERROR_DEVICE_LOST");
  assert_int_equal(tb_level_zero_ops.read(state, a, 0, buf, 64), TB_ERR_DRIVER);
  TB_ASSERT_CONTAINS(tb_last_error(), "(device to host) of 64 bytes failed with 0x70000001");
  setenv("FAKE_ZE_FAIL_CODE", "0x12345678", 1);
  assert_int_equal(tb_level_zero_ops.copy(state, b, 0, a, 0, 64), TB_ERR_DRIVER);
  TB_ASSERT_CONTAINS(tb_last_error(), "(device to device) of 64 bytes failed with 0x12345678 unknown ze_result_t");
  setenv("FAKE_ZE_FAIL", "fill", 1);
  setenv("FAKE_ZE_FAIL_CODE", "0x78000004", 1);
  assert_int_equal(tb_level_zero_ops.fill(state, a, 8, "12345678", 8, 64), TB_ERR_DRIVER);
  TB_ASSERT_CONTAINS(tb_last_error(), "zeCommandListAppendMemoryFill of 64 bytes at offset 8 failed with 0x78000004 "
                                      "ZE_RESULT_ERROR_INVALID_ARGUMENT");
  unsetenv("FAKE_ZE_FAIL");
  unsetenv("FAKE_ZE_FAIL_CODE");
  TB_ASSERT_OK(tb_level_zero_ops.write(state, a, 128, buf, 64));
  tb_level_zero_ops.free(state, a);
  tb_level_zero_ops.free(state, b);
  close_and_expect_nothing_live(state);
}

static void open_failures_leave_nothing_behind(void **s) {
  (void)s;
  const tb_device_info *d = xpu(3);
  void *state = (void *)1;
  setenv("FAKE_ZE_FAIL", "context", 1);
  assert_int_equal(tb_level_zero_ops.open(d, &state), TB_ERR_DRIVER);
  assert_null(state);
  TB_ASSERT_CONTAINS(tb_last_error(), "xpu:3: zeContextCreate failed with 0x70000001 ZE_RESULT_ERROR_DEVICE_LOST");
  setenv("FAKE_ZE_FAIL", "list", 1);
  setenv("FAKE_ZE_FAIL_CODE", "0x70000002", 1);
  assert_int_equal(tb_level_zero_ops.open(d, &state), TB_ERR_OUT_OF_MEMORY);
  TB_ASSERT_CONTAINS(tb_last_error(),
                     "zeCommandListCreateImmediate failed with 0x70000002 ZE_RESULT_ERROR_OUT_OF_HOST_MEMORY");
  assert_int_equal(fake_count("fake_ze_live_contexts"), 0); /* the context made before was destroyed */
  unsetenv("FAKE_ZE_FAIL");
  unsetenv("FAKE_ZE_FAIL_CODE");

  setenv("FAKE_ZE_MODE", "init_error", 1);
  assert_int_equal(tb_level_zero_ops.open(d, &state), TB_ERR_DRIVER);
  TB_ASSERT_CONTAINS(tb_last_error(), "xpu:3: zeInit failed with 0x78000001 ZE_RESULT_ERROR_UNINITIALIZED");
  setenv("FAKE_ZE_MODE", "ok", 1);

  setenv("TB_ZE_LIB", "/nonexistent/libze_loader.so.1", 1);
  assert_int_equal(tb_level_zero_ops.open(d, &state), TB_ERR_UNAVAILABLE);
  TB_ASSERT_CONTAINS(tb_last_error(),
                     "xpu:3: libze_loader.so.1 not found (tried TB_ZE_LIB=/nonexistent/libze_loader.so.1)");
  setenv("TB_ZE_LIB", tbt_fake("fake_ze"), 1);

  tb_device_info cpu = {.size = sizeof cpu, .backend = TB_BACKEND_CPU, .index = 0, .device = "cpu:0"};
  assert_int_equal(tb_level_zero_ops.open(&cpu, &state), TB_ERR_INVALID_ARGUMENT);
  TB_ASSERT_CONTAINS(tb_last_error(), "the Level Zero backend needs an Intel GPU (xpu:N), not cpu:0");
  assert_int_equal(fake_count("fake_ze_live_command_lists"), 0);
  assert_int_equal(fake_count("fake_ze_live_contexts"), 0);
}

typedef struct thread_job {
  void *state;
  tb_devmem mem;
  size_t offset;
  unsigned seed;
  int failures;
} thread_job;

static void *worker(void *arg) {
  thread_job *job = arg;
  unsigned char in[512], out[512];
  for (int round = 0; round < 200; round++) {
    gpumem_pattern(in, sizeof in, job->seed + (unsigned)round);
    if (tb_level_zero_ops.write(job->state, job->mem, job->offset, in, sizeof in) != TB_OK ||
        tb_level_zero_ops.read(job->state, job->mem, job->offset, out, sizeof out) != TB_OK ||
        memcmp(in, out, sizeof in))
      job->failures++;
  }
  return NULL;
}

static void threads_share_one_backend(void **s) {
  (void)s;
  void *state = open_xpu(0);
  tb_devmem mem;
  TB_ASSERT_OK(tb_level_zero_ops.alloc(state, 4096, &mem));
  thread_job jobs[4];
  pthread_t threads[4];
  for (int i = 0; i < 4; i++) {
    jobs[i] = (thread_job){state, mem, (size_t)i * 1024, (unsigned)i * 1000, 0};
    assert_int_equal(pthread_create(&threads[i], NULL, worker, &jobs[i]), 0);
  }
  for (int i = 0; i < 4; i++) {
    pthread_join(threads[i], NULL);
    assert_int_equal(jobs[i].failures, 0);
  }
  tb_level_zero_ops.free(state, mem);
  close_and_expect_nothing_live(state);
}

static void caching_allocator_over_level_zero(void **s) {
  (void)s;
  void *state = open_xpu(2);
  /* GPU 2: 3 GiB in use on tile 0, 2 GiB on tile 1, as Sysman reports. */
  gpumem_through_allocator(&tb_level_zero_ops, state, "xpu:2", 128 * XPU_GIB, 123 * XPU_GIB);
  setenv("FAKE_ZE_MEM_CAPACITY", "64M", 1);
  gpumem_allocator_oom(&tb_level_zero_ops, state, "xpu:2", (size_t)(100 * MIB));
  close_and_expect_nothing_live(state);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test_setup_teardown(open_finds_the_device, setup, teardown),
      cmocka_unit_test_setup_teardown(round_trip_copy_and_fill, setup, teardown),
      cmocka_unit_test_setup_teardown(synchronize_and_memory_info, setup, teardown),
      cmocka_unit_test_setup_teardown(tiles_as_devices, setup, teardown),
      cmocka_unit_test_setup_teardown(out_of_device_memory_then_recovery, setup, teardown),
      cmocka_unit_test_setup_teardown(driver_error_on_copies, setup, teardown),
      cmocka_unit_test_setup_teardown(open_failures_leave_nothing_behind, setup, teardown),
      cmocka_unit_test_setup_teardown(threads_share_one_backend, setup, teardown),
      cmocka_unit_test_setup_teardown(caching_allocator_over_level_zero, setup, teardown),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
