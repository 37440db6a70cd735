/* `tb validate MODEL`: run a model on backends at levels against the CPU O0 fp32 reference and print, per
 * configuration and output, the errors and the verdict from the tolerance table, then "passed N/M";
 * --localize names the first diverging node of a failing configuration. `tb validate --replay FILE` reruns
 * a record of `tb run --record` here and compares with its outputs. Uses include/tensorbridge/validate.h. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "args.h"
#include "common.h"
#include "format.h"
#include "run.h"
#include "table.h"
#include "validate.h"

static const char help[] =
    "Usage: tb validate MODEL [--backends all|LIST] [--levels LIST] [--precision P] [--input NAME=FILE.npy ...]\n"
    "                   [--dim NAME=N ...] [--seed S] [--rtol R --atol A] [--localize] [--json]\n"
    "       tb validate --replay FILE [--backend B] [--model MODEL] [--json]\n"
    "\n"
    "Run MODEL on each backend at each level and compare every output with the reference: the CPU backend\n"
    "at O0 in fp32, on the same inputs (from --input, else random from --seed as 'tb run' makes them). Per\n"
    "output: max absolute and relative error, cosine similarity, max ULP distance (f32), elements outside\n"
    "atol + rtol*|ref|, NaN/Inf counts; a verdict from the tolerance table (docs/validation.md); then\n"
    "\"passed N/M\" over the configurations.\n"
    "\n"
    "Options:\n"
    "  --backends LIST     comma-separated backends (cpu,opencl:0,vulkan:0) or all: every backend available\n"
    "                      here (default cpu)\n"
    "  --levels LIST       comma-separated levels, e.g. O0,O2 (default O0,O1,O2,O3)\n"
    "  --precision P       auto, fp32, bf16, fp16, fp8, tf32 for every configuration\n"
    "  --input NAME=FILE   the value of input NAME from a .npy file (repeatable)\n"
    "  --dim NAME=N        the size of a symbolic dimension of the random inputs (repeatable; default 1)\n"
    "  --seed S            seed of the random inputs (default 0)\n"
    "  --rtol R, --atol A  use this tolerance instead of the table (both together)\n"
    "  --localize          on a failing configuration, name the first node whose output diverges\n"
    "  --replay FILE       rerun a record written by 'tb run --record' and compare with its outputs\n"
    "  --backend B         with --replay: the backend to replay on (default: the record's, else cpu)\n"
    "  --model MODEL       with --replay: the model file (default: the path in the record)\n"
    "  --json              print the report as JSON (keys in docs/validation.md)\n"
    "  -h, --help          show this help\n"
    "\n"
    "Exit codes: 0 every configuration passed, 1 one failed or could not run, 2 usage error, an unknown\n"
    "backend, or a file or name not found, 3 a backend is unavailable, 4 a file cannot be read.\n";

#define MAX_LIST 32

typedef struct validate_opts {
  const char *model, *replay, *backend, *replay_model;
  char *backends_text, *levels_text; /* copies split in place */
  const char *backends[MAX_LIST];
  size_t backend_count;
  tb_opt_level levels[4];
  size_t level_count;
  tb_precision precision;
  tbc_pairs inputs, dims;
  uint64_t seed;
  double rtol, atol;
  bool has_rtol, has_atol, localize, json;
} validate_opts;

/* Every backend kind available here, as "cpu" or "<kind>:0". */
static int all_backends(validate_opts *o) {
  tb_backend_kind kinds[TB_BACKEND_COUNT];
  size_t n = 0;
  if (tb_backend_list_available(kinds, TB_BACKEND_COUNT, &n) != TB_OK) {
    tbc_error("%s", tb_last_error());
    return TBC_EXIT_FAILURE;
  }
  static char names[TB_BACKEND_COUNT][32];
  for (size_t i = 0; i < n && i < TB_BACKEND_COUNT; i++) {
    if (kinds[i] == TB_BACKEND_CPU) snprintf(names[i], sizeof names[i], "cpu");
    else snprintf(names[i], sizeof names[i], "%s:0", tb_backend_name(kinds[i]));
    o->backends[o->backend_count++] = names[i];
  }
  return TBC_EXIT_OK;
}

static int split_backends(validate_opts *o, const char *value) {
  if (strcmp(value, "all") == 0) return all_backends(o);
  free(o->backends_text);
  o->backends_text = strdup(value);
  if (!o->backends_text) return TBC_EXIT_FAILURE;
  o->backend_count = 0;
  for (char *save = NULL, *w = strtok_r(o->backends_text, ",", &save); w; w = strtok_r(NULL, ",", &save)) {
    if (o->backend_count == MAX_LIST) return tbc_usage("validate", "'tb validate --backends' takes at most %d backends", MAX_LIST);
    char kind_name[64];
    snprintf(kind_name, sizeof kind_name, "%.*s", (int)strcspn(w, ":"), w);
    tb_backend_kind kind;
    bool is_auto = false;
    if (tb_backend_parse(kind_name, &kind, &is_auto) != TB_OK)
      return tbc_usage("validate", "'tb validate --backends %s': %s", value, tb_last_error());
    o->backends[o->backend_count++] = w;
  }
  if (!o->backend_count) return tbc_usage("validate", "'tb validate --backends' needs at least one backend");
  return TBC_EXIT_OK;
}

static int split_levels(validate_opts *o, const char *value) {
  char *text = strdup(value);
  if (!text) return TBC_EXIT_FAILURE;
  int code = TBC_EXIT_OK;
  o->level_count = 0;
  for (char *save = NULL, *w = strtok_r(text, ",", &save); w && code == TBC_EXIT_OK; w = strtok_r(NULL, ",", &save)) {
    tb_opt_level level;
    if (tb_opt_level_parse(w, &level) != TB_OK) code = tbc_usage("validate", "%s", tb_last_error());
    else if (o->level_count == 4) code = tbc_usage("validate", "'tb validate --levels' takes at most 4 levels, not '%s'", value);
    else o->levels[o->level_count++] = level;
  }
  if (code == TBC_EXIT_OK && !o->level_count) code = tbc_usage("validate", "'tb validate --levels' needs at least one level");
  free(text);
  return code;
}

static int add_pair(tbc_pairs *pairs, const char *option, const char *word) {
  const char *eq = strchr(word, '=');
  if (!eq || eq == word || !eq[1]) return tbc_usage("validate", "'tb validate %s' takes NAME=VALUE, not '%s'", option, word);
  return tbc_pairs_add(pairs, "validate", option, word);
}

static int apply_option(validate_opts *o, const char *name, const char *value) {
  if (strcmp(name, "--backends") == 0) return split_backends(o, value);
  if (strcmp(name, "--levels") == 0) return split_levels(o, value);
  if (strcmp(name, "--precision") == 0)
    return tb_precision_parse(value, &o->precision) == TB_OK ? TBC_EXIT_OK : tbc_usage("validate", "%s", tb_last_error());
  if (strcmp(name, "--input") == 0) {
    int added = add_pair(&o->inputs, name, value);
    return added != TBC_EXIT_OK ? added : tbc_check_input_file("validate", value, o->inputs.values[o->inputs.count - 1]);
  }
  long long n;
  int code;
  if (strcmp(name, "--dim") == 0) {
    if ((code = add_pair(&o->dims, name, value)) != TBC_EXIT_OK) return code;
    return tbc_parse_dim("validate", o->dims.names[o->dims.count - 1], o->dims.values[o->dims.count - 1], &n);
  }
  if (strcmp(name, "--seed") == 0) {
    if ((code = tbc_parse_int("validate", name, value, 0, TBC_MAX_SEED, &n)) == TBC_EXIT_OK) o->seed = (uint64_t)n;
    return code;
  }
  if (strcmp(name, "--rtol") == 0) {
    o->has_rtol = true;
    return tbc_parse_double("validate", name, value, 0, TBC_MAX_TOLERANCE, &o->rtol);
  }
  if (strcmp(name, "--atol") == 0) {
    o->has_atol = true;
    return tbc_parse_double("validate", name, value, 0, TBC_MAX_TOLERANCE, &o->atol);
  }
  if (strcmp(name, "--replay") == 0) o->replay = value;
  else if (strcmp(name, "--backend") == 0) o->backend = value;
  else if (strcmp(name, "--model") == 0) o->replay_model = value;
  return TBC_EXIT_OK;
}

static int validate_option(void *ctx, const char *name, const char *value) { return apply_option(ctx, name, value); }

static int parse_options(int argc, char **argv, validate_opts *o, bool *help_only) {
  static const char *const valued[] = {"--backends", "--levels", "--precision", "--input",  "--dim",   "--seed",
                                       "--rtol",     "--atol",   "--replay",    "--backend", "--model"};
  const tbc_option flags[] = {{"--json", &o->json}, {"--localize", &o->localize}, {NULL, NULL}};
  int code = tbc_parse_valued("validate", argc, argv, flags, valued, sizeof valued / sizeof valued[0], validate_option,
                              o, &o->model, help_only);
  if (code != TBC_EXIT_OK) return code;
  if (*help_only) return TBC_EXIT_OK;
  if (o->has_rtol != o->has_atol) return tbc_usage("validate", "'tb validate' takes --rtol and --atol together");
  if (o->replay) {
    if (o->model) return tbc_usage("validate", "'tb validate --replay' takes no MODEL argument (use --model to name the file)");
    return TBC_EXIT_OK;
  }
  if (!o->model) return tbc_usage("validate", "'tb validate' needs a MODEL (an .onnx file) or --replay FILE");
  if (o->backend || o->replay_model) return tbc_usage("validate", "'tb validate --backend' and '--model' go with --replay; use --backends");
  return TBC_EXIT_OK;
}

/* ---- printing ------------------------------------------------------------------------------------ */

static const char *const headers[] = {"backend", "level", "precision", "output",   "max abs", "max rel", "cosine",
                                      "max ulp", "outside", "nan/inf", "rtol/atol", "verdict"};
#define COLUMNS (sizeof headers / sizeof headers[0])

static void add_rows(tbc_table *t, const tb_validation_report *r, size_t c) {
  tb_validation_config cfg = {.size = sizeof cfg};
  if (tb_validation_report_config(r, c, &cfg) != TB_OK) return;
  char cells[COLUMNS][96], line[1200], one_line[1200];
  const char *ptrs[COLUMNS];
  for (size_t k = 0; k < COLUMNS; k++) ptrs[k] = cells[k];
  snprintf(cells[0], sizeof cells[0], "%s", cfg.backend);
  snprintf(cells[1], sizeof cells[1], "%s", tb_opt_level_name(cfg.level));
  snprintf(cells[2], sizeof cells[2], "%s", tb_precision_name(cfg.precision));
  snprintf(cells[10], sizeof cells[10], "%g/%g %s", cfg.tolerance.rtol, cfg.tolerance.atol, cfg.tolerance.source);
  if (cfg.error) {
    for (size_t k = 3; k < COLUMNS - 1; k++) snprintf(cells[k], sizeof cells[k], "-");
    snprintf(cells[COLUMNS - 1], sizeof cells[0], "ERROR");
    tbc_table_row(t, ptrs);
    snprintf(line, sizeof line, "    error: %s", cfg.error);
    tbc_table_note(t, tbc_one_line(line, one_line, sizeof one_line));
    return;
  }
  for (size_t j = 0; j < cfg.output_count; j++) {
    tb_output_metrics m = {.size = sizeof m};
    if (tb_validation_report_output(r, c, j, &m) != TB_OK) continue;
    tbc_one_line(m.name, cells[3], sizeof cells[3]);
    snprintf(cells[4], sizeof cells[4], "%.3g", m.max_abs_error);
    snprintf(cells[5], sizeof cells[5], "%.3g", m.max_rel_error);
    snprintf(cells[6], sizeof cells[6], "%.9f", m.cosine);
    snprintf(cells[7], sizeof cells[7], m.dtype == TB_DTYPE_F32 ? "%llu" : "-", (unsigned long long)m.max_ulp);
    snprintf(cells[8], sizeof cells[8], "%lld/%lld", (long long)m.mismatches, (long long)m.numel);
    snprintf(cells[9], sizeof cells[9], "%lld/%lld %lld/%lld", (long long)m.nan_got, (long long)m.inf_got,
             (long long)m.nan_ref, (long long)m.inf_ref);
    snprintf(cells[11], sizeof cells[11], "%s", !m.shape_matches ? "FAIL (shape)" : m.passed ? "pass" : "FAIL");
    tbc_table_row(t, ptrs);
  }
  if (cfg.localize_note && cfg.localized) {
    snprintf(line, sizeof line,
             "    first diverging node: #%zu %s '%s' output '%s': max abs %.3g, max rel %.3g, cosine %.9f, %lld/%lld outside",
             cfg.node_index, cfg.node_op, cfg.node_name, cfg.node_output, cfg.node_max_abs_error, cfg.node_max_rel_error,
             cfg.node_cosine, (long long)cfg.node_mismatches, (long long)cfg.node_numel);
    tbc_table_note(t, tbc_one_line(line, one_line, sizeof one_line));
  } else if (cfg.localize_note) {
    snprintf(line, sizeof line, "    localize: %s", cfg.localize_note);
    tbc_table_note(t, tbc_one_line(line, one_line, sizeof one_line));
  }
}

static int print_report(const tb_validation_report *r, bool json, const char *what) {
  size_t passed = tb_validation_report_passed(r), total = tb_validation_report_total(r);
  if (json) {
    char *text = NULL;
    if (tb_validation_report_to_json(r, &text) != TB_OK) {
      tbc_error("%s", tb_last_error());
      return TBC_EXIT_FAILURE;
    }
    printf("%s\n", text);
    tb_free(text);
  } else {
    printf("%s\nmodel sha256 %s\n\n", what, tb_validation_report_model_sha256(r));
    tbc_table *t = tbc_table_new(COLUMNS, headers);
    if (!t) {
      tbc_error("out of memory");
      return TBC_EXIT_FAILURE;
    }
    for (size_t c = 0; c < total; c++) add_rows(t, r, c);
    tbc_table_print(t, stdout);
    tbc_table_free(t);
    printf("\npassed %zu/%zu\n", passed, total);
  }
  return passed == total ? TBC_EXIT_OK : TBC_EXIT_FAILURE;
}

/* ---- running ------------------------------------------------------------------------------------- */

static int run_validate(validate_opts *o) {
  tb_model *model = NULL;
  tb_backend *cpu = NULL;
  tb_tensor *tensors[TBC_RUN_MAX] = {0};
  int64_t dim_values[TBC_RUN_MAX];
  tb_validation_report *r = NULL;
  int code = TBC_EXIT_OK;
  tb_status st = tb_model_load(o->model, &model);
  bool file_failed = st != TB_OK; /* reading the model or an --input file: a permission error is exit 4 */
  if (st == TB_OK) st = tb_backend_create("cpu", &cpu);
  for (size_t i = 0; st == TB_OK && i < o->inputs.count; i++) {
    st = tb_npy_load(o->inputs.values[i], cpu, &tensors[i]);
    file_failed = st != TB_OK;
  }
  for (size_t i = 0; i < o->dims.count; i++) dim_values[i] = strtoll(o->dims.values[i], NULL, 10); /* checked */
  if (st == TB_OK) {
    tb_validate_options vo = {.size = sizeof vo, .backend_count = o->backend_count, .backends = o->backends,
                              .level_count = o->level_count, .levels = o->levels, .precision = o->precision,
                              .input_count = o->inputs.count, .input_names = o->inputs.names, .inputs = tensors,
                              .seed = o->seed, .dim_count = o->dims.count, .dim_names = o->dims.names,
                              .dim_values = dim_values, .localize = o->localize, .override_tolerance = o->has_rtol,
                              .rtol = o->rtol, .atol = o->atol};
    st = tb_validate(model, &vo, &r);
  }
  if (st != TB_OK) {
    tbc_error("%s", tb_last_error());
    code = file_failed ? tbc_exit_for_file_status(st) : tbc_exit_for_status(st);
  } else {
    char what[1200];
    snprintf(what, sizeof what, "validate %s against cpu O0 fp32 (inputs: %zu given, the others random with seed %llu)",
             o->model, o->inputs.count, (unsigned long long)o->seed);
    code = print_report(r, o->json, what);
  }
  tb_validation_report_destroy(r);
  for (size_t i = 0; i < o->inputs.count; i++) tb_tensor_destroy(tensors[i]);
  tb_backend_destroy(cpu);
  tb_model_destroy(model);
  return code;
}

static int run_replay(const validate_opts *o) {
  tb_validation_report *r = NULL;
  tb_status st = tb_validate_replay(o->replay, o->replay_model, o->backend, &r);
  if (st != TB_OK) {
    tbc_error("%s", tb_last_error());
    return tbc_exit_for_status(st);
  }
  char what[1200];
  snprintf(what, sizeof what, "replay %s against its recorded outputs", o->replay);
  int code = print_report(r, o->json, what);
  tb_validation_report_destroy(r);
  return code;
}

int tbc_cmd_validate(int argc, char **argv) {
  validate_opts o = {.precision = TB_PRECISION_AUTO};
  bool help_only = false;
  int code = parse_options(argc, argv, &o, &help_only);
  if (code == TBC_EXIT_OK && help_only) fputs(help, stdout);
  else if (code == TBC_EXIT_OK) code = o.replay ? run_replay(&o) : run_validate(&o);
  tbc_pairs_free(&o.inputs);
  tbc_pairs_free(&o.dims);
  free(o.backends_text);
  return code;
}
