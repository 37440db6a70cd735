/* Internal: the axes of a Reduce* node resolved for its input's rank, shared by its infer function and
 * every backend's kernels. The axes come from the parsed `axes` attribute (tb_reduce_params), or from the
 * optional second input for ReduceSum from opset 13 and the other reductions from opset 18; empty axes
 * reduce every axis unless noop_with_empty_axes is set. */
#ifndef TB_OPS_NN_REDUCE_H
#define TB_OPS_NN_REDUCE_H
#include "ops/nn/nn_params.h"

typedef struct nn_reduce_axes {
  bool known;                  /* false: the axes input's value is not known yet */
  bool noop;                   /* empty axes with noop_with_empty_axes: the output is the input */
  bool keepdims;
  bool reduce[TB_MAX_DIMS];    /* per input axis */
} nn_reduce_axes;

/* Resolve the axes of p for an input of rank `rank`. When p->axes_from_input: axes_value is input 1's
 * value (NULL when absent or unknown: `known` is then false when input 1 is present). Out-of-range or
 * repeated axes are TB_ERR_MODEL naming the value (not the node: callers name it). */
tb_status tb_nn_reduce_axes_resolve(const tb_reduce_params *p, size_t rank, bool axes_input_present,
                                    const int64_t *axes_value, size_t n_axes_value, nn_reduce_axes *out);

#endif
