/* Level-2 fp32 Conv and tb::FusedConv (1-D and 2-D; 3-D stays on the reference through accepts), and the
 * convolution driver the bf16 entries (conv_bf16.c) share: an implicit GEMM per image and group (M = output
 * channels of the group, K = C/group * kH * kW, N = output pixels) with the weights packed once at prepare,
 * input patches packed on demand by the GEMM driver (conv_pack.c), the NCHW output written directly and
 * bias, residual and activation in the GEMM epilogue; a 1x1 stride-1 unpadded convolution is a plain GEMM on
 * the input; depthwise convolutions take the direct path (conv_depthwise.c). Work is split over the pool by
 * image, group and blocks of output pixels; when those are too few, the GEMM itself gets the pool. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "backend/cpu/kernels/fast/conv_fast.h"
#include "backend/cpu/kernels/fast/fast_kernel.h"
#include "backend/cpu/kernels/fused/fused_kernel.h"
#include "core/threadpool.h"

enum { PIXEL_BLOCK_ALIGN = 64 };

/* Weights packed for one GEMM and path: one packed mg x K operand per group. */
typedef struct conv_state {
  const tb_conv_gemm *gemm;
  int path;
  size_t w_ndim;
  int64_t w_shape[4], group;
  void **packed;
} conv_state;

void tb_conv_release(void *state) {
  conv_state *s = state;
  if (!s) return;
  for (int64_t g = 0; s->packed && g < s->group; g++) s->gemm->free_weights(s->packed[g]);
  free(s->packed);
  free(s);
}

/* W [M, C/group, kh(, kw)] packed per group (group g's rows: an mg x K row-major matrix). *out stays NULL
 * when there is nothing to pack: a shape the run will reject, a depthwise or an empty weight. */
static tb_status pack_weights(const tb_kernel_ctx *ctx, const tb_conv_gemm *gemm, int path, const tb_tensor *w,
                              int64_t group, conv_state **out) {
  *out = NULL;
  size_t nd = tb_tensor_ndim(w);
  const int64_t *ws = tb_tensor_shape(w);
  if (nd < 3 || nd > 4 || group < 1 || ws[0] % group != 0 || tb_tensor_numel(w) == 0) return TB_OK;
  if (group == ws[0] && ws[1] == 1 && group > 1) return TB_OK; /* depthwise: the taps are used as they are */
  int64_t mg = ws[0] / group, k = tb_tensor_numel(w) / ws[0];
  conv_state *s = calloc(1, sizeof *s);
  void **packed = calloc((size_t)group, sizeof *packed);
  if (!s || !packed) {
    free(s);
    free(packed);
    return tb_kernel_error(ctx, TB_ERR_OUT_OF_MEMORY, "no memory for the packed weights of %lld groups", (long long)group);
  }
  *s = (conv_state){.gemm = gemm, .path = path, .w_ndim = nd, .group = group, .packed = packed};
  memcpy(s->w_shape, ws, nd * sizeof *ws);
  const float *pw = tb_tensor_host_data(w);
  for (int64_t g = 0; g < group; g++)
    if (!(packed[g] = gemm->pack_weights(path, pw + g * mg * k, mg, k))) {
      tb_conv_release(s);
      return tb_kernel_error(ctx, TB_ERR_OUT_OF_MEMORY, "no memory to pack the weights W [%lld, %lld, ...] (%lld x %lld per group)",
                             (long long)ws[0], (long long)ws[1], (long long)mg, (long long)k);
    }
  *out = s;
  return TB_OK;
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
  int failed;
} conv_job;

static void gemm_jobs(void *p, size_t begin, size_t end) {
  conv_job *j = p;
  const tb_conv_geom *g = j->g;
  int64_t cg = g->in_c / g->group, mg = g->out_c / g->group, k = tb_conv_k(g), n = tb_conv_pixels(g);
  bool pointwise = tb_conv_is_pointwise(g);
  for (size_t t = begin; t < end; t++) {
    int64_t s = (int64_t)t % j->splits, grp = (int64_t)t / j->splits % g->group, b = (int64_t)t / j->splits / g->group;
    int64_t n0 = s * j->chunk, nc = n - n0 < j->chunk ? n - n0 : j->chunk;
    if (nc <= 0) continue;
    const float *xg = j->x + (b * g->in_c + grp * cg) * g->ih * g->iw;
    tb_conv_patches patches = {g, xg, n0};
    int64_t out = (b * g->out_c + grp * mg) * n + n0;
    tb_gemm_epilogue ep = j->ep;
    ep.bias = j->bias ? j->bias + grp * mg : NULL;
    ep.bias_axis = 0;
    ep.residual = j->residual ? j->residual + out : NULL;
    ep.ld_residual = n;
    if (!j->gemm->run(j->path, mg, nc, k, j->packed[grp], pointwise ? xg + n0 : NULL, n, pointwise ? NULL : &patches,
                      j->y + out, n, &ep, j->inner))
      __atomic_store_n(&j->failed, 1, __ATOMIC_RELAXED);
  }
}

static void depthwise_jobs(void *p, size_t begin, size_t end) {
  conv_job *j = p;
  const tb_conv_geom *g = j->g;
  int64_t in_plane = g->ih * g->iw, out_plane = tb_conv_pixels(g), taps = g->kh * g->kw;
  for (size_t t = begin; t < end; t++) {
    int64_t c = (int64_t)t % g->in_c;
    tb_conv_depthwise_plane(j->dw_path, g, j->x + (int64_t)t * in_plane, j->w + c * taps, j->bias ? j->bias[c] : 0.0f,
                            j->residual ? j->residual + (int64_t)t * out_plane : NULL, &j->ep, j->y + (int64_t)t * out_plane);
  }
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

/* Jobs over (image, group), with the output pixels cut into blocks when there are too few of them to keep
 * every thread busy; when even that cannot, the GEMM gets the pool and splits each product. */
static tb_status run_gemm(tb_kernel_ctx *ctx, conv_job *j, const tb_tensor *w) {
  const tb_conv_geom *g = j->g;
  conv_state *own = NULL, *s = ctx->state;
  if (!state_fits(s, j->gemm, j->path, w, g->group)) {
    tb_status st = pack_weights(ctx, j->gemm, j->path, w, g->group, &own);
    if (st != TB_OK) return st;
    if (!own) return tb_kernel_error(ctx, TB_ERR_INTERNAL, "the weights W could not be packed");
    s = own;
  }
  j->packed = s->packed;
  int threads = tb_pool_threads(ctx->pool);
  int64_t n = tb_conv_pixels(g), base = g->batch * g->group;
  j->splits = 1;
  j->chunk = n;
  if (threads > 1 && base < 2 * threads) {
    int64_t want = (2 * threads + base - 1) / base, chunk = (n + want - 1) / want;
    chunk = (chunk + PIXEL_BLOCK_ALIGN - 1) / PIXEL_BLOCK_ALIGN * PIXEL_BLOCK_ALIGN;
    if (chunk < n) {
      j->chunk = chunk;
      j->splits = (n + chunk - 1) / chunk;
    }
  }
  size_t jobs = (size_t)(base * j->splits);
  j->inner = jobs < (size_t)threads ? ctx->pool : NULL;
  if (j->inner) gemm_jobs(j, 0, jobs);
  else tb_pool_parallel_for(ctx->pool, jobs, gemm_jobs, j);
  tb_conv_release(own);
  if (j->failed)
    return tb_kernel_error(ctx, TB_ERR_OUT_OF_MEMORY, "no memory for the GEMM packing buffers (%lld x %lld x %lld)",
                           (long long)(g->out_c / g->group), (long long)n, (long long)tb_conv_k(g));
  return TB_OK;
}

static void format_shape(const tb_tensor *t, char *buf, size_t cap) {
  size_t len = (size_t)snprintf(buf, cap, "[");
  for (size_t d = 0; d < tb_tensor_ndim(t) && len < cap; d++)
    len += (size_t)snprintf(buf + len, cap - len, "%s%lld", d ? ", " : "", (long long)tb_tensor_shape(t)[d]);
  if (len < cap) snprintf(buf + len, cap - len, "]");
}

static tb_status read_epilogue(tb_kernel_ctx *ctx, bool fused, tb_gemm_epilogue *ep) {
  memset(ep, 0, sizeof *ep);
  if (!fused) return TB_OK;
  tb_fused_act act;
  tb_status st = tb_fused_act_read(ctx, &act);
  if (st != TB_OK) return st;
  ep->act = act.kind;
  ep->act_alpha = (float)act.alpha;
  ep->act_beta = (float)act.beta;
  ep->act_min = (float)act.min;
  ep->act_max = (float)act.max;
  return TB_OK;
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
  st = read_epilogue(ctx, fused, &j.ep);
  if (st != TB_OK || tb_tensor_numel(y) == 0) return st;
  if (tb_conv_k(&g) == 0) {
    empty_k(&j);
    return TB_OK;
  }
  if (tb_conv_is_depthwise(&g)) {
    tb_pool_parallel_for(ctx->pool, (size_t)(g.batch * g.in_c), depthwise_jobs, &j);
    return TB_OK;
  }
  return run_gemm(ctx, &j, w);
}

/* Input i is a constant of the graph (an initializer that is not also a graph input). */
static bool input_is_constant(const tb_kernel_ctx *ctx, size_t i) {
  int v = i < ctx->node->n_inputs ? ctx->node->inputs[i] : -1;
  return v >= 0 && ctx->graph->values[v].constant && !ctx->graph->values[v].is_input;
}

tb_status tb_conv_prepare(tb_kernel_ctx *ctx, void **state, const tb_conv_gemm *gemm, int path) {
  *state = NULL;
  const tb_tensor *w = ctx->n_inputs > 1 ? ctx->inputs[1] : NULL;
  if (!w || !input_is_constant(ctx, 1) || tb_tensor_dtype(w) != TB_DTYPE_F32) return TB_OK; /* packed per run */
  int64_t group = 1;
  tb_status st = tb_attr_int(ctx->graph, ctx->node, "group", 1, &group);
  conv_state *s = NULL;
  if (st == TB_OK) st = pack_weights(ctx, gemm, path, w, group, &s);
  *state = s;
  return st;
}

static bool rank_fits(const tb_value_type *t, bool *known) {
  *known = t && t->has_shape;
  return *known && (t->ndim == 3 || t->ndim == 4);
}

bool tb_conv_accepts(const tb_graph *g, const tb_node *n, const tb_value_type *const *in) {
  size_t m = n->n_inputs < 4 ? n->n_inputs : 4;
  if (n->n_inputs < 2 || !tb_fast_accepts_f32(in, m) || !in[1]) return false;
  bool known, fits = rank_fits(in[0], &known);
  if (known) return fits;
  fits = rank_fits(in[1], &known);
  if (known) return fits;
  const int64_t *ks = NULL;
  size_t nks = 0;
  return tb_attr_ints(g, n, "kernel_shape", &ks, &nks) == TB_OK && (nks == 1 || nks == 2);
}

/* ---- the fp32 GEMM (gemm_f32.h) and the level-2 entries ---- */

static void *f32_pack(int path, const float *w, int64_t mg, int64_t k) {
  tb_gemm_operand a = {.data = w, .ld = k};
  return tb_gemm_pack_a((tb_gemm_path)path, &a, mg, k);
}

static void f32_free(void *packed) { tb_gemm_packed_free(packed); }

static bool f32_run(int path, int64_t m, int64_t n, int64_t k, const void *a, const float *b, int64_t ldb,
                    tb_conv_patches *patches, float *c, int64_t ldc, const tb_gemm_epilogue *ep, struct tb_pool *pool) {
  tb_gemm_operand oa = {.packed = a}, ob = {.data = b, .ld = ldb};
  if (!b) ob = (tb_gemm_operand){.pack = tb_conv_pack_patches, .pack_ctx = patches};
  return tb_gemm_f32_run((tb_gemm_path)path, m, n, k, 1.0f, &oa, &ob, 0.0f, c, ldc, ep, pool);
}

static const tb_conv_gemm f32_gemm = {f32_pack, f32_free, f32_run};

#define CONV_ENTRIES(suffix, path)                                                                                 \
  static tb_status conv_run_##suffix(tb_kernel_ctx *ctx) { return tb_conv_run(ctx, &f32_gemm, path, path, false); } \
  static tb_status fused_run_##suffix(tb_kernel_ctx *ctx) { return tb_conv_run(ctx, &f32_gemm, path, path, true); } \
  static tb_status prepare_##suffix(tb_kernel_ctx *ctx, void **state) {                                            \
    return tb_conv_prepare(ctx, state, &f32_gemm, path);                                                           \
  }
CONV_ENTRIES(avx512, TB_GEMM_AVX512)
CONV_ENTRIES(avx2, TB_GEMM_AVX2)
CONV_ENTRIES(portable, TB_GEMM_PORTABLE)

#define AVX512_FEATURES (TB_FEATURE_BIT(TB_FEATURE_AVX512F) | TB_FEATURE_BIT(TB_FEATURE_FMA))
#define AVX2_FEATURES (TB_FEATURE_BIT(TB_FEATURE_AVX2) | TB_FEATURE_BIT(TB_FEATURE_FMA))
#define CONV_KERNEL(dom, op, features, run_fn, prep)                                                               \
  {.domain = dom, .name = op, .level = 2, .cpu_features = features, .accepts = tb_conv_accepts, .run = run_fn,    \
   .prepare = prep, .release = tb_conv_release}

const tb_cpu_kernel tb_kernel_conv_f32_avx512 = CONV_KERNEL("", "Conv", AVX512_FEATURES, conv_run_avx512, prepare_avx512);
const tb_cpu_kernel tb_kernel_conv_f32_avx2 = CONV_KERNEL("", "Conv", AVX2_FEATURES, conv_run_avx2, prepare_avx2);
const tb_cpu_kernel tb_kernel_conv_f32_portable = CONV_KERNEL("", "Conv", 0, conv_run_portable, prepare_portable);
const tb_cpu_kernel tb_kernel_fused_conv_f32_avx512 =
    CONV_KERNEL("tb", "FusedConv", AVX512_FEATURES, fused_run_avx512, prepare_avx512);
const tb_cpu_kernel tb_kernel_fused_conv_f32_avx2 = CONV_KERNEL("tb", "FusedConv", AVX2_FEATURES, fused_run_avx2, prepare_avx2);
const tb_cpu_kernel tb_kernel_fused_conv_f32_portable = CONV_KERNEL("tb", "FusedConv", 0, fused_run_portable, prepare_portable);
