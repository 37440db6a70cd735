/* Tests: find and call kernels the way the executor does: the node's typed parameters parsed
 * (model/params.c), the query built from the node, the context bound to the node's op and parameters. */
#ifndef TB_TEST_KERNEL_UTIL_H
#define TB_TEST_KERNEL_UTIL_H
#include "backend/backend_impl.h"
#include "backend/cpu/kernels/kernel.h"
#include "model/params.h"

/* The CPU kernel for node n of g with these input types at `level` on a CPU with `features`; NULL when
 * none or when the node's attributes do not parse (tb_last_error says why). */
static inline const tb_kernel *tbt_kernel_find(tb_graph *g, tb_node *n, const tb_value_type *const *in, int level,
                                               uint64_t features) {
  if (tb_node_parse_params(g, n) != TB_OK) return NULL;
  tb_kernel_query q = tb_kernel_query_for(n, in, (tb_kernel_level)level, features);
  return tb_cpu_kernel_find(&q);
}

/* Backend b's kernel (its find_kernel) for node n of g with these input types, at the fast level. */
static inline const tb_kernel *tbt_backend_kernel_find(tb_backend *b, const tb_graph *g, const tb_node *n,
                                                       const tb_value_type *const *in) {
  if (!b->ops->find_kernel || tb_node_parse_params((tb_graph *)g, (tb_node *)n) != TB_OK) return NULL;
  tb_kernel_query q = tb_kernel_query_for(n, in, TB_KERNEL_FAST, 0);
  return b->ops->find_kernel(b->state, &q);
}

/* The types g holds for node n's inputs (NULL for an omitted one) into out (n->n_inputs entries, at most
 * cap): what the executor hands a kernel's prepare as ctx->in_types. Returns out. */
static inline const tb_value_type *const *tbt_graph_in_types(const tb_graph *g, const tb_node *n, const tb_value_type **out,
                                                             size_t cap) {
  for (size_t i = 0; i < n->n_inputs && i < cap; i++) out[i] = n->inputs[i] >= 0 ? &g->values[n->inputs[i]].type : NULL;
  return out;
}

/* Bind ctx to node n of g: its parameters (parsed now if needed), op, opset and input types. Returns the
 * parser's status. */
static inline tb_status tbt_kernel_bind(tb_kernel_ctx *ctx, const tb_graph *g, const tb_node *n,
                                        const tb_value_type *const *in_types) {
  tb_status st = tb_node_parse_params((tb_graph *)g, (tb_node *)n); /* tests own their graphs */
  ctx->graph = g;
  ctx->node = n;
  ctx->params = n->params;
  ctx->domain = n->domain ? n->domain : "";
  ctx->op_type = n->op_type;
  ctx->opset = n->opset;
  ctx->in_types = in_types;
  ctx->omitted_outputs = tb_kernel_omitted_outputs(n);
  ctx->constant_inputs = tb_kernel_constant_inputs(g, n);
  ctx->name = n->name ? n->name : "";
  return st;
}

#endif
