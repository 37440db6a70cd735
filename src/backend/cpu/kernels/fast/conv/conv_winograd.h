/* Internal: Winograd F(2x2, 3x3) convolution (fp32 AVX-512 at level 2, bf16 AVX512-BF16 at level 3) for
 * 3x3 stride-1 convolutions (group 1, dilation 1, pads 0 or 1 on each side).
 *
 * Math (Lavin & Gray): a 2x2 output block Y of one output channel k is read from a 4x4 input tile d of
 * each input channel c (tile (ty, tx) starts at input row 2ty - pad_top, column 2tx - pad_left; outside
 * the input: zeros) as Y = A^T [ sum_c U_kc (.) V_c ] A, with V_c = B^T d_c B (16 values per tile and
 * channel) and U_kc = G g_kc G^T (16 values per 3x3 kernel g_kc):
 *   B^T = [1 0 -1 0; 0 1 1 0; 0 -1 1 0; 0 1 0 -1], G = [1 0 0; .5 .5 .5; .5 -.5 .5; 0 0 1],
 *   A^T = [1 1 1 0; 0 1 -1 -1].
 * For each of the 16 positions xi of the 4x4 transformed tile the sum over c is a product
 *   M_xi [tiles x K] = V_xi [tiles x C] U_xi [C x K]
 * which runs on the existing GEMM micro-kernels (fp32: tb_gemm_kernel_avx512.ukr_set, 14 x 32;
 * bf16: tb_gemm_bf16_kernel_avx512bf16.ukr, 14 x 32 on channel pairs): 16 products per (tile, c, k)
 * instead of 36 for the 2x2 outputs, 2.25x fewer multiplies than the direct convolution.
 *
 * Layouts. U is computed at prepare in double, rounded to fp32 (or bf16), and packed as the micro-kernel's
 * B operand: per xi, per block of 32 output channels (kb), the C rows of 32 values (bf16: pairs of
 * channels interleaved, ((c / 2) * 32 + j) * 2 + c % 2), zeros past K and past C. The tiles of an image
 * are laid out in rows of TWp = TW rounded up to a multiple of 7 tiles (TW = ceil(OW / 2)); a "half" is 7
 * consecutive tiles of one tile row, a "sliver" two halves (14 tiles: the micro-kernel's rows; ResNet's
 * 28, 14 and 7 tile rows waste nothing; a last sliver of one half runs the 7-row edge kernel). V is
 * written by the input transform straight into the A operand's layout: per xi and sliver, C rows of 14
 * tiles (bf16: pairs of channels, rounded to nearest even by vcvtne2ps2bf16, which flushes values below
 * 1.2e-38 to zero). M is fp32, per xi a [14 tiles x 32 channels] block. The output
 * transform reads the 16 M_xi of 16 channels of a tile, computes the 2x2 block, and after a 16 x 16
 * register transpose stores whole output row segments with bias, residual and activation (the direct
 * convolution's order and NaN rules: (acc + bias) + residual, then the activation).
 *
 * Blocking and threads: a work item is (image, part of the output channels, block of slivers). Its V (all
 * channels of the block's slivers) stays in L2; then per column block of 32 output channels (its U of the
 * 16 positions in L2 over the block) and sliver, the 16 products go into a 14 x 32 M per position (28 KiB,
 * L1) whose output transform follows at once, so M never leaves L1. The items are split into even
 * contiguous shares, one per pool thread (the block size is lowered until the blocks divide evenly); when
 * they cannot share the tiles evenly (few blocks, or a last block short of tiles) the output channels are
 * split into one part per thread, each thread taking its part over every block (the input transform is
 * then repeated per part: it is cheap).
 * Each output value is computed by one thread from the same operations in the same order at any thread
 * count, so the results are bit-identical at 1, 2, 3 threads. V and M live in a per-thread buffer kept
 * from run to run (allocated per run they came from mmap, and the page faults cost ~10%).
 *
 * Why: ResNet's 3x3 stride-1 layers ran at ~97% of the vdpbf16ps peak on the direct path; fewer multiplies
 * are the only way to run them faster. Layers with few tiles (7x7 outputs: 16 tiles, a 16 MiB fp32 U for
 * C = K = 512) stay on the direct path (tb_conv_winograd_fits).
 *
 * Files: conv_winograd.c (TB_CONV_WINOGRAD, fits, weight transform and packing, driver, threads, GEMM
 * calls), conv_winograd_avx512.c (input and output transforms, epilogue). */
#ifndef TB_CPU_KERNELS_FAST_CONV_WINOGRAD_H
#define TB_CPU_KERNELS_FAST_CONV_WINOGRAD_H
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include "backend/cpu/kernels/fast/conv/conv_fast.h"

/* One precision's Winograd convolution. */
typedef struct tb_conv_winograd_impl {
  const char *name; /* "winograd fp32 avx512", "winograd fp32 avx2" or "winograd bf16 avx512bf16" */
  bool bf16;        /* V and U rounded to bf16, channel pairs (vdpbf16ps); else fp32 */
  bool avx2;        /* fp32 on AVX2 + FMA (conv_winograd_avx2.c); else AVX-512 */
} tb_conv_winograd_impl;

extern const tb_conv_winograd_impl tb_conv_winograd_f32_avx512;
extern const tb_conv_winograd_impl tb_conv_winograd_f32_avx2;
extern const tb_conv_winograd_impl tb_conv_winograd_bf16_avx512bf16;

/* Whether Winograd takes this geometry: 2-D, group 1, 3x3, strides 1, dilations 1, pads 0 or 1 on each
 * side, and enough tiles per image that it wins (measured; fewer stay on the direct path). When `why` is
 * not NULL and the answer is no, a short reason is written there. */
bool tb_conv_winograd_fits(const tb_conv_winograd_impl *impl, const tb_conv_geom *g, char *why, size_t why_cap);

/* W (K x C x 3 x 3 floats) transformed and packed for impl; NULL when out of memory. */
typedef struct tb_conv_winograd_weights tb_conv_winograd_weights;
tb_conv_winograd_weights *tb_conv_winograd_pack(const tb_conv_winograd_impl *impl, const tb_conv_geom *g, const float *w);
void tb_conv_winograd_free(tb_conv_winograd_weights *w);
/* Bytes the packed weights hold (16/9 of W's in fp32, 8/9 in bf16, plus the padding to 32 channels). */
size_t tb_conv_winograd_bytes(const tb_conv_winograd_weights *w);

typedef enum tb_conv_winograd_status {
  TB_WINOGRAD_DONE = 0,
  TB_WINOGRAD_NO_MEMORY,  /* a buffer could not be allocated */
  TB_WINOGRAD_NOT_FINITE, /* X holds a NaN or an infinity: the caller runs another path (see below) */
} tb_conv_winograd_status;

/* y (N x K x OH x OW) = act(conv(x, w) + bias + residual) for a geometry fits() takes: bias (K values)
 * and residual (y's shape, not y itself) may be NULL, ep the activation (its bias / residual fields are
 * not read). The work is split over the pool. Anything but DONE leaves y unspecified.
 * Non-finite X: the transforms turn one infinite input into infinities of both signs in a tile's sums
 * (NaN where the reference gives +-Inf), so the input transform checks what it loads (x * 0 summed: NaN
 * once anything is NaN or infinite, one FMA per load, cheaper than a pass over X) and the run reports
 * NOT_FINITE; the caller then computes y on the direct or GEMM path, which follow the reference. */
tb_conv_winograd_status tb_conv_winograd_run(const tb_conv_winograd_impl *impl, const tb_conv_geom *g,
                                             const tb_conv_winograd_weights *w, const float *x, const float *bias,
                                             const float *residual, const tb_gemm_epilogue *ep, float *y,
                                             struct tb_pool *pool);

/* False when x (n floats) holds an infinity: for W (at prepare, or per run when W is not a constant), whose
 * infinities G g G^T would turn into NaN; such a W takes another path. A NaN in W is fine: it reaches
 * every output of its channel, as in the reference. AVX-512 where cpuid has AVX512F, else plain C. */
bool tb_conv_winograd_no_inf(const float *x, int64_t n);

/* ---- between conv_winograd.c and conv_winograd_avx512.c ---- */

enum { TB_WG_HALF = 7, TB_WG_SLIVER = 14, TB_WG_XI = 16, TB_WG_NR = 32 };

/* 7 tiles (ty, tx0 .. tx0 + 6) of one tile row; valid false: a half past the image's last tile row. */
typedef struct tb_wg_half {
  int64_t ty, tx0;
  bool valid;
} tb_wg_half;

/* The input transform of one sliver (halves h[0], h[1]) for the channels [0, C) of one image x (C planes of
 * ih x iw): V of position xi, channel c, tile i (0..13, half i / 7) at
 *   fp32: ((float *)dst)[xi * xi_stride + c * 14 + i]
 *   bf16: ((uint16_t *)dst)[xi * xi_stride + ((c / 2) * 14 + i) * 2 + c % 2] (a missing last channel of a
 *         pair: zero), rounded to nearest even (vcvtne2ps2bf16: subnormal values become zero).
 * Tiles of an invalid half are written as zeros. False when an input value read is NaN or infinite (V is
 * then written all the same). */
bool tb_conv_winograd_input_avx512(const tb_conv_geom *g, const float *x, const tb_wg_half h[2], bool bf16, void *dst,
                                   int64_t xi_stride);

/* The output transform of one half: M_xi of its tile t (0..6), channel k0 + j at m[xi * xi_stride + t * ldm
 * + j] (m points at the half's first tile, channel k0; j up to ceil(nk / 16) * 16 readable) for the
 * channels [k0, k0 + nk), written into y (one image: K planes of oh x ow) with bias (NULL: none), residual
 * (the image's, NULL: none) and the activation. */
void tb_conv_winograd_output_avx512(const tb_conv_geom *g, const tb_wg_half *h, const float *m, int64_t xi_stride,
                                    int64_t ldm, int64_t k0, int64_t nk, const float *bias, const float *residual,
                                    const tb_gemm_epilogue *ep, float *y);

/* The same two transforms with AVX2 + FMA (conv_winograd_avx2.c; fp32 only), and the 16 products' one:
 * m[i * 32 + j] (tile i < rows, 14 or 7; channel j < 32) = sum over p < depth of a[p * 14 + i] b[p * 32 + j],
 * a one V sliver of one position xi and b that position's U block of 32 output channels. */
bool tb_conv_winograd_input_avx2(const tb_conv_geom *g, const float *x, const tb_wg_half h[2], void *dst,
                                 int64_t xi_stride);
void tb_conv_winograd_product_avx2(int64_t depth, const float *a, const float *b, float *m, int rows);
void tb_conv_winograd_output_avx2(const tb_conv_geom *g, const tb_wg_half *h, const float *m, int64_t xi_stride,
                                  int64_t ldm, int64_t k0, int64_t nk, const float *bias, const float *residual,
                                  const tb_gemm_epilogue *ep, float *y);

#endif
