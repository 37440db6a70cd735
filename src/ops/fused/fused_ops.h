/* Internal: what the fused operators (domain "tb", made by the O1 passes) share: running the inference of
 * the ONNX operator they extend (their activation parameters are in fused_params.h). */
#ifndef TB_OPS_FUSED_OPS_H
#define TB_OPS_FUSED_OPS_H
#include "ops/op.h"

/* The default-domain opset of the node's model (for the ONNX operator a fused op extends); INT_MAX when
 * the graph has no model. */
int tb_fused_onnx_opset(const tb_graph *g, const tb_node *n);
/* Infer with the ONNX op `base` (at the model's opset, or at least min_opset) on the first n_base inputs. */
tb_status tb_fused_base_infer(tb_infer_ctx *ctx, const char *base, int min_opset, size_t n_base);

#endif
