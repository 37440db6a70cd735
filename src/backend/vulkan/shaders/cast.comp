// Cast between fp32 and fp16 (MODE 0: f32 -> f16, 1: f16 -> f32) with packHalf2x16 / unpackHalf2x16, so
// no 16-bit storage feature is needed. Offsets are in elements of each side's dtype. For f32 -> f16 each
// invocation writes one 32-bit word of the output (two halves), keeping a half outside the range.
#version 450
#extension GL_GOOGLE_include_directive : require
layout(local_size_x = 256) in;
#include "common.glsl"
layout(constant_id = 0) const uint MODE = 0u;
layout(std430, binding = 0) readonly buffer X { uint x[]; };
layout(std430, binding = 1) buffer Y { uint y[]; };
layout(push_constant) uniform P { uint n, x_off, y_off; } p;

void main() {
  uint i = tb_global_index();
  if (MODE == 1u) {
    if (i >= p.n) return;
    uint h = p.x_off + i;
    vec2 pair = unpackHalf2x16(x[h / 2u]);
    y[p.y_off + i] = floatBitsToUint((h & 1u) == 0u ? pair.x : pair.y);
    return;
  }
  uint first = p.y_off / 2u, last = (p.y_off + p.n - 1u) / 2u;
  uint w = first + i;
  if (p.n == 0u || w > last) return;
  vec2 old = unpackHalf2x16(y[w]);
  uint h0 = 2u * w, h1 = h0 + 1u;
  float v0 = (h0 >= p.y_off && h0 < p.y_off + p.n) ? uintBitsToFloat(x[p.x_off + h0 - p.y_off]) : old.x;
  float v1 = (h1 >= p.y_off && h1 < p.y_off + p.n) ? uintBitsToFloat(x[p.x_off + h1 - p.y_off]) : old.y;
  uint lo = (h0 >= p.y_off && h0 < p.y_off + p.n) ? (packHalf2x16(vec2(v0, 0.0)) & 0xffffu) : (y[w] & 0xffffu);
  uint hi = (h1 >= p.y_off && h1 < p.y_off + p.n) ? (packHalf2x16(vec2(v1, 0.0)) & 0xffffu) : (y[w] >> 16);
  y[w] = lo | (hi << 16);
}
