/* The thread pool's partitioning (src/core/threadpool.c: a contiguous home range of chunks per thread, the
 * rest taken from the others when a thread runs out): every task runs exactly once for 1..64 threads and task
 * counts below, at and above the thread count; chunks are whole (no more calls than threads x 4); a worker
 * stuck in its first chunk has the rest of its home range taken by the others; concurrent callers on one pool
 * and nested calls into another pool each run every task once. */
#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <time.h>
#include "core/threadpool.h"
#include "test_util.h"

typedef struct counts {
  atomic_int *hits;
  atomic_int calls;
  size_t n;
  atomic_int out_of_range;
} counts;

static void count_range(void *arg, size_t begin, size_t end) {
  counts *c = arg;
  atomic_fetch_add(&c->calls, 1);
  if (begin >= end || end > c->n) atomic_fetch_add(&c->out_of_range, 1);
  for (size_t i = begin; i < end && i < c->n; i++) atomic_fetch_add(&c->hits[i], 1);
}

static void check_once(tb_pool *pool, int threads, size_t n) {
  counts c = {calloc(n, sizeof(atomic_int)), 0, n, 0};
  assert_non_null(c.hits);
  tb_pool_parallel_for(pool, n, count_range, &c);
  assert_int_equal(atomic_load(&c.out_of_range), 0);
  for (size_t i = 0; i < n; i++)
    if (atomic_load(&c.hits[i]) != 1)
      fail_msg("%d threads, %zu tasks: task %zu ran %d times", threads, n, i, atomic_load(&c.hits[i]));
  int calls = atomic_load(&c.calls);
  if (calls < 1 || (size_t)calls > n || calls > threads * 4)
    fail_msg("%d threads, %zu tasks: %d calls (1..min(tasks, threads x 4) expected)", threads, n, calls);
  free(c.hits);
}

static void every_task_once_1_to_64_threads(void **state) {
  (void)state;
  static const int thread_counts[] = {1, 2, 3, 4, 5, 7, 8, 13, 16, 31, 32, 33, 63, 64};
  for (size_t k = 0; k < sizeof thread_counts / sizeof thread_counts[0]; k++) {
    int t = thread_counts[k];
    tb_pool *pool = NULL;
    TB_ASSERT_OK(tb_pool_create(t, &pool));
    size_t tt = (size_t)t;
    const size_t sizes[] = {1, 2, 3, tt > 1 ? tt - 1 : 1, tt, tt + 1, 2 * tt + 1, 4 * tt - 1, 4 * tt, 4 * tt + 1,
                            4 * tt + 3, 1000, 4099};
    for (int round = 0; round < 3; round++) /* again: the claim counters carry the last job's tag */
      for (size_t s = 0; s < sizeof sizes / sizeof sizes[0]; s++) check_once(pool, t, sizes[s]);
    tb_pool_destroy(pool);
  }
}

/* The first worker to run a chunk waits (up to 10 s) until the other threads have run every other task:
 * they can only do so by taking the rest of its home range. */
typedef struct stuck {
  pthread_t caller;
  atomic_int claimed_worker; /* 0: none yet, 1: one is stuck */
  atomic_int worker_calls;
  atomic_size_t done_by_others;
  size_t n;
  atomic_size_t worker_tasks;
  atomic_int *hits;
} stuck;

static _Thread_local const stuck *stuck_here; /* the job this thread is the stuck worker of */

static double seconds_since(const struct timespec *t0) {
  struct timespec now;
  clock_gettime(CLOCK_MONOTONIC, &now);
  return (double)(now.tv_sec - t0->tv_sec) + 1e-9 * (double)(now.tv_nsec - t0->tv_nsec);
}

static void stuck_worker_task(void *arg, size_t begin, size_t end) {
  stuck *s = arg;
  for (size_t i = begin; i < end; i++) atomic_fetch_add(&s->hits[i], 1);
  struct timespec t0;
  clock_gettime(CLOCK_MONOTONIC, &t0);
  if (stuck_here == s) { /* the stuck worker's later chunks (none expected) */
    atomic_fetch_add(&s->worker_calls, 1);
    return;
  }
  int expected = 0;
  if (!pthread_equal(pthread_self(), s->caller) && atomic_compare_exchange_strong(&s->claimed_worker, &expected, 1)) {
    stuck_here = s;
    atomic_store(&s->worker_tasks, end - begin);
    atomic_fetch_add(&s->worker_calls, 1);
    while (atomic_load(&s->done_by_others) < s->n - (end - begin) && seconds_since(&t0) < 10) sched_yield();
    return;
  }
  /* the caller's first chunk waits (up to 10 s) for a worker to be stuck, so that one is */
  while (!atomic_load(&s->claimed_worker) && seconds_since(&t0) < 10) sched_yield();
  atomic_fetch_add(&s->done_by_others, end - begin);
}

static void stuck_worker_share_is_taken(void **state) {
  (void)state;
  for (int threads = 2; threads <= 4; threads++) {
    tb_pool *pool = NULL;
    TB_ASSERT_OK(tb_pool_create(threads, &pool));
    enum { N = 64 };
    atomic_int hits[N] = {0};
    stuck s = {.caller = pthread_self(), .n = N, .hits = hits};
    tb_pool_parallel_for(pool, N, stuck_worker_task, &s);
    for (int i = 0; i < N; i++) assert_int_equal(atomic_load(&hits[i]), 1);
    assert_int_equal(atomic_load(&s.claimed_worker), 1);
    /* the stuck worker ran only its first chunk; its home range's other chunks ran elsewhere */
    assert_int_equal(atomic_load(&s.worker_calls), 1);
    size_t worker_tasks = atomic_load(&s.worker_tasks);
    assert_int_equal(atomic_load(&s.done_by_others), N - worker_tasks);
    assert_true(worker_tasks < (size_t)N / (size_t)threads); /* a chunk, less than a home range */
    tb_pool_destroy(pool);
  }
}

/* Callers on other threads share one pool (a busy pool runs a call serially): every call runs each task once. */
typedef struct caller_arg {
  tb_pool *pool;
  int failures;
} caller_arg;

static void *concurrent_caller(void *arg) {
  caller_arg *a = arg;
  for (int j = 0; j < 300; j++) {
    size_t n = 1 + (size_t)(j * 7 % 61);
    atomic_int hits[61] = {0};
    counts c = {hits, 0, n, 0};
    tb_pool_parallel_for(a->pool, n, count_range, &c);
    for (size_t i = 0; i < n; i++) a->failures += atomic_load(&hits[i]) != 1;
    a->failures += atomic_load(&c.out_of_range);
  }
  return NULL;
}

static void concurrent_callers_run_every_task_once(void **state) {
  (void)state;
  tb_pool *pool = NULL;
  TB_ASSERT_OK(tb_pool_create(3, &pool));
  enum { CALLERS = 4 };
  pthread_t ids[CALLERS];
  caller_arg args[CALLERS];
  for (int i = 0; i < CALLERS; i++) {
    args[i] = (caller_arg){pool, 0};
    assert_int_equal(pthread_create(&ids[i], NULL, concurrent_caller, &args[i]), 0);
  }
  for (int i = 0; i < CALLERS; i++) {
    pthread_join(ids[i], NULL);
    assert_int_equal(args[i].failures, 0);
  }
  assert_true(tb_pool_split_jobs(pool) > 0);
  tb_pool_destroy(pool);
}

/* A task that calls into a second pool: nested, so it runs serially on the task's thread, each task once. */
typedef struct two_pools {
  tb_pool *inner;
  atomic_int hits[40 * 9];
} two_pools;

typedef struct inner_ctx {
  two_pools *t;
  size_t outer;
} inner_ctx;

static void inner_tasks(void *arg, size_t begin, size_t end) {
  inner_ctx *in = arg;
  for (size_t i = begin; i < end; i++) atomic_fetch_add(&in->t->hits[in->outer * 9 + i], 1);
}

static void outer_tasks(void *arg, size_t begin, size_t end) {
  two_pools *t = arg;
  for (size_t o = begin; o < end; o++) {
    inner_ctx in = {t, o};
    tb_pool_parallel_for(t->inner, 9, inner_tasks, &in);
  }
}

static void nested_call_into_another_pool(void **state) {
  (void)state;
  tb_pool *outer = NULL;
  two_pools *t = calloc(1, sizeof *t);
  assert_non_null(t);
  TB_ASSERT_OK(tb_pool_create(2, &outer));
  TB_ASSERT_OK(tb_pool_create(3, &t->inner));
  for (int round = 0; round < 20; round++) tb_pool_parallel_for(outer, 40, outer_tasks, t);
  for (int i = 0; i < 40 * 9; i++) assert_int_equal(atomic_load(&t->hits[i]), 20);
  assert_int_equal(tb_pool_split_jobs(t->inner), 0); /* never split: always called from inside a task */
  tb_pool_destroy(t->inner);
  tb_pool_destroy(outer);
  free(t);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(every_task_once_1_to_64_threads),
      cmocka_unit_test(stuck_worker_share_is_taken),
      cmocka_unit_test(concurrent_callers_run_every_task_once),
      cmocka_unit_test(nested_call_into_another_pool),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
