/* A kernel's typed parameters, checked present (see kernel_params.h). */
#include "backend/kernel_params.h"
#include <stdio.h>
#include <string.h>

const void *tb_kernel_params(const tb_kernel_ctx *ctx, tb_status *st) {
  *st = ctx->params ? TB_OK
                    : tb_kernel_error(ctx, TB_ERR_INTERNAL, "the %s kernel got no parsed parameters (tb_op_def.parse did not run)",
                                      ctx->op_type ? ctx->op_type : "node's");
  return ctx->params;
}

tb_status tb_kernel_name_error(const tb_kernel_ctx *ctx, tb_status st) {
  if (st == TB_OK || strncmp(tb_last_error(), "node ", 5) == 0) return st;
  char msg[512];
  snprintf(msg, sizeof msg, "%s", tb_last_error()); /* tb_kernel_error rewrites the buffer it points into */
  return tb_kernel_error(ctx, st, "%s", msg);
}
