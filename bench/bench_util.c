/* Helpers shared by the benchmarks (see bench_util.h). */
#include "bench_util.h"
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

double bench_now(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static int compare_double(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return (x > y) - (x < y);
}

/* The value at quantile q (0..1) of sorted[0..n), interpolating between neighbours. */
static double quantile(const double *sorted, size_t n, double q) {
  double position = q * (double)(n - 1);
  size_t below = (size_t)position;
  if (below + 1 >= n) return sorted[n - 1];
  double weight = position - (double)below;
  return sorted[below] * (1.0 - weight) + sorted[below + 1] * weight;
}

bench_times bench_summarize(double *times, size_t n) {
  qsort(times, n, sizeof *times, compare_double);
  bench_times t = {quantile(times, n, 0.5), quantile(times, n, 0.9)};
  return t;
}

double bench_gbps(size_t bytes, double seconds) { return seconds > 0 ? (double)bytes / seconds / 1e9 : 0.0; }

void bench_format_size(size_t bytes, char *buf, size_t size) {
  static const char *const units[] = {"B", "KiB", "MiB", "GiB"};
  size_t u = 0;
  size_t value = bytes;
  while (u + 1 < sizeof units / sizeof units[0] && value >= 1024 && value % 1024 == 0) {
    value /= 1024;
    u++;
  }
  snprintf(buf, size, "%zu %s", value, units[u]);
}

size_t bench_backends(int positional_count, char **positional, const char **out, size_t capacity) {
  size_t n = 0;
  if (positional_count > 0) {
    for (int i = 0; i < positional_count && n < capacity; i++) out[n++] = positional[i];
    return n;
  }
  tb_backend_kind kinds[TB_BACKEND_COUNT];
  size_t count = 0;
  if (tb_backend_list_available(kinds, TB_BACKEND_COUNT, &count) != TB_OK) {
    fprintf(stderr, "bench: listing the available backends failed: %s\n", tb_last_error());
    return 0;
  }
  for (size_t i = 0; i < count && n < capacity; i++) out[n++] = tb_backend_name(kinds[i]);
  return n;
}

bool bench_parse_size(const char *text, size_t *out) {
  char *end = NULL;
  unsigned long long value = strtoull(text, &end, 10);
  if (end == text) return false;
  unsigned shift = 0;
  if (*end == 'K' || *end == 'k') shift = 10;
  if (*end == 'M' || *end == 'm') shift = 20;
  if (*end == 'G' || *end == 'g') shift = 30;
  if (shift) end++;
  if (*end != '\0' || value == 0 || value > (SIZE_MAX >> shift)) return false;
  *out = (size_t)value << shift;
  return true;
}

void bench_buf_addf(bench_buf *b, const char *fmt, ...) {
  if (b->failed) return;
  va_list ap;
  va_start(ap, fmt);
  va_list copy;
  va_copy(copy, ap);
  int need = vsnprintf(NULL, 0, fmt, copy);
  va_end(copy);
  if (need < 0) {
    b->failed = true;
    va_end(ap);
    return;
  }
  if (b->len + (size_t)need + 1 > b->cap) {
    size_t cap = b->cap ? b->cap : 1024;
    while (cap < b->len + (size_t)need + 1) cap *= 2;
    char *data = realloc(b->data, cap);
    if (!data) {
      b->failed = true;
      va_end(ap);
      return;
    }
    b->data = data;
    b->cap = cap;
  }
  vsnprintf(b->data + b->len, b->cap - b->len, fmt, ap);
  b->len += (size_t)need;
  va_end(ap);
}

void bench_buf_json_string(bench_buf *b, const char *s) {
  bench_buf_addf(b, "\"");
  for (const unsigned char *p = (const unsigned char *)s; *p; p++) {
    if (*p == '"' || *p == '\\')
      bench_buf_addf(b, "\\%c", *p);
    else if (*p < 0x20)
      bench_buf_addf(b, "\\u%04x", *p);
    else
      bench_buf_addf(b, "%c", *p);
  }
  bench_buf_addf(b, "\"");
}

void bench_buf_free(bench_buf *b) {
  free(b->data);
  memset(b, 0, sizeof *b);
}
