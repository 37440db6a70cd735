/* Gather, GatherElements and GatherND: elements copied by their bytes from positions an indices tensor
 * gives; every index is checked against its dim (negative counts from the end) before it is used. */
#include <string.h>
#include "backend/cpu/kernels/tensor/tensor_kernel.h"
#include "ops/tensor/tensor_params.h"

/* idx in [-dim, dim) normalised to [0, dim), else the error naming the index, its position and the dim. */
tb_status tk_check_index(const tb_kernel_ctx *ctx, int64_t idx, int64_t dim, size_t axis, int64_t at, int64_t *out) {
  if (idx < -dim || idx >= dim)
    return tb_kernel_error(ctx, TB_ERR_INVALID_ARGUMENT,
                           "index %lld (indices element %lld) is out of range for axis %zu of size %lld", (long long)idx,
                           (long long)at, axis, (long long)dim);
  *out = idx < 0 ? idx + dim : idx;
  return TB_OK;
}

static tb_status run_gather(tb_kernel_ctx *ctx) {
  const tb_tensor *x, *ind;
  const unsigned char *src, *ip;
  tb_status st = tk_input(ctx, 0, &x, &src);
  if (st == TB_OK) st = tk_input(ctx, 1, &ind, &ip);
  if (st != TB_OK) return st;
  tb_tensor *outs[1] = {NULL};
  if ((st = tk_infer_outputs(ctx, outs)) != TB_OK) return st;
  int64_t axis;
  if ((st = tb_attr_int(ctx->graph, ctx->node, "axis", 0, &axis)) != TB_OK) return st;
  size_t rank = tb_tensor_ndim(x), elem = tb_dtype_size(tb_tensor_dtype(x));
  if (axis < 0) axis += (int64_t)rank;
  const int64_t *shape = tb_tensor_shape(x);
  int64_t outer = 1, inner = 1, dim = shape[axis], n = tb_tensor_numel(ind);
  for (int64_t d = 0; d < axis; d++) outer *= shape[d];
  for (size_t d = (size_t)axis + 1; d < rank; d++) inner *= shape[d];
  size_t block = (size_t)inner * elem;
  unsigned char *dst = tk_data(outs[0]);
  tb_dtype it = tb_tensor_dtype(ind);
  for (int64_t j = 0; j < n; j++) {
    int64_t idx = 0;
    if ((st = tk_check_index(ctx, tk_int_at(ip, it, j), dim, (size_t)axis, j, &idx)) != TB_OK) return st;
    if (!block) continue;
    for (int64_t o = 0; o < outer; o++)
      memcpy(dst + (size_t)(o * n + j) * block, src + (size_t)(o * dim + idx) * block, block);
  }
  return TB_OK;
}

const tb_cpu_kernel tb_kernel_gather = {"", "Gather", 0, 0, NULL, run_gather};

static tb_status run_gather_elements(tb_kernel_ctx *ctx) {
  const tb_tensor *x, *ind;
  const unsigned char *src, *ip;
  tb_status st = tk_input(ctx, 0, &x, &src);
  if (st == TB_OK) st = tk_input(ctx, 1, &ind, &ip);
  if (st != TB_OK) return st;
  tb_tensor *outs[1] = {NULL};
  if ((st = tk_infer_outputs(ctx, outs)) != TB_OK) return st;
  int64_t axis;
  if ((st = tb_attr_int(ctx->graph, ctx->node, "axis", 0, &axis)) != TB_OK) return st;
  size_t rank = tb_tensor_ndim(x), elem = tb_dtype_size(tb_tensor_dtype(x));
  if (axis < 0) axis += (int64_t)rank;
  const int64_t *shape = tb_tensor_shape(x), *ishape = tb_tensor_shape(ind);
  for (size_t d = 0; d < rank; d++)
    if (d != (size_t)axis && ishape[d] > shape[d])
      return tb_kernel_error(ctx, TB_ERR_INVALID_ARGUMENT, "indices has size %lld on dim %zu where data has %lld",
                             (long long)ishape[d], d, (long long)shape[d]);
  int64_t strides[TB_MAX_DIMS], idx[TB_MAX_DIMS] = {0}, n = tb_tensor_numel(ind);
  tk_strides(rank, shape, strides);
  unsigned char *dst = tk_data(outs[0]);
  tb_dtype it = tb_tensor_dtype(ind);
  for (int64_t j = 0; j < n; j++) {
    int64_t v = 0;
    if ((st = tk_check_index(ctx, tk_int_at(ip, it, j), shape[axis], (size_t)axis, j, &v)) != TB_OK) return st;
    int64_t off = 0;
    for (size_t d = 0; d < rank; d++) off += (d == (size_t)axis ? v : idx[d]) * strides[d];
    memcpy(dst + (size_t)j * elem, src + (size_t)off * elem, elem);
    for (size_t d = rank; d-- > 0;) {
      if (++idx[d] < ishape[d]) break;
      idx[d] = 0;
    }
  }
  return TB_OK;
}

const tb_cpu_kernel tb_kernel_gather_elements = {"", "GatherElements", 0, 0, NULL, run_gather_elements};

static tb_status run_gather_nd(tb_kernel_ctx *ctx) {
  const tb_tensor *x, *ind;
  const unsigned char *src, *ip;
  tb_status st = tk_input(ctx, 0, &x, &src);
  if (st == TB_OK) st = tk_input(ctx, 1, &ind, &ip);
  if (st != TB_OK) return st;
  tb_tensor *outs[1] = {NULL};
  if ((st = tk_infer_outputs(ctx, outs)) != TB_OK) return st;
  int64_t b = 0;
  if (ctx->node->opset >= 12 && (st = tb_attr_int(ctx->graph, ctx->node, "batch_dims", 0, &b)) != TB_OK) return st;
  size_t r = tb_tensor_ndim(x), q = tb_tensor_ndim(ind), elem = tb_dtype_size(tb_tensor_dtype(x));
  const int64_t *shape = tb_tensor_shape(x), *ishape = tb_tensor_shape(ind);
  int64_t k = ishape[q - 1], batch = 1, per_batch = 1, slice = 1, tuples = 1;
  for (int64_t d = 0; d < b; d++) batch *= shape[d];
  for (size_t d = (size_t)b; d < r; d++) per_batch *= shape[d];
  for (size_t d = (size_t)(b + k); d < r; d++) slice *= shape[d];
  for (size_t d = (size_t)b; d + 1 < q; d++) tuples *= ishape[d];
  int64_t strides[TB_MAX_DIMS];
  tk_strides(r, shape, strides);
  tb_dtype it = tb_tensor_dtype(ind);
  unsigned char *dst = tk_data(outs[0]);
  size_t block = (size_t)slice * elem;
  for (int64_t bi = 0; bi < batch; bi++) {
    for (int64_t t = 0; t < tuples; t++) {
      int64_t at = (bi * tuples + t) * k, off = bi * per_batch;
      for (int64_t j = 0; j < k; j++) {
        int64_t v = 0;
        size_t axis = (size_t)(b + j);
        if ((st = tk_check_index(ctx, tk_int_at(ip, it, at + j), shape[axis], axis, at + j, &v)) != TB_OK) return st;
        off += v * strides[axis];
      }
      if (block) memcpy(dst + (size_t)(bi * tuples + t) * block, src + (size_t)off * elem, block);
    }
  }
  return TB_OK;
}

const tb_cpu_kernel tb_kernel_gather_nd = {"", "GatherND", 0, 0, NULL, run_gather_nd};
