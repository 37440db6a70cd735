/* INTERIM (removed when tb_kernel_ctx.params lands): a kernel's node parameters parsed into buf. */
#ifndef TB_CPU_KERNELS_PARAMS_INTERIM_H
#define TB_CPU_KERNELS_PARAMS_INTERIM_H
#include <string.h>
#include "ops/fused/fused_params.h"
#define TB_NN_PARAMS(ctx, parse, buf) (memset(&(buf), 0, sizeof(buf)), parse((ctx)->graph, (ctx)->node, &(buf)))
#define TB_NN_QPARAMS(g, n, parse, buf) (memset(&(buf), 0, sizeof(buf)), parse((g), (n), &(buf)))
#endif
