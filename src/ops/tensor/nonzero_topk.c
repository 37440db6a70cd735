/* NonZero (opset 9: its output size depends on the data, so the kernel allocates it) and TopK (k as an
 * attribute in opset 1, as input 1 from 10; largest and sorted from 11). */
#include "ops/op_params.h"
#include "ops/tensor/tensor_infer.h"
#include "ops/tensor/tensor_params.h"

static tb_status nonzero_infer(tb_infer_ctx *ctx) {
  tb_status st = tb_infer_require(ctx, 0, 0);
  if (st != TB_OK) return st;
  const tb_value_type *in = tb_tt_ranked(ctx, 0);
  int64_t dims[2] = {in ? (int64_t)in->ndim : -1, -1};
  tb_tt_out_dims(ctx, 0, TB_DTYPE_I64, 2, dims);
  return TB_OK;
}

const tb_op_def tb_op_nonzero = {"", "NonZero", 9, 1, 1, 1, 1, 0, nonzero_infer, 0, NULL};

/* k of a TopK node; *known false when input 1's value is not known. */
tb_status tb_topk_k(const tb_infer_ctx *ctx, const tb_topk_params *p, int64_t *k, bool *known) {
  *known = false;
  if (p->k_attr) {
    *known = true;
    *k = p->k;
    return TB_OK;
  }
  tb_status st = tb_infer_require(ctx, 1, TT_I64);
  if (st != TB_OK) return st;
  int64_t v[1], n;
  if ((st = tb_tt_input_ints(ctx, 1, v, 1, &n, known)) != TB_OK) return st;
  if (*known && n != 1) return tb_infer_error(ctx, TB_ERR_MODEL, "k must hold one value, not %lld", (long long)n);
  *k = v[0];
  return TB_OK;
}

static tb_status topk_infer(tb_infer_ctx *ctx) {
  tb_status st = tb_infer_require(ctx, 0, TT_NUMBERS);
  if (st != TB_OK) return st;
  tb_dtype dt = ctx->in[0]->dtype;
  int64_t k;
  bool known;
  tb_topk_params tp = {0};
  if ((st = tb_infer_params(ctx, &tp, sizeof tp)) != TB_OK) return st;
  int64_t axis = tp.axis;
  if ((st = tb_topk_k(ctx, &tp, &k, &known)) != TB_OK) return st;
  const tb_value_type *in = tb_tt_ranked(ctx, 0);
  if (!in) {
    tb_tt_out_unranked(ctx, 0, dt);
    tb_tt_out_unranked(ctx, 1, TB_DTYPE_I64);
    return TB_OK;
  }
  size_t a;
  if (in->ndim == 0) return tb_infer_error(ctx, TB_ERR_MODEL, "the input must have rank 1 or more");
  if ((st = tb_infer_axis(ctx, "axis", axis, in->ndim, &a)) != TB_OK) return st;
  if (known && (k < 0 || (in->dims[a].value >= 0 && k > in->dims[a].value)))
    return tb_infer_error(ctx, TB_ERR_MODEL, "k %lld is out of range for axis %zu of size %lld", (long long)k, a,
                          (long long)in->dims[a].value);
  for (size_t o = 0; o < 2; o++) {
    tb_tt_out_tdims(ctx, o, o ? TB_DTYPE_I64 : dt, in->ndim, in->dims);
    if (o < ctx->n_outputs) ctx->out[o].dims[a] = tb_tt_dim(known ? k : -1);
  }
  return TB_OK;
}

const tb_op_def tb_op_topk_1 = {"", "TopK", 1, 1, 1, 2, 2, 0, topk_infer, sizeof(tb_topk_params), tb_topk_parse};
const tb_op_def tb_op_topk_10 = {"", "TopK", 10, 2, 2, 2, 2, 1u << 1, topk_infer, sizeof(tb_topk_params), tb_topk_parse};
