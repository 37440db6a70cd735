/* Trilu, CumSum and ReverseSequence: outputs of the input's shape. */
#include <string.h>
#include "backend/cpu/kernels/tensor/tensor_kernel.h"
#include "ops/tensor/tensor_params.h"

static tb_status run_trilu(tb_kernel_ctx *ctx) {
  const tb_tensor *x;
  const unsigned char *src;
  tb_tensor *outs[1] = {NULL};
  tb_status st = tb_tk_begin(ctx, 1, &x, &src, outs);
  if (st != TB_OK) return st;
  const tb_trilu_params *p = ctx->params;
  int64_t upper = p->upper, k = 0;
  if (tb_tk_has(ctx, 1)) {
    int64_t v[1];
    size_t n;
    if ((st = tb_tk_input_ints(ctx, 1, v, 1, &n)) != TB_OK) return st;
    if (n != 1) return tb_kernel_error(ctx, TB_ERR_INVALID_ARGUMENT, "k must hold one value, not %zu", n);
    k = v[0];
  }
  size_t rank = tb_tensor_ndim(x), elem = tb_dtype_size(tb_tensor_dtype(x));
  int64_t rows = tb_tensor_shape(x)[rank - 2], cols = tb_tensor_shape(x)[rank - 1];
  int64_t mats = rows > 0 && cols > 0 ? tb_tensor_numel(x) / (rows * cols) : 0;
  unsigned char *dst = tb_tk_data(outs[0]);
  for (int64_t m = 0; m < mats; m++)
    for (int64_t i = 0; i < rows; i++)
      for (int64_t j = 0; j < cols; j++) {
        size_t off = (size_t)((m * rows + i) * cols + j) * elem;
        bool keep = upper ? j - i >= k : j - i <= k;
        if (keep)
          memcpy(dst + off, src + off, elem);
        else
          memset(dst + off, 0, elem);
      }
  return TB_OK;
}

const tb_kernel tb_kernel_trilu = {.domain = "", .name = "Trilu", .level = TB_KERNEL_REFERENCE, .cpu_features = 0, .accepts = NULL, .run = run_trilu};

static tb_status run_cumsum(tb_kernel_ctx *ctx) {
  const tb_tensor *x;
  const unsigned char *src;
  tb_tensor *outs[1] = {NULL};
  tb_status st = tb_tk_begin(ctx, 1, &x, &src, outs);
  if (st != TB_OK) return st;
  const tb_cumsum_params *p = ctx->params;
  int64_t exclusive = p->exclusive, reverse = p->reverse, axis[1];
  size_t n;
  if ((st = tb_tk_input_ints(ctx, 1, axis, 1, &n)) != TB_OK) return st;
  int64_t r = (int64_t)tb_tensor_ndim(x);
  if (n != 1 || axis[0] < -r || axis[0] >= r)
    return tb_kernel_error(ctx, TB_ERR_INVALID_ARGUMENT, "axis %lld is out of range for rank %lld",
                           (long long)(n ? axis[0] : 0), (long long)r);
  int64_t a = axis[0] < 0 ? axis[0] + r : axis[0];
  const int64_t *shape = tb_tensor_shape(x);
  int64_t outer = 1, inner = 1, len = shape[a];
  for (int64_t d = 0; d < a; d++) outer *= shape[d];
  for (int64_t d = a + 1; d < r; d++) inner *= shape[d];
  tb_dtype dt = tb_tensor_dtype(x);
  size_t elem = tb_dtype_size(dt);
  unsigned char *dst = tb_tk_data(outs[0]);
  for (int64_t o = 0; o < outer; o++)
    for (int64_t i = 0; i < inner; i++) {
      double fsum = 0;
      float f32sum = 0;
      uint64_t isum = 0;
      for (int64_t t = 0; t < len; t++) {
        int64_t tt = reverse ? len - 1 - t : t;
        int64_t at = (o * len + tt) * inner + i;
        unsigned char *out = dst + (size_t)at * elem;
        const unsigned char *in = src + (size_t)at * elem;
        if (dt == TB_DTYPE_F32) {
          float v;
          memcpy(&v, in, 4);
          if (!exclusive) f32sum += v;
          memcpy(out, &f32sum, 4);
          if (exclusive) f32sum += v;
        } else if (dt == TB_DTYPE_I64 || dt == TB_DTYPE_I32 || dt == TB_DTYPE_I16 || dt == TB_DTYPE_I8 || dt == TB_DTYPE_U8) {
          uint64_t v = (uint64_t)(int64_t)tb_tk_double_at(in, dt, 0);
          if (dt == TB_DTYPE_I64 || dt == TB_DTYPE_I32) v = (uint64_t)tb_tk_int_at(in, dt, 0);
          if (!exclusive) isum += v;
          int64_t s = (int64_t)isum;
          if (dt == TB_DTYPE_I64) memcpy(out, &s, 8);
          else if (dt == TB_DTYPE_I32) { int32_t w = (int32_t)s; memcpy(out, &w, 4); }
          else if (dt == TB_DTYPE_I16) { int16_t w = (int16_t)s; memcpy(out, &w, 2); }
          else { uint8_t w = (uint8_t)s; memcpy(out, &w, 1); }
          if (exclusive) isum += v;
        } else {
          double v = tb_tk_double_at(in, dt, 0);
          if (!exclusive) fsum += v;
          if (dt == TB_DTYPE_F64)
            memcpy(out, &fsum, 8);
          else
            tb_convert(TB_DTYPE_F64, &fsum, dt, out, 1, true);
          if (exclusive) fsum += v;
        }
      }
    }
  return TB_OK;
}

const tb_kernel tb_kernel_cumsum = {.domain = "", .name = "CumSum", .level = TB_KERNEL_REFERENCE, .cpu_features = 0, .accepts = NULL, .run = run_cumsum};

static tb_status run_reverse_sequence(tb_kernel_ctx *ctx) {
  const tb_tensor *x, *lens;
  const unsigned char *src, *lp;
  tb_status st = tb_tk_input(ctx, 0, &x, &src);
  if (st == TB_OK) st = tb_tk_input(ctx, 1, &lens, &lp);
  if (st != TB_OK) return st;
  tb_tensor *outs[1] = {NULL};
  if ((st = tb_tk_infer_outputs(ctx, outs)) != TB_OK) return st;
  const tb_reverse_sequence_params *p = ctx->params;
  int64_t batch_axis = p->batch_axis, time_axis = p->time_axis;
  size_t rank = tb_tensor_ndim(x), elem = tb_dtype_size(tb_tensor_dtype(x));
  const int64_t *shape = tb_tensor_shape(x);
  int64_t batch = shape[batch_axis], time = shape[time_axis];
  if (tb_tensor_numel(lens) != batch)
    return tb_kernel_error(ctx, TB_ERR_INVALID_ARGUMENT, "sequence_lens has %lld entries for a batch of %lld",
                           (long long)tb_tensor_numel(lens), (long long)batch);
  for (int64_t b = 0; b < batch; b++) {
    int64_t len = tb_tk_int_at(lp, tb_tensor_dtype(lens), b);
    if (len < 0 || len > time)
      return tb_kernel_error(ctx, TB_ERR_INVALID_ARGUMENT, "sequence length %lld (batch %lld) is out of range [0, %lld]",
                             (long long)len, (long long)b, (long long)time);
  }
  int64_t strides[TB_MAX_DIMS], idx[TB_MAX_DIMS] = {0}, n = tb_tensor_numel(x);
  tb_shape_strides(rank, shape, strides);
  unsigned char *dst = tb_tk_data(outs[0]);
  for (int64_t j = 0; j < n; j++, dst += elem) {
    int64_t len = tb_tk_int_at(lp, tb_tensor_dtype(lens), idx[batch_axis]), t = idx[time_axis];
    int64_t from = t < len ? len - 1 - t : t;
    int64_t off = (int64_t)j + (from - t) * strides[time_axis];
    memcpy(dst, src + (size_t)off * elem, elem);
    tb_kernel_next_index(rank, shape, idx);
  }
  return TB_OK;
}

const tb_kernel tb_kernel_reverse_sequence = {.domain = "", .name = "ReverseSequence", .level = TB_KERNEL_REFERENCE, .cpu_features = 0, .accepts = NULL, .run = run_reverse_sequence};
