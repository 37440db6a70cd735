/* MatMul (numpy matmul: 1-D operands promoted and the added axis removed, batch axes broadcast) and
 * Gemm (Y = alpha * A' * B' + beta * C with A' = transA ? A^T : A; C broadcast to [M, N], optional from
 * opset 11). */
#include <string.h>
#include "ops/op_params.h"
#include "ops/nn/nn_infer.h"
#include "ops/nn/nn_params.h"

/* Both dims known and different: a mismatch. */
static bool dims_conflict(tb_dim a, tb_dim b) { return a.value >= 0 && b.value >= 0 && a.value != b.value; }

/* The numpy matmul shape of a @ b into out (dtype left to the caller). */
tb_status tb_nn_matmul_shape(const tb_infer_ctx *ctx, const tb_value_type *a, const tb_value_type *b,
                             tb_value_type *out) {
  if (a->ndim == 0 || b->ndim == 0)
    return tb_infer_error(ctx, TB_ERR_MODEL, "MatMul operands must have rank >= 1 (got ranks %zu and %zu)", a->ndim,
                          b->ndim);
  tb_dim k_a = a->dims[a->ndim - 1];
  tb_dim k_b = b->ndim == 1 ? b->dims[0] : b->dims[b->ndim - 2];
  if (dims_conflict(k_a, k_b))
    return tb_infer_error(ctx, TB_ERR_MODEL, "MatMul inner dimensions differ: %lld vs %lld", (long long)k_a.value,
                          (long long)k_b.value);
  tb_value_type batch_a = {0}, batch_b = {0}, batch = {0};
  batch_a.kind = batch_b.kind = TB_VALUE_TENSOR;
  batch_a.has_shape = batch_b.has_shape = true;
  batch_a.ndim = a->ndim > 2 ? a->ndim - 2 : 0;
  batch_b.ndim = b->ndim > 2 ? b->ndim - 2 : 0;
  memcpy(batch_a.dims, a->dims, batch_a.ndim * sizeof(tb_dim));
  memcpy(batch_b.dims, b->dims, batch_b.ndim * sizeof(tb_dim));
  tb_status st = tb_infer_broadcast(ctx, &batch_a, &batch_b, &batch);
  if (st != TB_OK) return st;
  size_t n = batch.ndim;
  out->kind = TB_VALUE_TENSOR;
  out->has_shape = true;
  memcpy(out->dims, batch.dims, n * sizeof(tb_dim));
  if (a->ndim >= 2) out->dims[n++] = a->dims[a->ndim - 2];
  if (b->ndim >= 2) out->dims[n++] = b->dims[b->ndim - 1];
  out->ndim = n;
  return TB_OK;
}

static tb_status matmul_infer(tb_infer_ctx *ctx) {
  tb_status st = tb_infer_require(ctx, 0, NN_FLOATS | TB_DTYPE_BIT(TB_DTYPE_I32) | TB_DTYPE_BIT(TB_DTYPE_I64));
  if (st == TB_OK) st = tb_infer_require(ctx, 1, TB_DTYPE_BIT(ctx->in[0]->dtype));
  if (st != TB_OK) return st;
  tb_nn_out_unranked(&ctx->out[0], ctx->in[0]->dtype);
  const tb_value_type *a = tb_nn_ranked(ctx, 0), *b = tb_nn_ranked(ctx, 1);
  if (!a || !b) return TB_OK;
  st = tb_nn_matmul_shape(ctx, a, b, &ctx->out[0]);
  ctx->out[0].has_dtype = true;
  ctx->out[0].dtype = ctx->in[0]->dtype;
  return st;
}

tb_status tb_gemm_parse(const tb_graph *g, const tb_node *n, void *params) {
  tb_gemm_params *p = params;
  int64_t trans_a = 0, trans_b = 0;
  tb_status st = tb_attr_int(g, n, "transA", 0, &trans_a);
  if (st == TB_OK) st = tb_attr_int(g, n, "transB", 0, &trans_b);
  if (st == TB_OK) st = tb_attr_float(g, n, "alpha", 1.0f, &p->alpha);
  if (st == TB_OK) st = tb_attr_float(g, n, "beta", 1.0f, &p->beta);
  if (st != TB_OK) return st;
  p->trans_a = trans_a != 0; /* ONNX: any non-zero value transposes */
  p->trans_b = trans_b != 0;
  return TB_OK;
}

static tb_status gemm_infer(tb_infer_ctx *ctx) {
  tb_gemm_params p;
  memset(&p, 0, sizeof p);
  tb_dtype_set types = NN_FLOATS | TB_DTYPE_BIT(TB_DTYPE_I32) | TB_DTYPE_BIT(TB_DTYPE_I64);
  tb_status st = tb_infer_require(ctx, 0, types);
  if (st == TB_OK) st = tb_infer_require(ctx, 1, TB_DTYPE_BIT(ctx->in[0]->dtype));
  if (st == TB_OK && ctx->n_inputs > 2 && ctx->in[2]) st = tb_infer_require(ctx, 2, TB_DTYPE_BIT(ctx->in[0]->dtype));
  if (st == TB_OK) st = tb_infer_params(ctx, &p, sizeof p);
  if (st != TB_OK) return st;
  bool trans_a = p.trans_a, trans_b = p.trans_b;
  tb_nn_out_rank(&ctx->out[0], ctx->in[0]->dtype, 2);
  const tb_value_type *a = tb_nn_ranked(ctx, 0), *b = tb_nn_ranked(ctx, 1);
  if (a && a->ndim != 2) return tb_infer_error(ctx, TB_ERR_MODEL, "input A must be 2-D (got rank %zu)", a->ndim);
  if (b && b->ndim != 2) return tb_infer_error(ctx, TB_ERR_MODEL, "input B must be 2-D (got rank %zu)", b->ndim);
  if (a) ctx->out[0].dims[0] = a->dims[trans_a ? 1 : 0];
  if (b) ctx->out[0].dims[1] = b->dims[trans_b ? 0 : 1];
  if (a && b && dims_conflict(a->dims[trans_a ? 0 : 1], b->dims[trans_b ? 1 : 0]))
    return tb_infer_error(ctx, TB_ERR_MODEL, "inner dimensions of A and B differ: %lld vs %lld",
                          (long long)a->dims[trans_a ? 0 : 1].value, (long long)b->dims[trans_b ? 1 : 0].value);
  const tb_value_type *c = tb_nn_ranked(ctx, 2);
  if (c) {
    if (c->ndim > 2) return tb_infer_error(ctx, TB_ERR_MODEL, "input C must have rank <= 2 (got %zu)", c->ndim);
    for (size_t i = 0; i < c->ndim; i++) {
      tb_dim cd = c->dims[i], yd = ctx->out[0].dims[2 - c->ndim + i];
      if (cd.value >= 0 && cd.value != 1 && dims_conflict(cd, yd))
        return tb_infer_error(ctx, TB_ERR_MODEL, "input C dim %zu (%lld) does not broadcast to the output's %lld", i,
                              (long long)cd.value, (long long)yd.value);
    }
  }
  return TB_OK;
}

const tb_op_def tb_op_matmul = {"", "MatMul", 1, 2, 2, 1, 1, 0, matmul_infer, 0, NULL};
const tb_op_def tb_op_gemm_1 = {"", "Gemm", 1, 3, 3, 1, 1, 0, gemm_infer, sizeof(tb_gemm_params), tb_gemm_parse};
const tb_op_def tb_op_gemm_11 = {"", "Gemm", 11, 2, 3, 1, 1, 0, gemm_infer, sizeof(tb_gemm_params), tb_gemm_parse};
