/* Internal: the typed parameters of the tensor-family operators (shape and data movement), read once from a
 * node's attributes by the op's parse function (tensor_parse.c) and checked there; inference and every
 * backend's kernels read these structs, never the attributes. Values that depend on input shapes (a
 * negative axis, the default of Transpose's perm) stay as the attribute gives them; the helpers below resolve
 * them against the inputs (each takes the op's infer context: kernels build one from their concrete inputs,
 * tb_tk_infer_begin). */
#ifndef TB_OPS_TENSOR_PARAMS_H
#define TB_OPS_TENSOR_PARAMS_H
#include <stdbool.h>
#include <stdint.h>
#include "ops/op.h"
#include "ops/tensor/shape_rules.h"

/* Transpose: perm (n_perm entries) or, when has_perm is false, the reversed dims. */
typedef struct tb_transpose_params {
  bool has_perm;
  size_t n_perm;
  int64_t perm[TB_MAX_DIMS];
} tb_transpose_params;

/* Concat, Gather, GatherElements, Flatten, OneHot: one axis as given (negative: from the end). Concat's
 * is required from opset 4 (1 before); Flatten's defaults to 1, OneHot's to -1, the others' to 0. */
typedef struct tb_axis_params {
  int64_t axis;
} tb_axis_params;

/* GatherND: batch_dims (opset 12; 0 before). */
typedef struct tb_gather_nd_params {
  int64_t batch_dims;
} tb_gather_nd_params;

/* The scatters' reduction (opset 16; min and max from 18). */
typedef enum tb_scatter_reduction {
  TB_SCATTER_NONE = 0,
  TB_SCATTER_ADD,
  TB_SCATTER_MUL,
  TB_SCATTER_MIN,
  TB_SCATTER_MAX
} tb_scatter_reduction;

/* Scatter, ScatterElements (axis) and ScatterND (axis unused). */
typedef struct tb_scatter_params {
  int64_t axis;
  tb_scatter_reduction reduction;
} tb_scatter_params;

/* Split: sizes from the 'split' attribute (before opset 13: borrowed from the node, n_split entries), the
 * split input (split_input: opset 13+), or equal pieces (num_outputs from opset 18, 0 when absent). */
typedef struct tb_split_params {
  int64_t axis;
  bool split_input;
  const int64_t *split;
  size_t n_split;
  int64_t num_outputs;
} tb_split_params;

/* Squeeze and Unsqueeze: the axes attribute before opset 13 (has_axes when given), input 1 from 13
 * (axes_input). */
typedef struct tb_squeeze_params {
  bool axes_input;
  bool has_axes;
  size_t n_axes;
  int64_t axes[TB_MAX_DIMS];
} tb_squeeze_params;

/* Reshape: the shape attribute (opset 1-4: shape_attr) or input 1; allowzero from opset 14. */
typedef struct tb_reshape_params {
  bool shape_attr;
  size_t n_shape;
  int64_t shape[TB_MAX_DIMS];
  bool allowzero;
} tb_reshape_params;

/* Constant: which value attribute it has and that value (borrowed from the node). */
typedef enum tb_constant_kind {
  TB_CONSTANT_TENSOR,  /* value */
  TB_CONSTANT_FLOAT,   /* value_float: a f32 scalar */
  TB_CONSTANT_FLOATS,  /* value_floats: 1-D f32 */
  TB_CONSTANT_INT,     /* value_int: an i64 scalar */
  TB_CONSTANT_INTS     /* value_ints: 1-D i64 */
} tb_constant_kind;

typedef struct tb_constant_params {
  tb_constant_kind kind;
  const tb_ir_tensor *tensor; /* TB_CONSTANT_TENSOR */
  float f;
  int64_t i;
  const float *floats;        /* count entries */
  const int64_t *ints;        /* count entries */
  size_t count;
} tb_constant_params;

/* ConstantOfShape: the one-element fill tensor (borrowed), NULL for float 0. */
typedef struct tb_constant_of_shape_params {
  const tb_ir_tensor *value;
} tb_constant_of_shape_params;

/* Shape: the [start, end) range of dims (opset 15; all dims before). */
typedef struct tb_shape_params {
  int64_t start, end;
} tb_shape_params;

/* Slice: starts/ends/axes attributes (opset 1-9, n entries each), or inputs 1-4 from opset 10 (from_inputs). */
typedef struct tb_slice_params {
  bool from_inputs;
  size_t n;
  bool has_axes;
  int64_t starts[TB_MAX_DIMS], ends[TB_MAX_DIMS], axes[TB_MAX_DIMS];
} tb_slice_params;

typedef enum tb_pad_mode { TB_PAD_CONSTANT = 0, TB_PAD_REFLECT, TB_PAD_EDGE } tb_pad_mode;

/* Pad: the mode; before opset 11 the pads (n_pads entries: begins then ends) and the constant value are
 * attributes (pads_attr), from 11 inputs 1 and 2, with the axes input 3 from 18 (axes_input). */
typedef struct tb_pad_params {
  tb_pad_mode mode;
  bool pads_attr;
  size_t n_pads;
  int64_t pads[2 * TB_MAX_DIMS];
  float value;
  bool axes_input;
} tb_pad_params;

/* TopK: the axis; largest and sorted (opset 11, default 1); k as an attribute before opset 10 (k_attr). */
typedef struct tb_topk_params {
  int64_t axis;
  bool largest, sorted;
  bool k_attr;
  int64_t k;
} tb_topk_params;

/* DepthToSpace (mode DCR, or CRD from opset 11) and SpaceToDepth: the blocksize, at least 1. */
typedef struct tb_depth_space_params {
  bool to_space; /* DepthToSpace */
  int64_t blocksize;
  bool crd;
} tb_depth_space_params;

/* Trilu: upper (default 1). */
typedef struct tb_trilu_params {
  bool upper;
} tb_trilu_params;

/* CumSum: exclusive and reverse (default 0). */
typedef struct tb_cumsum_params {
  bool exclusive, reverse;
} tb_cumsum_params;

/* ReverseSequence: batch_axis (default 1) and time_axis (default 0), 0 and 1 in some order. */
typedef struct tb_reverse_sequence_params {
  int64_t batch_axis, time_axis;
} tb_reverse_sequence_params;

/* ---- Parse functions: fill a zeroed block from the node's attributes (tensor_parse.c); errors name the
 * node, the attribute, the value and the fix (TB_ERR_MODEL, or TB_ERR_UNSUPPORTED for what we lack). ---- */
tb_status tb_transpose_parse(const tb_graph *g, const tb_node *n, void *params);
tb_status tb_concat_parse(const tb_graph *g, const tb_node *n, void *params);
tb_status tb_axis0_parse(const tb_graph *g, const tb_node *n, void *params);      /* Gather, GatherElements */
tb_status tb_flatten_parse(const tb_graph *g, const tb_node *n, void *params);
tb_status tb_onehot_parse(const tb_graph *g, const tb_node *n, void *params);
tb_status tb_gather_nd_parse(const tb_graph *g, const tb_node *n, void *params);
tb_status tb_scatter_parse(const tb_graph *g, const tb_node *n, void *params);
tb_status tb_split_parse(const tb_graph *g, const tb_node *n, void *params);
tb_status tb_squeeze_parse(const tb_graph *g, const tb_node *n, void *params);   /* Squeeze and Unsqueeze */
tb_status tb_reshape_parse(const tb_graph *g, const tb_node *n, void *params);
tb_status tb_constant_parse(const tb_graph *g, const tb_node *n, void *params);
tb_status tb_constant_of_shape_parse(const tb_graph *g, const tb_node *n, void *params);
tb_status tb_shape_parse(const tb_graph *g, const tb_node *n, void *params);
tb_status tb_slice_parse(const tb_graph *g, const tb_node *n, void *params);
tb_status tb_pad_parse(const tb_graph *g, const tb_node *n, void *params);
tb_status tb_topk_parse(const tb_graph *g, const tb_node *n, void *params);
tb_status tb_depth_space_parse(const tb_graph *g, const tb_node *n, void *params);
tb_status tb_trilu_parse(const tb_graph *g, const tb_node *n, void *params);
tb_status tb_cumsum_parse(const tb_graph *g, const tb_node *n, void *params);
tb_status tb_reverse_sequence_parse(const tb_graph *g, const tb_node *n, void *params);

/* ---- Helpers that resolve parameters against the inputs (shared by inference and kernels) ---- */

/* Shape-15: the [start, end) range of dims for a rank (negative from the end, clamped to [0, rank]). */
void tb_shape_range(int64_t rank, int64_t start, int64_t end, int64_t *first, int64_t *count);
/* Slice: the per-dim plan (first, step, count) from the concrete inputs. */
tb_status tb_slice_infer_plan(tb_infer_ctx *ctx, const tb_slice_params *p, tb_slice_plan *plan);
/* Split: piece sizes for ctx->n_outputs outputs along an axis of size dim. */
tb_status tb_split_sizes(tb_infer_ctx *ctx, const tb_split_params *p, int64_t dim, int64_t *sizes, bool *known);
/* Pad: begin/end amounts per dim (attribute, or pads and axes inputs). */
tb_status tb_pad_amounts(tb_infer_ctx *ctx, const tb_pad_params *p, size_t rank, int64_t *begin, int64_t *end,
                         bool *known);
/* The name of a pad mode ("constant"). */
const char *tb_pad_mode_name(tb_pad_mode mode);
/* TopK: k (attribute before opset 10, else input 1). */
tb_status tb_topk_k(const tb_infer_ctx *ctx, const tb_topk_params *p, int64_t *k, bool *known);

#endif
