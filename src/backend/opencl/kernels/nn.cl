/* Neural-network kernels on float32 NCHW tensors: direct convolution (groups, strides, pads, dilations)
 * with bias, residual and activation epilogue; transposed convolution; inference BatchNormalization; max / average pooling;
 * reductions over any axes; Softmax / LogSoftmax along one axis; LayerNormalization over trailing dims. */

kernel void tb_conv2d(global const float *x, int xo, global const float *w, int wo, global const float *bias, int bo,
                      int has_bias, global const float *res, int ro, int has_res, global float *y, int yo, int n,
                      int C, int H, int W, int M, int OH, int OW, int KH, int KW, int sh, int sw, int ph, int pw,
                      int dh, int dw, int group, int act, float a, float b) {
  int i = get_global_id(0);
  if (i >= n) return;
  int ow = i % OW, t = i / OW;
  int oh = t % OH;
  t /= OH;
  int m = t % M, nb = t / M;
  int cg = C / group, g = m / (M / group);
  float acc = 0.0f;
  for (int c = 0; c < cg; c++) {
    int ci = g * cg + c;
    int xbase = xo + (nb * C + ci) * H * W, wbase = wo + (m * cg + c) * KH * KW;
    for (int kh = 0; kh < KH; kh++) {
      int ih = oh * sh - ph + kh * dh;
      if (ih < 0 || ih >= H) continue;
      for (int kw = 0; kw < KW; kw++) {
        int iw = ow * sw - pw + kw * dw;
        if (iw < 0 || iw >= W) continue;
        acc += x[xbase + ih * W + iw] * w[wbase + kh * KW + kw];
      }
    }
  }
  if (has_bias) acc += bias[bo + m];
  if (has_res) acc += res[ro + i];
  y[yo + i] = tb_unary(act, acc, a, b);
}

/* ConvTranspose (1-D as H = 1): output (n, m, oh, ow) gathers every input position whose window covers it:
 * oh = ih * sh + kh * dh - ph, so ih = (oh + ph - kh * dh) / sh where that divides exactly. W is [C, M/group,
 * KH, KW]. */
kernel void tb_conv_transpose2d(global const float *x, int xo, global const float *w, int wo, global const float *bias,
                                int bo, int has_bias, global float *y, int yo, int n, int C, int H, int W, int M, int OH,
                                int OW, int KH, int KW, int sh, int sw, int ph, int pw, int dh, int dw, int group) {
  int i = get_global_id(0);
  if (i >= n) return;
  int ow = i % OW, t = i / OW;
  int oh = t % OH;
  t /= OH;
  int m = t % M, nb = t / M;
  int cg = C / group, mg = M / group, g = m / mg, mm = m % mg;
  float acc = 0.0f;
  for (int c = g * cg; c < (g + 1) * cg; c++) {
    for (int kh = 0; kh < KH; kh++) {
      int th = oh + ph - kh * dh;
      if (th < 0 || th % sh) continue;
      int ih = th / sh;
      if (ih >= H) continue;
      for (int kw = 0; kw < KW; kw++) {
        int tw = ow + pw - kw * dw;
        if (tw < 0 || tw % sw) continue;
        int iw = tw / sw;
        if (iw >= W) continue;
        acc += x[xo + ((nb * C + c) * H + ih) * W + iw] * w[wo + ((c * mg + mm) * KH + kh) * KW + kw];
      }
    }
  }
  y[yo + i] = has_bias ? acc + bias[bo + m] : acc;
}

kernel void tb_batchnorm(global const float *x, int xo, global const float *sc, int so, global const float *bi, int bo,
                         global const float *mean, int mo, global const float *var, int vo, global float *y, int yo,
                         int n, int C, int inner, float eps) {
  int i = get_global_id(0);
  if (i >= n) return;
  int c = (i / inner) % C;
  y[yo + i] = (x[xo + i] - mean[mo + c]) / sqrt(var[vo + c] + eps) * sc[so + c] + bi[bo + c];
}

/* mode 0: max, 1: average (count_pad: divide by the taps inside the padded input, else the valid ones). */
kernel void tb_pool2d(global const float *x, int xo, global float *y, int yo, int n, int H, int W, int OH, int OW,
                      int KH, int KW, int sh, int sw, int ph, int pw, int dh, int dw, int mode, int count_pad,
                      int pad_h_end, int pad_w_end) {
  int i = get_global_id(0);
  if (i >= n) return;
  int ow = i % OW, t = i / OW;
  int oh = t % OH, nc = t / OH;
  int base = xo + nc * H * W;
  float acc = mode == 0 ? -INFINITY : 0.0f;
  int valid = 0, padded = 0;
  for (int kh = 0; kh < KH; kh++) {
    int ih = oh * sh - ph + kh * dh;
    if (ih >= H + pad_h_end) break;
    for (int kw = 0; kw < KW; kw++) {
      int iw = ow * sw - pw + kw * dw;
      if (iw >= W + pad_w_end) break;
      padded++;
      if (ih < 0 || ih >= H || iw < 0 || iw >= W) continue;
      float v = x[base + ih * W + iw];
      acc = mode == 0 ? fmax(acc, v) : acc + v;
      valid++;
    }
  }
  if (mode != 0) acc = acc / (float)(count_pad ? padded : (valid ? valid : 1));
  y[yo + i] = acc;
}

/* Output i: the kept dims' offset (kshape/kstride over the input) plus every reduced position
 * (rshape/rstride, rcount of them). op 0 sum, 1 mean, 2 max, 3 min, 4 prod, 5 sum of squares, 6 L2, 7 L1,
 * 8 log-sum-exp (shifted by the maximum). */
kernel void tb_reduce(global const float *x, int xo, global float *y, int yo, int n, int nk, int8 kshape, int8 kstride,
                      int nr, int8 rshape, int8 rstride, int rcount, int op) {
  int i = get_global_id(0);
  if (i >= n) return;
  int ks[8], kt[8], rs[8], rt[8];
  vstore8(kshape, 0, ks);
  vstore8(kstride, 0, kt);
  vstore8(rshape, 0, rs);
  vstore8(rstride, 0, rt);
  int base = xo + tb_offset(i, nk, ks, kt);
  float acc = op == 2 ? -INFINITY : op == 3 ? INFINITY : op == 4 ? 1.0f : 0.0f, shift = 0.0f;
  if (op == 8) {
    shift = -INFINITY;
    for (int j = 0; j < rcount; j++) shift = fmax(shift, x[base + tb_offset(j, nr, rs, rt)]);
    if (isinf(shift)) shift = 0.0f;
  }
  for (int j = 0; j < rcount; j++) {
    float v = x[base + tb_offset(j, nr, rs, rt)];
    switch (op) {
      case 2: acc = fmax(acc, v); break;
      case 3: acc = fmin(acc, v); break;
      case 4: acc *= v; break;
      case 5: case 6: acc += v * v; break;
      case 7: acc += fabs(v); break;
      case 8: acc += exp(v - shift); break;
      default: acc += v; break;
    }
  }
  if (op == 1) acc = acc / (float)rcount;
  if (op == 6) acc = sqrt(acc);
  if (op == 8) acc = log(acc) + shift;
  y[yo + i] = acc;
}

/* One row (outer index, inner index) of len elements at stride inner. mode 0 Softmax, 1 LogSoftmax,
 * 2 Hardmax (1 at the first maximum, 0 elsewhere). */
kernel void tb_softmax(global const float *x, int xo, global float *y, int yo, int rows, int len, int inner, int logsm) {
  int r = get_global_id(0);
  if (r >= rows) return;
  int base = (r / inner) * len * inner + r % inner;
  if (logsm == 2) {
    int best = 0;
    for (int j = 1; j < len; j++)
      if (x[xo + base + j * inner] > x[xo + base + best * inner]) best = j;
    for (int j = 0; j < len; j++) y[yo + base + j * inner] = j == best ? 1.0f : 0.0f;
    return;
  }
  float m = -INFINITY;
  for (int j = 0; j < len; j++) m = fmax(m, x[xo + base + j * inner]);
  float s = 0.0f;
  for (int j = 0; j < len; j++) s += exp(x[xo + base + j * inner] - m);
  float ls = log(s);
  for (int j = 0; j < len; j++) {
    float v = x[xo + base + j * inner] - m;
    y[yo + base + j * inner] = logsm ? v - ls : exp(v) / s;
  }
}

/* ArgMax (is_min 0) / ArgMin of one row (outer index, inner index) of len elements at stride inner; ties go
 * to the first index, or the last with select_last. */
kernel void tb_argextreme(global const float *x, int xo, global long *y, int yo, int rows, int len, int inner, int is_min,
                          int select_last) {
  int r = get_global_id(0);
  if (r >= rows) return;
  int base = xo + (r / inner) * len * inner + r % inner, best = 0;
  for (int j = 1; j < len; j++) {
    float v = x[base + j * inner], b = x[base + best * inner];
    bool better = is_min ? (select_last ? v <= b : v < b) : (select_last ? v >= b : v > b);
    if (better) best = j;
  }
  y[yo + r] = best;
}

/* One row of cols elements; scale and bias at stride ss / bs (0: one value broadcast). has_stats bit 0 / bit 1:
 * the row's mean / 1 / sqrt(variance + eps) go to mean_out / inv_out (LayerNormalization's optional outputs). */
kernel void tb_layernorm(global const float *x, int xo, global const float *sc, int so, int ss, global const float *bi,
                         int bo, int bs, int has_bias, global float *y, int yo, int rows, int cols, float eps, int has_stats,
                         global float *mean_out, int mno, global float *inv_out, int ino) {
  int r = get_global_id(0);
  if (r >= rows) return;
  int base = r * cols;
  float mean = 0.0f;
  for (int j = 0; j < cols; j++) mean += x[xo + base + j];
  mean /= (float)cols;
  float var = 0.0f;
  for (int j = 0; j < cols; j++) {
    float d = x[xo + base + j] - mean;
    var += d * d;
  }
  var /= (float)cols;
  float inv = 1.0f / sqrt(var + eps);
  if (has_stats & 1) mean_out[mno + r] = mean;
  if (has_stats & 2) inv_out[ino + r] = inv;
  for (int j = 0; j < cols; j++) {
    float v = (x[xo + base + j] - mean) * inv * sc[so + j * ss];
    y[yo + base + j] = has_bias ? v + bi[bo + j * bs] : v;
  }
}
