/* `tb bench MODEL`: for each configuration (a backend request x an optimization level) prepare the model
 * (timed), run it --warmup times, then --iters timed runs, and report the latency statistics, throughput,
 * peak memory and time to prepare as a table, JSON (--json) and an SVG chart (--chart); with
 * --cost-per-hour, the cost per million inferences. A configuration that fails keeps its row with the
 * library's sentence and makes the exit code 1; the others still run. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>
#include "args.h"
#include "bench_common.h"
#include "common.h"

static const char help[] =
    "Usage: tb bench MODEL [--backends LIST|all] [--levels LIST] [--precision P] [--threads N]\n"
    "                [--warmup N] [--iters N] [--input NAME=FILE.npy ...] [--dim NAME=N ...] [--seed S]\n"
    "                [--json] [--chart FILE.svg] [--cost-per-hour USD]\n"
    "\n"
    "Benchmark the ONNX file MODEL on each backend at each level: time to prepare, --warmup untimed runs,\n"
    "then --iters timed runs (CLOCK_MONOTONIC, each followed by a synchronize of the backend). Prints the\n"
    "median, p10, p90, mean, standard deviation and fastest run in ms, inferences/s (and samples/s when\n"
    "dimension 0 of the first input is symbolic, a batch), the backend's peak reserved memory and the\n"
    "process's peak resident set. Inputs are made as `tb run` makes them.\n"
    "\n"
    "Options:\n"
    "  --backends LIST     comma-separated requests as `tb select` takes them (cpu,vulkan:0,opencl:0), or\n"
    "                      all: every usable device (default: TB_BACKEND, else auto)\n"
    "  --levels LIST       comma-separated O0..O3 or none, conservative, balanced, aggressive (default O2)\n"
    "  --precision P       auto, fp32, bf16, fp16, fp8, tf32 (default auto: the level's)\n"
    "  --threads N         CPU threads, passed as tb_prepare_options.threads (default 0: TB_NUM_THREADS,\n"
    "                      else the CPUs this process may use)\n"
    "  --warmup N          untimed runs before timing (default 3)\n"
    "  --iters N           timed runs, 1..1000000 (default 20)\n"
    "  --input NAME=FILE   the value of input NAME from a .npy file (repeatable)\n"
    "  --dim NAME=N        the size of the symbolic dimension NAME, e.g. --dim batch=8 (repeatable)\n"
    "  --seed S            seed of the random inputs (default 0)\n"
    "  --json              print the results as JSON (keys in docs/benchmarking.md)\n"
    "  --chart FILE.svg    also write a bar chart of the median latencies with p10-p90 whiskers\n"
    "  --cost-per-hour USD the price of this machine per hour: adds the cost per million inferences,\n"
    "                      USD / 3600 * median seconds * 1e6, and names the cheapest configuration\n"
    "  -h, --help          show this help\n"
    "\n"
    "Exit codes: 0 every configuration ran, 1 one failed (its row says why) or the model is malformed,\n"
    "2 usage error or an unknown backend, level or file, 4 the model cannot be read or the chart written.\n";

typedef struct bench_opts {
  const char *model;
  const char *backends, *levels, *chart;
  tb_precision precision;
  int threads, warmup, iters;
  uint64_t seed;
  tbc_pairs inputs, dims;
  bool json, has_cost;
  double cost_per_hour;
} bench_opts;

/* A whole number in [min, max] (the shared parser, which names the option). */
static int parse_int(const char *option, const char *text, long long min, long long max, long long *out) {
  return tbc_parse_int("bench", option, text, min, max, out);
}

static int set_option(bench_opts *o, const char *name, const char *value) {
  long long n;
  int code = TBC_EXIT_OK;
  if (strcmp(name, "--backends") == 0) o->backends = value;
  else if (strcmp(name, "--levels") == 0) o->levels = value;
  else if (strcmp(name, "--chart") == 0) o->chart = value;
  else if (strcmp(name, "--precision") == 0) {
    if (tb_precision_parse(value, &o->precision) != TB_OK) return tbc_usage("bench", "%s", tb_last_error());
  } else if (strcmp(name, "--threads") == 0) {
    if ((code = parse_int(name, value, 0, 4096, &n)) == TBC_EXIT_OK) o->threads = (int)n;
  } else if (strcmp(name, "--warmup") == 0) {
    if ((code = parse_int(name, value, 0, 1000000, &n)) == TBC_EXIT_OK) o->warmup = (int)n;
  } else if (strcmp(name, "--iters") == 0) {
    if ((code = parse_int(name, value, 1, 1000000, &n)) == TBC_EXIT_OK) o->iters = (int)n;
  } else if (strcmp(name, "--seed") == 0) {
    if ((code = parse_int(name, value, 0, TBC_MAX_SEED, &n)) == TBC_EXIT_OK) o->seed = (uint64_t)n;
  } else if (strcmp(name, "--input") == 0 || strcmp(name, "--dim") == 0) {
    const char *eq = strchr(value, '=');
    if (!eq || eq == value || !eq[1]) return tbc_usage("bench", "'tb bench %s' takes NAME=VALUE, not '%s'", name, value);
    tbc_pairs *pairs = name[2] == 'i' ? &o->inputs : &o->dims;
    code = tbc_pairs_add(pairs, "bench", name, value);
    if (code == TBC_EXIT_OK && pairs == &o->dims)
      code = tbc_parse_dim("bench", pairs->names[pairs->count - 1], pairs->values[pairs->count - 1], &n);
    else if (code == TBC_EXIT_OK)
      code = tbc_check_input_file("bench", value, pairs->values[pairs->count - 1]);
  } else if (strcmp(name, "--cost-per-hour") == 0) {
    char *end;
    double v = strtod(value, &end);
    if (end == value || *end || !(v >= 0) || v > 1e9)
      return tbc_usage("bench", "'tb bench --cost-per-hour' takes a price in US dollars such as 0.70, not '%s'", value);
    o->cost_per_hour = v;
    o->has_cost = true;
  }
  return code;
}

static int bench_option(void *ctx, const char *name, const char *value) { return set_option(ctx, name, value); }

static int parse_options(int argc, char **argv, bench_opts *o, bool *help_only) {
  static const char *const valued[] = {"--backends", "--levels", "--precision", "--threads", "--warmup",
                                       "--iters",    "--input",  "--dim",       "--seed",    "--chart",
                                       "--cost-per-hour"};
  const tbc_option flags[] = {{"--json", &o->json}, {NULL, NULL}};
  int code = tbc_parse_valued("bench", argc, argv, flags, valued, sizeof valued / sizeof valued[0], bench_option, o,
                              &o->model, help_only);
  if (code != TBC_EXIT_OK) return code;
  if (*help_only) return TBC_EXIT_OK;
  if (!o->model) return tbc_usage("bench", "'tb bench' needs a MODEL file");
  return TBC_EXIT_OK;
}

/* ---- configurations ---------------------------------------------------------------------------------- */

typedef struct plan {
  char requests[TBC_BENCH_MAX_ROWS][64];
  size_t request_count;
  tb_opt_level levels[TBC_BENCH_MAX_ROWS];
  size_t level_count;
} plan;

/* Split a comma-separated list into words (empty words are a usage error). */
static int split(const char *option, const char *list, char words[][64], size_t cap, size_t *count) {
  *count = 0;
  const char *p = list;
  for (;;) {
    size_t len = strcspn(p, ",");
    if (len == 0 || len >= 64) return tbc_usage("bench", "'tb bench %s' takes a comma-separated list, not '%s'", option, list);
    if (*count == cap) return tbc_usage("bench", "'tb bench %s' takes at most %zu entries", option, cap);
    memcpy(words[*count], p, len);
    words[(*count)++][len] = '\0';
    if (!p[len]) return TBC_EXIT_OK;
    p += len + 1;
  }
}

/* Check every backend request against discovery (unknown names are usage errors; unavailable ones run
 * and fail in their rows) and every level; expand "all". Also takes the machine's CPU name. */
static int make_plan(const bench_opts *o, tbc_bench_report *report, plan *p) {
  tb_device_list *list = NULL;
  int code = tbc_discover(&list);
  if (code != TBC_EXIT_OK) return code;
  for (size_t i = 0; i < tb_device_list_count(list); i++) {
    const tb_device_info *d = tb_device_list_get(list, i);
    if (d->backend == TB_BACKEND_CPU && !report->machine[0]) snprintf(report->machine, sizeof report->machine, "%s", d->name);
  }
  char words[TBC_BENCH_MAX_ROWS][64];
  size_t count = 0;
  if (!o->backends) {
    tb_selection *sel = NULL;
    tb_status st = tb_select(list, NULL, &sel);
    if (st == TB_OK) snprintf(p->requests[p->request_count++], 64, "%s", tb_selection_device(sel)->device);
    else if (st == TB_ERR_UNAVAILABLE) {
      const char *request = NULL; /* the text tb_select read: TB_BACKEND, else auto */
      tb_request_effective(NULL, &request);
      snprintf(p->requests[p->request_count++], 64, "%s", request);
    } else
      code = tbc_usage("bench", "%s", tb_last_error());
    tb_selection_destroy(sel);
  } else if (strcmp(o->backends, "all") == 0) {
    for (size_t i = 0; i < tb_device_list_count(list) && p->request_count < TBC_BENCH_MAX_ROWS; i++) {
      const tb_device_info *d = tb_device_list_get(list, i);
      if (d->usable && d->index >= 0) snprintf(p->requests[p->request_count++], 64, "%s", d->device);
    }
  } else if ((code = split("--backends", o->backends, words, TBC_BENCH_MAX_ROWS, &count)) == TBC_EXIT_OK) {
    for (size_t i = 0; i < count && code == TBC_EXIT_OK; i++) {
      tb_selection *sel = NULL;
      tb_status st = tb_select(list, words[i], &sel);
      if (st != TB_OK && st != TB_ERR_UNAVAILABLE) code = tbc_usage("bench", "%s", tb_last_error());
      tb_selection_destroy(sel);
      snprintf(p->requests[p->request_count++], 64, "%s", words[i]);
    }
  }
  tb_device_list_destroy(list);
  if (code != TBC_EXIT_OK) return code;
  if ((code = split("--levels", o->levels ? o->levels : "O2", words, 4 * 4, &count)) != TBC_EXIT_OK) return code;
  for (size_t i = 0; i < count; i++)
    if (tb_opt_level_parse(words[i], &p->levels[p->level_count++]) != TB_OK) return tbc_usage("bench", "%s", tb_last_error());
  if (p->request_count * p->level_count > TBC_BENCH_MAX_ROWS)
    return tbc_usage("bench", "'tb bench' measures at most %d configurations, not %zu", TBC_BENCH_MAX_ROWS,
                 p->request_count * p->level_count);
  return TBC_EXIT_OK;
}

/* ---- measuring ------------------------------------------------------------------------------------------ */

static double now_ms(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec / 1e6;
}

static uint64_t process_peak_rss(void) {
  struct rusage ru;
  if (getrusage(RUSAGE_SELF, &ru) != 0) return 0;
  return (uint64_t)ru.ru_maxrss * 1024u; /* Linux reports KiB */
}

typedef struct inputs {
  size_t count;
  const char *names[TBC_RUN_MAX];
  tb_tensor *tensors[TBC_RUN_MAX];
} inputs;

static void inputs_free(inputs *in) {
  for (size_t i = 0; i < in->count; i++) tb_tensor_destroy(in->tensors[i]);
  in->count = 0;
}

/* The model's inputs on `backend`: from --input files, else random as `tb run` makes them. On failure
 * the sentence is in `error`. */
static bool make_inputs(const bench_opts *o, const tb_model *model, tb_backend *backend, tbc_notes *notes,
                        inputs *in, char *error, size_t size) {
  size_t count = tb_model_input_count(model);
  for (size_t i = 0; i < count && i < TBC_RUN_MAX; i++) {
    tb_model_io io = {.size = sizeof io};
    if (tb_model_input(model, i, &io) != TB_OK) {
      snprintf(error, size, "%s", tb_last_error());
      return false;
    }
    in->names[i] = io.name;
    const char *file = tbc_pairs_find(&o->inputs, io.name);
    tb_status st = TB_OK;
    if (file) st = tb_npy_load(file, backend, &in->tensors[i]);
    else if (tbc_random_input("bench", backend, &io, i, o->seed, &o->dims, notes, &in->tensors[i]) != TBC_EXIT_OK)
      st = TB_ERR_INVALID_ARGUMENT;
    if (st != TB_OK) {
      snprintf(error, size, "input '%s': %s", io.name, tb_last_error());
      return false;
    }
    in->count = i + 1;
    if (!file && o->inputs.count)
      tbc_note(notes, "input '%s' not given with --input: random values (seed %llu)", io.name,
               (unsigned long long)o->seed);
  }
  if (count && !o->inputs.count) tbc_note(notes, "inputs are random (seed %llu)", (unsigned long long)o->seed);
  return true;
}

static void destroy_all(tb_tensor **t, size_t n) {
  for (size_t i = 0; i < n; i++) {
    tb_tensor_destroy(t[i]);
    t[i] = NULL;
  }
}

/* Prepare and time one configuration on `backend`; fills row (row->ok false with the sentence on failure). */
static void measure(const bench_opts *o, tb_model *model, tb_backend *backend, const inputs *in, tbc_bench_row *row,
                    double *times) {
  int64_t dim_values[TBC_RUN_MAX];
  for (size_t i = 0; i < o->dims.count; i++) dim_values[i] = strtoll(o->dims.values[i], NULL, 10);
  tb_prepare_options opts = {.size = sizeof opts,
                             .level = row->level,
                             .precision = o->precision,
                             .dim_count = o->dims.count,
                             .dim_names = o->dims.names,
                             .dim_values = dim_values,
                             .threads = o->threads};
  tb_backend_empty_cache(backend);
  tb_backend_reset_peak_memory(backend);
  tb_prepared *prepared = NULL;
  const tb_prepare_result *result = NULL;
  double t0 = now_ms();
  tb_status st = tb_model_prepare(model, backend, &opts, &prepared, &result);
  row->prepare_wall_ms = now_ms() - t0;
  if (st != TB_OK) {
    snprintf(row->error, sizeof row->error, "prepare: %s", tb_last_error());
    return;
  }
  row->prepare_ms = result->prepare_ms;
  snprintf(row->precision, sizeof row->precision, "%s", tb_precision_name(result->precision));
  size_t n_out = tb_model_output_count(model);
  tb_tensor *outs[TBC_RUN_MAX] = {0};
  if (n_out > TBC_RUN_MAX) {
    snprintf(row->error, sizeof row->error, "the model has %zu outputs; tb bench handles at most %d", n_out, TBC_RUN_MAX);
    tb_prepared_destroy(prepared);
    return;
  }
  double *device_ms = calloc((size_t)o->iters + 1, sizeof *device_ms);
  row->has_device_time = device_ms != NULL;
  for (int r = 0; r < o->warmup + o->iters && st == TB_OK; r++) {
    double start = now_ms();
    st = tb_prepared_run(prepared, in->count, in->names, in->tensors, n_out, NULL, outs);
    if (st == TB_OK) st = tb_backend_synchronize(backend);
    double ms = now_ms() - start, gpu = 0;
    if (st == TB_OK && r >= o->warmup && row->has_device_time && tb_prepared_device_ms(prepared, &gpu) == TB_OK)
      device_ms[r - o->warmup] = gpu;
    else if (r >= o->warmup)
      row->has_device_time = false;
    destroy_all(outs, n_out);
    if (st != TB_OK)
      snprintf(row->error, sizeof row->error, "%s run %d: %s", r < o->warmup ? "warm-up" : "timed",
               r < o->warmup ? r + 1 : r - o->warmup + 1, tb_last_error());
    else if (r >= o->warmup) times[r - o->warmup] = ms;
  }
  tb_memory_stats mem = {.size = sizeof mem};
  if (st == TB_OK && tb_backend_memory_stats(backend, &mem) == TB_OK) row->device_peak_reserved = mem.peak_reserved;
  const char *why = "";
  row->graph_capture = tb_prepared_graph_capture(prepared, &why);
  snprintf(row->graph_why, sizeof row->graph_why, "%s", why);
  tb_prepared_destroy(prepared);
  if (st == TB_OK && row->has_device_time) tbc_bench_stats_compute(device_ms, (size_t)o->iters, &row->device_stats);
  free(device_ms);
  if (st != TB_OK) return;
  tbc_bench_stats_compute(times, (size_t)o->iters, &row->stats);
  row->process_peak_rss = process_peak_rss();
  row->ok = true;
}

/* Dimension 0 of the first input is a batch when the model declares it symbolic. */
static void find_batch(const bench_opts *o, const tb_model *model, const inputs *in, tbc_bench_report *report) {
  tb_model_io io = {.size = sizeof io};
  if (tb_model_input_count(model) == 0 || tb_model_input(model, 0, &io) != TB_OK) return;
  if (!io.has_shape || io.ndim < 1 || io.dims[0] >= 0) return;
  int64_t size = 1;
  if (in->count && tb_tensor_ndim(in->tensors[0]) >= 1) size = tb_tensor_shape(in->tensors[0])[0];
  else if (io.dim_names[0] && tbc_pairs_find(&o->dims, io.dim_names[0]))
    size = strtoll(tbc_pairs_find(&o->dims, io.dim_names[0]), NULL, 10);
  report->has_batch = true;
  report->batch = size;
  snprintf(report->batch_input, sizeof report->batch_input, "%s", io.name);
  snprintf(report->batch_dim, sizeof report->batch_dim, "%s", io.dim_names[0] && io.dim_names[0][0] ? io.dim_names[0] : "?");
}

static void fail_rows(tbc_bench_report *report, size_t first, size_t count, const char *error) {
  for (size_t i = first; i < first + count; i++) snprintf(report->rows[i].error, sizeof report->rows[i].error, "%s", error);
}

/* Every configuration of the plan, backend by backend. */
static void run_plan(const bench_opts *o, const plan *p, tb_model *model, tbc_bench_report *report, double *times) {
  for (size_t b = 0; b < p->request_count; b++) {
    size_t first = report->row_count;
    for (size_t l = 0; l < p->level_count; l++) {
      tbc_bench_row *row = &report->rows[report->row_count++];
      snprintf(row->device, sizeof row->device, "%s", p->requests[b]);
      row->level = p->levels[l];
      tb_backend_kind kind;
      char name[64];
      snprintf(name, sizeof name, "%.*s", (int)strcspn(p->requests[b], ":"), p->requests[b]);
      snprintf(row->backend, sizeof row->backend, "%s",
               tb_backend_parse(name, &kind, NULL) == TB_OK ? tb_backend_name(kind) : name);
    }
    tb_backend *backend = NULL;
    if (tb_backend_create(p->requests[b], &backend) != TB_OK) {
      fail_rows(report, first, p->level_count, tb_last_error());
      continue;
    }
    const tb_device_info *dev = tb_backend_device(backend);
    for (size_t i = first; i < report->row_count && dev; i++) {
      snprintf(report->rows[i].device, sizeof report->rows[i].device, "%s", dev->device);
      snprintf(report->rows[i].backend, sizeof report->rows[i].backend, "%s", tb_backend_name(dev->backend));
    }
    inputs in = {.count = 0};
    char error[1024];
    tbc_notes *notes = b == 0 ? &report->notes : &(tbc_notes){.count = 0};
    if (!make_inputs(o, model, backend, notes, &in, error, sizeof error)) {
      fail_rows(report, first, p->level_count, error);
    } else {
      if (b == 0) find_batch(o, model, &in, report);
      for (size_t i = first; i < report->row_count; i++) measure(o, model, backend, &in, &report->rows[i], times);
    }
    inputs_free(&in);
    tb_backend_destroy(backend);
  }
  for (size_t i = 0; i < report->row_count; i++) {
    tbc_bench_row *row = &report->rows[i];
    if (!row->ok) continue;
    row->inferences_per_s = row->stats.median > 0 ? 1000.0 / row->stats.median : 0;
    row->samples_per_s = report->has_batch ? (double)report->batch * row->inferences_per_s : 0;
    if (report->has_cost) row->cost_per_million = tbc_bench_cost_per_million(report->cost_per_hour, row->stats.median);
  }
}

/* Inputs named with --input must exist in the model. */
static int check_input_names(const bench_opts *o, const tb_model *model) {
  for (size_t g = 0; g < o->inputs.count; g++) {
    bool found = false;
    char list[1024] = "";
    for (size_t i = 0; i < tb_model_input_count(model); i++) {
      tb_model_io io = {.size = sizeof io};
      if (tb_model_input(model, i, &io) != TB_OK) continue;
      found |= strcmp(io.name, o->inputs.names[g]) == 0;
      snprintf(list + strlen(list), sizeof list - strlen(list), "%s'%s'", i ? ", " : "", io.name);
    }
    if (!found) {
      tbc_error("the model has no input '%s'; its inputs are %s", o->inputs.names[g], list[0] ? list : "(none)");
      return TBC_EXIT_USAGE;
    }
  }
  if (tb_model_input_count(model) > TBC_RUN_MAX) {
    tbc_error("the model has %zu inputs; tb bench handles at most %d", tb_model_input_count(model), TBC_RUN_MAX);
    return TBC_EXIT_FAILURE;
  }
  return TBC_EXIT_OK;
}

static int write_chart(const char *path, const tbc_bench_report *report) {
  tbc_buf svg = {0};
  tbc_bench_svg(report, &svg);
  FILE *f = svg.failed ? NULL : fopen(path, "w");
  bool ok = f && fputs(svg.data, f) >= 0;
  if (f && fclose(f) != 0) ok = false;
  int saved = errno;
  bool out_of_memory = svg.failed;
  tbc_buf_free(&svg);
  if (!ok) {
    tbc_error("could not write the chart to '%s': %s", path, out_of_memory ? "out of memory" : strerror(saved));
    return out_of_memory ? TBC_EXIT_FAILURE : TBC_EXIT_IO;
  }
  return TBC_EXIT_OK;
}

static int bench(const bench_opts *o) {
  tbc_bench_report *report = calloc(1, sizeof *report);
  double *times = calloc((size_t)o->iters, sizeof *times);
  plan *p = calloc(1, sizeof *p);
  tb_model *model = NULL;
  int code = TBC_EXIT_OK;
  if (!report || !times || !p) {
    tbc_error("out of memory");
    code = TBC_EXIT_FAILURE;
    goto done;
  }
  report->model = o->model;
  report->precision = tb_precision_name(o->precision);
  report->threads = o->threads;
  report->warmup = o->warmup;
  report->iters = o->iters;
  report->seed = o->seed;
  report->has_cost = o->has_cost;
  report->cost_per_hour = o->cost_per_hour;
  if ((code = make_plan(o, report, p)) != TBC_EXIT_OK) goto done;
  tb_status st = tb_model_load(o->model, &model);
  if (st != TB_OK) {
    tbc_error("%s", tb_last_error());
    code = tbc_exit_for_file_status(st);
    goto done;
  }
  snprintf(report->model_sha256, sizeof report->model_sha256, "%s", tb_model_sha256(model));
  if ((code = check_input_names(o, model)) != TBC_EXIT_OK) goto done;
  run_plan(o, p, model, report, times);
  if (o->json) {
    tbc_buf buf = {0};
    tbc_bench_json(report, &buf);
    if (buf.failed) tbc_error("out of memory writing JSON");
    else printf("%s\n", buf.data);
    tbc_buf_free(&buf);
  } else {
    tbc_bench_print_table(report, stdout);
  }
  if (o->chart && (code = write_chart(o->chart, report)) != TBC_EXIT_OK) goto done;
  for (size_t i = 0; i < report->row_count; i++)
    if (!report->rows[i].ok) {
      tbc_error("%s %s failed: %s", report->rows[i].device, tb_opt_level_name(report->rows[i].level),
                report->rows[i].error);
      code = TBC_EXIT_FAILURE;
    }
done:
  tb_model_destroy(model);
  free(report);
  free(times);
  free(p);
  return code;
}

int tbc_cmd_bench(int argc, char **argv) {
  bench_opts o = {.precision = TB_PRECISION_AUTO, .warmup = 3, .iters = 20};
  bool help_only = false;
  int code = parse_options(argc, argv, &o, &help_only);
  if (code == TBC_EXIT_OK && help_only) fputs(help, stdout);
  else if (code == TBC_EXIT_OK) code = bench(&o);
  tbc_pairs_free(&o.inputs);
  tbc_pairs_free(&o.dims);
  return code;
}
