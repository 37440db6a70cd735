/* Random inputs from a seed: what `tb run` and `tb validate` feed a model when no input is given.
 * A xorshift64* stream seeded from (seed, index) gives floats uniform in [-1, 1) (narrow floats rounded
 * from f32), integers in [0, 10) and bool 0/1, so the same seed gives the same tensors everywhere. */
#include <stdlib.h>
#include <string.h>
#include <tensorbridge/validate.h>
#include "core/error.h"

static uint64_t next_random(uint64_t *state) {
  uint64_t x = *state;
  x ^= x >> 12;
  x ^= x << 25;
  x ^= x >> 27;
  *state = x;
  return x * 0x2545F4914F6CDD1Dull;
}

static bool narrow_float(tb_dtype d) {
  return d == TB_DTYPE_F16 || d == TB_DTYPE_BF16 || d == TB_DTYPE_FP8_E4M3FN || d == TB_DTYPE_FP8_E5M2;
}

static void fill(tb_dtype dtype, void *dst, int64_t n, uint64_t *state) {
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

tb_status tb_tensor_fill_random(tb_tensor *tensor, uint64_t seed, size_t index) {
  if (!tensor) return tb_error(TB_ERR_INVALID_ARGUMENT, "tb_tensor_fill_random: tensor must not be NULL");
  tb_dtype dtype = tb_tensor_dtype(tensor);
  int64_t n = tb_tensor_numel(tensor);
  size_t esize = tb_dtype_size(dtype);
  size_t nbytes = tb_tensor_nbytes(tensor);
  size_t tmp_size = (size_t)n * (narrow_float(dtype) ? 4 : esize);
  void *host = malloc(tmp_size ? tmp_size : 1);
  void *packed = malloc(nbytes ? nbytes : 1);
  if (!host || !packed) {
    free(host);
    free(packed);
    return tb_error(TB_ERR_OUT_OF_MEMORY, "tb_tensor_fill_random: out of memory for %zu bytes", tmp_size + nbytes);
  }
  uint64_t state = (seed + 1) * 0x9E3779B97F4A7C15ull + index * 0xD1B54A32D192ED03ull + 1;
  if (!state) state = 1;
  fill(dtype, host, n, &state);
  tb_status st = TB_OK;
  if (narrow_float(dtype)) st = tb_convert(TB_DTYPE_F32, host, dtype, packed, (size_t)n, true);
  else memcpy(packed, host, nbytes);
  if (st == TB_OK && n) st = tb_tensor_copy_from_host(tensor, packed, nbytes);
  free(host);
  free(packed);
  return st;
}
