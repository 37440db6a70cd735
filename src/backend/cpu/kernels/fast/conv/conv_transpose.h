/* Internal: what the level-2 fp32 ConvTranspose (conv_transpose.c) shares with its col2im loops
 * (conv_transpose_col2im.c): the geometry of a node resolved from its tensors (1-D as 2-D with one row,
 * in tb_conv_geom's fields: ih x iw the input, oh x ow the output), and the scatter-add of the GEMM's
 * column matrix into the output planes. */
#ifndef TB_CPU_KERNELS_FAST_CONV_TRANSPOSE_H
#define TB_CPU_KERNELS_FAST_CONV_TRANSPOSE_H
#include "backend/cpu/kernels/fast/conv/conv_fast.h"

/* The geometry from X's and W's shapes and the node's attributes (group, kernel_shape, strides, dilations,
 * pads, output_padding, output_shape, auto_pad: read with the shared window helpers, ops/nn/window.h, as
 * the reference kernel reads them). W is [C, M/group, kh(, kw)]; the pads are the leading ones the output
 * size resolves to (a pad_end beyond the full output leaves the last rows bias only). TB_ERR_MODEL naming
 * the node when the shapes do not fit, TB_ERR_UNSUPPORTED for more than 2 spatial axes. */
tb_status tb_convt_geom_resolve(const tb_kernel_ctx *ctx, size_t x_ndim, const int64_t *x_shape, size_t w_ndim,
                                const int64_t *w_shape, tb_conv_geom *g);

/* Output channels [m0, m1) of one image and group: y (their planes, oh x ow each, channel m0's first at
 * y + m0 * oh * ow) += the columns `cols` scattered to the output pixels they land on. cols has one row per
 * (channel, tap) of the group, row (m * kh + ky) * kw + kx at cols + that * ldc, holding the products for
 * input rows iy0 .. iy0+rows (iw pixels each, row after row). The AVX2 and AVX-512 paths vectorise the
 * stride-1 rows and the stride-2 tap pairs; cpuid is checked by the caller. */
void tb_convt_col2im(tb_gemm_path path, const tb_conv_geom *g, int64_t m0, int64_t m1, const float *cols, int64_t ldc,
                     int64_t iy0, int64_t rows, float *y);

#endif
