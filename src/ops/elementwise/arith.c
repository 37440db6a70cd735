/* Binary arithmetic: Add, Sub, Mul, Div, Pow, Mod, BitShift. Numpy (multidirectional) broadcasting
 * from opset 7; before it the legacy broadcast/axis attributes (ew_infer.c).
 *
 * Integer Div and Mod by zero are undefined in ONNX; TensorBridge defines them as 0 (no trap), and
 * INT_MIN / -1 as INT_MIN (two's complement wrap), INT_MIN % -1 as 0. */
#include <string.h>
#include "ops/elementwise/ew_infer.h"

static tb_status infer_arith(tb_infer_ctx *ctx) { return tb_ew_infer_binary(ctx, EW_NUMERIC, EW_NUMERIC, false); }

const tb_op_def tb_op_add = {"", "Add", 1, 2, 2, 1, 1, 0, infer_arith, 0, NULL};
const tb_op_def tb_op_sub = {"", "Sub", 1, 2, 2, 1, 1, 0, infer_arith, 0, NULL};
const tb_op_def tb_op_mul = {"", "Mul", 1, 2, 2, 1, 1, 0, infer_arith, 0, NULL};
const tb_op_def tb_op_div = {"", "Div", 1, 2, 2, 1, 1, 0, infer_arith, 0, NULL};

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
const tb_op_def tb_op_pow = {"", "Pow", 1, 2, 2, 1, 1, 0, infer_pow, 0, NULL};

/* Mod: fmod=0 is the integer modulus with the divisor's sign (Python's %); fmod=1 is C's fmod (the
 * dividend's sign) and is required for floats. */
static tb_status infer_mod(tb_infer_ctx *ctx) {
  tb_status st = tb_ew_infer_binary(ctx, EW_NUMERIC, EW_NUMERIC, false);
  if (st != TB_OK) return st;
  int64_t fmod;
  st = tb_attr_int(ctx->graph, ctx->node, "fmod", 0, &fmod);
  if (st != TB_OK) return st;
  if (fmod != 0 && fmod != 1) return tb_infer_error(ctx, TB_ERR_MODEL, "attribute 'fmod' is %lld; it must be 0 or 1", (long long)fmod);
  if (fmod == 0 && (EW_FLOATS & TB_DTYPE_BIT(ctx->in[0]->dtype)))
    return tb_infer_error(ctx, TB_ERR_MODEL, "fmod=0 on %s inputs; floating-point Mod needs fmod=1",
                          tb_dtype_name(ctx->in[0]->dtype));
  return TB_OK;
}
const tb_op_def tb_op_mod = {"", "Mod", 10, 2, 2, 1, 1, 0, infer_mod, 0, NULL};

/* BitShift: unsigned integers (TensorBridge has u8 of them); direction "LEFT" or "RIGHT". A shift by the
 * bit width or more gives 0. */
static tb_status infer_bitshift(tb_infer_ctx *ctx) {
  tb_status st = tb_ew_infer_binary(ctx, EW_BIT(U8), EW_BIT(U8), false);
  if (st != TB_OK) return st;
  const char *dir;
  st = tb_attr_string(ctx->graph, ctx->node, "direction", NULL, &dir);
  if (st != TB_OK) return st;
  if (!dir) return tb_infer_error(ctx, TB_ERR_MODEL, "attribute 'direction' is required (LEFT or RIGHT)");
  if (strcmp(dir, "LEFT") != 0 && strcmp(dir, "RIGHT") != 0)
    return tb_infer_error(ctx, TB_ERR_MODEL, "attribute 'direction' is \"%s\"; it must be LEFT or RIGHT", dir);
  return TB_OK;
}
const tb_op_def tb_op_bitshift = {"", "BitShift", 11, 2, 2, 1, 1, 0, infer_bitshift, 0, NULL};
