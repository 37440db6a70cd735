/* Internal: a persistent thread pool for millisecond-scale inference. A pool of N threads has N-1 workers;
 * the calling thread is the N-th. tb_pool_parallel_for splits [0, n_tasks) into about 4 chunks per thread;
 * each thread runs the chunks of its own contiguous home range, then takes what is left of the others'
 * (so a late or preempted worker's share is run by the others), and the call returns when all are done.
 * Workers spin briefly after a job, then sleep on a futex, so an idle pool costs nothing and back-to-back
 * operators pay no wake-up. A call made while the pool is busy (a nested call from inside a task, or another
 * thread using the same pool) runs serially on the caller: never a deadlock. Threads are created only by
 * tb_pool_create. */
#ifndef TB_CORE_THREADPOOL_H
#define TB_CORE_THREADPOOL_H
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <tensorbridge/status.h>

#define TB_POOL_MAX_THREADS 4096

typedef struct tb_pool tb_pool;

/* The tasks [begin, end) of one chunk; chunks of one call are disjoint and cover [0, n_tasks) once. */
typedef void (*tb_pool_fn)(void *ctx, size_t begin, size_t end);

/* A pool of `threads` threads (1..TB_POOL_MAX_THREADS; 1 starts no worker). */
tb_status tb_pool_create(int threads, tb_pool **out);
/* Stops and joins the workers. Not while a parallel_for on it is running. NULL is fine. */
void tb_pool_destroy(tb_pool *pool);
int tb_pool_threads(const tb_pool *pool); /* 1 for NULL */

/* Run fn over [0, n_tasks) on all the pool's threads, blocking until done. A NULL pool, a 1-thread pool,
 * a nested call or a busy pool runs fn(ctx, 0, n_tasks) on the caller. */
void tb_pool_parallel_for(tb_pool *pool, size_t n_tasks, tb_pool_fn fn, void *ctx);

/* The least work, in elementary operations (multiply-adds, element reads and writes) of all tasks together,
 * worth splitting: below it a job runs on the caller. Waking a worker and handing it a chunk costs about 0.5 us
 * on a spinning pool and a few microseconds on a sleeping one (a futex wake), more than a tiny node saves. */
#define TB_POOL_MIN_WORK 32768.0
/* tb_pool_parallel_for when `work` (as TB_POOL_MIN_WORK counts it) reaches TB_POOL_MIN_WORK, else fn(ctx, 0,
 * n_tasks) on the caller (as a NULL pool runs it). */
void tb_pool_parallel_for_work(tb_pool *pool, size_t n_tasks, double work, tb_pool_fn fn, void *ctx);

/* The time a split job saved (positive) or lost (negative), in ns, against the caller running all n_tasks alone.
 * task_ns is the caller's time per task in its fastest chunk, claiming it included (so the caller's own
 * preemption is not booked as a saving); the workers' n_tasks - caller_tasks tasks at that rate are what the
 * split saved. wait_ns is how long the caller waited after the end of its last chunk, for the last task and
 * every worker that joined to leave; up to TB_POOL_SLOW_WORKER chunks (of `chunk` tasks at task_ns) of it is a
 * worker finishing its last chunk, slower or with heavier tasks, and costs nothing; beyond that it is a loss (a
 * worker preempted holding a chunk). 0 when the caller ran no task (nothing to compare with). */
#define TB_POOL_SLOW_WORKER 2.0
double tb_pool_job_gain(size_t n_tasks, size_t caller_tasks, double task_ns, size_t chunk, uint64_t wait_ns);

/* The back-off on a machine where the other threads' CPUs are not always there (other processes, or a
 * hypervisor that runs a vCPU part of the time): a worker preempted while it holds a chunk makes the caller
 * wait for it, up to a time slice (a millisecond or more) for a job that saves microseconds, so stalls that
 * come often cost more than every split saves. The pool keeps the balance of what its split jobs saved and
 * lost over about the last TB_POOL_WINDOW_NS of wall time (older bookings fade linearly; a job later than the
 * caller alone by under TB_POOL_LOSS_SLACK_NS counts as even) and backs off when it goes negative: jobs run on
 * the caller for TB_POOL_BACK_OFF_MIN_NS the first time; twice the last period (up to TB_POOL_BACK_OFF_MAX_NS)
 * when it backs off again within TB_POOL_BACK_OFF_REPEAT_NS of the last one's end, half of it (down to the
 * shortest) when later. Rare stalls among jobs that save time are covered by the window's savings; on a quiet
 * machine nothing changes. The state is per pool: a shared pool's (tb_pool_shared) is shared by every model
 * of that thread count, which run on the same CPUs. */
#define TB_POOL_WINDOW_NS 100000000.0
#define TB_POOL_LOSS_SLACK_NS 20000.0
#define TB_POOL_BACK_OFF_MIN_NS 2000000ull
#define TB_POOL_BACK_OFF_MAX_NS 256000000ull
#define TB_POOL_BACK_OFF_REPEAT_NS 50000000ull
typedef struct tb_pool_backoff {
  double balance_ns;     /* what split jobs saved less what they lost, faded over TB_POOL_WINDOW_NS */
  uint64_t last_ns;      /* the time of the last booking */
  uint64_t period_ns;    /* the last back-off's length (0: none yet) */
  uint64_t serial_until; /* jobs run on the caller until this time (CLOCK_MONOTONIC, ns) */
  uint64_t backoffs;     /* back-offs started */
} tb_pool_backoff;
/* Books a split job's gain (tb_pool_job_gain) at time now_ns; true when it starts a back-off (then
 * b->serial_until is now_ns + b->period_ns). */
bool tb_pool_backoff_book(tb_pool_backoff *b, double gain_ns, uint64_t now_ns);

/* How many jobs this pool has split (run on more than the caller) since it was created; 0 for NULL. Waits
 * for a job in progress. For tests that must know a split happened. */
uint64_t tb_pool_split_jobs(tb_pool *pool);
/* Forgets the back-off (as a new pool): for tests that must see jobs split on a shared pool. NULL is fine. */
void tb_pool_reset_backoff(tb_pool *pool);

/* The number of CPUs this process may run on (sched_getaffinity), at least 1. */
int tb_pool_cpu_count(void);
/* TB_NUM_THREADS: TB_OK with *threads = its value (0 when unset); TB_ERR_INVALID_ARGUMENT naming the value
 * and the valid range when it is not an integer in 1..TB_POOL_MAX_THREADS. */
tb_status tb_pool_env_threads(int *threads);
/* The default thread count: TB_NUM_THREADS when valid (an invalid value is logged as a warning, once),
 * else tb_pool_cpu_count(). */
int tb_pool_default_threads(void);
/* The process-wide pool with this many threads (0: the default count), created on first use and kept
 * for the life of the process; NULL for 1 thread or when it cannot be created (callers then run serially). */
tb_pool *tb_pool_shared(int threads);

#endif
