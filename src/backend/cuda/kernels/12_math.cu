// The elementwise math the CPU reference runs beyond 10_elementwise.cu's float32 kernels, for every dtype the CPU
// kernels take: 10_elementwise.cu's ops on float64, float16 and bfloat16 (the unary ones through
// tb_cu_ew_math_*, the binary ones through tb_cu_ew_arith_*); the trigonometric and hyperbolic functions, Round (half to even), Sign, Softsign, Shrink,
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
// 10_elementwise.cu's unary ops, for the dtypes beyond float32 (alpha, beta: their parameters as there)
#define TB_EW_RELU 25
#define TB_EW_LEAKY_RELU 26
#define TB_EW_ELU 27
#define TB_EW_SIGMOID 28
#define TB_EW_HARD_SIGMOID 29
#define TB_EW_SOFTPLUS 30
#define TB_EW_TANH 31
#define TB_EW_EXP 32
#define TB_EW_LOG 33
#define TB_EW_SQRT 34
#define TB_EW_RECIPROCAL 35
#define TB_EW_ERF 36
#define TB_EW_FLOOR 37
#define TB_EW_CEIL 38
#define TB_EW_CLIP 39      // alpha: min, beta: max
#define TB_EW_GELU 40      // tb::Gelu in double, as the CPU's reference, rounded once
#define TB_EW_GELU_TANH 41

// The binary operations (tb_ew.op of tb_cu_ew_arith_*, and the fold of tb_cu_ew_accumulate_* / _fold_*).
#define TB_EW_ADD 0
#define TB_EW_SUB 1
#define TB_EW_MUL 2
#define TB_EW_DIV 3
#define TB_EW_POW 4
#define TB_EW_MAX 5
#define TB_EW_MIN 6
#define TB_EW_PRELU 7

#define TB_EW_F_FMOD 1      // Mod: C's remainder (the dividend's sign), else Python's (the divisor's)
#define TB_EW_F_LEFT 1      // BitShift to the left
#define TB_EW_F_FIRST 1     // Sum / Mean: the first input (y is written, not added to)
#define TB_EW_F_NEGATIVE 2  // IsInf: detect -inf
#define TB_EW_F_POSITIVE 4  // IsInf: detect +inf
#define TB_EW_F_SAME 8      // tb_cu_ew_arith_*: a, b and y of one shape (no broadcast offsets)
#define TB_EW_F_LAST 8      // tb_cu_ew_fold_*: the last input (y is the output, rounded, not the float32 accumulator)

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
TB_EW_MATH(log)
TB_EW_MATH(sqrt)
TB_EW_MATH(erf)
TB_EW_MATH(floor)
TB_EW_MATH(ceil)
__device__ inline float tb_ew_pow(float a, float b) { return powf(a, b); }
__device__ inline double tb_ew_pow(double a, double b) { return pow(a, b); }

// A double to float rounding to odd (toward zero, the last bit set when inexact): the float's one later rounding
// to float16 or bfloat16 is then the double's own (float keeps more than two bits past the half's).
__device__ inline float tb_ew_to_odd(double v) {
  float f = (float)v;
  if (v != v || (double)f == v) return f;
  unsigned bits = __float_as_uint(f);
  if (fabs((double)f) > fabs(v)) bits -= 1u; // rounded away from zero: one step back towards it
  return __uint_as_float(bits | 1u);
}
// A double result narrowed to T once (float: rounded to odd, for the half it is stored in).
__device__ inline double tb_ew_narrow(double v, double) { return v; }
__device__ inline float tb_ew_narrow(double v, float) { return tb_ew_to_odd(v); }

// The logistic function as the CPU reference computes it (no overflow of e^-x for negative x).
template <typename T>
__device__ inline T tb_ew_logistic(T x) {
  if (x >= (T)0) return (T)1 / ((T)1 + tb_ew_exp(-x));
  T e = tb_ew_exp(x);
  return e / ((T)1 + e);
}

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
    case TB_EW_RELU: return x < zero ? zero : x;
    case TB_EW_LEAKY_RELU: return x < zero ? alpha * x : x;
    case TB_EW_ELU: return x < zero ? alpha * tb_ew_expm1(x) : x;
    case TB_EW_SIGMOID: return tb_ew_logistic(x);
    case TB_EW_HARD_SIGMOID: {
      T h = alpha * x + beta;
      return h < zero ? zero : h > one ? one : h;
    }
    case TB_EW_SOFTPLUS: return x > zero ? x + tb_ew_log1p(tb_ew_exp(-x)) : tb_ew_log1p(tb_ew_exp(x));
    case TB_EW_TANH: return tb_ew_tanh(x);
    case TB_EW_EXP: return tb_ew_exp(x);
    case TB_EW_LOG: return tb_ew_log(x);
    case TB_EW_SQRT: return tb_ew_sqrt(x);
    case TB_EW_RECIPROCAL: return one / x;
    case TB_EW_ERF: return tb_ew_erf(x);
    case TB_EW_FLOOR: return tb_ew_floor(x);
    case TB_EW_CEIL: return tb_ew_ceil(x);
    case TB_EW_CLIP: return x < alpha ? alpha : x > beta ? beta : x;
    case TB_EW_GELU: {
      double v = (double)x;
      return tb_ew_narrow(0.5 * v * (1.0 + erf(v * 0.70710678118654752440)), x);
    }
    case TB_EW_GELU_TANH: {
      double v = (double)x;
      return tb_ew_narrow(0.5 * v * (1.0 + tanh(0.79788456080286535588 * (v + 0.044715 * v * v * v))), x);
    }
    default: return x;
  }
}

// One binary operation in T with the CPU reference's expressions (arith.c, pow_mod.c, activation.c, variadic.c):
// Max and Min keep the first NaN.
template <typename T>
__device__ inline T tb_ew_binary(int op, T a, T b) {
  switch (op) {
    case TB_EW_ADD: return a + b;
    case TB_EW_SUB: return a - b;
    case TB_EW_MUL: return a * b;
    case TB_EW_DIV: return a / b;
    case TB_EW_POW: return tb_ew_pow(a, b);
    case TB_EW_MAX: return a != a ? a : b != b ? b : a >= b ? a : b;
    case TB_EW_MIN: return a != a ? a : b != b ? b : a <= b ? a : b;
    case TB_EW_PRELU: return a < (T)0 ? b * a : a;
    default: return a;
  }
}

// y = a op b with ONNX broadcasting (bc's strides; none under TB_EW_F_SAME), in the compute type of S.
template <typename S>
__device__ inline void tb_ew_arith(const void *a, const void *b, void *y, tb_index n, const tb_ew &d) {
  const S *x = (const S *)a, *w = (const S *)b;
  S *o = (S *)y;
  bool same = (d.flags & TB_EW_F_SAME) != 0;
  TB_GRID_LOOP(i, n) {
    tb_index ia = i, ib = i;
    if (!same) tb_broadcast_offsets(d.bc, i, &ia, &ib);
    tb_ew_store(o, i, tb_ew_binary(d.op, tb_ew_load(x, ia), tb_ew_load(w, ib)));
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

// One input of Sum, Mean, Max or Min folded into the output (the broadcast shape of all inputs): y = (first ? x :
// y op x) with op TB_EW_ADD, _MAX or _MIN, divided by alpha (Mean's input count on its last input; 1 otherwise),
// in the inputs' type, in input order as the CPU kernel folds them. b is the input, broadcast to y with bc's b
// strides.
template <typename T>
__device__ inline void tb_ew_accumulate(const void *b, void *y, tb_index n, const tb_ew &d) {
  const T *x = (const T *)b;
  T *o = (T *)y;
  const T divisor = (T)d.alpha;
  bool first = (d.flags & TB_EW_F_FIRST) != 0;
  TB_GRID_LOOP(i, n) {
    tb_index ia, ib;
    tb_broadcast_offsets(d.bc, i, &ia, &ib);
    T v = first ? x[ib] : tb_ew_binary(d.op, o[i], x[ib]);
    o[i] = divisor == (T)1 ? v : v / divisor;
  }
}

// One float16 / bfloat16 input of Sum, Mean, Max or Min (three inputs and more, or Max / Min of any count) folded
// into a float32 accumulator, as the CPU folds them in float32 and rounds once: acc = (first ? x : a op x) with
// a the accumulator (float32, the output's shape) and b the input (bc's b strides); y is the accumulator, or under
// TB_EW_F_LAST the output, acc / alpha rounded once.
template <typename S>
__device__ inline void tb_ew_fold_half(const void *a, const void *b, void *y, tb_index n, const tb_ew &d) {
  const float *acc = (const float *)a;
  const S *x = (const S *)b;
  const float divisor = (float)d.alpha;
  bool first = (d.flags & TB_EW_F_FIRST) != 0, last = (d.flags & TB_EW_F_LAST) != 0;
  TB_GRID_LOOP(i, n) {
    tb_index ia, ib;
    tb_broadcast_offsets(d.bc, i, &ia, &ib);
    float v = first ? tb_ew_load(x, ib) : tb_ew_binary(d.op, acc[i], tb_ew_load(x, ib));
    if (last) tb_ew_store((S *)y, i, divisor == 1.0f ? v : v / divisor);
    else ((float *)y)[i] = v;
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
extern "C" __global__ void tb_cu_ew_fold_f16(TB_EW_PARAMS) { TB_EW_USE(); tb_ew_fold_half<tb_ew_half>(a, b, y, n, d); }
extern "C" __global__ void tb_cu_ew_fold_bf16(TB_EW_PARAMS) { TB_EW_USE(); tb_ew_fold_half<tb_ew_bhalf>(a, b, y, n, d); }
extern "C" __global__ void tb_cu_ew_arith_f64(TB_EW_PARAMS) { TB_EW_USE(); tb_ew_arith<double>(a, b, y, n, d); }
extern "C" __global__ void tb_cu_ew_arith_f16(TB_EW_PARAMS) { TB_EW_USE(); tb_ew_arith<tb_ew_half>(a, b, y, n, d); }
extern "C" __global__ void tb_cu_ew_arith_bf16(TB_EW_PARAMS) { TB_EW_USE(); tb_ew_arith<tb_ew_bhalf>(a, b, y, n, d); }
