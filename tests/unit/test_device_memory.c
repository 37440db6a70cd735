/* One device-memory suite for the CUDA, HIP and Level Zero backends, run once per backend by CTest
 * (test_cuda_memory, test_hip_memory, test_level_zero_memory: `test_device_memory cuda|hip|level_zero`).
 * Over each fake runtime on its recorded node: the device found by discovery is opened, memory is written
 * and read back at offsets, copied, filled with every pattern size, synchronized; memory_info gives the
 * fake's numbers; out of memory and driver errors come back as statuses with the code and its name; threads
 * share one backend; close leaves nothing behind; and the caching allocator runs over it. What differs per
 * backend (sentences, counters, devices) is in its devmem_case; its own tests (opening and its failures) are
 * in test_device_memory_<backend>.h. */
#include <pthread.h>
#include <stdio.h>
#include "test_device_memory.h"
#include "test_gpumem_helpers.h"

#define MIB (1024ull * 1024ull)

static const devmem_case *dm;
static tb_device_list *devmem_list;

/* An int(int) or int(void) function the fake exports for tests, by name. */
static int fake_int(const char *name, int arg) {
  int (*fn)(int) = (int (*)(int))gpumem_fake_symbol(dm->fake, name);
  return fn(arg);
}

static int fake_count(const char *name) {
  int (*fn)(void) = (int (*)(void))gpumem_fake_symbol(dm->fake, name);
  return fn();
}

static unsigned long long fake_u64(const char *name, int arg) {
  unsigned long long (*fn)(int) = (unsigned long long (*)(int))gpumem_fake_symbol(dm->fake, name);
  return fn(arg);
}

static int live_allocations(int device) {
  char name[64];
  snprintf(name, sizeof name, "%s_live_allocations", dm->fake);
  return fake_int(name, device);
}

static const tb_device_info *nth_device(int index) {
  const tb_device_info *d = tbt_nth(devmem_list, dm->kind, index);
  assert_non_null(d);
  assert_true(d->usable);
  return d;
}

static void *open_device(int index) {
  void *state = NULL;
  TB_ASSERT_OK(dm->ops->open(nth_device(index), &state));
  assert_non_null(state);
  return state;
}

static const char *label_of(int index, char *buf, size_t size) {
  snprintf(buf, size, "%s:%d", dm->prefix, index);
  return buf;
}

static void thread_is_as_it_was(void) {
  if (dm->thread_is_as_it_was) dm->thread_is_as_it_was();
}

/* After close: no allocation left on any device, nor anything else the backend made. */
static void close_and_expect_nothing_live(void *state) {
  dm->ops->close(state);
  assert_int_equal(live_allocations(-1), 0);
  dm->nothing_live();
}

#include "test_device_memory_cuda.h"
#include "test_device_memory_hip.h"
#include "test_device_memory_level_zero.h"

static int setup(void **state) {
  (void)state;
  unsetenv(dm->capacity_env);
  unsetenv(dm->fail_env);
  unsetenv(dm->fail_code_env);
  devmem_list = NULL;
  dm->setup();
  return 0;
}

static int teardown(void **state) {
  (void)state;
  tb_device_list_destroy(devmem_list);
  devmem_list = NULL;
  return 0;
}

static void round_trip_copy_and_fill(void **s) {
  (void)s;
  void *state = open_device(0);
  const tb_backend_ops *ops = dm->ops;
  gpumem_round_trip(ops, state);
  gpumem_copy(ops, state);
  static const int widths[4] = {1, 2, 4, 8};
  unsigned long long before[4];
  for (int i = 0; i < 4; i++) before[i] = fake_u64(dm->fill_counter, widths[i]);
  gpumem_fill_patterns(ops, state);
  for (int i = 0; i < 4; i++) {
    unsigned long long calls = fake_u64(dm->fill_counter, widths[i]) - before[i];
    if (calls != dm->fills[i])
      fail_msg("%s: %llu native fills with a %d-byte pattern, expected %llu", dm->name, calls, widths[i], dm->fills[i]);
  }
  char label[32];
  gpumem_bad_requests(ops, state, label_of(0, label, sizeof label));
  thread_is_as_it_was();
  close_and_expect_nothing_live(state);
}

static void synchronize_and_memory_info(void **s) {
  (void)s;
  if (dm->info_capacity) setenv(dm->capacity_env, dm->info_capacity, 1);
  void *state = open_device(dm->info_device);
  TB_ASSERT_OK(dm->ops->synchronize(state));
  uint64_t free_bytes = 0, total = 0;
  TB_ASSERT_OK(dm->ops->memory_info(state, &free_bytes, &total));
  assert_int_equal(total, dm->info_total);
  assert_int_equal(free_bytes, dm->info_free);
  tb_devmem mem;
  TB_ASSERT_OK(dm->ops->alloc(state, 5 * MIB, &mem));
  TB_ASSERT_OK(dm->ops->memory_info(state, &free_bytes, &total));
  assert_int_equal(total, dm->info_total);
  assert_int_equal(free_bytes, dm->info_free - 5 * MIB); /* the device's own use, asked on that device */

  setenv(dm->fail_env, "sync", 1);
  assert_int_equal(dm->ops->synchronize(state), TB_ERR_DRIVER);
  TB_ASSERT_CONTAINS(tb_last_error(), dm->sync_failure);
  unsetenv(dm->fail_env);
  dm->info_failure(state);
  dm->ops->free(state, mem);
  close_and_expect_nothing_live(state);
}

static void out_of_memory_then_recovery(void **s) {
  (void)s;
  setenv(dm->capacity_env, "8M", 1);
  void *state = open_device(0);
  const tb_backend_ops *ops = dm->ops;
  tb_devmem held, big, small;
  TB_ASSERT_OK(ops->alloc(state, 6 * MIB, &held));
  assert_int_equal(ops->alloc(state, 4 * MIB, &big), TB_ERR_OUT_OF_MEMORY);
  TB_ASSERT_CONTAINS(tb_last_error(), dm->oom_failure);
  if (dm->oom_free) TB_ASSERT_CONTAINS(tb_last_error(), dm->oom_free);
  thread_is_as_it_was(); /* on the error path too */
  TB_ASSERT_OK(ops->alloc(state, 2 * MIB, &small)); /* what fits still works */
  ops->free(state, held);
  TB_ASSERT_OK(ops->alloc(state, 4 * MIB, &big)); /* and the big one once there is room */
  ops->free(state, big);
  ops->free(state, small);
  close_and_expect_nothing_live(state);
}

static void driver_error_on_copies(void **s) {
  (void)s;
  void *state = open_device(0);
  const tb_backend_ops *ops = dm->ops;
  tb_devmem a, b;
  TB_ASSERT_OK(ops->alloc(state, 4096, &a));
  TB_ASSERT_OK(ops->alloc(state, 4096, &b));
  unsigned char buf[64] = {1, 2, 3};
  setenv(dm->fail_env, "copy", 1);
  assert_int_equal(ops->write(state, a, 128, buf, 64), TB_ERR_DRIVER);
  TB_ASSERT_CONTAINS(tb_last_error(), dm->write_failure);
  assert_int_equal(ops->read(state, a, 0, buf, 64), TB_ERR_DRIVER);
  TB_ASSERT_CONTAINS(tb_last_error(), dm->read_failure);
  setenv(dm->fail_code_env, dm->unknown_code, 1); /* a code neither the driver nor the table knows */
  assert_int_equal(ops->copy(state, b, 0, a, 0, 64), TB_ERR_DRIVER);
  TB_ASSERT_CONTAINS(tb_last_error(), dm->copy_failure);
  setenv(dm->fail_env, "fill", 1);
  setenv(dm->fail_code_env, dm->fill_code, 1);
  assert_int_equal(ops->fill(state, a, dm->fill_offset, dm->fill_pattern, dm->fill_pattern_size, 64), TB_ERR_DRIVER);
  TB_ASSERT_CONTAINS(tb_last_error(), dm->fill_failure);
  unsetenv(dm->fail_env);
  unsetenv(dm->fail_code_env);
  thread_is_as_it_was();
  TB_ASSERT_OK(ops->write(state, a, 128, buf, 64)); /* the next call works */
  ops->free(state, a);
  ops->free(state, b);
  close_and_expect_nothing_live(state);
}

typedef struct thread_job {
  void *state;
  tb_devmem mem;
  size_t offset;
  unsigned seed;
  int failures;
  int state_after;
} thread_job;

static void *worker(void *arg) {
  thread_job *job = arg;
  unsigned char in[512], out[512];
  for (int round = 0; round < 200; round++) {
    gpumem_pattern(in, sizeof in, job->seed + (unsigned)round);
    if (dm->ops->write(job->state, job->mem, job->offset, in, sizeof in) != TB_OK ||
        dm->ops->read(job->state, job->mem, job->offset, out, sizeof out) != TB_OK || memcmp(in, out, sizeof in))
      job->failures++;
  }
  job->state_after = dm->thread_state ? dm->thread_state() : 0;
  return NULL;
}

/* Threads that never set up the device themselves use one backend at once. */
static void threads_share_one_backend(void **s) {
  (void)s;
  void *state = open_device(dm->threads_device);
  tb_devmem mem;
  TB_ASSERT_OK(dm->ops->alloc(state, 4096, &mem));
  thread_job jobs[4];
  pthread_t threads[4];
  for (int i = 0; i < 4; i++) {
    jobs[i] = (thread_job){state, mem, (size_t)i * 1024, (unsigned)i * 1000, 0, -1};
    assert_int_equal(pthread_create(&threads[i], NULL, worker, &jobs[i]), 0);
  }
  for (int i = 0; i < 4; i++) {
    pthread_join(threads[i], NULL);
    assert_int_equal(jobs[i].failures, 0);
    assert_int_equal(jobs[i].state_after, 0);
  }
  dm->ops->free(state, mem);
  close_and_expect_nothing_live(state);
}

static void caching_allocator(void **s) {
  (void)s;
  if (dm->allocator_capacity) setenv(dm->capacity_env, dm->allocator_capacity, 1);
  void *state = open_device(dm->allocator_device);
  char label[32];
  label_of(dm->allocator_device, label, sizeof label);
  gpumem_through_allocator(dm->ops, state, label, dm->allocator_total, dm->allocator_free);
  assert_int_equal(live_allocations(dm->allocator_device), 0); /* destroy gave everything back */
  setenv(dm->capacity_env, "64M", 1);
  gpumem_allocator_oom(dm->ops, state, label, (size_t)(100 * MIB));
  TB_ASSERT_OK(dm->ops->memory_info(state, &(uint64_t){0}, &(uint64_t){0}));
  close_and_expect_nothing_live(state);
}

static const devmem_case *const cases[] = {&cuda_case, &hip_case, &level_zero_case};

int main(int argc, char **argv) {
  for (size_t i = 0; argc == 2 && i < sizeof cases / sizeof cases[0]; i++)
    if (strcmp(argv[1], cases[i]->name) == 0) dm = cases[i];
  if (!dm) {
    fprintf(stderr, "usage: %s cuda|hip|level_zero (the backend whose device memory to test)\n", argv[0]);
    return 2;
  }
  const struct CMUnitTest shared[] = {
      cmocka_unit_test_setup_teardown(round_trip_copy_and_fill, setup, teardown),
      cmocka_unit_test_setup_teardown(synchronize_and_memory_info, setup, teardown),
      cmocka_unit_test_setup_teardown(out_of_memory_then_recovery, setup, teardown),
      cmocka_unit_test_setup_teardown(driver_error_on_copies, setup, teardown),
      cmocka_unit_test_setup_teardown(threads_share_one_backend, setup, teardown),
      cmocka_unit_test_setup_teardown(caching_allocator, setup, teardown),
  };
  enum { SHARED = sizeof shared / sizeof shared[0] };
  enum { OWN_MAX = 8 };
  struct CMUnitTest tests[SHARED + OWN_MAX];
  if (dm->own_count > OWN_MAX) {
    fprintf(stderr, "%s: %zu tests of its own, at most %d fit\n", dm->name, dm->own_count, OWN_MAX);
    return 1;
  }
  memcpy(tests, dm->own, dm->own_count * sizeof tests[0]);
  memcpy(tests + dm->own_count, shared, sizeof shared);
  for (size_t i = 0; i < dm->own_count; i++) {
    tests[i].setup_func = setup;
    tests[i].teardown_func = teardown;
  }
  return _cmocka_run_group_tests(dm->name, tests, dm->own_count + SHARED, NULL, NULL);
}
