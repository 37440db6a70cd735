/* Level-2 fp32 Conv and tb::FusedConv (1-D and 2-D; 3-D stays on the reference through accepts), and the
 * convolution driver the bf16 entries (conv_bf16.c) share: an implicit GEMM per image and group (M = output
 * channels of the group, K = C/group * kH * kW, N = output pixels) with the weights packed once at prepare,
 * input patches packed on demand by the GEMM driver (conv_pack.c), the NCHW output written directly; bias
 * and residual set into the output block before the products and the activation after them
 * (conv_epilogue.c); a 1x1 stride-1 unpadded convolution is a plain GEMM on the input; depthwise
 * convolutions take the direct path (conv_depthwise.c). Each GEMM covers one image, group and block of at
 * most PIXEL_BLOCK output pixels, so the packed patches of a depth block and the output block stay in L2
 * (one GEMM over all of a 112x112 image streamed them through L3). For few pixels per image (ResNet's
 * 14x14 and 7x7 layers) the product is transposed, pixels as the GEMM's rows, when X's shape is known at
 * prepare (or W is packed per run) and the channel count fills whole column slivers: the output block is
 * then the transposed product, transposed back with bias and residual. Jobs are split over the pool when
 * they divide evenly between its threads (or are many); otherwise they run one after another and each
 * GEMM, and its block's epilogue (conv_block_pool.h), gets the pool. Where the precision has a direct
 * convolution (conv_direct.h: the fp32 AVX-512 and AVX2 paths, bf16 AVX512-BF16) and it takes the
 * geometry (3x3, 7x7... any stride, not depthwise, not 1x1), that runs instead, with W packed for it at prepare (or per run when W is not a constant). A dilated
 * convolution whose taps mostly read padding (conv_taps.h: the cost rule on the share of the products that
 * are not padding) takes the tap GEMM before the direct one: one GEMM per tap over only the output pixels
 * whose input is inside X. Before all,
 * Winograd F(2x2, 3x3) (conv_winograd.h: 3x3 stride 1, pads 0 or 1, enough tiles; fp32 AVX-512 and AVX2, bf16)
 * takes what it fits, with W transformed at prepare when X's shape is known there (or per run); a W with
 * an infinity stays off it, and a run whose X holds a NaN or an infinity (reported by Winograd's input
 * transform) is redone on the others. ctx->conv_algo (the prepare option tb_prepare_options.conv_algo,
 * its default from TB_CONV_DIRECT / TB_CONV_WINOGRAD, resolved by tb_model_prepare) says which of
 * Winograd, the tap GEMM and the direct convolution may run: auto all three, winograd or direct that one,
 * gemm none (the implicit GEMM alone). Grouped convolutions with few channels per group (conv_grouped.h:
 * multiples of 4 up to 32 output channels per group, AVX-512 and AVX2) take the grouped direct
 * convolution before all of these, under auto and direct; so do fp32 1x1 convolutions with few input
 * channels over large maps on AVX-512 (conv_pointwise.h: the direct pointwise kernel). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <tensorbridge/model.h>
#include "backend/cpu/kernels/fast/conv/conv_block_pool.h"
#include "backend/cpu/kernels/fast/conv/conv_direct.h"
#include "backend/cpu/kernels/fast/conv/conv_fast.h"
#include "backend/cpu/kernels/fast/conv/conv_grouped.h"
#include "backend/cpu/kernels/fast/conv/conv_pointwise.h"
#include "backend/cpu/kernels/fast/conv/conv_taps.h"
#include "backend/cpu/kernels/fast/conv/conv_winograd.h"
#include "backend/cpu/kernels/fast/gemm/fast_kernel.h"
#include "backend/cpu/kernels/fast/gemm/gemm_f32_internal.h"
#include "core/threadpool.h"

/* PIXEL_BLOCK: output pixels per GEMM at most; blocks are whole multiples of PIXEL_ALIGN (every path's NR
 * divides it) and, when cut for threads, at least MIN_THREAD_PIXELS wide. */
enum { PIXEL_BLOCK = 512, PIXEL_ALIGN = 32, MIN_THREAD_PIXELS = 192 };
/* At most this many output pixels per image take the transposed product (pixels as the GEMM's rows) when
 * the GEMM offers it for the channel count: there the pixels' last partial column sliver (196 = 6 x 32 + 4,
 * 49 = 32 + 17) would waste much of each product, while the 14-row slivers of pixels waste little;
 * with more pixels the narrower pixel slivers cost more packing than the edges they save. */
enum { TRANSPOSED_MAX_PIXELS = 400 };
/* ... and only when the pixels' last column sliver wastes at least 1 / TRANSPOSED_MIN_WASTE of the product
 * (49 pixels: 15 of 64 columns) or the depth is at least TRANSPOSED_MIN_DEPTH: transposing the product back
 * costs about as much as 40 steps of depth, more than the 12% edge of 196 pixels saves at depths 80 to 256
 * (measured on 1x1 convolutions at 14x14, Zen 5, 1 thread: 112 -> 672 0.139 ms as is against 0.152
 * transposed, 256 -> 1024 0.48 against 0.50; 1024 -> 256 0.48 against 0.44 transposed). */
enum { TRANSPOSED_MIN_WASTE = 5, TRANSPOSED_MIN_DEPTH = 512 };

/* Weights packed for one GEMM and path: one packed mg x K operand per group. */
typedef struct conv_state {
  const tb_conv_gemm *gemm;
  int path;
  size_t w_ndim;
  int64_t w_shape[4], group;
  bool transposed; /* packed for the transposed product */
  void **packed;
  tb_conv_direct_weights *direct; /* instead of packed: packed for the direct convolution */
  tb_conv_winograd_weights *winograd; /* instead of both: transformed and packed for Winograd */
  tb_conv_taps_weights *taps; /* instead of all three: packed per tap for the tap GEMM (conv_taps.h) */
  tb_conv_grouped_weights *grouped; /* instead of all four: packed for the grouped direct convolution */
  bool grouped_guessed;              /* ... for a made-up X (its shape not known): W is still needed */
  tb_conv_pointwise_weights *pointwise; /* instead of all five: packed for the direct pointwise convolution */
} conv_state;

void tb_conv_release(void *state) {
  conv_state *s = state;
  if (!s) return;
  for (int64_t g = 0; s->packed && g < s->group; g++) s->gemm->free_weights(s->packed[g]);
  free(s->packed);
  tb_conv_direct_free(s->direct);
  tb_conv_winograd_free(s->winograd);
  tb_conv_taps_free(s->taps);
  tb_conv_grouped_free(s->grouped);
  tb_conv_pointwise_free(s->pointwise);
  free(s);
}

/* A state for W (its shape, the GEMM, path and group it was made for), nothing packed yet; NULL when out
 * of memory. */
static conv_state *new_state(const tb_conv_gemm *gemm, int path, const tb_tensor *w, int64_t group) {
  conv_state *s = calloc(1, sizeof *s);
  if (!s) return NULL;
  *s = (conv_state){.gemm = gemm, .path = path, .w_ndim = tb_tensor_ndim(w), .group = group};
  memcpy(s->w_shape, tb_tensor_shape(w), s->w_ndim * sizeof(int64_t));
  return s;
}

/* W [M, C/group, kh(, kw)] packed per group (group g's rows: an mg x K row-major matrix). *out stays NULL
 * when there is nothing to pack: a shape the run will reject, a depthwise or an empty weight. */
static tb_status pack_weights(const tb_kernel_ctx *ctx, const tb_conv_gemm *gemm, int path, const tb_tensor *w,
                              int64_t group, bool transposed, conv_state **out) {
  *out = NULL;
  size_t nd = tb_tensor_ndim(w);
  const int64_t *ws = tb_tensor_shape(w);
  if (nd < 3 || nd > 4 || group < 1 || ws[0] % group != 0 || tb_tensor_numel(w) == 0) return TB_OK;
  if (ws[1] == 1 && group > 1 && ws[0] % group == 0) return TB_OK; /* depthwise: the taps are used as they are */
  int64_t mg = ws[0] / group, k = tb_tensor_numel(w) / ws[0];
  conv_state *s = new_state(gemm, path, w, group);
  void **packed = calloc((size_t)group, sizeof *packed);
  if (!s || !packed) {
    free(s);
    free(packed);
    return tb_kernel_error(ctx, TB_ERR_OUT_OF_MEMORY, "no memory for the packed weights of %lld groups", (long long)group);
  }
  s->transposed = transposed;
  s->packed = packed;
  const float *pw = tb_tensor_host_data(w);
  for (int64_t g = 0; g < group; g++)
    if (!(packed[g] = gemm->pack_weights(path, pw + g * mg * k, mg, k, transposed))) {
      tb_conv_release(s);
      return tb_kernel_error(ctx, TB_ERR_OUT_OF_MEMORY, "no memory to pack the weights W [%lld, %lld, ...] (%lld x %lld per group)",
                             (long long)ws[0], (long long)ws[1], (long long)mg, (long long)k);
    }
  *out = s;
  return TB_OK;
}

/* Whether the product of mg channels at depth k over `pixels` output pixels per image (-1: not known) is
 * transposed. */
static bool want_transposed(const tb_conv_gemm *gemm, int path, int64_t mg, int64_t k, int64_t pixels) {
  if (!gemm->transposed || pixels < 0 || pixels > TRANSPOSED_MAX_PIXELS || !gemm->transposed(path, mg)) return false;
  int64_t padded = (pixels + PIXEL_ALIGN - 1) / PIXEL_ALIGN * PIXEL_ALIGN;
  return (padded - pixels) * TRANSPOSED_MIN_WASTE >= pixels || k >= TRANSPOSED_MIN_DEPTH;
}

/* The state's packed weights when they were packed by this GEMM and path for this W shape and group. */
static bool state_fits(const conv_state *s, const tb_conv_gemm *gemm, int path, const tb_tensor *w, int64_t group) {
  return s && s->gemm == gemm && s->path == path && s->group == group && s->w_ndim == tb_tensor_ndim(w) &&
         memcmp(s->w_shape, tb_tensor_shape(w), s->w_ndim * sizeof(int64_t)) == 0;
}

/* One run's work: jobs (image, group, pixel block) of the implicit GEMM, or planes of the depthwise path. */
typedef struct conv_job {
  const tb_conv_geom *g;
  const tb_conv_gemm *gemm;
  int path;
  tb_gemm_path dw_path;
  const float *x, *w, *bias, *residual;
  float *y;
  void *const *packed;
  tb_gemm_epilogue ep;
  int64_t splits, chunk;
  tb_pool *inner; /* the pool handed to the GEMM when the jobs alone cannot fill it */
  bool transposed; /* the products are transposed (pixels as rows) */
  int failed;
} conv_job;

/* The direct and Winograd paths apply Relu, LeakyRelu and Clip in registers as they store, and
 * any other activation per stored row segment (7 to 16 values a call, most of them a vector's tail): a
 * fused SiLU made YOLO's direct and EfficientNet's depthwise convolutions 1.3-1.5x slower than Conv then
 * Sigmoid and Mul. For those kinds they store without it (bias and residual still added) and it runs over
 * each whole output plane afterwards. (The depthwise path runs every activation over its block of rows
 * after them: conv_depthwise.c.) */
static tb_gemm_epilogue tile_epilogue(const tb_gemm_epilogue *ep) {
  tb_gemm_epilogue t = *ep;
  if (t.act > 3) t.act = 0;
  return t;
}

static void gemm_jobs(void *p, size_t begin, size_t end) {
  conv_job *j = p;
  const tb_conv_geom *g = j->g;
  int64_t cg = g->in_c / g->group, mg = g->out_c / g->group, k = tb_conv_k(g), n = tb_conv_pixels(g);
  bool pointwise = tb_conv_is_pointwise(g);
  bool transposed = j->transposed;
  float *ct = transposed ? malloc((size_t)(j->chunk * mg) * sizeof *ct) : NULL; /* the transposed product */
  if (transposed && !ct) {
    __atomic_store_n(&j->failed, 1, __ATOMIC_RELAXED);
    return;
  }
  for (size_t t = begin; t < end; t++) {
    int64_t s = (int64_t)t % j->splits, grp = (int64_t)t / j->splits % g->group, b = (int64_t)t / j->splits / g->group;
    int64_t n0 = s * j->chunk, nc = n - n0 < j->chunk ? n - n0 : j->chunk;
    if (nc <= 0) continue;
    const float *xg = j->x + (b * g->in_c + grp * cg) * g->ih * g->iw;
    tb_conv_patches patches = {g, xg, n0, j->dw_path == TB_GEMM_AVX512};
    int64_t out = (b * g->out_c + grp * mg) * n + n0;
    const float *bias = j->bias ? j->bias + grp * mg : NULL, *res = j->residual ? j->residual + out : NULL;
    bool ok;
    if (transposed) {
      ok = j->gemm->run_t(j->path, mg, nc, k, j->packed[grp], pointwise ? xg + n0 : NULL, n, pointwise ? NULL : &patches,
                          ct, j->inner);
      if (ok) tb_conv_block_from_t_pool(j->dw_path, j->y + out, n, mg, nc, ct, mg, bias, res, n, j->inner);
    } else {
      tb_conv_block_init_pool(j->dw_path, j->y + out, n, mg, nc, bias, res, n, j->inner);
      ok = j->gemm->run(j->path, mg, nc, k, j->packed[grp], pointwise ? xg + n0 : NULL, n, pointwise ? NULL : &patches,
                        j->y + out, n, j->inner);
    }
    if (!ok) __atomic_store_n(&j->failed, 1, __ATOMIC_RELAXED);
    tb_conv_block_act_pool(j->dw_path, &j->ep, j->y + out, n, mg, nc, j->inner); /* inner: the GEMM's pool, or NULL */
  }
  free(ct);
}

/* C = 0 input channels: every output is its bias, then the epilogue. */
static void empty_k(const conv_job *j) {
  const tb_conv_geom *g = j->g;
  int64_t n = tb_conv_pixels(g);
  for (int64_t b = 0; b < g->batch; b++)
    for (int64_t m = 0; m < g->out_c; m++) {
      float *y = j->y + (b * g->out_c + m) * n;
      for (int64_t i = 0; i < n; i++) y[i] = j->bias ? j->bias[m] : 0.0f;
      tb_conv_epilogue_row(&j->ep, j->residual ? j->residual + (b * g->out_c + m) * n : NULL, y, n);
    }
}

/* The pixel blocks of each (image, group): at most PIXEL_BLOCK wide, and with threads, more of them (down
 * to MIN_THREAD_PIXELS) when that makes the jobs divide evenly; j->inner is the pool when the jobs still
 * cannot keep the threads evenly busy (they then run in turn, each GEMM split over the pool). */
static void choose_blocks(conv_job *j, tb_pool *pool) {
  const tb_conv_geom *g = j->g;
  int64_t threads = tb_pool_threads(pool), n = tb_conv_pixels(g), base = g->batch * g->group;
  int64_t splits = (n + PIXEL_BLOCK - 1) / PIXEL_BLOCK;
  bool even = threads <= 1 || base * splits >= 4 * threads || base * splits % threads == 0;
  if (!even) {
    int64_t more = splits + 1;
    while (base * more % threads != 0) more++;
    if (n / more >= MIN_THREAD_PIXELS) splits = more, even = true;
  }
  int64_t chunk = (n + splits - 1) / splits;
  chunk = (chunk + PIXEL_ALIGN - 1) / PIXEL_ALIGN * PIXEL_ALIGN;
  j->chunk = chunk < n ? chunk : n;
  j->splits = (n + j->chunk - 1) / j->chunk;
  j->inner = even ? NULL : pool;
}

/* Jobs over (image, group, pixel block): on the pool, or in turn with the pool inside each GEMM. */
static tb_status run_gemm(tb_kernel_ctx *ctx, conv_job *j, const tb_tensor *w) {
  const tb_conv_geom *g = j->g;
  conv_state *own = NULL, *s = ctx->state;
  if (!state_fits(s, j->gemm, j->path, w, g->group) || !s->packed) {
    bool transposed = want_transposed(j->gemm, j->path, g->out_c / g->group, tb_conv_k(g), tb_conv_pixels(g));
    tb_status st = pack_weights(ctx, j->gemm, j->path, w, g->group, transposed, &own);
    if (st != TB_OK) return st;
    if (!own) return tb_kernel_error(ctx, TB_ERR_INTERNAL, "the weights W could not be packed");
    s = own;
  }
  j->packed = s->packed;
  j->transposed = s->transposed;
  int64_t n = tb_conv_pixels(g);
  choose_blocks(j, ctx->pool);
  size_t jobs = (size_t)(g->batch * g->group * j->splits);
  if (j->inner) gemm_jobs(j, 0, jobs);
  else tb_pool_parallel_for(ctx->pool, jobs, gemm_jobs, j);
  tb_conv_release(own);
  if (j->failed)
    return tb_kernel_error(ctx, TB_ERR_OUT_OF_MEMORY, "no memory for the GEMM packing buffers (%lld x %lld x %lld)",
                           (long long)(g->out_c / g->group), (long long)n, (long long)tb_conv_k(g));
  return TB_OK;
}

/* The direct convolution of this GEMM and path when ctx's algorithm allows it (auto or direct) and it
 * takes g; else NULL. */
static const tb_conv_direct_impl *direct_impl(const tb_kernel_ctx *ctx, const tb_conv_gemm *gemm, int path,
                                              const tb_conv_geom *g) {
  const tb_conv_direct_impl *impl = gemm->direct ? gemm->direct(path) : NULL;
  bool allowed = ctx->conv_algo == TB_CONV_ALGO_DEFAULT || ctx->conv_algo == TB_CONV_ALGO_AUTO ||
                 ctx->conv_algo == TB_CONV_ALGO_DIRECT;
  return impl && allowed && tb_conv_direct_fits(impl, g, NULL, 0) ? impl : NULL;
}

/* The direct convolution with the weights packed at prepare (the prepare chose it) or packed now. */
static void act_planes(void *p, size_t begin, size_t end) {
  const conv_job *j = p;
  int64_t n = tb_conv_pixels(j->g);
  for (size_t t = begin; t < end; t++) tb_conv_epilogue_row(&j->ep, NULL, j->y + (int64_t)t * n, n);
}

static void plane_activation(tb_kernel_ctx *ctx, const conv_job *j) {
  if (j->ep.act > 3) tb_pool_parallel_for(ctx->pool, (size_t)(j->g->batch * j->g->out_c), act_planes, (void *)j);
}

static tb_status run_direct(tb_kernel_ctx *ctx, const conv_job *j, const tb_tensor *w) {
  const tb_conv_geom *g = j->g;
  const conv_state *s = ctx->state;
  const tb_conv_direct_impl *impl = j->gemm->direct(j->path);
  char why[200] = "";
  if (!tb_conv_direct_fits(impl, g, why, sizeof why)) /* the prepare saw a shape this run does not have */
    return tb_kernel_error(ctx, TB_ERR_INTERNAL, "weights packed for the direct convolution, which does not take this run's "
                           "shape: %s", why);
  tb_conv_direct_weights *own = NULL;
  const tb_conv_direct_weights *packed = state_fits(s, j->gemm, j->path, w, g->group) ? s->direct : NULL;
  if (!packed && !(packed = own = tb_conv_direct_pack(impl, g, tb_tensor_host_data(w))))
    return tb_kernel_error(ctx, TB_ERR_OUT_OF_MEMORY, "no memory to pack the weights W for the direct convolution");
  tb_gemm_epilogue tile_ep = tile_epilogue(&j->ep);
  bool ok = tb_conv_direct_run(impl, g, packed, j->x, j->bias, j->residual, &tile_ep, j->y, ctx->pool);
  tb_conv_direct_free(own);
  if (!ok)
    return tb_kernel_error(ctx, TB_ERR_OUT_OF_MEMORY, "no memory for the direct convolution's source and tiles (%lld x %lld x "
                           "%lld input)", (long long)g->in_c, (long long)g->ih, (long long)g->iw);
  plane_activation(ctx, j);
  return TB_OK;
}

/* Whether the tap GEMM (conv_taps.h) runs g: the algorithm is auto and its cost rule takes g against what
 * would run otherwise (the direct convolution where it fits, else the implicit GEMM). The winograd, direct
 * and gemm choices keep their own paths (gemm: the implicit GEMM alone). */
static bool taps_wanted(const tb_kernel_ctx *ctx, const tb_conv_gemm *gemm, int path, const tb_conv_geom *g) {
  bool allowed = ctx->conv_algo == TB_CONV_ALGO_DEFAULT || ctx->conv_algo == TB_CONV_ALGO_AUTO;
  const tb_conv_direct_impl *direct = allowed ? direct_impl(ctx, gemm, path, g) : NULL;
  double max_share = !direct                                ? TB_CONV_TAPS_MAX_SHARE_VS_GEMM
                     : direct == &tb_conv_direct_f32_avx2 ? TB_CONV_TAPS_MAX_SHARE_VS_DIRECT_AVX2
                                                          : TB_CONV_TAPS_MAX_SHARE_VS_DIRECT;
  return allowed && tb_conv_taps_fits(g, max_share);
}

/* The tap GEMM with the weights packed per tap at prepare (the prepare chose it) or packed now. */
static tb_status run_taps(tb_kernel_ctx *ctx, const conv_job *j, const tb_tensor *w) {
  const tb_conv_geom *g = j->g;
  const conv_state *s = ctx->state;
  tb_conv_taps_weights *own = NULL;
  const tb_conv_taps_weights *packed = state_fits(s, j->gemm, j->path, w, g->group) ? s->taps : NULL;
  if (!packed && !(packed = own = tb_conv_taps_pack(j->gemm, j->path, g, tb_tensor_host_data(w))))
    return tb_kernel_error(ctx, TB_ERR_OUT_OF_MEMORY, "no memory to pack the weights W per tap for the dilated convolution");
  bool ok = tb_conv_taps_run(packed, j->dw_path == TB_GEMM_AVX512, g, j->x, j->bias, j->residual, &j->ep, j->y, ctx->pool);
  tb_conv_taps_free(own);
  if (!ok)
    return tb_kernel_error(ctx, TB_ERR_OUT_OF_MEMORY, "no memory for the dilated convolution's scratch block (%lld x %lld)",
                           (long long)(g->out_c / g->group), (long long)tb_conv_pixels(g));
  return TB_OK;
}

/* The Winograd convolution of this GEMM and path when ctx's algorithm allows it (auto or winograd) and it
 * takes g; else NULL. */
static const tb_conv_winograd_impl *winograd_impl(const tb_kernel_ctx *ctx, const tb_conv_gemm *gemm, int path,
                                                  const tb_conv_geom *g) {
  const tb_conv_winograd_impl *impl = gemm->winograd ? gemm->winograd(path) : NULL;
  bool allowed = ctx->conv_algo == TB_CONV_ALGO_DEFAULT || ctx->conv_algo == TB_CONV_ALGO_AUTO ||
                 ctx->conv_algo == TB_CONV_ALGO_WINOGRAD;
  return impl && allowed && tb_conv_winograd_fits(impl, g, NULL, 0) ? impl : NULL;
}

/* Winograd with the weights transformed at prepare (the prepare chose it) or now; *declined when X holds
 * a NaN or an infinity (y then unspecified: the caller runs another path). */
static tb_status run_winograd(tb_kernel_ctx *ctx, const conv_job *j, const tb_tensor *w,
                              const tb_conv_winograd_impl *impl, bool *declined) {
  const tb_conv_geom *g = j->g;
  const conv_state *s = ctx->state;
  tb_conv_winograd_weights *own = NULL;
  const tb_conv_winograd_weights *packed = state_fits(s, j->gemm, j->path, w, g->group) ? s->winograd : NULL;
  if (!packed && !(packed = own = tb_conv_winograd_pack(impl, g, tb_tensor_host_data(w))))
    return tb_kernel_error(ctx, TB_ERR_OUT_OF_MEMORY, "no memory to transform the weights W for the Winograd convolution");
  tb_gemm_epilogue tile_ep = tile_epilogue(&j->ep);
  tb_conv_winograd_status done = tb_conv_winograd_run(impl, g, packed, j->x, j->bias, j->residual, &tile_ep, j->y, ctx->pool);
  tb_conv_winograd_free(own);
  *declined = done == TB_WINOGRAD_NOT_FINITE;
  if (done == TB_WINOGRAD_NO_MEMORY)
    return tb_kernel_error(ctx, TB_ERR_OUT_OF_MEMORY, "no memory for the Winograd convolution's transformed tiles (%lld -> "
                           "%lld channels)", (long long)g->in_c, (long long)g->out_c);
  if (!*declined) plane_activation(ctx, j);
  return TB_OK;
}

/* The grouped direct convolution of this GEMM and path when ctx's algorithm allows it (auto or direct), it
 * takes g and g is not a dilated convolution whose taps mostly read padding (the tap GEMM skips those
 * products; it computes them); else NULL. */
static const tb_conv_grouped_impl *grouped_impl(const tb_kernel_ctx *ctx, const tb_conv_gemm *gemm, int path,
                                                const tb_conv_geom *g) {
  const tb_conv_grouped_impl *impl = gemm->grouped ? gemm->grouped(path) : NULL;
  bool allowed = ctx->conv_algo == TB_CONV_ALGO_DEFAULT || ctx->conv_algo == TB_CONV_ALGO_AUTO ||
                 ctx->conv_algo == TB_CONV_ALGO_DIRECT;
  return impl && allowed && tb_conv_grouped_fits(impl, g, NULL, 0) && !taps_wanted(ctx, gemm, path, g) ? impl : NULL;
}

/* Whether the direct pointwise convolution runs g: the fp32 GEMM's AVX-512 path, ctx's algorithm auto or direct,
 * and the geometry it takes (conv_pointwise.h). */
static bool pointwise_wanted(const tb_kernel_ctx *ctx, const tb_conv_gemm *gemm, int path, const tb_conv_geom *g) {
  bool allowed = ctx->conv_algo == TB_CONV_ALGO_DEFAULT || ctx->conv_algo == TB_CONV_ALGO_AUTO ||
                 ctx->conv_algo == TB_CONV_ALGO_DIRECT;
  return allowed && gemm == &tb_conv_gemm_f32 && tb_conv_pointwise_fits((tb_gemm_path)path, g);
}

/* The direct pointwise convolution with the weights packed at prepare or packed now. */
static tb_status run_pointwise(tb_kernel_ctx *ctx, const conv_job *j, const tb_tensor *w) {
  const conv_state *s = ctx->state;
  tb_conv_pointwise_weights *own = NULL;
  const tb_conv_pointwise_weights *packed = state_fits(s, j->gemm, j->path, w, 1) ? s->pointwise : NULL;
  if (!packed && !(packed = own = tb_conv_pointwise_pack(j->g, tb_tensor_host_data(w))))
    return tb_kernel_error(ctx, TB_ERR_OUT_OF_MEMORY, "no memory to pack the weights W for the pointwise convolution");
  tb_conv_pointwise_run(j->g, packed, j->x, j->bias, j->residual, &j->ep, j->y, ctx->pool);
  tb_conv_pointwise_free(own);
  return TB_OK;
}

/* The grouped direct convolution with the weights packed at prepare (the prepare chose it) or packed now. */
static tb_status run_grouped(tb_kernel_ctx *ctx, const conv_job *j, const tb_tensor *w, const tb_conv_grouped_impl *impl) {
  const tb_conv_geom *g = j->g;
  const conv_state *s = ctx->state;
  tb_conv_grouped_weights *own = NULL;
  const tb_conv_grouped_weights *packed = state_fits(s, j->gemm, j->path, w, g->group) ? s->grouped : NULL;
  if (!packed && !(packed = own = tb_conv_grouped_pack(g, tb_tensor_host_data(w))))
    return tb_kernel_error(ctx, TB_ERR_OUT_OF_MEMORY, "no memory to pack the weights W for the grouped convolution");
  bool ok = tb_conv_grouped_run(impl, g, packed, j->x, j->bias, j->residual, &j->ep, j->y, ctx->pool);
  tb_conv_grouped_free(own);
  if (!ok)
    return tb_kernel_error(ctx, TB_ERR_OUT_OF_MEMORY, "no memory for the grouped convolution's padded input (%lld x %lld x "
                           "%lld)", (long long)g->in_c, (long long)g->ih, (long long)g->iw);
  plane_activation(ctx, j);
  return TB_OK;
}

static void format_shape(const tb_tensor *t, char *buf, size_t cap) {
  size_t len = (size_t)snprintf(buf, cap, "[");
  for (size_t d = 0; d < tb_tensor_ndim(t) && len < cap; d++)
    len += (size_t)snprintf(buf + len, cap - len, "%s%lld", d ? ", " : "", (long long)tb_tensor_shape(t)[d]);
  if (len < cap) snprintf(buf + len, cap - len, "]");
}

tb_status tb_conv_run(tb_kernel_ctx *ctx, const tb_conv_gemm *gemm, int path, tb_gemm_path dw_path, bool fused) {
  size_t n_in = ctx->n_inputs < (fused ? 4u : 3u) ? ctx->n_inputs : (fused ? 4u : 3u);
  tb_status st = tb_fast_check_f32(ctx, n_in);
  if (st != TB_OK) return st;
  const tb_tensor *x = n_in > 0 ? ctx->inputs[0] : NULL, *w = n_in > 1 ? ctx->inputs[1] : NULL;
  const tb_tensor *b = n_in > 2 ? ctx->inputs[2] : NULL, *r = n_in > 3 ? ctx->inputs[3] : NULL;
  if (!x || !w) return tb_kernel_error(ctx, TB_ERR_MODEL, "inputs X and W are required");
  tb_conv_geom g;
  st = tb_conv_geom_resolve(ctx, tb_tensor_ndim(x), tb_tensor_shape(x), tb_tensor_ndim(w), tb_tensor_shape(w), &g);
  if (st != TB_OK) return st;
  if (b && (tb_tensor_ndim(b) != 1 || tb_tensor_shape(b)[0] != g.out_c))
    return tb_kernel_error(ctx, TB_ERR_MODEL, "bias B must be 1-D with %lld values", (long long)g.out_c);
  int64_t shape[4] = {g.batch, g.out_c, g.oh, g.ow};
  if (g.spatial == 1) shape[2] = g.ow;
  tb_tensor *y = NULL;
  st = tb_kernel_output(ctx, 0, TB_DTYPE_F32, g.spatial + 2, shape, &y);
  if (st != TB_OK) return st;
  if (r && (tb_tensor_ndim(r) != tb_tensor_ndim(y) ||
            memcmp(tb_tensor_shape(r), tb_tensor_shape(y), tb_tensor_ndim(y) * sizeof(int64_t)) != 0)) {
    char rs[128], ys[128];
    format_shape(r, rs, sizeof rs);
    format_shape(y, ys, sizeof ys);
    return tb_kernel_error(ctx, TB_ERR_INVALID_ARGUMENT, "the residual input's shape %s differs from the output's %s", rs, ys);
  }
  conv_job j = {.g = &g, .gemm = gemm, .path = path, .dw_path = dw_path, .x = tb_tensor_host_data(x),
                .w = tb_tensor_host_data(w), .bias = b ? tb_tensor_host_data(b) : NULL,
                .residual = r ? tb_tensor_host_data(r) : NULL, .y = tb_tensor_host_data(y)};
  if (fused) st = tb_fast_read_act(ctx, &j.ep); /* j.ep stays zero (no activation) for a plain Conv */
  j.ep.vec = tb_fast_vec_ops(dw_path);         /* the residual add and activation loops of this ISA */
  if (st != TB_OK || tb_tensor_numel(y) == 0) return st;
  if (tb_conv_k(&g) == 0) {
    empty_k(&j);
    return TB_OK;
  }
  if (tb_conv_is_depthwise(&g)) {
    if (!tb_conv_depthwise_run(dw_path, &g, j.x, j.w, j.bias, j.residual, &j.ep, j.y, ctx->pool))
      return tb_kernel_error(ctx, TB_ERR_OUT_OF_MEMORY, "no memory for the depthwise convolution's staged input rows "
                             "(%lld wide)", (long long)g.iw);
    return TB_OK;
  }
  const conv_state *s = ctx->state;
  bool have = state_fits(s, gemm, path, w, g.group); /* packed at prepare: the pointwise weights only if it chose them */
  if ((!have || s->pointwise) && pointwise_wanted(ctx, gemm, path, &g)) return run_pointwise(ctx, &j, w);
  const tb_conv_grouped_impl *grouped = grouped_impl(ctx, gemm, path, &g);
  if (grouped) return run_grouped(ctx, &j, w, grouped);
  /* weights packed for the grouped convolution, which this run's shape does not take: the others pack per run */
  bool prepared = state_fits(s, gemm, path, w, g.group) && !s->grouped;
  const tb_conv_winograd_impl *wino = prepared && !s->winograd ? NULL : winograd_impl(ctx, gemm, path, &g);
  bool declined = false;
  if (wino && (prepared || tb_conv_winograd_no_inf(j.w, tb_tensor_numel(w))) &&
      ((st = run_winograd(ctx, &j, w, wino, &declined)) != TB_OK || !declined))
    return st;
  /* weights transformed for Winograd that this run's shape or X does not take: the other paths pack per run */
  if (prepared && !s->winograd ? s->taps != NULL : taps_wanted(ctx, gemm, path, &g)) return run_taps(ctx, &j, w);
  if (prepared && !s->winograd ? s->direct != NULL : direct_impl(ctx, gemm, path, &g) != NULL) return run_direct(ctx, &j, w);
  return run_gemm(ctx, &j, w);
}

/* The geometry from X's static shape (its type from inference), or with `guess` from a made-up X (one image of W's
 * channels, 64 pixels per kernel tap and more along each axis) when that is not known: what the direct
 * convolution's fits() and packing read does not depend on X's size (depthwise, taps, strides, groups);
 * false when neither is known or valid. */
static bool static_geom(const tb_kernel_ctx *ctx, const tb_tensor *w, bool guess, tb_conv_geom *g) {
  const tb_value_type *t = ctx->in_types && ctx->n_inputs > 0 ? ctx->in_types[0] : NULL;
  const tb_conv_params *p = ctx->params;
  const int64_t *ws = tb_tensor_shape(w);
  size_t nd = tb_tensor_ndim(w);
  int64_t shape[4];
  bool known = t && t->has_shape && t->ndim >= 3 && t->ndim <= 4;
  for (size_t d = 0; known && d < t->ndim; d++)
    if ((shape[d] = t->dims[d].value) < 0) known = false;
  if ((!known && (!guess || nd < 3 || nd > 4)) || !p) return false;
  int64_t group = p->group;
  if (!known) {
    if (__builtin_mul_overflow(ws[1], group, &shape[1])) return false;
    shape[0] = 1;
    for (size_t d = 2; d < nd; d++) shape[d] = ws[d] < 64 ? 64 * (ws[d] + 1) : ws[d] * 2;
  }
  size_t ndim = known ? t->ndim : nd;
  /* only shapes the run would accept (so resolving sets no error for a run that fails later anyway) */
  if (nd != ndim || shape[1] % group != 0 || ws[0] % group != 0 || ws[1] * group != shape[1]) return false;
  return tb_conv_geom_resolve(ctx, ndim, shape, nd, ws, g) == TB_OK;
}

/* Output pixels per image from X's static shape in the graph; -1 when not all known (or not valid). */
static int64_t static_pixels(const tb_kernel_ctx *ctx, const tb_tensor *w) {
  tb_conv_geom g;
  return static_geom(ctx, w, false, &g) ? tb_conv_pixels(&g) : -1;
}

/* The state of a W transformed for Winograd when that is wanted and takes X's static shape (known: the
 * number of tiles decides); *out NULL otherwise. */
static tb_status prepare_winograd(tb_kernel_ctx *ctx, const tb_conv_gemm *gemm, int path, const tb_tensor *w,
                                  conv_state **out) {
  *out = NULL;
  tb_conv_geom g;
  const tb_conv_winograd_impl *impl = NULL;
  if (!gemm->winograd || !gemm->winograd(path) || !static_geom(ctx, w, false, &g) || !(impl = winograd_impl(ctx, gemm, path, &g)) ||
      !tb_conv_winograd_no_inf(tb_tensor_host_data(w), tb_tensor_numel(w)))
    return TB_OK;
  conv_state *s = new_state(gemm, path, w, g.group);
  if (!s || !(s->winograd = tb_conv_winograd_pack(impl, &g, tb_tensor_host_data(w)))) {
    free(s);
    return tb_kernel_error(ctx, TB_ERR_OUT_OF_MEMORY, "no memory to transform the weights W for the Winograd convolution");
  }
  *out = s;
  return TB_OK;
}

/* The state of a W packed per tap for the tap GEMM when that is wanted (conv_taps.h) for X's static shape;
 * *out NULL otherwise (X's size not known: the direct convolution or the implicit GEMM is packed). */
static tb_status prepare_taps(tb_kernel_ctx *ctx, const tb_conv_gemm *gemm, int path, const tb_tensor *w, conv_state **out) {
  *out = NULL;
  tb_conv_geom g;
  if (!static_geom(ctx, w, false, &g) || !taps_wanted(ctx, gemm, path, &g)) return TB_OK; /* the share needs X's size */
  conv_state *s = new_state(gemm, path, w, g.group);
  if (!s || !(s->taps = tb_conv_taps_pack(gemm, path, &g, tb_tensor_host_data(w)))) {
    free(s);
    return tb_kernel_error(ctx, TB_ERR_OUT_OF_MEMORY, "no memory to pack the weights W per tap for the dilated convolution");
  }
  *out = s;
  return TB_OK;
}

/* The state of a W packed for the grouped direct convolution when that is wanted and takes X's static shape
 * (or, not known, a made-up one: then a run on narrow rows packs for another method per run); *out NULL
 * otherwise. */
static tb_status prepare_grouped(tb_kernel_ctx *ctx, const tb_conv_gemm *gemm, int path, const tb_tensor *w,
                                 conv_state **out) {
  *out = NULL;
  tb_conv_geom g;
  bool known = static_geom(ctx, w, false, &g);
  if (!gemm->grouped || !gemm->grouped(path) || (!known && !static_geom(ctx, w, true, &g)) || !grouped_impl(ctx, gemm, path, &g))
    return TB_OK;
  conv_state *s = new_state(gemm, path, w, g.group);
  if (!s || !(s->grouped = tb_conv_grouped_pack(&g, tb_tensor_host_data(w)))) {
    free(s);
    return tb_kernel_error(ctx, TB_ERR_OUT_OF_MEMORY, "no memory to pack the weights W for the grouped convolution");
  }
  s->grouped_guessed = !known;
  *out = s;
  return TB_OK;
}

/* The state of a W packed for the direct pointwise convolution when that is wanted for X's static shape (the
 * map's size decides); *out NULL otherwise. */
static tb_status prepare_pointwise(tb_kernel_ctx *ctx, const tb_conv_gemm *gemm, int path, const tb_tensor *w,
                                   conv_state **out) {
  *out = NULL;
  tb_conv_geom g;
  if (!static_geom(ctx, w, false, &g) || !pointwise_wanted(ctx, gemm, path, &g)) return TB_OK;
  conv_state *s = new_state(gemm, path, w, g.group);
  if (!s || !(s->pointwise = tb_conv_pointwise_pack(&g, tb_tensor_host_data(w)))) {
    free(s);
    return tb_kernel_error(ctx, TB_ERR_OUT_OF_MEMORY, "no memory to pack the weights W for the pointwise convolution");
  }
  *out = s;
  return TB_OK;
}

/* The state of a W packed for the direct convolution when that is wanted and fits; *s NULL otherwise. */
static tb_status prepare_direct(tb_kernel_ctx *ctx, const tb_conv_gemm *gemm, int path, const tb_tensor *w, conv_state **out) {
  *out = NULL;
  tb_conv_geom g;
  const tb_conv_direct_impl *impl = NULL;
  if (!gemm->direct || !gemm->direct(path) || !static_geom(ctx, w, true, &g) || !(impl = direct_impl(ctx, gemm, path, &g)))
    return TB_OK;
  conv_state *s = new_state(gemm, path, w, g.group);
  if (!s || !(s->direct = tb_conv_direct_pack(impl, &g, tb_tensor_host_data(w)))) {
    free(s);
    return tb_kernel_error(ctx, TB_ERR_OUT_OF_MEMORY, "no memory to pack the weights W for the direct convolution");
  }
  *out = s;
  return TB_OK;
}

tb_status tb_conv_prepare(tb_kernel_ctx *ctx, void **state, const tb_conv_gemm *gemm, int path) {
  *state = NULL;
  const tb_tensor *w = ctx->n_inputs > 1 ? ctx->inputs[1] : NULL;
  if (!w || !tb_fast_input_constant(ctx, 1) || tb_tensor_dtype(w) != TB_DTYPE_F32) return TB_OK; /* packed per run */
  tb_status st;
  const tb_conv_params *p = tb_kernel_params(ctx, &st); /* a FusedConv's parameters start with Conv's */
  if (!p) return st;
  int64_t group = p->group;
  conv_state *s = NULL;
  if (st == TB_OK && group >= 1 && tb_tensor_ndim(w) >= 3 && tb_tensor_ndim(w) <= 4 && tb_tensor_shape(w)[0] % group == 0)
    st = prepare_pointwise(ctx, gemm, path, w, &s);
  if (st == TB_OK && !s && group >= 1 && tb_tensor_ndim(w) >= 3 && tb_tensor_ndim(w) <= 4 && tb_tensor_shape(w)[0] % group == 0)
    st = prepare_grouped(ctx, gemm, path, w, &s);
  if (st == TB_OK && !s && group >= 1 && tb_tensor_ndim(w) >= 3 && tb_tensor_ndim(w) <= 4 && tb_tensor_shape(w)[0] % group == 0)
    st = prepare_winograd(ctx, gemm, path, w, &s);
  if (st == TB_OK && !s && group >= 1 && tb_tensor_ndim(w) >= 3 && tb_tensor_ndim(w) <= 4 && tb_tensor_shape(w)[0] % group == 0)
    st = prepare_taps(ctx, gemm, path, w, &s);
  if (st == TB_OK && !s && group >= 1 && tb_tensor_ndim(w) >= 3 && tb_tensor_ndim(w) <= 4 && tb_tensor_shape(w)[0] % group == 0)
    st = prepare_direct(ctx, gemm, path, w, &s);
  if (st == TB_OK && !s && group >= 1 && tb_tensor_ndim(w) >= 1 && tb_tensor_shape(w)[0] % group == 0)
    st = pack_weights(ctx, gemm, path, w, group,
                      want_transposed(gemm, path, tb_tensor_shape(w)[0] / group, tb_tensor_numel(w) / tb_tensor_shape(w)[0],
                                      static_pixels(ctx, w)), &s);
  *state = s;
  if (st == TB_OK && s)
    tb_kernel_set_method(ctx, s->pointwise  ? "pointwise direct"
                              : s->grouped  ? "grouped direct"
                              : s->winograd ? "winograd"
                              : s->taps     ? "tap GEMM"
                              : s->direct   ? "direct"
                                            : "implicit GEMM");
  /* run() reads the packed copy only; with Winograd it may read W again: a NaN or an infinity in X (or a
   * shape Winograd does not take) sends that run to the direct or GEMM path, packed from W then; so may
   * the grouped convolution packed for a made-up X (a run's rows too narrow for it), and the pointwise one
   * (a run on another map size: W is small there). A state prepared for the pointwise kernel packs W per run
   * for a map the kernel refuses (7x7, say): it holds no GEMM packing, so the GEMM packs W from the input. */
  if (st == TB_OK && s && !s->winograd && !s->pointwise && !(s->grouped && s->grouped_guessed))
    tb_kernel_constant_consumed(ctx, 1);
  return st;
}

static bool rank_fits(const tb_value_type *t, bool *known) {
  *known = t && t->has_shape;
  return *known && (t->ndim == 3 || t->ndim == 4);
}

bool tb_conv_accepts(const tb_kernel_query *q) {
  const tb_value_type *const *in = q->in;
  size_t m = q->n_inputs < 4 ? q->n_inputs : 4;
  if (q->n_inputs < 2 || !tb_fast_accepts_f32(in, m) || !in[1]) return false;
  bool known, fits = rank_fits(in[0], &known);
  if (known) return fits;
  fits = rank_fits(in[1], &known);
  if (known) return fits;
  const tb_conv_params *p = q->params;
  return p && (p->win.n_kernel == 1 || p->win.n_kernel == 2);
}

/* ---- the fp32 GEMM (gemm_f32.h) and the level-2 entries ---- */

/* Channels as columns when that wastes no more of the micro-tile than channels as rows: mg rounded up to
 * whole NR-column slivers against mg rounded up to whole MR-row ones (the pixels, now rows, are the
 * other side: ResNet's 3136, 784, 196 are whole multiples of 14). */
static bool f32_transposed(int path, int64_t mg) {
  const tb_gemm_kernel *kr = tb_gemm_kernel_for((tb_gemm_path)path);
  return (mg + kr->nr - 1) / kr->nr * kr->nr <= (mg + kr->mr - 1) / kr->mr * kr->mr;
}

static void *f32_pack(int path, const float *w, int64_t mg, int64_t k, bool transposed) {
  if (transposed) { /* W^T as the right-hand operand: op(B) = W^T (k x mg), W stored mg x k */
    tb_gemm_operand b = {.data = w, .ld = k, .trans = true};
    return tb_gemm_pack_b((tb_gemm_path)path, &b, k, mg);
  }
  tb_gemm_operand a = {.data = w, .ld = k};
  return tb_gemm_pack_a((tb_gemm_path)path, &a, mg, k);
}

static void f32_free(void *packed) { tb_gemm_packed_free(packed); }

static bool f32_run(int path, int64_t m, int64_t n, int64_t k, const void *a, const float *b, int64_t ldb,
                    tb_conv_patches *patches, float *c, int64_t ldc, struct tb_pool *pool) {
  tb_gemm_operand oa = {.packed = a}, ob = {.data = b, .ld = ldb};
  if (!b) ob = (tb_gemm_operand){.pack = tb_conv_pack_patches, .pack_ctx = patches};
  return tb_gemm_f32_run((tb_gemm_path)path, m, n, k, 1.0f, &oa, &ob, 1.0f, c, ldc, NULL, pool);
}

static bool f32_run_t(int path, int64_t m, int64_t n, int64_t k, const void *w, const float *b, int64_t ldb,
                      tb_conv_patches *patches, float *ct, struct tb_pool *pool) {
  tb_gemm_operand oa = {.data = b, .ld = ldb, .trans = true}, ob = {.packed = w}; /* op(A)[pixel][p] = b[p * ldb + pixel] */
  if (!b) oa = (tb_gemm_operand){.pack = tb_conv_pack_patches, .pack_ctx = patches};
  return tb_gemm_f32_run((tb_gemm_path)path, n, m, k, 1.0f, &oa, &ob, 0.0f, ct, m, NULL, pool);
}

/* Winograd F(2x2, 3x3) on the AVX-512 and AVX2 paths (conv_winograd*.c). */
static const tb_conv_winograd_impl *f32_winograd(int path) {
  return path == TB_GEMM_AVX512 ? &tb_conv_winograd_f32_avx512 : path == TB_GEMM_AVX2 ? &tb_conv_winograd_f32_avx2 : NULL;
}

/* The grouped direct convolution on the AVX-512 and AVX2 paths (conv_grouped*.c). */
static const tb_conv_grouped_impl *f32_grouped(int path) { return tb_conv_grouped_for((tb_gemm_path)path); }

/* The direct convolution on the AVX-512 and AVX2 paths (conv_direct_avx512.c, conv_direct_avx2.c). */
static const tb_conv_direct_impl *f32_direct(int path) {
  return path == TB_GEMM_AVX512 ? &tb_conv_direct_f32_avx512 : path == TB_GEMM_AVX2 ? &tb_conv_direct_f32_avx2 : NULL;
}

const tb_conv_gemm tb_conv_gemm_f32 = {.pack_weights = f32_pack, .free_weights = f32_free, .run = f32_run,
                                      .transposed = f32_transposed, .run_t = f32_run_t, .direct = f32_direct,
                                      .winograd = f32_winograd, .grouped = f32_grouped};

#define CONV_ENTRIES(suffix, path)                                                                                 \
  static tb_status conv_run_##suffix(tb_kernel_ctx *ctx) {                                                         \
    return tb_conv_run(ctx, &tb_conv_gemm_f32, path, path, false);                                                 \
  }                                                                                                                \
  static tb_status fused_run_##suffix(tb_kernel_ctx *ctx) {                                                        \
    return tb_conv_run(ctx, &tb_conv_gemm_f32, path, path, true);                                                  \
  }                                                                                                                \
  static tb_status prepare_##suffix(tb_kernel_ctx *ctx, void **state) {                                            \
    return tb_conv_prepare(ctx, state, &tb_conv_gemm_f32, path);                                                   \
  }
CONV_ENTRIES(avx512, TB_GEMM_AVX512)
CONV_ENTRIES(avx2, TB_GEMM_AVX2)
CONV_ENTRIES(portable, TB_GEMM_PORTABLE)

#define AVX512_FEATURES (TB_FEATURE_BIT(TB_FEATURE_AVX512F) | TB_FEATURE_BIT(TB_FEATURE_FMA))
#define AVX2_FEATURES (TB_FEATURE_BIT(TB_FEATURE_AVX2) | TB_FEATURE_BIT(TB_FEATURE_FMA))
#define CONV_KERNEL(dom, op, features, run_fn, prep)                                                               \
  {.domain = dom, .name = op, .level = TB_KERNEL_FAST, .cpu_features = features, .accepts = tb_conv_accepts, .run = run_fn,    \
   .prepare = prep, .release = tb_conv_release}

const tb_kernel tb_kernel_conv_f32_avx512 = CONV_KERNEL("", "Conv", AVX512_FEATURES, conv_run_avx512, prepare_avx512);
const tb_kernel tb_kernel_conv_f32_avx2 = CONV_KERNEL("", "Conv", AVX2_FEATURES, conv_run_avx2, prepare_avx2);
const tb_kernel tb_kernel_conv_f32_portable = CONV_KERNEL("", "Conv", 0, conv_run_portable, prepare_portable);
const tb_kernel tb_kernel_fused_conv_f32_avx512 =
    CONV_KERNEL("tb", "FusedConv", AVX512_FEATURES, fused_run_avx512, prepare_avx512);
const tb_kernel tb_kernel_fused_conv_f32_avx2 = CONV_KERNEL("tb", "FusedConv", AVX2_FEATURES, fused_run_avx2, prepare_avx2);
const tb_kernel tb_kernel_fused_conv_f32_portable = CONV_KERNEL("tb", "FusedConv", 0, fused_run_portable, prepare_portable);
