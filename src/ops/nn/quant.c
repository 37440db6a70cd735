/* QuantizeLinear and DequantizeLinear (per tensor, or per axis from opset 13 with a 1-D scale along
 * `axis`), and MatMulInteger / QLinearMatMul (numpy matmul shapes on 8-bit integers). */
#include <string.h>
#include "ops/op_params.h"
#include "ops/nn/nn_infer.h"
#include "ops/nn/nn_params.h"

#define Q8 (TB_DTYPE_BIT(TB_DTYPE_U8) | TB_DTYPE_BIT(TB_DTYPE_I8))

tb_status tb_quant_parse(const tb_graph *g, const tb_node *n, void *params) {
  tb_quant_params *p = params;
  p->per_axis = n->opset >= 13;
  return tb_attr_int(g, n, "axis", 1, &p->axis);
}

/* Check a 1-D scale / zero point against X's axis when both are known. */
static tb_status check_axis_param(tb_infer_ctx *ctx, const tb_quant_params *q, size_t input, const tb_value_type *x) {
  const tb_value_type *p = tb_nn_ranked(ctx, input);
  if (!p || !x || p->ndim == 0 || (p->ndim == 1 && p->dims[0].value == 1)) return TB_OK;
  if (p->ndim > 1) return tb_infer_error(ctx, TB_ERR_MODEL, "input %zu must be a scalar or 1-D (got rank %zu)", input, p->ndim);
  if (!q->per_axis)
    return tb_infer_error(ctx, TB_ERR_MODEL, "input %zu is 1-D; per-axis quantization needs opset 13", input);
  size_t a;
  tb_status st = tb_infer_axis(ctx, "axis", q->axis, x->ndim, &a);
  if (st != TB_OK) return st;
  if (p->dims[0].value >= 0 && x->dims[a].value >= 0 && p->dims[0].value != x->dims[a].value)
    return tb_infer_error(ctx, TB_ERR_MODEL, "input %zu has %lld values for axis %zu of size %lld", input,
                          (long long)p->dims[0].value, a, (long long)x->dims[a].value);
  return TB_OK;
}

/* The scale (input 1) and the zero point (input 2, when given) fit x's axis; the output is x's shape in
 * dtype `out`. */
static tb_status q_infer_out(tb_infer_ctx *ctx, bool has_zp, tb_dtype out) {
  const tb_value_type *x = tb_nn_ranked(ctx, 0);
  tb_quant_params q;
  memset(&q, 0, sizeof q);
  tb_status st = tb_infer_params(ctx, &q, sizeof q);
  if (st == TB_OK) st = check_axis_param(ctx, &q, 1, x);
  if (st == TB_OK && has_zp) st = check_axis_param(ctx, &q, 2, x);
  if (st != TB_OK) return st;
  tb_infer_same(ctx->in[0], &ctx->out[0]);
  ctx->out[0].dtype = out;
  return TB_OK;
}

static tb_status quantize_infer(tb_infer_ctx *ctx) {
  tb_status st = tb_infer_require(ctx, 0, NN_FLOATS | TB_DTYPE_BIT(TB_DTYPE_I32));
  if (st == TB_OK) st = tb_infer_require(ctx, 1, NN_FLOATS);
  bool has_zp = ctx->n_inputs > 2 && ctx->in[2];
  if (st == TB_OK && has_zp) st = tb_infer_require(ctx, 2, Q8);
  if (st != TB_OK) return st;
  return q_infer_out(ctx, has_zp, has_zp ? ctx->in[2]->dtype : TB_DTYPE_U8);
}

static tb_status dequantize_infer(tb_infer_ctx *ctx) {
  tb_status st = tb_infer_require(ctx, 0, Q8 | TB_DTYPE_BIT(TB_DTYPE_I32));
  if (st == TB_OK) st = tb_infer_require(ctx, 1, NN_FLOATS);
  bool has_zp = ctx->n_inputs > 2 && ctx->in[2];
  if (st == TB_OK && has_zp) st = tb_infer_require(ctx, 2, TB_DTYPE_BIT(ctx->in[0]->dtype));
  if (st != TB_OK) return st;
  return q_infer_out(ctx, has_zp, ctx->in[1]->dtype);
}

static tb_status matmul_q_infer(tb_infer_ctx *ctx, size_t a_in, size_t b_in, tb_dtype out_dtype) {
  tb_status st = tb_infer_require(ctx, a_in, Q8);
  if (st == TB_OK) st = tb_infer_require(ctx, b_in, Q8);
  if (st != TB_OK) return st;
  tb_nn_out_unranked(&ctx->out[0], out_dtype);
  const tb_value_type *a = tb_nn_ranked(ctx, a_in), *b = tb_nn_ranked(ctx, b_in);
  if (!a || !b) return TB_OK;
  st = tb_nn_matmul_shape(ctx, a, b, &ctx->out[0]);
  ctx->out[0].has_dtype = true;
  ctx->out[0].dtype = out_dtype;
  return st;
}

static tb_status matmul_integer_infer(tb_infer_ctx *ctx) { return matmul_q_infer(ctx, 0, 1, TB_DTYPE_I32); }

static tb_status qlinear_matmul_infer(tb_infer_ctx *ctx) {
  tb_status st = tb_infer_require(ctx, 7, Q8);
  if (st != TB_OK) return st;
  return matmul_q_infer(ctx, 0, 3, ctx->in[7]->dtype);
}

const tb_op_def tb_op_quantize_linear = {"", "QuantizeLinear", 10, 2, 3, 1, 1, 0, quantize_infer, sizeof(tb_quant_params), tb_quant_parse};
const tb_op_def tb_op_dequantize_linear = {"", "DequantizeLinear", 10, 2, 3, 1, 1, 0, dequantize_infer, sizeof(tb_quant_params), tb_quant_parse};
const tb_op_def tb_op_matmul_integer = {"", "MatMulInteger", 10, 2, 4, 1, 1, 0, matmul_integer_infer, 0, NULL};
const tb_op_def tb_op_qlinear_matmul = {"", "QLinearMatMul", 10, 8, 8, 1, 1, 0, qlinear_matmul_infer, 0, NULL};
