/* The persistent thread pool (threadpool.h), built to move few cache lines per job: on a VM whose vCPUs sit
 * on different dies a line moves in about a microsecond, so a pool that moves twenty per job loses a small
 * job's whole gain. The generation word is odd while a job is open; it shares a line with the job's
 * description, which the caller writes once before opening and a worker reads once after seeing it open.
 * [0, n_tasks) is cut into chunks and every thread owns a contiguous home range of them, claimed through a
 * counter on the thread's own line, so claiming one's own chunks moves nothing; a thread that runs out claims
 * the rest of the others' ranges (a late, sleeping or preempted worker's share is taken by the others). A
 * counter is tagged with the job's sequence number, so no one resets it between jobs. Each worker says it
 * joined the job and that it left it in one word on its own line (its slot); the caller waits for every
 * worker that joined to leave, and closes the job (generation even) only when some worker has not joined,
 * so a late worker finds it closed: the caller never waits for a sleeping worker and a late worker never
 * touches a closed job. Each split job's time saved or lost against the caller alone is booked
 * (tb_pool_backoff_book): when late workers lose more than the splits saved over the last ~100 ms, jobs run
 * on the caller for a while. */
#include "core/threadpool.h"
#include <errno.h>
#include <limits.h>
#include <linux/futex.h>
#include <pthread.h>
#include <sched.h>
#include <stdalign.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>
#include "core/env.h"
#include "core/error.h"

enum { SPIN_WORKER = 20000, YIELD_EVERY = 64, SPIN_CALLER = 2000, CHUNKS_PER_THREAD = 4, SHARED_SLOTS = 8 };
#define LINE 64
#define TAKEN_BITS 8u /* chunks claimed from one home range: at most CHUNKS_PER_THREAD */
#define TAKEN_MASK ((1u << TAKEN_BITS) - 1u)
_Static_assert(CHUNKS_PER_THREAD <= TAKEN_MASK, "a home range's claims fit in TAKEN_BITS");

/* One thread's line: its home range's claim counter ((job sequence << TAKEN_BITS) | chunks claimed; another
 * job's sequence means none claimed) and, for a worker, its slot (the generation it joined, odd, or that
 * generation + 1 once it left). */
typedef struct thread_line {
  alignas(LINE) _Atomic uint64_t claimed;
  _Atomic uint32_t slot;
} thread_line;

struct tb_pool {
  /* written by the caller once per job (and by tb_pool_destroy), read by the workers */
  alignas(LINE) _Atomic uint32_t generation; /* futex word: odd while a job is open */
  atomic_bool stop;
  uint64_t seq;         /* the job's sequence number, the claim counters' tag */
  size_t n_tasks, chunk;
  uint32_t n_chunks;    /* ceil(n_tasks / chunk), at most threads * CHUNKS_PER_THREAD */
  int threads;          /* set at creation; here because the workers read it with the job */
  tb_pool_fn fn;
  void *ctx;
  thread_line *lines;   /* [threads]: the caller's is 0, worker i's is i + 1 (set at creation) */
  /* written by a worker going to sleep or waking, read by the caller opening a job */
  alignas(LINE) atomic_int sleepers;
  /* the caller's own: never read by a worker */
  alignas(LINE) atomic_flag busy;
  pthread_t *workers;
  size_t n_started;
  tb_pool_backoff back_off; /* touched only by the caller holding `busy` */
  uint64_t split_jobs;      /* jobs run on more than the caller (by the caller holding `busy`) */
};
/* The job's line holds everything a worker reads per job; nothing the caller writes between jobs shares it. */
_Static_assert(offsetof(struct tb_pool, sleepers) == LINE, "the job description fits one cache line");

typedef struct worker_arg {
  tb_pool *pool;
  int id;
} worker_arg;

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

/* The first chunk of thread t's home range (t = threads is the end of the last range). */
static uint32_t home_first(const tb_pool *p, int t) {
  return (uint32_t)((uint64_t)p->n_chunks * (uint64_t)t / (uint64_t)p->threads);
}

/* Claims the next chunk of thread t's home range for job p->seq: true with *chunk_index, false when all are
 * claimed. A plain load first: a range already claimed costs a shared read, not taking the line. */
static bool claim(tb_pool *p, int t, uint32_t *chunk_index) {
  uint32_t first = home_first(p, t), count = home_first(p, t + 1) - first;
  _Atomic uint64_t *c = &p->lines[t].claimed;
  uint64_t v = atomic_load_explicit(c, memory_order_relaxed);
  for (;;) {
    uint32_t taken = (v >> TAKEN_BITS) == p->seq ? (uint32_t)(v & TAKEN_MASK) : 0;
    if (taken >= count) return false;
    uint64_t next = (p->seq << TAKEN_BITS) | (taken + 1);
    if (atomic_compare_exchange_weak_explicit(c, &v, next, memory_order_relaxed, memory_order_relaxed)) {
      *chunk_index = first + taken;
      return true;
    }
  }
}

/* Runs chunks until none is left, its own home range first and then the others' from the next thread on;
 * returns how many tasks this thread ran. With task_ns (the caller, whose clock reads start at *clock_ns),
 * also the time per task of its fastest chunk (a chunk during which the caller was preempted does not
 * count), and *clock_ns becomes the time its last chunk ended. One clock read per chunk: a chunk's time runs
 * from the end of the one before (or the job's start) to its own end, so it includes claiming it; on a VM
 * a read costs 20-90 ns, which two reads per chunk added to every job's path. */
static size_t run_chunks(tb_pool *p, int self, double *task_ns, uint64_t *clock_ns) {
  bool outer = in_task;
  in_task = true;
  size_t ran = 0;
  for (int k = 0; k < p->threads; k++) {
    int t = (self + k) % p->threads;
    uint32_t index;
    while (claim(p, t, &index)) {
      size_t begin = (size_t)index * p->chunk;
      size_t end = p->n_tasks - begin < p->chunk ? p->n_tasks : begin + p->chunk;
      p->fn(p->ctx, begin, end);
      if (task_ns) {
        uint64_t done = now_ns();
        double per = (double)(done - *clock_ns) / (double)(end - begin);
        if (ran == 0 || per < *task_ns) *task_ns = per;
        *clock_ns = done;
      }
      ran += end - begin;
    }
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
  tb_pool *p = ((worker_arg *)arg)->pool;
  int id = ((worker_arg *)arg)->id;
  free(arg);
  _Atomic uint32_t *slot = &p->lines[id].slot;
  uint32_t seen = 0; /* the generation before the first job: a worker started late still joins an open one */
  for (;;) {
    seen = wait_for_job(p, seen);
    if (atomic_load_explicit(&p->stop, memory_order_acquire)) break;
    if (!(seen & 1u)) continue; /* closed before this worker saw it open */
    /* seq_cst with the caller's close-then-read-slot: either it waits for us or we see the close. */
    atomic_store(slot, seen);
    if (atomic_load(&p->generation) == seen) run_chunks(p, id, NULL, NULL);
    atomic_store_explicit(slot, seen + 1, memory_order_release); /* left: publishes the tasks' writes */
  }
  return NULL;
}

/* Sets the generation word and wakes the workers that sleep; returns whether there were any. */
static bool publish_and_wake(tb_pool *p, uint32_t generation) {
  atomic_store(&p->generation, generation);
  if (atomic_load(&p->sleepers) == 0) return false;
  futex_wake_all(&p->generation);
  return true;
}

tb_status tb_pool_create(int threads, tb_pool **out) {
  *out = NULL;
  if (threads < 1 || threads > TB_POOL_MAX_THREADS)
    return tb_error(TB_ERR_INVALID_ARGUMENT, "thread pool: %d threads requested; the valid range is 1..%d", threads,
                    TB_POOL_MAX_THREADS);
  tb_pool *p = aligned_alloc(LINE, sizeof *p);
  thread_line *lines = aligned_alloc(LINE, (size_t)threads * sizeof *lines);
  pthread_t *workers = threads > 1 ? calloc((size_t)threads - 1, sizeof *workers) : NULL;
  if (!p || !lines || (threads > 1 && !workers)) {
    free(p);
    free(lines);
    free(workers);
    return tb_error(TB_ERR_OUT_OF_MEMORY, "thread pool: out of memory for %d threads", threads);
  }
  memset(p, 0, sizeof *p);
  memset(lines, 0, (size_t)threads * sizeof *lines);
  p->threads = threads;
  p->lines = lines;
  p->workers = workers;
  atomic_flag_clear(&p->busy);
  for (int i = 0; i < threads - 1; i++) {
    worker_arg *arg = malloc(sizeof *arg);
    if (arg) *arg = (worker_arg){p, i + 1};
    int rc = arg ? pthread_create(&p->workers[i], NULL, worker_main, arg) : ENOMEM;
    if (rc != 0) {
      free(arg);
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
  publish_and_wake(pool, atomic_load(&pool->generation) + 1);
  for (size_t i = 0; i < pool->n_started; i++) pthread_join(pool->workers[i], NULL);
  free(pool->workers);
  free(pool->lines);
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
  pool->n_chunks = (uint32_t)(n_tasks / pool->chunk + (n_tasks % pool->chunk != 0));
  pool->fn = fn;
  pool->ctx = ctx;
  pool->seq++;
  /* the next odd generation: from a closed job's even one, or past one left open */
  uint32_t open = (atomic_load_explicit(&pool->generation, memory_order_relaxed) + 1u) | 1u;
  bool woke = publish_and_wake(pool, open); /* seq_cst: publishes the fields above */
  double task_ns = 0;
  uint64_t t1 = t0; /* then the end of the caller's last chunk: from there on it waits */
  size_t mine = run_chunks(pool, 0, &task_ns, &t1);
  /* Every chunk is claimed. Wait for each worker that joined to leave (its slot: open + 1). One that has not
   * joined may be asleep or preempted: close the job (seq_cst with its join-then-check) and read again; it
   * finds the job closed. When every worker joined, nothing can join late and the job stays open. */
  bool closed = false;
  for (int w = 1; w < pool->threads; w++) {
    _Atomic uint32_t *slot = &pool->lines[w].slot;
    uint32_t s = atomic_load(slot);
    if (s != open && s != open + 1u && !closed) {
      atomic_store(&pool->generation, open + 1u);
      closed = true;
      s = atomic_load(slot);
    }
    for (int i = 0; s == open; i++) {
      if (i < SPIN_CALLER) cpu_relax();
      else sched_yield();
      s = atomic_load_explicit(slot, memory_order_acquire);
    }
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
