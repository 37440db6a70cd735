/* Level-2 Squeeze and Unsqueeze: the input's bytes under the shape computed here from the input's shape and
 * the axes (the attribute before opset 13, input 1 from 13), with the same checks and messages as the
 * operator's inference but no inference context per run; the copy is skipped when the output already is
 * the input's memory. */
#include <string.h>
#include "backend/cpu/kernels/fast/layout/layout_kernels.h"
#include "backend/cpu/kernels/tensor/tensor_kernel.h"
#include "ops/tensor/tensor_params.h"

/* The axes: *given false when there are none (no attribute, no input 1, or an empty input 1 for Squeeze). */
static tb_status read_axes(tb_kernel_ctx *ctx, int64_t *axes, size_t *n, bool *given) {
  const tb_squeeze_params *p = ctx->params;
  *n = 0;
  *given = false;
  if (!p->axes_input) {
    *given = p->has_axes;
    *n = p->n_axes;
    if (p->n_axes) memcpy(axes, p->axes, p->n_axes * sizeof *axes);
    return TB_OK;
  }
  if (!tb_tk_has(ctx, 1)) return TB_OK;
  *given = true;
  return tb_tk_input_ints(ctx, 1, axes, TB_MAX_DIMS, n);
}

/* axes normalised against rank into mask; out of range or repeated axes are TB_ERR_MODEL. */
static tb_status axes_mask(tb_kernel_ctx *ctx, const int64_t *axes, size_t n, size_t rank, bool *mask) {
  memset(mask, 0, TB_MAX_DIMS * sizeof *mask);
  for (size_t i = 0; i < n; i++) {
    int64_t a = axes[i] < 0 ? axes[i] + (int64_t)rank : axes[i];
    if (a < 0 || a >= (int64_t)rank)
      return tb_kernel_error(ctx, TB_ERR_MODEL, "axes has %lld, outside [-%zu, %zu) for rank %zu; give an axis in range",
                             (long long)axes[i], rank, rank, rank);
    if (mask[a]) return tb_kernel_error(ctx, TB_ERR_MODEL, "axes repeats axis %lld; give each axis once", (long long)axes[i]);
    mask[a] = true;
  }
  return TB_OK;
}

/* Output 0 of shape (ndim, shape) holding x's bytes. */
static tb_status same_bytes(tb_kernel_ctx *ctx, const tb_tensor *x, const unsigned char *src, size_t ndim,
                            const int64_t *shape) {
  unsigned char *dst;
  tb_status st = tb_tk_output(ctx, 0, tb_tensor_dtype(x), ndim, shape, NULL, &dst);
  if (st == TB_OK && tb_tensor_nbytes(x) && dst != src) memmove(dst, src, tb_tensor_nbytes(x));
  return st;
}

static tb_status squeeze_run(tb_kernel_ctx *ctx) {
  const tb_tensor *x;
  const unsigned char *src;
  int64_t axes[TB_MAX_DIMS], out[TB_MAX_DIMS];
  size_t n;
  bool given, mask[TB_MAX_DIMS];
  tb_status st = tb_tk_input(ctx, 0, &x, &src);
  if (st == TB_OK) st = read_axes(ctx, axes, &n, &given);
  if (st != TB_OK) return st;
  size_t rank = tb_tensor_ndim(x), k = 0;
  const int64_t *dims = tb_tensor_shape(x);
  if (given && n > 0) { /* an empty axes input means "not given" */
    if ((st = axes_mask(ctx, axes, n, rank, mask)) != TB_OK) return st;
    for (size_t d = 0; d < rank; d++)
      if (mask[d] && dims[d] != 1)
        return tb_kernel_error(ctx, TB_ERR_MODEL, "cannot squeeze axis %zu of size %lld (it must be 1)", d,
                               (long long)dims[d]);
  } else {
    for (size_t d = 0; d < rank; d++) mask[d] = dims[d] == 1;
  }
  for (size_t d = 0; d < rank; d++)
    if (!mask[d]) out[k++] = dims[d];
  return same_bytes(ctx, x, src, k, out);
}

static tb_status unsqueeze_run(tb_kernel_ctx *ctx) {
  const tb_tensor *x;
  const unsigned char *src;
  int64_t axes[TB_MAX_DIMS], out[TB_MAX_DIMS];
  size_t n;
  bool given, mask[TB_MAX_DIMS];
  tb_status st = tb_tk_input(ctx, 0, &x, &src);
  if (st == TB_OK) st = read_axes(ctx, axes, &n, &given);
  if (st != TB_OK) return st;
  if (!given) return tb_kernel_error(ctx, TB_ERR_MODEL, "axes are required; give the attribute (opset < 13) or input 1");
  size_t rank = tb_tensor_ndim(x) + n, k = 0;
  if (rank > TB_MAX_DIMS)
    return tb_kernel_error(ctx, TB_ERR_UNSUPPORTED, "the output would have %zu dims; at most %d are supported", rank,
                           TB_MAX_DIMS);
  if ((st = axes_mask(ctx, axes, n, rank, mask)) != TB_OK) return st;
  for (size_t d = 0; d < rank; d++) out[d] = mask[d] ? 1 : tb_tensor_shape(x)[k++];
  return same_bytes(ctx, x, src, rank, out);
}

const tb_kernel tb_kernel_squeeze_fast = {.domain = "", .name = "Squeeze", .level = TB_KERNEL_FAST, .cpu_features = 0,
                                          .accepts = NULL, .run = squeeze_run};
const tb_kernel tb_kernel_unsqueeze_fast = {.domain = "", .name = "Unsqueeze", .level = TB_KERNEL_FAST,
                                            .cpu_features = 0, .accepts = NULL, .run = unsqueeze_run};
