/* Internal: the typed parameters of the control-flow operators (If, Loop, Scan), parsed once from the node
 * by the op's parse function (control_params.c): the bodies as borrowed graphs (they live as long as the
 * node's graph), Scan's counts, axes and directions. Inference and the kernels read these, never the
 * attributes; the kernels run a body through the executor's run_subgraph. */
#ifndef TB_OPS_CONTROL_PARAMS_H
#define TB_OPS_CONTROL_PARAMS_H
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include "ir/ir.h"

typedef struct tb_if_params {
  const tb_graph *then_branch, *else_branch;
} tb_if_params;

typedef struct tb_loop_params {
  const tb_graph *body;
} tb_loop_params;

/* Scan-9 and later; Scan-8 (batched) has a batch axis first on every state and scan input, an optional
 * sequence_lens input 0, and its 'directions' in in_dirs (no axes). */
typedef struct tb_scan_params {
  const tb_graph *body;
  bool batched;       /* Scan-8 */
  size_t n_state;     /* N: state variables (inputs and outputs first) */
  size_t n_scan_in;   /* M = num_scan_inputs */
  size_t n_scan_out;  /* K: the body's outputs after the N states */
  const int64_t *in_axes, *in_dirs;   /* M entries each (borrowed from the node), or NULL for all 0 */
  const int64_t *out_axes, *out_dirs; /* K entries each, or NULL for all 0 */
} tb_scan_params;

/* tb_op_def.parse of If, Loop, Scan-9+ and Scan-8: a missing body, counts that disagree with the body,
 * list lengths other than M or K, directions other than 0/1 are TB_ERR_MODEL naming the node. */
tb_status tb_if_parse(const tb_graph *g, const tb_node *n, void *params);
tb_status tb_loop_parse(const tb_graph *g, const tb_node *n, void *params);
tb_status tb_scan_parse(const tb_graph *g, const tb_node *n, void *params);
tb_status tb_scan8_parse(const tb_graph *g, const tb_node *n, void *params);

/* Entry i of an axes/directions list (0 when the list is absent). */
static inline int64_t tb_scan_attr_at(const int64_t *list, size_t i) { return list ? list[i] : 0; }

#endif
