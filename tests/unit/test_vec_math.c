/* The vectorised fp32 math of the level-2 kernels (src/backend/cpu/kernels/fast/vec/vec_math.h) on every
 * vec_ops table the CPU runs (AVX-512, AVX2, portable): the error in units of the fp32 result's last place
 * against the double C library result over dense sweeps (500,001 evenly spaced points per range, plus
 * every power of two scale from 2^-60 to 1 for the small-argument branches), the special values
 * (NaN, +-inf, +-0, overflow and underflow edges), and the blocked sums and moments against double.
 *
 * The bounds asserted are the measured maxima over every float of the range (stated in vec_math.h) rounded
 * up: exp 2 ulp, tanh 6 (7 portable, no FMA; a rational function since issue 16, 2 before), sigmoid 3.5
 * (3 before the table exponential), erf 2, GELU erf form 3, GELU tanh form 4, the GELU ones over outputs above 1e-30 in magnitude
 * (smaller outputs come from subnormal intermediates). GELU (erf form) and erf also at both ends of every
 * interval of their coefficient tables, and every function with the lanes of a vector taking different
 * paths. */
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include "backend/cpu/kernels/fast/vec/vec_ops.h"
#include "core/convert_features.h"
#include "test_util.h"

static const vec_ops *const tables[3] = {&tb_vec_ops_avx512, &tb_vec_ops_avx2, &tb_vec_ops_portable};

/* The tables this CPU runs: the AVX-512 one needs AVX512F + FMA, the AVX2 one AVX2 + FMA. */
static bool table_runs(int p) {
  uint64_t hw = tb_convert_hardware_features(), fma = TB_FEATURE_BIT(TB_FEATURE_FMA);
  if (p == 0) return (hw & (TB_FEATURE_BIT(TB_FEATURE_AVX512F) | fma)) == (TB_FEATURE_BIT(TB_FEATURE_AVX512F) | fma);
  if (p == 1) return (hw & (TB_FEATURE_BIT(TB_FEATURE_AVX2) | fma)) == (TB_FEATURE_BIT(TB_FEATURE_AVX2) | fma);
  return true;
}

static double gelu_erf(double v) { return 0.5 * v * erfc(-v * 0.70710678118654752440); }
static double gelu_tanh(double v) {
  double u = 0.79788456080286535588 * (v + 0.044715 * v * v * v);
  return v / (1.0 + exp(-2.0 * u)); /* = 0.5 v (1 + tanh u), without the cancellation */
}
static double sigmoid(double v) { return 1.0 / (1.0 + exp(-v)); }
static double silu(double v) { return v * sigmoid(v); }
static double mish(double v) { return v * tanh(v > 0 ? v + log1p(exp(-v)) : log1p(exp(v))); }

/* |got - ref| in units of the last place of ref rounded to fp32 (2^-149 in the subnormal range). */
static double ulps(float got, double ref) {
  float rf = (float)ref;
  if (isnan(ref)) return isnan(got) ? 0 : INFINITY;
  if (isinf(rf)) return got == rf ? 0 : INFINITY;
  double u = fabs(ref) < 0x1p-126 ? 0x1p-149 : (double)(nextafterf(fabsf(rf), INFINITY) - fabsf(rf));
  return fabs((double)got - ref) / u;
}

enum { MISH_BOUND = 5 };
typedef struct sweep {
  vec_unop op;
  double (*f)(double);
  double lo, hi, min_ref; /* results below min_ref in magnitude are not counted */
  double bound, portable_bound; /* the second for the portable table (no FMA) where it differs, else 0 */
  const char *name;
} sweep;

static const sweep sweeps[] = {
    {VEC_EXP, exp, -103.9, 88.7, 0x1p-126, 2, 0, "exp"},
    {VEC_TANH, tanh, -10, 10, 0, 6, 7, "tanh"},
    {VEC_SIGMOID, sigmoid, -87, 30, 0x1p-126, 3.5, 0, "sigmoid"},
    {VEC_ERF, erf, -5, 5, 0, 2, 0, "erf"},
    {VEC_GELU_ERF, gelu_erf, -15, 10, 1e-30, 3, 0, "gelu(erf)"},
    {VEC_GELU_TANH, gelu_tanh, -15, 10, 1e-30, 4, 0, "gelu(tanh)"},
    {VEC_SILU, silu, -87, 30, 0x1p-126, 4, 0, "silu"},
    {VEC_MISH, mish, -87, 30, 0x1p-126, MISH_BOUND, 0, "mish"},
};

static void check_points(int p, const sweep *s, const float *x, float *y, int64_t n, const char *range) {
  tables[p]->unary(s->op, x, y, n);
  double worst = 0;
  float at = 0;
  for (int64_t i = 0; i < n; i++) {
    double ref = s->f((double)x[i]);
    if (fabs(ref) < s->min_ref) continue;
    double e = ulps(y[i], ref);
    if (e > worst) worst = e, at = x[i];
  }
  double bound = p == 2 && s->portable_bound > 0 ? s->portable_bound : s->bound;
  print_message("%-10s %-8s %-6s max %.2f ulp at x = %.9g\n", s->name, tables[p]->name, range, worst, at);
  if (!(worst <= bound))
    fail_msg("%s on %s: %.2f ulp at x = %.9g (bound %g)", s->name, tables[p]->name, worst, at, bound);
}

static void math_sweeps_within_bounds(void **state) {
  (void)state;
  enum { N = 500001 };
  float *x = malloc(N * sizeof(float)), *y = malloc(N * sizeof(float));
  assert_true(x && y);
  for (int p = 0; p < 3; p++) {
    if (!table_runs(p)) continue;
    for (size_t k = 0; k < sizeof sweeps / sizeof sweeps[0]; k++) {
      const sweep *s = &sweeps[k];
      for (int64_t i = 0; i < N; i++) x[i] = (float)(s->lo + (s->hi - s->lo) * (double)i / (N - 1));
      check_points(p, s, x, y, N, "dense");
      /* small arguments of both signs: mantissas over [1, 2) at every scale 2^-60 .. 2^0 */
      for (int64_t i = 0; i < N; i++)
        x[i] = ldexpf(1.0f + (float)(i / 122) / (float)(N / 122), -(int)(i % 61)) * (i & 1 ? -1.0f : 1.0f);
      check_points(p, s, x, y, N, "small");
    }
  }
  free(x);
  free(y);
}

static void math_special_values(void **state) {
  (void)state;
  const float inf = INFINITY;
  const float x[] = {NAN,   inf,     -inf,   0.0f,    -0.0f,     89.0f,  -104.0f,
                     88.7f, -103.0f, 1e-30f, -1e-30f, 0x1p-140f, 100.0f, -100.0f};
  enum { N = sizeof x / sizeof x[0] };
  for (int p = 0; p < 3; p++) {
    if (!table_runs(p)) continue;
    const vec_ops *o = tables[p];
    float y[N];
    o->unary(VEC_EXP, x, y, N);
    assert_true(isnan(y[0]) && y[1] == inf && y[2] == 0 && y[3] == 1 && y[4] == 1 && y[5] == inf && y[6] == 0);
    assert_true(ulps(y[7], exp((double)x[7])) <= 2 && y[8] > 0 && ulps(y[8], exp((double)x[8])) <= 2 && y[9] == 1);
    o->unary(VEC_TANH, x, y, N);
    assert_true(isnan(y[0]) && y[1] == 1 && y[2] == -1 && y[3] == 0 && signbit(y[4]) && y[12] == 1 && y[13] == -1);
    assert_true(y[9] == 1e-30f && y[10] == -1e-30f && y[11] == 0x1p-140f);
    o->unary(VEC_SIGMOID, x, y, N);
    assert_true(isnan(y[0]) && y[1] == 1 && y[2] == 0 && y[3] == 0.5f && y[4] == 0.5f && y[12] == 1);
    assert_true(ulps(y[13], sigmoid(-100.0)) <= 3); /* subnormal 3.7e-44 */
    o->unary(VEC_ERF, x, y, N);
    assert_true(isnan(y[0]) && y[1] == 1 && y[2] == -1 && y[3] == 0 && signbit(y[4]) && y[12] == 1 && y[13] == -1);
    assert_true(ulps(y[9], erf(1e-30)) <= 1 && ulps(y[11], erf(0x1p-140)) <= 1);
    for (vec_unop g = VEC_GELU_ERF; g <= VEC_GELU_TANH; g++) { /* -inf gives NaN: -inf * 0, as the reference */
      o->unary(g, x, y, N);
      assert_true(isnan(y[0]) && y[1] == inf && isnan(y[2]) && y[3] == 0 && !signbit(y[3]) && y[4] == 0 &&
                  signbit(y[4]) && y[12] == 100 && y[13] == 0);
      assert_true(y[9] == 5e-31f && y[10] == -5e-31f && y[11] == 0x1p-141f && y[7] == 88.7f);
    }
    /* SiLU and Mish: -inf gives NaN (-inf * 0), as x * Sigmoid(x) and x * Tanh(Softplus(x)) do */
    for (vec_unop g = VEC_SILU; g <= VEC_MISH; g++) {
      o->unary(g, x, y, N);
      assert_true(isnan(y[0]) && y[1] == inf && isnan(y[2]) && y[3] == 0 && signbit(y[4]) && y[12] == 100 &&
                  y[13] > -1e-30f && y[13] <= 0);
    }
    o->unary(VEC_SILU, x, y, N);
    assert_true(y[9] == 5e-31f && y[10] == -5e-31f && y[11] == 0x1p-141f && y[7] == 88.7f);
    o->unary(VEC_MISH, x, y, N);
    assert_true(ulps(y[9], mish(1e-30)) <= 1 && ulps(y[11], mish(0x1p-140)) <= 1 && y[7] == 88.7f);
    /* the piecewise-linear ones with parameters: NaN kept, clamps exact */
    o->unary_p(VEC_HARD_SIGMOID, 0.2f, 0.5f, x, y, N);
    assert_true(isnan(y[0]) && y[1] == 1 && y[2] == 0 && y[3] == 0.5f && y[12] == 1 && y[13] == 0);
    o->unary_p(VEC_HARD_SWISH, 0, 0, x, y, N);
    assert_true(isnan(y[0]) && y[1] == inf && isnan(y[2]) && y[3] == 0 && y[12] == 100 && y[13] == 0);
    o->unary_p(VEC_LEAKY_RELU, 0.1f, 0, x, y, N);
    assert_true(isnan(y[0]) && y[1] == inf && y[2] == -inf && y[12] == 100 && y[13] == -10.0f);
    o->unary_p(VEC_CLIP, -1.0f, 6.0f, x, y, N);
    assert_true(isnan(y[0]) && y[1] == 6 && y[2] == -1 && y[3] == 0 && y[12] == 6 && y[13] == -1 && y[9] == 1e-30f);
    o->unary(VEC_RELU, x, y, N);
    assert_true(isnan(y[0]) && y[1] == inf && y[2] == 0 && y[3] == 0 && signbit(y[4]) &&
                y[13] == 0); /* -0 kept, as x < 0 ? 0 : x */
    o->unary(VEC_SQRT, x, y, N);
    assert_true(isnan(y[0]) && y[1] == inf && isnan(y[2]) && signbit(y[4]) && y[12] == 10 && isnan(y[13]));
    o->unary(VEC_RECIPROCAL, x, y, N);
    assert_true(isnan(y[0]) && y[1] == 0 && y[3] == inf && y[4] == -inf && y[12] == 0.01f);
    o->unary(VEC_NEG, x, y, N);
    assert_true(isnan(y[0]) && y[1] == -inf && y[2] == inf && signbit(y[3]) && !signbit(y[4]));
  }
}

/* GELU (erf form) and erf pick per lane one of 16 coefficient sets: GELU by |x| + 1 (bits of its float
 * encoding), so |x| = 0.25, 0.5, 0.75, 1, 1.5, ..., 3, 4, ..., 7, 9, 11, 13 are the interval ends; erf by
 * (|x| - 0.875) * 4, ends 0.875 + k / 4, 0.875 also where its small branch ends. Tanh clamps its argument
 * at 9 and its result at 1 (the quotient passes 1 from about 8.2), the sigmoid and SiLU switch to e^x below
 * -80. Check 8 floats on each side of every end, of both signs, against the bound (tanh's portable one). */
static void check_ends(vec_unop op, double (*f)(double), const float *ends, size_t n_ends, double bound,
                       const char *name) {
  enum { MAX_ENDS = 20, PER = 2 * 17 };
  float x[MAX_ENDS * PER], y[MAX_ENDS * PER];
  int64_t n = 0;
  assert_true(n_ends <= MAX_ENDS);
  for (size_t k = 0; k < n_ends; k++)
    for (int sign = 0; sign < 2; sign++) {
      float v = ends[k];
      for (int i = 0; i < 8; i++) v = nextafterf(v, 0);
      for (int i = 0; i < 17; i++, v = nextafterf(v, INFINITY)) x[n++] = sign ? -v : v;
    }
  for (int p = 0; p < 3; p++) {
    if (!table_runs(p)) continue;
    tables[p]->unary(op, x, y, n);
    for (int64_t i = 0; i < n; i++) {
      double ref = f((double)x[i]);
      if (fabs(ref) < 1e-30) continue;
      if (!(ulps(y[i], ref) <= bound))
        fail_msg("%s on %s at x = %.9g: %.2f ulp", name, tables[p]->name, x[i], ulps(y[i], ref));
    }
  }
}

static void table_interval_ends(void **state) {
  (void)state;
  /* the 16-slot table's ends of a = |x|; the AVX2 8-slot table's (0.5, 1, 2, 3, 5, 7, 11) are among them */
  static const float gelu_ends[] = {0.25f, 0.5f, 0.75f, 1, 1.5f, 2, 2.5f, 3, 4, 5, 6, 7, 9, 11, 13};
  float erf_ends[17];
  for (int k = 0; k < 17; k++) erf_ends[k] = 0.875f + 0.25f * (float)k;
  static const float tanh_ends[] = {8.16f, 8.2f, 8.5f, 9.0f}, sigmoid_ends[] = {80.0f};
  check_ends(VEC_GELU_ERF, gelu_erf, gelu_ends, sizeof gelu_ends / sizeof gelu_ends[0], 3, "gelu(erf)");
  check_ends(VEC_ERF, erf, erf_ends, 17, 2, "erf");
  check_ends(VEC_TANH, tanh, tanh_ends, 4, 7, "tanh");
  check_ends(VEC_SIGMOID, sigmoid, sigmoid_ends, 1, 3.5, "sigmoid");
  check_ends(VEC_SILU, silu, sigmoid_ends, 1, 4, "silu");
}

/* Each lane is computed on its own: a long array mixing NaN, infinities, zeros, tails and the middle gives,
 * element by element, what a call on that one element gives (the padded tail path), for every function. */
static void lanes_independent(void **state) {
  (void)state;
  static const float pool[] = {NAN,    INFINITY, -INFINITY, 0.0f,   -0.0f,  0.3f,  -0.3f,     1.9f,  -1.9f, 5.7f,
                               -5.7f, 12.5f,    -12.5f,    -13.6f, 14.9f, -100.0f, 1e-20f, -2.7f, 88.0f, -90.0f};
  enum { N = 77, NP = sizeof pool / sizeof pool[0] };
  static const vec_unop ops[] = {VEC_GELU_ERF, VEC_GELU_TANH, VEC_ERF,  VEC_TANH,
                                 VEC_SIGMOID,  VEC_EXP,       VEC_SILU, VEC_MISH};
  float x[N], y[N];
  for (int i = 0; i < N; i++) x[i] = pool[(i * 7 + i / NP) % NP];
  for (int p = 0; p < 3; p++) {
    if (!table_runs(p)) continue;
    for (size_t k = 0; k < sizeof ops / sizeof ops[0]; k++) {
      tables[p]->unary(ops[k], x, y, N);
      for (int i = 0; i < N; i++) {
        float one;
        tables[p]->unary(ops[k], &x[i], &one, 1);
        if (!(memcmp(&one, &y[i], sizeof one) == 0 || (isnan(one) && isnan(y[i]))))
          fail_msg("op %d on %s, x = %g: %.9g in a vector, %.9g alone", (int)ops[k], tables[p]->name, x[i], y[i], one);
      }
    }
  }
}

/* The exponentials' two ways to scale by 2^n (AVX2: an exponent-field add when every lane of the vector
 * keeps the result normal, else two powers of two; vec_math.h's VM_SCALE_EXP) give the same bits: every
 * x of a dense sweep over [-110, 110] (and the floats around the switch points 80 and 86 of each function's
 * argument) computed in a vector whose other lanes are 1 (the fast way where x allows it), in one whose
 * other lanes are NaN (always the two-step way) and in one whose other lanes are -100 (the sigmoid's and
 * SiLU's lanes below -80 make the vector compute e^x as well). */
static void scaling_ways_same_bits(void **state) {
  (void)state;
  enum { N = 60001, W = 16, NEDGES = 7, EXTRA = NEDGES * 64 };
  static const vec_unop ops[] = {VEC_EXP,     VEC_SIGMOID,  VEC_TANH,      VEC_SILU,
                                 VEC_MISH,    VEC_GELU_ERF, VEC_GELU_TANH};
  /* x where an argument crosses 80 or 86: exp / Mish at |x| = 86, GELU (erf) at x^2 / 2 = 80, GELU (tanh)
   * where 1.5958 x + 0.0714 x^3 = 86 (x about 9.37); the sigmoid and SiLU switch to e^x for lanes below -80
   * (computed only when a vector has one); tanh has one way */
  static const float edges[NEDGES] = {86.0f, -86.0f, 12.6491106f, -12.6491106f, 9.3701f, -9.3701f, -80.0f};
  float *x = malloc((N + EXTRA) * sizeof(float));
  assert_non_null(x);
  for (int i = 0; i < N; i++) x[i] = -110.0f + 220.0f * (float)i / (float)(N - 1);
  for (int e = 0; e < NEDGES; e++) {
    float v = edges[e];
    for (int k = 0; k < 32; k++) v = nextafterf(v, 0);
    for (int k = 0; k < 64; k++, v = nextafterf(v, v > 0 ? INFINITY : -INFINITY)) x[N + e * 64 + k] = v;
  }
  for (int p = 0; p < 3; p++) {
    if (!table_runs(p)) continue;
    for (size_t k = 0; k < sizeof ops / sizeof ops[0]; k++)
      for (int i = 0; i < N + EXTRA; i++) {
        float a[W], b[W], c[W], ya[W], yb[W], yc[W];
        for (int l = 0; l < W; l++) a[l] = 1.0f, b[l] = NAN, c[l] = -100.0f;
        a[0] = b[0] = c[0] = x[i];
        tables[p]->unary(ops[k], a, ya, W);
        tables[p]->unary(ops[k], b, yb, W);
        tables[p]->unary(ops[k], c, yc, W);
        if (memcmp(&ya[0], &yb[0], sizeof(float)) != 0 && !(isnan(ya[0]) && isnan(yb[0])))
          fail_msg("op %d on %s, x = %.9g: %.9g beside 1s, %.9g beside NaNs", (int)ops[k], tables[p]->name, x[i],
                   ya[0], yb[0]);
        if (memcmp(&ya[0], &yc[0], sizeof(float)) != 0 && !(isnan(ya[0]) && isnan(yc[0])))
          fail_msg("op %d on %s, x = %.9g: %.9g beside 1s, %.9g beside -100s", (int)ops[k], tables[p]->name, x[i],
                   ya[0], yc[0]);
      }
  }
  free(x);
}

/* Sums and moments: within 1e-6 relative of double over lengths around the vector widths and the block. */
static void sums_and_moments(void **state) {
  (void)state;
  static const int64_t lens[] = {0, 1, 3, 15, 16, 17, 31, 33, 1023, 1024, 1025, 4099};
  float *x = malloc(4099 * sizeof(float));
  assert_non_null(x);
  for (int64_t i = 0; i < 4099; i++) x[i] = 1000.0f + (float)((i * 7919) % 1000) / 100.0f; /* large offset */
  for (int p = 0; p < 3; p++) {
    if (!table_runs(p)) continue;
    for (size_t k = 0; k < sizeof lens / sizeof lens[0]; k++) {
      int64_t n = lens[k];
      double s = 0, s1 = 0, s2 = 0;
      for (int64_t i = 0; i < n; i++) s += x[i];
      for (int64_t i = 0; i < n; i++)
        s1 += (double)x[i] - 1004.0, s2 += ((double)x[i] - 1004.0) * ((double)x[i] - 1004.0);
      double got = tables[p]->sum(x, n), g1, g2;
      tables[p]->moments(x, n, 1004.0f, &g1, &g2);
      assert_true(fabs(got - s) <= 1e-6 * fabs(s));
      assert_true(fabs(g1 - s1) <= 1e-6 * (fabs(s1) + n) && fabs(g2 - s2) <= 1e-6 * fabs(s2));
    }
  }
  free(x);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(math_sweeps_within_bounds),
      cmocka_unit_test(math_special_values),
      cmocka_unit_test(table_interval_ends),
      cmocka_unit_test(lanes_independent),
      cmocka_unit_test(scaling_ways_same_bits),
      cmocka_unit_test(sums_and_moments),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
