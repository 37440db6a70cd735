/* tb::FusedConv, tb::FusedGemm, tb::FusedMatMul: Conv / Gemm / MatMul (their ONNX meaning, attributes and
 * inference) followed by an activation epilogue (attribute activation and activation_alpha/beta/min/max);
 * FusedConv may take a residual as input 3, added before the activation: Y = act(Conv(X, W, B) + R).
 * FusedMatMul may take a bias as input 2 (N values along the output's last axis, shape [N] or [1, .., N])
 * and a residual as input 3 (the output's shape and dtype): Y = act(MatMul(A, B) + bias + R), each add
 * rounded on its own. FusedMatMul and FusedGemm also take activation "Gelu" with activation_approximate
 * "none" (the default, erf) or "tanh", as tb::Gelu computes it. */
#include <stdio.h>
#include <string.h>
#include "ops/fused/fused_ops.h"
#include "ops/fused/fused_params.h"

static bool same_shape(const tb_value_type *a, const tb_value_type *b) {
  if (!a->has_shape || !b->has_shape) return true;
  if (a->ndim != b->ndim) return false;
  for (size_t d = 0; d < a->ndim; d++)
    if (a->dims[d].value >= 0 && b->dims[d].value >= 0 && a->dims[d].value != b->dims[d].value) return false;
  return true;
}

static void format_shape(const tb_value_type *t, char *buf, size_t cap) {
  size_t len = (size_t)snprintf(buf, cap, "[");
  for (size_t d = 0; d < t->ndim && len < cap; d++) {
    if (t->dims[d].value >= 0) len += (size_t)snprintf(buf + len, cap - len, "%s%lld", d ? ", " : "", (long long)t->dims[d].value);
    else len += (size_t)snprintf(buf + len, cap - len, "%s?", d ? ", " : "");
  }
  if (len < cap) snprintf(buf + len, cap - len, "]");
}

/* The residual (input 3) has the output's dtype and shape. */
static tb_status check_residual(tb_infer_ctx *ctx) {
  if (ctx->n_inputs < 4 || !ctx->in[3]) return TB_OK;
  const tb_value_type *r = ctx->in[3];
  if (r->has_dtype && ctx->out[0].has_dtype && r->dtype != ctx->out[0].dtype)
    return tb_infer_error(ctx, TB_ERR_MODEL, "the residual's dtype %s differs from the output's %s", tb_dtype_name(r->dtype),
                          tb_dtype_name(ctx->out[0].dtype));
  if (!same_shape(r, &ctx->out[0])) {
    char rs[96], ys[96];
    format_shape(r, rs, sizeof rs);
    format_shape(&ctx->out[0], ys, sizeof ys);
    return tb_infer_error(ctx, TB_ERR_MODEL, "the residual's shape %s differs from the output's %s", rs, ys);
  }
  return TB_OK;
}

/* The bias (input 2) has the output's dtype and N values along the output's last axis: every other dim 1,
 * rank at most the output's (so adding it never changes the output's shape). */
static tb_status check_bias(tb_infer_ctx *ctx) {
  if (ctx->n_inputs < 3 || !ctx->in[2]) return TB_OK;
  const tb_value_type *b = ctx->in[2], *y = &ctx->out[0];
  if (b->has_dtype && y->has_dtype && b->dtype != y->dtype)
    return tb_infer_error(ctx, TB_ERR_MODEL, "the bias's dtype %s differs from the output's %s", tb_dtype_name(b->dtype),
                          tb_dtype_name(y->dtype));
  if (!b->has_shape || !y->has_shape) return TB_OK;
  int64_t n = y->ndim ? y->dims[y->ndim - 1].value : 1;
  bool ok = b->ndim <= y->ndim && b->ndim >= 1;
  for (size_t d = 0; ok && d + 1 < b->ndim; d++) ok = b->dims[d].value < 0 || b->dims[d].value == 1;
  int64_t last = b->ndim ? b->dims[b->ndim - 1].value : 1;
  if (ok && last >= 0 && n >= 0) ok = last == n;
  if (ok) return TB_OK;
  char bs[96], ys[96];
  format_shape(b, bs, sizeof bs);
  format_shape(y, ys, sizeof ys);
  return tb_infer_error(ctx, TB_ERR_MODEL,
                        "the bias (input 2) has shape %s; expected %lld values along the last axis of the output %s "
                        "(shape [%lld] or [1, ..., %lld])",
                        bs, (long long)n, ys, (long long)n, (long long)n);
}

tb_status tb_fused_conv_parse(const tb_graph *g, const tb_node *n, void *params) {
  tb_fused_conv_params *p = params;
  tb_status st = tb_conv_parse(g, n, &p->conv);
  return st == TB_OK ? tb_activation_parse(g, n, false, &p->act) : st;
}

tb_status tb_fused_gemm_parse(const tb_graph *g, const tb_node *n, void *params) {
  tb_fused_gemm_params *p = params;
  tb_status st = tb_gemm_parse(g, n, &p->gemm);
  return st == TB_OK ? tb_activation_parse(g, n, true, &p->act) : st;
}

tb_status tb_fused_matmul_parse(const tb_graph *g, const tb_node *n, void *params) {
  tb_fused_matmul_params *p = params;
  return tb_activation_parse(g, n, true, &p->act);
}

/* The base op's inference (which parses the base op's attributes), then the whole fused parse. */
static tb_status fused_infer(tb_infer_ctx *ctx, const char *base, size_t n_base,
                             tb_status (*parse)(const tb_graph *, const tb_node *, void *)) {
  union {
    tb_fused_conv_params conv;
    tb_fused_gemm_params gemm;
    tb_fused_matmul_params matmul;
  } p;
  memset(&p, 0, sizeof p);
  tb_status st = tb_fused_base_infer(ctx, base, 1, n_base);
  return st == TB_OK ? parse(ctx->graph, ctx->node, &p) : st;
}

static tb_status fused_conv_infer(tb_infer_ctx *ctx) {
  tb_status st = fused_infer(ctx, "Conv", 3, tb_fused_conv_parse);
  return st == TB_OK ? check_residual(ctx) : st;
}

static tb_status fused_gemm_infer(tb_infer_ctx *ctx) { return fused_infer(ctx, "Gemm", 3, tb_fused_gemm_parse); }

static tb_status fused_matmul_infer(tb_infer_ctx *ctx) {
  tb_status st = fused_infer(ctx, "MatMul", 2, tb_fused_matmul_parse);
  if (st == TB_OK) st = check_bias(ctx);
  return st == TB_OK ? check_residual(ctx) : st;
}

const tb_op_def tb_op_fused_conv = {"tb", "FusedConv", 1, 2, 4, 1, 1, 0, fused_conv_infer, sizeof(tb_fused_conv_params), tb_fused_conv_parse};
const tb_op_def tb_op_fused_gemm = {"tb", "FusedGemm", 1, 2, 3, 1, 1, 0, fused_gemm_infer, sizeof(tb_fused_gemm_params), tb_fused_gemm_parse};
const tb_op_def tb_op_fused_matmul = {"tb", "FusedMatMul", 1, 2, 4, 1, 1, 0, fused_matmul_infer, sizeof(tb_fused_matmul_params), tb_fused_matmul_parse};
