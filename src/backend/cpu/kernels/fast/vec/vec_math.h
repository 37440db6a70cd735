/* Internal: vectorised fp32 exp, tanh, sigmoid, erf and the two GELU forms on GNU C vectors, included by
 * vec_loops.h once per instruction set. The includer defines VW (lanes), the types vf (VW floats), vi (VW
 * int32) and vd (VW doubles), V_FMA(a, b, c) (a * b + c, fused where the ISA has it) and V_SQRT(x), and
 * may define the hooks below (V_LOOKUP16, V_LOOKUP8, V_MIN, V_MAX, V_SEL_LT, V_SCALE, V_DIV, V_HAS_FMA,
 * V_ALL_LT, V_ANY_LT) with single instructions; the fallbacks here are plain GNU C.
 *
 * Methods, and the largest error measured against the double C library in units of the last place of the
 * fp32 result, rounded up to 0.1: over every float with 2^-30 <= |x| < 104 of both signs (AVX-512 and AVX2
 * alike; the portable figure after a | where it differs) and in tests/unit/test_vec_math.c's sweeps, which
 * assert the bounds:
 *   exp      x = n ln2 + r (Cody-Waite, |r| <= ln2/2, x clamped to [-104, 89]); e^r = 1 + r q(r), q of
 *            degree 5 fitted over |r| <= 0.3467 (3e-9 relative); times 2^n in one step (vscalefps) or
 *            as two powers of two, so subnormal results, 0 and +inf come out of the scaling.   1.2 ulp
 *            (AVX2: an add to the exponent field when every lane's result is normal, the same bits.)
 *   tanh     x P(x^2) / Q(x^2), P and Q of degree 4 fitted for the relative error (2e-8 in double), x
 *            clamped to +-9 and the result to +-1 (ONNX Runtime's approach, our own fit): no exponential,
 *            no select. Over every float with 2^-30 <= |x| <= 10: 5.32 ulp, 3.2e-7 absolute | 6.6 ulp.
 *   sigmoid  1 / (1 + e), e = e^-x for x clamped to [-80, 80] (e normal there) by a 16-entry table
 *            exponential (2^(k/16) from the table, |r| <= ln2/32, a cubic): no select; lanes below -80
 *            take e^x, computed only for a vector that has one. Every float in [-87, 30]: 3.2 ulp
 *            (AVX-512 3.17, AVX2 and portable 3.22), 9e-8 absolute.
 *   erf      |x| < 0.875: x P(x^2), P the degree-6 Chebyshev interpolant of erf(x)/x in x^2 (2e-10
 *            relative in double); else 1 - erfc(|x|) with erfc from a table of 16 degree-5
 *            polynomials over [0.875, 4.875) picked per lane (5e-9 absolute; on AVX2 8 degree-7
 *            ones, 1e-9).                                                            1.6 | 1.7 ulp
 *   GELU, erf form: x Phi(x), Phi(-a) = e^(-a^2/2) R(a) for a = |x| with R from a table of 16 degree-6
 *            polynomials picked per lane by the float bits of a + 1 (6e-9 relative; on AVX2, where
 *            one vpermps reaches 8 entries, 8 degree-8 ones, 4e-9); a^2/2 carried exactly as p + err
 *            into the exponential; x Phi(-a) for x < 0, x - x Phi(-a) (one rounding) for x >= 0. No
 *            branch and no division.                                    2.7 (AVX2 2.71) | 3.0 ulp
 *   SiLU     x sigmoid(x), the sigmoid above (so a fused SiLU equals Sigmoid then Mul bit for bit): every
 *            float in [-87, 30]: 3.6 ulp.
 *   Mish     x tanh(softplus(x)) = x n / (n + 2) with n = u (u + 2), u = e^x (x clamped to 20, where the
 *            quotient is 1 in float): no cancellation for either sign.         rtol 1e-6 in the tests
 *   GELU, tanh form: x sigmoid(t), t = 2 sqrt(2/pi) (x + 0.044715 x^3) carried as two floats into the
 *            exponential (the sigmoid's tail multiplies t's error by |t|): from error-free FMA
 *            products and a two-sum, or in double without FMA; sigmoid(-s) as e / (1 + e).      3.6 ulp
 * The GELU figures count outputs above 1e-30 in magnitude; below it intermediate products go subnormal.
 * Division is a / b, or on AVX-512 the 14-bit reciprocal estimate with one correction step. The fitted
 * coefficients come from weighted least squares in double against the C library (each coefficient rounded
 * to float before the next one is fitted). */
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

/* 2^n for integer n in [-150, 128] given as float: two normal powers of two applied in turn. */
static inline vf vm_scale(vf p, vf n) {
  vi ni = __builtin_convertvector(n, vi);
  vi n1 = ni >> 1, n2 = ni - n1;
  vf s1 = (vf)((n1 + 127) << 23), s2 = (vf)((n2 + 127) << 23);
  return p * s1 * s2;
}

/* A 16-entry table lookup per lane (the low 4 bits of idx): the includer may define V_LOOKUP16(tab, idx)
 * with a permute instruction (tab 64-byte aligned); this fallback reads the table lane by lane. */
#ifndef V_LOOKUP16
static inline vf vm_lookup16(const float *tab, vi idx) {
  vf r;
  for (int i = 0; i < VW; i++) r[i] = tab[idx[i] & 15];
  return r;
}
#define V_LOOKUP16(tab, idx) vm_lookup16((tab), (idx))
#endif
#ifndef V_HAS_FMA
#define V_HAS_FMA 0 /* 1 when V_FMA rounds once (then fma(a, b, -a*b) is the exact product's error) */
#endif
/* a < b ? a : b, b when a is NaN (minps semantics). */
#ifndef V_MIN
#define V_MIN(a, b) vm_sel((vi)((a) < (b)), (a), (b))
#endif
/* x < y ? a : b per lane (the ISA may use a mask register and one blend). */
#ifndef V_SEL_LT
#define V_SEL_LT(x, y, a, b) vm_sel((vi)((x) < (y)), (a), (b))
#endif
/* a > b ? a : b, b when a is NaN (maxps semantics). */
#ifndef V_MAX
#define V_MAX(a, b) vm_sel((vi)((a) > (b)), (a), (b))
#endif
/* p 2^n for integer-valued n in [-400, 128], rounded once into the subnormal range (0 below it) and inf
 * above the largest float; the fallback clamps n to -151 and applies two normal powers of two. */
#ifndef V_SCALE
#define V_SCALE(p, n) vm_scale((p), V_MAX((n), vm_splat(-151.0f))) /* NaN n -> -151: p is NaN then */
#endif
/* p 2^n for the exponentials, n = round(a log2(e)) for an argument magnitude a >= 0: V_SCALE, or where the
 * ISA defines V_ALL_LT(x, c) (every lane x < c, false for NaN; AVX2, whose V_SCALE is the two-step
 * fallback) and every lane's a is below lim, n added to p's exponent field. The caller picks lim so that
 * the result is then normal (for p = 1 + r q in [0.7, 1.42], 86: n >= -125), where multiplying by powers of
 * two is exact: both give the same bits, whatever the other lanes of the vector hold. */
/* Exponent fields are added in unsigned lanes (the same bits): n < 0 shifted left as a signed value is undefined. */
typedef uint32_t vm_vu __attribute__((vector_size(sizeof(vi))));
#ifdef V_ALL_LT
#define VM_SCALE_EXP(p, n, a, lim)                                                                       \
  (V_ALL_LT((a), vm_splat(lim)) ? (vf)((vm_vu)(p) + ((vm_vu)__builtin_convertvector((n), vi) << 23)) \
                                : V_SCALE((p), (n)))
#else
#define VM_SCALE_EXP(p, n, a, lim) V_SCALE((p), (n))
#endif
/* a / b for a in [0, 1] and b in [1, 2] (NaN propagates); the ISA may use a refined reciprocal estimate. */
#ifndef V_DIV
#define V_DIV(a, b) ((a) / (b))
#endif

/* e^-(p + err) for p in [-89, 260] and a small correction err, as (1 + rq) 2^n: returns rq and sets *n.
 * Cody-Waite r = -p - n ln2 - err (the first step exact: n ln2hi has at most 18 bits and |r| < 1/2), and
 * e^r = 1 + r q(r), q of degree 5 fitted to e^r over |r| <= 0.3467 (3e-9 relative). Returning r q rather
 * than 1 + r q lets the caller fold the 1 into its next fused multiply-add, rounding once. */
static inline __attribute__((always_inline)) vf vm_exp_neg_parts(vf p, vf err, vf *n_out) {
  const vf magic = vm_splat(12582912.0f); /* 1.5 * 2^23: adding it rounds to an integer */
  vf n = V_FMA(p, vm_splat(-1.44269504088896341f), magic) - magic;
  vf r = V_FMA(n, vm_splat(-0.693359375f), -p);
  r = V_FMA(n, vm_splat(2.12194440e-4f), r) - err;
  vf q = vm_splat(1.38207339e-03f);
  q = V_FMA(q, r, vm_splat(8.36867560e-03f));
  q = V_FMA(q, r, vm_splat(4.16682661e-02f));
  q = V_FMA(q, r, vm_splat(1.66665211e-01f));
  q = V_FMA(q, r, vm_splat(4.99999940e-01f));
  q = V_FMA(q, r, vm_splat(1.0f));
  *n_out = n;
  return r * q;
}

/* e^x: (1 + r q) 2^n from vm_exp_neg_parts on x clamped to [-104, 89] (beyond them the power of two makes
 * 0 and inf); NaN passes through the clamps and the arithmetic. */
static inline __attribute__((always_inline)) vf vm_exp(vf x) {
  vf xc = V_MIN(vm_splat(89.0f), V_MAX(vm_splat(-104.0f), x));
  vf n, rq = vm_exp_neg_parts(-xc, vm_splat(0.0f), &n);
  return VM_SCALE_EXP(1.0f + rq, n, vm_abs(xc), 86.0f);
}

/* tanh: x P(s) / Q(s) with s = x^2 and x clamped to +-9 (where tanh rounds to +-1 in float), the result
 * clamped to [-1, 1] (the quotient passes 1 near 8.2, by rounding, and beyond 8.5, where it was not fitted):
 * P and Q of degree 4 in s with P(0) = Q(0) = 1, fitted for the relative error over [0, 8.5] (2e-8 in
 * double; the float evaluation brings it to 5.32 ulp, near 1). The quotient P / Q is in (0.11, 1], so x
 * times it keeps -0 and is x for tiny and subnormal x; NaN passes through the clamps and the arithmetic.
 * A rational function as ONNX Runtime's MLAS uses (its own fit): no exponential and no select. */
static inline __attribute__((always_inline)) vf vm_tanh(vf x) {
  vf xc = V_MIN(vm_splat(9.0f), V_MAX(vm_splat(-9.0f), x)); /* NaN stays (minps / maxps keep the second) */
  vf s = xc * xc;
  vf p = vm_splat(1.433338781e-08f), q = vm_splat(8.172040111e-07f);
  p = V_FMA(p, s, vm_splat(2.129965469e-05f));
  q = V_FMA(q, s, vm_splat(3.353799402e-04f));
  p = V_FMA(p, s, vm_splat(3.537095152e-03f));
  q = V_FMA(q, s, vm_splat(2.603455447e-02f));
  p = V_FMA(p, s, vm_splat(1.341587305e-01f));
  q = V_FMA(q, s, vm_splat(4.674919844e-01f));
  p = V_FMA(p, s, vm_splat(1.0f));
  q = V_FMA(q, s, vm_splat(1.0f));
  return V_MIN(vm_splat(1.0f), V_MAX(vm_splat(-1.0f), xc * V_DIV(p, q)));
}

/* Some lane x < c (false for NaN): the ISA may define it with one compare into a mask. */
#ifndef V_ANY_LT
static inline bool vm_any_lt(vf x, float c) {
  vi m = (vi)(x < vm_splat(c));
  int any = 0;
  for (int i = 0; i < VW; i++) any |= m[i];
  return any != 0;
}
#define V_ANY_LT(x, c) vm_any_lt((x), (c))
#endif

/* 2^(j/16) for j = 0..15 rounded to float, each encoding less j << 19: adding k << 19 for any integer k
 * with k = j mod 16 then gives 2^(k/16) exactly (the difference (k - j) / 16 lands in the exponent field). */
static const uint32_t vm_exp16_tab[16] __attribute__((aligned(64))) = {
    0x3f800000u, 0x3f7daac3u, 0x3f7b95c2u, 0x3f79c3d3u, 0x3f7837f0u, 0x3f76f532u, 0x3f75fed7u, 0x3f75583fu,
    0x3f7504f3u, 0x3f7508a4u, 0x3f75672au, 0x3f76248cu, 0x3f7744fdu, 0x3f78ccdfu, 0x3f7ac0c7u, 0x3f7d257du};

/* e^-p for p in [-80, 80] (a normal result): k = round(-16 p / ln2) (the magic constant's add leaves k in
 * the low bits of y), r = -p - k ln2/16 in two exact-product steps (|r| <= ln2/32), 2^(k/16) from the
 * table (vpermps on AVX-512) and k's bits shifted into the exponent field, e^r = 1 + r + r^2/2 + r^3/6
 * (9e-9 relative): 2^(k/16) (1 + r q) with one rounding at the end. NaN p gives NaN. Shorter than
 * vm_exp_neg_parts (its chain of dependent operations too), for the sigmoid. */
static inline __attribute__((always_inline)) vf vm_exp_neg_normal(vf p) {
  const vf magic = vm_splat(12582912.0f); /* 1.5 * 2^23 */
  vf y = V_FMA(p, vm_splat(-23.08312065f), magic);
  vf k = y - magic;
  vf r = V_FMA(k, vm_splat(-0.0433197021484375f), -p); /* ln2/16 to 12 bits: k times it is exact */
  r = V_FMA(k, vm_splat(-1.996636559e-06f), r);
  vf t = V_LOOKUP16((const float *)vm_exp16_tab, (vi)y);
  vf s = (vf)((vm_vu)t + ((vm_vu)y << 19));
  vf q = V_FMA(vm_splat(1.66666672e-01f), r, vm_splat(0.5f));
  q = V_FMA(q, r, vm_splat(1.0f));
  return V_FMA(s * r, q, s);
}

/* sigmoid: 1 / (1 + e) with e = e^-x for x clamped to [-80, 80] (no cancellation for either sign: 1 + e
 * >= 1, and for x < 0 the quotient's relative error is e's); the lanes with x < -80, whose result
 * 1 / (1 + e^-x) = e^x within 1e-34 relative is at most 2e-35 and goes subnormal from -87.3, take e^x
 * (computed only when a vector has such a lane: the other lanes get the same bits either way). */
static inline __attribute__((always_inline)) vf vm_sigmoid(vf x) {
  vf xc = V_MIN(vm_splat(80.0f), V_MAX(vm_splat(-80.0f), x)); /* NaN stays */
  vf y = V_DIV(vm_splat(1.0f), 1.0f + vm_exp_neg_normal(xc));
  if (__builtin_expect(V_ANY_LT(x, -80.0f), 0)) y = V_SEL_LT(x, vm_splat(-80.0f), vm_exp(x), y);
  return y;
}

/* Mish: x tanh(ln(1 + u)) with u = e^x is x n / (n + 2), n = u (u + 2) (from tanh(ln w) = (w^2 - 1) /
 * (w^2 + 1) with w = 1 + u); x clamped to 20 for u (n / (n + 2) is 1 in float there); -inf gives NaN (-inf
 * times 0), as x * Tanh(Softplus(x)) does. */
static inline vf vm_mish(vf x) {
  vf u = vm_exp(V_MIN(vm_splat(20.0f), x)); /* NaN stays */
  vf n = u * (u + 2.0f);
  return x * (n / (n + 2.0f));
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

/* erfc(z) for z in [0.875, 4.875) on 16 intervals of width 1/4 (slot k = floor((z - 0.875) 4)): per slot
 * the centre 1 + k / 4, then c0..c5 of erfc(centre + u) = c0 + c1 u + ... + c5 u^5, fitted (weighted
 * Lawson least squares, each coefficient rounded to float before the next) to the double C library's erfc
 * within 5e-9 absolute, which is what 1 - erfc needs. */
static const float vm_erfc_tab[7][16] __attribute__((aligned(64))) = {
    {1.00000000e+00f, 1.25000000e+00f, 1.50000000e+00f, 1.75000000e+00f,  /* centre */
     2.00000000e+00f, 2.25000000e+00f, 2.50000000e+00f, 2.75000000e+00f,
     3.00000000e+00f, 3.25000000e+00f, 3.50000000e+00f, 3.75000000e+00f,
     4.00000000e+00f, 4.25000000e+00f, 4.50000000e+00f, 4.75000000e+00f},
    {1.57299206e-01f, 7.70998672e-02f, 3.38948518e-02f, 1.33283278e-02f,  /* c0 */
     4.67773480e-03f, 1.46271696e-03f, 4.06952342e-04f, 1.00622121e-04f,
     2.20905858e-05f, 4.30281125e-06f, 7.43107762e-07f, 1.13729591e-07f,
     1.54177506e-08f, 1.85066329e-09f, 1.96629921e-10f, 1.84869117e-11f},
    {-4.15107489e-01f, -2.36521125e-01f, -1.18930288e-01f, -5.27749918e-02f,  /* c1 */
     -2.06669848e-02f, -7.14231888e-03f, -2.17828457e-03f, -5.86277689e-04f,
     -1.39253330e-04f, -2.91891483e-05f, -5.39946859e-06f, -8.81443952e-07f,
     -1.26985100e-07f, -1.61445399e-08f, -1.81139781e-09f, -1.79356849e-10f},
    {4.15108621e-01f, 2.95655668e-01f, 1.78397924e-01f, 9.23574567e-02f,  /* c2 */
     4.13341112e-02f, 1.60698146e-02f, 5.44532947e-03f, 1.61203428e-03f,
     4.17657255e-04f, 9.48278466e-05f, 1.88872000e-05f, 3.30268654e-06f,
     5.07362472e-07f, 6.85094790e-08f, 8.13493539e-09f, 8.49741333e-10f},
    {-1.38370112e-01f, -1.67534873e-01f, -1.38753042e-01f, -9.01589841e-02f,  /* c3 */
     -4.82233837e-02f, -2.17246749e-02f, -8.34994204e-03f, -2.76020588e-03f,
     -7.88987556e-04f, -1.95760062e-04f, -4.22785452e-05f, -7.96485074e-06f,
     -1.31103570e-06f, -1.88798452e-07f, -2.38116975e-08f, -2.63247979e-09f},
    {-6.93262890e-02f, 5.55867143e-03f, 4.41551022e-02f, 4.78927605e-02f,  /* c4 */
     3.44284847e-02f, 1.91514306e-02f, 8.68772902e-03f, 3.29700881e-03f,
     1.06175814e-03f, 2.92781857e-04f, 6.95547642e-05f, 1.42977315e-05f,
     2.55134591e-06f, 3.96199226e-07f, 5.36470459e-08f, 6.34369313e-09f},
    {6.89797997e-02f, 4.70763445e-02f, 1.49996625e-02f, -6.43801223e-03f,  /* c5 */
     -1.30121522e-02f, -1.06401090e-02f, -6.13379199e-03f, -2.77576968e-03f,
     -1.02874858e-03f, -3.19133833e-04f, -8.39436616e-05f, -1.88835620e-05f,
     -3.65420419e-06f, -6.10935729e-07f, -8.85275142e-08f, -1.11470486e-08f},
};

/* The same erfc on 8 intervals of width 1/2 for ISAs with V_LOOKUP8 (slot k = floor((z - 0.875) 2), centre
 * 1.125 + k / 2), c0..c7 of a degree-7 polynomial fitted as above: 1e-9 absolute. */
static const float vm_erfc8_tab[9][8] __attribute__((aligned(32))) = {
    {1.12500000e+00f, 1.62500000e+00f, 2.12500000e+00f, 2.62500000e+00f,  /* centre */
     3.12500000e+00f, 3.62500000e+00f, 4.12500000e+00f, 4.62500000e+00f},
    {1.11611769e-01f, 2.15562675e-02f, 2.65402952e-03f, 2.05375734e-04f,  /* c0 */
     9.89672117e-06f, 2.95137738e-07f, 5.42322542e-09f, 6.12100370e-11f},
    {-3.18273962e-01f, -8.04722607e-02f, -1.23408213e-02f, -1.14787521e-03f,  /* c1 */
     -6.47586639e-05f, -2.21591063e-06f, -4.59890188e-08f, -5.78888382e-10f},
    {3.58058393e-01f, 1.30767241e-01f, 2.62241624e-02f, 3.01317056e-03f,  /* c2 */
     2.02377661e-04f, 8.03396597e-06f, 1.89798101e-07f, 2.68063638e-09f},
    {-1.62452087e-01f, -1.14840537e-01f, -3.30373235e-02f, -4.89040604e-03f,  /* c3 */
     -4.00023418e-04f, -1.86754460e-05f, -5.06533581e-07f, -8.06975020e-09f},
    {-2.79961247e-02f, 4.97248285e-02f, 2.63674222e-02f, 5.41446824e-03f,  /* c4 */
     5.57032705e-04f, 3.10684300e-05f, 9.74022782e-07f, 1.75070660e-08f},
    {6.13166615e-02f, 2.13786121e-03f, -1.24986731e-02f, -4.21901047e-03f,  /* c5 */
     -5.76772727e-04f, -3.95082061e-05f, -1.45885724e-06f, -3.00812353e-08f},
    {-1.48528609e-02f, -1.44328717e-02f, 1.65078230e-03f, 2.24205037e-03f,  /* c6 */
     4.66179423e-04f, 4.20804136e-05f, 1.93598225e-06f, 4.83546572e-08f},
    {-9.52200778e-03f, 6.03537168e-03f, 1.92020251e-03f, -6.58056291e-04f,  /* c7 */
     -2.70210236e-04f, -3.30957337e-05f, -1.87142746e-06f, -5.48337056e-08f},
};

/* erfc(z) for z = min(|x|, 4.87) in [0.875, 4.87] (NaN for NaN x) from the table of this ISA; zc is z with
 * NaN as 4.87, for the slot. */
static inline __attribute__((always_inline)) vf vm_erfc_big(vf zc, vf z) {
#ifdef V_LOOKUP8
  vi slot = __builtin_convertvector(V_FMA(zc, vm_splat(2.0f), vm_splat(-1.75f)), vi);
#define VM_E8(k) V_LOOKUP8(vm_erfc8_tab[k], slot)
  vf u = z - VM_E8(0), t = VM_E8(8);
  t = V_FMA(t, u, VM_E8(7));
  t = V_FMA(t, u, VM_E8(6));
  t = V_FMA(t, u, VM_E8(5));
  t = V_FMA(t, u, VM_E8(4));
  t = V_FMA(t, u, VM_E8(3));
  t = V_FMA(t, u, VM_E8(2));
  return V_FMA(t, u, VM_E8(1));
#undef VM_E8
#else
  vi slot = __builtin_convertvector(V_FMA(zc, vm_splat(4.0f), vm_splat(-3.5f)), vi);
  vf u = z - V_LOOKUP16(vm_erfc_tab[0], slot);
  vf t = V_LOOKUP16(vm_erfc_tab[6], slot);
  t = V_FMA(t, u, V_LOOKUP16(vm_erfc_tab[5], slot));
  t = V_FMA(t, u, V_LOOKUP16(vm_erfc_tab[4], slot));
  t = V_FMA(t, u, V_LOOKUP16(vm_erfc_tab[3], slot));
  t = V_FMA(t, u, V_LOOKUP16(vm_erfc_tab[2], slot));
  return V_FMA(t, u, V_LOOKUP16(vm_erfc_tab[1], slot));
#endif
}

/* erf: |x| < 0.875: x P(x^2); else 1 - erfc(|x|) from the table (|x| clamped to 4.87: erfc is below
 * 2^-30 there), sign restored. */
static inline vf vm_erf(vf x) {
  vf ax = vm_abs(x);
  vf small = x * vm_erf_small(x * x);
  vf zc = V_MIN(ax, vm_splat(4.87f)); /* NaN -> 4.87 for the slot (no NaN conversion); u keeps it */
  vf t = vm_erfc_big(zc, V_MIN(vm_splat(4.87f), ax)); /* the second min keeps NaN */
  vf big = vm_copysign(1.0f - t, x);
  return V_SEL_LT(ax, vm_splat(0.875f), small, big);
}

/* R(a) = Phi(-a) e^(a^2/2) for a in [0, 15) on 16 intervals of b = a + 1: [1, 2) in quarters, [2, 4) in
 * halves, [4, 8) in units, [8, 16) in twos, so the slot is bits 21..24 of b's float encoding (the low two
 * exponent bits and the top two mantissa bits): slot 12..15 for a in [0, 1), 0..3 for [1, 3), 4..7 for
 * [3, 7), 8..11 for [7, 15). Per slot: the centre c (chosen where R(c) is nearly a float), then the
 * coefficients c0..c6 of R(c + u) = c0 + c1 u + ... + c6 u^6, fitted (weighted Lawson least squares, each
 * coefficient rounded to float before the next is fitted) to the double C library's erfc: 6e-9 relative. */
static const float vm_gelu_r_tab[8][16] __attribute__((aligned(64))) = {
    {1.24477088e+00f, 1.78514588e+00f, 2.25329161e+00f, 2.74514580e+00f,  /* centre */
     3.48141670e+00f, 4.48595810e+00f, 5.55866671e+00f, 6.54466677e+00f,
     7.86299992e+00f, 1.00270004e+01f, 1.20866671e+01f, 1.39201670e+01f,
     1.41385421e-01f, 3.57947916e-01f, 6.10468745e-01f, 8.71020854e-01f},
    {2.31339365e-01f, 1.82636395e-01f, 1.53476924e-01f, 1.30916491e-01f,  /* c0 */
     1.06844179e-01f, 8.50473717e-02f, 6.96421862e-02f, 5.96233346e-02f,
     4.99529429e-02f, 3.94023322e-02f, 3.27853560e-02f, 2.85136327e-02f,
     4.48240548e-01f, 3.84021372e-01f, 3.26237857e-01f, 2.80385077e-01f},
    {-1.10977776e-01f, -7.29096755e-02f, -5.31140156e-02f, -3.95574234e-02f,  /* c1 */
     -2.69731749e-02f, -1.74233355e-02f, -1.18245790e-02f, -8.72742385e-03f,
     -6.16229558e-03f, -3.85507941e-03f, -2.67659756e-03f, -2.02775211e-03f,
     -3.35567594e-01f, -2.61482626e-01f, -1.99784264e-01f, -1.54721037e-01f},
    {4.65987250e-02f, 2.62409970e-02f, 1.68977771e-02f, 1.11627951e-02f,  /* c2 */
     6.46966556e-03f, 3.44351027e-03f, 1.95664796e-03f, 1.25262584e-03f,
     7.49406638e-04f, 3.73726536e-04f, 2.17107125e-04f, 1.43492347e-04f,
     2.00398102e-01f, 1.45212099e-01f, 1.02137901e-01f, 7.28099123e-02f},
    {-1.76572036e-02f, -8.68824683e-03f, -5.01279859e-03f, -2.97137862e-03f,  /* c3 */
     -1.48303725e-03f, -6.58595702e-04f, -3.16071149e-04f, -1.76472298e-04f,
     -8.98865183e-05f, -3.59048390e-05f, -1.74977158e-05f, -1.01046417e-05f,
     -1.02413446e-01f, -6.98359758e-02f, -4.58109565e-02f, -3.04326173e-02f},
    {6.15510624e-03f, 2.68256688e-03f, 1.40063232e-03f, 7.51606596e-04f,  /* c4 */
     3.26560694e-04f, 1.22247235e-04f, 4.98983027e-05f, 2.44194180e-05f,
     1.06554298e-05f, 3.41984583e-06f, 1.40154395e-06f, 7.08302025e-07f,
     4.64714728e-02f, 3.00587844e-02f, 1.85445286e-02f, 1.15747461e-02f},
    {-2.01710593e-03f, -7.87572702e-04f, -3.72909417e-04f, -1.81371201e-04f,  /* c5 */
     -7.05007769e-05f, -2.23412990e-05f, -7.77905461e-06f, -3.32634454e-06f,
     -1.26532302e-06f, -3.28293169e-07f, -1.13127811e-07f, -4.97163803e-08f,
     -1.90852303e-02f, -1.17608840e-02f, -6.89781923e-03f, -4.15048329e-03f},
    {6.08957023e-04f, 2.18140747e-04f, 9.44884887e-05f, 4.11384135e-05f,  /* c6 */
     1.41689752e-05f, 3.85822477e-06f, 1.25338511e-06f, 4.73554564e-07f,
     1.32269648e-07f, 3.06899750e-08f, 8.92620644e-09f, 3.31662875e-09f,
     8.04020558e-03f, 3.84304719e-03f, 2.26807618e-03f, 1.41840149e-03f},
};

/* The same R(a) on 8 intervals of b = a + 1 for ISAs whose table lookup reaches 8 entries in one instruction
 * (V_LOOKUP8, AVX2's vpermps): [1, 2) and [2, 4) in halves, [4, 8) and [8, 16) in halves of 2 and 4, so
 * the slot is bits 22..24 of b's float encoding: slot 6..7 for a in [0, 1), 0..1 for [1, 3), 2..3 for
 * [3, 7), 4..5 for [7, 15). Per slot the centre (near the middle, where R(c) is nearly a float), then
 * c0..c8 of the degree-8 polynomial in u = a - centre, fitted as the 16-slot table (4e-9 relative). */
static const float vm_gelu_r8_tab[10][8] __attribute__((aligned(32))) = {
    {1.50950003e+00f, 2.46849990e+00f, 4.05999994e+00f, 6.07499981e+00f,  /* centre */
     8.84899998e+00f, 1.31409998e+01f, 2.45875001e-01f, 7.74749994e-01f},
    {2.04926252e-01f, 1.42781839e-01f, 9.31490362e-02f, 6.40181825e-02f,  /* c0 */
     4.45283391e-02f, 3.01857609e-02f, 4.15253669e-01f, 2.95983195e-01f},
    {-8.96060988e-02f, -4.64853272e-02f, -2.07571983e-02f, -1.00318342e-02f,  /* c1 */
     -4.91100876e-03f, -2.27120239e-03f, -2.96841770e-01f, -1.69629306e-01f},
    {3.48329246e-02f, 1.40164085e-02f, 4.43740282e-03f, 1.53739506e-03f,  /* c2 */
     5.35410480e-04f, 1.69945910e-04f, 1.71133831e-01f, 8.22814479e-02f},
    {-1.23419026e-02f, -3.96189746e-03f, -9.13791184e-04f, -2.30719335e-04f,  /* c3 */
     -5.77239371e-05f, -1.26472951e-05f, -8.49232227e-02f, -3.52933593e-02f},
    {4.05067857e-03f, 1.05906569e-03f, 1.81884519e-04f, 3.39471953e-05f,  /* c4 */
     6.15490353e-06f, 9.36308311e-07f, 3.75655144e-02f, 1.37346778e-02f},
    {-1.24536676e-03f, -2.69852753e-04f, -3.50256341e-05f, -4.89912964e-06f,  /* c5 */
     -6.48083585e-07f, -6.90805280e-08f, -1.50777455e-02f, -4.95001068e-03f},
    {3.61703511e-04f, 6.59421348e-05f, 6.52973085e-06f, 6.90509353e-07f,  /* c6 */
     6.83277293e-08f, 4.98134645e-09f, 5.57008479e-03f, 1.62876665e-03f},
    {-1.02408856e-04f, -1.47637738e-05f, -1.27866986e-06f, -1.00182042e-07f,  /* c7 */
     -7.61644436e-09f, -3.46678852e-10f, -2.53110239e-03f, -3.27229587e-04f},
    {2.72635025e-05f, 2.51892357e-06f, 2.48144602e-07f, 1.60995519e-08f,  /* c8 */
     6.83910317e-10f, 4.26779445e-11f, 1.34319079e-03f, 5.17096254e-04f},
};

/* R(a) for a in [0, 15) from the table of this ISA: 8 slots of degree 8 with V_LOOKUP8, else 16 of degree 6. */
static inline __attribute__((always_inline)) vf vm_gelu_r(vf ac) {
#ifdef V_LOOKUP8
  vi slot = (vi)(ac + 1.0f) >> 22;
#define VM_R8(k) V_LOOKUP8(vm_gelu_r8_tab[k], slot)
  vf u = ac - VM_R8(0), rr = VM_R8(9);
  rr = V_FMA(rr, u, VM_R8(8));
  rr = V_FMA(rr, u, VM_R8(7));
  rr = V_FMA(rr, u, VM_R8(6));
  rr = V_FMA(rr, u, VM_R8(5));
  rr = V_FMA(rr, u, VM_R8(4));
  rr = V_FMA(rr, u, VM_R8(3));
  rr = V_FMA(rr, u, VM_R8(2));
  return V_FMA(rr, u, VM_R8(1));
#undef VM_R8
#else
  vi slot = (vi)(ac + 1.0f) >> 21;
  vf u = ac - V_LOOKUP16(vm_gelu_r_tab[0], slot);
  vf rr = V_LOOKUP16(vm_gelu_r_tab[7], slot);
  rr = V_FMA(rr, u, V_LOOKUP16(vm_gelu_r_tab[6], slot));
  rr = V_FMA(rr, u, V_LOOKUP16(vm_gelu_r_tab[5], slot));
  rr = V_FMA(rr, u, V_LOOKUP16(vm_gelu_r_tab[4], slot));
  rr = V_FMA(rr, u, V_LOOKUP16(vm_gelu_r_tab[3], slot));
  rr = V_FMA(rr, u, V_LOOKUP16(vm_gelu_r_tab[2], slot));
  return V_FMA(rr, u, V_LOOKUP16(vm_gelu_r_tab[1], slot));
#endif
}

/* x * Phi(x) with Phi(x) = 1 - Phi(-x) and Phi(-a) = e^(-a^2/2) R(a), a = |x|, one formula for every x:
 * a^2/2 is carried as p + err (exact: err by FMA, or by splitting a at 12 bits without FMA), e^(-p - err)
 * as 2^n e^r with r = -p - n ln2 - err and e^r by a degree-6 polynomial (5e-9 relative), and R by
 * vm_gelu_r. For a > 13.2 the power of two is flushed to 0 (the result is below 1e-36 in magnitude). */
static inline __attribute__((always_inline)) vf vm_gelu_erf(vf x) {
  vf ac = V_MIN(vm_abs(x), vm_splat(14.75f)); /* NaN -> 14.75 (x * anything stays NaN) */
#if V_HAS_FMA
  vf h = ac * 0.5f, p = ac * h, err = V_FMA(ac, h, -p);
#else
  vf ah = (vf)((vi)ac & vm_splati((int32_t)0xfffff000u)), al = ac - ah;
  vf p = ah * ah * 0.5f, err = ((ah + ah + al) * al) * 0.5f;
#endif
  vf n, rq = vm_exp_neg_parts(p, err, &n);
  vf rr = vm_gelu_r(ac);
  vf left = VM_SCALE_EXP(V_FMA(rr, rq, rr), n, p, 80.0f); /* Phi(-a) = R e^r 2^n; R e^r >= 0.019: normal */
  /* x >= 0: x - x Phi(-x) with one rounding, ac for x so that +inf gives +inf (its Phi(-a) is 0) */
  return V_SEL_LT(x, vm_splat(0.0f), x * left, V_FMA(-ac, left, x));
}

/* s = 2 sqrt(2/pi) (a + 0.044715 a^3) = c1 a + c3 a^3 for a >= 0 as hi + lo floats, within 2^-40 s: with
 * FMA by error-free products and a two-sum (c1, c3 themselves as float pairs), else in double. */
static inline __attribute__((always_inline)) vf vm_gelu_tanh_arg(vf a, vf *lo) {
#if V_HAS_FMA
  const vf c1h = vm_splat(1.595769167e+00f), c1l = vm_splat(-4.534068054e-08f);
  const vf c3h = vm_splat(7.135481387e-02f), c3l = vm_splat(2.398832466e-09f);
  vf a2 = a * a, a2l = V_FMA(a, a, -a2);     /* a^2 = a2 + a2l */
  vf v = c3h * a2, vl = V_FMA(c3h, a2, -v); /* c3h a2 = v + vl */
  vl = V_FMA(c3l, a2, V_FMA(c3h, a2l, vl)); /* c3 a^2 = v + vl */
  vf w = c1h + v, bv = w - c1h;
  vf wl = ((c1h - (w - bv)) + (v - bv)) + (vl + c1l); /* c1 + c3 a^2 = w + wl */
  vf hi = a * w;
  *lo = V_FMA(a, wl, V_FMA(a, w, -hi));
  return hi;
#else
  vd ad = __builtin_convertvector(a, vd);
  vd sd = ad * (ad * ad * 0.044715 + 1.0) * 1.5957691216057307118;
  vf hi = __builtin_convertvector(sd, vf);
  *lo = __builtin_convertvector(sd - __builtin_convertvector(hi, vd), vf);
  return hi;
#endif
}

/* x sigmoid(t), t = 2 sqrt(2/pi) (x + 0.044715 x^3): equal to 0.5 x (1 + tanh(t / 2)) without its
 * cancellation. With a = |x| and s = t(a) >= 0, sigmoid(-s) = e / (1 + e), e = e^-s: x sigmoid(-s) for
 * x < 0 and x - x sigmoid(-s) for x >= 0. s is carried as hi + lo floats into the exponential (e^-s
 * multiplies s's error by s). */
static inline __attribute__((always_inline)) vf vm_gelu_tanh(vf x) {
  vf ac = V_MIN(vm_abs(x), vm_splat(14.75f)); /* s(14.75) = 252: e^-s is 0 in float; NaN -> 14.75 */
  vf lo, hi = vm_gelu_tanh_arg(ac, &lo);
  vf n, rq = vm_exp_neg_parts(hi, lo, &n);
  vf e = VM_SCALE_EXP(1.0f + rq, n, hi, 86.0f);
  vf left = V_DIV(e, 1.0f + e); /* sigmoid(-s), in [0, 1/2] */
  return V_SEL_LT(x, vm_splat(0.0f), x * left, V_FMA(-ac, left, x));
}

#endif
