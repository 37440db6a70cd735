/* CUDA kernels of the quantized operators on 8-bit integers (kernels/45_quant.cu), bit-exact with the CPU
 * reference: QuantizeLinear (float32 x and scale, a uint8 or int8 zero point or none: uint8) and DequantizeLinear
 * (uint8, int8 or int32 x, float32 scale), each per tensor or per axis (opset 13's 1-D scale and zero point);
 * MatMulInteger (uint8 / int8 operands, int32 output, zero points per tensor, per row of A or per column of B)
 * and QLinearMatMul (per-tensor scales and zero points, as the CPU takes them). Numpy's matmul shapes, batch
 * broadcasting included, through the GEMM descriptor (cuda_gemm.h); ConvInteger and QLinearConv (x zero point
 * per tensor, W's and w_scale per tensor or per output channel, QLinearConv's int32 bias) with Conv's geometry
 * (cuda_cnn.h). Every launch reads the scales and zero points on the device: no host round trip, so a captured
 * graph holds them. Float16 / bfloat16 scales run on the CPU. */
#include <string.h>
#include "backend/cuda/kernels/cuda_cnn.h"
#include "backend/cuda/kernels/cuda_gemm.h"
#include "backend/cuda/kernels/cuda_ops.h"
#include "backend/kernel_params.h"
#include "backend/kernel_shape.h"
#include "backend/tensor/tensor_impl.h"
#include "ops/nn/nn_params.h"

/* The kernels' tb_quant_desc and tb_qmm_desc (45_quant.cu), field for field. */
typedef struct quant_desc {
  int32_t x_kind, y_kind, s_axis, z_axis;
  int64_t n, inner, len;
} quant_desc;
_Static_assert(sizeof(quant_desc) == 40, "quant_desc mirrors 45_quant.cu's tb_quant_desc");
typedef struct qconv_desc {
  int64_t n, c, k, groups;
  int64_t in[3], out[3], kernel[3], stride[3], dilation[3], pad[3];
  int32_t x_kind, w_kind, y_kind, wzp_channels, ws_channels, unused;
} qconv_desc;
_Static_assert(sizeof(qconv_desc) == 200, "qconv_desc mirrors 45_quant.cu's tb_qconv_desc");
typedef struct qmm_desc {
  int32_t a_kind, b_kind, y_kind, azp_rows, bzp_cols, unused;
} qmm_desc;
_Static_assert(sizeof(qmm_desc) == 24, "qmm_desc mirrors 45_quant.cu's tb_qmm_desc");

static const tb_tensor *input_at(const tb_kernel_ctx *ctx, size_t i) { return i < ctx->n_inputs ? ctx->inputs[i] : NULL; }

/* The kernels' element kind of a dtype: 0 uint8, 1 int8, 2 int32, -1 other. */
static int kind_of(tb_dtype d) { return d == TB_DTYPE_U8 ? 0 : d == TB_DTYPE_I8 ? 1 : d == TB_DTYPE_I32 ? 2 : -1; }

/* ---- QuantizeLinear and DequantizeLinear ---------------------------------------------------------------- */

/* Whether a scale or zero point of numel values is per axis for x (else per tensor); the axis' inner size and
 * length into d. TB_ERR_MODEL as the CPU says it for a parameter that fits neither. */
static tb_status param_axis(tb_kernel_ctx *ctx, const tb_quant_params *p, const tb_tensor *x, const tb_tensor *param, int32_t *per_axis,
                            quant_desc *d) {
  *per_axis = 0;
  if (!param || tb_tensor_numel(param) == 1) return TB_OK;
  int64_t axis = p->axis, r = (int64_t)x->ndim;
  if (axis < 0) axis += r;
  if (param->ndim != 1 || axis < 0 || axis >= r || tb_tensor_numel(param) != x->shape[axis])
    return tb_kernel_error(ctx, TB_ERR_MODEL, "a per-axis scale or zero point (%lld values) must be 1-D and match axis %lld",
                           (long long)tb_tensor_numel(param), (long long)axis);
  *per_axis = 1;
  d->len = x->shape[axis];
  d->inner = 1;
  for (int64_t k = axis + 1; k < r; k++) d->inner *= x->shape[k];
  return TB_OK;
}

static tb_status quant_run(tb_kernel_ctx *ctx, bool quantize) {
  tb_status st;
  const tb_quant_params *p = tb_kernel_params(ctx, &st);
  if (!p) return st;
  if ((st = tb_kernel_outputs(ctx)) != TB_OK) return st;
  const tb_tensor *x = input_at(ctx, 0), *scale = input_at(ctx, 1), *zp = input_at(ctx, 2);
  tb_tensor *y = ctx->outputs[0];
  quant_desc d = {.n = tb_tensor_numel(x), .inner = 1, .len = 1};
  if ((st = param_axis(ctx, p, x, scale, &d.s_axis, &d)) != TB_OK) return st;
  if ((st = param_axis(ctx, p, x, zp, &d.z_axis, &d)) != TB_OK) return st;
  d.x_kind = kind_of(tb_tensor_dtype(x));
  d.y_kind = kind_of(tb_tensor_dtype(y));
  if (d.n == 0) return TB_OK;
  tb_cuda_launch l;
  tb_cuda_begin(&l, ctx, quantize ? "tb_cu_q_quantize_f32" : "tb_cu_q_dequantize_f32");
  tb_cuda_arg_tensor(&l, x);
  tb_cuda_arg_tensor(&l, scale);
  tb_cuda_arg_optional(&l, zp);
  tb_cuda_arg_tensor(&l, y);
  tb_cuda_arg_bytes(&l, &d, sizeof d, 8);
  return tb_cuda_go_elements(&l, d.n);
}

static tb_status quantize_run(tb_kernel_ctx *ctx) { return quant_run(ctx, true); }
static tb_status dequantize_run(tb_kernel_ctx *ctx) { return quant_run(ctx, false); }

static bool is(const tb_kernel_query *q, size_t i, tb_dtype d) { return i < q->n_inputs && q->in[i] && q->in[i]->has_dtype && q->in[i]->dtype == d; }
static bool absent(const tb_kernel_query *q, size_t i) { return i >= q->n_inputs || !q->in[i]; }
static bool is_8bit(const tb_kernel_query *q, size_t i) { return is(q, i, TB_DTYPE_U8) || is(q, i, TB_DTYPE_I8); }

/* float32 x and scale; a uint8 / int8 zero point or none. */
static bool quantize_accepts(const tb_kernel_query *q) {
  return q->params && q->n_outputs == 1 && is(q, 0, TB_DTYPE_F32) && is(q, 1, TB_DTYPE_F32) && (absent(q, 2) || is_8bit(q, 2));
}

/* uint8, int8 or int32 x with a zero point of its dtype or none; float32 scale. */
static bool dequantize_accepts(const tb_kernel_query *q) {
  if (!q->params || q->n_outputs != 1 || !is(q, 1, TB_DTYPE_F32) || !(is_8bit(q, 0) || is(q, 0, TB_DTYPE_I32))) return false;
  return absent(q, 2) || is(q, 2, q->in[0]->dtype);
}

/* ---- MatMulInteger and QLinearMatMul --------------------------------------------------------------------- */

/* A zero point's step for matrix m (1: per row of A / per column of B, 0: per tensor), or TB_ERR_MODEL as the CPU
 * says it. */
static tb_status zero_point_step(tb_kernel_ctx *ctx, const tb_tensor *zp, const tb_tensor *m, bool per_row, int32_t *step) {
  *step = 0;
  if (!zp || tb_tensor_numel(zp) == 1) return TB_OK;
  int64_t rows = m->ndim >= 2 ? m->shape[m->ndim - 2] : 1, cols = m->shape[m->ndim - 1], want = per_row ? rows : cols;
  if (tb_tensor_numel(zp) != want)
    return tb_kernel_error(ctx, TB_ERR_MODEL, "a zero point has %lld values; it must be a scalar or have %lld", (long long)tb_tensor_numel(zp),
                           (long long)want);
  *step = 1;
  return TB_OK;
}

/* The product's descriptor for a and b with numpy's matmul shapes, and the output's shape; TB_ERR_INVALID_ARGUMENT
 * for operands that do not multiply. */
static tb_status product_shape(tb_kernel_ctx *ctx, const tb_tensor *a, const tb_tensor *b, tb_cuda_gemm_desc *d, size_t *ndim, int64_t *shape) {
  char as[160], bs[160];
  if (a->ndim < 1 || b->ndim < 1)
    return tb_kernel_error(ctx, TB_ERR_INVALID_ARGUMENT, "the operands must have rank >= 1 (got ranks %zu and %zu)", a->ndim, b->ndim);
  int64_t m = a->ndim >= 2 ? a->shape[a->ndim - 2] : 1, k = a->shape[a->ndim - 1];
  int64_t kb = b->ndim >= 2 ? b->shape[b->ndim - 2] : b->shape[0], n = b->ndim >= 2 ? b->shape[b->ndim - 1] : 1;
  size_t ra = a->ndim > 2 ? a->ndim - 2 : 0, rb = b->ndim > 2 ? b->ndim - 2 : 0, rank = ra > rb ? ra : rb;
  int64_t dims[TB_MAX_DIMS];
  bool fits = k == kb;
  for (size_t r = 0; r < rank && fits; r++) {
    int64_t da = r + ra >= rank ? a->shape[r + ra - rank] : 1, db = r + rb >= rank ? b->shape[r + rb - rank] : 1;
    fits = da == db || da == 1 || db == 1;
    dims[r] = da == 1 ? db : da;
  }
  if (!fits) {
    return tb_kernel_error(ctx, TB_ERR_INVALID_ARGUMENT, "A %s and B %s do not multiply: %s; check the inputs' shapes",
                           tb_dims_str(as, sizeof as, a->ndim, a->shape), tb_dims_str(bs, sizeof bs, b->ndim, b->shape),
                           k != kb ? "A's last dim differs from B's rows" : "their batch dims do not broadcast");
  }
  memset(d, 0, sizeof *d);
  tb_cuda_gemm_set_batch(d, rank, dims);
  d->m = m;
  d->n = n;
  d->k = k;
  d->alpha = 1.0f;
  if (a->ndim >= 2) tb_cuda_gemm_strides(a->ndim, a->shape, rank, d->a_batch, &d->a_rs, &d->a_cs);
  else d->a_cs = 1;
  if (b->ndim >= 2) tb_cuda_gemm_strides(b->ndim, b->shape, rank, d->b_batch, &d->b_rs, &d->b_cs);
  else d->b_rs = 1;
  *ndim = rank;
  memcpy(shape, dims, rank * sizeof *shape);
  if (a->ndim >= 2) shape[(*ndim)++] = m;
  if (b->ndim >= 2) shape[(*ndim)++] = n;
  return TB_OK;
}

static tb_status qmatmul_run(tb_kernel_ctx *ctx, bool qlinear) {
  size_t ia = 0, ib = qlinear ? 3 : 1, iaz = 2, ibz = qlinear ? 5 : 3;
  const tb_tensor *a = input_at(ctx, ia), *b = input_at(ctx, ib), *azp = input_at(ctx, iaz), *bzp = input_at(ctx, ibz);
  if (qlinear)
    for (size_t i = 1; i < 8; i++)
      if (i != 3 && (!input_at(ctx, i) || tb_tensor_numel(input_at(ctx, i)) != 1))
        return tb_kernel_error(ctx, TB_ERR_UNSUPPORTED, "input %zu has %lld values; only per-tensor scales and zero points are supported", i,
                               input_at(ctx, i) ? (long long)tb_tensor_numel(input_at(ctx, i)) : 0LL);
  tb_cuda_gemm_desc d;
  int64_t shape[TB_MAX_DIMS];
  size_t ndim = 0;
  tb_status st = product_shape(ctx, a, b, &d, &ndim, shape);
  qmm_desc q = {.a_kind = kind_of(tb_tensor_dtype(a)), .b_kind = kind_of(tb_tensor_dtype(b))};
  if (st == TB_OK) st = zero_point_step(ctx, azp, a, true, &q.azp_rows);
  if (st == TB_OK) st = zero_point_step(ctx, bzp, b, false, &q.bzp_cols);
  tb_tensor *y = NULL;
  tb_dtype out = qlinear ? tb_tensor_dtype(input_at(ctx, 7)) : TB_DTYPE_I32;
  if (st == TB_OK) st = tb_kernel_output(ctx, 0, out, ndim, shape, &y);
  if (st != TB_OK) return st;
  q.y_kind = kind_of(out);
  tb_cuda_gemm_merge_batch(&d);
  if (d.batch * d.m * d.n == 0) return TB_OK;
  tb_cuda_launch l;
  tb_cuda_begin(&l, ctx, "tb_cu_q_matmul");
  tb_cuda_arg_optional(&l, a);
  tb_cuda_arg_optional(&l, b);
  tb_cuda_arg_optional(&l, azp);
  tb_cuda_arg_optional(&l, bzp);
  static const size_t scales[4] = {1, 4, 6, 7}; /* a_scale, b_scale, y_scale, y_zero_point */
  for (size_t i = 0; i < 4; i++) tb_cuda_arg_optional(&l, qlinear ? input_at(ctx, scales[i]) : NULL);
  tb_cuda_arg_tensor(&l, y);
  tb_cuda_arg_bytes(&l, &d, sizeof d, 8);
  tb_cuda_arg_bytes(&l, &q, sizeof q, 4);
  return tb_cuda_go_elements(&l, d.batch * d.m * d.n);
}

static tb_status matmul_integer_run(tb_kernel_ctx *ctx) { return qmatmul_run(ctx, false); }
static tb_status qlinear_matmul_run(tb_kernel_ctx *ctx) { return qmatmul_run(ctx, true); }

/* uint8 / int8 A and B, each zero point of its matrix' dtype or absent. */
static bool matmul_integer_accepts(const tb_kernel_query *q) {
  if (q->n_outputs != 1 || !is_8bit(q, 0) || !is_8bit(q, 1)) return false;
  return (absent(q, 2) || is(q, 2, q->in[0]->dtype)) && (absent(q, 3) || is(q, 3, q->in[1]->dtype));
}

/* uint8 / int8 A, B and Y with zero points of their dtypes, float32 scales: all eight inputs. */
static bool qlinear_matmul_accepts(const tb_kernel_query *q) {
  if (q->n_outputs != 1 || q->n_inputs != 8 || !is_8bit(q, 0) || !is_8bit(q, 3) || !is_8bit(q, 7)) return false;
  return is(q, 1, TB_DTYPE_F32) && is(q, 4, TB_DTYPE_F32) && is(q, 6, TB_DTYPE_F32) && is(q, 2, q->in[0]->dtype) &&
         is(q, 5, q->in[3]->dtype);
}


/* ---- ConvInteger and QLinearConv -------------------------------------------------------------------------- */

/* A zero point (input i): a scalar, or (per_channel) one per output channel k; TB_ERR_MODEL as the CPU says it. */
static tb_status conv_zero_point(tb_kernel_ctx *ctx, size_t i, bool per_channel, int64_t k, int32_t *channels) {
  const tb_tensor *zp = input_at(ctx, i);
  *channels = 0;
  if (!zp || tb_tensor_numel(zp) == 1) return TB_OK;
  if (per_channel && tb_tensor_numel(zp) == k) {
    *channels = 1;
    return TB_OK;
  }
  return tb_kernel_error(ctx, TB_ERR_MODEL, "input %zu (a zero point) has %lld values; it must be a scalar%s", i, (long long)tb_tensor_numel(zp),
                         per_channel ? " or have one per output channel" : "");
}

static tb_status qconv_run(tb_kernel_ctx *ctx, bool qlinear) {
  tb_status st;
  const tb_conv_params *p = tb_kernel_params(ctx, &st);
  if (!p) return st;
  size_t iw = qlinear ? 3 : 1, ixz = 2, iwz = qlinear ? 5 : 3;
  const tb_tensor *x = input_at(ctx, 0), *w = input_at(ctx, iw), *bias = qlinear ? input_at(ctx, 8) : NULL;
  tb_cuda_cnn_desc g;
  int64_t shape[TB_MAX_DIMS];
  qconv_desc d = {.x_kind = kind_of(tb_tensor_dtype(x)), .w_kind = kind_of(tb_tensor_dtype(w))};
  if ((st = tb_cuda_conv_geometry(ctx, p, x, w, bias, &g, shape)) != TB_OK) return st;
  int32_t x_channels = 0;
  if ((st = conv_zero_point(ctx, ixz, false, g.k, &x_channels)) != TB_OK) return st;
  if ((st = conv_zero_point(ctx, iwz, true, g.k, &d.wzp_channels)) != TB_OK) return st;
  if (qlinear) {
    int64_t ws = tb_tensor_numel(input_at(ctx, 4));
    if (tb_tensor_numel(input_at(ctx, 1)) != 1 || tb_tensor_numel(input_at(ctx, 6)) != 1 || tb_tensor_numel(input_at(ctx, 7)) != 1 ||
        (ws != 1 && ws != g.k))
      return tb_kernel_error(ctx, TB_ERR_MODEL, "x_scale, y_scale and y_zero_point must be scalars and w_scale a scalar or one value per "
                             "output channel");
    d.ws_channels = ws != 1;
  }
  tb_dtype out = qlinear ? tb_tensor_dtype(input_at(ctx, 7)) : TB_DTYPE_I32;
  tb_tensor *y = NULL;
  if ((st = tb_kernel_output(ctx, 0, out, x->ndim, shape, &y)) != TB_OK) return st;
  d.y_kind = kind_of(out);
  d.n = g.n, d.c = g.c, d.k = g.k, d.groups = g.groups;
  for (int a = 0; a < 3; a++) { /* the geometry's three spatial axes (its fourth is unused) */
    d.in[a] = g.in[a], d.out[a] = g.out[a], d.kernel[a] = g.kernel[a], d.stride[a] = g.stride[a];
    d.dilation[a] = g.dilation[a], d.pad[a] = g.pad[a];
  }
  int64_t total = tb_tensor_numel(y);
  if (total == 0) return TB_OK;
  tb_cuda_launch l;
  tb_cuda_begin(&l, ctx, "tb_cu_q_conv");
  tb_cuda_arg_optional(&l, x);
  tb_cuda_arg_optional(&l, w);
  tb_cuda_arg_optional(&l, input_at(ctx, ixz));
  tb_cuda_arg_optional(&l, input_at(ctx, iwz));
  static const size_t scales[4] = {1, 4, 6, 7}; /* x_scale, w_scale, y_scale, y_zero_point */
  for (size_t i = 0; i < 4; i++) tb_cuda_arg_optional(&l, qlinear ? input_at(ctx, scales[i]) : NULL);
  tb_cuda_arg_optional(&l, bias);
  tb_cuda_arg_tensor(&l, y);
  tb_cuda_arg_bytes(&l, &d, sizeof d, 8);
  return tb_cuda_go_elements(&l, total);
}

static tb_status conv_integer_run(tb_kernel_ctx *ctx) { return qconv_run(ctx, false); }
static tb_status qlinear_conv_run(tb_kernel_ctx *ctx) { return qconv_run(ctx, true); }

/* uint8 / int8 X and W with zero points of their dtypes or none. */
static bool conv_integer_accepts(const tb_kernel_query *q) {
  if (!q->params || q->n_outputs != 1 || !is_8bit(q, 0) || !is_8bit(q, 1)) return false;
  return (absent(q, 2) || is(q, 2, q->in[0]->dtype)) && (absent(q, 3) || is(q, 3, q->in[1]->dtype));
}

/* uint8 / int8 X, W and Y with zero points of their dtypes, float32 scales, an int32 bias or none. */
static bool qlinear_conv_accepts(const tb_kernel_query *q) {
  if (!q->params || q->n_outputs != 1 || q->n_inputs < 8 || !is_8bit(q, 0) || !is_8bit(q, 3) || !is_8bit(q, 7)) return false;
  return is(q, 1, TB_DTYPE_F32) && is(q, 4, TB_DTYPE_F32) && is(q, 6, TB_DTYPE_F32) && is(q, 2, q->in[0]->dtype) && is(q, 5, q->in[3]->dtype) &&
         (absent(q, 8) || is(q, 8, TB_DTYPE_I32));
}

static const tb_kernel kernels[] = {
    TB_CUDA_KERNEL("", "QuantizeLinear", quantize_accepts, quantize_run),
    TB_CUDA_KERNEL("", "DequantizeLinear", dequantize_accepts, dequantize_run),
    TB_CUDA_KERNEL("", "MatMulInteger", matmul_integer_accepts, matmul_integer_run),
    TB_CUDA_KERNEL("", "QLinearMatMul", qlinear_matmul_accepts, qlinear_matmul_run),
    TB_CUDA_KERNEL("", "ConvInteger", conv_integer_accepts, conv_integer_run),
    TB_CUDA_KERNEL("", "QLinearConv", qlinear_conv_accepts, qlinear_conv_run),
};
const tb_cuda_family tb_cuda_family_quant = {kernels, sizeof kernels / sizeof kernels[0]};
