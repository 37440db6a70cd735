/* Helpers for the tensor-family operator tests on top of the shared one-node harness (test_op_harness.h):
 * a heap-held node on the suite's CPU backend, a kernel run checked to give the same results with its
 * outputs preallocated and not, and checks of outputs' packed elements. */
#ifndef TB_TEST_OPS_TENSOR_UTIL_H
#define TB_TEST_OPS_TENSOR_UTIL_H
#include <stdlib.h>
#include <string.h>
#include "test_op_harness.h"
#include "test_tensor_util.h"

/* A node `op` at `opset` with n_in inputs (names in0..) and n_out outputs, with these attributes, run on
 * `cpu`. An input left without a tensor (toh_input not called) is an omitted optional input. */
static inline toh *ttn_new(tb_backend *cpu, const char *op, int opset, size_t n_in, size_t n_out, const tb_attr *attrs,
                           size_t n_attrs) {
  toh *t = malloc(sizeof *t);
  assert_non_null(t);
  toh_begin(t, cpu);
  toh_add(t, op, opset, n_in, 0, n_out, 0, attrs, n_attrs);
  return t;
}

static inline void ttn_free(toh *t) {
  toh_teardown(t);
  free(t);
}

/* Run the reference kernel with its outputs preallocated from the run-time inference (as the executor
 * does), then again with the kernel allocating them, and check both give the same bytes. */
static inline tb_status ttn_run(toh *t) {
  tb_status st = toh_run_owned(t, true);
  if (st != TB_OK) return st;
  size_t sizes[TOH_MAX];
  void *copies[TOH_MAX];
  for (size_t o = 0; o < t->n_out; o++) {
    copies[o] = NULL;
    if (!t->out[o]) continue;
    sizes[o] = tb_tensor_nbytes(t->out[o]);
    copies[o] = malloc(sizes[o] + 1);
    if (sizes[o]) memcpy(copies[o], tb_tensor_host_data(t->out[o]), sizes[o]);
  }
  st = toh_run_owned(t, false);
  for (size_t o = 0; o < t->n_out; o++) {
    if (!copies[o]) continue;
    if (st == TB_OK) {
      assert_int_equal(tb_tensor_nbytes(t->out[o]), sizes[o]);
      if (sizes[o]) assert_memory_equal(tb_tensor_host_data(t->out[o]), copies[o], sizes[o]);
    }
    free(copies[o]);
  }
  return st;
}

/* Output o: dtype, shape and packed elements. */
static inline void ttn_check(const toh *t, size_t o, tb_dtype dt, size_t ndim, const int64_t *shape, const void *data) {
  toh_assert_tensor(t->out[o], dt, ndim, shape);
  size_t n = tb_tensor_nbytes(t->out[o]);
  if (n) assert_memory_equal(tb_tensor_host_data(t->out[o]), data, n);
}

/* Inference from the inputs' concrete shapes (with_values: and the op's value inputs) succeeds, and
 * output 0 has this dtype, rank (< 0: unknown) and dims (-1 unknown). */
static inline void ttn_check_inferred(toh *t, bool with_values, tb_dtype dt, int ndim, const int64_t *dims) {
  TB_ASSERT_OK(toh_infer_tensors(t, with_values));
  toh_assert_type(&t->out_types[0], dt, ndim, dims);
}

/* The run fails with this status and an error containing part; then t is freed. */
static inline void ttn_run_fails(toh *t, tb_status status, const char *part) {
  assert_int_equal(ttn_run(t), status);
  TB_ASSERT_CONTAINS(tb_last_error(), part);
  ttn_free(t);
}

#define TTN_SHAPE(...) ((const int64_t[]){__VA_ARGS__})
#define TTN_F32(...) ((const float[]){__VA_ARGS__})
#define TTN_I64(...) ((const int64_t[]){__VA_ARGS__})
#define TTN_I32(...) ((const int32_t[]){__VA_ARGS__})

#endif
