/* `tb bench`'s arithmetic: latency statistics of the timed runs, and the cost per million inferences. */
#include <stdlib.h>
#include "bench_common.h"

static int compare_ms(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return (x > y) - (x < y);
}

double tbc_bench_sqrt(double x) {
  if (!(x > 0)) return 0;
  double r = x > 1 ? x : 1;
  for (int i = 0; i < 200; i++) {
    double next = 0.5 * (r + x / r);
    if (next == r) break;
    r = next;
  }
  return r;
}

double tbc_bench_percentile(const double *sorted, size_t n, double p) {
  if (n == 0) return 0;
  double pos = p / 100.0 * (double)(n - 1);
  size_t lo = (size_t)pos;
  if (lo >= n - 1) return sorted[n - 1];
  double frac = pos - (double)lo;
  return sorted[lo] + (sorted[lo + 1] - sorted[lo]) * frac;
}

void tbc_bench_stats_compute(double *ms, size_t n, tbc_bench_stats *out) {
  qsort(ms, n, sizeof *ms, compare_ms);
  double sum = 0, squares = 0;
  for (size_t i = 0; i < n; i++) sum += ms[i];
  double mean = n ? sum / (double)n : 0;
  for (size_t i = 0; i < n; i++) squares += (ms[i] - mean) * (ms[i] - mean);
  out->n = n;
  out->mean = mean;
  out->stddev = n ? tbc_bench_sqrt(squares / (double)n) : 0;
  out->min = n ? ms[0] : 0;
  out->max = n ? ms[n - 1] : 0;
  out->median = tbc_bench_percentile(ms, n, 50);
  out->p10 = tbc_bench_percentile(ms, n, 10);
  out->p90 = tbc_bench_percentile(ms, n, 90);
}

double tbc_bench_cost_per_million(double usd_per_hour, double median_ms) {
  return usd_per_hour / 3600.0 * (median_ms / 1000.0) * 1e6;
}

int tbc_bench_cheapest(const tbc_bench_report *report) {
  int best = -1;
  for (size_t i = 0; i < report->row_count; i++) {
    const tbc_bench_row *r = &report->rows[i];
    if (r->ok && (best < 0 || r->stats.median < report->rows[best].stats.median)) best = (int)i;
  }
  return best;
}
