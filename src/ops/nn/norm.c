/* Normalizations: BatchNormalization (inference only; `spatial` before opset 9), InstanceNormalization,
 * LayerNormalization (opset 17: axis, epsilon, stash_type, optional Mean and InvStdDev outputs) and LRN. */
#include <string.h>
#include "ops/op_params.h"
#include "ops/nn/nn_infer.h"
#include "ops/nn/nn_params.h"

static bool has_output(const tb_node *n, size_t i) { return i < n->n_outputs && n->outputs[i] >= 0; }

tb_status tb_norm_parse(const tb_graph *g, const tb_node *n, void *params) {
  tb_norm_params *p = params;
  p->kind = strcmp(n->op_type, "BatchNormalization") == 0  ? TB_NORM_BATCH
            : strcmp(n->op_type, "InstanceNormalization") == 0 ? TB_NORM_INSTANCE
                                                              : TB_NORM_LAYER;
  int64_t training = 0, spatial = 1;
  p->axis = -1;
  p->stash_type = 1;
  tb_status st = tb_attr_float(g, n, "epsilon", 1e-5f, &p->epsilon);
  if (st == TB_OK && p->kind == TB_NORM_BATCH) st = tb_attr_int(g, n, "training_mode", 0, &training);
  if (st == TB_OK && p->kind == TB_NORM_BATCH) st = tb_attr_int(g, n, "spatial", 1, &spatial);
  if (st == TB_OK && p->kind == TB_NORM_LAYER) st = tb_attr_int(g, n, "axis", -1, &p->axis);
  if (st == TB_OK && p->kind == TB_NORM_LAYER) st = tb_attr_int(g, n, "stash_type", 1, &p->stash_type);
  if (st != TB_OK) return st;
  p->spatial = spatial != 0;
  if (training) return tb_node_error(g, n, TB_ERR_UNSUPPORTED, "training_mode=1 is not supported (inference only)");
  if (p->kind == TB_NORM_BATCH) {
    size_t extra = 0;
    for (size_t i = 1; i < n->n_outputs; i++) extra += n->outputs[i] >= 0;
    if (extra)
      return tb_node_error(g, n, TB_ERR_UNSUPPORTED,
                           "the running/saved mean and variance outputs are training outputs; inference only is supported");
  }
  if (p->stash_type != 1 && p->stash_type != 11 && p->stash_type != 10 && p->stash_type != 16)
    return tb_node_error(g, n, TB_ERR_MODEL, "attribute stash_type is %lld; it must be a float type", (long long)p->stash_type);
  p->mean_output = p->kind == TB_NORM_LAYER && has_output(n, 1);
  p->inv_std_output = p->kind == TB_NORM_LAYER && has_output(n, 2);
  return TB_OK;
}

tb_status tb_lrn_parse(const tb_graph *g, const tb_node *n, void *params) {
  tb_lrn_params *p = params;
  tb_status st = tb_attr_float(g, n, "alpha", 1e-4f, &p->alpha);
  if (st == TB_OK) st = tb_attr_float(g, n, "beta", 0.75f, &p->beta);
  if (st == TB_OK) st = tb_attr_float(g, n, "bias", 1.0f, &p->bias);
  if (st == TB_OK) st = tb_attr_int(g, n, "size", 0, &p->size);
  if (st != TB_OK) return st;
  if (p->size < 1) return tb_node_error(g, n, TB_ERR_MODEL, "attribute size is %lld; it must be >= 1", (long long)p->size);
  return TB_OK;
}

static tb_status batchnorm_infer(tb_infer_ctx *ctx) {
  tb_norm_params p;
  memset(&p, 0, sizeof p);
  tb_status st = tb_infer_require(ctx, 0, NN_FLOATS);
  for (size_t i = 1; st == TB_OK && i < 5; i++) st = tb_infer_require(ctx, i, NN_FLOATS);
  if (st == TB_OK) st = tb_infer_params(ctx, &p, sizeof p);
  if (st != TB_OK) return st;
  tb_infer_same(ctx->in[0], &ctx->out[0]);
  const tb_value_type *x = tb_nn_ranked(ctx, 0);
  if (x && x->ndim < 2) return tb_infer_error(ctx, TB_ERR_MODEL, "X must have rank >= 2 (got %zu)", x->ndim);
  return TB_OK;
}

static tb_status instancenorm_infer(tb_infer_ctx *ctx) {
  tb_norm_params p;
  memset(&p, 0, sizeof p);
  tb_status st = tb_infer_params(ctx, &p, sizeof p);
  if (st == TB_OK) st = tb_infer_require(ctx, 0, NN_FLOATS);
  if (st == TB_OK) st = tb_infer_require(ctx, 1, NN_FLOATS);
  if (st == TB_OK) st = tb_infer_require(ctx, 2, NN_FLOATS);
  if (st != TB_OK) return st;
  tb_infer_same(ctx->in[0], &ctx->out[0]);
  const tb_value_type *x = tb_nn_ranked(ctx, 0);
  if (x && x->ndim < 3) return tb_infer_error(ctx, TB_ERR_MODEL, "X must have rank >= 3 (got %zu)", x->ndim);
  return TB_OK;
}

static tb_status layernorm_infer(tb_infer_ctx *ctx) {
  tb_status st = tb_infer_require(ctx, 0, NN_FLOATS);
  if (st == TB_OK) st = tb_infer_require(ctx, 1, NN_FLOATS);
  if (st == TB_OK && ctx->n_inputs > 2 && ctx->in[2]) st = tb_infer_require(ctx, 2, NN_FLOATS);
  tb_norm_params p;
  memset(&p, 0, sizeof p);
  if (st == TB_OK) st = tb_infer_params(ctx, &p, sizeof p);
  if (st != TB_OK) return st;
  int64_t axis = p.axis;
  tb_infer_same(ctx->in[0], &ctx->out[0]);
  for (size_t i = 1; i < ctx->n_outputs; i++) tb_nn_out_unranked(&ctx->out[i], TB_DTYPE_F32);
  const tb_value_type *x = tb_nn_ranked(ctx, 0);
  if (!x) return TB_OK;
  size_t a;
  st = tb_infer_axis(ctx, "axis", axis, x->ndim, &a);
  if (st != TB_OK) return st;
  for (size_t i = 1; i < ctx->n_outputs; i++) {
    ctx->out[i] = *x;
    ctx->out[i].dtype = TB_DTYPE_F32;
    for (size_t d = a; d < x->ndim; d++) ctx->out[i].dims[d] = tb_nn_dim(1);
  }
  return TB_OK;
}

static tb_status lrn_infer(tb_infer_ctx *ctx) {
  tb_lrn_params p;
  memset(&p, 0, sizeof p);
  tb_status st = tb_infer_require(ctx, 0, NN_FLOATS);
  if (st == TB_OK) st = tb_infer_params(ctx, &p, sizeof p);
  if (st != TB_OK) return st;
  tb_infer_same(ctx->in[0], &ctx->out[0]);
  const tb_value_type *x = tb_nn_ranked(ctx, 0);
  if (x && x->ndim < 2) return tb_infer_error(ctx, TB_ERR_MODEL, "X must have rank >= 2 (got %zu)", x->ndim);
  return TB_OK;
}

const tb_op_def tb_op_batchnorm_1 = {"", "BatchNormalization", 1, 5, 5, 1, 5, 0, batchnorm_infer, sizeof(tb_norm_params), tb_norm_parse};
const tb_op_def tb_op_batchnorm_14 = {"", "BatchNormalization", 14, 5, 5, 1, 3, 0, batchnorm_infer, sizeof(tb_norm_params), tb_norm_parse};
const tb_op_def tb_op_instancenorm = {"", "InstanceNormalization", 1, 3, 3, 1, 1, 0, instancenorm_infer, sizeof(tb_norm_params), tb_norm_parse};
const tb_op_def tb_op_layernorm = {"", "LayerNormalization", 17, 2, 3, 1, 3, 0, layernorm_infer, sizeof(tb_norm_params), tb_norm_parse};
const tb_op_def tb_op_lrn = {"", "LRN", 1, 1, 1, 1, 1, 0, lrn_infer, sizeof(tb_lrn_params), tb_lrn_parse};
