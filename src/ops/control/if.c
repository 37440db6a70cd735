/* If: run then_branch or else_branch by a boolean condition (ONNX If-1, -11, -13, -16). The branches
 * may give outputs of different shapes: what prepare knows is their merge (unknown where they differ),
 * and the kernel makes the outputs from the branch it ran. Sequence and optional outputs (If-13/16
 * features) are refused as unsupported. */
#include <stdio.h>
#include "ops/op_params.h"
#include "ops/control/control_util.h"
#include "ops/control/control_params.h"

static tb_status infer_if(tb_infer_ctx *ctx) {
  tb_status st = tb_infer_require(ctx, 0, TB_DTYPE_BIT(TB_DTYPE_BOOL));
  if (st != TB_OK) return st;
  const tb_value_type *cond = ctx->in[0];
  if (cond->has_shape) {
    for (size_t d = 0; d < cond->ndim; d++)
      if (cond->dims[d].value > 1)
        return tb_infer_error(ctx, TB_ERR_MODEL, "the condition must have one element, its dimension %zu is %lld", d,
                              (long long)cond->dims[d].value);
  }
  tb_if_params p = {0};
  if ((st = tb_infer_params(ctx, &p, sizeof p)) != TB_OK) return st;
  const tb_graph *then_g = p.then_branch, *else_g = p.else_branch;
  if ((st = tb_control_tensors_only(ctx, then_g, "then_branch")) != TB_OK) return st;
  if ((st = tb_control_tensors_only(ctx, else_g, "else_branch")) != TB_OK) return st;
  if (then_g->n_outputs != else_g->n_outputs)
    return tb_infer_error(ctx, TB_ERR_MODEL, "then_branch has %zu outputs but else_branch has %zu", then_g->n_outputs,
                          else_g->n_outputs);
  if (ctx->n_outputs != then_g->n_outputs)
    return tb_infer_error(ctx, TB_ERR_MODEL, "the node has %zu outputs but its branches have %zu", ctx->n_outputs,
                          then_g->n_outputs);
  for (size_t o = 0; o < ctx->n_outputs; o++) {
    char what[48];
    snprintf(what, sizeof what, "output %zu", o);
    st = tb_control_merge(ctx, what, tb_control_body_output(then_g, o), tb_control_body_output(else_g, o), &ctx->out[o]);
    if (st != TB_OK) return st;
  }
  return TB_OK;
}

const tb_op_def tb_op_if = {"", "If", 1, 1, 1, 1, -1, 0, infer_if, sizeof(tb_if_params), tb_if_parse};
