/* Internal: the direct convolution (fp32 AVX-512 and AVX2 + FMA at level 2, bf16 AVX512-BF16 at level 3). A
 * register tile is `rows` output pixels of one output row (the tile's rows: the input value under each pixel
 * broadcast straight from the source, no patch packing) by `cols` output channels (the tile's columns: 16, 32 or 64,
 * vectors of the weights packed at prepare). The source is X itself or, when the convolution pads (or the
 * precision needs another layout), a copy of X with the pads written as zeros, made once per run, so
 * every tile reads inside it and no tile has an edge case. Each tile sums its whole depth in the same order
 * at any thread count (bit-identical results), into a small fp32 buffer in the tile's layout; the driver
 * then writes the tile into the NCHW output transposed, with bias, residual and activation.
 *
 * Why: the implicit GEMM (conv_fast.c) packs every input patch (9 copies of each input value for a 3x3
 * kernel: about 10% of ResNet-18's run) and wastes the edges of its 14 x 32 tile on 7x7 and 14x14 images
 * (about 8%). Here a 3x3 layer's tiles are whole (56 = 4 x 14 pixels, 7 pixels x 64 channels) and the
 * input is read where it lies.
 *
 * Files: conv_direct.c (driver: fits, packing, source, tiling, threads), conv_direct_f32.c (the fp32 source
 * and weight layout), conv_direct_avx512.c and conv_direct_avx2.c (fp32 micro-kernels: 14 x 32 zmm tiles,
 * 6 x 16 ymm tiles), conv_direct_store_avx512.c and conv_direct_store_avx2.c (the tile written into the
 * NCHW output with its epilogue), conv_direct_bf16_avx512.c (bf16 micro-kernels, bf16 source and weight
 * layout). On AVX2, tb_conv_direct_run hands 3x3 stride-2 convolutions of 1 to 4 channels (the stems) to
 * conv_stem_avx2.c, pixels in lanes, with the weights packed here. */
#ifndef TB_CPU_KERNELS_FAST_CONV_DIRECT_H
#define TB_CPU_KERNELS_FAST_CONV_DIRECT_H
#include <stdbool.h>
#include <stdint.h>
#include "backend/cpu/kernels/fast/conv/conv_fast.h"

/* One micro-kernel call: acc[rows x cols] (row stride cols) = (accumulate ? acc : 0) + sum over the
 * chunk's channel units u < n_units and taps t < n_taps of
 *   src[u * unit_stride + tap_off[t] + r * pixel_stride] (broadcast; row r of the tile)
 *   x w[(u * n_taps + t) * cols * lanes + column * lanes ...] (the packed weights of this column block),
 * where a channel unit is one channel (fp32: lanes 1, src float) or a pair of channels (bf16: lanes 2,
 * src a uint32 holding the pair's two bf16 values, w pairs of bf16, vdpbf16ps; with tap pairs, one
 * channel whose two lanes are two horizontally consecutive taps, see make_source_taps). The sum over units and
 * taps is in that order, u outer, t inner, so a tile's result does not depend on how the driver splits its
 * work. src points at the tile's first pixel: the source element under tap (0, 0) of output pixel
 * (oh, ow0) for the chunk's first unit. */
typedef struct tb_conv_direct_args {
  const void *src;
  int64_t unit_stride;    /* source elements between channel units (one plane of the source) */
  const int64_t *tap_off; /* n_taps source offsets (elements) of the taps: kh * dh * src_width + kw * dw */
  int n_taps;
  int64_t n_units;
  const void *w;          /* the chunk's weights of this column block: n_units * n_taps * cols * lanes values */
  float *acc;
  bool accumulate;
  /* Optional (NULL / 0: none): bytes the driver will need next (the next chunk's weights, usually in
   * DRAM), which the micro-kernel may fetch into L2 as it goes, one 64-byte line per (unit, tap) step
   * from prefetch on, at most prefetch_bytes; spreading the fetch over the compute hides it. */
  const void *prefetch;
  int64_t prefetch_bytes;
  /* Source elements between the tile's rows (pixels): the horizontal stride. The kernels of strides 1 and
   * 2 have it built in; the generic kernel (any other stride) reads it here. */
  int64_t pixel_stride;
} tb_conv_direct_args;

typedef void (*tb_conv_direct_ukr)(const tb_conv_direct_args *a);
typedef void (*tb_conv_direct_store_fn)(const float *acc, int cols, int64_t n, int64_t ch, float *y, int64_t plane,
                                        const float *bias, const float *res, const tb_gemm_epilogue *ep);

/* One precision's direct convolution: its micro-kernels, its source and its weight layout. */
typedef struct tb_conv_direct_impl {
  const char *name;       /* "fp32 avx512", "fp32 avx2" or "bf16 avx512bf16" */
  int lanes;              /* channels per unit: 1 (fp32) or 2 (bf16 pairs) */
  size_t src_elem;        /* bytes per source element: 4 */
  size_t w_elem;          /* bytes per weight value: 4 (fp32) or 2 (bf16) */
  int max_rows;           /* the widest tile: 14 (AVX-512), 6 (AVX2) */
  int cols;               /* the column block: 32 (AVX-512; bf16 also 64 on 7-wide rows) or 16 (AVX2) */
  /* The micro-kernel for a tile of `rows` (1..max_rows) x `cols` (cols, or 64 with rows <= 7) and a pixel
   * stride (the convolution's horizontal stride, any value >= 1: 1 and 2 specialised, above 2 a generic
   * kernel reading args.pixel_stride); NULL when there is none. */
  tb_conv_direct_ukr (*ukr)(int rows, int cols, int64_t pixel_stride);
  /* Channels [c0, c0 + n_c) of one image and group of X (planes of ih x iw floats) written into the
   * source: units of `lanes` channels (a missing last channel of a pair is zero), each unit a plane of
   * src_h x src_w elements with the input at row pt, column pl and zeros around it. Runs on one thread;
   * the driver splits the channels (multiples of lanes) over the pool. x points at channel 0 of the
   * image's group and src at unit 0 of that image's group in the source (units of the group one after
   * another, planes of src_h x src_w); channel c0 lands in unit c0 / lanes. */
  void (*make_source)(const float *x, int64_t ih, int64_t iw, int64_t c0, int64_t n_c, int64_t src_h, int64_t src_w,
                      int64_t pt, int64_t pl, void *src);
  /* Weights of output channels [m0, m0 + cols) (those past mg zero), all input channels of the group
   * (cg = C / group, rounded up to whole units with zeros), all taps, from W (mg x cg x kh x kw, row-major,
   * one group's rows) into dst in the micro-kernel's layout: unit u, tap t, column j, lane l at
   * ((u * n_taps + t) * cols + j) * lanes + l. */
  void (*pack_weights)(const float *w, int64_t mg, int64_t cg, int n_taps, int64_t m0, int cols, void *dst);
  /* Tap pairs (lanes 2 only; NULL: none), for convolutions with few input channels (the 7x7 stem's C = 3
   * would otherwise spend a quarter of its multiplies on a zero fourth channel): a unit is one channel and
   * its two lanes are two horizontally consecutive taps (kw 2p and 2p + 1) of one kernel row; the
   * micro-kernels are the same, with n_taps = kh x ceil(kw / 2) pair taps at offsets kh * dh * src_w +
   * 2p * dw. make_source_taps: as make_source, but channel c lands in unit c, whose element (y, col)
   * holds the padded input at (y, col) in its low half and at (y, col + dw) in its high half (zero where
   * that is outside the input). pack_weights_taps: unit u (channel), pair tap t = i * ceil(kw / 2) + p,
   * column j, lane l at ((u * n_taps + t) * cols + j) * 2 + l, the bf16 of W[m0 + j][u][i][2p + l] (zero
   * past kw and past mg). */
  void (*make_source_taps)(const float *x, int64_t ih, int64_t iw, int64_t c0, int64_t n_c, int64_t src_h,
                           int64_t src_w, int64_t pt, int64_t pl, int64_t dw, void *src);
  void (*pack_weights_taps)(const float *w, int64_t mg, int64_t cg, int kh, int kw, int64_t m0, int cols, void *dst);
  /* The tile's store (NULL: the portable one): y[j * plane + p] = act(acc[p * cols + j] + bias[j] +
   * res[j * plane + p]) for pixels p < n (n <= 16) and channels j < ch (ch <= cols); bias, res NULL for
   * none; ep->act 1, 2, 3 (Relu, LeakyRelu, Clip) with the scalar rules (a NaN passes through, -0 stays),
   * the others as tb_conv_epilogue_row. */
  tb_conv_direct_store_fn store;
} tb_conv_direct_impl;

/* The stores of the AVX-512 and AVX2 paths (conv_direct_store_avx512.c, conv_direct_store_avx2.c). */
void tb_conv_direct_store_avx512(const float *acc, int cols, int64_t n, int64_t ch, float *y, int64_t plane,
                                 const float *bias, const float *res, const tb_gemm_epilogue *ep);
void tb_conv_direct_store_avx2(const float *acc, int cols, int64_t n, int64_t ch, float *y, int64_t plane,
                               const float *bias, const float *res, const tb_gemm_epilogue *ep);

/* The fp32 source (X with zeros around it; make_source's contract) and weight layout (pack_weights'),
 * shared by the AVX-512 and AVX2 micro-kernels (conv_direct_f32.c). */
void tb_conv_direct_make_source_f32(const float *x, int64_t ih, int64_t iw, int64_t c0, int64_t n_c, int64_t src_h,
                                    int64_t src_w, int64_t pt, int64_t pl, void *src);
void tb_conv_direct_pack_weights_f32(const float *w, int64_t mg, int64_t cg, int n_taps, int64_t m0, int cols, void *dst);

extern const tb_conv_direct_impl tb_conv_direct_f32_avx512;
extern const tb_conv_direct_impl tb_conv_direct_f32_avx2;
extern const tb_conv_direct_impl tb_conv_direct_bf16_avx512bf16;

/* Weights packed for the direct convolution of one geometry's W (all groups). Opaque. */
typedef struct tb_conv_direct_weights tb_conv_direct_weights;

/* Whether impl sums this geometry over tap pairs (make_source_taps / pack_weights_taps) rather than
 * channel units: when it has them and that takes fewer (unit, tap) steps (C odd and small, kw >= 2). */
bool tb_conv_direct_tap_pairs(const tb_conv_direct_impl *impl, const tb_conv_geom *g);

/* Whether the direct convolution takes this geometry with this implementation (2-D or 1-D, not depthwise,
 * not a 1x1 stride-1 unpadded convolution, at most 64 taps, every tile shape it needs available). When
 * `why` is not NULL and the answer is no, a short reason is written there. */
bool tb_conv_direct_fits(const tb_conv_direct_impl *impl, const tb_conv_geom *g, char *why, size_t why_cap);

/* W (out_c x in_c/group x kh x kw floats) packed for impl; NULL when out of memory. */
tb_conv_direct_weights *tb_conv_direct_pack(const tb_conv_direct_impl *impl, const tb_conv_geom *g, const float *w);
void tb_conv_direct_free(tb_conv_direct_weights *w);

/* y (N x M x OH x OW) = act(conv(x, w) + bias + residual) for geometry g: bias (M values) and residual
 * (y's shape) may be NULL, ep the activation (its bias / residual fields are not read). The work is split
 * over the pool. False only when a buffer cannot be allocated (y is then unspecified). */
bool tb_conv_direct_run(const tb_conv_direct_impl *impl, const tb_conv_geom *g, const tb_conv_direct_weights *w,
                        const float *x, const float *bias, const float *residual, const tb_gemm_epilogue *ep, float *y,
                        struct tb_pool *pool);

#endif
