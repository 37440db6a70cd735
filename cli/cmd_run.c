/* `tb run MODEL`: load an ONNX model, prepare it on a backend at a level, run it on the inputs given as
 * .npy files (random ones of the declared shapes and dtypes otherwise), and print what preparation did
 * and, per output, its shape, dtype, first values and checksums (sum and SHA-256 of the bytes).
 * --output-dir writes each output as NAME.npy; --compare-dir checks each output against NAME.npy there.
 * --weights replaces initializers from a safetensors file before preparing, --export-weights saves them,
 * --record writes the inputs, outputs and facts of the run to a safetensors record (docs/checkpoints.md). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include "args.h"
#include "common.h"
#include "format.h"
#include "json_out.h"
#include "run.h"
#include "run_profile.h"

static const char help[] =
    "Usage: tb run MODEL [--backend B] [--level L] [--precision P] [--input NAME=FILE.npy ...]\n"
    "              [--dim NAME=N ...] [--seed S] [--repeat N] [--output-dir D] [--compare-dir D]\n"
    "              [--threads N] [--conv-algo A] [--inter-op M] [--rtol R] [--atol A] [--weights F] [--allow-narrowing]\n"
    "              [--export-weights F] [--record F] [--cpu-fallback] [--device-only] [--profile] [--json]\n"
    "\n"
    "Load the ONNX file MODEL, prepare it on a backend at an optimization level, run it and summarise\n"
    "each output: name, shape, dtype, the first values, the sum of its elements and the SHA-256 of its\n"
    "bytes (packed little-endian, row-major). Inputs not given with --input are random, of the declared\n"
    "dtype and shape (floats uniform in [-1, 1), integers in [0, 10), bool 0/1, from --seed); a\n"
    "symbolic dimension takes its size from --dim, else 1, and a note says so.\n"
    "\n"
    "Options:\n"
    "  --backend B         cpu, cuda, cuda:1, ... (default: TB_BACKEND, else auto)\n"
    "  --level L           O0..O3 or none, conservative, balanced, aggressive (default O2)\n"
    "  --precision P       auto, fp32, bf16, fp16, fp8, tf32 (default auto: the level's)\n"
    "  --input NAME=FILE   the value of input NAME from a .npy file (repeatable)\n"
    "  --dim NAME=N        the size of the symbolic dimension NAME, e.g. --dim batch=4 (repeatable)\n"
    "  --seed S            seed of the random inputs (default 0)\n"
    "  --repeat N          run N times and print the median and fastest time (default 1; each run ends\n"
    "                      with a synchronize of the backend)\n"
    "  --threads N         CPU threads (default 0: TB_NUM_THREADS, else the CPUs this process may use)\n"
    "  --conv-algo A       the CPU's fast convolutions: auto (Winograd, else a GEMM per tap for dilated\n"
    "                      ones that mostly read padding, else direct, else the implicit GEMM, where each\n"
    "                      fits), winograd, direct (that one where it fits, else the implicit GEMM) or gemm\n"
    "                      (default: what TB_CONV_WINOGRAD and TB_CONV_DIRECT leave, else auto)\n"
    "  --inter-op M        independent branches of the graph at the same time, each on one thread: auto\n"
    "                      (where their nodes are too small to use the threads), on (wherever the graph\n"
    "                      splits) or off (never); default: TB_INTER_OP, else auto\n"
    "  --output-dir D      write each output as D/NAME.npy (D is made if missing; see below for NAME)\n"
    "  --compare-dir D     compare each output with D/NAME.npy: |got - ref| <= atol + rtol * |ref|\n"
    "  --rtol R, --atol A  the tolerance of --compare-dir and of --record (default 1e-4 and 1e-5)\n"
    "  --weights F         replace initializers with the tensors of the safetensors file F before\n"
    "                      preparing (names and shapes must match; dtypes must match or widen exactly)\n"
    "  --allow-narrowing   let --weights round a wider dtype to the model's (nearest even)\n"
    "  --export-weights F  write every initializer (after --weights) to the safetensors file F\n"
    "  --record F          write the inputs, outputs, model SHA-256, device, level, precision and\n"
    "                      tolerance of the run to the safetensors file F (replay: tb validate --replay F)\n"
    "  --cpu-fallback      a node whose device kernel cannot be built (a driver's compiler error, no device\n"
    "                      memory) runs on the CPU instead of failing the prepare; the reason is listed\n"
    "  --device-only       fail (exit 1) instead of running any node on the CPU: every node must run on\n"
    "                      the device or on another route to the same hardware (Vulkan, OpenCL); the\n"
    "                      error names each node, its op and why it would fall back\n"
    "  --profile           time every node (device nodes waited for after each) and print where the\n"
    "                      time goes, per operator and the slowest nodes (with --repeat, the first run\n"
    "                      is left out as warm-up)\n"
    "  --json              print everything as JSON (keys in docs/cli.md)\n"
    "  -h, --help          show this help\n"
    "\n"
    "In NAME.npy, characters of NAME other than letters, digits, '-', '_' and '.' become '_'. When two\n"
    "outputs come to the same NAME (a/b and a_b), the later one in the model's order gets the first free\n"
    "NAME_2, NAME_3, ...; a note and the 'wrote:' lines say which file holds which output.\n"
    "\n"
    "Exit codes: 0 success, 1 the model or a run failed or outputs differ from --compare-dir, 2 usage\n"
    "error or a file or name not found, 3 the backend is unavailable, 4 a file, folder or stdout cannot\n"
    "be read or written (permission denied, disk full).\n";

#define TBC_STEM_MAX 1024

typedef struct run_opts {
  const char *model;
  const char *backend;
  tb_opt_level level;
  tb_precision precision;
  tbc_pairs inputs, dims;
  uint64_t seed;
  int threads;
  tb_conv_algo conv_algo;
  tb_inter_op inter_op;
  int repeat;
  const char *output_dir, *compare_dir;
  char (*stems)[TBC_STEM_MAX]; /* per output, its file name in the folders without ".npy" */
  double rtol, atol;
  bool json;
  const char *weights, *export_weights, *record;
  bool allow_narrowing;
  bool profile;
  bool cpu_fallback;
  bool device_only;
  tb_prepared *prepared; /* for the profile */
} run_opts;

/* ---- options ------------------------------------------------------------------------------------ */

/* One option that takes a value (the names listed in parse_options). */
static int run_option(void *ctx, const char *name, const char *value) {
  run_opts *o = ctx;
  int code = TBC_EXIT_OK;
  long long n;
  if (strcmp(name, "--backend") == 0) {
    o->backend = value;
  } else if (strcmp(name, "--level") == 0) {
    if (tb_opt_level_parse(value, &o->level) != TB_OK) return tbc_usage("run", "%s", tb_last_error());
  } else if (strcmp(name, "--precision") == 0) {
    if (tb_precision_parse(value, &o->precision) != TB_OK) return tbc_usage("run", "%s", tb_last_error());
  } else if (strcmp(name, "--input") == 0) {
    if ((code = tbc_pairs_add(&o->inputs, "run", "--input", value)) == TBC_EXIT_OK)
      code = tbc_check_input_file("run", value, o->inputs.values[o->inputs.count - 1]);
  } else if (strcmp(name, "--dim") == 0) {
    if ((code = tbc_pairs_add(&o->dims, "run", "--dim", value)) == TBC_EXIT_OK)
      code = tbc_parse_dim("run", o->dims.names[o->dims.count - 1], o->dims.values[o->dims.count - 1], &n);
  } else if (strcmp(name, "--seed") == 0) {
    if ((code = tbc_parse_int("run", name, value, 0, TBC_MAX_SEED, &n)) == TBC_EXIT_OK) o->seed = (uint64_t)n;
  } else if (strcmp(name, "--repeat") == 0) {
    if ((code = tbc_parse_int("run", name, value, 1, 100000, &n)) == TBC_EXIT_OK) o->repeat = (int)n;
  } else if (strcmp(name, "--threads") == 0) {
    if ((code = tbc_parse_int("run", name, value, 0, 4096, &n)) == TBC_EXIT_OK) o->threads = (int)n;
  } else if (strcmp(name, "--conv-algo") == 0) {
    if (tb_conv_algo_parse(value, &o->conv_algo) != TB_OK) return tbc_usage("run", "%s", tb_last_error());
  } else if (strcmp(name, "--inter-op") == 0) {
    if (tb_inter_op_parse(value, &o->inter_op) != TB_OK) return tbc_usage("run", "%s", tb_last_error());
  } else if (strcmp(name, "--weights") == 0) {
    o->weights = value;
  } else if (strcmp(name, "--export-weights") == 0) {
    o->export_weights = value;
  } else if (strcmp(name, "--record") == 0) {
    o->record = value;
  } else if (strcmp(name, "--output-dir") == 0) {
    o->output_dir = value;
  } else if (strcmp(name, "--compare-dir") == 0) {
    o->compare_dir = value;
  } else if (strcmp(name, "--rtol") == 0) {
    code = tbc_parse_double("run", name, value, 0, TBC_MAX_TOLERANCE, &o->rtol);
  } else if (strcmp(name, "--atol") == 0) {
    code = tbc_parse_double("run", name, value, 0, TBC_MAX_TOLERANCE, &o->atol);
  }
  return code;
}

static int parse_options(int argc, char **argv, run_opts *o, bool *help_only) {
  static const char *const valued[] = {"--backend", "--level",  "--precision",  "--input", "--dim",  "--seed",
                                       "--repeat",  "--threads", "--output-dir", "--compare-dir", "--rtol", "--atol",
                                       "--weights", "--export-weights", "--record", "--conv-algo", "--inter-op"};
  const tbc_option flags[] = {{"--json", &o->json}, {"--allow-narrowing", &o->allow_narrowing}, {"--profile", &o->profile},
                              {"--cpu-fallback", &o->cpu_fallback}, {"--device-only", &o->device_only}, {NULL, NULL}};
  int code = tbc_parse_valued("run", argc, argv, flags, valued, sizeof valued / sizeof valued[0], run_option, o,
                              &o->model, help_only);
  if (code != TBC_EXIT_OK) return code;
  if (*help_only) return TBC_EXIT_OK;
  if (!o->model) return tbc_usage("run", "'tb run' needs a MODEL file");
  struct stat st;
  if (o->compare_dir && stat(o->compare_dir, &st) != 0)
    return tbc_usage("run", "'tb run --compare-dir %s': there is no such folder; give the folder that 'tb run --output-dir' "
                 "wrote the references to", o->compare_dir);
  if (o->compare_dir && !S_ISDIR(st.st_mode))
    return tbc_usage("run", "'tb run --compare-dir %s': it is a file, not a folder; give the folder that holds NAME.npy for "
                 "each output", o->compare_dir);
  return TBC_EXIT_OK;
}

/* ---- output summaries ----------------------------------------------------------------------------- */

/* |x| without libm (the tool does not link it). */
static double abs_d(double x) { return x < 0 ? -x : x; }

static double now_ms(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec / 1e6;
}

static void dims_text(const tb_tensor *t, char *buf, size_t cap) {
  size_t n = tb_tensor_ndim(t), used = (size_t)snprintf(buf, cap, "[");
  for (size_t i = 0; i < n && used < cap; i++)
    used += (size_t)snprintf(buf + used, cap - used, "%s%lld", i ? ", " : "", (long long)tb_tensor_shape(t)[i]);
  if (used < cap) snprintf(buf + used, cap - used, "]");
}

/* Output NAME as a file name without ".npy": letters, digits, '-', '_', '.' (not first) kept, the rest '_';
 * cut to leave room for a suffix. */
static void natural_stem(const char *name, char *buf) {
  size_t used = 0;
  for (const char *p = name; *p && used + 16 < TBC_STEM_MAX; p++) {
    char c = *p;
    bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '-' || c == '_' ||
              (c == '.' && p != name);
    buf[used++] = ok ? c : '_';
  }
  buf[used] = '\0';
}

static bool stem_taken(char (*stems)[TBC_STEM_MAX], char (*natural)[TBC_STEM_MAX], size_t n, size_t k,
                       const char *stem) {
  for (size_t i = 0; i < n; i++)
    if ((i < k && strcmp(stems[i], stem) == 0) || (i != k && strcmp(natural[i], stem) == 0)) return true;
  return false;
}

/* One file name per output, the same for --output-dir and --compare-dir: its natural stem, or, when an
 * earlier output already has that stem, the first "<stem>_<j>" (j = 2, 3, ...) that no earlier output has
 * and no other output has naturally. Notes say which outputs were renamed. */
static int assign_stems(run_opts *o, size_t n, const char *const *names, tbc_notes *notes) {
  char (*natural)[TBC_STEM_MAX] = calloc(n ? n : 1, sizeof *natural);
  o->stems = calloc(n ? n : 1, sizeof *o->stems);
  if (!natural || !o->stems) {
    free(natural);
    tbc_error("out of memory");
    return TBC_EXIT_FAILURE;
  }
  for (size_t k = 0; k < n; k++) natural_stem(names[k], natural[k]);
  for (size_t k = 0; k < n; k++) {
    size_t earlier = k;
    for (size_t i = 0; i < k && earlier == k; i++)
      if (strcmp(natural[i], natural[k]) == 0) earlier = i;
    snprintf(o->stems[k], TBC_STEM_MAX, "%s", natural[k]);
    if (earlier == k) continue;
    for (unsigned j = 2; stem_taken(o->stems, natural, n, k, o->stems[k]); j++)
      snprintf(o->stems[k], TBC_STEM_MAX, "%s_%u", natural[k], j);
    char a[64], b[64];
    tbc_note(notes, "output '%s' is in %s.npy: '%s' before it is in %s.npy", tbc_one_line(names[k], a, sizeof a),
             o->stems[k], tbc_one_line(names[earlier], b, sizeof b), natural[k]);
  }
  free(natural);
  return TBC_EXIT_OK;
}

static void file_name(const char *dir, const char *stem, char *buf, size_t cap) {
  snprintf(buf, cap, "%s/%s.npy", dir, stem);
}

/* The elements as doubles (a malloc'd array), through tb_convert for the narrow floats. */
static double *as_doubles(const tb_tensor *t, const void *bytes) {
  int64_t n = tb_tensor_numel(t);
  double *v = malloc((size_t)(n ? n : 1) * sizeof *v);
  if (!v) return NULL;
  tb_dtype dt = tb_tensor_dtype(t);
  if (tb_convert(dt, bytes, TB_DTYPE_F64, v, (size_t)n, false) != TB_OK) {
    free(v);
    return NULL;
  }
  return v;
}

typedef struct compare_stats {
  bool done, ok;
  bool missing; /* the reference file does not exist */
  int64_t mismatches;
  double max_abs, max_rel;
  char error[8192];
} compare_stats;

static void compare_with(const run_opts *o, tb_backend *backend, size_t k, const tb_tensor *out, const double *got,
                         compare_stats *c) {
  char path[4096];
  file_name(o->compare_dir, o->stems[k], path, sizeof path);
  memset(c, 0, sizeof *c);
  c->done = true;
  tb_tensor *ref = NULL;
  tb_status st = tb_npy_load(path, backend, &ref);
  if (st != TB_OK) {
    c->missing = st == TB_ERR_NOT_FOUND;
    snprintf(c->error, sizeof c->error, "%s", tb_last_error());
    return;
  }
  bool same_shape = tb_tensor_ndim(ref) == tb_tensor_ndim(out) && tb_tensor_dtype(ref) == tb_tensor_dtype(out);
  for (size_t i = 0; same_shape && i < tb_tensor_ndim(out); i++)
    same_shape = tb_tensor_shape(ref)[i] == tb_tensor_shape(out)[i];
  if (!same_shape) {
    char a[128], b[128];
    dims_text(out, a, sizeof a);
    dims_text(ref, b, sizeof b);
    snprintf(c->error, sizeof c->error, "%s is %s %s but the output is %s %s", path, tb_dtype_name(tb_tensor_dtype(ref)),
             b, tb_dtype_name(tb_tensor_dtype(out)), a);
    tb_tensor_destroy(ref);
    return;
  }
  size_t nbytes = tb_tensor_nbytes(ref);
  void *bytes = malloc(nbytes ? nbytes : 1);
  double *want = NULL;
  if (bytes && tb_tensor_copy_to_host(ref, bytes, nbytes) == TB_OK) want = as_doubles(ref, bytes);
  free(bytes);
  tb_tensor_destroy(ref);
  if (!want) {
    snprintf(c->error, sizeof c->error, "could not read %s: %s", path, tb_last_error());
    return;
  }
  int64_t n = tb_tensor_numel(out);
  for (int64_t i = 0; i < n; i++) {
    double g = got[i], w = want[i];
    bool match;
    if (isnan(g) || isnan(w)) match = isnan(g) && isnan(w);
    else if (isinf(g) || isinf(w)) match = g == w;
    else {
      double diff = abs_d(g - w);
      match = diff <= o->atol + o->rtol * abs_d(w);
      if (diff > c->max_abs) c->max_abs = diff;
      if (w != 0 && diff / abs_d(w) > c->max_rel) c->max_rel = diff / abs_d(w);
    }
    if (!match) c->mismatches++;
  }
  free(want);
  c->ok = c->mismatches == 0;
}

typedef struct output_summary {
  char shape[160];
  double sum;
  char sha256[65];
  double first[8];
  size_t n_first;
  compare_stats cmp;
  char written[4096];
} output_summary;

static int summarise(const run_opts *o, tb_backend *backend, size_t k, const char *name, const tb_tensor *t,
                     output_summary *s) {
  memset(s, 0, sizeof *s);
  dims_text(t, s->shape, sizeof s->shape);
  size_t nbytes = tb_tensor_nbytes(t);
  void *bytes = malloc(nbytes ? nbytes : 1);
  if (!bytes) {
    tbc_error("out of memory reading output '%s'", name);
    return TBC_EXIT_FAILURE;
  }
  tb_status st = nbytes ? tb_tensor_copy_to_host(t, bytes, nbytes) : TB_OK;
  double *v = st == TB_OK ? as_doubles(t, bytes) : NULL;
  if (!v) {
    free(bytes);
    tbc_error("reading output '%s': %s", name, tb_last_error());
    return tbc_exit_for_status(st != TB_OK ? st : TB_ERR_OUT_OF_MEMORY);
  }
  tb_sha256_hex(bytes, nbytes, s->sha256);
  free(bytes);
  int64_t n = tb_tensor_numel(t);
  for (int64_t i = 0; i < n; i++) s->sum += v[i];
  s->n_first = n < 8 ? (size_t)n : 8;
  memcpy(s->first, v, s->n_first * sizeof *v);
  if (o->compare_dir) compare_with(o, backend, k, t, v, &s->cmp);
  free(v);
  if (o->output_dir) {
    file_name(o->output_dir, o->stems[k], s->written, sizeof s->written);
    st = tb_npy_save(s->written, t);
    if (st != TB_OK) {
      tbc_error("--output-dir: %s", tb_last_error());
      return tbc_exit_for_file_status(st);
    }
  }
  return TBC_EXIT_OK;
}

/* ---- printing ------------------------------------------------------------------------------------- */

/* "  placement: 10 nodes on cuda:0, 2 on vulkan:0, 1 on cpu:0" (devices in the order nodes first use them). */
/* "Relu (r): fp32: no bf16 kernel" (the CPU), "Relu (r): fp32: no fp16 kernel on cuda:0" (a device): a node that has
 * no reduced-precision kernel at all, listed only in --json. */
static bool no_reduced_kernel(const char *choice) {
  const char *at = strstr(choice, ": fp32: no ");
  if (!at) return false;
  char precision[16] = "", rest[32] = "";
  return sscanf(at, ": fp32: no %15s %31s", precision, rest) == 2 && strcmp(rest, "kernel") == 0;
}

static void print_placement(const tb_prepare_result *r) {
  enum { MAX_PLACES = 8 };
  const char *devices[MAX_PLACES];
  size_t counts[MAX_PLACES] = {0}, n = 0;
  for (size_t i = 0; i < r->node_count; i++) {
    size_t d = 0;
    while (d < n && strcmp(devices[d], r->node_devices[i]) != 0) d++;
    if (d == n && n == MAX_PLACES) continue;
    if (d == n) devices[n++] = r->node_devices[i];
    counts[d]++;
  }
  if (!n) return;
  printf("  placement:");
  for (size_t d = 0; d < n; d++) printf("%s %zu%s on %s", d ? "," : "", counts[d], d ? "" : counts[d] == 1 ? " node" : " nodes", devices[d]);
  printf("\n");
}

static void print_text(const run_opts *o, const tb_model *model, const tb_backend *backend, const tb_prepare_result *r,
                       const tbc_notes *notes, double median, double fastest, size_t n_out, const char *const *names,
                       tb_tensor *const *outs, const output_summary *sums) {
  const tb_device_info *dev = tb_backend_device(backend);
  printf("model:    %s (opset %s, %s nodes, sha256 %.16s...)\n", o->model, tb_model_property(model, "opset"),
         tb_model_property(model, "nodes"), tb_model_sha256(model));
  printf("backend:  %s (%s)\n", dev ? dev->device : "?", dev ? dev->name : "?");
  printf("prepare:  level %s, precision %s, %.2f ms\n", tb_opt_level_name(r->level), tb_precision_name(r->precision),
         r->prepare_ms);
  char line[4096];
  for (size_t i = 0; i < r->pass_count; i++) printf("  pass:    %s\n", tbc_one_line(r->passes[i], line, sizeof line));
  if (r->pass_count == 0) printf("  passes:  none\n");
  for (size_t i = 0; i < r->warning_count; i++) printf("  warning: %s\n", tbc_one_line(r->warnings[i], line, sizeof line));
  printf("  nodes %zu -> %zu (%zu fused), weights %llu bytes, planned peak activations %llu bytes, "
         "%zu on the device, %zu on other routes to it, %zu on the CPU fallback, %zu copies, %zu in reduced precision\n",
         r->nodes_before, r->nodes_after, r->fused_nodes, (unsigned long long)r->weight_bytes,
         (unsigned long long)r->planned_peak_activation_bytes, r->device_nodes, r->route_nodes, r->cpu_fallback_nodes,
         r->copies_inserted, r->reduced_precision_nodes);
  print_placement(r);
  for (size_t i = 0; i < r->route_nodes && r->routed_ops; i++) printf("  route:   %s\n", tbc_one_line(r->routed_ops[i], line, sizeof line));
  for (size_t i = 0; i < r->cpu_fallback_nodes && r->fallback_ops; i++)
    printf("  fallback: %s\n", tbc_one_line(r->fallback_ops[i], line, sizeof line));
  for (size_t i = 0; i < r->copies_inserted && r->copies; i++) printf("  copy:    %s\n", tbc_one_line(r->copies[i], line, sizeof line));
  /* the precision decision per node (the nodes without a reduced-precision kernel only in --json), else the reduced
   * precision nodes */
  for (size_t i = 0; i < r->precision_choice_count && r->precision_choices; i++)
    if (!no_reduced_kernel(r->precision_choices[i]))
      printf("  precision: %s\n", tbc_one_line(r->precision_choices[i], line, sizeof line));
  for (size_t i = 0; !r->precision_choice_count && i < r->reduced_precision_nodes && r->node_precisions; i++)
    printf("  precision: %s\n", tbc_one_line(r->node_precisions[i], line, sizeof line));
  for (size_t i = 0; i < notes->count; i++) printf("note:     %s\n", tbc_one_line(notes->text[i], line, sizeof line));
  if (o->repeat > 1)
    printf("run:      %d runs, median %.3f ms, fastest %.3f ms\n", o->repeat, median, fastest);
  else
    printf("run:      %.3f ms\n", median);
  for (size_t k = 0; k < n_out; k++) {
    const output_summary *s = &sums[k];
    printf("output %s: %s %s\n", tbc_one_line(names[k], line, sizeof line), tb_dtype_name(tb_tensor_dtype(outs[k])), s->shape);
    printf("  values: ");
    for (size_t i = 0; i < s->n_first; i++) printf("%s%.6g", i ? " " : "", s->first[i]);
    printf("%s\n", (int64_t)s->n_first < tb_tensor_numel(outs[k]) ? " ..." : "");
    printf("  sum:    %.9g\n  sha256: %s\n", s->sum, s->sha256);
    if (s->written[0]) printf("  wrote:  %s\n", s->written);
    if (s->cmp.done && s->cmp.error[0])
      printf("  compare: FAILED: %s\n", tbc_one_line(s->cmp.error, line, sizeof line));
    else if (s->cmp.done)
      printf("  compare: %s: %lld of %lld elements differ (rtol %g, atol %g); max abs error %.3g, max rel error %.3g\n",
             s->cmp.ok ? "ok" : "MISMATCH", (long long)s->cmp.mismatches, (long long)tb_tensor_numel(outs[k]), o->rtol,
             o->atol, s->cmp.max_abs, s->cmp.max_rel);
  }
}

static void print_json(const run_opts *o, const tb_model *model, const tb_backend *backend, const tb_prepare_result *r,
                       const tbc_notes *notes, double median, double fastest, size_t n_out, const char *const *names,
                       tb_tensor *const *outs, const output_summary *sums) {
  tbc_buf b = {0};
  bool first = true;
  const tb_device_info *dev = tb_backend_device(backend);
  tbc_buf_add(&b, "{");
  tbc_json_key(&b, &first, "model");
  tbc_json_string(&b, o->model);
  tbc_json_key(&b, &first, "model_sha256");
  tbc_json_string(&b, tb_model_sha256(model));
  tbc_json_key(&b, &first, "device");
  tbc_json_string(&b, dev ? dev->device : NULL);
  char *prep = NULL;
  tbc_json_key(&b, &first, "prepare");
  if (tb_prepare_result_to_json(r, &prep) == TB_OK && prep) tbc_buf_add(&b, prep);
  else tbc_buf_add(&b, "null");
  tb_free(prep);
  tbc_json_key(&b, &first, "notes");
  tbc_buf_add(&b, "[");
  for (size_t i = 0; i < notes->count; i++) {
    if (i) tbc_buf_add(&b, ",");
    tbc_json_string(&b, notes->text[i]);
  }
  tbc_buf_add(&b, "]");
  tbc_json_key(&b, &first, "runs");
  tbc_buf_addf(&b, "%d", o->repeat);
  tbc_json_key(&b, &first, "run_ms_median");
  tbc_buf_addf(&b, "%.6f", median);
  tbc_json_key(&b, &first, "run_ms_fastest");
  tbc_buf_addf(&b, "%.6f", fastest);
  tbc_json_key(&b, &first, "outputs");
  tbc_buf_add(&b, "[");
  for (size_t k = 0; k < n_out; k++) {
    const output_summary *s = &sums[k];
    bool f2 = true;
    tbc_buf_add(&b, k ? ",{" : "{");
    tbc_json_key(&b, &f2, "name");
    tbc_json_string(&b, names[k]);
    tbc_json_key(&b, &f2, "dtype");
    tbc_json_string(&b, tb_dtype_name(tb_tensor_dtype(outs[k])));
    tbc_json_key(&b, &f2, "shape");
    tbc_buf_add(&b, s->shape);
    tbc_json_key(&b, &f2, "first_values");
    tbc_buf_add(&b, "[");
    for (size_t i = 0; i < s->n_first; i++)
      tbc_buf_addf(&b, "%s%.9g", i ? "," : "", isfinite(s->first[i]) ? s->first[i] : 0.0);
    tbc_buf_add(&b, "]");
    tbc_json_key(&b, &f2, "sum");
    if (isfinite(s->sum)) tbc_buf_addf(&b, "%.17g", s->sum);
    else tbc_json_string(&b, isnan(s->sum) ? "nan" : s->sum > 0 ? "inf" : "-inf");
    tbc_json_key(&b, &f2, "sha256");
    tbc_json_string(&b, s->sha256);
    if (s->written[0]) {
      tbc_json_key(&b, &f2, "written");
      tbc_json_string(&b, s->written);
    }
    if (s->cmp.done) {
      tbc_json_key(&b, &f2, "compare");
      tbc_buf_addf(&b, "{\"ok\":%s,\"mismatches\":%lld,\"max_abs_error\":%.9g,\"max_rel_error\":%.9g,\"rtol\":%g,\"atol\":%g",
                   s->cmp.ok ? "true" : "false", (long long)s->cmp.mismatches, s->cmp.max_abs, s->cmp.max_rel, o->rtol,
                   o->atol);
      if (s->cmp.error[0]) {
        tbc_buf_add(&b, ",\"error\":");
        tbc_json_string(&b, s->cmp.error);
      }
      tbc_buf_add(&b, "}");
    }
    tbc_buf_add(&b, "}");
  }
  tbc_buf_add(&b, "]");
  if (o->profile) {
    tbc_json_key(&b, &first, "profile");
    tbc_profile_json(&b, o->prepared);
  }
  tbc_buf_add(&b, "}");
  if (b.failed) tbc_error("out of memory writing JSON");
  else printf("%s\n", b.data);
  tbc_buf_free(&b);
}

/* ---- the command ------------------------------------------------------------------------------------ */

static int cmp_double(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return (x > y) - (x < y);
}

static int load_inputs(const run_opts *o, tb_model *model, tb_backend *backend, tbc_notes *notes, size_t *n_in,
                       const char **names, tb_tensor **ins) {
  size_t count = tb_model_input_count(model);
  if (count > TBC_RUN_MAX) {
    tbc_error("the model has %zu inputs; tb run handles at most %d", count, TBC_RUN_MAX);
    return TBC_EXIT_FAILURE;
  }
  for (size_t g = 0; g < o->inputs.count; g++) {
    bool found = false;
    tb_model_io io = {.size = sizeof io};
    for (size_t i = 0; i < count && !found; i++)
      found = tb_model_input(model, i, &io) == TB_OK && strcmp(io.name, o->inputs.names[g]) == 0;
    if (!found) {
      char list[1024] = "";
      for (size_t i = 0; i < count; i++)
        if (tb_model_input(model, i, &io) == TB_OK)
          snprintf(list + strlen(list), sizeof list - strlen(list), "%s'%s'", i ? ", " : "", io.name);
      tbc_error("the model has no input '%s'; its inputs are %s", o->inputs.names[g], list[0] ? list : "(none)");
      return TBC_EXIT_USAGE;
    }
  }
  for (size_t i = 0; i < count; i++) {
    tb_model_io io = {.size = sizeof io};
    tb_status st = tb_model_input(model, i, &io);
    if (st != TB_OK) {
      tbc_error("%s", tb_last_error());
      return tbc_exit_for_status(st);
    }
    names[i] = io.name;
    const char *file = tbc_pairs_find(&o->inputs, io.name);
    int code;
    if (file) {
      st = tb_npy_load(file, backend, &ins[i]);
      if (st != TB_OK) {
        tbc_error("input '%s': %s", io.name, tb_last_error());
        return tbc_exit_for_file_status(st);
      }
      code = TBC_EXIT_OK;
    } else {
      code = tbc_random_input("run", backend, &io, i, o->seed, &o->dims, notes, &ins[i]);
      if (code == TBC_EXIT_OK && o->inputs.count)
        tbc_note(notes, "input '%s' not given with --input: random values (seed %llu)", io.name,
                 (unsigned long long)o->seed);
    }
    if (code != TBC_EXIT_OK) return code;
    *n_in = i + 1;
  }
  if (count && !o->inputs.count) tbc_note(notes, "inputs are random (seed %llu)", (unsigned long long)o->seed);
  return TBC_EXIT_OK;
}

/* --weights then --export-weights, on the loaded model before it is prepared. */
static int apply_weights(const run_opts *o, tb_model *model, tbc_notes *notes) {
  tb_status st;
  if (o->weights) {
    size_t replaced = 0;
    if ((st = tb_model_override_weights(model, o->weights, o->allow_narrowing, &replaced)) != TB_OK) {
      tbc_error("--weights: %s", tb_last_error());
      return tbc_exit_for_file_status(st);
    }
    tbc_note(notes, "weights: %zu initializers replaced from %s", replaced, o->weights);
  }
  if (o->export_weights) {
    if ((st = tb_model_export_weights(model, o->export_weights)) != TB_OK) {
      tbc_error("--export-weights: %s", tb_last_error());
      return tbc_exit_for_file_status(st);
    }
    tbc_note(notes, "weights: every initializer written to %s", o->export_weights);
  }
  return TBC_EXIT_OK;
}

static int run_model(run_opts *o) {
  tb_backend *backend = NULL;
  tb_model *model = NULL;
  tb_prepared *prepared = NULL;
  const tb_prepare_result *result = NULL;
  tb_tensor *ins[TBC_RUN_MAX] = {0}, *outs[TBC_RUN_MAX] = {0};
  const char *in_names[TBC_RUN_MAX], *out_names[TBC_RUN_MAX];
  output_summary *sums = NULL;
  double *times = NULL;
  size_t n_in = 0, n_out = 0;
  tbc_notes notes = {.count = 0};
  int code = TBC_EXIT_OK;
  tb_status st = tb_backend_create(o->backend, &backend);
  if (st != TB_OK) {
    tbc_error("%s", tb_last_error());
    return tbc_exit_for_status(st);
  }
  if ((st = tb_model_load(o->model, &model)) != TB_OK) goto file_error;
  if ((code = apply_weights(o, model, &notes)) != TBC_EXIT_OK) goto done;
  n_out = tb_model_output_count(model);
  if (n_out > TBC_RUN_MAX) {
    tbc_error("the model has %zu outputs; tb run handles at most %d", n_out, TBC_RUN_MAX);
    code = TBC_EXIT_FAILURE;
    goto done;
  }
  for (size_t k = 0; k < n_out; k++) {
    tb_model_io io = {.size = sizeof io};
    if ((st = tb_model_output(model, k, &io)) != TB_OK) goto library_error;
    out_names[k] = io.name;
  }
  if ((o->output_dir || o->compare_dir) && (code = assign_stems(o, n_out, out_names, &notes)) != TBC_EXIT_OK) goto done;
  int64_t dim_values[TBC_RUN_MAX];
  for (size_t i = 0; i < o->dims.count; i++) dim_values[i] = strtoll(o->dims.values[i], NULL, 10);
  tb_prepare_options opts = {.size = sizeof opts,
                             .level = o->level,
                             .precision = o->precision,
                             .threads = o->threads,
                             .dim_count = o->dims.count,
                             .dim_names = o->dims.names,
                             .dim_values = dim_values,
                             .cpu_fallback = o->cpu_fallback,
                             .conv_algo = o->conv_algo,
                             .device_only = o->device_only,
                             .inter_op = o->inter_op};
  if ((st = tb_model_prepare(model, backend, &opts, &prepared, &result)) != TB_OK) goto library_error;
  o->prepared = prepared;
  if ((code = load_inputs(o, model, backend, &notes, &n_in, in_names, ins)) != TBC_EXIT_OK) goto done;
  times = calloc((size_t)o->repeat, sizeof *times);
  sums = calloc(n_out ? n_out : 1, sizeof *sums);
  if (!times || !sums) {
    tbc_error("out of memory");
    code = TBC_EXIT_FAILURE;
    goto done;
  }
  for (int r = 0; r < o->repeat; r++) {
    for (size_t k = 0; k < n_out; k++) {
      tb_tensor_destroy(outs[k]);
      outs[k] = NULL;
    }
    /* the profile leaves out the first run when there are more (it pays for first-use work) */
    if (o->profile && r == (o->repeat > 1 ? 1 : 0) && (st = tb_prepared_set_profiling(prepared, true)) != TB_OK) goto library_error;
    double t0 = now_ms();
    st = tb_prepared_run(prepared, n_in, in_names, ins, n_out, NULL, outs);
    if (st == TB_OK) st = tb_backend_synchronize(backend); /* a device's queued work is part of the run */
    times[r] = now_ms() - t0;
    if (st != TB_OK) goto library_error;
  }
  qsort(times, (size_t)o->repeat, sizeof *times, cmp_double);
  if (o->output_dir && (code = tbc_make_output_dir(o->output_dir)) != TBC_EXIT_OK) goto done;
  bool all_match = true, reference_missing = false;
  for (size_t k = 0; k < n_out && code == TBC_EXIT_OK; k++) {
    code = summarise(o, backend, k, out_names[k], outs[k], &sums[k]);
    if (sums[k].cmp.done && (!sums[k].cmp.ok || sums[k].cmp.error[0])) all_match = false;
    if (sums[k].cmp.missing) reference_missing = true;
  }
  if (code != TBC_EXIT_OK) goto done;
  if (o->record) {
    tb_record_options ro = {.size = sizeof ro, .model_file = o->model, .level = result->level,
                            .precision = result->precision, .rtol = o->rtol, .atol = o->atol};
    st = tb_record_write(o->record, model, backend, &ro, n_in, in_names, (const tb_tensor *const *)ins, n_out, out_names,
                         (const tb_tensor *const *)outs);
    if (st != TB_OK) goto file_error;
    tbc_note(&notes, "recorded the inputs, outputs and facts of this run in %s", o->record);
  }
  if (o->json)
    print_json(o, model, backend, result, &notes, times[o->repeat / 2], times[0], n_out, out_names, outs, sums);
  else
    print_text(o, model, backend, result, &notes, times[o->repeat / 2], times[0], n_out, out_names, outs, sums);
  if (o->profile && !o->json) tbc_profile_text(prepared, 10);
  if (reference_missing) {
    tbc_error("a reference file is missing in %s (see the compare lines); write the references with 'tb run "
              "--output-dir %s' first", o->compare_dir, o->compare_dir);
    code = TBC_EXIT_USAGE;
  } else if (!all_match) {
    tbc_error("outputs differ from the references in %s (see the compare lines)", o->compare_dir);
    code = TBC_EXIT_FAILURE;
  }
  goto done;
file_error:
  tbc_error("%s", tb_last_error());
  code = tbc_exit_for_file_status(st);
  goto done;
library_error:
  tbc_error("%s", tb_last_error());
  code = tbc_exit_for_status(st);
done:
  for (size_t i = 0; i < TBC_RUN_MAX; i++) {
    tb_tensor_destroy(ins[i]);
    tb_tensor_destroy(outs[i]);
  }
  free(times);
  free(sums);
  free(o->stems);
  o->stems = NULL;
  tb_prepared_destroy(prepared);
  tb_model_destroy(model);
  tb_backend_destroy(backend);
  return code;
}

int tbc_cmd_run(int argc, char **argv) {
  run_opts o = {.level = TB_LEVEL_O2, .precision = TB_PRECISION_AUTO, .repeat = 1, .rtol = 1e-4, .atol = 1e-5};
  bool help_only = false;
  int code = parse_options(argc, argv, &o, &help_only);
  if (code == TBC_EXIT_OK && help_only) fputs(help, stdout);
  else if (code == TBC_EXIT_OK) code = run_model(&o);
  tbc_pairs_free(&o.inputs);
  tbc_pairs_free(&o.dims);
  return code;
}
