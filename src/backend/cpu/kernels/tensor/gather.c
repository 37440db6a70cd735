/* Gather, GatherElements and GatherND: elements copied by their bytes from positions an indices tensor
 * gives; every index is checked against its dim (negative counts from the end) before it is used. */
#include <string.h>
#include "backend/cpu/kernels/tensor/tensor_kernel.h"
#include "ops/tensor/tensor_params.h"

/* Data and indices on the host and the output allocated from inference; *dst its first byte. */
static tb_status gather_begin(tb_kernel_ctx *ctx, const tb_tensor **x, const tb_tensor **ind, const unsigned char **src,
                              const unsigned char **ip, unsigned char **dst) {
  const tb_tensor *in[2];
  const unsigned char *data[2];
  tb_tensor *outs[1] = {NULL};
  tb_status st = tb_tk_begin(ctx, 2, in, data, outs);
  if (st != TB_OK) return st;
  *x = in[0];
  *ind = in[1];
  *src = data[0];
  *ip = data[1];
  *dst = tb_tk_data(outs[0]);
  return TB_OK;
}

static tb_status run_gather(tb_kernel_ctx *ctx) {
  const tb_tensor *x, *ind;
  const unsigned char *src, *ip;
  unsigned char *dst;
  tb_status st = gather_begin(ctx, &x, &ind, &src, &ip, &dst);
  if (st != TB_OK) return st;
  const tb_axis_params *p = ctx->params;
  size_t rank = tb_tensor_ndim(x), elem = tb_dtype_size(tb_tensor_dtype(x));
  int64_t axis = tb_tk_axis(p->axis, rank);
  const int64_t *shape = tb_tensor_shape(x);
  int64_t outer = 1, inner = 1, dim = shape[axis], n = tb_tensor_numel(ind);
  for (int64_t d = 0; d < axis; d++) outer *= shape[d];
  for (size_t d = (size_t)axis + 1; d < rank; d++) inner *= shape[d];
  size_t block = (size_t)inner * elem;
  tb_dtype it = tb_tensor_dtype(ind);
  for (int64_t j = 0; j < n; j++) {
    int64_t idx = 0;
    if ((st = tb_tk_check_index(ctx, tb_tk_int_at(ip, it, j), dim, (size_t)axis, j, &idx)) != TB_OK) return st;
    if (!block) continue;
    for (int64_t o = 0; o < outer; o++)
      memcpy(dst + (size_t)(o * n + j) * block, src + (size_t)(o * dim + idx) * block, block);
  }
  return TB_OK;
}

const tb_kernel tb_kernel_gather = {.domain = "", .name = "Gather", .level = TB_KERNEL_REFERENCE, .cpu_features = 0, .accepts = NULL, .run = run_gather};

static tb_status run_gather_elements(tb_kernel_ctx *ctx) {
  const tb_tensor *x, *ind;
  const unsigned char *src, *ip;
  unsigned char *dst;
  tb_status st = gather_begin(ctx, &x, &ind, &src, &ip, &dst);
  if (st != TB_OK) return st;
  const tb_axis_params *p = ctx->params;
  int64_t axis = tb_tk_axis(p->axis, tb_tensor_ndim(x)), off;
  size_t elem = tb_dtype_size(tb_tensor_dtype(x));
  tk_elements w;
  if ((st = tb_tk_elements_begin(ctx, &w, x, ind, ip, NULL, (size_t)axis)) != TB_OK) return st;
  for (int64_t j = 0; j < tb_tensor_numel(ind); j++) {
    if ((st = tb_tk_elements_next(ctx, &w, j, &off)) != TB_OK) return st;
    memcpy(dst + (size_t)j * elem, src + (size_t)off * elem, elem);
  }
  return TB_OK;
}

const tb_kernel tb_kernel_gather_elements = {.domain = "", .name = "GatherElements", .level = TB_KERNEL_REFERENCE, .cpu_features = 0, .accepts = NULL, .run = run_gather_elements};

static tb_status run_gather_nd(tb_kernel_ctx *ctx) {
  const tb_tensor *x, *ind;
  const unsigned char *src, *ip;
  unsigned char *dst;
  tb_status st = gather_begin(ctx, &x, &ind, &src, &ip, &dst);
  if (st != TB_OK) return st;
  const tb_gather_nd_params *p = ctx->params;
  int64_t b = p->batch_dims;
  size_t r = tb_tensor_ndim(x), q = tb_tensor_ndim(ind), elem = tb_dtype_size(tb_tensor_dtype(x));
  const int64_t *shape = tb_tensor_shape(x), *ishape = tb_tensor_shape(ind);
  int64_t k = ishape[q - 1], batch = 1, per_batch = 1, slice = 1, tuples = 1;
  for (int64_t d = 0; d < b; d++) batch *= shape[d];
  for (size_t d = (size_t)b; d < r; d++) per_batch *= shape[d];
  for (size_t d = (size_t)(b + k); d < r; d++) slice *= shape[d];
  for (size_t d = (size_t)b; d + 1 < q; d++) tuples *= ishape[d];
  int64_t strides[TB_MAX_DIMS];
  tb_shape_strides(r, shape, strides);
  tb_dtype it = tb_tensor_dtype(ind);
  size_t block = (size_t)slice * elem;
  for (int64_t bi = 0; bi < batch; bi++) {
    for (int64_t t = 0; t < tuples; t++) {
      int64_t at = (bi * tuples + t) * k, off = bi * per_batch;
      for (int64_t j = 0; j < k; j++) {
        int64_t v = 0;
        size_t axis = (size_t)(b + j);
        if ((st = tb_tk_check_index(ctx, tb_tk_int_at(ip, it, at + j), shape[axis], axis, at + j, &v)) != TB_OK) return st;
        off += v * strides[axis];
      }
      if (block) memcpy(dst + (size_t)(bi * tuples + t) * block, src + (size_t)off * elem, block);
    }
  }
  return TB_OK;
}

const tb_kernel tb_kernel_gather_nd = {.domain = "", .name = "GatherND", .level = TB_KERNEL_REFERENCE, .cpu_features = 0, .accepts = NULL, .run = run_gather_nd};
