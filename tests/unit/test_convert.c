/* tb_convert between f32 and the small float formats, exhaustively, on every path this CPU has
 * (AVX512-BF16, AVX-512, F16C, portable): every f16/bf16/fp8 bit pattern decoded; every value, every
 * midpoint between neighbours and the floats just around it encoded; the overflow, Inf, NaN and
 * subnormal edges; a sweep of one f32 bit pattern in 4099 compared bit for bit with the portable
 * path; and the same through the public call with TB_CPU_FEATURES masking the vector paths off. */
#include <stdio.h>
#include <stdlib.h>

#include "test_convert_util.h"
#include "test_util.h"

static const tbt_format *format_of(tb_dtype d) {
  for (size_t i = 0; i < TBT_FORMAT_COUNT; i++)
    if (tbt_formats[i].dtype == d) return &tbt_formats[i];
  return NULL;
}

/* Decode all 2^width patterns with the path and compare with tbt_decode; NaN must be a quiet NaN
 * with the same sign (f16 also keeps its payload, bf16 is a plain shift). */
static void check_decode_all(const tbt_format *f, const tbt_path *path) {
  size_t n = (size_t)1 << f->width;
  void *src = malloc(n * (size_t)(f->width / 8));
  uint32_t *out = malloc(n * sizeof *out);
  assert_non_null(src);
  assert_non_null(out);
  for (size_t i = 0; i < n; i++) {
    if (f->width == 8) ((uint8_t *)src)[i] = (uint8_t)i;
    else ((uint16_t *)src)[i] = (uint16_t)i;
  }
  TB_ASSERT_OK(tb_convert_with_features(f->dtype, src, TB_DTYPE_F32, out, n, true, path->features));
  size_t bad = 0;
  for (size_t i = 0; i < n; i++) {
    double want = tbt_decode(f, (unsigned)i);
    uint32_t sign = (i & tbt_sign_bit(f)) ? 0x80000000u : 0u;
    uint32_t expect;
    if (f->dtype == TB_DTYPE_BF16) expect = (uint32_t)i << 16;
    else if (isnan(want) && f->dtype == TB_DTYPE_F16) expect = sign | 0x7FC00000u | (uint32_t)(i & 0x3FF) << 13;
    else if (isnan(want)) expect = sign | 0x7FC00000u;
    else expect = tbt_f32_bits((float)want);
    if (!isnan(want)) assert_true((double)(float)want == want); /* every value fits a float exactly */
    if (out[i] != expect && bad++ < 5)
      print_message("%s -> f32 [%s]: pattern 0x%zx gave 0x%08x, expected 0x%08x\n", f->name, path->name, i, out[i], expect);
  }
  assert_int_equal(bad, 0);
  free(src);
  free(out);
}

static void decode_every_pattern(void **state) {
  (void)state;
  for (size_t k = 0; k < TBT_FORMAT_COUNT; k++) {
    tbt_path paths[4];
    size_t n = tbt_paths(tbt_formats[k].dtype, TB_DTYPE_F32, paths);
    for (size_t p = 0; p < n; p++) check_decode_all(&tbt_formats[k], &paths[p]);
  }
}

/* Inputs and expected codes for one format: every finite value, every midpoint (a tie: the even
 * code), one float ulp either side of it, the overflow edge above the largest value, Inf, NaN, the
 * float extremes; each also negated. */
typedef struct cases {
  float *in;
  unsigned *want;
  size_t n, cap;
} cases;

static void add(cases *c, float x, unsigned code) {
  if (c->n == c->cap) {
    c->cap = c->cap ? 2 * c->cap : 4096;
    c->in = realloc(c->in, c->cap * sizeof *c->in);
    c->want = realloc(c->want, c->cap * sizeof *c->want);
    assert_non_null(c->in);
    assert_non_null(c->want);
  }
  c->in[c->n] = x;
  c->want[c->n++] = code;
}

static void add_both_signs(cases *c, const tbt_format *f, float x, unsigned code) {
  add(c, x, code);
  add(c, -x, code | tbt_sign_bit(f));
}

static cases build_cases(const tbt_format *f, bool saturate) {
  cases c = {0};
  for (unsigned k = 0; k <= f->max_code; k++) {
    double a = tbt_decode(f, k);
    add_both_signs(&c, f, (float)a, k);
    if (k == f->max_code) break;
    double b = tbt_decode(f, k + 1), mid = (a + b) / 2;
    assert_true((double)(float)mid == mid);
    float m = (float)mid;
    add_both_signs(&c, f, m, (k % 2 == 0) ? k : k + 1);
    add_both_signs(&c, f, nextafterf(m, 0.0f), k);
    add_both_signs(&c, f, nextafterf(m, INFINITY), k + 1);
  }
  /* above the largest value: the midpoint to the next (missing) value, and around it */
  double max = tbt_decode(f, f->max_code), ulp = max - tbt_decode(f, f->max_code - 1);
  float top = (float)(max + ulp / 2);
  unsigned inf = f->ieee ? ((1u << f->ebits) - 1u) << f->mbits : 0x7Fu;
  bool fp8 = f->width == 8;
  unsigned overflow = (fp8 && saturate) ? f->max_code : inf; /* e4m3fn: inf slot is NaN 0x7f */
  add_both_signs(&c, f, nextafterf(top, 0.0f), f->max_code);
  add_both_signs(&c, f, top, (f->max_code % 2 == 0) ? f->max_code : overflow);
  add_both_signs(&c, f, nextafterf(top, INFINITY), overflow);
  add_both_signs(&c, f, 3.4028235e38f, overflow);
  add_both_signs(&c, f, INFINITY, overflow);
  add_both_signs(&c, f, tbt_f32(0x00000001u), 0); /* smallest float subnormal: far below any code */
  return c;
}

static void check_encode(const tbt_format *f, const tbt_path *path, bool saturate) {
  cases c = build_cases(f, saturate);
  /* NaNs: quiet or signalling, either sign */
  static const uint32_t nans[] = {0x7FC00000u, 0xFFC00000u, 0x7F800001u, 0xFFA00000u, 0x7FFFFFFFu};
  size_t first_nan = c.n;
  for (size_t i = 0; i < sizeof nans / sizeof nans[0]; i++) add(&c, tbt_f32(nans[i]), 0);
  uint16_t *out = calloc(c.n, sizeof *out);
  assert_non_null(out);
  TB_ASSERT_OK(tb_convert_with_features(TB_DTYPE_F32, c.in, f->dtype, out, c.n, saturate, path->features));
  size_t bad = 0;
  for (size_t i = 0; i < c.n; i++) {
    unsigned got = tbt_code(f, out, i);
    bool ok;
    if (i >= first_nan) {
      unsigned sign = (tbt_f32_bits(c.in[i]) >> 31) ? tbt_sign_bit(f) : 0u;
      ok = tbt_is_nan(f, got) && (got & tbt_sign_bit(f)) == sign;
    } else {
      ok = got == c.want[i];
    }
    if (!ok && bad++ < 8)
      print_message("f32 -> %s [%s, saturate=%d]: %.9g (0x%08x) gave 0x%x, expected 0x%x\n", f->name, path->name,
                    saturate, (double)c.in[i], tbt_f32_bits(c.in[i]), got, c.want[i]);
  }
  assert_int_equal(bad, 0);
  free(out);
  free(c.in);
  free(c.want);
}

static void encode_values_midpoints_and_edges(void **state) {
  (void)state;
  for (size_t k = 0; k < TBT_FORMAT_COUNT; k++) {
    tbt_path paths[4];
    size_t n = tbt_paths(TB_DTYPE_F32, tbt_formats[k].dtype, paths);
    for (size_t p = 0; p < n; p++) {
      check_encode(&tbt_formats[k], &paths[p], true);
      check_encode(&tbt_formats[k], &paths[p], false);
    }
  }
}

/* One f32 bit pattern in 4099 (a prime, so every exponent and mantissa region is visited), starting
 * at a fixed seed: every path against the portable path, bit for bit, NaN payloads included. */
static void sweep_matches_portable(void **state) {
  (void)state;
  size_t n = (size_t)(UINT64_C(1) << 32) / 4099u + 1u;
  uint32_t *in = malloc(n * sizeof *in);
  uint16_t *want = malloc(n * sizeof *want), *got = malloc(n * sizeof *got);
  assert_non_null(in);
  assert_non_null(want);
  assert_non_null(got);
  for (size_t i = 0; i < n; i++) in[i] = 0x2545F491u + (uint32_t)i * 4099u;
  for (size_t k = 0; k < TBT_FORMAT_COUNT; k++) {
    const tbt_format *f = &tbt_formats[k];
    tbt_path paths[4];
    size_t np = tbt_paths(TB_DTYPE_F32, f->dtype, paths);
    assert_string_equal(paths[np - 1].name, "portable");
    for (int saturate = 0; saturate < 2; saturate++) {
      TB_ASSERT_OK(tb_convert_with_features(TB_DTYPE_F32, in, f->dtype, want, n, saturate, 0));
      for (size_t p = 0; p + 1 < np; p++) {
        TB_ASSERT_OK(tb_convert_with_features(TB_DTYPE_F32, in, f->dtype, got, n, saturate, paths[p].features));
        size_t bytes = n * (size_t)(f->width / 8), bad = 0;
        if (memcmp(got, want, bytes) != 0) {
          for (size_t i = 0; i < n; i++)
            if (tbt_code(f, got, i) != tbt_code(f, want, i) && bad++ < 5)
              print_message("f32 -> %s [%s]: 0x%08x gave 0x%x, portable 0x%x\n", f->name, paths[p].name, in[i],
                            tbt_code(f, got, i), tbt_code(f, want, i));
        }
        assert_int_equal(bad, 0);
      }
    }
  }
  free(in);
  free(want);
  free(got);
}

/* What this CPU gets: the best path its features allow (checked against the features, so the test
 * holds on any x86 machine). */
static void paths_follow_the_cpu(void **state) {
  (void)state;
  uint64_t hw = tb_convert_hardware_features();
  bool avx512 = hw & TB_FEATURE_BIT(TB_FEATURE_AVX512F), f16c = hw & TB_FEATURE_BIT(TB_FEATURE_F16C);
  bool bf16 = avx512 && (hw & TB_FEATURE_BIT(TB_FEATURE_AVX512BF16));
  assert_string_equal(tb_convert_pick(TB_DTYPE_F32, TB_DTYPE_F16, hw).path, avx512 ? "avx512" : f16c ? "f16c" : "portable");
  assert_string_equal(tb_convert_pick(TB_DTYPE_F16, TB_DTYPE_F32, hw).path, avx512 ? "avx512" : f16c ? "f16c" : "portable");
  assert_string_equal(tb_convert_pick(TB_DTYPE_F32, TB_DTYPE_BF16, hw).path, bf16 ? "avx512bf16" : avx512 ? "avx512" : "portable");
  assert_string_equal(tb_convert_pick(TB_DTYPE_BF16, TB_DTYPE_F32, hw).path, avx512 ? "avx512" : "portable");
  assert_string_equal(tb_convert_pick(TB_DTYPE_F32, TB_DTYPE_FP8_E4M3FN, hw).path, avx512 ? "avx512" : "portable");
  assert_string_equal(tb_convert_pick(TB_DTYPE_F32, TB_DTYPE_FP8_E5M2, hw).path, avx512 ? "avx512" : "portable");
  assert_string_equal(tb_convert_pick(TB_DTYPE_FP8_E5M2, TB_DTYPE_F32, hw).path, "table");
  assert_string_equal(tb_convert_pick(TB_DTYPE_F64, TB_DTYPE_F16, hw).path, "generic");
  assert_string_equal(tb_convert_pick(TB_DTYPE_I8, TB_DTYPE_I8, hw).path, "copy");
  /* the AVX512-FP16 bit alone changes nothing: no path needs it (docs/dtypes.md says why) */
  assert_string_equal(tb_convert_pick(TB_DTYPE_F32, TB_DTYPE_F16, TB_FEATURE_BIT(TB_FEATURE_AVX512FP16)).path, "portable");
  /* this machine (AMD Zen 5) has AVX-512 with BF16: say so when a path is missing here */
  if (!bf16) print_message("note: this CPU lacks AVX512-BF16 or AVX-512; only the paths it has were tested\n");
}

/* TB_CPU_FEATURES masks the vector paths for the public call, read at each call. */
static void cpu_features_mask_selects_portable(void **state) {
  (void)state;
  uint64_t hw = tb_convert_hardware_features();
  setenv("TB_CPU_FEATURES", "-avx512f,-f16c,-avx512bf16", 1);
  uint64_t masked = tb_convert_features();
  assert_int_equal(masked & (TB_FEATURE_BIT(TB_FEATURE_AVX512F) | TB_FEATURE_BIT(TB_FEATURE_F16C) |
                             TB_FEATURE_BIT(TB_FEATURE_AVX512BF16)), 0);
  assert_string_equal(tb_convert_pick(TB_DTYPE_F32, TB_DTYPE_F16, masked).path, "portable");
  assert_string_equal(tb_convert_pick(TB_DTYPE_F32, TB_DTYPE_BF16, masked).path, "portable");
  assert_string_equal(tb_convert_pick(TB_DTYPE_F32, TB_DTYPE_FP8_E4M3FN, masked).path, "portable");
  /* the public call on every f16 pattern and back: the portable path, exact */
  uint16_t *h = malloc(65536 * sizeof *h), *back = malloc(65536 * sizeof *back);
  float *f = malloc(65536 * sizeof *f);
  assert_non_null(h);
  assert_non_null(back);
  assert_non_null(f);
  for (unsigned i = 0; i < 65536; i++) h[i] = (uint16_t)i;
  TB_ASSERT_OK(tb_convert(TB_DTYPE_F16, h, TB_DTYPE_F32, f, 65536, true));
  TB_ASSERT_OK(tb_convert(TB_DTYPE_F32, f, TB_DTYPE_F16, back, 65536, true));
  for (unsigned i = 0; i < 65536; i++) {
    bool nan = (i & 0x7C00) == 0x7C00 && (i & 0x3FF);
    assert_int_equal(back[i], nan ? (i | 0x200) : i); /* NaN comes back quiet, payload kept */
  }
  /* only BF16 masked: the AVX-512 integer method for f32 -> bf16 */
  setenv("TB_CPU_FEATURES", "-avx512bf16", 1);
  if (hw & TB_FEATURE_BIT(TB_FEATURE_AVX512F))
    assert_string_equal(tb_convert_pick(TB_DTYPE_F32, TB_DTYPE_BF16, tb_convert_features()).path, "avx512");
  /* a bad item is skipped, the rest applies */
  setenv("TB_CPU_FEATURES", "-warp9,-avx512f", 1);
  assert_int_equal(tb_convert_features() & TB_FEATURE_BIT(TB_FEATURE_AVX512F), 0);
  unsetenv("TB_CPU_FEATURES");
  assert_int_equal(tb_convert_features(), hw);
  free(h);
  free(back);
  free(f);
}

/* Lengths that are not multiples of the vector width take the tail path: the result is the same. */
static void every_length_up_to_40(void **state) {
  (void)state;
  float in[40];
  for (int i = 0; i < 40; i++) in[i] = (float)(i * 37 - 700) / 7.0f;
  for (size_t k = 0; k < TBT_FORMAT_COUNT; k++) {
    const tbt_format *f = format_of(tbt_formats[k].dtype);
    tbt_path paths[4];
    size_t np = tbt_paths(TB_DTYPE_F32, f->dtype, paths);
    for (size_t p = 0; p < np; p++) {
      for (size_t len = 1; len <= 40; len++) {
        uint16_t want[41], got[41];
        memset(got, 0xAB, sizeof got);
        TB_ASSERT_OK(tb_convert_with_features(TB_DTYPE_F32, in, f->dtype, want, 40, true, 0));
        TB_ASSERT_OK(tb_convert_with_features(TB_DTYPE_F32, in, f->dtype, got, len, true, paths[p].features));
        assert_memory_equal(got, want, len * (size_t)(f->width / 8));
        assert_int_equal(((uint8_t *)got)[len * (size_t)(f->width / 8)], 0xAB); /* nothing written past the end */
      }
    }
  }
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(decode_every_pattern),
      cmocka_unit_test(encode_values_midpoints_and_edges),
      cmocka_unit_test(sweep_matches_portable),
      cmocka_unit_test(paths_follow_the_cpu),
      cmocka_unit_test(cpu_features_mask_selects_portable),
      cmocka_unit_test(every_length_up_to_40),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
