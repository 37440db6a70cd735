/* Helpers shared by the tb_convert tests: an independent description of each small float format
 * (decoding written from the format definitions, not from the library), the set of conversion paths
 * this CPU can run for a pair, and bit comparisons. */
#ifndef TB_TEST_CONVERT_UTIL_H
#define TB_TEST_CONVERT_UTIL_H
#include <math.h>
#include <stdbool.h>
#include <stdint.h>
#include <string.h>
#include <tensorbridge/device.h>
#include <tensorbridge/dtype.h>

#include "core/convert_features.h"
#include "core/convert_kernels.h"

typedef struct tbt_format {
  tb_dtype dtype;
  const char *name;
  int width, ebits, mbits, bias;
  bool ieee;         /* all-ones exponent is Inf/NaN; false: e4m3fn (only S.1111.111 is NaN) */
  unsigned max_code; /* magnitude bits of the largest finite value */
} tbt_format;

static const tbt_format tbt_formats[] = {
    {TB_DTYPE_F16, "f16", 16, 5, 10, 15, true, 0x7BFF},
    {TB_DTYPE_BF16, "bf16", 16, 8, 7, 127, true, 0x7F7F},
    {TB_DTYPE_FP8_E4M3FN, "fp8_e4m3fn", 8, 4, 3, 7, false, 0x7E},
    {TB_DTYPE_FP8_E5M2, "fp8_e5m2", 8, 5, 2, 15, true, 0x7B},
};
#define TBT_FORMAT_COUNT (sizeof tbt_formats / sizeof tbt_formats[0])

static inline unsigned tbt_sign_bit(const tbt_format *f) { return 1u << (f->width - 1); }

static inline bool tbt_is_nan(const tbt_format *f, unsigned bits) {
  unsigned mag = bits & (tbt_sign_bit(f) - 1u), emax = (1u << f->ebits) - 1u;
  if (!f->ieee) return mag == 0x7F;
  return (mag >> f->mbits) == emax && (mag & ((1u << f->mbits) - 1u)) != 0;
}

/* The value of a bit pattern straight from the definition: (-1)^s * 2^(e-bias) * 1.m, or
 * 2^(1-bias) * 0.m for e == 0. */
static inline double tbt_decode(const tbt_format *f, unsigned bits) {
  bool negative = (bits & tbt_sign_bit(f)) != 0;
  unsigned mag = bits & (tbt_sign_bit(f) - 1u);
  unsigned e = mag >> f->mbits, m = mag & ((1u << f->mbits) - 1u), emax = (1u << f->ebits) - 1u;
  double v;
  if (tbt_is_nan(f, bits)) return negative ? -NAN : NAN;
  if (f->ieee && e == emax) v = INFINITY;
  else if (e == 0) v = ldexp((double)m, 1 - f->bias - f->mbits);
  else v = ldexp(1.0 + ldexp((double)m, -f->mbits), (int)e - f->bias);
  return negative ? -v : v;
}

static inline uint32_t tbt_f32_bits(float x) {
  uint32_t b;
  memcpy(&b, &x, sizeof b);
  return b;
}

static inline float tbt_f32(uint32_t b) {
  float x;
  memcpy(&x, &b, sizeof x);
  return x;
}

static inline uint64_t tbt_f64_bits(double x) {
  uint64_t b;
  memcpy(&b, &x, sizeof b);
  return b;
}

/* Read element i of a buffer of 8- or 16-bit codes. */
static inline unsigned tbt_code(const tbt_format *f, const void *buf, size_t i) {
  return f->width == 8 ? ((const uint8_t *)buf)[i] : ((const uint16_t *)buf)[i];
}

typedef struct tbt_path {
  const char *name;
  uint64_t features;
} tbt_path;

/* The distinct paths this CPU can run for (src, dst): all features, then without AVX512-BF16, without
 * AVX-512 (F16C), and none (portable). Returns how many were written (at most 4). */
static inline size_t tbt_paths(tb_dtype src, tb_dtype dst, tbt_path out[4]) {
  uint64_t hw = tb_convert_hardware_features();
  uint64_t avx512 = TB_FEATURE_BIT(TB_FEATURE_AVX512F) | TB_FEATURE_BIT(TB_FEATURE_AVX512BW) |
                    TB_FEATURE_BIT(TB_FEATURE_AVX512VL) | TB_FEATURE_BIT(TB_FEATURE_AVX512BF16) |
                    TB_FEATURE_BIT(TB_FEATURE_AVX512FP16) | TB_FEATURE_BIT(TB_FEATURE_AVX512VNNI);
  uint64_t sets[4] = {hw, hw & ~TB_FEATURE_BIT(TB_FEATURE_AVX512BF16), hw & ~avx512, 0};
  size_t n = 0;
  for (size_t i = 0; i < 4; i++) {
    const char *name = tb_convert_pick(src, dst, sets[i]).path;
    bool seen = false;
    for (size_t j = 0; j < n; j++) seen = seen || strcmp(out[j].name, name) == 0;
    if (!seen) out[n++] = (tbt_path){name, sets[i]};
  }
  return n;
}

#endif
