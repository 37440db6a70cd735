/* Internal: the direct pointwise convolution for shallow inputs (conv_pointwise.c and
 * conv_pointwise_avx512.c): a 1x1 stride-1 unpadded fp32 convolution, one group, with few input channels
 * over a large map (the rule below): MobileNetV3's and EfficientNet-B0's 1x1 convolutions at 112x112 and
 * 56x56 (16 -> 64, 16 -> 96, 32 -> 16, 24 -> 72, 72 -> 24...). There the implicit GEMM's
 * product is short in depth, and its output block set to the bias first and its input packed take as
 * long as the products; this kernel reads X's rows in place (8 output channels x 48 pixels of registers,
 * the bias starting the sums) and writes each output once, the residual and most activations (SiLU and
 * HardSwish among them) applied in registers, any other over the block's rows after them while they are
 * in cache.
 * AVX-512 only; each output is one FMA chain in channel order by one job, so any thread count gives the
 * same bits. */
#ifndef TB_CPU_KERNELS_FAST_CONV_POINTWISE_H
#define TB_CPU_KERNELS_FAST_CONV_POINTWISE_H
#include <stdbool.h>
#include <stdint.h>
#include "backend/cpu/kernels/fast/conv/conv_fast.h"
#include "ops/fused/fused_params.h"

struct tb_pool;

/* What the pointwise kernel takes (measured on one-node 1x1 convolutions against the implicit GEMM, Zen 5, 1
 * thread; docs/performance.md): at least TB_CONV_POINTWISE_MIN_PIXELS output pixels per image with at most
 * TB_CONV_POINTWISE_MAX_DEPTH input channels, or at least TB_CONV_POINTWISE_DEEP_PIXELS (56x56) with at most
 * TB_CONV_POINTWISE_DEEP_DEPTH. At 28x28 depth 40 lost 5%, at 56x56 depth 144 tied. */
enum {
  TB_CONV_POINTWISE_MAX_DEPTH = 32,
  TB_CONV_POINTWISE_MIN_PIXELS = 784,
  TB_CONV_POINTWISE_DEEP_DEPTH = 96,
  TB_CONV_POINTWISE_DEEP_PIXELS = 3136
};

/* W [M, C, 1, 1] in 8-channel chunks: chunk c holds, for each input channel k, the weights of output
 * channels 8c .. 8c+7 (zeros past M). */
typedef struct tb_conv_pointwise_weights {
  int64_t out_c, in_c, chunks;
  float *w; /* chunks x in_c x 8 */
} tb_conv_pointwise_weights;

/* Whether the block applies activation kind act (tb_gemm_epilogue.act) in registers: none, Relu, LeakyRelu,
 * Clip, Sigmoid, HardSigmoid, HardSwish, SiLU; the others run over the block's rows after it. */
static inline bool tb_conv_pointwise_act_in_regs(int act) {
  return act == TB_FUSED_ACT_NONE || act == TB_FUSED_ACT_RELU || act == TB_FUSED_ACT_LEAKY_RELU ||
         act == TB_FUSED_ACT_CLIP || act == TB_FUSED_ACT_SIGMOID || act == TB_FUSED_ACT_HARD_SIGMOID ||
         act == TB_FUSED_ACT_HARD_SWISH || act == TB_FUSED_ACT_SILU;
}
/* Whether the pointwise kernel takes g on this path (AVX-512 only). */
bool tb_conv_pointwise_fits(tb_gemm_path path, const tb_conv_geom *g);
/* W packed for it; NULL when out of memory. */
tb_conv_pointwise_weights *tb_conv_pointwise_pack(const tb_conv_geom *g, const float *w);
void tb_conv_pointwise_free(tb_conv_pointwise_weights *pw);
/* y = act(conv(x, w) + bias + residual) for every image on the pool (bias, residual NULL for none; the
 * residual may be y itself). g must fit (tb_conv_pointwise_fits) and pw be packed for it. */
void tb_conv_pointwise_run(const tb_conv_geom *g, const tb_conv_pointwise_weights *pw, const float *x, const float *bias,
                           const float *residual, const tb_gemm_epilogue *ep, float *y, struct tb_pool *pool);

/* One block: output channels 8 * chunk0 .. of pixels [p0, p0 + np) of one image (x: its first input plane,
 * y and res: its first output plane, planes n apart), AVX-512 (conv_pointwise_avx512.c). */
void tb_conv_pointwise_block_avx512(const tb_conv_pointwise_weights *pw, const float *x, int64_t n, int64_t p0, int64_t np,
                                    const float *bias, const float *res, const tb_gemm_epilogue *ep, float *y);

#endif
