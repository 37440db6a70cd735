/* Binary arithmetic: Add, Sub, Mul, Div, Pow, Mod, BitShift. Numpy (multidirectional) broadcasting
 * from opset 7; before it the legacy broadcast/axis attributes (ew_infer.c).
 *
 * Integer Div and Mod by zero are undefined in ONNX; TensorBridge defines them as 0 (no trap), and
 * INT_MIN / -1 as INT_MIN (two's complement wrap), INT_MIN % -1 as 0. */
#include "ops/op_params.h"
#include "ops/elementwise/ew_infer.h"
#include "ops/elementwise/ew_params.h"

static tb_status infer_arith(tb_infer_ctx *ctx) { return tb_ew_infer_binary(ctx, EW_NUMERIC, EW_NUMERIC, false); }

const tb_op_def tb_op_add = {"", "Add", 1, 2, 2, 1, 1, 0, infer_arith, sizeof(tb_binary_params), tb_binary_parse};
const tb_op_def tb_op_sub = {"", "Sub", 1, 2, 2, 1, 1, 0, infer_arith, sizeof(tb_binary_params), tb_binary_parse};
const tb_op_def tb_op_mul = {"", "Mul", 1, 2, 2, 1, 1, 0, infer_arith, sizeof(tb_binary_params), tb_binary_parse};
const tb_op_def tb_op_div = {"", "Div", 1, 2, 2, 1, 1, 0, infer_arith, sizeof(tb_binary_params), tb_binary_parse};

/* Pow: base T (floats, and int32/int64 from opset 12), exponent T1 (any numeric from opset 12; the
 * same as T before); output T. */
static tb_status infer_pow(tb_infer_ctx *ctx) {
  tb_dtype_set base = EW_FLOATS | EW_BIT(I32) | EW_BIT(I64);
  tb_status st = tb_ew_check(ctx, 0, base, base);
  if (st == TB_OK) st = tb_ew_check(ctx, 1, EW_NUMERIC, EW_NUMERIC);
  if (st != TB_OK) return st;
  if (ctx->node->opset < 12) {
    st = tb_ew_same_dtype(ctx, 0, 1);
    if (st != TB_OK) return st;
  }
  if (ctx->node->opset < 7) return tb_ew_infer_binary(ctx, base, base, false);
  return tb_ew_broadcast(ctx, 0, 2, ctx->in[0]->dtype);
}
const tb_op_def tb_op_pow = {"", "Pow", 1, 2, 2, 1, 1, 0, infer_pow, sizeof(tb_binary_params), tb_binary_parse};

/* Mod: fmod=0 is the integer modulus with the divisor's sign (Python's %); fmod=1 is C's fmod (the
 * dividend's sign) and is required for floats. */
static tb_status infer_mod(tb_infer_ctx *ctx) {
  tb_status st = tb_ew_infer_binary(ctx, EW_NUMERIC, EW_NUMERIC, false);
  if (st != TB_OK) return st;
  tb_mod_params p = {0};
  if ((st = tb_infer_params(ctx, &p, sizeof p)) != TB_OK) return st;
  if (!p.fmod && (EW_FLOATS & TB_DTYPE_BIT(ctx->in[0]->dtype)))
    return tb_infer_error(ctx, TB_ERR_MODEL, "fmod=0 on %s inputs; floating-point Mod needs fmod=1",
                          tb_dtype_name(ctx->in[0]->dtype));
  return TB_OK;
}
const tb_op_def tb_op_mod = {"", "Mod", 10, 2, 2, 1, 1, 0, infer_mod, sizeof(tb_mod_params), tb_mod_parse};

/* BitShift: unsigned integers (TensorBridge has u8 of them); direction "LEFT" or "RIGHT". A shift by the
 * bit width or more gives 0. */
static tb_status infer_bitshift(tb_infer_ctx *ctx) {
  tb_status st = tb_ew_infer_binary(ctx, EW_BIT(U8), EW_BIT(U8), false);
  if (st != TB_OK) return st;
  tb_bitshift_params p = {0};
  return tb_infer_params(ctx, &p, sizeof p);
}
const tb_op_def tb_op_bitshift = {"", "BitShift", 11, 2, 2, 1, 1, 0, infer_bitshift, sizeof(tb_bitshift_params), tb_bitshift_parse};
