/* CUDA kernels of the reductions by index and the scans (kernels/31_index_reduce.cu): ArgMax and ArgMin (axis,
 * keepdims, select_last_index), Hardmax (opset 13's axis, or before it the flattened trailing axes), CumSum
 * (axis input, exclusive, reverse) and TopK (axis, largest, k attribute or input; always sorted), on float32,
 * float64, float16, bfloat16, int8, int16, int32, int64 and uint8 (Hardmax on the floats), with the CPU reference's picks and ties. Each views its
 * input as [outer, len, inner] around the axis. TopK sorts rows of up to 2048 elements in shared memory and
 * radix-selects longer rows (kernels/32_topk.cu: the k-th key by digit histograms, the winners gathered and sorted);
 * every size runs on the device. */
#include <string.h>
#include "backend/cuda/kernels/cuda_dm.h"
#include "backend/cuda/kernels/cuda_ew.h"
#include "backend/cuda/kernels/cuda_ops.h"
#include "backend/tensor/tensor_impl.h"
#include "core/error.h"
#include "ops/nn/nn_params.h"
#include "ops/tensor/tensor_params.h"

/* The kernels of each family by dtype: f32, f64, i8, i16, i32, i64, u8, f16, bf16. */
#define TYPED(name) {"tb_cu_ew_" name "_f32", "tb_cu_ew_" name "_f64", "tb_cu_ew_" name "_i8", "tb_cu_ew_" name "_i16", \
                     "tb_cu_ew_" name "_i32", "tb_cu_ew_" name "_i64", "tb_cu_ew_" name "_u8", "tb_cu_ew_" name "_f16", \
                     "tb_cu_ew_" name "_bf16"}
static const char *const arg_rows_kernels[TB_CUDA_EW_TYPES] = TYPED("arg_rows"), *const arg_cols_kernels[TB_CUDA_EW_TYPES] = TYPED("arg_cols"),
                         *const cumsum_kernels[TB_CUDA_EW_TYPES] = TYPED("cumsum"), *const topk_sort_kernels[TB_CUDA_EW_TYPES] = TYPED("topk_sort"),
                         *const topk_radix_kernels[TB_CUDA_EW_TYPES] = TYPED("topk_radix");

/* CumSum's block scan (rows of TB_CUDA_IX_SCAN_MIN elements and more along the last axis) for the dtypes whose sums
 * are the same in any order. */
static const char *const cumsum_scan_kernels[TB_CUDA_EW_TYPES] = {NULL, NULL, "tb_cu_ew_cumsum_scan_i8", "tb_cu_ew_cumsum_scan_i16",
                                                                 "tb_cu_ew_cumsum_scan_i32", "tb_cu_ew_cumsum_scan_i64", "tb_cu_ew_cumsum_scan_u8",
                                                                 "tb_cu_ew_cumsum_scan_f16"};
enum { TB_CUDA_IX_SCAN_MIN = 32 };

static bool float_dtype(tb_dtype dt) {
  return dt == TB_DTYPE_F32 || dt == TB_DTYPE_F64 || dt == TB_DTYPE_F16 || dt == TB_DTYPE_BF16;
}

static bool typed_dtype(tb_dtype dt) {
  return float_dtype(dt) || dt == TB_DTYPE_I8 || dt == TB_DTYPE_I16 || dt == TB_DTYPE_I32 ||
         dt == TB_DTYPE_I64 || dt == TB_DTYPE_U8;
}

static bool data_is(const tb_kernel_query *q, bool floats_only) {
  if (q->n_inputs < 1 || !q->in[0] || !q->in[0]->has_dtype || !q->params) return false;
  tb_dtype dt = q->in[0]->dtype;
  return floats_only ? float_dtype(dt) : typed_dtype(dt);
}

/* The [outer, len, inner] view of x around axis (already non-negative). */
static void view(const tb_tensor *x, size_t axis, tb_cuda_ew *d) {
  d->outer = d->inner = 1;
  d->len = x->shape[axis];
  for (size_t i = 0; i < x->ndim; i++) {
    if (i < axis) d->outer *= x->shape[i];
    else if (i > axis) d->inner *= x->shape[i];
  }
}

/* One pick per row: block per row when the row is contiguous (inner 1), else thread per row. */
static tb_status arg_launch(tb_kernel_ctx *ctx, const tb_tensor *x, tb_tensor *y, tb_cuda_ew *d) {
  bool rows = d->inner == 1;
  const char *kernel = tb_cuda_ew_typed(rows ? arg_rows_kernels : arg_cols_kernels, x->dtype);
  return tb_cuda_ew_go(ctx, kernel, x, NULL, y, NULL, d->outer * d->inner, d, rows ? TB_CUDA_EW_ROWS : TB_CUDA_EW_ELEMENTS);
}

/* ---- ArgMax, ArgMin ------------------------------------------------------------------------------------- */

static bool arg_accepts(const tb_kernel_query *q) { return q->n_inputs == 1 && q->n_outputs == 1 && data_is(q, false); }

static tb_status arg_run(tb_kernel_ctx *ctx) {
  const tb_argreduce_params *p = ctx->params;
  const tb_tensor *x = ctx->inputs[0];
  size_t axis = 0;
  tb_status st = tb_cuda_axis(ctx, p->axis, x->ndim, &axis);
  if (st != TB_OK) return st;
  if ((st = tb_kernel_outputs(ctx)) != TB_OK) return st;
  tb_cuda_ew d = {.flags = (p->is_max ? TB_CUDA_IX_F_MAX : 0) | (p->select_last_index ? TB_CUDA_IX_F_LAST : 0)};
  view(x, axis, &d);
  if (tb_tensor_numel(ctx->outputs[0]) == 0) return TB_OK;
  if (d.len == 0)
    return tb_kernel_error(ctx, TB_ERR_MODEL, "cannot take the %s over the empty axis %zu; the axis needs at least one element",
                           ctx->op_type, axis);
  return arg_launch(ctx, x, ctx->outputs[0], &d);
}

/* ---- Hardmax -------------------------------------------------------------------------------------------- */

static bool hardmax_accepts(const tb_kernel_query *q) {
  const tb_softmax_params *p = q->params;
  return q->n_inputs == 1 && q->n_outputs == 1 && data_is(q, true) && p->kind == TB_HARDMAX;
}

static tb_status hardmax_run(tb_kernel_ctx *ctx) {
  const tb_softmax_params *p = ctx->params;
  const tb_tensor *x = ctx->inputs[0];
  tb_tensor *y = NULL;
  tb_status st = tb_kernel_output(ctx, 0, x->dtype, x->ndim, x->shape, &y);
  if (st != TB_OK) return st;
  int64_t rank = (int64_t)x->ndim, axis = p->axis < 0 ? p->axis + rank : p->axis;
  if (axis < 0 || axis > rank || (!p->flatten && axis == rank))
    return tb_kernel_error(ctx, TB_ERR_MODEL, "axis %lld is out of range for rank %lld; give an axis in [%lld, %lld]",
                           (long long)p->axis, (long long)rank, (long long)-rank, (long long)rank - 1);
  tb_cuda_ew d = {.flags = TB_CUDA_IX_F_MAX | TB_CUDA_IX_F_HARDMAX};
  if (p->flatten) { /* before opset 13: [dims before axis, everything from the axis] */
    d.outer = d.len = d.inner = 1;
    for (int64_t i = 0; i < rank; i++) *(i < axis ? &d.outer : &d.len) *= x->shape[i];
  } else {
    view(x, (size_t)axis, &d);
  }
  if (tb_tensor_numel(y) == 0) return TB_OK;
  return arg_launch(ctx, x, y, &d);
}

/* ---- CumSum --------------------------------------------------------------------------------------------- */

static bool cumsum_accepts(const tb_kernel_query *q) {
  tb_dtype at = q->n_inputs == 2 && q->in[1] && q->in[1]->has_dtype ? q->in[1]->dtype : TB_DTYPE_COUNT;
  return q->n_outputs == 1 && data_is(q, false) && (at == TB_DTYPE_I32 || at == TB_DTYPE_I64);
}

/* The axis input's one value, read on the host (a copy back from the device when it lives there). */
static tb_status read_axis(tb_kernel_ctx *ctx, const tb_tensor *t, int64_t *axis) {
  if (tb_tensor_numel(t) != 1)
    return tb_kernel_error(ctx, TB_ERR_INVALID_ARGUMENT, "the axis input holds %lld values; give it exactly one",
                           (long long)tb_tensor_numel(t));
  unsigned char raw[8] = {0};
  const void *host = tb_tensor_host_data(t);
  tb_status st = host ? (memcpy(raw, host, tb_dtype_size(t->dtype)), TB_OK) : tb_tensor_copy_to_host(t, raw, tb_dtype_size(t->dtype));
  if (st != TB_OK) return st;
  if (t->dtype == TB_DTYPE_I32) {
    int32_t v;
    memcpy(&v, raw, 4);
    *axis = v;
  } else {
    memcpy(axis, raw, 8);
  }
  return TB_OK;
}

static tb_status cumsum_run(tb_kernel_ctx *ctx) {
  const tb_cumsum_params *p = ctx->params;
  const tb_tensor *x = ctx->inputs[0];
  int64_t given = 0;
  size_t axis = 0;
  tb_status st = read_axis(ctx, ctx->inputs[1], &given);
  if (st != TB_OK) return st;
  if (x->ndim == 0 || given < -(int64_t)x->ndim || given >= (int64_t)x->ndim)
    return tb_kernel_error(ctx, TB_ERR_INVALID_ARGUMENT, "axis %lld is out of range for rank %zu; give an axis in [-%zu, %zu)",
                           (long long)given, x->ndim, x->ndim, x->ndim);
  axis = (size_t)(given < 0 ? given + (int64_t)x->ndim : given);
  tb_tensor *y = NULL;
  if ((st = tb_kernel_output(ctx, 0, x->dtype, x->ndim, x->shape, &y)) != TB_OK) return st;
  tb_cuda_ew d = {.flags = (p->exclusive ? TB_CUDA_IX_F_EXCLUSIVE : 0) | (p->reverse ? TB_CUDA_IX_F_REVERSE : 0)};
  view(x, axis, &d);
  if (tb_tensor_numel(y) == 0) return TB_OK;
  /* Along the last axis, a row of a warp or more whose sum does not depend on the order: one block per row scans it
   * (the CPU's values bit for bit); else one thread per column sums it in the CPU's order. */
  const char *scan = tb_cuda_ew_typed(cumsum_scan_kernels, x->dtype);
  if (scan && d.inner == 1 && d.len >= TB_CUDA_IX_SCAN_MIN && (x->dtype != TB_DTYPE_F16 || d.len <= TB_CUDA_IX_SCAN_F16_MAX))
    return tb_cuda_ew_go(ctx, scan, x, NULL, y, NULL, d.outer, &d, TB_CUDA_EW_ROWS);
  return tb_cuda_ew_go(ctx, tb_cuda_ew_typed(cumsum_kernels, x->dtype), x, NULL, y, NULL, d.outer * d.inner, &d, TB_CUDA_EW_ELEMENTS);
}

/* ---- TopK ----------------------------------------------------------------------------------------------- */

static bool topk_accepts(const tb_kernel_query *q) { return q->n_outputs == 2 && data_is(q, false); }

static tb_status topk_run(tb_kernel_ctx *ctx) {
  const tb_topk_params *p = ctx->params;
  const tb_tensor *x = ctx->inputs[0];
  size_t axis = 0;
  if (x->ndim == 0) return tb_kernel_error(ctx, TB_ERR_INVALID_ARGUMENT, "the input must have rank 1 or more; TopK of a scalar");
  tb_status st = tb_cuda_axis(ctx, p->axis, x->ndim, &axis);
  if (st != TB_OK || (st = tb_kernel_outputs(ctx)) != TB_OK) return st; /* k from the attribute or the input, by the op's inference */
  tb_tensor *values = ctx->outputs[0], *indices = ctx->outputs[1];
  tb_cuda_ew d = {.flags = p->largest ? TB_CUDA_IX_F_LARGEST : 0};
  view(x, axis, &d);
  d.k = values->shape[axis];
  if (d.k < 0 || d.k > d.len || indices->dtype != TB_DTYPE_I64)
    return tb_kernel_error(ctx, TB_ERR_INVALID_ARGUMENT, "k %lld is out of range for axis %zu of size %lld; give k in [0, %lld]",
                           (long long)d.k, axis, (long long)d.len, (long long)d.len);
  if (tb_tensor_numel(values) == 0) return TB_OK;
  bool sort = d.len <= TB_CUDA_IX_SORT_MAX;
  const char *kernel = tb_cuda_ew_typed(sort ? topk_sort_kernels : topk_radix_kernels, x->dtype);
  return tb_cuda_ew_go(ctx, kernel, x, NULL, values, indices, d.outer * d.inner, &d, TB_CUDA_EW_ROWS);
}

static const tb_kernel kernels[] = {
    TB_CUDA_KERNEL("", "ArgMax", arg_accepts, arg_run),
    TB_CUDA_KERNEL("", "ArgMin", arg_accepts, arg_run),
    TB_CUDA_KERNEL("", "Hardmax", hardmax_accepts, hardmax_run),
    TB_CUDA_KERNEL("", "CumSum", cumsum_accepts, cumsum_run),
    TB_CUDA_KERNEL("", "TopK", topk_accepts, topk_run),
};
const tb_cuda_family tb_cuda_family_argtopk = {kernels, sizeof kernels / sizeof kernels[0]};
