/* Internal: parameter functions of tensor-family operators that their CPU kernels call too, so a kernel
 * reads an operator's attributes and value inputs exactly as its definition does. Each takes the
 * operator's infer context (kernels build one from their concrete inputs: tb_tk_infer_begin). */
#ifndef TB_OPS_TENSOR_PARAMS_H
#define TB_OPS_TENSOR_PARAMS_H
#include "ops/op.h"
#include "ops/tensor/shape_rules.h"

/* Shape-15: the [start, end) range of dims for a rank (negative from the end, clamped to [0, rank]). */
void tb_shape_range(int64_t rank, int64_t start, int64_t end, int64_t *first, int64_t *count);
/* Slice: the per-dim plan (first, step, count) from the concrete inputs. */
tb_status tb_slice_infer_plan(tb_infer_ctx *ctx, tb_slice_plan *plan);
/* Split: piece sizes for ctx->n_outputs outputs along an axis of size dim. */
tb_status tb_split_sizes(tb_infer_ctx *ctx, int64_t dim, int64_t *sizes, bool *known);
/* Scatter reduction name: 0 none, 1 add, 2 mul, 3 min, 4 max; -1 unknown. */
int tb_scatter_reduction(const char *s);
/* Pad mode name: 0 constant, 1 reflect, 2 edge; -1 otherwise. */
int tb_pad_mode(const char *s);
/* Pad: begin/end amounts per dim (attribute, or pads and axes inputs). */
tb_status tb_pad_amounts(tb_infer_ctx *ctx, size_t rank, int64_t *begin, int64_t *end, bool *known);
/* TopK: k (attribute before opset 10, else input 1). */
tb_status tb_topk_k(const tb_infer_ctx *ctx, int64_t *k, bool *known);

#endif
