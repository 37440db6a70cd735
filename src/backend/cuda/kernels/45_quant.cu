// The quantized operators on 8-bit integers (cuda_ops_quant.c), bit for bit as the CPU reference computes them
// (backend/cpu/kernels/nn/quant.c):
//   tb_cu_q_quantize_f32    (x, scale, zp, y, tb_quant_desc): y = saturate(rint(x / scale) + zp), the division in
//                           float32 and the rounding half to even (rintf), NaN to 0; one thread per element, any grid
//   tb_cu_q_dequantize_f32  (x, scale, zp, y, tb_quant_desc): y = float(x - zp) * scale, the difference in integers
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
