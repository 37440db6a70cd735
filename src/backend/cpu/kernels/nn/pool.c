/* Reference kernels for MaxPool (with Indices), AveragePool, LpPool and the global pools: a loop over
 * every output position and every tap of its window, in double.
 *
 * Which taps count: a tap at input position pos (per axis, pos = o*stride + k*dilation - pad_begin)
 * reads the input when 0 <= pos < in. AveragePool with count_include_pad also counts taps inside the
 * padding (-pad_begin <= pos < in + pad_end) in the divisor, as ONNX's reference pads with zeros; with
 * ceil_mode, taps beyond the padded input count in neither. MaxPool's Indices are flat indices into X
 * (N, C and the spatial axes row-major, or column-major over the spatial axes when storage_order = 1). */
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include "backend/cpu/kernels/nn/nn_kernel.h"
#include "ops/nn/window.h"

typedef enum pool_kind { POOL_MAX, POOL_AVG, POOL_LP } pool_kind;

static tb_status pool_run(tb_kernel_ctx *ctx, pool_kind kind, bool global) {
  nn_buf x;
  double *y = NULL, *ind = NULL;
  tb_status st = tb_nn_load(ctx, 0, false, &x);
  if (st != TB_OK) return st;
  const tb_pool_params *prm = tb_kernel_params(ctx, &st);
  if (!prm) goto done;
  bool include_pad = prm->count_include_pad;
  int64_t order = prm->storage_order, p = prm->p;
  if (x.ndim < 3 && !(global && x.ndim == 2)) {
    st = tb_kernel_error(ctx, TB_ERR_MODEL, "X must have rank >= 3 (got %zu)", x.ndim);
    goto done;
  }
  size_t n = x.ndim - 2;
  const int64_t *in = x.shape + 2;
  nn_window w;
  int64_t out_shape[TB_MAX_DIMS], total = 0;
  out_shape[0] = x.shape[0];
  out_shape[1] = x.shape[1];
  if (global) {
    memset(&w, 0, sizeof w);
    for (size_t i = 0; i < n; i++) {
      w.kernel[i] = in[i];
      w.stride[i] = w.dilation[i] = 1;
      out_shape[2 + i] = 1;
    }
  } else {
    st = tb_nn_window_init(&prm->win, n, NULL, &w);
    for (size_t i = 0; st == TB_OK && i < n; i++) st = tb_nn_window_out(&w, i, in[i], &out_shape[2 + i]);
    if (st != TB_OK) goto done;
  }
  st = tb_nn_checked_numel(ctx, x.ndim, out_shape, &total);
  if (st == TB_OK) st = tb_nn_alloc(ctx, total, &y);
  if (st == TB_OK && kind == POOL_MAX) st = tb_nn_alloc(ctx, total, &ind);
  if (st != TB_OK) goto done;
  int64_t planes = x.shape[0] * x.shape[1], in_plane = tb_nn_numel(n, in), out_plane = tb_nn_numel(n, out_shape + 2);
  int64_t taps = tb_nn_numel(n, w.kernel);
  double *py = y;
  for (int64_t pl = 0; total > 0 && pl < planes; pl++) {
    const double *px = x.data + pl * in_plane;
    int64_t o[TB_MAX_DIMS] = {0};
    for (int64_t op = 0; op < out_plane; op++, tb_kernel_next_index(n, out_shape + 2, o), py++) {
      double acc = kind == POOL_MAX ? -INFINITY : 0.0;
      int64_t best = -1, count_in = 0, count_pad = 0;
      int64_t k[TB_MAX_DIMS] = {0};
      for (int64_t kp = 0; kp < taps; kp++, tb_kernel_next_index(n, w.kernel, k)) {
        int64_t off = 0, col = 0, col_stride = 1;
        bool inside = true, in_padded = true;
        for (size_t i = 0; i < n; i++) {
          int64_t pos = o[i] * w.stride[i] + k[i] * w.dilation[i] - w.pad_begin[i];
          inside = inside && pos >= 0 && pos < in[i];
          in_padded = in_padded && pos < in[i] + w.pad_end[i];
          off = off * in[i] + pos;
          col += pos * col_stride;
          col_stride *= in[i];
        }
        if (in_padded) count_pad++;
        if (!inside) continue;
        count_in++;
        double v = px[off];
        if (kind == POOL_MAX) {
          if (v > acc || best < 0) {
            acc = v;
            best = pl * in_plane + (order ? col : off);
          }
        } else if (kind == POOL_AVG) {
          acc += v;
        } else {
          acc += pow(fabs(v), (double)p);
        }
      }
      if (kind == POOL_MAX) {
        ind[py - y] = (double)(best < 0 ? 0 : best);
        *py = acc;
      } else if (kind == POOL_AVG) {
        int64_t div = include_pad ? count_pad : count_in;
        *py = div > 0 ? acc / (double)div : NAN;
      } else {
        *py = pow(acc, 1.0 / (double)p);
      }
    }
  }
  st = tb_nn_store(ctx, 0, x.dtype, x.ndim, out_shape, y);
  if (st == TB_OK && kind == POOL_MAX && prm->indices) st = tb_nn_store(ctx, 1, TB_DTYPE_I64, x.ndim, out_shape, ind);
done:
  free(y);
  free(ind);
  tb_nn_buf_free(&x);
  return st;
}

static tb_status maxpool_run(tb_kernel_ctx *ctx) { return pool_run(ctx, POOL_MAX, false); }
static tb_status avgpool_run(tb_kernel_ctx *ctx) { return pool_run(ctx, POOL_AVG, false); }
static tb_status lppool_run(tb_kernel_ctx *ctx) { return pool_run(ctx, POOL_LP, false); }
static tb_status global_max_run(tb_kernel_ctx *ctx) { return pool_run(ctx, POOL_MAX, true); }
static tb_status global_avg_run(tb_kernel_ctx *ctx) { return pool_run(ctx, POOL_AVG, true); }
static tb_status global_lp_run(tb_kernel_ctx *ctx) { return pool_run(ctx, POOL_LP, true); }

const tb_kernel tb_kernel_maxpool = {.domain = "", .name = "MaxPool", .level = TB_KERNEL_REFERENCE, .cpu_features = 0, .accepts = NULL, .run = maxpool_run};
const tb_kernel tb_kernel_averagepool = {.domain = "", .name = "AveragePool", .level = TB_KERNEL_REFERENCE, .cpu_features = 0, .accepts = NULL, .run = avgpool_run};
const tb_kernel tb_kernel_lppool = {.domain = "", .name = "LpPool", .level = TB_KERNEL_REFERENCE, .cpu_features = 0, .accepts = NULL, .run = lppool_run};
const tb_kernel tb_kernel_global_maxpool = {.domain = "", .name = "GlobalMaxPool", .level = TB_KERNEL_REFERENCE, .cpu_features = 0, .accepts = NULL, .run = global_max_run};
const tb_kernel tb_kernel_global_averagepool = {.domain = "", .name = "GlobalAveragePool", .level = TB_KERNEL_REFERENCE, .cpu_features = 0, .accepts = NULL, .run = global_avg_run};
const tb_kernel tb_kernel_global_lppool = {.domain = "", .name = "GlobalLpPool", .level = TB_KERNEL_REFERENCE, .cpu_features = 0, .accepts = NULL, .run = global_lp_run};
