/* The general fp32 GEMM driver (tb_gemm_f32_run, src/backend/cpu/kernels/fast/gemm/gemm_driver.c) on every path
 * this CPU has (portable, AVX2, AVX-512) against a double-precision triple loop: A and B plain, packed once
 * (tb_gemm_pack_a/b) and packed on demand (a callback), every transpose, m, n, k in {1, 13, 33, 200} and
 * past the blocking sizes, beta 0 (NaN in C ignored), 1 and 0.5, alpha 0 and k 0, each epilogue (bias per
 * row and per column, residual separate or C itself, each activation), results bit-identical on 1 and 2
 * threads (and on a pool of 3), the refusals (a packed operand for another path or size), NaN through
 * the piecewise-linear activations, the exact packed layout (the AVX-512 transposing packer too), and the
 * late bias and residual (tb::FusedMatMul's) bit for bit as separate adds followed by the vec_ops Gelu, and
 * the narrow edge kernels (AVX-512, AVX2) bit for bit against the register tiles' edges, and shapes on both
 * sides of the column group (GEMM_NC) and of the depth block count's steps.
 *
 * Tolerance: before the activation, fp32 sums in any order are within (k + 6) * 2^-24 * (|alpha| sum|a b|
 * + |beta c| + |bias| + |residual|) of the exact value (recursive summation bound plus one rounding per
 * added term); the activations are at most 1.5-Lipschitz (HardSwish on [-3, 3]) and expf/tanhf add a few
 * ulps, so we allow 1.5 times that plus 8 ulps of the result. */
#include <float.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include "backend/cpu/kernels/fast/gemm/gemm_f32.h"
#include "backend/cpu/kernels/fast/gemm/gemm_f32_internal.h"
#include "backend/cpu/kernels/fast/vec/vec_ops.h"
#include "core/convert_features.h"
#include "core/threadpool.h"
#include "test_util.h"

static const char *const path_names[] = {"portable", "avx2", "avx512"};
enum { PLAIN, PACKED, ON_DEMAND };
static const char *const mode_names[] = {"plain", "packed", "on-demand"};

static int n_paths(void) { return (int)tb_gemm_path_for(tb_convert_hardware_features()) + 1; }

static float *random_floats(int64_t n, uint64_t seed) {
  float *x = malloc((size_t)(n > 0 ? n : 1) * sizeof(float));
  assert_non_null(x);
  uint64_t s = seed * 0x9E3779B97F4A7C15ull + 11;
  for (int64_t i = 0; i < n; i++) {
    s ^= s >> 12;
    s ^= s << 25;
    s ^= s >> 27;
    x[i] = (float)((double)((s * 0x2545F4914F6CDD1Dull) >> 40) / (double)(1ull << 24) * 2.0 - 1.0);
  }
  return x;
}

/* The on-demand packer: a plain matrix read through the documented sliver layout, counting its calls. */
typedef struct demand {
  const float *x;
  int64_t ld, outer, k;
  bool trans, is_a;
  int calls;
} demand;

static void demand_pack(void *ctx, int64_t o0, int64_t outer, int64_t p0, int64_t kc, int width, float *dst) {
  demand *d = ctx;
  __atomic_add_fetch(&d->calls, 1, __ATOMIC_RELAXED);
  assert_true(o0 >= 0 && o0 + outer <= d->outer && p0 >= 0 && p0 + kc <= d->k);
  int64_t slivers = (outer + width - 1) / width;
  for (int64_t s = 0; s < slivers; s++)
    for (int64_t p = 0; p < kc; p++)
      for (int w = 0; w < width; w++) {
        int64_t o = s * width + w, gp = p0 + p, go = o0 + o;
        float v = 0;
        if (o < outer) /* A: row go of op(A); B: column go of op(B) */
          v = d->is_a ? (d->trans ? d->x[gp * d->ld + go] : d->x[go * d->ld + gp])
                      : (d->trans ? d->x[go * d->ld + gp] : d->x[gp * d->ld + go]);
        dst[s * kc * width + p * width + w] = v;
      }
}

typedef struct gcase {
  tb_gemm_path path;
  int mode_a, mode_b;
  bool ta, tb;
  int64_t m, n, k;
  float alpha, beta;
  int bias_axis; /* -1 none */
  int residual;  /* 0 none, 1 separate, 2 C itself */
  int act;
} gcase;

static double act_ref(int act, double x) {
  switch (act) {
    case 1: return x < 0 ? 0 : x;
    case 2: return x < 0 ? 0.1 * x : x;
    case 3: return x < -0.5 ? -0.5 : x > 0.75 ? 0.75 : x;
    case 4: return 1 / (1 + exp(-x));
    case 5: return tanh(x);
    case 6: return fmax(0, fmin(1, 0.2 * x + 0.5));
    case 7: return x * fmax(0, fmin(1, x / 6 + 0.5));
    default: return x;
  }
}

static tb_gemm_epilogue make_ep(const gcase *g, const float *bias, const float *res, int64_t ldr) {
  tb_gemm_epilogue ep = {.bias = g->bias_axis >= 0 ? bias : NULL, .bias_axis = g->bias_axis < 0 ? 0 : g->bias_axis,
                         .residual = res, .ld_residual = ldr, .act = g->act, .act_alpha = 0.1f, .act_min = -0.5f,
                         .act_max = 0.75f};
  if (g->act == 6) {
    ep.act_alpha = 0.2f;
    ep.act_beta = 0.5f;
  }
  return ep;
}

/* Set up operand x (mode) over the plain matrix; *pk receives a packed copy to free. */
static tb_gemm_operand operand(const gcase *g, bool is_a, const float *x, int64_t ld, demand *d, tb_gemm_packed **pk) {
  int mode = is_a ? g->mode_a : g->mode_b;
  bool trans = is_a ? g->ta : g->tb;
  int64_t outer = is_a ? g->m : g->n;
  tb_gemm_operand plain = {.data = x, .ld = ld, .trans = trans};
  *d = (demand){x, ld, outer, g->k, trans, is_a, 0};
  *pk = NULL;
  if (mode == PLAIN) return plain;
  tb_gemm_operand od = {.pack = demand_pack, .pack_ctx = d};
  if (mode == ON_DEMAND) return od;
  /* packed: alternately from the plain matrix and from the on-demand packer */
  const tb_gemm_operand *src = (g->m + g->n) % 2 ? &od : &plain;
  *pk = is_a ? tb_gemm_pack_a(g->path, src, g->m, g->k) : tb_gemm_pack_b(g->path, src, g->k, g->n);
  assert_non_null(*pk);
  return (tb_gemm_operand){.packed = *pk};
}

/* Run one case with a pool (NULL: serial) into c (m x n, ld n+3); returns the C it started from. */
static void run_case(const gcase *g, tb_pool *pool, const float *a, const float *b, const float *bias, const float *res,
                     const float *c0, float *c) {
  int64_t lda = g->ta ? g->m : g->k, ldb = g->tb ? g->k : g->n, ldc = g->n + 3;
  demand da, db;
  tb_gemm_packed *pa, *pb;
  tb_gemm_operand oa = operand(g, true, a, lda, &da, &pa), ob = operand(g, false, b, ldb, &db, &pb);
  memcpy(c, c0, (size_t)(g->m * ldc) * sizeof(float));
  tb_gemm_epilogue ep = make_ep(g, bias, g->residual == 2 ? c : res, g->residual == 2 ? ldc : g->n);
  bool any = g->bias_axis >= 0 || g->residual || g->act;
  if (!g->residual) ep.residual = NULL;
  assert_true(tb_gemm_f32_run(g->path, g->m, g->n, g->k, g->alpha, &oa, &ob, g->beta, c, ldc, any ? &ep : NULL, pool));
  if (g->mode_a == ON_DEMAND && g->k > 0 && g->alpha != 0) assert_true(da.calls > 0);
  if (g->mode_b == ON_DEMAND && g->k > 0 && g->alpha != 0) assert_true(db.calls > 0);
  tb_gemm_packed_free(pa);
  tb_gemm_packed_free(pb);
}

static void check_case(const gcase *g, tb_pool *pool2) {
  int64_t m = g->m, n = g->n, k = g->k, ldc = n + 3;
  int64_t lda = g->ta ? m : k, ldb = g->tb ? k : n;
  float *a = random_floats(m * k, (uint64_t)(m * 7 + k)), *b = random_floats(k * n, (uint64_t)(n * 5 + k * 3 + 1));
  float *bias = random_floats(m > n ? m : n, 77), *res = random_floats(m * n, 78), *c0 = random_floats(m * ldc, 79);
  float *c = malloc((size_t)(m * ldc) * sizeof(float)), *c2 = malloc((size_t)(m * ldc) * sizeof(float));
  assert_true(c && c2);
  if (g->beta == 0 && g->residual != 2)
    for (int64_t i = 0; i < m * ldc; i += 3) c0[i] = NAN; /* never read */
  run_case(g, NULL, a, b, bias, res, c0, c);
  for (int64_t i = 0; i < m; i++)
    for (int64_t j = 0; j < n; j++) {
      double s = 0, sabs = 0;
      for (int64_t p = 0; p < k; p++) {
        double x = (double)(g->ta ? a[p * lda + i] : a[i * lda + p]) * (double)(g->tb ? b[j * ldb + p] : b[p * ldb + j]);
        s += x;
        sabs += fabs(x);
      }
      double cv = g->beta == 0 ? 0 : (double)g->beta * c0[i * ldc + j];
      double bv = g->bias_axis < 0 ? 0 : bias[g->bias_axis == 0 ? i : j];
      double rv = g->residual == 1 ? res[i * n + j] : g->residual == 2 ? c0[i * ldc + j] : 0;
      double pre = (double)g->alpha * s + cv + bv + rv;
      double ref = act_ref(g->act, pre);
      double tol = 1.5 * (double)(k + 6) * FLT_EPSILON / 2 * (fabs(g->alpha) * sabs + fabs(cv) + fabs(bv) + fabs(rv)) +
                   8 * FLT_EPSILON * fabs(ref) + 1e-30;
      double got = c[i * ldc + j];
      if (!(fabs(got - ref) <= tol))
        fail_msg("%s path, A %s B %s, %lldx%lldx%lld ta=%d tb=%d alpha=%g beta=%g bias=%d residual=%d act=%d: "
                 "C[%lld][%lld] = %.9g, expected %.9g (tol %g)",
                 path_names[g->path], mode_names[g->mode_a], mode_names[g->mode_b], (long long)m, (long long)n,
                 (long long)k, g->ta, g->tb, g->alpha, g->beta, g->bias_axis, g->residual, g->act, (long long)i,
                 (long long)j, got, ref, tol);
    }
  for (int64_t i = 0; i < m; i++) /* the padding past n is untouched */
    for (int64_t j = n; j < ldc; j++)
      if (memcmp(&c[i * ldc + j], &c0[i * ldc + j], sizeof(float)) != 0) fail_msg("C[%lld][%lld] past n written", (long long)i, (long long)j);
  if (pool2) { /* same bits on 2 threads */
    run_case(g, pool2, a, b, bias, res, c0, c2);
    for (int64_t i = 0; i < m * ldc; i++)
      if (memcmp(&c[i], &c2[i], sizeof(float)) != 0)
        fail_msg("%s path %lldx%lldx%lld: element %lld differs on 2 threads (%.9g vs %.9g)", path_names[g->path],
                 (long long)m, (long long)n, (long long)k, (long long)i, c[i], c2[i]);
  }
  free(a);
  free(b);
  free(bias);
  free(res);
  free(c0);
  free(c);
  free(c2);
}

static void every_mode_and_transpose(void **state) {
  (void)state;
  static const int64_t dims[][3] = {{1, 1, 1}, {13, 33, 1}, {33, 13, 200}, {200, 33, 13}, {1, 200, 33}, {33, 1, 200}};
  for (int p = 0; p < n_paths(); p++)
    for (int ma = 0; ma < 3; ma++)
      for (int mb = 0; mb < 3; mb++)
        for (int t = 0; t < 4; t++)
          for (size_t d = 0; d < sizeof dims / sizeof dims[0]; d++) {
            gcase g = {(tb_gemm_path)p, ma, mb, t & 1, (t & 2) != 0, dims[d][0], dims[d][1], dims[d][2], 1, 0, -1, 0, 0};
            check_case(&g, NULL);
          }
}

/* B of at most narrow_cols columns (a squeeze-excite 1x1 convolution's one pixel) is packed without the
 * sliver's zero padding, which the narrow kernel does not read: values against the double reference over
 * several depth blocks, B plain and transposed, plain and on-demand A, and the same bits on 2 threads. */
static void narrow_b_without_padding(void **state) {
  (void)state;
  static const int64_t dims[][3] = {{45, 1, 600}, {14, 5, 1152}, {45, 8, 385}, {30, 24, 600}, {3, 1, 257}};
  tb_pool *pool2 = NULL;
  TB_ASSERT_OK(tb_pool_create(2, &pool2));
  for (int p = 0; p < n_paths(); p++)
    for (int t = 0; t < 4; t++)
      for (size_t d = 0; d < sizeof dims / sizeof dims[0]; d++) {
        gcase g = {(tb_gemm_path)p, t & 1 ? ON_DEMAND : PLAIN, PLAIN, false, (t & 2) != 0, dims[d][0], dims[d][1],
                   dims[d][2], 1, 0, 0, 0, 4};
        check_case(&g, pool2);
      }
  tb_pool_destroy(pool2);
}

static void edges_and_blocking(void **state) {
  (void)state;
  static const int64_t sizes[] = {1, 13, 33, 200};
  for (int p = 0; p < n_paths(); p++) {
    for (size_t i = 0; i < 4; i++)
      for (size_t j = 0; j < 4; j++)
        for (size_t l = 0; l < 4; l++) {
          gcase g = {(tb_gemm_path)p, PLAIN, (int)((i + j + l) % 3), false, false, sizes[i], sizes[j], sizes[l], 1, 1, -1, 0, 0};
          check_case(&g, NULL);
        }
    /* past GEMM_KC (192) and GEMM_MC (336), and several column groups */
    gcase big = {(tb_gemm_path)p, PACKED, ON_DEMAND, true, false, 345, 130, 400, 0.5f, 0.5f, 1, 1, 0};
    check_case(&big, NULL);
    gcase big2 = {(tb_gemm_path)p, ON_DEMAND, PACKED, false, true, 70, 520, 385, 1, 0, 0, 0, 1};
    check_case(&big2, NULL);
  }
}

static void every_epilogue_and_beta(void **state) {
  (void)state;
  static const float betas[] = {0, 1, 0.5f};
  for (int p = 0; p < n_paths(); p++)
    for (int act = 0; act <= 7; act++)
      for (int bias = -1; bias <= 1; bias++)
        for (int res = 0; res <= 2; res++) {
          float beta = betas[(act + bias + res + 3) % 3];
          gcase g = {(tb_gemm_path)p, (act + res) % 3, (act + bias + 1) % 3, act & 1, (act & 2) != 0, 29, 45, 67, 1.25f, beta, bias, res, act};
          check_case(&g, NULL);
        }
}

static void alpha_zero_and_k_zero(void **state) {
  (void)state;
  for (int p = 0; p < n_paths(); p++) {
    gcase a0 = {(tb_gemm_path)p, PLAIN, PLAIN, false, false, 17, 40, 9, 0, 0.5f, 1, 1, 3};
    check_case(&a0, NULL);
    gcase k0 = {(tb_gemm_path)p, PLAIN, PACKED, false, false, 17, 40, 0, 1, 0, 0, 2, 1};
    check_case(&k0, NULL);
    gcase k0b = {(tb_gemm_path)p, PACKED, ON_DEMAND, false, false, 5, 3, 0, 1, 1, -1, 0, 0};
    check_case(&k0b, NULL);
  }
  /* m or n zero: nothing to do, success */
  float x = 1;
  tb_gemm_operand op = {.data = &x, .ld = 1};
  assert_true(tb_gemm_f32_run(TB_GEMM_PORTABLE, 0, 4, 4, 1, &op, &op, 0, &x, 1, NULL, NULL));
  assert_true(tb_gemm_f32_run(TB_GEMM_PORTABLE, 4, 0, 4, 1, &op, &op, 0, &x, 1, NULL, NULL));
  assert_true(x == 1);
}

/* 1, 2 and 3 threads give the same bits, for shapes that split by rows, by columns and both. */
static void same_bits_on_any_thread_count(void **state) {
  (void)state;
  tb_pool *pool2 = NULL, *pool3 = NULL;
  TB_ASSERT_OK(tb_pool_create(2, &pool2));
  TB_ASSERT_OK(tb_pool_create(3, &pool3));
  /* the last two: products below the multiply-add threshold that split for their operands' size (a 1x1
   * convolution on one pixel, a classifier's row times its weights) */
  static const int64_t dims[][3] = {{128, 200, 96}, {400, 33, 250}, {130, 513, 200}, {64, 64, 300}, {300, 1, 512}, {1, 700, 300}};
  for (int p = 0; p < n_paths(); p++)
    for (size_t d = 0; d < sizeof dims / sizeof dims[0]; d++) {
      gcase g = {(tb_gemm_path)p, (int)d % 3, (int)(d + 1) % 3, d == 2, d == 1, dims[d][0], dims[d][1], dims[d][2],
                 1, d % 2 ? 0.5f : 0, (int)d % 3 - 1, (int)d % 3, (int)(d * 2) % 8}; /* activations 0..7 */
      check_case(&g, pool2);
      check_case(&g, pool3);
    }
  tb_pool_destroy(pool2);
  tb_pool_destroy(pool3);
}

static void mismatched_operands_refused(void **state) {
  (void)state;
  float a[6 * 5], b[5 * 7], c[6 * 7];
  for (int i = 0; i < 30; i++) a[i] = (float)i;
  for (int i = 0; i < 35; i++) b[i] = (float)i;
  tb_gemm_operand pa = {.data = a, .ld = 5}, pb = {.data = b, .ld = 7};
  tb_gemm_packed *kb = tb_gemm_pack_b(TB_GEMM_PORTABLE, &pb, 5, 7);
  tb_gemm_packed *ka = tb_gemm_pack_a(TB_GEMM_PORTABLE, &pa, 6, 5);
  assert_true(kb && ka);
  tb_gemm_operand ob = {.packed = kb}, oa = {.packed = ka};
  assert_true(tb_gemm_f32_run(TB_GEMM_PORTABLE, 6, 7, 5, 1, &oa, &ob, 0, c, 7, NULL, NULL));
  assert_true(c[0] == 0 * 0 + 1 * 7 + 2 * 14 + 3 * 21 + 4 * 28); /* row 0 of A times column 0 of B */
  assert_false(tb_gemm_f32_run(TB_GEMM_PORTABLE, 6, 7, 4, 1, &oa, &ob, 0, c, 7, NULL, NULL)); /* other k */
  assert_false(tb_gemm_f32_run(TB_GEMM_PORTABLE, 6, 7, 5, 1, &ob, &oa, 0, c, 7, NULL, NULL)); /* B as A */
  if (n_paths() > 1) assert_false(tb_gemm_f32_run(TB_GEMM_AVX2, 6, 7, 5, 1, &oa, &ob, 0, c, 7, NULL, NULL));
  tb_gemm_operand none = {0}, both = {.data = a, .ld = 5, .packed = ka};
  assert_false(tb_gemm_f32_run(TB_GEMM_PORTABLE, 6, 7, 5, 1, &none, &ob, 0, c, 7, NULL, NULL));
  assert_false(tb_gemm_f32_run(TB_GEMM_PORTABLE, 6, 7, 5, 1, &both, &ob, 0, c, 7, NULL, NULL));
  assert_null(tb_gemm_pack_a(TB_GEMM_PORTABLE, &none, 6, 5));
  tb_gemm_packed_free(ka);
  tb_gemm_packed_free(kb);
  tb_gemm_packed_free(NULL);
}

/* The piecewise-linear activations keep the portable semantics on every path (the vector epilogue too):
 * Relu, LeakyRelu and Clip keep NaN, zeros stay +0; 40 columns: full vectors and a masked tail. */
static void activations_keep_nan(void **state) {
  (void)state;
  enum { N = 40 };
  float one = 1.0f, b[N], c[N];
  for (int j = 0; j < N; j++) b[j] = (float)(j % 5) - 2.0f; /* -2 -1 0 1 2 ... */
  b[3] = NAN;
  b[17] = -3.0f;
  b[38] = NAN;
  for (int p = 0; p < n_paths(); p++)
    for (int act = 1; act <= 3; act++) {
      tb_gemm_operand oa = {.data = &one, .ld = 1}, ob = {.data = b, .ld = N};
      tb_gemm_epilogue ep = {.act = act, .act_alpha = 0.25f, .act_min = -1.5f, .act_max = 1.5f};
      assert_true(tb_gemm_f32_run((tb_gemm_path)p, 1, N, 1, 1.0f, &oa, &ob, 0.0f, c, N, &ep, NULL));
      for (int j = 0; j < N; j++) {
        float x = b[j], want = act == 1 ? (x < 0 ? 0.0f : x)
                              : act == 2 ? (x < 0 ? 0.25f * x : x)
                                         : (x < -1.5f ? -1.5f : x > 1.5f ? 1.5f : x);
        if (isnan(want)) {
          if (!isnan(c[j])) fail_msg("%s path act %d: column %d is %g, expected NaN", path_names[p], act, j, c[j]);
        } else if (c[j] != want || signbit(c[j]) != signbit(want)) {
          fail_msg("%s path act %d: column %d is %g, expected %g", path_names[p], act, j, c[j], want);
        }
      }
    }
}

/* The late bias and residual (added after the products, before the activation) give exactly the bits of
 * the plain product followed by the two float adds and the vec_ops Gelu, on every path, packed or plain B,
 * 1 and 2 threads, with edges (m 37, n 75), several depth blocks (k 600), and k 0 (just the adds). */
static void late_bias_and_residual_are_separate_adds(void **state) {
  (void)state;
  enum { M = 37, N = 75, K = 600 };
  static const tb_gemm_path paths[] = {TB_GEMM_PORTABLE, TB_GEMM_AVX2, TB_GEMM_AVX512};
  const vec_ops *tables[] = {&tb_vec_ops_portable, &tb_vec_ops_avx2, &tb_vec_ops_avx512};
  float *a = random_floats(M * K, 101), *b = random_floats(K * N, 102), *bias = random_floats(N, 103);
  float *res = random_floats(M * N, 104), *want = malloc(M * N * sizeof(float)), *got = malloc(M * N * sizeof(float));
  tb_pool *pool = NULL;
  TB_ASSERT_OK(tb_pool_create(2, &pool));
  for (int p = 0; p < n_paths(); p++)
    for (int k = 0; k <= K; k += K)
      for (int variant = 0; variant < 4; variant++) { /* plain B / packed B, 1 / 2 threads */
        tb_gemm_operand oa = {.data = a, .ld = K}, ob = {.data = b, .ld = N};
        tb_gemm_packed *packed = variant & 1 ? tb_gemm_pack_b(paths[p], &ob, k, N) : NULL;
        tb_gemm_operand obp = packed ? (tb_gemm_operand){.packed = packed} : ob;
        tb_pool *use = variant & 2 ? pool : NULL;
        assert_true(tb_gemm_f32_run(paths[p], M, N, k, 1.0f, &oa, &obp, 0.0f, want, N, NULL, use));
        for (int i = 0; i < M; i++) {
          for (int j = 0; j < N; j++) want[i * N + j] = (want[i * N + j] + bias[j]) + res[i * N + j];
          tables[p]->unary(VEC_GELU_ERF, want + i * N, want + i * N, N);
        }
        tb_gemm_epilogue ep = {.act = 8, .vec = tables[p], .late_bias = bias, .late_residual = res, .ld_late_residual = N};
        assert_true(tb_gemm_f32_run(paths[p], M, N, k, 1.0f, &oa, &obp, 0.0f, got, N, &ep, use));
        if (memcmp(want, got, M * N * sizeof(float)) != 0)
          fail_msg("%s path, k %d, %s B, %d thread(s): the late epilogue differs from separate adds", path_names[p], k,
                   packed ? "packed" : "plain", use ? 2 : 1);
        tb_gemm_packed_free(packed);
      }
  tb_pool_destroy(pool);
  free(a);
  free(b);
  free(bias);
  free(res);
  free(want);
  free(got);
}

/* Operands packed once follow the documented layout exactly on every path (the transposing packers of
 * row-major A and of transposed B too): depth blocks of tb_gemm_depth_block, slivers of the path's width, zeros past
 * the edge; sizes with a partial sliver, a partial depth block, a depth not a multiple of 16 and a row
 * stride past the depth. */
static void packed_layout_is_exact(void **state) {
  (void)state;
  enum { M = 31, N = 45, K = 203, LD = K + 5 };
  float *x = random_floats(N * LD, 91);
  for (int p = 0; p < n_paths(); p++)
    for (int side = 0; side < 2; side++) {
      /* A plain (m x k, row-major) or B transposed (stored n x k): both read element (o, p) at x[o * LD + p] */
      tb_gemm_operand op = {.data = x, .ld = LD, .trans = side == 1};
      tb_gemm_packed *pk = side == 0 ? tb_gemm_pack_a((tb_gemm_path)p, &op, M, K) : tb_gemm_pack_b((tb_gemm_path)p, &op, K, N);
      assert_non_null(pk);
      int64_t outer = side == 0 ? M : N, w = pk->width;
      assert_int_equal(pk->outer_pad, (outer + w - 1) / w * w);
      int64_t kb = tb_gemm_depth_block(K);
      for (int64_t p0 = 0; p0 < K; p0 += kb) {
        int64_t kc = K - p0 < kb ? K - p0 : kb;
        const float *blk = pk->data + p0 * pk->outer_pad;
        for (int64_t o = 0; o < pk->outer_pad; o++)
          for (int64_t q = 0; q < kc; q++) {
            float got = blk[(o / w) * kc * w + q * w + o % w], want = o < outer ? x[o * LD + p0 + q] : 0.0f;
            if (memcmp(&got, &want, sizeof got) != 0)
              fail_msg("%s path, %s: element (%lld, %lld) packed as %g, expected %g", path_names[p], side ? "B" : "A",
                       (long long)o, (long long)(p0 + q), got, want);
          }
      }
      tb_gemm_packed_free(pk);
    }
  free(x);
}

/* The narrow edge kernels (tb_gemm_kernel.narrow: vectors along A's rows for an edge sliver of few columns)
 * give every element the bits the register tile's edge gives it (edge / edge_set where the kernel has them, as
 * both AVX-512 and AVX2 do; else ukr on a copy of the tile, as the driver runs edges there), for 1..narrow_cols columns, row counts with partial
 * slivers and one to three slivers, depths 1 to 70, alpha 1 and 1.25, C read (load_c) and not read (NaN in
 * C ignored); C past the block (its row stride is wider) is untouched. */
static void narrow_edge_same_bits_as_tiles(void **state) {
  (void)state;
  static const int64_t row_counts[] = {1, 5, 6, 7, 13, 14, 15, 28, 31, 45};
  static const int64_t depths[] = {1, 9, 70};
  for (int p = TB_GEMM_AVX2; p < n_paths(); p++) {
    const tb_gemm_kernel *kr = tb_gemm_kernel_for((tb_gemm_path)p);
    assert_non_null(kr->narrow);
    assert_true(kr->narrow_cols >= 4 && kr->narrow_cols < kr->nr);
    int mr = kr->mr, nr = kr->nr;
    for (size_t ri = 0; ri < sizeof row_counts / sizeof row_counts[0]; ri++)
      for (size_t di = 0; di < sizeof depths / sizeof depths[0]; di++)
        for (int cols = 1; cols <= kr->narrow_cols; cols++)
          for (int variant = 0; variant < 4; variant++) {
            bool load_c = variant < 2 || !kr->edge_set; /* without set kernels the driver always reads C */
            float alpha = variant % 2 ? 1.25f : 1.0f;
            int64_t rows = row_counts[ri], kc = depths[di], slivers = (rows + mr - 1) / mr, ldc = cols + 5;
            float *a = random_floats(slivers * kc * mr, (uint64_t)(rows * 31 + kc)), *b = random_floats(kc * nr, (uint64_t)(cols + kc));
            for (int64_t s = 0; s < slivers; s++) /* packed rows past `rows` are zeros */
              for (int64_t q = 0; q < kc; q++)
                for (int i = 0; i < mr; i++)
                  if (s * mr + i >= rows) a[(s * kc + q) * mr + i] = 0.0f;
            float *want = random_floats(rows * ldc, 5), *got = malloc((size_t)(rows * ldc) * sizeof(float));
            assert_non_null(got);
            if (!load_c)
              for (int64_t i = 0; i < rows * ldc; i++)
                if (i % ldc < cols) want[i] = NAN;
            memcpy(got, want, (size_t)(rows * ldc) * sizeof(float));
            for (int64_t s = 0; s < slivers; s++) {
              int rr = (int)(rows - s * mr < mr ? rows - s * mr : mr);
              const float *as = a + s * kc * mr;
              float *cs = want + s * mr * ldc;
              if (kr->edge && load_c) {
                kr->edge(kc, as, b, cs, ldc, alpha, rr, cols);
              } else if (kr->edge_set) {
                kr->edge_set(kc, as, b, cs, ldc, alpha, rr, cols);
              } else {
                _Alignas(64) float tile[GEMM_MAX_TILE] = {0};
                for (int i = 0; i < rr; i++) memcpy(tile + i * nr, cs + i * ldc, (size_t)cols * sizeof(float));
                kr->ukr(kc, as, b, tile, nr, alpha);
                for (int i = 0; i < rr; i++) memcpy(cs + i * ldc, tile + i * nr, (size_t)cols * sizeof(float));
              }
            }
            kr->narrow(kc, a, rows, b, cols, got, ldc, alpha, load_c);
            for (int64_t i = 0; i < rows * ldc; i++)
              if (memcmp(&want[i], &got[i], sizeof(float)) != 0)
                fail_msg("%s path, %lld rows x %d columns, depth %lld, alpha %g, %s C: element (%lld, %lld) is %.9g, the tile "
                         "gives %.9g", path_names[p], (long long)rows, cols, (long long)kc, alpha, load_c ? "reading" : "not reading",
                         (long long)(i / ldc), (long long)(i % ldc), got[i], want[i]);
            free(a);
            free(b);
            free(want);
            free(got);
          }
  }
}

/* Across the blocking on every path: n just below, at and past GEMM_NC (4096, one task's columns serially),
 * depths at both sides of the depth block count's steps (256 | 257: one block, two of 129; 479 | 480: two of
 * 240, three of 160), odd m over one and several micro-tile rows; B plain and packed once, A plain and on
 * demand; values against the double reference. */
static void across_column_and_depth_blocks(void **state) {
  (void)state;
  static const int64_t nk[][2] = {{4095, 480}, {4096, 479}, {4097, 480}, {4096 + 17, 257}, {4097, 256}};
  static const int64_t ms[] = {7, 13};
  assert_int_equal(tb_gemm_depth_block(256), 256);
  assert_int_equal(tb_gemm_depth_block(257), 129);
  assert_int_equal(tb_gemm_depth_block(479), 240);
  assert_int_equal(tb_gemm_depth_block(480), 160);
  for (int p = 0; p < n_paths(); p++)
    for (size_t d = 0; d < sizeof nk / sizeof nk[0]; d++) {
      int64_t m = ms[(d + (size_t)p) % 2];
      gcase g = {(tb_gemm_path)p, d % 2 ? ON_DEMAND : PLAIN, d % 3 == 1 ? PLAIN : PACKED, false, d == 3, m, nk[d][0],
                 nk[d][1], 1, d == 4 ? 0.5f : 0, (int)d % 3 - 1, (int)d % 2, (int)d + 1};
      check_case(&g, NULL);
    }
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(every_mode_and_transpose),
      cmocka_unit_test(edges_and_blocking),
      cmocka_unit_test(every_epilogue_and_beta),
      cmocka_unit_test(alpha_zero_and_k_zero),
      cmocka_unit_test(same_bits_on_any_thread_count),
      cmocka_unit_test(mismatched_operands_refused),
      cmocka_unit_test(activations_keep_nan),
      cmocka_unit_test(packed_layout_is_exact),
      cmocka_unit_test(late_bias_and_residual_are_separate_adds),
      cmocka_unit_test(narrow_edge_same_bits_as_tiles),
      cmocka_unit_test(narrow_b_without_padding),
      cmocka_unit_test(across_column_and_depth_blocks),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
