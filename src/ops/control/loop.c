/* Loop: run a body while a trip count M and a condition allow (ONNX Loop-1, -11, -13, -16). Inputs
 * [M (int64 scalar)], [cond (bool)], then N loop-carried initial values; the body takes (iteration
 * number, condition, N carried values) and returns (condition, N carried values, K scan outputs). The
 * node's outputs are the N final carried values and the K scan outputs, each the body's per-iteration
 * values stacked along a new first axis. Sequence and optional values are refused as unsupported. */
#include <stdio.h>
#include "ops/op_params.h"
#include "ops/control/control_util.h"
#include "ops/control/control_params.h"

static tb_status infer_loop(tb_infer_ctx *ctx) {
  tb_status st;
  if (ctx->n_inputs < 2) return tb_infer_error(ctx, TB_ERR_MODEL, "needs the inputs M and cond (either may be empty)");
  if (ctx->in[0] && (st = tb_infer_require(ctx, 0, TB_DTYPE_BIT(TB_DTYPE_I64))) != TB_OK) return st;
  if (ctx->in[1] && (st = tb_infer_require(ctx, 1, TB_DTYPE_BIT(TB_DTYPE_BOOL))) != TB_OK) return st;
  tb_loop_params p = {0};
  if ((st = tb_infer_params(ctx, &p, sizeof p)) != TB_OK) return st;
  const tb_graph *body = p.body;
  if ((st = tb_control_tensors_only(ctx, body, "body")) != TB_OK) return st;
  size_t carried = ctx->n_inputs - 2;
  if (body->n_inputs != carried + 2)
    return tb_infer_error(ctx, TB_ERR_MODEL, "the body takes %zu inputs, expected %zu (iteration number, condition, %zu carried)",
                          body->n_inputs, carried + 2, carried);
  if (body->n_outputs < carried + 1)
    return tb_infer_error(ctx, TB_ERR_MODEL, "the body returns %zu outputs, expected at least %zu (condition, %zu carried)",
                          body->n_outputs, carried + 1, carried);
  size_t scans = body->n_outputs - 1 - carried;
  if (ctx->n_outputs > carried + scans)
    return tb_infer_error(ctx, TB_ERR_MODEL, "the node has %zu outputs but the body gives %zu carried and %zu scan outputs",
                          ctx->n_outputs, carried, scans);
  /* A for loop (no cond input) with a constant M runs exactly M times: the scan outputs' first dim. */
  int64_t trips = -1;
  if (!ctx->in[1] && ctx->value[0] && tb_ir_tensor_numel(ctx->value[0]) == 1) {
    trips = tb_ir_tensor_int(ctx->value[0], 0);
    if (trips < 0) trips = 0;
  }
  for (size_t o = 0; o < ctx->n_outputs; o++) {
    const tb_value_type *from_body = tb_control_body_output(body, 1 + o);
    tb_value_type *out = &ctx->out[o];
    if (o < carried) {
      char what[48];
      snprintf(what, sizeof what, "loop-carried value %zu", o);
      const tb_value_type *initial = ctx->in[2 + o];
      if (!initial) return tb_infer_error(ctx, TB_ERR_MODEL, "loop-carried input %zu is empty", o);
      if ((st = tb_control_merge(ctx, what, initial, from_body, out)) != TB_OK) return st;
      continue;
    }
    *out = *from_body;
    out->kind = TB_VALUE_TENSOR;
    if (!from_body->has_shape) continue;
    if (from_body->ndim + 1 > TB_MAX_DIMS)
      return tb_infer_error(ctx, TB_ERR_UNSUPPORTED, "scan output %zu would have more than %d dimensions", o - carried,
                            TB_MAX_DIMS);
    out->ndim = from_body->ndim + 1;
    for (size_t d = from_body->ndim; d > 0; d--) out->dims[d] = from_body->dims[d - 1];
    out->dims[0].value = trips;
    out->dims[0].symbol = -1;
  }
  return TB_OK;
}

const tb_op_def tb_op_loop = {"", "Loop", 1, 2, -1, 1, -1, 1u << 0, infer_loop, sizeof(tb_loop_params), tb_loop_parse};
