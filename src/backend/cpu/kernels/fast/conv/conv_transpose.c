/* Level-2 fp32 ConvTranspose (1-D and 2-D; 3-D stays on the reference through accepts) as a GEMM plus
 * col2im: per image and group, the columns [mg * kh * kw, pixels] = W_g^T [mg * kh * kw, C/group] times the
 * group's input rows [C/group, pixels] on the fp32 GEMM (gemm_f32.h; W_g^T packed once at prepare when W is
 * a constant, else read in place), then each column row added to the output pixels its tap lands on
 * (conv_transpose_col2im.c) over outputs first set to the bias. The input is taken a block of whole rows
 * at a time, so the columns stay near COL_FLOATS (in L2) whatever the image size. Threads: over (image,
 * group) pairs, or over row blocks where input rows land on disjoint output rows, else in turn with the
 * GEMM split over the pool and the col2im over output channels (choose_split). No activation is fused:
 * the activation-fusion pass fuses only into Conv, Gemm and MatMul. */
#include "backend/cpu/kernels/fast/conv/conv_transpose.h"
#include <stdlib.h>
#include <string.h>
#include "backend/cpu/kernels/fast/gemm/fast_kernel.h"
#include "core/threadpool.h"
#include "ops/nn/window.h"

/* Floats of one column block (mg * kh * kw rows of some whole input rows): 1 MiB. */
enum { COL_FLOATS = 256 * 1024 };

tb_status tb_convt_geom_resolve(const tb_kernel_ctx *ctx, size_t x_ndim, const int64_t *x_shape, size_t w_ndim,
                                const int64_t *w_shape, tb_conv_geom *g) {
  memset(g, 0, sizeof *g);
  if (x_ndim < 3 || w_ndim != x_ndim)
    return tb_kernel_error(ctx, TB_ERR_MODEL, "X (rank %zu) and W (rank %zu) must have the same rank >= 3", x_ndim, w_ndim);
  if (x_ndim > 4)
    return tb_kernel_error(ctx, TB_ERR_UNSUPPORTED, "the fast ConvTranspose takes 1 or 2 spatial axes, not %zu", x_ndim - 2);
  tb_status st;
  const tb_conv_params *p = tb_kernel_params(ctx, &st);
  if (!p) return st;
  g->group = p->group;
  g->spatial = x_ndim - 2;
  g->batch = x_shape[0];
  g->in_c = x_shape[1];
  if (g->group < 1 || g->in_c % g->group != 0)
    return tb_kernel_error(ctx, TB_ERR_MODEL, "attribute group (%lld) must be >= 1 and divide the %lld input channels",
                           (long long)g->group, (long long)g->in_c);
  if (w_shape[0] != g->in_c)
    return tb_kernel_error(ctx, TB_ERR_MODEL, "W's first dim (%lld) differs from X's %lld channels; W must be [C, M/group, "
                           "kernel...]", (long long)w_shape[0], (long long)g->in_c);
  if (__builtin_mul_overflow(w_shape[1], g->group, &g->out_c))
    return tb_kernel_error(ctx, TB_ERR_MODEL, "the output channel count %lld x %lld overflows", (long long)w_shape[1],
                           (long long)g->group);
  nn_window win;
  const int64_t *want = NULL;
  size_t n_want = 0;
  st = tb_nn_window_init(&p->win, g->spatial, w_shape + 2, &win);
  if (st == TB_OK) st = tb_nn_window_init_transpose(p, &win);
  if (st == TB_OK) st = tb_nn_conv_output_shape(p, x_ndim, &want, &n_want);
  int64_t out[2] = {1, 1};
  for (size_t i = 0; st == TB_OK && i < g->spatial; i++)
    st = tb_nn_window_out_transpose(&win, i, x_shape[2 + i], n_want ? want[i] : -1, &out[i]);
  if (st != TB_OK) return tb_kernel_name_error(ctx, st);
  tb_conv_geom_set_axes(g, x_shape, &win, out);
  return TB_OK;
}

/* W packed per group for one path: group g's A = W_g^T (mg * kh * kw rows, C/group deep). */
typedef struct convt_state {
  tb_gemm_path path;
  size_t w_ndim;
  int64_t w_shape[4], group;
  tb_gemm_packed **packed;
} convt_state;

static void convt_release(void *state) {
  convt_state *s = state;
  if (!s) return;
  for (int64_t g = 0; s->packed && g < s->group; g++) tb_gemm_packed_free(s->packed[g]);
  free(s->packed);
  free(s);
}

static bool state_fits(const convt_state *s, tb_gemm_path path, const tb_tensor *w, int64_t group) {
  return s && s->path == path && s->group == group && s->w_ndim == tb_tensor_ndim(w) &&
         memcmp(s->w_shape, tb_tensor_shape(w), s->w_ndim * sizeof(int64_t)) == 0;
}

/* Group g's W_g^T as a GEMM operand read in place: W_g is C/group rows of mg * kh * kw. */
static tb_gemm_operand weights_of_group(const float *w, int64_t cg, int64_t rows, int64_t g) {
  return (tb_gemm_operand){.data = w + g * cg * rows, .ld = rows, .trans = true};
}

static tb_status convt_prepare(tb_kernel_ctx *ctx, tb_gemm_path path, void **state) {
  *state = NULL;
  const tb_tensor *w = ctx->n_inputs > 1 ? ctx->inputs[1] : NULL;
  if (!w || !tb_fast_input_constant(ctx, 1) || tb_tensor_dtype(w) != TB_DTYPE_F32) return TB_OK; /* read per run */
  size_t nd = tb_tensor_ndim(w);
  const int64_t *ws = tb_tensor_shape(w);
  tb_status st;
  const tb_conv_params *p = tb_kernel_params(ctx, &st);
  int64_t group = p ? p->group : 1;
  /* a shape the run will reject, or nothing to pack: no state, the run says what is wrong */
  if (st != TB_OK || nd < 3 || nd > 4 || group < 1 || ws[0] % group != 0 || tb_tensor_numel(w) == 0) return st;
  int64_t cg = ws[0] / group, rows = tb_tensor_numel(w) / ws[0];
  convt_state *s = calloc(1, sizeof *s);
  tb_gemm_packed **packed = calloc((size_t)group, sizeof *packed);
  if (!s || !packed) {
    free(s);
    free(packed);
    return tb_kernel_error(ctx, TB_ERR_OUT_OF_MEMORY, "no memory for the packed weights of %lld groups", (long long)group);
  }
  *s = (convt_state){.path = path, .w_ndim = nd, .group = group, .packed = packed};
  memcpy(s->w_shape, ws, nd * sizeof(int64_t));
  for (int64_t g = 0; g < group; g++) {
    tb_gemm_operand a = weights_of_group(tb_tensor_host_data(w), cg, rows, g);
    if (!(packed[g] = tb_gemm_pack_a(path, &a, rows, cg))) {
      convt_release(s);
      return tb_kernel_error(ctx, TB_ERR_OUT_OF_MEMORY, "no memory to pack the weights W [%lld, %lld, ...] (%lld x %lld per "
                             "group)", (long long)ws[0], (long long)ws[1], (long long)rows, (long long)cg);
    }
  }
  *state = s;
  tb_kernel_set_method(ctx, "GEMM + col2im");
  tb_kernel_constant_consumed(ctx, 1); /* run() reads the packed copy only */
  return TB_OK;
}

/* One run's work: a GEMM + col2im per (image, group, block of input rows), as choose_split shares them. */
typedef struct convt_job {
  const tb_conv_geom *g;
  tb_gemm_path path;
  const float *x, *w, *bias;
  float *y;
  tb_gemm_packed *const *packed; /* NULL: W read in place */
  int64_t block_rows;             /* input rows per GEMM */
  int64_t blocks;                 /* row blocks per image and group */
  bool per_block;                 /* tasks are single row blocks (else whole image-group pairs) */
  tb_pool *pool, *inner;          /* the run's pool; the pool for each GEMM and col2im when tasks run in turn */
  int failed;
  /* the col2im over channels of one block, when split over the inner pool */
  const float *cols;
  int64_t ldc, iy0, rows;
  float *yg;
} convt_job;

static void col2im_channels(void *p, size_t begin, size_t end) {
  convt_job *j = p;
  tb_convt_col2im(j->path, j->g, (int64_t)begin, (int64_t)end, j->cols, j->ldc, j->iy0, j->rows, j->yg);
}

/* Input rows iy0 .. iy0+r of image b, group grp: one GEMM into cols, then col2im into the group's output
 * planes (already holding the bias). */
static bool run_block(convt_job *j, int64_t b, int64_t grp, int64_t iy0, int64_t r, float *cols) {
  const tb_conv_geom *g = j->g;
  int64_t cg = g->in_c / g->group, mg = g->out_c / g->group, rows = mg * g->kh * g->kw, plane = g->ih * g->iw;
  const float *xg = j->x + (b * g->in_c + grp * cg) * plane;
  float *yg = j->y + (b * g->out_c + grp * mg) * g->oh * g->ow;
  tb_gemm_operand a = j->packed ? (tb_gemm_operand){.packed = j->packed[grp]} : weights_of_group(j->w, cg, rows, grp);
  int64_t n = r * g->iw;
  tb_gemm_operand bx = {.data = xg + iy0 * g->iw, .ld = plane};
  if (!tb_gemm_f32_run(j->path, rows, n, cg, 1.0f, &a, &bx, 0.0f, cols, n, NULL, j->inner)) return false;
  if (j->inner) {
    j->cols = cols, j->ldc = n, j->iy0 = iy0, j->rows = r, j->yg = yg;
    tb_pool_parallel_for(j->inner, (size_t)mg, col2im_channels, j);
  } else {
    tb_convt_col2im(j->path, g, 0, mg, cols, n, iy0, r, yg);
  }
  return true;
}

/* Tasks [begin, end): (image, group) pairs with all their row blocks in turn, or, with j->per_block, single
 * (image, group, row block) triples. */
static void convt_tasks(void *p, size_t begin, size_t end) {
  convt_job *j = p;
  const tb_conv_geom *g = j->g;
  int64_t rows = g->out_c / g->group * g->kh * g->kw;
  float *cols = malloc((size_t)(rows * j->block_rows * g->iw) * sizeof *cols);
  if (!cols) {
    __atomic_store_n(&j->failed, 1, __ATOMIC_RELAXED);
    return;
  }
  for (size_t t = begin; t < end; t++) {
    int64_t pair = j->per_block ? (int64_t)t / j->blocks : (int64_t)t;
    int64_t first = j->per_block ? (int64_t)t % j->blocks : 0, last = j->per_block ? first + 1 : j->blocks;
    for (int64_t blk = first; blk < last; blk++) {
      int64_t iy0 = blk * j->block_rows, r = g->ih - iy0 < j->block_rows ? g->ih - iy0 : j->block_rows;
      if (!run_block(j, pair / g->group, pair % g->group, iy0, r, cols)) __atomic_store_n(&j->failed, 1, __ATOMIC_RELAXED);
    }
  }
  free(cols);
}

/* How a run shares the pool's threads: over (image, group) pairs when there are enough to share evenly;
 * else over row blocks when different input rows land on different output rows ((kh - 1) * dh < sh, as
 * in every upsampling with kernel = stride), the blocks cut so that they share evenly; else each GEMM and
 * col2im is split over the pool in turn. */
static void choose_split(convt_job *j, int64_t threads) {
  const tb_conv_geom *g = j->g;
  int64_t pairs = g->batch * g->group;
  j->blocks = (g->ih + j->block_rows - 1) / j->block_rows;
  j->per_block = false;
  j->inner = NULL;
  if (threads <= 1 || pairs % threads == 0 || pairs >= 4 * threads) return;
  bool disjoint = (g->kh - 1) * g->dh < g->sh;
  int64_t blocks = j->blocks;
  while (disjoint && blocks < g->ih && pairs * blocks % threads != 0 && pairs * blocks < 4 * threads) blocks++;
  if (disjoint && pairs * blocks >= threads) {
    j->block_rows = (g->ih + blocks - 1) / blocks;
    j->blocks = (g->ih + j->block_rows - 1) / j->block_rows;
    j->per_block = true;
    return;
  }
  j->inner = j->pool;
}

/* Output planes [begin, end) (image-major) set to their channel's bias (0 without one). */
static void fill_bias(void *p, size_t begin, size_t end) {
  const convt_job *j = p;
  const tb_conv_geom *g = j->g;
  int64_t plane = g->oh * g->ow;
  for (size_t t = begin; t < end; t++) {
    float v = j->bias ? j->bias[(int64_t)t % g->out_c] : 0.0f, *py = j->y + (int64_t)t * plane;
    for (int64_t i = 0; i < plane; i++) py[i] = v;
  }
}

static tb_status convt_run(tb_kernel_ctx *ctx, tb_gemm_path path) {
  size_t n_in = ctx->n_inputs < 3 ? ctx->n_inputs : 3;
  tb_status st = tb_fast_check_f32(ctx, n_in);
  if (st != TB_OK) return st;
  const tb_tensor *x = n_in > 0 ? ctx->inputs[0] : NULL, *w = n_in > 1 ? ctx->inputs[1] : NULL;
  const tb_tensor *b = n_in > 2 ? ctx->inputs[2] : NULL;
  if (!x || !w) return tb_kernel_error(ctx, TB_ERR_MODEL, "inputs X and W are required");
  tb_conv_geom g;
  st = tb_convt_geom_resolve(ctx, tb_tensor_ndim(x), tb_tensor_shape(x), tb_tensor_ndim(w), tb_tensor_shape(w), &g);
  if (st != TB_OK) return st;
  if (b && (tb_tensor_ndim(b) != 1 || tb_tensor_shape(b)[0] != g.out_c))
    return tb_kernel_error(ctx, TB_ERR_MODEL, "bias B must be 1-D with %lld values (the output channels), not %lld",
                           (long long)g.out_c, (long long)(tb_tensor_ndim(b) == 1 ? tb_tensor_shape(b)[0] : tb_tensor_numel(b)));
  int64_t shape[4] = {g.batch, g.out_c, g.oh, g.ow};
  if (g.spatial == 1) shape[2] = g.ow;
  tb_tensor *y = NULL;
  st = tb_kernel_output(ctx, 0, TB_DTYPE_F32, g.spatial + 2, shape, &y);
  if (st != TB_OK || tb_tensor_numel(y) == 0) return st;
  convt_job j = {.g = &g, .path = path, .x = tb_tensor_host_data(x), .w = tb_tensor_host_data(w),
                 .bias = b ? tb_tensor_host_data(b) : NULL, .y = tb_tensor_host_data(y)};
  tb_pool_parallel_for_work(ctx->pool, (size_t)(g.batch * g.out_c), (double)tb_tensor_numel(y), fill_bias, &j);
  int64_t cg = g.in_c / g.group, rows = g.out_c / g.group * g.kh * g.kw;
  if (cg == 0 || g.ih * g.iw == 0) return TB_OK; /* no products: the bias alone */
  const convt_state *s = ctx->state;
  j.packed = state_fits(s, path, w, g.group) ? s->packed : NULL;
  int64_t per_row = rows * g.iw;
  j.block_rows = per_row >= COL_FLOATS ? 1 : COL_FLOATS / per_row;
  if (j.block_rows > g.ih) j.block_rows = g.ih;
  j.pool = ctx->pool;
  choose_split(&j, tb_pool_threads(ctx->pool));
  size_t tasks = (size_t)(g.batch * g.group * (j.per_block ? j.blocks : 1));
  if (j.inner) convt_tasks(&j, 0, tasks);
  else tb_pool_parallel_for(ctx->pool, tasks, convt_tasks, &j);
  if (j.failed)
    return tb_kernel_error(ctx, TB_ERR_OUT_OF_MEMORY, "no memory for the columns (%lld x %lld) or the GEMM's packing buffers",
                           (long long)rows, (long long)(j.block_rows * g.iw));
  return TB_OK;
}

static bool rank_fits(const tb_value_type *t, bool *known) {
  *known = t && t->has_shape;
  return *known && (t->ndim == 3 || t->ndim == 4);
}

/* float32 X, W (, B) of rank 3 or 4 (from the types, else W's, else kernel_shape's length). */
static bool convt_accepts(const tb_kernel_query *q) {
  const tb_value_type *const *in = q->in;
  size_t m = q->n_inputs < 3 ? q->n_inputs : 3;
  if (q->n_inputs < 2 || !tb_fast_accepts_f32(in, m) || !in[1]) return false;
  bool known, fits = rank_fits(in[0], &known);
  if (known) return fits;
  fits = rank_fits(in[1], &known);
  if (known) return fits;
  const tb_conv_params *p = q->params;
  return p && (p->win.n_kernel == 1 || p->win.n_kernel == 2);
}

#define CONVT_ENTRIES(suffix, path)                                                          \
  static tb_status run_##suffix(tb_kernel_ctx *ctx) { return convt_run(ctx, path); }         \
  static tb_status prepare_##suffix(tb_kernel_ctx *ctx, void **state) { return convt_prepare(ctx, path, state); }
CONVT_ENTRIES(avx512, TB_GEMM_AVX512)
CONVT_ENTRIES(avx2, TB_GEMM_AVX2)
CONVT_ENTRIES(portable, TB_GEMM_PORTABLE)

#define CONVT_KERNEL(features, run_fn, prep)                                                                         \
  {.domain = "", .name = "ConvTranspose", .level = TB_KERNEL_FAST, .cpu_features = features, .accepts = convt_accepts, .run = run_fn, \
   .prepare = prep, .release = convt_release}

const tb_kernel tb_kernel_conv_transpose_f32_avx512 = CONVT_KERNEL(TB_FAST_FEATURES_AVX512, run_avx512, prepare_avx512);
const tb_kernel tb_kernel_conv_transpose_f32_avx2 = CONVT_KERNEL(TB_FAST_FEATURES_AVX2, run_avx2, prepare_avx2);
const tb_kernel tb_kernel_conv_transpose_f32_portable = CONVT_KERNEL(0, run_portable, prepare_portable);
