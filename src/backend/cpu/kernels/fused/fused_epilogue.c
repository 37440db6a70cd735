/* The fused kernels' shared parts: the ONNX kernel a fused op extends, and the bias + residual + activation
 * epilogue on its output. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "backend/cpu/kernels/fused/fused_kernel.h"

static void type_of(const tb_tensor *t, tb_value_type *out) {
  memset(out, 0, sizeof *out);
  out->kind = TB_VALUE_TENSOR;
  out->has_dtype = true;
  out->dtype = tb_tensor_dtype(t);
  out->has_shape = true;
  out->ndim = tb_tensor_ndim(t);
  for (size_t d = 0; d < out->ndim; d++) {
    out->dims[d].value = tb_tensor_shape(t)[d];
    out->dims[d].symbol = -1;
  }
}

tb_status tb_fused_run_base(tb_kernel_ctx *ctx, const char *base, size_t n_base) {
  if (n_base > ctx->n_inputs) n_base = ctx->n_inputs;
  if (n_base > 8) return tb_kernel_error(ctx, TB_ERR_INTERNAL, "%zu inputs for %s", n_base, base);
  tb_value_type types[8];
  const tb_value_type *in[8] = {NULL};
  for (size_t i = 0; i < n_base; i++)
    if (ctx->inputs[i]) {
      type_of(ctx->inputs[i], &types[i]);
      in[i] = &types[i];
    }
  /* FusedConv's and FusedGemm's parameters start with Conv's and Gemm's; MatMul has none */
  const void *params = strcmp(base, "MatMul") == 0 ? NULL : ctx->params;
  tb_kernel_query q = tb_kernel_ctx_query(ctx, in, TB_KERNEL_REFERENCE, 0);
  q.op_type = base;
  q.domain = "";
  q.params = params;
  q.n_inputs = n_base;
  const tb_kernel *k = tb_cpu_kernel_find(&q);
  if (!k) return tb_kernel_error(ctx, TB_ERR_UNSUPPORTED, "no reference kernel for %s, which this fused node extends", base);
  tb_kernel_ctx sub = *ctx;
  sub.op_type = base;
  sub.domain = "";
  sub.params = params;
  sub.n_inputs = n_base;
  return k->run(&sub);
}

tb_status tb_fused_act_read(tb_kernel_ctx *ctx, tb_fused_act *act) {
  memset(act, 0, sizeof *act);
  const tb_activation_params *p = tb_fused_activation(ctx->domain, ctx->op_type, ctx->params);
  if (!p) return TB_OK;
  act->kind = (int)p->kind;
  act->alpha = p->alpha;
  act->beta = p->beta;
  act->min = p->min;
  act->max = p->max;
  return TB_OK;
}

static double clamp01(double v) { return v < 0 ? 0.0 : v > 1 ? 1.0 : v; }

double tb_fused_act_apply(const tb_fused_act *a, double x) {
  const double k_tanh = 0.79788456080286535588, inv_sqrt2 = 0.70710678118654752440; /* sqrt(2/pi), 1/sqrt(2) */
  switch (a->kind) {
    case TB_FUSED_ACT_RELU: return x < 0 ? 0.0 : x;
    case TB_FUSED_ACT_LEAKY_RELU: return x < 0 ? a->alpha * x : x;
    case TB_FUSED_ACT_CLIP: return x < a->min ? a->min : x > a->max ? a->max : x;
    case TB_FUSED_ACT_SIGMOID: return 1.0 / (1.0 + exp(-x));
    case TB_FUSED_ACT_TANH: return tanh(x);
    /* clamped keeping NaN, as the HardSigmoid and HardSwish kernels do (fmin / fmax would drop it) */
    case TB_FUSED_ACT_HARD_SIGMOID: return clamp01(a->alpha * x + a->beta);
    case TB_FUSED_ACT_HARD_SWISH: return x * clamp01(x / 6.0 + 0.5);
    /* the expressions of tb::Gelu's reference kernel (fused/gelu.c), term for term */
    case TB_FUSED_ACT_GELU: return 0.5 * x * (1.0 + erf(x * inv_sqrt2));
    case TB_FUSED_ACT_GELU_TANH: return 0.5 * x * (1.0 + tanh(k_tanh * (x + 0.044715 * x * x * x)));
    /* the unfused graphs' expressions: x * Sigmoid(x) and x * Tanh(Softplus(x)) */
    case TB_FUSED_ACT_SILU: return x * (x >= 0 ? 1.0 / (1.0 + exp(-x)) : exp(x) / (1.0 + exp(x)));
    case TB_FUSED_ACT_MISH: return x * tanh(x > 0 ? x + log1p(exp(-x)) : log1p(exp(x)));
    default: return x;
  }
}

/* A tensor's elements as packed doubles (malloc'd). */
static tb_status read_doubles(tb_kernel_ctx *ctx, const tb_tensor *t, double **out) {
  size_t n = (size_t)tb_tensor_numel(t), bytes = tb_tensor_nbytes(t);
  double *d = malloc((n ? n : 1) * sizeof *d);
  void *raw = malloc(bytes ? bytes : 1);
  tb_status st = d && raw ? tb_tensor_copy_to_host(t, raw, bytes) : tb_kernel_error(ctx, TB_ERR_OUT_OF_MEMORY, "out of host memory (%zu bytes)", bytes);
  if (st == TB_OK) st = tb_convert(tb_tensor_dtype(t), raw, TB_DTYPE_F64, d, n, false);
  free(raw);
  if (st != TB_OK) free(d);
  *out = st == TB_OK ? d : NULL;
  return st;
}

static tb_status write_doubles(tb_kernel_ctx *ctx, tb_tensor *t, const double *d) {
  size_t n = (size_t)tb_tensor_numel(t), bytes = tb_tensor_nbytes(t);
  void *raw = malloc(bytes ? bytes : 1);
  if (!raw) return tb_kernel_error(ctx, TB_ERR_OUT_OF_MEMORY, "out of host memory (%zu bytes)", bytes);
  tb_status st = tb_convert(TB_DTYPE_F64, d, tb_tensor_dtype(t), raw, n, true);
  if (st == TB_OK) st = tb_tensor_copy_from_host(t, raw, bytes);
  free(raw);
  return st;
}

/* Round a double to the dtype's precision (what storing and reloading between two kernels does). */
static double round_to(tb_dtype dtype, double x) {
  if (dtype == TB_DTYPE_F32) return (double)(float)x;
  if (dtype == TB_DTYPE_F64) return x;
  double r = x;
  uint16_t half;
  if (tb_convert(TB_DTYPE_F64, &x, dtype, &half, 1, true) == TB_OK) (void)tb_convert(dtype, &half, TB_DTYPE_F64, &r, 1, false);
  return r;
}

static void format_shape(const tb_tensor *t, char *buf, size_t cap) {
  size_t len = (size_t)snprintf(buf, cap, "[");
  for (size_t d = 0; d < tb_tensor_ndim(t) && len < cap; d++)
    len += (size_t)snprintf(buf + len, cap - len, "%s%lld", d ? ", " : "", (long long)tb_tensor_shape(t)[d]);
  if (len < cap) snprintf(buf + len, cap - len, "]");
}

static bool same_shape(const tb_tensor *a, const tb_tensor *b) {
  return tb_tensor_ndim(a) == tb_tensor_ndim(b) &&
         memcmp(tb_tensor_shape(a), tb_tensor_shape(b), tb_tensor_ndim(a) * sizeof(int64_t)) == 0;
}

/* The bias holds N values, N the output's last dim, along its own last axis (other dims 1). */
static tb_status check_bias(tb_kernel_ctx *ctx, const tb_tensor *bias, const tb_tensor *out, int64_t *n) {
  size_t nd = tb_tensor_ndim(out), bd = tb_tensor_ndim(bias);
  *n = nd ? tb_tensor_shape(out)[nd - 1] : 1;
  int64_t count = tb_tensor_numel(bias);
  bool ok = count == *n && bd <= (nd ? nd : 1) && (bd == 0 ? *n == 1 : tb_tensor_shape(bias)[bd - 1] == *n);
  if (ok) return TB_OK;
  return tb_kernel_error(ctx, TB_ERR_INVALID_ARGUMENT,
                         "the bias (input 2) has %lld values (rank %zu); expected %lld, the output's last dimension",
                         (long long)count, bd, (long long)*n);
}

tb_status tb_fused_epilogue(tb_kernel_ctx *ctx, const tb_tensor *bias, const tb_tensor *residual) {
  tb_fused_act act;
  tb_status st = tb_fused_act_read(ctx, &act);
  tb_tensor *out = ctx->n_outputs > 0 ? ctx->outputs[0] : NULL;
  if (st != TB_OK || !out || (act.kind == 0 && !residual && !bias)) return st;
  if (residual && !same_shape(residual, out)) {
    char rs[128], ys[128];
    format_shape(residual, rs, sizeof rs);
    format_shape(out, ys, sizeof ys);
    return tb_kernel_error(ctx, TB_ERR_INVALID_ARGUMENT, "the residual (input 3) has shape %s; expected the output's %s", rs, ys);
  }
  int64_t n = 1;
  if (bias && (st = check_bias(ctx, bias, out, &n)) != TB_OK) return st;
  double *y = NULL, *r = NULL, *b = NULL;
  st = read_doubles(ctx, out, &y);
  if (st == TB_OK && residual) st = read_doubles(ctx, residual, &r);
  if (st == TB_OK && bias) st = read_doubles(ctx, bias, &b);
  if (st == TB_OK) {
    tb_dtype dtype = tb_tensor_dtype(out);
    int64_t count = tb_tensor_numel(out);
    for (int64_t i = 0; i < count; i++) {
      double v = b ? round_to(dtype, y[i] + b[n > 0 ? i % n : 0]) : y[i];
      if (r) v = round_to(dtype, v + r[i]);
      y[i] = tb_fused_act_apply(&act, v);
    }
    st = write_doubles(ctx, out, y);
  }
  free(y);
  free(r);
  free(b);
  return st;
}
