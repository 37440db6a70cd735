/* `tb bench`'s text table and JSON: the same facts, for people and for programs (keys in
 * docs/benchmarking.md). */
#include <stdio.h>
#include <string.h>
#include "bench_common.h"
#include "format.h"
#include "table.h"

static void fixed(double v, int decimals, char *buf, size_t size) { snprintf(buf, size, "%.*f", decimals, v); }

static void print_header(const tbc_bench_report *r, FILE *out) {
  fprintf(out, "model:    %s (sha256 %.16s...)\n", r->model, r->model_sha256);
  fprintf(out, "machine:  %s\n", r->machine[0] ? r->machine : "unknown CPU");
  fprintf(out, "runs:     %d warm-up, %d timed (CLOCK_MONOTONIC, each run followed by a synchronize)\n", r->warmup,
          r->iters);
  fprintf(out, "options:  precision %s, threads %d%s, seed %llu\n", r->precision, r->threads,
          r->threads ? "" : " (the backend's default)", (unsigned long long)r->seed);
  if (r->has_batch)
    fprintf(out, "batch:    %lld (input '%s' dimension 0 '%s')\n", (long long)r->batch, r->batch_input, r->batch_dim);
  char line[1200];
  for (size_t i = 0; i < r->notes.count; i++) fprintf(out, "note:     %s\n", tbc_one_line(r->notes.text[i], line, sizeof line));
  fputs("\n", out);
}

enum { MAX_COLUMNS = 17 };

void tbc_bench_print_table(const tbc_bench_report *r, FILE *out) {
  print_header(r, out);
  const char *headers[MAX_COLUMNS] = {"DEVICE",  "LEVEL",  "PRECISION", "PREPARE_MS", "MEDIAN_MS", "P10_MS",
                                      "P90_MS",  "MEAN_MS", "STDDEV_MS", "MIN_MS",     "INFER/S",   "SAMPLES/S",
                                      "DEV_PEAK", "RSS_PEAK", "STATUS",   NULL,         NULL};
  size_t columns = 15;
  if (r->has_cost) {
    headers[14] = "USD/1M_INFER";
    headers[15] = "STATUS";
    columns = 16;
  }
  tbc_table *t = tbc_table_new(columns, headers);
  if (!t) {
    fputs("tb: error: out of memory\n", stderr);
    return;
  }
  for (size_t i = 0; i < r->row_count; i++) {
    const tbc_bench_row *row = &r->rows[i];
    char cells[MAX_COLUMNS][80];
    const char *ptrs[MAX_COLUMNS];
    for (size_t c = 0; c < MAX_COLUMNS; c++) {
      snprintf(cells[c], sizeof cells[c], "-");
      ptrs[c] = cells[c];
    }
    snprintf(cells[0], sizeof cells[0], "%s", row->device);
    snprintf(cells[1], sizeof cells[1], "%s", tb_opt_level_name(row->level));
    if (row->ok) {
      snprintf(cells[2], sizeof cells[2], "%s", row->precision);
      fixed(row->prepare_wall_ms, 2, cells[3], sizeof cells[3]);
      fixed(row->stats.median, 3, cells[4], sizeof cells[4]);
      fixed(row->stats.p10, 3, cells[5], sizeof cells[5]);
      fixed(row->stats.p90, 3, cells[6], sizeof cells[6]);
      fixed(row->stats.mean, 3, cells[7], sizeof cells[7]);
      fixed(row->stats.stddev, 3, cells[8], sizeof cells[8]);
      fixed(row->stats.min, 3, cells[9], sizeof cells[9]);
      fixed(row->inferences_per_s, 1, cells[10], sizeof cells[10]);
      if (r->has_batch) fixed(row->samples_per_s, 1, cells[11], sizeof cells[11]);
      tbc_format_bytes(row->device_peak_reserved, cells[12], sizeof cells[12]);
      tbc_format_bytes(row->process_peak_rss, cells[13], sizeof cells[13]);
    }
    size_t status = 14;
    if (r->has_cost) {
      if (row->ok) snprintf(cells[14], sizeof cells[14], "%.4f", row->cost_per_million);
      status = 15;
    }
    snprintf(cells[status], sizeof cells[status], "%s", row->ok ? "ok" : "FAILED");
    tbc_table_row(t, ptrs);
    if (row->ok && row->has_device_time) {
      char line[600];
      snprintf(line, sizeof line, "  device time (CUDA events): median %.3f ms, p10 %.3f, p90 %.3f; graph replay %s%s%s",
               row->device_stats.median, row->device_stats.p10, row->device_stats.p90, row->graph_capture ? "on" : "off",
               row->graph_capture ? "" : ": ", row->graph_capture ? "" : row->graph_why);
      tbc_table_note(t, line);
    }
    if (!row->ok) {
      char line[1200], one_line[1200];
      snprintf(line, sizeof line, "  error: %s", row->error);
      tbc_table_note(t, tbc_one_line(line, one_line, sizeof one_line));
    }
  }
  tbc_table_print(t, out);
  tbc_table_free(t);
  fputs("\nPREPARE_MS is the wall time of tb_model_prepare; DEV_PEAK is the backend's peak reserved memory\n"
        "(tb_memory_stats.peak_reserved); RSS_PEAK is the process's peak resident set (getrusage) so far.\n",
        out);
  if (!r->has_cost) return;
  fprintf(out, "\ncost per million inferences = USD per hour / 3600 * median seconds * 1e6, at $%.4f per hour\n",
          r->cost_per_hour);
  int best = tbc_bench_cheapest(r);
  if (best < 0) return;
  const tbc_bench_row *b = &r->rows[best];
  fprintf(out, "cheapest per inference: %s %s at $%.4f per million inferences\n", b->device,
          tb_opt_level_name(b->level), b->cost_per_million);
  for (size_t i = 0; i < r->row_count; i++) {
    const tbc_bench_row *row = &r->rows[i];
    if (!row->ok || (int)i == best || b->cost_per_million <= 0) continue;
    fprintf(out, "  %s %s costs %.2fx as much ($%.4f)\n", row->device, tb_opt_level_name(row->level),
            row->cost_per_million / b->cost_per_million, row->cost_per_million);
  }
}

/* ---- JSON ------------------------------------------------------------------------------------------ */

static void key_number(tbc_buf *b, bool *first, const char *key, double v) {
  tbc_json_key(b, first, key);
  tbc_buf_addf(b, "%.6f", v);
}

static void key_u64(tbc_buf *b, bool *first, const char *key, uint64_t v) {
  tbc_json_key(b, first, key);
  tbc_buf_addf(b, "%llu", (unsigned long long)v);
}

static void key_string(tbc_buf *b, bool *first, const char *key, const char *v) {
  tbc_json_key(b, first, key);
  tbc_json_string(b, v);
}

static void row_json(const tbc_bench_report *r, const tbc_bench_row *row, int cheapest, tbc_buf *b) {
  bool first = true;
  tbc_buf_add(b, "{");
  key_string(b, &first, "device", row->device);
  key_string(b, &first, "backend", row->backend);
  key_string(b, &first, "level", tb_opt_level_name(row->level));
  tbc_json_key(b, &first, "ok");
  tbc_buf_add(b, row->ok ? "true" : "false");
  if (!row->ok) {
    key_string(b, &first, "error", row->error);
    tbc_buf_add(b, "}");
    return;
  }
  key_string(b, &first, "precision", row->precision);
  key_number(b, &first, "prepare_ms", row->prepare_ms);
  key_number(b, &first, "prepare_wall_ms", row->prepare_wall_ms);
  key_u64(b, &first, "iterations", row->stats.n);
  key_number(b, &first, "median_ms", row->stats.median);
  key_number(b, &first, "p10_ms", row->stats.p10);
  key_number(b, &first, "p90_ms", row->stats.p90);
  key_number(b, &first, "mean_ms", row->stats.mean);
  key_number(b, &first, "stddev_ms", row->stats.stddev);
  key_number(b, &first, "min_ms", row->stats.min);
  key_number(b, &first, "max_ms", row->stats.max);
  key_number(b, &first, "inferences_per_s", row->inferences_per_s);
  tbc_json_key(b, &first, "samples_per_s");
  if (r->has_batch) tbc_buf_addf(b, "%.6f", row->samples_per_s);
  else tbc_buf_add(b, "null");
  key_u64(b, &first, "device_peak_reserved_bytes", row->device_peak_reserved);
  key_u64(b, &first, "process_peak_rss_bytes", row->process_peak_rss);
  if (row->has_device_time) {
    key_number(b, &first, "device_median_ms", row->device_stats.median);
    key_number(b, &first, "device_p10_ms", row->device_stats.p10);
    key_number(b, &first, "device_p90_ms", row->device_stats.p90);
  }
  tbc_json_key(b, &first, "graph_capture");
  tbc_buf_add(b, row->graph_capture ? "true" : "false");
  key_string(b, &first, "graph_capture_why", row->graph_why);
  if (r->has_cost) {
    key_number(b, &first, "cost_per_million_usd", row->cost_per_million);
    tbc_json_key(b, &first, "cheapest");
    tbc_buf_add(b, (int)(row - r->rows) == cheapest ? "true" : "false");
  }
  tbc_buf_add(b, "}");
}

void tbc_bench_json(const tbc_bench_report *r, tbc_buf *b) {
  bool first = true;
  tbc_buf_add(b, "{");
  key_string(b, &first, "model", r->model);
  key_string(b, &first, "model_sha256", r->model_sha256);
  key_string(b, &first, "machine", r->machine);
  key_string(b, &first, "precision", r->precision);
  tbc_json_key(b, &first, "threads");
  tbc_buf_addf(b, "%d", r->threads);
  tbc_json_key(b, &first, "warmup");
  tbc_buf_addf(b, "%d", r->warmup);
  tbc_json_key(b, &first, "iterations");
  tbc_buf_addf(b, "%d", r->iters);
  key_u64(b, &first, "seed", r->seed);
  tbc_json_key(b, &first, "batch");
  if (r->has_batch) {
    tbc_buf_add(b, "{\"input\":");
    tbc_json_string(b, r->batch_input);
    tbc_buf_add(b, ",\"dim\":");
    tbc_json_string(b, r->batch_dim);
    tbc_buf_addf(b, ",\"size\":%lld}", (long long)r->batch);
  } else {
    tbc_buf_add(b, "null");
  }
  tbc_json_key(b, &first, "cost_per_hour_usd");
  if (r->has_cost) tbc_buf_addf(b, "%.6f", r->cost_per_hour);
  else tbc_buf_add(b, "null");
  tbc_json_key(b, &first, "notes");
  tbc_buf_add(b, "[");
  for (size_t i = 0; i < r->notes.count; i++) {
    if (i) tbc_buf_add(b, ",");
    tbc_json_string(b, r->notes.text[i]);
  }
  tbc_buf_add(b, "]");
  int cheapest = tbc_bench_cheapest(r);
  tbc_json_key(b, &first, "results");
  tbc_buf_add(b, "[");
  for (size_t i = 0; i < r->row_count; i++) {
    if (i) tbc_buf_add(b, ",");
    row_json(r, &r->rows[i], cheapest, b);
  }
  tbc_buf_add(b, "]");
  tbc_json_key(b, &first, "cheapest");
  if (r->has_cost && cheapest >= 0) {
    const tbc_bench_row *c = &r->rows[cheapest];
    tbc_buf_add(b, "{\"device\":");
    tbc_json_string(b, c->device);
    tbc_buf_addf(b, ",\"level\":\"%s\",\"cost_per_million_usd\":%.6f}", tb_opt_level_name(c->level),
                 c->cost_per_million);
  } else {
    tbc_buf_add(b, "null");
  }
  tbc_buf_add(b, "}");
}
