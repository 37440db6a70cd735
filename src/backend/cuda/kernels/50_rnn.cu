// The recurrent operators LSTM, GRU and RNN on float32 (cuda_ops_rnn.c), after the input projection of every
// time step has been computed as one product (xw[d] = X W[d]^T, [dirs, seq * batch, G * H], on the GEMM path):
//   tb_cu_rnn_transpose_f32  (r, rt, mats, rows, cols): rt[m] = r[m]^T, so the recurrent product's threads
//                            read R along their own output row with neighbouring threads on neighbouring
//                            addresses; any grid
//   tb_cu_rnn_seq_f32        (xw, rt, bias, p, lens, h0, c0, y, yh, yc, work, bad_lens, tb_rnn_desc): the whole sequence,
//                            one block per (direction, batch row) looping over its time steps (reversed for the
//                            reverse direction, stopping at the row's sequence length, read here on the device):
//                            per step the recurrent product h R^T (one thread per gate row), a barrier, the
//                            gates of the ONNX equations (CPU reference: backend/cpu/kernels/rnn_control), a
//                            barrier. h, c and the gates live in the block's slice of work ((G + 4) * H floats),
//                            which __syncthreads makes visible to the whole block. Y is zero past the row's
//                            length; Y_h / Y_c get the state after the last step (the initial state for length
//                            0). Pointers may be NULL: bias, p, lens, h0, c0 (absent inputs), y, yh, yc (outputs
//                            not wanted), xw (no time step), bad_lens. A length outside 0..seq sets the int32 flag
//                            bad_lens (the host names it at the run's next synchronisation; the CPU refuses such a
//                            length) and is clamped for the rest. blockDim.x a multiple of warpSize, any grid.

// The host mirrors this layout (cuda_ops_rnn.c, 144 bytes).
struct tb_rnn_desc {
  int cell;                // gates: 1 RNN, 3 GRU, 4 LSTM
  int layout;              // 0: [seq, batch, ...]; 1: [batch, seq, ...]
  int dirs;                // 1 or 2
  int reverse;             // direction "reverse" (dirs 1)
  int has_clip;
  int input_forget;        // LSTM
  int linear_before_reset; // GRU
  int lens_kind;           // sequence_lens: 0 absent, 1 int32, 2 int64
  int act[6];              // direction d's activation k at act[d * (activations per direction) + k]
  float alpha[6], beta[6];
  float clip;
  int unused;
  tb_index seq, batch, input, hidden;
};

// The recurrent operators' activations, numbered as tb_rnn_act_kind (ops/rnn/rnn_params.h).
__device__ inline float tb_curnn_act(int kind, float x, float alpha, float beta) {
  switch (kind) {
    case 0: return x >= 0.0f ? 1.0f / (1.0f + expf(-x)) : expf(x) / (1.0f + expf(x));
    case 1: return tanhf(x);
    case 2: return x > 0.0f ? x : 0.0f;
    case 3: return alpha * x + beta;
    case 4: return x >= 0.0f ? x : alpha * x;
    case 5: return x > alpha ? x : 0.0f;
    case 6: return alpha * tanhf(beta * x);
    case 7: return fmaxf(0.0f, fminf(1.0f, alpha * x + beta));
    case 8: return x >= 0.0f ? x : alpha * (expf(x) - 1.0f);
    case 9: return x / (1.0f + fabsf(x));
    case 10: return x > 0.0f ? x + log1pf(expf(-x)) : log1pf(expf(x));
    default: return x;
  }
}

__device__ inline float tb_curnn_clip(const tb_rnn_desc &d, float x) {
  return d.has_clip ? (x < -d.clip ? -d.clip : x > d.clip ? d.clip : x) : x;
}

// Activation k of the direction's list on x, clipped first.
__device__ inline float tb_curnn_gate(const tb_rnn_desc &d, int first, int k, float x) {
  return tb_curnn_act(d.act[first + k], tb_curnn_clip(d, x), d.alpha[first + k], d.beta[first + k]);
}

extern "C" __global__ void tb_cu_rnn_transpose_f32(const float *__restrict__ r, float *__restrict__ rt, tb_index mats, tb_index rows,
                                                   tb_index cols) {
  TB_GRID_LOOP(i, mats * rows * cols) {
    tb_index m = i / (rows * cols), e = i % (rows * cols), c = e / rows, row = e % rows;
    rt[i] = r[(m * rows + row) * cols + c];
  }
}

// sum_k rt[k * stride + j] * v[k] over k < n.
__device__ inline float tb_curnn_dot(const float *rt, tb_index stride, tb_index j, const float *v, tb_index n) {
  float acc = 0.0f;
  for (tb_index k = 0; k < n; k++) acc += rt[k * stride + j] * v[k];
  return acc;
}

extern "C" __global__ void tb_cu_rnn_seq_f32(const float *__restrict__ xw, const float *__restrict__ rt, const float *__restrict__ bias,
                                             const float *__restrict__ p, const void *__restrict__ lens, const float *__restrict__ h0,
                                             const float *__restrict__ c0, float *__restrict__ y, float *__restrict__ yh,
                                             float *__restrict__ yc, float *__restrict__ work, int *__restrict__ bad_lens,
                                             tb_rnn_desc d) {
  const tb_index H = d.hidden, G = d.cell, GH = G * H, rows = d.seq * d.batch;
  const tb_index tid = threadIdx.x, step = blockDim.x;
  const int per_dir = d.cell == 4 ? 3 : d.cell == 3 ? 2 : 1;
  for (tb_index unit = blockIdx.x; unit < d.dirs * d.batch; unit += gridDim.x) {
    const tb_index dir = unit / d.batch, b = unit % d.batch;
    float *h = work + unit * (G + 4) * H, *c = h + H, *g = c + H, *s = g + GH; // s: 2H (GRU's r . h and R_h products)
    const float *wb = bias ? bias + dir * 2 * GH : 0, *rb = bias ? bias + dir * 2 * GH + GH : 0;
    const float *pd = p ? p + dir * 3 * H : 0, *rtd = rt + dir * H * GH, *xwd = xw ? xw + dir * rows * GH : 0;
    const int first = (int)dir * per_dir;
    const tb_index state = (d.layout == 0 ? dir * d.batch + b : b * d.dirs + dir) * H;
    tb_index len = d.lens_kind == 1 ? (tb_index)((const int *)lens)[b] : d.lens_kind == 2 ? ((const long long *)lens)[b] : d.seq;
    if (len < 0 || len > d.seq) {
      if (bad_lens && tid == 0) tb_flag_raise_at(bad_lens, b, len); // the run fails with the CPU's sentence (cuda_index_flag.c)
      len = len < 0 ? 0 : d.seq;
    }
    const bool reverse = d.reverse || dir == 1;
    for (tb_index j = tid; j < H; j += step) {
      h[j] = h0 ? h0[state + j] : 0.0f;
      c[j] = c0 ? c0[state + j] : 0.0f;
    }
    if (y)
      for (tb_index e = tid; e < (d.seq - len) * H; e += step) {
        tb_index t = len + e / H;
        y[(d.layout == 0 ? (t * d.dirs + dir) * d.batch + b : (b * d.seq + t) * d.dirs + dir) * H + e % H] = 0.0f;
      }
    __syncthreads();
    for (tb_index k = 0; k < len; k++) {
      const tb_index t = reverse ? len - 1 - k : k;
      const float *x = xwd + (d.layout == 0 ? t * d.batch + b : b * d.seq + t) * GH;
      // the pre-activations: X W^T + Wb, plus h R^T + Rb on the rows that take h (GRU's h row with
      // linear_before_reset keeps R_h h + Rb_h apart in s[H..2H); without it, that product waits for r)
      const tb_index h_rows = G == 3 ? (d.linear_before_reset ? GH : 2 * H) : GH;
      for (tb_index j = tid; j < GH; j += step) {
        float v = x[j] + (wb ? wb[j] : 0.0f);
        if (j < h_rows) {
          float rec = tb_curnn_dot(rtd, GH, j, h, H) + (rb ? rb[j] : 0.0f);
          if (G == 3 && j >= 2 * H) s[H + j - 2 * H] = rec;
          else v += rec;
        }
        g[j] = v;
      }
      __syncthreads();
      if (G == 3 && !d.linear_before_reset) { // R_h (r . h) + Rb_h
        for (tb_index j = tid; j < H; j += step) s[j] = tb_curnn_gate(d, first, 0, g[H + j]) * h[j];
        __syncthreads();
        for (tb_index j = tid; j < H; j += step) s[H + j] = tb_curnn_dot(rtd, GH, 2 * H + j, s, H) + (rb ? rb[2 * H + j] : 0.0f);
        __syncthreads();
      }
      for (tb_index j = tid; j < H; j += step) {
        float hv;
        if (G == 4) { // gates i, o, f, c; peepholes i, o, f
          float i = tb_curnn_gate(d, first, 0, g[j] + (pd ? pd[j] * c[j] : 0.0f));
          float f = d.input_forget ? 1.0f - i : tb_curnn_gate(d, first, 0, g[2 * H + j] + (pd ? pd[2 * H + j] * c[j] : 0.0f));
          float cand = tb_curnn_gate(d, first, 1, g[3 * H + j]);
          float cell = f * c[j] + i * cand;
          float o = tb_curnn_gate(d, first, 0, g[H + j] + (pd ? pd[H + j] * cell : 0.0f));
          c[j] = cell;
          hv = o * tb_curnn_act(d.act[first + 2], cell, d.alpha[first + 2], d.beta[first + 2]);
        } else if (G == 3) { // gates z, r, h
          float z = tb_curnn_gate(d, first, 0, g[j]), r = tb_curnn_gate(d, first, 0, g[H + j]);
          float pre = d.linear_before_reset ? g[2 * H + j] + r * s[H + j] : g[2 * H + j] + s[H + j];
          float cand = tb_curnn_gate(d, first, 1, pre);
          hv = (1.0f - z) * cand + z * h[j];
        } else {
          hv = tb_curnn_gate(d, first, 0, g[j]);
        }
        h[j] = hv;
        if (y) y[(d.layout == 0 ? (t * d.dirs + dir) * d.batch + b : (b * d.seq + t) * d.dirs + dir) * H + j] = hv;
      }
      __syncthreads();
    }
    for (tb_index j = tid; j < H; j += step) {
      if (yh) yh[state + j] = h[j];
      if (yc) yc[state + j] = c[j];
    }
  }
}
