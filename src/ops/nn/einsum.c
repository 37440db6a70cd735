/* Einsum (opset 12): the equation in einsum_parse.c; the output has the inputs' dtype and the sizes of
 * its labels. */
#include "ops/op_params.h"
#include "ops/nn/einsum_parse.h"
#include "ops/nn/nn_infer.h"
#include "ops/nn/nn_params.h"

tb_status tb_einsum_params_parse(const tb_graph *g, const tb_node *n, void *params) {
  tb_einsum_params *p = params;
  tb_status st = tb_attr_string(g, n, "equation", NULL, &p->equation);
  if (st == TB_OK && !p->equation) return tb_node_error(g, n, TB_ERR_MODEL, "attribute equation is required");
  return st;
}

static tb_status einsum_infer(tb_infer_ctx *ctx) {
  tb_status st = tb_infer_require(ctx, 0, NN_NUMBERS);
  for (size_t i = 1; st == TB_OK && i < ctx->n_inputs; i++) st = tb_infer_require(ctx, i, TB_DTYPE_BIT(ctx->in[0]->dtype));
  tb_einsum_params p = {NULL};
  if (st == TB_OK) st = tb_infer_params(ctx, &p, sizeof p);
  if (st != TB_OK) return st;
  tb_nn_out_unranked(&ctx->out[0], ctx->in[0]->dtype);
  if (ctx->n_inputs > NN_EINSUM_MAX_INPUTS)
    return tb_infer_error(ctx, TB_ERR_UNSUPPORTED, "%zu inputs; at most %d are supported", ctx->n_inputs,
                          NN_EINSUM_MAX_INPUTS);
  size_t ranks[NN_EINSUM_MAX_INPUTS];
  const int64_t *dims[NN_EINSUM_MAX_INPUTS];
  int64_t dim_values[NN_EINSUM_MAX_INPUTS][TB_MAX_DIMS];
  for (size_t i = 0; i < ctx->n_inputs; i++) {
    const tb_value_type *x = tb_nn_ranked(ctx, i);
    if (!x) return TB_OK;
    ranks[i] = x->ndim;
    for (size_t k = 0; k < x->ndim; k++) dim_values[i][k] = x->dims[k].value;
    dims[i] = dim_values[i];
  }
  nn_einsum e;
  int64_t sizes[NN_EINSUM_LABELS];
  st = tb_nn_einsum_parse(p.equation, ctx->n_inputs, ranks, &e);
  if (st == TB_OK) st = tb_nn_einsum_sizes(&e, dims, sizes);
  if (st != TB_OK) return tb_node_name_error(ctx->graph, ctx->node, st);
  tb_nn_out_rank(&ctx->out[0], ctx->in[0]->dtype, e.out_rank);
  for (size_t k = 0; k < e.out_rank; k++) ctx->out[0].dims[k] = tb_nn_dim(sizes[e.out_label[k]]);
  return TB_OK;
}

const tb_op_def tb_op_einsum = {"", "Einsum", 12, 1, -1, 1, 1, 0, einsum_infer, sizeof(tb_einsum_params), tb_einsum_params_parse};
