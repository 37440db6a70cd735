/* Level-2 fp32 tb::Attention (the O1 attention pattern; meaning in src/ops/fused/attention.c): per batch
 * entry (batch x heads, broadcast between Q, K_T and V), S = Q K_T with the GEMM driver, then per row the
 * scale (multiplied or divided as the model wrote it), the mask added, a vectorised softmax (one fused
 * row step on AVX-512, seq_attention_avx512.c), and
 * Y = S V with the GEMM driver. Batch entries are split over the pool (each GEMM then on its thread);
 * a single entry gives the pool to its GEMMs instead. Each step rounds to fp32 as the reference does. */
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include "backend/cpu/kernels/fast/fast_kernel.h"
#include "backend/cpu/kernels/fast/gemm_f32.h"
#include "backend/cpu/kernels/fast/seq_attention.h"
#include "backend/cpu/kernels/fast/seq_vec.h"
#include "backend/cpu/kernels/nn/nn_kernel.h"
#include "core/threadpool.h"

typedef struct attn_job {
  tb_gemm_path path;
  const tb_tensor *q, *k, *v;
  const float *mask;
  size_t nb; /* batch rank of the output */
  int64_t batch[TB_MAX_DIMS];
  int64_t lq, d, lk, dv;
  int64_t mstride[TB_MAX_DIMS + 2]; /* the mask's element strides over the output rank + 2 (0: broadcast) */
  bool has_scale, divide;
  float scale;
  float *y;
  struct tb_pool *gemm_pool;
  atomic_int failed;
} attn_job;

static int64_t batch_offset(const attn_job *j, const int64_t *bidx, const tb_tensor *t) {
  return nn_bcast_offset(j->nb, bidx, tb_tensor_ndim(t) - 2, tb_tensor_shape(t));
}

static bool attend(attn_job *j, int64_t p, float *s) {
  int64_t bidx[TB_MAX_DIMS] = {0}, rest = p;
  for (size_t i = j->nb; i-- > 0;) {
    bidx[i] = rest % j->batch[i];
    rest /= j->batch[i];
  }
  const float *q = (const float *)tb_tensor_host_data(j->q) + batch_offset(j, bidx, j->q) * j->lq * j->d;
  const float *k = (const float *)tb_tensor_host_data(j->k) + batch_offset(j, bidx, j->k) * j->d * j->lk;
  const float *v = (const float *)tb_tensor_host_data(j->v) + batch_offset(j, bidx, j->v) * j->lk * j->dv;
  tb_gemm_operand A = {.data = q, .ld = j->d}, B = {.data = k, .ld = j->lk};
  if (!tb_gemm_f32_run(j->path, j->lq, j->lk, j->d, 1.0f, &A, &B, 0.0f, s, j->lk, NULL, j->gemm_pool)) return false;
  const float *mask = j->mask;
  for (size_t i = 0; mask && i < j->nb; i++) mask += bidx[i] * j->mstride[i];
  int64_t mi = j->mstride[j->nb], mj = j->mstride[j->nb + 1];
  for (int64_t i = 0; i < j->lq && j->lk > 0; i++) {
    float *row = s + i * j->lk;
#if defined(__x86_64__)
    if (j->path == TB_GEMM_AVX512) {
      seq_attention_row how = {j->has_scale, j->divide, j->scale, mask ? mask + i * mi : NULL, mj};
      seq_attention_row_avx512(row, j->lk, &how);
      continue;
    }
#endif
    if (j->has_scale && j->divide)
      for (int64_t c = 0; c < j->lk; c++) row[c] /= j->scale;
    else if (j->has_scale)
      for (int64_t c = 0; c < j->lk; c++) row[c] *= j->scale;
    if (mask)
      for (int64_t c = 0; c < j->lk; c++) row[c] += mask[i * mi + c * mj];
    seq_vec_softmax(j->path, row, j->lk);
  }
  A = (tb_gemm_operand){.data = s, .ld = j->lk};
  B = (tb_gemm_operand){.data = v, .ld = j->dv};
  return tb_gemm_f32_run(j->path, j->lq, j->dv, j->lk, 1.0f, &A, &B, 0.0f, j->y + p * j->lq * j->dv, j->dv, NULL,
                         j->gemm_pool);
}

static void attend_task(void *ctx, size_t begin, size_t end) {
  attn_job *j = ctx;
  int64_t scores = j->lq * j->lk;
  float *s = malloc((size_t)(scores > 0 ? scores : 1) * sizeof(float));
  for (size_t p = begin; p < end && s; p++)
    if (!attend(j, (int64_t)p, s)) {
      atomic_store(&j->failed, 1);
      break;
    }
  if (!s) atomic_store(&j->failed, 1);
  free(s);
}

static tb_status shapes(tb_kernel_ctx *ctx, const tb_tensor *mask, attn_job *j) {
  const tb_tensor *ops[3] = {j->q, j->k, j->v};
  static const char *const names[3] = {"Q", "K_T", "V"};
  j->nb = 0;
  for (int i = 0; i < 3; i++) {
    size_t r = tb_tensor_ndim(ops[i]);
    if (r < 2) return tb_kernel_error(ctx, TB_ERR_MODEL, "input %s has rank %zu; it needs >= 2", names[i], r);
    if (r - 2 > j->nb) j->nb = r - 2;
  }
  for (size_t b = 0; b < j->nb; b++) j->batch[b] = 1;
  for (int i = 0; i < 3; i++) {
    size_t r = tb_tensor_ndim(ops[i]) - 2;
    for (size_t b = 0; b < r; b++) {
      int64_t dim = tb_tensor_shape(ops[i])[b], *out = &j->batch[j->nb - r + b];
      if (dim == *out || dim == 1) continue;
      if (*out != 1)
        return tb_kernel_error(
            ctx, TB_ERR_MODEL,
            "the batch dimensions of Q, K_T and V do not broadcast (%s has %lld where another has %lld)", names[i],
            (long long)dim, (long long)*out);
      *out = dim;
    }
  }
  const int64_t *qs = tb_tensor_shape(j->q), *ks = tb_tensor_shape(j->k), *vs = tb_tensor_shape(j->v);
  size_t qn = tb_tensor_ndim(j->q), kn = tb_tensor_ndim(j->k), vn = tb_tensor_ndim(j->v);
  j->lq = qs[qn - 2];
  j->d = qs[qn - 1];
  j->lk = ks[kn - 1];
  j->dv = vs[vn - 1];
  if (ks[kn - 2] != j->d || vs[vn - 2] != j->lk)
    return tb_kernel_error(ctx, TB_ERR_MODEL,
                           "inner dimensions differ: Q [.., %lld, %lld], K_T [.., %lld, %lld], V [.., %lld, %lld]",
                           (long long)j->lq, (long long)j->d, (long long)ks[kn - 2], (long long)j->lk,
                           (long long)vs[vn - 2], (long long)j->dv);
  if (!mask) return TB_OK;
  size_t full = j->nb + 2, mn = tb_tensor_ndim(mask);
  if (mn > full) return tb_kernel_error(ctx, TB_ERR_MODEL, "the mask has rank %zu, over the scores' %zu", mn, full);
  int64_t dims[TB_MAX_DIMS + 2], stride = 1;
  memcpy(dims, j->batch, j->nb * sizeof(int64_t));
  dims[j->nb] = j->lq;
  dims[j->nb + 1] = j->lk;
  for (size_t i = full; i-- > 0;) {
    j->mstride[i] = 0;
    if (i < full - mn) continue;
    int64_t md = tb_tensor_shape(mask)[i - (full - mn)];
    if (md != 1 && md != dims[i])
      return tb_kernel_error(ctx, TB_ERR_MODEL,
                             "the mask's dimension %zu (%lld) does not broadcast to the scores' %lld", i - (full - mn),
                             (long long)md, (long long)dims[i]);
    j->mstride[i] = md == 1 ? 0 : stride;
    stride *= md;
  }
  return TB_OK;
}

static tb_status attention_run(tb_kernel_ctx *ctx, tb_gemm_path path) {
  tb_status st = tb_fast_check_f32(ctx, ctx->n_inputs < 4 ? ctx->n_inputs : 4);
  if (st != TB_OK) return st;
  if (ctx->n_inputs < 3 || !ctx->inputs[0] || !ctx->inputs[1] || !ctx->inputs[2])
    return tb_kernel_error(ctx, TB_ERR_MODEL, "inputs Q, K_T and V are required");
  attn_job *j = calloc(1, sizeof *j);
  if (!j) return tb_kernel_error(ctx, TB_ERR_OUT_OF_MEMORY, "no memory for the attention job");
  int64_t divide = 0;
  j->path = path;
  j->q = ctx->inputs[0];
  j->k = ctx->inputs[1];
  j->v = ctx->inputs[2];
  const tb_tensor *mask = ctx->n_inputs > 3 ? ctx->inputs[3] : NULL;
  j->mask = mask ? tb_tensor_host_data(mask) : NULL;
  j->scale = 1.0f;
  st = tb_attr_float(ctx->graph, ctx->node, "scale", 1.0f, &j->scale);
  if (st == TB_OK) st = tb_attr_int(ctx->graph, ctx->node, "scale_divide", 0, &divide);
  j->has_scale = tb_node_attr(ctx->node, "scale") != NULL;
  j->divide = divide != 0;
  atomic_init(&j->failed, 0);
  if (st == TB_OK) st = shapes(ctx, mask, j);
  int64_t shape[TB_MAX_DIMS + 2];
  tb_tensor *y = NULL;
  if (st == TB_OK && j->nb + 2 > TB_MAX_DIMS)
    st = tb_kernel_error(ctx, TB_ERR_UNSUPPORTED, "the output has rank %zu; at most %d supported", j->nb + 2,
                         TB_MAX_DIMS);
  if (st == TB_OK) {
    memcpy(shape, j->batch, j->nb * sizeof(int64_t));
    shape[j->nb] = j->lq;
    shape[j->nb + 1] = j->dv;
    st = tb_kernel_output(ctx, 0, TB_DTYPE_F32, j->nb + 2, shape, &y);
  }
  if (st == TB_OK && tb_tensor_numel(y) > 0) {
    j->y = tb_tensor_host_data(y);
    int64_t entries = nn_numel(j->nb, j->batch);
    if (entries > 1 && tb_pool_threads(ctx->pool) > 1) {
      tb_pool_parallel_for(ctx->pool, (size_t)entries, attend_task, j);
    } else {
      j->gemm_pool = ctx->pool;
      attend_task(j, 0, (size_t)entries);
    }
    if (atomic_load(&j->failed))
      st = tb_kernel_error(ctx, TB_ERR_OUT_OF_MEMORY,
                           "no memory for the scores (%lld x %lld floats) or the GEMM buffers", (long long)j->lq,
                           (long long)j->lk);
  }
  free(j);
  return st;
}

static bool attention_accepts(const tb_graph *g, const tb_node *n, const tb_value_type *const *in) {
  (void)g;
  return n->n_inputs >= 3 && n->n_inputs <= 4 && tb_fast_accepts_f32(in, n->n_inputs);
}

#define ATTENTION_ENTRY(suffix, path_, features)                                          \
  static tb_status run_##suffix(tb_kernel_ctx *ctx) { return attention_run(ctx, path_); } \
  const tb_cpu_kernel tb_kernel_attention_f32_##suffix = {.domain = "tb",                 \
                                                          .name = "Attention",            \
                                                          .level = 2,                     \
                                                          .cpu_features = features,       \
                                                          .accepts = attention_accepts,   \
                                                          .run = run_##suffix};

ATTENTION_ENTRY(avx512, TB_GEMM_AVX512, TB_FEATURE_BIT(TB_FEATURE_AVX512F) | TB_FEATURE_BIT(TB_FEATURE_FMA))
ATTENTION_ENTRY(avx2, TB_GEMM_AVX2, TB_FEATURE_BIT(TB_FEATURE_AVX2) | TB_FEATURE_BIT(TB_FEATURE_FMA))
ATTENTION_ENTRY(portable, TB_GEMM_PORTABLE, 0)
