/* The tensor (shape and data movement) operator definitions of this family. */
#include "ops/op.h"

extern const tb_op_def tb_op_reshape_1;
extern const tb_op_def tb_op_reshape_5;
extern const tb_op_def tb_op_flatten;
extern const tb_op_def tb_op_squeeze_1;
extern const tb_op_def tb_op_squeeze_13;
extern const tb_op_def tb_op_unsqueeze_1;
extern const tb_op_def tb_op_unsqueeze_13;
extern const tb_op_def tb_op_transpose;
extern const tb_op_def tb_op_constant;
extern const tb_op_def tb_op_constant_of_shape;
extern const tb_op_def tb_op_shape;
extern const tb_op_def tb_op_size;
extern const tb_op_def tb_op_concat;
extern const tb_op_def tb_op_slice_1;
extern const tb_op_def tb_op_slice_10;
extern const tb_op_def tb_op_split_2;
extern const tb_op_def tb_op_split_13;
extern const tb_op_def tb_op_expand;
extern const tb_op_def tb_op_tile;
extern const tb_op_def tb_op_gather;
extern const tb_op_def tb_op_gather_elements;
extern const tb_op_def tb_op_gather_nd;
extern const tb_op_def tb_op_scatter;
extern const tb_op_def tb_op_scatter_elements;
extern const tb_op_def tb_op_scatter_nd;
extern const tb_op_def tb_op_range;
extern const tb_op_def tb_op_pad_2;
extern const tb_op_def tb_op_pad_11;
extern const tb_op_def tb_op_pad_18;
extern const tb_op_def tb_op_resize_10;
extern const tb_op_def tb_op_resize_11;
extern const tb_op_def tb_op_upsample_7;
extern const tb_op_def tb_op_upsample_9;
extern const tb_op_def tb_op_depth_to_space;
extern const tb_op_def tb_op_space_to_depth;
extern const tb_op_def tb_op_trilu;
extern const tb_op_def tb_op_cumsum;
extern const tb_op_def tb_op_reverse_sequence;
extern const tb_op_def tb_op_onehot;
extern const tb_op_def tb_op_nonzero;
extern const tb_op_def tb_op_topk_1;
extern const tb_op_def tb_op_topk_10;

static const tb_op_def *const defs[] = {
    &tb_op_reshape_1,
    &tb_op_reshape_5,
    &tb_op_flatten,
    &tb_op_squeeze_1,
    &tb_op_squeeze_13,
    &tb_op_unsqueeze_1,
    &tb_op_unsqueeze_13,
    &tb_op_transpose,
    &tb_op_constant,
    &tb_op_constant_of_shape,
    &tb_op_shape,
    &tb_op_size,
    &tb_op_concat,
    &tb_op_slice_1,
    &tb_op_slice_10,
    &tb_op_split_2,
    &tb_op_split_13,
    &tb_op_expand,
    &tb_op_tile,
    &tb_op_gather,
    &tb_op_gather_elements,
    &tb_op_gather_nd,
    &tb_op_scatter,
    &tb_op_scatter_elements,
    &tb_op_scatter_nd,
    &tb_op_range,
    &tb_op_pad_2,
    &tb_op_pad_11,
    &tb_op_pad_18,
    &tb_op_resize_10,
    &tb_op_resize_11,
    &tb_op_upsample_7,
    &tb_op_upsample_9,
    &tb_op_depth_to_space,
    &tb_op_space_to_depth,
    &tb_op_trilu,
    &tb_op_cumsum,
    &tb_op_reverse_sequence,
    &tb_op_onehot,
    &tb_op_nonzero,
    &tb_op_topk_1,
    &tb_op_topk_10,
};
const tb_op_family tb_ops_tensor = {defs, sizeof defs / sizeof defs[0]};
