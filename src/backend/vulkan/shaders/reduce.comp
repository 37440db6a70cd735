// Reductions on fp32 over a contiguous run of axes: element (o, j, k) at o * len * inner + j * inner + k,
// one workgroup per output (o, k); MODE 0 sum, 1 mean, 2 max, 3 min, 4 sum of squares.
#version 450
#extension GL_GOOGLE_include_directive : require
#include "reduce_common.glsl"
layout(local_size_x = TB_WG) in;
layout(constant_id = 0) const uint MODE = 0u;
layout(std430, binding = 0) readonly buffer X { float x[]; };
layout(std430, binding = 1) writeonly buffer Y { float y[]; };
layout(push_constant) uniform P { uint rows, len, inner, x_off, y_off; } p;

void main() {
  uint row = tb_row();
  if (row >= p.rows) return;
  uint lid = gl_LocalInvocationID.x;
  uint base = p.x_off + (row / p.inner) * p.len * p.inner + row % p.inner;
  bool extreme = MODE == 2u || MODE == 3u;
  float acc = MODE == 2u ? uintBitsToFloat(0xff800000u) : MODE == 3u ? uintBitsToFloat(0x7f800000u) : 0.0;
  for (uint j = lid; j < p.len; j += TB_WG) {
    float v = x[base + j * p.inner];
    if (MODE == 2u) acc = max(acc, v);
    else if (MODE == 3u) acc = min(acc, v);
    else acc += MODE == 4u ? v * v : v;
  }
  float r = MODE == 2u ? tb_wg_max(acc) : MODE == 3u ? tb_wg_min(acc) : tb_wg_sum(acc);
  if (MODE == 1u) r /= float(p.len);
  if (!extreme || p.len > 0u) {
    if (lid == 0u) y[p.y_off + row] = r;
  }
}
