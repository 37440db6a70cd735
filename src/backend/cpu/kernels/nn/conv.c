/* Reference kernels for Conv, ConvTranspose, ConvInteger and QLinearConv: direct loops over every output
 * (Conv) or input (ConvTranspose, scattering) position and kernel tap, accumulating in double (exact for
 * the integer convolutions, whose products and sums stay below 2^53). */
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include "backend/cpu/kernels/nn/nn_kernel.h"
#include "ops/nn/window.h"

typedef struct conv_args {
  nn_buf x, w, b;
  nn_window win;
  int64_t group, batch, in_c, out_c, in_sp[TB_MAX_DIMS], out_sp[TB_MAX_DIMS];
  size_t n; /* spatial axes */
} conv_args;

static void conv_free(conv_args *a) {
  tb_nn_buf_free(&a->x);
  tb_nn_buf_free(&a->w);
  tb_nn_buf_free(&a->b);
}

/* Load X, W and B (inputs x_in, w_in, b_in; b_in -1 for none). */
static tb_status conv_load(tb_kernel_ctx *ctx, size_t x_in, size_t w_in, int b_in, conv_args *a) {
  memset(a, 0, sizeof *a);
  tb_status st = tb_nn_load(ctx, x_in, false, &a->x);
  if (st == TB_OK) st = tb_nn_load(ctx, w_in, false, &a->w);
  if (st == TB_OK && b_in >= 0) st = tb_nn_load(ctx, (size_t)b_in, true, &a->b);
  return st;
}

/* Check the loaded shapes against each other and resolve the window and output sizes. */
static tb_status conv_prepare(tb_kernel_ctx *ctx, bool transpose, conv_args *a) {
  tb_status st;
  const tb_conv_params *p = tb_kernel_params(ctx, &st); /* a FusedConv's parameters start with Conv's */
  if (!p) return st;
  a->group = p->group;
  if (a->x.ndim < 3 || a->w.ndim != a->x.ndim)
    return tb_kernel_error(ctx, TB_ERR_MODEL, "X (rank %zu) and W (rank %zu) must have the same rank >= 3", a->x.ndim,
                           a->w.ndim);
  a->n = a->x.ndim - 2;
  a->batch = a->x.shape[0];
  a->in_c = a->x.shape[1];
  if (a->group < 1 || a->in_c % a->group != 0)
    return tb_kernel_error(ctx, TB_ERR_MODEL, "attribute group (%lld) must be >= 1 and divide the %lld input channels",
                           (long long)a->group, (long long)a->in_c);
  if (transpose) {
    if (a->w.shape[0] != a->in_c)
      return tb_kernel_error(ctx, TB_ERR_MODEL, "W's first dim (%lld) differs from X's %lld channels",
                             (long long)a->w.shape[0], (long long)a->in_c);
    if (__builtin_mul_overflow(a->w.shape[1], a->group, &a->out_c))
      return tb_kernel_error(ctx, TB_ERR_MODEL, "the output channel count overflows");
  } else {
    a->out_c = a->w.shape[0];
    int64_t wc;
    if (a->out_c % a->group != 0 || __builtin_mul_overflow(a->w.shape[1], a->group, &wc) || wc != a->in_c)
      return tb_kernel_error(ctx, TB_ERR_MODEL, "W [%lld, %lld, ...] does not fit %lld input channels in %lld groups",
                             (long long)a->w.shape[0], (long long)a->w.shape[1], (long long)a->in_c, (long long)a->group);
  }
  if (a->b.data && (a->b.ndim != 1 || a->b.shape[0] != a->out_c))
    return tb_kernel_error(ctx, TB_ERR_MODEL, "bias B must be 1-D with %lld values", (long long)a->out_c);
  const int64_t *output_shape = NULL;
  size_t n_output_shape = 0;
  st = tb_nn_window_init(&p->win, a->n, a->w.shape + 2, &a->win);
  if (st == TB_OK && transpose) st = tb_nn_window_init_transpose(p, &a->win);
  if (st == TB_OK && transpose) st = tb_nn_conv_output_shape(p, a->x.ndim, &output_shape, &n_output_shape);
  for (size_t i = 0; st == TB_OK && i < a->n; i++) {
    a->in_sp[i] = a->x.shape[2 + i];
    if (transpose)
      st = tb_nn_window_out_transpose(&a->win, i, a->in_sp[i], n_output_shape ? output_shape[i] : -1, &a->out_sp[i]);
    else
      st = tb_nn_window_out(&a->win, i, a->in_sp[i], &a->out_sp[i]);
  }
  return tb_kernel_name_error(ctx, st);
}

/* The convolution of the prepared arguments into a new buffer *out of shape out_shape (rank n + 2). */
static tb_status conv_forward(tb_kernel_ctx *ctx, const conv_args *a, double **out, int64_t *out_shape) {
  *out = NULL;
  int64_t total = 0;
  double *y = NULL;
  out_shape[0] = a->batch;
  out_shape[1] = a->out_c;
  memcpy(out_shape + 2, a->out_sp, a->n * sizeof(int64_t));
  tb_status st = tb_nn_checked_numel(ctx, a->n + 2, out_shape, &total);
  if (st == TB_OK) st = tb_nn_alloc(ctx, total, &y);
  if (st != TB_OK) return st;
  const nn_window *w = &a->win;
  int64_t cg = a->in_c / a->group, mg = a->out_c / a->group;
  int64_t in_plane = tb_nn_numel(a->n, a->in_sp), k_plane = tb_nn_numel(a->n, a->w.shape + 2);
  int64_t out_plane = tb_nn_numel(a->n, a->out_sp);
  double *py = y;
  for (int64_t b = 0; total > 0 && b < a->batch; b++)
    for (int64_t m = 0; m < a->out_c; m++) {
      int64_t g = m / mg;
      int64_t o[TB_MAX_DIMS] = {0};
      for (int64_t op = 0; op < out_plane; op++, tb_kernel_next_index(a->n, a->out_sp, o)) {
        double s = a->b.data ? a->b.data[m] : 0.0;
        for (int64_t c = 0; c < cg; c++) {
          const double *px = a->x.data + (b * a->in_c + g * cg + c) * in_plane;
          const double *pw = a->w.data + (m * cg + c) * k_plane;
          int64_t k[TB_MAX_DIMS] = {0};
          for (int64_t kp = 0; kp < k_plane; kp++, tb_kernel_next_index(a->n, a->w.shape + 2, k)) {
            int64_t off = 0;
            bool inside = true;
            for (size_t i = 0; i < a->n && inside; i++) {
              int64_t pos = o[i] * w->stride[i] + k[i] * w->dilation[i] - w->pad_begin[i];
              inside = pos >= 0 && pos < a->in_sp[i];
              off = off * a->in_sp[i] + pos;
            }
            if (inside) s += px[off] * pw[kp];
          }
        }
        *py++ = s;
      }
    }
  *out = y;
  return TB_OK;
}

static tb_status conv_run(tb_kernel_ctx *ctx) {
  conv_args a;
  double *y = NULL;
  int64_t out_shape[TB_MAX_DIMS];
  tb_status st = conv_load(ctx, 0, 1, 2, &a);
  if (st == TB_OK) st = conv_prepare(ctx, false, &a);
  if (st == TB_OK) st = conv_forward(ctx, &a, &y, out_shape);
  if (st == TB_OK) st = tb_nn_store(ctx, 0, a.x.dtype, a.n + 2, out_shape, y);
  free(y);
  conv_free(&a);
  return st;
}

/* Subtract a zero point from X (a scalar) or from W (a scalar, or one per output channel: W's axis 0). */
static tb_status sub_zero_point(tb_kernel_ctx *ctx, nn_buf *t, size_t input, bool per_channel) {
  nn_buf zp;
  tb_status st = tb_nn_load(ctx, input, true, &zp);
  if (st != TB_OK || !zp.data) return st;
  int64_t ch = t->ndim ? t->shape[0] : 1, per = ch ? t->numel / ch : 0;
  if (zp.numel != 1 && !(per_channel && zp.numel == ch)) {
    st = tb_kernel_error(ctx, TB_ERR_MODEL, "input %zu (a zero point) has %lld values; it must be a scalar%s", input,
                         (long long)zp.numel, per_channel ? " or have one per output channel" : "");
  } else {
    for (int64_t e = 0; e < t->numel; e++) t->data[e] -= zp.data[zp.numel == 1 ? 0 : e / per];
  }
  tb_nn_buf_free(&zp);
  return st;
}

static tb_status conv_integer_run(tb_kernel_ctx *ctx) {
  conv_args a;
  double *y = NULL;
  int64_t out_shape[TB_MAX_DIMS];
  tb_status st = conv_load(ctx, 0, 1, -1, &a);
  if (st == TB_OK) st = sub_zero_point(ctx, &a.x, 2, false);
  if (st == TB_OK) st = sub_zero_point(ctx, &a.w, 3, true);
  if (st == TB_OK) st = conv_prepare(ctx, false, &a);
  if (st == TB_OK) st = conv_forward(ctx, &a, &y, out_shape);
  if (st == TB_OK) st = tb_nn_store(ctx, 0, TB_DTYPE_I32, a.n + 2, out_shape, y);
  free(y);
  conv_free(&a);
  return st;
}

/* QLinearConv: the integer convolution (bias B is int32 in the accumulator's scale), requantized per
 * output channel with the float32 multiplier x_scale * w_scale[m] / y_scale, rounded half to even. */
static tb_status qlinear_conv_run(tb_kernel_ctx *ctx) {
  conv_args a;
  nn_buf xs = {0}, ws = {0}, ys = {0}, yzp = {0};
  double *y = NULL;
  int64_t out_shape[TB_MAX_DIMS];
  tb_status st = conv_load(ctx, 0, 3, 8, &a);
  if (st == TB_OK) st = sub_zero_point(ctx, &a.x, 2, false);
  if (st == TB_OK) st = sub_zero_point(ctx, &a.w, 5, true);
  if (st == TB_OK) st = tb_nn_load(ctx, 1, false, &xs);
  if (st == TB_OK) st = tb_nn_load(ctx, 4, false, &ws);
  if (st == TB_OK) st = tb_nn_load(ctx, 6, false, &ys);
  if (st == TB_OK) st = tb_nn_load(ctx, 7, false, &yzp);
  if (st == TB_OK) st = conv_prepare(ctx, false, &a);
  if (st == TB_OK && (xs.numel != 1 || ys.numel != 1 || yzp.numel != 1 || (ws.numel != 1 && ws.numel != a.out_c)))
    st = tb_kernel_error(ctx, TB_ERR_MODEL, "x_scale, y_scale and y_zero_point must be scalars and w_scale a scalar or "
                         "one value per output channel");
  if (st == TB_OK) st = conv_forward(ctx, &a, &y, out_shape);
  if (st != TB_OK) goto done;
  tb_dtype out = yzp.dtype;
  double lo = out == TB_DTYPE_I8 ? -128 : 0, hi = out == TB_DTYPE_I8 ? 127 : 255;
  int64_t plane = tb_nn_numel(a.n, a.out_sp), total = tb_nn_numel(a.n + 2, out_shape);
  for (int64_t e = 0; e < total; e++) {
    int64_t m = (e / plane) % a.out_c;
    float mult = (float)xs.data[0] * (float)ws.data[ws.numel == 1 ? 0 : m] / (float)ys.data[0];
    double q = (double)rintf((float)y[e] * mult) + yzp.data[0];
    y[e] = isnan(q) ? 0 : q < lo ? lo : q > hi ? hi : q;
  }
  st = tb_nn_store(ctx, 0, out, a.n + 2, out_shape, y);
done:
  free(y);
  conv_free(&a);
  tb_nn_buf_free(&xs);
  tb_nn_buf_free(&ws);
  tb_nn_buf_free(&ys);
  tb_nn_buf_free(&yzp);
  return st;
}

static tb_status conv_transpose_run(tb_kernel_ctx *ctx) {
  conv_args a;
  double *y = NULL;
  tb_status st = conv_load(ctx, 0, 1, 2, &a);
  if (st == TB_OK) st = conv_prepare(ctx, true, &a);
  if (st != TB_OK) goto done;
  int64_t out_shape[TB_MAX_DIMS] = {a.batch, a.out_c}, total = 0;
  memcpy(out_shape + 2, a.out_sp, a.n * sizeof(int64_t));
  st = tb_nn_checked_numel(ctx, a.n + 2, out_shape, &total);
  if (st == TB_OK) st = tb_nn_alloc(ctx, total, &y);
  if (st != TB_OK) goto done;
  const nn_window *w = &a.win;
  int64_t cg = a.in_c / a.group, mg = a.out_c / a.group;
  int64_t in_plane = tb_nn_numel(a.n, a.in_sp), k_plane = tb_nn_numel(a.n, a.w.shape + 2), out_plane = tb_nn_numel(a.n, a.out_sp);
  for (int64_t b = 0; total > 0 && b < a.batch; b++) {
    for (int64_t m = 0; m < a.out_c; m++) {
      double *py = y + (b * a.out_c + m) * out_plane;
      for (int64_t op = 0; op < out_plane; op++) py[op] = a.b.data ? a.b.data[m] : 0.0;
    }
    for (int64_t c = 0; c < a.in_c; c++) {
      int64_t g = c / cg;
      const double *px = a.x.data + (b * a.in_c + c) * in_plane;
      int64_t p[TB_MAX_DIMS] = {0};
      for (int64_t ip = 0; ip < in_plane; ip++, tb_kernel_next_index(a.n, a.in_sp, p)) {
        for (int64_t mm = 0; mm < mg; mm++) {
          int64_t m = g * mg + mm;
          const double *pw = a.w.data + (c * mg + mm) * k_plane;
          double *py = y + (b * a.out_c + m) * out_plane;
          int64_t k[TB_MAX_DIMS] = {0};
          for (int64_t kp = 0; kp < k_plane; kp++, tb_kernel_next_index(a.n, a.w.shape + 2, k)) {
            int64_t off = 0;
            bool inside = true;
            for (size_t i = 0; i < a.n && inside; i++) {
              int64_t pos = p[i] * w->stride[i] + k[i] * w->dilation[i] - w->pad_begin[i];
              inside = pos >= 0 && pos < a.out_sp[i];
              off = off * a.out_sp[i] + pos;
            }
            if (inside) py[off] += px[ip] * pw[kp];
          }
        }
      }
    }
  }
  st = tb_nn_store(ctx, 0, a.x.dtype, a.n + 2, out_shape, y);
done:
  free(y);
  conv_free(&a);
  return st;
}

const tb_kernel tb_kernel_conv = {.domain = "", .name = "Conv", .level = TB_KERNEL_REFERENCE, .cpu_features = 0, .accepts = NULL, .run = conv_run};
const tb_kernel tb_kernel_conv_transpose = {.domain = "", .name = "ConvTranspose", .level = TB_KERNEL_REFERENCE, .cpu_features = 0, .accepts = NULL, .run = conv_transpose_run};
const tb_kernel tb_kernel_conv_integer = {.domain = "", .name = "ConvInteger", .level = TB_KERNEL_REFERENCE, .cpu_features = 0, .accepts = NULL, .run = conv_integer_run};
const tb_kernel tb_kernel_qlinear_conv = {.domain = "", .name = "QLinearConv", .level = TB_KERNEL_REFERENCE, .cpu_features = 0, .accepts = NULL, .run = qlinear_conv_run};
