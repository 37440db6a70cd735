/* Level-2 fp32 Resize and Upsample on NCHW: the two spatial axes resized, N and C kept (anything else, and
 * other ranks, runs the reference kernel: accepts() declines a known other rank, run() hands a shape whose
 * N or C axis moves to the reference). The taps of every output row and column come from the shared
 * tb_resize_taps_of (so every mode, coordinate transformation, nearest rounding, cubic_coeff_a and
 * exclude_outside mean what the reference means), built once per run for the run's shape (O(H + W), next to
 * the O(N C H W) work) and laid out for vector loops (resize_fast.h). Nearest gathers each output row from
 * its input row (a repeated input row is copied from the previous output row); linear and cubic interpolate
 * the input rows an output row needs along the width once (kept while the next rows need them) and blend
 * them along the height. Threads over (plane, block of output rows) jobs. Linear and cubic compute in fp32
 * (the reference in double): the results agree to a few ulps of the largest input. */
#include <stdlib.h>
#include <string.h>
#include "backend/cpu/kernels/fast/gemm/fast_kernel.h"
#include "backend/cpu/kernels/fast/resize/resize_fast.h"
#include "backend/cpu/kernels/tensor/tensor_kernel.h"
#include "core/threadpool.h"
#include "ops/tensor/resize.h"

extern const tb_kernel tb_kernel_resize; /* the reference (tensor/resize.c), for what this one hands on */

/* Output rows per job at least, when a plane is cut in blocks for threads. */
enum { MIN_BLOCK_ROWS = 4 };

static int64_t blocks_of(int64_t out) { return (out + TB_RESIZE_BLOCK - 1) / TB_RESIZE_BLOCK; }

/* Bytes of one axis's plan, a multiple of 8 (the next axis's starts aligned). */
static size_t axis_bytes(int n_taps, int64_t out) {
  size_t per = (size_t)n_taps * (sizeof(int32_t) + sizeof(float)) + sizeof(bool);
  return ((size_t)out * per + (size_t)(n_taps * blocks_of(out)) * sizeof(int32_t) + 7) / 8 * 8;
}

/* The windows of ax (resize_fast.h): per tap and block, the first input when the block's taps fit in 2 x
 * TB_RESIZE_BLOCK inputs, else -1. */
static void axis_windows(tb_resize_axis *ax) {
  int64_t blocks = blocks_of(ax->n);
  for (int t = 0; t < ax->taps; t++)
    for (int64_t b = 0; b < blocks; b++) {
      int64_t j0 = b * TB_RESIZE_BLOCK, j1 = j0 + TB_RESIZE_BLOCK < ax->n ? j0 + TB_RESIZE_BLOCK : ax->n;
      int32_t lo = INT32_MAX, hi = -1;
      bool outside = false;
      for (int64_t j = j0; j < j1; j++) {
        int32_t i = ax->idx[t * ax->n + j];
        lo = i < lo ? i : lo;
        hi = i > hi ? i : hi;
        outside |= ax->outside[j];
      }
      ax->win[t * blocks + b] = !outside && hi - lo < 2 * TB_RESIZE_BLOCK ? lo : -1;
    }
}

/* The taps of one axis into ax (its arrays carved from *mem); n_taps by the mode. */
static void axis_plan(const tb_resize_params *a, int n_taps, int64_t in, int64_t out, double scale, double r0, double r1,
                      tb_resize_axis *ax, unsigned char **mem) {
  ax->n = out;
  ax->in = in;
  ax->taps = n_taps;
  ax->idx = (int32_t *)*mem;
  ax->w = (float *)(ax->idx + n_taps * out);
  ax->win = (int32_t *)(ax->w + n_taps * out);
  ax->outside = (bool *)(ax->win + n_taps * blocks_of(out));
  *mem += axis_bytes(n_taps, out);
  ax->any_outside = false;
  for (int64_t j = 0; j < out; j++) {
    tb_resize_taps t;
    tb_resize_taps_of(a, j, scale, in, out, r0, r1, &t);
    bool outside = t.idx[0] < 0;
    ax->outside[j] = outside;
    ax->any_outside |= outside;
    for (int k = 0; k < n_taps; k++) {
      bool real = !outside && k < t.n;
      ax->idx[k * out + j] = real ? (int32_t)t.idx[k] : 0;
      ax->w[k * out + j] = real ? (float)t.w[k] : 0.0f;
    }
  }
  axis_windows(ax);
}

/* The axis maps every output coordinate to the same input one with weight 1 (N and C of an NCHW resize). */
static bool axis_identity(const tb_resize_params *a, int64_t in, int64_t out, double scale, double r0, double r1) {
  if (in != out) return false;
  for (int64_t x = 0; x < out; x++) {
    tb_resize_taps t;
    tb_resize_taps_of(a, x, scale, in, out, r0, r1, &t);
    if (t.idx[0] < 0) return false;
    double on = 0;
    for (int k = 0; k < t.n; k++) {
      if (t.idx[k] == x) on += t.w[k];
      else if (t.w[k] != 0) return false;
    }
    if (on != 1) return false;
  }
  return true;
}

typedef struct resize_job {
  const tb_resize_rows *rows;
  const tb_resize_axis *ay, *ax;
  const float *x;
  float *y;
  int64_t ih, iw, oh, ow, block_rows, blocks;
  bool nearest;
  float extrapolation;
  int failed;
} resize_job;

static void fill(float *y, int64_t n, float v) {
  for (int64_t j = 0; j < n; j++) y[j] = v;
}

/* The extrapolation value into the output row's columns outside the input. */
static void patch_outside(const resize_job *j, float *yrow) {
  if (!j->ax->any_outside) return;
  for (int64_t c = 0; c < j->ow; c++)
    if (j->ax->outside[c]) yrow[c] = j->extrapolation;
}

static void nearest_rows(const resize_job *j, const float *xp, float *yp, int64_t oy0, int64_t oy1) {
  int64_t prev = -1; /* the input row the previous output row of this block gathered */
  for (int64_t oy = oy0; oy < oy1; oy++) {
    float *yrow = yp + oy * j->ow;
    if (j->ay->outside[oy]) {
      fill(yrow, j->ow, j->extrapolation);
      prev = -1;
      continue;
    }
    int64_t iy = j->ay->idx[oy];
    if (iy == prev) {
      memcpy(yrow, yrow - j->ow, (size_t)j->ow * sizeof *yrow);
      continue;
    }
    j->rows->gather(xp + iy * j->iw, j->ax, yrow);
    patch_outside(j, yrow);
    prev = iy;
  }
}

/* Linear and cubic: the rows along the width in buf (taps slots of ow floats, tag[s] the input row slot s
 * holds), blended along the height. */
static void interp_rows(const resize_job *j, const float *xp, float *yp, int64_t oy0, int64_t oy1, float *buf) {
  int taps = j->ay->taps;
  int64_t tag[4] = {-1, -1, -1, -1}, oh = j->oh;
  for (int64_t oy = oy0; oy < oy1; oy++) {
    float *yrow = yp + oy * j->ow;
    if (j->ay->outside[oy]) {
      fill(yrow, j->ow, j->extrapolation);
      continue;
    }
    const float *src[4];
    float wy[4];
    for (int t = 0; t < taps; t++) {
      int64_t iy = j->ay->idx[t * oh + oy];
      int slot = -1;
      for (int s = 0; s < taps && slot < 0; s++)
        if (tag[s] == iy) slot = s;
      if (slot < 0) { /* a slot no tap of this row reads (there is one: at most `taps` distinct rows) */
        for (int s = 0; s < taps && slot < 0; s++) {
          bool needed = false;
          for (int u = 0; u < taps; u++) needed |= tag[s] == j->ay->idx[u * oh + oy];
          if (!needed) slot = s;
        }
        j->rows->interp(xp + iy * j->iw, j->ax, buf + slot * j->ow);
        tag[slot] = iy;
      }
      src[t] = buf + slot * j->ow;
      wy[t] = j->ay->w[t * oh + oy];
    }
    j->rows->blend(src, wy, taps, j->ow, yrow);
    patch_outside(j, yrow);
  }
}

static void resize_jobs(void *p, size_t begin, size_t end) {
  resize_job *j = p;
  float *buf = j->nearest ? NULL : malloc((size_t)(j->ay->taps * j->ow) * sizeof *buf);
  if (!j->nearest && !buf) {
    __atomic_store_n(&j->failed, 1, __ATOMIC_RELAXED);
    return;
  }
  for (size_t t = begin; t < end; t++) {
    int64_t plane = (int64_t)t / j->blocks, b = (int64_t)t % j->blocks;
    int64_t oy0 = b * j->block_rows, oy1 = oy0 + j->block_rows < j->oh ? oy0 + j->block_rows : j->oh;
    const float *xp = j->x + plane * j->ih * j->iw;
    float *yp = j->y + plane * j->oh * j->ow;
    if (j->nearest) nearest_rows(j, xp, yp, oy0, oy1);
    else interp_rows(j, xp, yp, oy0, oy1, buf);
  }
  free(buf);
}

/* Blocks of output rows per plane: one when the planes alone give every thread a few jobs. */
static void choose_blocks(resize_job *j, int64_t planes, int threads) {
  int64_t want = threads > 1 && planes < 4 * threads ? (4 * threads + planes - 1) / planes : 1;
  int64_t rows = (j->oh + want - 1) / want;
  if (rows < MIN_BLOCK_ROWS) rows = MIN_BLOCK_ROWS;
  if (rows > j->oh) rows = j->oh;
  j->block_rows = rows;
  j->blocks = (j->oh + rows - 1) / rows;
}

static tb_status resize_run(tb_kernel_ctx *ctx, tb_gemm_path path) {
  const tb_tensor *x;
  const unsigned char *src;
  tb_status st = tb_tk_input(ctx, 0, &x, &src);
  if (st != TB_OK) return st;
  if (tb_tensor_dtype(x) != TB_DTYPE_F32 || tb_tensor_ndim(x) != 4) return tb_kernel_resize.run(ctx);
  const int64_t *in = tb_tensor_shape(x);
  int64_t out[TB_MAX_DIMS];
  double scales[TB_MAX_DIMS], roi[2 * TB_MAX_DIMS];
  bool known;
  const tb_resize_params *a = ctx->params;
  tk_infer *inf;
  if (!a) return tb_kernel_error(ctx, TB_ERR_INTERNAL, "the node's Resize parameters were not parsed");
  if ((st = tb_tk_infer_begin(ctx, &inf)) != TB_OK) return st;
  st = tb_resize_sizes(tb_tk_infer_ctx(inf), a, 4, in, out, scales, roi, &known);
  tb_tk_infer_end(inf);
  if (st != TB_OK) return st;
  if (!known) return tb_kernel_error(ctx, TB_ERR_INTERNAL, "the output size is not known");
  /* N or C resized, or sizes past int32 indices: the reference kernel */
  if (!axis_identity(a, in[0], out[0], scales[0], roi[0], roi[4]) || !axis_identity(a, in[1], out[1], scales[1], roi[1], roi[5]) ||
      in[2] > INT32_MAX || in[3] > INT32_MAX)
    return tb_kernel_resize.run(ctx);
  unsigned char *dst;
  tb_tensor *o;
  if ((st = tb_tk_output(ctx, 0, TB_DTYPE_F32, 4, out, &o, &dst)) != TB_OK) return st;
  if (tb_tensor_numel(o) == 0) return TB_OK;
  if (tb_tensor_numel(x) == 0)
    return tb_kernel_error(ctx, TB_ERR_INVALID_ARGUMENT, "cannot resize an empty input [%lld, %lld, %lld, %lld] to a non-empty "
                           "output", (long long)in[0], (long long)in[1], (long long)in[2], (long long)in[3]);
  int n_taps = a->mode == TB_RESIZE_NEAREST ? 1 : a->mode == TB_RESIZE_LINEAR ? 2 : 4;
  unsigned char *plan = malloc(axis_bytes(n_taps, out[2]) + axis_bytes(n_taps, out[3])), *mem = plan;
  if (!plan)
    return tb_kernel_error(ctx, TB_ERR_OUT_OF_MEMORY, "no memory for the taps of %lld output rows and %lld columns",
                           (long long)out[2], (long long)out[3]);
  tb_resize_axis ay, ax;
  axis_plan(a, n_taps, in[2], out[2], scales[2], roi[2], roi[6], &ay, &mem);
  axis_plan(a, n_taps, in[3], out[3], scales[3], roi[3], roi[7], &ax, &mem);
  resize_job j = {.rows = tb_resize_rows_for(path), .ay = &ay, .ax = &ax, .x = (const float *)src, .y = (float *)dst,
                  .ih = in[2], .iw = in[3], .oh = out[2], .ow = out[3], .nearest = a->mode == TB_RESIZE_NEAREST,
                  .extrapolation = (float)a->extrapolation};
  int64_t planes = out[0] * out[1];
  choose_blocks(&j, planes, tb_pool_threads(ctx->pool));
  tb_pool_parallel_for_work(ctx->pool, (size_t)(planes * j.blocks), (double)tb_tensor_numel(o) * n_taps, resize_jobs, &j);
  free(plan);
  if (j.failed)
    return tb_kernel_error(ctx, TB_ERR_OUT_OF_MEMORY, "no memory for %d interpolated rows of %lld values", n_taps,
                           (long long)out[3]);
  return TB_OK;
}

/* float32 X of rank 4 (or a rank not known yet: run() hands another to the reference). */
static bool resize_accepts(const tb_kernel_query *q) {
  const tb_value_type *const *in = q->in;
  if (q->n_inputs < 1 || !tb_fast_accepts_f32(in, 1)) return false;
  return !in[0]->has_shape || in[0]->ndim == 4;
}

static tb_status run_avx512(tb_kernel_ctx *ctx) { return resize_run(ctx, TB_GEMM_AVX512); }
static tb_status run_avx2(tb_kernel_ctx *ctx) { return resize_run(ctx, TB_GEMM_AVX2); }
static tb_status run_portable(tb_kernel_ctx *ctx) { return resize_run(ctx, TB_GEMM_PORTABLE); }

#define RESIZE_KERNEL(op, features, run_fn) \
  {.domain = "", .name = op, .level = TB_KERNEL_FAST, .cpu_features = features, .accepts = resize_accepts, .run = run_fn}

const tb_kernel tb_kernel_resize_f32_avx512 = RESIZE_KERNEL("Resize", TB_FAST_FEATURES_AVX512, run_avx512);
const tb_kernel tb_kernel_resize_f32_avx2 = RESIZE_KERNEL("Resize", TB_FAST_FEATURES_AVX2, run_avx2);
const tb_kernel tb_kernel_resize_f32_portable = RESIZE_KERNEL("Resize", 0, run_portable);
const tb_kernel tb_kernel_upsample_f32_avx512 = RESIZE_KERNEL("Upsample", TB_FAST_FEATURES_AVX512, run_avx512);
const tb_kernel tb_kernel_upsample_f32_avx2 = RESIZE_KERNEL("Upsample", TB_FAST_FEATURES_AVX2, run_avx2);
const tb_kernel tb_kernel_upsample_f32_portable = RESIZE_KERNEL("Upsample", 0, run_portable);
