/* Pad: modes constant, reflect, edge (wrap from opset 19 is not supported). Pads are an attribute before
 * opset 11 and input 1 from 11 ([begin..., end...], negative values crop); constant_value is input 2
 * (the 'value' attribute before 11); axes is input 3 from opset 18. */
#include <string.h>
#include "ops/op_params.h"
#include "ops/tensor/tensor_infer.h"
#include "ops/tensor/tensor_params.h"

static const char *const MODES[] = {"constant", "reflect", "edge"};

const char *tb_pad_mode_name(tb_pad_mode mode) { return MODES[mode]; }

tb_status tb_pad_parse(const tb_graph *g, const tb_node *n, void *params) {
  tb_pad_params *p = params;
  const char *mode_s;
  tb_status st = tb_attr_string(g, n, "mode", "constant", &mode_s);
  if (st != TB_OK) return st;
  int mode = -1;
  for (int i = 0; i < 3; i++)
    if (strcmp(mode_s, MODES[i]) == 0) mode = i;
  if (mode < 0) {
    if (strcmp(mode_s, "wrap") == 0)
      return tb_node_error(g, n, TB_ERR_UNSUPPORTED, "mode 'wrap' is not supported (constant, reflect, edge are)");
    return tb_node_error(g, n, TB_ERR_MODEL, "unknown mode '%s' (constant, reflect or edge)", mode_s);
  }
  p->mode = (tb_pad_mode)mode;
  if (n->opset >= 11) {
    p->axes_input = n->opset >= 18;
    return TB_OK;
  }
  const int64_t *pads;
  p->pads_attr = true;
  if ((st = tb_attr_ints(g, n, "pads", &pads, &p->n_pads)) != TB_OK) return st;
  if (!pads) return tb_node_error(g, n, TB_ERR_MODEL, "attribute 'pads' is required before opset 11");
  if (p->n_pads > 2 * TB_MAX_DIMS)
    return tb_node_error(g, n, TB_ERR_UNSUPPORTED, "pads has %zu entries; at most %d are supported (2 per dim)",
                         p->n_pads, 2 * TB_MAX_DIMS);
  memcpy(p->pads, pads, p->n_pads * sizeof *pads);
  return tb_attr_float(g, n, "value", 0.0f, &p->value);
}

/* Per-dim begin/end pads for an input of rank `rank`; *known false when the pads' value is unknown. */
tb_status tb_pad_amounts(tb_infer_ctx *ctx, const tb_pad_params *p, size_t rank, int64_t *begin, int64_t *end,
                         bool *known) {
  tb_status st;
  int64_t pads[2 * TB_MAX_DIMS], axes[TB_MAX_DIMS], n = 0, na = -1;
  bool has_axes = false, k = true;
  *known = false;
  if (p->pads_attr) {
    memcpy(pads, p->pads, p->n_pads * sizeof *pads);
    n = (int64_t)p->n_pads;
  } else {
    if ((st = tb_infer_require(ctx, 1, TT_I64)) != TB_OK) return st;
    if ((st = tb_tt_input_ints(ctx, 1, pads, 2 * TB_MAX_DIMS, &n, &k)) != TB_OK) return st;
    if (!k) return TB_OK;
    if (p->axes_input && tb_tt_has(ctx, 3)) {
      if ((st = tb_infer_require(ctx, 3, TT_INDEX_TYPES)) != TB_OK) return st;
      if ((st = tb_tt_input_ints(ctx, 3, axes, TB_MAX_DIMS, &na, &k)) != TB_OK) return st;
      if (!k) return TB_OK;
      has_axes = true;
    }
  }
  size_t want = has_axes ? (size_t)na : rank;
  if ((size_t)n != 2 * want)
    return tb_infer_error(ctx, TB_ERR_MODEL, "pads has %lld entries; %zu expected (2 per %s)", (long long)n, 2 * want,
                          has_axes ? "axis" : "dim of the input");
  for (size_t d = 0; d < rank; d++) begin[d] = end[d] = 0;
  bool seen[TB_MAX_DIMS] = {false};
  for (size_t i = 0; i < want; i++) {
    size_t a = i;
    if (has_axes && (st = tb_infer_axis(ctx, "axes", axes[i], rank, &a)) != TB_OK) return st;
    if (seen[a]) return tb_infer_error(ctx, TB_ERR_MODEL, "axes repeats axis %zu", a);
    seen[a] = true;
    begin[a] = pads[i];
    end[a] = pads[i + want];
  }
  *known = true;
  return TB_OK;
}

static tb_status pad_infer(tb_infer_ctx *ctx) {
  tb_status st = tb_infer_require(ctx, 0, 0);
  if (st != TB_OK) return st;
  tb_dtype dt = ctx->in[0]->dtype;
  tb_pad_params pp = {0};
  if ((st = tb_infer_params(ctx, &pp, sizeof pp)) != TB_OK) return st;
  if (!pp.pads_attr && tb_tt_has(ctx, 2)) {
    if ((st = tb_infer_require(ctx, 2, TB_DTYPE_BIT(dt))) != TB_OK) return st;
    const tb_value_type *cv = ctx->in[2];
    if (cv->has_shape && !(cv->ndim == 0 || (cv->ndim == 1 && cv->dims[0].value == 1)))
      return tb_infer_error(ctx, TB_ERR_MODEL, "constant_value must be a scalar");
  }
  const tb_value_type *in = tb_tt_ranked(ctx, 0);
  if (!in) {
    tb_tt_out_unranked(ctx, 0, dt);
    return TB_OK;
  }
  int64_t begin[TB_MAX_DIMS], end[TB_MAX_DIMS];
  bool known;
  if ((st = tb_pad_amounts(ctx, &pp, in->ndim, begin, end, &known)) != TB_OK) return st;
  if (!known) {
    tb_tt_out_rank(ctx, 0, dt, in->ndim);
    return TB_OK;
  }
  tb_dim out[TB_MAX_DIMS];
  for (size_t d = 0; d < in->ndim; d++) {
    int64_t v = in->dims[d].value;
    if (begin[d] == 0 && end[d] == 0) {
      out[d] = in->dims[d];
      continue;
    }
    if (v < 0) {
      out[d] = tb_tt_dim(-1);
      continue;
    }
    int64_t o;
    if (__builtin_add_overflow(v, begin[d], &o) || __builtin_add_overflow(o, end[d], &o) || o < 0)
      return tb_infer_error(ctx, TB_ERR_MODEL, "pads %lld and %lld on dim %zu of size %lld give a negative or too large size",
                            (long long)begin[d], (long long)end[d], d, (long long)v);
    if (pp.mode != TB_PAD_CONSTANT && v == 0 && o > 0)
      return tb_infer_error(ctx, TB_ERR_MODEL, "mode '%s' cannot pad dim %zu of size 0", tb_pad_mode_name(pp.mode), d);
    out[d] = tb_tt_dim(o);
  }
  tb_tt_out_tdims(ctx, 0, dt, in->ndim, out);
  return TB_OK;
}

const tb_op_def tb_op_pad_2 = {"", "Pad", 2, 1, 1, 1, 1, 0, pad_infer, sizeof(tb_pad_params), tb_pad_parse};
const tb_op_def tb_op_pad_11 = {"", "Pad", 11, 2, 3, 1, 1, 1u << 1, pad_infer, sizeof(tb_pad_params), tb_pad_parse};
const tb_op_def tb_op_pad_18 = {"", "Pad", 18, 2, 4, 1, 1, (1u << 1) | (1u << 3), pad_infer, sizeof(tb_pad_params), tb_pad_parse};
