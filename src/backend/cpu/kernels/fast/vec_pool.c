/* Level-2 fp32 MaxPool and AveragePool over 2-D planes (NCHW), with the reference's pads, strides,
 * auto_pad, ceil_mode and count_include_pad (the geometry comes from ops/nn/window.h, as the reference's),
 * and GlobalAveragePool. Dilations other than 1 and MaxPool's Indices output stay with the reference.
 *
 * Per output row, the output row itself accumulates: for each valid kernel row and kernel column, the
 * range of output columns whose tap lands inside the input is one strided run (contiguous at stride 1).
 * MaxPool keeps the reference's NaN rule: an output starts from its first tap in window order (so a NaN
 * there stays) and later taps replace it only when greater (so later NaNs are skipped). */
#include <math.h>
#include "backend/cpu/kernels/fast/vec_kernel.h"
#include "ops/nn/window.h"

typedef struct pool_job {
  const vec_ops *ops;
  const float *x;
  float *y;
  bool max, include_pad;
  int64_t h, w, oh, ow;
  nn_window win;
} pool_job;

static int64_t clamp64(int64_t v, int64_t lo, int64_t hi) { return v < lo ? lo : v > hi ? hi : v; }

/* Taps k in [0, K) of output o that land inside [0, in), as [*k0, *k1). */
static void valid_taps(int64_t o, int64_t s, int64_t pb, int64_t k, int64_t in, int64_t *k0, int64_t *k1) {
  int64_t start = o * s - pb;
  *k0 = clamp64(-start, 0, k);
  *k1 = clamp64(in - start, *k0, k);
}

static void pool_row(const pool_job *j, const float *x, int64_t oh, float *y) {
  const nn_window *w = &j->win;
  int64_t kh_n = w->kernel[0], kw_n = w->kernel[1], sh = w->stride[0], sw = w->stride[1];
  int64_t pt = w->pad_begin[0], pl = w->pad_begin[1];
  int64_t kh0, kh1;
  valid_taps(oh, sh, pt, kh_n, j->h, &kh0, &kh1);
  int64_t h0 = oh * sh - pt;
  for (int64_t o = 0; o < j->ow; o++) y[o] = j->max ? -INFINITY : 0.0f;
  if (j->max && kh0 < kh1)
    for (int64_t o = 0; o < j->ow; o++) {
      int64_t kw0, kw1;
      valid_taps(o, sw, pl, kw_n, j->w, &kw0, &kw1);
      if (kw0 < kw1) y[o] = x[(h0 + kh0) * j->w + o * sw - pl + kw0];
    }
  for (int64_t kh = kh0; kh < kh1; kh++) {
    const float *row = x + (h0 + kh) * j->w;
    for (int64_t kw = 0; kw < kw_n; kw++) {
      /* outputs o with 0 <= o*sw - pl + kw < W */
      int64_t lo = pl - kw <= 0 ? 0 : (pl - kw + sw - 1) / sw, last = j->w - 1 + pl - kw;
      if (last < 0) continue;
      int64_t hi = last / sw;
      if (hi > j->ow - 1) hi = j->ow - 1;
      if (lo > hi) continue;
      const float *src = row + lo * sw - pl + kw;
      if (j->max)
        j->ops->max_acc(y + lo, src, sw, hi - lo + 1);
      else
        j->ops->add_acc(y + lo, src, sw, hi - lo + 1);
    }
  }
  if (j->max) return;
  int64_t ch_in = kh1 - kh0, ch_pad = clamp64(j->h + w->pad_end[0] + pt - oh * sh, 0, kh_n);
  for (int64_t o = 0; o < j->ow; o++) {
    int64_t kw0, kw1;
    valid_taps(o, sw, pl, kw_n, j->w, &kw0, &kw1);
    int64_t cw_pad = clamp64(j->w + w->pad_end[1] + pl - o * sw, 0, kw_n);
    int64_t div = j->include_pad ? ch_pad * cw_pad : ch_in * (kw1 - kw0);
    y[o] = div > 0 ? y[o] / (float)div : NAN;
  }
}

static void pool_planes(void *arg, size_t begin, size_t end) {
  const pool_job *j = arg;
  for (size_t p = begin; p < end; p++) {
    const float *x = j->x + (int64_t)p * j->h * j->w;
    float *y = j->y + (int64_t)p * j->oh * j->ow;
    for (int64_t oh = 0; oh < j->oh; oh++) pool_row(j, x, oh, y + oh * j->ow);
  }
}

static tb_status pool_run(tb_kernel_ctx *ctx, const vec_ops *ops, bool max) {
  if (!vec_inputs_ok(ctx, 1) || tb_tensor_ndim(ctx->inputs[0]) != 4 || (max && vec_node_has_output(ctx->node, 1)))
    return vec_fallback(ctx);
  const tb_tensor *x = ctx->inputs[0];
  const int64_t *shape = tb_tensor_shape(x);
  pool_job j = {.ops = ops, .x = tb_tensor_host_data(x), .max = max, .h = shape[2], .w = shape[3]};
  int64_t include = 0, out_shape[4] = {shape[0], shape[1], 0, 0};
  if (nn_window_read(ctx->graph, ctx->node, 2, NULL, true, &j.win) != TB_OK) return vec_fallback(ctx);
  for (size_t i = 0; i < 2; i++)
    if (j.win.dilation[i] != 1 ||
        nn_window_out(ctx->graph, ctx->node, &j.win, i, shape[2 + i], &out_shape[2 + i]) != TB_OK)
      return vec_fallback(ctx);
  tb_status st = tb_attr_int(ctx->graph, ctx->node, "count_include_pad", 0, &include);
  if (st != TB_OK) return st;
  j.include_pad = include != 0;
  j.oh = out_shape[2];
  j.ow = out_shape[3];
  if (!vec_output(ctx, 0, 4, out_shape, &j.y, &st)) return st == TB_OK ? vec_fallback(ctx) : st;
  int64_t planes = shape[0] * shape[1];
  if (planes * j.oh * j.ow == 0) return TB_OK;
  vec_parallel(ctx, (size_t)planes, planes * j.oh * j.ow * j.win.kernel[0] * j.win.kernel[1], pool_planes, &j);
  return TB_OK;
}

static bool pool_accepts(const tb_graph *g, const tb_node *n, const tb_value_type *const *in) {
  const int64_t *list = NULL;
  size_t count = 0;
  if (n->n_inputs < 1 || !tb_fast_accepts_f32(in, 1) || vec_node_has_output(n, 1)) return false;
  if (in[0]->has_shape && in[0]->ndim != 4) return false;
  if (tb_attr_ints(g, n, "kernel_shape", &list, &count) != TB_OK || count != 2) return false;
  if (tb_attr_ints(g, n, "dilations", &list, &count) != TB_OK) return false;
  for (size_t i = 0; list && i < count; i++)
    if (list[i] != 1) return false;
  return true;
}

typedef struct gap_job {
  const vec_ops *ops;
  const float *x;
  float *y;
  int64_t plane;
} gap_job;

static void gap_planes(void *arg, size_t begin, size_t end) {
  const gap_job *j = arg;
  for (size_t p = begin; p < end; p++)
    j->y[p] = (float)(j->ops->sum(j->x + (int64_t)p * j->plane, j->plane) / (double)j->plane);
}

static tb_status gap_run(tb_kernel_ctx *ctx, const vec_ops *ops) {
  if (!vec_inputs_ok(ctx, 1) || tb_tensor_ndim(ctx->inputs[0]) < 2) return vec_fallback(ctx);
  const tb_tensor *x = ctx->inputs[0];
  size_t r = tb_tensor_ndim(x);
  const int64_t *shape = tb_tensor_shape(x);
  int64_t out_shape[TB_MAX_DIMS];
  gap_job j = {.ops = ops, .x = tb_tensor_host_data(x), .plane = 1};
  for (size_t d = 0; d < r; d++) {
    out_shape[d] = d < 2 ? shape[d] : 1;
    if (d >= 2) j.plane *= shape[d];
  }
  tb_status st;
  if (!vec_output(ctx, 0, r, out_shape, &j.y, &st)) return st == TB_OK ? vec_fallback(ctx) : st;
  vec_parallel(ctx, (size_t)(shape[0] * shape[1]), tb_tensor_numel(x), gap_planes, &j);
  return TB_OK;
}

static bool gap_accepts(const tb_graph *g, const tb_node *n, const tb_value_type *const *in) {
  (void)g;
  return n->n_inputs >= 1 && tb_fast_accepts_f32(in, 1);
}

static tb_status maxpool_run(tb_kernel_ctx *ctx, const vec_ops *ops) { return pool_run(ctx, ops, true); }
static tb_status avgpool_run(tb_kernel_ctx *ctx, const vec_ops *ops) { return pool_run(ctx, ops, false); }
VEC_KERNELS(maxpool, "", "MaxPool", pool_accepts, maxpool_run)
VEC_KERNELS(averagepool, "", "AveragePool", pool_accepts, avgpool_run)
VEC_KERNELS(global_averagepool, "", "GlobalAveragePool", gap_accepts, gap_run)
