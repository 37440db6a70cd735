/* Internal: the per-element reference conversions behind tb_convert, written plainly so that they are
 * easy to check: every narrowing to f16, bf16 and the two fp8 formats goes through one rounding
 * routine (round to nearest, ties to even, subnormals kept), and every widening is exact. The vector
 * paths (convert_avx512.c, convert_f16c.c) are tested bit-for-bit against these. */
#ifndef TB_CORE_CONVERT_SCALAR_H
#define TB_CORE_CONVERT_SCALAR_H
#include <stdbool.h>
#include <stdint.h>

/* The small floating formats, by their layout. */
typedef enum tb_minifloat {
  TB_MINIFLOAT_F16 = 0,  /* IEEE binary16: 1-5-10, bias 15, Inf and NaN */
  TB_MINIFLOAT_BF16,     /* bfloat16: 1-8-7, bias 127, Inf and NaN */
  TB_MINIFLOAT_E4M3FN,   /* fp8 1-4-3, bias 7, no Inf, NaN only S.1111.111, max 448 */
  TB_MINIFLOAT_E5M2,     /* fp8 1-5-2, bias 15, Inf and NaN like IEEE, max 57344 */
  TB_MINIFLOAT_COUNT
} tb_minifloat;

/* Round a double to the format. `saturate` matters only for the fp8 formats and follows ONNX Cast:
 * with it, values beyond the largest finite value and +-Inf give +-max; without it, they give NaN
 * (e4m3fn) or +-Inf (e5m2). f16 and bf16 overflow to +-Inf as IEEE says. NaN stays NaN with its sign
 * (f16/bf16 keep the top payload bits and set the quiet bit; fp8 give 0x7f/0x7e with the sign). */
uint16_t tb_minifloat_from_double(tb_minifloat fmt, double value, bool saturate);
/* The same for a float, read from its bits (so the MXCSR denormals-are-zero mode cannot change it). */
uint16_t tb_minifloat_from_float(tb_minifloat fmt, float value, bool saturate);
/* Round an integer (given as sign and magnitude, so every int64 and uint64 fits) to the format. */
uint16_t tb_minifloat_from_integer(tb_minifloat fmt, bool negative, uint64_t magnitude, bool saturate);
/* The exact value of a bit pattern as a float (every value of these formats is a float). NaN becomes
 * a quiet float NaN with the sign; f16 and bf16 NaN keep their payload (bf16 is a plain shift). */
float tb_minifloat_to_float(tb_minifloat fmt, uint16_t bits);

/* float <-> format, per element: the reference the vector paths are tested against. */
static inline uint16_t tb_f32_to_f16_ref(float x) { return tb_minifloat_from_float(TB_MINIFLOAT_F16, x, false); }
static inline uint16_t tb_f32_to_bf16_ref(float x) { return tb_minifloat_from_float(TB_MINIFLOAT_BF16, x, false); }
static inline uint8_t tb_f32_to_e4m3fn_ref(float x, bool saturate) {
  return (uint8_t)tb_minifloat_from_float(TB_MINIFLOAT_E4M3FN, x, saturate);
}
static inline uint8_t tb_f32_to_e5m2_ref(float x, bool saturate) {
  return (uint8_t)tb_minifloat_from_float(TB_MINIFLOAT_E5M2, x, saturate);
}

/* Float to integer as tb_convert does it: truncate toward zero, clamp to [lo, hi], NaN gives 0. */
int64_t tb_double_to_int_saturated(double value, int64_t lo, int64_t hi);

#endif
