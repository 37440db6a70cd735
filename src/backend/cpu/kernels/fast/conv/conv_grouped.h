/* Internal: grouped convolutions with few output channels per group (group > 1, not depthwise: ResNeXt's 32
 * groups of 4 to 32 channels, RegNet's groups of 8 to 16, ShuffleNet's grouped 1x1) as a direct convolution
 * on AVX-512 and AVX2+FMA. A register tile is 4 output channels of one group by up to 4 (AVX-512) or 3
 * (AVX2) vectors of consecutive output pixels of one output row; for each input channel of the group and
 * each tap the tile loads its pixels' inputs as vectors from a padded copy of X (the source) and
 * multiplies them by the 4 channels' weights, broadcast. Why: the implicit GEMM runs one GEMM of 4 to 32
 * rows per group and packs every input patch for it (as much data as the products for 4 channels), and
 * the direct convolution's tiles are 32 or 64 output channels wide (4 of 32 used: 8 times the work).
 *
 * The source holds every input channel as a plane of rows with the pads written as zeros; with a
 * horizontal stride s each row is split into s phases (columns x with x % s = q, one after another), so
 * the pixels a tap reads are consecutive at any stride. Each output element is one chain of fused
 * multiply-adds over (input channel, tap) in order, then + bias, + residual and the activation, so results
 * do not depend on the thread count. Files: conv_grouped.c (fits, weights, source, tiles, threads),
 * conv_grouped_avx512.c and conv_grouped_avx2.c (the micro-kernels). */
#ifndef TB_CPU_KERNELS_FAST_CONV_GROUPED_H
#define TB_CPU_KERNELS_FAST_CONV_GROUPED_H
#include <stdbool.h>
#include <stdint.h>
#include "backend/cpu/kernels/fast/conv/conv_fast.h"

/* Output channels per tile (the weights are packed in chunks of this many). */
enum { TB_CONV_GROUPED_OC = 4 };

/* A tile's vectors: `vectors` (1 .. max_vectors) runs of consecutive output pixels on one output row each,
 * vector v holding len[v] (1 .. lanes) pixels, its first source element at src + src_off[v] and its first
 * output at y_off[v] from the tile's y (and residual). Wide rows give a tile several vectors of one row;
 * rows one vector wide (14x14, 28x28 on AVX-512) give it one vector of each of several rows. */
enum { TB_CONV_GROUPED_MAX_VECTORS = 4 };

/* One tile: y[o][v] = act(sum over c < cg, t < n_taps of w[(c * n_taps + t) * 4 + o] *
 * src[c * plane + tap_off[t] + src_off[v] + x] + bias[o] + res[o * ldy + y_off[v] + x]) for o < 4, each
 * vector v and x < len[v]; bias and res may be NULL; act 0 none, 1 Relu, 2 LeakyRelu (act_alpha), 3 Clip
 * (act_min, act_max), as the GEMM epilogue's. The kernel may read the source up to one vector past a
 * vector's last pixel. */
typedef struct tb_conv_grouped_tile {
  const float *src;
  int64_t plane;
  const int64_t *tap_off;
  int n_taps;
  int64_t cg;
  const float *w;
  int vectors;
  int len[TB_CONV_GROUPED_MAX_VECTORS];
  int64_t src_off[TB_CONV_GROUPED_MAX_VECTORS], y_off[TB_CONV_GROUPED_MAX_VECTORS];
  float *y;
  int64_t ldy;
  const float *bias, *res;
  int act;
  float act_alpha, act_min, act_max;
} tb_conv_grouped_tile;

/* The micro-kernels of one instruction set: lanes per vector and the widest tile in vectors. */
typedef struct tb_conv_grouped_impl {
  int lanes, max_vectors;
  void (*tile)(const tb_conv_grouped_tile *t);
} tb_conv_grouped_impl;

extern const tb_conv_grouped_impl tb_conv_grouped_avx512, tb_conv_grouped_avx2;

/* The micro-kernels of a GEMM path (NULL for the portable one). */
const tb_conv_grouped_impl *tb_conv_grouped_for(tb_gemm_path path);

/* Whether the grouped direct convolution takes g on impl: 1 or 2 spatial axes, group > 1, not depthwise,
 * a multiple of 4 and at most TB_CONV_GROUPED_MAX_MG output channels per group, not 1x1 stride 1 unpadded
 * (a plain GEMM per group on X, which packs nothing), horizontal stride at most 4, at most 64 taps, output
 * rows at least lanes - 2 pixels wide. A reason in `why` when not (may be NULL). */
enum { TB_CONV_GROUPED_MAX_MG = 32 };
bool tb_conv_grouped_fits(const tb_conv_grouped_impl *impl, const tb_conv_geom *g, char *why, size_t why_cap);

/* W (out_c x in_c/group x kh x kw) packed in chunks of 4 output channels: group, chunk, input channel,
 * tap, channel. Opaque; NULL when out of memory. */
typedef struct tb_conv_grouped_weights tb_conv_grouped_weights;
tb_conv_grouped_weights *tb_conv_grouped_pack(const tb_conv_geom *g, const float *w);
void tb_conv_grouped_free(tb_conv_grouped_weights *w);

/* y = act(conv(x, w) + bias + residual) over the pool; act only Relu, LeakyRelu and Clip (ep's other kinds
 * are the caller's, after). False when the source cannot be allocated (y then unspecified). */
bool tb_conv_grouped_run(const tb_conv_grouped_impl *impl, const tb_conv_geom *g, const tb_conv_grouped_weights *w,
                         const float *x, const float *bias, const float *residual, const tb_gemm_epilogue *ep, float *y,
                         struct tb_pool *pool);

#endif
