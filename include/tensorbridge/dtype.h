/* Element types of tensors, and their names and sizes. */
#ifndef TENSORBRIDGE_DTYPE_H
#define TENSORBRIDGE_DTYPE_H
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

#ifdef __cplusplus
}
#endif
#endif
