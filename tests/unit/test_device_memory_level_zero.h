/* The Level Zero case of the device-memory suite (included by test_device_memory.c after its helpers): the
 * recorded node with 4 Data Center GPU Max 1550 and the fake Level Zero loader; the xpu:N device is found
 * by UUID, else by index, with a context and a synchronous immediate command list; memory_info gives the
 * core API's total and Sysman's free memory (per tile when tiles are devices), or says why it cannot. */
#include "test_intel_tree.h"

static void ze_discover_with(const char *devices) {
  tb_device_list_destroy(devmem_list);
  xpu_use_fake(devices, "ok");
  devmem_list = tbt_discover(XPU_ONLY);
}

static void ze_setup(void) {
  xpu_env("intel_max");
  ze_discover_with("max4");
}

static void ze_nothing_live(void) {
  assert_int_equal(fake_count("fake_ze_live_command_lists"), 0);
  assert_int_equal(fake_count("fake_ze_live_contexts"), 0);
}

static void ze_info_failure(void *state) {
  uint64_t free_bytes = 0, total = 0;
  setenv("FAKE_ZE_MODE", "no_sysman", 1);
  assert_int_equal(tb_level_zero_ops.memory_info(state, &free_bytes, &total), TB_ERR_UNSUPPORTED);
  TB_ASSERT_CONTAINS(tb_last_error(), "xpu:1: free memory unknown (Level Zero Sysman did not report it for 0000:3a:00.0)");
  TB_ASSERT_CONTAINS(tb_last_error(), "total is 137438953472 bytes");
  setenv("FAKE_ZE_MODE", "ok", 1);
}

/* Allocate 4 KiB and report which core device of the fake it landed on. */
static int device_of_allocation(void *state) {
  tb_devmem mem;
  TB_ASSERT_OK(tb_level_zero_ops.alloc(state, 4096, &mem));
  int found = -1;
  for (int i = 0; i < 4; i++)
    if (live_allocations(i) == 1) found = i;
  tb_level_zero_ops.free(state, mem);
  return found;
}

static void open_finds_the_device(void **s) {
  (void)s;
  void *state = open_device(2);
  assert_int_equal(tb_level_zero_ops.kind, TB_BACKEND_XPU);
  assert_int_equal(tb_level_zero_ops.alignment(state), 256);
  assert_int_equal(fake_count("fake_ze_live_contexts"), 1);
  assert_int_equal(fake_count("fake_ze_live_command_lists"), 1);
  assert_int_equal(fake_count("fake_ze_last_queue_mode"), 1); /* ZE_COMMAND_QUEUE_MODE_SYNCHRONOUS */
  assert_int_equal(device_of_allocation(state), 2);
  close_and_expect_nothing_live(state);

  /* The UUID wins over the index; without a UUID the index-th GPU is taken. */
  tb_device_info d = *nth_device(0);
  d.uuid = nth_device(1)->uuid;
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

/* Each tile of a GPU as its own device: the tile's own memory and Sysman module. */
static void tiles_as_devices(void **s) {
  (void)s;
  ze_discover_with("max4flat");
  assert_int_equal(tbt_count(devmem_list, TB_BACKEND_XPU), 8);
  void *state = open_device(1); /* GPU 0, tile 1 */
  assert_string_equal(tb_device_property(nth_device(1), "tile"), "1 of 2");
  uint64_t free_bytes = 0, total = 0;
  TB_ASSERT_OK(tb_level_zero_ops.memory_info(state, &free_bytes, &total));
  assert_int_equal(total, 64 * XPU_GIB);
  assert_int_equal(free_bytes, 62 * XPU_GIB);
  tb_devmem mem;
  TB_ASSERT_OK(tb_level_zero_ops.alloc(state, 4096, &mem));
  assert_int_equal(live_allocations(1), 1);
  tb_level_zero_ops.free(state, mem);
  close_and_expect_nothing_live(state);
}

static void ze_open_failures_leave_nothing_behind(void **s) {
  (void)s;
  const tb_device_info *d = nth_device(3);
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
  ze_nothing_live();
}

static const struct CMUnitTest level_zero_own[] = {
    cmocka_unit_test(open_finds_the_device),
    cmocka_unit_test(tiles_as_devices),
    cmocka_unit_test(ze_open_failures_leave_nothing_behind),
};

static const devmem_case level_zero_case = {
    .name = "level_zero",
    .ops = &tb_level_zero_ops,
    .kind = TB_BACKEND_XPU,
    .prefix = "xpu",
    .fake = "fake_ze",
    .fail_env = "FAKE_ZE_FAIL",
    .fail_code_env = "FAKE_ZE_FAIL_CODE",
    .capacity_env = "FAKE_ZE_MEM_CAPACITY",
    .setup = ze_setup,
    .nothing_live = ze_nothing_live,
    .thread_is_as_it_was = NULL,
    .thread_state = NULL,
    /* zeCommandListAppendMemoryFill takes every pattern size itself, aligned or not: 7 zeroings and the
     * 1-byte fill, the 2-byte fill (the empty one makes no call), two 4-byte and two 8-byte fills. */
    .fill_counter = "fake_ze_fill_calls",
    .fills = {8, 1, 2, 2},
    .info_capacity = NULL,
    .info_device = 1,
    /* The core API's 128 GiB; Sysman: GPU 1 has 2 GiB in use on tile 0 and 2 GiB on tile 1. */
    .info_total = 128 * XPU_GIB,
    .info_free = 124 * XPU_GIB,
    .sync_failure = "xpu:1: zeCommandListHostSynchronize failed with 0x70000001 ZE_RESULT_ERROR_DEVICE_LOST",
    .info_failure = ze_info_failure,
    .oom_failure =
        "xpu:0: zeMemAllocDevice of 4194304 bytes failed with 0x70000003 ZE_RESULT_ERROR_OUT_OF_DEVICE_MEMORY",
    .oom_free = NULL,
    .write_failure = "xpu:0: zeCommandListAppendMemoryCopy (host to device) of 64 bytes failed with "
                     "0x70000001 ZE_RESULT_ERROR_DEVICE_LOST",
    .read_failure = "(device to host) of 64 bytes failed with 0x70000001",
    .unknown_code = "0x12345678",
    .copy_failure = "(device to device) of 64 bytes failed with 0x12345678 unknown ze_result_t",
    .fill_code = "0x78000004",
    .fill_pattern = "12345678",
    .fill_pattern_size = 8,
    .fill_offset = 8,
    .fill_failure = "zeCommandListAppendMemoryFill of 64 bytes at offset 8 failed with 0x78000004 "
                    "ZE_RESULT_ERROR_INVALID_ARGUMENT",
    .threads_device = 0,
    .allocator_device = 2,
    .allocator_capacity = NULL,
    /* GPU 2: 3 GiB in use on tile 0, 2 GiB on tile 1, as Sysman reports. */
    .allocator_total = 128 * XPU_GIB,
    .allocator_free = 123 * XPU_GIB,
    .own = level_zero_own,
    .own_count = sizeof level_zero_own / sizeof level_zero_own[0],
};
