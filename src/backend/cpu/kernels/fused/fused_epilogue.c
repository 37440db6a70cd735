/* The fused kernels' shared parts: the ONNX kernel a fused op extends, and the residual + activation
 * epilogue on its output. */
#include <math.h>
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
  tb_node node = *ctx->node;
  node.op_type = base;
  node.domain = "";
  node.n_inputs = n_base < node.n_inputs ? n_base : node.n_inputs;
  node.def = NULL;
  tb_value_type types[8];
  const tb_value_type *in[8] = {NULL};
  for (size_t i = 0; i < n_base; i++)
    if (ctx->inputs[i]) {
      type_of(ctx->inputs[i], &types[i]);
      in[i] = &types[i];
    }
  const tb_cpu_kernel *k = tb_cpu_kernel_find(ctx->graph, &node, in, 0, 0);
  if (!k) return tb_kernel_error(ctx, TB_ERR_UNSUPPORTED, "no reference kernel for %s, which this fused node extends", base);
  tb_kernel_ctx sub = *ctx;
  sub.node = &node;
  sub.n_inputs = n_base;
  return k->run(&sub);
}

tb_status tb_fused_act_read(tb_kernel_ctx *ctx, tb_fused_act *act) {
  static const char *const names[] = {"Relu", "LeakyRelu", "Clip", "Sigmoid", "Tanh", "HardSigmoid", "HardSwish"};
  const char *name = NULL;
  float alpha, beta, lo, hi;
  tb_status st = tb_attr_string(ctx->graph, ctx->node, "activation", NULL, &name);
  if (st == TB_OK) st = tb_attr_float(ctx->graph, ctx->node, "activation_alpha", 0.01f, &alpha);
  if (st == TB_OK) st = tb_attr_float(ctx->graph, ctx->node, "activation_beta", 0.5f, &beta);
  if (st == TB_OK) st = tb_attr_float(ctx->graph, ctx->node, "activation_min", -INFINITY, &lo);
  if (st == TB_OK) st = tb_attr_float(ctx->graph, ctx->node, "activation_max", INFINITY, &hi);
  if (st != TB_OK) return st;
  memset(act, 0, sizeof *act);
  act->alpha = alpha;
  act->beta = beta;
  act->min = lo;
  act->max = hi;
  if (!name) return TB_OK;
  for (int i = 0; i < 7; i++)
    if (strcmp(name, names[i]) == 0) act->kind = i + 1;
  if (act->kind == 0) return tb_kernel_error(ctx, TB_ERR_MODEL, "unknown activation '%s'", name);
  return TB_OK;
}

double tb_fused_act_apply(const tb_fused_act *a, double x) {
  switch (a->kind) {
    case 1: return x < 0 ? 0.0 : x;
    case 2: return x < 0 ? a->alpha * x : x;
    case 3: return x < a->min ? a->min : x > a->max ? a->max : x;
    case 4: return 1.0 / (1.0 + exp(-x));
    case 5: return tanh(x);
    case 6: return fmax(0.0, fmin(1.0, a->alpha * x + a->beta));
    case 7: return x * fmax(0.0, fmin(1.0, x / 6.0 + 0.5));
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

tb_status tb_fused_epilogue(tb_kernel_ctx *ctx, const tb_tensor *residual) {
  tb_fused_act act;
  tb_status st = tb_fused_act_read(ctx, &act);
  tb_tensor *out = ctx->n_outputs > 0 ? ctx->outputs[0] : NULL;
  if (st != TB_OK || !out || (act.kind == 0 && !residual)) return st;
  if (residual && (tb_tensor_numel(residual) != tb_tensor_numel(out) || tb_tensor_ndim(residual) != tb_tensor_ndim(out) ||
                   memcmp(tb_tensor_shape(residual), tb_tensor_shape(out), tb_tensor_ndim(out) * sizeof(int64_t)) != 0))
    return tb_kernel_error(ctx, TB_ERR_INVALID_ARGUMENT, "the residual input's shape differs from the output's");
  double *y = NULL, *r = NULL;
  st = read_doubles(ctx, out, &y);
  if (st == TB_OK && residual) st = read_doubles(ctx, residual, &r);
  if (st == TB_OK) {
    tb_dtype dtype = tb_tensor_dtype(out);
    int64_t n = tb_tensor_numel(out);
    for (int64_t i = 0; i < n; i++) {
      double v = r ? round_to(dtype, y[i] + r[i]) : y[i];
      y[i] = tb_fused_act_apply(&act, v);
    }
    st = write_doubles(ctx, out, y);
  }
  free(y);
  free(r);
  return st;
}
