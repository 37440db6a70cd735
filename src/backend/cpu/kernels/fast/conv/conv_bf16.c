/* Level-3 (precision bf16, fp32 accumulation) Conv and tb::FusedConv: the level-2 convolution driver
 * (conv_fast.c: implicit GEMM per image, group and pixel block, 1x1 as plain GEMM, epilogue around the
 * products) on a bf16 product of its own, built from the bf16 GEMM's micro-kernels and packing routines
 * (gemm_bf16_kernel.h: AMX, AVX512-BF16 or portable; AMX slivers are padded to whole tiles of depth). The
 * general bf16 GEMM driver did not fit these shapes: its fixed 512-deep blocks left K = 576 as 512 + 64 (a
 * second pass over C for 64 products), it allocated a conversion buffer per packing task, and ran its bias /
 * residual / activation epilogue in scalar code.
 * Here the depth is cut into equal even blocks of at most KC_MAX, the weights are rounded and packed once
 * at prepare in those blocks, and per depth block the patches of the pixel block are packed (fp32 slivers
 * from the patch packer, then rounded into the pair-interleaved bf16 layout) once and shared by every row
 * sliver of the weights; each task is one row sliver of the weights (in L1) over the whole packed panel
 * (in L2). C arrives holding bias + residual and the products are added to it (beta 1), so the result does
 * not depend on the thread count. For few pixels the product is transposed as in conv_fast.c (pixels as
 * the rows, packed per block in MR-wide slivers; the weights packed as NR-wide column slivers).
 * Depthwise convolutions keep the direct fp32 path: they are bound by memory, not by multiplies, so bf16
 * would only lose precision. On the AVX512-BF16 path the geometries
 * the direct convolution takes (conv_direct.h: 3x3, 7x7, strides 1 and 2...) run it instead, with the bf16
 * micro-kernels of conv_direct_bf16_avx512.c (`.direct` below), and the 3x3 stride-1 ones Winograd takes
 * run it (conv_winograd.h, `.winograd` below); ctx->conv_algo (conv_fast.c) may rule either out.
 * The AMX path keeps the implicit GEMM for every geometry: its tiles do 16 x 16 x 32 products per
 * instruction, where the direct and Winograd kernels' vector loops would not keep up (not measured: no
 * AMX on the development machine); only the tap GEMM of dilated convolutions (conv_taps.h) may run instead,
 * its products being this product too. */
#include <stdatomic.h>
#include <stdlib.h>
#include "backend/cpu/kernels/fast/conv/conv_direct.h"
#include "backend/cpu/kernels/fast/conv/conv_fast.h"
#include "backend/cpu/kernels/fast/conv/conv_winograd.h"
#include "backend/cpu/kernels/fast/gemm/gemm_bf16.h"
#include "backend/cpu/kernels/fast/gemm/gemm_bf16_kernel.h"
#include "core/threadpool.h"

enum { KC_MAX = 512, MAX_TILE = 32 * 32, PACK_GROUP = 4 };

/* The packing of an operand in the product's A role (rows of C: weights, or pixels when transposed) or B
 * role: the same for every path but AMX, whose A slivers are laid out line by line. */
static tb_gemm_bf16_pack_fn pack_for(const tb_gemm_bf16_kernel *kr, bool a_role, bool p_contiguous) {
  if (a_role && p_contiguous && kr->pack_a_p_contiguous) return kr->pack_a_p_contiguous;
  if (a_role && !p_contiguous && kr->pack_a_o_contiguous) return kr->pack_a_o_contiguous;
  return p_contiguous ? kr->pack_p_contiguous : kr->pack_o_contiguous;
}

/* The depth blocks of a product of depth k: `blocks` blocks of kc (even), the last one shorter. */
static int64_t block_depth(int64_t k, int64_t *blocks) {
  *blocks = (k + KC_MAX - 1) / KC_MAX;
  if (*blocks < 1) *blocks = 1;
  int64_t kc = (k + *blocks - 1) / *blocks;
  kc += kc & 1;
  *blocks = kc ? (k + kc - 1) / kc : 1;
  return kc;
}

/* One group's weights (m x k) rounded to bf16 and packed: per depth block q, the slivers of `width`
 * channels one after another (sliver i of block q at q * slivers * block_pairs * 2 * width + i * kp_q *
 * width * 2, kp_q its pairs and block_pairs a whole block's, both padded to the path's pair_block); width
 * is MR (channels as rows) or, transposed, NR (channels as columns). */
typedef struct bf16_weights {
  int path;
  bool transposed;
  int width;
  int64_t m, k, kc, blocks, slivers, block_pairs;
  uint16_t *data;
} bf16_weights;

static const uint16_t *weights_at(const bf16_weights *w, int64_t q, int64_t kp_q, int64_t sliver) {
  return w->data + q * w->slivers * w->block_pairs * 2 * w->width + sliver * kp_q * w->width * 2;
}

/* As the fp32 product's rule (conv_fast.c): channels as columns when that wastes no more of the tile. */
static bool bf16_transposed(int path, int64_t mg) {
  const tb_gemm_bf16_kernel *kr = tb_gemm_bf16_kernel_for(path);
  return (mg + kr->nr - 1) / kr->nr * kr->nr <= (mg + kr->mr - 1) / kr->mr * kr->mr;
}

static void bf16_free(void *packed) {
  bf16_weights *w = packed;
  if (!w) return;
  free(w->data);
  free(w);
}

static void *bf16_pack(int path, const float *src, int64_t mg, int64_t k, bool transposed) {
  const tb_gemm_bf16_kernel *kr = tb_gemm_bf16_kernel_for(path);
  bf16_weights *w = calloc(1, sizeof *w);
  if (!w) return NULL;
  int width = transposed ? kr->nr : kr->mr;
  *w = (bf16_weights){.path = path, .transposed = transposed, .width = width, .m = mg, .k = k,
                      .slivers = (mg + width - 1) / width};
  w->kc = block_depth(k, &w->blocks);
  w->block_pairs = tb_gemm_bf16_pairs(kr, w->kc);
  size_t count = (size_t)(w->blocks * w->slivers * w->block_pairs * 2 * width);
  if (!(w->data = calloc(count ? count : 1, sizeof *w->data))) {
    bf16_free(w);
    return NULL;
  }
  for (int64_t q = 0; q < w->blocks; q++) {
    int64_t p0 = q * w->kc, kcq = k - p0 < w->kc ? k - p0 : w->kc, kp = tb_gemm_bf16_pairs(kr, kcq);
    tb_gemm_bf16_pack_fn pack = pack_for(kr, !transposed, true);
    for (int64_t i = 0; i < w->slivers; i++) { /* W row-major: element (p, channel) at src[channel * k + p] */
      int64_t o0 = i * width, outer = mg - o0 < width ? mg - o0 : width;
      pack(src + o0 * k + p0, k, kcq, outer, width, (uint16_t *)weights_at(w, q, kp, i));
    }
  }
  return w;
}

/* One depth block of one product: its packed patch panel and where C is. */
typedef struct bf16_block {
  const tb_gemm_bf16_kernel *kr;
  const bf16_weights *w;
  int64_t q, p0, kc, kp, n;
  const float *b;              /* plain B (1x1), row stride ldb; NULL: the patch packer */
  int64_t ldb;
  tb_conv_patches *patches;
  int pw;                      /* panel sliver width: NR, or MR for the transposed product (A role) */
  tb_gemm_bf16_pack_fn pack;   /* the panel's packing (o-contiguous) for its role */
  uint16_t *panel;             /* ceil(n / pw) slivers of kp * pw * 2 */
  float *c;
  int64_t ldc;
  atomic_int failed;
} bf16_block;

/* Panel slivers [begin * PACK_GROUP, end * PACK_GROUP): patches packed PACK_GROUP slivers at a time in fp32
 * (the packer then reads each input row once for all of them), then rounded into the bf16 layout. */
static void pack_slivers(void *ctx, size_t begin, size_t end) {
  bf16_block *j = ctx;
  int nr = j->pw;
  float *tmp = NULL;
  if (!j->b && !(tmp = malloc((size_t)(PACK_GROUP * j->kc * nr) * sizeof *tmp))) {
    atomic_store(&j->failed, 1);
    return;
  }
  for (size_t grp = begin; grp < end; grp++) {
    int64_t g0 = (int64_t)grp * PACK_GROUP * nr, g_cols = j->n - g0 < PACK_GROUP * nr ? j->n - g0 : PACK_GROUP * nr;
    if (tmp) tb_conv_pack_patches(j->patches, g0, g_cols, j->p0, j->kc, nr, tmp);
    for (int64_t o0 = g0; o0 < g0 + g_cols; o0 += nr) {
      int64_t outer = j->n - o0 < nr ? j->n - o0 : nr;
      uint16_t *dst = j->panel + (o0 / nr) * j->kp * nr * 2;
      if (j->b) j->pack(j->b + j->p0 * j->ldb + o0, j->ldb, j->kc, outer, nr, dst);
      else j->pack(tmp + (o0 - g0) * j->kc, nr, j->kc, outer, nr, dst);
    }
  }
  free(tmp);
}

/* Row slivers [begin, end) of the weights over every sliver of the panel: C += A B. */
static void row_slivers(void *ctx, size_t begin, size_t end) {
  const bf16_block *j = ctx;
  const tb_gemm_bf16_kernel *kr = j->kr;
  int mr = kr->mr, nr = kr->nr;
  _Alignas(64) float tile[MAX_TILE];
  if (kr->thread_setup) kr->thread_setup();
  for (size_t i = begin; i < end; i++) {
    int64_t r0 = (int64_t)i * mr, rows = j->w->m - r0 < mr ? j->w->m - r0 : mr;
    const uint16_t *as = weights_at(j->w, j->q, j->kp, (int64_t)i);
    for (int64_t c0 = 0; c0 < j->n; c0 += nr) {
      int64_t cols = j->n - c0 < nr ? j->n - c0 : nr;
      const uint16_t *bs = j->panel + (c0 / nr) * j->kp * nr * 2;
      float *cp = j->c + r0 * j->ldc + c0;
      if (rows == mr && cols == nr) {
        kr->ukr(j->kp, as, bs, cp, j->ldc, 1.0f, 1.0f);
        continue;
      }
      kr->ukr(j->kp, as, bs, tile, nr, 1.0f, 0.0f);
      for (int64_t r = 0; r < rows; r++)
        for (int64_t t = 0; t < cols; t++) cp[r * j->ldc + t] += tile[r * nr + t];
    }
  }
}

/* Transposed: pixel slivers [begin, end) of the panel (rows of ct) over every channel sliver of the
 * weights: ct = P^T W^T on the first depth block, += after. */
static void pixel_slivers(void *ctx, size_t begin, size_t end) {
  const bf16_block *j = ctx;
  const tb_gemm_bf16_kernel *kr = j->kr;
  int mr = kr->mr, nr = kr->nr;
  float beta = j->q == 0 ? 0.0f : 1.0f;
  _Alignas(64) float tile[MAX_TILE];
  if (kr->thread_setup) kr->thread_setup();
  for (size_t i = begin; i < end; i++) {
    int64_t r0 = (int64_t)i * mr, rows = j->n - r0 < mr ? j->n - r0 : mr;
    const uint16_t *as = j->panel + (int64_t)i * j->kp * mr * 2;
    for (int64_t s = 0; s < j->w->slivers; s++) {
      int64_t c0 = s * nr, cols = j->w->m - c0 < nr ? j->w->m - c0 : nr;
      const uint16_t *bs = weights_at(j->w, j->q, j->kp, s);
      float *cp = j->c + r0 * j->ldc + c0;
      if (rows == mr && cols == nr) {
        kr->ukr(j->kp, as, bs, cp, j->ldc, 1.0f, beta);
        continue;
      }
      kr->ukr(j->kp, as, bs, tile, nr, 1.0f, 0.0f);
      for (int64_t r = 0; r < rows; r++)
        for (int64_t t = 0; t < cols; t++) cp[r * j->ldc + t] = tile[r * nr + t] + (beta == 0.0f ? 0.0f : cp[r * j->ldc + t]);
    }
  }
}

/* Per depth block: pack the n panel lines (pixels) in slivers of pw, then run `tiles` over `tasks`. */
static bool run_blocks(const tb_gemm_bf16_kernel *kr, const bf16_weights *w, int64_t n, int pw, const float *b,
                       int64_t ldb, tb_conv_patches *patches, float *c, int64_t ldc, tb_pool_fn tiles, int64_t tasks,
                       struct tb_pool *pool) {
  int64_t slivers = (n + pw - 1) / pw, k = w->k;
  uint16_t *panel = malloc((size_t)(slivers * w->block_pairs * 2 * pw) * sizeof *panel);
  if (!panel) return false;
  bool ok = true;
  for (int64_t q = 0; ok && q < w->blocks; q++) {
    int64_t p0 = q * w->kc, kcq = k - p0 < w->kc ? k - p0 : w->kc;
    bf16_block j = {.kr = kr, .w = w, .q = q, .p0 = p0, .kc = kcq, .kp = tb_gemm_bf16_pairs(kr, kcq), .n = n, .b = b,
                    .ldb = ldb, .patches = patches, .pw = pw, .pack = pack_for(kr, w->transposed, false),
                    .panel = panel, .c = c, .ldc = ldc};
    atomic_init(&j.failed, 0);
    tb_pool_parallel_for(pool, (size_t)((slivers + PACK_GROUP - 1) / PACK_GROUP), pack_slivers, &j);
    ok = atomic_load(&j.failed) == 0;
    if (ok) tb_pool_parallel_for(pool, (size_t)tasks, tiles, &j);
  }
  free(panel);
  return ok;
}

static bool bf16_run_t(int path, int64_t m, int64_t n, int64_t k, const void *a, const float *b, int64_t ldb,
                       tb_conv_patches *patches, float *ct, struct tb_pool *pool) {
  const bf16_weights *w = a;
  const tb_gemm_bf16_kernel *kr = tb_gemm_bf16_kernel_for(path);
  if (!w || w->path != path || !w->transposed || w->m != m || w->k != k) return false;
  if (m <= 0 || n <= 0 || k <= 0) return true;
  return run_blocks(kr, w, n, kr->mr, b, ldb, patches, ct, m, pixel_slivers, (n + kr->mr - 1) / kr->mr, pool);
}

static bool bf16_run(int path, int64_t m, int64_t n, int64_t k, const void *a, const float *b, int64_t ldb,
                     tb_conv_patches *patches, float *c, int64_t ldc, struct tb_pool *pool) {
  const bf16_weights *w = a;
  const tb_gemm_bf16_kernel *kr = tb_gemm_bf16_kernel_for(path);
  if (!w || w->path != path || w->transposed || w->m != m || w->k != k) return false;
  if (m <= 0 || n <= 0 || k <= 0) return true;
  return run_blocks(kr, w, n, kr->nr, b, ldb, patches, c, ldc, row_slivers, w->slivers, pool);
}

/* The direct convolution (conv_direct_bf16_avx512.c) on the AVX512-BF16 path; the portable path has none. */
static const tb_conv_direct_impl *bf16_direct(int path) {
  return path == TB_GEMM_BF16_AVX512BF16 && tb_gemm_bf16_kernel_avx512bf16.ukr ? &tb_conv_direct_bf16_avx512bf16 : NULL;
}

/* Winograd F(2x2, 3x3) (conv_winograd*.c) on the AVX512-BF16 path; the portable path has none. */
static const tb_conv_winograd_impl *bf16_winograd(int path) {
  return path == TB_GEMM_BF16_AVX512BF16 && tb_gemm_bf16_kernel_avx512bf16.ukr ? &tb_conv_winograd_bf16_avx512bf16 : NULL;
}

static const tb_conv_gemm bf16_gemm = {.pack_weights = bf16_pack, .free_weights = bf16_free, .run = bf16_run,
                                       .transposed = bf16_transposed, .run_t = bf16_run_t, .direct = bf16_direct,
                                       .winograd = bf16_winograd};

#define BF16_ENTRIES(suffix, path, dw_path)                                                                        \
  static tb_status conv_run_##suffix(tb_kernel_ctx *ctx) { return tb_conv_run(ctx, &bf16_gemm, path, dw_path, false); } \
  static tb_status fused_run_##suffix(tb_kernel_ctx *ctx) { return tb_conv_run(ctx, &bf16_gemm, path, dw_path, true); } \
  static tb_status prepare_##suffix(tb_kernel_ctx *ctx, void **state) {                                            \
    return tb_conv_prepare(ctx, state, &bf16_gemm, path);                                                          \
  }
/* The AMX entry runs the path AMX falls back to when the tiles cannot be used; its packing and epilogue follow
 * that path (the portable ones without AVX512-BF16: never AVX-512 on a CPU without it). */
static tb_gemm_path amx_dw_path(void) {
  return tb_gemm_bf16_runnable(TB_GEMM_BF16_AMX) == TB_GEMM_BF16_PORTABLE ? TB_GEMM_PORTABLE : TB_GEMM_AVX512;
}
BF16_ENTRIES(amx, tb_gemm_bf16_runnable(TB_GEMM_BF16_AMX), amx_dw_path())
BF16_ENTRIES(avx512bf16, TB_GEMM_BF16_AVX512BF16, TB_GEMM_AVX512)
BF16_ENTRIES(portable, TB_GEMM_BF16_PORTABLE, TB_GEMM_PORTABLE)
BF16_ENTRIES(amx_emulated, TB_GEMM_BF16_AMX_EMULATED, TB_GEMM_PORTABLE)

#define AVX512BF16_FEATURES TB_GEMM_BF16_AVX512BF16_FEATURES
#define BF16_KERNEL(dom, op, features, run_fn, prep)                                                               \
  {.domain = dom, .name = op, .level = TB_KERNEL_REDUCED, .cpu_features = features, .accepts = tb_conv_accepts, .run = run_fn,    \
   .prepare = prep, .release = tb_conv_release, .precision = "bf16"}

#define AMX_FEATURES TB_GEMM_BF16_AMX_FEATURES

const tb_kernel tb_kernel_conv_bf16_amx = BF16_KERNEL("", "Conv", AMX_FEATURES, conv_run_amx, prepare_amx);
const tb_kernel tb_kernel_fused_conv_bf16_amx = BF16_KERNEL("tb", "FusedConv", AMX_FEATURES, fused_run_amx, prepare_amx);
/* not registered: the tests run the AMX kernel on the C model of the tiles through these */
const tb_kernel tb_kernel_conv_bf16_amx_emulated = BF16_KERNEL("", "Conv", 0, conv_run_amx_emulated, prepare_amx_emulated);
const tb_kernel tb_kernel_fused_conv_bf16_amx_emulated =
    BF16_KERNEL("tb", "FusedConv", 0, fused_run_amx_emulated, prepare_amx_emulated);
const tb_kernel tb_kernel_conv_bf16_avx512bf16 =
    BF16_KERNEL("", "Conv", AVX512BF16_FEATURES, conv_run_avx512bf16, prepare_avx512bf16);
const tb_kernel tb_kernel_conv_bf16_portable = BF16_KERNEL("", "Conv", 0, conv_run_portable, prepare_portable);
const tb_kernel tb_kernel_fused_conv_bf16_avx512bf16 =
    BF16_KERNEL("tb", "FusedConv", AVX512BF16_FEATURES, fused_run_avx512bf16, prepare_avx512bf16);
const tb_kernel tb_kernel_fused_conv_bf16_portable = BF16_KERNEL("tb", "FusedConv", 0, fused_run_portable, prepare_portable);
