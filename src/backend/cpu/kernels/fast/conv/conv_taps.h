/* Internal: the tap-by-tap GEMM of a dilated convolution (conv_taps.c). Y = sum over taps (ky, kx) of
 * W[:, :, ky, kx] (M x C per group, packed once) times X shifted by the tap, each product only over the
 * rectangle of output pixels whose input under that tap lies inside X: with a large dilation most of the
 * implicit GEMM's K x N patch matrix is padding (DeepLabV3's ASPP, 3x3 at dilations 12/24/36 on a 32x32 map:
 * 44%, 75% and 89% zeros), and the direct convolution reads a source padded by the dilation on each side
 * (104 x 104 per channel for a 32 x 32 map at dilation 36). Here a tap whose rectangle is empty costs
 * nothing, the products multiply no padding, and a tap whose rectangle spans whole input rows at stride 1 is
 * a plain GEMM on X (the centre taps of a "same" convolution: no packing at all). */
#ifndef TB_CPU_KERNELS_FAST_CONV_TAPS_H
#define TB_CPU_KERNELS_FAST_CONV_TAPS_H
#include <stdbool.h>
#include <stdint.h>
#include "backend/cpu/kernels/fast/conv/conv_fast.h"

/* Input channels per group below which a dilated convolution stays on the implicit GEMM: the tap products'
 * depth is C / group, and a GEMM of depth below this runs far from its peak (the implicit GEMM's depth is
 * C / group x taps). */
enum { TB_CONV_TAPS_MIN_DEPTH = 16 };

/* The share of the implicit GEMM's products that are not multiplications by padding: the output pixels whose
 * input lies inside X, summed over the taps, over taps x output pixels (1 for an unpadded convolution). */
double tb_conv_taps_valid_share(const tb_conv_geom *g);

/* The most valid share at which the tap GEMM runs instead of the direct convolution (when that takes g) and
 * instead of the implicit GEMM (otherwise): the tap GEMM multiplies no padding but runs each product at a
 * depth of C / group only, while the other two run the padding at full speed. Measured (docs/performance.md,
 * "Convolution algorithms"): against the direct convolution on AVX-512 the tap GEMM lost at 0.82 (128
 * channels, 28x28, dilation 4: 1.1 ms against 0.93) and won from 0.56 down (DeepLabV3's ASPP); against the
 * implicit GEMM (AVX2) it won at 0.82 (2.0 against 2.2 ms) and lost at 0.95 (64 channels, 56x56, dilation
 * 2: 3.0 against 2.5 ms); against the AVX2 direct convolution it won at 0.78 and below (128 channels 28x28
 * dilation 5: 1.70-1.74 against 1.84-1.86 ms; 256 channels 32x32 dilation 6: 8.0 against 10.1) and lost at
 * 0.82 (128 channels, 28x28, dilation 4: 2.13-2.15 against 1.84-1.88 ms). */
#define TB_CONV_TAPS_MAX_SHARE_VS_DIRECT 0.6
#define TB_CONV_TAPS_MAX_SHARE_VS_DIRECT_AVX2 0.8
#define TB_CONV_TAPS_MAX_SHARE_VS_GEMM 0.85

/* Whether the tap GEMM takes g (the cost rule of docs/performance.md, "Convolution algorithms"): a 2-D or
 * 1-D convolution with more than one tap, a dilation above 1 on some axis, not depthwise, at least
 * TB_CONV_TAPS_MIN_DEPTH input channels per group, and a valid share at most max_share: the caller's limit
 * against what would run instead (TB_CONV_TAPS_MAX_SHARE_VS_DIRECT when the AVX-512 direct convolution takes
 * g, _VS_DIRECT_AVX2 when the AVX2 one does, else TB_CONV_TAPS_MAX_SHARE_VS_GEMM). */
bool tb_conv_taps_fits(const tb_conv_geom *g, double max_share);

/* W packed per group and tap for one GEMM and path: opaque. */
typedef struct tb_conv_taps_weights tb_conv_taps_weights;

/* W (M x C/group x kh x kw floats) packed by gemm for path: per group and tap the mg x cg matrix of that
 * tap. NULL when out of memory. */
tb_conv_taps_weights *tb_conv_taps_pack(const tb_conv_gemm *gemm, int path, const tb_conv_geom *g, const float *w);
void tb_conv_taps_free(tb_conv_taps_weights *w);

/* y (N x M x OH x OW) = act(conv(x, w) + bias + residual) for g (bias, residual may be NULL; ep's activation);
 * each product split over the pool. avx512: the AVX-512 epilogue and patch packer (cpuid checked by the
 * caller). False when a buffer cannot be allocated (y then unspecified). */
bool tb_conv_taps_run(const tb_conv_taps_weights *w, bool avx512, const tb_conv_geom *g, const float *x, const float *bias,
                      const float *residual, const tb_gemm_epilogue *ep, float *y, struct tb_pool *pool);

#endif
