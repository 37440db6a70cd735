/* Level-2 fp32 LayerNormalization (the ONNX op and the tb:: one the O1 pass makes: same operator) and
 * BatchNormalization in inference mode.
 *
 * LayerNormalization, per row of the normalized axes: the mean from a blocked double sum, then the
 * corrected two-pass moments around it (mean += sum(x - m) / n, var = sum((x - m)^2) / n - (sum(x - m) / n)^2),
 * so a large offset costs no accuracy; y = ((x - mean_hi) - mean_lo) * inv * scale + B with the mean split
 * into two floats. Scale and B must have the normalized shape; their other broadcasts go to the
 * reference. The Mean and InvStdDev outputs are written when the node has them.
 * BatchNormalization: per channel k = scale / sqrt(var + eps) in double, then y = (x - mean) * k + B. */
#include <math.h>
#include <stdlib.h>
#include "backend/cpu/kernels/fast/vec/vec_kernel.h"

typedef struct ln_job {
  const vec_ops *ops;
  const float *x, *g, *b;
  float *y, *mean, *inv;
  int64_t inner;
  float eps;
} ln_job;

static void ln_rows(void *arg, size_t begin, size_t end) {
  const ln_job *j = arg;
  int64_t n = j->inner;
  for (size_t r = begin; r < end; r++) {
    const float *x = j->x + (int64_t)r * n;
    float m0 = (float)(j->ops->sum(x, n) / (double)n);
    double d, q;
    j->ops->moments(x, n, m0, &d, &q);
    double dm = d / (double)n, mean = (double)m0 + dm, var = q / (double)n - dm * dm;
    if (var < 0) var = 0;
    double inv = 1.0 / sqrt(var + (double)j->eps);
    float hi = (float)mean, lo = (float)(mean - (double)hi);
    j->ops->normalize(x, n, hi, lo, (float)inv, j->g, j->b, j->y + (int64_t)r * n);
    if (j->mean) j->mean[r] = (float)mean;
    if (j->inv) j->inv[r] = (float)inv;
  }
}

/* p (present) has exactly the normalized shape norm[0..nn). */
static bool ln_param_full(const tb_tensor *p, size_t nn, const int64_t *norm) {
  if (tb_tensor_ndim(p) != nn) return false;
  for (size_t d = 0; d < nn; d++)
    if (tb_tensor_shape(p)[d] != norm[d]) return false;
  return true;
}

static tb_status layernorm_run(tb_kernel_ctx *ctx, const vec_ops *ops) {
  if (ctx->n_inputs < 2 || !ctx->inputs[1] || !tb_vec_inputs_ok(ctx, 3)) return tb_vec_fallback(ctx);
  tb_status st;
  const tb_norm_params *pb = tb_kernel_params(ctx, &st);
  if (st != TB_OK) return st;
  const tb_norm_params *p = pb;
  float eps = p->epsilon;
  int64_t axis = p->axis;
  const tb_tensor *x = ctx->inputs[0], *scale = ctx->inputs[1], *bias = ctx->n_inputs > 2 ? ctx->inputs[2] : NULL;
  int64_t r = (int64_t)tb_tensor_ndim(x);
  const int64_t *shape = tb_tensor_shape(x);
  if (axis < 0) axis += r;
  if (axis < 0 || axis >= r) return tb_vec_fallback(ctx);
  size_t nn = (size_t)(r - axis);
  if (!ln_param_full(scale, nn, shape + axis) || (bias && !ln_param_full(bias, nn, shape + axis)))
    return tb_vec_fallback(ctx);
  int64_t outer = 1, inner = 1;
  for (int64_t d = 0; d < r; d++) *(d < axis ? &outer : &inner) *= shape[d];
  if (inner == 0) return tb_vec_fallback(ctx);
  ln_job j = {.ops = ops,
              .x = tb_tensor_host_data(x),
              .g = tb_tensor_host_data(scale),
              .b = bias ? tb_tensor_host_data(bias) : NULL,
              .inner = inner,
              .eps = eps};
  if (!tb_vec_output(ctx, 0, (size_t)r, shape, &j.y, &st)) return st == TB_OK ? tb_vec_fallback(ctx) : st;
  int64_t stat_shape[TB_MAX_DIMS];
  for (int64_t d = 0; d < r; d++) stat_shape[d] = d < axis ? shape[d] : 1;
  if (p->mean_output && ctx->n_outputs > 1 &&
      !tb_vec_output(ctx, 1, (size_t)r, stat_shape, &j.mean, &st))
    return st == TB_OK ? tb_vec_fallback(ctx) : st;
  if (p->inv_std_output && ctx->n_outputs > 2 &&
      !tb_vec_output(ctx, 2, (size_t)r, stat_shape, &j.inv, &st))
    return st == TB_OK ? tb_vec_fallback(ctx) : st;
  tb_vec_parallel(ctx, (size_t)outer, outer * inner, ln_rows, &j);
  return TB_OK;
}

static bool layernorm_accepts(const tb_kernel_query *q) {
  const tb_value_type *const *in = q->in;
  return q->n_inputs >= 2 && tb_fast_accepts_f32(in, q->n_inputs < 3 ? q->n_inputs : 3) && in[1];
}

typedef struct bn_job {
  const vec_ops *ops;
  const float *x, *mean, *k, *b;
  float *y;
  int64_t c, plane;
} bn_job;

static void bn_planes(void *arg, size_t begin, size_t end) {
  const bn_job *j = arg;
  for (size_t p = begin; p < end; p++) {
    int64_t ch = (int64_t)p % j->c, off = (int64_t)p * j->plane;
    j->ops->affine(j->x + off, j->plane, j->mean[ch], j->k[ch], j->b[ch], j->y + off);
  }
}

static void bn_rows(void *arg, size_t begin, size_t end) {
  const bn_job *j = arg;
  for (size_t r = begin; r < end; r++)
    j->ops->affine_vec(j->x + (int64_t)r * j->c, j->c, j->mean, j->k, j->b, j->y + (int64_t)r * j->c);
}

static tb_status batchnorm_run(tb_kernel_ctx *ctx, const vec_ops *ops) {
  tb_status st;
  const tb_norm_params *pb = tb_kernel_params(ctx, &st);
  if (st != TB_OK) return st;
  float eps = pb->epsilon;
  if (!pb->spatial || ctx->n_inputs < 5 || !tb_vec_inputs_ok(ctx, 5)) return tb_vec_fallback(ctx);
  const tb_tensor *x = ctx->inputs[0];
  size_t r = tb_tensor_ndim(x);
  for (size_t i = 1; i < 5; i++)
    if (!ctx->inputs[i] || r < 2 || tb_tensor_numel(ctx->inputs[i]) != tb_tensor_shape(x)[1]) return tb_vec_fallback(ctx);
  int64_t c = tb_tensor_shape(x)[1], numel = tb_tensor_numel(x);
  bn_job j = {.ops = ops,
              .x = tb_tensor_host_data(x),
              .mean = tb_tensor_host_data(ctx->inputs[3]),
              .b = tb_tensor_host_data(ctx->inputs[2]),
              .c = c};
  if (!tb_vec_output(ctx, 0, r, tb_tensor_shape(x), &j.y, &st)) return st == TB_OK ? tb_vec_fallback(ctx) : st;
  if (numel == 0) return TB_OK;
  float *k = malloc((size_t)c * sizeof(float));
  if (!k) return tb_kernel_error(ctx, TB_ERR_OUT_OF_MEMORY, "no memory for %lld channel factors", (long long)c);
  const float *scale = tb_tensor_host_data(ctx->inputs[1]), *var = tb_tensor_host_data(ctx->inputs[4]);
  for (int64_t i = 0; i < c; i++) k[i] = (float)((double)scale[i] / sqrt((double)var[i] + (double)eps));
  j.k = k;
  j.plane = numel / (tb_tensor_shape(x)[0] * c);
  if (j.plane == 1)
    tb_vec_parallel(ctx, (size_t)tb_tensor_shape(x)[0], numel, bn_rows, &j);
  else
    tb_vec_parallel(ctx, (size_t)(numel / j.plane), numel, bn_planes, &j);
  free(k);
  return TB_OK;
}

static bool batchnorm_accepts(const tb_kernel_query *q) {
  const tb_value_type *const *in = q->in;
  if (q->n_inputs < 5 || !tb_fast_accepts_f32(in, 5)) return false;
  for (size_t i = 1; i < 5; i++)
    if (!in[i]) return false;
  const tb_norm_params *p = q->params; /* parse rejects training_mode and the training outputs */
  return p && p->spatial;
}

VEC_KERNELS(layernorm, "", "LayerNormalization", layernorm_accepts, layernorm_run)
VEC_KERNELS(tb_layernorm, "tb", "LayerNormalization", layernorm_accepts, layernorm_run)
VEC_KERNELS(batchnorm, "", "BatchNormalization", batchnorm_accepts, batchnorm_run)
