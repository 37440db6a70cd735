/* CUDA kernels that compute on any dtype (kernels/70_data.cu): Cast and CastLike between float64, float32,
 * float16, bfloat16, the integers and bool (the fp8 types run on the CPU); the comparisons Equal, Less,
 * Greater, LessOrEqual, GreaterOrEqual (bool output) and the logic ops And, Or, Xor, Not on bool, each with
 * ONNX broadcasting (opset 7 and up: the legacy broadcast attributes run on the CPU). */
#include <string.h>
#include "backend/cuda/kernels/cuda_dm.h"
#include "backend/cuda/kernels/cuda_ops.h"
#include "backend/tensor/tensor_impl.h"
#include "core/error.h"
#include "ops/elementwise/ew_params.h"

/* The dtypes the kernels' load and store know. */
static bool computable(tb_dtype dt) { return dt <= TB_DTYPE_BOOL && dt != TB_DTYPE_FP8_E4M3FN && dt != TB_DTYPE_FP8_E5M2; }

static tb_status cast_run(tb_kernel_ctx *ctx) {
  tb_status st = tb_kernel_outputs(ctx);
  if (st != TB_OK) return st;
  const tb_tensor *x = ctx->inputs[0];
  tb_tensor *y = ctx->outputs[0];
  if (x->dtype == y->dtype) return tb_cuda_copy_bytes(ctx, y, x);
  tb_cuda_dm d = {.mode = (int32_t)(x->dtype | y->dtype << 8)};
  return tb_cuda_dm_go(ctx, "tb_cu_dm_cast", x, NULL, NULL, y, tb_tensor_numel(y), &d, TB_CUDA_DM_ELEMENTS);
}

/* The output's broadcast shape is the executor's (inference); each input steps with its own strides. */
static tb_status broadcast_run(tb_kernel_ctx *ctx, const char *kernel, int mode, size_t n_in) {
  tb_status st = tb_kernel_outputs(ctx);
  if (st != TB_OK) return st;
  tb_tensor *y = ctx->outputs[0];
  tb_cuda_dm d = {.rank = (int32_t)y->ndim, .mode = mode};
  memcpy(d.dims, y->shape, y->ndim * sizeof *y->shape);
  for (size_t i = 0; i < n_in; i++) {
    const tb_tensor *t = ctx->inputs[i];
    if (t->ndim > y->ndim) return tb_kernel_error(ctx, TB_ERR_INTERNAL, "input %zu's rank %zu is over the output's %zu", i, t->ndim, y->ndim);
    tb_shape_bcast_strides(y->ndim, y->shape, t->ndim, t->shape, d.st[i]);
  }
  return tb_cuda_dm_go(ctx, kernel, ctx->inputs[0], n_in > 1 ? ctx->inputs[1] : NULL, NULL, y, tb_tensor_numel(y), &d,
                       TB_CUDA_DM_ELEMENTS);
}

static const char *const compare_ops[] = {"Equal", "Less", "Greater", "LessOrEqual", "GreaterOrEqual"};
static const char *const logic_ops[] = {"And", "Or", "Xor", "Not"};

static int index_of(const char *const *names, size_t n, const char *op) {
  for (size_t i = 0; i < n; i++)
    if (strcmp(names[i], op) == 0) return (int)i;
  return -1;
}

static tb_status compare_run(tb_kernel_ctx *ctx) {
  int op = index_of(compare_ops, sizeof compare_ops / sizeof compare_ops[0], ctx->op_type);
  return broadcast_run(ctx, "tb_cu_dm_compare", op | (int)ctx->inputs[0]->dtype << 8, 2);
}

static tb_status logic_run(tb_kernel_ctx *ctx) {
  int op = index_of(logic_ops, sizeof logic_ops / sizeof logic_ops[0], ctx->op_type);
  return broadcast_run(ctx, "tb_cu_dm_logic", op, op == 3 ? 1 : 2);
}

static bool cast_accepts(const tb_kernel_query *q) {
  const tb_cast_params *p = q->params;
  if (!p || q->n_outputs != 1 || !q->in[0] || !q->in[0]->has_dtype || !computable(q->in[0]->dtype)) return false;
  if (strcmp(q->op_type, "CastLike") == 0)
    return q->n_inputs == 2 && q->in[1] && q->in[1]->has_dtype && computable(q->in[1]->dtype);
  return q->n_inputs == 1 && computable(p->to);
}

/* Two inputs of one computable dtype (numpy broadcasting: no legacy attributes). */
static bool compare_accepts(const tb_kernel_query *q) {
  const tb_binary_params *p = q->params;
  return q->n_inputs == 2 && q->in[0] && q->in[1] && q->in[0]->has_dtype && q->in[1]->has_dtype && q->in[0]->dtype == q->in[1]->dtype &&
         computable(q->in[0]->dtype) && !(p && p->legacy) && q->n_outputs == 1;
}

static bool logic_accepts(const tb_kernel_query *q) {
  const tb_binary_params *p = q->params;
  size_t want = strcmp(q->op_type, "Not") == 0 ? 1 : 2;
  if (q->n_inputs != want || q->n_outputs != 1 || (p && p->legacy)) return false;
  for (size_t i = 0; i < want; i++)
    if (!q->in[i] || !q->in[i]->has_dtype || q->in[i]->dtype != TB_DTYPE_BOOL) return false;
  return true;
}

#define COMPARE(op) TB_CUDA_KERNEL("", op, compare_accepts, compare_run)
#define LOGIC(op) TB_CUDA_KERNEL("", op, logic_accepts, logic_run)
static const tb_kernel kernels[] = {
    TB_CUDA_KERNEL("", "Cast", cast_accepts, cast_run), TB_CUDA_KERNEL("", "CastLike", cast_accepts, cast_run),
    COMPARE("Equal"), COMPARE("Less"), COMPARE("Greater"), COMPARE("LessOrEqual"), COMPARE("GreaterOrEqual"),
    LOGIC("And"), LOGIC("Or"), LOGIC("Xor"), LOGIC("Not"),
};
const tb_cuda_family tb_cuda_family_logic = {kernels, sizeof kernels / sizeof kernels[0]};
