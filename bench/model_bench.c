/* One configuration of the model-set benchmark (bench/models/, docs/benchmarking.md "Model set"): load an
 * ONNX model, prepare it on the CPU at a level with a thread count, feed it the inputs in DIR/<input>.npy,
 * run it W times untimed and N times timed, save the last run's outputs as OUTDIR/<output>.npy and print
 * one JSON object: the latencies (every timed run, sorted, and their median, p90, min, mean; and the
 * process's CPU time of each run, in run order: on a loaded machine it leaves out the time other
 * processes held the core), the precision preparation picked, the tolerance the library's table gives
 * for it, and this process's peak resident memory (VmHWM and ru_maxrss) after loading, after preparing
 * and at the end. Run one configuration per process so the peak is its own.
 * Only the public API (the headers in include/tensorbridge/).
 * Usage: model_bench MODEL --inputs DIR [--outputs DIR] [--level O2] [--threads N] [--precision P]
 *                    [--warmup W] [--runs N] */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>
#include "bench_util.h"

enum { MAX_IO = 64 };

typedef struct options {
  const char *model, *inputs, *outputs, *level, *precision;
  int threads, warmup, runs;
} options;

typedef struct io_set {
  size_t count;
  const char *names[MAX_IO];
  tb_tensor *tensors[MAX_IO];
} io_set;

static int usage(const char *why) {
  fprintf(stderr,
          "model_bench: %s\nusage: model_bench MODEL --inputs DIR [--outputs DIR] [--level O0..O3] "
          "[--threads N] [--precision auto|fp32|bf16] [--warmup W] [--runs N]\n",
          why);
  return 2;
}

static bool parse_int(const char *text, int min, int *out) {
  char *end = NULL;
  long v = strtol(text, &end, 10);
  if (end == text || *end != '\0' || v < min || v > 1000000) return false;
  *out = (int)v;
  return true;
}

static int parse_args(int argc, char **argv, options *o) {
  *o = (options){NULL, NULL, NULL, "O2", "auto", 1, 3, 20};
  for (int i = 1; i < argc; i++) {
    const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
    bool valued = strncmp(a, "--", 2) == 0;
    if (valued && !v) return usage("an option is missing its value");
    if (strcmp(a, "--inputs") == 0) o->inputs = v;
    else if (strcmp(a, "--outputs") == 0) o->outputs = v;
    else if (strcmp(a, "--level") == 0) o->level = v;
    else if (strcmp(a, "--precision") == 0) o->precision = v;
    else if (strcmp(a, "--threads") == 0) { if (!parse_int(v, 1, &o->threads)) return usage("--threads wants N >= 1"); }
    else if (strcmp(a, "--warmup") == 0) { if (!parse_int(v, 0, &o->warmup)) return usage("--warmup wants N >= 0"); }
    else if (strcmp(a, "--runs") == 0) { if (!parse_int(v, 1, &o->runs)) return usage("--runs wants N >= 1"); }
    else if (valued) return usage("unknown option");
    else if (!o->model) { o->model = a; continue; }
    else return usage("more than one model given");
    i++;
  }
  if (!o->model || !o->inputs) return usage("a model and --inputs DIR are required");
  return 0;
}

/* This process's peak resident set in bytes: VmHWM from /proc/self/status, 0 when it cannot be read. */
static uint64_t vm_hwm_bytes(void) {
  FILE *f = fopen("/proc/self/status", "r");
  if (!f) return 0;
  char line[256];
  unsigned long long kib = 0;
  while (fgets(line, sizeof line, f))
    if (sscanf(line, "VmHWM: %llu kB", &kib) == 1) break;
  fclose(f);
  return (uint64_t)kib * 1024;
}

static uint64_t maxrss_bytes(void) {
  struct rusage ru;
  return getrusage(RUSAGE_SELF, &ru) == 0 ? (uint64_t)ru.ru_maxrss * 1024 : 0;
}

static void io_free(io_set *s) {
  for (size_t i = 0; i < s->count; i++) tb_tensor_destroy(s->tensors[i]);
  s->count = 0;
}

static int fail(const char *step, const char *what) {
  fprintf(stderr, "model_bench: %s %s: %s\n", step, what ? what : "", tb_last_error());
  return 1;
}

/* Every graph input from DIR/<name>.npy. */
static int load_inputs(const tb_model *model, tb_backend *cpu, const char *dir, io_set *in) {
  size_t n = tb_model_input_count(model);
  if (n > MAX_IO) return fail("inputs", "more than 64");
  for (size_t i = 0; i < n; i++) {
    tb_model_io io = {.size = sizeof io};
    if (tb_model_input(model, i, &io) != TB_OK) return fail("input", "description");
    char path[4096];
    snprintf(path, sizeof path, "%s/%s.npy", dir, io.name);
    in->names[in->count] = io.name;
    if (tb_npy_load(path, cpu, &in->tensors[in->count]) != TB_OK) return fail("loading", path);
    in->count++;
  }
  return 0;
}

static int save_outputs(const tb_model *model, const io_set *out, const char *dir) {
  for (size_t i = 0; i < out->count; i++) {
    tb_model_io io = {.size = sizeof io};
    if (tb_model_output(model, i, &io) != TB_OK) return fail("output", "description");
    char path[4096];
    snprintf(path, sizeof path, "%s/%s.npy", dir, io.name);
    if (tb_npy_save(path, out->tensors[i]) != TB_OK) return fail("saving", path);
  }
  return 0;
}

/* This process's CPU time (every thread, spinning pool workers included: meaningful at 1 thread only) in
   seconds. */
static double cpu_now(void) {
  struct timespec ts;
  clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
  return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

/* ms: the wall times, cpu: the CPU times of the same runs (o->runs each). */
static void print_json(const options *o, const tb_prepare_result *r, const tb_tolerance *tol, double *ms,
                       const double *cpu, const uint64_t rss[3]) {
  double mean = 0, cpu_min = cpu[0];
  for (int i = 1; i < o->runs; i++) cpu_min = cpu[i] < cpu_min ? cpu[i] : cpu_min;
  for (int i = 0; i < o->runs; i++) mean += ms[i] / o->runs;
  bench_times t = bench_summarize(ms, (size_t)o->runs); /* sorts ms */
  bench_buf b = {0};
  bench_buf_addf(&b, "{\"times_ms\": [");
  for (int i = 0; i < o->runs; i++) bench_buf_addf(&b, "%s%.6f", i ? ", " : "", ms[i]);
  bench_buf_addf(&b, "], \"cpu_times_ms\": [");
  for (int i = 0; i < o->runs; i++) bench_buf_addf(&b, "%s%.6f", i ? ", " : "", cpu[i]);
  bench_buf_addf(&b, "], \"cpu_min_ms\": %.6f, ", cpu_min);
  bench_buf_addf(&b, "\"runner\": \"tensorbridge\", \"model\": ");
  bench_buf_json_string(&b, o->model);
  bench_buf_addf(&b, ", \"level\": \"%s\", \"precision\": \"%s\", \"threads\": %d, \"warmup\": %d, \"runs\": %d",
                 tb_opt_level_name(r->level), tb_precision_name(r->precision), o->threads, o->warmup, o->runs);
  bench_buf_addf(&b, ", \"median_ms\": %.6f, \"p90_ms\": %.6f, \"min_ms\": %.6f, \"mean_ms\": %.6f", t.median, t.p90,
                 ms[0], mean);
  bench_buf_addf(&b, ", \"prepare_ms\": %.3f, \"nodes_before\": %zu, \"nodes_after\": %zu, \"fused_nodes\": %zu",
                 r->prepare_ms, r->nodes_before, r->nodes_after, r->fused_nodes);
  bench_buf_addf(&b, ", \"rtol\": %g, \"atol\": %g", tol->rtol, tol->atol);
  bench_buf_addf(&b, ", \"rss_after_load_bytes\": %llu, \"rss_after_prepare_bytes\": %llu",
                 (unsigned long long)rss[0], (unsigned long long)rss[1]);
  bench_buf_addf(&b, ", \"peak_rss_bytes\": %llu, \"ru_maxrss_bytes\": %llu}\n", (unsigned long long)rss[2],
                 (unsigned long long)maxrss_bytes());
  if (!b.failed) fputs(b.data, stdout);
  bench_buf_free(&b);
}

static int bench(const options *o, tb_model *model, tb_backend *cpu) {
  uint64_t rss[3] = {vm_hwm_bytes(), 0, 0};
  tb_opt_level level;
  tb_precision precision;
  if (tb_opt_level_parse(o->level, &level) != TB_OK) return fail("--level", o->level);
  if (tb_precision_parse(o->precision, &precision) != TB_OK) return fail("--precision", o->precision);
  io_set in = {0}, out = {0};
  tb_prepared *p = NULL;
  const tb_prepare_result *r = NULL;
  double *ms = calloc(2 * (size_t)o->runs, sizeof *ms), *cpu_ms = ms ? ms + o->runs : NULL;
  tb_prepare_options po = {.size = sizeof po, .level = level, .precision = precision, .threads = o->threads};
  int rc = ms ? load_inputs(model, cpu, o->inputs, &in) : fail("allocating", "timings");
  if (rc == 0 && tb_model_prepare(model, cpu, &po, &p, &r) != TB_OK) rc = fail("prepare", o->model);
  rss[1] = vm_hwm_bytes();
  out.count = tb_model_output_count(model);
  if (out.count > MAX_IO) {
    out.count = 0;
    if (rc == 0) rc = fail("outputs", "more than 64");
  }
  for (int i = 0; rc == 0 && i < o->warmup + o->runs; i++) {
    for (size_t j = 0; j < out.count; j++) tb_tensor_destroy(out.tensors[j]);
    double c0 = cpu_now(), t0 = bench_now(); /* the CPU window holds the wall window */
    if (tb_prepared_run(p, in.count, in.names, in.tensors, out.count, NULL, out.tensors) != TB_OK) {
      for (size_t j = 0; j < out.count; j++) out.tensors[j] = NULL;
      rc = fail("run", o->model);
    } else if (i >= o->warmup) {
      ms[i - o->warmup] = (bench_now() - t0) * 1e3;
      cpu_ms[i - o->warmup] = (cpu_now() - c0) * 1e3;
    }
  }
  tb_tolerance tol = {.size = sizeof tol};
  if (rc == 0 && tb_tolerance_lookup(TB_BACKEND_CPU, r->precision, r->level, &tol) != TB_OK)
    rc = fail("tolerance", "lookup");
  if (rc == 0 && o->outputs) rc = save_outputs(model, &out, o->outputs);
  rss[2] = vm_hwm_bytes();
  if (rc == 0) print_json(o, r, &tol, ms, cpu_ms, rss);
  io_free(&out);
  io_free(&in);
  tb_prepared_destroy(p);
  free(ms);
  return rc;
}

int main(int argc, char **argv) {
  options o;
  int rc = parse_args(argc, argv, &o);
  if (rc) return rc;
  tb_model *model = NULL;
  tb_backend *cpu = NULL;
  if (tb_model_load(o.model, &model) != TB_OK) return fail("loading", o.model);
  if (tb_backend_create("cpu", &cpu) != TB_OK) rc = fail("creating", "the cpu backend");
  if (rc == 0) rc = bench(&o, model, cpu);
  tb_backend_destroy(cpu);
  tb_model_destroy(model);
  return rc;
}
