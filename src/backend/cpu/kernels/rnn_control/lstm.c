/* LSTM reference kernel: one step of the ONNX LSTM equations, gates in the order i, o, f, c, peepholes
 * i, o, f; f, g, h are the direction's three activations:
 *   i = f(Wi x + Ri h + Pi . c + Wbi + Rbi)      f = f(Wf x + Rf h + Pf . c + Wbf + Rbf)  (1 - i with input_forget)
 *   c~ = g(Wc x + Rc h + Wbc + Rbc)              C = f . c + i . c~
 *   o = f(Wo x + Ro h + Po . C + Wbo + Rbo)      H = o . h(C)
 * with clip, when given, applied to each activation's input. */
#include "backend/cpu/kernels/rnn_control/rnn_cell.h"

static void lstm_step(const tb_rnn_params *a, const rnn_dir_params *p, size_t hidden, size_t input, const double *x,
                      double *h, double *c, double *g) {
  size_t gh = 4 * hidden;
  for (size_t j = 0; j < gh; j++) g[j] = p->wb[j] + p->rb[j];
  tb_rnn_gemv(gh, input, p->w, x, g);
  tb_rnn_gemv(gh, hidden, p->r, h, g);
  const double *gi = g, *go = g + hidden, *gf = g + 2 * hidden, *gc = g + 3 * hidden;
  const double *pi = p->p, *po = p->p ? p->p + hidden : NULL, *pf = p->p ? p->p + 2 * hidden : NULL;
  const tb_rnn_act *act_f = &p->acts[0], *act_g = &p->acts[1], *act_h = &p->acts[2];
  for (size_t j = 0; j < hidden; j++) {
    double i = tb_rnn_activate(act_f, tb_rnn_clip(a, gi[j] + (pi ? pi[j] * c[j] : 0.0)));
    double f = a->input_forget ? 1.0 - i : tb_rnn_activate(act_f, tb_rnn_clip(a, gf[j] + (pf ? pf[j] * c[j] : 0.0)));
    double cand = tb_rnn_activate(act_g, tb_rnn_clip(a, gc[j]));
    double cell = f * c[j] + i * cand;
    double o = tb_rnn_activate(act_f, tb_rnn_clip(a, go[j] + (po ? po[j] * cell : 0.0)));
    c[j] = cell;
    h[j] = o * tb_rnn_activate(act_h, cell);
  }
}

static tb_status run_lstm(tb_kernel_ctx *ctx) { return tb_rnn_run(ctx, TB_RNN_CELL_LSTM, lstm_step); }

const tb_kernel tb_kernel_lstm = {.domain = "", .name = "LSTM", .level = TB_KERNEL_REFERENCE, .cpu_features = 0, .accepts = tb_rnn_accepts, .run = run_lstm};
