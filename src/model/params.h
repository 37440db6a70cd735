/* Internal: typed operator parameters for a prepared graph (issue 14). Every node's attributes are read
 * once, by its operator's definition (tb_op_def.parse in src/ops/), into a block in the graph's arena that
 * the kernels get as ctx->params; the executor never hands a kernel an attribute name. */
#ifndef TB_MODEL_PARAMS_H
#define TB_MODEL_PARAMS_H
#include "ir/ir.h"

/* Parse n's parameters into g's arena (n->params) when its op has any and they are not parsed yet. The
 * node's def must be resolved (tb_graph_check). Errors are the parser's: a status and a sentence naming
 * the node and the attribute. */
tb_status tb_node_parse_params(tb_graph *g, tb_node *n);
/* The same for every live node of g and of every subgraph of its nodes (If branches, Loop/Scan bodies). */
tb_status tb_graph_parse_params(tb_graph *g);

#endif
