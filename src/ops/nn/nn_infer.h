/* Internal: small helpers shared by the nn family's infer functions (dims, dtype sets). */
#ifndef TB_OPS_NN_INFER_H
#define TB_OPS_NN_INFER_H
#include "ops/op.h"

#define NN_FLOATS                                                                                    \
  (TB_DTYPE_BIT(TB_DTYPE_F32) | TB_DTYPE_BIT(TB_DTYPE_F64) | TB_DTYPE_BIT(TB_DTYPE_F16) |            \
   TB_DTYPE_BIT(TB_DTYPE_BF16))
#define NN_NUMBERS                                                                                   \
  (NN_FLOATS | TB_DTYPE_BIT(TB_DTYPE_I64) | TB_DTYPE_BIT(TB_DTYPE_I32) | TB_DTYPE_BIT(TB_DTYPE_I16) | \
   TB_DTYPE_BIT(TB_DTYPE_I8) | TB_DTYPE_BIT(TB_DTYPE_U8))

/* A known dim of size v, or unknown when v < 0. */
tb_dim tb_nn_dim(int64_t v);
/* out: a tensor of dtype with unknown rank. */
void tb_nn_out_unranked(tb_value_type *out, tb_dtype dtype);
/* out: a tensor of dtype and rank ndim, every dim unknown. */
void tb_nn_out_rank(tb_value_type *out, tb_dtype dtype, size_t ndim);
/* The input's type when present with a known rank, else NULL. */
const tb_value_type *tb_nn_ranked(const tb_infer_ctx *ctx, size_t input);
/* The numpy matmul shape of a @ b (1-D promotion, batch broadcast) into out's shape; TB_ERR_MODEL naming
 * the node when the inner dims or the batch dims conflict. Shared by MatMul and the quantized matmuls. */
tb_status tb_nn_matmul_shape(const tb_infer_ctx *ctx, const tb_value_type *a, const tb_value_type *b,
                             tb_value_type *out);

#endif
