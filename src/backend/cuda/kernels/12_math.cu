// The elementwise math the CPU reference runs beyond 10_elementwise.cu's float32 set, for every dtype the CPU
// kernels take: the trigonometric and hyperbolic functions, Round (half to even), Sign, Softsign, Shrink,
// ThresholdedRelu, Celu, Selu, HardSwish, tb::Silu and tb::Mish on float32 and float64 (each in its own type,
// as the CPU computes them) and on float16 and bfloat16 (computed in float32, rounded once to nearest even, as
// the CPU's staging does); Sign, Abs and Neg on the integer types (wrapping, as numpy); IsNaN and IsInf to
// bool; Mod (fmod 0 and 1) and BitShift with ONNX broadcasting; and the accumulation step of Sum and Mean (for
// float16 / bfloat16 one pass over one or two inputs, summed in float32 and rounded once, as the CPU).
// Every kernel here and in 31_index_reduce.cu is named tb_cu_ew_* and takes one parameter list:
// (a, b, y, z, n, tb_ew): two inputs and two outputs (NULL where unused), the size of the index space and the
// descriptor below, passed by value. Every elementwise kernel takes any grid (threads stride over n).

struct tb_ew {
  tb_index bytes[4];                // the bytes behind a, b, y and z (for the host's checks; the kernels stay inside)
  tb_index outer, len, inner, k;    // the [outer, len, inner] view of the index kernels, TopK's k
  int op, flags;                    // the operation (TB_EW_*) and its switches (TB_EW_F_*)
  double alpha, beta, gamma;        // the activations' parameters, in the op's own meaning
  tb_broadcast bc;                  // a's and b's strides for the output's index (binary ops), b's (Sum / Mean)
};

#define TB_EW_PARAMS const void *a, const void *b, void *y, void *z, tb_index n, tb_ew d

// The unary float operations (tb_ew.op of tb_cu_ew_math_*); the host mirrors the numbering (cuda_ew.h).
#define TB_EW_ACOS 0
#define TB_EW_ACOSH 1
#define TB_EW_ASIN 2
#define TB_EW_ASINH 3
#define TB_EW_ATAN 4
#define TB_EW_ATANH 5
#define TB_EW_COS 6
#define TB_EW_COSH 7
#define TB_EW_SIN 8
#define TB_EW_SINH 9
#define TB_EW_TAN 10
#define TB_EW_ROUND 11
#define TB_EW_SIGN 12
#define TB_EW_SOFTSIGN 13
#define TB_EW_SHRINK 14 // alpha: bias, beta: lambd
#define TB_EW_THRESHOLDED_RELU 15
#define TB_EW_CELU 16
#define TB_EW_SELU 17 // alpha, gamma
#define TB_EW_HARD_SWISH 18
#define TB_EW_SILU 19
#define TB_EW_MISH 20
#define TB_EW_ABS 21
#define TB_EW_NEG 22
#define TB_EW_ISNAN 23 // tb_cu_ew_classify_*: flags TB_EW_F_NEGATIVE / _POSITIVE for IsInf
#define TB_EW_ISINF 24

#define TB_EW_F_FMOD 1      // Mod: C's remainder (the dividend's sign), else Python's (the divisor's)
#define TB_EW_F_LEFT 1      // BitShift to the left
#define TB_EW_F_FIRST 1     // Sum / Mean: the first input (y is written, not added to)
#define TB_EW_F_NEGATIVE 2  // IsInf: detect -inf
#define TB_EW_F_POSITIVE 4  // IsInf: detect +inf

// The C library's function for float (sinf) and double (sin), chosen by the argument's type.
#define TB_EW_MATH(fn) \
  __device__ inline float tb_ew_##fn(float v) { return fn##f(v); } \
  __device__ inline double tb_ew_##fn(double v) { return fn(v); }
TB_EW_MATH(acos)
TB_EW_MATH(acosh)
TB_EW_MATH(asin)
TB_EW_MATH(asinh)
TB_EW_MATH(atan)
TB_EW_MATH(atanh)
TB_EW_MATH(cos)
TB_EW_MATH(cosh)
TB_EW_MATH(sin)
TB_EW_MATH(sinh)
TB_EW_MATH(tan)
TB_EW_MATH(tanh)
TB_EW_MATH(rint)
TB_EW_MATH(fabs)
TB_EW_MATH(exp)
TB_EW_MATH(expm1)
TB_EW_MATH(log1p)

// float16 and bfloat16 elements by their bits, loaded as float and stored rounded to nearest even; every other
// type as itself. tb_ew_compute<S>::type is the type an element of S is computed in.
struct tb_ew_half { unsigned short bits; };
struct tb_ew_bhalf { unsigned short bits; };
template <typename S> struct tb_ew_compute { typedef S type; };
template <> struct tb_ew_compute<tb_ew_half> { typedef float type; };
template <> struct tb_ew_compute<tb_ew_bhalf> { typedef float type; };
template <typename S>
__device__ inline S tb_ew_load(const S *p, tb_index i) { return p[i]; }
__device__ inline float tb_ew_load(const tb_ew_half *p, tb_index i) { return tb_f16_to_f32(p[i].bits); }
__device__ inline float tb_ew_load(const tb_ew_bhalf *p, tb_index i) { return tb_bf16_to_f32(p[i].bits); }
template <typename S>
__device__ inline void tb_ew_store(S *p, tb_index i, S v) { p[i] = v; }
__device__ inline void tb_ew_store(tb_ew_half *p, tb_index i, float v) { p[i].bits = tb_f32_to_f16(v); }
__device__ inline void tb_ew_store(tb_ew_bhalf *p, tb_index i, float v) { p[i].bits = tb_f32_to_bf16(v); }

// One unary float operation in T (float or double) with the CPU reference's formulas (kernels/elementwise/
// unary.c, activation.c; tb::Silu and tb::Mish as fused_epilogue.c). NaN in gives NaN out.
template <typename T>
__device__ inline T tb_ew_unary(int op, T x, T alpha, T beta, T gamma) {
  const T zero = (T)0, one = (T)1;
  switch (op) {
    case TB_EW_ACOS: return tb_ew_acos(x);
    case TB_EW_ACOSH: return tb_ew_acosh(x);
    case TB_EW_ASIN: return tb_ew_asin(x);
    case TB_EW_ASINH: return tb_ew_asinh(x);
    case TB_EW_ATAN: return tb_ew_atan(x);
    case TB_EW_ATANH: return tb_ew_atanh(x);
    case TB_EW_COS: return tb_ew_cos(x);
    case TB_EW_COSH: return tb_ew_cosh(x);
    case TB_EW_SIN: return tb_ew_sin(x);
    case TB_EW_SINH: return tb_ew_sinh(x);
    case TB_EW_TAN: return tb_ew_tan(x);
    case TB_EW_ROUND: return tb_ew_rint(x); // the default rounding: half to even
    case TB_EW_SIGN: return x > zero ? one : x < zero ? -one : x; // 0, -0 and NaN stay
    case TB_EW_SOFTSIGN: return x / (one + tb_ew_fabs(x));
    case TB_EW_SHRINK: return x < -beta ? x + alpha : x > beta ? x - alpha : zero;
    case TB_EW_THRESHOLDED_RELU: return x > alpha ? x : zero;
    case TB_EW_CELU: return x > zero ? x : alpha * tb_ew_expm1(x / alpha);
    case TB_EW_SELU: return x > zero ? gamma * x : gamma * (alpha * tb_ew_exp(x) - alpha);
    case TB_EW_HARD_SWISH: {
      T h = (T)(1.0 / 6.0) * x + (T)0.5;
      return x * (h < zero ? zero : h > one ? one : h);
    }
    case TB_EW_SILU: return x * (x >= zero ? one / (one + tb_ew_exp(-x)) : tb_ew_exp(x) / (one + tb_ew_exp(x)));
    case TB_EW_MISH: return x * tb_ew_tanh(x > zero ? x + tb_ew_log1p(tb_ew_exp(-x)) : tb_ew_log1p(tb_ew_exp(x)));
    case TB_EW_ABS: return tb_ew_fabs(x);
    case TB_EW_NEG: return -x;
    default: return x;
  }
}

template <typename S>
__device__ inline void tb_ew_math(const void *a, void *y, tb_index n, const tb_ew &d) {
  typedef typename tb_ew_compute<S>::type T;
  const S *x = (const S *)a;
  S *o = (S *)y;
  const T alpha = (T)d.alpha, beta = (T)d.beta, gamma = (T)d.gamma;
  TB_GRID_LOOP(i, n) tb_ew_store(o, i, tb_ew_unary<T>(d.op, tb_ew_load(x, i), alpha, beta, gamma));
}

template <typename T>
__device__ inline bool tb_ew_below_zero(T v) { return v < (T)0; }
__device__ inline bool tb_ew_below_zero(unsigned char) { return false; }

// Sign, Abs and Neg of an integer type through its unsigned twin U, so -INT_MIN wraps to INT_MIN as in numpy.
template <typename T, typename U>
__device__ inline void tb_ew_int_math(const void *a, void *y, tb_index n, const tb_ew &d) {
  const T *x = (const T *)a;
  T *o = (T *)y;
  TB_GRID_LOOP(i, n) {
    T v = x[i];
    T neg = (T)(U)((U)0 - (U)v);
    bool below = tb_ew_below_zero(v);
    o[i] = d.op == TB_EW_SIGN ? (T)((v > (T)0) - (below ? 1 : 0)) : d.op == TB_EW_NEG ? neg : below ? neg : v;
  }
}

// IsNaN and IsInf (with its detect flags) to bool bytes.
template <typename S>
__device__ inline void tb_ew_classify(const void *a, void *y, tb_index n, const tb_ew &d) {
  typedef typename tb_ew_compute<S>::type T;
  const S *x = (const S *)a;
  unsigned char *o = (unsigned char *)y;
  const T inf = (T)TB_INF;
  TB_GRID_LOOP(i, n) {
    T v = tb_ew_load(x, i);
    bool r = d.op == TB_EW_ISNAN ? v != v
                                 : (v == inf && (d.flags & TB_EW_F_POSITIVE)) || (v == -inf && (d.flags & TB_EW_F_NEGATIVE));
    o[i] = r ? 1 : 0;
  }
}

// Mod of integers: fmod 1 is C's remainder, 0 Python's (the divisor's sign); a divisor of 0 gives 0 (ONNX leaves
// it undefined) and -1 gives 0 without the INT_MIN trap, as the CPU kernel.
template <typename T>
__device__ inline T tb_ew_int_mod(T x, T m, bool c_rem) {
  if (m == (T)0 || m == (T)-1) return (T)0;
  T r = (T)(x % m);
  if (!c_rem && r != (T)0 && ((r < (T)0) != (m < (T)0))) r = (T)(r + m);
  return r;
}
__device__ inline float tb_ew_mod_value(float x, float m, bool) { return fmodf(x, m); } // floats: fmod 1 only
__device__ inline double tb_ew_mod_value(double x, double m, bool) { return fmod(x, m); }
__device__ inline signed char tb_ew_mod_value(signed char x, signed char m, bool c) { return tb_ew_int_mod(x, m, c); }
__device__ inline short tb_ew_mod_value(short x, short m, bool c) { return tb_ew_int_mod(x, m, c); }
__device__ inline int tb_ew_mod_value(int x, int m, bool c) { return tb_ew_int_mod(x, m, c); }
__device__ inline long long tb_ew_mod_value(long long x, long long m, bool c) { return tb_ew_int_mod(x, m, c); }
__device__ inline unsigned char tb_ew_mod_value(unsigned char x, unsigned char m, bool) { return m ? (unsigned char)(x % m) : 0; }

template <typename S>
__device__ inline void tb_ew_mod(const void *a, const void *b, void *y, tb_index n, const tb_ew &d) {
  const S *x = (const S *)a, *m = (const S *)b;
  S *o = (S *)y;
  bool c_rem = (d.flags & TB_EW_F_FMOD) != 0;
  TB_GRID_LOOP(i, n) {
    tb_index ia, ib;
    tb_broadcast_offsets(d.bc, i, &ia, &ib);
    tb_ew_store(o, i, tb_ew_mod_value(tb_ew_load(x, ia), tb_ew_load(m, ib), c_rem));
  }
}

// BitShift of an unsigned type of `bits` bits: a shift by the width or more gives 0.
template <typename T, int bits>
__device__ inline void tb_ew_bitshift(const void *a, const void *b, void *y, tb_index n, const tb_ew &d) {
  const T *x = (const T *)a, *s = (const T *)b;
  T *o = (T *)y;
  bool left = (d.flags & TB_EW_F_LEFT) != 0;
  TB_GRID_LOOP(i, n) {
    tb_index ia, ib;
    tb_broadcast_offsets(d.bc, i, &ia, &ib);
    T v = x[ia], by = s[ib];
    o[i] = by >= (T)bits ? (T)0 : left ? (T)(v << by) : (T)(v >> by);
  }
}

// One input of Sum or Mean folded into the output (the broadcast shape of all inputs): y = (first ? x : y + x),
// divided by alpha (Mean's input count on its last input; 1 otherwise), in the inputs' type, in input order
// as the CPU kernel folds them. b is the input, broadcast to y with bc's b strides.
template <typename T>
__device__ inline void tb_ew_accumulate(const void *b, void *y, tb_index n, const tb_ew &d) {
  const T *x = (const T *)b;
  T *o = (T *)y;
  const T divisor = (T)d.alpha;
  bool first = (d.flags & TB_EW_F_FIRST) != 0;
  TB_GRID_LOOP(i, n) {
    tb_index ia, ib;
    tb_broadcast_offsets(d.bc, i, &ia, &ib);
    T v = first ? x[ib] : o[i] + x[ib];
    o[i] = divisor == (T)1 ? v : v / divisor;
  }
}

// Sum or Mean of one or two float16 / bfloat16 inputs in one pass: y = (a [+ b]) / alpha in float32, rounded
// once (the CPU's float32 accumulator); b is read where TB_EW_F_FIRST is not set, with bc's a and b strides.
template <typename S>
__device__ inline void tb_ew_accumulate_half(const void *a, const void *b, void *y, tb_index n, const tb_ew &d) {
  const S *x = (const S *)a, *w = (const S *)b;
  S *o = (S *)y;
  const float divisor = (float)d.alpha;
  bool single = (d.flags & TB_EW_F_FIRST) != 0;
  TB_GRID_LOOP(i, n) {
    tb_index ia = i, ib = 0;
    if (!single) tb_broadcast_offsets(d.bc, i, &ia, &ib);
    float v = single ? tb_ew_load(x, ia) : tb_ew_load(x, ia) + tb_ew_load(w, ib);
    tb_ew_store(o, i, divisor == 1.0f ? v : v / divisor);
  }
}

// Not every kernel reads every parameter of the shared list.
#define TB_EW_USE() ((void)a, (void)b, (void)y, (void)z, (void)n, (void)d)
extern "C" __global__ void tb_cu_ew_math_f32(TB_EW_PARAMS) { TB_EW_USE(); tb_ew_math<float>(a, y, n, d); }
extern "C" __global__ void tb_cu_ew_math_f64(TB_EW_PARAMS) { TB_EW_USE(); tb_ew_math<double>(a, y, n, d); }
extern "C" __global__ void tb_cu_ew_int_math_i8(TB_EW_PARAMS) { TB_EW_USE(); tb_ew_int_math<signed char, unsigned char>(a, y, n, d); }
extern "C" __global__ void tb_cu_ew_int_math_i16(TB_EW_PARAMS) { TB_EW_USE(); tb_ew_int_math<short, unsigned short>(a, y, n, d); }
extern "C" __global__ void tb_cu_ew_int_math_i32(TB_EW_PARAMS) { TB_EW_USE(); tb_ew_int_math<int, unsigned>(a, y, n, d); }
extern "C" __global__ void tb_cu_ew_int_math_i64(TB_EW_PARAMS) { TB_EW_USE(); tb_ew_int_math<long long, unsigned long long>(a, y, n, d); }
extern "C" __global__ void tb_cu_ew_int_math_u8(TB_EW_PARAMS) { TB_EW_USE(); tb_ew_int_math<unsigned char, unsigned char>(a, y, n, d); }
extern "C" __global__ void tb_cu_ew_classify_f32(TB_EW_PARAMS) { TB_EW_USE(); tb_ew_classify<float>(a, y, n, d); }
extern "C" __global__ void tb_cu_ew_classify_f64(TB_EW_PARAMS) { TB_EW_USE(); tb_ew_classify<double>(a, y, n, d); }
extern "C" __global__ void tb_cu_ew_mod_f32(TB_EW_PARAMS) { TB_EW_USE(); tb_ew_mod<float>(a, b, y, n, d); }
extern "C" __global__ void tb_cu_ew_mod_f64(TB_EW_PARAMS) { TB_EW_USE(); tb_ew_mod<double>(a, b, y, n, d); }
extern "C" __global__ void tb_cu_ew_mod_i8(TB_EW_PARAMS) { TB_EW_USE(); tb_ew_mod<signed char>(a, b, y, n, d); }
extern "C" __global__ void tb_cu_ew_mod_i16(TB_EW_PARAMS) { TB_EW_USE(); tb_ew_mod<short>(a, b, y, n, d); }
extern "C" __global__ void tb_cu_ew_mod_i32(TB_EW_PARAMS) { TB_EW_USE(); tb_ew_mod<int>(a, b, y, n, d); }
extern "C" __global__ void tb_cu_ew_mod_i64(TB_EW_PARAMS) { TB_EW_USE(); tb_ew_mod<long long>(a, b, y, n, d); }
extern "C" __global__ void tb_cu_ew_mod_u8(TB_EW_PARAMS) { TB_EW_USE(); tb_ew_mod<unsigned char>(a, b, y, n, d); }
extern "C" __global__ void tb_cu_ew_bitshift_u8(TB_EW_PARAMS) { TB_EW_USE(); tb_ew_bitshift<unsigned char, 8>(a, b, y, n, d); }
extern "C" __global__ void tb_cu_ew_accumulate_f32(TB_EW_PARAMS) { TB_EW_USE(); tb_ew_accumulate<float>(b, y, n, d); }
extern "C" __global__ void tb_cu_ew_accumulate_f64(TB_EW_PARAMS) { TB_EW_USE(); tb_ew_accumulate<double>(b, y, n, d); }
extern "C" __global__ void tb_cu_ew_math_f16(TB_EW_PARAMS) { TB_EW_USE(); tb_ew_math<tb_ew_half>(a, y, n, d); }
extern "C" __global__ void tb_cu_ew_math_bf16(TB_EW_PARAMS) { TB_EW_USE(); tb_ew_math<tb_ew_bhalf>(a, y, n, d); }
extern "C" __global__ void tb_cu_ew_classify_f16(TB_EW_PARAMS) { TB_EW_USE(); tb_ew_classify<tb_ew_half>(a, y, n, d); }
extern "C" __global__ void tb_cu_ew_classify_bf16(TB_EW_PARAMS) { TB_EW_USE(); tb_ew_classify<tb_ew_bhalf>(a, y, n, d); }
extern "C" __global__ void tb_cu_ew_mod_f16(TB_EW_PARAMS) { TB_EW_USE(); tb_ew_mod<tb_ew_half>(a, b, y, n, d); }
extern "C" __global__ void tb_cu_ew_mod_bf16(TB_EW_PARAMS) { TB_EW_USE(); tb_ew_mod<tb_ew_bhalf>(a, b, y, n, d); }
extern "C" __global__ void tb_cu_ew_accumulate_f16(TB_EW_PARAMS) { TB_EW_USE(); tb_ew_accumulate_half<tb_ew_half>(a, b, y, n, d); }
extern "C" __global__ void tb_cu_ew_accumulate_bf16(TB_EW_PARAMS) { TB_EW_USE(); tb_ew_accumulate_half<tb_ew_bhalf>(a, b, y, n, d); }
