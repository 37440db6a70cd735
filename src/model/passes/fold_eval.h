/* Internal: evaluate one node on constants at prepare time (constant folding's evaluator, fold_eval.c). */
#ifndef TB_MODEL_PASSES_FOLD_EVAL_H
#define TB_MODEL_PASSES_FOLD_EVAL_H
#include <stdbool.h>
#include <stddef.h>
#include <tensorbridge/backend.h>
#include "model/passes/pass_util.h"

/* Run node `node` of g (all inputs constants) with the CPU reference kernel and make its outputs constants
 * (the node is then dead): *folded true. Nodes that cannot be folded now (no kernel, inference or the
 * kernel fails, an output over max_bytes) stay, *folded false, TB_OK. *cpu is the CPU backend, created on
 * first need (the caller destroys it). Errors: out of memory, no CPU backend. */
tb_status tb_tbp_fold_eval(tb_graph *g, int node, tb_backend **cpu, size_t max_bytes, bool *folded);

#endif
