/* The level-2 Transpose (src/backend/cpu/kernels/fast/vec/vec_transpose.c) on its AVX-512, AVX2 and
 * portable entries, without and with a 2-thread pool, against the level-0 reference kernel byte for byte
 * (a transpose moves elements, so NaN payloads and -0 must survive): every permutation of a rank-4 tensor
 * whose dims are not multiples of the 16-wide tiles, the layouts the real models transpose (NCHW <-> NHWC,
 * the attention's [B, S, H, D] -> [B, H, S, D] and [B, H, S, D] -> [B, H, D, S]), 2-D with full and ragged
 * tiles, size-1 dims that the permutation moves, the identity, an empty tensor, and element sizes 1, 2,
 * 4 and 8 (uint8, float16, float32, int64); also that the executor picks each entry under the CPU masks. */
#include <string.h>
#include "test_vec_util.h"

/* Deterministic bytes (every bit pattern: NaNs and -0 included for the float types). */
static tb_tensor *bytes_tensor(toh *t, tb_dtype dtype, size_t ndim, const int64_t *shape, uint64_t seed) {
  int64_t n = 1;
  for (size_t d = 0; d < ndim; d++) n *= shape[d];
  size_t bytes = (size_t)n * tb_dtype_size(dtype);
  unsigned char *p = malloc(bytes ? bytes : 1);
  assert_non_null(p);
  uint64_t s = seed * 0x9E3779B97F4A7C15ull + 7;
  for (size_t i = 0; i < bytes; i++) {
    s ^= s >> 12;
    s ^= s << 25;
    s ^= s >> 27;
    p[i] = (unsigned char)((s * 0x2545F4914F6CDD1Dull) >> 56);
  }
  tb_tensor *r = toh_host_tensor(t->cpu, dtype, ndim, shape, p);
  free(p);
  return r;
}

static void assert_same_bytes(const tb_tensor *got, const tb_tensor *ref, const char *what) {
  assert_non_null(got);
  toh_assert_tensor(got, tb_tensor_dtype(ref), tb_tensor_ndim(ref), tb_tensor_shape(ref));
  if (tb_tensor_nbytes(ref) && memcmp(tb_tensor_host_data(got), tb_tensor_host_data(ref), tb_tensor_nbytes(ref)) != 0)
    fail_msg("%s: output differs from the reference", what);
}

/* Transpose of a tensor of this dtype and shape with perm (NULL: the default reversal) on every entry. */
static void check(tb_dtype dtype, size_t ndim, const int64_t *shape, const int64_t *perm, bool picks) {
  const tb_kernel *entries[3] = VT_ENTRIES(transpose);
  toh t;
  toh_begin(&t, NULL);
  tb_attr attrs[1] = {TOH_INTS_N("perm", perm, ndim)};
  toh_add(&t, "Transpose", 13, 1, 0, 1, 0, attrs, perm ? 1 : 0);
  tb_tensor *in[1] = {bytes_tensor(&t, dtype, ndim, shape, ndim * 31 + (perm ? (uint64_t)perm[0] : 9))};
  if (picks) vt_assert_picks(&t, in, entries);
  tb_tensor *ref[1], *got[1];
  TB_ASSERT_OK(toh_run_tensors(&t, in, ref, false));
  char what[160];
  int len = snprintf(what, sizeof what, "%s [", tb_dtype_name(dtype));
  for (size_t d = 0; d < ndim; d++) len += snprintf(what + len, sizeof what - (size_t)len, "%s%lld", d ? "," : "", (long long)shape[d]);
  len += snprintf(what + len, sizeof what - (size_t)len, "] perm");
  for (size_t d = 0; perm && d < ndim; d++) len += snprintf(what + len, sizeof what - (size_t)len, " %lld", (long long)perm[d]);
  for (int p = 0; p < 3; p++) {
    if (!vt_runnable(entries[p])) continue;
    for (int threaded = 0; threaded < 2; threaded++) {
      vt_run(&t, entries[p], in, got, threaded ? vt_pool : NULL);
      char label[240];
      snprintf(label, sizeof label, "%s on %s%s", what, vt_path_names[p], threaded ? " (2 threads)" : "");
      assert_same_bytes(got[0], ref[0], label);
      toh_clear(got, 1);
    }
  }
  toh_clear(ref, 1);
  toh_clear(in, 1);
  toh_teardown(&t);
}

static void every_rank4_permutation(void **state) {
  (void)state;
  const int64_t shape[4] = {3, 17, 5, 33};
  int64_t perm[4];
  for (int a = 0; a < 4; a++)
    for (int b = 0; b < 4; b++)
      for (int c = 0; c < 4; c++)
        for (int d = 0; d < 4; d++) {
          if (a == b || a == c || a == d || b == c || b == d || c == d) continue;
          perm[0] = a, perm[1] = b, perm[2] = c, perm[3] = d;
          check(TB_DTYPE_F32, 4, shape, perm, a == 0 && b == 2 && c == 3);
        }
}

static void model_layouts(void **state) {
  (void)state;
  check(TB_DTYPE_F32, 4, (const int64_t[]){1, 96, 56, 56}, (const int64_t[]){0, 2, 3, 1}, false); /* NCHW -> NHWC */
  check(TB_DTYPE_F32, 4, (const int64_t[]){2, 28, 28, 40}, (const int64_t[]){0, 3, 1, 2}, false); /* NHWC -> NCHW */
  check(TB_DTYPE_F32, 4, (const int64_t[]){1, 50, 12, 64}, (const int64_t[]){0, 2, 1, 3}, false); /* heads */
  check(TB_DTYPE_F32, 4, (const int64_t[]){1, 12, 50, 64}, (const int64_t[]){0, 1, 3, 2}, false); /* K^T */
  check(TB_DTYPE_F32, 3, (const int64_t[]){64, 1, 256}, (const int64_t[]){1, 0, 2}, false);       /* crnn [T,N,C] */
  check(TB_DTYPE_F32, 2, (const int64_t[]){64, 48}, NULL, false);                                /* full tiles */
  check(TB_DTYPE_F32, 2, (const int64_t[]){33, 47}, NULL, false);                                /* ragged tiles */
}

static void edge_shapes(void **state) {
  (void)state;
  check(TB_DTYPE_F32, 4, (const int64_t[]){1, 17, 1, 33}, (const int64_t[]){3, 2, 1, 0}, false); /* size-1 dims */
  check(TB_DTYPE_F32, 3, (const int64_t[]){4, 5, 6}, (const int64_t[]){0, 1, 2}, false);         /* identity */
  check(TB_DTYPE_F32, 1, (const int64_t[]){19}, NULL, false);
  check(TB_DTYPE_F32, 0, NULL, NULL, false); /* a scalar */
  check(TB_DTYPE_F32, 3, (const int64_t[]){4, 0, 6}, (const int64_t[]){2, 0, 1}, false); /* empty */
  check(TB_DTYPE_F32, 5, (const int64_t[]){2, 3, 4, 5, 6}, (const int64_t[]){4, 2, 0, 3, 1}, false);
}

static void element_sizes(void **state) {
  (void)state;
  const tb_dtype types[] = {TB_DTYPE_U8, TB_DTYPE_F16, TB_DTYPE_I64, TB_DTYPE_BOOL, TB_DTYPE_F64};
  for (size_t i = 0; i < sizeof types / sizeof types[0]; i++) {
    check(types[i], 4, (const int64_t[]){2, 19, 7, 35}, (const int64_t[]){0, 2, 3, 1}, false);
    check(types[i], 2, (const int64_t[]){40, 37}, NULL, false);
    check(types[i], 4, (const int64_t[]){1, 9, 12, 16}, (const int64_t[]){0, 2, 1, 3}, false);
  }
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(every_rank4_permutation),
      cmocka_unit_test(model_layouts),
      cmocka_unit_test(edge_shapes),
      cmocka_unit_test(element_sizes),
  };
  return cmocka_run_group_tests(tests, vt_setup, vt_teardown);
}
