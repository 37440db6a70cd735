/* The reference per-element conversions between double/integers and the small float formats (f16,
 * bf16, fp8 e4m3fn, fp8 e5m2): one rounding routine on an exact (significand, exponent) pair, so a
 * double and an int64 are each rounded once, never twice. */
#include "core/convert_scalar.h"

#include <string.h>

typedef struct format_layout {
  unsigned mbits;     /* stored mantissa bits */
  unsigned ebits;     /* exponent bits */
  int bias;
  uint16_t max_code;  /* magnitude bits of the largest finite value */
  bool has_inf;       /* the all-ones exponent with a zero mantissa is Inf */
  uint16_t nan_code;  /* magnitude bits of the NaN an fp8 format gives; unused for f16/bf16 */
} format_layout;

static const format_layout layouts[TB_MINIFLOAT_COUNT] = {
    [TB_MINIFLOAT_F16] = {10, 5, 15, 0x7BFF, true, 0},
    [TB_MINIFLOAT_BF16] = {7, 8, 127, 0x7F7F, true, 0},
    [TB_MINIFLOAT_E4M3FN] = {3, 4, 7, 0x7E, false, 0x7F},
    [TB_MINIFLOAT_E5M2] = {2, 5, 15, 0x7B, true, 0x7E},
};

static bool is_fp8(tb_minifloat fmt) { return fmt == TB_MINIFLOAT_E4M3FN || fmt == TB_MINIFLOAT_E5M2; }
static unsigned sign_shift(const format_layout *l) { return l->mbits + l->ebits; }
static uint16_t inf_code(const format_layout *l) { return (uint16_t)(((1u << l->ebits) - 1u) << l->mbits); }

/* What an out-of-range magnitude (a rounded value beyond max, or Inf) becomes. */
static uint16_t overflow_code(tb_minifloat fmt, const format_layout *l, bool saturate) {
  if (!is_fp8(fmt)) return inf_code(l);
  if (saturate) return l->max_code;
  return l->has_inf ? inf_code(l) : l->nan_code;
}

/* Round sig * 2^exp2 (sig != 0) to the format's magnitude bits, ties to even. The result may be
 * larger than max_code; the caller decides what overflow means. */
static uint64_t round_magnitude(const format_layout *l, uint64_t sig, int exp2) {
  int top = 63 - __builtin_clzll(sig);       /* index of the leading 1 */
  int e = top + exp2;                        /* value is in [2^e, 2^(e+1)) */
  int emin = 1 - l->bias;                    /* exponent of the smallest normal */
  int shift = top - (int)l->mbits;           /* bits of sig below the kept mantissa */
  if (e < emin) shift += emin - e;           /* subnormal: fewer bits kept */
  uint64_t q;
  if (shift <= 0) {
    q = sig << -shift;
  } else if (shift >= 64) {
    q = (shift == 64 && sig > (UINT64_C(1) << 63)) ? 1 : 0; /* a tie (== 2^63) goes to even 0 */
  } else {
    q = sig >> shift;
    uint64_t rem = sig & ((UINT64_C(1) << shift) - 1u), half = UINT64_C(1) << (shift - 1);
    q += (uint64_t)(rem > half) | ((uint64_t)(rem == half) & q & 1u); /* branch-free: ties are data */
  }
  if (e < emin) return q; /* a carry out of the subnormal range lands on the smallest normal */
  /* q holds the implicit bit, so adding it to (biased exponent - 1) << mbits gives the code, and a
   * carry from rounding moves into the exponent by itself. */
  return ((uint64_t)(e + l->bias - 1) << l->mbits) + q;
}

static uint16_t finish(tb_minifloat fmt, const format_layout *l, bool negative, uint64_t code, bool saturate) {
  uint16_t mag = code > l->max_code ? overflow_code(fmt, l, saturate) : (uint16_t)code;
  return (uint16_t)(mag | (negative ? 1u << sign_shift(l) : 0u));
}

uint16_t tb_minifloat_from_double(tb_minifloat fmt, double value, bool saturate) {
  const format_layout *l = &layouts[fmt];
  uint64_t bits;
  memcpy(&bits, &value, sizeof bits);
  bool negative = bits >> 63;
  uint16_t sign = (uint16_t)(negative ? 1u << sign_shift(l) : 0u);
  unsigned exponent = (unsigned)(bits >> 52) & 0x7FFu;
  uint64_t mantissa = bits & ((UINT64_C(1) << 52) - 1u);
  if (exponent == 0x7FF) {
    if (mantissa == 0) return (uint16_t)(sign | overflow_code(fmt, l, saturate)); /* +-Inf */
    if (is_fp8(fmt)) return (uint16_t)(sign | l->nan_code);
    uint16_t quiet = (uint16_t)(1u << (l->mbits - 1));
    uint16_t payload = (uint16_t)(mantissa >> (52 - l->mbits));
    return (uint16_t)(sign | inf_code(l) | quiet | payload);
  }
  if (exponent == 0) {
    if (mantissa == 0) return sign; /* +-0 */
    return finish(fmt, l, negative, round_magnitude(l, mantissa, -1074), saturate);
  }
  return finish(fmt, l, negative, round_magnitude(l, mantissa | (UINT64_C(1) << 52), (int)exponent - 1075), saturate);
}

uint16_t tb_minifloat_from_float(tb_minifloat fmt, float value, bool saturate) {
  const format_layout *l = &layouts[fmt];
  uint32_t bits;
  memcpy(&bits, &value, sizeof bits);
  bool negative = bits >> 31;
  uint16_t sign = (uint16_t)(negative ? 1u << sign_shift(l) : 0u);
  unsigned exponent = (bits >> 23) & 0xFFu;
  uint32_t mantissa = bits & 0x7FFFFFu;
  if (exponent == 0xFF) {
    if (mantissa == 0) return (uint16_t)(sign | overflow_code(fmt, l, saturate));
    if (is_fp8(fmt)) return (uint16_t)(sign | l->nan_code);
    uint16_t quiet = (uint16_t)(1u << (l->mbits - 1));
    return (uint16_t)(sign | inf_code(l) | quiet | (uint16_t)(mantissa >> (23 - l->mbits)));
  }
  if (exponent == 0) {
    if (mantissa == 0) return sign;
    return finish(fmt, l, negative, round_magnitude(l, mantissa, -149), saturate);
  }
  return finish(fmt, l, negative, round_magnitude(l, mantissa | 0x800000u, (int)exponent - 150), saturate);
}

uint16_t tb_minifloat_from_integer(tb_minifloat fmt, bool negative, uint64_t magnitude, bool saturate) {
  const format_layout *l = &layouts[fmt];
  if (magnitude == 0) return 0; /* integers have no -0 */
  return finish(fmt, l, negative, round_magnitude(l, magnitude, 0), saturate);
}

static float float_from_bits(uint32_t bits) {
  float f;
  memcpy(&f, &bits, sizeof f);
  return f;
}

float tb_minifloat_to_float(tb_minifloat fmt, uint16_t bits) {
  if (fmt == TB_MINIFLOAT_BF16) return float_from_bits((uint32_t)bits << 16);
  const format_layout *l = &layouts[fmt];
  uint32_t sign = (uint32_t)((bits >> sign_shift(l)) & 1u) << 31;
  unsigned emask = (1u << l->ebits) - 1u, mmask = (1u << l->mbits) - 1u;
  unsigned exponent = (bits >> l->mbits) & emask, mantissa = bits & mmask;
  bool nan = l->has_inf ? (exponent == emask && mantissa != 0) : ((bits & (emask << l->mbits | mmask)) == l->nan_code);
  if (nan) {
    uint32_t payload = fmt == TB_MINIFLOAT_F16 ? (uint32_t)mantissa << (23 - l->mbits) : 0;
    return float_from_bits(sign | 0x7FC00000u | payload);
  }
  if (l->has_inf && exponent == emask) return float_from_bits(sign | 0x7F800000u);
  if (exponent == 0) {
    /* mantissa * 2^(1 - bias - mbits): exact, every such value is a normal float */
    uint32_t scale_exponent = (uint32_t)(127 - (l->bias - 1 + (int)l->mbits));
    float magnitude = (float)mantissa * float_from_bits(scale_exponent << 23);
    return sign ? -magnitude : magnitude;
  }
  uint32_t f32_exponent = (uint32_t)((int)exponent - l->bias + 127);
  return float_from_bits(sign | f32_exponent << 23 | (uint32_t)mantissa << (23 - l->mbits));
}

int64_t tb_double_to_int_saturated(double value, int64_t lo, int64_t hi) {
  if (value != value) return 0;
  /* (double)lo is exact for every integer dtype's minimum; (double)hi + 1.0 is the power of two just
   * above hi (2^63, 2^31, 2^15, 2^7, 2^8). */
  if (value <= (double)lo) return lo;
  if (value >= (double)hi + 1.0) return hi;
  return (int64_t)value; /* in range: truncates toward zero */
}
