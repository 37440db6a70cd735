/* Internal: typed parameters seen from inference. An infer function reads its op's parameters through
 * tb_infer_params: parsed from the node's attributes (the truth while passes still edit them), or, for the
 * node stand-in a kernel builds to run its op's inference on concrete inputs, the parsed block it carries. */
#ifndef TB_OPS_OP_PARAMS_H
#define TB_OPS_OP_PARAMS_H
#include "ops/op.h"

/* The parameters of ctx's node into `out` (size bytes, the op's params struct, or for a fused op of domain
 * "tb" the base op's struct its own block starts with): a copy of its parsed block when the node has no
 * attributes of its own to read (a kernel's stand-in, or a node whose every attribute is a default), else
 * ctx->node->def->parse of its attributes. */
tb_status tb_infer_params(const tb_infer_ctx *ctx, void *out, size_t size);

/* A node stand-in for running the op's inference from a kernel: the op (found for domain/op_type/opset),
 * its parsed parameters, its input and output counts; no name, attributes or value indices. Errors that
 * inference reports through it name the op ("node (Slice): ..."); the executor adds the node's name. */
tb_status tb_infer_stand_in(tb_node *n, const char *domain, const char *op_type, int opset, const void *params,
                            size_t n_inputs, size_t n_outputs);

#endif
