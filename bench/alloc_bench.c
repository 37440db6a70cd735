/* bench/alloc_bench: allocator throughput. The same sequence of alloc/free pairs of mixed sizes (256 B to
 * 8 MiB, 32 allocations alive at a time, a fixed pseudo-random order) goes through tb_tensor_create/destroy
 * of u8 tensors on each backend (the caching allocator) and through the API's plain allocation call
 * (plain_alloc.h) in the same run; each is repeated and the median and p90 time per pair are reported,
 * with their ratio. Only the public API, and the vendor runtime through dlopen. See bench/README.md. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <tensorbridge/tensorbridge.h>
#include "bench_util.h"
#include "plain_alloc.h"

#define MAX_BACKENDS 16
#define SLOTS 32
#define REPEATS 7
#define MIN_SHIFT 8  /* 256 B */
#define MAX_SHIFT 22 /* up to 2 * 4 MiB */

typedef struct workload {
  size_t pairs;
  size_t *sizes;     /* size of allocation i */
  unsigned *slots;   /* the slot it replaces */
} workload;

typedef struct result {
  bench_times tensor, plain; /* seconds per pair */
  bool plain_ok;
  char plain_name[64];
  char plain_why[512];
  tb_memory_stats stats; /* after the tensor runs, before empty_cache */
} result;

static const char usage[] =
    "Usage: alloc_bench [BACKEND|DEVICE ...] [--pairs N] [--json]\n"
    "\n"
    "Alloc/free pairs of mixed sizes (256 B .. 8 MiB, 32 alive at a time) through tb_tensor_create/destroy\n"
    "on each backend named (default: every available backend) and through the API's plain allocation\n"
    "call (CPU: malloc/free; OpenCL: clCreateBuffer/clReleaseMemObject; Vulkan: vkAllocateMemory/\n"
    "vkFreeMemory), in the same run. --pairs (default 20000) per repetition; 1 warm-up and 7 timed\n"
    "repetitions; median and p90 nanoseconds per pair and the ratio plain/tensor (above 1: the caching\n"
    "allocator is faster).\n";

/* A fixed pseudo-random sequence (an LCG), so every run and every API sees the same workload. */
static uint64_t next_random(uint64_t *state) {
  *state = *state * 6364136223846793005ull + 1442695040888963407ull;
  return *state >> 33;
}

static bool make_workload(size_t pairs, workload *w) {
  w->pairs = pairs;
  w->sizes = malloc(pairs * sizeof *w->sizes);
  w->slots = malloc(pairs * sizeof *w->slots);
  if (!w->sizes || !w->slots) return false;
  uint64_t state = 42;
  for (size_t i = 0; i < pairs; i++) {
    unsigned shift = MIN_SHIFT + (unsigned)(next_random(&state) % (MAX_SHIFT - MIN_SHIFT + 1));
    w->sizes[i] = ((size_t)1 << shift) + (size_t)(next_random(&state) % ((uint64_t)1 << shift));
    w->slots[i] = (unsigned)(next_random(&state) % SLOTS);
  }
  return true;
}

static void free_workload(workload *w) {
  free(w->sizes);
  free(w->slots);
}

/* One pass of the workload through tensors; seconds per pair, or < 0 on failure (message printed). */
static double tensor_pass(tb_backend *backend, const workload *w) {
  tb_tensor *live[SLOTS] = {0};
  tb_status st = TB_OK;
  double t0 = bench_now();
  for (size_t i = 0; i < w->pairs && st == TB_OK; i++) {
    unsigned s = w->slots[i];
    tb_tensor_destroy(live[s]);
    live[s] = NULL;
    int64_t shape[1] = {(int64_t)w->sizes[i]};
    st = tb_tensor_create(backend, TB_DTYPE_U8, 1, shape, &live[s]);
  }
  for (unsigned s = 0; s < SLOTS; s++) tb_tensor_destroy(live[s]);
  double t1 = bench_now();
  if (st != TB_OK) {
    fprintf(stderr, "alloc_bench: tb_tensor_create failed: %s (%s)\n", tb_last_error(), tb_status_str(st));
    return -1;
  }
  return (t1 - t0) / (double)w->pairs;
}

static double plain_pass(const plain_alloc *p, const workload *w) {
  void *live[SLOTS] = {0};
  bool ok = true;
  double t0 = bench_now();
  for (size_t i = 0; i < w->pairs && ok; i++) {
    unsigned s = w->slots[i];
    if (live[s]) p->release(p->state, live[s]);
    live[s] = p->alloc(p->state, w->sizes[i]);
    ok = live[s] != NULL;
  }
  for (unsigned s = 0; s < SLOTS; s++)
    if (live[s]) p->release(p->state, live[s]);
  double t1 = bench_now();
  if (!ok) {
    fprintf(stderr, "alloc_bench: %s failed\n", p->name);
    return -1;
  }
  return (t1 - t0) / (double)w->pairs;
}

/* Warm-up, then REPEATS timed passes of each, alternating tensor and plain. false on failure. */
static bool measure(tb_backend *backend, const workload *w, result *r) {
  plain_alloc plain;
  r->plain_ok = plain_alloc_open(tb_backend_device(backend), &plain, r->plain_why, sizeof r->plain_why);
  if (r->plain_ok) snprintf(r->plain_name, sizeof r->plain_name, "%s", plain.name);
  double tensor[REPEATS], plain_times[REPEATS];
  bool ok = tensor_pass(backend, w) >= 0 && (!r->plain_ok || plain_pass(&plain, w) >= 0);
  for (int i = 0; i < REPEATS && ok; i++) {
    tensor[i] = tensor_pass(backend, w);
    plain_times[i] = r->plain_ok ? plain_pass(&plain, w) : 0;
    ok = tensor[i] >= 0 && plain_times[i] >= 0;
  }
  if (r->plain_ok) plain_alloc_close(&plain);
  if (!ok) return false;
  r->tensor = bench_summarize(tensor, REPEATS);
  if (r->plain_ok) r->plain = bench_summarize(plain_times, REPEATS);
  memset(&r->stats, 0, sizeof r->stats);
  r->stats.size = sizeof r->stats;
  tb_backend_memory_stats(backend, &r->stats);
  tb_backend_empty_cache(backend);
  return true;
}

/* ---- output ----------------------------------------------------------------------------------- */

static void print_header(void) {
  printf("%-9s %-34s %8s  %9s %9s  %9s %9s  %11s  %s\n", "DEVICE", "PLAIN CALL", "PAIRS", "tb ns", "tb p90",
         "plain ns", "plain p90", "plain/tb", "driver allocs by tb");
}

static void print_result(const tb_device_info *d, const workload *w, const result *r) {
  char plain[4][32] = {"-", "-", "-", "-"};
  if (r->plain_ok) {
    snprintf(plain[0], sizeof plain[0], "%.0f", r->plain.median * 1e9);
    snprintf(plain[1], sizeof plain[1], "%.0f", r->plain.p90 * 1e9);
    snprintf(plain[2], sizeof plain[2], "%.2f", r->plain.median / r->tensor.median);
  }
  snprintf(plain[3], sizeof plain[3], "%llu of %llu", (unsigned long long)r->stats.num_device_allocs,
           (unsigned long long)r->stats.num_allocs);
  printf("%-9s %-34s %8zu  %9.0f %9.0f  %9s %9s  %11s  %s\n", d->device, r->plain_ok ? r->plain_name : "(none)",
         w->pairs, r->tensor.median * 1e9, r->tensor.p90 * 1e9, plain[0], plain[1], plain[2], plain[3]);
  if (!r->plain_ok) printf("  plain call not measured: %s\n", r->plain_why);
}

static void json_result(bench_buf *b, const char *request, const tb_device_info *d, const workload *w, const result *r) {
  bench_buf_addf(b, "{\"request\":");
  bench_buf_json_string(b, request);
  bench_buf_addf(b, ",\"device\":");
  bench_buf_json_string(b, d->device);
  bench_buf_addf(b, ",\"name\":");
  bench_buf_json_string(b, d->name);
  bench_buf_addf(b, ",\"pairs\":%zu,\"repeats\":%d,\"tensor_ns_per_pair\":{\"median\":%.1f,\"p90\":%.1f}", w->pairs,
                 REPEATS, r->tensor.median * 1e9, r->tensor.p90 * 1e9);
  bench_buf_addf(b, ",\"driver_allocs\":%llu,\"tensor_allocs\":%llu,\"peak_reserved_bytes\":%llu",
                 (unsigned long long)r->stats.num_device_allocs, (unsigned long long)r->stats.num_allocs,
                 (unsigned long long)r->stats.peak_reserved);
  bench_buf_addf(b, ",\"plain_call\":");
  if (r->plain_ok) {
    bench_buf_json_string(b, r->plain_name);
    bench_buf_addf(b, ",\"plain_ns_per_pair\":{\"median\":%.1f,\"p90\":%.1f},\"plain_vs_tensor\":%.4f}",
                   r->plain.median * 1e9, r->plain.p90 * 1e9, r->plain.median / r->tensor.median);
  } else {
    bench_buf_addf(b, "null,\"plain_not_measured\":");
    bench_buf_json_string(b, r->plain_why);
    bench_buf_addf(b, "}");
  }
}

static bool run_backend(const char *request, const workload *w, bench_buf *json, bool first) {
  if (json && !first) bench_buf_addf(json, ",\n");
  tb_backend *backend = NULL;
  tb_status st = tb_backend_create(request, &backend);
  if (st != TB_OK) {
    fprintf(stderr, "alloc_bench: %s: %s (%s)\n", request, tb_last_error(), tb_status_str(st));
    if (json) {
      bench_buf_addf(json, "{\"request\":");
      bench_buf_json_string(json, request);
      bench_buf_addf(json, ",\"error\":");
      bench_buf_json_string(json, tb_last_error());
      bench_buf_addf(json, ",\"status\":\"%s\"}", tb_status_str(st));
    }
    return false;
  }
  result r;
  memset(&r, 0, sizeof r);
  bool ok = measure(backend, w, &r);
  if (ok && json) json_result(json, request, tb_backend_device(backend), w, &r);
  if (!ok && json) {
    bench_buf_addf(json, "{\"request\":");
    bench_buf_json_string(json, request);
    bench_buf_addf(json, ",\"error\":\"the measurement failed; see stderr\",\"status\":\"TB_ERR_INTERNAL\"}");
  }
  if (ok && !json) print_result(tb_backend_device(backend), w, &r);
  fflush(stdout);
  tb_backend_destroy(backend);
  return ok;
}

int main(int argc, char **argv) {
  bool json_out = false;
  size_t pairs = 20000;
  char *positional[MAX_BACKENDS];
  int positional_count = 0;
  for (int i = 1; i < argc; i++) {
    if (strcmp(argv[i], "-h") == 0 || strcmp(argv[i], "--help") == 0) {
      fputs(usage, stdout);
      return 0;
    } else if (strcmp(argv[i], "--json") == 0) {
      json_out = true;
    } else if (strcmp(argv[i], "--pairs") == 0 && i + 1 < argc && atol(argv[i + 1]) >= 100) {
      pairs = (size_t)atol(argv[++i]);
    } else if (argv[i][0] != '-' && positional_count < MAX_BACKENDS) {
      positional[positional_count++] = argv[i];
    } else {
      fprintf(stderr, "alloc_bench: bad argument '%s' (--pairs takes a number >= 100)\n%s", argv[i], usage);
      return 2;
    }
  }
  const char *requests[MAX_BACKENDS];
  size_t request_count = bench_backends(positional_count, positional, requests, MAX_BACKENDS);
  workload w;
  if (!make_workload(pairs, &w)) {
    fprintf(stderr, "alloc_bench: out of host memory\n");
    free_workload(&w);
    return 1;
  }
  bench_buf json = {0};
  if (json_out)
    bench_buf_addf(&json, "{\"benchmark\":\"alloc\",\"slots\":%d,\"min_bytes\":%u,\"max_bytes\":%u,\"backends\":[\n",
                   SLOTS, 1u << MIN_SHIFT, (2u << MAX_SHIFT) - 1);
  else
    print_header();
  size_t worked = 0;
  for (size_t i = 0; i < request_count; i++) worked += run_backend(requests[i], &w, json_out ? &json : NULL, i == 0);
  if (json_out) {
    bench_buf_addf(&json, "\n]}");
    if (json.failed)
      fprintf(stderr, "alloc_bench: out of memory while writing JSON\n");
    else
      printf("%s\n", json.data);
  }
  bench_buf_free(&json);
  free_workload(&w);
  return worked ? 0 : 1;
}
