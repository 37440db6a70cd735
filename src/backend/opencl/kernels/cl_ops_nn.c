/* OpenCL kernels of the neural-network ops on float32: Conv and tb::FusedConv (1-D and 2-D, groups,
 * strides, pads and auto_pad, dilations; residual and activation in the same kernel), ConvTranspose (1-D
 * and 2-D, output_padding, output_shape), inference BatchNormalization, MaxPool / AveragePool (1-D, 2-D),
 * GlobalAveragePool / GlobalMaxPool, the Reduce ops, ArgMax / ArgMin, Softmax / LogSoftmax / Hardmax and
 * LayerNormalization (ONNX, with its Mean and InvStdDev outputs, and tb). The window geometry is the ops'
 * own (src/ops/nn/window.h), so the kernels pad exactly as inference sized the output. */
#include <stdlib.h>
#include <string.h>
#include "backend/cpu/kernels/fused/fused_kernel.h"
#include "backend/kernel_params.h"
#include "ops/fused/fused_params.h"
#include "backend/opencl/kernels/cl_ops.h"
#include "ops/fused/fused_params.h"
#include "ops/nn/reduce.h"
#include "ops/nn/window.h"

/* The spatial geometry as 2-D (a 1-D op is H = 1): sizes, kernel, strides, pads, dilations. */
typedef struct geo2 {
  int64_t h, w, oh, ow, kh, kw, sh, sw, ph, pw, dh, dw, ph_end, pw_end;
} geo2;

static tb_status geometry(tb_kernel_ctx *ctx, const tb_window_params *wp, const tb_tensor *x, const tb_tensor *y,
                          const int64_t *kernel, geo2 *g) {
  size_t ns = x->ndim - 2;
  if (x->ndim < 3 || x->ndim > 4 || y->ndim != x->ndim)
    return tb_kernel_error(ctx, TB_ERR_UNSUPPORTED, "the OpenCL kernel takes 1-D and 2-D windows (input rank %zu)", x->ndim);
  nn_window win;
  tb_status s = tb_nn_window_init(wp, ns, kernel, &win);
  for (size_t i = 0; s == TB_OK && i < ns; i++) {
    int64_t out = 0;
    s = tb_nn_window_out(&win, i, x->shape[2 + i], &out);
    if (s == TB_OK && out != y->shape[2 + i])
      s = tb_kernel_error(ctx, TB_ERR_INTERNAL, "window output %lld on axis %zu, the output has %lld", (long long)out, i,
                          (long long)y->shape[2 + i]);
  }
  if (s != TB_OK) return s;
  size_t o = ns == 1 ? 0 : 1; /* index of the W axis in the window */
  *g = (geo2){.h = ns == 1 ? 1 : x->shape[2], .w = x->shape[2 + o], .oh = ns == 1 ? 1 : y->shape[2], .ow = y->shape[2 + o],
              .kh = ns == 1 ? 1 : win.kernel[0], .kw = win.kernel[o], .sh = ns == 1 ? 1 : win.stride[0], .sw = win.stride[o],
              .ph = ns == 1 ? 0 : win.pad_begin[0], .pw = win.pad_begin[o], .dh = ns == 1 ? 1 : win.dilation[0],
              .dw = win.dilation[o], .ph_end = ns == 1 ? 0 : win.pad_end[0], .pw_end = win.pad_end[o]};
  return TB_OK;
}

static tb_status conv_common(tb_kernel_ctx *ctx, bool fused) {
  tb_status s = tb_kernel_outputs(ctx);
  if (s != TB_OK) return s;
  const tb_tensor *x = ctx->inputs[0], *w = ctx->inputs[1];
  const tb_tensor *bias = ctx->n_inputs > 2 ? ctx->inputs[2] : NULL, *res = fused && ctx->n_inputs > 3 ? ctx->inputs[3] : NULL;
  tb_tensor *y = ctx->outputs[0];
  const tb_conv_params *p = tb_kernel_params(ctx, &s); /* a FusedConv's parameters start with Conv's */
  if (!p) return s;
  int64_t group = p->group;
  if (w->ndim != x->ndim) return tb_kernel_error(ctx, TB_ERR_INVALID_ARGUMENT, "W has rank %zu, X %zu", w->ndim, x->ndim);
  geo2 g;
  if ((s = geometry(ctx, &p->win, x, y, w->shape + 2, &g)) != TB_OK) return s;
  int64_t c = x->shape[1], m = w->shape[0];
  if (group < 1 || c % group || m % group || w->shape[1] * group != c)
    return tb_kernel_error(ctx, TB_ERR_INVALID_ARGUMENT, "group %lld does not divide %lld input and %lld output channels", (long long)group,
                           (long long)c, (long long)m);
  if (res && tb_tensor_numel(res) != tb_tensor_numel(y))
    return tb_kernel_error(ctx, TB_ERR_INVALID_ARGUMENT, "the residual input's shape differs from the output's");
  tb_fused_act act = {0};
  if (fused && (s = tb_fused_act_read(ctx, &act)) != TB_OK) return s;
  float a = (float)(act.kind == 3 ? act.min : act.alpha), b = (float)(act.kind == 3 ? act.max : act.beta);
  cl_launch l;
  tb_cl_begin(&l, ctx, 0, "tb_conv2d");
  tb_cl_arg_tensor(&l, x);
  tb_cl_arg_tensor(&l, w);
  tb_cl_arg_tensor(&l, bias ? bias : w);
  tb_cl_arg_int(&l, bias != NULL);
  tb_cl_arg_tensor(&l, res ? res : y);
  tb_cl_arg_int(&l, res != NULL);
  tb_cl_arg_tensor(&l, y);
  tb_cl_arg_int(&l, tb_tensor_numel(y));
  int64_t geo[] = {c, g.h, g.w, m, g.oh, g.ow, g.kh, g.kw, g.sh, g.sw, g.ph, g.pw, g.dh, g.dw, group, act.kind};
  for (size_t i = 0; i < sizeof geo / sizeof geo[0]; i++) tb_cl_arg_int(&l, geo[i]);
  tb_cl_arg_float(&l, a);
  tb_cl_arg_float(&l, b);
  return tb_cl_go(&l, (size_t)tb_tensor_numel(y));
}

static tb_status conv_run(tb_kernel_ctx *ctx) { return conv_common(ctx, false); }
static tb_status fused_conv_run(tb_kernel_ctx *ctx) { return conv_common(ctx, true); }

/* ConvTranspose, 1-D and 2-D: the geometry (output_padding, output_shape, auto_pad) from the ops' window
 * functions, as the CPU kernel reads it; one work-item per output element gathers its inputs. */
static tb_status conv_transpose_run(tb_kernel_ctx *ctx) {
  tb_status s = tb_kernel_outputs(ctx);
  if (s != TB_OK) return s;
  const tb_tensor *x = ctx->inputs[0], *w = ctx->inputs[1], *bias = ctx->n_inputs > 2 ? ctx->inputs[2] : NULL;
  tb_tensor *y = ctx->outputs[0];
  const tb_conv_params *p = tb_kernel_params(ctx, &s);
  if (!p) return s;
  int64_t group = p->group;
  if (x->ndim < 3 || x->ndim > 4 || w->ndim != x->ndim || y->ndim != x->ndim)
    return tb_kernel_error(ctx, TB_ERR_UNSUPPORTED, "the OpenCL kernel takes 1-D and 2-D windows (input rank %zu)", x->ndim);
  size_t ns = x->ndim - 2;
  int64_t c = x->shape[1], m = y->shape[1];
  if (group < 1 || c % group || w->shape[0] != c || w->shape[1] * group != m)
    return tb_kernel_error(ctx, TB_ERR_INVALID_ARGUMENT, "W [%lld, %lld, ...] does not fit %lld input channels in %lld groups",
                           (long long)w->shape[0], (long long)w->shape[1], (long long)c, (long long)group);
  if (bias && tb_tensor_numel(bias) != m) return tb_kernel_error(ctx, TB_ERR_INVALID_ARGUMENT, "bias B must have %lld values", (long long)m);
  nn_window win;
  const int64_t *output_shape = NULL;
  size_t n_output_shape = 0;
  s = tb_nn_window_init(&p->win, ns, w->shape + 2, &win);
  if (s == TB_OK) s = tb_nn_window_init_transpose(p, &win);
  if (s == TB_OK) s = tb_nn_conv_output_shape(p, x->ndim, &output_shape, &n_output_shape);
  if (s != TB_OK) return s;
  for (size_t i = 0; i < ns; i++) {
    int64_t out = 0, want = n_output_shape ? output_shape[i] : -1;
    if ((s = tb_nn_window_out_transpose(&win, i, x->shape[2 + i], want, &out)) != TB_OK) return s;
    if (out != y->shape[2 + i])
      return tb_kernel_error(ctx, TB_ERR_INTERNAL, "window output %lld on axis %zu, the output has %lld", (long long)out, i,
                             (long long)y->shape[2 + i]);
  }
  if (tb_tensor_numel(y) == 0) return TB_OK;
  size_t o = ns == 1 ? 0 : 1; /* the W axis */
  int64_t geo[] = {c,
                   ns == 1 ? 1 : x->shape[2], x->shape[2 + o], m, ns == 1 ? 1 : y->shape[2], y->shape[2 + o],
                   ns == 1 ? 1 : win.kernel[0], win.kernel[o], ns == 1 ? 1 : win.stride[0], win.stride[o],
                   ns == 1 ? 0 : win.pad_begin[0], win.pad_begin[o], ns == 1 ? 1 : win.dilation[0], win.dilation[o], group};
  cl_launch l;
  tb_cl_begin(&l, ctx, 0, "tb_conv_transpose2d");
  tb_cl_arg_tensor(&l, x);
  tb_cl_arg_tensor(&l, w);
  tb_cl_arg_tensor(&l, bias ? bias : w);
  tb_cl_arg_int(&l, bias != NULL);
  tb_cl_arg_tensor(&l, y);
  tb_cl_arg_int(&l, tb_tensor_numel(y));
  for (size_t i = 0; i < sizeof geo / sizeof geo[0]; i++) tb_cl_arg_int(&l, geo[i]);
  return tb_cl_go(&l, (size_t)tb_tensor_numel(y));
}

static tb_status batchnorm_run(tb_kernel_ctx *ctx) {
  tb_status s;
  const tb_norm_params *pb = tb_kernel_params(ctx, &s);
  if (s == TB_OK) s = tb_kernel_outputs(ctx);
  if (s != TB_OK) return s;
  float eps = pb->epsilon;
  const tb_tensor *x = ctx->inputs[0];
  tb_tensor *y = ctx->outputs[0];
  if (x->ndim < 2) return tb_kernel_error(ctx, TB_ERR_INVALID_ARGUMENT, "X has rank %zu; it needs >= 2", x->ndim);
  int64_t ch = x->shape[1], inner = 1;
  for (size_t d = 2; d < x->ndim; d++) inner *= x->shape[d];
  for (size_t i = 1; i < 5; i++)
    if (!ctx->inputs[i] || tb_tensor_numel(ctx->inputs[i]) != ch)
      return tb_kernel_error(ctx, TB_ERR_INVALID_ARGUMENT, "input %zu needs %lld values (one per channel)", i, (long long)ch);
  if (tb_tensor_numel(y) == 0) return TB_OK;
  cl_launch l;
  tb_cl_begin(&l, ctx, 0, "tb_batchnorm");
  tb_cl_arg_tensor(&l, x);
  for (size_t i = 1; i < 5; i++) tb_cl_arg_tensor(&l, ctx->inputs[i]);
  tb_cl_arg_tensor(&l, y);
  tb_cl_arg_int(&l, tb_tensor_numel(y));
  tb_cl_arg_int(&l, ch);
  tb_cl_arg_int(&l, inner);
  tb_cl_arg_float(&l, eps);
  return tb_cl_go(&l, (size_t)tb_tensor_numel(y));
}

static tb_status pool_run(tb_kernel_ctx *ctx) {
  tb_status s = tb_kernel_outputs(ctx);
  if (s != TB_OK) return s;
  const tb_pool_params *p = tb_kernel_params(ctx, &s);
  if (!p) return s;
  bool avg = p->kind == TB_POOL_AVERAGE;
  int64_t count_pad = p->count_include_pad;
  const tb_tensor *x = ctx->inputs[0];
  tb_tensor *y = ctx->outputs[0];
  geo2 g;
  if ((s = geometry(ctx, &p->win, x, y, NULL, &g)) != TB_OK) return s;
  if (tb_tensor_numel(y) == 0) return TB_OK;
  cl_launch l;
  tb_cl_begin(&l, ctx, 0, "tb_pool2d");
  tb_cl_arg_tensor(&l, x);
  tb_cl_arg_tensor(&l, y);
  tb_cl_arg_int(&l, tb_tensor_numel(y));
  int64_t geo[] = {g.h, g.w, g.oh, g.ow, g.kh, g.kw, g.sh, g.sw, g.ph, g.pw, g.dh, g.dw, avg, count_pad, g.ph_end, g.pw_end};
  for (size_t i = 0; i < sizeof geo / sizeof geo[0]; i++) tb_cl_arg_int(&l, geo[i]);
  return tb_cl_go(&l, (size_t)tb_tensor_numel(y));
}

/* Reduce x over the axes marked in `reduced` into y (whose elements are the kept positions in order). */
static tb_status reduce(tb_kernel_ctx *ctx, const tb_tensor *x, tb_tensor *y, const bool *reduced, int op) {
  int64_t xs[TB_MAX_DIMS], ks[TB_MAX_DIMS], kt[TB_MAX_DIMS], rs[TB_MAX_DIMS], rt[TB_MAX_DIMS], rcount = 1;
  size_t nk = 0, nr = 0;
  tb_shape_strides(x->ndim, x->shape, xs);
  for (size_t d = 0; d < x->ndim; d++) {
    if (reduced[d]) {
      rs[nr] = x->shape[d], rt[nr++] = xs[d];
      rcount *= x->shape[d];
    } else {
      ks[nk] = x->shape[d], kt[nk++] = xs[d];
    }
  }
  int64_t n = tb_tensor_numel(y);
  if (n == 0) return TB_OK;
  cl_launch l;
  tb_cl_begin(&l, ctx, 0, "tb_reduce");
  tb_cl_arg_tensor(&l, x);
  tb_cl_arg_tensor(&l, y);
  tb_cl_arg_int(&l, n);
  tb_cl_arg_int(&l, (int64_t)nk);
  tb_cl_arg_int8(&l, ks, nk);
  tb_cl_arg_int8(&l, kt, nk);
  tb_cl_arg_int(&l, (int64_t)nr);
  tb_cl_arg_int8(&l, rs, nr);
  tb_cl_arg_int8(&l, rt, nr);
  tb_cl_arg_int(&l, rcount);
  tb_cl_arg_int(&l, op);
  return tb_cl_go(&l, (size_t)n);
}

/* The device kernel's op codes (nn.cl's tb_reduce), by tb_reduce_op. */
static const int reduce_codes[] = {[TB_REDUCE_SUM] = 0, [TB_REDUCE_MEAN] = 1,        [TB_REDUCE_MAX] = 2,
                                   [TB_REDUCE_MIN] = 3, [TB_REDUCE_PROD] = 4,        [TB_REDUCE_SUM_SQUARE] = 5,
                                   [TB_REDUCE_L2] = 6,  [TB_REDUCE_L1] = 7,          [TB_REDUCE_LOG_SUM_EXP] = 8};

static tb_status reduce_run(tb_kernel_ctx *ctx) {
  tb_status s;
  const tb_reduce_params *pb = tb_kernel_params(ctx, &s);
  if (s == TB_OK) s = tb_kernel_outputs(ctx);
  if (s != TB_OK) return s;
  const tb_reduce_params *p = pb;
  const tb_tensor *x = ctx->inputs[0];
  tb_tensor *y = ctx->outputs[0];
  const int64_t *axes = NULL;
  size_t n_axes = 0;
  const tb_tensor *axes_t = p->axes_from_input && ctx->n_inputs > 1 ? ctx->inputs[1] : NULL;
  if (axes_t) {
    axes = tb_tensor_host_data(axes_t);
    n_axes = (size_t)tb_tensor_numel(axes_t);
    if (axes_t->dtype != TB_DTYPE_I64 || (!axes && n_axes))
      return tb_kernel_error(ctx, TB_ERR_INVALID_ARGUMENT, "the axes input must be an int64 tensor the host can read");
  }
  static const int64_t no_axes[1] = {0}; /* an empty axes input is known: it reduces every axis (or none with noop) */
  nn_reduce_axes ax;
  if ((s = tb_nn_reduce_axes_resolve(p, x->ndim, axes_t != NULL, n_axes ? axes : no_axes, n_axes, &ax)) != TB_OK) return s;
  if (ax.noop) return tb_cl_unary(ctx, 1, x, y, 0, 0.0f, 0.0f);
  return reduce(ctx, x, y, ax.reduce, reduce_codes[p->op]);
}

static tb_status global_pool_run(tb_kernel_ctx *ctx) {
  tb_status s;
  const tb_pool_params *pb = tb_kernel_params(ctx, &s);
  if (s == TB_OK) s = tb_kernel_outputs(ctx);
  if (s != TB_OK) return s;
  bool reduced[TB_MAX_DIMS] = {false};
  for (size_t d = 2; d < ctx->inputs[0]->ndim; d++) reduced[d] = true;
  return reduce(ctx, ctx->inputs[0], ctx->outputs[0], reduced, reduce_codes[pb->kind == TB_POOL_MAX ? TB_REDUCE_MAX : TB_REDUCE_MEAN]);
}

static tb_status softmax_run(tb_kernel_ctx *ctx) {
  tb_status s;
  const tb_softmax_params *pb = tb_kernel_params(ctx, &s);
  if (s == TB_OK) s = tb_kernel_outputs(ctx);
  if (s != TB_OK) return s;
  const tb_tensor *x = ctx->inputs[0];
  tb_tensor *y = ctx->outputs[0];
  bool old = pb->flatten;
  int64_t axis = pb->axis;
  int64_t rank = (int64_t)x->ndim;
  if (axis < 0) axis += rank;
  if (axis < 0 || axis >= (rank ? rank : 1)) return tb_kernel_error(ctx, TB_ERR_INVALID_ARGUMENT, "axis outside rank %lld", (long long)rank);
  int64_t outer = 1, len = 1, inner = 1;
  for (int64_t d = 0; d < rank; d++) {
    int64_t dim = x->shape[d];
    if (d < axis) outer *= dim;
    else if (d == axis || old) len *= dim;
    else inner *= dim;
  }
  if (tb_tensor_numel(y) == 0) return TB_OK;
  cl_launch l;
  tb_cl_begin(&l, ctx, 0, "tb_softmax");
  tb_cl_arg_tensor(&l, x);
  tb_cl_arg_tensor(&l, y);
  tb_cl_arg_int(&l, outer * inner);
  tb_cl_arg_int(&l, len);
  tb_cl_arg_int(&l, inner);
  tb_cl_arg_int(&l, pb->kind == TB_LOG_SOFTMAX ? 1 : pb->kind == TB_HARDMAX ? 2 : 0);
  return tb_cl_go(&l, (size_t)(outer * inner));
}

/* ArgMax / ArgMin along one axis into an int64 tensor on the device. */
static tb_status argextreme_run(tb_kernel_ctx *ctx) {
  tb_status s;
  const tb_argreduce_params *pb = tb_kernel_params(ctx, &s);
  if (s == TB_OK) s = tb_kernel_outputs(ctx);
  if (s != TB_OK) return s;
  int64_t axis = pb->axis;
  bool last = pb->select_last_index;
  const tb_tensor *x = ctx->inputs[0];
  tb_tensor *y = ctx->outputs[0];
  int64_t rank = (int64_t)x->ndim;
  if (axis < 0) axis += rank;
  if (axis < 0 || axis >= rank) return tb_kernel_error(ctx, TB_ERR_MODEL, "axis outside rank %lld", (long long)rank);
  int64_t outer = 1, len = x->shape[axis], inner = 1;
  for (int64_t d = 0; d < rank; d++)
    if (d != axis) *(d < axis ? &outer : &inner) *= x->shape[d];
  if (y->dtype != TB_DTYPE_I64 || tb_tensor_numel(y) != outer * inner)
    return tb_kernel_error(ctx, TB_ERR_INTERNAL, "output of %s with %lld elements for %lld rows", tb_dtype_name(y->dtype),
                           (long long)tb_tensor_numel(y), (long long)(outer * inner));
  if (outer * inner == 0) return TB_OK;
  if (len == 0)
    return tb_kernel_error(ctx, TB_ERR_MODEL, "cannot take the %s over an empty axis %lld", pb->is_max ? "ArgMax" : "ArgMin",
                           (long long)axis);
  cl_launch l;
  tb_cl_begin(&l, ctx, 0, "tb_argextreme");
  tb_cl_arg_tensor(&l, x);
  tb_cl_arg_tensor(&l, y);
  tb_cl_arg_int(&l, outer * inner);
  tb_cl_arg_int(&l, len);
  tb_cl_arg_int(&l, inner);
  tb_cl_arg_int(&l, !pb->is_max);
  tb_cl_arg_int(&l, last != 0);
  return tb_cl_go(&l, (size_t)(outer * inner));
}

static tb_status layernorm_run(tb_kernel_ctx *ctx) {
  tb_status s;
  const tb_norm_params *pb = tb_kernel_params(ctx, &s);
  if (s == TB_OK) s = tb_kernel_outputs(ctx);
  if (s != TB_OK) return s;
  int64_t axis = pb->axis;
  float eps = pb->epsilon;
  const tb_tensor *x = ctx->inputs[0], *sc = ctx->inputs[1], *bias = ctx->n_inputs > 2 ? ctx->inputs[2] : NULL;
  tb_tensor *y = ctx->outputs[0];
  int64_t rank = (int64_t)x->ndim;
  if (axis < 0) axis += rank;
  if (axis < 0 || axis >= rank) return tb_kernel_error(ctx, TB_ERR_INVALID_ARGUMENT, "axis outside rank %lld", (long long)rank);
  int64_t rows = 1, cols = 1;
  for (int64_t d = 0; d < rank; d++) *(d < axis ? &rows : &cols) *= x->shape[d];
  int64_t ns = tb_tensor_numel(sc), nb = bias ? tb_tensor_numel(bias) : 0;
  if ((ns != cols && ns != 1) || (bias && nb != cols && nb != 1))
    return tb_kernel_error(ctx, TB_ERR_UNSUPPORTED, "Scale / B of %lld / %lld values for rows of %lld: the OpenCL kernel takes "
                           "one value per normalized element or a single value", (long long)ns, (long long)nb, (long long)cols);
  if (tb_tensor_numel(y) == 0) return TB_OK;
  cl_launch l;
  tb_cl_begin(&l, ctx, 0, "tb_layernorm");
  tb_cl_arg_tensor(&l, x);
  tb_cl_arg_tensor(&l, sc);
  tb_cl_arg_int(&l, ns == 1 ? 0 : 1);
  tb_cl_arg_tensor(&l, bias ? bias : sc);
  tb_cl_arg_int(&l, nb == 1 ? 0 : 1);
  tb_cl_arg_int(&l, bias != NULL);
  tb_cl_arg_tensor(&l, y);
  tb_cl_arg_int(&l, rows);
  tb_cl_arg_int(&l, cols);
  tb_cl_arg_float(&l, eps);
  tb_tensor *mean = pb->mean_output && ctx->n_outputs > 1 ? ctx->outputs[1] : NULL;
  tb_tensor *inv = pb->inv_std_output && ctx->n_outputs > 2 ? ctx->outputs[2] : NULL;
  if ((mean && tb_tensor_numel(mean) != rows) || (inv && tb_tensor_numel(inv) != rows))
    return tb_kernel_error(ctx, TB_ERR_INTERNAL, "Mean / InvStdDev outputs do not hold one value per row (%lld rows)", (long long)rows);
  tb_cl_arg_int(&l, (mean ? 1 : 0) | (inv ? 2 : 0));
  tb_cl_arg_tensor(&l, mean ? mean : y);
  tb_cl_arg_tensor(&l, inv ? inv : y);
  return tb_cl_go(&l, (size_t)rows);
}

/* Every input float32 and no optional outputs beyond the first (MaxPool's indices stay on the CPU;
 * BatchNormalization's training statistics are refused by its parse). */
static bool f32_one_output(const tb_kernel_query *q) {
  const tb_value_type *const *in = q->in;
  bool any = false;
  for (size_t i = 0; i < q->n_inputs; i++) {
    if (!in[i]) continue;
    if (!in[i]->has_dtype || in[i]->dtype != TB_DTYPE_F32) return false;
    any = true;
  }
  if (!q->params) return false;
  if (strcmp(q->op_type, "MaxPool") == 0 && ((const tb_pool_params *)q->params)->indices) return false;
  return any && in[0];
}

/* Conv and the pools: the kernels take 1-D and 2-D windows (rank 3 or 4 inputs); 3-D ones run on the CPU. */
static bool window_accepts(const tb_kernel_query *q) {
  const tb_value_type *const *in = q->in;
  const tb_activation_params *act = tb_fused_activation(q->domain, q->op_type, q->params);
  if (act && act->kind > TB_FUSED_ACT_HARD_SWISH) return false; /* tb_conv2d applies tb_unary's codes 1-7 */
  if (!f32_one_output(q)) return false;
  return !in[0]->has_shape || in[0]->ndim == 3 || in[0]->ndim == 4;
}

/* LayerNormalization: float32 in, optional Mean / InvStdDev outputs in float32 (stash_type 1). */
static bool layernorm_accepts(const tb_kernel_query *q) {
  const tb_value_type *const *in = q->in;
  const tb_norm_params *p = q->params;
  if (!p || p->stash_type != 1 || q->n_outputs > 3) return false;
  for (size_t i = 0; i < q->n_inputs; i++)
    if (in[i] && (!in[i]->has_dtype || in[i]->dtype != TB_DTYPE_F32)) return false;
  return q->n_inputs >= 2 && in[0] && in[1];
}

/* ArgMax / ArgMin: float32 data, int64 indices out. */
static bool argextreme_accepts(const tb_kernel_query *q) {
  const tb_value_type *const *in = q->in;
  return q->n_inputs == 1 && q->n_outputs == 1 && in[0] && in[0]->has_dtype && in[0]->dtype == TB_DTYPE_F32;
}

/* The reduce ops: float32 data (the axes input is int64 and read on the host). */
static bool reduce_accepts(const tb_kernel_query *q) {
  const tb_value_type *const *in = q->in;
  return q->n_inputs >= 1 && in[0] && in[0]->has_dtype && in[0]->dtype == TB_DTYPE_F32 && q->n_outputs == 1;
}

#define K(dom, op, acc, run) CL_KERNEL(dom, op, acc, run)
static const tb_kernel kernels[] = {
    K("", "Conv", window_accepts, conv_run),
    K("tb", "FusedConv", window_accepts, fused_conv_run),
    K("", "ConvTranspose", window_accepts, conv_transpose_run),
    K("", "BatchNormalization", f32_one_output, batchnorm_run),
    K("", "MaxPool", window_accepts, pool_run),
    K("", "AveragePool", window_accepts, pool_run),
    K("", "GlobalAveragePool", f32_one_output, global_pool_run),
    K("", "GlobalMaxPool", f32_one_output, global_pool_run),
    K("", "ReduceSum", reduce_accepts, reduce_run),
    K("", "ReduceMean", reduce_accepts, reduce_run),
    K("", "ReduceMax", reduce_accepts, reduce_run),
    K("", "ReduceMin", reduce_accepts, reduce_run),
    K("", "ReduceProd", reduce_accepts, reduce_run),
    K("", "ReduceSumSquare", reduce_accepts, reduce_run),
    K("", "ReduceL2", reduce_accepts, reduce_run),
    K("", "ReduceL1", reduce_accepts, reduce_run),
    K("", "ReduceLogSumExp", reduce_accepts, reduce_run),
    K("", "ArgMax", argextreme_accepts, argextreme_run),
    K("", "ArgMin", argextreme_accepts, argextreme_run),
    K("", "Softmax", f32_one_output, softmax_run),
    K("", "LogSoftmax", f32_one_output, softmax_run),
    K("", "Hardmax", f32_one_output, softmax_run),
    K("", "LayerNormalization", layernorm_accepts, layernorm_run),
    K("tb", "LayerNormalization", layernorm_accepts, layernorm_run),
};
const cl_family tb_cl_family_nn = {kernels, sizeof kernels / sizeof kernels[0]};
