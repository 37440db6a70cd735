/* Internal: the depthwise convolution with channels in vector lanes, for small maps (conv_depthwise_lanes.c
 * drives it; conv_depthwise_lanes_avx512.c and conv_depthwise_lanes_avx2.c hold the vector kernels, the
 * portable one is in the driver). A job takes a block of L output channels of one image (L = 16 on
 * AVX-512, 8 on AVX2 and portable) and transposes their input planes into a padded pixel-major buffer, one
 * vector of L channels per pixel (pads as zeros), so that every tap of every output pixel is one FMA of a
 * weight vector (the L channels' tap) and an aligned input vector: all lanes busy whatever the map's width.
 * The output pixels, in the same layout, are transposed back into the NCHW planes (residual added on the
 * way), and the activation runs over the block's planes. */
#ifndef TB_CPU_KERNELS_FAST_CONV_DEPTHWISE_LANES_H
#define TB_CPU_KERNELS_FAST_CONV_DEPTHWISE_LANES_H
#include "backend/cpu/kernels/fast/conv/conv_fast.h"

/* One block of L channels: t holds th x tw pixels of L floats (padded input row r = input row r - ph,
 * padded column c = input column c - pw, zero outside the input), w the kh * kw taps of L floats then the
 * bias's L floats; o gets oh * ow pixels of L floats (exactly; the rows are not padded). nb (7 or 8) is
 * the output pixels a kernel computes at once along a row: the padded columns reach (ceil(ow / nb) * nb - 1)
 * * sw + (kw - 1) * dw + 1 <= tw, so the last block of a row may read past ow but never past t's row. All
 * three buffers are 64-byte aligned. */
typedef struct tb_dwl_block {
  const tb_conv_geom *g;
  const float *t, *w;
  float *o;
  int64_t tw, nb;
} tb_dwl_block;

/* Pixel p < n of the L lane rows src[0 .. L) (src[l][p]) to the pixel vector at dst + ((p / w) * ldd + p % w) * L:
 * a run of n pixels of planes w wide into a buffer whose rows are ldd pixels apart. Reads src[l][0 .. n)
 * only. */
typedef void (*tb_dwl_to_lanes_fn)(const float *const *src, int64_t n, float *dst, int64_t w, int64_t ldd);
/* The pixel vectors src[p * L ..] (p < n; src holds whole vectors up to n rounded up to L) back into lane
 * rows: dst[l * ld + p] = src[p * L + l] (+ res[l * ld + p] when res is not NULL) for l < nc. */
typedef void (*tb_dwl_from_lanes_fn)(const float *src, int64_t n, float *dst, int64_t ld, const float *res, int nc);
/* The block's oh * ow output pixels. */
typedef void (*tb_dwl_conv_fn)(const tb_dwl_block *b);

typedef struct tb_dwl_impl {
  int lanes;
  tb_dwl_to_lanes_fn to_lanes;
  tb_dwl_from_lanes_fn from_lanes;
  tb_dwl_conv_fn conv;
} tb_dwl_impl;

extern const tb_dwl_impl tb_dwl_avx512; /* AVX-512F (target attributes; the caller checks cpuid) */
extern const tb_dwl_impl tb_dwl_avx2;   /* AVX2 + FMA (target attributes; the caller checks cpuid) */

/* The depthwise convolution (tb_conv_is_depthwise) with channels in lanes on path `path`, every geometry
 * (any kernel, stride, dilation, padding, channel multiplier); as tb_conv_depthwise_run otherwise. */
bool tb_conv_depthwise_lanes_run(tb_gemm_path path, const tb_conv_geom *g, const float *x, const float *w, const float *bias,
                                 const float *residual, const tb_gemm_epilogue *ep, float *y, struct tb_pool *pool);

/* The cost rule: whether the lanes kernel beats the row kernels (conv_depthwise.c) on this geometry and path
 * (measured; docs/performance.md, "Depthwise convolution"). */
bool tb_dwl_wanted(tb_gemm_path path, const tb_conv_geom *g);

#endif
