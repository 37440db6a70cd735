/* A kernel's typed parameters, checked present (see kernel_params.h). */
#include "backend/kernel_params.h"

const void *tb_kernel_params(const tb_kernel_ctx *ctx, tb_status *st) {
  *st = ctx->params ? TB_OK
                    : tb_kernel_error(ctx, TB_ERR_INTERNAL, "the %s kernel got no parsed parameters (tb_op_def.parse did not run)",
                                      ctx->op_type ? ctx->op_type : "node's");
  return ctx->params;
}
