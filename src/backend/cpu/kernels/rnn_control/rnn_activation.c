/* The activation functions of the recurrent operators, exactly as the ONNX operators of the same names
 * define them, with the alpha/beta the node gives (see ops/rnn/rnn_params.h for the defaults). */
#include <math.h>
#include "backend/cpu/kernels/rnn_control/rnn_cell.h"

double tb_rnn_activate(const tb_rnn_act *act, double x) {
  double alpha = act->alpha, beta = act->beta;
  switch (act->kind) {
    case TB_RNN_ACT_SIGMOID: return x >= 0 ? 1.0 / (1.0 + exp(-x)) : exp(x) / (1.0 + exp(x));
    case TB_RNN_ACT_TANH: return tanh(x);
    case TB_RNN_ACT_RELU: return x > 0 ? x : 0.0;
    case TB_RNN_ACT_AFFINE: return alpha * x + beta;
    case TB_RNN_ACT_LEAKY_RELU: return x >= 0 ? x : alpha * x;
    case TB_RNN_ACT_THRESHOLDED_RELU: return x > alpha ? x : 0.0;
    case TB_RNN_ACT_SCALED_TANH: return alpha * tanh(beta * x);
    case TB_RNN_ACT_HARD_SIGMOID: return fmax(0.0, fmin(1.0, alpha * x + beta));
    case TB_RNN_ACT_ELU: return x >= 0 ? x : alpha * (exp(x) - 1.0);
    case TB_RNN_ACT_SOFTSIGN: return x / (1.0 + fabs(x));
    case TB_RNN_ACT_SOFTPLUS: return x > 0 ? x + log1p(exp(-x)) : log1p(exp(x));
  }
  return x;
}

double tb_rnn_clip(const tb_rnn_params *a, double x) {
  if (!a->has_clip) return x;
  double c = a->clip;
  return x < -c ? -c : x > c ? c : x;
}

void tb_rnn_gemv(size_t rows, size_t cols, const double *m, const double *v, double *out) {
  for (size_t j = 0; j < rows; j++) {
    double sum = 0.0;
    for (size_t k = 0; k < cols; k++) sum += m[j * cols + k] * v[k];
    out[j] += sum;
  }
}
