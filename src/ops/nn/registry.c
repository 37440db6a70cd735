/* The nn operator definitions: matmul, conv, pooling, normalization, softmax, reductions, einsum, quantization. */
#include "ops/op.h"

extern const tb_op_def tb_op_matmul, tb_op_gemm_1, tb_op_gemm_11;
extern const tb_op_def tb_op_conv, tb_op_conv_transpose;
extern const tb_op_def tb_op_maxpool, tb_op_averagepool, tb_op_lppool, tb_op_global_averagepool, tb_op_global_maxpool,
    tb_op_global_lppool;
extern const tb_op_def tb_op_softmax_1, tb_op_softmax_13, tb_op_logsoftmax_1, tb_op_logsoftmax_13, tb_op_hardmax_1,
    tb_op_hardmax_13;
extern const tb_op_def tb_op_batchnorm_1, tb_op_batchnorm_14, tb_op_instancenorm, tb_op_layernorm, tb_op_lrn;
extern const tb_op_def tb_op_reduce_sum_1, tb_op_reduce_sum_13, tb_op_reduce_mean_1, tb_op_reduce_mean_18,
    tb_op_reduce_max_1, tb_op_reduce_max_18, tb_op_reduce_min_1, tb_op_reduce_min_18, tb_op_reduce_prod_1,
    tb_op_reduce_prod_18, tb_op_reduce_l1_1, tb_op_reduce_l1_18, tb_op_reduce_l2_1, tb_op_reduce_l2_18,
    tb_op_reduce_logsumexp_1, tb_op_reduce_logsumexp_18, tb_op_reduce_sumsquare_1, tb_op_reduce_sumsquare_18;
extern const tb_op_def tb_op_argmax, tb_op_argmin;

extern const tb_op_def tb_op_einsum, tb_op_quantize_linear, tb_op_dequantize_linear, tb_op_matmul_integer, tb_op_qlinear_matmul;
extern const tb_op_def tb_op_conv_integer, tb_op_qlinear_conv;
static const tb_op_def *const defs[] = {
    &tb_op_matmul, &tb_op_gemm_1, &tb_op_gemm_11,
    &tb_op_conv, &tb_op_conv_transpose,
    &tb_op_maxpool, &tb_op_averagepool, &tb_op_lppool, &tb_op_global_averagepool, &tb_op_global_maxpool,
    &tb_op_global_lppool,
    &tb_op_softmax_1, &tb_op_softmax_13, &tb_op_logsoftmax_1, &tb_op_logsoftmax_13, &tb_op_hardmax_1, &tb_op_hardmax_13,
    &tb_op_batchnorm_1, &tb_op_batchnorm_14, &tb_op_instancenorm, &tb_op_layernorm, &tb_op_lrn,
    &tb_op_reduce_sum_1, &tb_op_reduce_sum_13, &tb_op_reduce_mean_1, &tb_op_reduce_mean_18, &tb_op_reduce_max_1,
    &tb_op_reduce_max_18, &tb_op_reduce_min_1, &tb_op_reduce_min_18, &tb_op_reduce_prod_1, &tb_op_reduce_prod_18,
    &tb_op_reduce_l1_1, &tb_op_reduce_l1_18, &tb_op_reduce_l2_1, &tb_op_reduce_l2_18, &tb_op_reduce_logsumexp_1,
    &tb_op_reduce_logsumexp_18, &tb_op_reduce_sumsquare_1, &tb_op_reduce_sumsquare_18,
    &tb_op_argmax, &tb_op_argmin,
    &tb_op_einsum, &tb_op_quantize_linear, &tb_op_dequantize_linear, &tb_op_matmul_integer, &tb_op_qlinear_matmul,
    &tb_op_conv_integer, &tb_op_qlinear_conv,
};
const tb_op_family tb_ops_nn = {defs, sizeof defs / sizeof defs[0]};
