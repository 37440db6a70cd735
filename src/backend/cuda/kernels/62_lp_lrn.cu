// The windowed CNN operators beside 61_pool_norm.cu, on its calling convention (six pointers, then a
// tb_cnn_desc), float32 NCHW, computed in double as the CPU reference does (so the values match it to the last
// float bit or one rounding away):
//   tb_cu_cnn_lp_pool_f32  (x, -, -, -, y, -): LpPool and GlobalLpPool over up to 3 spatial axes (the pool
//                          geometry of tb_cu_cnn_pool_f32: pads, dilations, strides, ceil_mode), one thread per
//                          output: (sum of |x|^p over the taps inside the input)^(1/p), p = kind
//   tb_cu_cnn_lrn_f32      (x, -, -, -, y, -): LRN across channels, one thread per element: the squares of
//                          channels c - floor((size-1)/2) .. c + ceil((size-1)/2) (clipped), y = x / (bias +
//                          alpha / size * sum)^beta; size = kernel[0], bias = eps, alpha and beta; in[2] the
//                          plane (every axis after the channel's)

extern "C" __global__ void tb_cu_cnn_lp_pool_f32(const float *__restrict__ x, const float *__restrict__,
                                                 const float *__restrict__, const float *__restrict__,
                                                 float *__restrict__ y, const float *__restrict__, tb_cnn_desc d) {
  tb_index o_plane = d.out[0] * d.out[1] * d.out[2], i_plane = d.in[0] * d.in[1] * d.in[2];
  double p = (double)d.kind;
  TB_GRID_LOOP(i, d.n * d.c * o_plane) {
    tb_index op = i % o_plane, plane = i / o_plane;
    tb_index o[3] = {op / (d.out[2] * d.out[1]), (op / d.out[2]) % d.out[1], op % d.out[2]};
    const float *px = x + plane * i_plane;
    double acc = 0.0;
    for (tb_index k0 = 0; k0 < d.kernel[0]; k0++) {
      tb_index p0 = o[0] * d.stride[0] + k0 * d.dilation[0] - d.pad[0];
      if (p0 < 0 || p0 >= d.in[0]) continue;
      for (tb_index k1 = 0; k1 < d.kernel[1]; k1++) {
        tb_index p1 = o[1] * d.stride[1] + k1 * d.dilation[1] - d.pad[1];
        if (p1 < 0 || p1 >= d.in[1]) continue;
        for (tb_index k2 = 0; k2 < d.kernel[2]; k2++) {
          tb_index p2 = o[2] * d.stride[2] + k2 * d.dilation[2] - d.pad[2];
          if (p2 < 0 || p2 >= d.in[2]) continue;
          acc += pow(fabs((double)px[(p0 * d.in[1] + p1) * d.in[2] + p2]), p);
        }
      }
    }
    y[i] = (float)pow(acc, 1.0 / p);
  }
}

extern "C" __global__ void tb_cu_cnn_lrn_f32(const float *__restrict__ x, const float *__restrict__,
                                             const float *__restrict__, const float *__restrict__,
                                             float *__restrict__ y, const float *__restrict__, tb_cnn_desc d) {
  tb_index plane = d.in[2], size = d.kernel[0], lo = (size - 1) / 2, hi = size - 1 - lo;
  TB_GRID_LOOP(i, d.n * d.c * plane) {
    tb_index ch = (i / plane) % d.c, base = i - ch * plane;
    double sq = 0.0;
    for (tb_index k = ch - lo < 0 ? 0 : ch - lo; k <= ch + hi && k < d.c; k++) {
      double v = (double)x[base + k * plane];
      sq += v * v;
    }
    y[i] = (float)((double)x[i] / pow((double)d.eps + (double)d.alpha / (double)size * sq, (double)d.beta));
  }
}
