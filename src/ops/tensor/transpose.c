/* Transpose: dims permuted by `perm` (default: reversed). */
#include "ops/op_params.h"
#include "ops/tensor/tensor_infer.h"
#include "ops/tensor/tensor_params.h"

static tb_status transpose_infer(tb_infer_ctx *ctx) {
  tb_status st = tb_infer_require(ctx, 0, 0);
  if (st != TB_OK) return st;
  tb_dtype dt = ctx->in[0]->dtype;
  tb_transpose_params tp = {0};
  if ((st = tb_infer_params(ctx, &tp, sizeof tp)) != TB_OK) return st;
  const int64_t *perm = tp.has_perm ? tp.perm : NULL;
  size_t count = tp.n_perm;
  const tb_value_type *in = tb_tt_ranked(ctx, 0);
  if (!in) {
    if (perm)
      tb_tt_out_rank(ctx, 0, dt, count);
    else
      tb_tt_out_unranked(ctx, 0, dt);
    return TB_OK;
  }
  if (perm && count != in->ndim)
    return tb_infer_error(ctx, TB_ERR_MODEL, "perm has %zu entries for an input of rank %zu", count, in->ndim);
  bool seen[TB_MAX_DIMS] = {false};
  tb_dim out[TB_MAX_DIMS];
  for (size_t d = 0; d < in->ndim; d++) {
    int64_t p = perm ? perm[d] : (int64_t)(in->ndim - 1 - d);
    if (p < 0 || p >= (int64_t)in->ndim || seen[p])
      return tb_infer_error(ctx, TB_ERR_MODEL, "perm is not a permutation of 0..%zu (entry %zu is %lld)", in->ndim - 1,
                            d, (long long)p);
    seen[p] = true;
    out[d] = in->dims[p];
  }
  tb_tt_out_tdims(ctx, 0, dt, in->ndim, out);
  return TB_OK;
}

const tb_op_def tb_op_transpose = {"", "Transpose", 1, 1, 1, 1, 1, 0, transpose_infer, sizeof(tb_transpose_params), tb_transpose_parse};
