/* CUDA kernels of LayerNormalization and tb::LayerNormalization (the LayerNorm pattern pass's node) on float32
 * (kernels/70_data.cu's tb_cu_dm_layer_norm_f32): the input as [rows, cols] with cols the normalised axes,
 * one block per row, mean then variance (two passes, in float), scale and bias of the normalised shape or
 * of one value. The Mean and InvStdDev outputs (training) and scales that broadcast otherwise run on the CPU.
 * Also tb::Gelu's tanh form (GPT-2's), which the elementwise family's erf kernel declines. */
#include <string.h>
#include "backend/cuda/kernels/cuda_dm.h"
#include "backend/cuda/kernels/cuda_ops.h"
#include "backend/tensor/tensor_impl.h"
#include "core/error.h"
#include "ops/fused/fused_params.h"
#include "ops/nn/nn_params.h"

/* A scale or bias of n elements for rows of cols: the step along the row (1, or 0 for one value), or -1. */
static int64_t param_step(int64_t n, int64_t cols) { return n == cols ? 1 : n == 1 ? 0 : -1; }

static tb_status layer_norm_run(tb_kernel_ctx *ctx) {
  tb_status st = tb_kernel_outputs(ctx);
  if (st != TB_OK) return st;
  const tb_norm_params *p = ctx->params;
  const tb_tensor *x = ctx->inputs[0], *scale = ctx->inputs[1], *bias = ctx->n_inputs > 2 ? ctx->inputs[2] : NULL;
  tb_tensor *y = ctx->outputs[0];
  size_t axis = 0;
  if ((st = tb_cuda_axis(ctx, p->axis, x->ndim, &axis)) != TB_OK) return st;
  int64_t rows = 1, cols = 1;
  for (size_t d = 0; d < x->ndim; d++) {
    if (d < axis) rows *= x->shape[d];
    else cols *= x->shape[d];
  }
  int64_t ss = param_step(tb_tensor_numel(scale), cols), bs = bias ? param_step(tb_tensor_numel(bias), cols) : 0;
  if (ss < 0 || bs < 0)
    return tb_kernel_error(ctx, TB_ERR_UNSUPPORTED, "the CUDA LayerNormalization takes a %s of %lld values or one, not %lld",
                           ss < 0 ? "Scale" : "B", (long long)cols, (long long)tb_tensor_numel(ss < 0 ? scale : bias));
  if (rows * cols == 0) return TB_OK;
  tb_cuda_dm d = {.p = {rows, cols}};
  d.st[1][0] = ss;
  d.st[2][0] = bs;
  float eps = p->epsilon;
  uint32_t bits;
  memcpy(&bits, &eps, sizeof bits);
  d.value = bits;
  return tb_cuda_dm_go(ctx, "tb_cu_dm_layer_norm_f32", x, scale, bias, y, rows * cols, &d, TB_CUDA_DM_ROWS);
}

/* float32 X, Scale and B; only the Y output; Scale (and B) of the normalised size or one value when their
 * shapes are known here (run() refuses others with a sentence). */
static bool layer_norm_accepts(const tb_kernel_query *q) {
  const tb_norm_params *p = q->params;
  if (!p || p->mean_output || p->inv_std_output || q->n_outputs != 1 || q->n_inputs < 2) return false;
  for (size_t i = 0; i < q->n_inputs; i++)
    if (q->in[i] && (!q->in[i]->has_dtype || q->in[i]->dtype != TB_DTYPE_F32)) return false;
  const tb_value_type *x = q->in[0];
  if (!x || !q->in[1]) return false;
  if (!x->has_shape) return true;
  int64_t axis = p->axis < 0 ? p->axis + (int64_t)x->ndim : p->axis, cols = 1;
  if (axis < 0 || axis >= (int64_t)x->ndim) return false;
  for (size_t d = (size_t)axis; d < x->ndim; d++) {
    if (x->dims[d].value < 0) return true;
    cols *= x->dims[d].value;
  }
  for (size_t i = 1; i < q->n_inputs && i < 3; i++) {
    const tb_value_type *t = q->in[i];
    if (!t || !t->has_shape) continue;
    int64_t n = 1;
    for (size_t d = 0; d < t->ndim; d++) n = t->dims[d].value < 0 ? -1 : n * t->dims[d].value;
    if (n >= 0 && param_step(n, cols) < 0) return false;
  }
  return true;
}

static tb_status gelu_tanh_run(tb_kernel_ctx *ctx) {
  tb_status st = tb_kernel_outputs(ctx);
  if (st != TB_OK) return st;
  tb_cuda_dm d = {0};
  return tb_cuda_dm_go(ctx, "tb_cu_dm_gelu_tanh_f32", ctx->inputs[0], NULL, NULL, ctx->outputs[0], tb_tensor_numel(ctx->outputs[0]), &d,
                       TB_CUDA_DM_ELEMENTS);
}

static bool gelu_tanh_accepts(const tb_kernel_query *q) {
  const tb_gelu_params *p = q->params;
  return p && p->tanh && q->n_inputs == 1 && q->in[0] && tb_cuda_all_f32(q);
}

static const tb_kernel kernels[] = {
    TB_CUDA_KERNEL("tb", "Gelu", gelu_tanh_accepts, gelu_tanh_run),
    TB_CUDA_KERNEL("", "LayerNormalization", layer_norm_accepts, layer_norm_run),
    TB_CUDA_KERNEL("tb", "LayerNormalization", layer_norm_accepts, layer_norm_run),
};
const tb_cuda_family tb_cuda_family_norm = {kernels, sizeof kernels / sizeof kernels[0]};
