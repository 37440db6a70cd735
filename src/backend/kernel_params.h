/* Internal: a kernel's access to its node's typed parameters (the struct ops/ parsed once at prepare,
 * backend/kernel.h). The executor hands every node of an op with parameters its parsed block; a kernel that
 * finds none reports it instead of reading through NULL. */
#ifndef TB_BACKEND_KERNEL_PARAMS_H
#define TB_BACKEND_KERNEL_PARAMS_H
#include "backend/kernel.h"

/* ctx->params with *st TB_OK; NULL with *st TB_ERR_INTERNAL naming the node when the node came without
 * its parsed parameters. */
const void *tb_kernel_params(const tb_kernel_ctx *ctx, tb_status *st);
/* st, with the last error prefixed by the node's name unless it names it already: for the errors of the
 * ops' shape-time helpers (ops/nn/window.h, reduce.h), which see only parameters and shapes. */
tb_status tb_kernel_name_error(const tb_kernel_ctx *ctx, tb_status st);

#endif
