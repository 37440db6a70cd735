/* The OpenCL backend's memory ops against tests/fakes/fake_opencl.c: the queue call chosen by the
 * platform's version, alignment from CL_DEVICE_MEM_BASE_ADDR_ALIGN, AMD's free-memory query, the host
 * path for fills on OpenCL 1.1, and every failure the fake can produce (context, queue, buffer, read,
 * copy, finish, the loader), each with its code, name and fix, with nothing left unreleased; after the
 * driver runs out of host memory the queue is neither used nor waited for again. */
#include <dlfcn.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "backend/backend_impl.h"
#include "test_util.h"

#define OPENCL_ONLY (1u << TB_BACKEND_OPENCL)
#define GIB (1024ull * 1024ull * 1024ull)

static const tb_backend_ops *ops = &tb_opencl_ops;
static tb_device_list *list;

static int (*fake_live)(void);
static int (*fake_calls)(const char *);

static int setup(void **state) {
  (void)state;
  tbt_clear_env();
  unsetenv("TBT_FAKE_OPENCL");
  setenv("TB_OPENCL_LIB", tbt_fake("fake_opencl"), 1);
  list = tbt_discover(OPENCL_ONLY);
  assert_int_equal(tbt_count(list, TB_BACKEND_OPENCL), 5);
  void *fake = dlopen(tbt_fake("fake_opencl"), RTLD_LAZY | RTLD_NOLOAD); /* loaded (and kept) by discovery */
  assert_non_null(fake);
  *(void **)&fake_live = dlsym(fake, "fake_opencl_live");
  *(void **)&fake_calls = dlsym(fake, "fake_opencl_calls");
  assert_non_null(fake_live);
  assert_non_null(fake_calls);
  dlclose(fake);
  return 0;
}

static int teardown(void **state) {
  (void)state;
  tb_device_list_destroy(list);
  unsetenv("TBT_FAKE_OPENCL");
  return 0;
}

static const tb_device_info *dev(int n) { return tbt_nth(list, TB_BACKEND_OPENCL, n); }

static void open_every_device(void **state) {
  (void)state;
  const size_t alignment[] = {512, 128, 128, 128, 128}; /* 4096 bits; not answered (x3: the fallback); 1024 bits */
  for (int i = 0; i < 5; i++) {
    int v1 = fake_calls("clCreateCommandQueue"), v2 = fake_calls("clCreateCommandQueueWithProperties");
    void *st = NULL;
    TB_ASSERT_OK(ops->open(dev(i), &st));
    assert_int_equal(ops->alignment(st), alignment[i]);
    /* platform Alpha is OpenCL 3.0: the 2.0 call; platform Beta is 1.2: the 1.0 call */
    assert_int_equal(fake_calls("clCreateCommandQueueWithProperties") - v2, i < 2 ? 1 : 0);
    assert_int_equal(fake_calls("clCreateCommandQueue") - v1, i < 2 ? 0 : 1);
    assert_int_equal(fake_live(), 2); /* a context and a queue */
    uint64_t free_bytes = 0, total = 0;
    tb_status s = ops->memory_info(st, &free_bytes, &total);
    assert_int_equal(total, dev(i)->memory_total);
    if (i == 3) { /* gfx942 answers CL_DEVICE_GLOBAL_FREE_MEMORY_AMD (KiB) */
      assert_int_equal(s, TB_OK);
      assert_int_equal(free_bytes, 190 * GIB);
      assert_int_equal(total, 192 * GIB);
    } else {
      assert_int_equal(s, TB_ERR_UNSUPPORTED);
      assert_int_equal(free_bytes, 0);
      TB_ASSERT_CONTAINS(tb_last_error(), dev(i)->device);
      TB_ASSERT_CONTAINS(tb_last_error(), "does not report free memory");
    }
    ops->close(st);
    assert_int_equal(fake_live(), 0);
  }
}

static void copies_and_fills(void **state) {
  (void)state;
  for (int i = 0; i < 5; i += 4) { /* opencl:0 fills on the device, opencl:4 (OpenCL 1.1) through the host */
    void *st = NULL;
    TB_ASSERT_OK(ops->open(dev(i), &st));
    tb_devmem a, b;
    TB_ASSERT_OK(ops->alloc(st, 3000, &a));
    TB_ASSERT_OK(ops->alloc(st, 3000, &b));
    unsigned char data[3000], back[3000];
    for (int k = 0; k < 3000; k++) data[k] = (unsigned char)(k * 31 + 7);
    TB_ASSERT_OK(ops->write(st, a, 0, data, 3000));
    TB_ASSERT_OK(ops->fill(st, b, 0, "\0", 1, 3000));
    TB_ASSERT_OK(ops->copy(st, b, 11, a, 1000, 1500));
    TB_ASSERT_OK(ops->read(st, b, 0, back, 3000));
    for (int k = 0; k < 3000; k++) assert_int_equal(back[k], k >= 11 && k < 1511 ? data[k - 11 + 1000] : 0);
    int fills = fake_calls("clEnqueueFillBuffer");
    const uint16_t pattern = 0xBEEF;
    TB_ASSERT_OK(ops->fill(st, a, 100, &pattern, 2, 200));
    assert_int_equal(fake_calls("clEnqueueFillBuffer") - fills, i == 0 ? 1 : 0);
    TB_ASSERT_OK(ops->read(st, a, 0, back, 3000));
    for (int k = 0; k < 3000; k++) assert_int_equal(back[k], k >= 100 && k < 300 ? ((const unsigned char *)&pattern)[k % 2] : data[k]);
    TB_ASSERT_OK(ops->synchronize(st));
    ops->free(st, a);
    ops->free(st, b);
    ops->close(st);
    assert_int_equal(fake_live(), 0); /* buffers, events, queue, context */
  }
}

static void context_creation_fails(void **state) {
  (void)state;
  setenv("TBT_FAKE_OPENCL", "context_error", 1);
  void *st = (void *)1;
  assert_int_equal(ops->open(dev(0), &st), TB_ERR_UNAVAILABLE);
  assert_null(st);
  TB_ASSERT_CONTAINS(tb_last_error(), "opencl:0 (Fake Discrete GPU): clCreateContext failed with -2 CL_DEVICE_NOT_AVAILABLE; "
                                      "another process may hold the device");
  assert_int_equal(fake_live(), 0);
}

static void queue_creation_fails(void **state) {
  (void)state;
  setenv("TBT_FAKE_OPENCL", "queue_error", 1);
  void *st = NULL;
  assert_int_equal(ops->open(dev(0), &st), TB_ERR_OUT_OF_MEMORY);
  TB_ASSERT_CONTAINS(tb_last_error(), "clCreateCommandQueueWithProperties (in-order queue) failed with -6 CL_OUT_OF_HOST_MEMORY; free host memory");
  assert_int_equal(fake_live(), 0); /* the context was released */
  assert_int_equal(ops->open(dev(2), &st), TB_ERR_OUT_OF_MEMORY);
  TB_ASSERT_CONTAINS(tb_last_error(), "opencl:2 (NVIDIA Fake H100): clCreateCommandQueue (in-order queue) failed with -6");
  assert_int_equal(fake_live(), 0);
}

static void buffer_allocation_fails(void **state) {
  (void)state;
  void *st = NULL;
  TB_ASSERT_OK(ops->open(dev(0), &st));
  setenv("TBT_FAKE_OPENCL", "alloc_failure", 1);
  tb_devmem mem;
  assert_int_equal(ops->alloc(st, 2u << 20, &mem), TB_ERR_OUT_OF_MEMORY);
  TB_ASSERT_CONTAINS(tb_last_error(), "opencl:0 (Fake Discrete GPU): clCreateBuffer of 2097152 bytes failed with -4 "
                                      "CL_MEM_OBJECT_ALLOCATION_FAILURE: device memory is exhausted (17179869184 bytes of "
                                      "global memory, largest single allocation 4294967296 bytes)");
  assert_null(mem.handle);
  TB_ASSERT_OK(ops->alloc(st, 4096, &mem)); /* the next one works */
  ops->free(st, mem);
  unsetenv("TBT_FAKE_OPENCL");
  assert_int_equal(ops->alloc(st, 4 * GIB + 1, &mem), TB_ERR_OUT_OF_MEMORY);
  TB_ASSERT_CONTAINS(tb_last_error(), "clCreateBuffer of 4294967297 bytes failed with -61 CL_INVALID_BUFFER_SIZE: the largest "
                                      "single allocation is 4294967296 bytes (CL_DEVICE_MAX_MEM_ALLOC_SIZE) of 17179869184 bytes");
  ops->close(st);
  assert_int_equal(fake_live(), 0);
}

static void read_copy_and_finish_fail(void **state) {
  (void)state;
  void *st = NULL;
  TB_ASSERT_OK(ops->open(dev(1), &st));
  tb_devmem a, b;
  TB_ASSERT_OK(ops->alloc(st, 64, &a));
  TB_ASSERT_OK(ops->alloc(st, 64, &b));
  unsigned char buf[16] = {1, 2, 3};
  TB_ASSERT_OK(ops->write(st, a, 4, buf, 16));
  setenv("TBT_FAKE_OPENCL", "read_error", 1);
  assert_int_equal(ops->read(st, a, 4, buf, 16), TB_ERR_OUT_OF_MEMORY);
  TB_ASSERT_CONTAINS(tb_last_error(), "opencl:1 (Fake Integrated GPU): clEnqueueReadBuffer (16 bytes at offset 4) failed with -5 CL_OUT_OF_RESOURCES");
  setenv("TBT_FAKE_OPENCL", "copy_error", 1);
  assert_int_equal(ops->copy(st, b, 0, a, 8, 32), TB_ERR_DRIVER);
  TB_ASSERT_CONTAINS(tb_last_error(), "clWaitForEvents after clEnqueueCopyBuffer (32 bytes from offset 8 to offset 0) failed with "
                                      "-14 CL_EXEC_STATUS_ERROR_FOR_EVENTS_IN_WAIT_LIST; check the OpenCL driver with `clinfo`");
  setenv("TBT_FAKE_OPENCL", "finish_error", 1);
  assert_int_equal(ops->synchronize(st), TB_ERR_DRIVER);
  TB_ASSERT_CONTAINS(tb_last_error(), "clFinish failed with -36 CL_INVALID_COMMAND_QUEUE");
  unsetenv("TBT_FAKE_OPENCL");
  TB_ASSERT_OK(ops->read(st, a, 4, buf, 16)); /* the device goes on */
  assert_int_equal(buf[2], 3);
  ops->free(st, a);
  ops->free(st, b);
  ops->close(st);
  assert_int_equal(fake_live(), 0); /* the failed copy's event was released too */
}

/* Out of host memory inside the driver: the queue is never used again and never waited for, so a driver
 * whose clFinish would then wait forever (the fake's host_oom_hang, as PoCL did) cannot hang synchronize or
 * close (alarm: a hang fails the test). A new backend gets a new queue. */
static void host_oom_fails_the_queue(void **state) {
  (void)state;
  alarm(60);
  void *st = NULL;
  TB_ASSERT_OK(ops->open(dev(1), &st));
  tb_devmem a;
  TB_ASSERT_OK(ops->alloc(st, 64, &a));
  unsigned char buf[16] = {1, 2, 3};
  setenv("TBT_FAKE_OPENCL", "host_oom_hang", 1);
  assert_int_equal(ops->write(st, a, 0, buf, 16), TB_ERR_OUT_OF_MEMORY);
  const char *first = "opencl:1 (Fake Integrated GPU): clEnqueueWriteBuffer (16 bytes at offset 0) failed with -6 "
                      "CL_OUT_OF_HOST_MEMORY; free host memory: the OpenCL driver could not allocate its own bookkeeping";
  assert_string_equal(tb_last_error(), first);
  unsetenv("TBT_FAKE_OPENCL");
  char want[600];
  snprintf(want, sizeof want, "opencl:1 (Fake Integrated GPU): a read refused: the device's command queue failed earlier "
           "(%s) and is not used again; destroy this backend, free memory, and create it again", first);
  assert_int_equal(ops->read(st, a, 0, buf, 16), TB_ERR_OUT_OF_MEMORY);
  assert_string_equal(tb_last_error(), want);
  assert_int_equal(ops->synchronize(st), TB_ERR_OUT_OF_MEMORY);
  TB_ASSERT_CONTAINS(tb_last_error(), "opencl:1 (Fake Integrated GPU): synchronize refused: the device's command queue failed "
                                      "earlier (opencl:1 (Fake Integrated GPU): clEnqueueWriteBuffer");
  ops->free(st, a);
  ops->close(st); /* no clFinish: the fake's would never return */
  assert_int_equal(fake_live(), 0);
  TB_ASSERT_OK(ops->open(dev(1), &st));
  TB_ASSERT_OK(ops->alloc(st, 64, &a));
  TB_ASSERT_OK(ops->write(st, a, 0, buf, 16));
  TB_ASSERT_OK(ops->synchronize(st));
  ops->free(st, a);
  ops->close(st);
  alarm(0);
}

static void devices_gone_since_discovery(void **state) {
  (void)state;
  setenv("TBT_FAKE_OPENCL", "devices_error", 1);
  void *st = NULL;
  assert_int_equal(ops->open(dev(2), &st), TB_ERR_NOT_FOUND);
  TB_ASSERT_CONTAINS(tb_last_error(), "opencl:2 (NVIDIA Fake H100) not found: the OpenCL loader");
  TB_ASSERT_CONTAINS(tb_last_error(), "now reports 0 devices");
  setenv("TBT_FAKE_OPENCL", "no_icd", 1);
  assert_int_equal(ops->open(dev(0), &st), TB_ERR_UNAVAILABLE);
  TB_ASSERT_CONTAINS(tb_last_error(), "clGetPlatformIDs failed with -1001 CL_PLATFORM_NOT_FOUND_KHR; install an OpenCL ICD");
  assert_int_equal(fake_live(), 0);
}

static void loader_missing_or_wrong(void **state) {
  (void)state;
  void *st = NULL;
  setenv("TB_OPENCL_LIB", "/nonexistent/libOpenCL.so.1", 1);
  assert_int_equal(ops->open(dev(0), &st), TB_ERR_UNAVAILABLE);
  TB_ASSERT_CONTAINS(tb_last_error(), "TB_OPENCL_LIB=/nonexistent/libOpenCL.so.1 could not be loaded");
  TB_ASSERT_CONTAINS(tb_last_error(), "point TB_OPENCL_LIB at an OpenCL ICD loader");
  setenv("TB_OPENCL_LIB", "libm.so.6", 1);
  assert_int_equal(ops->open(dev(0), &st), TB_ERR_UNAVAILABLE);
  TB_ASSERT_CONTAINS(tb_last_error(), "clGetPlatformIDs not found in");
  assert_null(st);
  setenv("TB_OPENCL_LIB", tbt_fake("fake_opencl"), 1);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test_setup_teardown(open_every_device, setup, teardown),
      cmocka_unit_test_setup_teardown(copies_and_fills, setup, teardown),
      cmocka_unit_test_setup_teardown(context_creation_fails, setup, teardown),
      cmocka_unit_test_setup_teardown(queue_creation_fails, setup, teardown),
      cmocka_unit_test_setup_teardown(buffer_allocation_fails, setup, teardown),
      cmocka_unit_test_setup_teardown(read_copy_and_finish_fail, setup, teardown),
      cmocka_unit_test_setup_teardown(host_oom_fails_the_queue, setup, teardown),
      cmocka_unit_test_setup_teardown(devices_gone_since_discovery, setup, teardown),
      cmocka_unit_test_setup_teardown(loader_missing_or_wrong, setup, teardown),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
