/* Internal: the AVX2 + FMA stem convolution (conv_stem_avx2.c), a first layer with few input channels (1 to
 * 4), a 3x3 kernel at stride 2 and no dilation (MobileNetV3's and EfficientNet-B0's 3 -> 16 / 32 on 224 x
 * 224). The direct convolution's AVX2 path (conv_direct.c) hands it such a geometry with the weights it
 * packed (its layout: conv_direct.h, pack_weights, 16 output channels per column block). Pixels are in the
 * vector lanes: each input row is split once into its even and odd columns, so that a tap of 8 output pixels
 * is one contiguous load shared by a block of output channels (their weights broadcast), and the sums are
 * stored straight into the NCHW rows: no tile buffer and no transposes, which cost the 6 x 16
 * channels-in-lanes tiles of the direct convolution a third of the node. */
#ifndef TB_CPU_KERNELS_FAST_CONV_STEM_H
#define TB_CPU_KERNELS_FAST_CONV_STEM_H
#include <stdbool.h>
#include "backend/cpu/kernels/fast/conv/conv_fast.h"

/* Whether the stem kernel takes this geometry: 2-D, one group of 1 to 4 input channels, a 3x3 kernel at
 * stride 2 on both axes, dilation 1 (any pads). */
bool tb_conv_stem_avx2_fits(const tb_conv_geom *g);

/* y (N x M x OH x OW) = conv(x, w) + bias + residual, then ep's activation when it is Relu, LeakyRelu or
 * Clip (act 1 to 3; the caller applies any other after, as for the direct convolution's tiles). w: the
 * direct convolution's AVX2 packing, output channel m's weight of channel c and tap t at
 * w[(m / 16) * block_floats + (c * 9 + t) * 16 + m % 16]. bias and residual may be NULL. Jobs of output
 * rows on the pool, each output summed in one fixed order by one job (the same bits at any thread count).
 * False only when a buffer cannot be allocated. Call only when cpuid has AVX2 and FMA. */
bool tb_conv_stem_avx2_run(const tb_conv_geom *g, const float *w, int64_t block_floats, const float *x, const float *bias,
                           const float *residual, const tb_gemm_epilogue *ep, float *y, struct tb_pool *pool);

#endif
