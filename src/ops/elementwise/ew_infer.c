/* Infer helpers shared by the elementwise operators (see ew_infer.h). */
#include "ops/op_params.h"
#include "ops/elementwise/ew_infer.h"
#include "ops/elementwise/ew_params.h"
#include <stdio.h>
#include "ops/op_probe.h"

static void dtype_list(tb_dtype_set set, char *buf, size_t cap) {
  size_t len = 0;
  buf[0] = '\0';
  for (int d = 0; d < TB_DTYPE_COUNT && len < cap; d++)
    if (set & TB_DTYPE_BIT(d))
      len += (size_t)snprintf(buf + len, cap - len, "%s%s", len ? ", " : "", tb_dtype_name((tb_dtype)d));
}

tb_status tb_ew_check(const tb_infer_ctx *ctx, size_t i, tb_dtype_set allowed, tb_dtype_set implemented) {
  tb_status st = tb_infer_require(ctx, i, 0);
  if (st != TB_OK) return st;
  tb_dtype d = ctx->in[i]->dtype;
  char list[256];
  if (!(allowed & implemented & TB_DTYPE_BIT(d))) tb_op_probe_refused(i, allowed & implemented);
  if (!(allowed & TB_DTYPE_BIT(d))) {
    dtype_list(allowed, list, sizeof list);
    return tb_infer_error(ctx, TB_ERR_MODEL, "input %zu has element type %s, which %s does not accept (it takes %s)", i,
                          tb_dtype_name(d), ctx->node->op_type, list);
  }
  if (!(implemented & TB_DTYPE_BIT(d))) {
    dtype_list(implemented, list, sizeof list);
    return tb_infer_error(ctx, TB_ERR_UNSUPPORTED,
                          "%s on %s tensors is valid ONNX but not implemented by TensorBridge (implemented: %s)",
                          ctx->node->op_type, tb_dtype_name(d), list);
  }
  return TB_OK;
}

tb_status tb_ew_same_dtype(const tb_infer_ctx *ctx, size_t first, size_t last) {
  const tb_value_type *ref = ctx->in[first];
  for (size_t i = first + 1; i <= last && i < ctx->n_inputs; i++) {
    const tb_value_type *t = ctx->in[i];
    if (!t || !t->has_dtype || !ref || !ref->has_dtype) continue;
    if (t->dtype != ref->dtype)
      return tb_infer_error(ctx, TB_ERR_MODEL, "input %zu has element type %s but input %zu has %s; they must match", i,
                            tb_dtype_name(t->dtype), first, tb_dtype_name(ref->dtype));
  }
  return TB_OK;
}

tb_status tb_ew_broadcast(const tb_infer_ctx *ctx, size_t first, size_t n, tb_dtype dtype) {
  tb_value_type acc;
  bool have = false;
  for (size_t i = first; i < first + n && i < ctx->n_inputs; i++) {
    if (!ctx->in[i]) continue;
    if (!have) {
      acc = *ctx->in[i];
      have = true;
      continue;
    }
    tb_value_type next;
    tb_status st = tb_infer_broadcast(ctx, &acc, ctx->in[i], &next);
    if (st != TB_OK) return st;
    acc = next;
  }
  if (!have) return tb_infer_error(ctx, TB_ERR_MODEL, "no input is given");
  acc.kind = TB_VALUE_TENSOR;
  acc.has_dtype = true;
  acc.dtype = dtype;
  ctx->out[0] = acc;
  return TB_OK;
}

tb_status tb_ew_infer_unary(tb_infer_ctx *ctx, tb_dtype_set allowed, tb_dtype_set implemented) {
  tb_status st = tb_ew_check(ctx, 0, allowed, implemented);
  if (st != TB_OK) return st;
  tb_infer_same(ctx->in[0], &ctx->out[0]);
  return TB_OK;
}

/* Opset < 7 with broadcast=1: B's dims, placed at `axis` of A (default: as a suffix), each equal to A's
 * or 1. The output is A's type. */
static tb_status legacy_broadcast(tb_infer_ctx *ctx, tb_dtype dtype) {
  tb_binary_params p = {0};
  tb_status st = tb_infer_params(ctx, &p, sizeof p);
  if (st != TB_OK) return st;
  const tb_value_type *a = ctx->in[0], *b = ctx->in[1];
  if (!p.broadcast) {
    /* The old rule: same shapes. Numpy broadcasting of equal shapes gives the same result. */
    if (a->has_shape && b->has_shape && a->ndim != b->ndim)
      return tb_infer_error(ctx, TB_ERR_MODEL, "inputs of rank %zu and %zu need broadcast=1 at opset %d", a->ndim,
                            b->ndim, ctx->node->opset);
    return tb_ew_broadcast(ctx, 0, 2, dtype);
  }
  ctx->out[0] = *a;
  ctx->out[0].dtype = dtype;
  if (!a->has_shape || !b->has_shape) return TB_OK;
  if (b->ndim > a->ndim)
    return tb_infer_error(ctx, TB_ERR_MODEL, "with broadcast=1, B has rank %zu, above A's %zu", b->ndim, a->ndim);
  int64_t axis = p.has_axis ? p.axis : (int64_t)(a->ndim - b->ndim);
  if (axis < 0) axis += (int64_t)a->ndim;
  if (axis < 0 || (size_t)axis + b->ndim > a->ndim)
    return tb_infer_error(ctx, TB_ERR_MODEL, "axis %lld does not place B (rank %zu) inside A (rank %zu)", (long long)axis,
                          b->ndim, a->ndim);
  for (size_t d = 0; d < b->ndim; d++) {
    int64_t bd = b->dims[d].value, ad = a->dims[(size_t)axis + d].value;
    if (bd >= 0 && ad >= 0 && bd != ad && bd != 1)
      return tb_infer_error(ctx, TB_ERR_MODEL, "B's dimension %zu (%lld) does not match A's dimension %lld (%lld)", d,
                            (long long)bd, (long long)axis + (long long)d, (long long)ad);
  }
  return TB_OK;
}

tb_status tb_ew_infer_binary(tb_infer_ctx *ctx, tb_dtype_set allowed, tb_dtype_set implemented, bool bool_out) {
  tb_status st = tb_ew_check(ctx, 0, allowed, implemented);
  if (st == TB_OK) st = tb_ew_check(ctx, 1, allowed, implemented);
  if (st == TB_OK) st = tb_ew_same_dtype(ctx, 0, 1);
  if (st != TB_OK) return st;
  tb_dtype out = bool_out ? TB_DTYPE_BOOL : ctx->in[0]->dtype;
  if (ctx->node->opset < 7) return legacy_broadcast(ctx, out);
  return tb_ew_broadcast(ctx, 0, 2, out);
}

tb_status tb_ew_infer_variadic(tb_infer_ctx *ctx, tb_dtype_set allowed, tb_dtype_set implemented) {
  if (ctx->n_inputs == 0) return tb_infer_error(ctx, TB_ERR_MODEL, "needs at least one input");
  for (size_t i = 0; i < ctx->n_inputs; i++) {
    tb_status st = tb_ew_check(ctx, i, allowed, implemented);
    if (st != TB_OK) return st;
  }
  tb_status st = tb_ew_same_dtype(ctx, 0, ctx->n_inputs - 1);
  if (st != TB_OK) return st;
  return tb_ew_broadcast(ctx, 0, ctx->n_inputs, ctx->in[0]->dtype);
}
