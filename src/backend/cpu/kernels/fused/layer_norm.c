/* Reference kernel of tb::LayerNormalization: the ONNX LayerNormalization reference kernel as it is. */
#include "backend/cpu/kernels/fused/fused_kernel.h"

static tb_status layer_norm_run(tb_kernel_ctx *ctx) { return tb_fused_run_base(ctx, "LayerNormalization", 3); }

const tb_kernel tb_kernel_fused_layer_norm = {.domain = "tb", .name = "LayerNormalization", .level = TB_KERNEL_REFERENCE, .cpu_features = 0, .accepts = NULL, .run = layer_norm_run};
