/* Level-2 fp32 Softmax on any axis, with the reference's [outer, n, inner] view (from opset 13 only the
 * axis is reduced; before it, the axis and everything after it form one row). The last axis (inner 1,
 * every transformer's attention) runs one fused row pass per row: max, exp with the running sum, scale.
 * Other axes run the same steps over whole [inner] rows with a scratch max and sum per outer index (the
 * sums in fp32 over 256 rows at a time, then in double). LogSoftmax over the last axis (the CRNN's 97
 * classes per step; other axes go to the reference): per row the max m (NaN skipped, as the reference's
 * comparison does), t = x - m, the sum of e^t in blocks of 256, then y = t - log(sum) (log in double). */
#include <math.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include "backend/cpu/kernels/fast/vec/vec_kernel.h"

typedef struct sm_job {
  const vec_ops *ops;
  const float *x;
  float *y;
  int64_t n, inner;
  atomic_int failed;
} sm_job;

static void sm_rows(void *arg, size_t begin, size_t end) {
  sm_job *j = arg;
  for (size_t r = begin; r < end; r++) j->ops->softmax_row(j->x + (int64_t)r * j->n, j->n, j->y + (int64_t)r * j->n);
}

enum { SM_FOLD = 256 }; /* rows summed in fp32 before the column sums join their double totals */

static void sm_columns(void *arg, size_t begin, size_t end) {
  sm_job *j = arg;
  const vec_ops *o = j->ops;
  int64_t n = j->n, in = j->inner;
  double *total = malloc((size_t)in * (sizeof(double) + 2 * sizeof(float)));
  if (!total) {
    atomic_store(&j->failed, 1);
    return;
  }
  float *mx = (float *)(total + in), *sum = mx + in;
  for (size_t b = begin; b < end; b++) {
    const float *x = j->x + (int64_t)b * n * in;
    float *y = j->y + (int64_t)b * n * in;
    memcpy(mx, x, (size_t)in * sizeof(float));
    for (int64_t k = 1; k < n; k++) o->max_acc(mx, x + k * in, 1, in);
    memset(sum, 0, (size_t)in * sizeof(float));
    for (int64_t i = 0; i < in; i++) total[i] = 0;
    for (int64_t k = 0; k < n; k++) {
      o->binary(VEC_SUB, x + k * in, false, mx, false, y + k * in, in);
      o->unary(VEC_EXP, y + k * in, y + k * in, in);
      o->add_acc(sum, y + k * in, 1, in);
      if ((k + 1) % SM_FOLD == 0 || k == n - 1)
        for (int64_t i = 0; i < in; i++) {
          total[i] += sum[i];
          sum[i] = 0;
        }
    }
    for (int64_t i = 0; i < in; i++) sum[i] = (float)total[i];
    for (int64_t k = 0; k < n; k++) o->binary(VEC_DIV, y + k * in, false, sum, false, y + k * in, in);
  }
  free(total);
}

static tb_status softmax_run(tb_kernel_ctx *ctx, const vec_ops *ops) {
  if (!tb_vec_inputs_ok(ctx, 1)) return tb_vec_fallback(ctx);
  const tb_tensor *x = ctx->inputs[0];
  tb_status st;
  const tb_softmax_params *pb = tb_kernel_params(ctx, &st);
  if (st != TB_OK) return st;
  bool v13 = !pb->flatten;
  int64_t axis = pb->axis, r = (int64_t)tb_tensor_ndim(x);
  const int64_t *shape = tb_tensor_shape(x);
  if (axis < 0) axis += r;
  if (axis < 0 || axis > r || (v13 && axis == r)) return tb_vec_fallback(ctx); /* the reference reports it */
  int64_t outer = 1, n = 1, inner = 1;
  for (int64_t d = 0; d < r; d++) {
    if (d < axis)
      outer *= shape[d];
    else if (d == axis || !v13)
      n *= shape[d];
    else
      inner *= shape[d];
  }
  float *y = NULL;
  if (!tb_vec_output(ctx, 0, (size_t)r, shape, &y, &st)) return st == TB_OK ? tb_vec_fallback(ctx) : st;
  int64_t total = outer * n * inner;
  if (total == 0) return TB_OK;
  sm_job j = {.ops = ops, .x = tb_tensor_host_data(x), .y = y, .n = n, .inner = inner};
  atomic_init(&j.failed, 0);
  if (inner == 1)
    tb_vec_parallel(ctx, (size_t)outer, total, sm_rows, &j);
  else
    tb_vec_parallel(ctx, (size_t)outer, total, sm_columns, &j);
  if (atomic_load(&j.failed))
    return tb_kernel_error(ctx, TB_ERR_OUT_OF_MEMORY, "no memory for the softmax scratch rows (%lld floats)",
                           (long long)(2 * inner));
  return TB_OK;
}

static bool softmax_accepts(const tb_kernel_query *q) {
  const tb_value_type *const *in = q->in;
  return q->n_inputs >= 1 && tb_fast_accepts_f32(in, 1);
}

VEC_KERNELS(softmax, "", "Softmax", softmax_accepts, softmax_run)

enum { LSM_BLOCK = 256 };

static void lsm_rows(void *arg, size_t begin, size_t end) {
  sm_job *j = arg;
  const vec_ops *o = j->ops;
  float e[LSM_BLOCK];
  for (size_t r = begin; r < end; r++) {
    const float *x = j->x + (int64_t)r * j->n;
    float *y = j->y + (int64_t)r * j->n, m = -INFINITY;
    for (int64_t i = 0; i < j->n; i++)
      if (x[i] > m) m = x[i];
    o->binary(VEC_SUB, x, false, &m, true, y, j->n);
    double sum = 0;
    for (int64_t i = 0; i < j->n; i += LSM_BLOCK) {
      int64_t len = j->n - i < LSM_BLOCK ? j->n - i : LSM_BLOCK;
      o->unary(VEC_EXP, y + i, e, len);
      sum += o->sum(e, len);
    }
    float ls = (float)log(sum);
    o->binary(VEC_SUB, y, false, &ls, true, y, j->n);
  }
}

static tb_status log_softmax_run(tb_kernel_ctx *ctx, const vec_ops *ops) {
  if (!tb_vec_inputs_ok(ctx, 1)) return tb_vec_fallback(ctx);
  const tb_tensor *x = ctx->inputs[0];
  tb_status st;
  const tb_softmax_params *pb = tb_kernel_params(ctx, &st);
  if (st != TB_OK) return st;
  int64_t axis = pb->axis, r = (int64_t)tb_tensor_ndim(x);
  const int64_t *shape = tb_tensor_shape(x);
  if (axis < 0) axis += r;
  /* the last axis only (before opset 13, the axis and everything after it: then any axis is one row) */
  if (axis < 0 || axis >= r || (!pb->flatten && axis != r - 1)) return tb_vec_fallback(ctx);
  int64_t outer = 1, n = 1;
  for (int64_t d = 0; d < r; d++) {
    if (d < axis) outer *= shape[d];
    else n *= shape[d];
  }
  float *y = NULL;
  if (!tb_vec_output(ctx, 0, (size_t)r, shape, &y, &st)) return st == TB_OK ? tb_vec_fallback(ctx) : st;
  if (outer * n == 0) return TB_OK;
  sm_job j = {.ops = ops, .x = tb_tensor_host_data(x), .y = y, .n = n, .inner = 1};
  atomic_init(&j.failed, 0);
  tb_vec_parallel(ctx, (size_t)outer, outer * n, lsm_rows, &j);
  return TB_OK;
}

VEC_KERNELS(log_softmax, "", "LogSoftmax", softmax_accepts, log_softmax_run)
