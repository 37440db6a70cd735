/* The persistent thread pool (src/core/threadpool.h): every task index runs exactly once for many task
 * counts and thread counts, chunks really run on more than one thread, nested calls run serially, 10k tiny
 * calls in a row finish, TB_NUM_THREADS is validated, and prepared models give bit-identical outputs with
 * 1 and 2 threads (MatMul splits its rows over the pool). */
#include <pthread.h>
#include <stdatomic.h>
#include <string.h>
#include <time.h>
#include "core/threadpool.h"
#include "test_engine_util.h"
#include "test_tensor_util.h"

#define MODELS TB_TEST_FIXTURES "/../../models/"

typedef struct counts {
  atomic_int *hits;
  atomic_int calls;
} counts;

static void count_range(void *arg, size_t begin, size_t end) {
  counts *c = arg;
  atomic_fetch_add(&c->calls, 1);
  for (size_t i = begin; i < end; i++) atomic_fetch_add(&c->hits[i], 1);
}

static void every_index_once(void **state) {
  (void)state;
  static const size_t sizes[] = {1, 2, 3, 7, 8, 9, 63, 64, 65, 1000, 4099};
  for (int threads = 1; threads <= 5; threads++) {
    tb_pool *pool = NULL;
    TB_ASSERT_OK(tb_pool_create(threads, &pool));
    assert_int_equal(tb_pool_threads(pool), threads);
    for (size_t s = 0; s < sizeof sizes / sizeof sizes[0]; s++) {
      size_t n = sizes[s];
      counts c = {calloc(n, sizeof(atomic_int)), 0};
      assert_non_null(c.hits);
      tb_pool_parallel_for(pool, n, count_range, &c);
      for (size_t i = 0; i < n; i++)
        if (atomic_load(&c.hits[i]) != 1)
          fail_msg("%d threads, %zu tasks: task %zu ran %d times", threads, n, i, atomic_load(&c.hits[i]));
      assert_true(atomic_load(&c.calls) >= 1);
      assert_true((size_t)atomic_load(&c.calls) <= n);
      free(c.hits);
    }
    tb_pool_parallel_for(pool, 0, count_range, NULL); /* no tasks: fn is never called */
    tb_pool_destroy(pool);
  }
  tb_pool_destroy(NULL);
  assert_int_equal(tb_pool_threads(NULL), 1);
}

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
    who w = {pthread_self(), 0, {hits, 0}};
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

/* A task that calls parallel_for on the same pool: the inner call runs serially, no deadlock. */
typedef struct nest {
  tb_pool *pool;
  atomic_int *inner_hits; /* [outer * 16 + inner] */
  atomic_int inner_calls;
} nest;

typedef struct nest_inner {
  nest *n;
  size_t outer;
} nest_inner;

static void inner_range(void *arg, size_t begin, size_t end) {
  nest_inner *in = arg;
  atomic_fetch_add(&in->n->inner_calls, 1);
  for (size_t i = begin; i < end; i++) atomic_fetch_add(&in->n->inner_hits[in->outer * 16 + i], 1);
}

static void outer_range(void *arg, size_t begin, size_t end) {
  nest *n = arg;
  for (size_t o = begin; o < end; o++) {
    nest_inner in = {n, o};
    tb_pool_parallel_for(n->pool, 16, inner_range, &in);
  }
}

static void nested_calls_run_serially(void **state) {
  (void)state;
  tb_pool *pool = NULL;
  TB_ASSERT_OK(tb_pool_create(3, &pool));
  atomic_int hits[32 * 16] = {0};
  nest n = {pool, hits, 0};
  tb_pool_parallel_for(pool, 32, outer_range, &n);
  for (int i = 0; i < 32 * 16; i++) assert_int_equal(atomic_load(&hits[i]), 1);
  assert_int_equal(atomic_load(&n.inner_calls), 32); /* one serial call per outer task */
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
    counts c = {hits, 0};
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

/* Prepared models: threads = 1 and threads = 2 give the same bits. */
static tb_tensor *run_model(tb_backend *b, tb_model *m, tb_opt_level level, int threads, const char *in_name,
                            tb_tensor *in) {
  tb_prepare_options o = {.size = sizeof o, .level = level, .precision = TB_PRECISION_AUTO, .threads = threads};
  tb_prepared *p = NULL;
  const tb_prepare_result *r = NULL;
  TB_ASSERT_OK(tb_model_prepare(m, b, &o, &p, &r));
  tb_tensor *out = NULL;
  const char *names[] = {in_name};
  TB_ASSERT_OK(tb_prepared_run(p, 1, names, &in, 1, NULL, &out));
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
}

/* The small model's MatMul with 257 rows on 2 threads: right values, same bits as 1 thread. */
static void matmul_rows_split(void **state) {
  tb_backend *b = *state;
  tb_model *m = tbt_model_of(tbt_small_model());
  enum { ROWS = 257 };
  float x[ROWS * 3], want[ROWS * 2];
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
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(every_index_once),
      cmocka_unit_test(bad_pool_sizes),
      cmocka_unit_test(one_thread_runs_on_caller),
      cmocka_unit_test(work_runs_on_two_threads),
      cmocka_unit_test(nested_calls_run_serially),
      cmocka_unit_test(ten_thousand_tiny_calls),
      cmocka_unit_test(num_threads_env),
      cmocka_unit_test(bundled_models_same_bits),
      cmocka_unit_test(matmul_rows_split),
  };
  return cmocka_run_group_tests(tests, tbt_cpu_setup, tbt_cpu_teardown);
}
