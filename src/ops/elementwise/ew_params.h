/* Internal: the typed parameters of the elementwise operators, read once from a node's attributes by the
 * op's parse function (ew_parse.c, cast.c) and checked there; inference and every backend's kernels read
 * these structs, never the attributes. Ops without attributes (Relu, Add at opset 7+, Sqrt...) have none. */
#ifndef TB_OPS_ELEMENTWISE_EW_PARAMS_H
#define TB_OPS_ELEMENTWISE_EW_PARAMS_H
#include <stdbool.h>
#include <stdint.h>
#include "ir/ir.h"

/* The float attributes of an activation, with the ONNX defaults when absent:
 *   LeakyRelu alpha 0.01; HardSigmoid alpha 0.2, beta 0.5; Elu, Celu, ThresholdedRelu alpha 1;
 *   Selu alpha 1.6732632, gamma 1.0507010; Shrink bias (alpha) 0, lambd (beta) 0.5. */
typedef struct tb_act_params {
  float alpha, beta, gamma;
} tb_act_params;

/* Clip before opset 11: min and max attributes (attr_form; defaults the lowest and highest float). From 11
 * the bounds are inputs 1 and 2 and attr_form is false. */
typedef struct tb_clip_params {
  bool attr_form;
  float min, max;
} tb_clip_params;

/* Cast: the destination dtype ('to') and saturate (opset 19, default 1; fp8 destinations only). CastLike
 * fills saturate only (its dtype comes from input 1). */
typedef struct tb_cast_params {
  tb_dtype to;
  bool saturate;
} tb_cast_params;

/* Mod: fmod (0: the divisor's sign, 1: C's fmod). */
typedef struct tb_mod_params {
  bool fmod;
} tb_mod_params;

/* BitShift: direction LEFT (left true) or RIGHT. */
typedef struct tb_bitshift_params {
  bool left;
} tb_bitshift_params;

/* IsInf: detect_negative, detect_positive (default 1 each). */
typedef struct tb_isinf_params {
  bool detect_negative, detect_positive;
} tb_isinf_params;

/* The binary ops before opset 7 (Add, Sub, Mul, Div, Pow, Equal, Less, Greater, And, Or, Xor): the legacy
 * broadcast attribute and B's axis in A (has_axis false: B is aligned as A's suffix). legacy is false from
 * opset 7, where numpy broadcasting applies and the attributes do not exist. */
typedef struct tb_binary_params {
  bool legacy;
  bool broadcast;
  bool has_axis;
  int64_t axis;
} tb_binary_params;

/* Parse functions (tb_op_def.parse): fill a zeroed block from the node's attributes; errors name the node,
 * the attribute, the value and the fix. */
tb_status tb_leakyrelu_parse(const tb_graph *g, const tb_node *n, void *params);
tb_status tb_hardsigmoid_parse(const tb_graph *g, const tb_node *n, void *params);
tb_status tb_alpha1_parse(const tb_graph *g, const tb_node *n, void *params); /* Elu, Celu, ThresholdedRelu */
tb_status tb_selu_parse(const tb_graph *g, const tb_node *n, void *params);
tb_status tb_shrink_parse(const tb_graph *g, const tb_node *n, void *params);
tb_status tb_clip_parse(const tb_graph *g, const tb_node *n, void *params);
tb_status tb_cast_parse(const tb_graph *g, const tb_node *n, void *params);
tb_status tb_castlike_parse(const tb_graph *g, const tb_node *n, void *params);
tb_status tb_mod_parse(const tb_graph *g, const tb_node *n, void *params);
tb_status tb_bitshift_parse(const tb_graph *g, const tb_node *n, void *params);
tb_status tb_isinf_parse(const tb_graph *g, const tb_node *n, void *params);
tb_status tb_binary_parse(const tb_graph *g, const tb_node *n, void *params);

#endif
