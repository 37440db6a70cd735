/* The CPU kernels of the fused family (filled in as the kernels are written). */
#include "backend/cpu/kernels/kernel.h"

static const tb_cpu_kernel *const kernels[] = {NULL};
const tb_kernel_family tb_kernels_fused = {kernels, 0};
