/* Level-2 fp32 ReduceMean and ReduceSum over one contiguous block of axes (keepdims either way), the
 * input seen as [outer, R, inner] with R the reduced elements: with inner 1 (the last axes) one blocked sum
 * per row (fp32 vectors flushed to double every 1024 elements); otherwise (a middle block, such as CRNN's
 * mean over the height of [N, C, H, W]) the R rows of inner values are added up a vector at a time into
 * fp32 column sums, flushed into double every 256 rows, over column chunks of at most 1024. Work is split
 * over ctx->pool. Axes that are not one block, the empty axes of noop_with_empty_axes and axes whose value
 * is not known are left to the reference. */
#include <string.h>
#include "backend/cpu/kernels/fast/vec/vec_kernel.h"
#include "ops/nn/reduce.h"

enum { COLS = 1024, FLUSH_ROWS = 256 };

typedef struct red_job {
  const vec_ops *ops;
  const float *x;
  float *y;
  int64_t n, inner, col_chunks; /* n: the reduced elements per output (R) */
  bool mean;
} red_job;

static void red_rows(void *arg, size_t begin, size_t end) {
  const red_job *j = arg;
  for (size_t r = begin; r < end; r++) {
    double s = j->ops->sum(j->x + (int64_t)r * j->n, j->n);
    j->y[r] = (float)(j->mean ? s / (double)j->n : s);
  }
}

/* Tasks (outer index, column chunk): column sums over the R rows of one [R, inner] slab. */
static void red_cols(void *arg, size_t begin, size_t end) {
  const red_job *j = arg;
  float facc[COLS];
  double dacc[COLS];
  for (size_t t = begin; t < end; t++) {
    int64_t o = (int64_t)t / j->col_chunks, c0 = (int64_t)t % j->col_chunks * COLS;
    int64_t w = j->inner - c0 < COLS ? j->inner - c0 : COLS;
    const float *x = j->x + o * j->n * j->inner + c0;
    for (int64_t c = 0; c < w; c++) dacc[c] = 0;
    for (int64_t r0 = 0; r0 < j->n; r0 += FLUSH_ROWS) {
      int64_t r1 = j->n - r0 < FLUSH_ROWS ? j->n : r0 + FLUSH_ROWS;
      memcpy(facc, x + r0 * j->inner, (size_t)w * sizeof(float));
      for (int64_t r = r0 + 1; r < r1; r++) j->ops->add_acc(facc, x + r * j->inner, 1, w);
      for (int64_t c = 0; c < w; c++) dacc[c] += (double)facc[c];
    }
    float *y = j->y + o * j->inner + c0;
    for (int64_t c = 0; c < w; c++) y[c] = (float)(j->mean ? dacc[c] / (double)j->n : dacc[c]);
  }
}

/* The resolved axes when they are one block [*first, *last] of a rank-`rank` input. */
static bool axis_block(const tb_reduce_params *p, size_t rank, bool axes_present, const int64_t *vals, size_t count,
                       bool *keepdims, size_t *first, size_t *last) {
  nn_reduce_axes ax;
  if (rank == 0 || tb_nn_reduce_axes_resolve(p, rank, axes_present, vals, count, &ax) != TB_OK) return false;
  if (!ax.known || ax.noop) return false;
  size_t n = 0;
  *first = rank;
  for (size_t d = 0; d < rank; d++)
    if (ax.reduce[d]) {
      if (*first == rank) *first = d;
      *last = d;
      n++;
    }
  *keepdims = ax.keepdims;
  return n > 0 && *last - *first + 1 == n;
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
  size_t rank = tb_tensor_ndim(x), first = 0, last = 0;
  bool keep = true;
  if (!axis_block(p, rank, axes != NULL, axes ? tb_tensor_host_data(axes) : NULL, axes ? (size_t)tb_tensor_numel(axes) : 0,
                  &keep, &first, &last))
    return tb_vec_fallback(ctx);
  const int64_t *shape = tb_tensor_shape(x);
  int64_t out_shape[TB_MAX_DIMS], outer = 1, n = 1, inner = 1;
  size_t out_rank = 0;
  for (size_t d = 0; d < rank; d++) {
    bool reduced = d >= first && d <= last;
    if (d < first) outer *= shape[d];
    else if (reduced) n *= shape[d];
    else inner *= shape[d];
    if (!reduced) out_shape[out_rank++] = shape[d];
    else if (keep) out_shape[out_rank++] = 1;
  }
  if (n == 0) return tb_vec_fallback(ctx); /* an empty reduction: the reference's 0 or NaN */
  red_job j = {.ops = ops, .x = tb_tensor_host_data(x), .n = n, .inner = inner, .mean = mean};
  if (!tb_vec_output(ctx, 0, out_rank, out_shape, &j.y, &st)) return st == TB_OK ? tb_vec_fallback(ctx) : st;
  if (outer * inner == 0) return TB_OK;
  if (inner == 1) {
    tb_vec_parallel(ctx, (size_t)outer, outer * n, red_rows, &j);
  } else {
    j.col_chunks = (inner + COLS - 1) / COLS;
    tb_vec_parallel(ctx, (size_t)(outer * j.col_chunks), outer * n * inner, red_cols, &j);
  }
  return TB_OK;
}

static bool reduce_accepts(const tb_kernel_query *q) {
  const tb_value_type *const *in = q->in;
  if (q->n_inputs < 1 || !tb_fast_accepts_f32(in, 1)) return false;
  bool keep;
  const tb_reduce_params *p = q->params;
  if (!p) return false;
  if (p->axes_from_input || !in[0]->has_shape) return true; /* run() sees the axes and shape */
  size_t first, last;
  return axis_block(p, in[0]->ndim, false, NULL, 0, &keep, &first, &last);
}

static tb_status mean_run(tb_kernel_ctx *ctx, const vec_ops *ops) { return reduce_run(ctx, ops, true); }
static tb_status sum_run(tb_kernel_ctx *ctx, const vec_ops *ops) { return reduce_run(ctx, ops, false); }
VEC_KERNELS(reduce_mean, "", "ReduceMean", reduce_accepts, mean_run)
VEC_KERNELS(reduce_sum, "", "ReduceSum", reduce_accepts, sum_run)
