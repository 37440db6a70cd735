/* The CPU reference kernels of the tensor (shape and data movement) family. */
#include "backend/cpu/kernels/kernel.h"

extern const tb_kernel tb_kernel_reshape;
extern const tb_kernel tb_kernel_flatten;
extern const tb_kernel tb_kernel_squeeze;
extern const tb_kernel tb_kernel_unsqueeze;
extern const tb_kernel tb_kernel_transpose;
extern const tb_kernel tb_kernel_constant;
extern const tb_kernel tb_kernel_constant_of_shape;
extern const tb_kernel tb_kernel_shape;
extern const tb_kernel tb_kernel_size;
extern const tb_kernel tb_kernel_concat;
extern const tb_kernel tb_kernel_slice;
extern const tb_kernel tb_kernel_split;
extern const tb_kernel tb_kernel_expand;
extern const tb_kernel tb_kernel_tile;
extern const tb_kernel tb_kernel_gather;
extern const tb_kernel tb_kernel_gather_elements;
extern const tb_kernel tb_kernel_gather_nd;
extern const tb_kernel tb_kernel_scatter;
extern const tb_kernel tb_kernel_scatter_elements;
extern const tb_kernel tb_kernel_scatter_nd;
extern const tb_kernel tb_kernel_range;
extern const tb_kernel tb_kernel_pad;
extern const tb_kernel tb_kernel_resize;
extern const tb_kernel tb_kernel_upsample;
extern const tb_kernel tb_kernel_depth_to_space;
extern const tb_kernel tb_kernel_space_to_depth;
extern const tb_kernel tb_kernel_trilu;
extern const tb_kernel tb_kernel_cumsum;
extern const tb_kernel tb_kernel_reverse_sequence;
extern const tb_kernel tb_kernel_onehot;
extern const tb_kernel tb_kernel_nonzero;
extern const tb_kernel tb_kernel_topk;

static const tb_kernel *const kernels[] = {
    &tb_kernel_reshape,
    &tb_kernel_flatten,
    &tb_kernel_squeeze,
    &tb_kernel_unsqueeze,
    &tb_kernel_transpose,
    &tb_kernel_constant,
    &tb_kernel_constant_of_shape,
    &tb_kernel_shape,
    &tb_kernel_size,
    &tb_kernel_concat,
    &tb_kernel_slice,
    &tb_kernel_split,
    &tb_kernel_expand,
    &tb_kernel_tile,
    &tb_kernel_gather,
    &tb_kernel_gather_elements,
    &tb_kernel_gather_nd,
    &tb_kernel_scatter,
    &tb_kernel_scatter_elements,
    &tb_kernel_scatter_nd,
    &tb_kernel_range,
    &tb_kernel_pad,
    &tb_kernel_resize,
    &tb_kernel_upsample,
    &tb_kernel_depth_to_space,
    &tb_kernel_space_to_depth,
    &tb_kernel_trilu,
    &tb_kernel_cumsum,
    &tb_kernel_reverse_sequence,
    &tb_kernel_onehot,
    &tb_kernel_nonzero,
    &tb_kernel_topk,
};
const tb_kernel_family tb_kernels_tensor = {kernels, sizeof kernels / sizeof kernels[0]};
