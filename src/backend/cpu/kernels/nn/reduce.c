/* Reference kernels for the Reduce* family and ArgMax / ArgMin. Each input element is mapped to its
 * output element and folded in, in double. Reducing an empty set gives the operation's identity: 0 for
 * the sums and norms, 1 for ReduceProd, -inf / +inf for ReduceMax / ReduceMin, -inf for ReduceLogSumExp,
 * NaN for ReduceMean (0/0). */
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include "backend/cpu/kernels/nn/nn_kernel.h"
#include "ops/nn/reduce.h"

typedef enum { R_SUM, R_MEAN, R_MAX, R_MIN, R_PROD, R_L1, R_L2, R_LSE, R_SSQ } reduce_kind;

static tb_status reduce_run(tb_kernel_ctx *ctx, reduce_kind kind) {
  nn_buf x = {0}, axes = {0};
  double *y = NULL;
  int64_t *axes_i = NULL;
  tb_status st;
  const tb_reduce_params *p = tb_kernel_params(ctx, &st);
  if (st == TB_OK) st = tb_nn_load(ctx, 0, false, &x);
  if (st == TB_OK && p->axes_from_input) st = tb_nn_load(ctx, 1, true, &axes);
  if (st != TB_OK) goto done;
  if (axes.data) st = tb_nn_load_i64(ctx, 1, &axes_i);
  if (st != TB_OK) goto done;
  nn_reduce_axes ax;
  st = tb_nn_reduce_axes_resolve(p, x.ndim, axes.data != NULL, axes_i, (size_t)axes.numel, &ax);
  if (st != TB_OK) goto done;
  int64_t out_shape[TB_MAX_DIMS], red_shape[TB_MAX_DIMS]; /* red_shape: the input shape with reduced dims 1 */
  size_t on = 0;
  int64_t group = 1; /* elements folded into each output */
  for (size_t i = 0; i < x.ndim; i++) {
    red_shape[i] = ax.reduce[i] ? 1 : x.shape[i];
    if (ax.reduce[i]) group *= x.shape[i];
    if (!ax.reduce[i]) out_shape[on++] = x.shape[i];
    else if (ax.keepdims) out_shape[on++] = 1;
  }
  int64_t total = 0;
  st = tb_nn_checked_numel(ctx, on, out_shape, &total);
  if (st == TB_OK) st = tb_nn_alloc(ctx, total, &y);
  if (st != TB_OK) goto done;
  if (ax.noop) {
    st = tb_nn_store(ctx, 0, x.dtype, x.ndim, x.shape, x.data);
    goto done;
  }
  double init = 0;
  if (kind == R_PROD) init = 1;
  if (kind == R_MAX) init = -INFINITY;
  if (kind == R_MIN) init = INFINITY;
  for (int64_t o = 0; o < total; o++) y[o] = init;
  int64_t idx[TB_MAX_DIMS] = {0};
  for (int64_t e = 0; e < x.numel; e++, tb_kernel_next_index(x.ndim, x.shape, idx)) {
    int64_t o = 0;
    for (size_t i = 0; i < x.ndim; i++) o = o * red_shape[i] + (ax.reduce[i] ? 0 : idx[i]);
    double v = x.data[e];
    switch (kind) {
      case R_SUM: case R_MEAN: y[o] += v; break;
      case R_MAX: if (v > y[o] || isnan(v)) y[o] = v; break;
      case R_MIN: if (v < y[o] || isnan(v)) y[o] = v; break;
      case R_PROD: y[o] *= v; break;
      case R_L1: y[o] += fabs(v); break;
      case R_L2: case R_SSQ: y[o] += v * v; break;
      case R_LSE: y[o] += exp(v); break;
    }
  }
  for (int64_t o = 0; o < total; o++) {
    if (kind == R_MEAN) y[o] /= (double)group;
    if (kind == R_L2) y[o] = sqrt(y[o]);
    if (kind == R_LSE) y[o] = log(y[o]);
  }
  st = tb_nn_store(ctx, 0, x.dtype, on, out_shape, y);
done:
  free(y);
  free(axes_i);
  tb_nn_buf_free(&x);
  tb_nn_buf_free(&axes);
  return st;
}

static tb_status argminmax_run(tb_kernel_ctx *ctx, bool is_max) {
  tb_status st;
  const tb_argreduce_params *p = tb_kernel_params(ctx, &st);
  if (!p) return st;
  int64_t axis = p->axis;
  bool keepdims = p->keepdims, last = p->select_last_index;
  nn_buf x;
  double *y = NULL;
  st = tb_nn_load(ctx, 0, false, &x);
  if (st != TB_OK) return st;
  int64_t r = (int64_t)x.ndim;
  if (axis < 0) axis += r;
  if (axis < 0 || axis >= r) {
    st = tb_kernel_error(ctx, TB_ERR_MODEL, "attribute axis is out of range for rank %lld", (long long)r);
    goto done;
  }
  int64_t n = x.shape[axis], outer = tb_nn_numel((size_t)axis, x.shape);
  int64_t inner = tb_nn_numel((size_t)(r - axis - 1), x.shape + axis + 1);
  int64_t out_shape[TB_MAX_DIMS], total = 0;
  size_t on = 0;
  for (int64_t i = 0; i < r; i++) {
    if (i != axis) out_shape[on++] = x.shape[i];
    else if (keepdims) out_shape[on++] = 1;
  }
  st = tb_nn_checked_numel(ctx, on, out_shape, &total);
  if (st == TB_OK && n == 0 && total > 0)
    st = tb_kernel_error(ctx, TB_ERR_MODEL, "cannot take the %s over an empty axis %lld", is_max ? "ArgMax" : "ArgMin",
                         (long long)axis);
  if (st == TB_OK) st = tb_nn_alloc(ctx, total, &y);
  if (st != TB_OK) goto done;
  if (total == 0) outer = 0;
  for (int64_t o = 0; o < outer; o++)
    for (int64_t i = 0; i < inner; i++) {
      const double *px = x.data + o * n * inner + i;
      int64_t best = 0;
      for (int64_t j = 1; j < n; j++) {
        double v = px[j * inner], b = px[best * inner];
        bool better = is_max ? (last ? v >= b : v > b) : (last ? v <= b : v < b);
        if (better) best = j;
      }
      y[o * inner + i] = (double)best;
    }
  st = tb_nn_store(ctx, 0, TB_DTYPE_I64, on, out_shape, y);
done:
  free(y);
  tb_nn_buf_free(&x);
  return st;
}

#define REDUCE_KERNEL(sym, op, kind)                                                        \
  static tb_status sym##_run(tb_kernel_ctx *ctx) { return reduce_run(ctx, kind); }         \
  const tb_kernel tb_kernel_##sym = {.domain = "", .name = op, .level = TB_KERNEL_REFERENCE, .cpu_features = 0, .accepts = NULL, .run = sym##_run};
REDUCE_KERNEL(reduce_sum, "ReduceSum", R_SUM)
REDUCE_KERNEL(reduce_mean, "ReduceMean", R_MEAN)
REDUCE_KERNEL(reduce_max, "ReduceMax", R_MAX)
REDUCE_KERNEL(reduce_min, "ReduceMin", R_MIN)
REDUCE_KERNEL(reduce_prod, "ReduceProd", R_PROD)
REDUCE_KERNEL(reduce_l1, "ReduceL1", R_L1)
REDUCE_KERNEL(reduce_l2, "ReduceL2", R_L2)
REDUCE_KERNEL(reduce_logsumexp, "ReduceLogSumExp", R_LSE)
REDUCE_KERNEL(reduce_sumsquare, "ReduceSumSquare", R_SSQ)

static tb_status argmax_run(tb_kernel_ctx *ctx) { return argminmax_run(ctx, true); }
static tb_status argmin_run(tb_kernel_ctx *ctx) { return argminmax_run(ctx, false); }
const tb_kernel tb_kernel_argmax = {.domain = "", .name = "ArgMax", .level = TB_KERNEL_REFERENCE, .cpu_features = 0, .accepts = NULL, .run = argmax_run};
const tb_kernel tb_kernel_argmin = {.domain = "", .name = "ArgMin", .level = TB_KERNEL_REFERENCE, .cpu_features = 0, .accepts = NULL, .run = argmin_run};
