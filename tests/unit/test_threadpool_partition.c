/* The thread pool's partitioning (src/core/threadpool.c: a contiguous home range of chunks per thread, the
 * rest taken from the others when a thread runs out): every task runs exactly once for 1..64 threads and task
 * counts below, at and above the thread count; chunks are whole (no more calls than threads x 4); a worker
 * stuck in its first chunk (the first of its own home range) has the rest of its home range taken by the
 * others; concurrent callers on one pool each run every task once. */
#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <time.h>
#include "core/threadpool.h"
#include "test_threadpool_util.h"
#include "test_util.h"

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
    assert_int_equal(tb_pool_threads(pool), t);
    size_t tt = (size_t)t;
    const size_t sizes[] = {1, 2, 3, tt > 1 ? tt - 1 : 1, tt, tt + 1, 2 * tt + 1, 4 * tt - 1, 4 * tt, 4 * tt + 1,
                            4 * tt + 3, 1000, 4099};
    for (int round = 0; round < 3; round++) /* again: the claim counters carry the last job's tag */
      for (size_t s = 0; s < sizeof sizes / sizeof sizes[0]; s++) check_once(pool, t, sizes[s]);
    tb_pool_parallel_for(pool, 0, count_range, NULL); /* no tasks: fn is never called */
    tb_pool_destroy(pool);
  }
  tb_pool_destroy(NULL);
  assert_int_equal(tb_pool_threads(NULL), 1);
}

/* The first worker to run a chunk waits (up to 10 s) until the other threads have run every other task:
 * they can only do so by taking the rest of its home range. That chunk is the first of the worker's own home
 * range (a pool handing out chunks from one shared counter gives it chunk 1, the caller being in chunk 0).
 * A wait that runs out (a heavily loaded machine) skips the test rather than failing it. */
typedef struct stuck {
  pthread_t caller;
  atomic_int claimed_worker; /* 0: none yet, 1: one is stuck */
  atomic_int worker_calls;
  atomic_size_t done_by_others;
  size_t n;
  atomic_size_t worker_tasks, worker_begin;
  atomic_int *hits;
  atomic_int timed_out;
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
    atomic_store(&s->worker_begin, begin);
    atomic_fetch_add(&s->worker_calls, 1);
    while (atomic_load(&s->done_by_others) < s->n - (end - begin))
      if (seconds_since(&t0) < 10)
        sched_yield();
      else {
        atomic_store(&s->timed_out, 1);
        break;
      }
    return;
  }
  /* the caller's first chunk waits (up to 10 s) for a worker to be stuck, so that one is */
  while (!atomic_load(&s->claimed_worker))
    if (seconds_since(&t0) < 10)
      sched_yield();
    else {
      atomic_store(&s->timed_out, 1);
      break;
    }
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
    tb_pool_destroy(pool);
    for (int i = 0; i < N; i++) assert_int_equal(atomic_load(&hits[i]), 1);
    if (atomic_load(&s.timed_out)) {
      print_message("skipped: %d threads: a wait of 10 s ran out (a loaded machine), nothing to judge\n", threads);
      skip();
    }
    assert_int_equal(atomic_load(&s.claimed_worker), 1);
    /* the stuck worker ran only its first chunk; its home range's other chunks ran elsewhere */
    assert_int_equal(atomic_load(&s.worker_calls), 1);
    size_t worker_tasks = atomic_load(&s.worker_tasks);
    assert_int_equal(atomic_load(&s.done_by_others), N - worker_tasks);
    assert_true(worker_tasks < (size_t)N / (size_t)threads); /* a chunk, less than a home range */
    /* the first chunk of a worker's home range: src/core/threadpool.c's chunk size and home_first */
    size_t chunk = (N + 4 * (size_t)threads - 1) / (4 * (size_t)threads), n_chunks = (N + chunk - 1) / chunk;
    size_t begin = atomic_load(&s.worker_begin), home_start = 0;
    assert_int_equal(begin % chunk, 0);
    for (int t = 1; t < threads; t++)
      if (begin / chunk == n_chunks * (size_t)t / (size_t)threads) home_start = 1;
    if (!home_start)
      fail_msg("%d threads: the stuck worker's chunk starts at task %zu, not a worker's home range's first", threads,
               begin);
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

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(every_task_once_1_to_64_threads),
      cmocka_unit_test(stuck_worker_share_is_taken),
      cmocka_unit_test(concurrent_callers_run_every_task_once),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
