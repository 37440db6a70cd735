/* The CPU reference kernels of the elementwise family. */
#include "backend/cpu/kernels/kernel.h"
#include "ops/elementwise/ew_names.h"

#define DECLARE(name) extern const tb_kernel tb_kernel_##name;
TB_EW_NAMES(DECLARE)
#define ADDRESS(name) &tb_kernel_##name,
static const tb_kernel *const kernels[] = {TB_EW_NAMES(ADDRESS)};
const tb_kernel_family tb_kernels_elementwise = {kernels, sizeof kernels / sizeof kernels[0]};
