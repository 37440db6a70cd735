// Softmax on fp32 along one axis: element (o, j, k) at o * cols * inner + j * inner + k; one workgroup of
// 64 per (o, k) row, reductions through reduce_common.glsl (subgroup operations when available).
#version 450
#extension GL_GOOGLE_include_directive : require
#include "reduce_common.glsl"
layout(local_size_x = TB_WG) in;
layout(std430, binding = 0) readonly buffer X { float x[]; };
layout(std430, binding = 1) writeonly buffer Y { float y[]; };
layout(push_constant) uniform P { uint rows, cols, inner, x_off, y_off, log_softmax; } p;

void main() {
  uint row = tb_row();
  if (row >= p.rows) return;
  uint lid = gl_LocalInvocationID.x;
  uint base = (row / p.inner) * p.cols * p.inner + row % p.inner;
  float m = uintBitsToFloat(0xff800000u);
  for (uint j = lid; j < p.cols; j += TB_WG) m = max(m, x[p.x_off + base + j * p.inner]);
  m = tb_wg_max(m);
  float s = 0.0;
  for (uint j = lid; j < p.cols; j += TB_WG) s += exp(x[p.x_off + base + j * p.inner] - m);
  s = tb_wg_sum(s);
  for (uint j = lid; j < p.cols; j += TB_WG) {
    float v = x[p.x_off + base + j * p.inner] - m;
    y[p.y_off + base + j * p.inner] = p.log_softmax != 0u ? v - log(s) : exp(v) / s;
  }
}
