/* Element types of tensors, and their names and sizes. */
#ifndef TENSORBRIDGE_DTYPE_H
#define TENSORBRIDGE_DTYPE_H
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include "export.h"
#include "status.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef enum tb_dtype {
  TB_DTYPE_F64 = 0,
  TB_DTYPE_F32,
  TB_DTYPE_F16,
  TB_DTYPE_BF16,
  TB_DTYPE_FP8_E4M3FN,
  TB_DTYPE_FP8_E5M2,
  TB_DTYPE_I64,
  TB_DTYPE_I32,
  TB_DTYPE_I16,
  TB_DTYPE_I8,
  TB_DTYPE_U8,
  TB_DTYPE_BOOL,
  TB_DTYPE_COUNT
} tb_dtype;

/* A set of dtypes as a bit mask: bit d is set when dtype d is in the set. */
typedef uint32_t tb_dtype_set;
#define TB_DTYPE_BIT(d) ((tb_dtype_set)1u << (unsigned)(d))

/* "f32", "bf16", "fp8_e4m3fn", ...; "?" for a value out of range. */
TB_API const char *tb_dtype_name(tb_dtype dtype);
/* Size of one element in bytes; 0 for a value out of range. */
TB_API size_t tb_dtype_size(tb_dtype dtype);
/* Parse a name (case-insensitive; also "float32", "float16", "bfloat16", "int8", ...). */
TB_API tb_status tb_dtype_parse(const char *name, tb_dtype *out);

/* Convert `count` packed elements from one dtype to another on the host, with the rules of the ONNX
 * Cast operator (all written out in docs/dtypes.md):
 * - float narrowing rounds once to nearest, ties to even, keeps subnormals, overflows to +-Inf; NaN
 *   stays NaN with its sign;
 * - to fp8, `saturate` (the ONNX attribute, true by default) maps values beyond the range and +-Inf to
 *   +-448 (e4m3fn) or +-57344 (e5m2); without it they give NaN (e4m3fn) or +-Inf (e5m2). `saturate` is
 *   ignored for every other destination;
 * - float to integer truncates toward zero and saturates at the integer's range, NaN giving 0 (ONNX
 *   leaves this undefined); integer to integer keeps the low bits (200 as i16 -> -56 as i8); integer
 *   to float rounds to nearest even; anything to bool is (value != 0), so NaN is true; bool (any
 *   nonzero byte) to anything is 0 or 1.
 * src and dst may overlap only as the same pointer with dtypes of the same size (in place). count 0
 * does nothing. TB_ERR_INVALID_ARGUMENT for a dtype out of range, a NULL buffer with count > 0, or
 * overlapping buffers. Uses AVX-512, AVX512-BF16 or F16C when the CPU has them (TB_CPU_FEATURES,
 * read on each call, can mask them), with the same results bit for bit as the portable code.
 * Thread-safe. */
TB_API tb_status tb_convert(tb_dtype src_dtype, const void *src, tb_dtype dst_dtype, void *dst, size_t count,
                            bool saturate);

#ifdef __cplusplus
}
#endif
#endif
