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
    case 19u: return sin(v);
    case 20u: return cos(v);
    case 21u: return tan(v);
    case 22u: return atan(v, sqrt((1.0 - v) * (1.0 + v)));                          // asin: lavapipe's is off by 3e-4
    case 23u: return atan(sqrt((1.0 - v) * (1.0 + v)), v);                          // acos
    case 24u: return atan(v);
    case 25u: return sinh(v);
    case 26u: return cosh(v);
    case 27u: return asinh(v);
    case 28u: return acosh(v);
    case 29u: return atanh(v);
    case 30u: return v < 0.0 ? p.a * (exp(v) - 1.0) : v;                              // Elu(alpha)
    case 31u: return p.b * (v <= 0.0 ? p.a * (exp(v) - 1.0) : v);                     // Selu(alpha, gamma)
    case 32u: return max(v, 0.0) + min(0.0, p.a * (exp(v / p.a) - 1.0));              // Celu(alpha)
    case 33u: return max(v, 0.0) + log(1.0 + exp(-abs(v)));                          // Softplus
    case 34u: return v / (1.0 + abs(v));                                              // Softsign
    case 35u: return v > p.a ? v : 0.0;                                               // ThresholdedRelu(alpha)
    case 36u: return sign(v);
    case 37u: return roundEven(v);
    case 38u: return v < -p.a ? v + p.b : v > p.a ? v - p.b : 0.0;                   // Shrink(lambd, bias)
    default: return v;
  }
}

void main() {
  uint i = tb_global_index();
  if (i < p.n) y[p.y_off + i] = T(apply(float(x[p.x_off + i])));
}
