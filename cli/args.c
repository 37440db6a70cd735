/* Option parsing shared by the sub-commands (see args.h). */
#include "args.h"
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "common.h"

int tbc_usage(const char *command, const char *fmt, ...) {
  char msg[1024];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(msg, sizeof msg, fmt, ap);
  va_end(ap);
  tbc_error("%s; see 'tb %s --help'", msg, command);
  return TBC_EXIT_USAGE;
}

static bool is_option(const char *word) { return word[0] == '-' && word[1] != '\0'; }

static bool set_flag(const tbc_option *options, const char *word) {
  for (const tbc_option *o = options; o && o->name; o++) {
    if (strcmp(o->name, word) == 0) {
      *o->set = true;
      return true;
    }
  }
  return false;
}

int tbc_parse_args(const char *command, int argc, char **argv, const tbc_option *options, size_t max_positional,
                   tbc_args *out) {
  memset(out, 0, sizeof *out);
  if (max_positional > TBC_MAX_POSITIONAL) max_positional = TBC_MAX_POSITIONAL;
  bool only_positional = false;
  for (int i = 0; i < argc; i++) {
    const char *word = argv[i];
    if (!only_positional && strcmp(word, "--") == 0) {
      only_positional = true;
      continue;
    }
    if (!only_positional && is_option(word)) {
      if (strcmp(word, "-h") == 0 || strcmp(word, "--help") == 0) {
        out->help = true;
        continue;
      }
      if (set_flag(options, word)) continue;
      tbc_error("unknown option '%s' for 'tb %s'; see 'tb %s --help'", word, command, command);
      return TBC_EXIT_USAGE;
    }
    if (out->positional_count >= max_positional) {
      if (max_positional == 0)
        tbc_error("'tb %s' takes no arguments, but got '%s'; see 'tb %s --help'", command, word, command);
      else
        tbc_error("unexpected argument '%s' for 'tb %s'; see 'tb %s --help'", word, command, command);
      return TBC_EXIT_USAGE;
    }
    out->positional[out->positional_count++] = word;
  }
  return TBC_EXIT_OK;
}

int tbc_parse_valued(const char *command, int argc, char **argv, const tbc_option *flags, const char *const *valued,
                     size_t n_valued, tbc_value_fn on_value, void *ctx, const char **out_positional, bool *out_help) {
  *out_positional = NULL;
  *out_help = false;
  bool only_positional = false;
  for (int i = 0; i < argc; i++) {
    const char *word = argv[i];
    if (!only_positional && strcmp(word, "--") == 0) {
      only_positional = true;
      continue;
    }
    if (only_positional || !is_option(word)) {
      if (*out_positional) {
        tbc_error("unexpected argument '%s' for 'tb %s' (the model is '%s'); see 'tb %s --help'", word, command,
                  *out_positional, command);
        return TBC_EXIT_USAGE;
      }
      *out_positional = word;
      continue;
    }
    if (strcmp(word, "-h") == 0 || strcmp(word, "--help") == 0) {
      *out_help = true;
      continue;
    }
    if (set_flag(flags, word)) continue;
    /* --name VALUE or --name=VALUE */
    char name[32];
    const char *eq = strchr(word, '=');
    size_t len = eq ? (size_t)(eq - word) : strlen(word);
    bool known = false;
    if (len < sizeof name) {
      memcpy(name, word, len);
      name[len] = '\0';
      for (size_t k = 0; k < n_valued && !known; k++) known = strcmp(name, valued[k]) == 0;
    }
    if (!known) {
      tbc_error("unknown option '%s' for 'tb %s'; see 'tb %s --help'", word, command, command);
      return TBC_EXIT_USAGE;
    }
    const char *value = eq ? eq + 1 : i + 1 < argc ? argv[++i] : NULL;
    if (!value) {
      tbc_error("'tb %s %s' needs a value; see 'tb %s --help'", command, name, command);
      return TBC_EXIT_USAGE;
    }
    int code = on_value(ctx, name, value);
    if (code != TBC_EXIT_OK) return code;
  }
  return TBC_EXIT_OK;
}

int tbc_parse_int(const char *command, const char *option, const char *text, long long min, long long max,
                  long long *out) {
  char *end = NULL;
  errno = 0;
  long long v = strtoll(text, &end, 10);
  bool digits_only = (text[0] >= '0' && text[0] <= '9') || (text[0] == '-' && text[1] >= '0' && text[1] <= '9');
  if (!digits_only || *end || errno == ERANGE || v < min || v > max) {
    tbc_error("'tb %s %s' takes a whole number from %lld to %lld, not '%s'; see 'tb %s --help'", command, option, min,
              max, text, command);
    return TBC_EXIT_USAGE;
  }
  *out = v;
  return TBC_EXIT_OK;
}

int tbc_parse_double(const char *command, const char *option, const char *text, double min, double max, double *out) {
  char *end = NULL;
  errno = 0;
  double v = strtod(text, &end);
  bool number_start = (text[0] >= '0' && text[0] <= '9') || text[0] == '.' || text[0] == '-' || text[0] == '+';
  if (!number_start || end == text || *end || errno == ERANGE || !(v >= min && v <= max)) {
    tbc_error("'tb %s %s' takes a number from %g to %g, not '%s'; see 'tb %s --help'", command, option, min, max, text,
              command);
    return TBC_EXIT_USAGE;
  }
  *out = v;
  return TBC_EXIT_OK;
}
