/* Are this machine's CPUs really independent right now? A probe for the multi-thread benchmark tables.
 * On a VM the host may place two vCPUs on the two hyperthreads of one core, or take time from one of them
 * (steal); a 2-thread row measured then says little about the library. Three measurements, each best of
 * `rounds` (default 5):
 *   fma       floating-point multiply-add throughput of `threads` threads at once against one alone
 *             (independent chains enough to fill the FP units: near `threads` x when the CPUs are whole
 *             cores, near 1x when they share one core's units);
 *   pingpong  round trip of a cache line between the first two CPUs, each thread pinned (ns); a round stops
 *             after PING_BUDGET_S, and a waiting thread yields after SPINS_BEFORE_YIELD polls, so on CPUs held by
 *             other spinning work (where each hand-over waits for a time slice) the probe still ends, reporting
 *             the long round trip it saw (`pings`: the hand-overs it measured, below PINGS when cut short);
 *   steal     the share of the CPUs' time the hypervisor took during the probe (/proc/stat).
 * Prints one line of JSON, e.g. {"threads":2,"fma_speedup":1.98,"pingpong_ns":142,"pings":20000,"steal_pct":0.0}.
 *   build: cmake -DTB_BUILD_BENCH=ON, then <build>/bench/cpu_pair_probe [threads] [rounds] */
#define _GNU_SOURCE
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

enum { CHAINS = 16, FMA_STEPS = 4000000, PINGS = 20000, MAX_THREADS = 256, SPINS_BEFORE_YIELD = 1 << 16 };
enum { BALL_STOP = -1 };
static const double PING_BUDGET_S = 1.0;

static double now_s(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (double)t.tv_sec + (double)t.tv_nsec * 1e-9;
}

typedef float v4 __attribute__((vector_size(16)));
static volatile float sink;

/* CHAINS independent vector chains of x = x * m + c: enough in flight to fill two FP pipes on any x86-64. */
static void *fma_work(void *arg) {
  (void)arg;
  v4 x[CHAINS], m = {0.9999f, 0.9999f, 0.9999f, 0.9999f}, c = {1e-4f, 1e-4f, 1e-4f, 1e-4f};
  for (int i = 0; i < CHAINS; i++) x[i] = (v4){1.0f, 1.0f, 1.0f, 1.0f};
  for (long s = 0; s < FMA_STEPS; s++)
    for (int i = 0; i < CHAINS; i++) x[i] = x[i] * m + c;
  float total = 0;
  for (int i = 0; i < CHAINS; i++) total += x[i][0] + x[i][3];
  sink = total;
  return NULL;
}

static double fma_speedup(int threads) {
  double t0 = now_s();
  fma_work(NULL);
  double alone = now_s() - t0;
  pthread_t ids[MAX_THREADS];
  int started = 0;
  t0 = now_s();
  for (; started < threads - 1; started++)
    if (pthread_create(&ids[started], NULL, fma_work, NULL) != 0) break;
  fma_work(NULL);
  for (int i = 0; i < started; i++) pthread_join(ids[i], NULL);
  double together = now_s() - t0;
  return (double)(started + 1) * alone / together;
}

static _Atomic int ball;

static void pin(int cpu) {
  cpu_set_t set;
  CPU_ZERO(&set);
  CPU_SET(cpu, &set);
  sched_setaffinity(0, sizeof set, &set); /* best effort: an unpinned probe still measures something */
}

typedef enum { BALL_CAUGHT, BALL_CAUGHT_LATE, BALL_STOPPED } ball_wait;

/* Waits until the ball holds `want` or BALL_STOP; polls, then yields the CPU between polls (caught late). */
static ball_wait wait_for_ball(int want) {
  for (long polls = 0;; polls++) {
    int b = atomic_load_explicit(&ball, memory_order_acquire);
    if (b == want) return polls > SPINS_BEFORE_YIELD ? BALL_CAUGHT_LATE : BALL_CAUGHT;
    if (b == BALL_STOP) return BALL_STOPPED;
    if (polls >= SPINS_BEFORE_YIELD) sched_yield();
  }
}

static void *pong(void *arg) {
  pin(*(int *)arg);
  for (int i = 0; i < PINGS && wait_for_ball(2 * i + 1) != BALL_STOPPED; i++)
    atomic_store_explicit(&ball, 2 * i + 2, memory_order_release);
  return NULL;
}

/* Round trip between the first two CPUs this process may use, in ns (*pings: how many were measured); -1 when
 * there are not two. */
static double pingpong_ns(int *pings) {
  cpu_set_t allowed;
  if (sched_getaffinity(0, sizeof allowed, &allowed) != 0 || CPU_COUNT(&allowed) < 2) return -1;
  int cpus[2], n = 0;
  for (int c = 0; c < CPU_SETSIZE && n < 2; c++)
    if (CPU_ISSET(c, &allowed)) cpus[n++] = c;
  atomic_store(&ball, 0);
  pthread_t id;
  if (pthread_create(&id, NULL, pong, &cpus[1]) != 0) return -1;
  pin(cpus[0]);
  double t0 = now_s();
  int done = 0;
  while (done < PINGS) {
    atomic_store_explicit(&ball, 2 * done + 1, memory_order_release);
    bool late = wait_for_ball(2 * done + 2) == BALL_CAUGHT_LATE; /* only the pinger stops the game */
    done++;
    /* the clock read every 256 quick hand-overs, and after every slow one (each may take a time slice) */
    if ((late || done % 256 == 0) && now_s() - t0 > PING_BUDGET_S) break;
  }
  double per = (now_s() - t0) / done * 1e9;
  atomic_store_explicit(&ball, BALL_STOP, memory_order_release); /* a pong still waiting returns */
  pthread_join(id, NULL);
  *pings = done;
  sched_setaffinity(0, sizeof allowed, &allowed);
  return per;
}

/* The "cpu" line of /proc/stat: total and steal jiffies; false where it cannot be read. */
static int read_steal(unsigned long long *total, unsigned long long *steal) {
  FILE *f = fopen("/proc/stat", "r");
  if (!f) return 0;
  unsigned long long v[8] = {0};
  int got = fscanf(f, "cpu %llu %llu %llu %llu %llu %llu %llu %llu", &v[0], &v[1], &v[2], &v[3], &v[4], &v[5],
                   &v[6], &v[7]);
  fclose(f);
  if (got < 8) return 0;
  *total = 0;
  for (int i = 0; i < 8; i++) *total += v[i];
  *steal = v[7];
  return 1;
}

static int parse_arg(const char *text, const char *what, int lo, int hi) {
  char *end;
  long v = strtol(text, &end, 10);
  if (*text == '\0' || *end != '\0' || v < lo || v > hi) {
    fprintf(stderr, "cpu_pair_probe: %s '%s' is not an integer in %d..%d; give one, e.g. %d\n", what, text, lo, hi,
            lo == 2 ? 2 : 5);
    exit(2);
  }
  return (int)v;
}

int main(int argc, char **argv) {
  cpu_set_t allowed;
  int cpus = sched_getaffinity(0, sizeof allowed, &allowed) == 0 ? CPU_COUNT(&allowed) : 1;
  int threads = argc > 1 ? parse_arg(argv[1], "thread count", 2, MAX_THREADS) : (cpus < 2 ? 2 : cpus);
  int rounds = argc > 2 ? parse_arg(argv[2], "round count", 1, 100) : 5;
  unsigned long long total0 = 0, steal0 = 0, total1 = 0, steal1 = 0;
  int have_stat = read_steal(&total0, &steal0);
  double best_speedup = 0, best_ping = -1;
  int best_pings = 0;
  for (int r = 0; r < rounds; r++) {
    int pings = 0;
    double s = fma_speedup(threads), p = pingpong_ns(&pings);
    if (s > best_speedup) best_speedup = s;
    if (p >= 0 && (best_ping < 0 || p < best_ping)) {
      best_ping = p;
      best_pings = pings;
    }
  }
  have_stat = have_stat && read_steal(&total1, &steal1) && total1 > total0;
  printf("{\"threads\":%d,\"cpus\":%d,\"fma_speedup\":%.2f,\"pingpong_ns\":%.0f,\"pings\":%d,\"steal_pct\":",
         threads, cpus, best_speedup, best_ping, best_pings);
  if (have_stat) printf("%.1f}\n", 100.0 * (double)(steal1 - steal0) / (double)(total1 - total0));
  else printf("null}\n");
  return 0;
}
