/* Normalizations: BatchNormalization (inference only; `spatial` before opset 9), InstanceNormalization,
 * LayerNormalization (opset 17: axis, epsilon, stash_type, optional Mean and InvStdDev outputs) and LRN. */
#include "ops/nn/nn_infer.h"

static tb_status batchnorm_infer(tb_infer_ctx *ctx) {
  tb_status st = tb_infer_require(ctx, 0, NN_FLOATS);
  for (size_t i = 1; st == TB_OK && i < 5; i++) st = tb_infer_require(ctx, i, NN_FLOATS);
  int64_t training = 0;
  if (st == TB_OK) st = tb_attr_int(ctx->graph, ctx->node, "training_mode", 0, &training);
  if (st != TB_OK) return st;
  if (training)
    return tb_infer_error(ctx, TB_ERR_UNSUPPORTED, "training_mode=1 is not supported (inference only)");
  size_t extra = 0;
  for (size_t i = 1; i < ctx->node->n_outputs; i++) extra += ctx->node->outputs[i] >= 0;
  if (extra)
    return tb_infer_error(ctx, TB_ERR_UNSUPPORTED,
                          "the running/saved mean and variance outputs are training outputs; inference only is supported");
  tb_infer_same(ctx->in[0], &ctx->out[0]);
  const tb_value_type *x = tb_nn_ranked(ctx, 0);
  if (x && x->ndim < 2) return tb_infer_error(ctx, TB_ERR_MODEL, "X must have rank >= 2 (got %zu)", x->ndim);
  return TB_OK;
}

static tb_status instancenorm_infer(tb_infer_ctx *ctx) {
  tb_status st = tb_infer_require(ctx, 0, NN_FLOATS);
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
  int64_t axis = -1, stash = 1;
  if (st == TB_OK) st = tb_attr_int(ctx->graph, ctx->node, "axis", -1, &axis);
  if (st == TB_OK) st = tb_attr_int(ctx->graph, ctx->node, "stash_type", 1, &stash);
  if (st != TB_OK) return st;
  if (stash != 1 && stash != 11 && stash != 10 && stash != 16)
    return tb_infer_error(ctx, TB_ERR_MODEL, "attribute stash_type is %lld; it must be a float type", (long long)stash);
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
  tb_status st = tb_infer_require(ctx, 0, NN_FLOATS);
  int64_t size = 0;
  if (st == TB_OK) st = tb_attr_int(ctx->graph, ctx->node, "size", 0, &size);
  if (st != TB_OK) return st;
  if (size < 1) return tb_infer_error(ctx, TB_ERR_MODEL, "attribute size is %lld; it must be >= 1", (long long)size);
  tb_infer_same(ctx->in[0], &ctx->out[0]);
  const tb_value_type *x = tb_nn_ranked(ctx, 0);
  if (x && x->ndim < 2) return tb_infer_error(ctx, TB_ERR_MODEL, "X must have rank >= 2 (got %zu)", x->ndim);
  return TB_OK;
}

const tb_op_def tb_op_batchnorm_1 = {"", "BatchNormalization", 1, 5, 5, 1, 5, 0, batchnorm_infer, 0, NULL};
const tb_op_def tb_op_batchnorm_14 = {"", "BatchNormalization", 14, 5, 5, 1, 3, 0, batchnorm_infer, 0, NULL};
const tb_op_def tb_op_instancenorm = {"", "InstanceNormalization", 1, 3, 3, 1, 1, 0, instancenorm_infer, 0, NULL};
const tb_op_def tb_op_layernorm = {"", "LayerNormalization", 17, 2, 3, 1, 3, 0, layernorm_infer, 0, NULL};
const tb_op_def tb_op_lrn = {"", "LRN", 1, 1, 1, 1, 1, 0, lrn_infer, 0, NULL};
