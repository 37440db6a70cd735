/* Internal: the CPU backend's kernels over the shared contract (backend/kernel.h): the registry of every
 * CPU kernel by family, and the choice of the best one for a query. A CPU kernel runs on host memory
 * (tb_tensor_host_data readable) and may use the executor's thread pool (ctx->pool). */
#ifndef TB_CPU_KERNEL_H
#define TB_CPU_KERNEL_H
#include "backend/kernel.h"

/* The best CPU kernel for q: the highest level <= q->level whose features are in q->cpu_features and that
 * accepts q; NULL when none. The CPU backend's find_kernel. */
const tb_kernel *tb_cpu_kernel_find(const tb_kernel_query *q);

/* Families register kernels in arrays (src/backend/cpu/kernels/<family>/registry.c), concatenated by
 * src/backend/cpu/kernels/registry.c. */
typedef struct tb_kernel_family {
  const tb_kernel *const *kernels;
  size_t count;
} tb_kernel_family;
extern const tb_kernel_family tb_kernels_elementwise;
extern const tb_kernel_family tb_kernels_tensor;
extern const tb_kernel_family tb_kernels_nn;
extern const tb_kernel_family tb_kernels_rnn_control;
extern const tb_kernel_family tb_kernels_fused;
extern const tb_kernel_family tb_kernels_fast; /* TB_KERNEL_FAST / TB_KERNEL_REDUCED kernels */

#endif
