/* Output comparison for the conformance runner (the rule is in compare.h). */
#include "compare.h"
#include <math.h>
#include <string.h>

double conf_element(tb_dtype dtype, const void *data, int64_t i) {
  const uint8_t *p = data;
  size_t size = tb_dtype_size(dtype);
  switch (dtype) {
  case TB_DTYPE_F64: { double v; memcpy(&v, p + 8 * i, 8); return v; }
  case TB_DTYPE_F32: { float v; memcpy(&v, p + 4 * i, 4); return v; }
  case TB_DTYPE_I64: { int64_t v; memcpy(&v, p + 8 * i, 8); return (double)v; }
  case TB_DTYPE_I32: { int32_t v; memcpy(&v, p + 4 * i, 4); return v; }
  case TB_DTYPE_I16: { int16_t v; memcpy(&v, p + 2 * i, 2); return v; }
  case TB_DTYPE_I8: return (int8_t)p[i];
  case TB_DTYPE_U8: return p[i];
  case TB_DTYPE_BOOL: return p[i] != 0;
  default: {
    float v = 0;
    if (tb_convert(dtype, p + size * (size_t)i, TB_DTYPE_F32, &v, 1, false) != TB_OK) return NAN;
    return v;
  }
  }
}

static bool is_float(tb_dtype d) {
  return d == TB_DTYPE_F64 || d == TB_DTYPE_F32 || d == TB_DTYPE_F16 || d == TB_DTYPE_BF16 ||
         d == TB_DTYPE_FP8_E4M3FN || d == TB_DTYPE_FP8_E5M2;
}

static bool int_equal(tb_dtype dtype, const uint8_t *a, const uint8_t *e, int64_t i) {
  size_t size = tb_dtype_size(dtype);
  if (dtype == TB_DTYPE_BOOL) return (a[i] != 0) == (e[i] != 0);
  return memcmp(a + size * (size_t)i, e + size * (size_t)i, size) == 0;
}

bool conf_compare(tb_dtype dtype, const void *actual, const void *expected, int64_t count, double rtol, double atol,
                  conf_mismatch *out) {
  out->index = -1;
  out->count = 0;
  out->max_abs_err = 0;
  out->actual = out->expected = 0;
  bool floating = is_float(dtype);
  for (int64_t i = 0; i < count; i++) {
    bool ok;
    double a = 0, e = 0;
    if (floating) {
      a = conf_element(dtype, actual, i);
      e = conf_element(dtype, expected, i);
      if (isnan(a) || isnan(e)) {
        ok = isnan(a) && isnan(e);
      } else if (isinf(a) || isinf(e)) {
        ok = a == e;
      } else {
        double diff = fabs(a - e);
        ok = diff <= atol + rtol * fabs(e);
        if (diff > out->max_abs_err) out->max_abs_err = diff;
      }
    } else {
      ok = int_equal(dtype, actual, expected, i);
      if (!ok) {
        a = conf_element(dtype, actual, i);
        e = conf_element(dtype, expected, i);
        if (fabs(a - e) > out->max_abs_err) out->max_abs_err = fabs(a - e);
      }
    }
    if (!ok) {
      if (out->index < 0) {
        out->index = i;
        out->actual = a;
        out->expected = e;
      }
      out->count++;
    }
  }
  return out->count == 0;
}
