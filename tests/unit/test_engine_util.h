/* Helpers for the engine's executor and prepare tests: a public tb_model made from a graph built with the
 * IR builder (no ONNX file), small f32 tensors, and value checks. */
#ifndef TB_TEST_ENGINE_UTIL_H
#define TB_TEST_ENGINE_UTIL_H
#include <math.h>
#include <pthread.h>
#include <tensorbridge/model.h>
#include "model/model_impl.h"
#include "test_ir_util.h"
#include "test_kernel_util.h"

/* A model owning `ir` as tb_model_load would make it. */
static inline tb_model *tbt_model_of(tb_ir_model *ir) {
  tb_model *m = calloc(1, sizeof *m);
  assert_non_null(m);
  m->ir = ir;
  atomic_init(&m->refs, 1);
  pthread_mutex_init(&m->sha_lock, NULL);
  return m;
}

static inline tb_tensor *tbt_f32(tb_backend *b, size_t ndim, const int64_t *shape, const float *data) {
  return toh_host_tensor(b, TB_DTYPE_F32, ndim, shape, data);
}

/* Assert t is f32 with this shape and these values (within 1e-6 relative). */
static inline void tbt_expect_f32(const tb_tensor *t, size_t ndim, const int64_t *shape, const float *want) {
  toh_assert_tensor(t, TB_DTYPE_F32, ndim, shape);
  size_t n = (size_t)tb_tensor_numel(t);
  float *got = malloc(n * sizeof *got + 1);
  TB_ASSERT_OK(tb_tensor_copy_to_host(t, got, n * sizeof *got));
  for (size_t i = 0; i < n; i++)
    if (fabsf(got[i] - want[i]) > 1e-6f * fmaxf(1.0f, fabsf(want[i])))
      fail_msg("element %zu: got %g, expected %g", i, (double)got[i], (double)want[i]);
  free(got);
}

/* The test model: out = Reshape(MatMul(Relu(x) + c, W), [-1]) with x of shape [batch, 3] (symbolic),
 * c = [1, 2, 3], W = [[1, 0], [0, 1], [1, 1]] (3 x 2). */
static inline tb_ir_model *tbt_small_model(void) {
  tb_ir_model *m = tbt_ir_model(13);
  tb_graph *g = tb_graph_new(m, NULL, "small");
  int64_t x_dims[2] = {-1, 3};
  const char *x_sym[2] = {"batch", NULL};
  tbt_input(g, "x", TB_DTYPE_F32, 2, x_dims, x_sym);
  int64_t three = 3, w_dims[2] = {3, 2}, one = 1;
  float c[3] = {1, 2, 3}, w[6] = {1, 0, 0, 1, 1, 1};
  int64_t flat[1] = {-1};
  tbt_const_f32(g, "c", 1, &three, c);
  tbt_const_f32(g, "W", 2, w_dims, w);
  tbt_const_i64(g, "flat", 1, &one, flat);
  tbt_node(g, "Relu", "relu", "x", "r");
  tbt_node(g, "Add", "add", "r,c", "s");
  tbt_node(g, "MatMul", "matmul", "s,W", "mm");
  tbt_node(g, "Reshape", "reshape", "mm,flat", "out");
  tbt_output(g, "out");
  return m;
}

/* The expected output of the small model for x (batch rows of 3). */
static inline void tbt_small_expected(const float *x, size_t batch, float *out) {
  const float c[3] = {1, 2, 3};
  for (size_t b = 0; b < batch; b++) {
    float s[3];
    for (int j = 0; j < 3; j++) s[j] = fmaxf(x[b * 3 + (size_t)j], 0.0f) + c[j];
    out[b * 2] = s[0] + s[2];
    out[b * 2 + 1] = s[1] + s[2];
  }
}

#endif
