/* tb_convert: argument checks, the choice of a dedicated loop (convert_kernels.h) for the f32 <->
 * f16/bf16/fp8 pairs, and a generic path for every other pair of the 12 dtypes. The generic path
 * reads a block of elements into doubles (any float dtype, exactly) or int64 (any integer or bool,
 * exactly), then writes them in the destination dtype with one rounding; reading a whole block
 * before writing it is what makes in-place conversion between same-size dtypes safe. The rules are
 * ONNX Cast's, written out in docs/dtypes.md. */
#include <limits.h>
#include <string.h>
#include <tensorbridge/device.h>

#include "core/convert_features.h"
#include "core/convert_kernels.h"
#include "core/convert_scalar.h"
#include "core/error.h"

#define HAS(features, f) (((features) & TB_FEATURE_BIT(TB_FEATURE_##f)) != 0)
/* The x86 loops exist only in x86 builds; elsewhere their flags are false and the names vanish. */
#ifdef TB_CONVERT_X86
#define X86(fn) fn
#else
#define X86(fn) NULL
#endif

static tb_convert_kernel kernel(tb_convert_kernel_fn fn, const char *path) {
  tb_convert_kernel k = {fn, path};
  return k;
}

tb_convert_kernel tb_convert_pick(tb_dtype src, tb_dtype dst, uint64_t features) {
  if (src == dst) return kernel(NULL, "copy");
#ifdef TB_CONVERT_X86
  bool avx512 = HAS(features, AVX512F), f16c = HAS(features, F16C), bf16 = avx512 && HAS(features, AVX512BF16);
#else
  (void)features;
  bool avx512 = false, f16c = false, bf16 = false;
#endif
  if (src == TB_DTYPE_F32) {
    switch (dst) {
    case TB_DTYPE_F16:
      if (avx512) return kernel(X86(tb_convert_f32_to_f16_avx512), "avx512");
      if (f16c) return kernel(X86(tb_convert_f32_to_f16_f16c), "f16c");
      return kernel(tb_convert_f32_to_f16_portable, "portable");
    case TB_DTYPE_BF16:
      if (bf16) return kernel(X86(tb_convert_f32_to_bf16_avx512bf16), "avx512bf16");
      if (avx512) return kernel(X86(tb_convert_f32_to_bf16_avx512), "avx512");
      return kernel(tb_convert_f32_to_bf16_portable, "portable");
    case TB_DTYPE_FP8_E4M3FN:
      if (avx512) return kernel(X86(tb_convert_f32_to_e4m3fn_avx512), "avx512");
      return kernel(tb_convert_f32_to_e4m3fn_portable, "portable");
    case TB_DTYPE_FP8_E5M2:
      if (avx512) return kernel(X86(tb_convert_f32_to_e5m2_avx512), "avx512");
      return kernel(tb_convert_f32_to_e5m2_portable, "portable");
    default: break;
    }
  } else if (dst == TB_DTYPE_F32) {
    switch (src) {
    case TB_DTYPE_F16:
      if (avx512) return kernel(X86(tb_convert_f16_to_f32_avx512), "avx512");
      if (f16c) return kernel(X86(tb_convert_f16_to_f32_f16c), "f16c");
      return kernel(tb_convert_f16_to_f32_portable, "portable");
    case TB_DTYPE_BF16:
      if (avx512) return kernel(X86(tb_convert_bf16_to_f32_avx512), "avx512");
      return kernel(tb_convert_bf16_to_f32_portable, "portable");
    case TB_DTYPE_FP8_E4M3FN: return kernel(tb_convert_e4m3fn_to_f32_table, "table");
    case TB_DTYPE_FP8_E5M2: return kernel(tb_convert_e5m2_to_f32_table, "table");
    default: break;
    }
  }
  return kernel(NULL, "generic");
}

static bool is_float(tb_dtype d) { return d <= TB_DTYPE_FP8_E5M2; }

static tb_minifloat minifloat_of(tb_dtype d) {
  switch (d) {
  case TB_DTYPE_F16: return TB_MINIFLOAT_F16;
  case TB_DTYPE_BF16: return TB_MINIFLOAT_BF16;
  case TB_DTYPE_FP8_E4M3FN: return TB_MINIFLOAT_E4M3FN;
  default: return TB_MINIFLOAT_E5M2;
  }
}

/* Read n float elements of dtype t as doubles (exact). */
static void load_floats(tb_dtype t, const void *src, size_t n, double *out) {
  if (t == TB_DTYPE_F64) {
    memcpy(out, src, n * sizeof *out);
  } else if (t == TB_DTYPE_F32) {
    const float *s = src;
    for (size_t i = 0; i < n; i++) out[i] = s[i];
  } else if (t == TB_DTYPE_F16 || t == TB_DTYPE_BF16) {
    const uint16_t *s = src;
    for (size_t i = 0; i < n; i++) out[i] = tb_minifloat_to_float(minifloat_of(t), s[i]);
  } else {
    const uint8_t *s = src;
    for (size_t i = 0; i < n; i++) out[i] = tb_minifloat_to_float(minifloat_of(t), s[i]);
  }
}

/* Read n integer or bool elements of dtype t as int64 (exact; bool is any nonzero byte -> 1). */
static void load_integers(tb_dtype t, const void *src, size_t n, int64_t *out) {
  switch (t) {
  case TB_DTYPE_I64: memcpy(out, src, n * sizeof *out); break;
  case TB_DTYPE_I32: for (size_t i = 0; i < n; i++) out[i] = ((const int32_t *)src)[i]; break;
  case TB_DTYPE_I16: for (size_t i = 0; i < n; i++) out[i] = ((const int16_t *)src)[i]; break;
  case TB_DTYPE_I8: for (size_t i = 0; i < n; i++) out[i] = ((const int8_t *)src)[i]; break;
  case TB_DTYPE_U8: for (size_t i = 0; i < n; i++) out[i] = ((const uint8_t *)src)[i]; break;
  default: for (size_t i = 0; i < n; i++) out[i] = ((const uint8_t *)src)[i] != 0; break;
  }
}

static void store_from_floats(tb_dtype t, const double *in, size_t n, void *dst, bool saturate) {
  switch (t) {
  case TB_DTYPE_F64: memcpy(dst, in, n * sizeof *in); break;
  case TB_DTYPE_F32: for (size_t i = 0; i < n; i++) ((float *)dst)[i] = (float)in[i]; break;
  case TB_DTYPE_F16:
  case TB_DTYPE_BF16:
    for (size_t i = 0; i < n; i++) ((uint16_t *)dst)[i] = tb_minifloat_from_double(minifloat_of(t), in[i], saturate);
    break;
  case TB_DTYPE_FP8_E4M3FN:
  case TB_DTYPE_FP8_E5M2:
    for (size_t i = 0; i < n; i++) ((uint8_t *)dst)[i] = (uint8_t)tb_minifloat_from_double(minifloat_of(t), in[i], saturate);
    break;
  case TB_DTYPE_I64:
    for (size_t i = 0; i < n; i++) ((int64_t *)dst)[i] = tb_double_to_int_saturated(in[i], INT64_MIN, INT64_MAX);
    break;
  case TB_DTYPE_I32:
    for (size_t i = 0; i < n; i++) ((int32_t *)dst)[i] = (int32_t)tb_double_to_int_saturated(in[i], INT32_MIN, INT32_MAX);
    break;
  case TB_DTYPE_I16:
    for (size_t i = 0; i < n; i++) ((int16_t *)dst)[i] = (int16_t)tb_double_to_int_saturated(in[i], INT16_MIN, INT16_MAX);
    break;
  case TB_DTYPE_I8:
    for (size_t i = 0; i < n; i++) ((int8_t *)dst)[i] = (int8_t)tb_double_to_int_saturated(in[i], INT8_MIN, INT8_MAX);
    break;
  case TB_DTYPE_U8:
    for (size_t i = 0; i < n; i++) ((uint8_t *)dst)[i] = (uint8_t)tb_double_to_int_saturated(in[i], 0, UINT8_MAX);
    break;
  default: for (size_t i = 0; i < n; i++) ((uint8_t *)dst)[i] = in[i] != 0; break; /* NaN != 0: true */
  }
}

static uint16_t minifloat_from_int64(tb_minifloat fmt, int64_t v, bool saturate) {
  uint64_t magnitude = v < 0 ? 0u - (uint64_t)v : (uint64_t)v;
  return tb_minifloat_from_integer(fmt, v < 0, magnitude, saturate);
}

/* Integer to integer keeps the low bits (two's complement), as ONNX Cast says: 200 (i16) -> -56 (i8). */
static void store_from_integers(tb_dtype t, const int64_t *in, size_t n, void *dst, bool saturate) {
  switch (t) {
  case TB_DTYPE_F64: for (size_t i = 0; i < n; i++) ((double *)dst)[i] = (double)in[i]; break;
  case TB_DTYPE_F32: for (size_t i = 0; i < n; i++) ((float *)dst)[i] = (float)in[i]; break;
  case TB_DTYPE_F16:
  case TB_DTYPE_BF16:
    for (size_t i = 0; i < n; i++) ((uint16_t *)dst)[i] = minifloat_from_int64(minifloat_of(t), in[i], saturate);
    break;
  case TB_DTYPE_FP8_E4M3FN:
  case TB_DTYPE_FP8_E5M2:
    for (size_t i = 0; i < n; i++) ((uint8_t *)dst)[i] = (uint8_t)minifloat_from_int64(minifloat_of(t), in[i], saturate);
    break;
  case TB_DTYPE_I64: memcpy(dst, in, n * sizeof *in); break;
  case TB_DTYPE_I32: for (size_t i = 0; i < n; i++) ((int32_t *)dst)[i] = (int32_t)(uint32_t)in[i]; break;
  case TB_DTYPE_I16: for (size_t i = 0; i < n; i++) ((int16_t *)dst)[i] = (int16_t)(uint16_t)in[i]; break;
  case TB_DTYPE_I8: for (size_t i = 0; i < n; i++) ((int8_t *)dst)[i] = (int8_t)(uint8_t)in[i]; break;
  case TB_DTYPE_U8: for (size_t i = 0; i < n; i++) ((uint8_t *)dst)[i] = (uint8_t)in[i]; break;
  default: for (size_t i = 0; i < n; i++) ((uint8_t *)dst)[i] = in[i] != 0; break;
  }
}

enum { BLOCK = 256 };

static void convert_generic(tb_dtype st, const void *src, tb_dtype dt, void *dst, size_t count, bool saturate) {
  size_t ssize = tb_dtype_size(st), dsize = tb_dtype_size(dt);
  double floats[BLOCK];
  int64_t integers[BLOCK];
  for (size_t done = 0; done < count; done += BLOCK) {
    size_t n = count - done < BLOCK ? count - done : BLOCK;
    const void *s = (const uint8_t *)src + done * ssize;
    void *d = (uint8_t *)dst + done * dsize;
    if (is_float(st)) {
      load_floats(st, s, n, floats);
      store_from_floats(dt, floats, n, d, saturate);
    } else {
      load_integers(st, s, n, integers);
      store_from_integers(dt, integers, n, d, saturate);
    }
  }
}

static tb_status check_dtype(const char *which, tb_dtype d) {
  if ((unsigned)d < TB_DTYPE_COUNT) return TB_OK;
  return tb_error(TB_ERR_INVALID_ARGUMENT,
                  "tb_convert: %s %d is not a tb_dtype (valid values are 0 (f64) to %d (bool)); pass a TB_DTYPE_* value",
                  which, (int)d, TB_DTYPE_COUNT - 1);
}

static tb_status check_buffers(tb_dtype st, const void *src, tb_dtype dt, const void *dst, size_t count) {
  if (!src || !dst)
    return tb_error(TB_ERR_INVALID_ARGUMENT, "tb_convert: %s is NULL with count %zu; pass a buffer of %zu %s elements",
                    !src ? "src" : "dst", count, count, tb_dtype_name(!src ? st : dt));
  size_t ssize = tb_dtype_size(st), dsize = tb_dtype_size(dt);
  if (count > SIZE_MAX / 8u)
    return tb_error(TB_ERR_INVALID_ARGUMENT, "tb_convert: count %zu is larger than any buffer can be", count);
  uintptr_t s0 = (uintptr_t)src, s1 = s0 + count * ssize, d0 = (uintptr_t)dst, d1 = d0 + count * dsize;
  bool overlap = s0 < d1 && d0 < s1;
  if (overlap && !(src == dst && ssize == dsize))
    return tb_error(TB_ERR_INVALID_ARGUMENT,
                    "tb_convert: src (%p, %zu bytes of %s) and dst (%p, %zu bytes of %s) overlap; buffers may only "
                    "overlap when they are the same pointer and the element sizes are equal",
                    src, count * ssize, tb_dtype_name(st), dst, count * dsize, tb_dtype_name(dt));
  return TB_OK;
}

tb_status tb_convert_with_features(tb_dtype src_dtype, const void *src, tb_dtype dst_dtype, void *dst, size_t count,
                                   bool saturate, uint64_t features) {
  tb_status st = check_dtype("src_dtype", src_dtype);
  if (st == TB_OK) st = check_dtype("dst_dtype", dst_dtype);
  if (st != TB_OK || count == 0) return st;
  st = check_buffers(src_dtype, src, dst_dtype, dst, count);
  if (st != TB_OK) return st;
  tb_convert_kernel k = tb_convert_pick(src_dtype, dst_dtype, features);
  if (src_dtype == dst_dtype) {
    if (src != dst) memcpy(dst, src, count * tb_dtype_size(src_dtype));
  } else if (k.fn) {
    k.fn(src, dst, count, saturate);
  } else {
    convert_generic(src_dtype, src, dst_dtype, dst, count, saturate);
  }
  return TB_OK;
}

tb_status tb_convert(tb_dtype src_dtype, const void *src, tb_dtype dst_dtype, void *dst, size_t count, bool saturate) {
  return tb_convert_with_features(src_dtype, src, dst_dtype, dst, count, saturate, tb_convert_features());
}
