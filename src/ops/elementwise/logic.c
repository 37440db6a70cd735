/* Comparisons (Equal, Less, Greater, LessOrEqual, GreaterOrEqual: bool output), logic on bool tensors
 * (And, Or, Xor, Not) and Where. Binary ops broadcast (numpy; legacy axis broadcast before opset 7). */
#include "ops/elementwise/ew_params.h"
#include "ops/elementwise/ew_infer.h"

static tb_status infer_equal(tb_infer_ctx *ctx) { return tb_ew_infer_binary(ctx, EW_NUMERIC | EW_BOOL, EW_NUMERIC | EW_BOOL, true); }
static tb_status infer_order(tb_infer_ctx *ctx) { return tb_ew_infer_binary(ctx, EW_NUMERIC, EW_NUMERIC, true); }
static tb_status infer_logic(tb_infer_ctx *ctx) { return tb_ew_infer_binary(ctx, EW_BOOL, EW_BOOL, true); }
static tb_status infer_not(tb_infer_ctx *ctx) { return tb_ew_infer_unary(ctx, EW_BOOL, EW_BOOL); }

const tb_op_def tb_op_equal = {"", "Equal", 1, 2, 2, 1, 1, 0, infer_equal, sizeof(tb_binary_params), tb_binary_parse};
const tb_op_def tb_op_less = {"", "Less", 1, 2, 2, 1, 1, 0, infer_order, sizeof(tb_binary_params), tb_binary_parse};
const tb_op_def tb_op_greater = {"", "Greater", 1, 2, 2, 1, 1, 0, infer_order, sizeof(tb_binary_params), tb_binary_parse};
const tb_op_def tb_op_lessorequal = {"", "LessOrEqual", 12, 2, 2, 1, 1, 0, infer_order, 0, NULL};
const tb_op_def tb_op_greaterorequal = {"", "GreaterOrEqual", 12, 2, 2, 1, 1, 0, infer_order, 0, NULL};
const tb_op_def tb_op_and = {"", "And", 1, 2, 2, 1, 1, 0, infer_logic, sizeof(tb_binary_params), tb_binary_parse};
const tb_op_def tb_op_or = {"", "Or", 1, 2, 2, 1, 1, 0, infer_logic, sizeof(tb_binary_params), tb_binary_parse};
const tb_op_def tb_op_xor = {"", "Xor", 1, 2, 2, 1, 1, 0, infer_logic, sizeof(tb_binary_params), tb_binary_parse};
const tb_op_def tb_op_not = {"", "Not", 1, 1, 1, 1, 1, 0, infer_not, 0, NULL};

/* Where(condition bool, X, Y): X and Y of one type (any), all three broadcast together. */
static tb_status infer_where(tb_infer_ctx *ctx) {
  tb_status st = tb_ew_check(ctx, 0, EW_BOOL, EW_BOOL);
  if (st == TB_OK) st = tb_ew_check(ctx, 1, EW_ALL, EW_ALL);
  if (st == TB_OK) st = tb_ew_check(ctx, 2, EW_ALL, EW_ALL);
  if (st == TB_OK) st = tb_ew_same_dtype(ctx, 1, 2);
  if (st != TB_OK) return st;
  return tb_ew_broadcast(ctx, 0, 3, ctx->in[1]->dtype);
}
const tb_op_def tb_op_where = {"", "Where", 9, 3, 3, 1, 1, 0, infer_where, 0, NULL};
