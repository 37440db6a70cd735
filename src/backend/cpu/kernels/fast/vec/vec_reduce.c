/* Level-2 fp32 ReduceMean and ReduceSum over the last axis (keepdims either way): one blocked sum per row
 * (fp32 vectors flushed to double every 1024 elements), rows split over ctx->pool. Other axes, the empty
 * axes of noop_with_empty_axes and axes whose value is not known are left to the reference. */
#include <string.h>
#include "backend/cpu/kernels/fast/vec/vec_kernel.h"
#include "ops/nn/reduce.h"

typedef struct red_job {
  const vec_ops *ops;
  const float *x;
  float *y;
  int64_t n;
  bool mean;
} red_job;

static void red_rows(void *arg, size_t begin, size_t end) {
  const red_job *j = arg;
  for (size_t r = begin; r < end; r++) {
    double s = j->ops->sum(j->x + (int64_t)r * j->n, j->n);
    j->y[r] = (float)(j->mean ? s / (double)j->n : s);
  }
}

/* The resolved axes when they are exactly the last axis of a rank-`rank` input. */
static bool last_axis_only(const tb_reduce_params *p, size_t rank, bool axes_present, const int64_t *vals, size_t count,
                           bool *keepdims) {
  nn_reduce_axes ax;
  if (rank == 0 || tb_nn_reduce_axes_resolve(p, rank, axes_present, vals, count, &ax) != TB_OK) return false;
  if (!ax.known || ax.noop) return false;
  for (size_t d = 0; d < rank; d++)
    if (ax.reduce[d] != (d == rank - 1)) return false;
  *keepdims = ax.keepdims;
  return true;
}

static tb_status reduce_run(tb_kernel_ctx *ctx, const vec_ops *ops, bool mean) {
  if (!tb_vec_inputs_ok(ctx, 1)) return tb_vec_fallback(ctx);
  const tb_tensor *x = ctx->inputs[0], *axes = NULL;
  tb_status st;
  const tb_reduce_params *p = tb_kernel_params(ctx, &st);
  if (!p) return st;
  if (p->axes_from_input && ctx->n_inputs > 1) axes = ctx->inputs[1];
  if (axes && (tb_tensor_dtype(axes) != TB_DTYPE_I64 || !tb_tensor_is_contiguous(axes) ||
               (tb_tensor_numel(axes) > 0 && !tb_tensor_host_data(axes))))
    return tb_vec_fallback(ctx);
  size_t rank = tb_tensor_ndim(x);
  bool keep = true;
  if (!last_axis_only(p, rank, axes != NULL, axes ? tb_tensor_host_data(axes) : NULL,
                      axes ? (size_t)tb_tensor_numel(axes) : 0, &keep))
    return tb_vec_fallback(ctx);
  const int64_t *shape = tb_tensor_shape(x);
  int64_t out_shape[TB_MAX_DIMS], rows = 1;
  for (size_t d = 0; d + 1 < rank; d++) rows *= out_shape[d] = shape[d];
  if (keep) out_shape[rank - 1] = 1;
  red_job j = {.ops = ops, .x = tb_tensor_host_data(x), .n = shape[rank - 1], .mean = mean};
  if (!tb_vec_output(ctx, 0, keep ? rank : rank - 1, out_shape, &j.y, &st)) return st == TB_OK ? tb_vec_fallback(ctx) : st;
  tb_vec_parallel(ctx, (size_t)rows, rows * j.n, red_rows, &j);
  return TB_OK;
}

static bool reduce_accepts(const tb_kernel_query *q) {
  const tb_value_type *const *in = q->in;
  if (q->n_inputs < 1 || !tb_fast_accepts_f32(in, 1)) return false;
  bool keep;
  const tb_reduce_params *p = q->params;
  if (!p) return false;
  if (p->axes_from_input || !in[0]->has_shape) return true; /* run() sees the axes and shape */
  return last_axis_only(p, in[0]->ndim, false, NULL, 0, &keep);
}

static tb_status mean_run(tb_kernel_ctx *ctx, const vec_ops *ops) { return reduce_run(ctx, ops, true); }
static tb_status sum_run(tb_kernel_ctx *ctx, const vec_ops *ops) { return reduce_run(ctx, ops, false); }
VEC_KERNELS(reduce_mean, "", "ReduceMean", reduce_accepts, mean_run)
VEC_KERNELS(reduce_sum, "", "ReduceSum", reduce_accepts, sum_run)
