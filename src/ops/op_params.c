/* Typed parameters seen from inference (see op_params.h). */
#include "ops/op_params.h"
#include <stdlib.h>
#include <string.h>
#include "core/error.h"

/* A fused op (domain "tb") runs its base op's inference, whose parameters lead its own block
 * (tb_fused_conv_params starts with tb_conv_params): the base reads that prefix. */
static bool prefix_of(const tb_op_def *def, size_t size) {
  return def->params_size == size || (def->params_size > size && strcmp(def->domain, "tb") == 0);
}

tb_status tb_infer_params(const tb_infer_ctx *ctx, void *out, size_t size) {
  const tb_node *n = ctx->node;
  memset(out, 0, size);
  if (!n->def || !n->def->parse || !prefix_of(n->def, size))
    return tb_infer_error(ctx, TB_ERR_INTERNAL, "its definition parses no %zu-byte parameters", size);
  if (n->params && n->n_attrs == 0) {
    memcpy(out, n->params, size);
    return TB_OK;
  }
  if (n->def->params_size == size) return n->def->parse(ctx->graph, n, out);
  void *whole = calloc(1, n->def->params_size);
  if (!whole) return tb_infer_error(ctx, TB_ERR_OUT_OF_MEMORY, "out of host memory for its %zu bytes of parameters", n->def->params_size);
  tb_status st = n->def->parse(ctx->graph, n, whole);
  if (st == TB_OK) memcpy(out, whole, size);
  free(whole);
  return st;
}

tb_status tb_infer_stand_in(tb_node *n, const char *domain, const char *op_type, int opset, const void *params,
                            size_t n_inputs, size_t n_outputs) {
  memset(n, 0, sizeof *n);
  n->name = "";
  n->op_type = op_type;
  n->domain = domain ? domain : "";
  n->opset = opset;
  n->params = params;
  n->n_inputs = n_inputs;
  n->n_outputs = n_outputs;
  n->def = tb_op_find(n->domain, op_type, opset);
  if (!n->def || !n->def->infer)
    return tb_error(TB_ERR_INTERNAL, "node (%s): no definition of %s at opset %d to infer its outputs", op_type, op_type,
                    opset);
  if (n->def->params_size && !params)
    return tb_error(TB_ERR_INTERNAL, "node (%s): the kernel got no parsed parameters (they are parsed at prepare)",
                    op_type);
  return TB_OK;
}
