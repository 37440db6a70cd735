/* The executor's side of releasing constants (model/exec_release.h, model/weights.h): per value, how many
 * node inputs still read it; per node, the inputs its prepare() consumed. A constant whose count reaches
 * zero has the pages of its CPU tensor dropped: file pages (read again from the file if touched) or the
 * pages of the executor's own copy (copied back from the model when a node's state is made again).
 * Graphs with subgraphs (If/Loop/Scan) keep every constant: a body may read one through the outer scope. */
#include <stdlib.h>
#include <string.h>
#include "model/exec_release.h"
#include "model/weights.h"
#include "backend/tensor/tensor_impl.h"

enum { MAX_TRACKED_INPUTS = 32 };

struct tb_exec_release {
  int *readers;      /* per value: node inputs not yet consumed; -1: not a constant that can be let go */
  bool *dropped;     /* per value: the executor's copy had its pages returned */
  uint32_t *pending; /* per node: inputs its prepare() said it consumed */
  uint32_t *applied; /* per node: inputs counted as consumed */
};

static bool has_subgraphs(const tb_graph *g) {
  for (size_t i = 0; i < g->n_nodes; i++)
    for (size_t a = 0; a < g->nodes[i].n_attrs; a++) {
      tb_attr_type t = g->nodes[i].attrs[a].type;
      if (t == TB_ATTR_GRAPH || t == TB_ATTR_GRAPHS) return true;
    }
  return false;
}

static void count_readers(const tb_exec *e, int *readers) {
  const tb_graph *g = e->g;
  for (size_t v = 0; v < g->n_values; v++) readers[v] = e->consts[v] && !g->values[v].is_input ? 0 : -1;
  for (size_t k = 0; k < g->n_outputs; k++)
    if (g->outputs[k] >= 0) readers[g->outputs[k]] = -1; /* handed to the caller */
  for (size_t i = 0; i < g->n_nodes; i++)
    for (size_t k = 0; k < g->nodes[i].n_inputs; k++) {
      int v = g->nodes[i].inputs[k];
      if (v >= 0 && readers[v] >= 0) readers[v]++;
    }
}

/* The bookkeeping, made on first use; NULL when the graph keeps its constants or memory is short (then
 * nothing is released: it is only a saving). */
static struct tb_exec_release *state_of(tb_exec *e) {
  if (e->release) return e->release;
  const tb_graph *g = e->g;
  if (!e->consts || has_subgraphs(g)) return NULL;
  struct tb_exec_release *r = calloc(1, sizeof *r);
  size_t nv = g->n_values ? g->n_values : 1, nn = g->n_nodes ? g->n_nodes : 1;
  if (r) {
    r->readers = malloc(nv * sizeof *r->readers);
    r->dropped = calloc(nv, sizeof *r->dropped);
    r->pending = calloc(nn, sizeof *r->pending);
    r->applied = calloc(nn, sizeof *r->applied);
  }
  if (!r || !r->readers || !r->dropped || !r->pending || !r->applied) {
    if (r) {
      free(r->readers);
      free(r->dropped);
      free(r->pending);
      free(r->applied);
    }
    free(r);
    return NULL;
  }
  count_readers(e, r->readers);
  e->release = r;
  return r;
}

void tb_exec_release_free(tb_exec *e) {
  struct tb_exec_release *r = e->release;
  if (!r) return;
  free(r->readers);
  free(r->dropped);
  free(r->pending);
  free(r->applied);
  free(r);
  e->release = NULL;
}

void tb_kernel_constant_consumed(tb_kernel_ctx *ctx, size_t input) {
  if (!ctx || !ctx->exec || ctx->outputs || !ctx->node) return; /* only inside the executor's prepare */
  tb_exec *e = ctx->exec;
  const tb_graph *g = e->g;
  if (ctx->graph != g || ctx->node < g->nodes || ctx->node >= g->nodes + g->n_nodes) return;
  size_t step = (size_t)(ctx->node - g->nodes);
  if (input >= ctx->node->n_inputs || input >= MAX_TRACKED_INPUTS) return;
  int v = ctx->node->inputs[input];
  struct tb_exec_release *r = v >= 0 ? state_of(e) : NULL;
  if (r && r->readers[v] >= 0) r->pending[step] |= UINT32_C(1) << input;
}

static void drop_value(tb_exec *e, struct tb_exec_release *r, int v) {
  tb_tensor *t = e->consts[v];
  tb_storage *s = t ? t->storage : NULL;
  void *bytes = s && s->host ? tb_tensor_host_data(t) : NULL;
  if (!bytes || !tb_tensor_nbytes(t)) return;
  if (s->read_only) {
    tb_weights_drop_file(bytes, tb_tensor_nbytes(t));
  } else if (!e->device) { /* a device copy may still be made from it while a device is in use */
    tb_weights_drop_copy(bytes, tb_tensor_nbytes(t));
    r->dropped[v] = true;
  }
  tb_weights_note_released();
}

void tb_exec_release_consumed(tb_exec *e, size_t step) {
  const tb_node *n = &e->g->nodes[step];
  struct tb_exec_release *r = e->release;
  uint32_t mask = r ? r->pending[step] & ~r->applied[step] : 0;
  if (r) r->pending[step] = 0;
  bool read_file = false;
  for (size_t k = 0; k < n->n_inputs && k < MAX_TRACKED_INPUTS; k++) {
    int v = n->inputs[k];
    if (!(mask >> k & 1u) || v < 0 || r->readers[v] <= 0) continue;
    r->applied[step] |= UINT32_C(1) << k;
    read_file |= e->consts[v]->storage && e->consts[v]->storage->read_only;
    if (--r->readers[v] == 0) drop_value(e, r, v);
  }
  if (e->cache[step].state) {
    /* The state was made from the node's constants: the file pages they were read from can go (a run that
     * reads one faults it back in from the file). */
    for (size_t k = 0; k < n->n_inputs; k++) {
      int v = n->inputs[k];
      if (v < 0 || !e->consts[v] || e->g->values[v].is_input || (mask >> k & 1u)) continue;
      tb_tensor *t = e->consts[v];
      if (t->storage && t->storage->read_only && t->storage->host) {
        tb_weights_drop_file(tb_tensor_host_data(t), tb_tensor_nbytes(t));
        read_file = true;
      }
    }
  }
  /* Reading a weight faulted in the page-cache folios around it too (up to 2 MiB each with large folios),
   * parts of weights dropped at earlier steps among them: drop every file page of the model now, so the
   * prepare's peak is the packed copies and one weight, not the packed copies plus those leftovers (46
   * MiB on BERT-base). */
  if (read_file) tb_exec_drop_file_pages(e);
}

void tb_exec_restore_consumed(tb_exec *e, size_t step) {
  struct tb_exec_release *r = e->release;
  if (!r) return;
  const tb_node *n = &e->g->nodes[step];
  uint32_t mask = r->applied[step];
  r->pending[step] = r->applied[step] = 0;
  for (size_t k = 0; k < n->n_inputs && k < MAX_TRACKED_INPUTS; k++) {
    int v = n->inputs[k];
    if (!(mask >> k & 1u) || v < 0 || r->readers[v] < 0) continue;
    r->readers[v]++;
    if (!r->dropped[v]) continue;
    const tb_ir_tensor *c = e->g->values[v].constant;
    tb_tensor *t = e->consts[v];
    if (c && t && c->data && c->nbytes == tb_tensor_nbytes(t)) {
      memcpy(tb_tensor_host_data(t), c->data, c->nbytes);
      tb_weights_note_restored(c->nbytes);
    }
    r->dropped[v] = false;
  }
}

void tb_exec_drop_file_pages(tb_exec *e) {
  if (e->g->model) tb_weights_drop_owner(e->g->model);
}
