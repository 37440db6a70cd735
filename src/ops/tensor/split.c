/* Split: one input cut into pieces along an axis — sizes from the 'split' attribute (before opset 13),
 * the split input (13+), or equal pieces (num_outputs from opset 18, where the last may be smaller). */
#include <string.h>
#include "ops/op_params.h"
#include "ops/tensor/tensor_infer.h"
#include "ops/tensor/tensor_params.h"

enum { SPLIT_MAX = 1024 };

/* The piece sizes along an axis of size dim (known), for n_outputs outputs: sizes[] gets n_outputs entries.
 * *known false when the split input's value is not known yet. */
tb_status tb_split_sizes(tb_infer_ctx *ctx, const tb_split_params *p, int64_t dim, int64_t *sizes, bool *known) {
  size_t outs = ctx->n_outputs;
  tb_status st;
  *known = true;
  const int64_t *split = NULL;
  int64_t buf[SPLIT_MAX];
  int64_t n = -1;
  if (!p->split_input) {
    split = p->split;
    n = split ? (int64_t)p->n_split : -1;
  } else if (tb_tt_has(ctx, 1)) {
    if ((st = tb_infer_require(ctx, 1, TT_I64)) != TB_OK) return st;
    bool k;
    if ((st = tb_tt_input_ints(ctx, 1, buf, SPLIT_MAX, &n, &k)) != TB_OK) return st;
    if (!k) {
      *known = false;
      return TB_OK;
    }
    split = buf;
  }
  int64_t num_outputs = p->num_outputs;
  if (num_outputs && split)
    return tb_infer_error(ctx, TB_ERR_MODEL, "has both the split input and the num_outputs attribute; give one");
  if (split) {
    if ((size_t)n != outs)
      return tb_infer_error(ctx, TB_ERR_MODEL, "split has %lld entries for %zu outputs", (long long)n, outs);
    int64_t sum = 0;
    for (size_t i = 0; i < outs; i++) {
      if (split[i] < 0) return tb_infer_error(ctx, TB_ERR_MODEL, "split has the negative size %lld", (long long)split[i]);
      sizes[i] = split[i];
      sum += split[i];
    }
    if (dim >= 0 && sum != dim)
      return tb_infer_error(ctx, TB_ERR_MODEL, "split sizes add up to %lld but the axis has size %lld", (long long)sum,
                            (long long)dim);
    return TB_OK;
  }
  if (dim < 0) {
    *known = false;
    return TB_OK;
  }
  if (num_outputs) {
    int64_t chunk = (dim + (int64_t)outs - 1) / (int64_t)outs;
    for (size_t i = 0; i < outs; i++) {
      int64_t left = dim - chunk * (int64_t)i;
      sizes[i] = left < 0 ? 0 : left < chunk ? left : chunk;
    }
    return TB_OK;
  }
  if (dim % (int64_t)outs != 0)
    return tb_infer_error(ctx, TB_ERR_MODEL, "an axis of size %lld cannot be split into %zu equal parts", (long long)dim,
                          outs);
  for (size_t i = 0; i < outs; i++) sizes[i] = dim / (int64_t)outs;
  return TB_OK;
}

static tb_status split_infer(tb_infer_ctx *ctx) {
  tb_status st = tb_infer_require(ctx, 0, 0);
  if (st != TB_OK) return st;
  tb_dtype dt = ctx->in[0]->dtype;
  if (ctx->n_outputs > SPLIT_MAX)
    return tb_infer_error(ctx, TB_ERR_UNSUPPORTED, "%zu outputs; at most %d are supported", ctx->n_outputs, SPLIT_MAX);
  tb_split_params sp = {0};
  if ((st = tb_infer_params(ctx, &sp, sizeof sp)) != TB_OK) return st;
  int64_t axis = sp.axis;
  const tb_value_type *in = tb_tt_ranked(ctx, 0);
  if (!in) {
    for (size_t o = 0; o < ctx->n_outputs; o++) tb_tt_out_unranked(ctx, o, dt);
    return TB_OK;
  }
  size_t a;
  if ((st = tb_infer_axis(ctx, "axis", axis, in->ndim, &a)) != TB_OK) return st;
  int64_t sizes[SPLIT_MAX];
  bool known;
  if ((st = tb_split_sizes(ctx, &sp, in->dims[a].value, sizes, &known)) != TB_OK) return st;
  for (size_t o = 0; o < ctx->n_outputs; o++) {
    tb_tt_out_tdims(ctx, o, dt, in->ndim, in->dims);
    ctx->out[o].dims[a] = tb_tt_dim(known ? sizes[o] : -1);
  }
  return TB_OK;
}

const tb_op_def tb_op_split_2 = {"", "Split", 2, 1, 1, 1, -1, 0, split_infer, sizeof(tb_split_params), tb_split_parse};
const tb_op_def tb_op_split_13 = {"", "Split", 13, 1, 2, 1, -1, 1u << 1, split_infer, sizeof(tb_split_params), tb_split_parse};
