/* Operators whose output has the input's shape: Trilu (opset 14), CumSum (11), ReverseSequence (10). */
#include "ops/op_params.h"
#include "ops/tensor/tensor_infer.h"
#include "ops/tensor/tensor_params.h"

static tb_status trilu_infer(tb_infer_ctx *ctx) {
  tb_status st = tb_infer_require(ctx, 0, 0);
  if (st != TB_OK) return st;
  if (tb_tt_has(ctx, 1) && (st = tb_infer_require(ctx, 1, TT_I64)) != TB_OK) return st;
  tb_trilu_params tp = {0};
  if ((st = tb_infer_params(ctx, &tp, sizeof tp)) != TB_OK) return st;
  const tb_value_type *in = tb_tt_ranked(ctx, 0);
  if (in && in->ndim < 2) return tb_infer_error(ctx, TB_ERR_MODEL, "the input must have rank 2 or more, not %zu", in->ndim);
  tb_infer_same(ctx->in[0], &ctx->out[0]);
  return TB_OK;
}

const tb_op_def tb_op_trilu = {"", "Trilu", 14, 1, 2, 1, 1, 0, trilu_infer, sizeof(tb_trilu_params), tb_trilu_parse};

static tb_status cumsum_infer(tb_infer_ctx *ctx) {
  tb_status st = tb_infer_require(ctx, 0, TT_NUMBERS);
  if (st != TB_OK) return st;
  if ((st = tb_infer_require(ctx, 1, TT_INDEX_TYPES)) != TB_OK) return st;
  const tb_value_type *ax = tb_tt_ranked(ctx, 1);
  if (ax && !(ax->ndim == 0 || (ax->ndim == 1 && ax->dims[0].value == 1)))
    return tb_infer_error(ctx, TB_ERR_MODEL, "axis must be a scalar, not rank %zu", ax->ndim);
  tb_cumsum_params cp = {0};
  if ((st = tb_infer_params(ctx, &cp, sizeof cp)) != TB_OK) return st;
  tb_infer_same(ctx->in[0], &ctx->out[0]);
  return TB_OK;
}

/* The axis is a value input: a constant axis stays on the host, where a device kernel reads it without a copy back
 * (one that would rule out the CUDA graph capture; cuda_ops_argtopk.c). */
const tb_op_def tb_op_cumsum = {"", "CumSum", 11, 2, 2, 1, 1, 1u << 1, cumsum_infer, sizeof(tb_cumsum_params), tb_cumsum_parse};

static tb_status reverse_sequence_infer(tb_infer_ctx *ctx) {
  tb_status st = tb_infer_require(ctx, 0, 0);
  if (st != TB_OK) return st;
  if ((st = tb_infer_require(ctx, 1, TT_I64)) != TB_OK) return st;
  tb_reverse_sequence_params rp = {0};
  if ((st = tb_infer_params(ctx, &rp, sizeof rp)) != TB_OK) return st;
  int64_t batch = rp.batch_axis;
  const tb_value_type *in = tb_tt_ranked(ctx, 0), *lens = tb_tt_ranked(ctx, 1);
  if (in && in->ndim < 2) return tb_infer_error(ctx, TB_ERR_MODEL, "the input must have rank 2 or more, not %zu", in->ndim);
  if (lens && lens->ndim != 1) return tb_infer_error(ctx, TB_ERR_MODEL, "sequence_lens must be 1-D, not rank %zu", lens->ndim);
  if (in && lens && in->dims[batch].value >= 0 && lens->dims[0].value >= 0 && in->dims[batch].value != lens->dims[0].value)
    return tb_infer_error(ctx, TB_ERR_MODEL, "sequence_lens has %lld entries for a batch of %lld",
                          (long long)lens->dims[0].value, (long long)in->dims[batch].value);
  tb_infer_same(ctx->in[0], &ctx->out[0]);
  return TB_OK;
}

const tb_op_def tb_op_reverse_sequence = {"", "ReverseSequence", 10, 2, 2, 1, 1, 0, reverse_sequence_infer, sizeof(tb_reverse_sequence_params), tb_reverse_sequence_parse};
