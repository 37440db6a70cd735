/* `tb run`'s inputs: option pairs and random tensors (see run_inputs.h). */
#include "run.h"
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "common.h"

int tbc_pairs_add(tbc_pairs *pairs, const char *option, const char *word) {
  const char *eq = strchr(word, '=');
  if (!eq || eq == word || !eq[1]) {
    tbc_error("'tb run %s' takes NAME=VALUE, not '%s'; see 'tb run --help'", option, word);
    return TBC_EXIT_USAGE;
  }
  if (pairs->count == TBC_RUN_MAX) {
    tbc_error("'tb run' takes at most %d %s options", TBC_RUN_MAX, option);
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
      tbc_error("'tb run %s %s' is given twice; see 'tb run --help'", option, name);
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

static uint64_t next_random(uint64_t *state) {
  uint64_t x = *state;
  x ^= x >> 12;
  x ^= x << 25;
  x ^= x >> 27;
  *state = x;
  return x * 0x2545F4914F6CDD1Dull;
}

static bool is_float(tb_dtype d) {
  return d == TB_DTYPE_F64 || d == TB_DTYPE_F32 || d == TB_DTYPE_F16 || d == TB_DTYPE_BF16 ||
         d == TB_DTYPE_FP8_E4M3FN || d == TB_DTYPE_FP8_E5M2;
}

static void fill_random(tb_dtype dtype, void *dst, int64_t n, uint64_t *state) {
  for (int64_t i = 0; i < n; i++) {
    uint64_t r = next_random(state);
    double u = (double)(r >> 11) / 9007199254740992.0; /* [0, 1) */
    switch (dtype) {
    case TB_DTYPE_F64: ((double *)dst)[i] = 2 * u - 1; break;
    case TB_DTYPE_I64: ((int64_t *)dst)[i] = (int64_t)(r % 10); break;
    case TB_DTYPE_I32: ((int32_t *)dst)[i] = (int32_t)(r % 10); break;
    case TB_DTYPE_I16: ((int16_t *)dst)[i] = (int16_t)(r % 10); break;
    case TB_DTYPE_I8: ((int8_t *)dst)[i] = (int8_t)(r % 10); break;
    case TB_DTYPE_U8: ((uint8_t *)dst)[i] = (uint8_t)(r % 10); break;
    case TB_DTYPE_BOOL: ((uint8_t *)dst)[i] = (uint8_t)(r & 1); break;
    default: ((float *)dst)[i] = (float)(2 * u - 1); break; /* f32, and the narrow floats before conversion */
    }
  }
}

int tbc_random_input(tb_backend *backend, const tb_model_io *io, size_t index, uint64_t seed, const tbc_pairs *dims,
                     tbc_notes *notes, tb_tensor **out) {
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
      char *end;
      long long v = strtoll(given, &end, 10);
      if (*end || v < 0) {
        tbc_error("'tb run --dim %s=%s': the size must be a whole number >= 0; see 'tb run --help'", sym, given);
        return TBC_EXIT_USAGE;
      }
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
  int64_t n = tb_tensor_numel(t);
  size_t esize = tb_dtype_size(io->dtype);
  size_t tmp_size = (size_t)n * (is_float(io->dtype) && esize < 4 ? 4 : esize);
  void *host = malloc(tmp_size ? tmp_size : 1);
  void *packed = malloc(tb_tensor_nbytes(t) ? tb_tensor_nbytes(t) : 1);
  if (!host || !packed) {
    free(host);
    free(packed);
    tb_tensor_destroy(t);
    tbc_error("out of memory for input '%s'", io->name);
    return TBC_EXIT_FAILURE;
  }
  uint64_t state = (seed + 1) * 0x9E3779B97F4A7C15ull + index * 0xD1B54A32D192ED03ull + 1;
  if (!state) state = 1;
  fill_random(io->dtype, host, n, &state);
  if (is_float(io->dtype) && esize < 4)
    st = tb_convert(TB_DTYPE_F32, host, io->dtype, packed, (size_t)n, true);
  else
    memcpy(packed, host, (size_t)n * esize);
  if (st == TB_OK && n) st = tb_tensor_copy_from_host(t, packed, tb_tensor_nbytes(t));
  free(host);
  free(packed);
  if (st != TB_OK) {
    tbc_error("input '%s': %s", io->name, tb_last_error());
    tb_tensor_destroy(t);
    return tbc_exit_for_status(st);
  }
  *out = t;
  return TBC_EXIT_OK;
}
