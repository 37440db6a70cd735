/* The inputs of `tb run`, `tb bench` and `tb validate`: option pairs and random tensors (see run.h; the values come from the library's
 * tb_tensor_fill_random, so `tb run` and `tb validate` feed a model the same inputs for a seed). */
#include "run.h"
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include "args.h"
#include "common.h"

int tbc_pairs_add(tbc_pairs *pairs, const char *command, const char *option, const char *word) {
  const char *eq = strchr(word, '=');
  if (!eq || eq == word || !eq[1]) {
    tbc_error("'tb %s %s' takes NAME=VALUE, not '%s'; see 'tb %s --help'", command, option, word, command);
    return TBC_EXIT_USAGE;
  }
  if (pairs->count == TBC_RUN_MAX) {
    tbc_error("'tb %s' takes at most %d %s options", command, TBC_RUN_MAX, option);
    return TBC_EXIT_USAGE;
  }
  size_t len = (size_t)(eq - word);
  char *name = malloc(len + 1);
  if (!name) {
    tbc_error("out of memory");
    return TBC_EXIT_FAILURE;
  }
  memcpy(name, word, len);
  name[len] = '\0';
  for (size_t i = 0; i < pairs->count; i++)
    if (strcmp(pairs->names[i], name) == 0) {
      tbc_error("'tb %s %s %s' is given twice; see 'tb %s --help'", command, option, name, command);
      free(name);
      return TBC_EXIT_USAGE;
    }
  pairs->names[pairs->count] = name;
  pairs->values[pairs->count++] = eq + 1;
  return TBC_EXIT_OK;
}

void tbc_pairs_free(tbc_pairs *pairs) {
  for (size_t i = 0; i < pairs->count; i++) free((char *)pairs->names[i]);
  pairs->count = 0;
}

int tbc_parse_dim(const char *command, const char *name, const char *value, long long *out) {
  char option[160];
  snprintf(option, sizeof option, "--dim %s", name);
  return tbc_parse_int(command, option, value, 0, TBC_MAX_DIM, out);
}

int tbc_check_input_file(const char *command, const char *word, const char *path) {
  struct stat st;
  if (stat(path, &st) == 0 && S_ISDIR(st.st_mode)) {
    tbc_error("'tb %s --input %s': %s is a directory, not a .npy file; give the path of a .npy file; see 'tb %s "
              "--help'", command, word, path, command);
    return TBC_EXIT_USAGE;
  }
  return TBC_EXIT_OK;
}

const char *tbc_pairs_find(const tbc_pairs *pairs, const char *name) {
  for (size_t i = 0; i < pairs->count; i++)
    if (strcmp(pairs->names[i], name) == 0) return pairs->values[i];
  return NULL;
}

void tbc_note(tbc_notes *notes, const char *fmt, ...) {
  if (notes->count == sizeof notes->text / sizeof notes->text[0]) return;
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(notes->text[notes->count++], sizeof notes->text[0], fmt, ap);
  va_end(ap);
}

int tbc_random_input(const char *command, tb_backend *backend, const tb_model_io *io, size_t index, uint64_t seed,
                     const tbc_pairs *dims, tbc_notes *notes, tb_tensor **out) {
  *out = NULL;
  int64_t shape[TB_MAX_DIMS];
  if (!io->has_shape) tbc_note(notes, "input '%s' declares no shape: using a scalar", io->name);
  size_t ndim = io->has_shape ? io->ndim : 0;
  for (size_t d = 0; d < ndim; d++) {
    shape[d] = io->dims[d];
    if (shape[d] >= 0) continue;
    const char *sym = io->dim_names[d] && io->dim_names[d][0] ? io->dim_names[d] : NULL;
    const char *given = sym ? tbc_pairs_find(dims, sym) : NULL;
    if (given) {
      long long v;
      int code = tbc_parse_dim(command, sym, given, &v);
      if (code != TBC_EXIT_OK) return code;
      shape[d] = v;
    } else {
      shape[d] = 1;
      if (sym)
        tbc_note(notes, "input '%s' dimension %zu '%s' is symbolic: using 1 (set it with --dim %s=N)", io->name, d, sym,
                 sym);
      else
        tbc_note(notes, "input '%s' dimension %zu is unknown: using 1 (give the input with --input %s=FILE.npy)",
                 io->name, d, io->name);
    }
  }
  tb_tensor *t = NULL;
  tb_status st = tb_tensor_create(backend, io->dtype, ndim, shape, &t);
  if (st != TB_OK) {
    tbc_error("input '%s': %s", io->name, tb_last_error());
    return tbc_exit_for_status(st);
  }
  st = tb_tensor_fill_random(t, seed, index); /* the library's generator, shared with tb validate */
  if (st != TB_OK) {
    tbc_error("input '%s': %s", io->name, tb_last_error());
    tb_tensor_destroy(t);
    return tbc_exit_for_status(st);
  }
  *out = t;
  return TBC_EXIT_OK;
}
