/* The implicit-GEMM input operand of the level-2 convolution: packs the patch matrix of one image and group
 * (row k = channel c, tap ky, kx; column = output pixel) straight from NCHW input into the GEMM's slivers:
 * a sliver's columns are cut once into runs on one output row, then each depth row copies every run (a
 * clipped memcpy for stride 1, a strided gather otherwise, zeros where the tap falls in the padding), with
 * (c, ky, kx) stepped instead of divided. No im2col buffer exists. */
#include <string.h>
#include "backend/cpu/kernels/fast/conv_fast.h"

/* d[0..run) = the input row of channel plane xc under tap (ky, kx) for output pixels (oy, ox0 ..). */
static void pack_run(const tb_conv_geom *g, const float *xc, int64_t ky, int64_t kx, int64_t oy, int64_t ox0,
                     int64_t run, float *d) {
  int64_t iy = oy * g->sh - g->ph + ky * g->dh;
  if (iy < 0 || iy >= g->ih) {
    memset(d, 0, (size_t)run * sizeof *d);
    return;
  }
  const float *row = xc + iy * g->iw;
  int64_t ix0 = ox0 * g->sw - g->pw + kx * g->dw, sw = g->sw;
  /* pixels t in [lo, hi) read inside the row: 0 <= ix0 + t * sw < iw */
  int64_t lo = ix0 >= 0 ? 0 : (-ix0 + sw - 1) / sw, hi = ix0 >= g->iw ? 0 : (g->iw - 1 - ix0) / sw + 1;
  if (lo > run) lo = run;
  if (hi > run) hi = run;
  if (hi < lo) hi = lo;
  if (lo) memset(d, 0, (size_t)lo * sizeof *d);
  if (hi > lo && sw == 1) {
    memcpy(d + lo, row + ix0 + lo, (size_t)(hi - lo) * sizeof *d);
  } else if (hi > lo) {
    const float *src = row + ix0 + lo * sw;
    for (int64_t t = lo; t < hi; t++, src += sw) d[t] = *src;
  }
  if (run > hi) memset(d + hi, 0, (size_t)(run - hi) * sizeof *d);
}

/* A run of output pixels on one output row, and where it lands in the sliver. */
typedef struct pixel_run {
  int64_t oy, ox, len, at;
} pixel_run;

enum { MAX_RUNS = 64 };

void tb_conv_pack_patches(void *patches, int64_t o0, int64_t outer, int64_t p0, int64_t kc, int width, float *dst) {
  const tb_conv_patches *pc = patches;
  const tb_conv_geom *g = pc->g;
  int64_t taps = g->kh * g->kw, plane = g->ih * g->iw;
  for (int64_t s = 0; s < outer; s += width, dst += kc * width) {
    int64_t cols = outer - s < width ? outer - s : width, first = pc->col0 + o0 + s;
    int64_t oy = first / g->ow, ox = first % g->ow;
    for (int64_t done = 0; done < cols;) {
      /* the sliver's columns as row runs (at most MAX_RUNS at a time), then every depth row over them */
      pixel_run runs[MAX_RUNS];
      int n_runs = 0;
      for (; done < cols && n_runs < MAX_RUNS; oy++, ox = 0) {
        int64_t len = g->ow - ox < cols - done ? g->ow - ox : cols - done;
        runs[n_runs++] = (pixel_run){oy, ox, len, done};
        done += len;
      }
      int64_t c = p0 / taps, ky = p0 % taps / g->kw, kx = p0 % g->kw;
      for (int64_t p = 0; p < kc; p++) {
        const float *xc = pc->x + c * plane;
        float *d = dst + p * width;
        for (int r = 0; r < n_runs; r++) pack_run(g, xc, ky, kx, runs[r].oy, runs[r].ox, runs[r].len, d + runs[r].at);
        if (++kx == g->kw) {
          kx = 0;
          if (++ky == g->kh) ky = 0, c++;
        }
      }
    }
    if (cols < width)
      for (int64_t p = 0; p < kc; p++) memset(dst + p * width + cols, 0, (size_t)(width - cols) * sizeof *dst);
  }
}
