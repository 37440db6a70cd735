/* The LSTM's per-time-step gate kernel (cl_ops_lstm.c) and a zero fill for its states. g holds the four
 * gate pre-activations of one time step, [batch, 4H] in the ONNX order i, o, f, c, already X W^T + h R^T;
 * the biases Wb + Rb are added here. One work-item per (batch row, hidden unit) updates c and h in place
 * and writes h to Y's time step when has_y. Default activations: sigmoid, tanh, tanh. */
float tb_lstm_sigmoid(float x) { return 1.0f / (1.0f + exp(-x)); }

kernel void tb_lstm_gates(global const float *g, int go, global const float *bias, int bo, int has_bias, global float *h, int ho,
                          global float *c, int co, global float *y, int yo, int has_y, int batch, int hidden) {
  int i = get_global_id(0);
  if (i >= batch * hidden) return;
  int row = i / hidden, j = i - row * hidden;
  int base = go + row * 4 * hidden + j;
  float gi = g[base], gout = g[base + hidden], gf = g[base + 2 * hidden], gc = g[base + 3 * hidden];
  if (has_bias) {
    int b = bo + j, r = bo + 4 * hidden + j;
    gi += bias[b] + bias[r];
    gout += bias[b + hidden] + bias[r + hidden];
    gf += bias[b + 2 * hidden] + bias[r + 2 * hidden];
    gc += bias[b + 3 * hidden] + bias[r + 3 * hidden];
  }
  float cell = tb_lstm_sigmoid(gf) * c[co + i] + tb_lstm_sigmoid(gi) * tanh(gc);
  float hv = tb_lstm_sigmoid(gout) * tanh(cell);
  c[co + i] = cell;
  h[ho + i] = hv;
  if (has_y) y[yo + i] = hv;
}

kernel void tb_lstm_zero(global float *x, int xo, int n) {
  int i = get_global_id(0);
  if (i < n) x[xo + i] = 0.0f;
}
