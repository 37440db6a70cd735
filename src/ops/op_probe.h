/* Internal: which element types an operator definition takes, found by running its own inference on a
 * one-node graph with unranked inputs of each dtype (for `tb ops` through tb_op_info_get), so the answer
 * is the one a model would meet at prepare, never a list kept by hand. */
#ifndef TB_OPS_OP_PROBE_H
#define TB_OPS_OP_PROBE_H
#include <stddef.h>
#include <tensorbridge/dtype.h>
#include "ops/op.h"

/* The dtypes of input 0 that the definition's inference accepts (its other inputs get the same dtype, or
 * the one its checks ask for; attributes take their defaults, and a required one's absence is not held
 * against a dtype). 0 when it has no input. */
tb_dtype_set tb_op_input_dtypes(const tb_op_def *def);

/* For the checks in infer functions: input `input`'s dtype was refused; `allowed` is what it takes (0:
 * unknown). Recorded only while tb_op_input_dtypes probes on this thread. */
void tb_op_probe_refused(size_t input, tb_dtype_set allowed);

#endif
