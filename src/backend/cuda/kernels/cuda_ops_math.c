/* CUDA kernels of the elementwise math beyond float32's basic set (kernels/12_math.cu), for the dtypes the CPU
 * reference takes: the trigonometric and hyperbolic ops, Round, Sign, Softsign, Shrink, ThresholdedRelu, Celu,
 * Selu, HardSwish, tb::Silu and tb::Mish on float32, float64, float16 and bfloat16 (the halves in float32); Sign, Abs and Neg on the integers (Abs and Neg
 * of float64 and the halves too: float32 is 10_elementwise.cu's); IsNaN and IsInf; Mod and BitShift with
 * broadcasting; Sum, Mean, Max and Min of any number of broadcasting inputs (each input folded into the output in
 * order, as the CPU; the halves through a float32 accumulator, rounded once). */
#include <stdio.h>
#include <string.h>
#include "backend/cuda/kernels/cuda_ew.h"
#include "backend/cuda/kernels/cuda_ops.h"
#include "backend/tensor/tensor_impl.h"
#include "core/error.h"
#include "ops/elementwise/ew_params.h"

typedef struct math_op {
  const char *domain, *name;
  int op;
} math_op;

static const math_op float_ops[] = {
    {"", "Acos", TB_CUDA_EW_ACOS},         {"", "Acosh", TB_CUDA_EW_ACOSH},
    {"", "Asin", TB_CUDA_EW_ASIN},         {"", "Asinh", TB_CUDA_EW_ASINH},
    {"", "Atan", TB_CUDA_EW_ATAN},         {"", "Atanh", TB_CUDA_EW_ATANH},
    {"", "Cos", TB_CUDA_EW_COS},           {"", "Cosh", TB_CUDA_EW_COSH},
    {"", "Sin", TB_CUDA_EW_SIN},           {"", "Sinh", TB_CUDA_EW_SINH},
    {"", "Tan", TB_CUDA_EW_TAN},           {"", "Round", TB_CUDA_EW_ROUND},
    {"", "Sign", TB_CUDA_EW_SIGN},         {"", "Softsign", TB_CUDA_EW_SOFTSIGN},
    {"", "Shrink", TB_CUDA_EW_SHRINK},     {"", "ThresholdedRelu", TB_CUDA_EW_THRESHOLDED_RELU},
    {"", "Celu", TB_CUDA_EW_CELU},         {"", "Selu", TB_CUDA_EW_SELU},
    {"", "HardSwish", TB_CUDA_EW_HARD_SWISH}, {"tb", "Silu", TB_CUDA_EW_SILU},
    {"tb", "Mish", TB_CUDA_EW_MISH},       {"", "Abs", TB_CUDA_EW_ABS},
    {"", "Neg", TB_CUDA_EW_NEG},
};

static int op_of(const char *domain, const char *name) {
  for (size_t i = 0; i < sizeof float_ops / sizeof float_ops[0]; i++)
    if (strcmp(float_ops[i].name, name) == 0 && strcmp(float_ops[i].domain, domain) == 0) return float_ops[i].op;
  return -1;
}

static const char *const int_math_kernels[TB_CUDA_EW_TYPES] = {NULL, NULL, "tb_cu_ew_int_math_i8", "tb_cu_ew_int_math_i16", "tb_cu_ew_int_math_i32",
                                                "tb_cu_ew_int_math_i64", "tb_cu_ew_int_math_u8"};
static const char *const classify_kernels[TB_CUDA_EW_TYPES] = {"tb_cu_ew_classify_f32", "tb_cu_ew_classify_f64", [7] = "tb_cu_ew_classify_f16",
                                                                  "tb_cu_ew_classify_bf16"};
static const char *const mod_kernels[TB_CUDA_EW_TYPES] = {"tb_cu_ew_mod_f32", "tb_cu_ew_mod_f64", "tb_cu_ew_mod_i8", "tb_cu_ew_mod_i16",
                                           "tb_cu_ew_mod_i32", "tb_cu_ew_mod_i64", "tb_cu_ew_mod_u8", "tb_cu_ew_mod_f16", "tb_cu_ew_mod_bf16"};
static const char *const bitshift_kernels[TB_CUDA_EW_TYPES] = {NULL, NULL, NULL, NULL, NULL, NULL, "tb_cu_ew_bitshift_u8"};
static const char *const accumulate_kernels[TB_CUDA_EW_TYPES] = {"tb_cu_ew_accumulate_f32", "tb_cu_ew_accumulate_f64", [7] = "tb_cu_ew_accumulate_f16",
                                                                    "tb_cu_ew_accumulate_bf16"};

/* The float dtypes: float16 and bfloat16 computed in float32 and rounded once, as the CPU's staging. */
static bool is_float(tb_dtype dt) { return dt == TB_DTYPE_F32 || dt == TB_DTYPE_F64 || tb_cuda_ew_is_half(dt); }
static bool is_int(tb_dtype dt) {
  return dt == TB_DTYPE_I8 || dt == TB_DTYPE_I16 || dt == TB_DTYPE_I32 || dt == TB_DTYPE_I64 || dt == TB_DTYPE_U8;
}

/* Input i's dtype, or TB_DTYPE_COUNT where it is missing or unknown. */
static tb_dtype in_dtype(const tb_kernel_query *q, size_t i) {
  return i < q->n_inputs && q->in[i] && q->in[i]->has_dtype ? q->in[i]->dtype : TB_DTYPE_COUNT;
}

/* Every input present with the same dtype, at least min of them, one output; that dtype, or TB_DTYPE_COUNT. */
static tb_dtype common_dtype(const tb_kernel_query *q, size_t min) {
  if (q->n_inputs < min || q->n_outputs != 1) return TB_DTYPE_COUNT;
  tb_dtype dt = in_dtype(q, 0);
  for (size_t i = 1; i < q->n_inputs; i++)
    if (in_dtype(q, i) != dt) return TB_DTYPE_COUNT;
  return dt;
}

/* ---- Unary ---------------------------------------------------------------------------------------------- */

static bool unary_accepts(const tb_kernel_query *q) {
  tb_dtype dt = common_dtype(q, 1);
  if (q->n_inputs != 1) return false;
  int op = op_of(q->domain, q->op_type);
  if (op == TB_CUDA_EW_ABS || op == TB_CUDA_EW_NEG) /* float32 Abs and Neg are 10_elementwise.cu's; unsigned Neg the CPU's refusal */
    return dt == TB_DTYPE_F64 || tb_cuda_ew_is_half(dt) || (is_int(dt) && !(op == TB_CUDA_EW_NEG && dt == TB_DTYPE_U8));
  if (op == TB_CUDA_EW_SIGN) return is_float(dt) || is_int(dt);
  return op >= 0 && is_float(dt);
}

static tb_status unary_run(tb_kernel_ctx *ctx) {
  const tb_tensor *x = ctx->inputs[0];
  tb_tensor *y = NULL;
  tb_status st = tb_kernel_output(ctx, 0, x->dtype, x->ndim, x->shape, &y);
  if (st != TB_OK) return st;
  const tb_act_params *p = ctx->params; /* Shrink, ThresholdedRelu, Celu, Selu; NULL for the rest */
  tb_cuda_ew d = {.op = op_of(ctx->domain, ctx->op_type)};
  if (p) d.alpha = p->alpha, d.beta = p->beta, d.gamma = p->gamma;
  const char *kernel = tb_cuda_ew_typed(is_float(x->dtype) ? tb_cuda_ew_math_kernels : int_math_kernels, x->dtype);
  return tb_cuda_ew_go(ctx, kernel, x, NULL, y, NULL, tb_tensor_numel(y), &d, TB_CUDA_EW_ELEMENTS);
}

/* IsNaN, IsInf (detect_negative, detect_positive): a float dtype in, bool out. */
static bool classify_accepts(const tb_kernel_query *q) { return q->n_inputs == 1 && is_float(common_dtype(q, 1)); }

static tb_status classify_run(tb_kernel_ctx *ctx) {
  const tb_tensor *x = ctx->inputs[0];
  tb_tensor *y = NULL;
  tb_status st = tb_kernel_output(ctx, 0, TB_DTYPE_BOOL, x->ndim, x->shape, &y);
  if (st != TB_OK) return st;
  tb_cuda_ew d = {.op = TB_CUDA_EW_ISNAN};
  if (strcmp(ctx->op_type, "IsInf") == 0) {
    const tb_isinf_params *p = ctx->params;
    d.op = TB_CUDA_EW_ISINF;
    d.flags = (p && p->detect_negative ? TB_CUDA_EW_F_NEGATIVE : 0) | (p && p->detect_positive ? TB_CUDA_EW_F_POSITIVE : 0);
  }
  return tb_cuda_ew_go(ctx, tb_cuda_ew_typed(classify_kernels, x->dtype), x, NULL, y, NULL, tb_tensor_numel(y), &d, TB_CUDA_EW_ELEMENTS);
}

/* ---- Binary with broadcasting: Mod, BitShift ------------------------------------------------------------ */

/* The broadcast failure in tb_last_error() as the node's error (copied first: the node's error replaces it). */
static tb_status shape_error(tb_kernel_ctx *ctx, tb_status st, size_t input) {
  char why[512];
  snprintf(why, sizeof why, "%s", tb_last_error());
  return tb_kernel_error(ctx, st, "input %zu: %s", input, why);
}

/* y = a op b through kernel with a's and b's broadcast (its descriptor in d->bc); the output made here. */
static tb_status broadcast_run(tb_kernel_ctx *ctx, const char *kernel, tb_cuda_ew *d) {
  const tb_tensor *a = ctx->inputs[0], *b = ctx->inputs[1];
  int64_t shape[TB_MAX_DIMS];
  size_t ndim = 0;
  bool same = false;
  tb_status st = tb_cuda_broadcast_make(a->ndim, a->shape, b->ndim, b->shape, &d->bc, shape, &ndim, &same);
  if (st != TB_OK) return shape_error(ctx, st, 1);
  tb_tensor *y = NULL;
  if ((st = tb_kernel_output(ctx, 0, a->dtype, ndim, shape, &y)) != TB_OK) return st;
  return tb_cuda_ew_go(ctx, kernel, a, b, y, NULL, tb_tensor_numel(y), d, TB_CUDA_EW_ELEMENTS);
}

/* Mod: fmod 1 on floats and integers, fmod 0 (Python's sign rule) on integers, as the CPU kernel. */
static bool mod_accepts(const tb_kernel_query *q) {
  const tb_mod_params *p = q->params;
  tb_dtype dt = common_dtype(q, 2);
  return p && q->n_inputs == 2 && (is_int(dt) || (is_float(dt) && p->fmod));
}

static tb_status mod_run(tb_kernel_ctx *ctx) {
  const tb_mod_params *p = ctx->params;
  tb_cuda_ew d = {.flags = p->fmod ? TB_CUDA_EW_F_FMOD : 0};
  return broadcast_run(ctx, tb_cuda_ew_typed(mod_kernels, ctx->inputs[0]->dtype), &d);
}

/* BitShift: uint8, as the CPU kernel. */
static bool bitshift_accepts(const tb_kernel_query *q) { return q->params && q->n_inputs == 2 && common_dtype(q, 2) == TB_DTYPE_U8; }

static tb_status bitshift_run(tb_kernel_ctx *ctx) {
  const tb_bitshift_params *p = ctx->params;
  tb_cuda_ew d = {.flags = p->left ? TB_CUDA_EW_F_LEFT : 0};
  return broadcast_run(ctx, tb_cuda_ew_typed(bitshift_kernels, ctx->inputs[0]->dtype), &d);
}

/* ---- Sum, Mean, Max, Min -------------------------------------------------------------------------------- */

static const char *const fold_kernels[TB_CUDA_EW_TYPES] = {[7] = "tb_cu_ew_fold_f16", "tb_cu_ew_fold_bf16"};

/* Any count of one float dtype (two-input Max and Min are cuda_ops_elementwise.c's). */
static bool fold_accepts(const tb_kernel_query *q) { return is_float(common_dtype(q, 1)); }

/* The fold's operation: TB_CUDA_EW_ADD for Sum and Mean. */
static int fold_op(const char *op_type) {
  return strcmp(op_type, "Max") == 0 ? TB_CUDA_EW_MAX : strcmp(op_type, "Min") == 0 ? TB_CUDA_EW_MIN : TB_CUDA_EW_ADD;
}

/* Sum or Mean of one or two float16 / bfloat16 inputs in one pass, y = (x0 [+ x1]) / count in float32. */
static tb_status fold_half_run(tb_kernel_ctx *ctx, const int64_t *shape, size_t ndim) {
  tb_tensor *y = NULL;
  tb_status st = tb_kernel_output(ctx, 0, ctx->inputs[0]->dtype, ndim, shape, &y);
  if (st != TB_OK) return st;
  const tb_tensor *a = ctx->inputs[0], *b = ctx->n_inputs > 1 ? ctx->inputs[1] : NULL;
  tb_cuda_ew d = {.flags = b ? 0 : TB_CUDA_EW_F_FIRST, .alpha = strcmp(ctx->op_type, "Mean") == 0 ? (double)ctx->n_inputs : 1.0};
  int64_t out_shape[TB_MAX_DIMS];
  size_t out_ndim = 0;
  bool same = false;
  if (b && (st = tb_cuda_broadcast_make(a->ndim, a->shape, b->ndim, b->shape, &d.bc, out_shape, &out_ndim, &same)) != TB_OK)
    return shape_error(ctx, st, 1);
  return tb_cuda_ew_go(ctx, tb_cuda_ew_typed(accumulate_kernels, y->dtype), a, b, y, NULL, tb_tensor_numel(y), &d, TB_CUDA_EW_ELEMENTS);
}

/* Sum and Mean of three or more float16 / bfloat16 inputs, Max and Min of one or three and more: each input in
 * order folded into a float32 accumulator of the output's shape (a device block from the allocator's cache, given
 * back in stream order), the last pass writing the output rounded once (Mean: divided by the count first), as the
 * CPU folds them in float32. */
static tb_status fold_half_acc_run(tb_kernel_ctx *ctx, const int64_t *shape, size_t ndim) {
  tb_tensor *y = NULL;
  tb_status st = tb_kernel_output(ctx, 0, ctx->inputs[0]->dtype, ndim, shape, &y);
  if (st != TB_OK) return st;
  int64_t count = tb_tensor_numel(y);
  size_t n = ctx->n_inputs;
  if (count == 0) return TB_OK;
  tb_tensor *acc = NULL;
  if (n > 1 && (st = tb_tensor_create(ctx->backend, TB_DTYPE_F32, ndim, shape, &acc)) != TB_OK) {
    char why[512];
    snprintf(why, sizeof why, "%s", tb_last_error());
    return tb_kernel_error(ctx, st, "the float32 accumulator of %lld elements: %s", (long long)count, why);
  }
  const char *kernel = tb_cuda_ew_typed(fold_kernels, y->dtype);
  tb_cuda_ew d = {.op = fold_op(ctx->op_type)};
  bool mean = strcmp(ctx->op_type, "Mean") == 0, same = false;
  for (size_t i = 0; i < n && st == TB_OK; i++) {
    const tb_tensor *x = ctx->inputs[i];
    int64_t out_shape[TB_MAX_DIMS];
    size_t out_ndim = 0;
    if ((st = tb_cuda_broadcast_make(ndim, shape, x->ndim, x->shape, &d.bc, out_shape, &out_ndim, &same)) != TB_OK) {
      st = shape_error(ctx, st, i);
      break;
    }
    bool last = i + 1 == n;
    d.flags = (i == 0 ? TB_CUDA_EW_F_FIRST : 0) | (last ? TB_CUDA_EW_F_LAST : 0);
    d.alpha = mean && last ? (double)n : 1.0;
    st = tb_cuda_ew_go(ctx, kernel, i == 0 ? NULL : acc, x, last ? y : acc, NULL, count, &d, TB_CUDA_EW_ELEMENTS);
  }
  tb_tensor_destroy(acc); /* the caching allocator keeps the block in stream order for the next node */
  return st;
}

/* The output has the broadcast shape of all inputs; each input in order is folded into it (the first copied),
 * Mean's last pass dividing by the input count: the CPU's order of operations, in the inputs' type (the halves:
 * in float32, rounded once). */
static tb_status fold_run(tb_kernel_ctx *ctx) {
  size_t n = ctx->n_inputs;
  int64_t shape[TB_MAX_DIMS];
  size_t ndim = 0;
  tb_cuda_ew d = {.op = fold_op(ctx->op_type)};
  bool same = false;
  tb_status st = TB_OK;
  for (size_t i = 0; i < n; i++) {
    const tb_tensor *x = ctx->inputs[i];
    if (!x) return tb_kernel_error(ctx, TB_ERR_INVALID_ARGUMENT, "input %zu is missing; give every input of %s", i, ctx->op_type);
    int64_t acc[TB_MAX_DIMS];
    memcpy(acc, shape, ndim * sizeof *acc);
    if (i == 0) ndim = x->ndim, memcpy(shape, x->shape, ndim * sizeof *shape);
    else if ((st = tb_cuda_broadcast_make(ndim, acc, x->ndim, x->shape, &d.bc, shape, &ndim, &same)) != TB_OK)
      return shape_error(ctx, st, i);
  }
  if (tb_cuda_ew_is_half(ctx->inputs[0]->dtype))
    return d.op == TB_CUDA_EW_ADD && n <= 2 ? fold_half_run(ctx, shape, ndim) : fold_half_acc_run(ctx, shape, ndim);
  tb_tensor *y = NULL;
  if ((st = tb_kernel_output(ctx, 0, ctx->inputs[0]->dtype, ndim, shape, &y)) != TB_OK) return st;
  int64_t count = tb_tensor_numel(y);
  const char *kernel = tb_cuda_ew_typed(accumulate_kernels, y->dtype);
  bool mean = strcmp(ctx->op_type, "Mean") == 0;
  for (size_t i = 0; i < n && st == TB_OK && count > 0; i++) {
    const tb_tensor *x = ctx->inputs[i];
    int64_t out_shape[TB_MAX_DIMS];
    size_t out_ndim = 0;
    if ((st = tb_cuda_broadcast_make(ndim, shape, x->ndim, x->shape, &d.bc, out_shape, &out_ndim, &same)) != TB_OK)
      return shape_error(ctx, st, i);
    d.flags = i == 0 ? TB_CUDA_EW_F_FIRST : 0;
    d.alpha = mean && i + 1 == n ? (double)n : 1.0;
    st = tb_cuda_ew_go(ctx, kernel, NULL, x, y, NULL, count, &d, TB_CUDA_EW_ELEMENTS);
  }
  return st;
}

#define UNARY(domain, op) TB_CUDA_KERNEL(domain, op, unary_accepts, unary_run)
static const tb_kernel kernels[] = {
    UNARY("", "Acos"),     UNARY("", "Acosh"),           UNARY("", "Asin"), UNARY("", "Asinh"), UNARY("", "Atan"),
    UNARY("", "Atanh"),    UNARY("", "Cos"),             UNARY("", "Cosh"), UNARY("", "Sin"),   UNARY("", "Sinh"),
    UNARY("", "Tan"),      UNARY("", "Round"),           UNARY("", "Sign"), UNARY("", "Softsign"), UNARY("", "Shrink"),
    UNARY("", "ThresholdedRelu"), UNARY("", "Celu"),     UNARY("", "Selu"), UNARY("", "HardSwish"), UNARY("tb", "Silu"),
    UNARY("tb", "Mish"),   UNARY("", "Abs"),             UNARY("", "Neg"),
    TB_CUDA_KERNEL("", "IsNaN", classify_accepts, classify_run),
    TB_CUDA_KERNEL("", "IsInf", classify_accepts, classify_run),
    TB_CUDA_KERNEL("", "Mod", mod_accepts, mod_run),
    TB_CUDA_KERNEL("", "BitShift", bitshift_accepts, bitshift_run),
    TB_CUDA_KERNEL("", "Sum", fold_accepts, fold_run),
    TB_CUDA_KERNEL("", "Mean", fold_accepts, fold_run),
    TB_CUDA_KERNEL("", "Max", fold_accepts, fold_run),
    TB_CUDA_KERNEL("", "Min", fold_accepts, fold_run),
};
const tb_cuda_family tb_cuda_family_math = {kernels, sizeof kernels / sizeof kernels[0]};
