// The CNN operators around the convolutions, float32 NCHW, with 60_conv.cu's calling convention (six
// pointers, then a tb_cnn_desc):
//   tb_cu_cnn_pool_f32           (x, -, -, -, y, -): MaxPool (kind 0) and AveragePool (kind 1) over up to 3
//                                spatial axes, one thread per output: pads, dilations, strides; a tap counts
//                                when inside the input, and for count_include_pad (flag) also when inside
//                                the padding (taps past pad_end, which ceil_mode makes, never count);
//                                MaxPool keeps the first value it sees unless a later one is larger (a NaN
//                                seen first stays), as the CPU reference does
//   tb_cu_cnn_batch_norm_f32     (x, scale, bias, mean, var, y): inference BatchNormalization over channel
//                                axis 1, y = (x - mean) / sqrt(var + eps) * scale + bias, one thread per element
//   tb_cu_cnn_instance_norm_f32  (x, scale, bias, -, y, -): one block per (n, c) plane: its mean, then the
//                                mean of squared deviations, then the normalised plane; blockDim.x a multiple
//                                of warpSize, at most 1024
//   tb_cu_cnn_resize_f32         (x, taps, weights, -, y, -): Resize over 4 axes (the host pads fewer with
//                                size-1 ones) from per-axis tap tables the host builds with the CPU's rule
//                                (tb_resize_taps_of): entry e of axis a (e = base[a] + output coordinate)
//                                has input indices taps[4e..4e+3] (long long) and weights
//                                weights[4e..4e+3]; taps[4e] < 0 means outside (the extrapolation value,
//                                eps). kind is the taps per axis (1 nearest: a copy; 2 linear; 4 cubic).

extern "C" __global__ void tb_cu_cnn_pool_f32(const float *__restrict__ x, const float *__restrict__,
                                              const float *__restrict__, const float *__restrict__,
                                              float *__restrict__ y, const float *__restrict__, tb_cnn_desc d) {
  tb_index o_plane = d.out[0] * d.out[1] * d.out[2], i_plane = d.in[0] * d.in[1] * d.in[2];
  TB_GRID_LOOP(i, d.n * d.c * o_plane) {
    tb_index op = i % o_plane, plane = i / o_plane;
    tb_index o[3] = {op / (d.out[2] * d.out[1]), (op / d.out[2]) % d.out[1], op % d.out[2]};
    const float *px = x + plane * i_plane;
    float acc = d.kind == 0 ? -TB_INF : 0.0f;
    bool any = false;
    tb_index count_in = 0, count_pad = 0;
    for (tb_index k0 = 0; k0 < d.kernel[0]; k0++) {
      tb_index p0 = o[0] * d.stride[0] + k0 * d.dilation[0] - d.pad[0];
      for (tb_index k1 = 0; k1 < d.kernel[1]; k1++) {
        tb_index p1 = o[1] * d.stride[1] + k1 * d.dilation[1] - d.pad[1];
        for (tb_index k2 = 0; k2 < d.kernel[2]; k2++) {
          tb_index p2 = o[2] * d.stride[2] + k2 * d.dilation[2] - d.pad[2];
          bool padded = p0 < d.in[0] + d.pad_end[0] && p1 < d.in[1] + d.pad_end[1] && p2 < d.in[2] + d.pad_end[2];
          bool inside = p0 >= 0 && p0 < d.in[0] && p1 >= 0 && p1 < d.in[1] && p2 >= 0 && p2 < d.in[2];
          if (padded) count_pad++;
          if (!inside) continue;
          count_in++;
          float v = px[(p0 * d.in[1] + p1) * d.in[2] + p2];
          if (d.kind == 0) {
            if (!any || v > acc) acc = v;
            any = true;
          } else {
            acc += v;
          }
        }
      }
    }
    if (d.kind != 0) {
      tb_index div = d.flag ? count_pad : count_in;
      acc = div > 0 ? acc / (float)div : __int_as_float(0x7fc00000);
    }
    y[i] = acc;
  }
}

extern "C" __global__ void tb_cu_cnn_batch_norm_f32(const float *__restrict__ x, const float *__restrict__ scale,
                                                    const float *__restrict__ bias, const float *__restrict__ mean,
                                                    const float *__restrict__ var, float *__restrict__ y, tb_cnn_desc d) {
  tb_index plane = d.in[0] * d.in[1] * d.in[2];
  TB_GRID_LOOP(i, d.n * d.c * plane) {
    tb_index c = (i / plane) % d.c;
    y[i] = (x[i] - mean[c]) / sqrtf(var[c] + d.eps) * scale[c] + bias[c];
  }
}

extern "C" __global__ void tb_cu_cnn_instance_norm_f32(const float *__restrict__ x, const float *__restrict__ scale,
                                                       const float *__restrict__ bias, const float *__restrict__,
                                                       float *__restrict__ y, const float *__restrict__, tb_cnn_desc d) {
  tb_index plane = d.in[0] * d.in[1] * d.in[2];
  for (tb_index p = blockIdx.x; p < d.n * d.c; p += gridDim.x) {
    const float *px = x + p * plane;
    float *py = y + p * plane;
    float s = 0.0f;
    for (tb_index i = threadIdx.x; i < plane; i += blockDim.x) s += px[i];
    float mu = tb_block_reduce(s, tb_combine_add(), 0.0f) / (float)plane;
    float q = 0.0f;
    for (tb_index i = threadIdx.x; i < plane; i += blockDim.x) q += (px[i] - mu) * (px[i] - mu);
    float var = tb_block_reduce(q, tb_combine_add(), 0.0f) / (float)plane;
    float inv = 1.0f / sqrtf(var + d.eps), a = scale[p % d.c], b = bias[p % d.c];
    for (tb_index i = threadIdx.x; i < plane; i += blockDim.x) py[i] = (px[i] - mu) * inv * a + b;
  }
}

extern "C" __global__ void tb_cu_cnn_resize_f32(const float *__restrict__ x, const long long *__restrict__ taps,
                                                const float *__restrict__ weights, const float *__restrict__,
                                                float *__restrict__ y, const float *__restrict__, tb_cnn_desc d) {
  tb_index total = d.out[0] * d.out[1] * d.out[2] * d.out[3];
  TB_GRID_LOOP(i, total) {
    tb_index e[4], rest = i;
    for (int a = 3; a >= 0; a--) {
      e[a] = d.base[a] + rest % d.out[a];
      rest /= d.out[a];
    }
    bool outside = false;
    for (int a = 0; a < 4; a++) outside = outside || taps[4 * e[a]] < 0;
    if (outside) {
      y[i] = d.eps;
      continue;
    }
    if (d.kind == 1) {
      tb_index off = ((taps[4 * e[0]] * d.in[1] + taps[4 * e[1]]) * d.in[2] + taps[4 * e[2]]) * d.in[3] + taps[4 * e[3]];
      y[i] = x[off];
      continue;
    }
    float sum = 0.0f;
    for (int t0 = 0; t0 < d.kind; t0++) {
      float w0 = weights[4 * e[0] + t0];
      if (w0 == 0.0f) continue;
      for (int t1 = 0; t1 < d.kind; t1++) {
        float w1 = w0 * weights[4 * e[1] + t1];
        if (w1 == 0.0f) continue;
        for (int t2 = 0; t2 < d.kind; t2++) {
          float w2 = w1 * weights[4 * e[2] + t2];
          if (w2 == 0.0f) continue;
          tb_index base = (taps[4 * e[0] + t0] * d.in[1] + taps[4 * e[1] + t1]) * d.in[2] + taps[4 * e[2] + t2];
          for (int t3 = 0; t3 < d.kind; t3++) {
            float w3 = w2 * weights[4 * e[3] + t3];
            if (w3 != 0.0f) sum += w3 * x[base * d.in[3] + taps[4 * e[3] + t3]];
          }
        }
      }
    }
    y[i] = sum;
  }
}
