/* Reference kernels for QuantizeLinear, DequantizeLinear, MatMulInteger and QLinearMatMul.
 *
 * Rounding follows the ONNX reference: QuantizeLinear computes x / scale in float32 when x is float32
 * (numpy does, and a tie after float rounding must stay a tie), rounds half to even, adds the zero point
 * and saturates to the output type. DequantizeLinear computes (x - zero_point) in integers, converts to
 * float32 and multiplies in float32. QLinearMatMul accumulates the integer products exactly, then
 * requantizes with the float32 multiplier a_scale * b_scale / y_scale (as ONNX Runtime does). */
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include "backend/cpu/kernels/nn/nn_kernel.h"

/* For each element of x: the index into a scale / zero-point parameter of p_numel values (1: per tensor;
 * else per slice of x along `axis`). */
typedef struct q_axis {
  int64_t inner, len;
  bool per_axis;
} q_axis;

static tb_status q_axis_for(tb_kernel_ctx *ctx, const tb_quant_params *p, const nn_buf *x, const nn_buf *param, q_axis *qa) {
  qa->per_axis = false;
  qa->inner = 1;
  qa->len = 1;
  if (!param->data || param->numel == 1) return TB_OK;
  int64_t axis = p->axis;
  int64_t r = (int64_t)x->ndim;
  if (axis < 0) axis += r;
  if (param->ndim != 1 || axis < 0 || axis >= r || param->numel != x->shape[axis])
    return tb_kernel_error(ctx, TB_ERR_MODEL, "a per-axis scale or zero point (%lld values) must be 1-D and match axis %lld",
                           (long long)param->numel, (long long)axis);
  qa->per_axis = true;
  qa->len = x->shape[axis];
  qa->inner = tb_nn_numel((size_t)(r - axis - 1), x->shape + axis + 1);
  return TB_OK;
}

static int64_t q_index(const q_axis *qa, int64_t e) { return qa->per_axis ? (e / qa->inner) % qa->len : 0; }

/* The inputs of QuantizeLinear and DequantizeLinear (x, scale, optional zero point), their axes, and the
 * output buffer y of x's size. */
typedef struct q_io {
  nn_buf x, scale, zp;
  q_axis qs, qz;
  double *y;
} q_io;

static tb_status q_begin(tb_kernel_ctx *ctx, q_io *q) {
  memset(q, 0, sizeof *q);
  tb_status st;
  const tb_quant_params *p = tb_kernel_params(ctx, &st);
  if (st == TB_OK) st = tb_nn_load(ctx, 0, false, &q->x);
  if (st == TB_OK) st = tb_nn_load(ctx, 1, false, &q->scale);
  if (st == TB_OK) st = tb_nn_load(ctx, 2, true, &q->zp);
  if (st == TB_OK) st = q_axis_for(ctx, p, &q->x, &q->scale, &q->qs);
  if (st == TB_OK) st = q_axis_for(ctx, p, &q->x, &q->zp, &q->qz);
  if (st == TB_OK) st = tb_nn_alloc(ctx, q->x.numel, &q->y);
  return st;
}

/* The scale and zero point (0 when absent) for element e of x. */
static void q_params(const q_io *q, int64_t e, double *s, double *z) {
  *s = q->scale.data[q_index(&q->qs, e)];
  *z = q->zp.data ? q->zp.data[q_index(&q->qz, e)] : 0;
}

static tb_status q_end(q_io *q, tb_status st) {
  free(q->y);
  tb_nn_buf_free(&q->x);
  tb_nn_buf_free(&q->scale);
  tb_nn_buf_free(&q->zp);
  return st;
}

static tb_status quantize_run(tb_kernel_ctx *ctx) {
  q_io q;
  tb_status st = q_begin(ctx, &q);
  if (st != TB_OK) return q_end(&q, st);
  tb_dtype out = q.zp.data ? q.zp.dtype : TB_DTYPE_U8;
  double lo = out == TB_DTYPE_I8 ? -128 : 0, hi = out == TB_DTYPE_I8 ? 127 : 255;
  for (int64_t e = 0; e < q.x.numel; e++) {
    double s, z;
    q_params(&q, e, &s, &z);
    double v = q.x.dtype == TB_DTYPE_F32 && q.scale.dtype == TB_DTYPE_F32 ? (double)rintf((float)q.x.data[e] / (float)s)
                                                                         : rint(q.x.data[e] / s);
    v += z;
    q.y[e] = isnan(v) ? 0 : v < lo ? lo : v > hi ? hi : v; /* NaN: ONNX leaves it undefined; 0 here */
  }
  return q_end(&q, tb_nn_store(ctx, 0, out, q.x.ndim, q.x.shape, q.y));
}

static tb_status dequantize_run(tb_kernel_ctx *ctx) {
  q_io q;
  tb_status st = q_begin(ctx, &q);
  if (st != TB_OK) return q_end(&q, st);
  for (int64_t e = 0; e < q.x.numel; e++) {
    double s, z;
    q_params(&q, e, &s, &z);
    double d = q.x.data[e] - z; /* exact: integers below 2^33 */
    q.y[e] = q.scale.dtype == TB_DTYPE_F32 ? (double)((float)d * (float)s) : d * s;
  }
  return q_end(&q, tb_nn_store(ctx, 0, q.scale.dtype, q.x.ndim, q.x.shape, q.y));
}

/* Subtract a zero point that is a scalar, or 1-D per row of a (rows: axis -2) / per column of b (axis -1). */
static tb_status sub_zero_point(tb_kernel_ctx *ctx, nn_buf *m, const nn_buf *zp, bool per_row) {
  if (!zp->data) return TB_OK;
  if (zp->numel == 1) {
    for (int64_t e = 0; e < m->numel; e++) m->data[e] -= zp->data[0];
    return TB_OK;
  }
  int64_t rows = m->ndim >= 2 ? m->shape[m->ndim - 2] : 1, cols = m->shape[m->ndim - 1];
  int64_t want = per_row ? rows : cols;
  if (zp->numel != want)
    return tb_kernel_error(ctx, TB_ERR_MODEL, "a zero point has %lld values; it must be a scalar or have %lld",
                           (long long)zp->numel, (long long)want);
  for (int64_t e = 0; e < m->numel; e++) m->data[e] -= zp->data[per_row ? (e / cols) % rows : e % cols];
  return TB_OK;
}

static tb_status matmul_integer_run(tb_kernel_ctx *ctx) {
  nn_buf a = {0}, b = {0}, azp = {0}, bzp = {0};
  double *y = NULL;
  int64_t shape[TB_MAX_DIMS];
  size_t ndim = 0;
  tb_status st = tb_nn_load(ctx, 0, false, &a);
  if (st == TB_OK) st = tb_nn_load(ctx, 1, false, &b);
  if (st == TB_OK) st = tb_nn_load(ctx, 2, true, &azp);
  if (st == TB_OK) st = tb_nn_load(ctx, 3, true, &bzp);
  if (st == TB_OK && a.ndim >= 1 && b.ndim >= 1) st = sub_zero_point(ctx, &a, &azp, true);
  if (st == TB_OK && a.ndim >= 1 && b.ndim >= 1) st = sub_zero_point(ctx, &b, &bzp, false);
  if (st == TB_OK) st = tb_nn_matmul(ctx, &a, &b, &y, &ndim, shape);
  if (st == TB_OK) st = tb_nn_store(ctx, 0, TB_DTYPE_I32, ndim, shape, y);
  free(y);
  tb_nn_buf_free(&a);
  tb_nn_buf_free(&b);
  tb_nn_buf_free(&azp);
  tb_nn_buf_free(&bzp);
  return st;
}

static tb_status qlinear_matmul_run(tb_kernel_ctx *ctx) {
  nn_buf in[8];
  double *y = NULL;
  int64_t shape[TB_MAX_DIMS];
  size_t ndim = 0;
  tb_status st = TB_OK;
  for (size_t i = 0; i < 8; i++) in[i] = (nn_buf){0};
  for (size_t i = 0; i < 8 && st == TB_OK; i++) st = tb_nn_load(ctx, i, false, &in[i]);
  if (st != TB_OK) goto done;
  for (size_t i = 1; i < 8; i++)
    if (i != 3 && in[i].numel != 1) {
      st = tb_kernel_error(ctx, TB_ERR_UNSUPPORTED, "input %zu has %lld values; only per-tensor scales and zero points "
                           "are supported", i, (long long)in[i].numel);
      goto done;
    }
  if (in[0].ndim >= 1 && in[3].ndim >= 1) {
    sub_zero_point(ctx, &in[0], &in[2], true);
    sub_zero_point(ctx, &in[3], &in[5], false);
  }
  st = tb_nn_matmul(ctx, &in[0], &in[3], &y, &ndim, shape);
  if (st != TB_OK) goto done;
  float mult = (float)in[1].data[0] * (float)in[4].data[0] / (float)in[6].data[0];
  tb_dtype out = in[7].dtype;
  double lo = out == TB_DTYPE_I8 ? -128 : 0, hi = out == TB_DTYPE_I8 ? 127 : 255;
  int64_t total = tb_nn_numel(ndim, shape);
  for (int64_t e = 0; e < total; e++) {
    double q = (double)rintf((float)y[e] * mult) + in[7].data[0];
    y[e] = isnan(q) ? 0 : q < lo ? lo : q > hi ? hi : q;
  }
  st = tb_nn_store(ctx, 0, out, ndim, shape, y);
done:
  free(y);
  for (size_t i = 0; i < 8; i++) tb_nn_buf_free(&in[i]);
  return st;
}

const tb_kernel tb_kernel_quantize_linear = {.domain = "", .name = "QuantizeLinear", .level = TB_KERNEL_REFERENCE, .cpu_features = 0, .accepts = NULL, .run = quantize_run};
const tb_kernel tb_kernel_dequantize_linear = {.domain = "", .name = "DequantizeLinear", .level = TB_KERNEL_REFERENCE, .cpu_features = 0, .accepts = NULL, .run = dequantize_run};
const tb_kernel tb_kernel_matmul_integer = {.domain = "", .name = "MatMulInteger", .level = TB_KERNEL_REFERENCE, .cpu_features = 0, .accepts = NULL, .run = matmul_integer_run};
const tb_kernel tb_kernel_qlinear_matmul = {.domain = "", .name = "QLinearMatMul", .level = TB_KERNEL_REFERENCE, .cpu_features = 0, .accepts = NULL, .run = qlinear_matmul_run};
