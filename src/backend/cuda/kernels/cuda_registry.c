/* The CUDA backend's find_kernel: the first kernel of the families registered for (domain, op) that
 * accepts the node; NULL sends the node to the CPU, with the reason logged at debug level. */
#include <string.h>
#include "backend/cuda/kernels/cuda_ops.h"
#include "backend/kernel_tables.h"
#include "core/env.h"

static const tb_cuda_family *const families[] = {
    &tb_cuda_family_elementwise,
    &tb_cuda_family_nn,
    &tb_cuda_family_conv, &tb_cuda_family_pool, &tb_cuda_family_resize,
    &tb_cuda_family_gemm,
    &tb_cuda_family_rnn,
    &tb_cuda_family_quant,
    &tb_cuda_family_data, &tb_cuda_family_index, &tb_cuda_family_logic, &tb_cuda_family_norm,
    &tb_cuda_family_math, &tb_cuda_family_argtopk,
    &tb_cuda_family_layout, &tb_cuda_family_window, &tb_cuda_family_einsum,
    &tb_cuda_family_control,
    &tb_cuda_family_range,
};

const tb_kernel *tb_cuda_find(const tb_kernel_query *q, const char **why) {
  bool named = false;
  for (size_t f = 0; f < sizeof families / sizeof families[0]; f++)
    for (size_t i = 0; i < families[f]->count; i++) {
      const tb_kernel *k = &families[f]->kernels[i];
      if (strcmp(k->name, q->op_type) != 0 || strcmp(k->domain, q->domain) != 0) continue;
      named = true;
      if (tb_kernel_matches(k, q)) return k;
    }
  *why = named ? "the CUDA kernels for this op do not take these input types or attributes" : "no CUDA kernel for this op";
  return NULL;
}

const tb_kernel *tb_cuda_find_kernel(void *state, const tb_kernel_query *q) {
  cuda_state *s = state;
  if (!s || !q || !q->op_type || !q->domain) return NULL;
  if (!s->api.cuLaunchKernel || !s->api.cuModuleLoadData || !s->api.cuModuleGetFunction) {
    tb_log(TB_LOG_INFO, "%s: libcuda lacks the module calls; %s runs on the CPU", s->base.label, q->op_type);
    return NULL;
  }
  const char *why = NULL;
  const tb_kernel *k = tb_cuda_find(q, &why);
  if (!k) tb_log(TB_LOG_DEBUG, "%s: %s (%s) runs on the CPU: %s", s->base.label, q->name && q->name[0] ? q->name : "?", q->op_type, why);
  return k;
}

size_t tb_cuda_kernel_count(void) {
  size_t n = 0;
  for (size_t f = 0; f < sizeof families / sizeof families[0]; f++) n += families[f]->count;
  return n;
}

const tb_kernel *tb_cuda_kernel_at(size_t i) {
  for (size_t f = 0; f < sizeof families / sizeof families[0]; f++) {
    if (i < families[f]->count) return &families[f]->kernels[i];
    i -= families[f]->count;
  }
  return NULL;
}
