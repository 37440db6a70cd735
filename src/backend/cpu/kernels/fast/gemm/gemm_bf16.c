/* The bf16 GEMM driver: for each slab of up to M_SLAB rows and each KC-deep block of k, the A slab and
 * then each NC-wide panel of B are rounded to bf16 and packed (in parallel, one sliver per task) unless
 * they came packed, then the pool's threads share the MC x NG tiles of C; every tile runs the path's
 * micro-kernel sliver by sliver (B sliver in L1, A block in L2), with beta on the first k block and the
 * epilogue after the last. Edges go through a zero-padded tile. With B packed and few rows (a transformer's
 * 128 tokens) each thread instead runs its own band of B's columns over all rows and depths (run_bands). */
#include "backend/cpu/kernels/fast/gemm/gemm_bf16.h"
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <tensorbridge/device.h>
#include "backend/cpu/kernels/fast/gemm/gemm_bf16_kernel.h"
#include "backend/cpu/kernels/fast/vec/vec_ops.h"
#include "core/threadpool.h"

/* KC: the deepest block (even: whole pairs); NC, NG and M_SLAB multiples of every path's MR / NR (4, 14,
 * 32; 16, 32); MC is cut down to a multiple of the path's MR (168, or 160 for AMX). */
enum { KC = 512, MC = 168, NC = 1024, NG = 256, M_SLAB = MC * 24, MAX_TILE = 14 * 32 };
static const double SERIAL_FLOPS = 1 << 18; /* smaller products run on the caller's thread only */

struct tb_gemm_bf16_packed {
  tb_gemm_bf16_path path;
  bool is_a;
  int64_t outer, k; /* m x k for A, k x n for B */
  int width;
  size_t count;     /* uint16 elements in data */
  uint16_t *data;
};

const tb_gemm_bf16_kernel *tb_gemm_bf16_kernel_for(int path) {
  if (path == TB_GEMM_BF16_AMX && tb_gemm_bf16_kernel_amx.ukr) return &tb_gemm_bf16_kernel_amx;
  if (path == TB_GEMM_BF16_AMX_EMULATED) return &tb_gemm_bf16_kernel_amx_emulated;
  if (path == TB_GEMM_BF16_AVX512BF16 && tb_gemm_bf16_kernel_avx512bf16.ukr) return &tb_gemm_bf16_kernel_avx512bf16;
  return &tb_gemm_bf16_kernel_portable;
}

uint64_t tb_gemm_bf16_path_features(tb_gemm_bf16_path path) {
  if (path == TB_GEMM_BF16_AVX512BF16) return TB_GEMM_BF16_AVX512BF16_FEATURES;
  if (path == TB_GEMM_BF16_AMX) return TB_GEMM_BF16_AMX_FEATURES; /* AVX-512 packing, AVX512-BF16 fallback */
  return 0;
}

const char *tb_gemm_bf16_path_name(tb_gemm_bf16_path path) {
  switch (path) {
  case TB_GEMM_BF16_AVX512BF16: return "avx512bf16";
  case TB_GEMM_BF16_AMX: return "amx";
  case TB_GEMM_BF16_AMX_EMULATED: return "amx-emulated";
  default: return "portable";
  }
}

static int64_t min64(int64_t a, int64_t b) { return a < b ? a : b; }
static int64_t ceil_div(int64_t a, int64_t b) { return (a + b - 1) / b; }

/* ---- packing ---- */

/* One sliver of op(X): lines o0 .. o0+outer (outer <= width), depth p0 .. p0+kc. tmp holds kc * width
 * floats for a pack-function operand. */
static void pack_sliver(const tb_gemm_bf16_kernel *kr, const tb_gemm_bf16_operand *x, bool is_a, int64_t o0,
                        int64_t outer, int64_t p0, int64_t kc, int width, float *tmp, uint16_t *dst) {
  tb_gemm_bf16_pack_fn o_contiguous = is_a && kr->pack_a_o_contiguous ? kr->pack_a_o_contiguous : kr->pack_o_contiguous;
  tb_gemm_bf16_pack_fn p_contiguous = is_a && kr->pack_a_p_contiguous ? kr->pack_a_p_contiguous : kr->pack_p_contiguous;
  if (x->pack) {
    x->pack(x->pack_ctx, o0, outer, p0, kc, width, tmp);
    o_contiguous(tmp, width, kc, outer, width, dst);
  } else if (is_a ? x->trans : !x->trans) { /* op element (p, o) at data[p * ld + o] */
    o_contiguous(x->data + p0 * x->ld + o0, x->ld, kc, outer, width, dst);
  } else { /* at data[o * ld + p] */
    p_contiguous(x->data + o0 * x->ld + p0, x->ld, kc, outer, width, dst);
  }
}

typedef struct pack_job {
  const tb_gemm_bf16_kernel *kr;
  const tb_gemm_bf16_operand *x;
  bool is_a;
  int64_t o0, outer, p0, kc;
  int width;
  uint16_t *dst;
  atomic_int failed;
} pack_job;

static void pack_task(void *ctx, size_t begin, size_t end) {
  pack_job *j = ctx;
  float *tmp = NULL;
  if (j->x->pack && !(tmp = malloc((size_t)(j->kc * j->width) * sizeof(float)))) {
    atomic_store(&j->failed, 1);
    return;
  }
  int64_t kp = tb_gemm_bf16_pairs(j->kr, j->kc);
  for (size_t s = begin; s < end; s++) {
    int64_t o = (int64_t)s * j->width;
    pack_sliver(j->kr, j->x, j->is_a, j->o0 + o, min64(j->width, j->outer - o), j->p0, j->kc, j->width, tmp,
                j->dst + (int64_t)s * kp * j->width * 2);
  }
  free(tmp);
}

/* The depth of the blocks of a product of depth k: k cut into equal even blocks of at most KC (768 as 2 x
 * 384, not 512 + 256: a short last block costs a second pass over C and a 512-deep B sliver with its A
 * sliver overfills a 48 KiB L1). Packed operands and the driver both use it, so the layouts agree. */
static int64_t depth_block(int64_t k) {
  int64_t blocks = k > KC ? ceil_div(k, KC) : 1, kc = ceil_div(k, blocks);
  kc += kc & 1;
  return kc > 0 ? kc : 2;
}

/* Pack lines o0 .. o0+outer at depth p0 .. p0+kc into consecutive slivers; false when out of memory. */
static bool pack_lines(const tb_gemm_bf16_kernel *kr, const tb_gemm_bf16_operand *x, bool is_a, int64_t o0,
                       int64_t outer, int64_t p0, int64_t kc, uint16_t *dst, tb_pool *pool) {
  pack_job j = {kr, x, is_a, o0, outer, p0, kc, is_a ? kr->mr : kr->nr, dst, 0};
  tb_pool_parallel_for(pool, (size_t)ceil_div(outer, j.width), pack_task, &j);
  return atomic_load(&j.failed) == 0;
}

/* Where the slivers of lines o0.. at depth block pc start in a whole packed operand: the k blocks one
 * after another, each the slivers of every line. */
static const uint16_t *packed_at(const tb_gemm_bf16_packed *p, int64_t pc, int64_t o0) {
  const tb_gemm_bf16_kernel *kr = tb_gemm_bf16_kernel_for(p->path);
  int64_t kcb = depth_block(p->k), slivers = ceil_div(p->outer, p->width);
  int64_t block_pairs = tb_gemm_bf16_pairs(kr, kcb), kp = tb_gemm_bf16_pairs(kr, min64(kcb, p->k - pc));
  return p->data + (pc / kcb) * slivers * block_pairs * 2 * p->width + (o0 / p->width) * kp * p->width * 2;
}

static tb_gemm_bf16_packed *pack_whole(tb_gemm_bf16_path path, const tb_gemm_bf16_operand *x, bool is_a, int64_t outer,
                                       int64_t k) {
  if (!x || x->packed || (!x->data && !x->pack) || outer < 0 || k < 0) return NULL;
  const tb_gemm_bf16_kernel *kr = tb_gemm_bf16_kernel_for(path);
  tb_gemm_bf16_packed *p = calloc(1, sizeof *p);
  if (!p) return NULL;
  *p = (tb_gemm_bf16_packed){path, is_a, outer, k, is_a ? kr->mr : kr->nr, 0, NULL};
  int64_t slivers = ceil_div(outer, p->width);
  int64_t kcb = depth_block(k);
  for (int64_t pc = 0; pc < k; pc += kcb) p->count += (size_t)(slivers * tb_gemm_bf16_pairs(kr, min64(kcb, k - pc)) * p->width * 2);
  p->data = malloc(p->count ? p->count * sizeof(uint16_t) : 1);
  bool ok = p->data != NULL;
  for (int64_t pc = 0; ok && pc < k && outer > 0; pc += kcb)
    ok = pack_lines(kr, x, is_a, 0, outer, pc, min64(kcb, k - pc), (uint16_t *)packed_at(p, pc, 0), NULL);
  if (!ok) {
    tb_gemm_bf16_packed_free(p);
    return NULL;
  }
  return p;
}

tb_gemm_bf16_packed *tb_gemm_bf16_pack_a(tb_gemm_bf16_path path, const tb_gemm_bf16_operand *a, int64_t m, int64_t k) {
  return pack_whole(path, a, true, m, k);
}

tb_gemm_bf16_packed *tb_gemm_bf16_pack_b(tb_gemm_bf16_path path, const tb_gemm_bf16_operand *b, int64_t k, int64_t n) {
  return pack_whole(path, b, false, n, k);
}

void tb_gemm_bf16_packed_free(tb_gemm_bf16_packed *packed) {
  if (!packed) return;
  free(packed->data);
  free(packed);
}

size_t tb_gemm_bf16_packed_bytes(const tb_gemm_bf16_packed *packed) {
  return packed ? packed->count * sizeof(uint16_t) : 0;
}

/* ---- epilogue ---- */

/* Rows i0..i1, columns j0..j1 of C: bias, then residual (res, row stride ldr), then the activation, row by
 * row: with ep->vec its binary add (the same float adds, vectorised) and its activation loops
 * (tb_gemm_act_row), else per element. */
static void apply_epilogue(const tb_gemm_epilogue *ep, const float *res, int64_t ldr, float *c, int64_t ldc, int64_t i0,
                           int64_t i1, int64_t j0, int64_t j1) {
  if (!ep || (!ep->bias && !res && ep->act == 0) || j1 <= j0) return;
  const vec_ops *v = ep->vec;
  int64_t cols = j1 - j0;
  for (int64_t i = i0; i < i1; i++) {
    float *ci = c + i * ldc + j0;
    const float *bias = ep->bias ? (ep->bias_axis == 0 ? ep->bias + i : ep->bias + j0) : NULL;
    const float *ri = res ? res + i * ldr + j0 : NULL;
    if (bias && v) {
      v->binary(VEC_ADD, ci, false, bias, ep->bias_axis == 0, ci, cols);
    } else if (bias) {
      for (int64_t j = 0; j < cols; j++) ci[j] += bias[ep->bias_axis == 0 ? 0 : j];
    }
    if (ri && v) {
      v->binary(VEC_ADD, ci, false, ri, false, ci, cols);
    } else if (ri) {
      for (int64_t j = 0; j < cols; j++) ci[j] += ri[j];
    }
    tb_gemm_act_row(ep, ci, cols);
  }
}

/* ---- the tiles of C ---- */

typedef struct tile_job {
  const tb_gemm_bf16_kernel *kr;
  const uint16_t *a_slab, *b_panel;
  int64_t ic0, ms, jc, nc, kp;
  float alpha, beta;
  float *c;
  int64_t ldc;
  bool last;
  const tb_gemm_epilogue *ep;
  const float *res;
  int64_t ldr;
  int64_t mc, ng, n_groups; /* a task: mc rows x ng columns (multiples of MR and NR) */
} tile_job;

/* One MR x NR tile (or its top-left rows x cols at an edge) of C at cp: the path's edge kernel, or the full
 * micro-kernel on the scratch tile and a copy. */
static void run_tile(const tb_gemm_bf16_kernel *kr, int64_t kp, const uint16_t *as, const uint16_t *bs, float *cp,
                     int64_t ldc, float alpha, float beta, int64_t rows, int64_t cols, float *tile) {
  const int mr = kr->mr, nr = kr->nr;
  if (rows == mr && cols == nr) {
    kr->ukr(kp, as, bs, cp, ldc, alpha, beta);
    return;
  }
  if (kr->edge) {
    kr->edge(kp, as, bs, cp, ldc, alpha, beta, (int)rows, (int)cols);
    return;
  }
  kr->ukr(kp, as, bs, tile, nr, alpha, 0.0f);
  for (int64_t i = 0; i < rows; i++)
    for (int64_t j = 0; j < cols; j++)
      cp[i * ldc + j] = beta == 0.0f ? tile[i * nr + j] : tile[i * nr + j] + beta * cp[i * ldc + j];
}

static void tile_task(void *ctx, size_t begin, size_t end) {
  const tile_job *t = ctx;
  const tb_gemm_bf16_kernel *kr = t->kr;
  const int mr = kr->mr, nr = kr->nr;
  _Alignas(64) float tile[MAX_TILE];
  if (kr->thread_setup) kr->thread_setup();
  for (size_t task = begin; task < end; task++) {
    int64_t i0 = (int64_t)task / t->n_groups * t->mc, i1 = min64(t->ms, i0 + t->mc);
    int64_t j0 = (int64_t)task % t->n_groups * t->ng, j1 = min64(t->nc, j0 + t->ng);
    for (int64_t jr = j0; jr < j1; jr += nr) {
      int64_t cols = min64(nr, t->nc - jr);
      const uint16_t *bs = t->b_panel + (jr / nr) * t->kp * nr * 2;
      for (int64_t ir = i0; ir < i1; ir += mr) {
        const uint16_t *as = t->a_slab + (ir / mr) * t->kp * mr * 2;
        float *cp = t->c + (t->ic0 + ir) * t->ldc + t->jc + jr;
        run_tile(kr, t->kp, as, bs, cp, t->ldc, t->alpha, t->beta, min64(mr, t->ms - ir), cols, tile);
      }
    }
    if (t->last) apply_epilogue(t->ep, t->res, t->ldr, t->c, t->ldc, t->ic0 + i0, t->ic0 + i1, t->jc + j0, t->jc + j1);
  }
}

/* ---- B packed, few rows: a band of columns per thread ---- */

/* With B packed at prepare and few rows (a transformer's 128 tokens), each thread takes one band of B's
 * slivers for the whole product; one thread packs A per depth block as it goes, more threads first pack
 * every depth block of A at once, together (one barrier per call instead of two per depth block). The
 * rows are cut into tiles of nearly equal height (128 rows: 8 x 13 and 2 x 12, no 2-row tile whose four
 * accumulator chains wait on the vdpbf16ps latency), and while a sliver's tiles run they fetch the band's
 * next sliver into L2, a share each: packed weights come from memory (a BERT layer's 14 MiB of bf16
 * weights are in no cache when its turn comes). With cold B at BERT's shapes this measured 2-5% faster
 * than the tiled driver on 1 thread and 5-8% on 2 (a band of rows per thread, each reading all of B, was
 * slower). Up to ROWS_MAX rows (a depth block of A stays in L2) and, on more threads, at least
 * BAND_MIN_SLIVERS slivers per band (bands of whole slivers stay nearly even). */
enum { ROWS_MAX = 2 * MC, BAND_MIN_SLIVERS = 8, EPILOGUE_SLIVERS = 8 };

typedef struct band_job {
  const tb_gemm_bf16_kernel *kr;
  const tb_gemm_bf16_operand *a;
  const tb_gemm_bf16_packed *b;
  int64_t m, n, k, kcb, tiles, bands;
  float alpha, beta;
  float *c;
  int64_t ldc;
  const tb_gemm_epilogue *ep;
  const float *res;
  int64_t ldr;
  uint16_t *abuf;    /* one depth block of A's tiles (bands == 1), or every block, block_size apart */
  int64_t block_size; /* values of one depth block of A's tiles */
  atomic_int failed; /* out of memory for a pack function's buffer */
} band_job;

/* Height of tile t of `rows` rows cut into `tiles` tiles, and the row it starts at. */
static int64_t tile_height(int64_t rows, int64_t tiles, int64_t t) { return rows / tiles + (t < rows % tiles); }
static int64_t tile_row(int64_t rows, int64_t tiles, int64_t t) { return t * (rows / tiles) + min64(t, rows % tiles); }

/* Lines [part * lines / parts, (part + 1) * lines / parts) of x into L2 (the next B sliver, a share per tile run
 * before it, so the fetches spread over the sliver's work). */
static void prefetch_share(const char *x, int64_t lines, int64_t part, int64_t parts) {
  for (int64_t l = lines * part / parts; x && l < lines * (part + 1) / parts; l++) {
#if defined(__x86_64__)
    __asm__ volatile("prefetcht1 %0" : : "m"(x[l * 64])); /* GCC 12 drops __builtin_prefetch in this loop */
#else
    __builtin_prefetch(x + l * 64, 0, 2);
#endif
  }
}

/* A's tile t at depth block pc (kc deep) packed into dst; false when a pack function's buffer is missing. */
static bool pack_a_tile(const band_job *j, int64_t t, int64_t pc, int64_t kc, uint16_t *dst) {
  float *tmp = NULL;
  if (j->a->pack && !(tmp = malloc((size_t)(kc * j->kr->mr) * sizeof(float)))) return false;
  pack_sliver(j->kr, j->a, true, tile_row(j->m, j->tiles, t), tile_height(j->m, j->tiles, t), pc, kc, j->kr->mr, tmp,
              dst);
  free(tmp);
  return true;
}

/* Every depth block of A at once (more than one band): task q * tiles + t packs tile t of block q. */
static void pack_a_task(void *ctx, size_t begin, size_t end) {
  band_job *j = ctx;
  for (size_t task = begin; task < end; task++) {
    int64_t q = (int64_t)task / j->tiles, t = (int64_t)task % j->tiles, pc = q * j->kcb, kc = min64(j->kcb, j->k - pc);
    int64_t kp = tb_gemm_bf16_pairs(j->kr, kc);
    if (!pack_a_tile(j, t, pc, kc, j->abuf + q * j->block_size + t * kp * j->kr->mr * 2))
      atomic_store(&j->failed, 1);
  }
}

/* Band `band` of the columns (whole slivers) over the whole depth. */
static void band_task(void *ctx, size_t begin, size_t end) {
  band_job *j = ctx;
  const tb_gemm_bf16_kernel *kr = j->kr;
  const int mr = kr->mr, nr = kr->nr;
  const int64_t tiles = j->tiles, slivers = ceil_div(j->n, nr);
  _Alignas(64) float tile[MAX_TILE];
  if (kr->thread_setup) kr->thread_setup();
  for (size_t band = begin; band < end; band++) {
    int64_t j0 = slivers * (int64_t)band / j->bands * nr, j1 = min64(j->n, slivers * ((int64_t)band + 1) / j->bands * nr);
    for (int64_t pc = 0; pc < j->k && j0 < j1; pc += j->kcb) {
      int64_t kc = min64(j->kcb, j->k - pc), kp = tb_gemm_bf16_pairs(kr, kc);
      float beta = pc == 0 ? j->beta : 1.0f;
      uint16_t *ablock = j->abuf + (j->bands > 1 ? pc / j->kcb * j->block_size : 0);
      for (int64_t t = 0; j->bands == 1 && t < tiles; t++)
        if (!pack_a_tile(j, t, pc, kc, ablock + t * kp * mr * 2)) {
          atomic_store(&j->failed, 1);
          return;
        }
      for (int64_t jr = j0; jr < j1; jr += nr) {
        int64_t cols = min64(nr, j->n - jr), npc = jr + nr < j1 ? pc : pc + j->kcb, njr = jr + nr < j1 ? jr + nr : j0;
        const uint16_t *bs = packed_at(j->b, pc, jr);
        const char *next = npc < j->k ? (const char *)packed_at(j->b, npc, njr) : NULL;
        int64_t next_lines = next ? (tb_gemm_bf16_pairs(kr, min64(j->kcb, j->k - npc)) * nr * 4 + 63) / 64 : 0;
        for (int64_t t = 0; t < tiles; t++) {
          prefetch_share(next, next_lines, t, tiles);
          run_tile(kr, kp, ablock + t * kp * mr * 2, bs, j->c + tile_row(j->m, tiles, t) * j->ldc + jr, j->ldc,
                   j->alpha, beta, tile_height(j->m, tiles, t), cols, tile);
        }
        /* after the last depth block: the epilogue over EPILOGUE_SLIVERS finished slivers at once (still in
         * L2), so its row loops run on EPILOGUE_SLIVERS * NR columns per call rather than NR */
        bool group_end = (jr - j0) / nr % EPILOGUE_SLIVERS == EPILOGUE_SLIVERS - 1 || jr + nr >= j1;
        if (pc + kc >= j->k && group_end) {
          int64_t from = j0 + (jr - j0) / nr / EPILOGUE_SLIVERS * EPILOGUE_SLIVERS * nr;
          apply_epilogue(j->ep, j->res, j->ldr, j->c, j->ldc, 0, j->m, from, jr + cols);
        }
      }
    }
  }
}

static bool run_bands(const tb_gemm_bf16_kernel *kr, int64_t m, int64_t n, int64_t k, float alpha,
                     const tb_gemm_bf16_operand *a, const tb_gemm_bf16_packed *b, float beta, float *c, int64_t ldc,
                     const tb_gemm_epilogue *ep, const float *res, int64_t ldr, tb_pool *pool) {
  int64_t kcb = depth_block(k), tiles = ceil_div(m, kr->mr), bands = tb_pool_threads(pool);
  int64_t blocks = bands > 1 ? ceil_div(k, kcb) : 1;
  band_job j = {kr, a, b, m, n, k, kcb, tiles, bands, alpha, beta, c, ldc, ep, res, ldr, NULL, 0, 0};
  j.block_size = tiles * kr->mr * tb_gemm_bf16_pairs(kr, kcb) * 2;
  if (!(j.abuf = malloc((size_t)(blocks * j.block_size) * sizeof(uint16_t)))) return false;
  if (bands > 1) tb_pool_parallel_for(pool, (size_t)(blocks * tiles), pack_a_task, &j);
  if (atomic_load(&j.failed) == 0) {
    if (bands > 1)
      tb_pool_parallel_for(pool, (size_t)bands, band_task, &j);
    else
      band_task(&j, 0, 1);
  }
  free(j.abuf);
  return atomic_load(&j.failed) == 0;
}

/* ---- the driver ---- */

/* The task shape for an ms x nc block of C: MC x NG tiles, narrowed (columns first, then rows, in whole
 * slivers) until every thread gets about four tasks, so small products keep both cores busy. */
static void task_shape(tile_job *t, int threads) {
  const int mr = t->kr->mr, nr = t->kr->nr;
  int64_t want = threads > 1 ? 4 * (int64_t)threads : 1;
  t->mc = MC / mr * mr;
  t->ng = NG;
  int64_t n_mb = ceil_div(t->ms, t->mc);
  if (n_mb * ceil_div(t->nc, t->ng) < want) {
    int64_t groups = ceil_div(want, n_mb);
    t->ng = ceil_div(ceil_div(t->nc, groups), nr) * nr;
  }
  int64_t n_groups = ceil_div(t->nc, t->ng);
  if (n_mb * n_groups < want) {
    int64_t blocks = ceil_div(want, n_groups);
    t->mc = ceil_div(ceil_div(t->ms, blocks), mr) * mr;
  }
  t->n_groups = ceil_div(t->nc, t->ng);
}

static bool packed_fits(const tb_gemm_bf16_operand *x, tb_gemm_bf16_path path, bool is_a, int64_t outer, int64_t k) {
  const tb_gemm_bf16_packed *p = x->packed;
  const tb_gemm_bf16_kernel *kr = tb_gemm_bf16_kernel_for(path);
  return !p || (p->path == path && p->is_a == is_a && p->outer == outer && p->k == k &&
                p->width == (is_a ? kr->mr : kr->nr));
}

static bool overlaps(const float *x, int64_t ldx, const float *c, int64_t ldc, int64_t m, int64_t n) {
  const float *x_end = x + (m - 1) * ldx + n, *c_end = c + (m - 1) * ldc + n;
  return x < c_end && c < x_end;
}

/* k == 0 or alpha == 0: C = beta * C, then the epilogue. */
static void scale_only(int64_t m, int64_t n, float beta, float *c, int64_t ldc, const tb_gemm_epilogue *ep,
                       const float *res, int64_t ldr) {
  for (int64_t i = 0; i < m; i++)
    for (int64_t j = 0; j < n; j++) c[i * ldc + j] = beta == 0.0f ? 0.0f : beta * c[i * ldc + j];
  apply_epilogue(ep, res, ldr, c, ldc, 0, m, 0, n);
}

bool tb_gemm_bf16_run(tb_gemm_bf16_path path, int64_t m, int64_t n, int64_t k, float alpha, const tb_gemm_bf16_operand *a,
                      const tb_gemm_bf16_operand *b, float beta, float *c, int64_t ldc, const tb_gemm_epilogue *ep,
                      struct tb_pool *pool) {
  if (m <= 0 || n <= 0) return true;
  if (!packed_fits(a, path, true, m, k) || !packed_fits(b, path, false, n, k)) return false;
  const tb_gemm_bf16_kernel *kr = tb_gemm_bf16_kernel_for(path);
  const float *res = ep ? ep->residual : NULL;
  int64_t ldr = ep ? ep->ld_residual : 0;
  float *res_copy = NULL;
  if (res && overlaps(res, ldr, c, ldc, m, n)) { /* C's old contents: copy before they are overwritten */
    if (!(res_copy = malloc((size_t)(m * n) * sizeof(float)))) return false;
    for (int64_t i = 0; i < m; i++) memcpy(res_copy + i * n, res + i * ldr, (size_t)n * sizeof(float));
    res = res_copy;
    ldr = n;
  }
  if (k <= 0 || alpha == 0.0f) {
    scale_only(m, n, beta, c, ldc, ep, res, ldr);
    free(res_copy);
    return true;
  }
  if (2.0 * (double)m * (double)n * (double)k < SERIAL_FLOPS) pool = NULL;
  int threads = tb_pool_threads(pool);
  if (b->packed && !a->packed && m <= ROWS_MAX && (threads == 1 || ceil_div(n, kr->nr) >= BAND_MIN_SLIVERS * threads)) {
    bool done = run_bands(kr, m, n, k, alpha, a, b->packed, beta, c, ldc, ep, res, ldr, pool);
    free(res_copy);
    return done;
  }
  int64_t kcb = depth_block(k), kc_max = tb_gemm_bf16_pairs(kr, min64(kcb, k)) * 2;
  uint16_t *abuf = a->packed ? NULL : malloc((size_t)(ceil_div(min64(m, M_SLAB), kr->mr) * kr->mr * kc_max) * sizeof(uint16_t));
  uint16_t *bbuf = b->packed ? NULL : malloc((size_t)(ceil_div(min64(n, NC), kr->nr) * kr->nr * kc_max) * sizeof(uint16_t));
  bool ok = (a->packed || abuf) && (b->packed || bbuf);
  for (int64_t ic0 = 0; ok && ic0 < m; ic0 += M_SLAB) {
    int64_t ms = min64(M_SLAB, m - ic0);
    for (int64_t pc = 0; ok && pc < k; pc += kcb) {
      int64_t kc = min64(kcb, k - pc);
      const uint16_t *a_slab = a->packed ? packed_at(a->packed, pc, ic0) : abuf;
      if (!a->packed) ok = pack_lines(kr, a, true, ic0, ms, pc, kc, abuf, pool);
      for (int64_t jc = 0; ok && jc < n; jc += NC) {
        int64_t nc = min64(NC, n - jc);
        const uint16_t *b_panel = b->packed ? packed_at(b->packed, pc, jc) : bbuf;
        if (!b->packed) ok = pack_lines(kr, b, false, jc, nc, pc, kc, bbuf, pool);
        if (!ok) break;
        tile_job t = {kr, a_slab, b_panel, ic0, ms, jc, nc, tb_gemm_bf16_pairs(kr, kc), alpha, pc == 0 ? beta : 1.0f, c, ldc,
                      pc + kc >= k, ep, res, ldr, MC, NG, 0};
        task_shape(&t, tb_pool_threads(pool));
        tb_pool_parallel_for(pool, (size_t)(ceil_div(ms, t.mc) * t.n_groups), tile_task, &t);
      }
    }
  }
  free(abuf);
  free(bbuf);
  free(res_copy);
  return ok;
}
