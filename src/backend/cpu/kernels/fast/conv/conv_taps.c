/* The tap-by-tap GEMM of dilated convolutions (conv_taps.h): per image and group, the output block is set to
 * bias + residual, then each tap (ky, kx) adds W_tap (mg x cg, packed at prepare) times the input under that
 * tap over the rectangle of output pixels where it reads inside X (rows [r0, r1), columns [c0, c1)), then the
 * activation runs on the block. The tap's input operand is a 1x1 unpadded convolution's patches of X offset
 * to the rectangle's first input pixel (the patch packer of conv_pack.c with a 1x1 geometry), or X itself as
 * a plain matrix when the rectangle's pixels are consecutive input pixels (stride 1, whole input rows). A
 * rectangle of whole output rows accumulates straight into Y; a narrower one into a zeroed scratch block
 * that is then added into Y's rectangle. Each product is split over the pool by the GEMM, and the block's
 * row-wise work (bias and residual, zeroing and adding a scratch block, the activation) over the pool in
 * whole output-channel rows (serial, it was about 1 ms of the 13 ms ASPP layer at 2 threads); the sum over
 * taps is in tap order, so the result does not depend on the thread count. */
#include <stdlib.h>
#include <string.h>
#include "backend/cpu/kernels/fast/conv/conv_taps.h"
#include "core/threadpool.h"

struct tb_conv_taps_weights {
  const tb_conv_gemm *gemm;
  int path;
  int64_t group, taps;
  void **packed; /* group x taps, each an mg x cg operand */
};

void tb_conv_taps_free(tb_conv_taps_weights *w) {
  if (!w) return;
  for (int64_t i = 0; w->packed && i < w->group * w->taps; i++) w->gemm->free_weights(w->packed[i]);
  free(w->packed);
  free(w);
}

tb_conv_taps_weights *tb_conv_taps_pack(const tb_conv_gemm *gemm, int path, const tb_conv_geom *g, const float *w) {
  int64_t mg = g->out_c / g->group, cg = g->in_c / g->group, taps = g->kh * g->kw;
  tb_conv_taps_weights *p = calloc(1, sizeof *p);
  float *tap = malloc((size_t)(mg * cg) * sizeof *tap);
  if (!p || !tap || !(p->packed = calloc((size_t)(g->group * taps), sizeof *p->packed))) {
    free(p);
    free(tap);
    return NULL;
  }
  *p = (tb_conv_taps_weights){.gemm = gemm, .path = path, .group = g->group, .taps = taps, .packed = p->packed};
  for (int64_t grp = 0; grp < g->group; grp++)
    for (int64_t t = 0; t < taps; t++) {
      const float *wg = w + grp * mg * cg * taps;
      for (int64_t m = 0; m < mg; m++)
        for (int64_t c = 0; c < cg; c++) tap[m * cg + c] = wg[(m * cg + c) * taps + t];
      if (!(p->packed[grp * taps + t] = gemm->pack_weights(path, tap, mg, cg, false))) {
        free(tap);
        tb_conv_taps_free(p);
        return NULL;
      }
    }
  free(tap);
  return p;
}

/* Output positions [*lo, *hi) of one axis whose input o * s - p + off (off: the tap's offset k * d) lies in
 * [0, in). */
static void tap_range(int64_t in, int64_t out, int64_t s, int64_t p, int64_t off, int64_t *lo, int64_t *hi) {
  int64_t first = p - off, last = in - 1 + p - off; /* o * s in [first, last] */
  int64_t l = first <= 0 ? 0 : (first + s - 1) / s, h = last < 0 ? 0 : last / s + 1;
  if (h > out) h = out;
  if (l > h) l = h;
  *lo = l;
  *hi = h;
}

double tb_conv_taps_valid_share(const tb_conv_geom *g) {
  int64_t valid = 0, taps = g->kh * g->kw, pixels = tb_conv_pixels(g);
  for (int64_t t = 0; t < taps; t++) {
    int64_t r0, r1, c0, c1;
    tap_range(g->ih, g->oh, g->sh, g->ph, t / g->kw * g->dh, &r0, &r1);
    tap_range(g->iw, g->ow, g->sw, g->pw, t % g->kw * g->dw, &c0, &c1);
    valid += (r1 - r0) * (c1 - c0);
  }
  return taps * pixels > 0 ? (double)valid / (double)(taps * pixels) : 1.0;
}

bool tb_conv_taps_fits(const tb_conv_geom *g, double max_share) {
  bool shape = g->group >= 1 && g->in_c % g->group == 0 && g->out_c % g->group == 0 && !tb_conv_is_depthwise(g) &&
               g->kh * g->kw > 1 && (g->dh > 1 || g->dw > 1) && g->in_c / g->group >= TB_CONV_TAPS_MIN_DEPTH;
  return shape && tb_conv_taps_valid_share(g) <= max_share;
}

/* The block's row-wise work: tasks are output-channel rows; each touches its rows only. */
typedef enum { ROWS_INIT, ROWS_ZERO, ROWS_ADD, ROWS_ACT } rows_kind;

typedef struct rows_job {
  rows_kind kind;
  bool avx512;
  float *yb, *scratch;
  const float *bias, *res;
  const tb_gemm_epilogue *ep;
  int64_t n, ow, r0, c0, rows, cols; /* n: pixels per row of yb; the rectangle for ROWS_ZERO / ROWS_ADD */
} rows_job;

static void rows_tasks(void *p, size_t begin, size_t end) {
  const rows_job *j = p;
  int64_t m0 = (int64_t)begin, mc = (int64_t)(end - begin), n = j->n, np = j->rows * j->cols;
  if (j->kind == ROWS_INIT)
    tb_conv_block_init(j->avx512 ? TB_GEMM_AVX512 : TB_GEMM_PORTABLE, j->yb + m0 * n, n, mc, n, j->bias ? j->bias + m0 : NULL, j->res ? j->res + m0 * n : NULL, n);
  else if (j->kind == ROWS_ACT)
    tb_conv_block_act(j->avx512 ? TB_GEMM_AVX512 : TB_GEMM_PORTABLE, j->ep, j->yb + m0 * n, n, mc, n);
  else if (j->kind == ROWS_ZERO)
    memset(j->scratch + m0 * np, 0, (size_t)(mc * np) * sizeof *j->scratch);
  else
    for (int64_t m = m0; m < m0 + mc; m++)
      for (int64_t i = 0; i < j->rows; i++) {
        float *yr = j->yb + m * n + (j->r0 + i) * j->ow + j->c0;
        const float *sr = j->scratch + m * np + i * j->cols;
        for (int64_t c = 0; c < j->cols; c++) yr[c] += sr[c];
      }
}

static void rows_run(rows_job *j, int64_t mg, struct tb_pool *pool) {
  double per_row = j->kind == ROWS_INIT || j->kind == ROWS_ACT ? (double)j->n : (double)(j->rows * j->cols);
  tb_pool_parallel_for_work(pool, (size_t)mg, (double)mg * per_row * 2.0, rows_tasks, j);
}

/* One tap of one image and group: yb (mg x n, row stride n) += W_tap x the input under the tap over its
 * rectangle. False when the GEMM cannot allocate its buffers. */
static bool run_tap(const tb_conv_taps_weights *w, bool avx512, const tb_conv_geom *g, const float *xg, const void *packed,
                    int64_t ky, int64_t kx, float *yb, float *scratch, struct tb_pool *pool) {
  int64_t r0, r1, c0, c1;
  tap_range(g->ih, g->oh, g->sh, g->ph, ky * g->dh, &r0, &r1);
  tap_range(g->iw, g->ow, g->sw, g->pw, kx * g->dw, &c0, &c1);
  if (r0 == r1 || c0 == c1) return true;
  int64_t mg = g->out_c / g->group, cg = g->in_c / g->group, n = tb_conv_pixels(g), plane = g->ih * g->iw;
  int64_t rows = r1 - r0, cols = c1 - c0, np = rows * cols;
  const float *xt = xg + (r0 * g->sh - g->ph + ky * g->dh) * g->iw + (c0 * g->sw - g->pw + kx * g->dw);
  /* the rectangle as a 1x1 unpadded convolution of the input from xt on (rows of iw, planes of ih x iw) */
  tb_conv_geom gt = {.spatial = g->spatial, .batch = 1, .in_c = cg, .out_c = mg, .group = 1, .ih = g->ih, .iw = g->iw,
                     .oh = rows, .ow = cols, .kh = 1, .kw = 1, .sh = g->sh, .sw = g->sw, .dh = 1, .dw = 1};
  tb_conv_patches patches = {&gt, xt, 0, avx512};
  bool plain = g->sw == 1 && cols == g->sh * g->iw; /* pixel i * cols + j is input element i * sh * iw + j */
  bool whole_rows = c0 == 0 && c1 == g->ow;
  float *c = whole_rows ? yb + r0 * g->ow : scratch;
  int64_t ldc = whole_rows ? n : np;
  rows_job rj = {.kind = ROWS_ZERO, .yb = yb, .scratch = scratch, .n = n, .ow = g->ow, .r0 = r0, .c0 = c0, .rows = rows,
                 .cols = cols};
  if (!whole_rows) rows_run(&rj, mg, pool);
  if (!w->gemm->run(w->path, mg, np, cg, packed, plain ? xt : NULL, plane, plain ? NULL : &patches, c, ldc, pool))
    return false;
  rj.kind = ROWS_ADD;
  if (!whole_rows) rows_run(&rj, mg, pool);
  return true;
}

bool tb_conv_taps_run(const tb_conv_taps_weights *w, bool avx512, const tb_conv_geom *g, const float *x, const float *bias,
                      const float *residual, const tb_gemm_epilogue *ep, float *y, struct tb_pool *pool) {
  int64_t mg = g->out_c / g->group, cg = g->in_c / g->group, n = tb_conv_pixels(g), plane = g->ih * g->iw;
  float *scratch = malloc((size_t)(mg * n) * sizeof *scratch);
  if (!scratch) return false;
  bool ok = true;
  for (int64_t b = 0; b < g->batch && ok; b++)
    for (int64_t grp = 0; grp < g->group && ok; grp++) {
      const float *xg = x + (b * g->in_c + grp * cg) * plane;
      int64_t out = (b * g->out_c + grp * mg) * n;
      float *yb = y + out;
      rows_job rj = {.kind = ROWS_INIT, .avx512 = avx512, .yb = yb, .bias = bias ? bias + grp * mg : NULL,
                     .res = residual ? residual + out : NULL, .ep = ep, .n = n};
      rows_run(&rj, mg, pool);
      for (int64_t t = 0; t < w->taps && ok; t++)
        ok = run_tap(w, avx512, g, xg, w->packed[grp * w->taps + t], t / g->kw, t % g->kw, yb, scratch, pool);
      rj.kind = ROWS_ACT;
      if (ep->act) rows_run(&rj, mg, pool);
    }
  free(scratch);
  return ok;
}
