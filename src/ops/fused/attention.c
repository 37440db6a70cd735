/* tb::Attention: scaled dot-product attention as PyTorch exports it, made by the attention pattern pass.
 * Inputs Q [..., Lq, d], K_T [..., d, Lk] (the key already transposed), V [..., Lk, dv], optional mask
 * broadcastable to [..., Lq, Lk] and added to the scores; batch dims broadcast. Attributes: scale (float,
 * default 1) and scale_divide (int: 1 divides the scores by scale, 0 multiplies; as the model wrote it).
 * Y = Softmax(S) @ V over the last axis, S = (Q @ K_T) * scale (or / scale) + mask: shape [..., Lq, dv]. */
#include <string.h>
#include "ops/op_params.h"
#include "ops/fused/fused_ops.h"
#include "ops/fused/fused_params.h"

tb_status tb_attention_parse(const tb_graph *g, const tb_node *n, void *params) {
  tb_attention_params *p = params;
  int64_t divide = 0;
  tb_status st = tb_attr_float(g, n, "scale", 1.0f, &p->scale);
  if (st == TB_OK) st = tb_attr_int(g, n, "scale_divide", 0, &divide);
  if (st != TB_OK) return st;
  p->has_scale = tb_node_attr(n, "scale") != NULL;
  p->scale_divide = divide != 0;
  return TB_OK;
}

static bool conflict(tb_dim a, tb_dim b) { return a.value >= 0 && b.value >= 0 && a.value != b.value; }

static void batch_of(const tb_value_type *t, tb_value_type *out) {
  memset(out, 0, sizeof *out);
  out->kind = TB_VALUE_TENSOR;
  out->has_shape = true;
  out->ndim = t->ndim - 2;
  memcpy(out->dims, t->dims, out->ndim * sizeof(tb_dim));
}

static tb_status attention_infer(tb_infer_ctx *ctx) {
  tb_dtype_set floats = TB_DTYPE_BIT(TB_DTYPE_F32) | TB_DTYPE_BIT(TB_DTYPE_F64);
  tb_attention_params p;
  memset(&p, 0, sizeof p);
  tb_status st = tb_infer_params(ctx, &p, sizeof p);
  if (st == TB_OK) st = tb_infer_require(ctx, 0, floats);
  for (size_t i = 1; i < 3 && st == TB_OK; i++) st = tb_infer_require(ctx, i, TB_DTYPE_BIT(ctx->in[0]->dtype));
  if (st == TB_OK && ctx->n_inputs > 3 && ctx->in[3]) st = tb_infer_require(ctx, 3, TB_DTYPE_BIT(ctx->in[0]->dtype));
  if (st != TB_OK) return st;
  memset(&ctx->out[0], 0, sizeof ctx->out[0]);
  ctx->out[0].kind = TB_VALUE_TENSOR;
  ctx->out[0].has_dtype = true;
  ctx->out[0].dtype = ctx->in[0]->dtype;
  const tb_value_type *q = ctx->in[0], *k = ctx->in[1], *v = ctx->in[2];
  if (!q->has_shape || !k->has_shape || !v->has_shape) return TB_OK;
  if (q->ndim < 2 || k->ndim < 2 || v->ndim < 2)
    return tb_infer_error(ctx, TB_ERR_MODEL, "Q, K_T and V must have rank >= 2 (got %zu, %zu, %zu)", q->ndim, k->ndim, v->ndim);
  if (conflict(q->dims[q->ndim - 1], k->dims[k->ndim - 2]) || conflict(k->dims[k->ndim - 1], v->dims[v->ndim - 2]))
    return tb_infer_error(ctx, TB_ERR_MODEL, "the inner dimensions of Q @ K_T or of the scores @ V differ");
  tb_value_type bq, bk, bv, b1, b2;
  batch_of(q, &bq);
  batch_of(k, &bk);
  batch_of(v, &bv);
  st = tb_infer_broadcast(ctx, &bq, &bk, &b1);
  if (st == TB_OK) st = tb_infer_broadcast(ctx, &b1, &bv, &b2);
  if (st != TB_OK) return st;
  if (b2.ndim + 2 > TB_MAX_DIMS) return tb_infer_error(ctx, TB_ERR_MODEL, "rank over %d", TB_MAX_DIMS);
  ctx->out[0].has_shape = true;
  ctx->out[0].ndim = b2.ndim + 2;
  memcpy(ctx->out[0].dims, b2.dims, b2.ndim * sizeof(tb_dim));
  ctx->out[0].dims[b2.ndim] = q->dims[q->ndim - 2];
  ctx->out[0].dims[b2.ndim + 1] = v->dims[v->ndim - 1];
  return TB_OK;
}

const tb_op_def tb_op_fused_attention = {"tb", "Attention", 1, 3, 4, 1, 1, 0, attention_infer, sizeof(tb_attention_params), tb_attention_parse};
