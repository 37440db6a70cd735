/* Internal: the meaning of Resize (and the deprecated Upsample) shared by the definition and the kernels —
 * the typed parameters parsed once from the attributes, and the output size, scales and roi from the inputs. */
#ifndef TB_OPS_TENSOR_RESIZE_H
#define TB_OPS_TENSOR_RESIZE_H
#include "ops/op.h"

typedef enum { TB_RESIZE_NEAREST, TB_RESIZE_LINEAR, TB_RESIZE_CUBIC } tb_resize_mode;
typedef enum {
  TB_COORD_HALF_PIXEL,
  TB_COORD_PYTORCH_HALF_PIXEL,
  TB_COORD_ALIGN_CORNERS,
  TB_COORD_ASYMMETRIC,
  TB_COORD_TF_HALF_PIXEL_FOR_NEAREST,
  TB_COORD_TF_CROP_AND_RESIZE
} tb_resize_coord;
/* SIMPLE: Upsample and Resize-10 (floor, or ceil when downsampling). */
typedef enum { TB_NEAREST_ROUND_PREFER_FLOOR, TB_NEAREST_ROUND_PREFER_CEIL, TB_NEAREST_FLOOR, TB_NEAREST_CEIL, TB_NEAREST_SIMPLE } tb_resize_nearest;

/* Where the output size comes from: Upsample-7's scales attribute, input 1 (Upsample-9, Resize-10: scales), or
 * Resize-11+'s roi, scales and sizes inputs (1, 2, 3). */
typedef enum { TB_RESIZE_SCALES_ATTR, TB_RESIZE_SCALES_INPUT1, TB_RESIZE_INPUTS } tb_resize_source;

typedef struct tb_resize_params {
  tb_resize_mode mode;
  tb_resize_coord coord;
  tb_resize_nearest nearest;
  double cubic_a;
  bool exclude_outside;
  double extrapolation;
  tb_resize_source source;
  size_t n_scales;              /* TB_RESIZE_SCALES_ATTR: the scales attribute */
  double scales[TB_MAX_DIMS];
} tb_resize_params;

/* The input taps of output coordinate x on one axis (input size in, output size out, scale, roi start r0 and
 * end r1): 1 for nearest, 2 for linear, 4 for cubic (cubic_coeff_a, exclude_outside), with their weights,
 * the indices clamped into the axis. idx[0] = -1 for a coordinate outside the input under
 * tf_crop_and_resize: the output there is the extrapolation value. The reference kernel and the fast one
 * both build their taps here. */
typedef struct tb_resize_taps {
  int64_t idx[4];
  double w[4];
  int n;
} tb_resize_taps;
void tb_resize_taps_of(const tb_resize_params *a, int64_t x, double scale, int64_t in, int64_t out, double r0, double r1,
                       tb_resize_taps *t);

/* Fill a zeroed tb_resize_params from a Resize or Upsample node (tb_op_def.parse). */
tb_status tb_resize_parse(const tb_graph *g, const tb_node *n, void *params);
/* Output dims, per-dim scales and roi (2*rank: starts then ends) for an input of this rank and dims
 * (known). *known false when an input value the sizes depend on is not known. */
tb_status tb_resize_sizes(const tb_infer_ctx *ctx, const tb_resize_params *p, size_t rank, const int64_t *in,
                          int64_t *out, double *scales, double *roi, bool *known);

#endif
