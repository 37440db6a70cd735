/* Internal: the destination dtype of a Cast node, shared by its definition and its kernels. */
#ifndef TB_OPS_ELEMENTWISE_CAST_H
#define TB_OPS_ELEMENTWISE_CAST_H
#include "ir/ir.h"

/* The dtype Cast's attribute `to` names (an ONNX TensorProto data type code, or its name in opsets 1-5).
 * TB_ERR_MODEL naming the node for a missing or unknown value; TB_ERR_UNSUPPORTED for a type
 * TensorBridge has no tensors of (strings, uint16-64, complex, fnuz fp8, 4-bit). */
tb_status tb_cast_target(const tb_graph *g, const tb_node *n, tb_dtype *out);

#endif
