// Reductions on fp32 over any set of axes, one workgroup per output element (row). The host merges
// adjacent dimensions of the same kind into at most 4 kept runs (sizes ks, input strides kst, outermost
// first) and 4 reduced runs (rs, rst): the row is decomposed over the kept runs into its first input
// element, and j in 0 .. len-1 over the reduced runs into an offset from it.
// MODE 0 sum, 1 mean, 2 max, 3 min, 4 sum of squares, 5 L1 (sum of |x|), 6 L2 (sqrt of the sum of squares),
// 7 log-sum-exp (the max first, then log(sum exp(x - max)) + max), 8 product.
#version 450
#extension GL_GOOGLE_include_directive : require
#include "reduce_common.glsl"
layout(local_size_x = TB_WG) in;
layout(constant_id = 0) const uint MODE = 0u;
layout(std430, binding = 0) readonly buffer X { float x[]; };
layout(std430, binding = 1) writeonly buffer Y { float y[]; };
layout(push_constant) uniform P {
  uint rows, len, x_off, y_off, nk, nr;
  uint ks[4], kst[4], rs[4], rst[4]; // std430: arrays of uint pack at 4 bytes, as the C struct
} p;

// The input element of reduced index j in the row starting at base.
uint elem(uint base, uint j) {
  uint at = base;
  for (int i = int(p.nr) - 1; i >= 0; i--) {
    at += (j % p.rs[i]) * p.rst[i];
    j /= p.rs[i];
  }
  return at;
}

// Workgroup product through the shared array of reduce_common.glsl (no subgroup product needed).
float wg_prod(float v) {
  uint lid = gl_LocalInvocationID.x;
  barrier();
  tb_red[lid] = v;
  barrier();
  for (uint s = TB_WG / 2; s > 0u; s >>= 1) {
    if (lid < s) tb_red[lid] *= tb_red[lid + s];
    barrier();
  }
  float r = tb_red[0];
  barrier();
  return r;
}

void main() {
  uint row = tb_row();
  if (row >= p.rows) return;
  uint lid = gl_LocalInvocationID.x;
  uint base = p.x_off, rem = row;
  for (int i = int(p.nk) - 1; i >= 0; i--) {
    base += (rem % p.ks[i]) * p.kst[i];
    rem /= p.ks[i];
  }
  bool extreme = MODE == 2u || MODE == 3u;
  float shift = 0.0;
  if (MODE == 7u) {
    float m = uintBitsToFloat(0xff800000u);
    for (uint j = lid; j < p.len; j += TB_WG) m = max(m, x[elem(base, j)]);
    shift = tb_wg_max(m);
    if (isinf(shift)) shift = 0.0; /* all -inf (or no elements): log(0) = -inf below */
  }
  float acc = MODE == 2u ? uintBitsToFloat(0xff800000u) : MODE == 3u ? uintBitsToFloat(0x7f800000u) : MODE == 8u ? 1.0 : 0.0;
  for (uint j = lid; j < p.len; j += TB_WG) {
    float v = x[elem(base, j)];
    if (MODE == 2u) acc = max(acc, v);
    else if (MODE == 3u) acc = min(acc, v);
    else if (MODE == 4u || MODE == 6u) acc += v * v;
    else if (MODE == 5u) acc += abs(v);
    else if (MODE == 7u) acc += exp(v - shift);
    else if (MODE == 8u) acc *= v;
    else acc += v;
  }
  float r = MODE == 2u ? tb_wg_max(acc) : MODE == 3u ? tb_wg_min(acc) : MODE == 8u ? wg_prod(acc) : tb_wg_sum(acc);
  if (MODE == 1u) r /= float(p.len);
  if (MODE == 6u) r = sqrt(r);
  if (MODE == 7u) r = log(r) + shift;
  if (!extreme || p.len > 0u) {
    if (lid == 0u) y[p.y_off + row] = r;
  }
}
