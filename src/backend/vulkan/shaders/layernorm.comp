// Layer normalization on fp32 rows of `cols` elements: mean, then the variance of (x - mean), then
// y = (x - mean) / sqrt(var + eps) * scale + bias (HAS_B); scale and bias have s_n elements, repeated.
#version 450
#extension GL_GOOGLE_include_directive : require
#include "reduce_common.glsl"
layout(local_size_x = TB_WG) in;
layout(constant_id = 0) const bool HAS_B = false;
layout(std430, binding = 0) readonly buffer X { float x[]; };
layout(std430, binding = 1) readonly buffer S { float sc[]; };
layout(std430, binding = 2) readonly buffer Bi { float bi[]; };
layout(std430, binding = 3) writeonly buffer Y { float y[]; };
layout(push_constant) uniform P { uint rows, cols, x_off, s_off, b_off, y_off, s_n, b_n; float eps; } p;

void main() {
  uint row = tb_row();
  if (row >= p.rows) return;
  uint lid = gl_LocalInvocationID.x, base = row * p.cols;
  float s = 0.0;
  for (uint j = lid; j < p.cols; j += TB_WG) s += x[p.x_off + base + j];
  float mean = tb_wg_sum(s) / float(p.cols);
  float q = 0.0;
  for (uint j = lid; j < p.cols; j += TB_WG) {
    float d = x[p.x_off + base + j] - mean;
    q += d * d;
  }
  float inv = 1.0 / sqrt(tb_wg_sum(q) / float(p.cols) + p.eps);
  for (uint j = lid; j < p.cols; j += TB_WG) {
    float v = (x[p.x_off + base + j] - mean) * inv * sc[p.s_off + j % p.s_n];
    if (HAS_B) v += bi[p.b_off + j % p.b_n];
    y[p.y_off + base + j] = v;
  }
}
