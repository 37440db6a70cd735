/* Internal: the model engine's own interfaces between its parts — the node-scope helper of
 * ir_check.c, type and shape inference (infer.c), the memory plan (plan.c), the executor (exec.c), and the
 * prepared model shared by prepare.c and run.c. */
#ifndef TB_MODEL_ENGINE_H
#define TB_MODEL_ENGINE_H
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <tensorbridge/model.h>
#include "backend/kernel.h"
#include "ir/ir.h"

/* ---- ir_check.c ----------------------------------------------------------------------------------- */

/* Call fn with each value name the node's subgraphs use from enclosing scopes (with repeats). */
typedef void (*tb_free_name_fn)(void *ctx, const char *name);
void tb_node_free_names(const tb_node *n, tb_free_name_fn fn, void *ctx);

/* ---- infer.c -------------------------------------------------------------------------------------- */

/* Symbolic dimensions bound to sizes ("batch" = 4). */
typedef struct tb_dim_bindings {
  size_t count;
  const char *const *names;
  const int64_t *values;
} tb_dim_bindings;

/* The size bound to a symbol of g's model, or -1. */
int64_t tb_dim_binding_find(const tb_graph *g, const tb_dim_bindings *b, int symbol);
/* Replace the bound symbolic dims of every value of g with their sizes. */
void tb_graph_bind_dims(tb_graph *g, const tb_dim_bindings *b);
/* Infer one node: outputs from inputs (types, and values where known). out has n->n_outputs entries. */
tb_status tb_infer_node(const tb_graph *g, const tb_node *n, const tb_value_type *const *in,
                        const tb_ir_tensor *const *values, tb_value_type *out);
/* Types and shapes of every value of g (not its subgraphs), in node order, merged with the declared ones:
 * a conflict is TB_ERR_MODEL naming the value. g must be sorted and checked. */
tb_status tb_graph_infer(tb_graph *g);
/* The type of a concrete tensor. */
void tb_value_type_of(const tb_tensor *t, tb_value_type *out);
/* True when the type has a dtype and every dim is known. */
bool tb_value_type_complete(const tb_value_type *t);
/* "[1, 3, batch, ?]" into buf. */
const char *tb_value_type_dims_str(const tb_graph *g, const tb_value_type *t, char *buf, size_t cap);

/* ---- plan.c --------------------------------------------------------------------------------------- */

/* Where each value of a graph lives during a run: at offset[v] in one arena, or (-1) in its own tensor. */
typedef struct tb_plan {
  size_t n_values;
  int64_t *offset;      /* bytes into the arena, or -1 */
  int *first;           /* step (node position) that defines the value; -1 for inputs and constants */
  int *last;            /* step of its last use (implicit uses by subgraphs included); -1: never used */
  uint64_t arena_bytes; /* the planned peak: the arena's size */
} tb_plan;

/* Lifetimes of g's values in node order (first/last of plan filled; offsets all -1). */
tb_status tb_plan_lifetimes(const tb_graph *g, tb_plan *plan);
/* A plan for g with every activation's byte size in bytes[v] (0 for values not to place). Values that are
 * graph inputs/outputs, constants, or used by a subgraph are never placed. */
tb_status tb_plan_build(const tb_graph *g, const uint64_t *bytes, tb_plan *plan);
/* Steps [first, last] whose nodes may run in any order or at the same time (an inter-op region). */
typedef struct tb_plan_span {
  int first, last;
} tb_plan_span;
/* tb_plan_build where every value alive at a step of a span lives over the whole span (no two values of a
 * span share bytes). */
tb_status tb_plan_build_spans(const tb_graph *g, const uint64_t *bytes, const tb_plan_span *spans, size_t n_spans,
                              tb_plan *plan);
void tb_plan_free(tb_plan *plan);
/* The bytes an activation of this type takes (0 when not complete). */
uint64_t tb_plan_value_bytes(const tb_value_type *t);

/* ---- exec.c --------------------------------------------------------------------------------------- */

typedef struct tb_exec tb_exec;

/* An executor for a checked, sorted, inferred graph on the CPU; kernels up to `level`. */
tb_status tb_exec_create(const tb_graph *g, tb_backend *cpu, tb_kernel_level level, uint64_t features, int threads, tb_exec **out);
void tb_exec_destroy(tb_exec *e);
/* The convolution algorithm (a resolved tb_conv_algo, never DEFAULT) every kernel of e and of its subgraphs
 * gets in ctx->conv_algo; call before tb_exec_place. Auto until set. */
void tb_exec_set_conv_algo(tb_exec *e, tb_conv_algo conv_algo);
/* What device kernels may compute in (tb_opt_device_precision), for e and its subgraphs; call before tb_exec_place.
 * FP32 until set. */
void tb_exec_set_device_precision(tb_exec *e, tb_device_precision precision);
/* Whether independent branches run at the same time (tb_inter_op; DEFAULT is taken as AUTO). The executor
 * is planned again at its next run. A new executor has TB_INTER_OP_OFF. */
void tb_exec_set_inter_op(tb_exec *e, tb_inter_op mode);
/* For tests: the inter-op regions of the current plan (NULL when not planned), how many regions ran with
 * their lanes spread over the pool, and how many lanes ran on a thread other than the caller's. */
const struct tb_interop_plan *tb_exec_interop(const tb_exec *e);
void tb_exec_interop_counts(const tb_exec *e, uint64_t *regions_run, uint64_t *lanes_on_workers);
/* For tests: the current memory plan (NULL when not planned). */
const tb_plan *tb_exec_plan(const tb_exec *e);
/* How nodes with a bf16 kernel choose it (precision_trial.c; docs/engine.md "bf16 only where it wins"). */
typedef enum tb_bf16_mode {
  TB_BF16_NOT_ASKED = 0, /* fp32 asked for, or a level below O3 without precision bf16 */
  TB_BF16_TRIAL,         /* auto at O3: bf16 only where the node's trial says it wins */
  TB_BF16_FORCED,        /* precision bf16, or TB_BF16_TRIAL=off: bf16 wherever a kernel exists */
} tb_bf16_mode;
/* Call before tb_exec_place; TB_BF16_NOT_ASKED until set. cpu_has_bf16: the CPU computes bf16 natively. */
void tb_exec_set_bf16_mode(tb_exec *e, tb_bf16_mode mode, bool cpu_has_bf16);

/* Where a node's kernel runs: the CPU, the device, or a route to the device's hardware (2, 3, ...: in the
 * order tb_exec_place adopted them). */
enum { TB_EXEC_CPU = 0, TB_EXEC_DEVICE = 1 };
/* Where tb_exec_place put a node. */
typedef struct tb_exec_placement {
  int side;              /* TB_EXEC_CPU, TB_EXEC_DEVICE, or a route (tb_exec_side_backend says which) */
  bool typed;            /* its input dtypes were known at prepare, so its kernel was chosen then */
  const char *why;       /* with a device, when the node is not on it: why, and where it ran instead (owned by the
                            executor): "no cuda kernel for X with inputs (float32); ran on vulkan:0, the same GPU
                            (PCI 0000:1a:00.0)" */
  const char *precision; /* the chosen kernel's reduced precision ("bf16"), or NULL */
  bool fp32_only;        /* its CPU kernel is chosen at the fp32 level even where the executor's allows bf16 (the
                            bf16 trial lost or could not run): also at run time */
  bool bf16_rejected;    /* a bf16 kernel exists for it and the trial (or its absence) kept fp32 */
  const char *precision_why; /* with a bf16 mode (tb_exec_set_bf16_mode) on the CPU, or a reduced device precision
                                asked (tb_exec_set_device_precision) on the device: "bf16: ..." or "fp32: ..." (owned) */
  bool precision_by_kernel;  /* the device kernel's prepare said precision and precision_why (tb_kernel_set_precision) */
} tb_exec_placement;

struct tb_routes;
/* Choose each node's kernel from the graph's static types and make its state now (weights packed for the
 * CPU's fast kernels, device kernels built, constants copied to the device), on `device` where it has a
 * kernel for the node (NULL or the CPU: all on the CPU), else on the first of `routes` (may be NULL) to the
 * same hardware that has one, else on the CPU. A device or route kernel whose prepare fails lets the node go
 * on to the next route and then the CPU, with the reason, when cpu_fallback, else the call fails with that
 * error. Call once, before running. */
tb_status tb_exec_place(tb_exec *e, tb_backend *device, struct tb_routes *routes, bool cpu_fallback);
/* device_only (tb_prepare_options): the bodies of nodes on the device, placed at their first run, fail that run
 * with TB_ERR_UNSUPPORTED naming a body node left on the CPU (exec_place.c). */
void tb_exec_set_device_only(tb_exec *e, bool on);
/* The backend of a side (TB_EXEC_CPU: the executor's CPU backend); NULL for a side the executor lacks. */
tb_backend *tb_exec_side_backend(const tb_exec *e, int side);
/* NULL before tb_exec_place. */
const tb_exec_placement *tb_exec_placement_of(const tb_exec *e, size_t node);
/* Plan now from the graph's static types (when every activation is known); true when planned. */
bool tb_exec_plan_static(tb_exec *e);
/* Run: inputs in g->inputs order (NULL only for a graph input with a default initializer), contiguous
 * tensors on the CPU or on the placed device. outputs receive new tensors in g->outputs order, on the
 * side that computed them. */
tb_status tb_exec_run(tb_exec *e, tb_tensor *const *inputs, tb_tensor **outputs);
/* Facts for results and tests: the planned arena bytes (0 when not planned), plans made so far. */
uint64_t tb_exec_planned_bytes(const tb_exec *e);
size_t tb_exec_plan_count(const tb_exec *e);
/* Nodes without a kernel at this level (first one's label in buf); 0 when all have one. */
size_t tb_exec_missing_kernels(const tb_exec *e, char *buf, size_t cap);
/* Whether any node, also inside If/Loop/Scan bodies, gets a kernel of level > 0. */
bool tb_exec_uses_fast_kernels(const tb_exec *e);
/* Whether someone watches the nodes one by one (profiling or a node hook): then a run cannot be a replayed graph. */
bool tb_exec_observed(const tb_exec *e);
/* Per-node timing (tb_prepared_set_profiling): on clears the counts. ms/runs per node; NULL when off. */
tb_status tb_exec_set_profiling(tb_exec *e, bool on);
const double *tb_exec_node_ms(const tb_exec *e);
const uint64_t *tb_exec_node_runs(const tb_exec *e);
/* The kernel that ran node i last (NULL before its first run) and on which side (TB_EXEC_CPU, ...). */
const struct tb_kernel *tb_exec_node_kernel(const tb_exec *e, size_t i, int *side);
/* The executor of a subgraph of e's graph (an If branch, a Loop or Scan body), made at its first run; NULL
 * before. */
const tb_exec *tb_exec_child(const tb_exec *e, const tb_graph *body);
/* The method node i's kernel said its prepared state runs (tb_kernel_set_method), or NULL. */
const char *tb_exec_node_method(const tb_exec *e, size_t i);
/* Observe intermediate values (validation's localisation, src/tools/validate_localize.c): after each node of
 * the top-level graph runs, fn gets the node and its output tensors (CPU tensors, NULL for an omitted output;
 * valid only during the call: copy what you keep). fn NULL removes the hook. */
typedef void (*tb_exec_node_fn)(void *ctx, const tb_graph *g, const tb_node *n, tb_tensor *const *outputs);
void tb_exec_set_node_hook(tb_exec *e, tb_exec_node_fn fn, void *ctx);
/* TEST ONLY (tests/unit/test_validate_localize.c): from now on in this process, every float output of a node
 * of op_type run by an executor with kernel level >= min_level gets 0.25 added: a deliberately broken
 * kernel for validation to catch. NULL restores correct kernels. Not thread-safe; never used by the library. */
void tb_exec_test_break_op(const char *op_type, int min_level);

#endif
