/* The grouped direct convolution's driver (conv_grouped.h): which geometries it takes, the weights packed
 * in chunks of 4 output channels, the padded and phase-split source made once per run over the pool, the
 * tiles of an output plane, and the work split over the pool by (image, group, tile). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "backend/cpu/kernels/fast/conv/conv_grouped.h"
#include "core/threadpool.h"

enum { MAX_TAPS = 64, MAX_STRIDE = 4 };

struct tb_conv_grouped_weights {
  int64_t group, chunks, cg, taps; /* chunks of TB_CONV_GROUPED_OC output channels per group */
  float *data;
};

const tb_conv_grouped_impl *tb_conv_grouped_for(tb_gemm_path path) {
#if defined(__x86_64__)
  if (path == TB_GEMM_AVX512) return &tb_conv_grouped_avx512;
  if (path == TB_GEMM_AVX2) return &tb_conv_grouped_avx2;
#endif
  (void)path;
  return NULL;
}

bool tb_conv_grouped_fits(const tb_conv_grouped_impl *impl, const tb_conv_geom *g, char *why, size_t why_cap) {
  char scratch[8];
  if (!why || !why_cap) why = scratch, why_cap = sizeof scratch;
  if (!impl) {
    snprintf(why, why_cap, "no grouped direct convolution on this path");
    return false;
  }
  if (g->group < 2 || tb_conv_is_depthwise(g) || g->in_c % g->group || g->out_c % g->group) {
    snprintf(why, why_cap, "%lld groups of %lld -> %lld channels (takes groups of several channels)", (long long)g->group,
             (long long)g->in_c, (long long)g->out_c);
    return false;
  }
  int64_t mg = g->out_c / g->group, taps = g->kh * g->kw;
  if (mg % TB_CONV_GROUPED_OC || mg > TB_CONV_GROUPED_MAX_MG) {
    snprintf(why, why_cap, "%lld output channels per group (takes multiples of %d up to %d)", (long long)mg,
             TB_CONV_GROUPED_OC, TB_CONV_GROUPED_MAX_MG);
    return false;
  }
  if (tb_conv_is_pointwise(g)) {
    snprintf(why, why_cap, "1x1 stride-1 unpadded: a plain GEMM per group on X");
    return false;
  }
  if (g->spatial < 1 || g->spatial > 2 || taps < 1 || taps > MAX_TAPS || g->sw < 1 || g->sw > MAX_STRIDE || g->sh < 1 ||
      g->dh < 1 || g->dw < 1 || g->ph < 0 || g->pw < 0) {
    snprintf(why, why_cap, "%lld x %lld kernel, horizontal stride %lld (takes up to %d taps, stride up to %d)",
             (long long)g->kh, (long long)g->kw, (long long)g->sw, MAX_TAPS, MAX_STRIDE);
    return false;
  }
  if (g->ow < impl->lanes - 2) { /* a row fills too little of a vector (7 of 16 lanes) */
    snprintf(why, why_cap, "output rows of %lld pixels (takes at least %d)", (long long)g->ow, impl->lanes - 2);
    return false;
  }
  return true;
}

void tb_conv_grouped_free(tb_conv_grouped_weights *w) {
  if (!w) return;
  free(w->data);
  free(w);
}

tb_conv_grouped_weights *tb_conv_grouped_pack(const tb_conv_geom *g, const float *w) {
  tb_conv_grouped_weights *p = calloc(1, sizeof *p);
  if (!p) return NULL;
  int64_t mg = g->out_c / g->group;
  *p = (tb_conv_grouped_weights){.group = g->group, .chunks = mg / TB_CONV_GROUPED_OC, .cg = g->in_c / g->group,
                                 .taps = g->kh * g->kw};
  size_t n = (size_t)(g->out_c * p->cg * p->taps);
  p->data = aligned_alloc(64, (n * sizeof(float) + 63) / 64 * 64);
  if (!p->data) {
    free(p);
    return NULL;
  }
  float *d = p->data;
  for (int64_t m0 = 0; m0 < g->out_c; m0 += TB_CONV_GROUPED_OC) /* group gi's chunk q starts at channel gi * mg + 4q */
    for (int64_t c = 0; c < p->cg; c++)
      for (int64_t t = 0; t < p->taps; t++)
        for (int o = 0; o < TB_CONV_GROUPED_OC; o++) *d++ = w[((m0 + o) * p->cg + c) * p->taps + t];
  return p;
}

typedef struct grouped_run {
  const tb_conv_grouped_impl *impl;
  const tb_conv_geom *g;
  const tb_conv_grouped_weights *w;
  const float *x, *bias, *residual;
  const tb_gemm_epilogue *ep;
  float *y;
  float *src;
  int64_t src_h, phase_len, row_stride, plane;
  int64_t tap_off[MAX_TAPS];
  tb_conv_grouped_tile *tiles; /* the tiles of one output plane (src, y, res, w, bias set per item) */
  int64_t n_tiles;
} grouped_run;

/* Source planes t (image * C + channel): zeros, then the input rows at row ph, column pw of the padded
 * coordinates, column x of a padded row at phase x % sw, index x / sw. */
static void source_jobs(void *p, size_t begin, size_t end) {
  const grouped_run *r = p;
  const tb_conv_geom *g = r->g;
  for (size_t t = begin; t < end; t++) {
    float *s = r->src + (int64_t)t * r->plane;
    const float *x = r->x + (int64_t)t * g->ih * g->iw;
    memset(s, 0, (size_t)r->plane * sizeof *s);
    for (int64_t iy = 0; iy < g->ih; iy++) {
      float *row = s + (iy + g->ph) * r->row_stride;
      const float *xr = x + iy * g->iw;
      if (g->sw == 1) {
        memcpy(row + g->pw, xr, (size_t)g->iw * sizeof *xr);
        continue;
      }
      for (int64_t q = 0; q < g->sw; q++) { /* phase q: padded columns q, q + sw, ...: input columns from ix0 */
        int64_t ix0 = (q - g->pw % g->sw + g->sw) % g->sw, at = (ix0 + g->pw) / g->sw;
        float *d = row + q * r->phase_len + at;
        for (int64_t ix = ix0; ix < g->iw; ix += g->sw) *d++ = xr[ix];
      }
    }
  }
}

/* The tiles of one output plane: each row cut into vectors (as even as whole lanes allow: 56 = 16 + 16 + 16
 * + 8), the vectors taken max_vectors at a time in row order (across rows). False when out of memory. */
static bool plan_tiles(grouped_run *r) {
  const tb_conv_geom *g = r->g;
  int64_t lanes = r->impl->lanes, per_row = (g->ow + lanes - 1) / lanes, n_vec = g->oh * per_row;
  r->n_tiles = (n_vec + r->impl->max_vectors - 1) / r->impl->max_vectors;
  r->tiles = calloc((size_t)r->n_tiles, sizeof *r->tiles);
  if (!r->tiles) return false;
  for (int64_t v = 0; v < n_vec; v++) {
    tb_conv_grouped_tile *t = &r->tiles[v / r->impl->max_vectors];
    int64_t oy = v / per_row, ox = v % per_row * lanes;
    int k = t->vectors++;
    t->len[k] = (int)(g->ow - ox < lanes ? g->ow - ox : lanes);
    t->src_off[k] = oy * g->sh * r->row_stride + ox;
    t->y_off[k] = oy * g->ow + ox;
  }
  return true;
}

/* Items: image, group, tile of the plane; each runs every chunk of the group's output channels. */
static void tile_jobs(void *p, size_t begin, size_t end) {
  const grouped_run *r = p;
  const tb_conv_geom *g = r->g;
  const tb_conv_grouped_weights *w = r->w;
  int64_t mg = g->out_c / g->group, pixels = g->oh * g->ow, chunk_w = w->cg * w->taps * TB_CONV_GROUPED_OC;
  for (size_t item = begin; item < end; item++) {
    int64_t ti = (int64_t)item % r->n_tiles, bg = (int64_t)item / r->n_tiles, gi = bg % g->group, b = bg / g->group;
    tb_conv_grouped_tile t = r->tiles[ti];
    t.plane = r->plane, t.tap_off = r->tap_off, t.n_taps = (int)w->taps, t.cg = w->cg, t.ldy = pixels;
    t.act = r->ep->act > 3 ? 0 : r->ep->act; /* the caller runs the others over whole planes */
    t.act_alpha = r->ep->act_alpha, t.act_min = r->ep->act_min, t.act_max = r->ep->act_max;
    t.src = r->src + (b * g->in_c + gi * w->cg) * r->plane;
    for (int64_t q = 0; q < w->chunks; q++) {
      int64_t m0 = gi * mg + q * TB_CONV_GROUPED_OC, out = (b * g->out_c + m0) * pixels;
      t.w = w->data + (gi * w->chunks + q) * chunk_w;
      t.bias = r->bias ? r->bias + m0 : NULL;
      t.y = r->y + out;
      t.res = r->residual ? r->residual + out : NULL;
      r->impl->tile(&t);
    }
  }
}

bool tb_conv_grouped_run(const tb_conv_grouped_impl *impl, const tb_conv_geom *g, const tb_conv_grouped_weights *w,
                         const float *x, const float *bias, const float *residual, const tb_gemm_epilogue *ep, float *y,
                         struct tb_pool *pool) {
  grouped_run r = {.impl = impl, .g = g, .w = w, .x = x, .bias = bias, .residual = residual, .ep = ep, .y = y};
  /* padded extents: what the input covers after its leading pads, and everything the taps read */
  int64_t reads_h = (g->oh - 1) * g->sh + (g->kh - 1) * g->dh + 1, reads_w = (g->ow - 1) * g->sw + (g->kw - 1) * g->dw + 1;
  int64_t src_w = g->pw + g->iw > reads_w ? g->pw + g->iw : reads_w;
  r.src_h = g->ph + g->ih > reads_h ? g->ph + g->ih : reads_h;
  int64_t lanes = impl->lanes;
  /* a tile reads whole vectors: up to lanes - 1 pixels past the row's last one in the last phase */
  r.phase_len = (src_w + g->sw - 1) / g->sw + lanes;
  r.row_stride = r.phase_len * g->sw;
  r.plane = r.src_h * r.row_stride;
  for (int64_t ky = 0; ky < g->kh; ky++)
    for (int64_t kx = 0; kx < g->kw; kx++)
      r.tap_off[ky * g->kw + kx] = ky * g->dh * r.row_stride + kx * g->dw % g->sw * r.phase_len + kx * g->dw / g->sw;
  size_t planes = (size_t)(g->batch * g->in_c), bytes = (planes * (size_t)r.plane + (size_t)lanes) * sizeof(float);
  r.src = aligned_alloc(64, (bytes + 63) / 64 * 64);
  if (!r.src || !plan_tiles(&r)) {
    free(r.src);
    return false;
  }
  memset(r.src + planes * (size_t)r.plane, 0, (size_t)lanes * sizeof(float)); /* read past the last plane */
  tb_pool_parallel_for(pool, planes, source_jobs, &r);
  tb_pool_parallel_for(pool, (size_t)(g->batch * g->group * r.n_tiles), tile_jobs, &r);
  free(r.tiles);
  free(r.src);
  return true;
}
