/* Helpers for the control-flow operators' inference (see control_util.h). */
#include "ops/control/control_util.h"
#include <string.h>

static const char *kind_name(tb_value_kind kind) {
  switch (kind) {
    case TB_VALUE_SEQUENCE: return "a sequence";
    case TB_VALUE_OPTIONAL: return "an optional";
    case TB_VALUE_MAP: return "a map";
    default: return "a non-tensor value";
  }
}

tb_status tb_control_tensors_only(const tb_infer_ctx *ctx, const tb_graph *body, const char *attr) {
  for (size_t i = 0; i < ctx->n_inputs; i++) {
    if (ctx->in[i] && ctx->in[i]->kind != TB_VALUE_TENSOR)
      return tb_infer_error(ctx, TB_ERR_UNSUPPORTED, "input %zu is %s; only tensors are supported in control flow", i,
                            kind_name(ctx->in[i]->kind));
  }
  for (size_t i = 0; i < body->n_inputs; i++) {
    const tb_value *v = &body->values[body->inputs[i]];
    if (v->type.kind != TB_VALUE_TENSOR)
      return tb_infer_error(ctx, TB_ERR_UNSUPPORTED, "%s input '%s' is %s; only tensors are supported in control flow",
                            attr, v->name, kind_name(v->type.kind));
  }
  for (size_t i = 0; i < body->n_outputs; i++) {
    const tb_value *v = &body->values[body->outputs[i]];
    if (v->type.kind != TB_VALUE_TENSOR)
      return tb_infer_error(ctx, TB_ERR_UNSUPPORTED, "%s output '%s' is %s; only tensors are supported in control flow",
                            attr, v->name, kind_name(v->type.kind));
  }
  return TB_OK;
}

const tb_value_type *tb_control_body_output(const tb_graph *body, size_t i) {
  return &body->values[body->outputs[i]].type;
}

tb_status tb_control_merge(const tb_infer_ctx *ctx, const char *what, const tb_value_type *a, const tb_value_type *b,
                           tb_value_type *out) {
  memset(out, 0, sizeof *out);
  out->kind = TB_VALUE_TENSOR;
  if (a->has_dtype && b->has_dtype && a->dtype != b->dtype)
    return tb_infer_error(ctx, TB_ERR_MODEL, "%s is %s on one path and %s on the other", what, tb_dtype_name(a->dtype),
                          tb_dtype_name(b->dtype));
  out->has_dtype = a->has_dtype || b->has_dtype;
  out->dtype = a->has_dtype ? a->dtype : b->dtype;
  if (!a->has_shape || !b->has_shape || a->ndim != b->ndim) return TB_OK;
  out->has_shape = true;
  out->ndim = a->ndim;
  for (size_t d = 0; d < a->ndim; d++) {
    bool same_value = a->dims[d].value >= 0 && a->dims[d].value == b->dims[d].value;
    bool same_symbol = a->dims[d].symbol >= 0 && a->dims[d].symbol == b->dims[d].symbol;
    out->dims[d].value = same_value ? a->dims[d].value : -1;
    out->dims[d].symbol = same_symbol && !same_value ? a->dims[d].symbol : -1;
  }
  return TB_OK;
}
