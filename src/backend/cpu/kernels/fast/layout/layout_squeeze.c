/* Level-2 Squeeze and Unsqueeze: the input's bytes under the shape computed here from the input's shape and
 * the axes (the attribute before opset 13, input 1 from 13) by the operators' own rules (shape_rules.h:
 * the same checks and messages as their inference) but no inference context per run; the copy is skipped
 * when the output already is the input's memory. */
#include <string.h>
#include "backend/cpu/kernels/fast/layout/layout_kernels.h"
#include "backend/cpu/kernels/tensor/tensor_kernel.h"
#include "ops/tensor/shape_rules.h"
#include "ops/tensor/tensor_params.h"

/* The axes: *given false when there are none (no attribute, no input 1). Input 1 must be int64, as the
 * operator's inference requires. */
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
  const tb_tensor *a;
  const unsigned char *data;
  tb_status st = tb_tk_input(ctx, 1, &a, &data);
  if (st != TB_OK) return st;
  if (tb_tensor_dtype(a) != TB_DTYPE_I64)
    return tb_kernel_error(ctx, TB_ERR_UNSUPPORTED, "input 1 has element type %s; supported: %s",
                           tb_dtype_name(tb_tensor_dtype(a)), tb_dtype_name(TB_DTYPE_I64));
  return tb_tk_input_ints(ctx, 1, axes, TB_MAX_DIMS, n);
}

/* Squeeze's and Unsqueeze's opening: input 0 and the axes. */
static tb_status open_run(tb_kernel_ctx *ctx, const tb_tensor **x, const unsigned char **src, int64_t *axes, size_t *n,
                          bool *given) {
  tb_status st = tb_tk_input(ctx, 0, x, src);
  if (st == TB_OK) st = read_axes(ctx, axes, n, given);
  return st;
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
  size_t n, k = 0;
  bool given, mask[TB_MAX_DIMS], known;
  char why[300];
  tb_status st = open_run(ctx, &x, &src, axes, &n, &given);
  if (st != TB_OK) return st;
  size_t rank = tb_tensor_ndim(x);
  const int64_t *dims = tb_tensor_shape(x);
  if (!tb_rule_squeeze(rank, dims, axes, n, mask, &known, why, sizeof why))
    return tb_kernel_error(ctx, TB_ERR_MODEL, "%s", why);
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
  char why[300];
  tb_status st = open_run(ctx, &x, &src, axes, &n, &given);
  if (st != TB_OK) return st;
  if ((st = tb_rule_unsqueeze_rank(given, (int64_t)tb_tensor_ndim(x), (int64_t)n, why, sizeof why)) != TB_OK)
    return tb_kernel_error(ctx, st, "%s", why);
  if (!tb_rule_unsqueeze(tb_tensor_ndim(x), tb_tensor_shape(x), axes, n, mask, out, why, sizeof why))
    return tb_kernel_error(ctx, TB_ERR_MODEL, "%s", why);
  return same_bytes(ctx, x, src, tb_tensor_ndim(x) + n, out);
}

const tb_kernel tb_kernel_squeeze_fast = {.domain = "", .name = "Squeeze", .level = TB_KERNEL_FAST, .cpu_features = 0,
                                          .accepts = NULL, .run = squeeze_run};
const tb_kernel tb_kernel_unsqueeze_fast = {.domain = "", .name = "Unsqueeze", .level = TB_KERNEL_FAST,
                                            .cpu_features = 0, .accepts = NULL, .run = unsqueeze_run};
