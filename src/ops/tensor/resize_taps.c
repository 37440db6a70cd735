/* Where each output coordinate of Resize (and Upsample) reads its input on one axis: the coordinate
 * transformation modes, the nearest rounding modes, and the linear and cubic (Keys, cubic_coeff_a,
 * exclude_outside) weights, as the ONNX spec defines them (ops/tensor/resize.h). */
#include <math.h>
#include "ops/tensor/resize.h"

static double original_coord(const tb_resize_params *a, int64_t x, double scale, int64_t in, int64_t out, double r0,
                              double r1) {
  double xr = (double)x;
  switch (a->coord) {
    case TB_COORD_HALF_PIXEL: return (xr + 0.5) / scale - 0.5;
    case TB_COORD_PYTORCH_HALF_PIXEL: return out > 1 ? (xr + 0.5) / scale - 0.5 : 0.0;
    case TB_COORD_ALIGN_CORNERS: {
      /* The spec's length_resized is input length * scale, not the rounded output length. */
      double length = (double)in * scale;
      (void)out;
      return length == 1 ? 0.0 : xr * (double)(in - 1) / (length - 1);
    }
    case TB_COORD_TF_HALF_PIXEL_FOR_NEAREST: return (xr + 0.5) / scale;
    case TB_COORD_TF_CROP_AND_RESIZE:
      return out > 1 ? r0 * (double)(in - 1) + xr * (r1 - r0) * (double)(in - 1) / (double)(out - 1)
                     : 0.5 * (r0 + r1) * (double)(in - 1);
    default: return xr / scale;
  }
}

static int64_t nearest_index(const tb_resize_params *a, double x, double scale) {
  switch (a->nearest) {
    case TB_NEAREST_ROUND_PREFER_FLOOR: return x == floor(x) + 0.5 ? (int64_t)floor(x) : (int64_t)llround(x);
    case TB_NEAREST_ROUND_PREFER_CEIL: return x == floor(x) + 0.5 ? (int64_t)ceil(x) : (int64_t)llround(x);
    case TB_NEAREST_FLOOR: return (int64_t)floor(x);
    case TB_NEAREST_CEIL: return (int64_t)ceil(x);
    default: return scale < 1 ? (int64_t)ceil(x) : (int64_t)x;
  }
}

static double cubic_weight(double s, double A) {
  s = fabs(s);
  if (s <= 1) return ((A + 2) * s - (A + 3)) * s * s + 1;
  if (s < 2) return ((A * s - 5 * A) * s + 8 * A) * s - 4 * A;
  return 0;
}

void tb_resize_taps_of(const tb_resize_params *a, int64_t x, double scale, int64_t in, int64_t out, double r0, double r1,
                       tb_resize_taps *t) {
  double xo = original_coord(a, x, scale, in, out, r0, r1);
  if (a->coord == TB_COORD_TF_CROP_AND_RESIZE && (xo < 0 || xo > (double)(in - 1))) {
    t->n = 1;
    t->idx[0] = -1;
    t->w[0] = 1;
    return;
  }
  if (a->mode == TB_RESIZE_NEAREST) {
    int64_t i = nearest_index(a, xo, scale);
    t->n = 1;
    t->idx[0] = i < 0 ? 0 : i >= in ? in - 1 : i;
    t->w[0] = 1;
    return;
  }
  if (a->mode == TB_RESIZE_LINEAR) {
    if (xo < 0) xo = 0;
    if (xo > (double)(in - 1)) xo = (double)(in - 1);
    int64_t i0 = (int64_t)floor(xo);
    double f = xo - (double)i0;
    t->n = 2;
    t->idx[0] = i0;
    t->idx[1] = i0 + 1 < in ? i0 + 1 : in - 1;
    t->w[0] = 1 - f;
    t->w[1] = f;
    return;
  }
  int64_t i0 = (int64_t)floor(xo);
  double f = xo - (double)i0, sum = 0;
  t->n = 4;
  for (int k = 0; k < 4; k++) {
    int64_t i = i0 - 1 + k;
    double w = cubic_weight(f - (double)(k - 1), a->cubic_a);
    if (i < 0 || i >= in) {
      if (a->exclude_outside) w = 0;
      i = i < 0 ? 0 : in - 1;
    }
    t->idx[k] = i;
    t->w[k] = w;
    sum += w;
  }
  if (a->exclude_outside && sum != 0)
    for (int k = 0; k < 4; k++) t->w[k] /= sum;
}

