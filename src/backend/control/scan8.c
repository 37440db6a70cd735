/* Scan-8 reference kernel: every state and scan input has a batch axis first, scan inputs their sequence
 * axis second; each batch row is one scan (scan_job.c) whose outputs are stacked back into
 * [batch, ...] states and [batch, sequence, ...] scan outputs. sequence_lens shorter than the sequence
 * (padded batches) are refused as unsupported. */
#include <stdlib.h>
#include "backend/control/scan_job.h"

typedef struct scan8 {
  const tb_graph *body;
  size_t n_state, n_scan_in, n_scan_out;
  const int64_t *dirs;
  int64_t batch, length;
} scan8;

static tb_status read_node(tb_kernel_ctx *ctx, const tb_scan_params *p, scan8 *s) {
  s->body = p->body;
  s->dirs = p->in_dirs;
  s->n_scan_in = p->n_scan_in;
  s->n_state = p->n_state;
  s->n_scan_out = p->n_scan_out;
  s->batch = s->length = -1;
  for (size_t i = 1; i < ctx->n_inputs; i++) {
    tb_tensor *in = tb_rc_input(ctx, i);
    bool scanned = i > s->n_state;
    if (!in || tb_tensor_ndim(in) < (scanned ? 2u : 1u))
      return tb_kernel_error(ctx, TB_ERR_MODEL, "input %zu must have a batch axis%s", i, scanned ? " and a sequence axis" : "");
    int64_t b = tb_tensor_shape(in)[0], len = scanned ? tb_tensor_shape(in)[1] : -1;
    if (s->batch >= 0 && b != s->batch)
      return tb_kernel_error(ctx, TB_ERR_MODEL, "input %zu has batch %lld, input 1 has %lld", i, (long long)b, (long long)s->batch);
    if (scanned && s->length >= 0 && len != s->length)
      return tb_kernel_error(ctx, TB_ERR_MODEL, "input %zu has sequence length %lld, the first scan input %lld", i,
                             (long long)len, (long long)s->length);
    s->batch = b;
    if (scanned) s->length = len;
  }
  tb_tensor *lens_t = tb_rc_input(ctx, 0);
  if (!lens_t) return TB_OK;
  int64_t *lens = NULL;
  if (tb_tensor_numel(lens_t) != s->batch)
    return tb_kernel_error(ctx, TB_ERR_MODEL, "sequence_lens has %lld entries for a batch of %lld",
                           (long long)tb_tensor_numel(lens_t), (long long)s->batch);
  tb_status st = tb_rc_load_i64(ctx, lens_t, &lens);
  if (st != TB_OK) return st;
  for (int64_t b = 0; st == TB_OK && b < s->batch; b++)
    if (lens[b] != s->length)
      st = tb_kernel_error(ctx, TB_ERR_UNSUPPORTED, "sequence_lens[%lld] is %lld, shorter than the sequence (%lld): padded "
                           "batches are not supported", (long long)b, (long long)lens[b], (long long)s->length);
  free(lens);
  return st;
}

/* Row b of every input as views, and its scan. */
static tb_status run_row(tb_kernel_ctx *ctx, const scan8 *s, int64_t b, tb_tensor **views, scan_job *job) {
  static const size_t zero_axes[64] = {0};
  size_t n = s->n_state + s->n_scan_in;
  tb_status st = TB_OK;
  for (size_t i = 0; st == TB_OK && i < n; i++) st = tb_rc_slice_view(tb_rc_input(ctx, 1 + i), 0, b, &views[i]);
  *job = (scan_job){.body = s->body, .n_state = s->n_state, .n_scan_in = s->n_scan_in, .n_scan_out = s->n_scan_out,
                    .state_in = views, .scan_in = views + s->n_state, .in_axis = zero_axes, .in_dirs = s->dirs,
                    .length = s->length};
  if (st == TB_OK) st = tb_scan_job_run(ctx, job);
  return st;
}

/* Output i = parts[b * per_row + t] stacked as [batch, (per_row when scanned), part...]. */
static tb_status write_output(tb_kernel_ctx *ctx, size_t i, const scan8 *s, tb_tensor *const *parts, bool scanned) {
  if (!tb_rc_has_output(ctx, i)) return TB_OK;
  size_t per_row = scanned ? (size_t)s->length : 1, lead = scanned ? 2 : 1;
  const tb_tensor *first = parts[0];
  size_t rank = tb_tensor_ndim(first) + lead;
  if (rank > TB_MAX_DIMS) return tb_kernel_error(ctx, TB_ERR_UNSUPPORTED, "output %zu would have rank %zu", i, rank);
  int64_t shape[TB_MAX_DIMS] = {s->batch, s->length};
  for (size_t d = lead; d < rank; d++) shape[d] = tb_tensor_shape(first)[d - lead];
  tb_tensor *out = NULL;
  tb_status st = tb_rc_output(ctx, i, tb_tensor_dtype(first), rank, shape, &out);
  for (size_t p = 0; st == TB_OK && p < (size_t)s->batch * per_row; p++) {
    tb_tensor *row = NULL, *slot = NULL;
    st = tb_rc_slice_view(out, 0, (int64_t)(p / per_row), &row);
    if (st == TB_OK && scanned) st = tb_rc_slice_view(row, 0, (int64_t)(p % per_row), &slot);
    if (st == TB_OK) st = tb_rc_copy(scanned ? slot : row, parts[p]);
    tb_tensor_destroy(slot);
    tb_tensor_destroy(row);
  }
  return st;
}

tb_status tb_scan8_run(tb_kernel_ctx *ctx, const tb_scan_params *p) {
  scan8 s = {0};
  tb_status st = read_node(ctx, p, &s);
  if (st != TB_OK) return st;
  if (s.n_scan_in + s.n_state > 64) return tb_kernel_error(ctx, TB_ERR_UNSUPPORTED, "more than 64 inputs");
  if (s.batch == 0 || s.length == 0) return tb_kernel_error(ctx, TB_ERR_UNSUPPORTED, "an empty batch or sequence");
  size_t n = s.n_state + s.n_scan_in, rows = (size_t)s.batch;
  scan_job *jobs = calloc(rows, sizeof *jobs);
  tb_tensor **views = calloc(rows * n + 1, sizeof *views);
  size_t n_parts = rows * (size_t)s.length + rows;
  tb_tensor **parts = calloc(n_parts, sizeof *parts);
  if (!jobs || !views || !parts) st = tb_kernel_error(ctx, TB_ERR_OUT_OF_MEMORY, "cannot allocate %zu scans", rows);
  for (size_t b = 0; st == TB_OK && b < rows; b++) st = run_row(ctx, &s, (int64_t)b, views + b * n, &jobs[b]);
  for (size_t j = 0; st == TB_OK && j < s.n_state; j++) {
    for (size_t b = 0; b < rows; b++) parts[b] = jobs[b].states[j];
    st = write_output(ctx, j, &s, parts, false);
  }
  for (size_t k = 0; st == TB_OK && k < s.n_scan_out; k++) {
    for (size_t b = 0; b < rows; b++)
      for (size_t t = 0; t < (size_t)s.length; t++) parts[b * (size_t)s.length + t] = jobs[b].parts[k * (size_t)s.length + t];
    st = write_output(ctx, s.n_state + k, &s, parts, true);
  }
  for (size_t b = 0; jobs && b < rows; b++) tb_scan_job_free(&jobs[b]);
  if (views) tb_rc_destroy_all(views, rows * n);
  free(jobs);
  free(views);
  free(parts);
  return st;
}
