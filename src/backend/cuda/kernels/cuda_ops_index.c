/* CUDA kernels of the index ops for data of any 1, 2, 4 or 8-byte dtype with int32 or int64 indices
 * (kernels/70_data.cu): Gather along one axis, GatherElements, ScatterElements and ScatterND without a
 * reduction (the reductions: cuda_ops_layout.c), and Where. The indices are checked by the device and the flag it
 * sets read at the run's next host synchronisation (cuda_index_flag.c: no wait in the middle, so a graph can hold
 * it): an index outside its dim is TB_ERR_INVALID_ARGUMENT naming it in the CPU kernels' sentence; negative
 * indices count from the end. */
#include <string.h>
#include "backend/cuda/kernels/cuda_dm.h"
#include "backend/cuda/kernels/cuda_ops.h"
#include "backend/tensor/tensor_impl.h"
#include "core/error.h"
#include "ops/tensor/tensor_params.h"

#define SIZED(name) {"tb_cu_dm_" name "_b1", "tb_cu_dm_" name "_b2", "tb_cu_dm_" name "_b4", "tb_cu_dm_" name "_b8"}
static const char *const gather_kernels[4] = SIZED("gather"), *const gather_elements_kernels[4] = SIZED("gather_elements"),
                         *const scatter_elements_kernels[4] = SIZED("scatter_elements"),
                         *const scatter_nd_kernels[4] = SIZED("scatter_nd"), *const where_kernels[4] = SIZED("where");

static tb_status gather_run(tb_kernel_ctx *ctx) {
  tb_status st = tb_kernel_outputs(ctx);
  if (st != TB_OK) return st;
  const tb_tensor *x = ctx->inputs[0], *idx = ctx->inputs[1];
  tb_tensor *y = ctx->outputs[0];
  size_t axis = 0;
  if (x->ndim == 0) return tb_kernel_error(ctx, TB_ERR_INVALID_ARGUMENT, "Gather of a scalar; the data needs at least one axis");
  if ((st = tb_cuda_axis(ctx, ((const tb_axis_params *)ctx->params)->axis, x->ndim, &axis)) != TB_OK) return st;
  int64_t inner = 1, axis_len = x->shape[axis];
  for (size_t d = axis + 1; d < x->ndim; d++) inner *= x->shape[d];
  if (tb_tensor_numel(y) == 0) return TB_OK;
  if (idx->dtype != TB_DTYPE_I64 && idx->dtype != TB_DTYPE_I32)
    return tb_kernel_error(ctx, TB_ERR_MODEL, "the indices must be int64 or int32, not %s", tb_dtype_name(idx->dtype));
  tb_tensor *flag = NULL; /* the device checks the indices; the run's end reads the flag (cuda_index_flag.c) */
  if ((st = tb_cuda_index_flag(ctx, ctx->inputs[1], axis_len, axis, &flag)) != TB_OK) return st;
  tb_cuda_dm d = {.mode = (int32_t)idx->dtype, .p = {axis_len, tb_tensor_numel(idx), inner}};
  return tb_cuda_dm_go(ctx, tb_cuda_dm_sized(gather_kernels, x->dtype), x, idx, flag, y, tb_tensor_numel(y), &d, TB_CUDA_DM_ELEMENTS);
}

/* The descriptor GatherElements and ScatterElements share: the indices' shape as the index space, the
 * data's strides in st[k], the axis and its length; the indices' shape checked on every other axis; *flag the
 * node's flag for the device's check of the indices. */
static tb_status elements_desc(tb_kernel_ctx *ctx, int64_t given_axis, const tb_tensor *data, tb_tensor *idx, int k, tb_cuda_dm *d,
                               tb_tensor **flag) {
  tb_status st;
  size_t axis = 0, nd = data->ndim;
  if ((st = tb_cuda_axis(ctx, given_axis, nd, &axis)) != TB_OK) return st;
  if (idx->ndim != nd)
    return tb_kernel_error(ctx, TB_ERR_INVALID_ARGUMENT, "the indices have rank %zu and the data rank %zu; give indices of the data's rank",
                           idx->ndim, nd);
  for (size_t r = 0; r < nd; r++)
    if (r != axis && idx->shape[r] > data->shape[r])
      return tb_kernel_error(ctx, TB_ERR_INVALID_ARGUMENT, "the indices' dim %zu is %lld, over the data's %lld",
                             r, (long long)idx->shape[r], (long long)data->shape[r]);
  *d = (tb_cuda_dm){.rank = (int32_t)nd, .mode = (int32_t)idx->dtype, .p = {(int64_t)axis, data->shape[axis]}};
  memcpy(d->dims, idx->shape, nd * sizeof *idx->shape);
  tb_shape_strides(nd, data->shape, d->st[k]);
  return tb_cuda_index_flag(ctx, idx, data->shape[axis], axis, flag);
}

static tb_status gather_elements_run(tb_kernel_ctx *ctx) {
  tb_status st = tb_kernel_outputs(ctx);
  if (st != TB_OK) return st;
  const tb_tensor *x = ctx->inputs[0];
  tb_tensor *y = ctx->outputs[0], *flag = NULL;
  if (tb_tensor_numel(y) == 0) return TB_OK;
  tb_cuda_dm d;
  if ((st = elements_desc(ctx, ((const tb_axis_params *)ctx->params)->axis, x, ctx->inputs[1], 0, &d, &flag)) != TB_OK) return st;
  return tb_cuda_dm_go(ctx, tb_cuda_dm_sized(gather_elements_kernels, x->dtype), x, ctx->inputs[1], flag, y, tb_tensor_numel(y), &d,
                       TB_CUDA_DM_ELEMENTS);
}

/* ScatterElements: y = data, then the updates written where the indices say (duplicates: one of them, as the
 * ONNX spec leaves it). */
static tb_status scatter_elements_run(tb_kernel_ctx *ctx) {
  tb_status st = tb_kernel_outputs(ctx);
  if (st != TB_OK) return st;
  const tb_tensor *x = ctx->inputs[0], *idx = ctx->inputs[1], *upd = ctx->inputs[2];
  tb_tensor *y = ctx->outputs[0];
  if (tb_tensor_numel(upd) != tb_tensor_numel(idx))
    return tb_kernel_error(ctx, TB_ERR_INVALID_ARGUMENT, "updates hold %lld values for %lld indices; give one update per index",
                           (long long)tb_tensor_numel(upd), (long long)tb_tensor_numel(idx));
  tb_cuda_dm d;
  tb_tensor *flag = NULL;
  if ((st = tb_cuda_copy_bytes(ctx, y, x)) != TB_OK || tb_tensor_numel(idx) == 0) return st;
  if ((st = elements_desc(ctx, ((const tb_scatter_params *)ctx->params)->axis, x, ctx->inputs[1], 3, &d, &flag)) != TB_OK) return st;
  return tb_cuda_dm_go(ctx, tb_cuda_dm_sized(scatter_elements_kernels, x->dtype), upd, idx, flag, y, tb_tensor_numel(idx), &d,
                       TB_CUDA_DM_ELEMENTS);
}

/* ScatterND: y = data, then updates [m, slice] written at the k leading coordinates of each indices row. */
static tb_status scatter_nd_run(tb_kernel_ctx *ctx) {
  tb_status st = tb_kernel_outputs(ctx);
  if (st != TB_OK) return st;
  const tb_tensor *x = ctx->inputs[0], *idx = ctx->inputs[1], *upd = ctx->inputs[2];
  tb_tensor *y = ctx->outputs[0];
  if (idx->ndim < 1 || idx->shape[idx->ndim - 1] > (int64_t)x->ndim)
    return tb_kernel_error(ctx, TB_ERR_INVALID_ARGUMENT, "the indices' last dim must be at most the data's rank %zu", x->ndim);
  size_t k = (size_t)idx->shape[idx->ndim - 1];
  int64_t rows = k ? tb_tensor_numel(idx) / (int64_t)k : 0, slice = 1;
  for (size_t r = k; r < x->ndim; r++) slice *= x->shape[r];
  if (k == 0 || tb_tensor_numel(upd) != rows * slice)
    return tb_kernel_error(ctx, TB_ERR_INVALID_ARGUMENT, "updates hold %lld values where the indices address %lld", (long long)tb_tensor_numel(upd),
                           (long long)(rows * slice));
  if ((st = tb_cuda_copy_bytes(ctx, y, x)) != TB_OK || rows * slice == 0) return st;
  tb_tensor *flag = NULL;
  if ((st = tb_cuda_index_flag_nd(ctx, ctx->inputs[1], k, x->shape, 0, &flag)) != TB_OK) return st;
  tb_cuda_dm d = {.rank = 0, .mode = (int32_t)idx->dtype, .p = {(int64_t)k, slice}};
  int64_t xs[TB_MAX_DIMS];
  tb_shape_strides(x->ndim, x->shape, xs);
  memcpy(d.dims, x->shape, k * sizeof *xs);
  memcpy(d.st[3], xs, k * sizeof *xs);
  return tb_cuda_dm_go(ctx, tb_cuda_dm_sized(scatter_nd_kernels, x->dtype), upd, idx, flag, y, rows * slice, &d, TB_CUDA_DM_ELEMENTS);
}

/* Where(cond, X, Y): the three broadcast to the output. */
static tb_status where_run(tb_kernel_ctx *ctx) {
  tb_status st = tb_kernel_outputs(ctx);
  if (st != TB_OK) return st;
  tb_tensor *y = ctx->outputs[0];
  tb_cuda_dm d = {.rank = (int32_t)y->ndim};
  memcpy(d.dims, y->shape, y->ndim * sizeof *y->shape);
  for (int i = 0; i < 3; i++) {
    const tb_tensor *t = ctx->inputs[i];
    if (t->ndim > y->ndim) return tb_kernel_error(ctx, TB_ERR_INTERNAL, "input %d's rank %zu is over the output's %zu", i, t->ndim, y->ndim);
    tb_shape_bcast_strides(y->ndim, y->shape, t->ndim, t->shape, d.st[i]);
  }
  return tb_cuda_dm_go(ctx, tb_cuda_dm_sized(where_kernels, y->dtype), ctx->inputs[0], ctx->inputs[1], ctx->inputs[2], y,
                       tb_tensor_numel(y), &d, TB_CUDA_DM_ELEMENTS);
}


static bool gather_accepts(const tb_kernel_query *q) {
  return q->n_inputs == 2 && tb_cuda_dm_data_type(q->in[0]) && tb_cuda_dm_index_type(q->in[1]) && q->n_outputs == 1;
}

/* Without a reduction (opset 16's add, mul, min, max run on the CPU); updates of the data's dtype. */
static bool scatter_accepts(const tb_kernel_query *q) {
  const tb_scatter_params *p = q->params;
  return p && p->reduction == TB_SCATTER_NONE && q->n_inputs == 3 && tb_cuda_dm_data_type(q->in[0]) && tb_cuda_dm_index_type(q->in[1]) && q->in[2] &&
         q->in[2]->has_dtype && q->in[2]->dtype == q->in[0]->dtype && q->n_outputs == 1;
}

/* ScatterND's indices are int64 (the spec's only type). */
static bool scatter_nd_accepts(const tb_kernel_query *q) {
  return scatter_accepts(q) && q->in[1]->dtype == TB_DTYPE_I64;
}

static bool where_accepts(const tb_kernel_query *q) {
  return q->n_inputs == 3 && q->in[0] && q->in[0]->has_dtype && q->in[0]->dtype == TB_DTYPE_BOOL && tb_cuda_dm_data_type(q->in[1]) &&
         tb_cuda_dm_data_type(q->in[2]) && q->in[1]->dtype == q->in[2]->dtype && q->n_outputs == 1;
}

static const tb_kernel kernels[] = {
    TB_CUDA_INDEX_KERNEL("Gather", gather_accepts, gather_run),
    TB_CUDA_INDEX_KERNEL("GatherElements", gather_accepts, gather_elements_run),
    TB_CUDA_INDEX_KERNEL("ScatterElements", scatter_accepts, scatter_elements_run),
    TB_CUDA_INDEX_KERNEL("ScatterND", scatter_nd_accepts, scatter_nd_run),
    TB_CUDA_KERNEL("", "Where", where_accepts, where_run),
};
const tb_cuda_family tb_cuda_family_index = {kernels, sizeof kernels / sizeof kernels[0]};
