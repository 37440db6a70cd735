/* Comparing an output with its reference the way ONNX's backend test runner does
 * (onnx/backend/test/runner/__init__.py, assert_similar_outputs): numpy.testing.assert_allclose, i.e.
 * |actual - expected| <= atol + rtol * |expected| element by element, NaN equal to NaN, with the
 * defaults of onnx/backend/test/loader/__init__.py: rtol 1e-3, atol 1e-7. Integers and bool are
 * compared exactly; the dtype and the shape must match first. */
#ifndef TB_CONFORMANCE_COMPARE_H
#define TB_CONFORMANCE_COMPARE_H
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <tensorbridge/dtype.h>

#define CONF_RTOL 1e-3
#define CONF_ATOL 1e-7

typedef struct conf_mismatch {
  int64_t index;         /* flat index of the first mismatching element, -1 when none */
  double actual, expected;
  int64_t count;         /* elements out of tolerance */
  double max_abs_err;
} conf_mismatch;

/* Both buffers packed, `count` elements of `dtype`. True when every element is within tolerance. */
bool conf_compare(tb_dtype dtype, const void *actual, const void *expected, int64_t count, double rtol, double atol,
                  conf_mismatch *out);
/* Element i of a packed buffer as a double (any tb_dtype). */
double conf_element(tb_dtype dtype, const void *data, int64_t i);

#endif
