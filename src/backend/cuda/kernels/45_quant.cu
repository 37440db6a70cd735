// The quantized operators on 8-bit integers (cuda_ops_quant.c), bit for bit as the CPU reference computes them
// (backend/cpu/kernels/nn/quant.c):
//   tb_cu_q_quantize_f32    (x, scale, zp, y, tb_quant_desc): y = saturate(rint(x / scale) + zp), the division in
//                           float32 and the rounding half to even (rintf), NaN to 0; one thread per element, any grid
//   tb_cu_q_dequantize_f32  (x, scale, zp, y, tb_quant_desc): y = float(x - zp) * scale, the difference in integers
//   tb_cu_q_conv            (x, w, xzp, wzp, x_scale, w_scale, y_scale, yzp, bias, y, tb_qconv_desc): ConvInteger and
//                           QLinearConv, one thread per output (below)
//   tb_cu_q_matmul          (a, b, azp, bzp, a_scale, b_scale, y_scale, yzp, y, tb_gemm_desc, tb_qmm_desc):
//                           MatMulInteger (y int32 = sum (a - azp)(b - bzp), the zero points per tensor, per row of
//                           A or per column of B) and QLinearMatMul (the same sum requantized:
//                           saturate(rint(float(acc) * (a_scale * b_scale / y_scale)) + yzp), the multiplier in
//                           float32 as the CPU forms it); numpy's batch broadcasting through 40_gemm.cu's
//                           descriptor and offsets; one thread per output accumulating in int32 (not tiled)
// Element kinds (tb_quant_desc, tb_qmm_desc): 0 uint8, 1 int8, 2 int32.

struct tb_quant_desc {
  int x_kind, y_kind; // Quantize: y_kind the output's (0 or 1); Dequantize: x_kind the input's (0, 1, 2)
  int s_axis, z_axis; // 1: the scale / zero point has one value per index of the axis, 0: one value
  tb_index n;         // elements
  tb_index inner, len; // the axis' index of element e: (e / inner) % len
};

struct tb_qmm_desc {
  int a_kind, b_kind; // 0 or 1; the zero points have their matrix' kind
  int y_kind;         // 2: int32 (MatMulInteger); 0 or 1: QLinearMatMul's output
  int azp_rows;       // 1: A's zero point has one value per row of A
  int bzp_cols;       // 1: B's zero point has one value per column of B
  int unused;
};

__device__ inline long long tb_q_get(const void *p, int kind, tb_index i) {
  return kind == 0 ? (long long)((const unsigned char *)p)[i] : kind == 1 ? (long long)((const signed char *)p)[i]
                                                                          : (long long)((const int *)p)[i];
}

// v rounded already, saturated to kind 0 (uint8) or 1 (int8), NaN to 0, stored at y[i].
__device__ inline void tb_q_put(void *y, int kind, tb_index i, float v) {
  float lo = kind == 1 ? -128.0f : 0.0f, hi = kind == 1 ? 127.0f : 255.0f;
  float c = v != v ? 0.0f : v < lo ? lo : v > hi ? hi : v;
  if (kind == 1) ((signed char *)y)[i] = (signed char)(int)c;
  else ((unsigned char *)y)[i] = (unsigned char)(int)c;
}

extern "C" __global__ void tb_cu_q_quantize_f32(const float *__restrict__ x, const float *__restrict__ scale, const void *__restrict__ zp,
                                                void *__restrict__ y, tb_quant_desc d) {
  TB_GRID_LOOP(e, d.n) {
    tb_index a = (e / d.inner) % d.len;
    float s = scale[d.s_axis ? a : 0];
    float z = zp ? (float)tb_q_get(zp, d.y_kind, d.z_axis ? a : 0) : 0.0f;
    tb_q_put(y, d.y_kind, e, rintf(x[e] / s) + z);
  }
}

extern "C" __global__ void tb_cu_q_dequantize_f32(const void *__restrict__ x, const float *__restrict__ scale, const void *__restrict__ zp,
                                                  float *__restrict__ y, tb_quant_desc d) {
  TB_GRID_LOOP(e, d.n) {
    tb_index a = (e / d.inner) % d.len;
    long long z = zp ? tb_q_get(zp, d.x_kind, d.z_axis ? a : 0) : 0;
    y[e] = (float)(tb_q_get(x, d.x_kind, e) - z) * scale[d.s_axis ? a : 0];
  }
}

extern "C" __global__ void tb_cu_q_matmul(const void *__restrict__ a, const void *__restrict__ b, const void *__restrict__ azp,
                                          const void *__restrict__ bzp, const float *__restrict__ a_scale,
                                          const float *__restrict__ b_scale, const float *__restrict__ y_scale,
                                          const void *__restrict__ yzp, void *__restrict__ y, tb_gemm_desc d, tb_qmm_desc q) {
  TB_GRID_LOOP(e, d.batch * d.m * d.n) {
    tb_index j = e % d.n, i = (e / d.n) % d.m, oa, ob, o0, o1;
    tb_gemm_batch_offsets(d, e / (d.m * d.n), &oa, &ob, &o0, &o1);
    int za = azp ? (int)tb_q_get(azp, q.a_kind, q.azp_rows ? i : 0) : 0;
    int zb = bzp ? (int)tb_q_get(bzp, q.b_kind, q.bzp_cols ? j : 0) : 0;
    int acc = 0;
    for (tb_index p = 0; p < d.k; p++)
      acc += ((int)tb_q_get(a, q.a_kind, oa + i * d.a_rs + p * d.a_cs) - za) * ((int)tb_q_get(b, q.b_kind, ob + p * d.b_rs + j * d.b_cs) - zb);
    if (q.y_kind == 2) {
      ((int *)y)[e] = acc;
    } else {
      float mult = a_scale[0] * b_scale[0] / y_scale[0];
      tb_q_put(y, q.y_kind, e, rintf((float)acc * mult) + (float)tb_q_get(yzp, q.y_kind, 0));
    }
  }
}

// ConvInteger and QLinearConv: NC[D]HW with 1 to 3 spatial axes (fewer take the last ones), groups, strides,
// dilations and pads as the host resolved them (ops/nn/window.h, as the CPU's); the sum over the group's input
// channels and taps of (x - x_zp) (w - w_zp[m]) in int32, plus QLinearConv's int32 bias, then int32 out
// (ConvInteger) or requantized with x_scale * w_scale[m] / y_scale (w_scale per tensor or per output channel).
struct tb_qconv_desc {
  tb_index n, c, k, groups; // batch, input channels, output channels, groups
  tb_index in[3], out[3], kernel[3], stride[3], dilation[3], pad[3];
  int x_kind, w_kind, y_kind; // y_kind 2: int32 (ConvInteger)
  int wzp_channels;           // 1: W's zero point has one value per output channel
  int ws_channels;            // 1: w_scale has one value per output channel
  int unused;
};

extern "C" __global__ void tb_cu_q_conv(const void *__restrict__ x, const void *__restrict__ w, const void *__restrict__ xzp,
                                        const void *__restrict__ wzp, const float *__restrict__ x_scale,
                                        const float *__restrict__ w_scale, const float *__restrict__ y_scale,
                                        const void *__restrict__ yzp, const int *__restrict__ bias, void *__restrict__ y,
                                        tb_qconv_desc d) {
  tb_index o_plane = d.out[0] * d.out[1] * d.out[2], i_plane = d.in[0] * d.in[1] * d.in[2];
  tb_index taps = d.kernel[0] * d.kernel[1] * d.kernel[2], cg = d.c / d.groups, mg = d.k / d.groups;
  TB_GRID_LOOP(i, d.n * d.k * o_plane) {
    tb_index op = i % o_plane, m = (i / o_plane) % d.k, b = i / (o_plane * d.k), g = m / mg;
    tb_index o[3] = {op / (d.out[2] * d.out[1]), (op / d.out[2]) % d.out[1], op % d.out[2]};
    int zx = xzp ? (int)tb_q_get(xzp, d.x_kind, 0) : 0, zw = wzp ? (int)tb_q_get(wzp, d.w_kind, d.wzp_channels ? m : 0) : 0;
    int acc = bias ? bias[m] : 0;
    for (tb_index c = 0; c < cg; c++) {
      tb_index xb = (b * d.c + g * cg + c) * i_plane, wb = (m * cg + c) * taps;
      for (tb_index t = 0; t < taps; t++) {
        tb_index k[3] = {t / (d.kernel[2] * d.kernel[1]), (t / d.kernel[2]) % d.kernel[1], t % d.kernel[2]}, off = 0;
        bool inside = true;
        for (int a = 0; a < 3 && inside; a++) {
          tb_index pos = o[a] * d.stride[a] + k[a] * d.dilation[a] - d.pad[a];
          inside = pos >= 0 && pos < d.in[a];
          off = off * d.in[a] + pos;
        }
        if (inside) acc += ((int)tb_q_get(x, d.x_kind, xb + off) - zx) * ((int)tb_q_get(w, d.w_kind, wb + t) - zw);
      }
    }
    if (d.y_kind == 2) {
      ((int *)y)[i] = acc;
    } else {
      float mult = x_scale[0] * w_scale[d.ws_channels ? m : 0] / y_scale[0];
      tb_q_put(y, d.y_kind, i, rintf((float)acc * mult) + (float)tb_q_get(yzp, d.y_kind, 0));
    }
  }
}
