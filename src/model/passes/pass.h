/* Internal: graph rewriting passes, one per file in src/model/passes/. Each is exact at O1 (the outputs
 * do not change beyond floating-point reassociation it states), and says what it changed. */
#ifndef TB_MODEL_PASS_H
#define TB_MODEL_PASS_H
#include <stddef.h>
#include <tensorbridge/policy.h>
#include "ir/ir.h"

typedef struct tb_pass_stats {
  size_t changed;       /* rewrites done (0: nothing to do) */
  size_t nodes_removed; /* nodes dropped */
  size_t nodes_fused;   /* nodes folded into another node */
  char summary[256];    /* "folded 3 BatchNormalization into Conv" */
} tb_pass_stats;

typedef struct tb_pass {
  const char *name;            /* "constant_folding" */
  tb_opt_level min_level;      /* runs at this level and above */
  /* Rewrite g in place (nodes marked dead, new nodes appended; the pass manager sorts, compacts and
   * checks after each pass). Recurse into subgraphs where it makes sense. */
  tb_status (*run)(tb_graph *g, tb_pass_stats *stats);
} tb_pass;

/* The passes in the order they run (src/model/passes/passes.c). */
size_t tb_pass_count(void);
const tb_pass *tb_pass_at(size_t i);

#endif
