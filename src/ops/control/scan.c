/* Scan: iterate a body over slices of its scan inputs along chosen axes and directions, threading N
 * state values through, and stack the body's K per-iteration outputs (ONNX Scan-9, -11, -16), and
 * Scan-8, where every input has a batch axis first and an optional sequence_lens input leads. */
#include <stdio.h>
#include "ops/op_params.h"
#include "ops/control/control_util.h"
#include "ops/control/control_params.h"

/* type = [lead dims...] + body type (unknown rank stays unknown). */
static tb_status prefixed(const tb_infer_ctx *ctx, const tb_value_type *body, const tb_dim *lead, size_t n_lead,
                          tb_value_type *out) {
  *out = *body;
  out->kind = TB_VALUE_TENSOR;
  if (!body->has_shape) return TB_OK;
  if (body->ndim + n_lead > TB_MAX_DIMS)
    return tb_infer_error(ctx, TB_ERR_UNSUPPORTED, "an output would have more than %d dimensions", TB_MAX_DIMS);
  out->ndim = body->ndim + n_lead;
  for (size_t d = 0; d < out->ndim; d++) out->dims[d] = d < n_lead ? lead[d] : body->dims[d - n_lead];
  return TB_OK;
}

/* Scan-8: inputs [sequence_lens], N states [batch, ...], M scan inputs [batch, sequence, ...]; outputs N
 * states [batch, ...] and K scan outputs [batch, sequence, ...]. */
static tb_status infer_scan8(tb_infer_ctx *ctx) {
  tb_scan_params a = {0};
  tb_status st = tb_infer_params(ctx, &a, sizeof a);
  if (st == TB_OK) st = tb_control_tensors_only(ctx, a.body, "body");
  if (st != TB_OK) return st;
  const tb_graph *body = a.body;
  size_t n_state = a.n_state;
  if (ctx->in[0] && (st = tb_infer_require(ctx, 0, TB_DTYPE_BIT(TB_DTYPE_I64))) != TB_OK) return st;
  tb_dim lead[2] = {{-1, -1}, {-1, -1}};
  for (size_t i = 1; i < ctx->n_inputs; i++) {
    const tb_value_type *in = ctx->in[i];
    if (!in) return tb_infer_error(ctx, TB_ERR_MODEL, "input %zu is empty", i);
    bool scanned = i > n_state;
    if (!in->has_shape) continue;
    if (in->ndim < (scanned ? 2u : 1u))
      return tb_infer_error(ctx, TB_ERR_MODEL, "input %zu must have a batch axis%s", i, scanned ? " and a sequence axis" : "");
    if (lead[0].value < 0) lead[0] = in->dims[0];
    if (scanned && lead[1].value < 0) lead[1] = in->dims[1];
  }
  if (ctx->n_outputs > body->n_outputs)
    return tb_infer_error(ctx, TB_ERR_MODEL, "the node has %zu outputs but the body gives %zu", ctx->n_outputs, body->n_outputs);
  for (size_t o = 0; o < ctx->n_outputs; o++) {
    bool state = o < n_state;
    tb_value_type from_body;
    if ((st = prefixed(ctx, tb_control_body_output(body, o), lead, state ? 1 : 2, &from_body)) != TB_OK) return st;
    if (!state) {
      ctx->out[o] = from_body;
      continue;
    }
    char what[48];
    snprintf(what, sizeof what, "state %zu", o);
    if ((st = tb_control_merge(ctx, what, ctx->in[1 + o], &from_body, &ctx->out[o])) != TB_OK) return st;
  }
  return TB_OK;
}

static tb_status infer_scan(tb_infer_ctx *ctx) {
  tb_scan_params a = {0};
  tb_status st = tb_infer_params(ctx, &a, sizeof a);
  if (st != TB_OK) return st;
  if ((st = tb_control_tensors_only(ctx, a.body, "body")) != TB_OK) return st;
  if (ctx->n_outputs > a.n_state + a.n_scan_out)
    return tb_infer_error(ctx, TB_ERR_MODEL, "the node has %zu outputs but the body gives %zu states and %zu scan outputs",
                          ctx->n_outputs, a.n_state, a.n_scan_out);
  tb_dim length = {-1, -1};
  for (size_t j = 0; j < a.n_scan_in; j++) {
    const tb_value_type *in = ctx->in[a.n_state + j];
    if (!in) return tb_infer_error(ctx, TB_ERR_MODEL, "scan input %zu is empty", j);
    if (!in->has_shape) continue;
    size_t axis = 0;
    if ((st = tb_infer_axis(ctx, "scan_input_axes", tb_scan_attr_at(a.in_axes, j), in->ndim, &axis)) != TB_OK) return st;
    tb_dim d = in->dims[axis];
    if (length.value >= 0 && d.value >= 0 && d.value != length.value)
      return tb_infer_error(ctx, TB_ERR_MODEL, "scan input %zu has %lld iterations along its axis, the first has %lld", j,
                            (long long)d.value, (long long)length.value);
    if (length.value < 0 && (d.value >= 0 || length.symbol < 0)) length = d;
  }
  for (size_t o = 0; o < ctx->n_outputs; o++) {
    const tb_value_type *from_body = tb_control_body_output(a.body, o);
    tb_value_type *out = &ctx->out[o];
    if (o < a.n_state) {
      char what[48];
      snprintf(what, sizeof what, "state %zu", o);
      if (!ctx->in[o]) return tb_infer_error(ctx, TB_ERR_MODEL, "state input %zu is empty", o);
      if ((st = tb_control_merge(ctx, what, ctx->in[o], from_body, out)) != TB_OK) return st;
      continue;
    }
    *out = *from_body;
    out->kind = TB_VALUE_TENSOR;
    if (!from_body->has_shape) continue;
    size_t k = o - a.n_state, rank = from_body->ndim + 1, axis = 0;
    if (rank > TB_MAX_DIMS)
      return tb_infer_error(ctx, TB_ERR_UNSUPPORTED, "scan output %zu would have more than %d dimensions", k, TB_MAX_DIMS);
    if ((st = tb_infer_axis(ctx, "scan_output_axes", tb_scan_attr_at(a.out_axes, k), rank, &axis)) != TB_OK) return st;
    out->ndim = rank;
    for (size_t d = 0, s = 0; d < rank; d++) out->dims[d] = d == axis ? length : from_body->dims[s++];
  }
  return TB_OK;
}

const tb_op_def tb_op_scan8 = {"", "Scan", 8, 2, -1, 1, -1, 0, infer_scan8, sizeof(tb_scan_params), tb_scan8_parse};
const tb_op_def tb_op_scan = {"", "Scan", 9, 1, -1, 1, -1, 0, infer_scan, sizeof(tb_scan_params), tb_scan_parse};
