/* CUDA kernels of LRN (kernels/62_lp_lrn.cu; LpPool and GlobalLpPool are in cuda_ops_pool.c's pool family,
 * on the same file's tb_cu_cnn_lp_pool_f32) on float32 of any rank from 2, in double as the CPU reference. */
#include "backend/cuda/kernels/cuda_cnn.h"
#include "backend/cuda/kernels/cuda_ops.h"
#include "backend/kernel_params.h"
#include "backend/tensor/tensor_impl.h"
#include "ops/nn/nn_params.h"

static tb_status lrn_run(tb_kernel_ctx *ctx) {
  tb_status st;
  const tb_lrn_params *p = tb_kernel_params(ctx, &st);
  if (!p) return st;
  const tb_tensor *x = ctx->inputs[0];
  if (x->ndim < 2) return tb_kernel_error(ctx, TB_ERR_MODEL, "X must have rank >= 2 (got %zu)", x->ndim);
  if (p->size < 1) return tb_kernel_error(ctx, TB_ERR_MODEL, "size is %lld; give 1 or more", (long long)p->size);
  tb_tensor *y = NULL;
  if ((st = tb_kernel_output(ctx, 0, TB_DTYPE_F32, x->ndim, x->shape, &y)) != TB_OK) return st;
  if (tb_tensor_numel(y) == 0) return TB_OK;
  tb_cuda_cnn_desc d;
  tb_cuda_cnn_desc_init(&d);
  d.n = x->shape[0];
  d.c = x->shape[1];
  d.in[2] = tb_tensor_numel(x) / (d.n * d.c);
  d.kernel[0] = p->size;
  d.alpha = p->alpha;
  d.beta = p->beta;
  d.eps = p->bias;
  const tb_tensor *tensors[TB_CUDA_CNN_POINTERS] = {x, NULL, NULL, NULL, y, NULL};
  return tb_cuda_cnn_launch(ctx, "tb_cu_cnn_lrn_f32", tensors, &d, tb_tensor_numel(y), 0, 0);
}

static bool lrn_accepts(const tb_kernel_query *q) {
  return q->n_inputs == 1 && q->in[0] && tb_cuda_all_f32(q) && (!q->in[0]->has_shape || q->in[0]->ndim >= 2);
}

static const tb_kernel kernels[] = {
    TB_CUDA_KERNEL("", "LRN", lrn_accepts, lrn_run),
};
const tb_cuda_family tb_cuda_family_window = {kernels, sizeof kernels / sizeof kernels[0]};
