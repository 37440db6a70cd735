/* Latency of an empty tb_pool_parallel_for (src/core/threadpool.h) against its naive peer, creating and
 * joining pthreads on every call, in the same run. Three cases, each timed call by call (median, p90):
 *   pool, hot      back-to-back calls: the workers are still spinning (operators of one inference);
 *   pool, idle     a call after 2 ms of idleness: the workers sleep on the futex and must be woken;
 *   pthread        pthread_create + pthread_join of threads-1 workers per call, the caller doing its share.
 *   ... 5us        the same with tasks that each spin 5 us: shows the split (serial would be threads x 5 us).
 *   handoff        a layer's data handed between jobs: a job whose 4 x threads tasks each write one slice of a
 *                  buffer (64 KiB and 512 KiB: a small layer's activation), then the timed job adding 1 to
 *                  every float, each task either the same slice (local: each thread finds its slices in its
 *                  own cache) or the slice half the buffer away (crossed: the slices the other thread wrote).
 *                  crossed - local is what moving that much data between the CPUs costs a job, beside the
 *                  hand-off itself (hot); on a VM whose vCPUs sit on different dies it is many times more.
 * Every call has `threads` tasks; in the empty cases they do nothing (they write only their thread's own
 * variables, so the time is the pool's: no cache line of the benchmark's moves between threads). The last
 * column, for the pool's cases, is the share of the tasks the caller ran itself: near 100% the workers did
 * not take part (the job was over before they came) and the time is not a hand-off's.
 *   build: cmake -DTB_BUILD_BENCH=ON, then <build>/bench/pool_bench [threads] (default: the CPUs usable) */
#define _POSIX_C_SOURCE 200809L
#include <pthread.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include "core/threadpool.h"

static double now_us(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (double)t.tv_sec * 1e6 + (double)t.tv_nsec * 1e-3;
}

static _Thread_local volatile size_t sink;
static pthread_t caller;
static size_t caller_tasks; /* written and read by the caller only */

static void note_caller(size_t begin, size_t end) {
  if (pthread_equal(pthread_self(), caller)) caller_tasks += end - begin;
}

static void empty_tasks(void *ctx, size_t begin, size_t end) {
  (void)ctx;
  sink = begin + end;
  note_caller(begin, end);
}

static void busy_tasks(void *ctx, size_t begin, size_t end) {
  (void)ctx;
  for (size_t i = begin; i < end; i++) {
    double t0 = now_us();
    while (now_us() - t0 < 5.0) sink++;
  }
  note_caller(begin, end);
}

static void report(const char *name, double *t, int n, size_t tasks);

/* The handoff case: n_tasks slices of `floats` floats; the timed job's task i touches slice (i + shift) % n_tasks. */
typedef struct handoff {
  float *buf;
  size_t slice, n_tasks, shift;
} handoff;

static void write_slices(void *ctx, size_t begin, size_t end) {
  handoff *h = ctx;
  for (size_t i = begin; i < end; i++)
    for (size_t k = 0; k < h->slice; k++) h->buf[i * h->slice + k] = (float)k;
  note_caller(begin, end);
}

/* 16 floats at a time (vector types: the add runs at the speed of the memory it reads, as a kernel's would) */
typedef float v16 __attribute__((vector_size(64)));

static void add_slices(void *ctx, size_t begin, size_t end) {
  handoff *h = ctx;
  for (size_t i = begin; i < end; i++) {
    v16 *s = (v16 *)(void *)(h->buf + (i + h->shift) % h->n_tasks * h->slice);
    for (size_t k = 0; k < h->slice / 16; k++) s[k] += 1.0f;
  }
  note_caller(begin, end);
}

/* The handoff case for one buffer size and shift: `calls` timed add jobs, each after a write job. */
static void run_handoff(tb_pool *pool, int threads, size_t bytes, bool crossed, double *t, int calls) {
  handoff h = {.n_tasks = (size_t)threads * 4};
  h.slice = bytes / sizeof(float) / h.n_tasks / 16 * 16;
  h.shift = crossed ? h.n_tasks / 2 : 0;
  h.buf = aligned_alloc(64, h.slice * h.n_tasks * sizeof(float));
  if (!h.buf) {
    fprintf(stderr, "pool_bench: out of memory for the handoff buffer\n");
    return;
  }
  for (int i = 0; i < calls; i++) {
    size_t before = caller_tasks;
    tb_pool_parallel_for(pool, h.n_tasks, write_slices, &h);
    caller_tasks = before; /* the write jobs' share is not reported */
    double t0 = now_us();
    tb_pool_parallel_for(pool, h.n_tasks, add_slices, &h);
    t[i] = now_us() - t0;
  }
  char name[40];
  snprintf(name, sizeof name, "handoff %zuK %s", bytes >> 10, crossed ? "x" : "=");
  report(name, t, calls, (size_t)calls * h.n_tasks);
  free(h.buf);
}

typedef void (*task_fn)(void *, size_t, size_t);

static void *one_task(void *arg) {
  (*(task_fn *)arg)(NULL, 0, 1);
  return NULL;
}

static int cmp_double(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return (x > y) - (x < y);
}

/* tasks: the tasks of all n calls, for the caller's share (0: not the pool's case) */
static void report(const char *name, double *t, int n, size_t tasks) {
  qsort(t, (size_t)n, sizeof *t, cmp_double);
  printf("%-17s %8d %12.2f %12.2f %12.2f", name, n, t[n / 2], t[n * 9 / 10], t[0]);
  if (tasks) printf(" %11.1f%%", 100.0 * (double)caller_tasks / (double)tasks);
  printf("\n");
  caller_tasks = 0;
}

int main(int argc, char **argv) {
  int threads = argc > 1 ? atoi(argv[1]) : tb_pool_cpu_count();
  if (threads < 2 || threads > 256) {
    fprintf(stderr, "pool_bench: threads must be 2..256 (got %s)\n", argc > 1 ? argv[1] : "the CPU count, 1");
    return 2;
  }
  enum { HOT = 200000, IDLE = 300, NAIVE = 5000 };
  double *t = malloc(HOT * sizeof *t);
  pthread_t *tid = malloc((size_t)threads * sizeof *tid);
  tb_pool *pool = NULL;
  if (!t || !tid || tb_pool_create(threads, &pool) != TB_OK) {
    fprintf(stderr, "pool_bench: %s\n", tb_last_error());
    return 1;
  }
  printf("empty parallel_for, %d threads, %d tasks per call; microseconds per call\n", threads, threads);
  printf("%-17s %8s %12s %12s %12s %12s\n", "case", "calls", "median", "p90", "min", "caller ran");
  caller = pthread_self();
  for (int i = 0; i < 1000; i++) tb_pool_parallel_for(pool, (size_t)threads, empty_tasks, NULL); /* warm-up */
  caller_tasks = 0;
  for (int i = 0; i < HOT; i++) {
    double t0 = now_us();
    tb_pool_parallel_for(pool, (size_t)threads, empty_tasks, NULL);
    t[i] = now_us() - t0;
  }
  report("pool, hot", t, HOT, (size_t)HOT * (size_t)threads);
  for (int i = 0; i < IDLE; i++) {
    struct timespec pause = {0, 2000000};
    nanosleep(&pause, NULL);
    double t0 = now_us();
    tb_pool_parallel_for(pool, (size_t)threads, empty_tasks, NULL);
    t[i] = now_us() - t0;
  }
  report("pool, idle", t, IDLE, (size_t)IDLE * (size_t)threads);
  task_fn fns[2] = {empty_tasks, busy_tasks};
  for (int f = 0; f < 2; f++) {
    for (int i = 0; i < NAIVE; i++) {
      double t0 = now_us();
      int started = 0;
      for (int w = 0; w < threads - 1; w++) started += pthread_create(&tid[w], NULL, one_task, &fns[f]) == 0;
      fns[f](NULL, 0, 1);
      for (int w = 0; w < started; w++) pthread_join(tid[w], NULL);
      t[i] = now_us() - t0;
    }
    report(f ? "pthread, 5us" : "pthread", t, NAIVE, 0);
  }
  for (int i = 0; i < NAIVE; i++) {
    double t0 = now_us();
    tb_pool_parallel_for(pool, (size_t)threads, busy_tasks, NULL);
    t[i] = now_us() - t0;
  }
  report("pool, 5us", t, NAIVE, (size_t)NAIVE * (size_t)threads);
  enum { HANDOFF = 2000 };
  for (int r = 0; r < 2; r++) /* local and crossed twice, interleaved: the machine's state may change */
    for (size_t bytes = 64 << 10; bytes <= 512 << 10; bytes *= 8)
      for (int crossed = 0; crossed < 2; crossed++) run_handoff(pool, threads, bytes, crossed, t, HANDOFF);
  tb_pool_destroy(pool);
  free(tid);
  free(t);
  return 0;
}
