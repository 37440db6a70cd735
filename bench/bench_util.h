/* Shared by the benchmarks: a monotonic clock, median and p90 of timed runs, the backends to measure
 * (those named on the command line, or every available one), byte sizes for people, and a small growable
 * text buffer for the JSON output. Only the public API and libc. */
#ifndef TB_BENCH_UTIL_H
#define TB_BENCH_UTIL_H
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <tensorbridge/tensorbridge.h>

/* Seconds on the monotonic clock. */
double bench_now(void);

/* Median and 90th percentile of times[0..n) (sorted in place). n > 0. */
typedef struct bench_times {
  double median;
  double p90;
} bench_times;
bench_times bench_summarize(double *times, size_t n);

/* GB/s (10^9 bytes per second) for `bytes` moved in `seconds`. */
double bench_gbps(size_t bytes, double seconds);

/* "4 KiB", "256 MiB": sizes that are whole KiB/MiB/GiB print without decimals. */
void bench_format_size(size_t bytes, char *buf, size_t size);

/* The backend requests to measure: argv's positional words, or when there are none the name of every
 * available backend in the order tb_backend_list_available gives. Returns the count (<= capacity);
 * strings point into argv or into static storage. */
size_t bench_backends(int positional_count, char **positional, const char **out, size_t capacity);

/* Parse a size with an optional K, M or G suffix (binary units). false when it is not one. */
bool bench_parse_size(const char *text, size_t *out);

/* A growable text buffer; `failed` is set when an allocation fails. */
typedef struct bench_buf {
  char *data;
  size_t len, cap;
  bool failed;
} bench_buf;
void bench_buf_addf(bench_buf *b, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* Append s as a JSON string literal. */
void bench_buf_json_string(bench_buf *b, const char *s);
void bench_buf_free(bench_buf *b);

#endif
