/* Internal: helpers shared by the level-2 (fast) kernels: the f32-only accepts, and the GEMM path the
 * executor's feature set selects for a kernel entry. */
#ifndef TB_CPU_KERNELS_FAST_KERNEL_H
#define TB_CPU_KERNELS_FAST_KERNEL_H
#include "backend/cpu/kernels/kernel.h"

/* True when every present input among the first n has dtype float32 (known). */
bool tb_fast_accepts_f32(const tb_value_type *const *in, size_t n);
/* A "node needs float32" error when input i is present and not f32. */
tb_status tb_fast_check_f32(tb_kernel_ctx *ctx, size_t n);

#endif
