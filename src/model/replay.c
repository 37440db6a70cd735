/* Graph replay of a prepared model's runs on a device with capture ops (replay.h; docs/cuda.md "Graph replay"):
 * what rules it out at prepare, the capture of a run, its replay while the input shapes repeat (one executable graph
 * per set of input shapes, a few kept, the oldest evicted), and the memory each graph reads and writes, which stays
 * allocated for it (the input buffers, the held blocks, the output buffers). */
#include "model/replay.h"
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "backend/allocator.h"
#include "backend/backend_impl.h"
#include "backend/run_checks.h"
#include "backend/tensor/tensor_impl.h"
#include "core/error.h"
#include "ops/op.h"

/* One graph input as the captured run saw it. */
typedef struct input_sig {
  bool given;
  tb_dtype dtype;
  size_t ndim;
  int64_t dims[TB_MAX_DIMS];
} input_sig;

/* One executable graph: the run of one set of input shapes, with the memory it reads and writes. */
typedef struct replay_graph {
  void *graph;          /* the executable graph, NULL before its first capture; kept for an update in place */
  bool captured;        /* graph holds the run of sig's shapes, with the buffers below */
  uint64_t order;       /* when it was captured: the oldest is evicted first */
  input_sig *sig;
  tb_tensor **in;       /* per graph input: the device buffer the graph reads (NULL: not given) */
  tb_tensor **out;      /* per graph output: the device tensor the graph writes */
  tb_block_hold hold;   /* device blocks the captured run freed: the graph still uses them */
  tb_run_check *checks; /* what the captured run's kernels left for the end of the run: run after each replay */
} replay_graph;

struct tb_replay {
  tb_backend *device;
  replay_graph graphs[TB_REPLAY_GRAPHS];
  replay_graph *last;   /* the graph the last run launched (its checks) */
  uint64_t captures_made;
  bool copy_out;        /* the caller was seen keeping a run's outputs: each run's outputs are copies from now on */
  size_t plan;          /* the executor's plan count after the last capture: a plan made by a run in between (not
                           captured) may have freed memory a graph uses, so every graph is dropped then */
  size_t n_inputs, n_outputs;
  char *why_not;        /* set once a capture found what it cannot hold */
  tb_replay_counts counts;
};

bool tb_replay_ruled_out(const tb_graph *g, const tb_exec *e, tb_backend *device, const char *off, char *why, size_t cap) {
  char label[200];
  const char *backend = tb_backend_name(tb_backend_kind_of(device));
  if (tb_backend_kind_of(device) == TB_BACKEND_CPU) {
    snprintf(why, cap, "the cpu backend runs on the host: there is no device graph to capture");
    return true;
  }
  if (!device->ops->capture_begin || !device->ops->stream_create) {
    snprintf(why, cap, "the %s backend has no graph capture", backend);
    return true;
  }
  if (off) {
    snprintf(why, cap, "turned off (%s)", off);
    return true;
  }
  for (size_t i = 0; i < g->n_nodes; i++) {
    const tb_node *n = &g->nodes[i];
    const tb_exec_placement *pl = tb_exec_placement_of(e, i);
    tb_node_label(g, n, label, sizeof label);
    if (!pl || !pl->typed) {
      snprintf(why, cap, "%s has input types known only at run time", label);
      return true;
    }
    if (pl->side != TB_EXEC_DEVICE) {
      snprintf(why, cap, "%s runs on %s, so the run crosses to the host in its middle", label,
               tb_backend_device(tb_exec_side_backend(e, pl->side))->device);
      return true;
    }
    for (size_t a = 0; a < n->n_attrs; a++)
      if (n->attrs[a].type == TB_ATTR_GRAPH || n->attrs[a].type == TB_ATTR_GRAPHS) {
        snprintf(why, cap, "%s reads its condition or trip count on the host (a synchronisation in every run) and "
                 "runs its body as often as that says, so the run cannot be one captured graph", label);
        return true;
      }
    for (size_t k = 0; k < n->n_inputs; k++) {
      int v = n->inputs[k];
      if (v >= 0 && tb_node_reads_value(n, k) && !(g->values[v].constant && !g->values[v].is_input)) {
        snprintf(why, cap, "%s reads input '%s' on the host", label, g->values[v].name);
        return true;
      }
    }
  }
  return false;
}

tb_status tb_replay_create(tb_backend *device, tb_replay **out) {
  *out = calloc(1, sizeof **out);
  if (!*out) return tb_error(TB_ERR_OUT_OF_MEMORY, "out of host memory for the graph replay");
  (*out)->device = device;
  return TB_OK;
}

static void destroy_all(tb_tensor **t, size_t n) {
  for (size_t i = 0; t && i < n; i++) {
    tb_tensor_destroy(t[i]);
    t[i] = NULL;
  }
}

/* Forget a graph's run: its buffers and held blocks (the executable graph stays, for an update in place). */
static void drop_buffers(tb_replay *r, replay_graph *rg) {
  destroy_all(rg->in, r->n_inputs);
  destroy_all(rg->out, r->n_outputs);
  tb_allocator_hold_release(r->device->allocator, &rg->hold);
  tb_run_checks_free(rg->checks);
  rg->checks = NULL;
  if (r->last == rg) r->last = NULL;
  rg->captured = false;
}

/* Every graph's run forgotten: a graph may use blocks another one's capture freed (the arena of an earlier plan, a
 * node's earlier state), so they go together when they must not be trusted any more. */
static void drop_all(tb_replay *r) {
  for (size_t i = 0; i < TB_REPLAY_GRAPHS; i++) drop_buffers(r, &r->graphs[i]);
}

void tb_replay_destroy(tb_replay *r) {
  if (!r) return;
  drop_all(r);
  for (size_t i = 0; i < TB_REPLAY_GRAPHS; i++) {
    replay_graph *rg = &r->graphs[i];
    if (rg->graph) r->device->ops->graph_destroy(r->device->state, rg->graph);
    free(rg->sig);
    free(rg->in);
    free(rg->out);
  }
  free(r->why_not);
  free(r);
}

const char *tb_replay_why_not(const tb_replay *r) { return r ? r->why_not : NULL; }
const tb_run_check *tb_replay_checks(const tb_replay *r) { return r && r->last ? r->last->checks : NULL; }

static const void *block_of(const tb_tensor *t) { return t && t->storage ? (const void *)t->storage->block : NULL; }

/* Whether block b is one the walk of tb_replay_counts_of met before position (graph gi, list li, index ki): views
 * and inputs' aliases share a storage, counted once. */
static bool seen_before(const tb_replay *r, const void *b, size_t gi, int li, size_t ki) {
  for (size_t i = 0; i <= gi; i++) {
    const replay_graph *rg = &r->graphs[i];
    if (!rg->captured) continue;
    for (int l = 0; l < 3; l++) {
      size_t n = l == 0 ? r->n_inputs : l == 1 ? r->n_outputs : rg->hold.count;
      for (size_t k = 0; k < n; k++) {
        if (i == gi && (l > li || (l == li && k >= ki))) return false;
        const void *o = l == 0 ? block_of(rg->in[k]) : l == 1 ? block_of(rg->out[k]) : (const void *)rg->hold.blocks[k];
        if (o == b) return true;
      }
    }
  }
  return false;
}

tb_replay_counts tb_replay_counts_of(const tb_replay *r) {
  if (!r) return (tb_replay_counts){0};
  tb_replay_counts c = r->counts;
  c.graphs = 0;
  c.pinned_bytes = 0;
  for (size_t i = 0; i < TB_REPLAY_GRAPHS; i++) {
    const replay_graph *rg = &r->graphs[i];
    if (!rg->captured) continue;
    c.graphs++;
    for (int l = 0; l < 3; l++) { /* inputs, outputs, held blocks: each distinct storage once */
      size_t n = l == 0 ? r->n_inputs : l == 1 ? r->n_outputs : rg->hold.count;
      for (size_t k = 0; k < n; k++) {
        const tb_tensor *t = l == 0 ? rg->in[k] : l == 1 ? rg->out[k] : NULL;
        const void *b = l < 2 ? block_of(t) : (const void *)rg->hold.blocks[k];
        if (!b || seen_before(r, b, i, l, k)) continue;
        c.pinned_bytes += l < 2 ? t->storage->block->size : rg->hold.blocks[k]->size;
      }
    }
  }
  return c;
}

static input_sig sig_of(const tb_tensor *t) {
  input_sig s = {.given = t != NULL};
  if (!t) return s;
  s.dtype = tb_tensor_dtype(t);
  s.ndim = tb_tensor_ndim(t);
  memcpy(s.dims, tb_tensor_shape(t), s.ndim * sizeof s.dims[0]);
  return s;
}

static bool same_sig(const tb_replay *r, const replay_graph *rg, tb_tensor *const *inputs) {
  for (size_t k = 0; k < r->n_inputs; k++) {
    input_sig s = sig_of(inputs[k]);
    const input_sig *o = &rg->sig[k];
    if (s.given != o->given || s.dtype != o->dtype || s.ndim != o->ndim || memcmp(s.dims, o->dims, s.ndim * sizeof s.dims[0]) != 0)
      return false;
  }
  return true;
}

static tb_status sized(tb_replay *r, const tb_graph *g) {
  if (r->graphs[0].sig) return TB_OK;
  r->n_inputs = g->n_inputs;
  r->n_outputs = g->n_outputs;
  for (size_t i = 0; i < TB_REPLAY_GRAPHS; i++) {
    replay_graph *rg = &r->graphs[i];
    rg->sig = calloc(g->n_inputs + 1, sizeof *rg->sig);
    rg->in = calloc(g->n_inputs + 1, sizeof *rg->in);
    rg->out = calloc(g->n_outputs + 1, sizeof *rg->out);
    if (!rg->sig || !rg->in || !rg->out) {
      /* all or nothing: graphs[0].sig set means every slot is whole (a later slot's NULLs would be written later) */
      for (size_t j = 0; j <= i; j++) {
        free(r->graphs[j].sig);
        free(r->graphs[j].in);
        free(r->graphs[j].out);
        r->graphs[j].sig = NULL;
        r->graphs[j].in = NULL;
        r->graphs[j].out = NULL;
      }
      return tb_error(TB_ERR_OUT_OF_MEMORY, "out of host memory for the graph replay");
    }
  }
  return TB_OK;
}

/* The captured graph of these input shapes, or NULL. */
static replay_graph *find(tb_replay *r, tb_tensor *const *inputs) {
  for (size_t i = 0; i < TB_REPLAY_GRAPHS; i++)
    if (r->graphs[i].captured && same_sig(r, &r->graphs[i], inputs)) return &r->graphs[i];
  return NULL;
}

/* Where a new capture goes: a free slot (one with an executable graph first: it may be updated in place), else the
 * oldest capture, evicted. Oldest first, not least recently used: the blocks a capture freed may be used by graphs
 * captured before it (never after), so a graph's held blocks go only once no older graph is left. */
static replay_graph *slot_for_capture(tb_replay *r) {
  replay_graph *free_slot = NULL, *oldest = NULL;
  for (size_t i = 0; i < TB_REPLAY_GRAPHS; i++) {
    replay_graph *rg = &r->graphs[i];
    if (!rg->captured) {
      if (!free_slot || (rg->graph && !free_slot->graph)) free_slot = rg;
    } else if (!oldest || rg->order < oldest->order) {
      oldest = rg;
    }
  }
  if (free_slot) return free_slot;
  drop_buffers(r, oldest);
  r->counts.evictions++;
  return oldest;
}

/* The caller's inputs into the graph's input buffers (on the bound stream). */
static tb_status copy_inputs(tb_replay *r, replay_graph *rg, tb_tensor *const *inputs) {
  tb_status st = TB_OK;
  for (size_t k = 0; k < r->n_inputs && st == TB_OK; k++)
    if (inputs[k]) st = tb_tensor_copy(rg->in[k], inputs[k]);
  return st;
}

/* The graph's outputs for the caller: the graph's own buffers (a view of each: no copy, no allocation) until the
 * caller is seen keeping them across a run, then new tensors with copies (on the bound stream). */
static tb_status hand_outputs(tb_replay *r, replay_graph *rg, tb_tensor **outputs) {
  tb_status st = TB_OK;
  for (size_t k = 0; k < r->n_outputs && st == TB_OK; k++) {
    const tb_tensor *t = rg->out[k];
    if (!r->copy_out) {
      st = tb_tensor_wrap(t->storage, t->dtype, t->ndim, t->shape, t->strides, t->offset, &outputs[k]);
      continue;
    }
    st = tb_tensor_create(r->device, tb_tensor_dtype(t), tb_tensor_ndim(t), tb_tensor_shape(t), &outputs[k]);
    if (st == TB_OK) st = tb_tensor_copy(outputs[k], t);
  }
  if (st != TB_OK) destroy_all(outputs, r->n_outputs);
  return st;
}

/* Whether a tensor besides the graph's own still refers to one of its output buffers (the caller kept the outputs
 * of an earlier run, or exported them): a launch would write over them. */
static bool outputs_held(const tb_replay *r, const replay_graph *rg) {
  for (size_t k = 0; k < r->n_outputs; k++)
    if (rg->out[k] && atomic_load(&rg->out[k]->storage->refs) > 1) return true;
  return false;
}

/* Graphs are off for this model from now on, with the reason. */
static void rule_out(tb_replay *r, const char *why) {
  char text[1200];
  snprintf(text, sizeof text, "a capture at run time failed: %s", why);
  free(r->why_not);
  r->why_not = strdup(text);
  if (!r->why_not) r->why_not = strdup("a capture at run time failed");
  drop_all(r);
}

/* The captured run into rg: buffers for the inputs, the executor with the stream captured, the graph made. *kept
 * false when the capture found what a graph cannot hold (then ruled out). A failure drops every graph: rg's hold
 * may have taken blocks an older graph uses. */
static tb_status capture(tb_replay *r, replay_graph *rg, tb_exec *e, tb_tensor *const *inputs, bool *kept) {
  const tb_backend_ops *ops = r->device->ops;
  void *state = r->device->state;
  *kept = false;
  tb_status st = TB_OK;
  for (size_t k = 0; k < r->n_inputs && st == TB_OK; k++) {
    rg->sig[k] = sig_of(inputs[k]);
    if (inputs[k])
      st = tb_tensor_create(r->device, tb_tensor_dtype(inputs[k]), tb_tensor_ndim(inputs[k]), tb_tensor_shape(inputs[k]), &rg->in[k]);
  }
  if (st == TB_OK) st = copy_inputs(r, rg, inputs); /* before the capture: the graph reads the buffers, not the caller's */
  if (st == TB_OK) st = ops->capture_begin(state);
  if (st != TB_OK) {
    drop_buffers(r, rg);
    if (st == TB_ERR_UNSUPPORTED) rule_out(r, tb_last_error());
    return st == TB_ERR_UNSUPPORTED ? TB_OK : st;
  }
  tb_allocator_hold_begin(r->device->allocator, &rg->hold);
  st = tb_exec_run(e, rg->in, rg->out);
  for (size_t k = 0; k < r->n_outputs && st == TB_OK; k++)
    if (tb_tensor_backend(rg->out[k]) != r->device)
      st = tb_error(TB_ERR_UNSUPPORTED, "graph output %zu is made on the host", k);
  char why[1024] = "";
  if (st != TB_OK) snprintf(why, sizeof why, "%s", tb_last_error());
  bool updated = false;
  bool keep = st == TB_OK && !rg->hold.failed;
  tb_status end = ops->capture_end(state, keep, &rg->graph, &updated);
  tb_allocator_hold_end(r->device->allocator);
  tb_run_check *checks = tb_run_checks_take(); /* the graph's, run after each replay; a failed capture's go */
  if (st == TB_OK && end != TB_OK) {
    st = end;
    snprintf(why, sizeof why, "%s", tb_last_error());
  }
  if (st == TB_OK && rg->hold.failed) {
    st = TB_ERR_OUT_OF_MEMORY;
    snprintf(why, sizeof why, "out of host memory holding the graph's device memory");
  }
  if (st != TB_OK) {
    tb_run_checks_free(checks);
    drop_all(r);
    if (st == TB_ERR_UNSUPPORTED) {
      rule_out(r, why);
      return TB_OK;
    }
    return tb_error(st, "%s", why); /* the sentence of the failure, not of what the clean-up did */
  }
  rg->checks = checks;
  rg->captured = true;
  rg->order = ++r->captures_made;
  r->plan = tb_exec_plan_count(e);
  r->counts.captures++;
  r->counts.updates += updated;
  *kept = true;
  return TB_OK;
}

tb_status tb_replay_run(tb_replay *r, tb_exec *e, const tb_graph *g, tb_tensor *const *inputs, tb_tensor **outputs, bool *ran) {
  *ran = false;
  if (r->why_not) return TB_OK;
  tb_status st = sized(r, g);
  if (st != TB_OK) return st;
  /* a run in between (observed, so not replayed) with other shapes made a new memory plan and freed the arena the
   * graphs may use: capture again */
  if (r->plan != tb_exec_plan_count(e)) drop_all(r);
  replay_graph *rg = find(r, inputs);
  if (rg && !r->copy_out && outputs_held(r, rg)) {
    /* the caller keeps outputs the graph would write over: they stay the caller's (the graphs let go of them, at their
     * addresses), the graphs are captured again with buffers of their own, and outputs are copies from now on */
    r->copy_out = true;
    r->counts.outputs_kept++;
    drop_all(r);
    rg = NULL;
  }
  bool fresh = rg == NULL;
  if (fresh) {
    rg = slot_for_capture(r);
    bool kept = false;
    st = capture(r, rg, e, inputs, &kept);
    if (st != TB_OK || !kept) return st;
  } else {
    st = copy_inputs(r, rg, inputs);
  }
  if (st == TB_OK) st = r->device->ops->graph_launch(r->device->state, rg->graph);
  if (st == TB_OK) st = hand_outputs(r, rg, outputs);
  if (st != TB_OK) {
    drop_all(r); /* a failed launch may have left the graphs' memory in any state: capture again next time */
    return st;
  }
  r->last = rg;
  r->counts.replays += !fresh;
  *ran = true;
  return TB_OK;
}
