/* Internal: one Scan over given tensors (scan_job.c) — the iterations shared by Scan-9+ (the node's own
 * inputs) and Scan-8 (one job per batch row): slice every scan input along its axis (from the end when
 * its direction is 1), run the body with the states and the slices, carry the new states, and keep each
 * iteration's scan outputs. */
#ifndef TB_BACKEND_CONTROL_SCAN_JOB_H
#define TB_BACKEND_CONTROL_SCAN_JOB_H
#include "backend/control/rc_util.h"
#include "ops/control/control_params.h"

typedef struct scan_job {
  /* set by the caller */
  const tb_graph *body;
  size_t n_state, n_scan_in, n_scan_out;
  tb_tensor *const *state_in; /* n_state initial values (borrowed) */
  tb_tensor *const *scan_in;  /* n_scan_in inputs (borrowed) */
  const size_t *in_axis;      /* n_scan_in axes, normalised */
  const int64_t *in_dirs;     /* n_scan_in directions, or NULL for all 0 */
  int64_t length;             /* iterations */
  /* results, freed by tb_scan_job_free */
  tb_tensor **states;         /* n_state final values */
  bool *owned;
  tb_tensor **parts;          /* n_scan_out x length: output k of iteration t at parts[k * length + t] */
} scan_job;

tb_status tb_scan_job_run(tb_kernel_ctx *ctx, scan_job *job);
void tb_scan_job_free(scan_job *job);

/* Scan-8 (scan8.c): a batch axis first on every input and output, scan inputs' sequence axis second; p is
 * the node's parsed tb_scan_params (batched). */
tb_status tb_scan8_run(tb_kernel_ctx *ctx, const tb_scan_params *p);

#endif
