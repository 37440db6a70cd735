/* The persistent thread pool (threadpool.h). The generation word is odd while a job is open and even
 * when closed. Workers wait for it to change, spinning for a short while and then sleeping on a futex; a
 * worker that sees an open job registers in `active`, checks the job is still the one it saw, and takes
 * chunks from an atomic counter like the caller. The caller waits only for the tasks to be done and for
 * registered workers to leave, never for a sleeping worker to wake: a late worker finds the job closed.
 * Each split job's time saved or lost against the caller alone is booked (tb_pool_backoff_book): when late
 * workers lose more than the splits saved over the last ~100 ms, jobs run on the caller for a while. */
#include "core/threadpool.h"
#include <errno.h>
#include <limits.h>
#include <linux/futex.h>
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>
#include "core/env.h"
#include "core/error.h"

enum { SPIN_WORKER = 20000, YIELD_EVERY = 64, SPIN_CALLER = 2000, CHUNKS_PER_THREAD = 4, SHARED_SLOTS = 8 };

struct tb_pool {
  int threads;
  pthread_t *workers;
  size_t n_started;
  atomic_flag busy;
  _Atomic uint32_t generation; /* futex word: odd while a job is open */
  atomic_int sleepers;
  atomic_int active;           /* workers inside the current job */
  atomic_size_t done;          /* tasks of the current job finished */
  atomic_bool stop;
  atomic_size_t next;          /* first task not yet taken */
  size_t n_tasks, chunk;
  tb_pool_fn fn;
  void *ctx;
  tb_pool_backoff back_off; /* touched only by the caller holding `busy` */
  uint64_t split_jobs;      /* jobs run on more than the caller (by the caller holding `busy`) */
};

static _Thread_local bool in_task;

static void cpu_relax(void) {
#if defined(__x86_64__) || defined(__i386__)
  __builtin_ia32_pause();
#elif defined(__aarch64__)
  __asm__ __volatile__("yield");
#endif
}

static void futex_wait(_Atomic uint32_t *word, uint32_t expected) {
  syscall(SYS_futex, (uint32_t *)word, FUTEX_WAIT_PRIVATE, expected, NULL, NULL, 0);
}

static void futex_wake_all(_Atomic uint32_t *word) {
  syscall(SYS_futex, (uint32_t *)word, FUTEX_WAKE_PRIVATE, INT_MAX, NULL, NULL, 0);
}

static uint64_t now_ns(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

/* Runs chunks until none is left; returns how many tasks this thread ran. With task_ns (the caller), also the
 * time per task of its fastest chunk: a chunk during which the caller was preempted does not count. */
static size_t run_chunks(tb_pool *p, double *task_ns) {
  bool outer = in_task;
  in_task = true;
  size_t ran = 0;
  for (;;) {
    size_t begin = atomic_fetch_add_explicit(&p->next, p->chunk, memory_order_relaxed);
    if (begin >= p->n_tasks) break;
    size_t end = p->n_tasks - begin < p->chunk ? p->n_tasks : begin + p->chunk;
    uint64_t start = task_ns ? now_ns() : 0;
    p->fn(p->ctx, begin, end);
    if (task_ns) {
      double per = (double)(now_ns() - start) / (double)(end - begin);
      if (ran == 0 || per < *task_ns) *task_ns = per;
    }
    atomic_fetch_add_explicit(&p->done, end - begin, memory_order_release);
    ran += end - begin;
  }
  in_task = outer;
  return ran;
}

double tb_pool_job_gain(size_t n_tasks, size_t caller_tasks, double task_ns, size_t chunk, uint64_t wait_ns) {
  if (caller_tasks == 0) return 0; /* nothing to compare with */
  if (caller_tasks > n_tasks) caller_tasks = n_tasks;
  double saved = (double)(n_tasks - caller_tasks) * task_ns;
  double expected_wait = TB_POOL_SLOW_WORKER * (double)chunk * task_ns; /* a worker finishing its last chunk */
  return saved - ((double)wait_ns > expected_wait ? (double)wait_ns - expected_wait : 0);
}

bool tb_pool_backoff_book(tb_pool_backoff *b, double gain_ns, uint64_t now_ns) {
  if (gain_ns < 0) gain_ns = gain_ns + TB_POOL_LOSS_SLACK_NS < 0 ? gain_ns + TB_POOL_LOSS_SLACK_NS : 0;
  /* the balance of the last TB_POOL_WINDOW_NS or so: older bookings fade linearly with the time since */
  uint64_t dt = now_ns > b->last_ns ? now_ns - b->last_ns : 0;
  b->balance_ns = dt >= TB_POOL_WINDOW_NS ? 0 : b->balance_ns * (1.0 - (double)dt / TB_POOL_WINDOW_NS);
  b->last_ns = now_ns;
  b->balance_ns += gain_ns;
  if (b->balance_ns >= 0) return false;
  /* losing again within TB_POOL_BACK_OFF_REPEAT_NS of the last back-off's end: still short of CPUs, twice as
   * long; later: the machine recovered for a while, half as long */
  bool again = b->period_ns && now_ns < b->serial_until + TB_POOL_BACK_OFF_REPEAT_NS;
  uint64_t period = !b->period_ns ? TB_POOL_BACK_OFF_MIN_NS : again ? b->period_ns * 2 : b->period_ns / 2;
  b->period_ns = period < TB_POOL_BACK_OFF_MIN_NS ? TB_POOL_BACK_OFF_MIN_NS
                 : period > TB_POOL_BACK_OFF_MAX_NS ? TB_POOL_BACK_OFF_MAX_NS : period;
  b->serial_until = now_ns + b->period_ns;
  b->balance_ns = 0;
  b->backoffs++;
  return true;
}

static uint32_t wait_for_job(tb_pool *p, uint32_t seen) {
  for (int i = 0; i < SPIN_WORKER; i++) {
    uint32_t g = atomic_load_explicit(&p->generation, memory_order_acquire);
    if (g != seen) return g;
    /* Yield now and then: a worker woken onto the caller's CPU must not hold it while the caller waits. */
    if (i % YIELD_EVERY == YIELD_EVERY - 1) sched_yield();
    else cpu_relax();
  }
  /* seq_cst on sleepers and generation here and in tb_pool_parallel_for: one side always sees the other. */
  atomic_fetch_add(&p->sleepers, 1);
  uint32_t g;
  while ((g = atomic_load(&p->generation)) == seen) futex_wait(&p->generation, seen);
  atomic_fetch_sub(&p->sleepers, 1);
  return g;
}

static void *worker_main(void *arg) {
  tb_pool *p = arg;
  uint32_t seen = 0;
  for (;;) {
    seen = wait_for_job(p, seen);
    if (atomic_load_explicit(&p->stop, memory_order_acquire)) break;
    if (!(seen & 1u)) continue; /* closed before this worker saw it open */
    /* seq_cst with the caller's close-then-check-active: either it waits for us or we see the close. */
    atomic_fetch_add(&p->active, 1);
    if (atomic_load(&p->generation) == seen) run_chunks(p, NULL);
    atomic_fetch_sub_explicit(&p->active, 1, memory_order_release);
  }
  return NULL;
}

/* Returns whether it woke sleeping workers. */
static bool bump_and_wake(tb_pool *p) {
  atomic_fetch_add(&p->generation, 1);
  if (atomic_load(&p->sleepers) == 0) return false;
  futex_wake_all(&p->generation);
  return true;
}

tb_status tb_pool_create(int threads, tb_pool **out) {
  *out = NULL;
  if (threads < 1 || threads > TB_POOL_MAX_THREADS)
    return tb_error(TB_ERR_INVALID_ARGUMENT, "thread pool: %d threads requested; the valid range is 1..%d", threads,
                    TB_POOL_MAX_THREADS);
  tb_pool *p = calloc(1, sizeof *p);
  if (!p) return tb_error(TB_ERR_OUT_OF_MEMORY, "thread pool: out of memory for %d threads", threads);
  p->threads = threads;
  atomic_flag_clear(&p->busy);
  if (threads > 1) {
    p->workers = calloc((size_t)threads - 1, sizeof *p->workers);
    if (!p->workers) {
      free(p);
      return tb_error(TB_ERR_OUT_OF_MEMORY, "thread pool: out of memory for %d threads", threads);
    }
  }
  for (int i = 0; i < threads - 1; i++) {
    int rc = pthread_create(&p->workers[i], NULL, worker_main, p);
    if (rc != 0) {
      tb_pool_destroy(p);
      return tb_error(TB_ERR_OUT_OF_MEMORY, "thread pool: pthread_create failed for worker %d of %d (error %d)", i + 1,
                      threads - 1, rc);
    }
    p->n_started++;
  }
  *out = p;
  return TB_OK;
}

void tb_pool_destroy(tb_pool *pool) {
  if (!pool) return;
  atomic_store(&pool->stop, true);
  bump_and_wake(pool);
  for (size_t i = 0; i < pool->n_started; i++) pthread_join(pool->workers[i], NULL);
  free(pool->workers);
  free(pool);
}

int tb_pool_threads(const tb_pool *pool) { return pool ? pool->threads : 1; }

uint64_t tb_pool_split_jobs(tb_pool *pool) {
  if (!pool) return 0;
  while (atomic_flag_test_and_set_explicit(&pool->busy, memory_order_acquire)) sched_yield();
  uint64_t n = pool->split_jobs;
  atomic_flag_clear_explicit(&pool->busy, memory_order_release);
  return n;
}

void tb_pool_reset_backoff(tb_pool *pool) {
  if (!pool) return;
  while (atomic_flag_test_and_set_explicit(&pool->busy, memory_order_acquire)) sched_yield();
  pool->back_off = (tb_pool_backoff){0};
  atomic_flag_clear_explicit(&pool->busy, memory_order_release);
}

void tb_pool_parallel_for(tb_pool *pool, size_t n_tasks, tb_pool_fn fn, void *ctx) {
  if (n_tasks == 0) return;
  if (!pool || pool->threads < 2 || n_tasks == 1 || in_task ||
      atomic_flag_test_and_set_explicit(&pool->busy, memory_order_acquire)) {
    bool outer = in_task;
    in_task = true;
    fn(ctx, 0, n_tasks);
    in_task = outer;
    return;
  }
  uint64_t t0 = now_ns();
  if (t0 < pool->back_off.serial_until) { /* backing off: late workers lost more than the splits saved */
    atomic_flag_clear_explicit(&pool->busy, memory_order_release);
    tb_pool_parallel_for(NULL, n_tasks, fn, ctx);
    return;
  }
  size_t per = (size_t)pool->threads * CHUNKS_PER_THREAD;
  pool->n_tasks = n_tasks;
  pool->chunk = n_tasks / per + (n_tasks % per != 0);
  pool->fn = fn;
  pool->ctx = ctx;
  atomic_store_explicit(&pool->next, 0, memory_order_relaxed);
  atomic_store_explicit(&pool->done, 0, memory_order_relaxed);
  bool woke = bump_and_wake(pool); /* opens the job (odd); seq_cst publishes the fields above */
  double task_ns = 0;
  size_t mine = run_chunks(pool, &task_ns);
  uint64_t t1 = now_ns();
  for (int i = 0; atomic_load_explicit(&pool->done, memory_order_acquire) < n_tasks; i++) {
    if (i < SPIN_CALLER) cpu_relax();
    else sched_yield();
  }
  atomic_fetch_add(&pool->generation, 1); /* closes it (even): late workers will not touch it */
  for (int i = 0; atomic_load(&pool->active) > 0; i++) {
    if (i < SPIN_CALLER) cpu_relax();
    else sched_yield();
  }
  /* A job that had to wake the workers says nothing about them: a worker back from sleep is late by the
   * wake-up, which the next job (finding it spinning) does not pay. The time booked ends when the last worker
   * has left: one preempted after joining holds the caller here even when the caller ran every chunk. */
  if (!woke) {
    uint64_t t2 = now_ns();
    tb_pool_backoff_book(&pool->back_off, tb_pool_job_gain(n_tasks, mine, task_ns, pool->chunk, t2 - t1), t2);
  }
  pool->split_jobs++;
  atomic_flag_clear_explicit(&pool->busy, memory_order_release);
}

void tb_pool_parallel_for_work(tb_pool *pool, size_t n_tasks, double work, tb_pool_fn fn, void *ctx) {
  tb_pool_parallel_for(work >= TB_POOL_MIN_WORK ? pool : NULL, n_tasks, fn, ctx);
}

int tb_pool_cpu_count(void) {
  cpu_set_t set;
  if (sched_getaffinity(0, sizeof set, &set) == 0) {
    int n = CPU_COUNT(&set);
    if (n > 0) return n;
  }
  long n = sysconf(_SC_NPROCESSORS_ONLN);
  return n > 0 && n <= TB_POOL_MAX_THREADS ? (int)n : 1;
}

tb_status tb_pool_env_threads(int *threads) {
  *threads = 0;
  const char *v = tb_env("TB_NUM_THREADS");
  if (!v) return TB_OK;
  char *end = NULL;
  errno = 0;
  long n = strtol(v, &end, 10);
  if (errno != 0 || end == v || *v < '0' || *v > '9' || *end != '\0' || n < 1 || n > TB_POOL_MAX_THREADS)
    return tb_error(TB_ERR_INVALID_ARGUMENT, "TB_NUM_THREADS is '%s'; the valid range is 1..%d threads (unset it for "
                    "the default, the number of CPUs this process may use)", v, TB_POOL_MAX_THREADS);
  *threads = (int)n;
  return TB_OK;
}

int tb_pool_default_threads(void) {
  static atomic_bool warned;
  int n = 0;
  if (tb_pool_env_threads(&n) != TB_OK) {
    if (!atomic_exchange(&warned, true)) tb_log(TB_LOG_WARN, "%s; using %d", tb_last_error(), tb_pool_cpu_count());
    n = 0;
  }
  return n > 0 ? n : tb_pool_cpu_count();
}

tb_pool *tb_pool_shared(int threads) {
  static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
  static tb_pool *pools[SHARED_SLOTS];
  static bool failed_logged;
  if (threads <= 0) threads = tb_pool_default_threads();
  if (threads > TB_POOL_MAX_THREADS) threads = TB_POOL_MAX_THREADS;
  if (threads < 2) return NULL;
  tb_pool *found = NULL;
  pthread_mutex_lock(&lock);
  size_t i = 0;
  for (; i < SHARED_SLOTS && pools[i]; i++)
    if (pools[i]->threads == threads) found = pools[i];
  if (!found && i < SHARED_SLOTS) {
    if (tb_pool_create(threads, &pools[i]) == TB_OK) found = pools[i];
    else pools[i] = NULL;
  }
  if (!found && !failed_logged) {
    failed_logged = true;
    tb_log(TB_LOG_WARN, "thread pool of %d threads unavailable (%s); running on one thread", threads,
           i < SHARED_SLOTS ? tb_last_error() : "too many distinct thread counts in one process");
  }
  pthread_mutex_unlock(&lock);
  return found;
}
