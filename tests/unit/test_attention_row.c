/* The row step of the level-2 fp32 tb::Attention (tb_seq_attention_softmax_row: scale, mask, softmax of
 * one score row) on every path this CPU has (portable, AVX2 + FMA in seq_attention_avx2.c, AVX-512 in
 * seq_attention_avx512.c) against a double-precision softmax of the same fp32 scaled and masked row: row
 * lengths 1 to 17 (every partial vector of 8 and 16 lanes), 31, 64, 255 to 257 and 263, 300, 513 and 1500
 * (the 256-element fp32 sum chunks and their tails), scale none, multiplied and divided (by a power of two
 * too), mask none, contiguous, strided and one holding -inf (exact zeros there); nothing written past the
 * row; a row masked to a single key gives exactly 1 there; NaN in the row gives NaN everywhere, as the
 * portable row does.
 *
 * Tolerance: |row - ref| <= 2e-6 |ref| + 1e-30: the vector exp is within 2 ulp, the fp32 sum chunks add
 * below 32 x 2^-24 relative, and the inverse's product one rounding more. */
#include <float.h>
#include <math.h>
#include <string.h>
#include "backend/cpu/kernels/fast/gemm/gemm_f32.h"
#include "backend/cpu/kernels/fast/seq/seq_attention.h"
#include "core/convert_features.h"
#include "test_util.h"

#define RTOL 2e-6
#define ATOL 1e-30
enum { MAXN = 1500, GUARD = 16, MASK_STRIDE = 3 };

static const char *const path_names[3] = {"portable", "avx2", "avx512"};

/* The paths this CPU can run: portable always, AVX2 and AVX-512 when cpuid has them. */
static int n_paths(void) { return (int)tb_gemm_path_for(tb_convert_hardware_features()) + 1; }

static float value(uint64_t *s) {
  *s ^= *s << 13;
  *s ^= *s >> 7;
  *s ^= *s << 17;
  return (float)((double)(*s >> 40) / (double)(1ull << 24) * 8.0 - 4.0);
}

/* The double softmax of the fp32 scaled and masked row, as every path rounds those two steps. */
static void reference(const float *x, int64_t n, const seq_attention_row *how, double *out) {
  double mx = -INFINITY;
  for (int64_t c = 0; c < n; c++) {
    float v = x[c];
    if (how->has_scale) v = how->divide ? v / how->scale : v * how->scale;
    if (how->mask) v += how->mask[c * how->mask_step];
    out[c] = v;
    mx = v > mx ? v : mx;
  }
  double sum = 0.0;
  for (int64_t c = 0; c < n; c++) sum += out[c] = exp((double)(float)(out[c] - mx));
  for (int64_t c = 0; c < n; c++) out[c] /= sum;
}

static void check_row(int p, int64_t n, int scale, int mask, uint64_t seed) {
  static float x[MAXN], row[MAXN + GUARD], mk[MAXN * MASK_STRIDE];
  static double ref[MAXN];
  uint64_t s = seed * 0x9E3779B97F4A7C15ull + 1;
  for (int64_t c = 0; c < n; c++) x[c] = value(&s);
  for (int64_t c = 0; c < n * MASK_STRIDE; c++) mk[c] = value(&s);
  if (mask == 3) /* a causal-like row: keys past the middle off */
    for (int64_t c = n / 2 + 1; c < n; c++) mk[c] = -INFINITY;
  seq_attention_row how = {scale != 0, scale == 2, scale == 1 ? 0.35f : scale == 2 ? 2.75f : 1.0f,
                           mask ? mk : NULL, mask == 2 ? MASK_STRIDE : 1};
  if (scale == 3) { /* BERT's / 8 as the kernel runs it: * 0.125 */
    how.has_scale = true;
    how.scale = 0.125f;
  }
  memcpy(row, x, (size_t)n * sizeof(float));
  for (int i = 0; i < GUARD; i++) row[n + i] = 1234.5f;
  reference(x, n, &how, ref);
  tb_seq_attention_softmax_row((tb_gemm_path)p, row, n, &how);
  for (int64_t c = 0; c < n; c++) {
    if (mask == 3 && c > n / 2) {
      if (row[c] != 0.0f) fail_msg("%s path, n %lld: masked key %lld is %g, not 0", path_names[p], (long long)n,
                                   (long long)c, (double)row[c]);
      continue;
    }
    if (!(fabs((double)row[c] - ref[c]) <= RTOL * fabs(ref[c]) + ATOL))
      fail_msg("%s path, n %lld, scale %d, mask %d: element %lld is %.9g, the double softmax %.9g", path_names[p],
               (long long)n, scale, mask, (long long)c, (double)row[c], ref[c]);
  }
  for (int i = 0; i < GUARD; i++)
    if (row[n + i] != 1234.5f) fail_msg("%s path, n %lld: element %lld past the row was written", path_names[p],
                                        (long long)n, (long long)(n + i));
}

static void row_matches_double_softmax(void **state) {
  (void)state;
  static const int64_t lengths[] = {1,  2,  3,  4,   5,   6,   7,   8,   9,   10,  11,  12,   13,  14,
                                    15, 16, 17, 31,  64,  255, 256, 257, 263, 300, 513, 1500};
  for (int p = 0; p < n_paths(); p++)
    for (size_t i = 0; i < sizeof lengths / sizeof lengths[0]; i++)
      for (int scale = 0; scale < 4; scale++)
        for (int mask = 0; mask < 4; mask++) check_row(p, lengths[i], scale, mask, i * 16 + (size_t)(scale * 4 + mask));
}

static void single_key_and_nan(void **state) {
  (void)state;
  for (int p = 0; p < n_paths(); p++)
    for (int64_t n = 1; n <= 19; n += 3) {
      float row[19], mk[19];
      for (int64_t c = 0; c < n; c++) {
        row[c] = (float)c * 0.5f - 3.0f;
        mk[c] = c == n / 2 ? 0.0f : -INFINITY;
      }
      seq_attention_row how = {true, false, 0.5f, mk, 1};
      tb_seq_attention_softmax_row((tb_gemm_path)p, row, n, &how);
      for (int64_t c = 0; c < n; c++)
        if (row[c] != (c == n / 2 ? 1.0f : 0.0f))
          fail_msg("%s path, n %lld, one key left: element %lld is %g", path_names[p], (long long)n, (long long)c,
                   (double)row[c]);
      for (int64_t at = 0; at < n; at += 4) {
        for (int64_t c = 0; c < n; c++) row[c] = (float)c;
        row[at] = NAN;
        how = (seq_attention_row){false, false, 1.0f, NULL, 1};
        tb_seq_attention_softmax_row((tb_gemm_path)p, row, n, &how);
        for (int64_t c = 0; c < n; c++)
          if (!isnan(row[c]))
            fail_msg("%s path, n %lld, NaN at %lld: element %lld is %g, not NaN", path_names[p], (long long)n,
                     (long long)at, (long long)c, (double)row[c]);
      }
    }
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(row_matches_double_softmax),
      cmocka_unit_test(single_key_and_nan),
  };
  tbt_clear_env();
  return cmocka_run_group_tests(tests, NULL, NULL);
}
