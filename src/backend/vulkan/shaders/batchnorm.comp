// BatchNormalization in inference mode on fp32 [N, C, spatial...]:
// y = (x - mean[c]) / sqrt(var[c] + eps) * scale[c] + bias[c].
#version 450
#extension GL_GOOGLE_include_directive : require
layout(local_size_x = 256) in;
#include "common.glsl"
layout(std430, binding = 0) readonly buffer X { float x[]; };
layout(std430, binding = 1) readonly buffer S { float sc[]; };
layout(std430, binding = 2) readonly buffer Bi { float bi[]; };
layout(std430, binding = 3) readonly buffer Me { float mean[]; };
layout(std430, binding = 4) readonly buffer Va { float var_[]; };
layout(std430, binding = 5) writeonly buffer Y { float y[]; };
layout(push_constant) uniform P { uint C, HW, total, x_off, s_off, b_off, m_off, v_off, y_off; float eps; } p;

void main() {
  uint i = tb_global_index();
  if (i >= p.total) return;
  uint c = (i / p.HW) % p.C;
  float inv = 1.0 / sqrt(var_[p.v_off + c] + p.eps);
  y[p.y_off + i] = (x[p.x_off + i] - mean[p.m_off + c]) * inv * sc[p.s_off + c] + bi[p.b_off + c];
}
