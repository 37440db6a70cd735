/* Level-2 Slice: the reference kernel's strided copy (tb_tk_slice_copy) without its per-run shape inference.
 * When starts, ends, axes and steps are constants (opset 1 attributes, or initializers and folded Constant
 * nodes from opset 10), prepare() keeps them and, when the input's shape is known, the plan itself, so a
 * run with that shape only copies; another shape gets its plan from the kept values. Runtime starts / ends
 * are read from their tensors on each run (int32 or int64, no inference context, no allocation). */
#include <stdlib.h>
#include <string.h>
#include "backend/cpu/kernels/fast/layout/layout_kernels.h"
#include "backend/cpu/kernels/tensor/tensor_kernel.h"
#include "ops/tensor/shape_rules.h"
#include "ops/tensor/tensor_params.h"

typedef struct slice_args {
  size_t n;
  bool has_axes, has_steps;
  int64_t starts[TB_MAX_DIMS], ends[TB_MAX_DIMS], axes[TB_MAX_DIMS], steps[TB_MAX_DIMS];
} slice_args;

typedef struct slice_state {
  slice_args args;
  bool planned; /* plan is the one for an input of rank `rank` and shape `dims` */
  size_t rank;
  int64_t dims[TB_MAX_DIMS];
  tb_slice_plan plan;
} slice_state;

static const char *const arg_names[4] = {"starts", "ends", "axes", "steps"};

/* Input i as int64 values when it is an int32 / int64 scalar or 1-D tensor of at most TB_MAX_DIMS values on
 * the host; false otherwise, with no message (prepare() then leaves the checks to run()). */
static bool ints_quiet(const tb_kernel_ctx *ctx, size_t i, int64_t *out, size_t *n) {
  const tb_tensor *t = ctx->inputs[i];
  tb_dtype dt = tb_tensor_dtype(t);
  int64_t count = tb_tensor_numel(t);
  const unsigned char *p = tb_tk_data(t);
  if ((dt != TB_DTYPE_I64 && dt != TB_DTYPE_I32) || tb_tensor_ndim(t) > 1 || count > TB_MAX_DIMS ||
      !tb_tensor_is_contiguous(t) || (count > 0 && !p))
    return false;
  for (int64_t k = 0; k < count; k++) out[k] = tb_tk_int_at(p, dt, k);
  *n = (size_t)count;
  return true;
}

/* The slice's starts/ends/axes/steps from the parameters (opset 1) or inputs 1-4, checked for equal lengths;
 * quiet (prepare): TB_ERR_MODEL without a message for anything run() would report. */
static tb_status read_args(tb_kernel_ctx *ctx, slice_args *a, bool quiet) {
  const tb_slice_params *p = ctx->params;
  memset(a, 0, sizeof *a);
  if (!p->from_inputs) {
    a->n = p->n;
    memcpy(a->starts, p->starts, p->n * sizeof *a->starts);
    memcpy(a->ends, p->ends, p->n * sizeof *a->ends);
    memcpy(a->axes, p->axes, p->n * sizeof *a->axes);
    a->has_axes = p->has_axes;
    return TB_OK;
  }
  int64_t *dst[4] = {a->starts, a->ends, a->axes, a->steps};
  for (size_t i = 0; i < 4; i++) {
    size_t len = 0;
    if (!tb_tk_has(ctx, i + 1)) {
      if (i < 2)
        return quiet ? TB_ERR_MODEL
                     : tb_kernel_error(ctx, TB_ERR_MODEL, "input %zu (%s) is required", i + 1, arg_names[i]);
      continue;
    }
    if (quiet) {
      if (!ints_quiet(ctx, i + 1, dst[i], &len)) return TB_ERR_MODEL;
    } else {
      tb_status st = tb_tk_input_ints(ctx, i + 1, dst[i], TB_MAX_DIMS, &len);
      if (st != TB_OK) return st;
    }
    if (i == 0) a->n = len;
    else if (len != a->n)
      return quiet ? TB_ERR_MODEL
                   : tb_kernel_error(ctx, TB_ERR_MODEL,
                                     "starts has %zu entries but %s (input %zu) has %zu; give one per sliced axis", a->n,
                                     arg_names[i], i + 1, len);
    if (i == 2) a->has_axes = true;
    if (i == 3) a->has_steps = true;
  }
  return TB_OK;
}

static tb_status make_plan(tb_kernel_ctx *ctx, const slice_args *a, size_t rank, const int64_t *dims, tb_slice_plan *plan) {
  char why[300];
  if (!tb_rule_slice_plan(rank, dims, a->n, a->starts, a->ends, a->has_axes ? a->axes : NULL,
                          a->has_steps ? a->steps : NULL, plan, why, sizeof why))
    return tb_kernel_error(ctx, TB_ERR_MODEL, "%s", why);
  return TB_OK;
}

static tb_status slice_prepare(tb_kernel_ctx *ctx, void **state) {
  *state = NULL;
  const tb_slice_params *p = ctx->params;
  for (size_t i = 1; p->from_inputs && i < 5 && i < ctx->n_inputs; i++)
    if (ctx->inputs && ctx->inputs[i] && !tb_kernel_input_constant(ctx, i)) return TB_OK; /* read per run */
  if (p->from_inputs && (!ctx->inputs || ctx->n_inputs < 3 || !ctx->inputs[1] || !ctx->inputs[2])) return TB_OK;
  slice_state *s = calloc(1, sizeof *s);
  if (!s) return tb_kernel_error(ctx, TB_ERR_OUT_OF_MEMORY, "no memory for the Slice plan");
  if (read_args(ctx, &s->args, true) != TB_OK) { /* run() reports it, the same way the reference does */
    free(s);
    return TB_OK;
  }
  const tb_value_type *in = ctx->in_types ? ctx->in_types[0] : NULL;
  bool known = in && in->kind == TB_VALUE_TENSOR && in->has_shape && in->ndim <= TB_MAX_DIMS;
  for (size_t d = 0; known && d < in->ndim; d++) known = in->dims[d].value >= 0;
  if (known) {
    char why[300];
    const slice_args *a = &s->args;
    s->rank = in->ndim;
    for (size_t d = 0; d < in->ndim; d++) s->dims[d] = in->dims[d].value;
    s->planned = tb_rule_slice_plan(s->rank, s->dims, a->n, a->starts, a->ends, a->has_axes ? a->axes : NULL,
                                    a->has_steps ? a->steps : NULL, &s->plan, why, sizeof why);
  }
  tb_kernel_set_method(ctx, s->planned ? "plan made at prepare" : "constant starts/ends kept at prepare");
  *state = s;
  return TB_OK;
}

static tb_status slice_run(tb_kernel_ctx *ctx) {
  const tb_tensor *x;
  const unsigned char *src;
  tb_status st = tb_tk_input(ctx, 0, &x, &src);
  if (st != TB_OK) return st;
  const slice_state *s = ctx->state;
  size_t rank = tb_tensor_ndim(x);
  const int64_t *dims = tb_tensor_shape(x);
  if (s && s->planned && s->rank == rank && !memcmp(s->dims, dims, rank * sizeof *dims))
    return tb_tk_slice_copy(ctx, x, src, &s->plan);
  tb_slice_plan plan;
  slice_args own;
  const slice_args *a = s ? &s->args : &own;
  if (!s && (st = read_args(ctx, &own, false)) != TB_OK) return st;
  if ((st = make_plan(ctx, a, rank, dims, &plan)) != TB_OK) return st;
  return tb_tk_slice_copy(ctx, x, src, &plan);
}

const tb_kernel tb_kernel_slice_fast = {.domain = "", .name = "Slice", .level = TB_KERNEL_FAST, .cpu_features = 0,
                                        .accepts = NULL, .run = slice_run, .prepare = slice_prepare, .release = free};
