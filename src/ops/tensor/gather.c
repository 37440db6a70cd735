/* Gather, GatherElements, GatherND and the scatters (ScatterElements, Scatter, ScatterND): indexing by an
 * int32/int64 indices tensor. Inference checks ranks and axes; index values are checked by the kernels. */
#include "ops/op_params.h"
#include "ops/tensor/tensor_infer.h"
#include "ops/tensor/tensor_params.h"

/* Gather's and GatherElements' common start: data of any type, int32/int64 indices, the "axis"
 * attribute, and the ranked types of both (NULL when unranked). */
static tb_status indexed_begin(tb_infer_ctx *ctx, int64_t *axis, const tb_value_type **data, const tb_value_type **idx) {
  tb_status st = tb_infer_require(ctx, 0, 0);
  if (st != TB_OK) return st;
  if ((st = tb_infer_require(ctx, 1, TT_INDEX_TYPES)) != TB_OK) return st;
  tb_axis_params ap = {0};
  if ((st = tb_infer_params(ctx, &ap, sizeof ap)) != TB_OK) return st;
  *axis = ap.axis;
  *data = tb_tt_ranked(ctx, 0);
  *idx = tb_tt_ranked(ctx, 1);
  return TB_OK;
}

static tb_status gather_infer(tb_infer_ctx *ctx) {
  int64_t axis;
  const tb_value_type *data, *idx;
  tb_status st = indexed_begin(ctx, &axis, &data, &idx);
  if (st != TB_OK) return st;
  tb_dtype dt = ctx->in[0]->dtype;
  if (!data || !idx) {
    tb_tt_out_unranked(ctx, 0, dt);
    return TB_OK;
  }
  if (data->ndim == 0) return tb_infer_error(ctx, TB_ERR_MODEL, "data must have rank 1 or more, not 0");
  size_t a;
  if ((st = tb_infer_axis(ctx, "axis", axis, data->ndim, &a)) != TB_OK) return st;
  size_t rank = data->ndim - 1 + idx->ndim;
  if (rank > TB_MAX_DIMS)
    return tb_infer_error(ctx, TB_ERR_UNSUPPORTED, "the output would have rank %zu; at most %d is supported", rank,
                          TB_MAX_DIMS);
  tb_dim out[TB_MAX_DIMS];
  size_t k = 0;
  for (size_t d = 0; d < a; d++) out[k++] = data->dims[d];
  for (size_t d = 0; d < idx->ndim; d++) out[k++] = idx->dims[d];
  for (size_t d = a + 1; d < data->ndim; d++) out[k++] = data->dims[d];
  tb_tt_out_tdims(ctx, 0, dt, rank, out);
  return TB_OK;
}

const tb_op_def tb_op_gather = {"", "Gather", 1, 2, 2, 1, 1, 0, gather_infer, sizeof(tb_axis_params), tb_axis0_parse};

static tb_status gather_elements_infer(tb_infer_ctx *ctx) {
  int64_t axis;
  const tb_value_type *data, *idx;
  tb_status st = indexed_begin(ctx, &axis, &data, &idx);
  if (st != TB_OK) return st;
  tb_dtype dt = ctx->in[0]->dtype;
  if (!idx) {
    tb_tt_out_unranked(ctx, 0, dt);
    return TB_OK;
  }
  if (data) {
    size_t a;
    if (data->ndim != idx->ndim)
      return tb_infer_error(ctx, TB_ERR_MODEL, "indices has rank %zu but data has rank %zu (they must be equal)",
                            idx->ndim, data->ndim);
    if (data->ndim == 0) return tb_infer_error(ctx, TB_ERR_MODEL, "data must have rank 1 or more, not 0");
    if ((st = tb_infer_axis(ctx, "axis", axis, data->ndim, &a)) != TB_OK) return st;
  }
  tb_tt_out_tdims(ctx, 0, dt, idx->ndim, idx->dims);
  return TB_OK;
}

const tb_op_def tb_op_gather_elements = {"", "GatherElements", 11, 2, 2, 1, 1, 0, gather_elements_infer, sizeof(tb_axis_params), tb_axis0_parse};

static tb_status gather_nd_infer(tb_infer_ctx *ctx) {
  tb_status st = tb_infer_require(ctx, 0, 0);
  if (st != TB_OK) return st;
  if ((st = tb_infer_require(ctx, 1, TT_I64)) != TB_OK) return st;
  tb_dtype dt = ctx->in[0]->dtype;
  tb_gather_nd_params gp = {0};
  if ((st = tb_infer_params(ctx, &gp, sizeof gp)) != TB_OK) return st;
  int64_t b = gp.batch_dims;
  const tb_value_type *data = tb_tt_ranked(ctx, 0), *idx = tb_tt_ranked(ctx, 1);
  if (!data || !idx || idx->ndim == 0 || idx->dims[idx->ndim - 1].value < 0) {
    if (data && idx && idx->ndim == 0) return tb_infer_error(ctx, TB_ERR_MODEL, "indices must have rank 1 or more");
    tb_tt_out_unranked(ctx, 0, dt);
    return TB_OK;
  }
  int64_t r = (int64_t)data->ndim, q = (int64_t)idx->ndim, k = idx->dims[q - 1].value;
  if (b < 0 || b >= q || b >= r)
    return tb_infer_error(ctx, TB_ERR_MODEL, "batch_dims %lld must be less than both ranks (%lld, %lld)", (long long)b,
                          (long long)r, (long long)q);
  if (k < 1 || k > r - b)
    return tb_infer_error(ctx, TB_ERR_MODEL, "the last dim of indices (%lld) must be in [1, %lld]", (long long)k,
                          (long long)(r - b));
  for (int64_t d = 0; d < b; d++) {
    int64_t x = data->dims[d].value, y = idx->dims[d].value;
    if (x >= 0 && y >= 0 && x != y)
      return tb_infer_error(ctx, TB_ERR_MODEL, "batch dim %lld differs: data %lld, indices %lld", (long long)d,
                            (long long)x, (long long)y);
  }
  tb_dim out[TB_MAX_DIMS];
  size_t n = 0;
  for (int64_t d = 0; d < q - 1; d++) out[n++] = idx->dims[d];
  for (int64_t d = b + k; d < r; d++) out[n++] = data->dims[d];
  tb_tt_out_tdims(ctx, 0, dt, n, out);
  return TB_OK;
}

const tb_op_def tb_op_gather_nd = {"", "GatherND", 11, 2, 2, 1, 1, 0, gather_nd_infer, sizeof(tb_gather_nd_params), tb_gather_nd_parse};

static tb_status scatter_check(tb_infer_ctx *ctx, bool nd) {
  tb_status st = tb_infer_require(ctx, 0, 0);
  if (st != TB_OK) return st;
  tb_dtype dt = ctx->in[0]->dtype;
  if ((st = tb_infer_require(ctx, 1, nd ? TT_I64 : TT_INDEX_TYPES)) != TB_OK) return st;
  if ((st = tb_infer_require(ctx, 2, TB_DTYPE_BIT(dt))) != TB_OK) return st;
  tb_scatter_params sp = {0};
  if ((st = tb_infer_params(ctx, &sp, sizeof sp)) != TB_OK) return st;
  const tb_value_type *data = tb_tt_ranked(ctx, 0), *idx = tb_tt_ranked(ctx, 1), *upd = tb_tt_ranked(ctx, 2);
  if (!nd) {
    int64_t axis = sp.axis;
    if (idx && upd && idx->ndim != upd->ndim)
      return tb_infer_error(ctx, TB_ERR_MODEL, "indices (rank %zu) and updates (rank %zu) must have the same rank",
                            idx->ndim, upd->ndim);
    if (data && idx && data->ndim != idx->ndim)
      return tb_infer_error(ctx, TB_ERR_MODEL, "indices has rank %zu but data has rank %zu", idx->ndim, data->ndim);
    size_t a;
    if (data && (st = tb_infer_axis(ctx, "axis", axis, data->ndim, &a)) != TB_OK) return st;
  } else if (data && idx && upd && idx->ndim > 0 && idx->dims[idx->ndim - 1].value >= 0) {
    int64_t k = idx->dims[idx->ndim - 1].value;
    if (k > (int64_t)data->ndim)
      return tb_infer_error(ctx, TB_ERR_MODEL, "the last dim of indices (%lld) is more than the rank of data (%zu)",
                            (long long)k, data->ndim);
    size_t want = idx->ndim - 1 + data->ndim - (size_t)k;
    if (upd->ndim != want)
      return tb_infer_error(ctx, TB_ERR_MODEL, "updates has rank %zu; %zu expected", upd->ndim, want);
  }
  if (data)
    tb_tt_out_tdims(ctx, 0, dt, data->ndim, data->dims);
  else
    tb_tt_out_unranked(ctx, 0, dt);
  return TB_OK;
}

static tb_status scatter_elements_infer(tb_infer_ctx *ctx) { return scatter_check(ctx, false); }
static tb_status scatter_nd_infer(tb_infer_ctx *ctx) { return scatter_check(ctx, true); }

const tb_op_def tb_op_scatter = {"", "Scatter", 9, 3, 3, 1, 1, 0, scatter_elements_infer, sizeof(tb_scatter_params), tb_scatter_parse};
const tb_op_def tb_op_scatter_elements = {"", "ScatterElements", 11, 3, 3, 1, 1, 0, scatter_elements_infer, sizeof(tb_scatter_params), tb_scatter_parse};
const tb_op_def tb_op_scatter_nd = {"", "ScatterND", 11, 3, 3, 1, 1, 0, scatter_nd_infer, sizeof(tb_scatter_params), tb_scatter_parse};
