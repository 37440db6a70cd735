/* The depthwise convolution with channels in vector lanes (conv_depthwise_lanes.h): jobs of (image, block of
 * L output channels) on the pool; each job transposes its channels' input planes into the padded pixel-major
 * buffer (whose pads are zeroed once per thread and never written), its taps and bias into lane vectors,
 * runs the path's kernel, transposes the output pixels back into the NCHW planes with the residual, and
 * applies the activation over the block's planes while they are in cache. The portable kernel (L = 8 plain
 * float lanes) is here; the cost rule that picks this kernel or the row kernels is at the end. */
#include <stdlib.h>
#include <string.h>
#include "backend/cpu/kernels/fast/conv/conv_depthwise_lanes.h"
#include "core/threadpool.h"

enum { PORTABLE_LANES = 8 };

static void to_lanes_portable(const float *const *src, int64_t n, float *dst, int64_t w, int64_t ldd) {
  for (int64_t p = 0, row = 0, col = 0; p < n; p++) {
    float *d = dst + (row * ldd + col) * PORTABLE_LANES;
    for (int l = 0; l < PORTABLE_LANES; l++) d[l] = src[l][p];
    if (++col == w) col = 0, row++;
  }
}

static void from_lanes_portable(const float *src, int64_t n, float *dst, int64_t ld, const float *res, int nc) {
  for (int l = 0; l < nc; l++)
    for (int64_t p = 0; p < n; p++)
      dst[l * ld + p] = src[p * PORTABLE_LANES + l] + (res ? res[l * ld + p] : 0.0f);
}

static void conv_portable(const tb_dwl_block *b) {
  const tb_conv_geom *g = b->g;
  enum { L = PORTABLE_LANES };
  for (int64_t oy = 0; oy < g->oh; oy++)
    for (int64_t ox = 0; ox < g->ow; ox++) {
      float acc[L];
      const float *w = b->w;
      for (int l = 0; l < L; l++) acc[l] = w[g->kh * g->kw * L + l];
      for (int64_t ky = 0; ky < g->kh; ky++) {
        const float *r = b->t + ((oy * g->sh + ky * g->dh) * b->tw + ox * g->sw) * L;
        for (int64_t kx = 0; kx < g->kw; kx++, w += L)
          for (int l = 0; l < L; l++) acc[l] += w[l] * r[kx * g->dw * L + l];
      }
      memcpy(b->o + (oy * g->ow + ox) * L, acc, sizeof acc);
    }
}

static const tb_dwl_impl portable = {PORTABLE_LANES, to_lanes_portable, from_lanes_portable, conv_portable};

static const tb_dwl_impl *impl_of(tb_gemm_path path) {
#if defined(__x86_64__)
  if (path == TB_GEMM_AVX512) return &tb_dwl_avx512;
  if (path == TB_GEMM_AVX2) return &tb_dwl_avx2;
#else
  (void)path;
#endif
  return &portable;
}

/* Output pixels a kernel computes at once along a row: 7 where that tiles the row exactly and 8 does not
 * (rows of 7, 14, 28), else 8; on AVX2 7 wherever it tiles the row (56 too), as only its blocks of 7 take
 * two output rows at once at stride 1 (16 accumulators for 8 pixels would not fit its 16 registers). */
static int64_t nb_of(const tb_dwl_impl *impl, int64_t ow) {
  if (ow % 7 == 0 && (ow % 8 != 0 || impl == &tb_dwl_avx2)) return 7;
  return 8;
}

typedef struct dwl_job {
  const tb_dwl_impl *impl;
  const tb_conv_geom *g;
  const float *x, *w, *bias, *residual;
  const tb_gemm_epilogue *ep;
  float *y;
  int64_t th, tw, nb, blocks;
  int failed;
} dwl_job;

static size_t round64(size_t bytes) { return (bytes + 63) / 64 * 64; }

/* Zero the pads of the padded input t (th x tw pixels of L floats) around the h x w input pixels at (ph, pw):
 * every job writes those pixels only, so the pads stay zero for all the jobs of a thread. */
static void zero_pads(float *t, int64_t th, int64_t tw, int64_t ph, int64_t pw, int64_t h, int64_t w, int L) {
  size_t px = (size_t)L * sizeof(float);
  int64_t left = pw < tw ? pw : tw, right = pw + w < tw ? pw + w : tw;
  for (int64_t r = 0; r < th; r++) {
    float *row = t + r * tw * L;
    if (r < ph || r >= ph + h || w == 0) {
      memset(row, 0, (size_t)tw * px);
      continue;
    }
    memset(row, 0, (size_t)left * px);
    memset(row + right * L, 0, (size_t)(tw - right) * px);
  }
}

static void dwl_tasks(void *p, size_t begin, size_t end) {
  dwl_job *j = p;
  const tb_conv_geom *g = j->g;
  const int L = j->impl->lanes;
  const int64_t plane_in = g->ih * g->iw, plane_out = g->oh * g->ow, kk = g->kh * g->kw, mult = g->out_c / g->in_c;
  /* the padded input, the output pixels (whole vectors of L pixels for the back-transposition's last
   * tile), the taps and bias */
  size_t t_bytes = round64((size_t)(j->th * j->tw * L) * sizeof(float));
  size_t o_bytes = round64((size_t)((plane_out + L - 1) / L * L * L) * sizeof(float));
  size_t w_bytes = round64((size_t)((kk + 1) * L) * sizeof(float));
  char *buf = aligned_alloc(64, t_bytes + o_bytes + w_bytes);
  if (!buf) {
    __atomic_store_n(&j->failed, 1, __ATOMIC_RELAXED);
    return;
  }
  float *t = (float *)(void *)buf, *o = (float *)(void *)(buf + t_bytes), *wl = (float *)(void *)(buf + t_bytes + o_bytes);
  /* the input's pixels inside the padded buffer (an input larger than the output needs is clipped) */
  int64_t ih_used = j->th - g->ph < g->ih ? j->th - g->ph : g->ih, iw_used = j->tw - g->pw < g->iw ? j->tw - g->pw : g->iw;
  if (ih_used < 0) ih_used = 0;
  if (iw_used < 0) iw_used = 0;
  /* o and wl are written whole before they are read (o's vectors past the plane only feed lanes that the
   * back-transposition masks off) */
  zero_pads(t, j->th, j->tw, g->ph, g->pw, ih_used, iw_used, L);
  float *t_in = t + (g->ph * j->tw + g->pw) * L;
  const float *src[16], *wsrc[16];
  tb_dwl_block blk = {.g = g, .t = t, .w = wl, .o = o, .tw = j->tw, .nb = j->nb};
  for (size_t task = begin; task < end; task++) {
    int64_t b = (int64_t)task / j->blocks, oc0 = (int64_t)task % j->blocks * L;
    int nc = g->out_c - oc0 < L ? (int)(g->out_c - oc0) : L;
    for (int l = 0; l < L; l++) {
      int64_t oc = oc0 + (l < nc ? l : nc - 1); /* lanes past the last channel repeat it; never stored */
      src[l] = j->x + (b * g->in_c + oc / mult) * plane_in;
      wsrc[l] = j->w + oc * kk;
    }
    if (ih_used > 0 && iw_used == g->iw) {
      j->impl->to_lanes(src, ih_used * g->iw, t_in, g->iw, j->tw);
    } else if (ih_used > 0 && iw_used > 0) {
      const float *row[16];
      for (int64_t iy = 0; iy < ih_used; iy++) {
        for (int l = 0; l < L; l++) row[l] = src[l] + iy * g->iw;
        j->impl->to_lanes(row, iw_used, t_in + iy * j->tw * L, iw_used, 0);
      }
    }
    j->impl->to_lanes(wsrc, kk, wl, kk, 0);
    for (int l = 0; l < L; l++) wl[kk * L + l] = j->bias ? j->bias[oc0 + (l < nc ? l : nc - 1)] : 0.0f;
    j->impl->conv(&blk);
    int64_t out = (b * g->out_c + oc0) * plane_out;
    j->impl->from_lanes(o, plane_out, j->y + out, plane_out, j->residual ? j->residual + out : NULL, nc);
    /* the block's planes are contiguous: one activation call over all of them */
    if (j->ep->act != 0) tb_conv_epilogue_row(j->ep, NULL, j->y + out, nc * plane_out);
  }
  free(buf);
}

bool tb_conv_depthwise_lanes_run(tb_gemm_path path, const tb_conv_geom *g, const float *x, const float *w, const float *bias,
                                 const float *residual, const tb_gemm_epilogue *ep, float *y, tb_pool *pool) {
  dwl_job j = {.impl = impl_of(path), .g = g, .x = x, .w = w, .bias = bias, .residual = residual, .ep = ep, .y = y,
               .nb = nb_of(impl_of(path), g->ow)};
  int64_t L = j.impl->lanes;
  j.th = (g->oh - 1) * g->sh + (g->kh - 1) * g->dh + 1;
  j.tw = ((g->ow + j.nb - 1) / j.nb * j.nb - 1) * g->sw + (g->kw - 1) * g->dw + 1;
  j.blocks = (g->out_c + L - 1) / L;
  tb_pool_parallel_for_work(pool, (size_t)(g->batch * j.blocks),
                            (double)(g->batch * g->out_c * g->oh * g->ow) * (double)(g->kh * g->kw), dwl_tasks, &j);
  return !j.failed;
}

/* Measured with bench/dw_bench.c on the 2-vCPU Zen 5 machine (AVX-512 and AVX2 paths), 1 thread, against
 * the row kernels, and per node against ONNX Runtime (docs/performance.md, "Depthwise convolution"):
 * channels in lanes win on every map up to 56 output columns on AVX2 (1.1-3.5x; 112 columns tie, 0.94-1.1); on
 * AVX-512 up to 40 output columns (1.1-3.6x). At 56 columns on AVX-512 lanes win the kernel-alone loop by
 * 1.1-1.2x but lost in the one-node models (144 channels 56x56 3x3: 0.19-0.35 ms against 0.15 on the rows,
 * whose smaller working set suits a model run's colder caches), and kernels above 5x5 lose on more than 16
 * columns (ConvNeXt's 7x7 at 56x56: 0.69; at 14x14 1.0-1.1): those stay on the row kernels. Dilated kernels
 * (not measured with lanes) and the portable path stay on the rows. */
bool tb_dwl_wanted(tb_gemm_path path, const tb_conv_geom *g) {
  if (path == TB_GEMM_PORTABLE || g->dh != 1 || g->dw != 1) return false;
  if (path == TB_GEMM_AVX2) return g->ow <= 56;
  return g->ow <= (g->kh * g->kw > 25 ? 16 : 40);
}
