/* The table of CPU kernels: the families' arrays, and the choice of the best kernel for a node. */
#include <string.h>
#include "backend/cpu/kernels/kernel.h"
#include "backend/kernel_tables.h"

static const tb_kernel_family *const families[] = {&tb_kernels_elementwise, &tb_kernels_tensor, &tb_kernels_nn,
                                                   &tb_kernels_rnn_control, &tb_kernels_fused,
                                                   &tb_kernels_fast};

const tb_kernel *tb_cpu_kernel_find(const tb_kernel_query *q) {
  const tb_kernel *best = NULL;
  for (size_t f = 0; f < sizeof families / sizeof families[0]; f++) {
    for (size_t i = 0; i < families[f]->count; i++) {
      const tb_kernel *k = families[f]->kernels[i];
      if (best && k->level <= best->level) continue;
      if (tb_kernel_matches(k, q)) best = k;
    }
  }
  return best;
}

size_t tb_cpu_kernel_count(void) {
  size_t n = 0;
  for (size_t f = 0; f < sizeof families / sizeof families[0]; f++) n += families[f]->count;
  return n;
}

const tb_kernel *tb_cpu_kernel_at(size_t i) {
  for (size_t f = 0; f < sizeof families / sizeof families[0]; f++) {
    if (i < families[f]->count) return families[f]->kernels[i];
    i -= families[f]->count;
  }
  return NULL;
}
