/* OneHot: the on value where the (wrapped) index equals the position along the new axis, off elsewhere;
 * indices outside [-depth, depth) give a row of off values, as the spec says. */
#include <math.h>
#include <string.h>
#include "backend/cpu/kernels/tensor/tensor_kernel.h"
#include "ops/tensor/tensor_params.h"

static tb_status run_onehot(tb_kernel_ctx *ctx) {
  const tb_tensor *ind, *vals;
  const unsigned char *ip, *vp;
  tb_status st = tb_tk_input(ctx, 0, &ind, &ip);
  if (st == TB_OK) st = tb_tk_input(ctx, 2, &vals, &vp);
  if (st != TB_OK) return st;
  tb_tensor *outs[1] = {NULL};
  if ((st = tb_tk_infer_outputs(ctx, outs)) != TB_OK) return st;
  if (tb_tensor_numel(vals) != 2) return tb_kernel_error(ctx, TB_ERR_INVALID_ARGUMENT, "values must hold 2 elements");
  const tb_axis_params *p = ctx->params;
  size_t rank = tb_tensor_ndim(outs[0]), elem = tb_dtype_size(tb_tensor_dtype(vals));
  int64_t axis = tb_tk_axis(p->axis, rank);
  const int64_t *shape = tb_tensor_shape(outs[0]);
  int64_t depth = shape[axis], outer = 1, inner = 1;
  for (int64_t d = 0; d < axis; d++) outer *= shape[d];
  for (size_t d = (size_t)axis + 1; d < rank; d++) inner *= shape[d];
  unsigned char *dst = tb_tk_data(outs[0]);
  tb_dtype it = tb_tensor_dtype(ind);
  for (int64_t o = 0; o < outer; o++)
    for (int64_t t = 0; t < depth; t++)
      for (int64_t i = 0; i < inner; i++) {
        double v = tb_tk_double_at(ip, it, o * inner + i);
        int64_t k = isfinite(v) && fabs(v) < 9e18 ? (int64_t)v : INT64_MIN;
        if (k < 0 && k >= -depth) k += depth;
        memcpy(dst, vp + (k == t ? elem : 0), elem);
        dst += elem;
      }
  return TB_OK;
}

const tb_kernel tb_kernel_onehot = {.domain = "", .name = "OneHot", .level = TB_KERNEL_REFERENCE, .cpu_features = 0, .accepts = NULL, .run = run_onehot};
