/* GRU reference kernel: one step of the ONNX GRU equations, gates in the order z, r, h; f and g are
 * the direction's two activations:
 *   z = f(Wz x + Rz h + Wbz + Rbz)     r = f(Wr x + Rr h + Wbr + Rbr)
 *   h~ = g(Wh x + Rh (r . h) + Rbh + Wbh)        (linear_before_reset 0)
 *   h~ = g(Wh x + r . (Rh h + Rbh) + Wbh)        (linear_before_reset 1)
 *   H = (1 - z) . h~ + z . h
 * with clip, when given, applied to each activation's input. */
#include "backend/cpu/kernels/rnn_control/rnn_cell.h"

static void gru_step(const tb_rnn_params *a, const rnn_dir_params *p, size_t hidden, size_t input, const double *x,
                     double *h, double *c, double *g) {
  (void)c;
  size_t gh = 3 * hidden;
  double *rh = g + gh; /* R h for the h gate, or R (r . h) */
  for (size_t j = 0; j < gh; j++) g[j] = p->wb[j];
  tb_rnn_gemv(gh, input, p->w, x, g);
  for (size_t j = 0; j < 2 * hidden; j++) g[j] += p->rb[j];
  tb_rnn_gemv(2 * hidden, hidden, p->r, h, g); /* z and r rows */
  const tb_rnn_act *act_f = &p->acts[0], *act_g = &p->acts[1];
  double *z = g, *r = g + hidden, *hh = g + 2 * hidden;
  for (size_t j = 0; j < 2 * hidden; j++) g[j] = tb_rnn_activate(act_f, tb_rnn_clip(a, g[j]));
  const double *r_h = p->r + 2 * hidden * hidden, *rb_h = p->rb + 2 * hidden;
  double *scaled = rh + hidden; /* r . h, for linear_before_reset 0 */
  for (size_t j = 0; j < hidden; j++) {
    rh[j] = 0.0;
    scaled[j] = r[j] * h[j];
  }
  tb_rnn_gemv(hidden, hidden, r_h, a->linear_before_reset ? h : scaled, rh);
  for (size_t j = 0; j < hidden; j++) {
    double pre = a->linear_before_reset ? hh[j] + r[j] * (rh[j] + rb_h[j]) : hh[j] + rh[j] + rb_h[j];
    double cand = tb_rnn_activate(act_g, tb_rnn_clip(a, pre));
    h[j] = (1.0 - z[j]) * cand + z[j] * h[j];
  }
}

static tb_status run_gru(tb_kernel_ctx *ctx) { return tb_rnn_run(ctx, TB_RNN_CELL_GRU, gru_step); }

const tb_kernel tb_kernel_gru = {.domain = "", .name = "GRU", .level = TB_KERNEL_REFERENCE, .cpu_features = 0, .accepts = tb_rnn_accepts, .run = run_gru};
