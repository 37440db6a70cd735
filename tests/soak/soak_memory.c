/* The soak's memory samples: the process's resident set (/proc/self/statm) and each backend's reserved bytes
 * (tb_backend_memory_stats, summed over the workers' handles), with the baseline taken when the warm-up ends
 * and the maxima, the last values and the settled RSS after it. */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>
#include "soak.h"

uint64_t soak_rss_bytes(void) {
  FILE *f = fopen("/proc/self/statm", "r");
  if (!f) return 0;
  unsigned long long size = 0, resident = 0;
  int n = fscanf(f, "%llu %llu", &size, &resident);
  fclose(f);
  long page = sysconf(_SC_PAGESIZE);
  return n == 2 && page > 0 ? (uint64_t)resident * (uint64_t)page : 0;
}

uint64_t soak_reserved_bytes(soak_worker *workers, int worker_count, size_t backend) {
  uint64_t total = 0;
  for (int t = 0; t < worker_count; t++) {
    tb_memory_stats stats = {.size = sizeof stats};
    if (workers[t].backends[backend] && tb_backend_memory_stats(workers[t].backends[backend], &stats) == TB_OK)
      total += stats.reserved;
  }
  return total;
}

static uint64_t max_u64(uint64_t a, uint64_t b) { return a > b ? a : b; }

void soak_drift_sample(soak_drift *d, soak_worker *workers, int worker_count, size_t backend_count, bool baseline,
                       double now_s) {
  uint64_t rss = soak_rss_bytes();
  d->samples++;
  if (baseline) {
    d->baseline_at_s = now_s;
    d->rss_baseline = d->rss_max = d->rss_final = rss;
    d->rss_recent_count = 0;
  } else {
    d->rss_max = max_u64(d->rss_max, rss);
    d->rss_final = rss;
    d->rss_recent[d->rss_recent_count++ % SOAK_SETTLE_SAMPLES] = rss;
  }
  for (size_t b = 0; b < backend_count; b++) {
    uint64_t reserved = soak_reserved_bytes(workers, worker_count, b);
    if (baseline) {
      d->reserved_baseline[b] = d->reserved_max[b] = d->reserved_final[b] = reserved;
    } else {
      d->reserved_max[b] = max_u64(d->reserved_max[b], reserved);
      d->reserved_final[b] = reserved;
    }
  }
}

uint64_t soak_rss_settled(const soak_drift *d) {
  size_t n = d->rss_recent_count < SOAK_SETTLE_SAMPLES ? d->rss_recent_count : SOAK_SETTLE_SAMPLES;
  if (n == 0) return d->rss_baseline;
  uint64_t lowest = d->rss_recent[0];
  for (size_t i = 1; i < n; i++)
    if (d->rss_recent[i] < lowest) lowest = d->rss_recent[i];
  return lowest;
}

void soak_format_bytes(int64_t bytes, char *buf, size_t size) {
  const char *sign = bytes < 0 ? "-" : "+";
  uint64_t v = bytes < 0 ? (uint64_t)(-(bytes + 1)) + 1 : (uint64_t)bytes;
  if (v < 1024) snprintf(buf, size, "%s%" PRIu64 " B", sign, v);
  else if (v < 1024 * 1024) snprintf(buf, size, "%s%.1f KiB", sign, (double)v / 1024);
  else snprintf(buf, size, "%s%.2f MiB", sign, (double)v / (1024 * 1024));
}
