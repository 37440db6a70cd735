/* Resize and Upsample: per dim, each output coordinate maps to input taps with weights (1 for nearest,
 * 2 for linear, 4 for cubic: tb_resize_taps_of, ops/tensor/resize_taps.c); each output element is the
 * weighted sum over the product of its dims' taps. Nearest copies element bytes (any dtype); linear and
 * cubic compute in double. */
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include "backend/cpu/kernels/tensor/tensor_kernel.h"
#include "ops/tensor/resize.h"

static void store(unsigned char *dst, tb_dtype dt, double v) {
  if (dt == TB_DTYPE_F64) {
    memcpy(dst, &v, 8);
    return;
  }
  if (dt != TB_DTYPE_F32) {
    tb_convert(TB_DTYPE_F64, &v, dt, dst, 1, true);
    return;
  }
  float f = (float)v;
  memcpy(dst, &f, 4);
}

static tb_status run_resize(tb_kernel_ctx *ctx) {
  const tb_tensor *x;
  const unsigned char *src;
  tb_status st = tb_tk_input(ctx, 0, &x, &src);
  if (st != TB_OK) return st;
  size_t rank = tb_tensor_ndim(x), elem = tb_dtype_size(tb_tensor_dtype(x));
  tb_dtype dt = tb_tensor_dtype(x);
  const int64_t *in = tb_tensor_shape(x);
  int64_t out[TB_MAX_DIMS];
  double scales[TB_MAX_DIMS], roi[2 * TB_MAX_DIMS];
  bool known;
  const tb_resize_params *p = ctx->params;
  tk_infer *inf;
  if ((st = tb_tk_infer_begin(ctx, &inf)) != TB_OK) return st;
  st = tb_resize_sizes(tb_tk_infer_ctx(inf), p, rank, in, out, scales, roi, &known);
  tb_tk_infer_end(inf);
  if (st != TB_OK) return st;
  if (!known) return tb_kernel_error(ctx, TB_ERR_INTERNAL, "the output size is not known");
  unsigned char *dst;
  tb_tensor *o;
  if ((st = tb_tk_output(ctx, 0, dt, rank, out, &o, &dst)) != TB_OK) return st;
  int64_t numel = tb_tensor_numel(o);
  if (numel == 0) return TB_OK;
  if (tb_tensor_numel(x) == 0)
    return tb_kernel_error(ctx, TB_ERR_INVALID_ARGUMENT, "cannot resize an empty input to a non-empty output");
  /* Taps for every (dim, output coordinate). */
  size_t total = 0, base[TB_MAX_DIMS];
  for (size_t d = 0; d < rank; d++) {
    base[d] = total;
    total += (size_t)out[d];
  }
  tb_resize_taps *all = malloc((total ? total : 1) * sizeof *all);
  if (!all) return tb_kernel_error(ctx, TB_ERR_OUT_OF_MEMORY, "no memory for %zu interpolation entries", total);
  for (size_t d = 0; d < rank; d++)
    for (int64_t k = 0; k < out[d]; k++) tb_resize_taps_of(p, k, scales[d], in[d], out[d], roi[d], roi[rank + d], &all[base[d] + (size_t)k]);
  int64_t strides[TB_MAX_DIMS], idx[TB_MAX_DIMS] = {0};
  tb_shape_strides(rank, in, strides);
  unsigned char extrap[8];
  store(extrap, dt, p->extrapolation);
  for (int64_t j = 0; j < numel; j++, dst += elem) {
    const tb_resize_taps *t[TB_MAX_DIMS];
    bool outside = false;
    for (size_t d = 0; d < rank; d++) {
      t[d] = &all[base[d] + (size_t)idx[d]];
      if (t[d]->idx[0] < 0) outside = true;
    }
    if (outside) {
      memcpy(dst, extrap, elem);
    } else if (p->mode == TB_RESIZE_NEAREST) {
      int64_t off = 0;
      for (size_t d = 0; d < rank; d++) off += t[d]->idx[0] * strides[d];
      memcpy(dst, src + (size_t)off * elem, elem);
    } else {
      /* Sum over the product of the dims' taps. */
      int k[TB_MAX_DIMS] = {0};
      double sum = 0;
      for (;;) {
        double w = 1;
        int64_t off = 0;
        for (size_t d = 0; d < rank; d++) {
          w *= t[d]->w[k[d]];
          off += t[d]->idx[k[d]] * strides[d];
        }
        if (w != 0) sum += w * tb_tk_double_at(src, dt, off);
        size_t d = rank;
        while (d-- > 0) {
          if (++k[d] < t[d]->n) break;
          k[d] = 0;
        }
        if (d == (size_t)-1) break;
      }
      store(dst, dt, sum);
    }
    tb_kernel_next_index(rank, out, idx);
  }
  free(all);
  return TB_OK;
}

const tb_kernel tb_kernel_resize = {.domain = "", .name = "Resize", .level = TB_KERNEL_REFERENCE, .cpu_features = 0, .accepts = NULL, .run = run_resize};
const tb_kernel tb_kernel_upsample = {.domain = "", .name = "Upsample", .level = TB_KERNEL_REFERENCE, .cpu_features = 0, .accepts = NULL, .run = run_resize};
