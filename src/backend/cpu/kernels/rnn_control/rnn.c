/* RNN reference kernel: one step of the ONNX RNN equation H = f(Wi x + Ri h + Wbi + Rbi), f the
 * direction's activation, with clip, when given, applied to its input. */
#include "backend/cpu/kernels/rnn_control/rnn_cell.h"

static void rnn_step(const tb_rnn_params *a, const rnn_dir_params *p, size_t hidden, size_t input, const double *x,
                     double *h, double *c, double *g) {
  (void)c;
  for (size_t j = 0; j < hidden; j++) g[j] = p->wb[j] + p->rb[j];
  tb_rnn_gemv(hidden, input, p->w, x, g);
  tb_rnn_gemv(hidden, hidden, p->r, h, g);
  for (size_t j = 0; j < hidden; j++) h[j] = tb_rnn_activate(&p->acts[0], tb_rnn_clip(a, g[j]));
}

static tb_status run_rnn(tb_kernel_ctx *ctx) { return tb_rnn_run(ctx, TB_RNN_CELL_RNN, rnn_step); }

const tb_kernel tb_kernel_rnn = {.domain = "", .name = "RNN", .level = TB_KERNEL_REFERENCE, .cpu_features = 0, .accepts = tb_rnn_accepts, .run = run_rnn};
