/* Helpers for the rnn and control-flow operator tests on top of the shared one-node harness
 * (test_op_harness.h): f32 outputs within the rnn tolerance, element access and the sigmoid. */
#ifndef TEST_OPS_RNN_UTIL_H
#define TEST_OPS_RNN_UTIL_H
#include <math.h>
#include "test_op_harness.h"

/* Output t is f32 with this shape and these values within 1e-6 absolute + 1e-5 relative. */
static inline void rt_assert_f32(const tb_tensor *t, size_t ndim, const int64_t *shape, const double *want) {
  toh_assert_shape(t, ndim, shape);
  assert_int_equal(tb_tensor_dtype(t), TB_DTYPE_F32);
  const float *got = tb_tensor_host_data(t);
  for (int64_t i = 0; i < tb_tensor_numel(t); i++)
    if (!(fabs((double)got[i] - want[i]) <= 1e-6 + 1e-5 * fabs(want[i])))
      fail_msg("element %lld: got %.9g, expected %.9g", (long long)i, (double)got[i], want[i]);
}

/* The f32 element i of t. */
static inline float rt_at(const tb_tensor *t, int64_t i) { return ((const float *)tb_tensor_host_data(t))[i]; }

static inline double rt_sigmoid(double x) { return 1.0 / (1.0 + exp(-x)); }

#endif
