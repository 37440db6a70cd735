/* Helpers for the elementwise operator tests on top of the shared one-node harness (test_op_harness.h):
 * the reference kernel run on host inputs where NULL data marks an omitted input (outputs in t->out),
 * and bit-exact or tolerant checks of outputs of any dtype. */
#ifndef TEST_OPS_ELEMENTWISE_UTIL_H
#define TEST_OPS_ELEMENTWISE_UTIL_H
#include <math.h>
#include "test_op_harness.h"

/* One input for ewt_run: dtype, shape and packed data; data NULL for an omitted input. `strided` makes
 * the input a view with every innermost element followed by a gap (a non-contiguous tensor). */
typedef struct ewt_in {
  tb_dtype dtype;
  size_t ndim;
  int64_t shape[TB_MAX_DIMS];
  const void *data;
  bool strided;
} ewt_in;

/* A CPU tensor holding an input's data (a strided view when asked). */
static inline tb_tensor *ewt_tensor(toh *t, const ewt_in *in) {
  toh_in packed = {in->dtype, in->ndim, {0}, in->data};
  memcpy(packed.shape, in->shape, sizeof packed.shape);
  if (!in->strided) return toh_tensor(t, &packed);
  /* Base with the innermost dim doubled; the view takes every other element. */
  int64_t base_shape[TB_MAX_DIMS], strides[TB_MAX_DIMS];
  assert_true(in->ndim > 0);
  memcpy(base_shape, in->shape, in->ndim * sizeof(int64_t));
  base_shape[in->ndim - 1] *= 2;
  tb_tensor *base, *view;
  TB_ASSERT_OK(tb_tensor_create(t->cpu, in->dtype, in->ndim, base_shape, &base));
  int64_t s = 1;
  for (size_t d = in->ndim; d-- > 0;) {
    strides[d] = d == in->ndim - 1 ? 2 : s;
    s *= base_shape[d];
  }
  TB_ASSERT_OK(tb_tensor_view(base, in->ndim, in->shape, strides, 0, &view));
  tb_tensor_destroy(base);
  TB_ASSERT_OK(tb_tensor_copy_from_host(view, in->data, tb_tensor_nbytes(view)));
  return view;
}

/* Run the reference kernel (level 0) on the inputs (data NULL: omitted); outputs land in t->out[]. */
static inline tb_status ewt_run(toh *t, const ewt_in *ins) {
  toh_clear(t->in, TOH_MAX);
  for (size_t i = 0; i < t->n_in; i++)
    if (ins[i].data) t->in[i] = ewt_tensor(t, &ins[i]);
  tb_status st = toh_run_owned(t, false);
  toh_clear(t->in, TOH_MAX);
  return st;
}

/* Output i equals want (count values of the output's own dtype, packed), bit for bit. */
static inline void ewt_assert_bytes(toh *t, size_t i, const void *want, size_t count) {
  tb_tensor *o = t->out[i];
  assert_non_null(o);
  assert_int_equal(tb_tensor_numel(o), count);
  unsigned char got[4096];
  size_t bytes = tb_tensor_nbytes(o);
  assert_true(bytes <= sizeof got);
  TB_ASSERT_OK(tb_tensor_copy_to_host(o, got, bytes));
  assert_memory_equal(got, want, bytes);
}

/* Output i (any dtype) close to want: |got - want| <= tol * max(1, |want|); NaN matches NaN. */
static inline void ewt_assert_near(toh *t, size_t i, const double *want, size_t count, double tol) {
  tb_tensor *o = t->out[i];
  assert_non_null(o);
  assert_int_equal(tb_tensor_numel(o), count);
  unsigned char raw[8192];
  double got[1024];
  assert_true(tb_tensor_nbytes(o) <= sizeof raw && count <= 1024);
  TB_ASSERT_OK(tb_tensor_copy_to_host(o, raw, tb_tensor_nbytes(o)));
  TB_ASSERT_OK(tb_convert(tb_tensor_dtype(o), raw, TB_DTYPE_F64, got, count, true));
  for (size_t k = 0; k < count; k++) {
    if (isnan(want[k]) && isnan(got[k])) continue;
    if (isinf(want[k]) && got[k] == want[k]) continue;
    double lim = tol * (fabs(want[k]) > 1 ? fabs(want[k]) : 1);
    if (!(fabs(got[k] - want[k]) <= lim)) fail_msg("element %zu is %.9g, expected %.9g", k, got[k], want[k]);
  }
}

#endif
