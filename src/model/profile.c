/* Per-node profiling of a prepared model: switching the executor's timing on and off, and the entries of
 * tb_prepared_profile (node, op type, where it ran, which kernel, runs, total time). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "backend/cpu/kernels/kernel.h"
#include "core/cpu_features.h"
#include "core/error.h"
#include "model/prepared.h"

tb_status tb_prepared_set_profiling(tb_prepared *p, bool on) {
  if (!p) return tb_error(TB_ERR_INVALID_ARGUMENT, "tb_prepared_set_profiling: prepared must not be NULL");
  return tb_exec_set_profiling(p->exec, on);
}

/* "reference", "fast fp32 (avx512f,fma)", "bf16 (avx512bf16)", "device", or "not run yet"; then ", <method>"
 * when the kernel said which its prepared state runs (a convolution's "winograd", "direct" or "implicit GEMM"). */
static void describe(const tb_cpu_kernel *k, const char *method, bool on_device, char *buf, size_t cap) {
  if (!k) {
    snprintf(buf, cap, "not run yet");
    return;
  }
  if (on_device) {
    snprintf(buf, cap, "device");
    return;
  }
  char features[64] = "portable";
  if (k->cpu_features) tb_cpu_features_format(k->cpu_features, features, sizeof features);
  if (k->level == 0) snprintf(buf, cap, "reference");
  else if (method) snprintf(buf, cap, "%s (%s), %s", k->precision ? k->precision : "fast fp32", features, method);
  else snprintf(buf, cap, "%s (%s)", k->precision ? k->precision : "fast fp32", features);
}

tb_status tb_prepared_profile(tb_prepared *p, size_t *count, const tb_node_profile **entries) {
  static const char fn[] = "tb_prepared_profile";
  if (!p || !count || !entries) return tb_error(TB_ERR_INVALID_ARGUMENT, "%s: prepared, count and entries must not be NULL", fn);
  *count = 0;
  *entries = NULL;
  const double *ms = tb_exec_node_ms(p->exec);
  const uint64_t *runs = tb_exec_node_runs(p->exec);
  if (!ms) return tb_error(TB_ERR_INVALID_ARGUMENT, "%s: profiling is off; call tb_prepared_set_profiling(prepared, true) first", fn);
  const tb_graph *g = p->graph;
  size_t n = g->n_nodes ? g->n_nodes : 1;
  free(p->profile);
  free(p->profile_text);
  p->profile = calloc(n, sizeof *p->profile);
  p->profile_text = calloc(n, sizeof *p->profile_text);
  if (!p->profile || !p->profile_text) return tb_error(TB_ERR_OUT_OF_MEMORY, "%s: out of host memory", fn);
  const char *device = tb_backend_name(tb_backend_kind_of(p->backend));
  for (size_t i = 0; i < g->n_nodes; i++) {
    const tb_node *node = &g->nodes[i];
    bool on_device = false;
    const tb_cpu_kernel *k = tb_exec_node_kernel(p->exec, i, &on_device);
    if (node->domain && node->domain[0]) snprintf(p->profile_text[i][0], 96, "%s.%s", node->domain, node->op_type);
    else snprintf(p->profile_text[i][0], 96, "%s", node->op_type);
    describe(k, tb_exec_node_method(p->exec, i), on_device, p->profile_text[i][1], 96);
    p->profile[i] = (tb_node_profile){node->name, p->profile_text[i][0], on_device ? device : "cpu", p->profile_text[i][1], runs[i],
                                      ms[i]};
  }
  *count = g->n_nodes;
  *entries = p->profile;
  return TB_OK;
}
