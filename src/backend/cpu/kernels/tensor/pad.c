/* Pad: each output element reads the input at its coordinate minus the begin pad, mapped back inside the
 * input by the mode (reflect, edge) or replaced by the constant. */
#include <string.h>
#include "backend/cpu/kernels/tensor/tensor_kernel.h"
#include "ops/tensor/tensor_params.h"


/* The input coordinate for c (may lie outside [0, dim)); -1 for the constant. */
static int64_t source(int64_t c, int64_t dim, int mode) {
  if (c >= 0 && c < dim) return c;
  if (mode == 0 || dim == 0) return -1;
  if (mode == 2 || dim == 1) return c < 0 ? 0 : dim - 1;
  int64_t period = 2 * (dim - 1);
  c %= period;
  if (c < 0) c += period;
  return c < dim ? c : period - c;
}

static tb_status run_pad(tb_kernel_ctx *ctx) {
  const tb_tensor *x;
  const unsigned char *src;
  tb_tensor *outs[1] = {NULL};
  tb_status st = tb_tk_begin(ctx, 1, &x, &src, outs);
  if (st != TB_OK) return st;
  size_t rank = tb_tensor_ndim(x), elem = tb_dtype_size(tb_tensor_dtype(x));
  tb_dtype dt = tb_tensor_dtype(x);
  int64_t begin[TB_MAX_DIMS], end[TB_MAX_DIMS];
  bool known;
  const tb_pad_params *p = ctx->params;
  tk_infer *inf;
  if ((st = tb_tk_infer_begin(ctx, &inf)) != TB_OK) return st;
  st = tb_pad_amounts(tb_tk_infer_ctx(inf), p, rank, begin, end, &known);
  tb_tk_infer_end(inf);
  if (st != TB_OK) return st;
  int mode = (int)p->mode;
  unsigned char value[8] = {0};
  if (p->pads_attr) {
    tb_convert(TB_DTYPE_F32, &p->value, dt, value, 1, true);
  } else if (tb_tk_has(ctx, 2)) {
    const tb_tensor *cv;
    const unsigned char *cp;
    if ((st = tb_tk_input(ctx, 2, &cv, &cp)) != TB_OK) return st;
    if (tb_tensor_numel(cv) != 1 || tb_tensor_dtype(cv) != dt)
      return tb_kernel_error(ctx, TB_ERR_INVALID_ARGUMENT, "constant_value must be one %s", tb_dtype_name(dt));
    memcpy(value, cp, elem);
  }
  const int64_t *in = tb_tensor_shape(x), *out = tb_tensor_shape(outs[0]);
  int64_t strides[TB_MAX_DIMS], idx[TB_MAX_DIMS] = {0}, n = tb_tensor_numel(outs[0]);
  tb_shape_strides(rank, in, strides);
  unsigned char *dst = tb_tk_data(outs[0]);
  for (int64_t j = 0; j < n; j++, dst += elem) {
    int64_t off = 0;
    bool constant = false;
    for (size_t d = 0; d < rank && !constant; d++) {
      int64_t s = source(idx[d] - begin[d], in[d], mode);
      if (s < 0)
        constant = true;
      else
        off += s * strides[d];
    }
    memcpy(dst, constant ? value : src + (size_t)off * elem, elem);
    tb_kernel_next_index(rank, out, idx);
  }
  return TB_OK;
}

const tb_kernel tb_kernel_pad = {.domain = "", .name = "Pad", .level = TB_KERNEL_REFERENCE, .cpu_features = 0, .accepts = NULL, .run = run_pad};
