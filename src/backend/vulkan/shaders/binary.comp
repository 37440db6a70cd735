// Elementwise binary ops with numpy broadcasting: the output's shape (rank <= 6) and each input's strides
// in elements (0 along broadcast dimensions). fp32, or with F16 fp16 buffers and fp16 arithmetic
// (shaderFloat16) for + - * / max min; Pow is evaluated in fp32 and rounded once. OP 7 PRelu (a < 0 ? a * b
// : a), 8 a (a copy broadcast to the output), 9 a * s; OP 15 takes the op from the push constant `op`
// (the multi-input kernels chain several ops through one pipeline: Sum, Mean, Max, Min, Clip).
#version 450
#extension GL_GOOGLE_include_directive : require
#ifdef F16
#extension GL_EXT_shader_16bit_storage : require
#extension GL_EXT_shader_explicit_arithmetic_types_float16 : require
#define T float16_t
#else
#define T float
#endif
layout(local_size_x = 256) in;
#include "common.glsl"
layout(constant_id = 0) const uint OP = 0u;
layout(std430, binding = 0) readonly buffer A { T a[]; };
layout(std430, binding = 1) readonly buffer B { T b[]; };
layout(std430, binding = 2) writeonly buffer Y { T y[]; };
layout(push_constant) uniform P { uint n, rank, a_off, b_off, y_off; uint shape[6]; uint as_[6]; uint bs[6]; uint op; float s; } p;

float tb_pow(float x, float e) {
  if (e == 2.0) return x * x;
  if (e == 1.0) return x;
  if (e == 0.0) return 1.0;
  if (x >= 0.0) return pow(x, e);
  if (floor(e) != e) return uintBitsToFloat(0x7fc00000u);
  float r = pow(-x, e);
  return mod(e, 2.0) == 1.0 ? -r : r;
}

void main() {
  uint i = tb_global_index();
  if (i >= p.n) return;
  uint ia = p.a_off, ib = p.b_off, rest = i;
  for (int d = int(p.rank) - 1; d >= 0; d--) {
    uint k = rest % p.shape[d];
    rest /= p.shape[d];
    ia += k * p.as_[d];
    ib += k * p.bs[d];
  }
  T u = a[ia], v = b[ib], r;
  switch (OP == 15u ? p.op : OP) {
    case 0u: r = u + v; break;
    case 1u: r = u - v; break;
    case 2u: r = u * v; break;
    case 3u: r = u / v; break;
    case 4u: r = T(tb_pow(float(u), float(v))); break;
    case 5u: r = max(u, v); break;
    case 7u: r = u < T(0.0) ? u * v : u; break;
    case 8u: r = u; break;
    case 9u: r = T(float(u) * p.s); break;
    default: r = min(u, v); break;
  }
  y[p.y_off + i] = r;
}
