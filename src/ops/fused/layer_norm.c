/* tb::LayerNormalization: ONNX LayerNormalization (opset 17) for models whose default opset is older, as
 * made by the LayerNorm pattern pass. Same inputs, attributes and inference as the ONNX operator. */
#include "ops/fused/fused_ops.h"
#include "ops/fused/fused_params.h"

static tb_status layer_norm_infer(tb_infer_ctx *ctx) { return tb_fused_base_infer(ctx, "LayerNormalization", 17, 3); }

const tb_op_def tb_op_fused_layer_norm = {"tb", "LayerNormalization", 1, 1, 3, 1, 3, 0, layer_norm_infer, sizeof(tb_norm_params), tb_norm_parse};
