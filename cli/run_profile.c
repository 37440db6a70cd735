/* `tb run --profile`: where a prepared model's time goes, per operator type and per node, as text or as a
 * JSON array, from the library's per-node profile (tb_prepared_profile). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "format.h"
#include "run_profile.h"

typedef struct op_total {
  const char *op, *placement;
  size_t nodes;
  double ms;
} op_total;

static int by_ms_desc(const void *a, const void *b) {
  double x = ((const op_total *)a)->ms, y = ((const op_total *)b)->ms;
  return x < y ? 1 : x > y ? -1 : 0;
}

static int node_by_ms_desc(const void *a, const void *b) {
  double x = (*(const tb_node_profile *const *)a)->total_ms, y = (*(const tb_node_profile *const *)b)->total_ms;
  return x < y ? 1 : x > y ? -1 : 0;
}

/* The timed runs of the model: its own graph's nodes run once per run (a Loop body's once per iteration). */
static uint64_t runs_of(const tb_node_profile *e, size_t n) {
  uint64_t runs = 0;
  for (size_t i = 0; i < n; i++)
    if (!e[i].graph[0] && e[i].runs > runs) runs = e[i].runs;
  return runs ? runs : 1;
}

int tbc_profile_text(tb_prepared *p, size_t top) {
  size_t n = 0;
  const tb_node_profile *e = NULL;
  if (tb_prepared_profile(p, &n, &e) != TB_OK) return TBC_EXIT_FAILURE;
  op_total *ops = calloc(n + 1, sizeof *ops);
  const tb_node_profile **order = calloc(n + 1, sizeof *order);
  if (!ops || !order) {
    free(ops);
    free(order);
    return TBC_EXIT_FAILURE;
  }
  size_t n_ops = 0;
  double total = 0;
  for (size_t i = 0; i < n; i++) {
    size_t j = 0;
    while (j < n_ops && (strcmp(ops[j].op, e[i].op_type) != 0 || strcmp(ops[j].placement, e[i].placement) != 0)) j++;
    if (j == n_ops) ops[n_ops++] = (op_total){e[i].op_type, e[i].placement, 0, 0};
    ops[j].nodes++;
    ops[j].ms += e[i].total_ms;
    total += e[i].total_ms;
    order[i] = &e[i];
  }
  uint64_t runs = runs_of(e, n);
  qsort(ops, n_ops, sizeof *ops, by_ms_desc);
  qsort(order, n, sizeof *order, node_by_ms_desc);
  printf("profile:  %.3f ms per run in the kernels (means), over %llu timed run%s\n", total / (double)runs, (unsigned long long)runs,
         runs == 1 ? "" : "s");
  printf("  %-28s %-8s %6s %10s %7s\n", "operator", "where", "nodes", "ms/run", "share");
  for (size_t i = 0; i < n_ops; i++)
    printf("  %-28s %-8s %6zu %10.3f %6.1f%%\n", ops[i].op, ops[i].placement, ops[i].nodes, ops[i].ms / (double)runs,
           total > 0 ? 100.0 * ops[i].ms / total : 0.0);
  printf("  slowest nodes:\n");
  char name[512], graph[512];
  for (size_t i = 0; i < n && i < top; i++) {
    const char *where = order[i]->graph[0] ? tbc_one_line(order[i]->graph, graph, sizeof graph) : "";
    printf("  %-28s %-8s %10.3f %6.1f%%  %s  %s%s%s\n", order[i]->op_type, order[i]->placement, order[i]->total_ms / (double)runs,
           total > 0 ? 100.0 * order[i]->total_ms / total : 0.0, order[i]->kernel, where, where[0] ? "/" : "",
           order[i]->name[0] ? tbc_one_line(order[i]->name, name, sizeof name) : "(no name)");
  }
  free(ops);
  free(order);
  return TBC_EXIT_OK;
}

void tbc_profile_json(tbc_buf *b, tb_prepared *p) {
  size_t n = 0;
  const tb_node_profile *e = NULL;
  if (tb_prepared_profile(p, &n, &e) != TB_OK) {
    tbc_buf_add(b, "null");
    return;
  }
  uint64_t runs = runs_of(e, n);
  tbc_buf_add(b, "[");
  for (size_t i = 0; i < n; i++) {
    bool first = true;
    tbc_buf_add(b, i ? ",{" : "{");
    tbc_json_key(b, &first, "node");
    tbc_json_string(b, e[i].name);
    tbc_json_key(b, &first, "graph");
    tbc_json_string(b, e[i].graph);
    tbc_json_key(b, &first, "op");
    tbc_json_string(b, e[i].op_type);
    tbc_json_key(b, &first, "placement");
    tbc_json_string(b, e[i].placement);
    tbc_json_key(b, &first, "kernel");
    tbc_json_string(b, e[i].kernel);
    tbc_json_key(b, &first, "runs");
    tbc_buf_addf(b, "%llu", (unsigned long long)e[i].runs);
    tbc_json_key(b, &first, "ms_per_run");
    tbc_buf_addf(b, "%.6f", e[i].total_ms / (double)runs);
    tbc_buf_add(b, "}");
  }
  tbc_buf_add(b, "]");
}
