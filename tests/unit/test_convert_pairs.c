/* tb_convert beyond f32 <-> small floats: float -> integer (truncation, saturation, NaN -> 0),
 * integer -> integer (low bits kept, as ONNX says), integer -> float (one rounding, no double
 * rounding through f64 or f32), f64 narrowing, bool both ways, all 144 pairs on small values, in-place
 * conversion, and the argument errors with their messages. */
#include <limits.h>

#include "test_convert_util.h"
#include "test_util.h"

#define N(a) (sizeof(a) / sizeof((a)[0]))

static void float_to_integer_saturates(void **state) {
  (void)state;
  const double in[] = {NAN, -NAN, INFINITY, -INFINITY, 1e300, -1e300, 2.9, -2.9, -0.5, 0.99, 127.9, 128.0,
                       -128.9, -129.0, 255.9, 256.0, 2147483647.9, 2147483648.0, -2147483648.9, -2147483649.0,
                       9223372036854775808.0, -9223372036854775808.0, 9223372036854774784.0, -0.0};
  const int64_t want_i64[] = {0, 0, INT64_MAX, INT64_MIN, INT64_MAX, INT64_MIN, 2, -2, 0, 0, 127, 128,
                              -128, -129, 255, 256, 2147483647, 2147483648, -2147483648, -2147483649,
                              INT64_MAX, INT64_MIN, 9223372036854774784, 0};
  const int32_t want_i32[] = {0, 0, INT32_MAX, INT32_MIN, INT32_MAX, INT32_MIN, 2, -2, 0, 0, 127, 128,
                              -128, -129, 255, 256, INT32_MAX, INT32_MAX, INT32_MIN, INT32_MIN,
                              INT32_MAX, INT32_MIN, INT32_MAX, 0};
  const int8_t want_i8[] = {0, 0, 127, -128, 127, -128, 2, -2, 0, 0, 127, 127, -128, -128, 127, 127,
                            127, 127, -128, -128, 127, -128, 127, 0};
  const uint8_t want_u8[] = {0, 0, 255, 0, 255, 0, 2, 0, 0, 0, 127, 128, 0, 0, 255, 255,
                             255, 255, 0, 0, 255, 0, 255, 0};
  int64_t i64[N(in)];
  int32_t i32[N(in)];
  int8_t i8[N(in)];
  uint8_t u8[N(in)];
  TB_ASSERT_OK(tb_convert(TB_DTYPE_F64, in, TB_DTYPE_I64, i64, N(in), true));
  TB_ASSERT_OK(tb_convert(TB_DTYPE_F64, in, TB_DTYPE_I32, i32, N(in), true));
  TB_ASSERT_OK(tb_convert(TB_DTYPE_F64, in, TB_DTYPE_I8, i8, N(in), true));
  TB_ASSERT_OK(tb_convert(TB_DTYPE_F64, in, TB_DTYPE_U8, u8, N(in), true));
  for (size_t i = 0; i < N(in); i++) {
    assert_int_equal(i64[i], want_i64[i]);
    assert_int_equal(i32[i], want_i32[i]);
    assert_int_equal(i8[i], want_i8[i]);
    assert_int_equal(u8[i], want_u8[i]);
  }
  /* the same rules from f16 (Inf, NaN, 65504) and fp8 (448) into i16 */
  const uint16_t h[] = {0x7C00, 0xFC00, 0x7E00, 0x7BFF, 0xFBFF, 0xBE00 /* -1.5 */, 0x3BFF /* 0.9995 */};
  const int16_t want_i16[] = {INT16_MAX, INT16_MIN, 0, INT16_MAX, INT16_MIN, -1, 0};
  int16_t i16[N(h)];
  TB_ASSERT_OK(tb_convert(TB_DTYPE_F16, h, TB_DTYPE_I16, i16, N(h), true));
  for (size_t i = 0; i < N(h); i++) assert_int_equal(i16[i], want_i16[i]);
  const uint8_t e4[] = {0x7E, 0xFE, 0x7F, 0x3C /* 1.5 */};
  const int16_t want_e4[] = {448, -448, 0, 1};
  TB_ASSERT_OK(tb_convert(TB_DTYPE_FP8_E4M3FN, e4, TB_DTYPE_I16, i16, N(e4), true));
  for (size_t i = 0; i < N(e4); i++) assert_int_equal(i16[i], want_e4[i]);
}

static void integer_to_integer_keeps_low_bits(void **state) {
  (void)state;
  const int16_t a[] = {200, -200, 32767, -32768, 255, 256};
  const int8_t want_i8[] = {-56, 56, -1, 0, -1, 0};
  const uint8_t want_u8[] = {200, 56, 255, 0, 255, 0};
  int8_t i8[N(a)];
  uint8_t u8[N(a)];
  TB_ASSERT_OK(tb_convert(TB_DTYPE_I16, a, TB_DTYPE_I8, i8, N(a), true));
  TB_ASSERT_OK(tb_convert(TB_DTYPE_I16, a, TB_DTYPE_U8, u8, N(a), true));
  for (size_t i = 0; i < N(a); i++) {
    assert_int_equal(i8[i], want_i8[i]);
    assert_int_equal(u8[i], want_u8[i]);
  }
  const int64_t b[] = {INT64_MIN, INT64_MAX, 0x100000001LL, -1};
  const int32_t want_i32[] = {0, -1, 1, -1};
  int32_t i32[N(b)];
  TB_ASSERT_OK(tb_convert(TB_DTYPE_I64, b, TB_DTYPE_I32, i32, N(b), true));
  for (size_t i = 0; i < N(b); i++) assert_int_equal(i32[i], want_i32[i]);
  const uint8_t c[] = {0, 127, 128, 255};
  int64_t wide[N(c)];
  int8_t narrow[N(c)];
  TB_ASSERT_OK(tb_convert(TB_DTYPE_U8, c, TB_DTYPE_I64, wide, N(c), true));
  TB_ASSERT_OK(tb_convert(TB_DTYPE_U8, c, TB_DTYPE_I8, narrow, N(c), true));
  const int64_t want_wide[] = {0, 127, 128, 255};
  const int8_t want_narrow[] = {0, 127, -128, -1};
  for (size_t i = 0; i < N(c); i++) {
    assert_int_equal(wide[i], want_wide[i]);
    assert_int_equal(narrow[i], want_narrow[i]);
  }
}

static void integer_to_float_rounds_once(void **state) {
  (void)state;
  /* 2^60 + 2^52 + 1 is just above a bf16 midpoint; through f64 it would become the tie and round down */
  const int64_t a[] = {(1LL << 60) + (1LL << 52) + 1, INT64_MIN, INT64_MAX, (1LL << 24) + 1, (1LL << 24) + 3,
                       65519, 65520, -70000, (1LL << 53) + 1};
  const uint16_t want_bf16[] = {0x5D81, 0xDF00, 0x5F00, 0x4B80, 0x4B80, 0x4780, 0x4780, 0xC789, 0x5A00};
  const uint16_t want_f16[] = {0x7C00, 0xFC00, 0x7C00, 0x7C00, 0x7C00, 0x7BFF, 0x7C00, 0xFC00, 0x7C00};
  const float want_f32[] = {1152921504606846976.0f + 4503599627370496.0f, -9223372036854775808.0f,
                            9223372036854775808.0f, 16777216.0f, 16777220.0f, 65519.0f, 65520.0f, -70000.0f,
                            9007199254740992.0f};
  const double want_f64[] = {1152921504606846976.0 + 4503599627370496.0, -9223372036854775808.0,
                             9223372036854775808.0, 16777217.0, 16777219.0, 65519.0, 65520.0, -70000.0,
                             9007199254740992.0};
  uint16_t bf16[N(a)], f16[N(a)];
  float f32[N(a)];
  double f64[N(a)];
  TB_ASSERT_OK(tb_convert(TB_DTYPE_I64, a, TB_DTYPE_BF16, bf16, N(a), true));
  TB_ASSERT_OK(tb_convert(TB_DTYPE_I64, a, TB_DTYPE_F16, f16, N(a), true));
  TB_ASSERT_OK(tb_convert(TB_DTYPE_I64, a, TB_DTYPE_F32, f32, N(a), true));
  TB_ASSERT_OK(tb_convert(TB_DTYPE_I64, a, TB_DTYPE_F64, f64, N(a), true));
  for (size_t i = 0; i < N(a); i++) {
    assert_int_equal(bf16[i], want_bf16[i]);
    assert_int_equal(f16[i], want_f16[i]);
    assert_true(f32[i] == want_f32[i]);
    assert_true(f64[i] == want_f64[i]);
  }
  /* integers into fp8: saturation as for floats; 255 rounds to 256 (e4m3fn 0x78); 17 is a tie -> 16 */
  const int32_t b[] = {1000, -1000, 255, 100000, 17, 0};
  const uint8_t e4_sat[] = {0x7E, 0xFE, 0x78, 0x7E, 0x58, 0x00}, e4_nosat[] = {0x7F, 0xFF, 0x78, 0x7F, 0x58, 0x00};
  const uint8_t e5_sat[] = {0x64, 0xE4, 0x5C, 0x7B, 0x4C, 0x00}, e5_nosat[] = {0x64, 0xE4, 0x5C, 0x7C, 0x4C, 0x00};
  uint8_t out[N(b)];
  TB_ASSERT_OK(tb_convert(TB_DTYPE_I32, b, TB_DTYPE_FP8_E4M3FN, out, N(b), true));
  assert_memory_equal(out, e4_sat, N(b));
  TB_ASSERT_OK(tb_convert(TB_DTYPE_I32, b, TB_DTYPE_FP8_E4M3FN, out, N(b), false));
  assert_memory_equal(out, e4_nosat, N(b));
  TB_ASSERT_OK(tb_convert(TB_DTYPE_I32, b, TB_DTYPE_FP8_E5M2, out, N(b), true));
  assert_memory_equal(out, e5_sat, N(b));
  TB_ASSERT_OK(tb_convert(TB_DTYPE_I32, b, TB_DTYPE_FP8_E5M2, out, N(b), false));
  assert_memory_equal(out, e5_nosat, N(b));
}

static void f64_narrowing_rounds_once(void **state) {
  (void)state;
  /* 1 + 2^-11 + 2^-40: just above the f16 midpoint between 1 and 1 + 2^-10; through f32 the 2^-40
   * would be lost and the tie would go to even (1.0) */
  const double in[] = {1.0 + 0x1p-11 + 0x1p-40, 1.0 + 0x1p-11, 1e300, -1e300, 1e-40, 0x1p-149, 0x1p-150, NAN, -0.0,
                       1.0 + 0x1p-8 + 0x1p-40, 464.0 + 0x1p-40};
  const uint16_t want_f16[] = {0x3C01, 0x3C00, 0x7C00, 0xFC00, 0x0000, 0x0000, 0x0000, 0x7E00, 0x8000, 0x3C04, 0x5F40};
  const uint16_t want_bf16[] = {0x3F80, 0x3F80, 0x7F80, 0xFF80, 0x0001, 0x0000, 0x0000, 0x7FC0, 0x8000, 0x3F81, 0x43E8};
  const uint8_t want_e4[] = {0x38, 0x38, 0x7E, 0xFE, 0x00, 0x00, 0x00, 0x7F, 0x80, 0x38, 0x7E};
  const uint32_t want_f32[] = {0x3F801000, 0x3F801000, 0x7F800000, 0xFF800000, 0x000116C2, 0x00000001, 0x00000000,
                               0x7FC00000, 0x80000000, 0x3F808000, 0x43E80000};
  uint16_t f16[N(in)], bf16[N(in)];
  uint8_t e4[N(in)];
  uint32_t f32[N(in)];
  TB_ASSERT_OK(tb_convert(TB_DTYPE_F64, in, TB_DTYPE_F16, f16, N(in), true));
  TB_ASSERT_OK(tb_convert(TB_DTYPE_F64, in, TB_DTYPE_BF16, bf16, N(in), true));
  TB_ASSERT_OK(tb_convert(TB_DTYPE_F64, in, TB_DTYPE_FP8_E4M3FN, e4, N(in), true));
  TB_ASSERT_OK(tb_convert(TB_DTYPE_F64, in, TB_DTYPE_F32, f32, N(in), true));
  for (size_t i = 0; i < N(in); i++) {
    assert_int_equal(f16[i], want_f16[i]);
    assert_int_equal(bf16[i], want_bf16[i]);
    assert_int_equal(e4[i], want_e4[i]);
    assert_int_equal(f32[i], want_f32[i]);
  }
  /* widening to f64 is exact for every f16 */
  uint16_t all[65536];
  static double wide[65536];
  for (unsigned i = 0; i < 65536; i++) all[i] = (uint16_t)i;
  TB_ASSERT_OK(tb_convert(TB_DTYPE_F16, all, TB_DTYPE_F64, wide, 65536, true));
  for (unsigned i = 0; i < 65536; i++) {
    double want = tbt_decode(&tbt_formats[0], i);
    if (isnan(want)) assert_true(isnan(wide[i]));
    else assert_true(wide[i] == want && (signbit(wide[i]) != 0) == (signbit(want) != 0));
  }
}

static void bool_both_ways(void **state) {
  (void)state;
  const double in[] = {0.0, -0.0, NAN, 0.5, -1.0, 1e-320, INFINITY};
  const uint8_t want[] = {0, 0, 1, 1, 1, 1, 1};
  uint8_t out[N(in)];
  TB_ASSERT_OK(tb_convert(TB_DTYPE_F64, in, TB_DTYPE_BOOL, out, N(in), true));
  assert_memory_equal(out, want, N(in));
  const uint16_t h[] = {0x0000, 0x8000, 0x7E00, 0x0001, 0xFC00};
  const uint8_t want_h[] = {0, 0, 1, 1, 1};
  TB_ASSERT_OK(tb_convert(TB_DTYPE_F16, h, TB_DTYPE_BOOL, out, N(h), true));
  assert_memory_equal(out, want_h, N(h));
  const int32_t i[] = {0, 36, -1, 256};
  const uint8_t want_i[] = {0, 1, 1, 1};
  TB_ASSERT_OK(tb_convert(TB_DTYPE_I32, i, TB_DTYPE_BOOL, out, N(i), true));
  assert_memory_equal(out, want_i, N(i));
  /* bool -> anything: 0 or 1 (any nonzero byte is true) */
  const uint8_t b[] = {0, 1, 2, 255};
  uint16_t f16[4], bf16[4];
  uint8_t e4[4], e5[4];
  double f64[4];
  int64_t i64[4];
  TB_ASSERT_OK(tb_convert(TB_DTYPE_BOOL, b, TB_DTYPE_F16, f16, 4, true));
  TB_ASSERT_OK(tb_convert(TB_DTYPE_BOOL, b, TB_DTYPE_BF16, bf16, 4, true));
  TB_ASSERT_OK(tb_convert(TB_DTYPE_BOOL, b, TB_DTYPE_FP8_E4M3FN, e4, 4, true));
  TB_ASSERT_OK(tb_convert(TB_DTYPE_BOOL, b, TB_DTYPE_FP8_E5M2, e5, 4, true));
  TB_ASSERT_OK(tb_convert(TB_DTYPE_BOOL, b, TB_DTYPE_F64, f64, 4, true));
  TB_ASSERT_OK(tb_convert(TB_DTYPE_BOOL, b, TB_DTYPE_I64, i64, 4, true));
  for (int k = 0; k < 4; k++) {
    bool t = b[k] != 0;
    assert_int_equal(f16[k], t ? 0x3C00 : 0);
    assert_int_equal(bf16[k], t ? 0x3F80 : 0);
    assert_int_equal(e4[k], t ? 0x38 : 0);
    assert_int_equal(e5[k], t ? 0x3C : 0);
    assert_true(f64[k] == (t ? 1.0 : 0.0));
    assert_int_equal(i64[k], t ? 1 : 0);
  }
  uint8_t copy[4];
  TB_ASSERT_OK(tb_convert(TB_DTYPE_BOOL, b, TB_DTYPE_BOOL, copy, 4, true));
  assert_memory_equal(copy, b, 4); /* same dtype: a plain copy */
}

/* Every pair of the 12 dtypes: 0, 1, 2, 3, 100 (and -1, -100 where both are signed) go there and back
 * exactly; bool only carries 0 and 1. */
static void all_pairs_round_trip_small_values(void **state) {
  (void)state;
  for (int s = 0; s < TB_DTYPE_COUNT; s++) {
    for (int d = 0; d < TB_DTYPE_COUNT; d++) {
      bool has_bool = s == TB_DTYPE_BOOL || d == TB_DTYPE_BOOL;
      bool both_signed = s != TB_DTYPE_U8 && d != TB_DTYPE_U8 && !has_bool;
      bool small_range = s == TB_DTYPE_FP8_E4M3FN || d == TB_DTYPE_FP8_E4M3FN || s == TB_DTYPE_FP8_E5M2 ||
                         d == TB_DTYPE_FP8_E5M2 || s == TB_DTYPE_I8 || d == TB_DTYPE_I8;
      double vals[] = {0, 1, 2, 3, small_range ? 96 : 100, -1, small_range ? -96 : -100};
      size_t n = has_bool ? 2 : both_signed ? 7 : 5;
      uint8_t a[7 * 8], b[7 * 8], c[7 * 8];
      double back[7];
      TB_ASSERT_OK(tb_convert(TB_DTYPE_F64, vals, (tb_dtype)s, a, n, true));
      TB_ASSERT_OK(tb_convert((tb_dtype)s, a, (tb_dtype)d, b, n, true));
      TB_ASSERT_OK(tb_convert((tb_dtype)d, b, (tb_dtype)s, c, n, true));
      assert_memory_equal(a, c, n * tb_dtype_size((tb_dtype)s));
      TB_ASSERT_OK(tb_convert((tb_dtype)d, b, TB_DTYPE_F64, back, n, true));
      for (size_t i = 0; i < n; i++) {
        if (back[i] != vals[i]) print_message("%s -> %s: %g came back as %g\n", tb_dtype_name((tb_dtype)s),
                                              tb_dtype_name((tb_dtype)d), vals[i], back[i]);
        assert_true(back[i] == vals[i]);
      }
    }
  }
}

static void in_place_when_sizes_match(void **state) {
  (void)state;
  uint16_t buf[300];
  for (int i = 0; i < 300; i++) buf[i] = (uint16_t)(0x3C00 + i); /* f16 1.0, 1.000977, ... */
  TB_ASSERT_OK(tb_convert(TB_DTYPE_F16, buf, TB_DTYPE_BF16, buf, 300, true));
  for (int i = 0; i < 300; i++) {
    float want = 1.0f + (float)i / 1024.0f;
    uint16_t expect;
    TB_ASSERT_OK(tb_convert(TB_DTYPE_F32, &want, TB_DTYPE_BF16, &expect, 1, true));
    assert_int_equal(buf[i], expect);
  }
  int32_t ints[300];
  for (int i = 0; i < 300; i++) ints[i] = i * 1000 - 150000;
  TB_ASSERT_OK(tb_convert(TB_DTYPE_I32, ints, TB_DTYPE_F32, ints, 300, true));
  for (int i = 0; i < 300; i++) {
    float f;
    memcpy(&f, &ints[i], sizeof f);
    assert_true(f == (float)(i * 1000 - 150000));
  }
  uint8_t same[4] = {1, 2, 3, 4};
  TB_ASSERT_OK(tb_convert(TB_DTYPE_U8, same, TB_DTYPE_U8, same, 4, true));
  assert_int_equal(same[3], 4);
}

static void bad_arguments(void **state) {
  (void)state;
  float f[8] = {0};
  uint16_t h[8];
  assert_int_equal(tb_convert((tb_dtype)12, f, TB_DTYPE_F16, h, 8, true), TB_ERR_INVALID_ARGUMENT);
  TB_ASSERT_CONTAINS(tb_last_error(), "src_dtype 12 is not a tb_dtype");
  assert_int_equal(tb_convert(TB_DTYPE_F32, f, (tb_dtype)-3, h, 8, true), TB_ERR_INVALID_ARGUMENT);
  TB_ASSERT_CONTAINS(tb_last_error(), "dst_dtype -3");
  assert_int_equal(tb_convert((tb_dtype)99, f, TB_DTYPE_F16, h, 0, true), TB_ERR_INVALID_ARGUMENT); /* even for 0 */
  assert_int_equal(tb_convert(TB_DTYPE_F32, NULL, TB_DTYPE_F16, h, 8, true), TB_ERR_INVALID_ARGUMENT);
  TB_ASSERT_CONTAINS(tb_last_error(), "src is NULL with count 8");
  assert_int_equal(tb_convert(TB_DTYPE_F32, f, TB_DTYPE_F16, NULL, 3, true), TB_ERR_INVALID_ARGUMENT);
  TB_ASSERT_CONTAINS(tb_last_error(), "dst is NULL with count 3");
  TB_ASSERT_OK(tb_convert(TB_DTYPE_F32, NULL, TB_DTYPE_F16, NULL, 0, true)); /* nothing to do */
  assert_int_equal(tb_convert(TB_DTYPE_F32, f, TB_DTYPE_F16, h, SIZE_MAX / 2, true), TB_ERR_INVALID_ARGUMENT);
  TB_ASSERT_CONTAINS(tb_last_error(), "larger than any buffer");
  /* overlap: same pointer with different sizes, and shifted buffers of equal sizes */
  assert_int_equal(tb_convert(TB_DTYPE_F32, f, TB_DTYPE_F16, f, 8, true), TB_ERR_INVALID_ARGUMENT);
  TB_ASSERT_CONTAINS(tb_last_error(), "overlap");
  TB_ASSERT_CONTAINS(tb_last_error(), "32 bytes of f32");
  TB_ASSERT_CONTAINS(tb_last_error(), "16 bytes of f16");
  assert_int_equal(tb_convert(TB_DTYPE_F32, f, TB_DTYPE_I32, f + 1, 4, true), TB_ERR_INVALID_ARGUMENT);
  assert_int_equal(tb_convert(TB_DTYPE_F16, (uint8_t *)f + 2, TB_DTYPE_F32, f, 4, true), TB_ERR_INVALID_ARGUMENT);
  TB_ASSERT_OK(tb_convert(TB_DTYPE_F32, f, TB_DTYPE_F16, (uint8_t *)f + 16, 4, true)); /* adjacent, no overlap */
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(float_to_integer_saturates),     cmocka_unit_test(integer_to_integer_keeps_low_bits),
      cmocka_unit_test(integer_to_float_rounds_once),   cmocka_unit_test(f64_narrowing_rounds_once),
      cmocka_unit_test(bool_both_ways),                 cmocka_unit_test(all_pairs_round_trip_small_values),
      cmocka_unit_test(in_place_when_sizes_match),      cmocka_unit_test(bad_arguments),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
