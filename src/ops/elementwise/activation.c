/* Activations: Relu, LeakyRelu, PRelu, Sigmoid, HardSigmoid, HardSwish, Elu, Selu, Celu, Softplus,
 * ThresholdedRelu, Shrink. One input, output of the same type (PRelu: a slope broadcast to X). */
#include "ops/elementwise/ew_params.h"
#include "ops/elementwise/ew_infer.h"

/* Relu takes signed integers from opset 14; floats always. */
static tb_status infer_relu(tb_infer_ctx *ctx) { return tb_ew_infer_unary(ctx, EW_FLOATS | EW_SINTS, EW_FLOATS | EW_SINTS); }
static tb_status infer_float_act(tb_infer_ctx *ctx) { return tb_ew_infer_unary(ctx, EW_FLOATS, EW_FLOATS); }
/* Shrink takes every numeric type; TensorBridge computes it for floats. */
static tb_status infer_shrink(tb_infer_ctx *ctx) { return tb_ew_infer_unary(ctx, EW_NUMERIC, EW_FLOATS); }

const tb_op_def tb_op_relu = {"", "Relu", 1, 1, 1, 1, 1, 0, infer_relu, 0, NULL};
const tb_op_def tb_op_leakyrelu = {"", "LeakyRelu", 1, 1, 1, 1, 1, 0, infer_float_act, sizeof(tb_act_params), tb_leakyrelu_parse};
const tb_op_def tb_op_sigmoid = {"", "Sigmoid", 1, 1, 1, 1, 1, 0, infer_float_act, 0, NULL};
const tb_op_def tb_op_hardsigmoid = {"", "HardSigmoid", 1, 1, 1, 1, 1, 0, infer_float_act, sizeof(tb_act_params), tb_hardsigmoid_parse};
const tb_op_def tb_op_hardswish = {"", "HardSwish", 14, 1, 1, 1, 1, 0, infer_float_act, 0, NULL};
const tb_op_def tb_op_elu = {"", "Elu", 1, 1, 1, 1, 1, 0, infer_float_act, sizeof(tb_act_params), tb_alpha1_parse};
const tb_op_def tb_op_selu = {"", "Selu", 1, 1, 1, 1, 1, 0, infer_float_act, sizeof(tb_act_params), tb_selu_parse};
const tb_op_def tb_op_celu = {"", "Celu", 12, 1, 1, 1, 1, 0, infer_float_act, sizeof(tb_act_params), tb_alpha1_parse};
const tb_op_def tb_op_softplus = {"", "Softplus", 1, 1, 1, 1, 1, 0, infer_float_act, 0, NULL};
const tb_op_def tb_op_thresholdedrelu = {"", "ThresholdedRelu", 10, 1, 1, 1, 1, 0, infer_float_act, sizeof(tb_act_params), tb_alpha1_parse};
const tb_op_def tb_op_shrink = {"", "Shrink", 9, 1, 1, 1, 1, 0, infer_shrink, sizeof(tb_act_params), tb_shrink_parse};

/* PRelu: slope must broadcast to X's shape (unidirectional); the output is X's type. Integer types
 * (int32, int64 in the spec) are computed too. Before opset 7 a 1-D slope is per channel (X's dim 1),
 * as Caffe2 and PyTorch's exports of that time mean it. */
static tb_status infer_prelu(tb_infer_ctx *ctx) {
  tb_dtype_set allowed = EW_FLOATS | EW_BIT(I32) | EW_BIT(I64);
  tb_status st = tb_ew_check(ctx, 0, allowed, allowed);
  if (st == TB_OK) st = tb_ew_check(ctx, 1, allowed, allowed);
  if (st == TB_OK) st = tb_ew_same_dtype(ctx, 0, 1);
  if (st != TB_OK) return st;
  const tb_value_type *x = ctx->in[0], *slope = ctx->in[1];
  if (ctx->node->opset < 7 && x->has_shape && slope->has_shape && slope->ndim == 1 && x->ndim >= 2) {
    int64_t s = slope->dims[0].value, c = x->dims[1].value;
    if (s >= 0 && c >= 0 && s != 1 && s != c)
      return tb_infer_error(ctx, TB_ERR_MODEL, "slope has %lld values; X has %lld channels (dimension 1)", (long long)s,
                            (long long)c);
  } else if (x->has_shape && slope->has_shape) {
    if (slope->ndim > x->ndim)
      return tb_infer_error(ctx, TB_ERR_MODEL, "slope has rank %zu, above X's %zu: it must broadcast to X", slope->ndim,
                            x->ndim);
    size_t lead = x->ndim - slope->ndim;
    for (size_t d = 0; d < slope->ndim; d++) {
      int64_t s = slope->dims[d].value, xd = x->dims[lead + d].value;
      if (s >= 0 && xd >= 0 && s != xd && s != 1)
        return tb_infer_error(ctx, TB_ERR_MODEL, "slope dimension %zu is %lld; X's is %lld: it must be 1 or equal", d,
                              (long long)s, (long long)xd);
    }
  }
  tb_infer_same(x, &ctx->out[0]);
  return TB_OK;
}
const tb_op_def tb_op_prelu = {"", "PRelu", 1, 2, 2, 1, 1, 0, infer_prelu, 0, NULL};
