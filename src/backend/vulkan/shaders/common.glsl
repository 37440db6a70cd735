// Shared helpers of the compute shaders: the element buffers' layout, erf, the fused activations
// (kinds as in backend/cpu/kernels/fused/fused_kernel.h: 0 none, 1 Relu, 2 LeakyRelu, 3 Clip, 4 Sigmoid,
// 5 Tanh, 6 HardSigmoid, 7 HardSwish, 8 Gelu, 9 Gelu with the tanh approximation) and a grid-stride loop
// over n elements.

// erf after Abramowitz and Stegun 7.1.26 (absolute error under 1.5e-7).
float tb_erf(float x) {
  float ax = abs(x);
  float t = 1.0 / (1.0 + 0.3275911 * ax);
  float poly = t * (0.254829592 + t * (-0.284496736 + t * (1.421413741 + t * (-1.453152027 + t * 1.061405429))));
  float r = 1.0 - poly * exp(-ax * ax);
  return x < 0.0 ? -r : r;
}

float tb_tanh(float x) {
  float e = exp(-2.0 * abs(x));
  float t = (1.0 - e) / (1.0 + e);
  return x < 0.0 ? -t : t;
}

float tb_sigmoid(float x) { return 1.0 / (1.0 + exp(-x)); }

float tb_act(uint kind, float x, float a, float b) {
  switch (kind) {
    case 1u: return max(x, 0.0);
    case 2u: return x < 0.0 ? a * x : x;
    case 3u: return min(max(x, a), b);
    case 4u: return tb_sigmoid(x);
    case 5u: return tb_tanh(x);
    case 6u: return clamp(a * x + b, 0.0, 1.0);
    case 7u: return x * clamp(x / 6.0 + 0.5, 0.0, 1.0);
    case 8u: return 0.5 * x * (1.0 + tb_erf(x * 0.70710678118654752));
    case 9u: return 0.5 * x * (1.0 + tb_tanh(0.79788456080286535 * (x + 0.044715 * x * x * x)));
    default: return x;
  }
}

// Workgroups beyond 65535 in x wrap into y: the linear invocation index of a 1-D dispatch (include this
// file after the local_size layout, so gl_WorkGroupSize is the shader's).
uint tb_global_index() { return (gl_WorkGroupID.y * gl_NumWorkGroups.x + gl_WorkGroupID.x) * gl_WorkGroupSize.x + gl_LocalInvocationID.x; }
