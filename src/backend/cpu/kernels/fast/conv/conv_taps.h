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

/* Whether the tap GEMM takes g (the cost rule of docs/performance.md, "Convolution algorithms"): a 2-D or
 * 1-D convolution with more than one tap, a dilation above 1 on some axis, not depthwise, at least
 * TB_CONV_TAPS_MIN_DEPTH input channels per group. Depends on W's shape and the attributes only, not X's
 * size. */
bool tb_conv_taps_fits(const tb_conv_geom *g);

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
