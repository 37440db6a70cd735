/* Internal: helpers for the nn family's reference kernels.
 *
 * Numerics (the O0 baseline): every reference kernel reads its inputs as packed doubles, computes and
 * accumulates in double, and rounds once to the output dtype (tb_convert: nearest-even for floats). For
 * float32 this is at least as accurate as numpy's float32 arithmetic, so the conformance outputs match
 * within rtol 1e-3 / atol 1e-5. Exceptions where numpy's float32 rounding decides the result (the
 * division before rounding in QuantizeLinear) compute in float on purpose and say so. Integers travel
 * through double exactly up to 2^53. */
#ifndef TB_CPU_KERNELS_NN_KERNEL_H
#define TB_CPU_KERNELS_NN_KERNEL_H
#include "backend/cpu/kernels/kernel.h"
#include "backend/kernel_params.h"
#include "ops/fused/fused_params.h"
#include "ops/nn/nn_params.h"

typedef struct nn_buf {
  double *data;
  int64_t numel;
  tb_dtype dtype;
  size_t ndim;
  int64_t shape[TB_MAX_DIMS];
} nn_buf;

/* Input i as packed doubles (b->data NULL and TB_OK when the input is omitted and `optional`). */
tb_status tb_nn_load(tb_kernel_ctx *ctx, size_t i, bool optional, nn_buf *b);
void tb_nn_buf_free(nn_buf *b);
/* Input i (present) as packed int64 values, exactly (for axes, shapes, integer data); free() it. */
tb_status tb_nn_load_i64(tb_kernel_ctx *ctx, size_t i, int64_t **out);
/* Zeroed doubles for count elements; TB_ERR_OUT_OF_MEMORY naming the node with the size. */
tb_status tb_nn_alloc(tb_kernel_ctx *ctx, int64_t count, double **out);
/* Output i (skipped beyond ctx->n_outputs; callers skip the optional outputs their parameters say the node
 * omits) with this dtype and shape, filled from data. */
tb_status tb_nn_store(tb_kernel_ctx *ctx, size_t i, tb_dtype dtype, size_t ndim, const int64_t *shape, const double *data);
/* The element count of a shape computed from input dims, checked for int64 overflow (TB_ERR_MODEL naming
 * the node when it does not fit). */
tb_status tb_nn_checked_numel(tb_kernel_ctx *ctx, size_t ndim, const int64_t *shape, int64_t *out);
/* Product of dims (every dim checked by the tensors that hold them, so it fits). */
int64_t tb_nn_numel(size_t ndim, const int64_t *shape);
/* The flat offset into a tensor of shape in (right-aligned, numpy broadcast) of the element that
 * broadcasts to the multi-index idx of an ndim-dim output. */
int64_t tb_nn_bcast_offset(size_t ndim, const int64_t *idx, size_t in_ndim, const int64_t *in_shape);
/* numpy matmul of a and b (1-D promotion, batch broadcast) into a new buffer *out (free()) of shape
 * out_shape[*out_ndim]; shared by MatMul, MatMulInteger and QLinearMatMul. */
tb_status tb_nn_matmul(tb_kernel_ctx *ctx, const nn_buf *a, const nn_buf *b, double **out, size_t *out_ndim,
                    int64_t *out_shape);

#endif
