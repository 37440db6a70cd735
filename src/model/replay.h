/* Internal: a prepared model's runs as one device graph (CUDA graphs through the backend's capture ops,
 * backend_impl.h). The first run with a set of input shapes copies the inputs into device buffers the replay keeps,
 * runs the executor with the model's stream captured (nothing executes; every device block the run frees is held
 * back for the graph), makes the executable graph (updated in place when an earlier one has the same shape of
 * work), launches it and hands the caller its output buffers (copies once the caller is seen keeping them). A later run with the same input shapes copies the
 * inputs into the same buffers and launches the graph: one call, whatever the number of nodes. Other shapes
 * capture a graph of their own: up to TB_REPLAY_GRAPHS are kept, keyed by the input shapes, the oldest capture
 * evicted first. docs/cuda.md "Graph replay". */
#ifndef TB_MODEL_REPLAY_H
#define TB_MODEL_REPLAY_H
#include <stdbool.h>
#include <stddef.h>
#include "backend/run_checks.h"
#include "model/engine.h"

typedef struct tb_replay tb_replay;

/* Executable graphs kept per prepared model, one per set of input shapes (a model alternating between a few batch
 * sizes replays each); a new set beyond them evicts the oldest capture. */
#define TB_REPLAY_GRAPHS 4

/* Why the graph of e's runs on `device` cannot be captured ("node 'mm' (MatMul) runs on cpu:0, ..."), written to
 * why; false when it can. `off` names the switch that turned it off, or NULL. */
bool tb_replay_ruled_out(const tb_graph *g, const tb_exec *e, tb_backend *device, const char *off, char *why, size_t cap);

tb_status tb_replay_create(tb_backend *device, tb_replay **out);
/* Releases the graph, the held blocks and the input and output buffers. */
void tb_replay_destroy(tb_replay *r);

/* Run e with these inputs (g->inputs order; CPU or device tensors, NULL for a defaulted input) into outputs (device
 * tensors, g->outputs order), capturing or replaying. The caller has bound the model's stream. *ran false: the
 * capture found something it cannot hold (reported by tb_replay_why_not from now on, and no graph is tried again);
 * the caller then runs e itself. An error (a launch failing during the capture, the device out of memory) is the
 * status and sentence with nothing kept, the next run captures again. */
tb_status tb_replay_run(tb_replay *r, tb_exec *e, const tb_graph *g, tb_tensor *const *inputs, tb_tensor **outputs, bool *ran);
/* NULL while graphs are used, else why not (owned by r). */
const char *tb_replay_why_not(const tb_replay *r);

/* Facts for tests and docs: graphs captured (fresh or updating), executable graphs updated in place, replays,
 * graphs evicted for a new set of shapes; the graphs kept now and the device bytes they pin (their input and output
 * buffers and the blocks their captured runs freed, rounded as the allocator holds them; the executor's arena is
 * the executor's). */
typedef struct tb_replay_counts {
  size_t captures, updates, replays, evictions;
  size_t outputs_kept; /* times the caller was found keeping outputs a replay would overwrite (then copies) */
  size_t graphs;
  uint64_t pinned_bytes;
} tb_replay_counts;
tb_replay_counts tb_replay_counts_of(const tb_replay *r);
/* The checks the captured run's kernels left for the end of the run (backend/run_checks.h), to run after each
 * replay once the stream is idle; NULL when none. */
const tb_run_check *tb_replay_checks(const tb_replay *r);

#endif
