/* Shape (with start/end from opset 15) and Size: facts about the input's shape as int64 tensors. */
#include "ops/op_params.h"
#include "ops/tensor/tensor_infer.h"
#include "ops/tensor/tensor_params.h"

/* The [start, end) range of dims Shape returns for a rank: negative values count from the end, then
 * both are clamped to [0, rank]. */
void tb_shape_range(int64_t rank, int64_t start, int64_t end, int64_t *first, int64_t *count) {
  if (start < 0) start += rank;
  if (end < 0) end += rank;
  start = start < 0 ? 0 : start > rank ? rank : start;
  end = end < 0 ? 0 : end > rank ? rank : end;
  *first = start;
  *count = end > start ? end - start : 0;
}

static tb_status shape_infer(tb_infer_ctx *ctx) {
  tb_status st = tb_infer_require(ctx, 0, 0);
  if (st != TB_OK) return st;
  tb_shape_params sp = {0};
  if ((st = tb_infer_params(ctx, &sp, sizeof sp)) != TB_OK) return st;
  const tb_value_type *in = tb_tt_ranked(ctx, 0);
  if (!in) {
    tb_tt_out_rank(ctx, 0, TB_DTYPE_I64, 1);
    return TB_OK;
  }
  int64_t first, count;
  tb_shape_range((int64_t)in->ndim, sp.start, sp.end, &first, &count);
  tb_tt_out_dims(ctx, 0, TB_DTYPE_I64, 1, &count);
  return TB_OK;
}

const tb_op_def tb_op_shape = {"", "Shape", 1, 1, 1, 1, 1, 0, shape_infer, sizeof(tb_shape_params), tb_shape_parse};

static tb_status size_infer(tb_infer_ctx *ctx) {
  tb_status st = tb_infer_require(ctx, 0, 0);
  if (st != TB_OK) return st;
  tb_tt_out_dims(ctx, 0, TB_DTYPE_I64, 0, NULL);
  return TB_OK;
}

const tb_op_def tb_op_size = {"", "Size", 1, 1, 1, 1, 1, 0, size_infer, 0, NULL};
