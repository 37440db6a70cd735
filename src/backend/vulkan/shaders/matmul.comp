// Batched fp32 matrix product in 16x16 tiles: Y[b] = act(alpha * A[b] @ B[b] + beta * C), every operand
// addressed through strides (so transposes and broadcast batches need no copy); the batch is two levels
// (b1, b2) so two broadcast batch dimensions are enough for MatMul of rank-4 tensors. C (Gemm's bias,
// broadcast to [M, N] through its strides) when HAS_C; the activation ACT as in common.glsl.
#version 450
#extension GL_GOOGLE_include_directive : require
#define T 16
layout(local_size_x = T, local_size_y = T) in;
#include "common.glsl"
layout(constant_id = 0) const bool HAS_C = false;
layout(constant_id = 1) const uint ACT = 0u;
layout(std430, binding = 0) readonly buffer A { float a[]; };
layout(std430, binding = 1) readonly buffer B { float b[]; };
layout(std430, binding = 2) readonly buffer C { float c[]; };
layout(std430, binding = 3) writeonly buffer Y { float y[]; };
layout(push_constant) uniform P {
  uint M, N, K, nb2;
  uint a_off, a_b1, a_b2, a_m, a_k;
  uint b_off, b_b1, b_b2, b_k, b_n;
  uint c_off, c_m, c_n, y_off;
  float alpha, beta, act_a, act_b;
} p;

shared float ta[T][T];
shared float tb[T][T];

void main() {
  uint z = gl_WorkGroupID.z, b1 = z / p.nb2, b2 = z % p.nb2;
  uint lx = gl_LocalInvocationID.x, ly = gl_LocalInvocationID.y;
  uint col = gl_WorkGroupID.x * T + lx, row = gl_WorkGroupID.y * T + ly;
  uint abase = p.a_off + b1 * p.a_b1 + b2 * p.a_b2, bbase = p.b_off + b1 * p.b_b1 + b2 * p.b_b2;
  float acc = 0.0;
  for (uint k0 = 0u; k0 < p.K; k0 += T) {
    uint ka = k0 + lx, kb = k0 + ly;
    ta[ly][lx] = (row < p.M && ka < p.K) ? a[abase + row * p.a_m + ka * p.a_k] : 0.0;
    tb[ly][lx] = (kb < p.K && col < p.N) ? b[bbase + kb * p.b_k + col * p.b_n] : 0.0;
    barrier();
    for (uint k = 0u; k < T; k++) acc += ta[ly][k] * tb[k][lx];
    barrier();
  }
  if (row >= p.M || col >= p.N) return;
  float r = p.alpha * acc;
  if (HAS_C) r += p.beta * c[p.c_off + row * p.c_m + col * p.c_n];
  y[p.y_off + z * p.M * p.N + row * p.N + col] = tb_act(ACT, r, p.act_a, p.act_b);
}
