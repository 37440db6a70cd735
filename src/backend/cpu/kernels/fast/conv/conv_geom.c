/* The geometry of a level-2 convolution: ranks, channels and groups checked as the reference kernel checks
 * them, and the window (kernel, strides, dilations, pads, auto_pad) read with the same shared reader
 * (ops/nn/window.h), so both levels agree on every output size. */
#include <string.h>
#include "backend/cpu/kernels/fast/conv/conv_fast.h"
#include "backend/kernel_params.h"
#include "ops/nn/window.h"

void tb_conv_geom_set_axes(tb_conv_geom *g, const int64_t *x_shape, const nn_window *win, const int64_t *out) {
  bool rows = g->spatial == 2; /* 1-D: one row, axis 0 of the window is the width */
  size_t x = g->spatial - 1;
  g->ih = rows ? x_shape[2] : 1;
  g->oh = rows ? out[0] : 1;
  g->kh = rows ? win->kernel[0] : 1;
  g->sh = rows ? win->stride[0] : 1;
  g->dh = rows ? win->dilation[0] : 1;
  g->ph = rows ? win->pad_begin[0] : 0;
  g->iw = x_shape[2 + x];
  g->ow = out[x];
  g->kw = win->kernel[x];
  g->sw = win->stride[x];
  g->dw = win->dilation[x];
  g->pw = win->pad_begin[x];
}

tb_status tb_conv_geom_resolve(const tb_kernel_ctx *ctx, size_t x_ndim, const int64_t *x_shape, size_t w_ndim,
                               const int64_t *w_shape, tb_conv_geom *g) {
  memset(g, 0, sizeof *g);
  if (x_ndim < 3 || w_ndim != x_ndim)
    return tb_kernel_error(ctx, TB_ERR_MODEL, "X (rank %zu) and W (rank %zu) must have the same rank >= 3", x_ndim, w_ndim);
  if (x_ndim > 4)
    return tb_kernel_error(ctx, TB_ERR_UNSUPPORTED, "the fast convolution takes 1 or 2 spatial axes, not %zu", x_ndim - 2);
  tb_status st;
  const tb_conv_params *p = tb_kernel_params(ctx, &st); /* a FusedConv's parameters start with Conv's */
  if (!p) return st;
  g->group = p->group;
  g->spatial = x_ndim - 2;
  g->batch = x_shape[0];
  g->in_c = x_shape[1];
  g->out_c = w_shape[0];
  if (g->group < 1 || g->in_c % g->group != 0)
    return tb_kernel_error(ctx, TB_ERR_MODEL, "attribute group (%lld) must be >= 1 and divide the %lld input channels",
                           (long long)g->group, (long long)g->in_c);
  int64_t wc;
  if (g->out_c % g->group != 0 || __builtin_mul_overflow(w_shape[1], g->group, &wc) || wc != g->in_c)
    return tb_kernel_error(ctx, TB_ERR_MODEL, "W [%lld, %lld, ...] does not fit %lld input channels in %lld groups",
                           (long long)w_shape[0], (long long)w_shape[1], (long long)g->in_c, (long long)g->group);
  nn_window win;
  st = tb_nn_window_init(&p->win, g->spatial, w_shape + 2, &win);
  int64_t out[2] = {1, 1};
  for (size_t i = 0; st == TB_OK && i < g->spatial; i++) st = tb_nn_window_out(&win, i, x_shape[2 + i], &out[i]);
  if (st != TB_OK) return tb_kernel_name_error(ctx, st);
  tb_conv_geom_set_axes(g, x_shape, &win, out);
  return TB_OK;
}
