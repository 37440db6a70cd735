/* Internal: helpers the control-flow operators (If, Loop, Scan) share for their inference: refusing sequence/optional values, merging two types. */
#ifndef TB_OPS_CONTROL_UTIL_H
#define TB_OPS_CONTROL_UTIL_H
#include "ops/op.h"

/* TB_ERR_UNSUPPORTED with the reason when any of the body's inputs or outputs, or the node's inputs, is
 * a sequence, optional or map: the executor runs tensors only. */
tb_status tb_control_tensors_only(const tb_infer_ctx *ctx, const tb_graph *body, const char *attr);

/* The declared type of the body's i-th output (unknown when the file declares none). */
const tb_value_type *tb_control_body_output(const tb_graph *body, size_t i);

/* out = what is known of a value that is either a or b: the dtype when they agree (two known, different
 * dtypes are TB_ERR_MODEL naming `what`), the rank when equal, each dim where equal, unknown elsewhere. */
tb_status tb_control_merge(const tb_infer_ctx *ctx, const char *what, const tb_value_type *a, const tb_value_type *b,
                           tb_value_type *out);

#endif
