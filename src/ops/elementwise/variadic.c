/* Variadic ops: Sum, Mean (floats), Min, Max (every numeric type from opset 12; floats before), one or
 * more inputs broadcast together (numpy; opset < 8 required equal shapes, which broadcasting accepts).
 * Min and Max propagate NaN, as numpy's minimum/maximum do. */
#include "ops/elementwise/ew_infer.h"

static tb_status infer_float(tb_infer_ctx *ctx) { return tb_ew_infer_variadic(ctx, EW_FLOATS, EW_FLOATS); }
static tb_status infer_numeric(tb_infer_ctx *ctx) { return tb_ew_infer_variadic(ctx, EW_NUMERIC, EW_NUMERIC); }

const tb_op_def tb_op_sum = {"", "Sum", 1, 1, -1, 1, 1, 0, infer_float, 0, NULL};
const tb_op_def tb_op_mean = {"", "Mean", 1, 1, -1, 1, 1, 0, infer_float, 0, NULL};
const tb_op_def tb_op_min = {"", "Min", 1, 1, -1, 1, 1, 0, infer_numeric, 0, NULL};
const tb_op_def tb_op_max = {"", "Max", 1, 1, -1, 1, 1, 0, infer_numeric, 0, NULL};
