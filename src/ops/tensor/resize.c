/* Resize (opsets 10, 11/13, 18) and the deprecated Upsample (7, 9): modes nearest (4 rounding rules),
 * linear and cubic, the coordinate transformation modes, output size from scales or sizes. */
#include "ops/op_params.h"
#include "ops/tensor/resize.h"
#include <math.h>
#include <string.h>
#include "ops/tensor/tensor_infer.h"

tb_status tb_resize_parse(const tb_graph *g, const tb_node *n, void *params) {
  tb_resize_params *a = params;
  bool upsample = strcmp(n->op_type, "Upsample") == 0;
  bool modern = !upsample && n->opset >= 11;
  a->source = modern ? TB_RESIZE_INPUTS : upsample && n->opset < 9 ? TB_RESIZE_SCALES_ATTR : TB_RESIZE_SCALES_INPUT1;
  const char *s;
  tb_status st = tb_attr_string(g, n, "mode", "nearest", &s);
  if (st != TB_OK) return st;
  if (strcmp(s, "nearest") == 0)
    a->mode = TB_RESIZE_NEAREST;
  else if (strcmp(s, "linear") == 0 || (upsample && strcmp(s, "bilinear") == 0))
    a->mode = TB_RESIZE_LINEAR;
  else if (strcmp(s, "cubic") == 0 && modern)
    a->mode = TB_RESIZE_CUBIC;
  else
    return tb_node_error(g, n, TB_ERR_MODEL, "unknown mode '%s' (nearest, linear%s)", s, modern ? ", cubic" : "");
  a->coord = TB_COORD_ASYMMETRIC;
  a->nearest = TB_NEAREST_SIMPLE;
  a->cubic_a = -0.75;
  a->exclude_outside = false;
  a->extrapolation = 0;
  if (a->source == TB_RESIZE_SCALES_ATTR) {
    const float *f;
    if ((st = tb_attr_floats(g, n, "scales", &f, &a->n_scales)) != TB_OK) return st;
    if (!f) return tb_node_error(g, n, TB_ERR_MODEL, "attribute 'scales' is required");
    if (a->n_scales > TB_MAX_DIMS)
      return tb_node_error(g, n, TB_ERR_UNSUPPORTED, "scales has %zu entries; at most %d are supported", a->n_scales,
                           TB_MAX_DIMS);
    for (size_t k = 0; k < a->n_scales; k++) a->scales[k] = f[k];
  }
  if (!modern) return TB_OK;
  static const char *const coords[] = {"half_pixel", "pytorch_half_pixel", "align_corners", "asymmetric",
                                       "tf_half_pixel_for_nearest", "tf_crop_and_resize"};
  if ((st = tb_attr_string(g, n, "coordinate_transformation_mode", "half_pixel", &s)) != TB_OK) return st;
  int c = -1;
  for (int i = 0; i < 6; i++)
    if (strcmp(s, coords[i]) == 0) c = i;
  if (strcmp(s, "tf_half_pixel_for_nn") == 0) c = TB_COORD_TF_HALF_PIXEL_FOR_NEAREST; /* its opset-11 name */
  if (c < 0) {
    if (strcmp(s, "half_pixel_symmetric") == 0)
      return tb_node_error(g, n, TB_ERR_UNSUPPORTED, "coordinate_transformation_mode 'half_pixel_symmetric' is not supported");
    return tb_node_error(g, n, TB_ERR_MODEL, "unknown coordinate_transformation_mode '%s'", s);
  }
  a->coord = (tb_resize_coord)c;
  static const char *const nearest[] = {"round_prefer_floor", "round_prefer_ceil", "floor", "ceil"};
  if ((st = tb_attr_string(g, n, "nearest_mode", "round_prefer_floor", &s)) != TB_OK) return st;
  int m = -1;
  for (int i = 0; i < 4; i++)
    if (strcmp(s, nearest[i]) == 0) m = i;
  if (m < 0) return tb_node_error(g, n, TB_ERR_MODEL, "unknown nearest_mode '%s'", s);
  a->nearest = (tb_resize_nearest)m;
  float f;
  int64_t i64;
  if ((st = tb_attr_float(g, n, "cubic_coeff_a", -0.75f, &f)) != TB_OK) return st;
  a->cubic_a = f;
  if ((st = tb_attr_int(g, n, "exclude_outside", 0, &i64)) != TB_OK) return st;
  a->exclude_outside = i64 != 0;
  if ((st = tb_attr_float(g, n, "extrapolation_value", 0.0f, &f)) != TB_OK) return st;
  a->extrapolation = f;
  if (n->opset >= 18) {
    if ((st = tb_attr_int(g, n, "antialias", 0, &i64)) != TB_OK) return st;
    if (i64) return tb_node_error(g, n, TB_ERR_UNSUPPORTED, "antialias=1 is not supported");
    if (tb_node_attr(n, "axes")) return tb_node_error(g, n, TB_ERR_UNSUPPORTED, "the 'axes' attribute is not supported");
    if ((st = tb_attr_string(g, n, "keep_aspect_ratio_policy", "stretch", &s)) != TB_OK) return st;
    if (strcmp(s, "stretch") != 0)
      return tb_node_error(g, n, TB_ERR_UNSUPPORTED, "keep_aspect_ratio_policy '%s' is not supported (stretch is)", s);
  }
  return TB_OK;
}

/* A float input's values (f32/f64/f16/bf16) as doubles; *n -1 and *known false when not known. */
static tb_status float_values(const tb_infer_ctx *ctx, size_t i, double *out, size_t cap, int64_t *n, bool *known) {
  *known = false;
  *n = -1;
  if (!tb_tt_has(ctx, i)) return TB_OK;
  const tb_value_type *t = ctx->in[i];
  if (t->has_shape && t->ndim == 1) *n = t->dims[0].value;
  const tb_ir_tensor *v = ctx->value ? ctx->value[i] : NULL;
  if (!v) return TB_OK;
  int64_t count = tb_ir_tensor_numel(v);
  if (count < 0 || (uint64_t)count > cap)
    return tb_infer_error(ctx, TB_ERR_MODEL, "input %zu has %lld values; at most %zu expected", i, (long long)count, cap);
  for (int64_t k = 0; k < count; k++) out[k] = tb_ir_tensor_double(v, k);
  *n = count;
  *known = true;
  return TB_OK;
}

tb_status tb_resize_sizes(const tb_infer_ctx *ctx, const tb_resize_params *a, size_t rank, const int64_t *in,
                          int64_t *out, double *scales, double *roi, bool *known) {
  tb_status st;
  *known = false;
  for (size_t d = 0; d < rank; d++) {
    roi[d] = 0;
    roi[rank + d] = 1;
  }
  double sc[TB_MAX_DIMS];
  int64_t ns = -1, sizes[TB_MAX_DIMS], nz = -1;
  bool sk = false, zk = false, has_sizes = false;
  if (a->source == TB_RESIZE_SCALES_ATTR) {
    for (size_t k = 0; k < a->n_scales; k++) sc[k] = a->scales[k];
    ns = (int64_t)a->n_scales;
    sk = true;
  } else if (a->source == TB_RESIZE_SCALES_INPUT1) {
    if ((st = float_values(ctx, 1, sc, TB_MAX_DIMS, &ns, &sk)) != TB_OK) return st;
  } else {
    if (tb_tt_has(ctx, 3) && (st = tb_infer_require(ctx, 3, TT_I64)) != TB_OK) return st;
    if ((st = float_values(ctx, 2, sc, TB_MAX_DIMS, &ns, &sk)) != TB_OK) return st;
    if ((st = tb_tt_input_ints(ctx, 3, sizes, TB_MAX_DIMS, &nz, &zk)) != TB_OK) return st;
    has_sizes = tb_tt_has(ctx, 3) && nz != 0;
    if (has_sizes && ns > 0) return tb_infer_error(ctx, TB_ERR_MODEL, "has both scales and sizes; give only one");
    if (has_sizes && !zk) return TB_OK;
    if (!has_sizes && ns == 0) return tb_infer_error(ctx, TB_ERR_MODEL, "has neither scales nor sizes");
    if (a->coord == TB_COORD_TF_CROP_AND_RESIZE && tb_tt_has(ctx, 1)) {
      double r[2 * TB_MAX_DIMS];
      int64_t nr;
      bool rk;
      if ((st = float_values(ctx, 1, r, 2 * TB_MAX_DIMS, &nr, &rk)) != TB_OK) return st;
      if (!rk) return TB_OK;
      if (nr != (int64_t)(2 * rank))
        return tb_infer_error(ctx, TB_ERR_MODEL, "roi has %lld values; %zu expected", (long long)nr, 2 * rank);
      memcpy(roi, r, 2 * rank * sizeof *r);
    }
  }
  if (has_sizes) {
    if (nz != (int64_t)rank)
      return tb_infer_error(ctx, TB_ERR_MODEL, "sizes has %lld values for an input of rank %zu", (long long)nz, rank);
    for (size_t d = 0; d < rank; d++) {
      if (sizes[d] < 0) return tb_infer_error(ctx, TB_ERR_MODEL, "sizes has the negative value %lld", (long long)sizes[d]);
      out[d] = sizes[d];
      scales[d] = in[d] > 0 ? (double)sizes[d] / (double)in[d] : 1.0;
    }
    *known = true;
    return TB_OK;
  }
  if (!sk) return TB_OK;
  if (ns != (int64_t)rank)
    return tb_infer_error(ctx, TB_ERR_MODEL, "scales has %lld values for an input of rank %zu", (long long)ns, rank);
  for (size_t d = 0; d < rank; d++) {
    if (!(sc[d] > 0) || sc[d] > 1e9) return tb_infer_error(ctx, TB_ERR_MODEL, "scale %g on dim %zu must be positive", sc[d], d);
    scales[d] = sc[d];
    if (in[d] < 0) {
      out[d] = -1;
      continue;
    }
    double size = (double)in[d] * sc[d];
    if (a->coord == TB_COORD_TF_CROP_AND_RESIZE) size *= roi[rank + d] - roi[d];
    if (!(size >= 0) || size > 9e15) return tb_infer_error(ctx, TB_ERR_MODEL, "the output size of dim %zu (%g) is out of range", d, size);
    out[d] = (int64_t)floor(size);
  }
  *known = true;
  return TB_OK;
}

static tb_status resize_infer(tb_infer_ctx *ctx) {
  tb_status st = tb_infer_require(ctx, 0, 0);
  if (st != TB_OK) return st;
  tb_dtype dt = ctx->in[0]->dtype;
  tb_resize_params a = {0};
  if ((st = tb_infer_params(ctx, &a, sizeof a)) != TB_OK) return st;
  if (a.mode != TB_RESIZE_NEAREST && !(TT_FLOATS & TB_DTYPE_BIT(dt)))
    return tb_infer_error(ctx, TB_ERR_UNSUPPORTED, "%s interpolation of %s is not supported (float types only)",
                          a.mode == TB_RESIZE_LINEAR ? "linear" : "cubic", tb_dtype_name(dt));
  const tb_value_type *in = tb_tt_ranked(ctx, 0);
  if (!in) {
    tb_tt_out_unranked(ctx, 0, dt);
    return TB_OK;
  }
  int64_t dims[TB_MAX_DIMS], out[TB_MAX_DIMS];
  double scales[TB_MAX_DIMS], roi[2 * TB_MAX_DIMS];
  bool known;
  tb_tt_dims(in, dims);
  if ((st = tb_resize_sizes(ctx, &a, in->ndim, dims, out, scales, roi, &known)) != TB_OK) return st;
  if (!known) {
    tb_tt_out_rank(ctx, 0, dt, in->ndim);
    return TB_OK;
  }
  tb_tt_out_dims(ctx, 0, dt, in->ndim, out);
  return TB_OK;
}

const tb_op_def tb_op_resize_10 = {"", "Resize", 10, 2, 2, 1, 1, 1u << 1, resize_infer, sizeof(tb_resize_params), tb_resize_parse};
const tb_op_def tb_op_resize_11 = {"", "Resize", 11, 1, 4, 1, 1, 0xeu, resize_infer, sizeof(tb_resize_params), tb_resize_parse};
const tb_op_def tb_op_upsample_7 = {"", "Upsample", 7, 1, 1, 1, 1, 0, resize_infer, sizeof(tb_resize_params), tb_resize_parse};
const tb_op_def tb_op_upsample_9 = {"", "Upsample", 9, 2, 2, 1, 1, 1u << 1, resize_infer, sizeof(tb_resize_params), tb_resize_parse};
