// Gather of 32-bit elements along an axis: y[(o * nidx + j) * inner + k] = data[(o * axis + idx[j]) * inner + k];
// indices are int32 or int64 (IDX64: the low word, with the high word only its sign), negative ones count
// from the end; an index out of range gives 0 (the host checks indices it can see).
#version 450
#extension GL_GOOGLE_include_directive : require
layout(local_size_x = 256) in;
#include "common.glsl"
layout(constant_id = 0) const bool IDX64 = true;
layout(std430, binding = 0) readonly buffer D { uint data[]; };
layout(std430, binding = 1) readonly buffer I { uint idx[]; };
layout(std430, binding = 2) writeonly buffer Y { uint y[]; };
layout(push_constant) uniform P { uint axis, inner, nidx, total, d_off, i_off, y_off; } p;

void main() {
  uint i = tb_global_index();
  if (i >= p.total) return;
  uint k = i % p.inner, j = (i / p.inner) % p.nidx, o = i / (p.inner * p.nidx);
  int v;
  bool ok = true;
  if (IDX64) {
    uint lo = idx[p.i_off + 2u * j], hi = idx[p.i_off + 2u * j + 1u];
    v = int(lo);
    ok = (hi == 0u && v >= 0) || (hi == 0xffffffffu && v < 0);
  } else {
    v = int(idx[p.i_off + j]);
  }
  if (v < 0) v += int(p.axis);
  ok = ok && v >= 0 && v < int(p.axis);
  y[p.y_off + i] = ok ? data[p.d_off + (o * p.axis + uint(v)) * p.inner + k] : 0u;
}
