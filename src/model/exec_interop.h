/* Internal: inter-op parallelism, the plan part. In a graph's execution order it finds regions: runs of
 * consecutive steps that split into independent lanes (chains of nodes that read nothing another lane of
 * the region writes), so that the lanes may run at the same time, each on one of the pool's threads with
 * its nodes in their order. exec.c runs them; plan.c keeps every value alive in a region apart from every
 * other (tb_plan_build_spans). A region is taken by a cost rule (exec_interop.c) when its nodes are too
 * small for their kernels to use the threads and at least two lanes carry work worth a thread. */
#ifndef TB_MODEL_EXEC_INTEROP_H
#define TB_MODEL_EXEC_INTEROP_H
#include <stddef.h>
#include <tensorbridge/model.h>
#include "ir/ir.h"

/* Below this many elementary operations (multiply-adds, element reads and writes) a node's kernel runs on
 * one thread or barely gains from more: the fp32 GEMM splits from 2^21 multiply-adds (gemm_driver.c). */
#define TB_INTEROP_NODE_MAX_WORK 2097152.0
/* A lane worth a thread: TB_POOL_MIN_WORK, what a job must weigh to be worth waking a worker for. */
#define TB_INTEROP_LANE_MIN_WORK 32768.0
/* What handing work to the pool costs, in the same units (about a microsecond of waking and joining). */
#define TB_INTEROP_SYNC_WORK 2048.0
/* The work from which a node's kernel splits it over the threads: TB_POOL_MIN_WORK for most kernels; the
 * products (Conv, MatMul, Gemm) split from TB_INTEROP_NODE_MAX_WORK multiply-adds. */
#define TB_INTEROP_SPLIT_WORK 32768.0

typedef struct tb_interop_lane {
  size_t first, count; /* its steps: tb_interop_plan.steps[first .. first + count), in execution order */
  double work;
} tb_interop_lane;

typedef struct tb_interop_region {
  int begin, end;     /* steps [begin, end) */
  size_t first_lane, n_lanes; /* lanes[first_lane ..], heaviest first */
} tb_interop_region;

typedef struct tb_interop_plan {
  size_t n_regions, n_lanes, max_lanes;
  tb_interop_region *regions;
  tb_interop_lane *lanes;
  int *steps;
  int *region_at; /* per step: the region that begins there, or -1 */
} tb_interop_plan;

/* The regions of g for `threads` threads with its values' types (per value; shapes complete where known):
 * none for one thread or TB_INTER_OP_OFF; with TB_INTER_OP_ON every split into two or more lanes, whatever
 * their work; with TB_INTER_OP_AUTO those the cost rule takes: two lanes of TB_INTEROP_LANE_MIN_WORK or more,
 * and the lanes' longest-first schedule over the threads (each node on one thread) at least 10% shorter than
 * the nodes one after another, each split over the threads where its kernel would split it. A node with a subgraph, or (auto) one whose
 * work is not known or at least TB_INTEROP_NODE_MAX_WORK, is in no region. */
tb_status tb_interop_find(const tb_graph *g, const tb_value_type *types, int threads, tb_inter_op mode,
                          tb_interop_plan *out);
void tb_interop_free(tb_interop_plan *p);
/* The estimated work of node n (elementary operations) with these value types; a negative value when it
 * is unknown (an incomplete shape) or unbounded (recurrent and attention nodes: never small). */
double tb_interop_node_work(const tb_graph *g, const tb_node *n, const tb_value_type *types);
/* TB_INTER_OP from the environment: unset or "auto": auto; on|1, off|0; anything else: auto and a warning
 * (once). */
tb_inter_op tb_inter_op_from_env(void);

#endif
