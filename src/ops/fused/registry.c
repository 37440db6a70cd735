/* The fused operator definitions (domain "tb"): the operators the O1 passes make. */
#include "ops/op.h"

extern const tb_op_def tb_op_fused_conv, tb_op_fused_gemm, tb_op_fused_matmul, tb_op_fused_layer_norm,
    tb_op_fused_gelu, tb_op_fused_attention, tb_op_fused_silu, tb_op_fused_mish;

static const tb_op_def *const defs[] = {&tb_op_fused_conv,       &tb_op_fused_gemm,      &tb_op_fused_matmul,
                                        &tb_op_fused_layer_norm, &tb_op_fused_gelu,      &tb_op_fused_attention,
                                        &tb_op_fused_silu,       &tb_op_fused_mish};
const tb_op_family tb_ops_fused = {defs, sizeof defs / sizeof defs[0]};
