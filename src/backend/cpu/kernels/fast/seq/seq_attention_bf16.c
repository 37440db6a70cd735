/* Level-3 (precision bf16, fp32 accumulation) tb::Attention on AVX512-BF16. Per batch entry, K_T and V are
 * rounded to bf16 and packed once as the bf16 GEMM's B slivers (its AVX-512 packing routine); then each
 * block of up to 14 query rows runs in L1 (seq_attention_bf16_avx512.c): S = Q K_T from bf16 Q and K_T
 * with fp32 sums, scaled and masked in fp32; the softmax in fp32 with its numerators exp(s - max) rounded
 * to bf16 (the division by their fp32 sum is applied to the output rows: one bf16 rounding per weight, as
 * rounding P would make); Y = E V with fp32 sums. The work is split over the pool by (entry, group of row
 * blocks); each row is computed by the same instructions whatever the split, so results are bit-identical
 * on any thread count. Without AVX512-BF16 the level-3 choice falls back to the fp32 kernel
 * (seq_attention.c), faster than bf16 emulated in C. */
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include "backend/cpu/kernels/fast/gemm/fast_kernel.h"
#include "backend/cpu/kernels/fast/gemm/gemm_bf16_kernel.h"
#include "backend/cpu/kernels/fast/seq/seq_attention.h"
#include "backend/cpu/kernels/fast/seq/seq_attention_bf16.h"
#include "core/threadpool.h"

typedef struct bf16_job {
  const seq_attention_geom *g;
  int64_t blocks; /* row blocks per entry: rows [b lq / blocks, (b + 1) lq / blocks) */
  int64_t groups; /* tasks per entry, each a run of blocks */
  atomic_int failed;
} bf16_job;

/* One thread's buffers: K_T and V of the entry packed last (k_of, v_of say which), and a block's. */
typedef struct bf16_work {
  uint16_t *k_pack, *v_pack;
  const float *k_of, *v_of;
  seq_attn_bf16_scratch s;
  void *base;
} bf16_work;

static int64_t ceil_div(int64_t a, int64_t b) { return (a + b - 1) / b; }

static size_t round64(size_t bytes) { return (bytes + 63) / 64 * 64; }

static bool work_alloc(const seq_attention_geom *g, bf16_work *w) {
  memset(w, 0, sizeof *w);
  int64_t kp_d = ceil_div(g->d, 2), kp_l = ceil_div(g->lk, 2);
  int64_t k_cols = ceil_div(g->lk, SEQ_ATTN_NR) * SEQ_ATTN_NR, v_cols = ceil_div(g->dv, SEQ_ATTN_NR) * SEQ_ATTN_NR;
  w->s.lds = k_cols;
  size_t sizes[7] = {
      round64((size_t)(kp_d * k_cols * 2) * sizeof(uint16_t)),        /* K_T packed */
      round64((size_t)(kp_l * v_cols * 2) * sizeof(uint16_t)),        /* V packed */
      round64((size_t)(SEQ_ATTN_MR * kp_d * 2) * sizeof(uint16_t)),   /* Q rows */
      round64((size_t)(SEQ_ATTN_MR * kp_l * 2) * sizeof(uint16_t)),   /* E rows */
      round64((size_t)(SEQ_ATTN_MR * k_cols) * sizeof(float)),        /* scores */
      round64(SEQ_ATTN_MR * 16 * sizeof(float)),                      /* row maxima */
      round64(SEQ_ATTN_MR * sizeof(float)),                           /* row inverses */
  };
  size_t total = 0;
  for (int i = 0; i < 7; i++) total += sizes[i];
  char *p = aligned_alloc(64, total);
  if (!p) return false;
  w->base = p;
  w->k_pack = (uint16_t *)p;
  w->v_pack = (uint16_t *)(p += sizes[0]);
  w->s.q_rows = (uint16_t *)(p += sizes[1]);
  w->s.e_rows = (uint16_t *)(p += sizes[2]);
  w->s.scores = (float *)(p += sizes[3]);
  w->s.row_max = (float *)(p += sizes[4]);
  w->s.row_inv = (float *)(p + sizes[5]);
  return true;
}

/* Pack op (p, o) = src[p * ld + o] (depth kc, outer columns) into slivers of SEQ_ATTN_NR columns. */
static void pack_slivers(const float *src, int64_t ld, int64_t kc, int64_t outer, uint16_t *dst) {
  int64_t kp = ceil_div(kc, 2);
  for (int64_t c0 = 0; c0 < outer; c0 += SEQ_ATTN_NR)
    tb_gemm_bf16_kernel_avx512bf16.pack_o_contiguous(src + c0, ld, kc, outer - c0 < SEQ_ATTN_NR ? outer - c0 : SEQ_ATTN_NR,
                                                     SEQ_ATTN_NR, dst + c0 * kp * 2);
}

static void attend_task(void *ctx, size_t begin, size_t end) {
  bf16_job *j = ctx;
  const seq_attention_geom *g = j->g;
  bf16_work w;
  if (!work_alloc(g, &w)) {
    atomic_store(&j->failed, 1);
    return;
  }
  seq_attn_bf16_head h = {.d = g->d, .lk = g->lk, .dv = g->dv, .kp_d = ceil_div(g->d, 2), .kp_l = ceil_div(g->lk, 2),
                          .has_scale = g->has_scale, .divide = g->divide, .scale = g->scale,
                          .scale_by_inverse = g->scale_by_inverse, .inv_scale = g->inv_scale,
                          .k_pack = w.k_pack, .v_pack = w.v_pack};
  for (size_t t = begin; t < end; t++) {
    int64_t p = (int64_t)t / j->groups, group = (int64_t)t % j->groups;
    seq_attention_entry e = tb_seq_attention_entry_at(g, p);
    if (w.k_of != e.k) {
      pack_slivers(e.k, g->lk, g->d, g->lk, w.k_pack);
      w.k_of = e.k;
    }
    if (w.v_of != e.v) {
      pack_slivers(e.v, g->dv, g->lk, g->dv, w.v_pack);
      w.v_of = e.v;
    }
    h.q = e.q;
    h.y = e.y;
    h.mask = e.mask;
    h.mask_row = g->mstride[g->nb];
    h.mask_col = g->mstride[g->nb + 1];
    int64_t b_end = (group + 1) * j->blocks / j->groups;
    for (int64_t b = group * j->blocks / j->groups; b < b_end; b++) {
      int64_t r0 = b * g->lq / j->blocks, r1 = (b + 1) * g->lq / j->blocks;
#if defined(__x86_64__)
      tb_seq_attention_bf16_block_avx512(&h, r0, (int)(r1 - r0), &w.s);
#endif
    }
  }
  free(w.base);
}

static tb_status run_avx512bf16(tb_kernel_ctx *ctx) {
  seq_attention_geom g;
  tb_status st = tb_seq_attention_begin(ctx, &g);
  if (st != TB_OK || tb_tensor_numel(g.y) == 0) return st;
  if (g.lk == 0) { /* softmax over no keys: a sum of no terms */
    memset(tb_tensor_host_data(g.y), 0, tb_tensor_nbytes(g.y));
    return TB_OK;
  }
  bf16_job j = {.g = &g, .blocks = ceil_div(g.lq, SEQ_ATTN_MR)};
  atomic_init(&j.failed, 0);
  /* every thread at least two tasks: split an entry's row blocks when there are few entries */
  int64_t threads = tb_pool_threads(ctx->pool);
  j.groups = g.entries >= 2 * threads ? 1 : ceil_div(2 * threads, g.entries);
  if (j.groups > j.blocks) j.groups = j.blocks;
  tb_pool_parallel_for(ctx->pool, (size_t)(g.entries * j.groups), attend_task, &j);
  if (atomic_load(&j.failed))
    return tb_kernel_error(ctx, TB_ERR_OUT_OF_MEMORY,
                           "no memory for the bf16 attention buffers (K_T %lld x %lld and V %lld x %lld packed)",
                           (long long)g.d, (long long)g.lk, (long long)g.lk, (long long)g.dv);
  return TB_OK;
}

static bool attention_accepts(const tb_kernel_query *q) {
  const tb_value_type *const *in = q->in;
  /* the packing routine exists on x86-64 only */
  return tb_gemm_bf16_kernel_avx512bf16.pack_o_contiguous && q->n_inputs >= 3 && q->n_inputs <= 4 &&
         tb_fast_accepts_f32(in, q->n_inputs);
}

const tb_kernel tb_kernel_attention_bf16_avx512bf16 = {
    .domain = "tb",
    .name = "Attention",
    .level = TB_KERNEL_REDUCED,
    .cpu_features = TB_FEATURE_BIT(TB_FEATURE_AVX512F) | TB_FEATURE_BIT(TB_FEATURE_AVX512BW) |
                    TB_FEATURE_BIT(TB_FEATURE_AVX512BF16) | TB_FEATURE_BIT(TB_FEATURE_FMA),
    .accepts = attention_accepts,
    .run = run_avx512bf16,
    .precision = "bf16"};
