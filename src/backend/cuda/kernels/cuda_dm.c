/* The host side of the tb_cu_dm_* kernels (cuda_dm.h): the descriptor, the launch, outputs from the op's
 * inference, strides, device copies and index checks. */
#include "backend/cuda/kernels/cuda_dm.h"
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "backend/backend_impl.h"
#include "backend/tensor/tensor_impl.h"
#include "core/error.h"
#include "ops/op_params.h"

_Static_assert(sizeof(tb_cuda_dm) == 432, "tb_cuda_dm must match the kernels' tb_dm");
_Static_assert(offsetof(tb_cuda_dm, bytes) == 360, "tb_cuda_dm.bytes must be where fake_cuda reads it");
_Static_assert(TB_DTYPE_F64 == 0 && TB_DTYPE_F32 == 1 && TB_DTYPE_F16 == 2 && TB_DTYPE_BF16 == 3 && TB_DTYPE_I64 == 6 &&
                   TB_DTYPE_I32 == 7 && TB_DTYPE_I16 == 8 && TB_DTYPE_I8 == 9 && TB_DTYPE_U8 == 10 && TB_DTYPE_BOOL == 11,
               "70_data.cu's TB_DT_* numbering must be tb_dtype's");

bool tb_cuda_dm_movable(tb_dtype dtype) {
  size_t s = tb_dtype_size(dtype);
  return dtype < TB_DTYPE_COUNT && (s == 1 || s == 2 || s == 4 || s == 8);
}

const char *tb_cuda_dm_sized(const char *const names[4], tb_dtype dtype) {
  switch (tb_dtype_size(dtype)) {
    case 1: return names[0];
    case 2: return names[1];
    case 4: return names[2];
    case 8: return names[3];
    default: return NULL;
  }
}

tb_status tb_cuda_dm_go(tb_kernel_ctx *ctx, const char *kernel, const tb_tensor *a, const tb_tensor *b, const tb_tensor *c,
                        tb_tensor *y, int64_t n, tb_cuda_dm *d, tb_cuda_dm_grid grid) {
  if (!kernel) return tb_kernel_error(ctx, TB_ERR_UNSUPPORTED, "no CUDA data kernel for elements of this size");
  if (n <= 0) return TB_OK;
  const tb_tensor *ops[4] = {a, b, c, y};
  for (int i = 0; i < 4; i++) d->bytes[i] = ops[i] ? (int64_t)tb_tensor_nbytes(ops[i]) : 0;
  tb_cuda_launch l;
  tb_cuda_begin(&l, ctx, kernel);
  for (int i = 0; i < 4; i++) {
    if (ops[i]) tb_cuda_arg_tensor(&l, ops[i]);
    else tb_cuda_arg_i64(&l, 0);
  }
  tb_cuda_arg_i64(&l, n);
  tb_cuda_arg_bytes(&l, d, sizeof *d, 8);
  switch (grid) {
    case TB_CUDA_DM_TILES: return tb_cuda_go_elements(&l, n * TB_CUDA_BLOCK_ELEMENTS);
    case TB_CUDA_DM_ROWS: return tb_cuda_go_rows(&l, d->p[0], d->p[1]);
    case TB_CUDA_DM_WARPS: return tb_cuda_go_elements(&l, n * TB_CUDA_WARP);
    case TB_CUDA_DM_BLOCKS: return tb_cuda_go_rows(&l, n, TB_CUDA_BLOCK_ELEMENTS);
    default: return tb_cuda_go_elements(&l, n);
  }
}

tb_status tb_cuda_dm_strided_copy(tb_kernel_ctx *ctx, const tb_tensor *src, int64_t src_off, const int64_t *src_st, tb_tensor *dst,
                                  int64_t dst_off, const int64_t *dst_st, size_t ndim, const int64_t *shape) {
  static const char *const copy_kernels[4] = {"tb_cu_dm_copy_b1", "tb_cu_dm_copy_b2", "tb_cu_dm_copy_b4", "tb_cu_dm_copy_b8"};
  if (ndim > TB_MAX_DIMS) return tb_kernel_error(ctx, TB_ERR_INTERNAL, "a strided copy of rank %zu; the kernel takes up to %d", ndim, TB_MAX_DIMS);
  tb_cuda_dm d = {.rank = (int32_t)ndim};
  int64_t n = 1;
  for (size_t k = 0; k < ndim; k++) {
    d.dims[k] = shape[k];
    d.st[0][k] = src_st[k];
    d.st[3][k] = dst_st[k];
    n *= shape[k];
  }
  d.off[0] = src_off;
  d.off[3] = dst_off;
  return tb_cuda_dm_go(ctx, tb_cuda_dm_sized(copy_kernels, src->dtype), src, NULL, NULL, dst, n, &d, TB_CUDA_DM_ELEMENTS);
}

tb_status tb_cuda_copy_bytes(tb_kernel_ctx *ctx, tb_tensor *y, const tb_tensor *x) {
  size_t bytes = tb_tensor_nbytes(y);
  if (bytes != tb_tensor_nbytes(x))
    return tb_kernel_error(ctx, TB_ERR_INVALID_ARGUMENT, "input of %zu bytes for an output of %zu bytes", tb_tensor_nbytes(x), bytes);
  if (bytes == 0) return TB_OK;
  const tb_storage *ds = y->storage, *ss = x->storage;
  if (!ds || !ss || !ds->block || !ss->block || !y->contiguous || !x->contiguous || ds->backend != ctx->backend ||
      ss->backend != ctx->backend || !ctx->backend->ops->copy)
    return tb_kernel_error(ctx, TB_ERR_INTERNAL, "a CUDA copy needs contiguous tensors on the node's CUDA device");
  size_t es_y = tb_dtype_size(y->dtype), es_x = tb_dtype_size(x->dtype);
  size_t dst = ds->block->offset + (size_t)y->offset * es_y, src = ss->block->offset + (size_t)x->offset * es_x;
  if (ds->block->mem.handle == ss->block->mem.handle && dst == src) return TB_OK;
  return ctx->backend->ops->copy(ctx->backend->state, ds->block->mem, dst, ss->block->mem, src, bytes);
}

/* The indices as int64 on the host (*out, n entries; the caller frees it). */
static tb_status read_indices(tb_kernel_ctx *ctx, const tb_tensor *idx, int64_t **out, size_t *n) {
  *out = NULL;
  *n = (size_t)tb_tensor_numel(idx);
  if (idx->dtype != TB_DTYPE_I64 && idx->dtype != TB_DTYPE_I32)
    return tb_kernel_error(ctx, TB_ERR_MODEL, "the indices must be int64 or int32, not %s", tb_dtype_name(idx->dtype));
  if (*n == 0) return TB_OK;
  size_t elem = tb_dtype_size(idx->dtype);
  void *raw = malloc(*n * elem);
  int64_t *v = malloc(*n * sizeof *v);
  if (!raw || !v) {
    free(raw);
    free(v);
    return tb_kernel_error(ctx, TB_ERR_OUT_OF_MEMORY, "out of host memory for %zu indices", *n);
  }
  tb_status st = tb_tensor_copy_to_host(idx, raw, *n * elem);
  for (size_t i = 0; st == TB_OK && i < *n; i++) v[i] = idx->dtype == TB_DTYPE_I64 ? ((const int64_t *)raw)[i] : ((const int32_t *)raw)[i];
  free(raw);
  if (st != TB_OK) {
    free(v);
    return st;
  }
  *out = v;
  return TB_OK;
}

static tb_status index_error(tb_kernel_ctx *ctx, int64_t k, size_t at, size_t axis, int64_t dim) {
  return tb_kernel_error(ctx, TB_ERR_INVALID_ARGUMENT,
                         "index %lld (indices element %zu) is out of range for axis %zu of size %lld", (long long)k, at, axis,
                         (long long)dim); /* the CPU kernels' sentence (tb_tk_check_index) */
}

tb_status tb_cuda_check_indices(tb_kernel_ctx *ctx, const tb_tensor *idx, int64_t dim, size_t axis) {
  int64_t *v = NULL;
  size_t n = 0;
  tb_status st = read_indices(ctx, idx, &v, &n);
  for (size_t i = 0; st == TB_OK && i < n; i++)
    if (v[i] < -dim || v[i] >= dim) st = index_error(ctx, v[i], i, axis, dim);
  free(v);
  return st;
}

tb_status tb_cuda_check_nd_indices(tb_kernel_ctx *ctx, const tb_tensor *idx, size_t k, const int64_t *dims, size_t first_axis) {
  int64_t *v = NULL;
  size_t n = 0;
  tb_status st = read_indices(ctx, idx, &v, &n);
  for (size_t i = 0; st == TB_OK && k && i < n; i++)
    if (v[i] < -dims[i % k] || v[i] >= dims[i % k]) st = index_error(ctx, v[i], i, first_axis + i % k, dims[i % k]);
  free(v);
  return st;
}

tb_status tb_cuda_axis(tb_kernel_ctx *ctx, int64_t axis, size_t rank, size_t *out) {
  int64_t a = axis < 0 ? axis + (int64_t)rank : axis;
  if (a < 0 || a >= (int64_t)(rank ? rank : 1))
    return tb_kernel_error(ctx, TB_ERR_MODEL, "axis %lld is outside the input's rank %zu; use an axis in [-%zu, %zu)", (long long)axis,
                           rank, rank, rank);
  *out = (size_t)a;
  return TB_OK;
}
