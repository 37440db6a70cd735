/* CUDA kernels of Softmax / LogSoftmax (kernels/20_softmax.cu) and the Reduce ops (kernels/30_reduce.cu)
 * on float32. Softmax along the last axis (or, before opset 13, over the flattened trailing axes) runs one
 * block per row; along a middle axis one thread per column. A reduction views its input as
 * [outer, r, inner] for each run of adjacent reduced axes: one block per output when inner is 1 (_rows),
 * else one thread per output (_cols). Axes that are not adjacent ([0, 2] of a rank-3 input) take one pass
 * per run, the last run first, through temporary device tensors: Sum, Mean, Max, Min, Prod and LogSumExp
 * compose with themselves; L1 and SumSquare continue as Sum; L2 is SumSquare, then Sum, then a square
 * root. */
#include <string.h>
#include "backend/cuda/kernels/cuda_ops.h"
#include "backend/kernel_params.h"
#include "backend/tensor/tensor_impl.h"
#include "ops/nn/nn_params.h"
#include "ops/nn/reduce.h"

static tb_status softmax_run(tb_kernel_ctx *ctx) {
  tb_status st;
  const tb_softmax_params *p = tb_kernel_params(ctx, &st);
  if (!p) return st;
  const tb_tensor *x = ctx->inputs[0];
  tb_tensor *y = NULL;
  if ((st = tb_kernel_output(ctx, 0, TB_DTYPE_F32, x->ndim, x->shape, &y)) != TB_OK) return st;
  int64_t rank = (int64_t)x->ndim, axis = p->axis < 0 ? p->axis + rank : p->axis;
  if (axis < 0 || axis >= (rank ? rank : 1))
    return tb_kernel_error(ctx, TB_ERR_INVALID_ARGUMENT, "axis %lld is outside the input's rank %lld", (long long)p->axis,
                           (long long)rank);
  int64_t outer = 1, len = 1, inner = 1;
  for (int64_t d = 0; d < rank; d++) {
    if (d < axis) outer *= x->shape[d];
    else if (d == axis || p->flatten) len *= x->shape[d];
    else inner *= x->shape[d];
  }
  if (tb_tensor_numel(y) == 0) return TB_OK;
  bool log = p->kind == TB_LOG_SOFTMAX;
  tb_cuda_launch l;
  if (inner == 1) {
    tb_cuda_begin(&l, ctx, log ? "tb_cu_log_softmax_f32_rows" : "tb_cu_softmax_f32_rows");
    tb_cuda_arg_tensor(&l, x);
    tb_cuda_arg_tensor(&l, y);
    tb_cuda_arg_i64(&l, outer);
    tb_cuda_arg_i64(&l, len);
    return tb_cuda_go_rows(&l, outer, len);
  }
  tb_cuda_begin(&l, ctx, log ? "tb_cu_log_softmax_f32_cols" : "tb_cu_softmax_f32_cols");
  tb_cuda_arg_tensor(&l, x);
  tb_cuda_arg_tensor(&l, y);
  tb_cuda_arg_i64(&l, outer);
  tb_cuda_arg_i64(&l, len);
  tb_cuda_arg_i64(&l, inner);
  return tb_cuda_go_elements(&l, outer * inner);
}

/* A reduction's kernels: the first pass, the passes after it, and the elementwise finish (or NULL). */
typedef struct reduce_kernels {
  const char *first_rows, *first_cols, *rest_rows, *rest_cols, *finish;
} reduce_kernels;

#define RK(first, rest) {"tb_cu_reduce_" first "_f32_rows", "tb_cu_reduce_" first "_f32_cols", \
                         "tb_cu_reduce_" rest "_f32_rows", "tb_cu_reduce_" rest "_f32_cols", NULL}
static const reduce_kernels reduce_table[] = {
    [TB_REDUCE_SUM] = RK("sum", "sum"),       [TB_REDUCE_MEAN] = RK("mean", "mean"), [TB_REDUCE_MAX] = RK("max", "max"),
    [TB_REDUCE_MIN] = RK("min", "min"),       [TB_REDUCE_PROD] = RK("prod", "prod"), [TB_REDUCE_L1] = RK("l1", "sum"),
    [TB_REDUCE_L2] = RK("l2", "l2"),          [TB_REDUCE_LOG_SUM_EXP] = RK("log_sum_exp", "log_sum_exp"),
    [TB_REDUCE_SUM_SQUARE] = RK("sum_square", "sum"),
};
static const reduce_kernels l2_in_passes = {"tb_cu_reduce_sum_square_f32_rows", "tb_cu_reduce_sum_square_f32_cols",
                                            "tb_cu_reduce_sum_f32_rows", "tb_cu_reduce_sum_f32_cols", "tb_cu_sqrt_f32"};

/* One pass: src viewed as [outer, r, inner] reduced over r into dst ([outer, inner]). */
static tb_status reduce_pass(tb_kernel_ctx *ctx, const char *rows_kernel, const char *cols_kernel, const tb_tensor *src,
                             tb_tensor *dst, int64_t outer, int64_t r, int64_t inner) {
  tb_cuda_launch l;
  tb_cuda_begin(&l, ctx, inner == 1 ? rows_kernel : cols_kernel);
  tb_cuda_arg_tensor(&l, src);
  tb_cuda_arg_tensor(&l, dst);
  tb_cuda_arg_i64(&l, outer);
  tb_cuda_arg_i64(&l, r);
  if (inner == 1) return tb_cuda_go_rows(&l, outer, r);
  tb_cuda_arg_i64(&l, inner);
  return tb_cuda_go_elements(&l, outer * inner);
}

/* The axes of the node for x: from the attribute, or from the axes input (a CPU tensor: a value input). */
static tb_status reduce_axes(tb_kernel_ctx *ctx, const tb_reduce_params *p, const tb_tensor *x, nn_reduce_axes *ax) {
  const tb_tensor *axes_t = p->axes_from_input && ctx->n_inputs > 1 ? ctx->inputs[1] : NULL;
  const int64_t *axes = NULL;
  size_t n_axes = 0;
  if (axes_t) {
    axes = tb_tensor_host_data(axes_t);
    n_axes = (size_t)tb_tensor_numel(axes_t);
    if (axes_t->dtype != TB_DTYPE_I64 || (!axes && n_axes))
      return tb_kernel_error(ctx, TB_ERR_INVALID_ARGUMENT, "the axes input must be an int64 tensor the host can read");
  }
  static const int64_t no_axes[1] = {0}; /* an empty axes input is known: every axis (or none with noop) */
  tb_status st = tb_nn_reduce_axes_resolve(p, x->ndim, axes_t != NULL, n_axes ? axes : no_axes, n_axes, ax);
  return st == TB_OK ? st : tb_kernel_name_error(ctx, st);
}

static tb_status reduce_run(tb_kernel_ctx *ctx) {
  tb_status st;
  const tb_reduce_params *p = tb_kernel_params(ctx, &st);
  if (!p) return st;
  const tb_tensor *x = ctx->inputs[0];
  nn_reduce_axes ax;
  if ((st = reduce_axes(ctx, p, x, &ax)) != TB_OK) return st;
  int64_t shape[TB_MAX_DIMS];
  size_t ndim = 0;
  for (size_t d = 0; d < x->ndim; d++)
    if (ax.noop || !ax.reduce[d]) shape[ndim++] = x->shape[d];
    else if (ax.keepdims) shape[ndim++] = 1;
  tb_tensor *y = NULL;
  if ((st = tb_kernel_output(ctx, 0, TB_DTYPE_F32, ndim, shape, &y)) != TB_OK) return st;
  if (tb_tensor_numel(y) == 0) return TB_OK;
  /* The runs of adjacent reduced axes, each [start, end). */
  size_t starts[TB_MAX_DIMS], ends[TB_MAX_DIMS], runs = 0;
  for (size_t d = 0; !ax.noop && d < x->ndim; d++) {
    if (!ax.reduce[d]) continue;
    if (runs && ends[runs - 1] == d) ends[runs - 1] = d + 1;
    else starts[runs] = d, ends[runs++] = d + 1;
  }
  if (runs == 0) return tb_tensor_copy(y, x); /* nothing reduced: the output is the input */
  const reduce_kernels *k = p->op == TB_REDUCE_L2 && runs > 1 ? &l2_in_passes : &reduce_table[p->op];
  int64_t cur[TB_MAX_DIMS];
  memcpy(cur, x->shape, x->ndim * sizeof *cur);
  const tb_tensor *src = x;
  tb_tensor *temps[TB_MAX_DIMS + 1] = {NULL};
  size_t n_temps = 0;
  for (size_t i = runs; st == TB_OK && i-- > 0;) {
    int64_t outer = 1, r = 1, inner = 1;
    for (size_t d = 0; d < x->ndim; d++) {
      if (d < starts[i]) outer *= cur[d];
      else if (d < ends[i]) r *= cur[d], cur[d] = 1;
      else inner *= cur[d];
    }
    bool last = i == 0 && !k->finish;
    tb_tensor *dst = y;
    if (!last) {
      int64_t count = outer * inner;
      if ((st = tb_tensor_create(ctx->backend, TB_DTYPE_F32, 1, &count, &dst)) != TB_OK) break;
      temps[n_temps++] = dst;
    }
    bool first = i == runs - 1;
    st = reduce_pass(ctx, first ? k->first_rows : k->rest_rows, first ? k->first_cols : k->rest_cols, src, dst, outer, r, inner);
    src = dst;
  }
  if (st == TB_OK && k->finish) st = tb_cuda_unary(ctx, k->finish, src, y, 0.0f, 0.0f);
  for (size_t i = 0; i < n_temps; i++) tb_tensor_destroy(temps[i]);
  return st;
}

static bool softmax_accepts(const tb_kernel_query *q) {
  const tb_softmax_params *p = q->params;
  return p && p->kind != TB_HARDMAX && q->n_inputs == 1 && q->in[0] && tb_cuda_all_f32(q);
}

/* float32 data; the optional axes input is int64 and read on the host. */
static bool reduce_accepts(const tb_kernel_query *q) {
  const tb_value_type *const *in = q->in;
  return q->params && q->n_inputs >= 1 && in[0] && in[0]->has_dtype && in[0]->dtype == TB_DTYPE_F32 && q->n_outputs == 1;
}

#define REDUCE(op) TB_CUDA_KERNEL("", op, reduce_accepts, reduce_run)
static const tb_kernel kernels[] = {
    TB_CUDA_KERNEL("", "Softmax", softmax_accepts, softmax_run),
    TB_CUDA_KERNEL("", "LogSoftmax", softmax_accepts, softmax_run),
    REDUCE("ReduceSum"),
    REDUCE("ReduceMean"),
    REDUCE("ReduceMax"),
    REDUCE("ReduceMin"),
    REDUCE("ReduceProd"),
    REDUCE("ReduceL1"),
    REDUCE("ReduceL2"),
    REDUCE("ReduceSumSquare"),
    REDUCE("ReduceLogSumExp"),
};
const tb_cuda_family tb_cuda_family_nn = {kernels, sizeof kernels / sizeof kernels[0]};
