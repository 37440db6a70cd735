/* DepthToSpace (mode DCR or CRD from opset 11) and SpaceToDepth: NCHW blocks moved between channels and
 * the spatial dims. */
#include <string.h>
#include "ops/op_params.h"
#include "ops/tensor/tensor_infer.h"
#include "ops/tensor/tensor_params.h"

tb_status tb_depth_space_parse(const tb_graph *g, const tb_node *n, void *params) {
  tb_depth_space_params *p = params;
  p->to_space = strcmp(n->op_type, "DepthToSpace") == 0;
  tb_status st = tb_attr_int(g, n, "blocksize", 0, &p->blocksize);
  if (st != TB_OK) return st;
  if (!tb_node_attr(n, "blocksize") || p->blocksize < 1 || p->blocksize > 65536)
    return tb_node_error(g, n, TB_ERR_MODEL, "attribute 'blocksize' must be given and at least 1 (got %lld)",
                         (long long)p->blocksize);
  if (!p->to_space) return TB_OK;
  const char *mode;
  if ((st = tb_attr_string(g, n, "mode", "DCR", &mode)) != TB_OK) return st;
  if (strcmp(mode, "DCR") != 0 && strcmp(mode, "CRD") != 0)
    return tb_node_error(g, n, TB_ERR_MODEL, "unknown mode '%s' (DCR or CRD)", mode);
  p->crd = strcmp(mode, "CRD") == 0;
  return TB_OK;
}

static tb_status depth_space_infer(tb_infer_ctx *ctx) {
  tb_status st = tb_infer_require(ctx, 0, 0);
  if (st != TB_OK) return st;
  tb_dtype dt = ctx->in[0]->dtype;
  tb_depth_space_params dp = {0};
  if ((st = tb_infer_params(ctx, &dp, sizeof dp)) != TB_OK) return st;
  bool to_space = dp.to_space;
  int64_t b = dp.blocksize;
  const tb_value_type *in = tb_tt_ranked(ctx, 0);
  if (!in) {
    tb_tt_out_rank(ctx, 0, dt, 4);
    return TB_OK;
  }
  if (in->ndim != 4) return tb_infer_error(ctx, TB_ERR_MODEL, "the input must have rank 4 (NCHW), not %zu", in->ndim);
  int64_t c = in->dims[1].value, h = in->dims[2].value, w = in->dims[3].value;
  tb_dim out[4] = {in->dims[0], tb_tt_dim(-1), tb_tt_dim(-1), tb_tt_dim(-1)};
  if (to_space) {
    if (c >= 0 && c % (b * b) != 0)
      return tb_infer_error(ctx, TB_ERR_MODEL, "channels (%lld) must be a multiple of blocksize^2 (%lld)", (long long)c,
                            (long long)(b * b));
    out[1] = tb_tt_dim(c >= 0 ? c / (b * b) : -1);
    out[2] = tb_tt_dim(h >= 0 ? h * b : -1);
    out[3] = tb_tt_dim(w >= 0 ? w * b : -1);
  } else {
    if ((h >= 0 && h % b != 0) || (w >= 0 && w % b != 0))
      return tb_infer_error(ctx, TB_ERR_MODEL, "height %lld and width %lld must be multiples of blocksize %lld",
                            (long long)h, (long long)w, (long long)b);
    out[1] = tb_tt_dim(c >= 0 ? c * b * b : -1);
    out[2] = tb_tt_dim(h >= 0 ? h / b : -1);
    out[3] = tb_tt_dim(w >= 0 ? w / b : -1);
  }
  tb_tt_out_tdims(ctx, 0, dt, 4, out);
  return TB_OK;
}

const tb_op_def tb_op_depth_to_space = {"", "DepthToSpace", 1, 1, 1, 1, 1, 0, depth_space_infer, sizeof(tb_depth_space_params), tb_depth_space_parse};
const tb_op_def tb_op_space_to_depth = {"", "SpaceToDepth", 1, 1, 1, 1, 1, 0, depth_space_infer, sizeof(tb_depth_space_params), tb_depth_space_parse};
