/* bench/bandwidth: host->device and device->host copy bandwidth of each backend (tb_tensor_copy_from_host
 * and tb_tensor_copy_to_host of u8 tensors), for sizes 4 KiB .. 256 MiB, against plain memcpy between
 * two host buffers measured in the same run, interleaved run by run. Median and p90 in GB/s (10^9 B/s);
 * the p90 column is the bandwidth of the 90th-percentile (slow) time: 90% of runs were at least that fast.
 * A CUDA device is measured twice in the same run, its copies straight from pageable memory (TB_CUDA_STAGING=off)
 * and through the backend's pinned staging buffers (the default), one after the other, so the two rates compare.
 * Only the public API. See bench/README.md. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <tensorbridge/tensorbridge.h>
#include "bench_util.h"

#define MAX_BACKENDS 16
#define MAX_RUNS 200
#define WARMUP_RUNS 2
#define BATCH_BYTES ((size_t)256 << 10)

typedef struct options {
  size_t min_bytes, max_bytes;
  int min_runs;
  bool json;
  const char *requests[MAX_BACKENDS];
  size_t request_count;
} options;

typedef struct size_result {
  size_t bytes;
  int runs;  /* timed samples */
  int batch; /* copies per sample */
  bench_times h2d, d2h, host; /* seconds per copy */
} size_result;

static const char usage[] =
    "Usage: bandwidth [BACKEND|DEVICE ...] [--min SIZE] [--max SIZE] [--runs N] [--json]\n"
    "\n"
    "Host->device and device->host copy bandwidth of each backend named (default: every available\n"
    "backend), against memcpy between two host buffers in the same run. Sizes go from --min (default\n"
    "4K) to --max (default 256M) by factors of 4; each size has 2 warm-up copies and at least --runs\n"
    "(default 10, at least 10) timed samples in each direction (more for small sizes, up to 200); a\n"
    "sample below 256 KiB times a batch of copies adding up to 256 KiB (the RUNSxN column). A CUDA device\n"
    "is measured without and with pinned staging (TB_CUDA_STAGING=off, then on).\n";

static int parse_options(int argc, char **argv, options *o) {
  memset(o, 0, sizeof *o);
  o->min_bytes = 4u << 10;
  o->max_bytes = 256u << 20;
  o->min_runs = 10;
  char *positional[MAX_BACKENDS];
  int positional_count = 0;
  for (int i = 1; i < argc; i++) {
    const char *a = argv[i];
    bool has_value = i + 1 < argc;
    if (strcmp(a, "-h") == 0 || strcmp(a, "--help") == 0) {
      fputs(usage, stdout);
      return 0;
    } else if (strcmp(a, "--json") == 0) {
      o->json = true;
    } else if (strcmp(a, "--min") == 0 && has_value && bench_parse_size(argv[i + 1], &o->min_bytes)) {
      i++;
    } else if (strcmp(a, "--max") == 0 && has_value && bench_parse_size(argv[i + 1], &o->max_bytes)) {
      i++;
    } else if (strcmp(a, "--runs") == 0 && has_value && atoi(argv[i + 1]) >= 10 && atoi(argv[i + 1]) <= MAX_RUNS) {
      o->min_runs = atoi(argv[++i]);
    } else if (a[0] != '-' && positional_count < MAX_BACKENDS) {
      positional[positional_count++] = argv[i];
    } else {
      fprintf(stderr, "bandwidth: bad argument '%s' (sizes like 4K or 256M, --runs 10..%d)\n%s", a, MAX_RUNS, usage);
      return 2;
    }
  }
  if (o->min_bytes > o->max_bytes) {
    fprintf(stderr, "bandwidth: --min is larger than --max\n");
    return 2;
  }
  o->request_count = bench_backends(positional_count, positional, o->requests, MAX_BACKENDS);
  if (o->request_count == 0) {
    fprintf(stderr, "bandwidth: no backend to measure\n");
    return 1;
  }
  return -1; /* go on */
}

/* More runs for small copies (their times are short and noisy), never fewer than min_runs. */
static int runs_for(size_t bytes, int min_runs) {
  size_t runs = (size_t)(64u << 20) / bytes;
  if (runs > MAX_RUNS) runs = MAX_RUNS;
  return runs < (size_t)min_runs ? min_runs : (int)runs;
}

/* Copies per timed sample: small copies are batched so that a sample lasts well above the clock's
 * resolution (a 4 KiB copy takes tens of nanoseconds). */
static int batch_for(size_t bytes) { return bytes >= BATCH_BYTES ? 1 : (int)(BATCH_BYTES / bytes); }

/* Measure one size on `backend`: each sample times `batch` copies host->device, then as many device->host,
 * then as many memcpy. The device copy is checked against the source once before timing. */
static tb_status measure_size(tb_backend *backend, size_t bytes, int runs, unsigned char *src, unsigned char *dst,
                              size_result *out) {
  int64_t shape[1] = {(int64_t)bytes};
  tb_tensor *t = NULL;
  tb_status st = tb_tensor_create(backend, TB_DTYPE_U8, 1, shape, &t);
  if (st != TB_OK) return st;
  for (int i = 0; i < WARMUP_RUNS && st == TB_OK; i++) {
    st = tb_tensor_copy_from_host(t, src, bytes);
    if (st == TB_OK) st = tb_tensor_copy_to_host(t, dst, bytes);
    memcpy(dst, src, bytes);
  }
  if (st == TB_OK) {
    memset(dst, 0, bytes);
    st = tb_tensor_copy_to_host(t, dst, bytes);
    if (st == TB_OK && memcmp(dst, src, bytes) != 0) {
      fprintf(stderr, "bandwidth: the %zu bytes read back differ from those written\n", bytes);
      st = TB_ERR_INTERNAL;
    }
  }
  int batch = batch_for(bytes);
  double h2d[MAX_RUNS], d2h[MAX_RUNS], host[MAX_RUNS];
  for (int i = 0; i < runs && st == TB_OK; i++) {
    double t0 = bench_now();
    for (int k = 0; k < batch && st == TB_OK; k++) st = tb_tensor_copy_from_host(t, src, bytes);
    double t1 = bench_now();
    for (int k = 0; k < batch && st == TB_OK; k++) st = tb_tensor_copy_to_host(t, dst, bytes);
    double t2 = bench_now();
    for (int k = 0; k < batch; k++) {
      memcpy(dst, src, bytes);
      __asm__ volatile("" ::: "memory"); /* keep every copy: dst is not read in between */
    }
    double t3 = bench_now();
    h2d[i] = (t1 - t0) / batch;
    d2h[i] = (t2 - t1) / batch;
    host[i] = (t3 - t2) / batch;
  }
  tb_tensor_destroy(t);
  if (st != TB_OK) return st;
  out->bytes = bytes;
  out->runs = runs;
  out->batch = batch;
  out->h2d = bench_summarize(h2d, (size_t)runs);
  out->d2h = bench_summarize(d2h, (size_t)runs);
  out->host = bench_summarize(host, (size_t)runs);
  return TB_OK;
}

/* ---- output ----------------------------------------------------------------------------------- */

static void print_header(const tb_device_info *d, const char *request, const char *staging) {
  printf("\n%s (%s, requested as '%s'%s%s)\n", d->device, d->name[0] ? d->name : "-", request, staging ? ", staging " : "",
         staging ? staging : "");
  printf("%-9s %8s  %9s %9s  %9s %9s  %9s %9s  %8s %8s\n", "SIZE", "RUNSxN", "H2D med", "H2D p90", "D2H med",
         "D2H p90", "memcpy", "memcpy90", "H2D/mcp", "D2H/mcp");
}

static void print_row(const size_result *r) {
  char size[32];
  bench_format_size(r->bytes, size, sizeof size);
  double host = bench_gbps(r->bytes, r->host.median);
  char runs[32];
  snprintf(runs, sizeof runs, "%dx%d", r->runs, r->batch);
  printf("%-9s %8s  %9.2f %9.2f  %9.2f %9.2f  %9.2f %9.2f  %8.2f %8.2f\n", size, runs,
         bench_gbps(r->bytes, r->h2d.median), bench_gbps(r->bytes, r->h2d.p90), bench_gbps(r->bytes, r->d2h.median),
         bench_gbps(r->bytes, r->d2h.p90), host, bench_gbps(r->bytes, r->host.p90),
         bench_gbps(r->bytes, r->h2d.median) / host, bench_gbps(r->bytes, r->d2h.median) / host);
}

static void json_times(bench_buf *b, const char *key, size_t bytes, bench_times t) {
  bench_buf_addf(b, "\"%s\":{\"median_gbps\":%.4f,\"p90_gbps\":%.4f,\"median_seconds\":%.6g,\"p90_seconds\":%.6g}",
                 key, bench_gbps(bytes, t.median), bench_gbps(bytes, t.p90), t.median, t.p90);
}

static void json_row(bench_buf *b, const size_result *r, bool first) {
  double host = bench_gbps(r->bytes, r->host.median);
  bench_buf_addf(b, "%s{\"bytes\":%zu,\"runs\":%d,\"copies_per_run\":%d,", first ? "" : ",", r->bytes, r->runs,
                 r->batch);
  json_times(b, "host_to_device", r->bytes, r->h2d);
  bench_buf_addf(b, ",");
  json_times(b, "device_to_host", r->bytes, r->d2h);
  bench_buf_addf(b, ",");
  json_times(b, "memcpy", r->bytes, r->host);
  bench_buf_addf(b, ",\"host_to_device_vs_memcpy\":%.4f,\"device_to_host_vs_memcpy\":%.4f}",
                 bench_gbps(r->bytes, r->h2d.median) / host, bench_gbps(r->bytes, r->d2h.median) / host);
}

static void json_error(bench_buf *b, const char *request, tb_status st, const char *message) {
  bench_buf_addf(b, "{\"request\":");
  bench_buf_json_string(b, request);
  bench_buf_addf(b, ",\"error\":");
  bench_buf_json_string(b, message);
  bench_buf_addf(b, ",\"status\":\"%s\"}", tb_status_str(st));
}

/* Measure every size on one backend request. Returns true when it worked. */
static bool run_backend(const options *o, const char *request, const char *staging, unsigned char *src, unsigned char *dst,
                        bench_buf *json, bool first) {
  tb_backend *backend = NULL;
  tb_status st = tb_backend_create(request, &backend);
  if (json && !first) bench_buf_addf(json, ",\n");
  if (st != TB_OK) {
    fprintf(stderr, "bandwidth: %s: %s (%s)\n", request, tb_last_error(), tb_status_str(st));
    if (json) json_error(json, request, st, tb_last_error());
    return false;
  }
  const tb_device_info *d = tb_backend_device(backend);
  if (json) {
    bench_buf_addf(json, "{\"request\":");
    bench_buf_json_string(json, request);
    bench_buf_addf(json, ",\"device\":");
    bench_buf_json_string(json, d->device);
    bench_buf_addf(json, ",\"name\":");
    bench_buf_json_string(json, d->name);
    if (staging) {
      bench_buf_addf(json, ",\"staging\":");
      bench_buf_json_string(json, staging);
    }
    bench_buf_addf(json, ",\"results\":[");
  } else {
    print_header(d, request, staging);
  }
  size_t done = 0;
  for (size_t bytes = o->min_bytes; bytes <= o->max_bytes && st == TB_OK; bytes *= 4) {
    size_result r;
    st = measure_size(backend, bytes, runs_for(bytes, o->min_runs), src, dst, &r);
    if (st != TB_OK) {
      fprintf(stderr, "bandwidth: %s, %zu bytes: %s (%s)\n", d->device, bytes, tb_last_error(), tb_status_str(st));
      break;
    }
    if (json)
      json_row(json, &r, done == 0);
    else
      print_row(&r);
    fflush(stdout);
    done++;
    tb_backend_empty_cache(backend);
    if (bytes > o->max_bytes / 4) break;
  }
  if (json) bench_buf_addf(json, "]}");
  tb_backend_destroy(backend);
  return st == TB_OK;
}

int main(int argc, char **argv) {
  options o;
  int code = parse_options(argc, argv, &o);
  if (code >= 0) return code;
  unsigned char *src = aligned_alloc(4096, (o.max_bytes + 4095) / 4096 * 4096);
  unsigned char *dst = aligned_alloc(4096, (o.max_bytes + 4095) / 4096 * 4096);
  if (!src || !dst) {
    fprintf(stderr, "bandwidth: cannot allocate two host buffers of %zu bytes\n", o.max_bytes);
    free(src);
    free(dst);
    return 1;
  }
  for (size_t i = 0; i < o.max_bytes; i++) src[i] = (unsigned char)(i * 131u + (i >> 12));
  memset(dst, 0, o.max_bytes);
  bench_buf json = {0};
  if (o.json) bench_buf_addf(&json, "{\"benchmark\":\"bandwidth\",\"unit\":\"GB/s (1e9 bytes/s)\",\"backends\":[\n");
  size_t worked = 0;
  const char *saved = getenv("TB_CUDA_STAGING");
  size_t done = 0;
  for (size_t i = 0; i < o.request_count; i++) {
    tb_backend *probe = NULL;
    bool cuda = tb_backend_create(o.requests[i], &probe) == TB_OK && tb_backend_device(probe)->backend == TB_BACKEND_CUDA;
    tb_backend_destroy(probe);
    if (!cuda) {
      worked += run_backend(&o, o.requests[i], NULL, src, dst, o.json ? &json : NULL, done++ == 0);
      continue;
    }
    setenv("TB_CUDA_STAGING", "off", 1); /* read when the backend opens */
    worked += run_backend(&o, o.requests[i], "off", src, dst, o.json ? &json : NULL, done++ == 0);
    unsetenv("TB_CUDA_STAGING");
    worked += run_backend(&o, o.requests[i], "on", src, dst, o.json ? &json : NULL, done++ == 0);
    if (saved) setenv("TB_CUDA_STAGING", saved, 1);
  }
  if (o.json) {
    bench_buf_addf(&json, "\n]}");
    if (json.failed)
      fprintf(stderr, "bandwidth: out of memory while writing JSON\n");
    else
      printf("%s\n", json.data);
  }
  bench_buf_free(&json);
  free(src);
  free(dst);
  return worked ? 0 : 1;
}
