/* Level-2 fp32 tb::Attention (the O1 attention pattern; meaning in src/ops/fused/attention.c): per batch
 * entry (batch x heads, broadcast between Q, K_T and V), S = Q K_T with the GEMM driver, then per row the
 * scale (multiplied or divided as the model wrote it), the mask added, a vectorised softmax (one fused
 * row step on AVX-512 and on AVX2, seq_attention_avx512.c and seq_attention_avx2.c), and
 * Y = S V with the GEMM driver. Batch entries are split over the pool (each GEMM then on its thread);
 * a single entry gives the pool to its GEMMs instead. Each step rounds to fp32 as the reference does.
 * Also the shape checks and entry pointers the bf16 kernel (seq_attention_bf16.c) shares. */
#include <math.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include "backend/cpu/kernels/fast/gemm/fast_kernel.h"
#include "backend/cpu/kernels/fast/seq/seq_attention.h"
#include "backend/cpu/kernels/fast/seq/seq_vec.h"
#include "backend/cpu/kernels/nn/nn_kernel.h"
#include "core/threadpool.h"

/* ---- shared with the bf16 kernel ---- */

static tb_status shapes(tb_kernel_ctx *ctx, seq_attention_geom *g) {
  const tb_tensor *ops[3] = {g->q, g->k, g->v};
  static const char *const names[3] = {"Q", "K_T", "V"};
  g->nb = 0;
  for (int i = 0; i < 3; i++) {
    size_t r = tb_tensor_ndim(ops[i]);
    if (r < 2) return tb_kernel_error(ctx, TB_ERR_MODEL, "input %s has rank %zu; it needs >= 2", names[i], r);
    if (r - 2 > g->nb) g->nb = r - 2;
  }
  for (size_t b = 0; b < g->nb; b++) g->batch[b] = 1;
  for (int i = 0; i < 3; i++) {
    size_t r = tb_tensor_ndim(ops[i]) - 2;
    for (size_t b = 0; b < r; b++) {
      int64_t dim = tb_tensor_shape(ops[i])[b], *out = &g->batch[g->nb - r + b];
      if (dim == *out || dim == 1) continue;
      if (*out != 1)
        return tb_kernel_error(
            ctx, TB_ERR_MODEL,
            "the batch dimensions of Q, K_T and V do not broadcast (%s has %lld where another has %lld)", names[i],
            (long long)dim, (long long)*out);
      *out = dim;
    }
  }
  const int64_t *qs = tb_tensor_shape(g->q), *ks = tb_tensor_shape(g->k), *vs = tb_tensor_shape(g->v);
  size_t qn = tb_tensor_ndim(g->q), kn = tb_tensor_ndim(g->k), vn = tb_tensor_ndim(g->v);
  g->lq = qs[qn - 2];
  g->d = qs[qn - 1];
  g->lk = ks[kn - 1];
  g->dv = vs[vn - 1];
  if (ks[kn - 2] != g->d || vs[vn - 2] != g->lk)
    return tb_kernel_error(ctx, TB_ERR_MODEL,
                           "inner dimensions differ: Q [.., %lld, %lld], K_T [.., %lld, %lld], V [.., %lld, %lld]",
                           (long long)g->lq, (long long)g->d, (long long)ks[kn - 2], (long long)g->lk,
                           (long long)vs[vn - 2], (long long)g->dv);
  if (!g->mask) return TB_OK;
  size_t full = g->nb + 2, mn = tb_tensor_ndim(g->mask);
  if (mn > full) return tb_kernel_error(ctx, TB_ERR_MODEL, "the mask has rank %zu, over the scores' %zu", mn, full);
  int64_t dims[TB_MAX_DIMS + 2], stride = 1;
  memcpy(dims, g->batch, g->nb * sizeof(int64_t));
  dims[g->nb] = g->lq;
  dims[g->nb + 1] = g->lk;
  for (size_t i = full; i-- > 0;) {
    g->mstride[i] = 0;
    if (i < full - mn) continue;
    int64_t md = tb_tensor_shape(g->mask)[i - (full - mn)];
    if (md != 1 && md != dims[i])
      return tb_kernel_error(ctx, TB_ERR_MODEL,
                             "the mask's dimension %zu (%lld) does not broadcast to the scores' %lld", i - (full - mn),
                             (long long)md, (long long)dims[i]);
    g->mstride[i] = md == 1 ? 0 : stride;
    stride *= md;
  }
  return TB_OK;
}

tb_status tb_seq_attention_begin(tb_kernel_ctx *ctx, seq_attention_geom *g) {
  memset(g, 0, sizeof *g);
  tb_status st = tb_fast_check_f32(ctx, ctx->n_inputs < 4 ? ctx->n_inputs : 4);
  if (st != TB_OK) return st;
  if (ctx->n_inputs < 3 || !ctx->inputs[0] || !ctx->inputs[1] || !ctx->inputs[2])
    return tb_kernel_error(ctx, TB_ERR_MODEL, "inputs Q, K_T and V are required");
  g->q = ctx->inputs[0];
  g->k = ctx->inputs[1];
  g->v = ctx->inputs[2];
  g->mask = ctx->n_inputs > 3 ? ctx->inputs[3] : NULL;
  const tb_attention_params *pb = tb_kernel_params(ctx, &st);
  if (!pb) return st;
  g->scale = pb->scale;
  g->has_scale = pb->has_scale;
  g->divide = pb->scale_divide;
  g->scale_by_inverse = g->has_scale && g->divide && tb_seq_attention_exact_inverse(g->scale, &g->inv_scale);
  if (st == TB_OK) st = shapes(ctx, g);
  if (st == TB_OK && g->nb + 2 > TB_MAX_DIMS)
    st = tb_kernel_error(ctx, TB_ERR_UNSUPPORTED, "the output has rank %zu; at most %d supported", g->nb + 2,
                         TB_MAX_DIMS);
  if (st != TB_OK) return st;
  int64_t shape[TB_MAX_DIMS + 2];
  memcpy(shape, g->batch, g->nb * sizeof(int64_t));
  shape[g->nb] = g->lq;
  shape[g->nb + 1] = g->dv;
  g->entries = tb_nn_numel(g->nb, g->batch);
  return tb_kernel_output(ctx, 0, TB_DTYPE_F32, g->nb + 2, shape, &g->y);
}

static int64_t batch_offset(const seq_attention_geom *g, const int64_t *bidx, const tb_tensor *t) {
  return tb_nn_bcast_offset(g->nb, bidx, tb_tensor_ndim(t) - 2, tb_tensor_shape(t));
}

seq_attention_entry tb_seq_attention_entry_at(const seq_attention_geom *g, int64_t p) {
  int64_t bidx[TB_MAX_DIMS] = {0}, rest = p;
  for (size_t i = g->nb; i-- > 0;) {
    bidx[i] = rest % g->batch[i];
    rest /= g->batch[i];
  }
  seq_attention_entry e;
  e.q = (const float *)tb_tensor_host_data(g->q) + batch_offset(g, bidx, g->q) * g->lq * g->d;
  e.k = (const float *)tb_tensor_host_data(g->k) + batch_offset(g, bidx, g->k) * g->d * g->lk;
  e.v = (const float *)tb_tensor_host_data(g->v) + batch_offset(g, bidx, g->v) * g->lk * g->dv;
  e.mask = g->mask ? tb_tensor_host_data(g->mask) : NULL;
  for (size_t i = 0; e.mask && i < g->nb; i++) e.mask += bidx[i] * g->mstride[i];
  e.y = (float *)tb_tensor_host_data(g->y) + p * g->lq * g->dv;
  return e;
}

bool tb_seq_attention_exact_inverse(float scale, float *inverse) {
  *inverse = 1.0f / scale;
  return isnormal(scale) && isnormal(*inverse) && (double)*inverse * (double)scale == 1.0;
}

seq_attention_row tb_seq_attention_row_for(const seq_attention_geom *g, const seq_attention_entry *e, int64_t i) {
  /* BERT's / 8 becomes * 0.125: bit for bit the same */
  return (seq_attention_row){g->has_scale, g->divide && !g->scale_by_inverse,
                             g->scale_by_inverse ? g->inv_scale : g->scale,
                             e->mask ? e->mask + i * g->mstride[g->nb] : NULL, g->mstride[g->nb + 1]};
}

void tb_seq_attention_softmax_row(tb_gemm_path path, float *row, int64_t n, const seq_attention_row *how) {
#if defined(__x86_64__)
  if (path == TB_GEMM_AVX512) {
    tb_seq_attention_row_avx512(row, n, how);
    return;
  }
  if (path == TB_GEMM_AVX2) {
    tb_seq_attention_row_avx2(row, n, how);
    return;
  }
#endif
  if (how->has_scale && how->divide)
    for (int64_t c = 0; c < n; c++) row[c] /= how->scale;
  else if (how->has_scale)
    for (int64_t c = 0; c < n; c++) row[c] *= how->scale;
  if (how->mask)
    for (int64_t c = 0; c < n; c++) row[c] += how->mask[c * how->mask_step];
  tb_seq_vec_softmax(path, row, n);
}

/* ---- the fp32 kernel ---- */

typedef struct attn_job {
  tb_gemm_path path;
  const seq_attention_geom *g;
  struct tb_pool *gemm_pool;
  atomic_int failed;
} attn_job;

static bool attend(attn_job *j, int64_t p, float *s) {
  const seq_attention_geom *g = j->g;
  seq_attention_entry e = tb_seq_attention_entry_at(g, p);
  tb_gemm_operand A = {.data = e.q, .ld = g->d}, B = {.data = e.k, .ld = g->lk};
  if (!tb_gemm_f32_run(j->path, g->lq, g->lk, g->d, 1.0f, &A, &B, 0.0f, s, g->lk, NULL, j->gemm_pool)) return false;
  for (int64_t i = 0; i < g->lq && g->lk > 0; i++) {
    seq_attention_row how = tb_seq_attention_row_for(g, &e, i);
    tb_seq_attention_softmax_row(j->path, s + i * g->lk, g->lk, &how);
  }
  A = (tb_gemm_operand){.data = s, .ld = g->lk};
  B = (tb_gemm_operand){.data = e.v, .ld = g->dv};
  return tb_gemm_f32_run(j->path, g->lq, g->dv, g->lk, 1.0f, &A, &B, 0.0f, e.y, g->dv, NULL, j->gemm_pool);
}

static void attend_task(void *ctx, size_t begin, size_t end) {
  attn_job *j = ctx;
  int64_t scores = j->g->lq * j->g->lk;
  float *s = malloc((size_t)(scores > 0 ? scores : 1) * sizeof(float));
  for (size_t p = begin; p < end && s; p++)
    if (!attend(j, (int64_t)p, s)) {
      atomic_store(&j->failed, 1);
      break;
    }
  if (!s) atomic_store(&j->failed, 1);
  free(s);
}

static tb_status attention_run(tb_kernel_ctx *ctx, tb_gemm_path path) {
  seq_attention_geom g;
  tb_status st = tb_seq_attention_begin(ctx, &g);
  if (st != TB_OK || tb_tensor_numel(g.y) == 0) return st;
  attn_job j = {.path = path, .g = &g};
  atomic_init(&j.failed, 0);
  if (g.entries > 1 && tb_pool_threads(ctx->pool) > 1) {
    tb_pool_parallel_for(ctx->pool, (size_t)g.entries, attend_task, &j);
  } else {
    j.gemm_pool = ctx->pool;
    attend_task(&j, 0, (size_t)g.entries);
  }
  if (atomic_load(&j.failed))
    return tb_kernel_error(ctx, TB_ERR_OUT_OF_MEMORY, "no memory for the scores (%lld x %lld floats) or the GEMM buffers",
                           (long long)g.lq, (long long)g.lk);
  return TB_OK;
}

static bool attention_accepts(const tb_kernel_query *q) {
  const tb_value_type *const *in = q->in;
  return q->n_inputs >= 3 && q->n_inputs <= 4 && tb_fast_accepts_f32(in, q->n_inputs);
}

#define ATTENTION_ENTRY(suffix, path_, features)                                          \
  static tb_status run_##suffix(tb_kernel_ctx *ctx) { return attention_run(ctx, path_); } \
  const tb_kernel tb_kernel_attention_f32_##suffix = {.domain = "tb",                 \
                                                          .name = "Attention",            \
                                                          .level = TB_KERNEL_FAST,                     \
                                                          .cpu_features = features,       \
                                                          .accepts = attention_accepts,   \
                                                          .run = run_##suffix};

ATTENTION_ENTRY(avx512, TB_GEMM_AVX512, TB_FEATURE_BIT(TB_FEATURE_AVX512F) | TB_FEATURE_BIT(TB_FEATURE_FMA))
ATTENTION_ENTRY(avx2, TB_GEMM_AVX2, TB_FEATURE_BIT(TB_FEATURE_AVX2) | TB_FEATURE_BIT(TB_FEATURE_FMA))
ATTENTION_ENTRY(portable, TB_GEMM_PORTABLE, 0)
