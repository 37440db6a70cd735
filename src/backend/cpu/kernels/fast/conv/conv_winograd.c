/* The Winograd F(2x2, 3x3) convolution's driver (conv_winograd.h): TB_CONV_WINOGRAD, which geometries it
 * takes, the weight transform U = G g G^T (in double, at prepare) packed as the GEMM micro-kernel's B
 * operand, and the run: work items (image, block of slivers, part of the output channels) in even shares
 * over the pool, each item's input transform into its thread's V buffer, the 16 products per sliver on the
 * existing micro-kernels into its M buffer, and the output transform with the epilogue. */
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "backend/cpu/kernels/fast/conv/conv_winograd.h"
#include "backend/cpu/kernels/fast/gemm/gemm_bf16_kernel.h"
#include "core/threadpool.h"

/* MIN_TILES: tiles per image below which the direct convolution is faster (measured on ResNet-18's layers:
 * see tb_conv_winograd_fits). BLOCK_BYTES: one item's V at most (it stays in L2 with one column block's U;
 * 192 to 384 KiB measured the same, 768 KiB 3-7% slower on ResNet's layers). */
enum { MIN_TILES = 40, BLOCK_BYTES = 384 * 1024 };

const tb_conv_winograd_impl tb_conv_winograd_f32_avx512 = {.name = "winograd fp32 avx512", .bf16 = false};
const tb_conv_winograd_impl tb_conv_winograd_f32_avx2 = {.name = "winograd fp32 avx2", .bf16 = false, .avx2 = true};
const tb_conv_winograd_impl tb_conv_winograd_bf16_avx512bf16 = {.name = "winograd bf16 avx512bf16", .bf16 = true};

struct tb_conv_winograd_weights {
  bool bf16;
  int64_t c, k, kp;     /* kp: K rounded up to 32 */
  int64_t depth;        /* the micro-kernel's depth: C (fp32) or ceil(C / 2) pairs (bf16) */
  int64_t block_elems;  /* elements of one (xi, 32-channel block): depth * 32 (bf16: * 2) */
  size_t bytes;
  void *data;           /* [xi][kb] blocks */
};

static int64_t ceil_div(int64_t a, int64_t b) { return (a + b - 1) / b; }

static int64_t tiles_per_row(const tb_conv_geom *g) { return ceil_div(g->ow, 2); }
static int64_t halves_per_row(const tb_conv_geom *g) { return ceil_div(tiles_per_row(g), TB_WG_HALF); }
static int64_t slivers_per_image(const tb_conv_geom *g) {
  return ceil_div(ceil_div(g->oh, 2) * halves_per_row(g), 2);
}

bool tb_conv_winograd_fits(const tb_conv_winograd_impl *impl, const tb_conv_geom *g, char *why, size_t why_cap) {
  char scratch[8];
  if (!why || !why_cap) why = scratch, why_cap = sizeof scratch;
#if !defined(__x86_64__)
  (void)impl, (void)g;
  snprintf(why, why_cap, "no Winograd convolution off x86-64");
  return false;
#else
  if (!impl) {
    snprintf(why, why_cap, "no Winograd convolution on this path");
    return false;
  }
  if (g->spatial != 2 || g->group != 1 || g->kh != 3 || g->kw != 3) {
    snprintf(why, why_cap, "%zu spatial axes, %lld groups, %lld x %lld kernel (takes 2-D, one group, 3x3)", g->spatial,
             (long long)g->group, (long long)g->kh, (long long)g->kw);
    return false;
  }
  if (g->sh != 1 || g->sw != 1 || g->dh != 1 || g->dw != 1) {
    snprintf(why, why_cap, "strides %lld x %lld, dilations %lld x %lld (takes 1)", (long long)g->sh, (long long)g->sw,
             (long long)g->dh, (long long)g->dw);
    return false;
  }
  int64_t end_h = g->oh + 2 - g->ih - g->ph, end_w = g->ow + 2 - g->iw - g->pw;
  if (g->ph < 0 || g->ph > 1 || g->pw < 0 || g->pw > 1 || end_h < 0 || end_h > 1 || end_w < 0 || end_w > 1) {
    snprintf(why, why_cap, "pads %lld, %lld, %lld, %lld (takes 0 or 1)", (long long)g->ph, (long long)g->pw,
             (long long)end_h, (long long)end_w);
    return false;
  }
  if (g->in_c < 1 || g->out_c < 1 || g->oh < 1 || g->ow < 1 || g->batch < 1) {
    snprintf(why, why_cap, "%lld -> %lld channels, %lld x %lld output", (long long)g->in_c, (long long)g->out_c,
             (long long)g->oh, (long long)g->ow);
    return false;
  }
  int64_t tiles = ceil_div(g->oh, 2) * tiles_per_row(g);
  if (tiles < MIN_TILES) {
    snprintf(why, why_cap, "%lld x %lld output: %lld tiles per image (fewer than %d: the direct convolution is faster)",
             (long long)g->oh, (long long)g->ow, (long long)tiles, MIN_TILES);
    return false;
  }
  return true;
#endif
}

void tb_conv_winograd_free(tb_conv_winograd_weights *w) {
  if (!w) return;
  free(w->data);
  free(w);
}

size_t tb_conv_winograd_bytes(const tb_conv_winograd_weights *w) { return w ? w->bytes : 0; }

/* U = G g G^T of one 3x3 kernel, in double. */
static void transform_kernel(const float *g3, double u[16]) {
  double t[4][3]; /* G g */
  for (int j = 0; j < 3; j++) {
    double a = g3[0 * 3 + j], b = g3[1 * 3 + j], c = g3[2 * 3 + j];
    t[0][j] = a;
    t[1][j] = 0.5 * (a + b + c);
    t[2][j] = 0.5 * (a - b + c);
    t[3][j] = c;
  }
  for (int i = 0; i < 4; i++) { /* (G g) G^T */
    double a = t[i][0], b = t[i][1], c = t[i][2];
    u[i * 4 + 0] = a;
    u[i * 4 + 1] = 0.5 * (a + b + c);
    u[i * 4 + 2] = 0.5 * (a - b + c);
    u[i * 4 + 3] = c;
  }
}

tb_conv_winograd_weights *tb_conv_winograd_pack(const tb_conv_winograd_impl *impl, const tb_conv_geom *g, const float *w) {
  tb_conv_winograd_weights *p = calloc(1, sizeof *p);
  if (!p || !impl || g->in_c < 1 || g->out_c < 1) {
    free(p);
    return NULL;
  }
  p->bf16 = impl->bf16;
  p->c = g->in_c;
  p->k = g->out_c;
  p->kp = ceil_div(p->k, TB_WG_NR) * TB_WG_NR;
  p->depth = p->bf16 ? ceil_div(p->c, 2) : p->c;
  p->block_elems = p->depth * TB_WG_NR * (p->bf16 ? 2 : 1);
  size_t elem = p->bf16 ? 2 : 4, blocks = (size_t)(TB_WG_XI * (p->kp / TB_WG_NR));
  if ((size_t)p->block_elems > SIZE_MAX / elem / blocks) {
    free(p);
    return NULL;
  }
  p->bytes = blocks * (size_t)p->block_elems * elem;
  if (!(p->data = aligned_alloc(64, (p->bytes + 63) / 64 * 64))) {
    free(p);
    return NULL;
  }
  memset(p->data, 0, p->bytes);
  int64_t kb_count = p->kp / TB_WG_NR;
  for (int64_t k = 0; k < p->k; k++)
    for (int64_t c = 0; c < p->c; c++) {
      double u[16];
      transform_kernel(w + (k * p->c + c) * 9, u);
      int64_t kb = k / TB_WG_NR, j = k % TB_WG_NR;
      for (int xi = 0; xi < TB_WG_XI; xi++) {
        int64_t block = (xi * kb_count + kb) * p->block_elems;
        if (p->bf16) ((uint16_t *)p->data)[block + ((c / 2) * TB_WG_NR + j) * 2 + c % 2] = tb_bf16_round((float)u[xi]);
        else ((float *)p->data)[block + c * TB_WG_NR + j] = (float)u[xi];
      }
    }
  return p;
}

/* ---- run ---- */

typedef struct wg_run {
  const tb_conv_winograd_impl *impl;
  const tb_conv_geom *g;
  const tb_conv_winograd_weights *w;
  const float *x, *bias, *residual;
  const tb_gemm_epilogue *ep;
  float *y;
  int64_t slivers, block_slivers, blocks, kparts, kb_count; /* slivers and blocks per image */
  int64_t items, shares;
  size_t v_bytes;                  /* per thread: V of one block */
  int64_t v_xi;                    /* elements between positions xi in V */
  atomic_int failed, not_finite;
} wg_run;

/* Half h (0, 1) of sliver s of an image. */
static tb_wg_half half_at(const tb_conv_geom *g, int64_t s, int h) {
  int64_t per_row = halves_per_row(g), index = 2 * s + h, rows = ceil_div(g->oh, 2);
  if (index >= rows * per_row) return (tb_wg_half){.valid = false};
  return (tb_wg_half){.ty = index / per_row, .tx0 = index % per_row * TB_WG_HALF, .valid = true};
}

/* M_xi[14 tiles x 32 channels] (m: xi_stride 14 * 32, row stride 32) = V_xi U_xi of sliver s of the
 * block and column block kb, for the 16 positions (a sliver with one half: its 7 rows only). */
static void products(const wg_run *r, const void *v, int64_t s, bool one_half, int64_t kb, float *m) {
  const tb_conv_winograd_weights *w = r->w;
  size_t elem = w->bf16 ? 2 : 4;
  int64_t a_sliver = w->depth * TB_WG_SLIVER * (w->bf16 ? 2 : 1); /* elements of one V sliver */
  for (int xi = 0; xi < TB_WG_XI; xi++) {
    const void *b = (const unsigned char *)w->data + (size_t)((xi * r->kb_count + kb) * w->block_elems) * elem;
    const void *a = (const unsigned char *)v + (size_t)(xi * r->v_xi + s * a_sliver) * elem;
    float *c = m + xi * TB_WG_SLIVER * TB_WG_NR;
    if (r->impl->avx2)
      tb_conv_winograd_product_avx2(w->depth, a, b, c, one_half ? TB_WG_HALF : TB_WG_SLIVER);
    else if (w->bf16 && one_half)
      tb_gemm_bf16_kernel_avx512bf16.edge(w->depth, a, b, c, TB_WG_NR, 1.0f, 0.0f, TB_WG_HALF, TB_WG_NR);
    else if (w->bf16)
      tb_gemm_bf16_kernel_avx512bf16.ukr(w->depth, a, b, c, TB_WG_NR, 1.0f, 0.0f);
    else if (one_half)
      tb_gemm_kernel_avx512.edge_set(w->depth, a, b, c, TB_WG_NR, 1.0f, TB_WG_HALF, TB_WG_NR);
    else
      tb_gemm_kernel_avx512.ukr_set(w->depth, a, b, c, TB_WG_NR, 1.0f);
  }
}

/* One item: (image, part of the column blocks, block of slivers), the block varying fastest. The block's
 * V first (every channel), then per column block of 32 channels (its U, 16 x C x 32 values, in L2 for
 * the whole block) and sliver: the 16 products into m (28 KiB, in L1) and at once their output
 * transform, so M never leaves L1. */
static void run_item(wg_run *r, int64_t item, void *v, float *m) {
  const tb_conv_geom *g = r->g;
  const tb_conv_winograd_weights *w = r->w;
  int64_t blk = item % r->blocks, part = item / r->blocks % r->kparts, b = item / r->blocks / r->kparts;
  int64_t s0 = blk * r->block_slivers, ns = r->slivers - s0 < r->block_slivers ? r->slivers - s0 : r->block_slivers;
  int64_t kb0 = r->kb_count * part / r->kparts, kb1 = r->kb_count * (part + 1) / r->kparts;
  if (ns <= 0 || kb1 <= kb0) return;
  const float *x = r->x + b * g->in_c * g->ih * g->iw;
  size_t elem = w->bf16 ? 2 : 4;
  int64_t a_sliver = w->depth * TB_WG_SLIVER * (w->bf16 ? 2 : 1);
  bool finite = true;
  for (int64_t s = 0; s < ns; s++) {
    tb_wg_half h[2] = {half_at(g, s0 + s, 0), half_at(g, s0 + s, 1)};
    void *dst = (unsigned char *)v + (size_t)(s * a_sliver) * elem;
    finite &= r->impl->avx2 ? tb_conv_winograd_input_avx2(g, x, h, dst, r->v_xi)
                            : tb_conv_winograd_input_avx512(g, x, h, w->bf16, dst, r->v_xi);
  }
  if (!finite) { /* the caller takes another path: the rest of the work is wasted */
    atomic_store(&r->not_finite, 1);
    return;
  }
  int64_t plane = g->oh * g->ow;
  size_t image = (size_t)(b * g->out_c * plane);
  for (int64_t kb = kb0; kb < kb1; kb++) {
    int64_t k0 = kb * TB_WG_NR, nk = w->k - k0 < TB_WG_NR ? w->k - k0 : TB_WG_NR;
    for (int64_t s = 0; s < ns; s++) {
      tb_wg_half h[2] = {half_at(g, s0 + s, 0), half_at(g, s0 + s, 1)};
      products(r, v, s, !h[1].valid, kb, m);
      for (int hh = 0; hh < 2; hh++)
        (r->impl->avx2 ? tb_conv_winograd_output_avx2 : tb_conv_winograd_output_avx512)(
            g, &h[hh], m + hh * TB_WG_HALF * TB_WG_NR, TB_WG_SLIVER * TB_WG_NR, TB_WG_NR, k0, nk, r->bias,
            r->residual ? r->residual + image : NULL, r->ep, r->y + image);
    }
  }
}

/* Each thread's V and M buffers, kept from run to run (freed when the thread exits): allocated per run,
 * these buffers (up to ~0.4 MiB) came from mmap each time, and their page faults cost ResNet's 56x56
 * layers ~10%. */
typedef struct scratch {
  void *data;
  size_t cap;
} scratch;

static pthread_key_t scratch_key;
static bool scratch_key_made;
static pthread_once_t scratch_once = PTHREAD_ONCE_INIT;

static void scratch_destroy(void *p) {
  scratch *sc = p;
  free(sc->data);
  free(sc);
}

static void scratch_make_key(void) { scratch_key_made = pthread_key_create(&scratch_key, scratch_destroy) == 0; }

/* At least `bytes` (64-byte aligned) for this thread; NULL when out of memory (or no key: then *own is the
 * buffer, which the caller frees). */
static void *scratch_get(size_t bytes, void **own) {
  *own = NULL;
  bytes = (bytes + 63) / 64 * 64;
  pthread_once(&scratch_once, scratch_make_key);
  if (!scratch_key_made) return *own = aligned_alloc(64, bytes);
  scratch *sc = pthread_getspecific(scratch_key);
  if (!sc) {
    if (!(sc = calloc(1, sizeof *sc))) return NULL;
    if (pthread_setspecific(scratch_key, sc) != 0) {
      free(sc);
      return *own = aligned_alloc(64, bytes);
    }
  }
  if (sc->cap < bytes) {
    free(sc->data);
    sc->cap = 0;
    if (!(sc->data = aligned_alloc(64, bytes))) return NULL;
    sc->cap = bytes;
  }
  return sc->data;
}

static void share_jobs(void *p, size_t begin, size_t end) {
  wg_run *r = p;
  size_t v_bytes = (r->v_bytes + 63) / 64 * 64;
  void *own = NULL;
  size_t m_bytes = (size_t)TB_WG_XI * TB_WG_SLIVER * TB_WG_NR * sizeof(float);
  unsigned char *buf = scratch_get(v_bytes + m_bytes, &own);
  if (!buf) {
    atomic_store(&r->failed, 1);
    return;
  }
  for (size_t s = begin; s < end; s++) {
    int64_t lo = r->items * (int64_t)s / r->shares, hi = r->items * ((int64_t)s + 1) / r->shares;
    for (int64_t item = lo; item < hi && !atomic_load_explicit(&r->not_finite, memory_order_relaxed); item++)
      run_item(r, item, buf, (float *)(buf + v_bytes));
  }
  free(own);
}

/* Slivers per block (V within BLOCK_BYTES, the blocks even), and the output channels cut into parts
 * when the blocks of all images cannot give every thread the same number of items. */
static void plan(wg_run *r, int64_t threads) {
  const tb_conv_winograd_weights *w = r->w;
  const tb_conv_geom *g = r->g;
  size_t elem = w->bf16 ? 2 : 4;
  size_t per_sliver = (size_t)TB_WG_XI * TB_WG_SLIVER * (size_t)w->depth * (w->bf16 ? 2 : 1) * elem;
  int64_t most = (int64_t)(BLOCK_BYTES / per_sliver) > 0 ? (int64_t)(BLOCK_BYTES / per_sliver) : 1;
  r->slivers = slivers_per_image(g);
  r->blocks = ceil_div(r->slivers, most);
  r->block_slivers = ceil_div(r->slivers, r->blocks);
  r->blocks = ceil_div(r->slivers, r->block_slivers);
  /* smaller blocks when that gives every thread the same number of them */
  for (int64_t more = r->blocks + 1; threads > 1 && g->batch * r->blocks % threads != 0 && more <= r->slivers; more++) {
    int64_t size = ceil_div(r->slivers, more), count = ceil_div(r->slivers, size);
    if (g->batch * count % threads == 0) r->block_slivers = size, r->blocks = count;
  }
  r->kb_count = w->kp / TB_WG_NR;
  r->kparts = 1;
  int64_t base = g->batch * r->blocks;
  /* each thread one part of K over every block when whole blocks would not share the tiles evenly: a
   * count of blocks that is not a multiple of the threads, or a last block short of tiles (ResNet's 14x14
   * layers: 7 halves of 7 tiles in 4 slivers, 4 : 3 halves between two threads) */
  int64_t halves = ceil_div(g->oh, 2) * halves_per_row(g), full = 2 * r->block_slivers * r->blocks;
  if (threads > 1 && base < 4 * threads && (base % threads != 0 || halves != full))
    r->kparts = threads <= r->kb_count ? threads : r->kb_count;
  r->items = base * r->kparts;
  r->shares = threads < r->items ? threads : r->items;
  int64_t a_sliver = w->depth * TB_WG_SLIVER * (w->bf16 ? 2 : 1);
  r->v_xi = r->block_slivers * a_sliver;
  r->v_bytes = (size_t)(TB_WG_XI * r->v_xi) * elem;
}

tb_conv_winograd_status tb_conv_winograd_run(const tb_conv_winograd_impl *impl, const tb_conv_geom *g,
                                             const tb_conv_winograd_weights *w, const float *x, const float *bias,
                                             const float *residual, const tb_gemm_epilogue *ep, float *y,
                                             struct tb_pool *pool) {
  wg_run r = {.impl = impl, .g = g, .w = w, .x = x, .bias = bias, .residual = residual, .ep = ep, .y = y};
  atomic_init(&r.failed, 0);
  atomic_init(&r.not_finite, 0);
  plan(&r, tb_pool_threads(pool));
  tb_pool_parallel_for(pool, (size_t)r.shares, share_jobs, &r);
  if (atomic_load(&r.not_finite)) return TB_WINOGRAD_NOT_FINITE;
  return atomic_load(&r.failed) ? TB_WINOGRAD_NO_MEMORY : TB_WINOGRAD_DONE;
}
