/* If kernel (every backend: control_kernels.h): run the branch the condition picks through the executor and copy its outputs
 * into the node's (allocated here when their shapes differ between branches). */
#include <stdlib.h>
#include "backend/control/rc_util.h"
#include "backend/control/control_kernels.h"
#include "backend/run_checks.h"
#include "ops/control/control_params.h"

tb_status tb_control_run_if(tb_kernel_ctx *ctx) {
  tb_tensor *cond_t = tb_rc_input(ctx, 0);
  if (!cond_t) return tb_kernel_error(ctx, TB_ERR_MODEL, "the condition input is missing");
  bool cond = false;
  tb_status st = tb_rc_scalar_bool(ctx, cond_t, "the condition", &cond);
  if (st == TB_OK) st = tb_run_checks_now(); /* the device is idle: a bad index before the If stops the run here */
  if (st != TB_OK) return st;
  const tb_if_params *p = ctx->params;
  const char *which = cond ? "then_branch" : "else_branch";
  const tb_graph *branch = cond ? p->then_branch : p->else_branch;
  if (branch->n_outputs < ctx->n_outputs)
    return tb_kernel_error(ctx, TB_ERR_MODEL, "%s has %zu outputs, the node %zu", which, branch->n_outputs, ctx->n_outputs);
  tb_tensor **outs = calloc(branch->n_outputs ? branch->n_outputs : 1, sizeof *outs);
  if (!outs) return tb_kernel_error(ctx, TB_ERR_OUT_OF_MEMORY, "cannot allocate %zu output slots", branch->n_outputs);
  st = tb_rc_run_body(ctx, branch, 0, NULL, branch->n_outputs, outs);
  for (size_t i = 0; st == TB_OK && i < ctx->n_outputs; i++) st = tb_rc_output_copy(ctx, i, outs[i]);
  tb_rc_destroy_all(outs, branch->n_outputs);
  free(outs);
  return st;
}

