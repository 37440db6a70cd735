/* Internal: what the fast convolution files share (level-2 fp32 in conv_fast.c, level-3 bf16 in
 * conv_bf16.c): the geometry of a Conv / tb::FusedConv node resolved from its tensors (1-D as 2-D with one
 * row), the input-patch packer that feeds the implicit GEMM (no im2col buffer), the GEMM each precision
 * plugs into the common driver, the direct depthwise kernels, and the scalar residual + activation
 * epilogue. */
#ifndef TB_CPU_KERNELS_FAST_CONV_FAST_H
#define TB_CPU_KERNELS_FAST_CONV_FAST_H
#include "backend/cpu/kernels/fast/gemm/gemm_f32.h"
#include "backend/cpu/kernels/kernel.h"
#include "ops/nn/window.h"

typedef struct tb_conv_geom {
  size_t spatial;                  /* 1 or 2 spatial axes */
  int64_t batch, in_c, out_c, group; /* N, C, M, group */
  int64_t ih, iw, oh, ow;          /* 1-D: ih = oh = 1 */
  int64_t kh, kw, sh, sw, dh, dw;  /* kernel, strides, dilations (1-D: kh = sh = dh = 1) */
  int64_t ph, pw;                  /* leading pads (auto_pad resolved) */
} tb_conv_geom;

/* Geometry from X's and W's shapes and the node's attributes (group, kernel_shape, strides, dilations,
 * pads, auto_pad, read as the reference kernel reads them). TB_ERR_MODEL naming the node when the shapes
 * do not fit (ranks, channels per group) and TB_ERR_UNSUPPORTED for more than 2 spatial axes. */
tb_status tb_conv_geom_resolve(const tb_kernel_ctx *ctx, size_t x_ndim, const int64_t *x_shape, size_t w_ndim,
                               const int64_t *w_shape, tb_conv_geom *g);

/* The rows/columns part of g (1 or 2 spatial axes; set g->spatial first) from X's shape, the window and the
 * output's spatial sizes: shared by the convolution and the transposed convolution. */
void tb_conv_geom_set_axes(tb_conv_geom *g, const int64_t *x_shape, const nn_window *win, const int64_t *out);
static inline int64_t tb_conv_k(const tb_conv_geom *g) { return g->in_c / g->group * g->kh * g->kw; }
static inline int64_t tb_conv_pixels(const tb_conv_geom *g) { return g->oh * g->ow; }
/* One input channel per group and one or more (a channel multiplier) output channels per group: the
 * direct depthwise path. */
static inline bool tb_conv_is_depthwise(const tb_conv_geom *g) {
  return g->group == g->in_c && g->group > 1 && g->out_c % g->group == 0;
}
/* A 1x1 kernel, stride 1, no pads: the input itself is the K x N operand. */
static inline bool tb_conv_is_pointwise(const tb_conv_geom *g) {
  return g->kh == 1 && g->kw == 1 && g->sh == 1 && g->sw == 1 && g->ph == 0 && g->pw == 0 && g->oh == g->ih &&
         g->ow == g->iw;
}

/* d[t] = x[t * stride], t < n: how the patch packer copies one clipped input row segment (portable, and
 * vectorised for AVX-512, both in conv_pack_avx512.c; neither reads past x[(n - 1) * stride]). */
typedef void (*tb_conv_gather_fn)(float *d, const float *x, int64_t stride, int64_t n);
void tb_conv_gather_portable(float *d, const float *x, int64_t stride, int64_t n);
void tb_conv_gather_avx512(float *d, const float *x, int64_t stride, int64_t n);

/* The patch matrix of one image and group (K = C/group*kh*kw rows, one column per output pixel) as a
 * tb_gemm_pack_fn context: x points at the group's first input channel; column o is output pixel col0 + o;
 * avx512: pack with the AVX-512 routines (conv_pack_avx512.c; cpuid checked by the caller). */
typedef struct tb_conv_patches {
  const tb_conv_geom *g;
  const float *x;
  int64_t col0;
  bool avx512;
} tb_conv_patches;
void tb_conv_pack_patches(void *patches, int64_t o0, int64_t outer, int64_t p0, int64_t kc, int width, float *dst);

/* A run of columns on one output row within one sliver (pixels ox .. ox+len of row oy); depth row p of
 * it lands at dst + at + p * width. */
typedef struct tb_conv_pixel_run {
  int64_t oy, ox, len, at;
} tb_conv_pixel_run;
/* Depth rows p0 .. p0+kc of the runs, the runs' columns only, with AVX-512 masked loads (zeros in the
 * padding folded into the masks). False, with nothing written, for what it does not take: strides above
 * 2, kw above 16, more than 64 runs or a run over 32 pixels. */
bool tb_conv_pack_runs_avx512(const tb_conv_patches *pc, const tb_conv_pixel_run *runs, int n_runs, int64_t p0, int64_t kc,
                              int width, float *dst);

/* One precision's GEMM as the convolution uses it (fp32 in conv_fast.c, bf16 in conv_bf16.c): pack one
 * group's weights (an mg x K row-major matrix; NULL when out of memory), free them, and run one product
 * C += A B whose B is either plain (b, ldb) or the patch packer (patches, b NULL); C holds bias + residual
 * before (tb_conv_block_init) and gets the activation after (tb_conv_block_act). `path` is the GEMM's own
 * path enum. False when a buffer cannot be allocated. */
typedef struct tb_conv_gemm {
  void *(*pack_weights)(int path, const float *w, int64_t mg, int64_t k, bool transposed);
  void (*free_weights)(void *packed);
  bool (*run)(int path, int64_t m, int64_t n, int64_t k, const void *a, const float *b, int64_t ldb,
              tb_conv_patches *patches, float *c, int64_t ldc, struct tb_pool *pool);
  /* Optional (NULL: never): whether groups of mg output channels can take the transposed product,
   * pixels as the GEMM's rows and channels as its columns (pack_weights with transposed packs W as the
   * right-hand operand), and that product: ct[n x m] (row stride m) = patches^T W^T, with the patches
   * plain (b: the K x n input rows, row stride ldb) or packed (patches, b NULL) as the left-hand operand. */
  bool (*transposed)(int path, int64_t mg);
  bool (*run_t)(int path, int64_t m, int64_t n, int64_t k, const void *w, const float *b, int64_t ldb,
                tb_conv_patches *patches, float *ct, struct tb_pool *pool);
  /* Optional (NULL: never): the direct convolution (conv_direct.h) of this precision on this path, NULL
   * when the path has none. The driver uses it for the geometries tb_conv_direct_fits takes. */
  const struct tb_conv_direct_impl *(*direct)(int path);
  /* Optional (NULL: never): the Winograd F(2x2, 3x3) convolution (conv_winograd.h) of this precision on
   * this path, NULL when the path has none. The driver prefers it to the direct convolution for the
   * geometries tb_conv_winograd_fits takes. */
  const struct tb_conv_winograd_impl *(*winograd)(int path);
  /* Optional (NULL: never): the grouped direct convolution (conv_grouped.h) on this path, NULL when the
   * path has none. The driver prefers it to every other method for the grouped geometries it takes. */
  const struct tb_conv_grouped_impl *(*grouped)(int path);
} tb_conv_gemm;

/* The level-2 fp32 product (conv_fast.c) on the GEMM of gemm_f32.h; `path` a tb_gemm_path. */
extern const tb_conv_gemm tb_conv_gemm_f32;

/* An output block (rows x cols, row stride ldy) before its products: y = bias[row] (0 when bias is NULL)
 * + residual (res NULL: none; row stride ldr; may be y itself). path: the AVX-512 or AVX2 loops, else plain
 * C (cpuid checked by the caller). */
void tb_conv_block_init(tb_gemm_path path, float *y, int64_t ldy, int64_t rows, int64_t cols, const float *bias,
                        const float *res, int64_t ldr);
/* An output block (rows x cols, row stride ldy) from the transposed product ct (cols x rows, row stride
 * ldt): y = ct^T + bias[row] + residual (as tb_conv_block_init's). */
void tb_conv_block_from_t(tb_gemm_path path, float *y, int64_t ldy, int64_t rows, int64_t cols, const float *ct, int64_t ldt,
                          const float *bias, const float *res, int64_t ldr);
/* The block after its products: the epilogue's activation (none, Relu, LeakyRelu, Clip vectorised; the
 * rest as tb_conv_epilogue_row). */
void tb_conv_block_act(tb_gemm_path path, const tb_gemm_epilogue *ep, float *y, int64_t ldy, int64_t rows, int64_t cols);

/* A Conv (fused false) or tb::FusedConv run on that GEMM; depthwise convolutions take the direct fp32 path
 * dw_path. prepare packs a constant W once (state NULL otherwise; run then packs per call). */
tb_status tb_conv_run(tb_kernel_ctx *ctx, const tb_conv_gemm *gemm, int path, tb_gemm_path dw_path, bool fused);
tb_status tb_conv_prepare(tb_kernel_ctx *ctx, void **state, const tb_conv_gemm *gemm, int path);
void tb_conv_release(void *state);
/* float32 X, W (, B, residual) of rank 3 or 4 (from the types, else W's, else kernel_shape's length). */
bool tb_conv_accepts(const tb_kernel_query *q);

/* y[n] = act(y[n] + residual[n]) (residual may be NULL), the tb_gemm_epilogue's activation in float:
 * through ep->vec's add and unary loops when it is set (every activation kind), else per element. */
void tb_conv_epilogue_row(const tb_gemm_epilogue *ep, const float *residual, float *y, int64_t n);

/* The depthwise convolution (tb_conv_is_depthwise) of every image on the pool (conv_depthwise.c):
 * y = act(conv(x, w) + bias + residual), bias and residual NULL for none. False when out of memory for its
 * staged rows (y then incomplete). */
bool tb_conv_depthwise_run(tb_gemm_path path, const tb_conv_geom *g, const float *x, const float *w, const float *bias,
                           const float *residual, const tb_gemm_epilogue *ep, float *y, struct tb_pool *pool);

#endif
