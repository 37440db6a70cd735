/* Per-node profiling of a prepared model: switching the executor's timing on and off, and the entries of
 * tb_prepared_profile (node, op type, where it ran, which kernel, runs, total time, which subgraph), the
 * nodes of If/Loop/Scan bodies from their executors after the node that holds them. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "backend/kernel.h"
#include "core/cpu_features.h"
#include "core/error.h"
#include "model/prepared.h"

tb_status tb_prepared_set_profiling(tb_prepared *p, bool on) {
  if (!p) return tb_error(TB_ERR_INVALID_ARGUMENT, "tb_prepared_set_profiling: prepared must not be NULL");
  return tb_exec_set_profiling(p->exec, on);
}

/* "reference", "fast fp32 (avx512f,fma)", "bf16 (avx512bf16)", "device", or "not run yet"; then ", <method>"
 * when the kernel said which its prepared state runs (a convolution's "winograd", "direct" or "implicit GEMM"). */
static void describe(const tb_kernel *k, const char *method, bool on_device, char *buf, size_t cap) {
  if (!k) {
    snprintf(buf, cap, "not run yet");
    return;
  }
  if (on_device) {
    if (method) snprintf(buf, cap, "device, %s", method); /* a CUDA product's "cuBLASLt" or "own tiled GEMM" */
    else snprintf(buf, cap, "device");
    return;
  }
  char features[64] = "portable";
  if (k->cpu_features) tb_cpu_features_format(k->cpu_features, features, sizeof features);
  if (k->level == TB_KERNEL_REFERENCE) snprintf(buf, cap, "reference");
  else if (method) snprintf(buf, cap, "%s (%s), %s", k->precision ? k->precision : "fast fp32", features, method);
  else snprintf(buf, cap, "%s (%s)", k->precision ? k->precision : "fast fp32", features);
}

/* Entries for g's nodes and, after each, its subgraphs' (count_entries of them). */
typedef struct profile_walk {
  tb_prepared *p;
  size_t n;
} profile_walk;

static size_t count_entries(const tb_graph *g) {
  size_t n = g->n_nodes;
  for (size_t i = 0; i < g->n_nodes; i++)
    for (size_t a = 0; a < g->nodes[i].n_attrs; a++) {
      const tb_attr *at = &g->nodes[i].attrs[a];
      if (at->type == TB_ATTR_GRAPH && at->g) n += count_entries(at->g);
      for (size_t b = 0; at->type == TB_ATTR_GRAPHS && at->graphs && b < at->count; b++)
        if (at->graphs[b]) n += count_entries(at->graphs[b]);
    }
  return n;
}

static void add_graph(profile_walk *w, const tb_graph *g, const tb_exec *exec, const char *path);

/* A subgraph's entries: from its executor when it has run, else "not run yet". */
static void add_body(profile_walk *w, const tb_node *node, size_t index, const tb_attr *at, const tb_graph *body,
                     const tb_exec *exec, const char *path) {
  char label[64], sub[96];
  if (node->name[0]) snprintf(label, sizeof label, "%s", node->name);
  else snprintf(label, sizeof label, "#%zu", index);
  snprintf(sub, sizeof sub, "%s%s%s/%s", path, path[0] ? "/" : "", label, at->name);
  add_graph(w, body, exec ? tb_exec_child(exec, body) : NULL, sub);
}

static void add_graph(profile_walk *w, const tb_graph *g, const tb_exec *exec, const char *path) {
  tb_prepared *p = w->p;
  const double *ms = exec ? tb_exec_node_ms(exec) : NULL;
  const uint64_t *runs = exec ? tb_exec_node_runs(exec) : NULL;
  for (size_t i = 0; i < g->n_nodes; i++) {
    const tb_node *node = &g->nodes[i];
    size_t at_entry = w->n++;
    char (*text)[96] = p->profile_text[at_entry];
    int side = TB_EXEC_CPU;
    const tb_kernel *k = exec ? tb_exec_node_kernel(exec, i, &side) : NULL;
    const tb_backend *where = side != TB_EXEC_CPU ? tb_exec_side_backend(exec, side) : NULL;
    if (node->domain && node->domain[0]) snprintf(text[0], 96, "%s.%s", node->domain, node->op_type);
    else snprintf(text[0], 96, "%s", node->op_type);
    describe(k, exec ? tb_exec_node_method(exec, i) : NULL, where != NULL, text[1], 96);
    snprintf(text[2], 96, "%s", path);
    p->profile[at_entry] = (tb_node_profile){node->name, text[0], where ? tb_backend_name(tb_backend_kind_of(where)) : "cpu", text[1],
                                             runs ? runs[i] : 0, ms ? ms[i] : 0, text[2]};
    for (size_t a = 0; a < node->n_attrs; a++) {
      const tb_attr *at = &node->attrs[a];
      if (at->type == TB_ATTR_GRAPH && at->g) add_body(w, node, i, at, at->g, exec, path);
      for (size_t b = 0; at->type == TB_ATTR_GRAPHS && at->graphs && b < at->count; b++)
        if (at->graphs[b]) add_body(w, node, i, at, at->graphs[b], exec, path);
    }
  }
}

tb_status tb_prepared_profile(tb_prepared *p, size_t *count, const tb_node_profile **entries) {
  static const char fn[] = "tb_prepared_profile";
  if (!p || !count || !entries) return tb_error(TB_ERR_INVALID_ARGUMENT, "%s: prepared, count and entries must not be NULL", fn);
  *count = 0;
  *entries = NULL;
  if (!tb_exec_node_ms(p->exec)) return tb_error(TB_ERR_INVALID_ARGUMENT, "%s: profiling is off; call tb_prepared_set_profiling(prepared, true) first", fn);
  size_t n = count_entries(p->graph);
  free(p->profile);
  free(p->profile_text);
  p->profile = calloc(n ? n : 1, sizeof *p->profile);
  p->profile_text = calloc(n ? n : 1, sizeof *p->profile_text);
  if (!p->profile || !p->profile_text) return tb_error(TB_ERR_OUT_OF_MEMORY, "%s: out of host memory", fn);
  profile_walk w = {p, 0};
  add_graph(&w, p->graph, p->exec, "");
  *count = w.n;
  *entries = p->profile;
  return TB_OK;
}
