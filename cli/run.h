/* What the files of `tb run` share: the command's entry point (cmd_run.c), and its inputs
 * (run_inputs.c): NAME=FILE.npy and NAME=N options, and random tensors of a model input's declared dtype
 * and shape (symbolic dims from --dim, else 1, with a note saying so). */
#ifndef TB_CLI_RUN_H
#define TB_CLI_RUN_H
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <tensorbridge/tensorbridge.h>

#define TBC_RUN_MAX 64
/* The ranges of the options run, validate and bench share: --seed (exact in a JSON number), --dim sizes and
 * the tolerances. */
#define TBC_MAX_SEED (1LL << 53)
#define TBC_MAX_DIM (1LL << 40)
#define TBC_MAX_TOLERANCE 1e300

/* `tb run`: argv holds the words after "run"; returns the exit code. */
int tbc_cmd_run(int argc, char **argv);

/* Make the folder of --output-dir as `mkdir -p` does; prints an error naming the part that failed and
 * returns the exit code. */
int tbc_make_output_dir(const char *dir);

/* "NAME=VALUE" options as given. */
typedef struct tbc_pairs {
  const char *names[TBC_RUN_MAX];
  const char *values[TBC_RUN_MAX];
  size_t count;
} tbc_pairs;

/* Split "NAME=VALUE" (NAME and VALUE non-empty) into the list; 2 after a usage error naming `tb <command>`
 * and `option`. */
int tbc_pairs_add(tbc_pairs *pairs, const char *command, const char *option, const char *word);
void tbc_pairs_free(tbc_pairs *pairs);
/* The size N of "--dim NAME=N" as a whole number from 0 to TBC_MAX_DIM; 2 after a usage error naming it. */
int tbc_parse_dim(const char *command, const char *name, const char *value, long long *out);
/* The FILE of "--input NAME=FILE" given as `word`: 2 after a usage error when it is a directory (the
 * library would read it as an empty file); a missing or unreadable file is left to the loader. */
int tbc_check_input_file(const char *command, const char *word, const char *path);
/* The value for name, or NULL. */
const char *tbc_pairs_find(const tbc_pairs *pairs, const char *name);

/* Notes for the user ("input 'x' dimension 0 'batch' is symbolic: using 1"), collected while making inputs. */
typedef struct tbc_notes {
  char text[16][256];
  size_t count;
} tbc_notes;

void tbc_note(tbc_notes *notes, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* A tensor of io's dtype and declared shape on backend, filled from a xorshift generator seeded with
 * `seed` and the input's index: floats uniform in [-1, 1), integers in [0, 10), bool 0/1. Unknown dims
 * come from dims (--dim NAME=N) or are 1 (with a note). Prints an error and returns the exit code on failure. */
int tbc_random_input(const char *command, tb_backend *backend, const tb_model_io *io, size_t index, uint64_t seed,
                     const tbc_pairs *dims, tbc_notes *notes, tb_tensor **out);

#endif
