/* Conv and ConvTranspose: X [N, C, D1..Dn] with weights W ([M, C/group, k1..kn] for Conv,
 * [C, M/group, k1..kn] for ConvTranspose) and an optional bias B [M]; the window geometry (strides,
 * dilations, pads, auto_pad, output_padding, output_shape) is in window.c. ConvInteger (int32 output)
 * and QLinearConv (quantized output) have Conv's shapes on 8-bit inputs. */
#include <string.h>
#include "ops/op_params.h"
#include "ops/nn/nn_infer.h"
#include "ops/nn/window.h"

/* Check group against the channel counts that are known. */
static tb_status check_group(tb_infer_ctx *ctx, int64_t group, const tb_value_type *x, const tb_value_type *w,
                             bool transpose) {
  int64_t c = x ? x->dims[1].value : -1;
  if (c >= 0 && c % group != 0)
    return tb_infer_error(ctx, TB_ERR_MODEL, "attribute group (%lld) does not divide the %lld input channels",
                          (long long)group, (long long)c);
  if (!w || w->ndim < 2) return TB_OK;
  if (!transpose) {
    int64_t m = w->dims[0].value, wc = w->dims[1].value;
    if (m >= 0 && m % group != 0)
      return tb_infer_error(ctx, TB_ERR_MODEL, "attribute group (%lld) does not divide the %lld output channels",
                            (long long)group, (long long)m);
    int64_t total;
    if (c >= 0 && wc >= 0 && (__builtin_mul_overflow(wc, group, &total) || total != c))
      return tb_infer_error(ctx, TB_ERR_MODEL, "W has %lld channels per group; X has %lld channels for group %lld",
                            (long long)wc, (long long)c, (long long)group);
  } else if (c >= 0 && w->dims[0].value >= 0 && w->dims[0].value != c) {
    return tb_infer_error(ctx, TB_ERR_MODEL, "W's first dim (%lld) differs from X's %lld channels",
                          (long long)w->dims[0].value, (long long)c);
  }
  return TB_OK;
}

/* Where X, W and B are among the node's inputs (B: -1 when the op has none). */
typedef struct conv_inputs {
  size_t x, w;
  int b;
} conv_inputs;

tb_status tb_conv_parse(const tb_graph *g, const tb_node *n, void *params) {
  tb_conv_params *p = params;
  tb_status st = tb_attr_int(g, n, "group", 1, &p->group);
  if (st != TB_OK) return st;
  if (p->group < 1) return tb_node_error(g, n, TB_ERR_MODEL, "attribute group is %lld; it must be >= 1", (long long)p->group);
  return tb_window_parse(g, n, false, &p->win);
}

tb_status tb_conv_transpose_parse(const tb_graph *g, const tb_node *n, void *params) {
  tb_conv_params *p = params;
  tb_status st = tb_conv_parse(g, n, p);
  if (st == TB_OK) st = tb_nn_parse_list(g, n, "output_padding", TB_MAX_DIMS, 0, p->output_padding, &p->n_output_padding);
  if (st == TB_OK) st = tb_nn_parse_list(g, n, "output_shape", TB_MAX_DIMS + 2, 0, p->output_shape, &p->n_output_shape);
  return st;
}

/* The output's spatial dims from the window of p (shape errors named after the node). */
static tb_status conv_spatial(tb_infer_ctx *ctx, const tb_conv_params *p, bool transpose, const tb_value_type *x,
                              const tb_value_type *w, size_t rank) {
  size_t n = rank - 2;
  int64_t kernel[TB_MAX_DIMS];
  for (size_t i = 0; i < n; i++) kernel[i] = w ? w->dims[2 + i].value : -1;
  nn_window win;
  const int64_t *output_shape = NULL;
  size_t n_output_shape = 0;
  tb_status st = tb_nn_window_init(&p->win, n, kernel, &win);
  if (st == TB_OK && transpose) st = tb_nn_window_init_transpose(p, &win);
  if (st == TB_OK && transpose) st = tb_nn_conv_output_shape(p, rank, &output_shape, &n_output_shape);
  for (size_t i = 0; st == TB_OK && i < n; i++) {
    int64_t o = -1, in = x ? x->dims[2 + i].value : -1;
    if (transpose) st = tb_nn_window_out_transpose(&win, i, in, n_output_shape ? output_shape[i] : -1, &o);
    else st = tb_nn_window_out(&win, i, in, &o);
    ctx->out[0].dims[2 + i] = tb_nn_dim(o);
  }
  return st == TB_OK ? TB_OK : tb_node_name_error(ctx->graph, ctx->node, st);
}

static tb_status conv_common(tb_infer_ctx *ctx, bool transpose, conv_inputs io, tb_dtype_set types, bool integer) {
  tb_conv_params p;
  memset(&p, 0, sizeof p);
  tb_status st = tb_infer_params(ctx, &p, sizeof p);
  if (st == TB_OK) st = tb_infer_require(ctx, io.x, types);
  if (st == TB_OK) st = tb_infer_require(ctx, io.w, integer ? types : TB_DTYPE_BIT(ctx->in[io.x]->dtype));
  if (st == TB_OK && io.b >= 0 && ctx->n_inputs > (size_t)io.b && ctx->in[io.b])
    st = tb_infer_require(ctx, (size_t)io.b, integer ? TB_DTYPE_BIT(TB_DTYPE_I32) : TB_DTYPE_BIT(ctx->in[io.x]->dtype));
  if (st != TB_OK) return st;
  tb_dtype out_dtype = ctx->in[io.x]->dtype;
  if (integer) out_dtype = ctx->n_inputs > 7 && ctx->in[7] ? ctx->in[7]->dtype : TB_DTYPE_I32;
  int64_t group = p.group;
  tb_nn_out_unranked(&ctx->out[0], out_dtype);
  const tb_value_type *x = tb_nn_ranked(ctx, io.x), *w = tb_nn_ranked(ctx, io.w);
  if (x && x->ndim < 3) return tb_infer_error(ctx, TB_ERR_MODEL, "X must have rank >= 3 (got %zu)", x->ndim);
  if (w && w->ndim < 3) return tb_infer_error(ctx, TB_ERR_MODEL, "W must have rank >= 3 (got %zu)", w->ndim);
  if (x && w && x->ndim != w->ndim)
    return tb_infer_error(ctx, TB_ERR_MODEL, "X (rank %zu) and W (rank %zu) must have the same rank", x->ndim, w->ndim);
  st = check_group(ctx, group, x, w, transpose);
  if (st != TB_OK || (!x && !w)) return st;
  size_t rank = x ? x->ndim : w->ndim;
  tb_nn_out_rank(&ctx->out[0], out_dtype, rank);
  if (x) ctx->out[0].dims[0] = x->dims[0];
  if (w) {
    int64_t m = w->dims[0].value;
    if (transpose && (w->dims[1].value < 0 || __builtin_mul_overflow(w->dims[1].value, group, &m))) m = -1;
    ctx->out[0].dims[1] = tb_nn_dim(m);
  }
  const tb_value_type *b = io.b >= 0 ? tb_nn_ranked(ctx, (size_t)io.b) : NULL;
  if (b && (b->ndim != 1 || (b->dims[0].value >= 0 && ctx->out[0].dims[1].value >= 0 &&
                             b->dims[0].value != ctx->out[0].dims[1].value)))
    return tb_infer_error(ctx, TB_ERR_MODEL, "bias B must be 1-D with one value per output channel");
  return conv_spatial(ctx, &p, transpose, x, w, rank);
}

static const conv_inputs plain = {0, 1, 2};
static tb_status conv_infer(tb_infer_ctx *ctx) { return conv_common(ctx, false, plain, NN_FLOATS, false); }
static tb_status conv_transpose_infer(tb_infer_ctx *ctx) { return conv_common(ctx, true, plain, NN_FLOATS, false); }

#define Q8 (TB_DTYPE_BIT(TB_DTYPE_U8) | TB_DTYPE_BIT(TB_DTYPE_I8))
static tb_status conv_integer_infer(tb_infer_ctx *ctx) {
  conv_inputs io = {0, 1, -1};
  return conv_common(ctx, false, io, Q8, true);
}
static tb_status qlinear_conv_infer(tb_infer_ctx *ctx) {
  tb_status st = tb_infer_require(ctx, 7, Q8);
  if (st != TB_OK) return st;
  conv_inputs io = {0, 3, 8};
  return conv_common(ctx, false, io, Q8, true);
}

const tb_op_def tb_op_conv = {"", "Conv", 1, 2, 3, 1, 1, 0, conv_infer, sizeof(tb_conv_params), tb_conv_parse};
const tb_op_def tb_op_conv_transpose = {"", "ConvTranspose", 1, 2, 3, 1, 1, 0, conv_transpose_infer, sizeof(tb_conv_params), tb_conv_transpose_parse};
const tb_op_def tb_op_conv_integer = {"", "ConvInteger", 10, 2, 4, 1, 1, 0, conv_integer_infer, sizeof(tb_conv_params), tb_conv_parse};
const tb_op_def tb_op_qlinear_conv = {"", "QLinearConv", 10, 8, 9, 1, 1, 0, qlinear_conv_infer, sizeof(tb_conv_params), tb_conv_parse};
