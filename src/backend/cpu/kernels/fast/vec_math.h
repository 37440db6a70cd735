/* Internal: vectorised fp32 exp, tanh, sigmoid, erf and the two GELU forms on GNU C vectors, included by
 * vec_loops.h once per instruction set. The includer defines VW (lanes), the types vf (VW floats), vi (VW
 * int32) and vd (VW doubles), V_FMA(a, b, c) (a * b + c, fused where the ISA has it) and V_SQRT(x).
 *
 * Methods, and the largest error measured against the double C library over dense sweeps (2,000,001
 * points per range plus small arguments at every scale 2^-60..1; tests/unit/test_vec_math.c repeats them
 * at 500,001 points and asserts the bounds), in units of the last place of the fp32 result, the same on
 * the AVX-512, AVX2 and portable paths within 0.3 ulp:
 *   exp      x = n ln2 + r (Cody-Waite, |r| <= ln2/2); e^r by its degree-7 Taylor polynomial (truncation
 *            < 0.05 ulp); times 2^n as two powers of two, so n = -150..128 and subnormal results work.
 *            +inf above 88.7228, 0 below -103.972, NaN kept.                                    1.2 ulp
 *   tanh     |x| < 0.625: x + x^3 P(x^2), the Taylor series to x^21 (tail < 1e-9 relative); else
 *            1 - 2 / (e^(2|x|) + 1) with the sign restored.                                     1.4 ulp
 *   sigmoid  e = e^-|x|; 1 / (1 + e) for x >= 0, e / (1 + e) below (no cancellation).            2.6 ulp
 *   erf      |x| < 0.875: x P(x^2), P the degree-6 Chebyshev interpolant of erf(x)/x in x^2 (2e-10
 *            relative in double); else 1 - erfc(|x|) with erfc(z) = e^(-z^2) t h(t), t = 1/z, h the
 *            degree-12 Chebyshev interpolant of erfc(z) e^(z^2) z over z in [0.875, 10] (8e-9 relative in
 *            double). Coefficients computed in double from the C library's erf / erfc.           1.5 ulp
 *   GELU, erf form: x Phi(x) with Phi's left tail as erfc(|x| / sqrt 2) / 2 directly (not 1 + erf, which
 *            cancels), e^(-x^2/2) as e^(-xh^2/2) e^(-(2 xh + xl) xl / 2) from x = xh + xl split at 12
 *            bits so the square is exact, the small second factor by its Taylor series.        4.9 ulp
 *   GELU, tanh form: x sigmoid(t), t = 2 sqrt(2/pi) (x + 0.044715 x^3) computed in double and carried as
 *            two floats (the sigmoid's tail multiplies t's error by |t|).                        4.1 ulp
 * The GELU figures count outputs above 1e-30 in magnitude; below it intermediate products go subnormal. */
#ifndef TB_CPU_KERNELS_FAST_VEC_MATH_BODY
#define TB_CPU_KERNELS_FAST_VEC_MATH_BODY

static inline vf vm_splat(float c) { /* not (vf){0} + c: that turns -0 into +0 */
  vf v;
  for (int i = 0; i < VW; i++) v[i] = c;
  return v;
}
static inline vi vm_splati(int32_t c) { return (vi){0} + c; }
/* m ? a : b for a lane mask m (all ones or zero per lane). */
static inline vf vm_sel(vi m, vf a, vf b) { return (vf)(((vi)a & m) | ((vi)b & ~m)); }
static inline vf vm_abs(vf x) { return (vf)((vi)x & vm_splati(0x7fffffff)); }
/* |mag| with the sign of s. */
static inline vf vm_copysign(vf mag, vf s) {
  return (vf)(((vi)mag & vm_splati(0x7fffffff)) | ((vi)s & vm_splati((int32_t)0x80000000u)));
}
static inline vi vm_isnan(vf x) { return (vi)(x != x); }

/* Round to nearest (even) for |t| < 2^22: the magic-number addition. */
static inline vf vm_round(vf t) {
  const vf magic = vm_splat(12582912.0f); /* 1.5 * 2^23 */
  vf r = t + magic;
  return r - magic;
}

/* 2^n for integer n in [-150, 128] given as float: two normal powers of two applied in turn. */
static inline vf vm_scale(vf p, vf n) {
  vi ni = __builtin_convertvector(n, vi);
  vi n1 = ni >> 1, n2 = ni - n1;
  vf s1 = (vf)((n1 + 127) << 23), s2 = (vf)((n2 + 127) << 23);
  return p * s1 * s2;
}

static inline vf vm_exp(vf x) {
  const vf hi = vm_splat(88.72283935546875f), lo = vm_splat(-103.97208404541015625f);
  vi over = (vi)(x > hi), under = (vi)(x < lo), nan = vm_isnan(x);
  vf xc = vm_sel(over, hi, vm_sel(under, lo, vm_sel(nan, vm_splat(0.0f), x)));
  vf n = vm_round(xc * 1.44269504088896341f);
  vf r = V_FMA(n, vm_splat(-0.693359375f), xc); /* ln2 high part: 9 bits, so n * it is exact */
  r = V_FMA(n, vm_splat(2.12194440e-4f), r);    /* ln2 = 0.693359375 - 2.12194440e-4 */
  vf p = vm_splat(1.0f / 5040.0f);
  p = V_FMA(p, r, vm_splat(1.0f / 720.0f));
  p = V_FMA(p, r, vm_splat(1.0f / 120.0f));
  p = V_FMA(p, r, vm_splat(1.0f / 24.0f));
  p = V_FMA(p, r, vm_splat(1.0f / 6.0f));
  p = V_FMA(p, r, vm_splat(0.5f));
  p = V_FMA(p, r, vm_splat(1.0f));
  p = V_FMA(p, r, vm_splat(1.0f));
  vf y = vm_scale(p, n);
  y = vm_sel(over, vm_splat(__builtin_inff()), y);
  y = vm_sel(under, vm_splat(0.0f), y);
  return vm_sel(nan, x, y);
}

static inline vf vm_tanh(vf x) {
  vf ax = vm_abs(x), s = x * x;
  /* x^3..x^21 Taylor coefficients: -1/3, 2/15, -17/315, 62/2835, -1382/155925, 21844/6081075,
   * -929569/638512875, 6404582/10854718875, -443861162/1856156927625, 18888466084/194896477400625 */
  vf q = vm_splat(18888466084.0f / 194896477400625.0f);
  q = V_FMA(q, s, vm_splat(-443861162.0f / 1856156927625.0f));
  q = V_FMA(q, s, vm_splat(6404582.0f / 10854718875.0f));
  q = V_FMA(q, s, vm_splat(-929569.0f / 638512875.0f));
  q = V_FMA(q, s, vm_splat(21844.0f / 6081075.0f));
  q = V_FMA(q, s, vm_splat(-1382.0f / 155925.0f));
  q = V_FMA(q, s, vm_splat(62.0f / 2835.0f));
  q = V_FMA(q, s, vm_splat(-17.0f / 315.0f));
  q = V_FMA(q, s, vm_splat(2.0f / 15.0f));
  q = V_FMA(q, s, vm_splat(-1.0f / 3.0f));
  vf small = vm_copysign(V_FMA(x * s, q, x), x); /* keeps -0 */
  vf e = vm_exp(ax + ax);
  vf big = vm_copysign(1.0f - 2.0f / (e + 1.0f), x);
  return vm_sel((vi)(ax < 0.625f), small, big);
}

static inline vf vm_sigmoid(vf x) {
  vf e = vm_exp(-vm_abs(x));
  vf r = 1.0f / (1.0f + e);
  return vm_sel((vi)(x >= 0.0f), r, e * r);
}

/* erf(x) / x for |x| < 0.875 as a polynomial in s = x^2 (centred at 0.3828125). */
static inline vf vm_erf_small(vf s) {
  vf u = s - 0.3828125f;
  vf p = vm_splat(8.690368829e-05f);
  p = V_FMA(p, u, vm_splat(-6.218501777e-04f));
  p = V_FMA(p, u, vm_splat(3.825758753e-03f));
  p = V_FMA(p, u, vm_splat(-1.999471492e-02f));
  p = V_FMA(p, u, vm_splat(8.613393848e-02f));
  p = V_FMA(p, u, vm_splat(-3.004601135e-01f));
  return V_FMA(p, u, vm_splat(9.995275084e-01f));
}

/* t h(t) = erfc(z) e^(z^2) for t = 1/z, z in [0.875, 10] (h centred at t = 0.62142857). */
static inline vf vm_erfc_scaled(vf t) {
  vf u = t - 0.6214285714285714f;
  vf p = vm_splat(-7.018587793e-02f);
  p = V_FMA(p, u, vm_splat(4.636077632e-02f));
  p = V_FMA(p, u, vm_splat(5.258522818e-02f));
  p = V_FMA(p, u, vm_splat(-7.001037394e-02f));
  p = V_FMA(p, u, vm_splat(4.363352815e-02f));
  p = V_FMA(p, u, vm_splat(-2.222796924e-02f));
  p = V_FMA(p, u, vm_splat(-9.250556356e-03f));
  p = V_FMA(p, u, vm_splat(4.952774900e-02f));
  p = V_FMA(p, u, vm_splat(-7.893303585e-02f));
  p = V_FMA(p, u, vm_splat(7.323296708e-02f));
  p = V_FMA(p, u, vm_splat(-2.072989952e-03f));
  p = V_FMA(p, u, vm_splat(-1.715737257e-01f));
  p = V_FMA(p, u, vm_splat(4.901375737e-01f));
  return t * p;
}

static inline vf vm_erf(vf x) {
  vf ax = vm_abs(x);
  vf small = x * vm_erf_small(x * x);
  vf z = vm_sel((vi)(ax > 10.0f), vm_splat(10.0f), vm_sel((vi)(ax < 0.875f), vm_splat(1.0f), ax));
  vf erfc = vm_exp(-(z * z)) * vm_erfc_scaled(1.0f / z);
  vf big = vm_copysign(1.0f - erfc, x);
  return vm_sel((vi)(ax < 0.875f), small, big);
}

/* x * Phi(x), Phi(x) = erfc(-x / sqrt 2) / 2, with the left tail computed as erfc directly. */
static inline vf vm_gelu_erf(vf x) {
  vf ax = vm_abs(x), z = ax * 0.70710678118654752f;
  vf erf_small = z * vm_erf_small(z * z);
  vi is_small = (vi)(z < 0.875f);
  /* the large branch on |x| limited to [1.2374, 14.142] (z in [0.875, 10]) */
  vf axc = vm_sel((vi)(ax > 14.142135f), vm_splat(14.142135f), vm_sel(is_small, vm_splat(2.0f), ax));
  vf xh = (vf)((vi)axc & vm_splati((int32_t)0xfffff000u)), xl = axc - xh;
  vf u = ((xh + xh + xl) * xl) * 0.5f; /* x^2 / 2 = xh^2 / 2 (exact) + u, 0 <= u < x^2 / 2048 <= 0.098 */
  vf eu = V_FMA(u, vm_splat(-1.0f / 120.0f), vm_splat(1.0f / 24.0f)); /* e^-u: degree 5 Taylor, 2e-9 */
  eu = V_FMA(eu, u, vm_splat(-1.0f / 6.0f));
  eu = V_FMA(eu, u, vm_splat(0.5f));
  eu = V_FMA(eu, u, vm_splat(-1.0f));
  eu = V_FMA(eu, u, vm_splat(1.0f));
  vf e = vm_exp(-(xh * xh) * 0.5f) * eu;
  vf erfc_big = e * vm_erfc_scaled(1.41421356237309505f / axc);
  vf erfc = vm_sel(is_small, 1.0f - erf_small, erfc_big);
  vf phi = vm_sel((vi)(x < 0.0f), 0.5f * erfc, 1.0f - 0.5f * erfc);
  return vm_sel(vm_isnan(x), x, x * phi);
}

/* x * sigmoid(t), t = 2u = 2 sqrt(2/pi) (x + 0.044715 x^3): equal to 0.5 x (1 + tanh u) without its
 * cancellation. t is computed in double and carried as hi + lo floats, since the sigmoid's left tail
 * multiplies t's relative error by |t|: e^-|t| = e^-|hi| (1 - sign(hi) lo). */
static inline vf vm_gelu_tanh(vf x) {
  vd xd = __builtin_convertvector(x, vd);
  vd td = xd * (xd * xd * 0.044715 + 1.0) * 1.5957691216057307118;
  vf hi = __builtin_convertvector(td, vf);
  vf lo = __builtin_convertvector(td - __builtin_convertvector(hi, vd), vf);
  lo = vm_sel(vm_isnan(lo), vm_splat(0.0f), lo); /* inf - inf */
  vf slo = (vf)((vi)lo ^ ((vi)hi & vm_splati((int32_t)0x80000000u))); /* sign(hi) lo */
  vf e = vm_exp(-vm_abs(hi)) * (1.0f - slo);
  vf r = 1.0f / (1.0f + e);
  return x * vm_sel((vi)(hi >= 0.0f), r, e * r);
}

#endif
