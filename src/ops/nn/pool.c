/* Pooling: MaxPool (with the optional Indices output), AveragePool, LpPool over windows (window.c), and
 * GlobalAveragePool / GlobalMaxPool / GlobalLpPool over all spatial axes. X is [N, C, D1..Dn]. */
#include <string.h>
#include "ops/op_params.h"
#include "ops/nn/nn_infer.h"
#include "ops/nn/window.h"

tb_status tb_pool_parse(const tb_graph *g, const tb_node *n, void *params) {
  tb_pool_params *p = params;
  const char *op = n->op_type;
  p->global = strncmp(op, "Global", 6) == 0;
  if (p->global) op += 6;
  p->kind = strcmp(op, "MaxPool") == 0 ? TB_POOL_MAX : strcmp(op, "LpPool") == 0 ? TB_POOL_LP : TB_POOL_AVERAGE;
  int64_t include_pad = 0;
  tb_status st = TB_OK;
  if (!p->global) st = tb_window_parse(g, n, true, &p->win);
  if (st == TB_OK && p->kind == TB_POOL_AVERAGE) st = tb_attr_int(g, n, "count_include_pad", 0, &include_pad);
  if (st == TB_OK && p->kind == TB_POOL_MAX) st = tb_attr_int(g, n, "storage_order", 0, &p->storage_order);
  p->p = 2;
  if (st == TB_OK && p->kind == TB_POOL_LP) st = tb_attr_int(g, n, "p", 2, &p->p);
  if (st != TB_OK) return st;
  p->count_include_pad = include_pad != 0;
  p->indices = p->kind == TB_POOL_MAX && n->n_outputs > 1 && n->outputs[1] >= 0;
  if (p->storage_order != 0 && p->storage_order != 1)
    return tb_node_error(g, n, TB_ERR_MODEL, "attribute storage_order is %lld; it must be 0 or 1", (long long)p->storage_order);
  if (p->p < 1) return tb_node_error(g, n, TB_ERR_MODEL, "attribute p is %lld; it must be >= 1", (long long)p->p);
  return TB_OK;
}

static tb_status pool_infer(tb_infer_ctx *ctx, tb_dtype_set types) {
  tb_pool_params p;
  memset(&p, 0, sizeof p);
  tb_status st = tb_infer_params(ctx, &p, sizeof p);
  if (st == TB_OK) st = tb_infer_require(ctx, 0, types);
  if (st != TB_OK) return st;
  tb_dtype dt = ctx->in[0]->dtype;
  tb_nn_out_unranked(&ctx->out[0], dt);
  if (ctx->n_outputs > 1) tb_nn_out_unranked(&ctx->out[1], TB_DTYPE_I64);
  const tb_value_type *x = tb_nn_ranked(ctx, 0);
  if (!x) return TB_OK;
  if (x->ndim < 3) return tb_infer_error(ctx, TB_ERR_MODEL, "X must have rank >= 3 (got %zu)", x->ndim);
  size_t n = x->ndim - 2;
  nn_window w;
  st = tb_nn_window_init(&p.win, n, NULL, &w);
  if (st != TB_OK) return tb_node_name_error(ctx->graph, ctx->node, st);
  tb_nn_out_rank(&ctx->out[0], dt, x->ndim);
  ctx->out[0].dims[0] = x->dims[0];
  ctx->out[0].dims[1] = x->dims[1];
  for (size_t i = 0; i < n; i++) {
    int64_t o;
    st = tb_nn_window_out(&w, i, x->dims[2 + i].value, &o);
    if (st != TB_OK) return tb_node_name_error(ctx->graph, ctx->node, st);
    ctx->out[0].dims[2 + i] = tb_nn_dim(o);
  }
  if (ctx->n_outputs > 1) {
    ctx->out[1] = ctx->out[0];
    ctx->out[1].dtype = TB_DTYPE_I64;
  }
  return TB_OK;
}

static tb_status maxpool_infer(tb_infer_ctx *ctx) {
  return pool_infer(ctx, NN_FLOATS | TB_DTYPE_BIT(TB_DTYPE_I8) | TB_DTYPE_BIT(TB_DTYPE_U8));
}

static tb_status avgpool_infer(tb_infer_ctx *ctx) { return pool_infer(ctx, NN_FLOATS); }

static tb_status lppool_infer(tb_infer_ctx *ctx) { return pool_infer(ctx, NN_FLOATS); }

static tb_status global_pool_infer(tb_infer_ctx *ctx) {
  tb_pool_params p;
  memset(&p, 0, sizeof p);
  tb_status st = tb_infer_params(ctx, &p, sizeof p);
  if (st == TB_OK) st = tb_infer_require(ctx, 0, NN_FLOATS);
  if (st != TB_OK) return st;
  tb_nn_out_unranked(&ctx->out[0], ctx->in[0]->dtype);
  const tb_value_type *x = tb_nn_ranked(ctx, 0);
  if (!x) return TB_OK;
  if (x->ndim < 2) return tb_infer_error(ctx, TB_ERR_MODEL, "X must have rank >= 2 (got %zu)", x->ndim);
  ctx->out[0] = *x;
  for (size_t i = 2; i < x->ndim; i++) ctx->out[0].dims[i] = tb_nn_dim(1);
  return TB_OK;
}

const tb_op_def tb_op_maxpool = {"", "MaxPool", 1, 1, 1, 1, 2, 0, maxpool_infer, sizeof(tb_pool_params), tb_pool_parse};
const tb_op_def tb_op_averagepool = {"", "AveragePool", 1, 1, 1, 1, 1, 0, avgpool_infer, sizeof(tb_pool_params), tb_pool_parse};
const tb_op_def tb_op_lppool = {"", "LpPool", 1, 1, 1, 1, 1, 0, lppool_infer, sizeof(tb_pool_params), tb_pool_parse};
const tb_op_def tb_op_global_averagepool = {"", "GlobalAveragePool", 1, 1, 1, 1, 1, 0, global_pool_infer, sizeof(tb_pool_params), tb_pool_parse};
const tb_op_def tb_op_global_maxpool = {"", "GlobalMaxPool", 1, 1, 1, 1, 1, 0, global_pool_infer, sizeof(tb_pool_params), tb_pool_parse};
const tb_op_def tb_op_global_lppool = {"", "GlobalLpPool", 1, 1, 1, 1, 1, 0, global_pool_infer, sizeof(tb_pool_params), tb_pool_parse};
