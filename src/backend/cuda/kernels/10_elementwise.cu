// Elementwise kernels on float32 (float64, float16 and bfloat16 run the same ops through 12_math.cu's
// tb_cu_ew_math_* and tb_cu_ew_arith_*, the halves computed in float32 and rounded once). Unary: y[i] = f(x[i])
// over n contiguous elements, with two scalar parameters that the parameterised ops read (LeakyRelu, Elu: alpha;
// HardSigmoid: alpha, beta; Clip: min, max) and the others ignore. Binary: y = a op b, either over n elements of
// equal shape (_flat) or with ONNX broadcasting over up to 8 dims (_broadcast, with a tb_broadcast). Every
// kernel takes any grid: each thread strides over the elements.

template <typename Op>
__device__ inline void tb_unary(const float *__restrict__ x, float *__restrict__ y, tb_index n, float alpha, float beta) {
  Op op;
  TB_GRID_LOOP(i, n) y[i] = op(x[i], alpha, beta);
}

struct tb_relu {
  __device__ float operator()(float v, float, float) const { return v < 0.0f ? 0.0f : v; } // NaN stays NaN
};
struct tb_leaky_relu {
  __device__ float operator()(float v, float alpha, float) const { return v < 0.0f ? alpha * v : v; }
};
struct tb_elu {
  __device__ float operator()(float v, float alpha, float) const { return v < 0.0f ? alpha * expm1f(v) : v; }
};
struct tb_sigmoid { // as the CPU reference: e^v / (1 + e^v) below 0, so e^-v does not overflow
  __device__ float operator()(float v, float, float) const {
    if (v >= 0.0f) return 1.0f / (1.0f + expf(-v));
    float e = expf(v);
    return e / (1.0f + e);
  }
};
struct tb_hard_sigmoid { // NaN stays NaN
  __device__ float operator()(float v, float alpha, float beta) const {
    float h = alpha * v + beta;
    return h < 0.0f ? 0.0f : h > 1.0f ? 1.0f : h;
  }
};
struct tb_silu {
  __device__ float operator()(float v, float, float) const { return v / (1.0f + expf(-v)); }
};
struct tb_gelu { // the exact form, with erf
  __device__ float operator()(float v, float, float) const { return 0.5f * v * (1.0f + erff(v * 0.70710678118654752f)); }
};
struct tb_softplus { // log(1 + e^v) as the CPU reference: v + log(1 + e^-v) above 0, without overflow
  __device__ float operator()(float v, float, float) const { return v > 0.0f ? v + log1pf(expf(-v)) : log1pf(expf(v)); }
};
struct tb_clip {
  __device__ float operator()(float v, float lo, float hi) const { return v != v ? v : fminf(hi, fmaxf(lo, v)); }
};
struct tb_tanh {
  __device__ float operator()(float v, float, float) const { return tanhf(v); }
};
struct tb_exp {
  __device__ float operator()(float v, float, float) const { return expf(v); }
};
struct tb_log {
  __device__ float operator()(float v, float, float) const { return logf(v); }
};
struct tb_sqrt {
  __device__ float operator()(float v, float, float) const { return sqrtf(v); }
};
struct tb_reciprocal {
  __device__ float operator()(float v, float, float) const { return 1.0f / v; }
};
struct tb_neg {
  __device__ float operator()(float v, float, float) const { return -v; }
};
struct tb_abs {
  __device__ float operator()(float v, float, float) const { return fabsf(v); }
};
struct tb_erf {
  __device__ float operator()(float v, float, float) const { return erff(v); }
};
struct tb_floor {
  __device__ float operator()(float v, float, float) const { return floorf(v); }
};
struct tb_ceil {
  __device__ float operator()(float v, float, float) const { return ceilf(v); }
};

#define TB_UNARY_PARAMS const float *__restrict__ x, float *__restrict__ y, tb_index n, float alpha, float beta
extern "C" __global__ void tb_cu_relu_f32(TB_UNARY_PARAMS) { tb_unary<tb_relu>(x, y, n, alpha, beta); }
extern "C" __global__ void tb_cu_leaky_relu_f32(TB_UNARY_PARAMS) { tb_unary<tb_leaky_relu>(x, y, n, alpha, beta); }
extern "C" __global__ void tb_cu_elu_f32(TB_UNARY_PARAMS) { tb_unary<tb_elu>(x, y, n, alpha, beta); }
extern "C" __global__ void tb_cu_sigmoid_f32(TB_UNARY_PARAMS) { tb_unary<tb_sigmoid>(x, y, n, alpha, beta); }
extern "C" __global__ void tb_cu_hard_sigmoid_f32(TB_UNARY_PARAMS) { tb_unary<tb_hard_sigmoid>(x, y, n, alpha, beta); }
extern "C" __global__ void tb_cu_silu_f32(TB_UNARY_PARAMS) { tb_unary<tb_silu>(x, y, n, alpha, beta); }
extern "C" __global__ void tb_cu_gelu_f32(TB_UNARY_PARAMS) { tb_unary<tb_gelu>(x, y, n, alpha, beta); }
extern "C" __global__ void tb_cu_softplus_f32(TB_UNARY_PARAMS) { tb_unary<tb_softplus>(x, y, n, alpha, beta); }
extern "C" __global__ void tb_cu_clip_f32(TB_UNARY_PARAMS) { tb_unary<tb_clip>(x, y, n, alpha, beta); }
extern "C" __global__ void tb_cu_tanh_f32(TB_UNARY_PARAMS) { tb_unary<tb_tanh>(x, y, n, alpha, beta); }
extern "C" __global__ void tb_cu_exp_f32(TB_UNARY_PARAMS) { tb_unary<tb_exp>(x, y, n, alpha, beta); }
extern "C" __global__ void tb_cu_log_f32(TB_UNARY_PARAMS) { tb_unary<tb_log>(x, y, n, alpha, beta); }
extern "C" __global__ void tb_cu_sqrt_f32(TB_UNARY_PARAMS) { tb_unary<tb_sqrt>(x, y, n, alpha, beta); }
extern "C" __global__ void tb_cu_reciprocal_f32(TB_UNARY_PARAMS) { tb_unary<tb_reciprocal>(x, y, n, alpha, beta); }
extern "C" __global__ void tb_cu_neg_f32(TB_UNARY_PARAMS) { tb_unary<tb_neg>(x, y, n, alpha, beta); }
extern "C" __global__ void tb_cu_abs_f32(TB_UNARY_PARAMS) { tb_unary<tb_abs>(x, y, n, alpha, beta); }
extern "C" __global__ void tb_cu_erf_f32(TB_UNARY_PARAMS) { tb_unary<tb_erf>(x, y, n, alpha, beta); }
extern "C" __global__ void tb_cu_floor_f32(TB_UNARY_PARAMS) { tb_unary<tb_floor>(x, y, n, alpha, beta); }
extern "C" __global__ void tb_cu_ceil_f32(TB_UNARY_PARAMS) { tb_unary<tb_ceil>(x, y, n, alpha, beta); }

struct tb_add {
  __device__ float operator()(float a, float b) const { return a + b; }
};
struct tb_sub {
  __device__ float operator()(float a, float b) const { return a - b; }
};
struct tb_mul {
  __device__ float operator()(float a, float b) const { return a * b; }
};
struct tb_div {
  __device__ float operator()(float a, float b) const { return a / b; }
};
struct tb_pow {
  __device__ float operator()(float a, float b) const { return powf(a, b); }
};
struct tb_max {
  __device__ float operator()(float a, float b) const { return a != a || b != b ? a + b : fmaxf(a, b); } // NaN wins
};
struct tb_min {
  __device__ float operator()(float a, float b) const { return a != a || b != b ? a + b : fminf(a, b); }
};
struct tb_prelu { // a: the input, b: the slope
  __device__ float operator()(float a, float b) const { return a < 0.0f ? a * b : a; }
};

template <typename Op>
__device__ inline void tb_binary_flat(const float *__restrict__ a, const float *__restrict__ b, float *__restrict__ y,
                                      tb_index n) {
  Op op;
  TB_GRID_LOOP(i, n) y[i] = op(a[i], b[i]);
}

template <typename Op>
__device__ inline void tb_binary_broadcast(const float *__restrict__ a, const float *__restrict__ b,
                                           float *__restrict__ y, tb_index n, const tb_broadcast &s) {
  Op op;
  TB_GRID_LOOP(i, n) {
    tb_index ia, ib;
    tb_broadcast_offsets(s, i, &ia, &ib);
    y[i] = op(a[ia], b[ib]);
  }
}

#define TB_FLAT_PARAMS const float *__restrict__ a, const float *__restrict__ b, float *__restrict__ y, tb_index n
#define TB_BROADCAST_PARAMS TB_FLAT_PARAMS, tb_broadcast s
extern "C" __global__ void tb_cu_add_f32_flat(TB_FLAT_PARAMS) { tb_binary_flat<tb_add>(a, b, y, n); }
extern "C" __global__ void tb_cu_sub_f32_flat(TB_FLAT_PARAMS) { tb_binary_flat<tb_sub>(a, b, y, n); }
extern "C" __global__ void tb_cu_mul_f32_flat(TB_FLAT_PARAMS) { tb_binary_flat<tb_mul>(a, b, y, n); }
extern "C" __global__ void tb_cu_div_f32_flat(TB_FLAT_PARAMS) { tb_binary_flat<tb_div>(a, b, y, n); }
extern "C" __global__ void tb_cu_pow_f32_flat(TB_FLAT_PARAMS) { tb_binary_flat<tb_pow>(a, b, y, n); }
extern "C" __global__ void tb_cu_max_f32_flat(TB_FLAT_PARAMS) { tb_binary_flat<tb_max>(a, b, y, n); }
extern "C" __global__ void tb_cu_min_f32_flat(TB_FLAT_PARAMS) { tb_binary_flat<tb_min>(a, b, y, n); }
extern "C" __global__ void tb_cu_prelu_f32_flat(TB_FLAT_PARAMS) { tb_binary_flat<tb_prelu>(a, b, y, n); }
extern "C" __global__ void tb_cu_add_f32_broadcast(TB_BROADCAST_PARAMS) { tb_binary_broadcast<tb_add>(a, b, y, n, s); }
extern "C" __global__ void tb_cu_sub_f32_broadcast(TB_BROADCAST_PARAMS) { tb_binary_broadcast<tb_sub>(a, b, y, n, s); }
extern "C" __global__ void tb_cu_mul_f32_broadcast(TB_BROADCAST_PARAMS) { tb_binary_broadcast<tb_mul>(a, b, y, n, s); }
extern "C" __global__ void tb_cu_div_f32_broadcast(TB_BROADCAST_PARAMS) { tb_binary_broadcast<tb_div>(a, b, y, n, s); }
extern "C" __global__ void tb_cu_pow_f32_broadcast(TB_BROADCAST_PARAMS) { tb_binary_broadcast<tb_pow>(a, b, y, n, s); }
extern "C" __global__ void tb_cu_max_f32_broadcast(TB_BROADCAST_PARAMS) { tb_binary_broadcast<tb_max>(a, b, y, n, s); }
extern "C" __global__ void tb_cu_min_f32_broadcast(TB_BROADCAST_PARAMS) { tb_binary_broadcast<tb_min>(a, b, y, n, s); }
extern "C" __global__ void tb_cu_prelu_f32_broadcast(TB_BROADCAST_PARAMS) { tb_binary_broadcast<tb_prelu>(a, b, y, n, s); }
