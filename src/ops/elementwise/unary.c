/* Unary math: Sqrt, Exp, Log, Tanh, Erf, Neg, Reciprocal, Abs, Floor, Ceil, Round, Sin, Cos, Tan, Asin,
 * Acos, Atan, Sinh, Cosh, Asinh, Acosh, Atanh, Softsign, Sign, IsNaN, IsInf. Output of the input's type
 * (bool for IsNaN and IsInf). */
#include "ops/elementwise/ew_infer.h"
#include "ops/elementwise/ew_params.h"

static tb_status infer_float(tb_infer_ctx *ctx) { return tb_ew_infer_unary(ctx, EW_FLOATS, EW_FLOATS); }
/* Neg takes signed integers; Abs and Sign every numeric type. */
static tb_status infer_signed(tb_infer_ctx *ctx) { return tb_ew_infer_unary(ctx, EW_FLOATS | EW_SINTS, EW_FLOATS | EW_SINTS); }
static tb_status infer_numeric(tb_infer_ctx *ctx) { return tb_ew_infer_unary(ctx, EW_NUMERIC, EW_NUMERIC); }
/* Erf takes every numeric type from opset 13; TensorBridge computes it for floats only (erf of an
 * integer tensor has no use worth a kernel). */
static tb_status infer_erf(tb_infer_ctx *ctx) { return tb_ew_infer_unary(ctx, EW_NUMERIC, EW_FLOATS); }

static tb_status infer_bool_result(tb_infer_ctx *ctx) {
  tb_status st = tb_ew_infer_unary(ctx, EW_FLOATS, EW_FLOATS);
  if (st == TB_OK) ctx->out[0].dtype = TB_DTYPE_BOOL;
  return st;
}

#define FLOAT_OP(var, name, since) const tb_op_def tb_op_##var = {"", name, since, 1, 1, 1, 1, 0, infer_float, 0, NULL};
FLOAT_OP(sqrt, "Sqrt", 1)
FLOAT_OP(exp, "Exp", 1)
FLOAT_OP(log, "Log", 1)
FLOAT_OP(tanh, "Tanh", 1)
FLOAT_OP(reciprocal, "Reciprocal", 1)
FLOAT_OP(floor, "Floor", 1)
FLOAT_OP(ceil, "Ceil", 1)
FLOAT_OP(round, "Round", 11)
FLOAT_OP(sin, "Sin", 7)
FLOAT_OP(cos, "Cos", 7)
FLOAT_OP(tan, "Tan", 7)
FLOAT_OP(asin, "Asin", 7)
FLOAT_OP(acos, "Acos", 7)
FLOAT_OP(atan, "Atan", 7)
FLOAT_OP(sinh, "Sinh", 9)
FLOAT_OP(cosh, "Cosh", 9)
FLOAT_OP(asinh, "Asinh", 9)
FLOAT_OP(acosh, "Acosh", 9)
FLOAT_OP(atanh, "Atanh", 9)
FLOAT_OP(softsign, "Softsign", 1)

const tb_op_def tb_op_erf = {"", "Erf", 9, 1, 1, 1, 1, 0, infer_erf, 0, NULL};
const tb_op_def tb_op_neg = {"", "Neg", 1, 1, 1, 1, 1, 0, infer_signed, 0, NULL};
const tb_op_def tb_op_abs = {"", "Abs", 1, 1, 1, 1, 1, 0, infer_numeric, 0, NULL};
const tb_op_def tb_op_sign = {"", "Sign", 9, 1, 1, 1, 1, 0, infer_numeric, 0, NULL};
const tb_op_def tb_op_isnan = {"", "IsNaN", 9, 1, 1, 1, 1, 0, infer_bool_result, 0, NULL};
const tb_op_def tb_op_isinf = {"", "IsInf", 10, 1, 1, 1, 1, 0, infer_bool_result, sizeof(tb_isinf_params), tb_isinf_parse};
