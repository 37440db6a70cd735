/* Option parsing shared by the sub-commands (see args.h). */
#include "args.h"
#include <string.h>
#include "common.h"

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
