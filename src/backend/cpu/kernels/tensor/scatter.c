/* ScatterElements (and the older Scatter) and ScatterND: a copy of data with elements replaced, or
 * combined by a reduction (add, mul, min, max), at positions an indices tensor gives; every index is
 * checked before it is used. */
#include <string.h>
#include "backend/cpu/kernels/tensor/tensor_kernel.h"
#include "ops/tensor/tensor_params.h"


/* Integers: add and mul wrap (computed in uint64), min and max compare signed values. */
#define REDUCE_INT(T)                                                  \
  do {                                                                 \
    T a, b;                                                            \
    memcpy(&a, dst, sizeof a);                                         \
    memcpy(&b, src, sizeof b);                                         \
    if (red == 1) a = (T)((uint64_t)(int64_t)a + (uint64_t)(int64_t)b); \
    if (red == 2) a = (T)((uint64_t)(int64_t)a * (uint64_t)(int64_t)b); \
    if (red == 3 && b < a) a = b;                                      \
    if (red == 4 && b > a) a = b;                                      \
    memcpy(dst, &a, sizeof a);                                         \
  } while (0)

static double combine(double a, double b, int red) {
  return red == 1 ? a + b : red == 2 ? a * b : red == 3 ? (b < a ? b : a) : (b > a ? b : a);
}

/* dst = reduce(dst, src) for one element; red 0 (none) replaces. */
static void reduce_one(unsigned char *dst, const unsigned char *src, tb_dtype dt, int red) {
  if (red == 0) {
    memcpy(dst, src, tb_dtype_size(dt));
    return;
  }
  switch (dt) {
    case TB_DTYPE_F64: {
      double a, b;
      memcpy(&a, dst, 8);
      memcpy(&b, src, 8);
      a = combine(a, b, red);
      memcpy(dst, &a, 8);
      break;
    }
    case TB_DTYPE_I64: REDUCE_INT(int64_t); break;
    case TB_DTYPE_I32: REDUCE_INT(int32_t); break;
    case TB_DTYPE_I16: REDUCE_INT(int16_t); break;
    case TB_DTYPE_I8: REDUCE_INT(int8_t); break;
    case TB_DTYPE_U8: REDUCE_INT(uint8_t); break;
    case TB_DTYPE_BOOL: {
      uint8_t a = *dst != 0, b = *src != 0;
      *dst = red == 1 || red == 4 ? (a | b) : (a & b);
      break;
    }
    default: {
      float a, b;
      tb_convert(dt, dst, TB_DTYPE_F32, &a, 1, true);
      tb_convert(dt, src, TB_DTYPE_F32, &b, 1, true);
      float r = (float)combine(a, b, red);
      tb_convert(TB_DTYPE_F32, &r, dt, dst, 1, true);
    }
  }
}

/* Inputs data, indices, updates; the output starts as a copy of data. */
static tb_status scatter_begin(tb_kernel_ctx *ctx, const tb_tensor **x, const tb_tensor **ind, const tb_tensor **upd,
                               const unsigned char **ip, const unsigned char **up, unsigned char **dst) {
  const tb_tensor *in[3];
  const unsigned char *data[3];
  tb_tensor *outs[1] = {NULL};
  tb_status st = tb_tk_begin(ctx, 3, in, data, outs);
  if (st != TB_OK) return st;
  *x = in[0];
  *ind = in[1];
  *upd = in[2];
  *ip = data[1];
  *up = data[2];
  *dst = tb_tk_data(outs[0]);
  if (tb_tensor_nbytes(*x) && *dst != data[0]) memmove(*dst, data[0], tb_tensor_nbytes(*x));
  return TB_OK;
}

static tb_status run_scatter_elements(tb_kernel_ctx *ctx) {
  const tb_tensor *x, *ind, *upd;
  const unsigned char *ip, *up;
  unsigned char *dst;
  const tb_scatter_params *p = ctx->params;
  int red = (int)p->reduction;
  tb_status st = scatter_begin(ctx, &x, &ind, &upd, &ip, &up, &dst);
  if (st != TB_OK) return st;
  int64_t axis = tb_tk_axis(p->axis, tb_tensor_ndim(x)), off;
  tb_dtype dt = tb_tensor_dtype(x);
  size_t elem = tb_dtype_size(dt);
  tk_elements w;
  if ((st = tb_tk_elements_begin(ctx, &w, x, ind, ip, upd, (size_t)axis)) != TB_OK) return st;
  for (int64_t j = 0; j < tb_tensor_numel(ind); j++) {
    if ((st = tb_tk_elements_next(ctx, &w, j, &off)) != TB_OK) return st;
    reduce_one(dst + (size_t)off * elem, up + (size_t)j * elem, dt, red);
  }
  return TB_OK;
}

const tb_kernel tb_kernel_scatter_elements = {.domain = "", .name = "ScatterElements", .level = TB_KERNEL_REFERENCE, .cpu_features = 0, .accepts = NULL, .run = run_scatter_elements};
const tb_kernel tb_kernel_scatter = {.domain = "", .name = "Scatter", .level = TB_KERNEL_REFERENCE, .cpu_features = 0, .accepts = NULL, .run = run_scatter_elements};

static tb_status run_scatter_nd(tb_kernel_ctx *ctx) {
  const tb_tensor *x, *ind, *upd;
  const unsigned char *ip, *up;
  unsigned char *dst;
  const tb_scatter_params *p = ctx->params;
  int red = (int)p->reduction;
  tb_status st = scatter_begin(ctx, &x, &ind, &upd, &ip, &up, &dst);
  if (st != TB_OK) return st;
  size_t r = tb_tensor_ndim(x), q = tb_tensor_ndim(ind), elem = tb_dtype_size(tb_tensor_dtype(x));
  const int64_t *shape = tb_tensor_shape(x), *ishape = tb_tensor_shape(ind), *ushape = tb_tensor_shape(upd);
  if (q == 0) return tb_kernel_error(ctx, TB_ERR_INVALID_ARGUMENT, "indices must have rank 1 or more");
  int64_t k = ishape[q - 1];
  if (k < 0 || (size_t)k > r || tb_tensor_ndim(upd) != q - 1 + r - (size_t)k)
    return tb_kernel_error(ctx, TB_ERR_INVALID_ARGUMENT, "indices (last dim %lld) and updates (rank %zu) do not fit data of rank %zu",
                           (long long)k, tb_tensor_ndim(upd), r);
  for (size_t d = 0; d + 1 < q; d++)
    if (ushape[d] != ishape[d])
      return tb_kernel_error(ctx, TB_ERR_INVALID_ARGUMENT, "updates has size %lld on dim %zu where indices has %lld",
                             (long long)ushape[d], d, (long long)ishape[d]);
  for (size_t d = (size_t)k; d < r; d++)
    if (ushape[q - 1 + d - (size_t)k] != shape[d])
      return tb_kernel_error(ctx, TB_ERR_INVALID_ARGUMENT, "updates has size %lld where data has %lld on dim %zu",
                             (long long)ushape[q - 1 + d - (size_t)k], (long long)shape[d], d);
  int64_t strides[TB_MAX_DIMS], slice = 1, tuples = 1;
  tb_shape_strides(r, shape, strides);
  for (size_t d = (size_t)k; d < r; d++) slice *= shape[d];
  for (size_t d = 0; d + 1 < q; d++) tuples *= ishape[d];
  tb_dtype it = tb_tensor_dtype(ind), dt = tb_tensor_dtype(x);
  for (int64_t t = 0; t < tuples; t++) {
    int64_t off = 0;
    for (int64_t j = 0; j < k; j++) {
      int64_t v;
      if ((st = tb_tk_check_index(ctx, tb_tk_int_at(ip, it, t * k + j), shape[j], (size_t)j, t * k + j, &v)) != TB_OK) return st;
      off += v * strides[j];
    }
    for (int64_t e = 0; e < slice; e++)
      reduce_one(dst + (size_t)(off + e) * elem, up + (size_t)(t * slice + e) * elem, dt, red);
  }
  return TB_OK;
}

const tb_kernel tb_kernel_scatter_nd = {.domain = "", .name = "ScatterND", .level = TB_KERNEL_REFERENCE, .cpu_features = 0, .accepts = NULL, .run = run_scatter_nd};
