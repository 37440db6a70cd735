/* Reshape, Flatten, Squeeze and Unsqueeze: the same elements under a new shape. */
#include <string.h>
#include "ops/op_params.h"
#include "ops/tensor/shape_rules.h"
#include "ops/tensor/tensor_infer.h"
#include "ops/tensor/tensor_params.h"

/* Reshape-1 takes the shape as an attribute, Reshape-5 as input 1 (int64), Reshape-14 adds allowzero. */
static tb_status reshape_infer(tb_infer_ctx *ctx) {
  tb_status st = tb_infer_require(ctx, 0, 0);
  if (st != TB_OK) return st;
  tb_dtype dt = ctx->in[0]->dtype;
  int64_t shape[TB_MAX_DIMS];
  int64_t n = -1;
  bool known = false;
  tb_reshape_params rp = {0};
  if ((st = tb_infer_params(ctx, &rp, sizeof rp)) != TB_OK) return st;
  bool allowzero = rp.allowzero;
  if (rp.shape_attr) {
    memcpy(shape, rp.shape, rp.n_shape * sizeof *shape);
    n = (int64_t)rp.n_shape;
    known = true;
  } else {
    if ((st = tb_infer_require(ctx, 1, TT_I64)) != TB_OK) return st;
    if ((st = tb_tt_input_ints(ctx, 1, shape, TB_MAX_DIMS, &n, &known)) != TB_OK) return st;
  }
  if (n > TB_MAX_DIMS)
    return tb_infer_error(ctx, TB_ERR_UNSUPPORTED, "shape has %lld dims; at most %d are supported", (long long)n,
                          TB_MAX_DIMS);
  if (!known) {
    if (n < 0)
      tb_tt_out_unranked(ctx, 0, dt);
    else
      tb_tt_out_rank(ctx, 0, dt, (size_t)n);
    return TB_OK;
  }
  const tb_value_type *in = ctx->in[0];
  int64_t in_dims[TB_MAX_DIMS], out[TB_MAX_DIMS];
  char why[400];
  if (!in->has_shape) {
    /* Only the explicit sizes are known. */
    for (int64_t i = 0; i < n; i++) {
      if (shape[i] < -1) return tb_infer_error(ctx, TB_ERR_MODEL, "shape has the negative size %lld", (long long)shape[i]);
      out[i] = shape[i] > 0 || (shape[i] == 0 && allowzero) ? shape[i] : -1;
    }
    tb_tt_out_dims(ctx, 0, dt, (size_t)n, out);
    return TB_OK;
  }
  tb_tt_dims(in, in_dims);
  if (!tb_rule_reshape(in->ndim, in_dims, (size_t)n, shape, allowzero, out, why, sizeof why))
    return tb_infer_error(ctx, TB_ERR_MODEL, "%s", why);
  tb_tt_out_dims(ctx, 0, dt, (size_t)n, out);
  for (int64_t i = 0; i < n; i++)
    if (shape[i] == 0 && !allowzero && (size_t)i < in->ndim) ctx->out[0].dims[i] = in->dims[i];
  return TB_OK;
}

const tb_op_def tb_op_reshape_1 = {"", "Reshape", 1, 1, 1, 1, 1, 0, reshape_infer, sizeof(tb_reshape_params), tb_reshape_parse};
const tb_op_def tb_op_reshape_5 = {"", "Reshape", 5, 2, 2, 1, 1, 1u << 1, reshape_infer, sizeof(tb_reshape_params), tb_reshape_parse};

/* Flatten: [prod(dims[:axis]), prod(dims[axis:])], axis in [-rank, rank]. */
static tb_status flatten_infer(tb_infer_ctx *ctx) {
  tb_status st = tb_infer_require(ctx, 0, 0);
  if (st != TB_OK) return st;
  tb_dtype dt = ctx->in[0]->dtype;
  tb_axis_params ap = {0};
  if ((st = tb_infer_params(ctx, &ap, sizeof ap)) != TB_OK) return st;
  int64_t axis = ap.axis;
  const tb_value_type *in = tb_tt_ranked(ctx, 0);
  if (!in) {
    tb_tt_out_rank(ctx, 0, dt, 2);
    return TB_OK;
  }
  int64_t r = (int64_t)in->ndim;
  if (axis < -r || axis > r)
    return tb_infer_error(ctx, TB_ERR_MODEL, "axis %lld is out of range [%lld, %lld] for rank %lld", (long long)axis,
                          (long long)-r, (long long)r, (long long)r);
  if (axis < 0) axis += r;
  int64_t dims[TB_MAX_DIMS];
  tb_tt_dims(in, dims);
  int64_t out[2] = {tb_rule_numel((size_t)axis, dims), tb_rule_numel((size_t)(r - axis), dims + axis)};
  if (out[0] == -2 || out[1] == -2) return tb_infer_error(ctx, TB_ERR_MODEL, "the input has too many elements");
  tb_tt_out_dims(ctx, 0, dt, 2, out);
  if (axis == 1) ctx->out[0].dims[0] = in->dims[0];
  if (axis == r - 1) ctx->out[0].dims[1] = in->dims[r - 1];
  return TB_OK;
}

const tb_op_def tb_op_flatten = {"", "Flatten", 1, 1, 1, 1, 1, 0, flatten_infer, sizeof(tb_axis_params), tb_flatten_parse};

/* The axes of Squeeze/Unsqueeze: the attribute before opset 13, input 1 from 13. *known false when the
 * input's value is not known yet (then *n is its length or -1). */
static tb_status squeeze_axes(tb_infer_ctx *ctx, int64_t *axes, int64_t *n, bool *known, bool *given) {
  *given = false;
  tb_squeeze_params sp = {0};
  tb_status st = tb_infer_params(ctx, &sp, sizeof sp);
  if (st != TB_OK) return st;
  if (!sp.axes_input) {
    *known = true;
    *given = sp.has_axes;
    if (sp.n_axes) memcpy(axes, sp.axes, sp.n_axes * sizeof *axes);
    *n = (int64_t)sp.n_axes;
    return TB_OK;
  }
  if (!tb_tt_has(ctx, 1)) {
    *known = true;
    *n = 0;
    return TB_OK;
  }
  *given = true;
  st = tb_infer_require(ctx, 1, TT_I64);
  if (st != TB_OK) return st;
  return tb_tt_input_ints(ctx, 1, axes, TB_MAX_DIMS, n, known);
}

static tb_status squeeze_infer(tb_infer_ctx *ctx) {
  tb_status st = tb_infer_require(ctx, 0, 0);
  if (st != TB_OK) return st;
  tb_dtype dt = ctx->in[0]->dtype;
  int64_t axes[TB_MAX_DIMS], n;
  bool known, given;
  if ((st = squeeze_axes(ctx, axes, &n, &known, &given)) != TB_OK) return st;
  const tb_value_type *in = tb_tt_ranked(ctx, 0);
  if (!in || !known) {
    if (in && n >= 0 && (size_t)n <= in->ndim)
      tb_tt_out_rank(ctx, 0, dt, in->ndim - (size_t)n);
    else
      tb_tt_out_unranked(ctx, 0, dt);
    return TB_OK;
  }
  int64_t dims[TB_MAX_DIMS];
  tb_tt_dims(in, dims);
  bool mask[TB_MAX_DIMS], which_known;
  char why[300];
  if (!tb_rule_squeeze(in->ndim, dims, axes, given ? (size_t)n : 0, mask, &which_known, why, sizeof why))
    return tb_infer_error(ctx, TB_ERR_MODEL, "%s", why);
  if (!which_known) {
    tb_tt_out_unranked(ctx, 0, dt); /* which dims are 1 is not known yet */
    return TB_OK;
  }
  tb_dim out[TB_MAX_DIMS];
  size_t k = 0;
  for (size_t d = 0; d < in->ndim; d++)
    if (!mask[d]) out[k++] = in->dims[d];
  tb_tt_out_tdims(ctx, 0, dt, k, out);
  return TB_OK;
}

const tb_op_def tb_op_squeeze_1 = {"", "Squeeze", 1, 1, 1, 1, 1, 0, squeeze_infer, sizeof(tb_squeeze_params), tb_squeeze_parse};
const tb_op_def tb_op_squeeze_13 = {"", "Squeeze", 13, 1, 2, 1, 1, 1u << 1, squeeze_infer, sizeof(tb_squeeze_params), tb_squeeze_parse};

static tb_status unsqueeze_infer(tb_infer_ctx *ctx) {
  tb_status st = tb_infer_require(ctx, 0, 0);
  if (st != TB_OK) return st;
  tb_dtype dt = ctx->in[0]->dtype;
  int64_t axes[TB_MAX_DIMS], n;
  bool known, given;
  if ((st = squeeze_axes(ctx, axes, &n, &known, &given)) != TB_OK) return st;
  const tb_value_type *in = tb_tt_ranked(ctx, 0);
  char why[300];
  if ((st = tb_rule_unsqueeze_rank(given, in ? (int64_t)in->ndim : -1, n, why, sizeof why)) != TB_OK)
    return tb_infer_error(ctx, st, "%s", why);
  if (!in || !known) {
    if (in && n >= 0)
      tb_tt_out_rank(ctx, 0, dt, in->ndim + (size_t)n);
    else
      tb_tt_out_unranked(ctx, 0, dt);
    return TB_OK;
  }
  size_t rank = in->ndim + (size_t)n;
  int64_t dims[TB_MAX_DIMS], shape[TB_MAX_DIMS];
  tb_tt_dims(in, dims);
  bool mask[TB_MAX_DIMS];
  if (!tb_rule_unsqueeze(in->ndim, dims, axes, (size_t)n, mask, shape, why, sizeof why))
    return tb_infer_error(ctx, TB_ERR_MODEL, "%s", why);
  tb_dim out[TB_MAX_DIMS];
  for (size_t d = 0, k = 0; d < rank; d++) out[d] = mask[d] ? tb_tt_dim(1) : in->dims[k++];
  tb_tt_out_tdims(ctx, 0, dt, rank, out);
  return TB_OK;
}

const tb_op_def tb_op_unsqueeze_1 = {"", "Unsqueeze", 1, 1, 1, 1, 1, 0, unsqueeze_infer, sizeof(tb_squeeze_params), tb_squeeze_parse};
const tb_op_def tb_op_unsqueeze_13 = {"", "Unsqueeze", 13, 2, 2, 1, 1, 1u << 1, unsqueeze_infer, sizeof(tb_squeeze_params), tb_squeeze_parse};
