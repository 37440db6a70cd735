// Scaled dot-product attention on fp32 (tb::Attention without a mask): for one query row per workgroup,
// S = Q[i] @ K_T * scale (MODE 1) or / scale (MODE 2), softmax over S, then S @ V. Lk <= 1024 (the scores
// stay in shared memory). Batches are two levels with strides, as in matmul.comp.
#version 450
#extension GL_GOOGLE_include_directive : require
#include "reduce_common.glsl"
#define MAX_LK 1024
layout(local_size_x = TB_WG) in;
layout(std430, binding = 0) readonly buffer Q { float q[]; };
layout(std430, binding = 1) readonly buffer K { float k[]; };
layout(std430, binding = 2) readonly buffer V { float v[]; };
layout(std430, binding = 3) writeonly buffer Y { float y[]; };
layout(push_constant) uniform P {
  uint lq, d, lk, dv, nb2;
  uint q_off, q_b1, q_b2, k_off, k_b1, k_b2, v_off, v_b1, v_b2, y_off, mode;
  float scale;
} p;

shared float s[MAX_LK];

void main() {
  uint i = gl_WorkGroupID.x, z = gl_WorkGroupID.y, b1 = z / p.nb2, b2 = z % p.nb2;
  uint lid = gl_LocalInvocationID.x;
  uint qb = p.q_off + b1 * p.q_b1 + b2 * p.q_b2 + i * p.d;
  uint kb = p.k_off + b1 * p.k_b1 + b2 * p.k_b2;
  uint vb = p.v_off + b1 * p.v_b1 + b2 * p.v_b2;
  float m = uintBitsToFloat(0xff800000u);
  for (uint j = lid; j < p.lk; j += TB_WG) {
    float acc = 0.0;
    for (uint c = 0u; c < p.d; c++) acc += q[qb + c] * k[kb + c * p.lk + j];
    if (p.mode == 1u) acc *= p.scale;
    else if (p.mode == 2u) acc /= p.scale;
    s[j] = acc;
    m = max(m, acc);
  }
  m = tb_wg_max(m);
  float sum = 0.0;
  for (uint j = lid; j < p.lk; j += TB_WG) {
    float e = exp(s[j] - m);
    s[j] = e;
    sum += e;
  }
  sum = tb_wg_sum(sum);
  barrier();
  for (uint c = lid; c < p.dv; c += TB_WG) {
    float acc = 0.0;
    for (uint j = 0u; j < p.lk; j++) acc += s[j] * v[vb + j * p.dv + c];
    y[p.y_off + (z * p.lq + i) * p.dv + c] = acc / sum;
  }
}
