/* The implicit-GEMM input operand of the convolutions: packs the patch matrix of one image and group
 * (row k = channel c, tap ky, kx; column = output pixel) straight from NCHW input into the GEMM's slivers.
 * The columns are cut once into runs on one output row within one sliver (up to MAX_RUNS of them, across
 * slivers, are packed together, so each depth row reads its input rows once for all of them rather than
 * the whole input being walked again per sliver), and for each run and tap column kx the
 * clipped range of pixels that read inside the input row (and where the first one reads) is worked out
 * once too; each depth row then only copies every run (contiguous at stride 1, strided otherwise), zeros
 * where the tap falls in the padding, with (c, ky, kx) stepped instead of divided. On AVX-512 the common
 * shapes (stride 1 or 2, runs up to 32 pixels) take conv_pack_avx512.c's masked loads instead, and the
 * rest this loop with the AVX-512 gather. No im2col buffer exists. */
#include <string.h>
#include "backend/cpu/kernels/fast/conv/conv_fast.h"

/* For one run and tap column: pixels [lo, hi) of the run read inside the input row, pixel lo at column ix. */
typedef struct run_cols {
  int64_t lo, hi, ix;
} run_cols;

enum { MAX_RUNS = 64, MAX_TAP_COLS = 16 };

static run_cols cols_for(const tb_conv_geom *g, int64_t ox0, int64_t len, int64_t kx) {
  int64_t ix0 = ox0 * g->sw - g->pw + kx * g->dw, sw = g->sw;
  /* pixels t in [lo, hi) read inside the row: 0 <= ix0 + t * sw < iw */
  int64_t lo = ix0 >= 0 ? 0 : (-ix0 + sw - 1) / sw, hi = ix0 >= g->iw ? 0 : (g->iw - 1 - ix0) / sw + 1;
  if (lo > len) lo = len;
  if (hi > len) hi = len;
  if (hi < lo) hi = lo;
  return (run_cols){lo, hi, ix0 + lo * sw};
}

/* d[0..len) = the input row iy of channel plane xc over the run's columns rc (zeros outside). */
static void pack_run(const tb_conv_patches *pc, const float *xc, int64_t iy, int64_t len, run_cols rc, float *d) {
  const tb_conv_geom *g = pc->g;
  if (iy < 0 || iy >= g->ih || rc.hi == rc.lo) {
    memset(d, 0, (size_t)len * sizeof *d);
    return;
  }
  if (rc.lo) memset(d, 0, (size_t)rc.lo * sizeof *d);
  (pc->avx512 ? tb_conv_gather_avx512 : tb_conv_gather_portable)(d + rc.lo, xc + iy * g->iw + rc.ix, g->sw, rc.hi - rc.lo);
  if (len > rc.hi) memset(d + rc.hi, 0, (size_t)(len - rc.hi) * sizeof *d);
}

/* Depth rows p0 .. p0+kc of the runs (row p of a run at dst + run.at + p * width). */
static void pack_runs(const tb_conv_patches *pc, const tb_conv_pixel_run *runs, int n_runs, int64_t p0, int64_t kc, int width,
                      float *dst) {
  const tb_conv_geom *g = pc->g;
  int64_t taps = g->kh * g->kw, plane = g->ih * g->iw;
  bool table = g->kw <= MAX_TAP_COLS;
  run_cols cols[MAX_RUNS][MAX_TAP_COLS];
  for (int r = 0; table && r < n_runs; r++)
    for (int64_t kx = 0; kx < g->kw; kx++) cols[r][kx] = cols_for(g, runs[r].ox, runs[r].len, kx);
  int64_t c = p0 / taps, ky = p0 % taps / g->kw, kx = p0 % g->kw;
  for (int64_t p = 0; p < kc; p++) {
    const float *xc = pc->x + c * plane;
    float *d = dst + p * width;
    for (int r = 0; r < n_runs; r++) {
      run_cols rc = table ? cols[r][kx] : cols_for(g, runs[r].ox, runs[r].len, kx);
      pack_run(pc, xc, runs[r].oy * g->sh - g->ph + ky * g->dh, runs[r].len, rc, d + runs[r].at);
    }
    if (++kx == g->kw) {
      kx = 0;
      if (++ky == g->kh) ky = 0, c++;
    }
  }
}

void tb_conv_pack_patches(void *patches, int64_t o0, int64_t outer, int64_t p0, int64_t kc, int width, float *dst) {
  const tb_conv_patches *pc = patches;
  const tb_conv_geom *g = pc->g;
  for (int64_t col = 0; col < outer;) {
    /* the next columns as runs on one output row within one sliver (at most MAX_RUNS at a time), then
     * every depth row over all of them: the input is read row after row, not once per sliver */
    tb_conv_pixel_run runs[MAX_RUNS];
    int n_runs = 0;
    for (; col < outer && n_runs < MAX_RUNS;) {
      int64_t pixel = pc->col0 + o0 + col, oy = pixel / g->ow, ox = pixel % g->ow;
      int64_t sliver = col / width, in_sliver = col % width, len = g->ow - ox;
      if (len > width - in_sliver) len = width - in_sliver;
      if (len > outer - col) len = outer - col;
      runs[n_runs++] = (tb_conv_pixel_run){oy, ox, len, sliver * kc * width + in_sliver};
      col += len;
    }
    if (!pc->avx512 || !tb_conv_pack_runs_avx512(pc, runs, n_runs, p0, kc, width, dst))
      pack_runs(pc, runs, n_runs, p0, kc, width, dst);
  }
  int64_t tail = outer % width;
  if (tail) {
    float *last = dst + (outer / width) * kc * width;
    for (int64_t p = 0; p < kc; p++) memset(last + p * width + tail, 0, (size_t)(width - tail) * sizeof *dst);
  }
}
