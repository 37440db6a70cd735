/* What the files of `tb bench` share: the command's entry point (cmd_bench.c), the measured results of
 * each configuration (backend x level), their statistics and cost (bench_stats.c), and the three
 * renderings of a report: the text table and JSON (bench_report.c) and the SVG chart (bench_svg.c). */
#ifndef TB_CLI_BENCH_COMMON_H
#define TB_CLI_BENCH_COMMON_H
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <tensorbridge/tensorbridge.h>
#include "json_out.h"
#include "run.h"

#define TBC_BENCH_MAX_ROWS 64

/* `tb bench`: argv holds the words after "bench"; returns the exit code. */
int tbc_cmd_bench(int argc, char **argv);

/* Latency statistics of n timed runs, in milliseconds. Percentiles interpolate linearly between the
 * two nearest sorted samples (position p * (n - 1)), as numpy.percentile does by default. */
typedef struct tbc_bench_stats {
  size_t n;
  double median, p10, p90, mean, stddev, min, max;
} tbc_bench_stats;

/* Sort ms[0..n) in place and fill *out; n must be at least 1. stddev is the population one (divides by n). */
void tbc_bench_stats_compute(double *ms, size_t n, tbc_bench_stats *out);
/* The p-th percentile (0..100) of sorted[0..n). */
double tbc_bench_percentile(const double *sorted, size_t n, double p);
/* Square root by Newton's method (the tool does not link libm); 0 for x <= 0. */
double tbc_bench_sqrt(double x);
/* US dollars per million inferences at usd_per_hour when one inference takes median_ms:
 * usd_per_hour / 3600 * (median_ms / 1000) * 1e6. */
double tbc_bench_cost_per_million(double usd_per_hour, double median_ms);

/* One configuration: a backend request at one level. */
typedef struct tbc_bench_row {
  char device[64];  /* "cpu:0"; the request as given when no backend could be created */
  char backend[64]; /* "cpu", "vulkan": the colour of its bar */
  tb_opt_level level;
  char precision[16]; /* what preparation used */
  bool ok;
  char error[1024]; /* when !ok: the library's sentence, with the step that failed */
  double prepare_ms;      /* tb_prepare_result.prepare_ms */
  double prepare_wall_ms; /* the wall time of tb_model_prepare */
  tbc_bench_stats stats;
  double inferences_per_s; /* 1000 / median */
  double samples_per_s;    /* batch * inferences_per_s, when the report has a batch */
  uint64_t device_peak_reserved; /* tb_memory_stats.peak_reserved of the backend for this configuration */
  uint64_t process_peak_rss;     /* getrusage ru_maxrss after this configuration: the process's peak so far */
  double cost_per_million;       /* when the report has a price */
  bool has_device_time;          /* the backend times runs on the device (CUDA events): device_stats holds them */
  tbc_bench_stats device_stats;  /* tb_prepared_device_ms of each timed run */
  bool graph_capture;            /* the runs replayed a captured device graph (tb_prepared_graph_capture) */
  char graph_why[256];           /* why not, when a device backend could not */
} tbc_bench_row;

typedef struct tbc_bench_report {
  const char *model;   /* the path as given */
  char model_sha256[65];
  char machine[256];   /* the CPU's name from discovery */
  const char *precision; /* as requested */
  int threads, warmup, iters;
  uint64_t seed;
  bool has_batch;      /* dimension 0 of the first input is symbolic: a batch */
  char batch_input[128], batch_dim[64];
  int64_t batch;
  bool has_cost;
  double cost_per_hour;
  tbc_notes notes;
  size_t row_count;
  tbc_bench_row rows[TBC_BENCH_MAX_ROWS];
} tbc_bench_report;

/* Index of the successful row with the lowest cost per million (the lowest median), or -1 when none. */
int tbc_bench_cheapest(const tbc_bench_report *report);

/* The text table, with the header lines above it and the cost comparison under it. */
void tbc_bench_print_table(const tbc_bench_report *report, FILE *out);
/* The report as one JSON object (keys in docs/benchmarking.md). */
void tbc_bench_json(const tbc_bench_report *report, tbc_buf *buf);
/* The chart: one horizontal bar per configuration (median, p10-p90 whisker), as a standalone SVG file. */
void tbc_bench_svg(const tbc_bench_report *report, tbc_buf *buf);

#endif
