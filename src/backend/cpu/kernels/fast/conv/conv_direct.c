/* The direct convolution's driver (conv_direct.h): which geometries it takes, the weights packed per group
 * and column block of the implementation's width (32 on AVX-512, 16 on AVX2; bf16 also 64) output
 * channels, the source (X itself, or X with its pads written as zeros: made by each thread for the rows it
 * reads, or once per run on the pool), the tiles (an output row cut evenly into tiles of up to max_rows
 * pixels), the depth cut into chunks whose weights stay in L2 (a band of output rows summed chunk by chunk
 * into a small per-thread buffer in the tile layout, the next chunk prefetched by the micro-kernel as it
 * goes), the threads (even shares of (column block, output row) items, each tile on one thread in a fixed
 * order: the same bits at any thread count) and the store: the tile transposed into the NCHW output with
 * bias, residual and activation by the implementation's store (conv_direct_store_avx512.c,
 * conv_direct_store_avx2.c; portable C where it has none). For bf16 with few input channels the units are
 * channels and the lanes tap pairs (tb_conv_direct_tap_pairs); the micro-kernel gets the horizontal stride
 * in the args (strides above 2: the generic kernels). TB_CONV_DIRECT turns it off. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "backend/cpu/kernels/fast/conv/conv_direct.h"
#include "backend/cpu/kernels/fast/conv/conv_stem.h"
#include "core/threadpool.h"

/* CHUNK_BYTES: a chunk's weights of one column block at most (they stay in L2 while a band of tiles
 * reuses them); BAND_BYTES: the per-thread buffer of a band's partial tiles at most (L1/L2). */
enum { MAX_TAPS = 64, CHUNK_BYTES = 320 * 1024, BAND_BYTES = 32 * 1024 };
/* ROWS_OUTER_BYTES: a group's weights at most for the row-outer order (see tb_conv_direct_run). */
enum { ROWS_OUTER_BYTES = 512 * 1024 };

struct tb_conv_direct_weights {
  const tb_conv_direct_impl *impl;
  int64_t group, mg, cg, units; /* units: channel units per group (cg rounded up to lanes; tap pairs: cg) */
  int n_taps, cols;               /* n_taps: kh x kw, or kh x ceil(kw / 2) pair taps */
  bool tap_pairs;                 /* units are channels, lanes pairs of horizontally consecutive taps */
  int64_t col_blocks;           /* per group */
  size_t block_bytes;           /* one column block's packed weights */
  unsigned char *data;          /* group x col_blocks blocks */
};

static int64_t ceil_div(int64_t a, int64_t b) { return (a + b - 1) / b; }

bool tb_conv_direct_tap_pairs(const tb_conv_direct_impl *impl, const tb_conv_geom *g) {
  if (!impl || impl->lanes != 2 || !impl->make_source_taps || !impl->pack_weights_taps || g->kw < 2 || g->group < 1)
    return false;
  int64_t cg = g->in_c / g->group;
  return cg * ceil_div(g->kw, 2) < ceil_div(cg, 2) * g->kw; /* (unit, tap) steps per kernel row */
}

/* 7 x 64 tiles when the output row is a multiple of 7 but not of 14 (ResNet's 7x7 layers) and the group's
 * channels fill 64-column blocks, if the implementation prefers them (prefer_64); else its own column
 * block (up to 14 x 32 on AVX-512, 6 x 16 on AVX2).
 * fp32 does not: its 7 x 64 kernel (28 accumulators, each FMA with its own broadcast load) measured 204
 * GFLOP/s against 260 for 7 x 32 (14 accumulators, one broadcast per two FMAs) on Zen 5. */
static int choose_cols(const tb_conv_direct_impl *impl, const tb_conv_geom *g) {
  int64_t mg = g->out_c / g->group;
  bool prefer_64 = impl->lanes > 1;
  return prefer_64 && g->ow % 14 != 0 && g->ow % 7 == 0 && mg % 64 == 0 && impl->ukr(7, 64, g->sw) ? 64 : impl->cols;
}

/* The tiles of an output row for `cols` columns: as few as the widest tile allows, evened out. */
static void plan_row(const tb_conv_direct_impl *impl, int64_t ow, int cols, int *rows, int64_t *tiles) {
  int max_rows = cols == 64 ? 7 : impl->max_rows < 16 ? impl->max_rows : 16; /* the store transposes 16 x 16 */
  int64_t n = ceil_div(ow, max_rows);
  *rows = (int)ceil_div(ow, n);
  *tiles = ceil_div(ow, *rows);
}

/* Source extent one axis needs: the input after its leading pad, and everything the taps read. */
static int64_t extent(int64_t in, int64_t pad, int64_t out, int64_t k, int64_t s, int64_t d) {
  int64_t reads = (out - 1) * s + (k - 1) * d + 1;
  return pad + in > reads ? pad + in : reads;
}

bool tb_conv_direct_fits(const tb_conv_direct_impl *impl, const tb_conv_geom *g, char *why, size_t why_cap) {
  char scratch[8];
  if (!why) why = scratch, why_cap = sizeof scratch;
  int64_t taps = g->kh * g->kw;
  if (!impl || !impl->ukr) {
    snprintf(why, why_cap, "no direct convolution on this path");
    return false;
  }
  if (g->spatial < 1 || g->spatial > 2 || g->group < 1 || g->in_c % g->group || g->out_c % g->group) {
    snprintf(why, why_cap, "%zu spatial axes, %lld groups of %lld -> %lld channels", g->spatial, (long long)g->group,
             (long long)g->in_c, (long long)g->out_c);
    return false;
  }
  if (tb_conv_is_depthwise(g)) {
    snprintf(why, why_cap, "depthwise (%lld groups of one channel): the depthwise kernel takes it", (long long)g->group);
    return false;
  }
  if (tb_conv_is_pointwise(g)) {
    snprintf(why, why_cap, "1x1 stride-1 unpadded: a plain GEMM on X");
    return false;
  }
  if (taps == 1) { /* measured: ResNet-18's 1x1 stride-2 downsamples ran 15-35% slower here than as the implicit GEMM */
    snprintf(why, why_cap, "1x1 kernel: the implicit GEMM runs it faster");
    return false;
  }
  if (taps > MAX_TAPS || taps < 1) {
    snprintf(why, why_cap, "%lld x %lld kernel: %lld taps (at most %d)", (long long)g->kh, (long long)g->kw, (long long)taps,
             MAX_TAPS);
    return false;
  }
  if (g->ph < 0 || g->pw < 0 || g->ow < 1 || g->oh < 1 || g->in_c < 1) {
    snprintf(why, why_cap, "pads %lld, %lld and a %lld x %lld output with %lld channels", (long long)g->ph, (long long)g->pw,
             (long long)g->oh, (long long)g->ow, (long long)g->in_c);
    return false;
  }
  int cols = choose_cols(impl, g), rows;
  int64_t tiles;
  plan_row(impl, g->ow, cols, &rows, &tiles);
  int last = (int)(g->ow - (tiles - 1) * rows);
  if (!impl->ukr(rows, cols, g->sw) || !impl->ukr(last, cols, g->sw)) {
    snprintf(why, why_cap, "no %s micro-kernel for %d x %d tiles at horizontal stride %lld", impl->name, rows, cols,
             (long long)g->sw);
    return false;
  }
  return true;
}

void tb_conv_direct_free(tb_conv_direct_weights *w) {
  if (!w) return;
  free(w->data);
  free(w);
}

tb_conv_direct_weights *tb_conv_direct_pack(const tb_conv_direct_impl *impl, const tb_conv_geom *g, const float *w) {
  tb_conv_direct_weights *p = calloc(1, sizeof *p);
  if (!p) return NULL;
  p->impl = impl;
  p->group = g->group;
  p->mg = g->out_c / g->group;
  p->cg = g->in_c / g->group;
  p->tap_pairs = tb_conv_direct_tap_pairs(impl, g);
  p->units = p->tap_pairs ? p->cg : ceil_div(p->cg, impl->lanes);
  p->n_taps = (int)(p->tap_pairs ? g->kh * ceil_div(g->kw, 2) : g->kh * g->kw);
  p->cols = choose_cols(impl, g);
  p->col_blocks = ceil_div(p->mg, p->cols);
  p->block_bytes = (size_t)p->units * (size_t)p->n_taps * (size_t)p->cols * (size_t)impl->lanes * impl->w_elem;
  size_t blocks = (size_t)(p->group * p->col_blocks);
  if (blocks && p->block_bytes > SIZE_MAX / blocks) {
    free(p);
    return NULL;
  }
  p->data = aligned_alloc(64, (blocks * p->block_bytes + 63) / 64 * 64);
  if (!p->data) {
    free(p);
    return NULL;
  }
  int64_t group_w = p->mg * p->cg * g->kh * g->kw;
  for (int64_t gi = 0; gi < p->group; gi++)
    for (int64_t cb = 0; cb < p->col_blocks; cb++) {
      unsigned char *dst = p->data + (size_t)(gi * p->col_blocks + cb) * p->block_bytes;
      if (p->tap_pairs)
        impl->pack_weights_taps(w + gi * group_w, p->mg, p->cg, (int)g->kh, (int)g->kw, cb * p->cols, p->cols, dst);
      else
        impl->pack_weights(w + gi * group_w, p->mg, p->cg, p->n_taps, cb * p->cols, p->cols, dst);
    }
  return p;
}

/* ---- run ---- */

typedef struct direct_run {
  const tb_conv_direct_impl *impl;
  const tb_conv_geom *g;
  const tb_conv_direct_weights *w;
  const float *x, *bias, *residual;
  const tb_gemm_epilogue *ep;
  float *y;
  /* the source */
  const unsigned char *src;
  unsigned char *own_src;
  int64_t src_h, src_w, plane;      /* plane: elements per unit */
  int64_t source_step;              /* channels per piece of the copy (whole units) */
  int64_t tap_off[MAX_TAPS];
  /* the work */
  int rows;
  int64_t tiles;                    /* per output row */
  int64_t chunk_units, n_chunks;
  int64_t band_rows;
  int64_t items, shares;            /* items: (image, group, column block, output row); shares: one per thread */
  bool rows_outer;                  /* items ordered (image, group, output row, column block) */
  bool windows;                     /* fp32 with pads: each thread makes the source rows it reads */
  int failed;
} direct_run;

static void source_jobs(void *p, size_t begin, size_t end) {
  direct_run *r = p;
  const tb_conv_geom *g = r->g;
  int64_t cg = g->in_c / g->group, step = r->source_step, per = ceil_div(cg, step);
  for (size_t t = begin; t < end; t++) {
    int64_t piece = (int64_t)t % per, bg = (int64_t)t / per; /* bg: image * group + group index */
    int64_t c0 = piece * step, n_c = cg - c0 < step ? cg - c0 : step;
    const float *x = r->x + bg * cg * g->ih * g->iw;
    unsigned char *src = r->own_src + (size_t)(bg * r->w->units * r->plane) * r->impl->src_elem;
    if (r->w->tap_pairs) r->impl->make_source_taps(x, g->ih, g->iw, c0, n_c, r->src_h, r->src_w, g->ph, g->pw, g->dw, src);
    else r->impl->make_source(x, g->ih, g->iw, c0, n_c, r->src_h, r->src_w, g->ph, g->pw, src);
  }
}

/* The packed weights of chunk c of column block cb of (image, group) bg, and their size. */
static const unsigned char *chunk_weights(const direct_run *r, int64_t bg, int64_t cb, int64_t c, size_t *bytes) {
  const tb_conv_direct_weights *w = r->w;
  int64_t u0 = c * r->chunk_units, nu = w->units - u0 < r->chunk_units ? w->units - u0 : r->chunk_units;
  size_t unit_bytes = (size_t)(w->n_taps * w->cols * r->impl->lanes) * r->impl->w_elem;
  *bytes = (size_t)nu * unit_bytes;
  return w->data + (size_t)(bg % r->g->group * w->col_blocks + cb) * w->block_bytes + (size_t)u0 * unit_bytes;
}

/* What a band's ukr calls fetch into L2 for the next phase: a range, cut evenly over the calls. */
typedef struct prefetch_plan {
  const unsigned char *at;
  int64_t left, per_call;
} prefetch_plan;

/* Where a tile reads: the source of one (image, group) from unit 0 (planes of `plane` elements), whose
 * first row is row `top` of the whole padded source. */
typedef struct source_view {
  const unsigned char *base;
  int64_t plane, top;
} source_view;

static source_view whole_source(const direct_run *r, int64_t bg) {
  return (source_view){r->src + (size_t)(bg * r->w->units * r->plane) * r->impl->src_elem, r->plane, 0};
}

/* Tile (row, i) of (image, group) bg and column block cb, chunk c, into acc. */
static void run_tile(const direct_run *r, const source_view *v, int64_t bg, int64_t cb, int64_t row, int64_t i, int64_t c,
                     float *acc, prefetch_plan *pf) {
  const tb_conv_geom *g = r->g;
  const tb_conv_direct_weights *w = r->w;
  int64_t ow0 = i * r->rows, n = g->ow - ow0 < r->rows ? g->ow - ow0 : r->rows;
  int64_t u0 = c * r->chunk_units, nu = w->units - u0 < r->chunk_units ? w->units - u0 : r->chunk_units;
  int64_t at = u0 * v->plane + (row * g->sh - v->top) * r->src_w + ow0 * g->sw;
  size_t bytes;
  int64_t pf_bytes = pf->left < pf->per_call ? pf->left : pf->per_call;
  tb_conv_direct_args a = {.src = v->base + (size_t)at * r->impl->src_elem, .unit_stride = v->plane,
                           .tap_off = r->tap_off, .n_taps = w->n_taps, .n_units = nu,
                           .w = chunk_weights(r, bg, cb, c, &bytes), .acc = acc, .accumulate = c > 0,
                           .prefetch = pf_bytes > 0 ? pf->at : NULL, .prefetch_bytes = pf_bytes,
                           .pixel_stride = g->sw};
  r->impl->ukr((int)n, w->cols, g->sw)(&a);
  if (pf_bytes > 0) pf->at += pf_bytes, pf->left -= pf_bytes;
}

/* Tile (row, i) from acc into y: transposed, plus bias and residual, then the activation. */
static void store_tile(const direct_run *r, int64_t bg, int64_t cb, int64_t row, int64_t i, const float *acc) {
  const tb_conv_geom *g = r->g;
  const tb_conv_direct_weights *w = r->w;
  int64_t b = bg / g->group, gi = bg % g->group, m0 = gi * w->mg + cb * w->cols;
  int64_t ch = w->mg - cb * w->cols < w->cols ? w->mg - cb * w->cols : w->cols;
  int64_t ow0 = i * r->rows, n = g->ow - ow0 < r->rows ? g->ow - ow0 : r->rows, plane = g->oh * g->ow;
  int64_t out = (b * g->out_c + m0) * plane + row * g->ow + ow0;
  const float *bias = r->bias ? r->bias + m0 : NULL, *res = r->residual ? r->residual + out : NULL;
  if (r->impl->store) {
    r->impl->store(acc, w->cols, n, ch, r->y + out, plane, bias, res, r->ep);
  } else {
    tb_conv_block_from_t(TB_GEMM_PORTABLE, r->y + out, plane, ch, n, acc, w->cols, bias, res, plane);
    tb_conv_block_act(TB_GEMM_PORTABLE, r->ep, r->y + out, plane, ch, n);
  }
}

/* A band: consecutive output rows of one (image, group) bg and column block cb, from item lo (before hi);
 * with one chunk every such row of the share, else as many as the band buffer holds. */
typedef struct band {
  int64_t bg, cb, row0, rows;
} band;

static band band_at(const direct_run *r, int64_t lo, int64_t hi) {
  int64_t oh = r->g->oh, ncb = r->w->col_blocks;
  if (r->rows_outer) { /* item (bg, row, cb): a band is one item */
    int64_t bg_row = lo / ncb;
    return (band){.bg = bg_row / oh, .cb = lo % ncb, .row0 = bg_row % oh, .rows = 1};
  }
  int64_t block = lo / oh;
  band b = {.bg = block / r->w->col_blocks, .cb = block % r->w->col_blocks, .row0 = lo % oh};
  b.rows = oh - b.row0 < hi - lo ? oh - b.row0 : hi - lo;
  if (r->n_chunks > 1 && b.rows > r->band_rows) b.rows = r->band_rows;
  return b;
}

/* The window of the padded source that output rows [ra, rb] of (image, group) bg read, made by this
 * thread into *buf (grown as needed; fp32 only: make_source is called per channel, whose planes are then
 * the window's): the rows each thread reads are written by it, not by the other threads. */
static bool make_window(const direct_run *r, int64_t bg, int64_t ra, int64_t rb, unsigned char **buf, size_t *cap,
                        source_view *v) {
  const tb_conv_geom *g = r->g;
  int64_t top = ra * g->sh, win_h = (rb - ra) * g->sh + (g->kh - 1) * g->dh + 1;
  if (top + win_h > r->src_h) win_h = r->src_h - top;
  int64_t x0 = top - g->ph > 0 ? top - g->ph : 0, x1 = top + win_h - g->ph < g->ih ? top + win_h - g->ph : g->ih;
  int64_t n = x1 > x0 ? x1 - x0 : 0, pt = n ? x0 - (top - g->ph) : 0;
  size_t bytes = (size_t)(r->w->units * win_h * r->src_w) * r->impl->src_elem;
  if (bytes > *cap) {
    free(*buf);
    *cap = (bytes + 63) / 64 * 64;
    if (!(*buf = aligned_alloc(64, *cap))) {
      *cap = 0;
      return false;
    }
  }
  int64_t cg = g->in_c / g->group, plane = win_h * r->src_w;
  const float *x = r->x + bg * cg * g->ih * g->iw + x0 * g->iw;
  for (int64_t c = 0; c < cg; c++)
    r->impl->make_source(x + c * g->ih * g->iw, n, g->iw, 0, 1, win_h, r->src_w, pt, g->pw,
                         *buf + (size_t)(c * plane) * r->impl->src_elem);
  *v = (source_view){*buf, plane, top};
  return true;
}

/* Share s of the items, band by band, each band summed chunk by chunk (phases) while the next phase's
 * weights are fetched into L2; with windows, each (image, group) of the share from its own window. */
static void share_jobs(void *p, size_t begin, size_t end) {
  direct_run *r = p;
  size_t tile_floats = (size_t)r->rows * (size_t)r->w->cols, win_cap = 0;
  int64_t buf_tiles = r->n_chunks > 1 ? r->band_rows * r->tiles : 1;
  float *buf = aligned_alloc(64, (size_t)buf_tiles * tile_floats * sizeof *buf);
  unsigned char *win = NULL;
  int64_t win_bg = -1, per_bg = r->w->col_blocks * r->g->oh; /* items per (image, group) */
  source_view view = {0};
  if (!buf) {
    __atomic_store_n(&r->failed, 1, __ATOMIC_RELAXED);
    return;
  }
  for (size_t s = begin; s < end; s++) {
    int64_t lo = r->items * (int64_t)s / r->shares, hi = r->items * ((int64_t)s + 1) / r->shares;
    win_bg = -1; /* a window holds the rows of the share it was made for: one call may take several shares (a
                  * busy or nested pool runs them all on the caller) */
    while (lo < hi) {
      band b = band_at(r, lo, hi);
      if (!r->windows) {
        view = whole_source(r, b.bg);
      } else if (b.bg != win_bg) { /* rows_outer: this (image, group)'s rows of the share; else all its rows */
        int64_t last = (hi < (b.bg + 1) * per_bg ? hi : (b.bg + 1) * per_bg) - 1;
        int64_t ra = r->rows_outer ? b.row0 : 0, rb = r->rows_outer ? last % per_bg / r->w->col_blocks : r->g->oh - 1;
        if (!make_window(r, b.bg, ra, rb, &win, &win_cap, &view)) {
          __atomic_store_n(&r->failed, 1, __ATOMIC_RELAXED);
          break;
        }
        win_bg = b.bg;
      }
      lo += b.rows;
      band next = lo < hi ? band_at(r, lo, hi) : (band){.bg = -1};
      for (int64_t c = 0; c < r->n_chunks; c++) {
        size_t now_bytes, next_bytes = 0;
        const unsigned char *now = chunk_weights(r, b.bg, b.cb, c, &now_bytes), *target = NULL;
        if (c + 1 < r->n_chunks) target = chunk_weights(r, b.bg, b.cb, c + 1, &next_bytes);
        else if (next.bg >= 0) target = chunk_weights(r, next.bg, next.cb, 0, &next_bytes);
        if (target == now || r->rows_outer) target = NULL; /* the same weights again, or all of them in L2 */
        int64_t calls = b.rows * r->tiles, lines = (int64_t)(next_bytes + 63) / 64;
        prefetch_plan pf = {.at = target, .left = target ? (int64_t)next_bytes : 0,
                            .per_call = (lines + calls - 1) / calls * 64};
        for (int64_t k = 0; k < b.rows; k++)
          for (int64_t i = 0; i < r->tiles; i++) {
            float *acc = r->n_chunks > 1 ? buf + (size_t)(k * r->tiles + i) * tile_floats : buf;
            run_tile(r, &view, b.bg, b.cb, b.row0 + k, i, c, acc, &pf);
            if (r->n_chunks == 1) store_tile(r, b.bg, b.cb, b.row0 + k, i, acc);
          }
      }
      for (int64_t k = 0; r->n_chunks > 1 && k < b.rows; k++)
        for (int64_t i = 0; i < r->tiles; i++) store_tile(r, b.bg, b.cb, b.row0 + k, i, buf + (size_t)(k * r->tiles + i) * tile_floats);
    }
  }
  free(buf);
  free(win);
}

bool tb_conv_direct_run(const tb_conv_direct_impl *impl, const tb_conv_geom *g, const tb_conv_direct_weights *w,
                        const float *x, const float *bias, const float *residual, const tb_gemm_epilogue *ep, float *y,
                        struct tb_pool *pool) {
  /* the AVX2 stem (1 to 4 input channels, 3x3 stride 2) with pixels in lanes, on the same packed weights */
  if (impl == &tb_conv_direct_f32_avx2 && !w->tap_pairs && w->cols == 16 && tb_conv_stem_avx2_fits(g))
    return tb_conv_stem_avx2_run(g, (const float *)(const void *)w->data, (int64_t)(w->block_bytes / sizeof(float)), x, bias,
                                 residual, ep, y, pool);
  direct_run r = {.impl = impl, .g = g, .w = w, .x = x, .bias = bias, .residual = residual, .ep = ep, .y = y};
  r.src_h = extent(g->ih, g->ph, g->oh, g->kh, g->sh, g->dh);
  r.src_w = extent(g->iw, g->pw, g->ow, g->kw, g->sw, g->dw);
  r.plane = r.src_h * r.src_w;
  bool copy = impl->lanes != 1 || r.src_h != g->ih || r.src_w != g->iw || g->ph || g->pw;
  plan_row(impl, g->ow, w->cols, &r.rows, &r.tiles);
  size_t unit_bytes = (size_t)w->n_taps * (size_t)w->cols * (size_t)impl->lanes * impl->w_elem;
  int64_t most = CHUNK_BYTES / (int64_t)unit_bytes > 0 ? CHUNK_BYTES / (int64_t)unit_bytes : 1;
  r.n_chunks = ceil_div(w->units, most);
  r.chunk_units = ceil_div(w->units, r.n_chunks);
  /* All the group's weights in L2 at once (one chunk, small): each output row takes every column block
   * in turn while its source rows are in cache (ResNet's stem and 56x56 layers read their source once,
   * not once per column block); else column block by column block, each block's weights streamed once.
   * In fp32 each thread pads the source rows it reads itself (all of them when it takes whole column
   * blocks): measured at 2 threads, the source copied in channel pieces on the pool and then read across
   * cores cost ResNet's 56x56 layers ~10% and its 28x28 and 14x14 layers 7-16% (layer3 80% -> 97% of
   * the FMA peak with per-thread copies). */
  r.rows_outer = r.n_chunks == 1 && (size_t)w->col_blocks * w->block_bytes <= ROWS_OUTER_BYTES;
  r.windows = copy && impl->lanes == 1;
  if (copy && !r.windows) {
    size_t bytes = (size_t)(g->batch * g->group * w->units * r.plane) * impl->src_elem;
    r.own_src = aligned_alloc(64, (bytes + 63) / 64 * 64);
    if (!r.own_src) return false;
    /* pieces of whole units, about four per thread (the stem's 3 channels: one each) */
    int64_t cg = g->in_c / g->group, lanes = w->tap_pairs ? 1 : impl->lanes;
    int64_t want = ceil_div(cg, 4 * (int64_t)tb_pool_threads(pool));
    r.source_step = ceil_div(want, lanes) * lanes;
    int64_t pieces = g->batch * g->group * ceil_div(cg, r.source_step);
    tb_pool_parallel_for(pool, (size_t)pieces, source_jobs, &r);
    r.src = r.own_src;
  } else if (!copy) {
    r.src = (const unsigned char *)x;
  }
  int64_t row_taps = w->tap_pairs ? ceil_div(g->kw, 2) : g->kw, tap_step = w->tap_pairs ? 2 : 1;
  for (int t = 0; t < w->n_taps; t++) r.tap_off[t] = t / row_taps * g->dh * r.src_w + t % row_taps * tap_step * g->dw;
  size_t row_bytes = (size_t)r.tiles * (size_t)r.rows * (size_t)w->cols * sizeof(float);
  r.band_rows = (int64_t)(BAND_BYTES / row_bytes > 0 ? BAND_BYTES / row_bytes : 1);
  r.items = g->batch * g->group * w->col_blocks * g->oh;
  r.shares = tb_pool_threads(pool);
  if (r.shares > r.items) r.shares = r.items;
  tb_pool_parallel_for(pool, (size_t)r.shares, share_jobs, &r);
  free(r.own_src);
  return !r.failed;
}
