/* The CUDA case of the device-memory suite (included by test_device_memory.c after its helpers): the
 * recorded 8x H100 node with the fake libcuda; the primary context is retained once and pushed/popped
 * around every call, a stream is made at open, and the CUDA-only open paths fail as the driver would. */

static void cuda_setup(void) {
  tbt_setup_clean_nvidia(NULL);
  tbt_use_fixture("h100x8");
  tbt_use_nvidia_fakes();
  devmem_list = tbt_discover(1u << TB_BACKEND_CUDA);
}

static void cuda_nothing_live(void) {
  assert_int_equal(fake_count("fake_cuda_live_streams"), 0);
  assert_int_equal(fake_count("fake_cuda_live_contexts"), 0);
}

/* Pushed and popped: the thread's context stack is as it was. */
static int cuda_context_depth(void) { return fake_count("fake_cuda_context_depth"); }

static void cuda_context_popped(void) { assert_int_equal(cuda_context_depth(), 0); }

static void cuda_info_failure(void *state) {
  uint64_t free_bytes = 0, total = 0;
  setenv("FAKE_CUDA_FAIL", "info", 1);
  setenv("FAKE_CUDA_FAIL_CODE", "999", 1);
  assert_int_equal(tb_cuda_ops.memory_info(state, &free_bytes, &total), TB_ERR_DRIVER);
  TB_ASSERT_CONTAINS(tb_last_error(), "cuMemGetInfo_v2 failed with 999 CUDA_ERROR_UNKNOWN");
  unsetenv("FAKE_CUDA_FAIL");
  unsetenv("FAKE_CUDA_FAIL_CODE");
}

static void open_retains_the_primary_context_and_a_stream(void **s) {
  (void)s;
  void *state = open_device(2);
  assert_int_equal(tb_cuda_ops.kind, TB_BACKEND_CUDA);
  assert_int_equal(tb_cuda_ops.alignment(state), 256);
  assert_int_equal(fake_count("fake_cuda_live_contexts"), 1);
  assert_int_equal(fake_count("fake_cuda_live_streams"), 1);
  cuda_context_popped();
  tb_devmem mem;
  TB_ASSERT_OK(tb_cuda_ops.alloc(state, 3 * MIB, &mem));
  assert_int_equal(live_allocations(2), 1); /* on cuda:2, not on the default device */
  assert_int_equal(live_allocations(0), 0);
  assert_int_equal(fake_u64("fake_cuda_bytes_in_use", 2), 3 * MIB);
  cuda_context_popped();
  tb_cuda_ops.free(state, mem);
  assert_int_equal(live_allocations(2), 0);
  close_and_expect_nothing_live(state);
}

static void cuda_open_failures_leave_nothing_behind(void **s) {
  (void)s;
  const tb_device_info *d = tbt_nth(devmem_list, TB_BACKEND_CUDA, 3);
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
  cuda_nothing_live(); /* the retained context was released */
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

static const struct CMUnitTest cuda_own[] = {
    cmocka_unit_test(open_retains_the_primary_context_and_a_stream),
    cmocka_unit_test(cuda_open_failures_leave_nothing_behind),
};

static const devmem_case cuda_case = {
    .name = "cuda",
    .ops = &tb_cuda_ops,
    .kind = TB_BACKEND_CUDA,
    .prefix = "cuda",
    .fake = "fake_cuda",
    .fail_env = "FAKE_CUDA_FAIL",
    .fail_code_env = "FAKE_CUDA_FAIL_CODE",
    .capacity_env = "FAKE_CUDA_MEM_CAPACITY",
    .setup = cuda_setup,
    .nothing_live = cuda_nothing_live,
    .thread_is_as_it_was = cuda_context_popped,
    .thread_state = cuda_context_depth,
    /* 1 byte: cuMemsetD8 for the zeroings (7x) and the 1-byte fill; 2 bytes: cuMemsetD16 once (the empty
     * fill makes no call); 4 bytes and the 8-byte pattern of two equal halves: cuMemsetD32; the 8-byte
     * pattern with different halves and the misaligned 4-byte fill go through a host buffer. */
    .fill_counter = "fake_cuda_memset_calls",
    .fills = {7 + 1, 1, 2, 0},
    .info_capacity = "64M",
    .info_device = 1,
    .info_total = 64 * MIB,
    .info_free = 64 * MIB,
    .sync_failure = "cuda:1: cuCtxSynchronize failed with 700 CUDA_ERROR_ILLEGAL_ADDRESS",
    .info_failure = cuda_info_failure,
    .oom_failure = "cuda:0: cuMemAlloc_v2 of 4194304 bytes failed with 2 CUDA_ERROR_OUT_OF_MEMORY",
    .oom_free = "the driver reports 2097152 bytes free of 8388608",
    .write_failure = "cuda:0: cuMemcpyHtoDAsync_v2 of 64 bytes at offset 128 failed with 700 CUDA_ERROR_ILLEGAL_ADDRESS",
    .read_failure = "cuMemcpyDtoHAsync_v2 of 64 bytes at offset 0 failed with 700",
    .unknown_code = "12345",
    .copy_failure = "cuMemcpyDtoDAsync_v2 of 64 bytes failed with 12345 CUDA error 12345",
    .fill_code = "1",
    .fill_pattern = "\x07",
    .fill_pattern_size = 1,
    .fill_offset = 0,
    .fill_failure = "cuMemsetD8Async of 64 bytes at offset 0 failed with 1 CUDA_ERROR_INVALID_VALUE",
    .threads_device = 0,
    .allocator_device = 0,
    .allocator_capacity = "64M",
    .allocator_total = 64 * MIB,
    .allocator_free = 64 * MIB,
    .own = cuda_own,
    .own_count = sizeof cuda_own / sizeof cuda_own[0],
};
