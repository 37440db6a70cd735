// Layer normalization on fp32 rows of `cols` elements: mean, then the variance of (x - mean), then
// y = (x - mean) / sqrt(var + eps) * scale + bias (HAS_B); scale and bias have s_n elements, repeated.
// STATS bit 0: write the row's mean to `mean`, bit 1: 1 / sqrt(var + eps) to `inv` (ONNX's optional
// outputs Mean and InvStdDev); an unused one is bound to Y and never written. per_row: scale and bias are
// indexed by the row (InstanceNormalization: row n * C + c takes channel c's), else by the column.
#version 450
#extension GL_GOOGLE_include_directive : require
#include "reduce_common.glsl"
layout(local_size_x = TB_WG) in;
layout(constant_id = 0) const bool HAS_B = false;
layout(constant_id = 1) const uint STATS = 0u;
layout(std430, binding = 0) readonly buffer X { float x[]; };
layout(std430, binding = 1) readonly buffer S { float sc[]; };
layout(std430, binding = 2) readonly buffer Bi { float bi[]; };
layout(std430, binding = 3) writeonly buffer Y { float y[]; };
layout(std430, binding = 4) writeonly buffer M { float mean_out[]; };
layout(std430, binding = 5) writeonly buffer I { float inv_out[]; };
layout(push_constant) uniform P { uint rows, cols, x_off, s_off, b_off, y_off, s_n, b_n; float eps; uint m_off, i_off, per_row; } p;

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
  if (lid == 0u && (STATS & 1u) != 0u) mean_out[p.m_off + row] = mean;
  if (lid == 0u && (STATS & 2u) != 0u) inv_out[p.i_off + row] = inv;
  for (uint j = lid; j < p.cols; j += TB_WG) {
    uint si = p.per_row != 0u ? row % p.s_n : j % p.s_n, bi_ = p.per_row != 0u ? row % p.b_n : j % p.b_n;
    float v = (x[p.x_off + base + j] - mean) * inv * sc[p.s_off + si];
    if (HAS_B) v += bi[p.b_off + bi_];
    y[p.y_off + base + j] = v;
  }
}
