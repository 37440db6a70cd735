/* The caching allocator when memory runs out: the memory-fraction limit, a device that is full (release
 * the cache, retry once, succeed or fail with the sizes in the message), the allocator still working
 * after a failure, and the leak report at destroy. */
#include <fcntl.h>
#include <stdio.h>
#include <unistd.h>
#include "test_allocator_fake.h"
#include "test_util.h"

static tb_allocator *make(fake_dev *dev, size_t capacity) {
  fake_init(dev, capacity);
  tb_allocator *a = NULL;
  TB_ASSERT_OK(tb_allocator_create(&fake_ops, dev, "fake:0", &a));
  return a;
}

static void finish(tb_allocator *a, fake_dev *dev) {
  tb_allocator_destroy(a);
  assert_int_equal(dev->used, 0);
  assert_int_equal(dev->frees, dev->allocs);
  pthread_mutex_destroy(&dev->lock);
}

static tb_block *alloc_ok(tb_allocator *a, size_t bytes) {
  tb_block *b = NULL;
  TB_ASSERT_OK(tb_allocator_alloc(a, bytes, &b));
  return b;
}

static void test_fraction_limit(void **state) {
  (void)state;
  fake_dev dev;
  tb_allocator *a = make(&dev, 64 * MIB);
  TB_ASSERT_OK(tb_allocator_set_fraction(a, 0.25, 0));
  assert_int_equal(fake_stats(a).limit, 16 * MIB);
  tb_block *ten = alloc_ok(a, 10 * MIB);
  tb_block *b = (tb_block *)0x1;
  assert_int_equal(tb_allocator_alloc(a, 8 * MIB, &b), TB_ERR_OUT_OF_MEMORY);
  assert_null(b);
  assert_string_equal(tb_last_error(),
                      "fake:0: out of memory allocating 8.00 MiB (8388608 bytes): 10.00 MiB allocated, 10.00 MiB "
                      "reserved, 54.00 MiB free on the device (over the limit 16.00 MiB from memory fraction 0.25); "
                      "free tensors, call tb_backend_empty_cache, raise the limit with "
                      "tb_backend_set_memory_fraction, or lower the batch size");
  /* The limit refused it before the device was asked. */
  assert_int_equal(dev.alloc_calls, 1);
  tb_memory_stats s = fake_stats(a);
  assert_int_equal(s.num_oom_retries, 1);
  ASSERT_STATS(a, 10 * MIB, 10 * MIB, 10 * MIB, 1, 0, 1, 0);

  /* Up to the limit exactly is fine. */
  tb_block *six = alloc_ok(a, 6 * MIB);
  ASSERT_STATS(a, 16 * MIB, 16 * MIB, 16 * MIB, 2, 0, 2, 0);
  /* A cached 6 MiB segment is released to make room, but 10 + 7 is still over 16. */
  tb_allocator_free(a, six);
  assert_int_equal(tb_allocator_alloc(a, 7 * MIB, &b), TB_ERR_OUT_OF_MEMORY);
  TB_ASSERT_CONTAINS(tb_last_error(), "7.00 MiB (7340032 bytes): 10.00 MiB allocated, 10.00 MiB reserved");
  ASSERT_STATS(a, 10 * MIB, 10 * MIB, 10 * MIB, 2, 1, 2, 1);
  assert_int_equal(fake_stats(a).num_oom_retries, 2);

  /* Releasing a cached small segment makes room: the retry succeeds. */
  tb_block *small = alloc_ok(a, 1000);
  tb_allocator_free(a, small);
  ASSERT_STATS(a, 10 * MIB, 10 * MIB, 12 * MIB, 3, 2, 3, 1);
  six = alloc_ok(a, 6 * MIB);
  ASSERT_STATS(a, 16 * MIB, 16 * MIB, 16 * MIB, 4, 2, 4, 2);
  s = fake_stats(a);
  assert_int_equal(s.num_oom_retries, 3);
  assert_int_equal(s.peak_reserved, 16 * MIB);

  /* Fraction 1 removes the limit. */
  TB_ASSERT_OK(tb_allocator_set_fraction(a, 1.0, 0));
  assert_int_equal(fake_stats(a).limit, 0);
  tb_block *more = alloc_ok(a, 8 * MIB);
  assert_int_equal(fake_stats(a).reserved, 24 * MIB);
  tb_allocator_free(a, more);
  tb_allocator_free(a, six);
  tb_allocator_free(a, ten);
  finish(a, &dev);
}

static void test_fraction_total_unknown(void **state) {
  (void)state;
  fake_dev dev;
  tb_allocator *a = make(&dev, 64 * MIB);
  dev.memory_info_ok = false;
  assert_int_equal(tb_allocator_set_fraction(a, 0.5, 0), TB_ERR_UNSUPPORTED);
  assert_string_equal(tb_last_error(),
                      "fake:0: cannot set memory fraction 0.5: the device's total memory is unknown");
  assert_int_equal(fake_stats(a).limit, 0);
  /* The caller's fallback total (e.g. what discovery reported) is used instead. */
  TB_ASSERT_OK(tb_allocator_set_fraction(a, 0.5, 32 * MIB));
  assert_int_equal(fake_stats(a).limit, 16 * MIB);
  TB_ASSERT_OK(tb_allocator_set_fraction(a, 1.0, 0));
  assert_int_equal(fake_stats(a).limit, 0);
  /* The driver's total wins over the fallback when it is known. */
  dev.memory_info_ok = true;
  TB_ASSERT_OK(tb_allocator_set_fraction(a, 0.5, 1000 * MIB));
  assert_int_equal(fake_stats(a).limit, 32 * MIB);
  /* A fraction so small it leaves nothing. */
  assert_int_equal(tb_allocator_set_fraction(a, 1e-12, 0), TB_ERR_INVALID_ARGUMENT);
  TB_ASSERT_CONTAINS(tb_last_error(), "leaves no memory");
  assert_int_equal(fake_stats(a).limit, 32 * MIB);
  finish(a, &dev);
}

static void test_device_oom_release_and_retry_succeeds(void **state) {
  (void)state;
  fake_dev dev;
  tb_allocator *a = make(&dev, 8 * MIB);
  tb_allocator_free(a, alloc_ok(a, 4 * MIB));
  tb_allocator_free(a, alloc_ok(a, 1000));
  ASSERT_STATS(a, 0, 0, 6 * MIB, 2, 2, 2, 0);
  /* 6 MiB fits no cached block and the device has 2 MiB left: both cached segments go back, then it fits. */
  tb_block *b = alloc_ok(a, 6 * MIB);
  ASSERT_STATS(a, 6 * MIB, 6 * MIB, 6 * MIB, 3, 2, 3, 2);
  assert_int_equal(fake_stats(a).num_oom_retries, 1);
  assert_int_equal(dev.alloc_calls, 4);
  assert_int_equal(dev.used, 6 * MIB);
  tb_allocator_free(a, b);
  finish(a, &dev);
}

static void test_device_oom_fails_then_next_allocation_works(void **state) {
  (void)state;
  fake_dev dev;
  tb_allocator *a = make(&dev, 8 * MIB);
  tb_block *keep = alloc_ok(a, 1000);
  tb_block *b = NULL;
  assert_int_equal(tb_allocator_alloc(a, 16 * GIB, &b), TB_ERR_OUT_OF_MEMORY);
  assert_null(b);
  assert_string_equal(tb_last_error(),
                      "fake:0: out of memory allocating 16.00 GiB (17179869184 bytes): 1.00 KiB allocated, "
                      "2.00 MiB reserved, 6.00 MiB free on the device; free tensors, call tb_backend_empty_cache, "
                      "or lower the batch size (the device said: fake:0: cuMemAlloc of 17179869184 bytes: "
                      "CUDA_ERROR_OUT_OF_MEMORY (2))");
  assert_int_equal(dev.alloc_calls, 3); /* the small segment, then the request and its one retry */
  tb_memory_stats s = fake_stats(a);
  assert_int_equal(s.num_oom_retries, 1);
  ASSERT_STATS(a, 1024, 1000, 2 * MIB, 1, 0, 1, 0);

  /* The allocator goes on: a small block from the cache, a large one from the device. */
  tb_block *next = alloc_ok(a, 1000);
  assert_int_equal(next->offset, 1024);
  tb_block *large = alloc_ok(a, 5 * MIB);
  assert_int_equal(large->mem.size, 6 * MIB);
  ASSERT_STATS(a, 2048 + 5 * MIB, 2000 + 5 * MIB, 8 * MIB, 3, 0, 2, 0);
  assert_int_equal(fake_stats(a).device_free, 0);

  /* Full device, no cache to release, driver free memory unknown. */
  dev.memory_info_ok = false;
  assert_int_equal(tb_allocator_alloc(a, 3 * MIB, &b), TB_ERR_OUT_OF_MEMORY);
  assert_string_equal(tb_last_error(),
                      "fake:0: out of memory allocating 3.00 MiB (3145728 bytes): 5.00 MiB allocated, "
                      "8.00 MiB reserved, free device memory unknown; free tensors, call tb_backend_empty_cache, "
                      "or lower the batch size (the device said: fake:0: cuMemAlloc of 4194304 bytes: "
                      "CUDA_ERROR_OUT_OF_MEMORY (2))");
  assert_int_equal(fake_stats(a).num_oom_retries, 2);
  tb_allocator_free(a, large);
  /* Now the freed 6 MiB segment serves it from the cache. */
  b = alloc_ok(a, 3 * MIB);
  assert_int_equal(b->mem.size, 6 * MIB);
  ASSERT_STATS(a, 2048 + 3 * MIB, 2000 + 3 * MIB, 8 * MIB, 4, 1, 2, 0);
  tb_allocator_free(a, b);
  tb_allocator_free(a, next);
  tb_allocator_free(a, keep);
  finish(a, &dev);
}

static void test_device_oom_with_limit_set(void **state) {
  (void)state;
  fake_dev dev;
  tb_allocator *a = make(&dev, 64 * MIB);
  TB_ASSERT_OK(tb_allocator_set_fraction(a, 0.75, 0));
  dev.capacity = 10 * MIB; /* someone else took the rest of the device */
  tb_block *b = NULL;
  assert_int_equal(tb_allocator_alloc(a, 12 * MIB, &b), TB_ERR_OUT_OF_MEMORY);
  assert_string_equal(tb_last_error(),
                      "fake:0: out of memory allocating 12.00 MiB (12582912 bytes): 0 bytes allocated, 0 bytes "
                      "reserved, 10.00 MiB free on the device (limit 48.00 MiB from memory fraction 0.75); free "
                      "tensors, call tb_backend_empty_cache, or lower the batch size (the device said: fake:0: cuMemAlloc of "
                      "12582912 bytes: CUDA_ERROR_OUT_OF_MEMORY (2))");
  assert_int_equal(dev.alloc_calls, 2);
  finish(a, &dev);
}

/* Run destroy with stderr captured; returns what was logged (caller frees). */
static char *destroy_capturing_log(tb_allocator *a) {
  char path[] = "/tmp/tb_alloc_log_XXXXXX";
  int fd = mkstemp(path);
  assert_true(fd >= 0);
  fflush(stderr);
  int saved = dup(2);
  assert_true(saved >= 0);
  assert_true(dup2(fd, 2) >= 0);
  tb_allocator_destroy(a);
  fflush(stderr);
  dup2(saved, 2);
  close(saved);
  char *text = calloc(1, 4096);
  assert_non_null(text);
  assert_true(lseek(fd, 0, SEEK_SET) == 0);
  ssize_t n = read(fd, text, 4095);
  assert_true(n >= 0);
  close(fd);
  unlink(path);
  return text;
}

static void test_leak_report_at_destroy(void **state) {
  (void)state;
  setenv("TB_LOG", "warn", 1);
  fake_dev dev;
  tb_allocator *a = make(&dev, 64 * MIB);
  alloc_ok(a, 1000);
  alloc_ok(a, 3 * MIB);
  alloc_ok(a, 0);
  tb_allocator_free(a, alloc_ok(a, 5 * MIB)); /* freed: not a leak, but its segment is released too */
  assert_int_equal(tb_allocator_live_blocks(a), 3);
  char *log = destroy_capturing_log(a);
  assert_string_equal(log,
                      "tensorbridge: warning: fake:0: 3 blocks (3.00 MiB, 3146752 bytes) were still allocated when "
                      "the allocator was destroyed; they leaked and are released now\n");
  free(log);
  assert_int_equal(dev.allocs, 3);
  assert_int_equal(dev.frees, 3);
  assert_int_equal(dev.used, 0);

  /* Nothing live: nothing logged. */
  pthread_mutex_destroy(&dev.lock);
  a = make(&dev, 64 * MIB);
  tb_allocator_free(a, alloc_ok(a, 1000));
  log = destroy_capturing_log(a);
  assert_string_equal(log, "");
  free(log);
  assert_int_equal(dev.used, 0);
  pthread_mutex_destroy(&dev.lock);
  setenv("TB_LOG", "error", 1);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_fraction_limit),
      cmocka_unit_test(test_fraction_total_unknown),
      cmocka_unit_test(test_device_oom_release_and_retry_succeeds),
      cmocka_unit_test(test_device_oom_fails_then_next_allocation_works),
      cmocka_unit_test(test_device_oom_with_limit_set),
      cmocka_unit_test(test_leak_report_at_destroy),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
