/* Internal: the executor's state, shared by exec.c (running graphs) and exec_place.c (kernel choice and
 * per-node kernel state, placement on a device backend or a route to its hardware, and the copies of values
 * between the CPU, the device and the routes). */
#ifndef TB_MODEL_EXEC_IMPL_H
#define TB_MODEL_EXEC_IMPL_H
#include "backend/kernel.h"
#include "core/threadpool.h"
#include <pthread.h>
#include "model/engine.h"
#include "model/exec_interop.h"

typedef struct node_cache {
  bool valid;
  tb_value_type *in;  /* the concrete input types the outputs were inferred for */
  tb_value_type *out; /* what inference gave */
  const tb_kernel *kernel;
  int side;           /* where kernel runs: TB_EXEC_CPU, TB_EXEC_DEVICE or a route (engine.h) */
  const tb_kernel *state_kernel; /* the kernel whose prepare() made state */
  void *state;
  const char *method; /* what state runs, from tb_kernel_set_method (NULL: not said) */
  uint64_t constant_inputs, omitted_outputs; /* the kernel context's bits, fixed for the graph */
  /* The conversions fused into producers (exec_cast_fuse.c): what the kernel's prepare said it converts or can write
   * (tb_kernel_reads_reduced / tb_kernel_writes_reduced), and what was decided (the kernel context's bits). */
  uint64_t reads_reduced, writes_reduced;
  tb_dtype reads_dtype;
  uint64_t reduced_inputs, reduced_outputs;
  tb_dtype reduced_output_dtype;
} node_cache;

/* What running one node needs besides the executor: its input and output tensor lists and inference's
 * scratch, sized for the graph's node with the most inputs / outputs. The executor has one for running
 * nodes in turn and one per lane of an inter-op region (exec.c). */
typedef struct node_scratch {
  tb_tensor **in, **tmp, **out;
  tb_value_type *in_types;
  const tb_value_type **in_ptrs;
  tb_ir_tensor *views;
  const tb_ir_tensor **known;
  bool lane; /* in an inter-op lane: the kernel gets one thread (no pool) */
} node_scratch;

/* A device-side backend: the device (side TB_EXEC_DEVICE) or a route to its hardware (the sides after it). */
typedef struct exec_side {
  tb_backend *backend;
  tb_tensor **consts;  /* per value: its constant's copy here, kept for the executor's life */
  tb_tensor **copies;  /* per value during a run: its copy here while it lives elsewhere, freed with it */
} exec_side;

typedef struct child_exec {
  const tb_graph *body;
  tb_exec *exec;
} child_exec;

struct tb_exec {
  const tb_graph *g;
  uint64_t run_id;       /* this run's number, unique in the process (run_graph bumps it): a handed-over copy counts
                          * only when its producer wrote it in the consumer's run (tb_kernel_reduced_source) */
  tb_backend *cpu;
  tb_backend *device;    /* the device nodes may run on (tb_exec_place); NULL: all on the CPU */
  struct tb_routes *routes; /* other routes to the device's hardware (tb_exec_place), NULL when none */
  bool cpu_fallback;     /* tb_exec_place's: a device kernel that cannot be prepared may go to the CPU (bodies too) */
  bool device_only;      /* tb_exec_set_device_only: a body node left on the CPU fails the run (exec_place.c) */
  const tb_value_type *place_types; /* per value: the types tb_exec_place chooses kernels for (a body's, from the call:
                                       tb_exec_place_body); NULL: the graph's static types */
  exec_side *sides;      /* sides[s - 1] is side s: the device, then the routes adopted so far */
  size_t n_sides;
  tb_kernel_level level;
  uint64_t features;
  int threads;
  tb_conv_algo conv_algo; /* tb_exec_set_conv_algo: the kernels' ctx->conv_algo */
  tb_device_precision device_precision; /* tb_exec_set_device_precision: the device queries' */
  tb_bf16_mode bf16_mode; /* tb_exec_set_bf16_mode */
  bool cpu_has_bf16;
  double trial_ms_left;   /* what tb_exec_place may still spend on bf16 trials */
  tb_pool *pool;
  tb_exec *parent;       /* the executor running the node whose subgraph this is */
  tb_tensor **consts;    /* per value: its constant as a CPU tensor */
  tb_tensor **vals;      /* per value during a run: on the CPU or on the device */
  bool *owned;           /* vals[v] is destroyed by this executor */
  tb_tensor **mirror;    /* per value during a run: its copy on the CPU while it lives on a device side, owned,
                            freed with it (copies on the device sides: sides[].copies) */
  node_cache *cache;     /* per node */
  tb_exec_placement *placement; /* per node, from tb_exec_place */
  tb_plan life;          /* lifetimes (for freeing) */
  size_t *free_at;       /* values to free after step i: free_list[free_at[i] .. free_at[i + 1]) */
  int *free_list;
  tb_plan plan;          /* the memory plan (CPU values only), when planned */
  bool planned;
  tb_value_type *plan_types; /* per value: the type the plan placed */
  tb_value_type *sig;        /* per graph input: the shapes the plan is for */
  tb_tensor *arena;
  tb_tensor **arena_views; /* per value: its tensor in the arena, made on first use and kept while the plan
                              holds, so a planned node output costs no allocation (exec.c) */
  tb_value_type *seen;   /* per value: the type of the last run (for planning after it) */
  size_t plans_made;
  child_exec *children;
  size_t n_children;
  /* per-node scratch, sized for the node with the most inputs / outputs */
  tb_tensor **in, **tmp, **out;
  tb_value_type *in_types;
  const tb_value_type **in_ptrs;
  tb_ir_tensor *views;
  const tb_ir_tensor **known;
  double *node_ms;       /* tb_exec_set_profiling: per node, NULL when off (a node's own time: its subgraphs'
                            nodes have theirs in the child executors) */
  double subgraph_ms;    /* while profiling: the time spent in subgraphs so far */
  uint64_t *node_runs;
  tb_exec_node_fn node_hook; /* tb_exec_set_node_hook */
  void *node_hook_ctx;
  struct tb_exec_release *release; /* constants let go after their readers packed them (exec_release.c) */
  tb_plan dplan;         /* the device's memory plan (exec_device_plan.c), made with `plan` */
  tb_tensor *darena;     /* its arena on the device, NULL when not planned */
  tb_tensor **darena_views; /* per value: its view of the device arena, made on first use */
  tb_event *timer[2];    /* while profiling: device events around a device node's launches (exec_timing.c) */
  tb_backend *timer_backend; /* the backend the timers are on */
  /* inter-op parallelism (exec_interop.h): the regions of the current plan, a scratch per lane, the lock
   * for a lane that must infer or choose a kernel again, and counts for tests */
  tb_inter_op inter_op;
  tb_interop_plan interop;
  node_scratch *lane_scratch;
  size_t n_lane_scratch, max_in, max_out;
  pthread_mutex_t lane_lock;
  uint64_t regions_run, lanes_on_workers;
};

/* ---- exec_sides.c and exec_place.c --------------------------------------------------------------------------------- */

/* The side t lives on: TB_EXEC_CPU, a route (its backend), else the device. */
int tb_exec_side_of(const tb_exec *e, const tb_tensor *t);
/* Value v as a tensor on `side` (TB_EXEC_CPU, TB_EXEC_DEVICE, a route): vals[v] itself, a constant's copy
 * kept on that side, or a copy made now (between two device sides: through the host) and kept until v is
 * freed. *out NULL when v has no tensor. */
tb_status tb_exec_value_on(tb_exec *e, int v, int side, tb_tensor **out);
/* Free v's copies on the other sides (when v's tensor goes). */
void tb_exec_drop_mirror(tb_exec *e, int v);
/* The side number of `backend`, added as a route side (with its copy tables) when new; -1 on out of
 * memory. */
int tb_exec_add_side(tb_exec *e, tb_backend *backend);
/* Constant v's copy on device side `side`, made on first use and kept. */
tb_status tb_exec_const_on(tb_exec *e, int v, int side, tb_tensor **out);
/* Free every side's tables and copies. */
void tb_exec_free_sides(tb_exec *e);
/* The query for node n (of the executor's graph or one of its bodies) with these input types. */
tb_kernel_query tb_exec_query(const tb_exec *e, const tb_node *n, const tb_value_type *const *in);
/* The CPU backend's kernel for node n with these input types at the executor's level; NULL
 * when none. */
const tb_kernel *tb_exec_cpu_kernel(const tb_exec *e, const tb_node *n, const tb_value_type *const *in);
/* The context a kernel of node `step` runs (or prepares) with: on `side`, these input tensors and types,
 * these outputs (NULL during prepare) and its state. */
tb_kernel_ctx tb_exec_kernel_ctx(tb_exec *e, size_t step, int side, tb_tensor *const *in,
                                 const tb_value_type *const *in_types, tb_tensor **out, void *state);
/* The kernel for node `step` with these input types: the placed side's when the node is placed on the
 * device or a route and that backend has one, else the best CPU kernel; *side says which. NULL when there
 * is none. */
const tb_kernel *tb_exec_choose_kernel(tb_exec *e, size_t step, const tb_value_type *const *in, int *side);
/* Make the node's kernel state for c->kernel when it is not made yet (releasing another kernel's). */
tb_status tb_exec_kernel_state(tb_exec *e, size_t step, tb_tensor *const *in, const tb_value_type *const *in_types);
/* exec.c: the run_subgraph every kernel context carries. */
tb_status tb_exec_run_subgraph(tb_kernel_ctx *ctx, const tb_graph *body, size_t n_inputs, tb_tensor *const *inputs,
                               size_t n_outputs, tb_tensor **outputs);
/* exec_body.c: the types of a body's values known before running it: an outer value's from outer_types (per value of
 * the calling graph; NULL: the body's declared ones), the first n_inputs inputs' from these tensors (NULL entries:
 * declared), the rest improved by inference in order (malloc'd; NULL when out of memory). */
tb_value_type *tb_exec_body_types(const tb_graph *body, const tb_value_type *outer_types, size_t n_inputs,
                                  tb_tensor *const *inputs);
/* exec_place.c: place the new executor of a body that a node of `parent` runs on a device side: on the parent's device,
 * routes and CPU fallback rule, for the types of this call (its inputs, the outer values the parent holds now); with
 * device_only (the parent's), a body node left on the CPU is TB_ERR_UNSUPPORTED naming it. */
tb_status tb_exec_place_body(tb_exec *parent, tb_exec *child, tb_tensor *const *inputs);
/* exec_cast_fuse.c: after every node is placed, pair each device node that converts an fp32 input to bf16 / fp16
 * before its runs (tb_kernel_reads_reduced) with that value's producer on the device when its kernel can write the
 * copy in its own launch (tb_kernel_writes_reduced): both nodes' kernel contexts get the bits, the consumer's
 * precision sentence says so. */
void tb_exec_fuse_casts(tb_exec *e);
/* exec_timing.c: while profiling, start timing a node on `side` with device events (false where the side's backend
 * has no device timer: then time it on the host); stop, waiting for it, with its device time in *ms. */
bool tb_exec_timer_start(tb_exec *e, int side);
tb_status tb_exec_timer_stop(tb_exec *e, double *ms);
void tb_exec_timer_free(tb_exec *e);
/* exec_device_plan.c: plan the device's values from these types (best effort: no plan where the arena cannot be
 * had), drop the plan, the planned bytes, value v's view of the arena when the plan placed it with this type and
 * shape (*out NULL otherwise), and whether t is v's view (kept across runs, never destroyed with the value). */
void tb_exec_device_plan(tb_exec *e, const tb_value_type *types);
void tb_exec_device_plan_drop(tb_exec *e);
uint64_t tb_exec_device_planned_bytes(const tb_exec *e);
tb_status tb_exec_device_view(tb_exec *e, int v, const tb_value_type *t, const int64_t *shape, tb_tensor **out);
bool tb_exec_is_device_view(const tb_exec *e, int v, const tb_tensor *t);
/* Release every node's kernel state and the device sides' copies of constants. */
void tb_exec_release_states(tb_exec *e);

#endif
