/* Scan kernel (every backend: control_kernels.h) (opset 9 and later; Scan-8 goes to scan8.c): L iterations over slices of the
 * scan inputs (scan_job.c), then the final states and each scan output stacked along its axis
 * (iteration t at L-1-t when its direction is 1). */
#include "backend/run_checks.h"
#include "backend/control/scan_job.h"
#include "backend/control/control_kernels.h"
#include "ops/control/control_params.h"

enum { MAX_SCAN_INPUTS = 64 };

/* The scan axes (normalised) and the common length L. */
static tb_status scan_length(tb_kernel_ctx *ctx, const tb_scan_params *a, tb_tensor *const *scan_in, size_t *axes,
                             int64_t *length) {
  *length = -1;
  for (size_t j = 0; j < a->n_scan_in; j++) {
    if (!scan_in[j]) return tb_kernel_error(ctx, TB_ERR_MODEL, "scan input %zu is empty", j);
    int64_t rank = (int64_t)tb_tensor_ndim(scan_in[j]), axis = tb_scan_attr_at(a->in_axes, j);
    if (axis < 0) axis += rank;
    if (axis < 0 || axis >= rank)
      return tb_kernel_error(ctx, TB_ERR_MODEL, "scan_input_axes[%zu] = %lld is out of range for rank %lld", j,
                             (long long)tb_scan_attr_at(a->in_axes, j), (long long)rank);
    axes[j] = (size_t)axis;
    int64_t len = tb_tensor_shape(scan_in[j])[axis];
    if (*length >= 0 && len != *length)
      return tb_kernel_error(ctx, TB_ERR_MODEL, "scan input %zu has %lld iterations along its axis, the first has %lld", j,
                             (long long)len, (long long)*length);
    *length = len;
  }
  return TB_OK;
}

tb_status tb_control_run_scan(tb_kernel_ctx *ctx) {
  const tb_scan_params *p = ctx->params;
  if (p->batched) return tb_scan8_run(ctx, p);
  tb_scan_params a = *p;
  tb_status st;
  if (a.n_scan_in > MAX_SCAN_INPUTS)
    return tb_kernel_error(ctx, TB_ERR_UNSUPPORTED, "%zu scan inputs; at most %d supported", a.n_scan_in, MAX_SCAN_INPUTS);
  tb_tensor *inputs[MAX_SCAN_INPUTS * 2 + 1] = {0};
  if (ctx->n_inputs > sizeof inputs / sizeof inputs[0])
    return tb_kernel_error(ctx, TB_ERR_UNSUPPORTED, "%zu inputs; at most %zu supported", ctx->n_inputs,
                           sizeof inputs / sizeof inputs[0]);
  for (size_t i = 0; i < ctx->n_inputs; i++) {
    inputs[i] = tb_rc_input(ctx, i);
    if (!inputs[i]) return tb_kernel_error(ctx, TB_ERR_MODEL, "input %zu is empty", i);
  }
  size_t axes[MAX_SCAN_INPUTS];
  scan_job job = {.body = a.body, .n_state = a.n_state, .n_scan_in = a.n_scan_in, .n_scan_out = a.n_scan_out,
                  .state_in = inputs, .scan_in = inputs + a.n_state, .in_axis = axes, .in_dirs = a.in_dirs};
  if ((st = scan_length(ctx, &a, job.scan_in, axes, &job.length)) != TB_OK) return st;
  st = tb_scan_job_run(ctx, &job);
  for (size_t j = 0; st == TB_OK && j < a.n_state && j < ctx->n_outputs; j++) st = tb_rc_output_copy(ctx, j, job.states[j]);
  for (size_t k = 0; st == TB_OK && k < a.n_scan_out && a.n_state + k < ctx->n_outputs; k++) {
    const tb_value_type *declared = &a.body->values[a.body->outputs[a.n_state + k]].type;
    st = tb_rc_stack(ctx, a.n_state + k, "a scan output", &job.parts[k * (size_t)job.length], (size_t)job.length,
                  tb_scan_attr_at(a.out_axes, k), tb_scan_attr_at(a.out_dirs, k) != 0, declared);
  }
  tb_scan_job_free(&job);
  /* the body's device checks, read once per Scan (its iterations have no host synchronisation): a bad index in any
   * iteration fails the Scan here, named as the CPU names it (the device records the first bad call and position) */
  if (st == TB_OK) st = tb_run_checks_now();
  return st;
}

