/* Internal: the control-flow kernels (If, Loop, Scan) that every backend registers, the CPU and the device
 * backends alike (docs/cuda.md "Control flow"). They run on the node's own backend (ctx->backend): the
 * condition, the trip count and Scan-8's sequence lengths are read to the host (one synchronisation each on a
 * device), the body runs through the executor (ctx->run_subgraph), which places its nodes on the same backend,
 * the loop-carried values stay where the body left them, and slices and stacked outputs are copies on that
 * backend (tb_rc_copy). */
#ifndef TB_BACKEND_CONTROL_CONTROL_KERNELS_H
#define TB_BACKEND_CONTROL_CONTROL_KERNELS_H
#include <stddef.h>
#include "backend/kernel.h"

enum { TB_CONTROL_KERNEL_COUNT = 3 };
/* If, Loop and Scan (every opset the ops define), at TB_KERNEL_REFERENCE: they run at every level. */
extern const tb_kernel tb_control_kernels[TB_CONTROL_KERNEL_COUNT];

tb_status tb_control_run_if(tb_kernel_ctx *ctx);
tb_status tb_control_run_loop(tb_kernel_ctx *ctx);
tb_status tb_control_run_scan(tb_kernel_ctx *ctx);

#endif
