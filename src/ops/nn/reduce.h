/* Internal: the axes of a Reduce* node, shared by its infer function and its kernel. The axes come from
 * the `axes` attribute, or from the optional second input for ReduceSum from opset 13 and the other
 * reductions from opset 18; empty axes reduce every axis unless noop_with_empty_axes is set. */
#ifndef TB_OPS_NN_REDUCE_H
#define TB_OPS_NN_REDUCE_H
#include "ir/ir.h"

typedef struct nn_reduce_axes {
  bool known;                  /* false: the axes input's value is not known yet */
  bool noop;                   /* empty axes with noop_with_empty_axes: the output is the input */
  bool keepdims;
  bool reduce[TB_MAX_DIMS];    /* per input axis */
} nn_reduce_axes;

/* Whether this node takes its axes from input 1. */
bool tb_nn_reduce_axes_from_input(const tb_node *node);
/* Resolve the axes for an input of rank `rank`. axes_value: input 1's value (or NULL when absent or
 * unknown: `known` is then false when input 1 is present). Out-of-range or repeated axes are TB_ERR_MODEL
 * naming the node and the value. */
tb_status tb_nn_reduce_axes_read(const tb_graph *g, const tb_node *node, size_t rank, bool axes_input_present,
                              const int64_t *axes_value, size_t n_axes_value, nn_reduce_axes *out);

#endif
