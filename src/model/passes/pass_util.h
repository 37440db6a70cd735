/* Internal: small graph queries and edits the O1 passes share (who consumes a value, is it a constant,
 * rewiring uses, adding constants and nodes, recursing into subgraphs, the stats summary). */
#ifndef TB_MODEL_PASS_UTIL_H
#define TB_MODEL_PASS_UTIL_H
#include <stdbool.h>
#include <stddef.h>
#include "ir/ir.h"
#include "model/passes/pass.h"

/* The passes, one per file, listed in order in passes.c. */
extern const tb_pass tb_pass_identity_removal;
extern const tb_pass tb_pass_constant_folding;
extern const tb_pass tb_pass_dead_node_removal;
extern const tb_pass tb_pass_conv_bn_folding;
extern const tb_pass tb_pass_activation_fusion;
extern const tb_pass tb_pass_pattern_layernorm;
extern const tb_pass tb_pass_pattern_gelu;
extern const tb_pass tb_pass_pattern_attention;

/* Folded constants larger than this are left to run time (memory at prepare time stays bounded). */
#define TBP_FOLD_MAX_BYTES ((size_t)64 << 20)

/* The live node producing v (index), or -1. */
int tb_tbp_producer(const tb_graph *g, int v);
/* True when node i is live, in the default domain and of this op type. */
bool tb_tbp_is_op(const tb_graph *g, int i, const char *op_type);
/* True when a subgraph of a live node of g (at any depth) captures value v of g. */
bool tb_tbp_captured(const tb_graph *g, int v);
/* Uses of v as an input of live nodes (each slot counts). */
size_t tb_tbp_use_count(const tb_graph *g, int v);
/* The only live node consuming v (in exactly one input slot) when v is not a graph output and no subgraph
 * captures it; else -1. */
int tb_tbp_sole_consumer(const tb_graph *g, int v);
/* True when v is an output of g. */
bool tb_tbp_is_graph_output(const tb_graph *g, int v);
/* True when v is computed by the node and only `node` uses it, so the node can absorb the value. */
bool tb_tbp_private_to(const tb_graph *g, int v, int node);
/* Point every live input slot using `from` at `to`. */
void tb_tbp_replace_uses(tb_graph *g, int from, int to);
/* v's constant (NULL when v < 0, not constant, or a graph input whose initializer is only a default). */
const tb_ir_tensor *tb_tbp_const(const tb_graph *g, int v);
/* A constant with exactly one element, as double. */
bool tb_tbp_const_scalar(const tb_graph *g, int v, double *out);
/* True when v is a one-element constant equal to `want` within rel (relative) tolerance. */
bool tb_tbp_const_near(const tb_graph *g, int v, double want, double rel);
/* The input of a binary node that is not `x` (the other operand), or -1 when x is not one of them. */
int tb_tbp_other_input(const tb_graph *g, int node, int x);
/* A new graph-owned constant value named from hint; *data is writable. -1 on OOM. */
int tb_tbp_new_const(tb_graph *g, const char *hint, tb_dtype dtype, size_t ndim, const int64_t *dims, void **data);
/* Turn value v into a constant holding t (no producer any more). */
void tb_tbp_set_const(tb_graph *g, int v, tb_ir_tensor *t);
/* Attributes for tb_tbp_add_node (names and strings are borrowed, as tb_tbp_add_node copies them). */
tb_attr tb_tbp_attr_int(const char *name, int64_t v);
tb_attr tb_tbp_attr_float(const char *name, float v);
tb_attr tb_tbp_attr_string(const char *name, const char *s);
/* Append a node with the given opset; sets its outputs' producer. -1 on OOM. */
int tb_tbp_add_node(tb_graph *g, const char *name, const char *op_type, const char *domain, int opset, const int *inputs,
                 size_t n_inputs, const int *outputs, size_t n_outputs, const tb_attr *attrs, size_t n_attrs);
/* Mark a node dead and forget it as its outputs' producer. */
void tb_tbp_kill(tb_graph *g, int node);
/* The fused node `node` (from tb_tbp_add_node; < 0: it failed) takes the place of the n nodes it replaces
 * (entries < 0 skipped): they die and node becomes the producer of out again. When node < 0:
 * tb_tbp_out_of_memory for `pass` and the fused node. */
tb_status tb_tbp_replace(tb_graph *g, const char *pass, int node, const int *nodes, size_t n, int out);
/* TB_ERR_OUT_OF_MEMORY with its sentence: "graph pass <pass>: out of host memory for <what> (<bytes> bytes;
 * left out when 0) in a graph of N nodes; free host memory or prepare at O0, which runs no graph passes". */
tb_status tb_tbp_out_of_memory(const tb_graph *g, const char *pass, const char *what, size_t bytes);
/* The default-domain opset of the graph's model (0 when unknown). */
int tb_tbp_opset(const tb_graph *g);
/* Run `pass` on every subgraph of g's live nodes (sorting and compacting each one it changed), adding
 * its counts to stats. */
tb_status tb_tbp_recurse(tb_graph *g, tb_status (*pass)(tb_graph *, tb_pass_stats *), tb_pass_stats *stats);
/* Call fn(sub, ctx) on every subgraph of g's live nodes (sorting and compacting each afterwards). */
tb_status tb_tbp_recurse_fn(tb_graph *g, tb_status (*fn)(tb_graph *, void *), void *ctx);
/* Set stats->summary from printf arguments. */
void tb_tbp_summary(tb_pass_stats *stats, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* A count phrase for summaries: "3 Identity" joined with ", " into buf. */
void tb_tbp_append(char *buf, size_t cap, const char *fmt, ...) __attribute__((format(printf, 3, 4)));

#endif
