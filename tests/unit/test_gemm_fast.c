/* The level-2 fp32 GEMM (src/backend/cpu/kernels/fast/) on every path the CPU has (AVX-512, AVX2, portable):
 * the driver against a double-precision product over many shapes (each dim 1..67, K = 1, 257x513x129,
 * transposes, alpha/beta); the MatMul and Gemm kernel entries against the reference kernels (batch
 * broadcasting, 1-D operands, C broadcast); the choice of kernel under TB_CPU_FEATURES masks; and the
 * bundled encoder prepared at O2 against O0 within the validate table's O2 tolerance under each mask.
 * The level-2 MatMul, Gemm, tb::FusedGemm and tb::FusedMatMul entries of every path against their level-0
 * reference kernels (tolerance 1e-5 absolute + 1e-4 relative), with weights packed by prepare() (called
 * with the constant inputs only, as at tb_model_prepare), with non-constant weights (no state), serially
 * and on a 2-thread pool (same bits), each activation and each shape of Gemm's C.
 *
 * Tolerance of the driver check: fp32 sums of k products in any order differ from the exact sum by at
 * most gamma_k * sum|a_i b_i| with gamma_k ~ k * 2^-24 (Higham, recursive summation; the FMAs only
 * tighten it), plus one rounding of alpha, beta*C and the result; we allow (k + 4) * 2^-24 * (|alpha| *
 * sum|a b| + |beta c|) + 1e-30, a bound no correct summation order can exceed and a wrong index would. */
#include <float.h>
#include <math.h>
#include "backend/cpu/kernels/fast/gemm/gemm_f32.h"
#include "core/convert_features.h"
#include "core/threadpool.h"
#include "test_op_harness.h"
#include "test_tensor_util.h"

#define MODELS TB_TEST_FIXTURES "/../../models/"

extern const tb_kernel tb_kernel_matmul_f32_avx512, tb_kernel_matmul_f32_avx2, tb_kernel_matmul_f32_portable;
extern const tb_kernel tb_kernel_gemm_f32_avx512, tb_kernel_gemm_f32_avx2, tb_kernel_gemm_f32_portable;
extern const tb_kernel tb_kernel_matmul, tb_kernel_gemm;
extern const tb_kernel tb_kernel_fused_gemm_f32_avx512, tb_kernel_fused_gemm_f32_avx2, tb_kernel_fused_gemm_f32_portable;
extern const tb_kernel tb_kernel_fused_matmul_f32_avx512, tb_kernel_fused_matmul_f32_avx2,
    tb_kernel_fused_matmul_f32_portable;
extern const tb_kernel tb_kernel_fused_gemm, tb_kernel_fused_matmul;

static const char *const path_names[] = {"portable", "avx2", "avx512"};

/* The paths this CPU can run: portable always, AVX2 and AVX-512 when cpuid has them. */
static int n_paths(void) { return (int)tb_gemm_path_for(tb_convert_hardware_features()) + 1; }

static void fill(float *x, int64_t n, uint64_t seed) {
  uint64_t s = seed * 0x9E3779B97F4A7C15ull + 7;
  for (int64_t i = 0; i < n; i++) {
    s ^= s >> 12;
    s ^= s << 25;
    s ^= s >> 27;
    x[i] = (float)((double)((s * 0x2545F4914F6CDD1Dull) >> 40) / (double)(1ull << 24) * 2.0 - 1.0);
  }
}

/* One product on one path against double; fails naming the shape and the first bad element. */
static void check_gemm(tb_gemm_path path, bool ta, bool tb, int64_t m, int64_t n, int64_t k, float alpha, float beta) {
  float *a = malloc((size_t)(m * k) * sizeof(float)), *b = malloc((size_t)(k * n) * sizeof(float));
  float *c = malloc((size_t)(m * n) * sizeof(float)), *c0 = malloc((size_t)(m * n) * sizeof(float));
  assert_true(a && b && c && c0);
  fill(a, m * k, (uint64_t)(m * 131 + k));
  fill(b, k * n, (uint64_t)(n * 17 + k * 3));
  fill(c0, m * n, (uint64_t)(m + n));
  memcpy(c, c0, (size_t)(m * n) * sizeof(float));
  int64_t lda = ta ? m : k, ldb = tb ? k : n;
  assert_true(tb_gemm_f32(path, ta, tb, m, n, k, alpha, a, lda, b, ldb, beta, c, n));
  for (int64_t i = 0; i < m; i++)
    for (int64_t j = 0; j < n; j++) {
      double s = 0, sabs = 0;
      for (int64_t p = 0; p < k; p++) {
        double x = (double)(ta ? a[p * lda + i] : a[i * lda + p]) * (double)(tb ? b[j * ldb + p] : b[p * ldb + j]);
        s += x;
        sabs += fabs(x);
      }
      double ref = (double)alpha * s + (beta == 0 ? 0 : (double)beta * c0[i * n + j]);
      double tol = (double)(k + 4) * FLT_EPSILON / 2 * (fabs(alpha) * sabs + fabs((double)beta * c0[i * n + j])) + 1e-30;
      double err = fabs((double)c[i * n + j] - ref);
      if (!(err <= tol))
        fail_msg("%s path, %lldx%lldx%lld ta=%d tb=%d alpha=%g beta=%g: C[%lld][%lld] = %.9g, expected %.9g (tol %g)",
                 path_names[path], (long long)m, (long long)n, (long long)k, ta, tb, alpha, beta, (long long)i,
                 (long long)j, c[i * n + j], ref, tol);
    }
  free(a);
  free(b);
  free(c);
  free(c0);
}

static void gemm_every_dim_1_to_67(void **state) {
  (void)state;
  for (int p = 0; p < n_paths(); p++)
    for (int64_t d = 1; d <= 67; d++) {
      check_gemm((tb_gemm_path)p, false, false, d, 37, 19, 1, 0);
      check_gemm((tb_gemm_path)p, false, false, 29, d, 13, 1, 0);
      check_gemm((tb_gemm_path)p, false, false, 15, 33, d, 1, 0);
    }
}

static void gemm_small_odd_and_k1(void **state) {
  (void)state;
  static const int64_t dims[] = {1, 2, 3, 13, 14, 15, 31, 32, 33};
  for (int p = 0; p < n_paths(); p++) {
    check_gemm((tb_gemm_path)p, false, false, 1, 1, 1, 1, 0);
    for (size_t i = 0; i < 9; i++)
      for (size_t j = 0; j < 9; j++) {
        check_gemm((tb_gemm_path)p, false, false, dims[i], dims[j], 1, 1, 0);
        check_gemm((tb_gemm_path)p, false, false, dims[i], dims[j], dims[(i + j) % 9], 1, 0);
      }
  }
}

/* Past every blocking size: KC (256) split in two, MC (336) split, several 32-wide and odd edges. */
static void gemm_large_blocked(void **state) {
  (void)state;
  for (int p = 0; p < n_paths(); p++) {
    check_gemm((tb_gemm_path)p, false, false, 257, 513, 129, 1, 0);
    check_gemm((tb_gemm_path)p, false, false, 345, 70, 300, 1, 0);
  }
}

static void gemm_transposes_alpha_beta(void **state) {
  (void)state;
  for (int p = 0; p < n_paths(); p++)
    for (int t = 0; t < 4; t++) {
      check_gemm((tb_gemm_path)p, t & 1, t & 2, 17, 45, 23, 1, 0);
      check_gemm((tb_gemm_path)p, t & 1, t & 2, 33, 19, 300, 0.5f, 2.0f);
      check_gemm((tb_gemm_path)p, t & 1, t & 2, 5, 7, 3, -1.25f, 1.0f);
    }
  /* alpha 0 leaves beta * C; beta 0 ignores a NaN in C */
  float c[4] = {NAN, NAN, NAN, NAN}, a[2] = {1, 2}, b[2] = {3, 4};
  assert_true(tb_gemm_f32(TB_GEMM_PORTABLE, false, false, 2, 2, 1, 1, a, 1, b, 2, 0, c, 2));
  assert_true(c[0] == 3 && c[1] == 4 && c[2] == 6 && c[3] == 8);
  assert_true(tb_gemm_f32(TB_GEMM_PORTABLE, false, false, 2, 2, 1, 0, a, 1, b, 2, 0.5f, c, 2));
  assert_true(c[0] == 1.5f && c[3] == 4);
}

static uint64_t features_with_mask(const char *mask) {
  if (mask) setenv("TB_CPU_FEATURES", mask, 1);
  else unsetenv("TB_CPU_FEATURES");
  return tb_convert_features();
}

/* A MatMul node with f32 (or f64) inputs; which kernel the executor would pick under a mask. */
static const tb_kernel *pick(const char *op, tb_dtype dtype, int level, const char *mask) {
  toh t;
  toh_setup(&t, op, 13, 2, 0, 1, NULL, 0);
  const int64_t d[2] = {4, 4};
  tb_value_type ty = toh_type(dtype, 2, d);
  const tb_value_type *in[2] = {&ty, &ty};
  const tb_kernel *k = tbt_kernel_find(t.graph, toh_node(&t), in, level, features_with_mask(mask));
  toh_teardown(&t);
  unsetenv("TB_CPU_FEATURES");
  return k;
}

static void kernel_choice_follows_mask(void **state) {
  (void)state;
  uint64_t hw = tb_convert_hardware_features();
  bool avx512 = tb_gemm_path_for(hw) == TB_GEMM_AVX512, avx2 = tb_gemm_path_for(hw) >= TB_GEMM_AVX2;
  if (avx512) assert_ptr_equal(pick("MatMul", TB_DTYPE_F32, 2, NULL), &tb_kernel_matmul_f32_avx512);
  if (avx512) assert_ptr_equal(pick("Gemm", TB_DTYPE_F32, 2, NULL), &tb_kernel_gemm_f32_avx512);
  if (avx2) assert_ptr_equal(pick("MatMul", TB_DTYPE_F32, 2, "-avx512f"), &tb_kernel_matmul_f32_avx2);
  if (avx2) assert_ptr_equal(pick("Gemm", TB_DTYPE_F32, 2, "-avx512f"), &tb_kernel_gemm_f32_avx2);
  assert_ptr_equal(pick("MatMul", TB_DTYPE_F32, 2, "-avx2"), &tb_kernel_matmul_f32_portable);
  assert_ptr_equal(pick("Gemm", TB_DTYPE_F32, 2, "-avx2"), &tb_kernel_gemm_f32_portable);
  assert_ptr_equal(pick("MatMul", TB_DTYPE_F32, 1, NULL), &tb_kernel_matmul); /* O1 keeps the reference */
  assert_ptr_equal(pick("MatMul", TB_DTYPE_F64, 2, NULL), &tb_kernel_matmul); /* f32 only */
  assert_ptr_equal(pick("Gemm", TB_DTYPE_F64, 2, NULL), &tb_kernel_gemm);
}

/* Run kernel k on a one-node graph of toh t with these f32 inputs; the output tensor. */
static tb_tensor *run_kernel(toh *t, const tb_kernel *k, tb_tensor **in, size_t n_in) {
  tb_tensor *out[1] = {NULL};
  tb_kernel_ctx ctx = {.graph = t->graph, .node = toh_node(t), .n_inputs = n_in, .inputs = in, .n_outputs = 1,
                       .outputs = out, .backend = t->cpu, .threads = 1};
  (void)tbt_kernel_bind(&ctx, t->graph, toh_node(t), NULL);
  TB_ASSERT_OK(k->run(&ctx));
  assert_non_null(out[0]);
  return out[0];
}

static void assert_close(const tb_tensor *got, const tb_tensor *ref, const char *what) {
  assert_int_equal(tb_tensor_ndim(got), tb_tensor_ndim(ref));
  for (size_t i = 0; i < tb_tensor_ndim(ref); i++) assert_int_equal(tb_tensor_shape(got)[i], tb_tensor_shape(ref)[i]);
  const float *g = tb_tensor_host_data(got), *r = tb_tensor_host_data(ref);
  for (int64_t i = 0; i < tb_tensor_numel(ref); i++)
    if (!(fabs((double)g[i] - r[i]) <= 1e-5 + 1e-5 * fabs((double)r[i])))
      fail_msg("%s: element %lld is %.9g, reference %.9g", what, (long long)i, g[i], r[i]);
}

static tb_tensor *random_tensor(toh *t, size_t ndim, const int64_t *shape, uint64_t seed) {
  int64_t n = 1;
  for (size_t i = 0; i < ndim; i++) n *= shape[i];
  float *x = malloc((size_t)(n ? n : 1) * sizeof(float));
  fill(x, n, seed);
  tb_tensor *r = toh_host_tensor(t->cpu, TB_DTYPE_F32, ndim, shape, x);
  free(x);
  return r;
}

typedef struct mm_case {
  size_t na, nb;
  int64_t a[4], b[4];
} mm_case;

static void matmul_entries_match_reference(void **state) {
  (void)state;
  static const mm_case cases[] = {
      {4, 3, {2, 1, 5, 7}, {3, 7, 9}},  /* batch broadcast both ways */
      {2, 3, {6, 35}, {4, 35, 17}},      /* 2-D A against a batch of B */
      {1, 2, {19}, {19, 40}},            /* 1-D A */
      {3, 1, {2, 33, 8}, {8}},           /* 1-D B */
      {1, 1, {5}, {5}},                  /* dot product: scalar out */
      {3, 3, {2, 0, 4}, {2, 4, 3}},      /* empty */
  };
  const tb_kernel *entries[] = {&tb_kernel_matmul_f32_portable, &tb_kernel_matmul_f32_avx2,
                                    &tb_kernel_matmul_f32_avx512};
  for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++) {
    toh t;
    toh_setup(&t, "MatMul", 13, 2, 0, 1, NULL, 0);
    tb_tensor *in[2] = {random_tensor(&t, cases[c].na, cases[c].a, c), random_tensor(&t, cases[c].nb, cases[c].b, c + 9)};
    tb_tensor *ref = run_kernel(&t, &tb_kernel_matmul, in, 2);
    for (int p = 0; p < n_paths(); p++) {
      tb_tensor *got = run_kernel(&t, entries[p], in, 2);
      char what[64];
      snprintf(what, sizeof what, "MatMul case %zu on %s", c, path_names[p]);
      assert_close(got, ref, what);
      tb_tensor_destroy(got);
    }
    tb_tensor_destroy(ref);
    toh_clear(in, 2);
    toh_teardown(&t);
  }
}

static void gemm_entries_match_reference(void **state) {
  (void)state;
  static const int64_t c_shapes[][3] = {{0}, {1, 21}, {2, 1, 21}, {2, 13, 1}, {2, 13, 21}, {2, 1, 1}};
  const tb_kernel *entries[] = {&tb_kernel_gemm_f32_portable, &tb_kernel_gemm_f32_avx2, &tb_kernel_gemm_f32_avx512};
  for (int tr = 0; tr < 4; tr++)
    for (size_t cs = 0; cs < 6; cs++) {
      bool ta = tr & 1, tb = tr & 2;
      toh t;
      toh_setup(&t, "Gemm", 13, cs ? 3 : 2, 0, 1,
                (tb_attr[]){TOH_INT("transA", ta), TOH_INT("transB", tb), TOH_FLOAT("alpha", 0.75f), TOH_FLOAT("beta", -1.5f)},
                4);
      const int64_t as[2] = {ta ? 40 : 13, ta ? 13 : 40}, bs[2] = {tb ? 21 : 40, tb ? 40 : 21};
      tb_tensor *in[3] = {random_tensor(&t, 2, as, 1), random_tensor(&t, 2, bs, 2),
                          cs ? random_tensor(&t, (size_t)c_shapes[cs][0], c_shapes[cs] + 1, 3) : NULL};
      size_t n_in = cs ? 3 : 2;
      tb_tensor *ref = run_kernel(&t, &tb_kernel_gemm, in, n_in);
      for (int p = 0; p < n_paths(); p++) {
        tb_tensor *got = run_kernel(&t, entries[p], in, n_in);
        char what[80];
        snprintf(what, sizeof what, "Gemm transA=%d transB=%d C case %zu on %s", ta, tb, cs, path_names[p]);
        assert_close(got, ref, what);
        tb_tensor_destroy(got);
      }
      tb_tensor_destroy(ref);
      toh_clear(in, 3);
      toh_teardown(&t);
    }
}

/* The bundled encoder (MatMul-heavy) at O2 against O0 under each mask: the validate table's O2 entry. */
static void encoder_o2_matches_o0_on_every_path(void **state) {
  (void)state;
  tbt_tensor_env();
  tb_backend *b = NULL;
  TB_ASSERT_OK(tb_backend_create("cpu", &b));
  tb_model *m = NULL;
  TB_ASSERT_OK(tb_model_load(MODELS "encoder_small.onnx", &m));
  tb_tensor *x = NULL;
  TB_ASSERT_OK(tb_npy_load(MODELS "encoder_small/inputs/x.npy", b, &x));
  const char *masks[] = {NULL, "-avx512f", "-avx2"};
  const char *names[] = {"x"};
  for (int mi = 0; mi < 3; mi++) {
    tb_tensor *y[2] = {NULL, NULL};
    for (int l = 0; l < 2; l++) {
      features_with_mask(masks[mi]);
      tb_prepare_options o = {.size = sizeof o, .level = l ? TB_LEVEL_O2 : TB_LEVEL_O0, .precision = TB_PRECISION_AUTO};
      tb_prepared *p = NULL;
      const tb_prepare_result *r = NULL;
      TB_ASSERT_OK(tb_model_prepare(m, b, &o, &p, &r));
      unsetenv("TB_CPU_FEATURES");
      TB_ASSERT_OK(tb_prepared_run(p, 1, names, &x, 1, NULL, &y[l]));
      tb_prepared_destroy(p);
    }
    const float *g = tb_tensor_host_data(y[1]), *ref = tb_tensor_host_data(y[0]);
    assert_int_equal(tb_tensor_numel(y[1]), tb_tensor_numel(y[0]));
    for (int64_t i = 0; i < tb_tensor_numel(y[0]); i++)
      if (!(fabs((double)g[i] - ref[i]) <= 1e-5 + 1e-4 * fabs((double)ref[i])))
        fail_msg("encoder O2 (mask %s) element %lld: %.9g vs O0 %.9g", masks[mi] ? masks[mi] : "none", (long long)i,
                 g[i], ref[i]);
    tb_tensor_destroy(y[0]);
    tb_tensor_destroy(y[1]);
  }
  tb_tensor_destroy(x);
  tb_model_destroy(m);
  tb_backend_destroy(b);
}


/* ---- level-2 kernels with prepare(), the pool and the fused activations ---- */

/* A one-node graph of op in domain (ONNX "" or "tb") with n_in inputs in0.. and these attributes. */
static void setup_node(toh *t, const char *domain, const char *op, int opset, size_t n_in, const tb_attr *attrs,
                       size_t n_attrs) {
  toh_begin(t, NULL);
  toh_add_op(t, domain, op, opset, n_in, 0, 1, 0, attrs, n_attrs);
}

static const tb_ir_tensor a_constant; /* marks a graph value constant: only its presence matters here */

/* Run kernel k as the executor does: prepare (constant inputs only when `constant_b`, input 1 marked
 * constant in the graph), then run with every input, the state and the pool; release. *had_state says
 * whether prepare made one. */
static tb_tensor *run_prepared(toh *t, const tb_kernel *k, tb_tensor **in, size_t n_in, bool constant_b,
                               tb_pool *pool, bool *had_state) {
  tb_value *vb = &t->graph->values[toh_node(t)->inputs[1]];
  vb->constant = constant_b ? &a_constant : NULL;
  tb_tensor *const_in[3] = {NULL, constant_b ? in[1] : NULL, NULL};
  tb_kernel_ctx pc = {.graph = t->graph, .node = toh_node(t), .n_inputs = n_in, .inputs = constant_b ? const_in : in,
                      .n_outputs = 1, .backend = t->cpu, .threads = pool ? 2 : 1, .pool = pool};
  (void)tbt_kernel_bind(&pc, t->graph, toh_node(t), NULL);
  void *state = NULL;
  assert_non_null(k->prepare);
  TB_ASSERT_OK(k->prepare(&pc, &state));
  *had_state = state != NULL;
  tb_tensor *out[1] = {NULL};
  tb_kernel_ctx ctx = {.graph = t->graph, .node = toh_node(t), .n_inputs = n_in, .inputs = in, .n_outputs = 1,
                       .outputs = out, .backend = t->cpu, .threads = pool ? 2 : 1, .pool = pool, .state = state};
  (void)tbt_kernel_bind(&ctx, t->graph, toh_node(t), NULL);
  TB_ASSERT_OK(k->run(&ctx));
  k->release(state);
  vb->constant = NULL;
  assert_non_null(out[0]);
  return out[0];
}

static void assert_close_rel(const tb_tensor *got, const tb_tensor *ref, const char *what) {
  assert_int_equal(tb_tensor_ndim(got), tb_tensor_ndim(ref));
  for (size_t i = 0; i < tb_tensor_ndim(ref); i++) assert_int_equal(tb_tensor_shape(got)[i], tb_tensor_shape(ref)[i]);
  const float *g = tb_tensor_host_data(got), *r = tb_tensor_host_data(ref);
  for (int64_t i = 0; i < tb_tensor_numel(ref); i++)
    if (!(fabs((double)g[i] - r[i]) <= 1e-5 + 1e-4 * fabs((double)r[i])))
      fail_msg("%s: element %lld is %.9g, reference %.9g", what, (long long)i, g[i], r[i]);
}

static void assert_same_bits(const tb_tensor *x, const tb_tensor *y, const char *what) {
  assert_int_equal(tb_tensor_nbytes(x), tb_tensor_nbytes(y));
  if (tb_tensor_nbytes(x) && memcmp(tb_tensor_host_data(x), tb_tensor_host_data(y), tb_tensor_nbytes(x)) != 0)
    fail_msg("%s: 1 and 2 threads differ", what);
}

/* Every path's entry, prepared with constant and with non-constant B, serial and on 2 threads, against ref. */
static void check_entries(toh *t, const tb_kernel *const *entries, const tb_kernel *ref_kernel, tb_tensor **in,
                          size_t n_in, bool b_packable, tb_pool *pool, const char *what) {
  tb_tensor *ref = run_kernel(t, ref_kernel, in, n_in);
  for (int p = 0; p < n_paths(); p++)
    for (int cb = 0; cb < 2; cb++) {
      bool had1, had2;
      tb_tensor *one = run_prepared(t, entries[p], in, n_in, cb, NULL, &had1);
      tb_tensor *two = run_prepared(t, entries[p], in, n_in, cb, pool, &had2);
      char msg[160];
      snprintf(msg, sizeof msg, "%s on %s, B %s", what, path_names[p], cb ? "constant" : "computed");
      assert_close_rel(one, ref, msg);
      assert_same_bits(one, two, msg);
      if (had1 != (cb && b_packable)) fail_msg("%s: prepare %s state", msg, had1 ? "made a" : "made no");
      tb_tensor_destroy(one);
      tb_tensor_destroy(two);
    }
  tb_tensor_destroy(ref);
}

static void matmul_prepared_weights_and_pool(void **state) {
  (void)state;
  tb_pool *pool = NULL;
  TB_ASSERT_OK(tb_pool_create(2, &pool));
  static const mm_case cases[] = {
      {3, 2, {2, 70, 200}, {200, 130}}, /* batch of A folded into one tall GEMM, packed B */
      {2, 2, {128, 96}, {96, 300}},     /* transformer-like, split over threads */
      {1, 2, {33}, {33, 13}},           /* 1-D A */
      {3, 1, {2, 5, 8}, {8}},           /* 1-D B: not packed */
      {3, 3, {2, 40, 24}, {2, 24, 50}}, /* batched B: not packed; a product per thread */
      {4, 3, {2, 3, 20, 24}, {3, 24, 10}}, /* batched B broadcast against A's batches */
      {3, 3, {2, 128, 128}, {2, 128, 160}}, /* batched B, each product split over the threads */
      {2, 2, {0, 24}, {24, 50}},        /* empty */
  };
  const tb_kernel *entries[] = {&tb_kernel_matmul_f32_portable, &tb_kernel_matmul_f32_avx2, &tb_kernel_matmul_f32_avx512};
  const tb_kernel *fused[] = {&tb_kernel_fused_matmul_f32_portable, &tb_kernel_fused_matmul_f32_avx2,
                                  &tb_kernel_fused_matmul_f32_avx512};
  for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++) {
    char what[64];
    toh t;
    setup_node(&t, "", "MatMul", 13, 2, NULL, 0);
    tb_tensor *in[2] = {random_tensor(&t, cases[c].na, cases[c].a, c + 3), random_tensor(&t, cases[c].nb, cases[c].b, c + 5)};
    snprintf(what, sizeof what, "MatMul case %zu", c);
    check_entries(&t, entries, &tb_kernel_matmul, in, 2, cases[c].nb == 2, pool, what);
    toh_teardown(&t);
    setup_node(&t, "tb", "FusedMatMul", 1, 2, (tb_attr[]){TOH_STR("activation", "Tanh")}, 1);
    snprintf(what, sizeof what, "FusedMatMul(Tanh) case %zu", c);
    check_entries(&t, fused, &tb_kernel_fused_matmul, in, 2, cases[c].nb == 2, pool, what);
    toh_clear(in, 2);
    toh_teardown(&t);
  }
  tb_pool_destroy(pool);
}

static void gemm_prepared_weights_every_c(void **state) {
  (void)state;
  tb_pool *pool = NULL;
  TB_ASSERT_OK(tb_pool_create(2, &pool));
  static const int64_t c_shapes[][3] = {{0}, {1, 150}, {2, 1, 150}, {2, 70, 1}, {2, 70, 150}, {2, 1, 1}, {1, 1}};
  static const float betas[] = {1.0f, -1.5f};
  const tb_kernel *entries[] = {&tb_kernel_gemm_f32_portable, &tb_kernel_gemm_f32_avx2, &tb_kernel_gemm_f32_avx512};
  for (int tr = 0; tr < 4; tr++)
    for (size_t cs = 0; cs < 7; cs++)
      for (int bi = 0; bi < 2; bi++) {
        bool ta = tr & 1, tb = tr & 2;
        toh t;
        setup_node(&t, "", "Gemm", 13, cs ? 3 : 2,
                   (tb_attr[]){TOH_INT("transA", ta), TOH_INT("transB", tb), TOH_FLOAT("alpha", 0.75f),
                               TOH_FLOAT("beta", betas[bi])},
                   4);
        const int64_t as[2] = {ta ? 210 : 70, ta ? 70 : 210}, bs[2] = {tb ? 150 : 210, tb ? 210 : 150};
        tb_tensor *in[3] = {random_tensor(&t, 2, as, 11), random_tensor(&t, 2, bs, 12),
                            cs ? random_tensor(&t, (size_t)c_shapes[cs][0], c_shapes[cs] + 1, 13) : NULL};
        char what[96];
        snprintf(what, sizeof what, "Gemm transA=%d transB=%d beta=%g C case %zu", ta, tb, betas[bi], cs);
        check_entries(&t, entries, &tb_kernel_gemm, in, cs ? 3 : 2, true, pool, what);
        toh_clear(in, 3);
        toh_teardown(&t);
      }
  tb_pool_destroy(pool);
}

static void fused_gemm_every_activation(void **state) {
  (void)state;
  tb_pool *pool = NULL;
  TB_ASSERT_OK(tb_pool_create(2, &pool));
  static const char *const acts[] = {"Relu",        "LeakyRelu", "Clip", "Sigmoid", "Tanh",
                                     "HardSigmoid", "HardSwish", "Silu", "Mish"};
  const tb_kernel *entries[] = {&tb_kernel_fused_gemm_f32_portable, &tb_kernel_fused_gemm_f32_avx2,
                                    &tb_kernel_fused_gemm_f32_avx512};
  for (int a = 0; a < 9; a++) {
    toh t;
    setup_node(&t, "tb", "FusedGemm", 1, 3,
               (tb_attr[]){TOH_INT("transB", 1), TOH_STR("activation", acts[a]), TOH_FLOAT("activation_alpha", 0.3f),
                           TOH_FLOAT("activation_beta", 0.4f), TOH_FLOAT("activation_min", -0.25f),
                           TOH_FLOAT("activation_max", 0.5f)},
               6);
    const int64_t as[2] = {45, 64}, bs[2] = {96, 64}, bias[1] = {96};
    tb_tensor *in[3] = {random_tensor(&t, 2, as, 21), random_tensor(&t, 2, bs, 22), random_tensor(&t, 1, bias, 23)};
    char what[64];
    snprintf(what, sizeof what, "FusedGemm(%s)", acts[a]);
    check_entries(&t, entries, &tb_kernel_fused_gemm, in, 3, true, pool, what);
    toh_clear(in, 3);
    toh_teardown(&t);
  }
  /* an unknown activation is refused when the node's parameters are parsed, naming it (no kernel sees it) */
  toh t;
  setup_node(&t, "tb", "FusedGemm", 1, 2, (tb_attr[]){TOH_STR("activation", "Swish")}, 1);
  tb_kernel_ctx ctx = {.backend = t.cpu, .threads = 1};
  assert_int_equal(tbt_kernel_bind(&ctx, t.graph, toh_node(&t), NULL), TB_ERR_MODEL);
  TB_ASSERT_CONTAINS(tb_last_error(), "attribute activation is 'Swish'");
  toh_teardown(&t);
  tb_pool_destroy(pool);
}

/* The executor picks the fused level-2 kernels at O2 and the widest path the mask leaves. */
static void fused_choice_follows_mask(void **state) {
  (void)state;
  uint64_t hw = tb_convert_hardware_features();
  toh t;
  setup_node(&t, "tb", "FusedMatMul", 1, 2, (tb_attr[]){TOH_STR("activation", "Relu")}, 1);
  const int64_t d[2] = {4, 4};
  tb_value_type ty = toh_type(TB_DTYPE_F32, 2, d), ty64 = toh_type(TB_DTYPE_F64, 2, d);
  const tb_value_type *in[2] = {&ty, &ty}, *in64[2] = {&ty64, &ty64};
  if (tb_gemm_path_for(hw) == TB_GEMM_AVX512)
    assert_ptr_equal(tbt_kernel_find(t.graph, toh_node(&t), in, 2, hw), &tb_kernel_fused_matmul_f32_avx512);
  assert_ptr_equal(tbt_kernel_find(t.graph, toh_node(&t), in, 2, features_with_mask("-avx2")),
                   &tb_kernel_fused_matmul_f32_portable);
  unsetenv("TB_CPU_FEATURES");
  assert_ptr_equal(tbt_kernel_find(t.graph, toh_node(&t), in, 0, hw), &tb_kernel_fused_matmul);
  assert_ptr_equal(tbt_kernel_find(t.graph, toh_node(&t), in64, 2, hw), &tb_kernel_fused_matmul);
  toh_teardown(&t);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(gemm_every_dim_1_to_67),
      cmocka_unit_test(gemm_small_odd_and_k1),
      cmocka_unit_test(gemm_large_blocked),
      cmocka_unit_test(gemm_transposes_alpha_beta),
      cmocka_unit_test(kernel_choice_follows_mask),
      cmocka_unit_test(matmul_entries_match_reference),
      cmocka_unit_test(gemm_entries_match_reference),
      cmocka_unit_test(encoder_o2_matches_o0_on_every_path),
      cmocka_unit_test(matmul_prepared_weights_and_pool),
      cmocka_unit_test(gemm_prepared_weights_every_c),
      cmocka_unit_test(fused_gemm_every_activation),
      cmocka_unit_test(fused_choice_follows_mask),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
