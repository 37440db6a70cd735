/* Internal: helpers the tensor family's infer functions share — setting outputs (dtype, rank, dims
 * with their symbols) and reading the value of an integer input (a shape, starts, pads, repeats). */
#ifndef TB_OPS_TENSOR_INFER_H
#define TB_OPS_TENSOR_INFER_H
#include "ops/op.h"

#define TT_INDEX_TYPES (TB_DTYPE_BIT(TB_DTYPE_I64) | TB_DTYPE_BIT(TB_DTYPE_I32))
#define TT_I64 TB_DTYPE_BIT(TB_DTYPE_I64)
#define TT_FLOATS                                                                                    \
  (TB_DTYPE_BIT(TB_DTYPE_F32) | TB_DTYPE_BIT(TB_DTYPE_F64) | TB_DTYPE_BIT(TB_DTYPE_F16) |            \
   TB_DTYPE_BIT(TB_DTYPE_BF16))
#define TT_NUMBERS                                                                                   \
  (TT_FLOATS | TB_DTYPE_BIT(TB_DTYPE_I64) | TB_DTYPE_BIT(TB_DTYPE_I32) | TB_DTYPE_BIT(TB_DTYPE_I16) | \
   TB_DTYPE_BIT(TB_DTYPE_I8) | TB_DTYPE_BIT(TB_DTYPE_U8))

/* True when optional input i is given. */
bool tb_tt_has(const tb_infer_ctx *ctx, size_t i);
/* Input i's type when present with a known rank, else NULL. */
const tb_value_type *tb_tt_ranked(const tb_infer_ctx *ctx, size_t i);

/* Output i: a tensor of dtype with unknown rank. */
void tb_tt_out_unranked(tb_infer_ctx *ctx, size_t i, tb_dtype dtype);
/* Output i: rank ndim, every dim unknown. */
void tb_tt_out_rank(tb_infer_ctx *ctx, size_t i, tb_dtype dtype, size_t ndim);
/* Output i: these dims (-1 for unknown, without a symbol). */
void tb_tt_out_dims(tb_infer_ctx *ctx, size_t i, tb_dtype dtype, size_t ndim, const int64_t *dims);
/* Output i: these dims with their symbols. */
void tb_tt_out_tdims(tb_infer_ctx *ctx, size_t i, tb_dtype dtype, size_t ndim, const tb_dim *dims);
/* A known dim of size v, or unknown when v < 0. */
tb_dim tb_tt_dim(int64_t v);
/* A value type's dims as int64 (-1 for unknown). */
void tb_tt_dims(const tb_value_type *t, int64_t *dims);

/* The value of integer input i (a scalar or 1-D tensor) when known: *known false when it is not (then
 * *n is its length when the length is known, else -1). More than `cap` values is TB_ERR_UNSUPPORTED. */
tb_status tb_tt_input_ints(const tb_infer_ctx *ctx, size_t i, int64_t *out, size_t cap, int64_t *n, bool *known);

#endif
