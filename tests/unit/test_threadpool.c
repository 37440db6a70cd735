/* The persistent thread pool (src/core/threadpool.h): every task index runs exactly once for many task
 * counts and thread counts, chunks really run on more than one thread, nested calls run serially, 10k tiny
 * calls in a row finish, work under TB_POOL_MIN_WORK stays on the caller, the pool backs off from a worker
 * that stalls (a loaded machine), TB_NUM_THREADS is validated, and prepared models give bit-identical outputs
 * with 1 and 2 threads (MatMul splits its rows over the pool, Transpose its strided copy). */
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include "core/threadpool.h"
#include "test_threadpool_util.h"
#include "test_engine_util.h"
#include "test_tensor_util.h"

#define MODELS TB_TEST_FIXTURES "/../../models/"

static void bad_pool_sizes(void **state) {
  (void)state;
  tb_pool *pool = (tb_pool *)1;
  assert_int_equal(tb_pool_create(0, &pool), TB_ERR_INVALID_ARGUMENT);
  assert_null(pool);
  TB_ASSERT_CONTAINS(tb_last_error(), "1..4096");
  assert_int_equal(tb_pool_create(TB_POOL_MAX_THREADS + 1, &pool), TB_ERR_INVALID_ARGUMENT);
  TB_ASSERT_CONTAINS(tb_last_error(), "4097");
}

/* One thread (and a NULL pool) runs everything in one call on the caller. */
typedef struct who {
  pthread_t caller;
  atomic_int foreign;
  counts c;
} who;

static void note_thread(void *arg, size_t begin, size_t end) {
  who *w = arg;
  if (!pthread_equal(pthread_self(), w->caller)) atomic_fetch_add(&w->foreign, 1);
  count_range(&w->c, begin, end);
}

static void one_thread_runs_on_caller(void **state) {
  (void)state;
  tb_pool *pool = NULL;
  TB_ASSERT_OK(tb_pool_create(1, &pool));
  tb_pool *pools[2] = {pool, NULL};
  for (int k = 0; k < 2; k++) {
    atomic_int hits[100] = {0};
    who w = {pthread_self(), 0, {hits, 0, 100, 0}};
    tb_pool_parallel_for(pools[k], 100, note_thread, &w);
    assert_int_equal(atomic_load(&w.c.calls), 1);
    assert_int_equal(atomic_load(&w.foreign), 0);
    for (int i = 0; i < 100; i++) assert_int_equal(atomic_load(&hits[i]), 1);
  }
  tb_pool_destroy(pool);
}

/* Two tasks on a 2-thread pool: each waits (up to 10 s) until both threads have arrived, so the test
 * proves the worker takes part. */
typedef struct meet {
  atomic_int arrived;
  pthread_t ids[2];
  atomic_int met;
} meet;

static void wait_for_partner(void *arg, size_t begin, size_t end) {
  meet *m = arg;
  for (size_t t = begin; t < end; t++) {
    int me = atomic_fetch_add(&m->arrived, 1);
    if (me < 2) m->ids[me] = pthread_self();
    struct timespec start, now;
    clock_gettime(CLOCK_MONOTONIC, &start);
    do {
      if (atomic_load(&m->arrived) >= 2) {
        atomic_fetch_add(&m->met, 1);
        break;
      }
      sched_yield(); /* lets the partner run where threads share a CPU (valgrind runs one at a time) */
      clock_gettime(CLOCK_MONOTONIC, &now);
    } while (now.tv_sec - start.tv_sec < 10);
  }
}

static void work_runs_on_two_threads(void **state) {
  (void)state;
  tb_pool *pool = NULL;
  TB_ASSERT_OK(tb_pool_create(2, &pool));
  meet m = {0};
  tb_pool_parallel_for(pool, 2, wait_for_partner, &m);
  assert_int_equal(atomic_load(&m.arrived), 2);
  assert_int_equal(atomic_load(&m.met), 2);
  assert_false(pthread_equal(m.ids[0], m.ids[1]));
  tb_pool_destroy(pool);
}

/* Work under TB_POOL_MIN_WORK runs in one call on the caller however many threads the pool has; work at or
 * above it is split (every index once, on more than one call). */
static void small_work_stays_on_caller(void **state) {
  (void)state;
  tb_pool *pool = NULL;
  TB_ASSERT_OK(tb_pool_create(2, &pool));
  enum { TASKS = 64 };
  atomic_int hits[TASKS] = {0};
  who w = {pthread_self(), 0, {hits, 0, TASKS, 0}};
  tb_pool_parallel_for_work(pool, TASKS, TB_POOL_MIN_WORK - 1, note_thread, &w);
  assert_int_equal(atomic_load(&w.c.calls), 1);
  assert_int_equal(atomic_load(&w.foreign), 0);
  for (int i = 0; i < TASKS; i++) assert_int_equal(atomic_load(&hits[i]), 1);
  atomic_int big_hits[TASKS] = {0};
  who big = {pthread_self(), 0, {big_hits, 0, TASKS, 0}};
  tb_pool_parallel_for_work(pool, TASKS, TB_POOL_MIN_WORK, note_thread, &big);
  assert_true(atomic_load(&big.c.calls) > 1); /* chunks: 4 per thread */
  for (int i = 0; i < TASKS; i++) assert_int_equal(atomic_load(&big_hits[i]), 1);
  tb_pool_destroy(pool);
}

/* What a split job saved against the caller alone: the workers' tasks at the caller's fastest rate, less the
 * caller's wait beyond TB_POOL_SLOW_WORKER chunks. */
static void job_gain_rule(void **state) {
  (void)state;
  /* 8 tasks of 1 us in chunks of 1: the caller ran 4, the worker 4 and the caller waited for nothing */
  assert_true(tb_pool_job_gain(8, 4, 1000.0, 1, 0) == 4000.0);
  /* a worker 1.5x slower (or with heavier tasks): the caller waits 1.5 us for its last chunk, still saved */
  assert_true(tb_pool_job_gain(8, 5, 1000.0, 1, 1500) == 3000.0);
  /* a worker preempted holding a chunk: 1 ms wait, 2 us of it expected */
  assert_true(tb_pool_job_gain(8, 4, 1000.0, 1, 1000000) == 4000.0 - 998000.0);
  /* the caller ran all, then waited 300 us for a late joiner */
  assert_true(tb_pool_job_gain(8, 8, 1000.0, 2, 300000) == -296000.0);
  assert_true(tb_pool_job_gain(8, 0, 0, 1, 9000000) == 0.0); /* nothing to compare with */
}

/* A simulated run: jobs of job_ns back to back, each split one saving saving_ns, except that every
 * stall_every_ns a worker is preempted holding a chunk and the job loses stall_ns; during a back-off jobs run
 * on the caller and nothing is booked. Returns the share of jobs split, in percent. */
static int simulated_split_percent(tb_pool_backoff *b, uint64_t *t, uint64_t job_ns, double saving_ns,
                                   uint64_t stall_every_ns, uint64_t stall_ns, uint64_t run_ns) {
  uint64_t end = *t + run_ns, next_stall = *t + stall_every_ns, jobs = 0, split = 0;
  while (*t < end) {
    jobs++;
    *t += job_ns;
    if (*t < b->serial_until) continue;
    split++;
    if (*t >= next_stall) {
      next_stall += stall_every_ns;
      *t += stall_ns;
      tb_pool_backoff_book(b, saving_ns - (double)stall_ns, *t);
    } else {
      tb_pool_backoff_book(b, saving_ns, *t);
    }
  }
  return (int)(100 * split / jobs);
}

/* The back-off's book on given sequences. */
static void back_off_book_rule(void **state) {
  (void)state;
  uint64_t t = 1000000000ull;
  tb_pool_backoff b = {0};
  assert_false(tb_pool_backoff_book(&b, -15000, t)); /* 15 us late: within the slack */
  assert_true(b.balance_ns == 0.0);
  /* rare but regular stalls (5 per second, 1 ms each) among 6 us jobs that save 1.5 us: every job split */
  assert_int_equal(simulated_split_percent(&b, &t, 6000, 1500, 200000000, 1000000, 2000000000ull), 100);
  assert_int_equal(b.backoffs, 0);
  /* the same jobs saving only 20 ns (0.3% of the time, the stalls cost 0.5%): a back-off after each stall, for
   * the shortest period (the stalls are 200 ms apart, past the repeat window) */
  tb_pool_backoff few = {0};
  int pct = simulated_split_percent(&few, &t, 6000, 20, 200000000, 1000000, 2000000000ull);
  if (few.backoffs < 8 || few.period_ns != TB_POOL_BACK_OFF_MIN_NS || pct < 95) fail_msg("%d%% split, %d back-offs", pct, (int)few.backoffs);
  /* frequent stalls (a 1 ms one every 3 ms) among jobs that save 1.5 us: back off, twice as long each time */
  tb_pool_backoff often = {0};
  pct = simulated_split_percent(&often, &t, 6000, 1500, 3000000, 1000000, 2000000000ull);
  if (often.backoffs < 3 || pct > 20) fail_msg("%d%% split, %d back-offs", pct, (int)often.backoffs);
  assert_true(often.period_ns == TB_POOL_BACK_OFF_MAX_NS);
  /* a worker 1.5x slower that still saves: no back-off */
  tb_pool_backoff slow = {0};
  for (int i = 0; i < 100000; i++)
    assert_false(tb_pool_backoff_book(&slow, tb_pool_job_gain(16, 10, 1000.0, 2, 3000), t + 6000ull * (uint64_t)i));
  /* the rule step by step: the first loss backs off for the shortest period */
  tb_pool_backoff s = {0};
  assert_false(tb_pool_backoff_book(&s, 200000, t));
  assert_false(tb_pool_backoff_book(&s, -150000, t)); /* covered by the balance (130 us counted) */
  assert_true(s.balance_ns == 70000.0);
  assert_true(tb_pool_backoff_book(&s, -1000000, t));
  assert_true(s.period_ns == TB_POOL_BACK_OFF_MIN_NS && s.serial_until == t + TB_POOL_BACK_OFF_MIN_NS);
  assert_true(s.balance_ns == 0.0);
  /* old savings fade: 1 ms saved 100 ms ago covers nothing */
  t = s.serial_until + TB_POOL_BACK_OFF_REPEAT_NS;
  assert_false(tb_pool_backoff_book(&s, 1000000, t));
  t += (uint64_t)TB_POOL_WINDOW_NS / 2;
  assert_true(s.balance_ns == 1000000.0);
  assert_false(tb_pool_backoff_book(&s, -520000, t)); /* half of it left: 500 us, 500 counted */
  assert_true(s.balance_ns == 0.0);
  t += (uint64_t)TB_POOL_WINDOW_NS;
  assert_false(tb_pool_backoff_book(&s, 1000000, t));
  t += (uint64_t)TB_POOL_WINDOW_NS;
  assert_true(tb_pool_backoff_book(&s, -40000, t)); /* 20 us counted, nothing left of the saving */
  assert_true(s.period_ns == TB_POOL_BACK_OFF_MIN_NS); /* late: half of 2 ms, at least the shortest */
  /* losing again within the repeat window of the end: twice as long each time, up to the longest */
  uint64_t period = TB_POOL_BACK_OFF_MIN_NS;
  for (int i = 0; i < 12; i++) {
    t = s.serial_until + TB_POOL_BACK_OFF_REPEAT_NS - 1;
    assert_true(tb_pool_backoff_book(&s, -30000, t));
    period = period * 2 > TB_POOL_BACK_OFF_MAX_NS ? TB_POOL_BACK_OFF_MAX_NS : period * 2;
    assert_true(s.period_ns == period && s.serial_until == t + period);
  }
  /* recovery: a loss later than the repeat window halves the period */
  t = s.serial_until + TB_POOL_BACK_OFF_REPEAT_NS;
  assert_true(tb_pool_backoff_book(&s, -1000000, t));
  assert_true(s.period_ns == TB_POOL_BACK_OFF_MAX_NS / 2);
  t = s.serial_until + TB_POOL_BACK_OFF_REPEAT_NS + 1000;
  assert_true(tb_pool_backoff_book(&s, -1000000, t));
  assert_true(s.period_ns == TB_POOL_BACK_OFF_MAX_NS / 4);
}

/* A worker that stalls in every chunk it takes (as one preempted by other processes does) makes each job slower
 * than the caller alone: the pool backs off and runs the following jobs on the caller (fn called once with the
 * whole range). In a split job the caller's chunks wait (up to 200 ms) for the worker to join, so without the
 * back-off every one of the 60 jobs would be split and stalled; with it at most 30 are (about 2 per back-off: the
 * job that wakes the worker and the one that loses again, the period doubling while the losses come within
 * TB_POOL_BACK_OFF_REPEAT_NS of a back-off's end; on a loaded machine a late one halves it instead). After the
 * longest back-off (256 ms) the next job is split again. */
enum { STALL_TASKS = 64 };

typedef struct stall {
  pthread_t caller;
  atomic_int worker_joined; /* this job */
  atomic_int whole;         /* this job ran as one call (on the caller) */
} stall;

static long us_since(const struct timespec *start) {
  struct timespec now;
  clock_gettime(CLOCK_MONOTONIC, &now);
  return (now.tv_sec - start->tv_sec) * 1000000L + (now.tv_nsec - start->tv_nsec) / 1000;
}

static void stall_on_worker(void *arg, size_t begin, size_t end) {
  stall *s = arg;
  if (!pthread_equal(pthread_self(), s->caller)) {
    atomic_store(&s->worker_joined, 1);
    struct timespec nap = {0, 5000000}; /* 5 ms: a time slice lost to another process */
    nanosleep(&nap, NULL);
    return;
  }
  struct timespec start;
  clock_gettime(CLOCK_MONOTONIC, &start);
  if (end - begin == STALL_TASKS) atomic_store(&s->whole, 1);
  else
    while (!atomic_load(&s->worker_joined) && us_since(&start) < 200000) sched_yield();
  clock_gettime(CLOCK_MONOTONIC, &start);
  while (us_since(&start) < 10 * (long)(end - begin)) {
  }
}

static int stalled_job(tb_pool *pool, stall *s) { /* 1: split, 0: on the caller */
  atomic_store(&s->worker_joined, 0);
  atomic_store(&s->whole, 0);
  tb_pool_parallel_for(pool, STALL_TASKS, stall_on_worker, s);
  return !atomic_load(&s->whole);
}

static void stalled_worker_backs_off(void **state) {
  (void)state;
  tb_pool *pool = NULL;
  TB_ASSERT_OK(tb_pool_create(2, &pool));
  stall s = {.caller = pthread_self()};
  int split = 0;
  for (int job = 0; job < 60; job++) split += stalled_job(pool, &s);
  if (split > 30) fail_msg("%d of 60 jobs were split with a worker that stalls in each; the pool did not back off", split);
  struct timespec rest = {0, 300000000}; /* past the longest back-off */
  nanosleep(&rest, NULL);
  assert_int_equal(stalled_job(pool, &s), 1);
  tb_pool_destroy(pool);
}

/* A task that calls parallel_for on the same pool, or on another pool: the inner call runs serially on the
 * task's thread (one call per outer task, the inner pool never splits), each task once, no deadlock. */
typedef struct nest {
  tb_pool *inner;
  size_t width;           /* inner tasks per outer task */
  atomic_int *inner_hits; /* [outer * width + inner] */
  atomic_int inner_calls;
} nest;

typedef struct nest_inner {
  nest *n;
  size_t outer;
} nest_inner;

static void inner_range(void *arg, size_t begin, size_t end) {
  nest_inner *in = arg;
  atomic_fetch_add(&in->n->inner_calls, 1);
  for (size_t i = begin; i < end; i++) atomic_fetch_add(&in->n->inner_hits[in->outer * in->n->width + i], 1);
}

static void outer_range(void *arg, size_t begin, size_t end) {
  nest *n = arg;
  for (size_t o = begin; o < end; o++) {
    nest_inner in = {n, o};
    tb_pool_parallel_for(n->inner, n->width, inner_range, &in);
  }
}

/* rounds calls of outer_n tasks on outer, each calling inner with width tasks. */
static void check_nested(tb_pool *outer, tb_pool *inner, int outer_n, int width, int rounds) {
  atomic_int *hits = calloc((size_t)(outer_n * width), sizeof *hits);
  assert_non_null(hits);
  nest n = {inner, (size_t)width, hits, 0};
  uint64_t inner_splits = tb_pool_split_jobs(inner);
  for (int round = 0; round < rounds; round++) tb_pool_parallel_for(outer, (size_t)outer_n, outer_range, &n);
  for (int i = 0; i < outer_n * width; i++) assert_int_equal(atomic_load(&hits[i]), rounds);
  assert_int_equal(atomic_load(&n.inner_calls), outer_n * rounds); /* one serial call per outer task */
  if (inner != outer) assert_int_equal(tb_pool_split_jobs(inner), inner_splits); /* always called in a task */
  free(hits);
}

static void nested_calls_run_serially(void **state) {
  (void)state;
  tb_pool *pool = NULL, *other = NULL;
  TB_ASSERT_OK(tb_pool_create(3, &pool));
  check_nested(pool, pool, 32, 16, 1); /* the same pool */
  TB_ASSERT_OK(tb_pool_create(2, &other));
  check_nested(other, pool, 40, 9, 20); /* another pool: outer 2 threads, inner 3 */
  tb_pool_destroy(other);
  tb_pool_destroy(pool);
}

/* Many tiny calls in a row on a persistent pool (and on the shared one): all tasks run, nothing hangs. */
static void ten_thousand_tiny_calls(void **state) {
  (void)state;
  tb_pool *own = NULL;
  TB_ASSERT_OK(tb_pool_create(2, &own));
  tb_pool *pools[2] = {own, tb_pool_shared(2)};
  assert_non_null(pools[1]);
  assert_ptr_equal(tb_pool_shared(2), pools[1]); /* created once, then reused */
  assert_int_equal(tb_pool_threads(pools[1]), 2);
  assert_null(tb_pool_shared(1));
  for (int k = 0; k < 2; k++) {
    atomic_int hits[4] = {0};
    counts c = {hits, 0, 4, 0};
    for (int i = 0; i < 10000; i++) tb_pool_parallel_for(pools[k], 4, count_range, &c);
    for (int i = 0; i < 4; i++) assert_int_equal(atomic_load(&hits[i]), 10000);
  }
  tb_pool_destroy(own);
}

static void num_threads_env(void **state) {
  (void)state;
  int n = -1;
  unsetenv("TB_NUM_THREADS");
  TB_ASSERT_OK(tb_pool_env_threads(&n));
  assert_int_equal(n, 0);
  int cpus = tb_pool_cpu_count();
  assert_true(cpus >= 1);
  assert_int_equal(tb_pool_default_threads(), cpus);
  setenv("TB_NUM_THREADS", "3", 1);
  TB_ASSERT_OK(tb_pool_env_threads(&n));
  assert_int_equal(n, 3);
  assert_int_equal(tb_pool_default_threads(), 3);
  static const char *const bad[] = {"abc", "0", "-2", "4097", "2x", " 2", "99999999999999999999", "1.5"};
  for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
    setenv("TB_NUM_THREADS", bad[i], 1);
    n = -1;
    assert_int_equal(tb_pool_env_threads(&n), TB_ERR_INVALID_ARGUMENT);
    assert_int_equal(n, 0);
    char want[64];
    snprintf(want, sizeof want, "TB_NUM_THREADS is '%s'", bad[i]);
    TB_ASSERT_CONTAINS(tb_last_error(), want);
    TB_ASSERT_CONTAINS(tb_last_error(), "1..4096");
    assert_int_equal(tb_pool_default_threads(), cpus); /* warned, then the CPU count */
  }
  unsetenv("TB_NUM_THREADS");
}

/* Prepared models: threads = 1 and threads = 2 give the same bits. With 2 threads the shared pool's back-off is
 * reset first and the jobs it split are counted in split_seen: each test asserts some were, or the comparison
 * would test nothing on a loaded machine. */
static uint64_t split_seen;

static tb_tensor *run_model(tb_backend *b, tb_model *m, tb_opt_level level, int threads, const char *in_name,
                            tb_tensor *in) {
  tb_prepare_options o = {.size = sizeof o, .level = level, .precision = TB_PRECISION_AUTO, .threads = threads};
  tb_prepared *p = NULL;
  const tb_prepare_result *r = NULL;
  TB_ASSERT_OK(tb_model_prepare(m, b, &o, &p, &r));
  tb_pool *pool = threads > 1 ? tb_pool_shared(threads) : NULL;
  tb_pool_reset_backoff(pool);
  uint64_t split_before = tb_pool_split_jobs(pool);
  tb_tensor *out = NULL;
  const char *names[] = {in_name};
  TB_ASSERT_OK(tb_prepared_run(p, 1, names, &in, 1, NULL, &out));
  split_seen += tb_pool_split_jobs(pool) - split_before;
  tb_prepared_destroy(p);
  return out;
}

static void assert_same_bits(const tb_tensor *a, const tb_tensor *b, const char *what) {
  assert_int_equal(tb_tensor_dtype(a), tb_tensor_dtype(b));
  assert_int_equal(tb_tensor_numel(a), tb_tensor_numel(b));
  size_t bytes = (size_t)tb_tensor_numel(a) * tb_dtype_size(tb_tensor_dtype(a));
  assert_true(bytes > 0);
  if (memcmp(tb_tensor_host_data(a), tb_tensor_host_data(b), bytes) != 0)
    fail_msg("%s: outputs with 1 and 2 threads differ", what);
}

static void bundled_models_same_bits(void **state) {
  tb_backend *b = *state;
  split_seen = 0;
  static const char *const models[][2] = {{"cnn_small", "input"}, {"encoder_small", "x"}};
  for (size_t k = 0; k < 2; k++) {
    char path[1024];
    snprintf(path, sizeof path, "%s%s.onnx", MODELS, models[k][0]);
    tb_model *m = NULL;
    TB_ASSERT_OK(tb_model_load(path, &m));
    snprintf(path, sizeof path, "%s%s/inputs/%s.npy", MODELS, models[k][0], models[k][1]);
    tb_tensor *in = NULL;
    TB_ASSERT_OK(tb_npy_load(path, b, &in));
    for (tb_opt_level level = TB_LEVEL_O0; level <= TB_LEVEL_O2; level++) {
      tb_tensor *one = run_model(b, m, level, 1, models[k][1], in);
      tb_tensor *two = run_model(b, m, level, 2, models[k][1], in);
      char what[128];
      snprintf(what, sizeof what, "%s at %s", models[k][0], tb_opt_level_name(level));
      assert_same_bits(one, two, what);
      tb_tensor_destroy(one);
      tb_tensor_destroy(two);
    }
    tb_tensor_destroy(in);
    tb_model_destroy(m);
  }
  if (split_seen == 0) fail_msg("no job was split on 2 threads: the comparison tested nothing");
}

/* The small model's MatMul with 6007 rows (36k multiply-adds: over TB_POOL_MIN_WORK, so split) on 2 threads:
 * right values, same bits as 1 thread. */
static void matmul_rows_split(void **state) {
  tb_backend *b = *state;
  split_seen = 0;
  tb_model *m = tbt_model_of(tbt_small_model());
  enum { ROWS = 6007 };
  static float x[ROWS * 3], want[ROWS * 2];
  for (int i = 0; i < ROWS * 3; i++) x[i] = (float)((i * 37) % 23) / 7.0f - 1.5f;
  tbt_small_expected(x, ROWS, want);
  int64_t shape[2] = {ROWS, 3}, out_shape[1] = {ROWS * 2};
  tb_tensor *in = tbt_f32(b, 2, shape, x);
  tb_tensor *one = run_model(b, m, TB_LEVEL_O0, 1, "x", in);
  tb_tensor *two = run_model(b, m, TB_LEVEL_O0, 2, "x", in);
  tbt_expect_f32(two, 1, out_shape, want);
  assert_same_bits(one, two, "small model");
  tb_tensor_destroy(one);
  tb_tensor_destroy(two);
  tb_tensor_destroy(in);
  tb_model_destroy(m);
  if (split_seen == 0) fail_msg("no job was split on 2 threads: the comparison tested nothing");
}

/* Transpose (reversed axes) of a 4-D tensor of 368 KiB and a 2-D one of 469 KiB, over 256 KiB so the strided
 * copy is split over the pool (blocks of the leading dims; row ranges of a 2-D one): at O0 and O2, 2 threads
 * give the same bytes as 1, and both the transposed values. */
static void transpose_split_same_bytes(void **state) {
  tb_backend *b = *state;
  split_seen = 0;
  static const int64_t shapes[2][4] = {{2, 40, 48, 24}, {600, 200, 0, 0}};
  static const size_t ranks[2] = {4, 2};
  for (int c = 0; c < 2; c++) {
    size_t ndim = ranks[c];
    int64_t numel = 1, out_shape[4];
    for (size_t d = 0; d < ndim; d++) numel *= shapes[c][d], out_shape[d] = shapes[c][ndim - 1 - d];
    float *x = malloc((size_t)numel * sizeof *x), *want = malloc((size_t)numel * sizeof *want);
    assert_non_null(x);
    assert_non_null(want);
    for (int64_t i = 0; i < numel; i++) x[i] = (float)(i % 1009) * 0.5f - 7.0f;
    int64_t in_strides[4], idx[4] = {0};
    in_strides[ndim - 1] = 1;
    for (size_t d = ndim - 1; d-- > 0;) in_strides[d] = in_strides[d + 1] * shapes[c][d + 1];
    for (int64_t o = 0; o < numel; o++) { /* out[i0..] = x[..i0] */
      int64_t src = 0;
      for (size_t d = 0; d < ndim; d++) src += idx[d] * in_strides[ndim - 1 - d];
      want[o] = x[src];
      for (size_t d = ndim; d-- > 0;) {
        if (++idx[d] < out_shape[d]) break;
        idx[d] = 0;
      }
    }
    tb_ir_model *ir = tbt_ir_model(13);
    tb_graph *g = tb_graph_new(ir, NULL, "transpose");
    tbt_input(g, "x", TB_DTYPE_F32, ndim, shapes[c], NULL);
    tbt_node(g, "Transpose", "t", "x", "y");
    tbt_output(g, "y");
    tb_model *m = tbt_model_of(ir);
    tb_tensor *in = tbt_f32(b, ndim, shapes[c], x);
    for (int level = 0; level < 2; level++) {
      tb_opt_level lv = level ? TB_LEVEL_O2 : TB_LEVEL_O0;
      tb_tensor *one = run_model(b, m, lv, 1, "x", in);
      tb_tensor *two = run_model(b, m, lv, 2, "x", in);
      tbt_expect_f32(two, ndim, out_shape, want);
      assert_same_bits(one, two, "transpose");
      tb_tensor_destroy(one);
      tb_tensor_destroy(two);
    }
    tb_tensor_destroy(in);
    tb_model_destroy(m);
    free(x);
    free(want);
  }
  if (split_seen == 0) fail_msg("no job was split on 2 threads: the comparison tested nothing");
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(bad_pool_sizes),
      cmocka_unit_test(one_thread_runs_on_caller),
      cmocka_unit_test(work_runs_on_two_threads),
      cmocka_unit_test(small_work_stays_on_caller),
      cmocka_unit_test(job_gain_rule),
      cmocka_unit_test(back_off_book_rule),
      cmocka_unit_test(stalled_worker_backs_off),
      cmocka_unit_test(nested_calls_run_serially),
      cmocka_unit_test(ten_thousand_tiny_calls),
      cmocka_unit_test(num_threads_env),
      cmocka_unit_test(bundled_models_same_bits),
      cmocka_unit_test(matmul_rows_split),
      cmocka_unit_test(transpose_split_same_bytes),
  };
  return cmocka_run_group_tests(tests, tbt_cpu_setup, tbt_cpu_teardown);
}
