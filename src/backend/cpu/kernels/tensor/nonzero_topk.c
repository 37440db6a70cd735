/* NonZero (allocates its output: the count depends on the data) and TopK (a stable sort of each slice
 * along the axis: ties keep the lower index first). */
#include <stdlib.h>
#include <string.h>
#include "backend/cpu/kernels/tensor/tensor_kernel.h"
#include "ops/tensor/tensor_params.h"


static bool is_nonzero(const unsigned char *p, tb_dtype dt, int64_t i) {
  size_t elem = tb_dtype_size(dt);
  if (dt == TB_DTYPE_F64 || dt == TB_DTYPE_F32 || dt == TB_DTYPE_F16 || dt == TB_DTYPE_BF16 ||
      dt == TB_DTYPE_FP8_E4M3FN || dt == TB_DTYPE_FP8_E5M2)
    return tb_tk_double_at(p, dt, i) != 0; /* -0 is zero, NaN is not */
  for (size_t b = 0; b < elem; b++)
    if (p[(size_t)i * elem + b]) return true;
  return false;
}

static tb_status run_nonzero(tb_kernel_ctx *ctx) {
  const tb_tensor *x;
  const unsigned char *src;
  tb_status st = tb_tk_input(ctx, 0, &x, &src);
  if (st != TB_OK) return st;
  tb_dtype dt = tb_tensor_dtype(x);
  size_t rank = tb_tensor_ndim(x);
  int64_t n = tb_tensor_numel(x), count = 0;
  for (int64_t i = 0; i < n; i++) count += is_nonzero(src, dt, i);
  int64_t shape[2] = {(int64_t)rank, count};
  unsigned char *dst;
  if ((st = tb_tk_output(ctx, 0, TB_DTYPE_I64, 2, shape, NULL, &dst)) != TB_OK) return st;
  int64_t idx[TB_MAX_DIMS] = {0}, at = 0;
  for (int64_t i = 0; i < n; i++) {
    if (is_nonzero(src, dt, i)) {
      for (size_t d = 0; d < rank; d++) memcpy(dst + (size_t)(d * (size_t)count + (size_t)at) * 8, &idx[d], 8);
      at++;
    }
    tb_kernel_next_index(rank, tb_tensor_shape(x), idx);
  }
  return TB_OK;
}

const tb_kernel tb_kernel_nonzero = {.domain = "", .name = "NonZero", .level = TB_KERNEL_REFERENCE, .cpu_features = 0, .accepts = NULL, .run = run_nonzero};

typedef struct topk_item {
  double d;
  int64_t i64;
  int64_t index;
} topk_item;

static _Thread_local int topk_largest, topk_int;

static int cmp_item(const void *pa, const void *pb) {
  const topk_item *a = pa, *b = pb;
  int c;
  if (topk_int)
    c = a->i64 < b->i64 ? -1 : a->i64 > b->i64;
  else {
    bool an = a->d != a->d, bn = b->d != b->d; /* NaN sorts as the largest */
    c = an || bn ? (an && bn ? 0 : an ? 1 : -1) : (a->d < b->d ? -1 : a->d > b->d);
  }
  if (topk_largest) c = -c;
  if (c) return c;
  return a->index < b->index ? -1 : a->index > b->index;
}

static tb_status run_topk(tb_kernel_ctx *ctx) {
  const tb_tensor *x;
  const unsigned char *src;
  tb_status st = tb_tk_input(ctx, 0, &x, &src);
  if (st != TB_OK) return st;
  const tb_topk_params *p = ctx->params;
  int64_t axis = p->axis, k;
  bool largest = p->largest, known;
  tk_infer *inf;
  if ((st = tb_tk_infer_begin(ctx, &inf)) != TB_OK) return st;
  st = tb_topk_k(tb_tk_infer_ctx(inf), p, &k, &known);
  tb_tk_infer_end(inf);
  if (st != TB_OK) return st;
  size_t rank = tb_tensor_ndim(x);
  if (rank == 0) return tb_kernel_error(ctx, TB_ERR_INVALID_ARGUMENT, "the input must have rank 1 or more");
  if (axis < -(int64_t)rank || axis >= (int64_t)rank)
    return tb_kernel_error(ctx, TB_ERR_MODEL, "axis %lld is out of range for rank %zu", (long long)axis, rank);
  if (axis < 0) axis += (int64_t)rank;
  const int64_t *shape = tb_tensor_shape(x);
  int64_t len = shape[axis];
  if (k < 0 || k > len)
    return tb_kernel_error(ctx, TB_ERR_INVALID_ARGUMENT, "k %lld is out of range for axis %lld of size %lld", (long long)k,
                           (long long)axis, (long long)len);
  int64_t oshape[TB_MAX_DIMS];
  memcpy(oshape, shape, rank * sizeof *oshape);
  oshape[axis] = k;
  tb_dtype dt = tb_tensor_dtype(x);
  size_t elem = tb_dtype_size(dt);
  unsigned char *vals, *idxs;
  if ((st = tb_tk_output(ctx, 0, dt, rank, oshape, NULL, &vals)) != TB_OK) return st;
  if ((st = tb_tk_output(ctx, 1, TB_DTYPE_I64, rank, oshape, NULL, &idxs)) != TB_OK) return st;
  int64_t outer = 1, inner = 1;
  for (int64_t d = 0; d < axis; d++) outer *= shape[d];
  for (size_t d = (size_t)axis + 1; d < rank; d++) inner *= shape[d];
  topk_item *items = malloc((size_t)(len ? len : 1) * sizeof *items);
  if (!items) return tb_kernel_error(ctx, TB_ERR_OUT_OF_MEMORY, "no memory to sort %lld elements", (long long)len);
  topk_largest = largest != 0;
  topk_int = dt == TB_DTYPE_I64;
  for (int64_t o = 0; o < outer; o++)
    for (int64_t i = 0; i < inner; i++) {
      for (int64_t t = 0; t < len; t++) {
        int64_t at = (o * len + t) * inner + i;
        items[t].index = t;
        if (topk_int)
          items[t].i64 = tb_tk_int_at(src, dt, at);
        else
          items[t].d = tb_tk_double_at(src, dt, at);
      }
      qsort(items, (size_t)len, sizeof *items, cmp_item);
      for (int64_t t = 0; t < k; t++) {
        int64_t from = (o * len + items[t].index) * inner + i, to = (o * k + t) * inner + i;
        memcpy(vals + (size_t)to * elem, src + (size_t)from * elem, elem);
        memcpy(idxs + (size_t)to * 8, &items[t].index, 8);
      }
    }
  free(items);
  return TB_OK;
}

const tb_kernel tb_kernel_topk = {.domain = "", .name = "TopK", .level = TB_KERNEL_REFERENCE, .cpu_features = 0, .accepts = NULL, .run = run_topk};
