/* The general fp32 GEMM driver (tb_gemm_f32_run): C is cut into tasks (row ranges x column groups, whole
 * micro-tiles each) that the pool's threads take; a task walks the depth in blocks (tb_gemm_depth_block),
 * packs (or points into the pre-packed) NR-column slivers of op(B) for its columns and MR-row slivers of op(A) per
 * GEMM_MC rows, and runs the micro-kernel on every tile, with the epilogue's start before the first
 * depth block and the activation after the last. With threads, C is split along one side only (the one
 * whose slivers spread more evenly over the threads), and the operand every task would otherwise pack
 * again (A for a column split, B for a row split) is first packed once, by all threads, into the
 * pre-packed layout. Every element sees the same depth blocks in the same order and
 * the same micro-kernel whatever the cut, so results do not depend on the thread count. tb_gemm_f32, the
 * classic strided entry, is this driver on plain operands. */
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include "backend/cpu/kernels/fast/gemm/gemm_f32_internal.h"
#include "core/threadpool.h"

/* Below this many multiply-adds a GEMM runs on the caller's thread (waking the pool costs more), unless
 * its operands hold THREAD_MIN_OPERAND_FLOATS or more: a product with a side of one or a few rows or
 * columns (a CNN's classifier Gemm, a squeeze-excite 1x1 convolution on a 1x1 map: 0.2-1.3 M multiply-adds
 * over 0.2-1.3 M weights) is bound by reading the other operand, which two threads read at twice the rate;
 * run on one thread, those products were 18-24% of MobileNetV3's and EfficientNet's CPU time at 2 threads.
 * With threads, each gets up to TASKS_PER_THREAD tasks (some balance when a core is shared). */
enum { THREAD_MIN_WORK = 1 << 21, THREAD_MIN_OPERAND_FLOATS = 1 << 16, TASKS_PER_THREAD = 2 };

/* Whether a product is worth splitting over threads: enough multiply-adds, or large operands with at
 * least two slivers on some side to cut. */
static bool worth_threads(const tb_gemm_kernel *kr, int64_t m, int64_t n, int64_t k) {
  double macs = (double)m * (double)n * (double)(k ? k : 1), operands = (double)m * (double)k + (double)k * (double)n;
  return macs >= THREAD_MIN_WORK || (operands >= THREAD_MIN_OPERAND_FLOATS && (m >= 2 * kr->mr || n >= 2 * kr->nr));
}

typedef struct gemm_job {
  const tb_gemm_kernel *kr;
  tb_gemm_tile_init_fn tile_init;
  tb_gemm_tile_act_fn tile_act;
  bool zero_start; /* the first depth block writes C with ukr_set / edge_set, no tile_init */
  int64_t m, n, k, kc_max, n_blocks;
  float alpha, beta;
  const tb_gemm_operand *a, *b;
  float *c;
  int64_t ldc;
  const tb_gemm_epilogue *ep;
  int64_t task_rows, task_cols, mc; /* multiples of MR, NR, MR */
  int64_t col_tasks;
  float *buf;
  size_t slot_floats, a_floats;
  int n_slots;
  atomic_int *used;
} gemm_job;

/* One packed A block (mcur rows at ic) times one packed B panel (cols at j0), onto C. */
static void macro_tile(const gemm_job *g, const float *pa, const float *pb, int64_t ic, int64_t mcur, int64_t j0,
                       int64_t cols, int64_t kc, bool first, bool last) {
  int mr = g->kr->mr, nr = g->kr->nr;
  _Alignas(64) float tile[GEMM_MAX_TILE];
  for (int64_t jr = 0; jr < cols; jr += nr) {
    int64_t cc = cols - jr < nr ? cols - jr : nr;
    const float *bs = pb + (jr / nr) * kc * nr;
    if (g->kr->narrow && cc <= g->kr->narrow_cols) { /* a narrow edge sliver: all rows at once, vectors along them */
      float *cp = g->c + ic * g->ldc + j0 + jr;
      bool set = first && g->zero_start;
      if (first && !set) g->tile_init(cp, g->ldc, ic, j0 + jr, mcur, cc, g->beta, g->ep);
      g->kr->narrow(kc, pa, mcur, bs, (int)cc, cp, g->ldc, g->alpha, !set);
      if (last) g->tile_act(cp, g->ldc, ic, j0 + jr, mcur, cc, g->ep);
      continue;
    }
    for (int64_t ir = 0; ir < mcur; ir += mr) {
      int64_t rr = mcur - ir < mr ? mcur - ir : mr;
      const float *as = pa + (ir / mr) * kc * mr;
      float *cp = g->c + (ic + ir) * g->ldc + j0 + jr;
      bool set = first && g->zero_start;
      if (first && !set) g->tile_init(cp, g->ldc, ic + ir, j0 + jr, rr, cc, g->beta, g->ep);
      if (set && rr == mr && cc == nr) {
        g->kr->ukr_set(kc, as, bs, cp, g->ldc, g->alpha);
      } else if (set) {
        g->kr->edge_set(kc, as, bs, cp, g->ldc, g->alpha, (int)rr, (int)cc);
      } else if (rr == mr && cc == nr) {
        g->kr->ukr(kc, as, bs, cp, g->ldc, g->alpha);
      } else if (g->kr->edge) {
        g->kr->edge(kc, as, bs, cp, g->ldc, g->alpha, (int)rr, (int)cc);
      } else {
        memset(tile, 0, sizeof tile);
        for (int64_t i = 0; i < rr; i++) memcpy(tile + i * nr, cp + i * g->ldc, (size_t)cc * sizeof(float));
        g->kr->ukr(kc, as, bs, tile, nr, g->alpha);
        for (int64_t i = 0; i < rr; i++) memcpy(cp + i * g->ldc, tile + i * nr, (size_t)cc * sizeof(float));
      }
      if (last) g->tile_act(cp, g->ldc, ic + ir, j0 + jr, rr, cc, g->ep);
    }
  }
}

/* The columns [o0, o0+cols) of plain op(B) at depth p0 .. p0+kc into one sliver of `width`, without the
 * zero padding: for a sliver the narrow kernel takes, which reads only its columns (a squeeze-excite 1x1
 * convolution's one pixel at depth 1152 wrote 32 floats, 31 of them zeros, per depth step: 60% of it). */
static void pack_narrow_b(const tb_gemm_operand *op, int64_t o0, int64_t cols, int64_t p0, int64_t kc, int width,
                          float *dst) {
  const float *x = op->data;
  for (int64_t p = 0; p < kc; p++)
    for (int64_t o = 0; o < cols; o++)
      dst[p * width + o] = op->trans ? x[(o0 + o) * op->ld + p0 + p] : x[(p0 + p) * op->ld + o0 + o];
}

/* The slivers of one operand for outer range [o0, o0+outer) at depth block pc: a pointer into the
 * pre-packed operand, or packed into buf. */
static const float *operand_block(const tb_gemm_kernel *kr, const tb_gemm_operand *op, bool as_a, int width,
                                  int64_t o0, int64_t outer, int64_t pc, int64_t kc, float *buf) {
  if (op->packed) return op->packed->data + pc * op->packed->outer_pad + (o0 / width) * kc * width;
  if (!as_a && op->data && kr->narrow && outer <= kr->narrow_cols) { /* macro_tile runs it on kr->narrow */
    pack_narrow_b(op, o0, outer, pc, kc, width, buf);
    return buf;
  }
  if (op->data) tb_gemm_pack_plain(kr, op, as_a, o0, outer, pc, kc, width, buf);
  else op->pack(op->pack_ctx, o0, outer, pc, kc, width, buf);
  return buf;
}

static void run_block(const gemm_job *g, float *abuf, float *bbuf, int64_t i0, int64_t rows, int64_t j0, int64_t cols) {
  if (g->n_blocks == 0) {
    g->tile_init(g->c + i0 * g->ldc + j0, g->ldc, i0, j0, rows, cols, g->beta, g->ep);
    g->tile_act(g->c + i0 * g->ldc + j0, g->ldc, i0, j0, rows, cols, g->ep);
    return;
  }
  for (int64_t q = 0; q < g->n_blocks; q++) {
    int64_t pc = q * g->kc_max, kc = g->k - pc < g->kc_max ? g->k - pc : g->kc_max;
    const float *pb = operand_block(g->kr, g->b, false, g->kr->nr, j0, cols, pc, kc, bbuf);
    for (int64_t ic = i0; ic < i0 + rows; ic += g->mc) {
      int64_t mcur = i0 + rows - ic < g->mc ? i0 + rows - ic : g->mc;
      const float *pa = operand_block(g->kr, g->a, true, g->kr->mr, ic, mcur, pc, kc, abuf);
      macro_tile(g, pa, pb, ic, mcur, j0, cols, kc, q == 0, q == g->n_blocks - 1);
    }
  }
}

static int claim_slot(gemm_job *g) {
  for (;;)
    for (int s = 0; s < g->n_slots; s++)
      if (!atomic_exchange_explicit(&g->used[s], 1, memory_order_acquire)) return s;
}

static void run_tasks(void *ctx, size_t begin, size_t end) {
  gemm_job *g = ctx;
  int s = claim_slot(g);
  float *abuf = g->buf ? g->buf + (size_t)s * g->slot_floats : NULL;
  float *bbuf = abuf ? abuf + g->a_floats : NULL;
  for (size_t t = begin; t < end; t++) {
    int64_t i0 = (int64_t)t / g->col_tasks * g->task_rows, j0 = (int64_t)t % g->col_tasks * g->task_cols;
    int64_t rows = g->m - i0 < g->task_rows ? g->m - i0 : g->task_rows;
    int64_t cols = g->n - j0 < g->task_cols ? g->n - j0 : g->task_cols;
    run_block(g, abuf, bbuf, i0, rows, j0, cols);
  }
  atomic_store_explicit(&g->used[s], 0, memory_order_release);
}

static bool operand_ok(const tb_gemm_operand *op, bool is_a, int width, int64_t outer, int64_t k) {
  if (!op) return false;
  int set = (op->data != NULL) + (op->packed != NULL) + (op->pack != NULL);
  if (set != 1 && !(set == 0 && (outer == 0 || k == 0))) return false;
  const tb_gemm_packed *p = op->packed;
  return !p || (p->is_a == is_a && p->width == width && p->outer == outer && p->k == k);
}

/* Pre-packing the shared operand: tasks of `group` slivers, each packing its slivers at every depth block. */
typedef struct prepack_job {
  const tb_gemm_kernel *kr;
  const tb_gemm_operand *op;
  tb_gemm_packed *dst;
  int64_t group, kb;
} prepack_job;

static void prepack_tasks(void *ctx, size_t begin, size_t end) {
  prepack_job *j = ctx;
  tb_gemm_packed *pk = j->dst;
  int w = pk->width;
  for (size_t t = begin; t < end; t++) {
    int64_t o0 = (int64_t)t * j->group * w, outer = pk->outer - o0 < j->group * w ? pk->outer - o0 : j->group * w;
    for (int64_t p0 = 0; p0 < pk->k; p0 += j->kb) {
      int64_t kc = pk->k - p0 < j->kb ? pk->k - p0 : j->kb;
      float *dst = pk->data + p0 * pk->outer_pad + (o0 / w) * kc * w;
      operand_block(j->kr, j->op, pk->is_a, w, o0, outer, p0, kc, dst);
    }
  }
}

/* Pack op (m x k of op(A), or k x n of op(B)) once into pk over the pool; false when out of memory or
 * too large to be worth it (the tasks then pack it themselves). */
static bool prepack(const tb_gemm_kernel *kr, const tb_gemm_operand *op, bool is_a, int width, int64_t outer,
                    int64_t k, tb_pool *pool, tb_gemm_packed *pk) {
  *pk = (tb_gemm_packed){.is_a = is_a, .width = width, .outer = outer, .k = k};
  pk->outer_pad = (outer + width - 1) / width * width;
  size_t bytes = (size_t)(pk->outer_pad * k) * sizeof(float);
  if (bytes > ((size_t)256 << 20)) return false;
  pk->data = aligned_alloc(64, (bytes + 63) / 64 * 64);
  if (!pk->data) return false;
  int64_t slivers = pk->outer_pad / width, per = (int64_t)tb_pool_threads(pool) * 4;
  prepack_job j = {kr, op, pk, (slivers + per - 1) / per, tb_gemm_depth_block(k)};
  tb_pool_parallel_for(pool, (size_t)((slivers + j.group - 1) / j.group), prepack_tasks, &j);
  return true;
}

/* How many tasks to cut `slivers` into for `threads`: the count (threads .. threads * TASKS_PER_THREAD)
 * whose busiest thread has the fewest slivers, the larger count on a tie; *load is that busiest share. */
static int64_t balanced_tasks(int64_t slivers, int threads, int64_t *load) {
  int64_t best = 1;
  *load = slivers;
  for (int64_t cand = threads; cand <= (int64_t)threads * TASKS_PER_THREAD && cand <= slivers; cand++) {
    int64_t size = (slivers + cand - 1) / cand, tasks = (slivers + size - 1) / size;
    int64_t busiest = (tasks + threads - 1) / threads * size;
    if (busiest <= *load) {
      *load = busiest;
      best = cand;
    }
  }
  return best;
}

/* Serially: one task per GEMM_NC columns. With threads: a balanced number of tasks along one side. */
static void choose_grid(gemm_job *g, int threads, bool split, bool split_cols) {
  int mr = g->kr->mr, nr = g->kr->nr;
  int64_t m_sl = (g->m + mr - 1) / mr, n_sl = (g->n + nr - 1) / nr, nc_sl = GEMM_NC / nr, load;
  int64_t row_tasks = 1, col_tasks = (n_sl + nc_sl - 1) / nc_sl;
  if (split && split_cols) {
    int64_t want = balanced_tasks(n_sl, threads, &load);
    if (col_tasks < want) col_tasks = want;
  }
  if (split && !split_cols) row_tasks = balanced_tasks(m_sl, threads, &load);
  g->task_rows = (m_sl + row_tasks - 1) / row_tasks * mr;
  g->task_cols = (n_sl + col_tasks - 1) / col_tasks * nr;
  g->col_tasks = (g->n + g->task_cols - 1) / g->task_cols;
  int64_t mc_max = GEMM_MC / mr * mr;
  g->mc = g->task_rows < mc_max ? g->task_rows : mc_max;
}

/* Split the side whose busiest thread gets the fewer elements of C (its slivers times their rows or
 * columns, capped at the matrix edge, so a thin edge sliver counts for what it holds); on a tie the side
 * that needs no operand packed first (B packed: rows; A packed: columns), else columns. */
static bool split_columns(const gemm_job *g, int threads) {
  int64_t m_sl = (g->m + g->kr->mr - 1) / g->kr->mr, n_sl = (g->n + g->kr->nr - 1) / g->kr->nr, lr, lc;
  balanced_tasks(m_sl, threads, &lr);
  balanced_tasks(n_sl, threads, &lc);
  double rows = (double)(lr * g->kr->mr < g->m ? lr * g->kr->mr : g->m);
  double cols = (double)(lc * g->kr->nr < g->n ? lc * g->kr->nr : g->n);
  double by_rows = rows * (double)g->n, by_cols = cols * (double)g->m;
  if (by_cols < by_rows) return true;
  if (by_rows < by_cols) return false;
  if (g->b->packed && !g->a->packed) return false;
  if (g->a->packed && !g->b->packed) return true;
  return n_sl >= m_sl;
}

bool tb_gemm_f32_run(tb_gemm_path path, int64_t m, int64_t n, int64_t k, float alpha, const tb_gemm_operand *a,
                     const tb_gemm_operand *b, float beta, float *c, int64_t ldc, const tb_gemm_epilogue *ep,
                     struct tb_pool *pool) {
  if (m <= 0 || n <= 0) return true;
  if (k < 0) k = 0;
  gemm_job g = {.kr = tb_gemm_kernel_for(path), .m = m, .n = n, .k = k, .alpha = alpha, .beta = beta, .a = a, .b = b,
                .c = c, .ldc = ldc, .ep = ep};
  if (!c || !operand_ok(a, true, g.kr->mr, m, k) || !operand_ok(b, false, g.kr->nr, n, k)) return false;
  g.tile_init = g.kr->tile_init ? g.kr->tile_init : tb_gemm_tile_init;
  g.tile_act = g.kr->tile_act ? g.kr->tile_act : tb_gemm_tile_act;
  g.zero_start = beta == 0.0f && !(ep && (ep->bias || ep->residual)) && g.kr->ukr_set && g.kr->edge_set;
  g.kc_max = tb_gemm_depth_block(k);
  g.n_blocks = alpha == 0.0f || k == 0 ? 0 : (k + g.kc_max - 1) / g.kc_max;
  int threads = tb_pool_threads(pool);
  bool split = threads > 1 && worth_threads(g.kr, m, n, k);
  bool split_cols = split && split_columns(&g, threads);
  tb_gemm_packed shared = {0};
  tb_gemm_operand shared_op = {.packed = &shared};
  if (split && g.n_blocks && split_cols && !a->packed && prepack(g.kr, a, true, g.kr->mr, m, k, pool, &shared))
    g.a = &shared_op;
  if (split && g.n_blocks && !split_cols && !b->packed && prepack(g.kr, b, false, g.kr->nr, n, k, pool, &shared))
    g.b = &shared_op;
  choose_grid(&g, threads, split, split_cols);
  int64_t row_tasks = (m + g.task_rows - 1) / g.task_rows, n_tasks = row_tasks * g.col_tasks;
  g.n_slots = n_tasks < threads ? (int)n_tasks : threads;
  g.a_floats = g.n_blocks && !g.a->packed ? (size_t)(g.mc * g.kc_max + 15) / 16 * 16 : 0;
  size_t b_floats = g.n_blocks && !g.b->packed ? (size_t)(g.task_cols * g.kc_max + 15) / 16 * 16 : 0;
  g.slot_floats = g.a_floats + b_floats;
  bool ok = true;
  if (g.slot_floats) ok = (g.buf = aligned_alloc(64, (size_t)g.n_slots * g.slot_floats * sizeof(float))) != NULL;
  if (ok) ok = (g.used = malloc((size_t)g.n_slots * sizeof *g.used)) != NULL;
  if (ok) {
    for (int s = 0; s < g.n_slots; s++) atomic_init(&g.used[s], 0);
    if (n_tasks > 1 && threads > 1) tb_pool_parallel_for(pool, (size_t)n_tasks, run_tasks, &g);
    else run_tasks(&g, 0, (size_t)n_tasks);
  }
  free(g.used);
  free(g.buf);
  free(shared.data);
  return ok;
}

bool tb_gemm_f32(tb_gemm_path path, bool trans_a, bool trans_b, int64_t m, int64_t n, int64_t k, float alpha,
                 const float *a, int64_t lda, const float *b, int64_t ldb, float beta, float *c, int64_t ldc) {
  tb_gemm_operand oa = {.data = a, .ld = lda, .trans = trans_a}, ob = {.data = b, .ld = ldb, .trans = trans_b};
  return tb_gemm_f32_run(path, m, n, k, alpha, &oa, &ob, beta, c, ldc, NULL, NULL);
}
