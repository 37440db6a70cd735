/* Slice: starts/ends/axes as attributes (opset 1), or starts/ends/axes/steps as inputs (opset 10+). */
#include <string.h>
#include "ops/op_params.h"
#include "ops/tensor/shape_rules.h"
#include "ops/tensor/tensor_infer.h"
#include "ops/tensor/tensor_params.h"

/* The slice parameters: *known false when an input's value is not known yet. axes/steps NULL when absent. */
static tb_status slice_params(tb_infer_ctx *ctx, const tb_slice_params *p, int64_t *starts, int64_t *ends, int64_t *axes, int64_t *steps,
                              size_t *n, bool *has_axes, bool *has_steps, bool *known) {
  tb_status st;
  *has_axes = *has_steps = false;
  *known = true;
  if (!p->from_inputs) {
    memcpy(starts, p->starts, p->n * sizeof *starts);
    memcpy(ends, p->ends, p->n * sizeof *ends);
    memcpy(axes, p->axes, p->n * sizeof *axes);
    *has_axes = p->has_axes;
    *n = p->n;
    return TB_OK;
  }
  int64_t len[4] = {-1, -1, -1, -1};
  bool k[4] = {true, true, true, true};
  int64_t *dst[4] = {starts, ends, axes, steps};
  for (size_t i = 0; i < 4; i++) {
    if (!tb_tt_has(ctx, i + 1)) {
      if (i < 2) return tb_infer_error(ctx, TB_ERR_MODEL, "input %zu (%s) is required", i + 1, i ? "ends" : "starts");
      continue;
    }
    if ((st = tb_infer_require(ctx, i + 1, TT_INDEX_TYPES)) != TB_OK) return st;
    if ((st = tb_tt_input_ints(ctx, i + 1, dst[i], TB_MAX_DIMS, &len[i], &k[i])) != TB_OK) return st;
    if (i == 2) *has_axes = true;
    if (i == 3) *has_steps = true;
  }
  *known = k[0] && k[1] && k[2] && k[3];
  for (size_t i = 1; i < 4; i++)
    if (len[i] >= 0 && len[0] >= 0 && len[i] != len[0])
      return tb_infer_error(ctx, TB_ERR_MODEL, "starts has %lld entries but input %zu has %lld", (long long)len[0], i + 1,
                            (long long)len[i]);
  *n = len[0] >= 0 ? (size_t)len[0] : 0;
  return TB_OK;
}

static tb_status slice_infer(tb_infer_ctx *ctx) {
  tb_status st = tb_infer_require(ctx, 0, 0);
  if (st != TB_OK) return st;
  tb_dtype dt = ctx->in[0]->dtype;
  int64_t starts[TB_MAX_DIMS], ends[TB_MAX_DIMS], axes[TB_MAX_DIMS], steps[TB_MAX_DIMS];
  size_t n;
  bool has_axes, has_steps, known;
  tb_slice_params sp = {0};
  if ((st = tb_infer_params(ctx, &sp, sizeof sp)) != TB_OK) return st;
  if ((st = slice_params(ctx, &sp, starts, ends, axes, steps, &n, &has_axes, &has_steps, &known)) != TB_OK) return st;
  const tb_value_type *in = tb_tt_ranked(ctx, 0);
  if (!in) {
    tb_tt_out_unranked(ctx, 0, dt);
    return TB_OK;
  }
  if (!known) {
    tb_tt_out_rank(ctx, 0, dt, in->ndim);
    return TB_OK;
  }
  int64_t dims[TB_MAX_DIMS];
  tb_tt_dims(in, dims);
  tb_slice_plan plan;
  char why[300];
  if (!tb_rule_slice_plan(in->ndim, dims, n, starts, ends, has_axes ? axes : NULL, has_steps ? steps : NULL, &plan, why,
                          sizeof why))
    return tb_infer_error(ctx, TB_ERR_MODEL, "%s", why);
  tb_tt_out_dims(ctx, 0, dt, in->ndim, plan.count);
  for (size_t d = 0; d < in->ndim; d++)
    if (plan.first[d] == 0 && plan.step[d] == 1 && plan.count[d] == dims[d]) ctx->out[0].dims[d] = in->dims[d];
  return TB_OK;
}

const tb_op_def tb_op_slice_1 = {"", "Slice", 1, 1, 1, 1, 1, 0, slice_infer, sizeof(tb_slice_params), tb_slice_parse};
const tb_op_def tb_op_slice_10 = {"", "Slice", 10, 3, 5, 1, 1, 0x1eu, slice_infer, sizeof(tb_slice_params), tb_slice_parse};

/* The same parameters for the kernel, from the concrete inputs (values known). */
tb_status tb_slice_infer_plan(tb_infer_ctx *ctx, const tb_slice_params *p, tb_slice_plan *plan) {
  int64_t starts[TB_MAX_DIMS], ends[TB_MAX_DIMS], axes[TB_MAX_DIMS], steps[TB_MAX_DIMS];
  size_t n;
  bool has_axes, has_steps, known;
  tb_status st = slice_params(ctx, p, starts, ends, axes, steps, &n, &has_axes, &has_steps, &known);
  if (st != TB_OK) return st;
  const tb_value_type *in = tb_tt_ranked(ctx, 0);
  if (!known || !in) return tb_infer_error(ctx, TB_ERR_INTERNAL, "slice parameters are not known");
  int64_t dims[TB_MAX_DIMS];
  tb_tt_dims(in, dims);
  char why[300];
  if (!tb_rule_slice_plan(in->ndim, dims, n, starts, ends, has_axes ? axes : NULL, has_steps ? steps : NULL, plan, why,
                          sizeof why))
    return tb_infer_error(ctx, TB_ERR_MODEL, "%s", why);
  return TB_OK;
}
