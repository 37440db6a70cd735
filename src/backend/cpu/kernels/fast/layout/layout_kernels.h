/* Internal: the level-2 layout kernels (Slice, Squeeze, Unsqueeze, Concat of any dtype: copies whose output
 * shape they compute themselves, without the reference kernels' per-run shape inference), for the registry. */
#ifndef TB_CPU_KERNELS_FAST_LAYOUT_KERNELS_H
#define TB_CPU_KERNELS_FAST_LAYOUT_KERNELS_H
#include "backend/cpu/kernels/kernel.h"

extern const tb_kernel tb_kernel_slice_fast, tb_kernel_squeeze_fast, tb_kernel_unsqueeze_fast, tb_kernel_concat_fast;
#define TB_LAYOUT_KERNEL_ENTRIES &tb_kernel_slice_fast, &tb_kernel_squeeze_fast, &tb_kernel_unsqueeze_fast, &tb_kernel_concat_fast,

#endif
