/* Helpers for the nn operator tests on top of the shared one-node harness (test_op_harness.h): checks of
 * f32 outputs within the nn tolerance and of i64 outputs. */
#ifndef TEST_OPS_NN_UTIL_H
#define TEST_OPS_NN_UTIL_H
#include <math.h>
#include "test_op_harness.h"

/* Output t has this shape and (as f32 / converted to f64) these values within 1e-5 + 1e-4 relative. */
static inline void nnt_assert_f32(const tb_tensor *t, size_t ndim, const int64_t *shape, const float *want) {
  toh_assert_tensor(t, TB_DTYPE_F32, ndim, shape);
  const float *got = tb_tensor_host_data(t);
  for (int64_t i = 0; i < tb_tensor_numel(t); i++) {
    if (isnan(want[i]) && isnan(got[i])) continue;
    if (!(fabs((double)got[i] - (double)want[i]) <= 1e-5 + 1e-4 * fabs((double)want[i])))
      fail_msg("element %lld: got %.9g, expected %.9g", (long long)i, (double)got[i], (double)want[i]);
  }
}

static inline void nnt_assert_i64(const tb_tensor *t, size_t ndim, const int64_t *shape, const int64_t *want) {
  toh_assert_tensor(t, TB_DTYPE_I64, ndim, shape);
  const int64_t *got = tb_tensor_host_data(t);
  for (int64_t i = 0; i < tb_tensor_numel(t); i++) assert_int_equal(got[i], want[i]);
}

#endif
