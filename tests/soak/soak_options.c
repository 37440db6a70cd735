/* tb_soak's command line: every option's value is checked, and a bad one is a sentence naming the option, the
 * value and what it takes (exit 2). */
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "soak.h"

static const char usage_text[] =
    "usage: tb_soak [--duration S] [--warmup S] [--threads N] [--backends LIST] [--levels LIST] [--max-dim N]\n"
    "               [--max-rss-growth MIB] [--max-reserved-growth MIB] MODEL.onnx...\n"
    "  --duration S             seconds of running (default 600)\n"
    "  --warmup S               least seconds before the memory baseline (default a tenth of the duration, >= 2)\n"
    "  --threads N              worker threads, each with its own backends and prepared models (default 2)\n"
    "  --backends LIST          comma-separated requests such as cpu,opencl:0 (default every available backend)\n"
    "  --levels LIST            comma-separated O0..O3 (default O2)\n"
    "  --max-dim N              symbolic dims such as batch take 1..N (default 4)\n"
    "  --max-rss-growth MIB     bound on the settled RSS growth after the warm-up (default 16)\n"
    "  --max-reserved-growth MIB  bound on each backend's reserved-memory growth after the warm-up (default 0)\n";

static int usage(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static int usage(const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  fprintf(stderr, "tb_soak: ");
  vfprintf(stderr, fmt, ap);
  fprintf(stderr, "\n%s", usage_text);
  va_end(ap);
  return SOAK_EXIT_USAGE;
}

static bool parse_double(const char *text, double min, double max, double *out) {
  char *end = NULL;
  double v = strtod(text, &end);
  if (end == text || *end != '\0' || !isfinite(v) || v < min || v > max) return false;
  *out = v;
  return true;
}

static bool parse_int(const char *text, int min, int max, int *out) {
  char *end = NULL;
  long v = strtol(text, &end, 10);
  if (end == text || *end != '\0' || v < min || v > max) return false;
  *out = (int)v;
  return true;
}

/* Splits a comma list in place into out[], at most cap words; false on an empty word or too many. */
static bool split_list(char *text, const char **out, size_t cap, size_t *count) {
  *count = 0;
  for (char *save = NULL, *word = strtok_r(text, ",", &save); word; word = strtok_r(NULL, ",", &save)) {
    if (*count == cap) return false;
    out[(*count)++] = word;
  }
  return *count > 0;
}

static int parse_levels(char *text, soak_options *o) {
  const char *words[SOAK_MAX_LEVELS + 1];
  size_t n = 0;
  char given[256];
  snprintf(given, sizeof given, "%s", text);
  if (!split_list(text, words, SOAK_MAX_LEVELS, &n))
    return usage("--levels '%s' is not a list of up to 4 levels; give e.g. O1,O2", given);
  for (size_t i = 0; i < n; i++) {
    if (tb_opt_level_parse(words[i], &o->levels[i]) != TB_OK)
      return usage("--levels: '%s' is not a level; use O0, O1, O2 or O3", words[i]);
  }
  o->level_count = n;
  return 0;
}

static int parse_inject(const char *text, soak_options *o) {
  static const char *const names[] = {"none", "corrupt", "leak", "reserved"};
  for (size_t i = 0; i < sizeof names / sizeof names[0]; i++) {
    if (strcmp(text, names[i]) == 0) {
      o->inject = (soak_inject)i;
      return 0;
    }
  }
  return usage("--inject '%s' is not a fault; use corrupt, leak or reserved", text);
}

static int parse_value(const char *name, char *value, soak_options *o) {
  if (strcmp(name, "--duration") == 0) {
    if (!parse_double(value, 1, 86400, &o->duration_s))
      return usage("--duration '%s' is not a number of seconds from 1 to 86400", value);
  } else if (strcmp(name, "--warmup") == 0) {
    if (!parse_double(value, 0, 86400, &o->warmup_s))
      return usage("--warmup '%s' is not a number of seconds from 0 to 86400", value);
  } else if (strcmp(name, "--threads") == 0) {
    if (!parse_int(value, 1, SOAK_MAX_THREADS, &o->threads))
      return usage("--threads '%s' is not a count from 1 to 16", value);
  } else if (strcmp(name, "--max-dim") == 0) {
    if (!parse_int(value, 1, SOAK_MAX_CASES, &o->max_dim))
      return usage("--max-dim '%s' is not a value from 1 to 8", value);
  } else if (strcmp(name, "--max-rss-growth") == 0) {
    if (!parse_double(value, 0, 1 << 20, &o->max_rss_growth_mib))
      return usage("--max-rss-growth '%s' is not a number of MiB from 0 to 1048576", value);
  } else if (strcmp(name, "--max-reserved-growth") == 0) {
    if (!parse_double(value, 0, 1 << 20, &o->max_reserved_growth_mib))
      return usage("--max-reserved-growth '%s' is not a number of MiB from 0 to 1048576", value);
  } else if (strcmp(name, "--backends") == 0) {
    char given[256];
    snprintf(given, sizeof given, "%s", value);
    if (!split_list(value, o->backends, SOAK_MAX_BACKENDS, &o->backend_count))
      return usage("--backends '%s' is not a list of up to 8 backends; give e.g. cpu,opencl:0", given);
    o->backends_given = true;
  } else if (strcmp(name, "--levels") == 0) {
    return parse_levels(value, o);
  } else if (strcmp(name, "--inject") == 0) {
    return parse_inject(value, o);
  } else {
    return usage("unknown option '%s'", name);
  }
  return 0;
}

int soak_parse_options(int argc, char **argv, soak_options *o) {
  *o = (soak_options){.duration_s = 600, .warmup_s = -1, .threads = 2, .max_dim = 4, .max_rss_growth_mib = 16,
                      .max_reserved_growth_mib = 0, .level_count = 1, .levels = {TB_LEVEL_O2}};
  for (int i = 1; i < argc; i++) {
    const char *a = argv[i];
    if (strcmp(a, "--help") == 0 || strcmp(a, "-h") == 0) {
      fputs(usage_text, stdout);
      exit(0);
    }
    if (strncmp(a, "--", 2) == 0) {
      if (i + 1 >= argc) return usage("option '%s' needs a value", a);
      int rc = parse_value(a, argv[++i], o);
      if (rc != 0) return rc;
    } else if (o->model_count == SOAK_MAX_MODELS) {
      return usage("more than 16 models given (at '%s')", a);
    } else {
      o->models[o->model_count++] = a;
    }
  }
  if (o->model_count == 0) return usage("no model given; name one or more .onnx files");
  if (o->warmup_s < 0) o->warmup_s = fmax(2.0, o->duration_s / 10);
  if (o->warmup_s >= o->duration_s) {
    char warmup[32], duration[32];
    snprintf(warmup, sizeof warmup, "%g", o->warmup_s);
    snprintf(duration, sizeof duration, "%g", o->duration_s);
    return usage("the warm-up of %s s is not shorter than the duration of %s s; lower --warmup or raise --duration",
                 warmup, duration);
  }
  return 0;
}
