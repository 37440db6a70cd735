/* The thread pool's back-off rule, simulated (no threads, no clock): jobs of <job us> back to back, each split
 * one <saving us> faster than the caller alone, except that a worker is preempted holding a chunk with
 * probability <stall prob> per job and the job then loses <stall us>; during a back-off jobs run on the caller.
 * Prints, for the rule before this change (a 250 us bank, back-offs doubling to 256 ms within 8 periods; copied
 * here) and the library's tb_pool_backoff_book, the share of jobs run serially and the mean job time, beside
 * the same run with no back-off. It shows that the old rule stays at 256 ms on a machine with free cores and rare
 * stalls, and that the new one splits nearly every job there while still backing off when stalls are frequent.
 * Usage: pool_backoff_sim <job us> <saving us> <stall prob per job> <stall us> [seconds, default 10] */
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include "core/threadpool.h"

typedef struct old_rule { /* the rule before: bank capped at 250 us, slack 20 us, 2..256 ms, repeat 8 periods */
  double bank;
  uint64_t period, until;
  bool filled;
} old_rule;

static bool old_book(old_rule *b, double gain, uint64_t now) {
  if (gain < 0) gain = gain + 20000.0 < 0 ? gain + 20000.0 : 0;
  b->bank += gain;
  if (b->bank >= 250000.0) {
    b->bank = 250000.0;
    b->filled = true;
  }
  if (b->bank >= 0) return false;
  bool again = b->period && (!b->filled || now < b->until + 8 * b->period);
  b->period = !again ? 2000000ull : b->period * 2 > 256000000ull ? 256000000ull : b->period * 2;
  b->until = now + b->period;
  b->bank = 0;
  b->filled = false;
  return true;
}

static uint64_t rng = 88172645463325252ull;
static double uniform(void) {
  rng ^= rng << 13, rng ^= rng >> 7, rng ^= rng << 17;
  return (double)(rng >> 11) / 9007199254740992.0;
}

/* rule: 0 none, 1 old, 2 new. Prints the serial share and the mean job time. */
static void simulate(int rule, const char *name, double job_ns, double saving_ns, double p, double stall_ns,
                     double seconds) {
  rng = 88172645463325252ull;
  old_rule o = {0};
  tb_pool_backoff n = {0};
  uint64_t t = 1000000000ull, end = t + (uint64_t)(seconds * 1e9), jobs = 0, serial = 0;
  while (t < end) {
    jobs++;
    uint64_t until = rule == 1 ? o.until : rule == 2 ? n.serial_until : 0;
    if (t < until) {
      serial++;
      t += (uint64_t)job_ns;
      continue;
    }
    double gain = saving_ns - (uniform() < p ? stall_ns : 0);
    t += (uint64_t)(job_ns - gain);
    if (rule == 1) old_book(&o, gain, t);
    if (rule == 2) tb_pool_backoff_book(&n, gain, t);
  }
  printf("%-12s serial %5.1f%%  mean job %.2f us\n", name, 100.0 * (double)serial / (double)jobs,
         (double)(t - 1000000000ull) / (double)jobs / 1000.0);
}

int main(int argc, char **argv) {
  if (argc < 5) {
    fprintf(stderr, "usage: %s <job us> <saving us> <stall prob per job> <stall us> [seconds]\n", argv[0]);
    return 2;
  }
  double job = atof(argv[1]) * 1000, saving = atof(argv[2]) * 1000, p = atof(argv[3]), stall = atof(argv[4]) * 1000;
  double seconds = argc > 5 ? atof(argv[5]) : 10;
  if (job <= 0 || saving < 0 || saving >= job || p < 0 || p > 1 || stall < 0 || seconds <= 0) {
    fprintf(stderr, "%s: need job > saving >= 0 (us), 0 <= stall prob <= 1, stall >= 0 (us), seconds > 0\n", argv[0]);
    return 2;
  }
  simulate(0, "no back-off", job, saving, p, stall, seconds);
  simulate(1, "old rule", job, saving, p, stall, seconds);
  simulate(2, "new rule", job, saving, p, stall, seconds);
  return 0;
}
