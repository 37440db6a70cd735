/* Reference kernels for BatchNormalization (inference), InstanceNormalization, LayerNormalization and
 * LRN. Means and variances are computed in double in two passes (mean, then mean of squared deviations). */
#include <math.h>
#include <stdlib.h>
#include "backend/cpu/kernels/nn/nn_kernel.h"

static tb_status batchnorm_run(tb_kernel_ctx *ctx) {
  tb_status st;
  const tb_norm_params *pb = tb_kernel_params(ctx, &st);
  if (st != TB_OK) return st;
  float eps = pb->epsilon;
  nn_buf in[5] = {{0}};
  double *y = NULL;
  for (size_t i = 0; i < 5 && st == TB_OK; i++) st = tb_nn_load(ctx, i, false, &in[i]);
  if (st != TB_OK) goto done;
  const nn_buf *x = &in[0];
  if (x->ndim < 2) {
    st = tb_kernel_error(ctx, TB_ERR_MODEL, "X must have rank >= 2 (got %zu)", x->ndim);
    goto done;
  }
  int64_t c = x->shape[1], sample = x->shape[0] ? x->numel / x->shape[0] : 0, spatial = c ? sample / c : 0;
  /* Parameters are per channel ([C]), or per element of a sample ([C, D1...]: spatial=0 before opset 9). */
  for (size_t i = 1; i < 5; i++)
    if (in[i].numel != c && in[i].numel != sample) {
      st = tb_kernel_error(ctx, TB_ERR_MODEL, "input %zu has %lld values; it needs %lld (one per channel)", i,
                           (long long)in[i].numel, (long long)c);
      goto done;
    }
  st = tb_nn_alloc(ctx, x->numel, &y);
  if (st != TB_OK) goto done;
  for (int64_t e = 0; e < x->numel; e++) {
    int64_t within = e % sample, ch = within / spatial;
    double p[5];
    for (size_t i = 1; i < 5; i++) p[i] = in[i].data[in[i].numel == c ? ch : within];
    y[e] = (x->data[e] - p[3]) / sqrt(p[4] + (double)eps) * p[1] + p[2];
  }
  st = tb_nn_store(ctx, 0, x->dtype, x->ndim, x->shape, y);
done:
  free(y);
  for (size_t i = 0; i < 5; i++) tb_nn_buf_free(&in[i]);
  return st;
}

static tb_status instancenorm_run(tb_kernel_ctx *ctx) {
  tb_status st;
  const tb_norm_params *pb = tb_kernel_params(ctx, &st);
  if (st != TB_OK) return st;
  float eps = pb->epsilon;
  nn_buf x = {0}, scale = {0}, bias = {0};
  double *y = NULL;
  st = tb_nn_load(ctx, 0, false, &x);
  if (st == TB_OK) st = tb_nn_load(ctx, 1, false, &scale);
  if (st == TB_OK) st = tb_nn_load(ctx, 2, false, &bias);
  if (st != TB_OK) goto done;
  if (x.ndim < 3 || scale.numel != x.shape[1] || bias.numel != x.shape[1]) {
    st = tb_kernel_error(ctx, TB_ERR_MODEL, "X must have rank >= 3 and scale and B one value per channel");
    goto done;
  }
  st = tb_nn_alloc(ctx, x.numel, &y);
  if (st != TB_OK) goto done;
  int64_t c = x.shape[1], planes = x.shape[0] * c, plane = tb_nn_numel(x.ndim - 2, x.shape + 2);
  for (int64_t p = 0; p < planes; p++) {
    const double *px = x.data + p * plane;
    double mean = 0, var = 0;
    for (int64_t i = 0; i < plane; i++) mean += px[i];
    mean /= (double)plane;
    for (int64_t i = 0; i < plane; i++) var += (px[i] - mean) * (px[i] - mean);
    var /= (double)plane;
    double inv = 1.0 / sqrt(var + (double)eps);
    for (int64_t i = 0; i < plane; i++) y[p * plane + i] = (px[i] - mean) * inv * scale.data[p % c] + bias.data[p % c];
  }
  st = tb_nn_store(ctx, 0, x.dtype, x.ndim, x.shape, y);
done:
  free(y);
  tb_nn_buf_free(&x);
  tb_nn_buf_free(&scale);
  tb_nn_buf_free(&bias);
  return st;
}

static tb_status layernorm_run(tb_kernel_ctx *ctx) {
  tb_status st;
  const tb_norm_params *pb = tb_kernel_params(ctx, &st);
  if (st != TB_OK) return st;
  float eps = pb->epsilon;
  int64_t axis = pb->axis;
  nn_buf x = {0}, scale = {0}, bias = {0};
  double *y = NULL, *mean = NULL, *inv = NULL;
  st = tb_nn_load(ctx, 0, false, &x);
  if (st == TB_OK) st = tb_nn_load(ctx, 1, false, &scale);
  if (st == TB_OK) st = tb_nn_load(ctx, 2, true, &bias);
  if (st != TB_OK) goto done;
  int64_t r = (int64_t)x.ndim;
  if (axis < 0) axis += r;
  if (axis < 0 || axis >= r) {
    st = tb_kernel_error(ctx, TB_ERR_MODEL, "attribute axis is out of range for rank %lld", (long long)r);
    goto done;
  }
  size_t norm_ndim = (size_t)(r - axis);
  const int64_t *norm_shape = x.shape + axis;
  /* Scale and B broadcast (numpy rules) to the normalized shape X[axis:]. */
  const nn_buf *params[2] = {&scale, &bias};
  for (size_t i = 0; i < 2; i++) {
    const nn_buf *p = params[i];
    if (!p->data) continue;
    bool ok = p->ndim <= norm_ndim;
    for (size_t d = 0; ok && d < p->ndim; d++)
      ok = p->shape[d] == 1 || p->shape[d] == norm_shape[norm_ndim - p->ndim + d];
    if (!ok) {
      st = tb_kernel_error(ctx, TB_ERR_MODEL, "%s does not broadcast to the normalized shape", i ? "B" : "Scale");
      goto done;
    }
  }
  int64_t outer = tb_nn_numel((size_t)axis, x.shape), inner = tb_nn_numel(norm_ndim, norm_shape);
  st = tb_nn_alloc(ctx, x.numel, &y);
  if (st == TB_OK) st = tb_nn_alloc(ctx, outer, &mean);
  if (st == TB_OK) st = tb_nn_alloc(ctx, outer, &inv);
  if (st != TB_OK) goto done;
  for (int64_t o = 0; o < outer; o++) {
    const double *px = x.data + o * inner;
    double m = 0, var = 0;
    for (int64_t i = 0; i < inner; i++) m += px[i];
    m /= (double)inner;
    for (int64_t i = 0; i < inner; i++) var += (px[i] - m) * (px[i] - m);
    var /= (double)inner;
    mean[o] = m;
    inv[o] = 1.0 / sqrt(var + (double)eps);
    int64_t idx[TB_MAX_DIMS] = {0};
    for (int64_t i = 0; i < inner; i++, tb_kernel_next_index(norm_ndim, norm_shape, idx)) {
      double v = (px[i] - m) * inv[o] * scale.data[tb_nn_bcast_offset(norm_ndim, idx, scale.ndim, scale.shape)];
      if (bias.data) v += bias.data[tb_nn_bcast_offset(norm_ndim, idx, bias.ndim, bias.shape)];
      y[o * inner + i] = v;
    }
  }
  int64_t stat_shape[TB_MAX_DIMS];
  for (int64_t d = 0; d < r; d++) stat_shape[d] = d < axis ? x.shape[d] : 1;
  st = tb_nn_store(ctx, 0, x.dtype, x.ndim, x.shape, y);
  if (st == TB_OK && pb->mean_output) st = tb_nn_store(ctx, 1, TB_DTYPE_F32, x.ndim, stat_shape, mean);
  if (st == TB_OK && pb->inv_std_output) st = tb_nn_store(ctx, 2, TB_DTYPE_F32, x.ndim, stat_shape, inv);
done:
  free(y);
  free(mean);
  free(inv);
  tb_nn_buf_free(&x);
  tb_nn_buf_free(&scale);
  tb_nn_buf_free(&bias);
  return st;
}

static tb_status lrn_run(tb_kernel_ctx *ctx) {
  tb_status st;
  const tb_lrn_params *pb = tb_kernel_params(ctx, &st);
  if (st != TB_OK) return st;
  float alpha = pb->alpha, beta = pb->beta, bias = pb->bias;
  int64_t size = pb->size;
  nn_buf x;
  double *y = NULL;
  st = tb_nn_load(ctx, 0, false, &x);
  if (st != TB_OK) return st;
  if (x.ndim < 2) {
    st = tb_kernel_error(ctx, TB_ERR_MODEL, "X must have rank >= 2 (got %zu)", x.ndim);
    goto done;
  }
  st = tb_nn_alloc(ctx, x.numel, &y);
  if (st != TB_OK) goto done;
  int64_t c = x.shape[1], plane = tb_nn_numel(x.ndim - 2, x.shape + 2);
  /* Channels c - floor((size-1)/2) .. c + ceil((size-1)/2), clipped to the valid ones. */
  int64_t lo = (size - 1) / 2, hi = size - 1 - lo;
  for (int64_t e = 0; e < x.numel; e++) {
    int64_t ch = (e / plane) % c, base = e - ch * plane;
    double sq = 0;
    for (int64_t k = ch - lo < 0 ? 0 : ch - lo; k <= ch + hi && k < c; k++) {
      double v = x.data[base + k * plane];
      sq += v * v;
    }
    y[e] = x.data[e] / pow((double)bias + (double)alpha / (double)size * sq, (double)beta);
  }
  st = tb_nn_store(ctx, 0, x.dtype, x.ndim, x.shape, y);
done:
  free(y);
  tb_nn_buf_free(&x);
  return st;
}

const tb_kernel tb_kernel_batchnorm = {.domain = "", .name = "BatchNormalization", .level = TB_KERNEL_REFERENCE, .cpu_features = 0, .accepts = NULL, .run = batchnorm_run};
const tb_kernel tb_kernel_instancenorm = {.domain = "", .name = "InstanceNormalization", .level = TB_KERNEL_REFERENCE, .cpu_features = 0, .accepts = NULL, .run = instancenorm_run};
const tb_kernel tb_kernel_layernorm = {.domain = "", .name = "LayerNormalization", .level = TB_KERNEL_REFERENCE, .cpu_features = 0, .accepts = NULL, .run = layernorm_run};
const tb_kernel tb_kernel_lrn = {.domain = "", .name = "LRN", .level = TB_KERNEL_REFERENCE, .cpu_features = 0, .accepts = NULL, .run = lrn_run};
