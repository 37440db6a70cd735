/* Option parsing shared by the sub-commands: boolean flags, positional arguments, --help, numbers, and
 * usage errors that name the bad argument and point to the command's --help. */
#ifndef TB_CLI_ARGS_H
#define TB_CLI_ARGS_H
#include <stdbool.h>
#include <stddef.h>

/* A flag such as "--json"; *set becomes true when it is given. */
typedef struct tbc_option {
  const char *name;
  bool *set;
} tbc_option;

#define TBC_MAX_POSITIONAL 4

typedef struct tbc_args {
  const char *positional[TBC_MAX_POSITIONAL];
  size_t positional_count;
  bool help; /* -h or --help was given */
} tbc_args;

/* Parse argv[0..argc) (the words after the command name) for `tb <command>`.
 * options ends with {NULL, NULL}. At most max_positional words that do not start with '-' are
 * accepted; "--" makes every later word positional. Returns 0, or 2 after printing a usage error
 * ("tb: error: unknown option '--x' for 'tb devices'; see 'tb devices --help'") on stderr. */
int tbc_parse_args(const char *command, int argc, char **argv, const tbc_option *options, size_t max_positional,
                   tbc_args *out);

/* Called for each option that takes a value ("--level O1" or "--level=O1"); returns an exit code. */
typedef int (*tbc_value_fn)(void *ctx, const char *name, const char *value);

/* Parse the words after `tb <command>` for commands with valued options and one positional argument (the
 * model): flags (ending with {NULL, NULL}) are set, each name in `valued` (n_valued entries) is passed with
 * its value to on_value, -h/--help sets *out_help, "--" makes later words positional. Usage errors name the
 * word and point to the command's --help, and return 2. *out_positional is NULL when none was given. */
int tbc_parse_valued(const char *command, int argc, char **argv, const tbc_option *flags, const char *const *valued,
                     size_t n_valued, tbc_value_fn on_value, void *ctx, const char **out_positional, bool *out_help);

/* A usage error of `tb <command>`: prints "tb: error: <formatted sentence>; see 'tb <command> --help'" on
 * stderr and returns 2 (TBC_EXIT_USAGE). */
int tbc_usage(const char *command, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* The one parser of whole numbers in option values: decimal digits (a leading '-' where min < 0), nothing
 * else, from min to max. A number out of range (also one too long for 64 bits) is refused, never clamped:
 * 2 after "tb: error: 'tb run --dim batch' takes a whole number from 0 to 1099511627776, not '...'; see
 * 'tb run --help'". `option` is what the sentence names ("--threads", "--dim batch"). */
int tbc_parse_int(const char *command, const char *option, const char *text, long long min, long long max,
                  long long *out);
/* The same for a decimal or exponent number ("1e-4") from min to max; NaN and infinity are refused. */
int tbc_parse_double(const char *command, const char *option, const char *text, double min, double max, double *out);

#endif
