/* The iterations of one Scan (see scan_job.h). */
#include "backend/control/scan_job.h"
#include <stdlib.h>
#include "ops/control/control_params.h"

void tb_scan_job_free(scan_job *job) {
  for (size_t j = 0; job->states && j < job->n_state; j++)
    if (job->owned && job->owned[j]) tb_tensor_destroy(job->states[j]);
  if (job->parts) tb_rc_destroy_all(job->parts, job->n_scan_out * (size_t)job->length);
  free(job->states);
  free(job->owned);
  free(job->parts);
  job->states = NULL;
  job->owned = NULL;
  job->parts = NULL;
}

static tb_status iterate(tb_kernel_ctx *ctx, scan_job *job, int64_t t) {
  const tb_graph *body = job->body;
  size_t n_in = job->n_state + job->n_scan_in, n_out = body->n_outputs;
  tb_tensor **ins = calloc(n_in + 1, sizeof *ins), **outs = calloc(n_out + 1, sizeof *outs);
  tb_status st = ins && outs ? TB_OK : tb_kernel_error(ctx, TB_ERR_OUT_OF_MEMORY, "cannot allocate the body's inputs");
  for (size_t j = 0; st == TB_OK && j < job->n_scan_in; j++) {
    int64_t index = tb_scan_attr_at(job->in_dirs, j) ? job->length - 1 - t : t;
    tb_tensor *view = NULL;
    st = tb_rc_slice_view(job->scan_in[j], job->in_axis[j], index, &view);
    if (st == TB_OK) st = tb_rc_clone(ctx, view, &ins[job->n_state + j]);
    tb_tensor_destroy(view);
  }
  for (size_t j = 0; st == TB_OK && j < job->n_state; j++) ins[j] = job->states[j];
  if (st == TB_OK) st = tb_rc_run_body(ctx, body, n_in, ins, n_out, outs);
  if (st == TB_OK) {
    for (size_t j = 0; j < job->n_state; j++) {
      if (job->owned[j]) tb_tensor_destroy(job->states[j]);
      job->states[j] = outs[j];
      job->owned[j] = true;
      outs[j] = NULL;
    }
    for (size_t k = 0; k < job->n_scan_out; k++) {
      job->parts[k * (size_t)job->length + (size_t)t] = outs[job->n_state + k];
      outs[job->n_state + k] = NULL;
    }
  }
  if (ins) tb_rc_destroy_all(ins + job->n_state, job->n_scan_in); /* the states belong to the job */
  if (outs) tb_rc_destroy_all(outs, n_out);
  free(ins);
  free(outs);
  return st;
}

tb_status tb_scan_job_run(tb_kernel_ctx *ctx, scan_job *job) {
  job->states = calloc(job->n_state + 1, sizeof *job->states);
  job->owned = calloc(job->n_state + 1, sizeof *job->owned);
  job->parts = calloc(job->n_scan_out * (size_t)job->length + 1, sizeof *job->parts);
  if (!job->states || !job->owned || !job->parts)
    return tb_kernel_error(ctx, TB_ERR_OUT_OF_MEMORY, "cannot allocate the state of a scan of %lld iterations",
                           (long long)job->length);
  for (size_t j = 0; j < job->n_state; j++) job->states[j] = job->state_in[j];
  tb_status st = TB_OK;
  for (int64_t t = 0; st == TB_OK && t < job->length; t++) st = iterate(ctx, job, t);
  return st;
}
