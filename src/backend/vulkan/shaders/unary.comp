// Elementwise unary ops and activations: y[i] = f(x[i]), f chosen by the OP constant. fp32 buffers, or
// fp16 buffers with F16 (16-bit storage; the function is evaluated in fp32 and rounded once to fp16).
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
layout(std430, binding = 0) readonly buffer X { T x[]; };
layout(std430, binding = 1) writeonly buffer Y { T y[]; };
layout(push_constant) uniform P { uint n, x_off, y_off; float a, b; } p;

float apply(float v) {
  if (OP <= 7u) return tb_act(OP, v, p.a, p.b);
  switch (OP) {
    case 8u: return exp(v);
    case 9u: return sqrt(v);
    case 10u: return tb_erf(v);
    case 11u: return 0.5 * v * (1.0 + tb_erf(v * 0.70710678118654752));
    case 12u: return 0.5 * v * (1.0 + tb_tanh(0.79788456080286536 * (v + 0.044715 * v * v * v)));
    case 13u: return -v;
    case 14u: return abs(v);
    case 15u: return log(v);
    case 16u: return 1.0 / v;
    case 17u: return floor(v);
    case 18u: return ceil(v);
    default: return v;
  }
}

void main() {
  uint i = tb_global_index();
  if (i < p.n) y[p.y_off + i] = T(apply(float(x[p.x_off + i])));
}
