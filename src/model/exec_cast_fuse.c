/* The executor's side of the conversions fused into their producers (docs/cuda.md "Reduced precision"): a device
 * kernel that converts an fp32 activation to bf16 / fp16 before each run says so at prepare (tb_kernel_reads_reduced),
 * a kernel that can write its fp32 output in those types too, in the same launch, says that
 * (tb_kernel_writes_reduced); once every node is placed, tb_exec_fuse_casts pairs them along the graph's values:
 * both on the device, the value made by the producer's output. The consumer then finds the copy its producer wrote
 * (the backend hands it over: tb_kernel_reduced_inputs) instead of launching the conversion; the fp32 value is still
 * written, for every other reader. Each pairing is said in the consumer's precision sentence. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "model/exec_impl.h"

/* The node a kernel context runs, when it is the executor's own prepare() of a node of e's graph; else -1. */
static ptrdiff_t node_of(const tb_kernel_ctx *ctx) {
  if (!ctx || !ctx->exec || ctx->outputs || !ctx->node) return -1; /* only inside the executor's prepare */
  const tb_exec *e = ctx->exec;
  if (ctx->graph != e->g || ctx->node < e->g->nodes || ctx->node >= e->g->nodes + e->g->n_nodes) return -1;
  return ctx->node - e->g->nodes;
}

/* The node a kernel context runs (in prepare or at run), or NULL. */
static const node_cache *cache_of(const tb_kernel_ctx *ctx) {
  if (!ctx || !ctx->exec || !ctx->node) return NULL;
  const tb_exec *e = ctx->exec;
  if (ctx->graph != e->g || !e->cache || ctx->node < e->g->nodes || ctx->node >= e->g->nodes + e->g->n_nodes) return NULL;
  return &e->cache[ctx->node - e->g->nodes];
}

uint64_t tb_kernel_reduced_inputs(const tb_kernel_ctx *ctx) {
  const node_cache *c = cache_of(ctx);
  return c ? c->reduced_inputs : 0;
}

uint64_t tb_kernel_reduced_outputs(const tb_kernel_ctx *ctx, tb_dtype *dtype) {
  const node_cache *c = cache_of(ctx);
  *dtype = c ? c->reduced_output_dtype : TB_DTYPE_F32;
  return c ? c->reduced_outputs : 0;
}

bool tb_kernel_reduced_source(const tb_kernel_ctx *ctx, size_t input, const void **publisher, uint64_t *run) {
  *publisher = NULL;
  *run = 0;
  const node_cache *c = cache_of(ctx);
  if (!c) return false;
  const tb_exec *e = ctx->exec;
  if (input == SIZE_MAX) {
    if (!c->reduced_outputs) return false;
    *publisher = c;
  } else {
    const tb_node *n = ctx->node;
    if (input >= 64 || input >= n->n_inputs || !(c->reduced_inputs >> input & 1u) || n->inputs[input] < 0) return false;
    int p = e->g->values[n->inputs[input]].producer;
    if (p < 0 || (size_t)p >= e->g->n_nodes) return false;
    *publisher = &e->cache[p];
  }
  *run = e->run_id;
  return e->run_id != 0;
}

void tb_kernel_reads_reduced(tb_kernel_ctx *ctx, size_t input, tb_dtype dtype) {
  ptrdiff_t i = node_of(ctx);
  if (i < 0 || input >= 64 || (dtype != TB_DTYPE_BF16 && dtype != TB_DTYPE_F16)) return;
  node_cache *c = &((tb_exec *)ctx->exec)->cache[i];
  if (c->reads_reduced && c->reads_dtype != dtype) return; /* one dtype per node: the first said */
  c->reads_reduced |= UINT64_C(1) << input;
  c->reads_dtype = dtype;
}

void tb_kernel_writes_reduced(tb_kernel_ctx *ctx, size_t output) {
  ptrdiff_t i = node_of(ctx);
  if (i >= 0 && output < 64) ((tb_exec *)ctx->exec)->cache[i].writes_reduced |= UINT64_C(1) << output;
}

/* The output index of node p that is value v, or -1. */
static int output_index(const tb_node *p, int v) {
  for (size_t o = 0; o < p->n_outputs && o < 64; o++)
    if (p->outputs[o] == v) return (int)o;
  return -1;
}

/* Append "; ..." to the node's precision sentence (kept as is when memory is short). */
static void say(tb_exec_placement *pl, const char *text) {
  const char *old = pl->precision_why ? pl->precision_why : "";
  size_t len = strlen(old) + strlen(text) + 3;
  char *s = malloc(len);
  if (!s) return;
  snprintf(s, len, "%s%s%s", old, old[0] ? "; " : "", text);
  free((char *)pl->precision_why);
  pl->precision_why = s;
}

void tb_exec_fuse_casts(tb_exec *e) {
  const tb_graph *g = e->g;
  if (!e->placement) return;
  for (size_t i = 0; i < g->n_nodes; i++) /* paired again from scratch: a pairing of the last placement is gone */
    e->cache[i].reduced_inputs = e->cache[i].reduced_outputs = 0;
  for (size_t i = 0; i < g->n_nodes; i++) {
    node_cache *c = &e->cache[i];
    const tb_node *n = &g->nodes[i];
    if (!c->reads_reduced || e->placement[i].side != TB_EXEC_DEVICE || c->side != TB_EXEC_DEVICE) continue;
    for (size_t k = 0; k < n->n_inputs && k < 64; k++) {
      int v = n->inputs[k];
      if (!(c->reads_reduced >> k & 1u) || v < 0) continue;
      int p = g->values[v].producer;
      if (p < 0 || (size_t)p >= g->n_nodes || (size_t)p == i) continue;
      node_cache *pc = &e->cache[p];
      int o = output_index(&g->nodes[p], v);
      if (o < 0 || !(pc->writes_reduced >> o & 1u) || e->placement[p].side != TB_EXEC_DEVICE || pc->side != TB_EXEC_DEVICE)
        continue;
      /* one reduced dtype per producer: a second consumer asking another one converts for itself */
      if (pc->reduced_outputs && pc->reduced_output_dtype != c->reads_dtype) continue;
      pc->reduced_outputs |= UINT64_C(1) << o;
      pc->reduced_output_dtype = c->reads_dtype;
      c->reduced_inputs |= UINT64_C(1) << k;
      char producer[160], text[400];
      tb_node_label(g, &g->nodes[p], producer, sizeof producer);
      snprintf(text, sizeof text, "input '%s' arrives in %s from %s, which writes it in its own launch when it ran on the device in the same run "
               "(else converted here)",
               g->values[v].name ? g->values[v].name : "", tb_dtype_name(c->reads_dtype), producer);
      say(&e->placement[i], text);
    }
  }
}
