/* Expand (broadcast to a shape given as input 1) and Tile (repeat along each axis). */
#include "ops/tensor/shape_rules.h"
#include "ops/tensor/tensor_infer.h"

static tb_status expand_infer(tb_infer_ctx *ctx) {
  tb_status st = tb_infer_require(ctx, 0, 0);
  if (st != TB_OK) return st;
  if ((st = tb_infer_require(ctx, 1, TT_I64)) != TB_OK) return st;
  tb_dtype dt = ctx->in[0]->dtype;
  int64_t shape[TB_MAX_DIMS], n;
  bool known;
  if ((st = tb_tt_input_ints(ctx, 1, shape, TB_MAX_DIMS, &n, &known)) != TB_OK) return st;
  const tb_value_type *in = tb_tt_ranked(ctx, 0);
  if (!in || !known) {
    if (in && n >= 0)
      tb_tt_out_rank(ctx, 0, dt, in->ndim > (size_t)n ? in->ndim : (size_t)n);
    else
      tb_tt_out_unranked(ctx, 0, dt);
    return TB_OK;
  }
  for (int64_t i = 0; i < n; i++)
    if (shape[i] < 0) return tb_infer_error(ctx, TB_ERR_MODEL, "shape has the negative size %lld", (long long)shape[i]);
  int64_t dims[TB_MAX_DIMS], out[TB_MAX_DIMS];
  tb_tt_dims(in, dims);
  char why[400];
  if (!tb_rule_broadcast(in->ndim, dims, (size_t)n, shape, out, why, sizeof why))
    return tb_infer_error(ctx, TB_ERR_MODEL, "%s", why);
  size_t rank = in->ndim > (size_t)n ? in->ndim : (size_t)n;
  tb_tt_out_dims(ctx, 0, dt, rank, out);
  return TB_OK;
}

const tb_op_def tb_op_expand = {"", "Expand", 8, 2, 2, 1, 1, 1u << 1, expand_infer, 0, NULL};

static tb_status tile_infer(tb_infer_ctx *ctx) {
  tb_status st = tb_infer_require(ctx, 0, 0);
  if (st != TB_OK) return st;
  if ((st = tb_infer_require(ctx, 1, TT_I64)) != TB_OK) return st;
  tb_dtype dt = ctx->in[0]->dtype;
  int64_t reps[TB_MAX_DIMS], n;
  bool known;
  if ((st = tb_tt_input_ints(ctx, 1, reps, TB_MAX_DIMS, &n, &known)) != TB_OK) return st;
  const tb_value_type *in = tb_tt_ranked(ctx, 0);
  if (!in) {
    if (n >= 0)
      tb_tt_out_rank(ctx, 0, dt, (size_t)n);
    else
      tb_tt_out_unranked(ctx, 0, dt);
    return TB_OK;
  }
  if (n >= 0 && (size_t)n != in->ndim)
    return tb_infer_error(ctx, TB_ERR_MODEL, "repeats has %lld entries for an input of rank %zu", (long long)n, in->ndim);
  if (!known) {
    tb_tt_out_rank(ctx, 0, dt, in->ndim);
    return TB_OK;
  }
  int64_t out[TB_MAX_DIMS];
  for (size_t d = 0; d < in->ndim; d++) {
    if (reps[d] < 0)
      return tb_infer_error(ctx, TB_ERR_MODEL, "repeats has the negative value %lld at %zu", (long long)reps[d], d);
    int64_t v = in->dims[d].value;
    if (v >= 0 && __builtin_mul_overflow(v, reps[d], &out[d]))
      return tb_infer_error(ctx, TB_ERR_MODEL, "dim %zu (%lld) times %lld overflows", d, (long long)v, (long long)reps[d]);
    if (v < 0) out[d] = reps[d] == 0 ? 0 : -1;
  }
  tb_tt_out_dims(ctx, 0, dt, in->ndim, out);
  for (size_t d = 0; d < in->ndim; d++)
    if (reps[d] == 1) ctx->out[0].dims[d] = in->dims[d];
  return TB_OK;
}

const tb_op_def tb_op_tile = {"", "Tile", 6, 2, 2, 1, 1, 1u << 1, tile_infer, 0, NULL};
